"""Kernel benchmark: Gram matrices, features and parent marginals on letter-sized problems.

    python benchmarks/bench_kernels.py [--quick]   # prints a table, writes benchmarks/results/kernels.json

- The model: a letter-like random network (17 variables: 16 with 4 states, one with 26; <= 2
  parents each; ``benchmarks/letter_like.py``), N rows forward-sampled from it.
- Gram for N = 1,000 / 5,000 / 10,000 with ``bnfk_core.kernels.fisher.gram`` (exact, float64).
- A pairwise Python loop of Theorem 1 on the same data: timed on a 300 x 300 block of pairs and
  scaled to N x N (the full loop at N = 5,000 would take many minutes); ratio = loop / gram.
- The "naive" dense product: Phi as a dense matrix over the full block layout (sum_i q_i r_i
  columns), then Phi Phi^T.
- Features for 20,000 rows; parent marginals of the HC-BIC model learned on letter (4 bins).
- Peak memory of each Gram call (tracemalloc; numpy reports its buffers to it).
- ``--write``: the warm Gram at N = 5,000 against writing its result (``np.save`` of the N x N float64, what
  ``kernel -o K.npy`` writes) on the letter-like networks (root, leaf, three random structures), the two
  interleaved, 7 repeats, medians of wall and CPU seconds and of the per-repeat ratio; the load average
  before and after (``benchmarks/results/kernels_write.json``, or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from letter_like import letter_leaf_model, letter_like_model, random_letter_model  # noqa: E402

from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.inference.queries import parent_marginals  # noqa: E402
from bnfk_core.kernels.fisher import features, gram  # noqa: E402
from bnfk_core.learning.structure import learn_structure  # noqa: E402
from bnfk_core.network.model import fit  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def timed(fn, repeat=1):
    best = np.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def loop_kernel(model, X, Y):
    """Theorem 1 evaluated pair by pair in plain Python (the baseline)."""
    pm = parent_marginals(model)
    cfgX = [model.parent_config(i, X) for i in range(model.n_vars)]
    cfgY = [model.parent_config(i, Y) for i in range(model.n_vars)]
    K = np.zeros((len(X), len(Y)))
    for a in range(len(X)):
        for b in range(len(Y)):
            s = 0.0
            for i in range(model.n_vars):
                j = cfgX[i][a]
                if j != cfgY[i][b]:
                    continue
                P = pm.probs[i][j]
                if X[a, i] == Y[b, i]:
                    s += (1.0 / model.cpts[i][j, X[a, i]] - 1.0) / P
                else:
                    s -= 1.0 / P
            K[a, b] = s
    return K


def gram_vs_write(N: int = 5000, repeat: int = 7) -> dict:
    """The warm Gram against ``np.save`` of its result, interleaved (module docstring)."""
    models = [("root", letter_like_model(0)), ("leaf", letter_leaf_model(0))] + [
        (f"random{s}", random_letter_model(s)) for s in range(3)
    ]
    out = {"N": N, "repeat": repeat, "load_start": list(os.getloadavg())}
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "K.npy"
        for name, m in models:
            X = m.sample(N, seed=1).codes
            gram(m, X)  # warm: the compiled sums loaded, the marginals cached
            g, gc, w, wc = [], [], [], []
            for _ in range(repeat):
                t, c = time.perf_counter(), time.process_time()
                K = gram(m, X)
                g.append(time.perf_counter() - t)
                gc.append(time.process_time() - c)
                t, c = time.perf_counter(), time.process_time()
                np.save(target, K)
                w.append(time.perf_counter() - t)
                wc.append(time.process_time() - c)
                del K
            g, gc, w, wc = map(np.array, (g, gc, w, wc))
            out[name] = {
                "gram_seconds": float(np.median(g)),
                "gram_cpu": float(np.median(gc)),
                "write_seconds": float(np.median(w)),
                "write_cpu": float(np.median(wc)),
                "ratio": float(np.median(g / w)),
                "cpu_ratio": float(np.median(gc / wc)),
            }
            print(
                f"{name:8s} gram {out[name]['gram_seconds']:.3f} s (cpu {out[name]['gram_cpu']:.3f})  "
                f"np.save {out[name]['write_seconds']:.3f} s (cpu {out[name]['write_cpu']:.3f})  "
                f"x{out[name]['ratio']:.2f} (cpu x{out[name]['cpu_ratio']:.2f})",
                flush=True,
            )
    out["load_end"] = list(os.getloadavg())
    return out


def main(quick: bool = False):
    warnings.simplefilter("ignore")
    model = letter_like_model(seed=0)
    rows = {}
    gram(model, model.sample(50, 0).codes)  # load the compiled pair kernel once
    sizes = [1000, 2000] if quick else [1000, 5000, 10000]
    for N in sizes:
        X = model.sample(N, seed=1).codes
        tracemalloc.start()
        sec, K = timed(lambda: gram(model, X), repeat=1 if N >= 5000 else 3)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        blk = X[:300]
        t_loop, Kl = timed(lambda: loop_kernel(model, blk, blk))
        assert np.allclose(Kl, K[:300, :300], atol=1e-9)
        loop_full = t_loop * (N / 300) ** 2
        rows[f"gram_{N}"] = {
            "seconds": sec,
            "peak_mib": peak / 2**20,
            "loop_seconds_extrapolated": loop_full,
            "speedup_vs_loop": loop_full / sec,
        }
        del K
    N = 5000 if quick else 10000
    X = model.sample(N, seed=1).codes
    Phi = features(model, X)
    if Phi.shape[1] * N * 8 < 6 * 2**30:

        def naive():
            D = Phi.toarray()
            return D @ D.T

        sec, _ = timed(naive)
        rows[f"naive_dense_{N}"] = {"seconds": sec, "columns": int(Phi.shape[1])}
    X20 = model.sample(20000, seed=2).codes
    sec, _ = timed(lambda: features(model, X20), repeat=3)
    rows["features_20000"] = {"seconds": sec}

    letter = load_csv(
        ROOT / "sample_data" / "letter.csv", class_column="class", max_levels=15, discretize_bins=4
    )
    res = learn_structure(letter, "hc", score="bic", seed=0)
    lm = fit(res.dag, letter)
    sec, pm = timed(lambda: parent_marginals(lm, seed=0))  # first call: nothing cached yet
    rows["parent_marginals_letter_hc_bic"] = {
        "seconds": sec,
        "method": pm.method,
        "arcs": res.dag.n_arcs,
        "max_parents": max(len(p) for p in lm.parents),
    }
    sec, _ = timed(lambda: gram(lm, letter.subset(np.arange(5000))))
    rows["gram_letter_hc_bic_5000"] = {"seconds": sec}

    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / ("kernels_quick.json" if quick else "kernels.json")
    out.write_text(json.dumps(rows, indent=1))
    for k, v in rows.items():
        print(
            f"{k:34s} "
            + "  ".join(f"{a}={b:.4g}" if isinstance(b, float) else f"{a}={b}" for a, b in v.items())
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true", help="only the Gram against writing its result")
    ap.add_argument("--out", help="result file (default benchmarks/results/kernels_write.json)")
    a = ap.parse_args()
    if a.write:
        res = gram_vs_write()
        target = Path(a.out) if a.out else RESULTS / "kernels_write.json"
        target.write_text(json.dumps(res, indent=1) + "\n")
        print(f"wrote {target}")
    else:
        main(a.quick)
