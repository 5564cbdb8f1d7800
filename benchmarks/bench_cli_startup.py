"""CLI start-up: ``python -m bnfk_core --help``, subcommands' ``--help`` and an argument error against
``python -c "import pandas"``, run in turn (A B A B ...) so the ratio survives a drifting machine.

    python benchmarks/bench_cli_startup.py [--runs 7]

Writes ``benchmarks/results/cli_startup.json``: median wall seconds of each command and the median of the
pairwise ratios (target: ``--help`` within 2x of importing pandas), with CPU seconds beside the wall seconds
(on a shared machine the wall clock mostly measures the queue).  Subcommands take their choices from
:mod:`bnfk_core.cli.names`, so none of these imports pandas.
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
COMMANDS = {
    "help": [sys.executable, "-m", "bnfk_core", "--help"],
    "learn_help": [sys.executable, "-m", "bnfk_core", "learn", "--help"],
    "cluster_help": [sys.executable, "-m", "bnfk_core", "cluster", "--help"],
    "learn_argument_error": [sys.executable, "-m", "bnfk_core", "learn", "x.csv", "--structure", "hc"],
}
PANDAS = [sys.executable, "-c", "import pandas"]


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
    a = p.parse_args(argv)
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
