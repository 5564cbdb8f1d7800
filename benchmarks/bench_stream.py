"""Streaming counts benchmark: in-memory vs chunked `learn --structure hc` and fitting.

    python benchmarks/bench_stream.py --rows 1000000 --rows 3000000 [--in-memory-max 1000000] \
        [--dask-rows 200000]

For every size a letter-like CSV (17 columns: a 26-state root and 16 four-state variables, <= 2 parents,
5 % of the cells empty = missing; sampled from ``letter_like_model(0)`` in seeded blocks) is written under
/tmp (never committed).  Each step runs in its own subprocess; its wall time and peak RSS come from
``os.wait4`` of that process:

* ``pandas``: ``pandas.read_csv(path, dtype=str)`` -- the baseline the ratios refer to;
* ``learn-memory`` / ``learn-stream``: ``python -m bnfk_core learn PATH --structure hc --score bic``
  (fit included), without and with ``--chunksize 200000``;
* ``fit-memory`` / ``fit-stream``: read the file and fit the CPTs of the learned DAG only;
* ``learn-dask`` (``--dask-rows``): the streaming learn with ``--engine dask`` (a LocalCluster of two
  processes started by the command; the peak RSS is the client's only).

The in-memory and streaming models are compared (arcs, BIC, max |CPT difference|).
Writes ``benchmarks/results/stream.json``.

``--table`` instead measures the commands as an analyst runs them, without flags (the table of the big-data
goals: each time as a multiple of pandas' read of the same file in the same run, and the peak RSS), with the
load average at the start and the end of every size:

* ``learn BIG.csv --structure hc --score bic`` (structural EM: the automatic path decides chunks from the file
  size and ``--max-memory``);
* ``impute BIG.csv --model M`` and ``prototypes BIG.csv --model M --k 200`` with the model just learned;
* ``learn ... --engine dask`` (``--dask-rows``): a local cluster of two worker processes against one process;
* ``cluster SMALL.csv --kernel fisher --label-column class`` on the first ``--cluster-rows`` rows' worth of
  the same generator (default 200,000; its own file and its own pandas read, ``cluster_pandas``): the Fisher
  kernel's network learned on the features, 26 clusters (the labels of the 26-state column), ``auto`` choosing
  the algorithm by ``--max-memory``;
* ``cluster-dask``: the same ``cluster`` command with ``--engine dask`` (a local cluster of two worker
  processes), against one process (the same labels, cost and ARI; the speed-up).

    python benchmarks/bench_stream.py --table --rows 2000000 --dask-rows 2000000 -o /tmp/table.json
    python benchmarks/bench_stream.py --table --rows 10000000 -o benchmarks/results/stream_table_10m.json
    python benchmarks/bench_stream.py --table --rows 200000 --steps cluster,cluster-dask -o /tmp/cluster.json

``--steps learn,impute,prototypes,cluster,cluster-dask`` runs only those rows (``learn-dask`` with
``--dask-rows``; impute and prototypes need the model ``learn`` wrote, from this run or an earlier one); the
results are merged into the size's entry of the JSON file.

Every step also records its CPU seconds (user + system of the process and the children it waited for, so a
Dask local cluster's workers count) and the ratio of those to pandas' -- steadier than wall time on a shared
machine. (The file is generated in a subprocess too, deterministically from seed 0: a child's peak RSS starts
at its parent's RSS at fork time, so the measuring process must stay small.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from letter_like import letter_like_model  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
BLOCK = 250_000


def generate(path: Path, n: int, seed: int = 0, missing: float = 0.05) -> None:
    """A letter-like CSV of ``n`` rows (seeded blocks of 250,000), 5 % of the cells empty."""
    if path.exists() and path.stat().st_size > 0:
        return
    model = letter_like_model(0)
    tmp = path.with_suffix(".part")
    with open(tmp, "w") as fh:
        fh.write(",".join(model.variables) + "\n")
        for b, start in enumerate(range(0, n, BLOCK)):
            m = min(BLOCK, n - start)
            codes = model.sample(m, seed=seed * 100_003 + b).codes
            rng = np.random.default_rng([seed, b])
            codes = np.where(rng.random(codes.shape) < missing, -1, codes)
            cols = []
            for j, st in enumerate(model.states):
                lookup = np.array(list(st) + [""], dtype=object)
                cols.append(lookup[codes[:, j]])
            lines = [",".join(row) for row in zip(*cols)]
            fh.write("\n".join(lines) + "\n")
    tmp.rename(path)


def run(cmd: list[str]) -> dict:
    """Wall seconds, peak RSS (MiB) and output of one subprocess."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(ROOT),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.decode()[-2000:]}")
    return {
        "seconds": round(secs, 2),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "stdout": out.decode(),
    }


