"""The Prototypes page's work on a 2,000-row ALARM sample with 5 % blank cells, before vs after planning the
held-out evidence once.

    python benchmarks/bench_heldout.py [--rows 2000 --missing 0.05 --seed 0 --k 20 --draws 200 --structure hc]

The table is :func:`alarm_sample.alarm_sample` read through ``load_csv``; the work is what the page runs:
``prepare_summarization`` (split, structure, Fisher features, held-out evaluator) and ``run_summarization``
for k with the random draws.  In one process, in turn:

* ``after_cold`` -- the run as it is now, first in the process (numba's cached kernels load here);
* ``before`` -- the same run with the previous held-out evaluation: every re-fit one at a time, the
  incomplete test rows' log P(x_observed) by junction-tree inference on a fresh model;
* ``after`` -- the run as it is now again.

Also the largest difference between the two runs' held-out NLLs (every random draw and both greedy
subsets).  Writes ``benchmarks/results/heldout.json``.
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

from alarm_sample import alarm_sample  # noqa: E402

from bnfk_core.analyses.prototypes import selection as pt  # noqa: E402
from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.inference.queries import log_likelihood  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "heldout.json"


def previous_nll(held: pt.HeldOut, codes) -> dict:
    """The held-out NLL as computed before (no class metrics: ``hc``): complete-row counts, then junction-tree
    log P(x_observed) of the incomplete rows under the re-fitted model."""
    cpts = held.fit(codes)
    logs = [np.log(t) for t in cpts]
    total = float(sum(held.test_counts[i] @ logs[i] for i in range(len(logs))))
    if held.incomplete is not None:
        total += float(log_likelihood(held.model(cpts), held.incomplete).sum())
    return {"nll": -total / held.M}


def nlls(res: dict) -> np.ndarray:
    return np.array(res["details"]["random_nll"] + [res["mmd"]["nll"], res["chi2"]["nll"]])


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--missing", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=20)
    p.add_argument("--draws", type=int, default=200)
    p.add_argument("--structure", default="hc")
    p.add_argument("-o", "--output", default=str(RESULTS))
    a = p.parse_args(argv)
    frame = alarm_sample(a.rows, a.missing, a.seed)
    data = load_csv(text=frame.to_csv(index=False), source="alarm_sample")
    out = {
        "rows": a.rows,
        "missing": a.missing,
        "k": a.k,
        "random_draws": a.draws,
        "structure": a.structure,
        "load_before": os.getloadavg()[0],
        "cpus": os.cpu_count(),
    }
    t0 = time.perf_counter()
    exp = pt.prepare_summarization(data, a.structure, seed=a.seed)
    out["prepare_s"] = time.perf_counter() - t0
    held = exp.held
    out["test_rows"], out["incomplete_test_rows"] = (
        held.M,
        0 if held.incomplete is None else held.incomplete.n_rows,
    )
    if held.fixed is not None:
        out["enumeration_terms"], out["fallback_rows"] = (
            int(held.fixed.terms.size),
            int(held.fixed.fallback.size),
        )
    if exp.class_column is not None:
        raise SystemExit("error: the 'before' evaluation here covers the NLL only; use --structure hc")

    def run():
        t = time.perf_counter()
        res = pt.run_summarization(exp, a.k, random_draws=a.draws, return_details=True)
        return res, time.perf_counter() - t

    after_cold, out["after_cold_run_s"] = run()
    held.evaluate = lambda codes: previous_nll(held, codes)  # instance patches: the old path
    held.evaluate_many = lambda codes: [previous_nll(held, c) for c in codes]
    before, out["before_run_s"] = run()
    del held.evaluate, held.evaluate_many
    after, out["after_run_s"] = run()
    out["speedup"] = out["before_run_s"] / out["after_run_s"]
    out["page_work_after_s"] = out["prepare_s"] + out["after_cold_run_s"]
    out["max_abs_nll_diff"] = float(np.abs(nlls(after) - nlls(before)).max())
    out["same_selection"] = (
        after["details"]["mmd_rows"] == before["details"]["mmd_rows"]
        and after["details"]["chi2_rows"] == before["details"]["chi2_rows"]
    )
    out["seconds_after"] = after["seconds"]
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))
    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    Path(a.output).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
