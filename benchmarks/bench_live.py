"""Live-structure benchmark: incremental Gram updates, the arc-search step, the from-scratch Gram's bound.

    python benchmarks/bench_live.py [--quick]   # prints a table, writes benchmarks/results/live.json

- Incremental update (``bnfk_core.kernels.live.LiveKernel``, smoothed CPTs) after one arc edit against the
  from-scratch ``gram(fit(new_dag, data), data)`` at N = 5,000 on two letter-like networks: the 26-state
  variable as the root (``letter_like_model``) and as a leaf with two 4-state parents
  (``letter_leaf_model``).  Twelve seeded random edits (add / remove / reverse that close no cycle) per
  network; each is checked against the from-scratch matrix (max |difference|), and timed against it
  (interleaved, so machine load hits both).  Then every edit is undone and the matrix compared with the
  first one.  ``one_pass_seconds`` is one read + write pass over the N x N matrix (``np.add(K, 0, out=K)``):
  an in-place update whose changed pairs reach most of the matrix's cache lines cannot beat it, so
  ``ceiling_one_pass`` = from-scratch time / one pass bounds that edit's speed-up.
- One arc-search step over all candidate arcs of house_votes_84 (the thesis protocol: correlation
  clustering, 25 restarts, seed 0, ml parameters, one clustering per equivalence class).
- From-scratch Gram against its bound: the pairs sharing a parent configuration, N^2 sum_i sum_j
  P(pi_i = j)^2 (counted on the rows), at the pair kernel's measured rate, plus writing the N x N output;
  both placements and three random structures (<= 3 parents, 26-state variable anywhere).

Wall-clock seconds are the best of a few repeats; ``cpu`` is process time (both threads).  On a loaded
machine run it also as ``NUMBA_NUM_THREADS=1 python benchmarks/bench_live.py --out live_1thread.json``:
one thread's process time is the cleanest measure of the work.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from letter_like import letter_leaf_model, letter_like_model, random_letter_model

from bnfk_core.analyses.segments import search as arcs
from bnfk_core.data.table import load_csv
from bnfk_core.errors import StructureError
from bnfk_core.kernels import fisher as kernels
from bnfk_core.kernels.fisher import gram
from bnfk_core.kernels.live import LiveKernel
from bnfk_core.kernels.live_terms import Edit
from bnfk_core.network.model import fit

RESULTS = ROOT / "benchmarks" / "results"
CATALOG = json.loads((ROOT / "sample_data" / "catalog.json").read_text())


def timed(fn, repeat=1):
    best, cpu, out = np.inf, np.inf, None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return best, cpu, out


def random_edits(dag, n, seed):
    rng = np.random.default_rng(seed)
    nodes = dag.nodes
    out, cur = [], dag
    while len(out) < n:
        a, b = rng.choice(len(nodes), 2, replace=False)
        u, v = nodes[a], nodes[b]
        if cur.has_arc(u, v):
            e = Edit("remove" if rng.random() < 0.5 else "reverse", u, v)
        elif cur.has_arc(v, u):
            continue
        else:
            e = Edit("add", u, v)
        try:
            cur = e.apply(cur)
        except StructureError:
            continue
        out.append(e)
    return out


def incremental(name, model, N, n_edits, seed=0):
    data = model.sample(N, seed=1)
    gram(model, data.codes[:50])  # compile once
    t_build, _, lk = timed(lambda: LiveKernel(model.dag, data, "smoothed"))
    K0 = lk.gram(copy=True)
    # the memory floor of any in-place update: one read + write pass over the N x N matrix
    t_pass, _, _ = timed(lambda: np.add(K0, 0.0, out=K0), repeat=5)
    rows = []
    for e in random_edits(model.dag, n_edits, seed):
        t_inc, c_inc, info = timed(lambda: lk.apply(e.kind, e.u, e.v))
        t_ref, c_ref, ref = timed(lambda: gram(fit(lk.dag, data), data))
        err = float(np.abs(lk.gram() - ref).max())
        del ref
        rows.append(
            {
                "edit": f"{e.kind} {e.u} -> {e.v}",
                "seconds": t_inc,
                "cpu": c_inc,
                "scratch_seconds": t_ref,
                "scratch_cpu": c_ref,
                "speedup": t_ref / t_inc,
                "max_abs_error": err,
                "rebuilt": info["rebuilt"],
                "rescaled": len(info["rescaled"]),
                "pairs": info["pairs"],
                "pair_fraction": info["pairs"] / N**2,
                "ceiling_one_pass": t_ref / t_pass,
            }
        )
        print(
            f"{name:5s} {rows[-1]['edit']:24s} {t_inc:7.3f}s  scratch {t_ref:6.3f}s  x{t_ref / t_inc:6.1f}  "
            f"err {err:.1e}  rescaled {len(info['rescaled'])}",
            flush=True,
        )
    t_undo, _, _ = timed(lambda: [lk.undo() for _ in range(len(rows))])
    undo_err = float(np.abs(lk.gram() - K0).max())
    sp = np.array([r["speedup"] for r in rows])
    return {
        "model": name,
        "N": N,
        "build_seconds": t_build,
        "edits": rows,
        "one_pass_seconds": t_pass,
        "ceiling_one_pass_median": float(np.median([r["ceiling_one_pass"] for r in rows])),
        "speedup_median": float(np.median(sp)),
        "speedup_min": float(sp.min()),
        "speedup_max": float(sp.max()),
        "max_abs_error": max(r["max_abs_error"] for r in rows),
        "undo_all_seconds": t_undo,
        "undo_max_abs_error": undo_err,
    }


def arc_step():
    meta = CATALOG["house_votes_84"]
    data = load_csv(
        ROOT / "sample_data" / meta["file"],
        class_column=meta["class_column"],
        missing_policy=meta["missing_policy"],
    )
    arcs.arc_search(data, n_arcs=1, restarts=2)  # compile once
    t, c, r = timed(lambda: arcs.arc_search(data, n_arcs=1), repeat=3)
    before = json.loads((RESULTS / "segments.json").read_text())["speed"]
    return {
        "dataset": "house_votes_84",
        "rows": data.n_rows,
        "candidates": r.steps[0].n_candidates,
        "clusterings": r.steps[0].n_evaluated,
        "seconds": t,
        "cpu": c,
        "arc": list(r.steps[0].arc),
        "ari": r.steps[0].ari,
        "before_seconds": before["step_seconds_dedupe_True"],
        "before_arc": before["arc_dedupe_True"],
        "before_ari": before["ari_dedupe_True"],
    }


def gram_bound(N):
    out = []
    models = [("root", letter_like_model(0)), ("leaf", letter_leaf_model(0))] + [
        (f"random{s}", random_letter_model(s)) for s in range(3)
    ]
    for name, m in models:
        X = m.sample(N, seed=1).codes
        gram(m, X[:50])
        pairs = 0.0
        for i in range(m.n_vars):
            if m.cpts[i].shape[1] < 2:
                continue
            c = np.bincount(m.parent_config(i, X)).astype(float)
            pairs += float(c @ c)
        t, c, K = timed(lambda: gram(m, X), repeat=3)
        del K
        t_out, _, Z = timed(lambda: np.full((N, N), 1.0), repeat=3)
        del Z
        bound = pairs * kernels._T_PAIR + t_out
        out.append(
            {
                "model": name,
                "N": N,
                "pairs": pairs,
                "seconds": t,
                "cpu": c,
                "output_seconds": t_out,
                "bound_seconds": bound,
                "ratio_to_bound": t / bound,
            }
        )
        print(
            f"gram {name:8s} pairs {pairs / 1e6:6.1f}M  {t:.3f}s  bound {bound:.3f}s  x{t / bound:.2f}",
            flush=True,
        )
    return out


def main(quick=False, out_name=None):
    N = 2000 if quick else 5000
    res = {
        "incremental": [
            incremental("root", letter_like_model(0), N, 6 if quick else 12),
            incremental("leaf", letter_leaf_model(0), N, 6 if quick else 12),
        ],
        "gram_bound": gram_bound(N),
    }
    res["arc_search_step"] = arc_step()
    a = res["arc_search_step"]
    print(
        f"arc-search step on house_votes_84: {a['seconds']:.2f}s (cpu {a['cpu']:.2f}s), before "
        f"{a['before_seconds']:.1f}s; "
        f"arc {a['arc']} ARI {a['ari']:.4f} (before {a['before_arc']} {a['before_ari']:.4f})"
    )
    for r in res["incremental"]:
        print(
            f"{r['model']}: speedup median x{r['speedup_median']:.1f} (min x{r['speedup_min']:.1f}, max "
            f"x{r['speedup_max']:.1f}); one read+write pass of K {r['one_pass_seconds'] * 1e3:.0f} ms, "
            f"ceiling median x{r['ceiling_one_pass_median']:.1f}; max error {r['max_abs_error']:.1e}; "
            f"undo error {r['undo_max_abs_error']:.1e}"
        )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / (out_name or ("live_quick.json" if quick else "live.json"))
    out.write_text(json.dumps(res, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--out", help="result file name in benchmarks/results/ (e.g. for a NUMBA_NUM_THREADS=1 run)"
    )
    a = ap.parse_args()
    main(a.quick, a.out)
