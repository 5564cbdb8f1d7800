"""Speed and accuracy of ``learn_and_impute`` (the CLG network by structural EM, then its conditional means)
on the real mixed tables, one (table, ratio) per call, so that a shell loop can bound each run by a timeout.

    python benchmarks/bench_impute_mixed_speed.py attrition 0.1 >> benchmarks/results/impute_mixed_speed.jsonl

Tables: sample_data/hybrid/<stem>.csv, or ``churn`` (``--churn PATH``, a copy of the telco churn table;
``customerID`` is dropped as an identifier), at most ``--rows`` rows sampled with ``default_rng(seed)``.
``ratio`` of the observed cells hidden by :func:`bnfk_core.analyses.impute.mixed.hide_mixed` (seed
``--seed``), so every code version sees the same hidden cells.  Prints one JSON line: wall and CPU seconds
of the learning and imputation, pooled NRMSE and accuracy, the load before and after.
``BNFK_ROOT`` names the source tree imported (default: this repository), to time an older commit.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("BNFK_ROOT", str(ROOT)))

import numpy as np  # noqa: E402

import bnfk_core  # noqa: E402
from bnfk_core.analyses.impute.mixed import hide_mixed, score_mixed  # noqa: E402
from bnfk_core.hybrid import load_mixed  # noqa: E402
from bnfk_core.hybrid.impute import learn_and_impute  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("ratio", type=float)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--churn", default="/work/data/churn.csv")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    path = a.churn if a.table == "churn" else ROOT / "sample_data" / "hybrid" / f"{a.table}.csv"
    data = load_mixed(path)
    if data.n_rows > a.rows:
        rows = np.sort(np.random.default_rng(a.seed).choice(data.n_rows, a.rows, replace=False))
        data = data.subset(rows)
    masked, hidden = hide_mixed(data, a.ratio, a.seed)
    load0 = os.getloadavg()
    w0, c0 = time.perf_counter(), time.process_time()
    res, learned = learn_and_impute(masked)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    sc = score_mixed(data, res.data, hidden)
    out = {
        "label": a.label,
        "code": str(Path(bnfk_core.__file__).parents[1]),
        "table": a.table,
        "rows": data.n_rows,
        "numeric": len(data.numeric),
        "discrete": len(data.discrete),
        "ratio": a.ratio,
        "seed": a.seed,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "nrmse_pooled": sc["nrmse_pooled"],
        "accuracy": sc["accuracy"],
        "numeric_cells": sc["numeric_cells"],
        "categorical_cells": sc["categorical_cells"],
        "arcs": len(learned.dag.sorted_arcs()),
        "rounds": learned.moves,
        "em_iterations": learned.model.fit_info.get("em_iterations"),
        "load_before": load0,
        "load_after": os.getloadavg(),
    }
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
