"""The client's share of the CPU in ``learn --engine dask`` on a ``LocalCluster`` of worker processes.

    python benchmarks/bench_dask_share.py --rows 2000000 [-o benchmarks/results/dask_share.json]

The letter-like CSV of ``bench_stream.py`` (seed 0, 5 % blank cells) under /tmp, generated once.  This
process starts a ``LocalCluster`` (its scheduler here, two worker processes of one thread each) and runs the
client as a subprocess: ``learn BIG.csv --structure hc --score bic --engine dask --scheduler ADDRESS``.  The
client's CPU is that subprocess's user + system seconds (``os.wait4``); the workers' is their processes' user
+ system seconds (``psutil``, read on each worker before and after); the scheduler's is this process's.  The
share is client / (client + workers); the load average before and after.

Every process imports bnfk as an installed package does: from compiled bytecode.  ``pip install`` writes it;
a checkout run with ``PYTHONDONTWRITEBYTECODE=1`` (this machine's default) would compile bnfk's ~90 modules
from source in every process (0.2 CPU s of the client).  So the package is compiled first, into its
``__pycache__`` folders (ignored by git; the flag stops Python writing them, not reading them);
``--source-imports`` skips that, to measure the uncompiled case.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"


def _compiled_imports() -> None:
    """bnfk's modules compiled beside their sources, as ``pip install`` compiles them."""
    assert compileall.compile_dir(str(ROOT / "bnfk_core"), quiet=1), "bnfk_core does not compile"


def _worker_cpu() -> float:
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("-o", default=str(RESULTS / "dask_share.json"))
    ap.add_argument(
        "--source-imports", action="store_true", help="import bnfk from source (no compiled bytecode)"
    )
    args = ap.parse_args()
    if not args.source_imports:
        _compiled_imports()
    n = args.rows
    path = Path(f"/tmp/bnfk_stream_{n}.csv")
    if not path.exists():
        subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "bench_stream.py"), "--generate", str(n), str(path)],
            check=True,
        )
    from distributed import Client, LocalCluster

    # the workers import this checkout, as the client does (not another installed bnfk)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

    res = {
        "rows": n,
        "bytecode": not args.source_imports,
        "file_mib": round(path.stat().st_size / 2**20, 1),
        "load_start": list(os.getloadavg()),
    }
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    try:

        def workers():
            return sum(client.run(_worker_cpu).values())

        learn = [sys.executable, "-m", "bnfk_core", "learn", str(path), "--structure", "hc", "--score", "bic"]
        learn += ["--engine", "dask", "--scheduler", cluster.scheduler_address, "--quiet"]
        learn += ["-o", f"/tmp/bnfk_share_{n}.json"]
        env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
        w0, s0, t0 = workers(), time.process_time(), time.perf_counter()
        proc = subprocess.Popen(learn, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        w1, s1, t1 = workers(), time.process_time(), time.perf_counter()
        assert status == 0, status
        client_cpu, worker_cpu = usage.ru_utime + usage.ru_stime, w1 - w0
        res.update(
            wall=round(t1 - t0, 2),
            client_cpu=round(client_cpu, 2),
            workers_cpu=round(worker_cpu, 2),
            scheduler_cpu=round(s1 - s0, 2),
            client_share=round(client_cpu / (client_cpu + worker_cpu), 3),
        )
        got = json.loads(out)
        res["score"], res["n_arcs"], res["arcs"] = got["score"], got["n_arcs"], got["arcs"]
        print({k: v for k, v in res.items() if k != "arcs"}, flush=True)
    finally:
        client.close()
        cluster.close()
    res["load_end"] = list(os.getloadavg())
    Path(args.o).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