FIT = """
import json, sys
from bnfk_core.network.model import fit
from bnfk_core.network.formats import read_model
dag = read_model(sys.argv[2]).dag
if sys.argv[1] == "stream":
    from bnfk_core.data.stream import read_counts
    data = read_counts(sys.argv[3], chunksize=200_000)
else:
    from bnfk_core.data.table import load_csv
    data = load_csv(sys.argv[3])
m = fit(dag, data)
print(json.dumps({"parameters": m.parameter_count(), "rows": data.n_rows}))
"""


def bench(n: int, in_memory: bool, dask: bool) -> dict:
    path = Path(f"/tmp/bnfk_stream_{n}.csv")
    t0 = time.perf_counter()
    # in a subprocess: a child's peak RSS (ru_maxrss) starts at its parent's RSS when it was forked,
    # so this process stays small
    subprocess.run([sys.executable, __file__, "--generate", str(n), str(path)], check=True)
    res = {
        "rows": n,
        "file_mib": round(path.stat().st_size / 2**20, 1),
        "generate_seconds": round(time.perf_counter() - t0, 1),
    }
    py = sys.executable
    res["pandas"] = run([py, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, dtype=str)"])
    learn = [py, "-m", "bnfk_core", "learn", str(path), "--structure", "hc", "--score", "bic", "--quiet"]
    out_s = f"/tmp/bnfk_stream_{n}_stream.json"
    res["learn-stream"] = run(learn + ["--chunksize", "200000", "-o", out_s])
    res["fit-stream"] = run([py, "-c", FIT, "stream", out_s, str(path)])
    if in_memory:
        out_m = f"/tmp/bnfk_stream_{n}_memory.json"
        res["learn-memory"] = run(learn + ["-o", out_m])
        res["fit-memory"] = run([py, "-c", FIT, "memory", out_m, str(path)])
        from bnfk_core.network.formats import read_model

        a, b = json.loads(res["learn-memory"]["stdout"]), json.loads(res["learn-stream"]["stdout"])
        ma, mb = read_model(out_m), read_model(out_s)
        res["same_dag"] = a["arcs"] == b["arcs"]
        res["bic_memory"], res["bic_stream"] = a["score"], b["score"]
        res["max_cpt_diff"] = float(max(np.max(np.abs(x - y)) for x, y in zip(ma.cpts, mb.cpts)))
    if dask:
        out_d = f"/tmp/bnfk_stream_{n}_dask.json"
        res["learn-dask"] = run(learn + ["--engine", "dask", "-o", out_d])
        a, b = json.loads(res["learn-stream"]["stdout"]), json.loads(res["learn-dask"]["stdout"])
        res["dask_same_dag"] = a["arcs"] == b["arcs"]
        res["dask_bic_diff"] = abs(a["score"] - b["score"])
    base = res["pandas"]["seconds"]
    for k in ("learn-stream", "fit-stream", "learn-memory", "fit-memory", "learn-dask"):
        if k in res:
            res[k]["ratio_to_pandas"] = round(res[k]["seconds"] / base, 2)
            res[k].pop("stdout", None) if k.startswith("fit") else None
    res["pandas"].pop("stdout")
    s = json.loads(res["learn-stream"]["stdout"])
    res["n_arcs"], res["bic"], res["notes"] = s["n_arcs"], s["score"], s["notes"]
    for k in ("learn-stream", "learn-memory", "learn-dask"):
        res.get(k, {}).pop("stdout", None)
    return res


TABLE_STEPS = ("learn", "impute", "prototypes", "cluster", "cluster-dask")
CLUSTER_STEPS = ("cluster", "cluster-dask")
#: set by ``--steps`` / ``--cluster-rows`` (the table's command line)
TABLE_OPTIONS = {"steps": TABLE_STEPS, "cluster_rows": 200_000}


def _pandas_read(py: str, path: Path) -> dict:
    return run([py, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, dtype=str)"])


def _cluster_step(py: str, path: Path, extra: list, base: dict) -> tuple[dict, list]:
    """One ``cluster`` subprocess (``extra``: more flags) with its ratios to pandas' read ``base``; (row,
    labels)."""
    step = run(
        [py, "-m", "bnfk_core", "cluster", str(path), "--kernel", "fisher", "--label-column", "class", *extra]
    )
    out = json.loads(step.pop("stdout"))
    labels = out.pop("labels", [])
    keep = (
        "algorithm_chosen",
        "algorithm_reason",
        "reading",
        "engine",
        "n_clusters",
        "n_used",
        "cost",
        "ari",
        "ami",
        "v_measure",
        "silhouette",
        "structure",
        "n_arcs",
        "kernel_seconds",
        "cluster_seconds",
        "notes",
    )
    step.update({k: out[k] for k in keep if k in out})
    step["labels_sha256"] = hashlib.sha256(json.dumps(labels).encode()).hexdigest()
    step["ratio_to_pandas"] = round(step["seconds"] / base["seconds"], 2)
    step["cpu_ratio_to_pandas"] = round(step["cpu_seconds"] / base["cpu_seconds"], 2)
    return step, labels


def cluster_row(n: int) -> dict:
    """``cluster FILE --kernel fisher --label-column class`` on an ``n``-row letter-like file, as an analyst
    runs it (no other flag: the network, the number of clusters and the algorithm are the command's defaults),
    with pandas' read of the same file in the same run; ``cluster-dask``: the same command with ``--engine
    dask`` (a local cluster of two worker processes started by the command; its CPU seconds count the
    workers), compared with one process (labels, cost, ARI) when both ran."""
    py = sys.executable
    path = Path(f"/tmp/bnfk_stream_{n}.csv")
    subprocess.run([py, __file__, "--generate", str(n), str(path)], check=True)
    res = {
        "cluster_rows": n,
        "cluster_file_mib": round(path.stat().st_size / 2**20, 1),
        "cluster_load_start": os.getloadavg()[0],
        "cluster_pandas": _pandas_read(py, path),
    }
    res["cluster_pandas"].pop("stdout")
    steps = TABLE_OPTIONS["steps"]
    labels = {}
    for name, extra in (("cluster", []), ("cluster-dask", ["--engine", "dask"])):
        if name in steps:
            res[name], labels[name] = _cluster_step(py, path, extra, res["cluster_pandas"])
    if len(labels) == 2:
        one, two = res["cluster"], res["cluster-dask"]
        res["cluster_dask_same_labels"] = labels["cluster"] == labels["cluster-dask"]
        res["cluster_dask_cost_rel_diff"] = abs(one["cost"] - two["cost"]) / abs(one["cost"])
        res["cluster_dask_ari_diff"] = abs(one["ari"] - two["ari"])
        res["cluster_dask_speedup"] = round(one["seconds"] / two["seconds"], 2)
    res["cluster_load_end"] = os.getloadavg()[0]
    return res


def table(n: int, in_memory: bool, dask: bool) -> dict:
    """The commands without flags on an ``n``-row letter-like file, against pandas' read (``--table``), and
    the ``cluster`` row on its own ``--cluster-rows`` file (:func:`cluster_row`)."""
    steps = TABLE_OPTIONS["steps"]
    path = Path(f"/tmp/bnfk_stream_{n}.csv")
    py = sys.executable
    res = {"rows": n, "cpus": os.cpu_count()}
    if any(s in steps for s in CLUSTER_STEPS):
        res.update(cluster_row(TABLE_OPTIONS["cluster_rows"]))
    big = [s for s in steps if s not in CLUSTER_STEPS] + (["learn-dask"] if dask else [])
    if big:
        res["steps"], res["load_start"] = big, os.getloadavg()[0]
        subprocess.run([py, __file__, "--generate", str(n), str(path)], check=True)
        res["file_mib"] = round(path.stat().st_size / 2**20, 1)
        res["pandas"] = _pandas_read(py, path)
    model = f"/tmp/bnfk_stream_{n}_table.json"
    if "learn" in steps:
        res["learn"] = run(
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
                "-o",
                model,
            ]
        )
    if "impute" in steps:
        res["impute"] = run(
            [
                py,
                "-m",
                "bnfk_core",
                "impute",
                str(path),
                "--model",
                model,
                "--quiet",
                "-o",
                f"/tmp/bnfk_stream_{n}_completed.csv",
            ]
        )
    if "prototypes" in steps:
        res["prototypes"] = run(
            [py, "-m", "bnfk_core", "prototypes", str(path), "--model", model, "--k", "200", "--quiet"]
        )
    if dask:
        res["learn-dask"] = run(
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
                "--engine",
                "dask",
                "-o",
                f"/tmp/bnfk_stream_{n}_dask.json",
            ]
        )
        a, b = json.loads(res["learn"]["stdout"]), json.loads(res["learn-dask"]["stdout"])
        res["dask_same_dag"] = a["arcs"] == b["arcs"]
        res["dask_score_rel_diff"] = abs(a["score"] - b["score"]) / abs(a["score"])
        res["dask_speedup"] = round(res["learn"]["seconds"] / res["learn-dask"]["seconds"], 2)
    for k in ("learn", "impute", "prototypes", "learn-dask"):
        if k in res:
            base, base_cpu = res["pandas"]["seconds"], res["pandas"]["cpu_seconds"]
            res[k]["ratio_to_pandas"] = round(res[k]["seconds"] / base, 2)
            res[k]["cpu_ratio_to_pandas"] = round(res[k]["cpu_seconds"] / base_cpu, 2)
            out = json.loads(res[k].pop("stdout"))
            res[k]["notes"] = out.get("notes", [])
            if k.startswith("learn"):
                res[k]["score"], res[k]["n_arcs"] = out["score"], out["n_arcs"]
    if big:
        res["pandas"].pop("stdout")
        res["load_end"] = os.getloadavg()[0]
    return res


