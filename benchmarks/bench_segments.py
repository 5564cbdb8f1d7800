"""Segments benchmark: arc-search speed, thesis Tables 6.1-6.4 re-run, case tables on real data.

    python benchmarks/bench_segments.py [--quick]   # prints tables, writes benchmarks/results/segments.json

- Speed: one arc-search step over every candidate arc of house_votes_84 (16 features + label,
  435 rows; 240 candidate arcs) with correlation clustering (25 restarts, seed 0); the cached
  per-variable update against a full Gram recomputation per candidate; with and without
  clustering one candidate per Markov-equivalence class.
- Thesis: two greedy arcs from the empty network on the thesis's seven datasets (original
  missing values as a category, thesis §3.4), correlation clustering, Fisher kernel with ml
  parameters (the empty network is then exactly scaled-Hamming), seed 0; next to the thesis's
  CC-SH (Table 5.1), one arc (Table 6.1) and two arcs (Table 6.4).  Theil's U / Cramér's V (plain
  and bias-corrected) of the first arc's variables and their collapsed variable (Tables 6.2 / 6.3).
- Case tables: max |theory - measured| over every case of every kind on house_votes_84.
  (``--quick`` runs the speed part and the case tables only.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bnfk_core.analyses.cluster.clustering import cluster  # noqa: E402
from bnfk_core.analyses.segments import information as segment_information
from bnfk_core.analyses.segments import search as arcs  # noqa: E402
from bnfk_core.analyses.segments import tables as segment_tables  # noqa: E402
from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.kernels.fisher import gram  # noqa: E402
from bnfk_core.network.dag import DAG  # noqa: E402
from bnfk_core.network.model import fit  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CATALOG = json.loads((ROOT / "sample_data" / "catalog.json").read_text())

# thesis: Table 5.1 (CC-SH), Table 6.1 (one arc), Table 6.4 (two arcs), Tables 6.2/6.3 (v1, v2, v1∩v2)
THESIS = {
    "breast_cancer": {
        "base": 0.147,
        "one": 0.173,
        "two": 0.204,
        "U": (0.002, 0.088, 0.116),
        "V": (0.000, 0.323, 0.336),
    },
    "hayes_roth": {
        "base": 0.082,
        "one": 0.093,
        "two": 0.086,
        "U": (0.181, 0.178, 0.431),
        "V": (0.459, 0.455, 0.621),
    },
    "house_votes_84": {
        "base": 0.557,
        "one": 0.585,
        "two": 0.606,
        "U": (0.439, 0.205, 0.450),
        "V": (0.710, 0.509, 0.704),
    },
    "lymphography": {
        "base": 0.242,
        "one": 0.316,
        "two": 0.316,
        "U": (0.028, 0.327, 0.406),
        "V": (0.166, 0.490, 0.589),
    },
    "primary_tumor": {
        "base": 0.123,
        "one": 0.164,
        "two": 0.201,
        "U": (0.080, 0.152, 0.209),
        "V": (0.686, 0.449, 0.396),
    },
    "spect": {
        "base": 0.057,
        "one": 0.066,
        "two": 0.071,
        "U": (0.039, 0.033, 0.062),
        "V": (0.177, 0.153, 0.220),
    },
    "tic_tac_toe": {
        "base": 0.020,
        "one": 0.069,
        "two": 0.084,
        "U": (0.015, 0.015, 0.031),
        "V": (0.130, 0.130, 0.177),
    },
}


def load(name):
    meta = CATALOG[name]
    return load_csv(
        ROOT / "sample_data" / meta["file"],
        class_column=meta["class_column"],
        missing_policy=meta["missing_policy"],
    )


def speed() -> dict:
    data = load("house_votes_84")
    feats = data.without_class()
    out = {"dataset": "house_votes_84", "rows": data.n_rows, "features": feats.n_vars}
    for dedupe in (True, False):
        t = time.perf_counter()
        r = arcs.arc_search(data, n_arcs=1, dedupe=dedupe)
        out[f"step_seconds_dedupe_{dedupe}"] = time.perf_counter() - t
        out["candidates"] = r.steps[0].n_candidates
        out[f"clusterings_dedupe_{dedupe}"] = r.steps[0].n_evaluated
        out[f"arc_dedupe_{dedupe}"] = list(r.steps[0].arc)
        out[f"ari_dedupe_{dedupe}"] = r.steps[0].ari
    # per-candidate Gram cost: cached update vs full recomputation (fit + gram), over all 240 candidates
    model = fit(DAG(feats.variables), feats, method="ml")
    K = gram(model, feats)
    cands = arcs.candidate_arcs(model.dag)
    t = time.perf_counter()
    for u, v in cands:
        arcs.add_arc_gram(model, feats.codes, K, u, v)
    out["cached_gram_seconds_per_candidate"] = (time.perf_counter() - t) / len(cands)
    t = time.perf_counter()
    for u, v in cands:
        gram(fit(model.dag.add_arc(u, v), feats, method="ml"), feats)
    out["full_gram_seconds_per_candidate"] = (time.perf_counter() - t) / len(cands)
    t = time.perf_counter()
    for _ in range(5):
        cluster(K, 2, "correlation", kernel="fisher", restarts=25, seed=0)
    out["clustering_seconds_per_candidate"] = (time.perf_counter() - t) / 5
    return out


def thesis() -> list:
    rows = []
    for name, ref in THESIS.items():
        data = load(name)
        t = time.perf_counter()
        r = arcs.arc_search(data, n_arcs=2)
        first = list(r.steps[0].arc)
        st = segment_information.collapsed_stats(data, first)
        rows.append(
            {
                "dataset": name,
                "rows": data.n_rows,
                "features": data.n_vars - 1,
                "base_ari": r.base_ari,
                "one_arc_ari": r.steps[0].ari,
                "two_arc_ari": r.steps[1].ari,
                "arcs": [list(s.arc) for s in r.steps],
                "candidates": [s.n_candidates for s in r.steps],
                "theils_u": [float(x) if x is not None else None for x in st.theils_u],
                "cramers_v": [float(x) if x is not None else None for x in st.cramers_v],
                "cramers_v_corrected": [float(x) if x is not None else None for x in st.cramers_v_corrected],
                "seconds": time.perf_counter() - t,
                "thesis": ref,
            }
        )
        print(
            f"{name:15s} base {r.base_ari:.3f} ({ref['base']:.3f})  one {r.steps[0].ari:.3f} "
            f"({ref['one']:.3f})  "
            f"two {r.steps[1].ari:.3f} ({ref['two']:.3f})  {time.perf_counter() - t:.1f}s  arcs "
            f"{rows[-1]['arcs']}",
            flush=True,
        )
    return rows


def case_tables() -> dict:
    data = load("house_votes_84")
    names = data.without_class().variables
    out = {}
    for kind, vs in [
        ("single-arc", names[:2]),
        ("v", names[2:5]),
        ("a", names[5:8]),
        ("chain", names[8:11]),
        ("full", names[11:15]),
    ]:
        t = time.perf_counter()
        tab = segment_tables.case_table(segment_tables.segment_model(data, kind, vs), data, kind, vs)
        out[kind] = {
            "variables": list(vs),
            "cases": len(tab.rows),
            "cases_with_pair": sum(r.pair is not None for r in tab.rows),
            "max_difference": tab.max_difference,
            "seconds": time.perf_counter() - t,
        }
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    res = {"speed": speed(), "case_tables": case_tables()}
    print(json.dumps(res, indent=1))
    if not args.quick:
        res["thesis"] = thesis()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / ("segments_quick.json" if args.quick else "segments.json")).write_text(
        json.dumps(res, indent=1)
    )


if __name__ == "__main__":
    main()
