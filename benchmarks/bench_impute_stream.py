"""Imputation of a large CSV in blocks: `impute` with and without `--chunksize`.

    python benchmarks/bench_impute_stream.py --rows 1000000 --rows 10000000 [--in-memory-max 1000000]
                                             [--dask-rows 1000000]

The letter-like CSVs of ``bench_stream.py`` (17 columns, 5 % of the cells missing; generated under /tmp
if absent, never committed) are completed with the network learned from them by ``bench_stream.py``'s
streaming ``learn --structure hc --score bic`` (``/tmp/bnfk_stream_{N}_stream.json``; learned here
if absent).  Each step runs in its own subprocess (wall time, and peak RSS from ``os.wait4``):

* ``pandas``: ``pandas.read_csv(path, dtype=str)`` -- the baseline of the ratios;
* ``impute-memory``: ``impute PATH --model M -o OUT`` (the whole file in memory);
* ``impute-stream``: the same with ``--chunksize 200000``;
* ``impute-dask``: the same with ``--engine dask`` (a LocalCluster of two processes started by the
  command; the peak RSS is the client's).

The completed files are compared byte for byte (SHA-256).  Writes ``benchmarks/results/impute_stream.json``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_stream import run, sizes_cli  # noqa: E402


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 24), b""):
            h.update(block)
    return h.hexdigest()


def bench(n: int, in_memory: bool, dask: bool) -> dict:
    path = Path(f"/tmp/bnfk_stream_{n}.csv")
    py = sys.executable
    subprocess.run(
        [py, str(ROOT / "benchmarks" / "bench_stream.py"), "--generate", str(n), str(path)], check=True
    )
    model = Path(f"/tmp/bnfk_stream_{n}_stream.json")
    if not model.exists():
        run(
            [
                py,
                "-m",
                "bnfk_core",
                "learn",
                str(path),
                "--structure",
                "hc",
                "--score",
                "bic",
                "--quiet",
                "--chunksize",
                "200000",
                "-o",
                str(model),
            ]
        )
    res = {"rows": n, "file_mib": round(path.stat().st_size / 2**20, 1), "model": model.name}
    res["pandas"] = run([py, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, dtype=str)"])
    res["pandas"].pop("stdout")
    base = res["pandas"]["seconds"]
    cmd = [py, "-m", "bnfk_core", "impute", str(path), "--model", str(model), "--quiet"]
    steps = [("impute-stream", ["--chunksize", "200000"])]
    if in_memory:
        steps.insert(0, ("impute-memory", []))
    if dask:
        steps.append(("impute-dask", ["--chunksize", "200000", "--engine", "dask"]))
    digests = {}
    for name, extra in steps:
        out = f"/tmp/bnfk_impute_{n}_{name}.csv"
        r = run(cmd + extra + ["-o", out])
        info = json.loads(r.pop("stdout"))
        r["ratio_to_pandas"] = round(r["seconds"] / base, 2)
        r["imputed_cells"] = info["imputed_cells"]
        res[name] = r
        digests[name] = sha256(out)
        Path(out).unlink()
    res["sha256"] = digests
    res["identical_files"] = len(set(digests.values())) == 1
    return res


def main() -> None:
    sizes_cli(bench, "impute_stream.json")


if __name__ == "__main__":
    main()