def sizes_cli(bench, default_out: str, extra=None) -> None:
    """The command line these benchmarks share: ``--rows N`` (repeatable), ``--in-memory-max``, ``--dask-rows
    N`` and ``-o``; ``bench(n, in_memory=, dask=)`` per size, each result added to the JSON file as it
    comes."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, action="append")
    ap.add_argument("--in-memory-max", type=int, default=1_000_000)
    ap.add_argument("--dask-rows", type=int, action="append", default=[])
    ap.add_argument("-o", default=str(RESULTS / default_out))
    if extra is not None:
        extra(ap)
    args = ap.parse_args()
    if getattr(args, "generate", None):
        generate(Path(args.generate[1]), int(args.generate[0]))
        return
    out = Path(args.o)
    results = json.loads(out.read_text()) if out.exists() else {}
    merge = getattr(args, "steps", None) is not None
    for n in sorted(set((args.rows or [1_000_000]) + args.dask_rows)):
        r = bench(n, in_memory=n <= args.in_memory_max, dask=n in args.dask_rows)
        results[str(n)] = {**results.get(str(n), {}), **r} if merge else r
        print(json.dumps(r, indent=1), flush=True)
        out.write_text(json.dumps(results, indent=1) + "\n")


def _option(argv: list, flag: str):
    """The value of ``flag`` in ``argv`` (``--flag V`` or ``--flag=V``), or None."""
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def main() -> None:
    def extra(ap):
        ap.add_argument("--generate", nargs=2, metavar=("ROWS", "PATH"), help=argparse.SUPPRESS)
        ap.add_argument(
            "--table", action="store_true", help="the commands without flags against pandas' read"
        )
        ap.add_argument(
            "--steps",
            default=None,
            help=f"with --table: comma-separated, from {','.join(TABLE_STEPS)} "
            "(default all; the results are merged into the size's entry of the JSON file)",
        )
        ap.add_argument(
            "--cluster-rows", type=int, default=200_000, help="with --table: rows of the cluster file"
        )

    table_mode = "--table" in sys.argv
    if table_mode:
        steps = _option(sys.argv, "--steps")
        if steps is not None:
            bad = [s for s in steps.split(",") if s not in TABLE_STEPS]
            if bad:
                sys.exit(f"error: --steps {','.join(bad)}: choose from {','.join(TABLE_STEPS)}")
            TABLE_OPTIONS["steps"] = tuple(s for s in TABLE_STEPS if s in steps.split(","))
        rows = _option(sys.argv, "--cluster-rows")
        if rows is not None:
            TABLE_OPTIONS["cluster_rows"] = int(rows)
    sizes_cli(table if table_mode else bench, "stream_table.json" if table_mode else "stream.json", extra)


if __name__ == "__main__":
    main()
