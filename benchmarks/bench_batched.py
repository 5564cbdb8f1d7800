"""Batched junction-tree inference on a real-sized incomplete table: old vs new.

    python benchmarks/bench_batched.py [--rows 2000 --missing 0.05 --seed 0] [--skip-old] [--full-benchmark]

The table is :func:`alarm_sample.alarm_sample` (ALARM, 37 variables, cells blanked at random), read through
``load_csv`` as the app reads it, and the model is the ALARM graph with CPTs fitted on it (smoothed).
Timed, each once:

* ``posterior`` -- every missing cell's distribution: new (:func:`bnfk_core.inference.queries.posterior`, one
  junction tree on batches of rows) vs old (:func:`bnfk_core.inference.elimination.posterior_by_pattern`, one
  contraction per missingness pattern: what answered before);
* ``log_evidence`` of the incomplete rows, new vs old;
* ``fisher_gram`` -- the marginalized Fisher kernel's Gram matrix, new vs old (family posteriors per
  missingness pattern, forced with ``junction.MAX_TREE_CELLS = 0``);
* ``impute_benchmark`` -- the Imputation page's default benchmark (bn, mode, wknn; test and missing ratios
  0.1, 0.3, 0.5; one repeat; tree structures, qNML, cNML) with the new inference (``--full-benchmark``: the
  thesis grid of 5 x 5 ratios);
* ``prototypes`` -- the Prototypes page: the experiment (split, hc, features) and greedy MMD for k = 20 with
  200 random subsets.

Also the largest difference between old and new numbers.  Writes ``benchmarks/results/batched.json``.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from alarm_sample import alarm_model, alarm_sample  # noqa: E402

from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.inference import (
    elimination,
    junction,  # noqa: E402
)
from bnfk_core.inference import queries as inference
from bnfk_core.kernels.fisher import gram  # noqa: E402
from bnfk_core.network.model import fit  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "batched.json"


def timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--missing", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-old", action="store_true", help="time only the new inference")
    p.add_argument(
        "--full-benchmark",
        action="store_true",
        help="the thesis's 5 x 5 ratio grid in the imputation benchmark instead of the page's 3 x 3",
    )
    p.add_argument("-o", "--output", default=str(RESULTS))
    a = p.parse_args(argv)
    frame = alarm_sample(a.rows, a.missing, a.seed)
    data = load_csv(text=frame.to_csv(index=False), source="alarm_sample")
    truth = alarm_model()
    from bnfk_core.network.dag import DAG

    dag = DAG(list(data.variables), [arc for arc in truth.dag.sorted_arcs()])
    model = fit(dag, data, method="smoothed")
    codes = model.align(data).codes
    incomplete = np.flatnonzero((codes < 0).any(axis=1))
    tree = junction.junction_tree(model)
    out = {
        "rows": data.n_rows,
        "variables": data.n_vars,
        "missing_cells": int((codes < 0).sum()),
        "incomplete_rows": int(incomplete.size),
        "patterns": int(len(np.unique(codes[incomplete] < 0, axis=0))),
        "tree": {
            "cliques": len(tree.cliques),
            "cells_per_row": tree.total_cells,
            "largest_clique": max(tree.size),
            "batch_rows": junction.batch_rows(tree),
        },
        "load_before": os.getloadavg()[0],
        "cpus": os.cpu_count(),
    }

    new, t_new = timed(inference.posterior, model, data)
    out["posterior"] = {"new_s": t_new}
    le_new, t = timed(inference.log_evidence, model, codes[incomplete])
    out["log_evidence"] = {"new_s": t}
    K_new, t = timed(gram, model, data)
    out["fisher_gram"] = {"new_s": t}
    if not a.skip_old:
        old, t_old = timed(elimination.posterior_by_pattern, model, codes)
        out["posterior"].update(
            old_s=t_old,
            speedup=t_old / t_new,
            max_abs_diff=max(float(np.abs(new[v][1] - old[v][1]).max()) for v in old),
        )
        le_old, t = timed(elimination.log_evidence_by_pattern, model, codes[incomplete])
        out["log_evidence"].update(
            old_s=t,
            speedup=t / out["log_evidence"]["new_s"],
            max_abs_diff=float(np.abs(le_new - le_old).max()),
        )
        saved = junction.MAX_TREE_CELLS
        junction.MAX_TREE_CELLS = 0
        try:
            old_model = fit(dag, data, method="smoothed")  # a fresh model: no cached tree
            K_old, t = timed(gram, old_model, data)
        finally:
            junction.MAX_TREE_CELLS = saved
        out["fisher_gram"].update(
            old_s=t, speedup=t / out["fisher_gram"]["new_s"], max_abs_diff=float(np.abs(K_new - K_old).max())
        )
    print(json.dumps(out, indent=1), file=sys.stderr)

    from bnfk_core.analyses.impute import benchmark as imp

    ratios = (0.1, 0.2, 0.3, 0.4, 0.5) if a.full_benchmark else (0.1, 0.3, 0.5)
    res, t = timed(
        imp.benchmark,
        data,
        ("bn", "mode", "wknn"),
        test_ratios=ratios,
        missing_ratios=ratios,
        repeats=1,
        seed=0,
        structure="tree",
        score="qnml",
        params="cnml",
    )
    per = res.runs.groupby("method")["seconds"].sum().to_dict() if "seconds" in res.runs else {}
    out["impute_benchmark"] = {
        "ratios": list(ratios),
        "runs": len(ratios) ** 2,
        "seconds": t,
        "seconds_per_method": {k: float(v) for k, v in per.items()},
    }
    print(json.dumps(out["impute_benchmark"]), file=sys.stderr)

    from bnfk_core.analyses.prototypes import selection as pt

    exp, t_exp = timed(pt.prepare_summarization, data, "hc", seed=0)
    _, t_run = timed(pt.run_summarization, exp, 20, random_draws=200, return_details=True)
    out["prototypes"] = {
        "k": 20,
        "random_draws": 200,
        "prepare_s": t_exp,
        "run_s": t_run,
        "train_rows": exp.train.n_rows,
    }
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out["prototypes"]), file=sys.stderr)
    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    Path(a.output).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
