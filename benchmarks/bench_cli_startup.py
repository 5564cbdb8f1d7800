"""CLI start-up (issue 27): ``python -m bnfk_core --help`` and ``learn --help`` against
``python -c "import pandas"``, run in turn (A B A B ...) so the ratio survives a drifting machine.

    python benchmarks/bench_cli_startup.py [--runs 7]

Writes ``benchmarks/results/cli_startup.json``: median wall seconds of each command and the median of the
pairwise ratios (target: ``--help`` within 2x of importing pandas).  For the figures in the README we used
``farm-bench --vs`` the same way.
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
COMMANDS = {"help": [sys.executable, "-m", "bnfk_core", "--help"],
            "learn_help": [sys.executable, "-m", "bnfk_core", "learn", "--help"]}
PANDAS = [sys.executable, "-c", "import pandas"]


def wall(cmd) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7)
    a = p.parse_args(argv)
    out = {"load_before": os.getloadavg()[0], "runs": a.runs}
    for name, cmd in COMMANDS.items():
        wall(cmd), wall(PANDAS)                                  # warm-up
        pairs = [(wall(cmd), wall(PANDAS)) for _ in range(a.runs)]
        out[name] = {"median_s": statistics.median(x for x, _ in pairs),
                     "pandas_median_s": statistics.median(y for _, y in pairs),
                     "ratio_median": statistics.median(x / y for x, y in pairs)}
    out["load_after"] = os.getloadavg()[0]
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
