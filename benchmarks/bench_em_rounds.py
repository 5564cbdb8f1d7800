"""Structural EM's round searches (``round_search``) on a table with hidden cells: time and accuracy.

The table is read and binned once (``load_csv``, quantile bins); then a seeded share of its cells is hidden
(MCAR, every cell equally likely), and for each ``round_search`` the structural-EM network is learned
(``learn_network(..., "hc", missing_data="em")``, BIC, BDeu CPTs, as ``impute --structure hc --method bn-em``)
and the hidden cells imputed with its exact posteriors.  Every choice sees the same hidden cells.  A choice
that does not finish within ``--timeout`` seconds is recorded as such (it runs in a child process).

    python benchmarks/bench_em_rounds.py DATA.csv --drop-columns id --missing 0.3 --rows 602 \\
        --round-search climb,climb-full,full --timeout 600 -o benchmarks/results/em_rounds.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hidden_table(path, drop, rows, missing, seed):
    """(data with hidden cells, true codes, mask of hidden cells)."""
    from bnfk_core.data.table import from_codes, load_csv

    full = load_csv(path, drop_columns=tuple(drop))
    codes = np.asarray(full.codes).copy()
    rng = np.random.default_rng(seed)
    if rows and rows < codes.shape[0]:
        codes = codes[np.sort(rng.choice(codes.shape[0], rows, replace=False))]
    mask = (rng.random(codes.shape) < missing) & (codes >= 0)
    hidden = codes.copy()
    hidden[mask] = -1
    return from_codes(hidden, list(full.variables), [list(s) for s in full.states]), codes, mask


def _run(args, round_search, out):
    from bnfk_core.analyses.impute.completion import impute_with_model
    from bnfk_core.learning.incomplete import learn_network

    data, truth, mask = hidden_table(args.data, args.drop_columns, args.rows, args.missing, args.seed)
    c0, t0 = time.process_time(), time.perf_counter()
    res, model = learn_network(
        data, "hc", missing_data="em", score="bic", params="bdeu", seed=args.seed, round_search=round_search
    )
    imp = impute_with_model(model, data)
    filled = np.asarray(imp.data.codes)
    out.put(
        {
            "round_search": round_search,
            "cpu_s": round(time.process_time() - c0, 2),
            "wall_s": round(time.perf_counter() - t0, 2),
            "accuracy": round(float((filled[mask] == truth[mask]).mean()), 4),
            "observed_bic": round(float(res.score), 2),
            "arcs": int(res.dag.n_arcs),
            "notes": res.notes,
        }
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("--drop-columns", default="", type=lambda s: [c for c in s.split(",") if c])
    p.add_argument("--rows", type=int, default=0, help="a seeded sample of this many rows (0: all)")
    p.add_argument("--missing", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--round-search", default="climb,full")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("-o", "--output")
    args = p.parse_args(argv)
    data, truth, mask = hidden_table(args.data, args.drop_columns, args.rows, args.missing, args.seed)
    record = {
        "data": os.path.basename(args.data),
        "rows": int(truth.shape[0]),
        "columns": int(truth.shape[1]),
        "missing": args.missing,
        "hidden_cells": int(mask.sum()),
        "seed": args.seed,
        "load_before": os.getloadavg()[0],
        "runs": [],
    }
    for rs in args.round_search.split(","):
        q = mp.get_context("fork").Queue()
        proc = mp.get_context("fork").Process(target=_run, args=(args, rs, q))
        t0 = time.perf_counter()
        proc.start()
        proc.join(args.timeout)
        if proc.is_alive():
            proc.kill()
            proc.join()
            run = {"round_search": rs, "unfinished_after_s": round(time.perf_counter() - t0, 1)}
        else:
            run = q.get() if not q.empty() else {"round_search": rs, "failed": proc.exitcode}
        run["load"] = os.getloadavg()[0]
        record["runs"].append(run)
        print(json.dumps(run), file=sys.stderr)
    text = json.dumps(record, indent=1)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
