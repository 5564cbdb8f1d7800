"""``learn BIG.csv --structure hc --score bic`` (no other flag) in one process with one and with two threads,
and with ``--engine dask`` (a local cluster of two worker processes), against pandas' read of the same file,
in one run.

    python benchmarks/bench_learn_engines.py --rows 2000000 [-o benchmarks/results/learn_engines.json]

The file is the letter-like CSV of ``bench_stream.py`` (seed 0, 5 % blank cells) under /tmp, generated once.
Each command is a subprocess (wall seconds; CPU seconds and peak RSS from ``os.wait4``, which also counts a
local cluster's worker processes); the load average is recorded before and after.  One process's threads are
numba's (``NUMBA_NUM_THREADS``: the search's batches of families spread over them); the cluster's workers
count one thread each.  The three networks must be the same DAG with the same observed-data score (checked
here).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_stream import RESULTS, run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("-o", default=str(RESULTS / "learn_engines.json"))
    args = ap.parse_args()
    n = args.rows
    path = Path(f"/tmp/bnfk_stream_{n}.csv")
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_stream.py"), "--generate", str(n), str(path)],
        check=True,
    )
    py = sys.executable
    learn = [py, "-m", "bnfk_core", "learn", str(path), "--structure", "hc", "--score", "bic", "--quiet"]
    res = {
        "rows": n,
        "file_mib": round(path.stat().st_size / 2**20, 1),
        "cpus": os.cpu_count(),
        "load_start": [round(x, 2) for x in os.getloadavg()],
    }
    res["pandas"] = run([py, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, dtype=str)"])
    runs = {
        "learn-1-thread": ({"NUMBA_NUM_THREADS": "1"}, []),
        "learn-2-threads": ({"NUMBA_NUM_THREADS": "2"}, []),
        "learn-dask": ({"NUMBA_NUM_THREADS": "1"}, ["--engine", "dask"]),
    }
    saved = dict(os.environ)
    for name, (env, extra) in runs.items():
        os.environ.update(env)
        try:
            res[name] = run(learn + extra + ["-o", f"/tmp/bnfk_stream_{n}_{name}.json"])
        finally:
            os.environ.clear()
            os.environ.update(saved)
        print(name, res[name]["seconds"], "s", flush=True)
    res["pandas_end"] = run([py, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, dtype=str)"])
    res["load_end"] = [round(x, 2) for x in os.getloadavg()]
    base, base_cpu = res["pandas"]["seconds"], res["pandas"]["cpu_seconds"]
    ref = None
    for name in runs:
        r = res[name]
        out = json.loads(r.pop("stdout"))
        r["score"], r["n_arcs"], arcs = out["score"], out["n_arcs"], out["arcs"]
        r["ratio_to_pandas"] = round(r["seconds"] / base, 2)
        r["cpu_ratio_to_pandas"] = round(r["cpu_seconds"] / base_cpu, 2)
        if ref is None:
            ref = (arcs, r["score"])
        r["same_dag_as_1_thread"] = arcs == ref[0]
        r["score_rel_diff"] = abs(r["score"] - ref[1]) / abs(ref[1])
    for k in ("pandas", "pandas_end"):
        res[k].pop("stdout")
    res["dask_speedup_vs_1_thread"] = round(
        res["learn-1-thread"]["seconds"] / res["learn-dask"]["seconds"], 2
    )
    res["dask_speedup_vs_2_threads"] = round(
        res["learn-2-threads"]["seconds"] / res["learn-dask"]["seconds"], 2
    )
    Path(args.o).write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
