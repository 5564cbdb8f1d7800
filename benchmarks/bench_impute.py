"""Imputation benchmark: the thesis's chapter-4 experiment on the bundled datasets, and BN speed.

Usage (from the repository root)::

    python benchmarks/bench_impute.py thesis [--datasets spect,hayes_roth] [--repeats 10]
                                             [--methods bn,mode,wknn,bn-mode,bn-wknn] [--grid 0.1,...]
    python benchmarks/bench_impute.py speed  [--rows 1000 --variables 20 --missing 0.2]
    python benchmarks/bench_impute.py table  # print the markdown tables of docs/IMPUTATION.md

``thesis`` writes ``benchmarks/results/impute_<dataset>[_<tag>].json`` (one file per dataset, the full
:meth:`BenchmarkResult.to_dict` plus per-run lines); ``speed`` writes ``impute_speed.json``.
Datasets are read with their ``catalog.json`` class column and missing policy (the thesis treats
original missing values as a category); the class column is dropped before hiding cells.
Structures: qNML, exact search up to 20 variables else hill climbing; parameters cNML.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bnfk_core.analyses.impute.benchmark import DEFAULT_RATIOS, benchmark, induce_mcar  # noqa: E402
from bnfk_core.analyses.impute.core import impute_bn, learn_model  # noqa: E402
from bnfk_core.data.table import load_csv  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
THESIS = (
    "spect",
    "house_votes_84",
    "tic_tac_toe",
    "breast_cancer",
    "lymphography",
    "hayes_roth",
    "primary_tumor",
)
THESIS_METHODS = ("bn", "bn-mode", "bn-wknn", "mode", "wknn")

#: thesis Tables 4.3 (accuracy), 4.4 (cross-entropy), B.1, B.2 (standard deviations)
THESIS_ACC = {
    "breast_cancer": (0.584, 0.581, 0.582, 0.523, 0.476),
    "hayes_roth": (0.355, 0.331, 0.378, 0.307, 0.295),
    "house_votes_84": (0.744, 0.737, 0.749, 0.525, 0.684),
    "lymphography": (0.647, 0.640, 0.641, 0.603, 0.571),
    "primary_tumor": (0.768, 0.771, 0.763, 0.751, 0.607),
    "spect": (0.790, 0.779, 0.792, 0.683, 0.703),
    "tic_tac_toe": (0.476, 0.473, 0.491, 0.423, 0.314),
}
THESIS_CE = {
    "breast_cancer": (0.967, 0.975, 0.975, 1.075, 3.337),
    "hayes_roth": (1.257, 1.265, 1.312, 1.218, 4.480),
    "house_votes_84": (0.605, 0.609, 0.601, 0.834, 1.772),
    "lymphography": (0.793, 0.799, 0.812, 0.839, 2.282),
    "primary_tumor": (0.531, 0.530, 0.539, 0.570, 1.712),
    "spect": (0.493, 0.507, 0.515, 0.604, 1.246),
    "tic_tac_toe": (1.008, 1.030, 1.010, 1.068, 5.104),
}
THESIS_ACC_SD = {
    "breast_cancer": (0.045, 0.046, 0.045, 0.039, 0.046),
    "hayes_roth": (0.086, 0.076, 0.084, 0.074, 0.078),
    "house_votes_84": (0.025, 0.025, 0.023, 0.026, 0.032),
    "lymphography": (0.041, 0.039, 0.039, 0.036, 0.046),
    "primary_tumor": (0.023, 0.024, 0.025, 0.025, 0.039),
    "spect": (0.027, 0.029, 0.029, 0.036, 0.038),
    "tic_tac_toe": (0.029, 0.035, 0.039, 0.019, 0.063),
}


def load(name: str):
    cat = json.loads((ROOT / "sample_data" / "catalog.json").read_text())[name]
    return load_csv(
        ROOT / "sample_data" / cat["file"],
        class_column=cat["class_column"],
        missing_policy=cat["missing_policy"],
    )


def _progress(name):
    def report(frac, msg):
        sys.stderr.write(f"\r{name}: [{frac * 100:5.1f}%] {msg:<60}")
        if frac >= 1:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return report


def cmd_thesis(args) -> None:
    grid = tuple(float(x) for x in args.grid.split(","))
    methods = tuple(m for m in args.methods.split(",") if m)
    for name in args.datasets.split(","):
        data = load(name)
        res = benchmark(
            data,
            methods,
            test_ratios=grid,
            missing_ratios=grid,
            repeats=args.repeats,
            seed=args.seed,
            structure=args.structure,
            score="qnml",
            params="cnml",
            progress=_progress(name),
        )
        out = res.to_dict()
        out["dataset"] = name
        out["runs"] = res.runs.to_dict(orient="records")
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"impute_{name}{'_' + args.tag if args.tag else ''}.json"
        path.write_text(json.dumps(out, indent=1))
        summ = {m: (round(out[m]["accuracy"], 3), round(out[m]["cross_entropy"], 3)) for m in methods}
        print(
            f"{name}: {res.info['structure']}, {res.repeats} repeats, {res.seconds:.0f} s: {summ}", flush=True
        )


def cmd_speed(args) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from helpers_bruteforce import random_dag, random_model

    truth = random_model(random_dag(args.variables, seed=3, max_parents=2), [3] * args.variables, seed=1)
    full = truth.sample(args.rows, seed=0)
    split = induce_mcar(full, 0.999, args.missing, seed=0)  # every row in the "test" part: 20 % of all cells
    t0 = time.perf_counter()
    model = learn_model(full, structure="hc", score="qnml", params="cnml")  # the "current model"
    t_learn = time.perf_counter() - t0
    t0 = time.perf_counter()
    imp = impute_bn(split.data, model=model)
    t_post = time.perf_counter() - t0
    # what-if: the same posteriors with opt_einsum's greedy path search instead of "auto" (whose branch
    # search dominates inference.posterior when every row has its own missingness pattern)
    import bnfk_core.inference.queries as inference

    contract = inference.oe.contract
    inference.oe.contract = lambda *a, optimize=None, **kw: contract(*a, optimize="greedy", **kw)
    try:
        t0 = time.perf_counter()
        imp_g = impute_bn(split.data, model=model)
        t_greedy = time.perf_counter() - t0
    finally:
        inference.oe.contract = contract
    diff = max(float(np.abs(imp.cells[i][1] - imp_g.cells[i][1]).max()) for i in imp.cells)
    patterns = len(np.unique(split.hidden[split.hidden.any(axis=1)], axis=0))
    out = {
        "rows": args.rows,
        "variables": args.variables,
        "missing_cells": int(split.n_hidden),
        "missing_fraction": split.n_hidden / split.hidden.size,
        "patterns": patterns,
        "complete_rows": int(split.data.complete_rows().sum()),
        "arcs": model.dag.n_arcs,
        "learn_seconds": t_learn,
        "impute_seconds": t_post,
        "imputed_cells": imp.n_cells,
        "target_seconds": 10.0,
        "impute_seconds_greedy_paths": t_greedy,
        "greedy_max_abs_difference": diff,
        "load_average_1min": os.getloadavg()[0],
        "cpus": os.cpu_count(),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "impute_speed.json").write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


def cmd_table(args) -> None:
    rows_acc, rows_ce = [], []
    for name in THESIS:
        path = RESULTS / f"impute_{name}.json"
        if not path.exists():
            continue
        r = json.loads(path.read_text())
        st = r["settings"]
        cells_a, cells_c = [], []
        for k, m in enumerate(THESIS_METHODS):
            if m not in r:
                cells_a.append("–")
                cells_c.append("–")
                continue
            cells_a.append(f"{r[m]['accuracy']:.3f} ± {r[m]['accuracy_std']:.3f} ({THESIS_ACC[name][k]:.3f})")
            cells_c.append(
                f"{r[m]['cross_entropy']:.3f} ± {r[m]['cross_entropy_std']:.3f} ({THESIS_CE[name][k]:.3f})"
            )
        runs = st["repeats"] * len(st["test_ratios"]) * len(st["missing_ratios"])
        tag = f"{name} ({st['structure']}, {st['repeats']}×{runs // st['repeats']})"
        rows_acc.append(f"| {tag} | " + " | ".join(cells_a) + " |")
        rows_ce.append(f"| {tag} | " + " | ".join(cells_c) + " |")
    head = (
        "| dataset (structure, runs) | "
        + " | ".join(THESIS_METHODS)
        + " |\n|---" * 1
        + "|---" * len(THESIS_METHODS)
        + "|"
    )
    print("Accuracy (ours ± sd over runs (thesis))\n")
    print(head)
    print("\n".join(rows_acc))
    print("\nCross-entropy (ours ± sd over runs (thesis))\n")
    print(head)
    print("\n".join(rows_ce))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("thesis")
    p.add_argument("--datasets", default=",".join(THESIS))
    p.add_argument("--methods", default=",".join(THESIS_METHODS))
    p.add_argument("--grid", default=",".join(str(r) for r in DEFAULT_RATIOS))
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--structure", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tag", default="", help="suffix of the result file (impute_<dataset>_<tag>.json)")
    p.set_defaults(func=cmd_thesis)
    p = sub.add_parser("speed")
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--variables", type=int, default=20)
    p.add_argument("--missing", type=float, default=0.2)
    p.set_defaults(func=cmd_speed)
    p = sub.add_parser("table")
    p.set_defaults(func=cmd_table)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
