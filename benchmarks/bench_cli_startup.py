"""CLI start-up: ``python -m bnfk_core --help``, subcommands' ``--help`` and an argument error against
``python -c "import pandas"``, run in turn (A B A B ...) so the ratio survives a drifting machine.

    python benchmarks/bench_cli_startup.py [--runs 7]
    python benchmarks/bench_cli_startup.py --first-calls [--runs 5]

Writes ``benchmarks/results/cli_startup.json``: median wall seconds of each command and the median of the
pairwise ratios (target: ``--help`` within 2x of importing pandas), with CPU seconds beside the wall seconds
(on a shared machine the wall clock mostly measures the queue).  Subcommands take their choices from
:mod:`bnfk_core.cli.names`, so none of these imports pandas.

``--first-calls`` times a notebook's first calls in a fresh process instead -- ``LatentClassModel(3).fit`` on
house_votes_84 and the README's ``cross_val_score`` of the Fisher-kernel SVM -- with numba's cache empty
(``NUMBA_CACHE_DIR`` a new empty folder each run: a fresh ``pip install``) and filled by
``python -m bnfk_core warmup``, in turn; writes ``benchmarks/results/first_calls.json`` (the call's own
seconds as the child measures them, and the whole process's wall and CPU seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cli_startup.json"
FIRST_CALL_RESULTS = ROOT / "benchmarks" / "results" / "first_calls.json"
COMMANDS = {
    "help": [sys.executable, "-m", "bnfk_core", "--help"],
    "learn_help": [sys.executable, "-m", "bnfk_core", "learn", "--help"],
    "cluster_help": [sys.executable, "-m", "bnfk_core", "cluster", "--help"],
    "learn_argument_error": [sys.executable, "-m", "bnfk_core", "learn", "x.csv", "--structure", "hc"],
}
PANDAS = [sys.executable, "-c", "import pandas"]


#: a notebook's first calls; each prints the seconds of the call itself on its last line
FIRST_CALLS = {
    "lca_fit": (
        "import time, pandas as pd\n"
        "from bnfk_core.estimators import LatentClassModel\n"
        "X = pd.read_csv('sample_data/house_votes_84.csv', na_values='?', keep_default_na=False)"
        ".drop(columns='class')\n"
        "t = time.perf_counter(); LatentClassModel(3).fit(X); print(time.perf_counter() - t)"
    ),
    "svm_cross_val_score": (
        "import time, pandas as pd\n"
        "from sklearn.model_selection import cross_val_score\n"
        "from sklearn.pipeline import make_pipeline\n"
        "from sklearn.svm import SVC\n"
        "from bnfk_core.estimators import FisherKernel, NetworkImputer\n"
        "votes = pd.read_csv('sample_data/house_votes_84.csv', na_values='?', keep_default_na=False)\n"
        "X, y = votes.drop(columns='class'), votes['class']\n"
        "svm = make_pipeline(NetworkImputer(), FisherKernel(output='gram'), SVC(kernel='precomputed'))\n"
        "t = time.perf_counter(); cross_val_score(svm, X, y, cv=3); print(time.perf_counter() - t)"
    ),
}


def first_call(code: str, cache: str) -> tuple[float, float, float]:
    """(the call's own seconds, the process's wall and CPU seconds) of ``code`` with NUMBA_CACHE_DIR=cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    before = os.times()
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    after = os.times()
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return float(r.stdout.split()[-1]), seconds, cpu


def first_calls(runs: int) -> dict:
    """Each first call with an empty and a warmed cache, in turn (``--first-calls``)."""
    import tempfile

    out = {"load_before": os.getloadavg()[0], "runs": runs}
    with tempfile.TemporaryDirectory() as tmp:
        warm = os.path.join(tmp, "warm")
        os.mkdir(warm)
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "bnfk_core", "warmup"],
            cwd=ROOT,
            env={**os.environ, "NUMBA_CACHE_DIR": warm, "PYTHONPATH": str(ROOT)},
            check=True,
            stdout=subprocess.DEVNULL,
        )
        out["warmup_s"] = time.perf_counter() - t0
        for name, code in FIRST_CALLS.items():
            pairs = [
                (first_call(code, tempfile.mkdtemp(dir=tmp)), first_call(code, warm)) for _ in range(runs)
            ]
            out[name] = {
                f"{cache}_{what}_median_s": statistics.median(p[i][k] for p in pairs)
                for i, cache in enumerate(("empty_cache", "warm_cache"))
                for k, what in enumerate(("call", "process_wall", "process_cpu"))
            }
    out["load_after"] = os.getloadavg()[0]
    FIRST_CALL_RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return out


def wall(cmd) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``cmd`` (exit 0, or 2 for an argument error)."""
    before = os.times()
    t0 = time.perf_counter()
    code = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    seconds = time.perf_counter() - t0
    after = os.times()
    if code not in (0, 2):
        raise SystemExit(f"{' '.join(cmd)} failed with exit code {code}")
    return seconds, (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--first-calls", action="store_true", help="time a notebook's first calls (docstring)")
    a = p.parse_args(argv)
    if a.first_calls:
        return first_calls(a.runs)
    out = {"load_before": os.getloadavg()[0], "runs": a.runs}
    for name, cmd in COMMANDS.items():
        wall(cmd), wall(PANDAS)  # warm-up
        pairs = [(wall(cmd), wall(PANDAS)) for _ in range(a.runs)]
        out[name] = {
            "median_s": statistics.median(x[0] for x, _ in pairs),
            "pandas_median_s": statistics.median(y[0] for _, y in pairs),
            "ratio_median": statistics.median(x[0] / y[0] for x, y in pairs),
            "cpu_median_s": statistics.median(x[1] for x, _ in pairs),
            "pandas_cpu_median_s": statistics.median(y[1] for _, y in pairs),
            "cpu_ratio_median": statistics.median(x[1] / y[1] for x, y in pairs),
        }
    out["load_after"] = os.getloadavg()[0]
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
