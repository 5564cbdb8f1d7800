"""Row-wise work in chunks: prototypes, kernel against a fixed set, MMD and log-likelihood.

    python benchmarks/bench_rowwise.py --rows 1000000 --rows 10000000 [--all-max 1000000] [--chunksize 200000]

The letter-like CSVs of ``bench_stream.py`` (17 columns, 5 % of the cells missing; written under /tmp when
absent) and their generating model ``letter_like_model(0)`` (as a BIF file under /tmp).  Each step runs in its
own subprocess; wall time and peak RSS come from ``os.wait4``:

* ``pandas``: ``pandas.read_csv(path, dtype=str)`` -- the baseline of the ratios;
* ``prototypes``: ``prototypes PATH --model M --k 200 --chunksize C`` (greedy MMD, candidates = complete rows,
  mean embedding from all rows);
* up to ``--all-max`` rows also ``kernel PATH --other SET.csv`` (100 rows, .npy memory map), ``mmd PATH
  B.csv`` (B: 200,000 other rows) and ``loglik PATH -o LL.csv``, all with ``--chunksize C``.

Writes (merges into) ``benchmarks/results/rowwise.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_stream import generate, run
from letter_like import letter_like_model

from bnfk_core.network.formats import write_model

RESULTS = ROOT / "benchmarks" / "results"
PY = sys.executable


def cli(*args) -> list[str]:
    return [PY, "-m", "bnfk_core", *map(str, args), "--quiet"]


def step(name: str, cmd: list[str], base: dict | None) -> dict:
    print(f"  {name} ...", flush=True)
    r = run(cmd)
    out = {"seconds": r["seconds"], "peak_rss_mib": r["peak_rss_mib"]}
    if base:
        out["ratio_to_pandas_seconds"] = round(r["seconds"] / base["seconds"], 2)
        out["ratio_to_pandas_rss"] = round(r["peak_rss_mib"] / base["peak_rss_mib"], 2)
    try:
        js = json.loads(r["stdout"])
    except ValueError:
        js = {}
    keep = (
        "rows",
        "n_candidates",
        "candidates",
        "mean_embedding",
        "swaps",
        "passes",
        "converged",
        "mmd",
        "value",
        "seconds_read",
        "seconds_greedy",
        "shape",
        "total",
        "mean",
        "rows_a",
        "rows_b",
    )
    out.update({k: js[k] for k in keep if k in js})
    print(f"    {out}", flush=True)
    return out


def bench(n: int, model_path: Path, chunksize: int, everything: bool, res: dict | None = None) -> dict:
    """pandas and prototypes (``res`` None), or the other chunked commands added to ``res``."""
    path = Path(f"/tmp/bnfk_stream_{n}.csv")
    if res is None:
        t0 = time.perf_counter()
        generate(path, n)
        res = {
            "rows": n,
            "file_mib": round(path.stat().st_size / 2**20, 1),
            "chunksize": chunksize,
            "generate_seconds": round(time.perf_counter() - t0, 1),
        }
        print(f"{n:,} rows", flush=True)
        res["pandas"] = step(
            "pandas", [PY, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, dtype=str)"], None
        )
        res["prototypes"] = step(
            "prototypes",
            cli("prototypes", path, "--model", model_path, "--k", 200, "--chunksize", chunksize),
            res["pandas"],
        )
        return res
    base = res["pandas"]
    if everything:
        other = Path("/tmp/bnfk_rowwise_b_200000.csv")
        generate(other, 200_000, seed=1)
        small = Path("/tmp/bnfk_rowwise_set.csv")
        if not small.exists():
            with open(other) as fh, open(small, "w") as out:
                out.writelines(fh.readline() for _ in range(101))
        res["kernel"] = step(
            "kernel",
            cli(
                "kernel",
                path,
                "--model",
                model_path,
                "--other",
                small,
                "--chunksize",
                chunksize,
                "-o",
                "/tmp/bnfk_rowwise_K.npy",
            ),
            base,
        )
        os.remove("/tmp/bnfk_rowwise_K.npy")
        res["mmd"] = step(
            "mmd", cli("mmd", path, other, "--model", model_path, "--chunksize", chunksize), base
        )
        res["loglik"] = step(
            "loglik",
            cli(
                "loglik",
                path,
                "--model",
                model_path,
                "--chunksize",
                chunksize,
                "-o",
                "/tmp/bnfk_rowwise_ll.csv",
            ),
            base,
        )
        os.remove("/tmp/bnfk_rowwise_ll.csv")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, action="append", help="file sizes (default 1,000,000)")
    ap.add_argument(
        "--all-max", type=int, default=1_000_000, help="run kernel/mmd/loglik up to this many rows"
    )
    ap.add_argument("--chunksize", type=int, default=200_000)
    args = ap.parse_args()
    model_path = Path("/tmp/bnfk_rowwise_model.bif")
    write_model(letter_like_model(0), model_path)
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "rowwise.json"
    results = json.loads(target.read_text()) if target.exists() else {}
    sizes = args.rows or [1_000_000]
    for n in sizes:  # prototypes at every size first, then the other commands
        results[str(n)] = bench(n, model_path, args.chunksize, False)
        target.write_text(json.dumps(results, indent=1) + "\n")
    for n in sizes:
        if n <= args.all_max:
            results[str(n)] = bench(n, model_path, args.chunksize, True, results[str(n)])
            target.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
