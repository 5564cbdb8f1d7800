"""Speed of ``impute DATA.csv --structure hc``: learning from every row and completing the file in one call.

Usage (from the repository root)::

    python benchmarks/bench_impute_learn.py [--runs 5] [--data sample_data/house_votes_84.csv]

Times, in this process (start-up excluded: the modules are imported before the clock starts), the work
of one ``impute --structure hc --na-values default-list`` call on the file, step by step: reading,
learning (available-case hill climbing with qNML, CPTs by EM over the missing cells), the posteriors of
the missing cells, the completed file.  Median and spread over ``--runs`` runs; also the
``--missing-data`` variants.  Writes ``benchmarks/results/impute_learn.json``.  The target:
at most 1 s of work beyond start-up on house_votes_84.  Whole-process timings (start-up included) come
from runs of the whole command beside a start-up-only process (see docs/IMPUTATION.md).
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

from bnfk_core.analyses.impute.completion import complete_file, impute_with_model  # noqa: E402
from bnfk_core.analyses.impute.methods import learn_for_imputation  # noqa: E402
from bnfk_core.data.table import load_csv, read_table  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def one_run(path: str, missing_data: str) -> dict:
    t = {}
    c0 = time.process_time()
    t0 = time.perf_counter()
    data = load_csv(path, na_values="default-list")
    t["read"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    res, model = learn_for_imputation(data, "hc", missing_data=missing_data)
    t["learn"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    imp = impute_with_model(model, data)
    t["posteriors"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    complete_file(imp, read_table(path)).text()
    t["file"] = time.perf_counter() - t0
    t["total"] = sum(t.values())
    t["total_cpu"] = time.process_time() - c0  # this process's CPU seconds: less sensitive to a busy machine
    t["em_iterations"] = model.fit_info.get("em_iterations", 0)
    t["arcs"] = res.dag.n_arcs
    return t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(ROOT / "sample_data" / "house_votes_84.csv"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--variants", default="available-case,em,complete-rows")
    args = p.parse_args()
    out = {
        "data": os.path.basename(args.data),
        "runs": args.runs,
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
        "variants": {},
    }
    for md in args.variants.split(","):
        one_run(args.data, md)  # warm-up (caches, first-call costs)
        runs = [one_run(args.data, md) for _ in range(args.runs)]
        out["variants"][md] = {
            k: {
                "median": float(np.median([r[k] for r in runs])),
                "min": float(np.min([r[k] for r in runs])),
                "max": float(np.max([r[k] for r in runs])),
            }
            for k in runs[0]
        }
        print(md, {k: round(v["median"], 3) for k, v in out["variants"][md].items()}, flush=True)
    out["load_average_end"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "impute_learn.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
