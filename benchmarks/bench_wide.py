"""Wide data: hill climbing on 100 rows x 200 columns, our cached-gain search vs pgmpy's.

    python benchmarks/bench_wide.py            # prints a table, writes benchmarks/results/wide.json

The data: 200 three-state columns, each a noisy copy (30 % resampled) of an earlier random column
(seeded, so many real dependencies and many equal gains).  For every score: one full climb of our
engine (``hill_climb(..., engine="bnfk")``), and the first 5 steps of both engines (pgmpy's
``HillClimbSearch`` costs O(d^2) gains with a ``has_path`` each per step, so a full pgmpy climb of
hundreds of steps is extrapolated from its per-step time, not run).  Both engines give the same
DAG step for step (tests/test_learn_hc.py).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bnfk_core.data.table import from_codes  # noqa: E402
from bnfk_core.learning.hill_climb import hill_climb  # noqa: E402
from bnfk_core.learning.scores import LocalScorer  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def wide_data(n_rows: int = 100, n_cols: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    codes = np.zeros((n_rows, n_cols), dtype=np.int32)
    codes[:, 0] = rng.integers(0, 3, n_rows)
    for j in range(1, n_cols):
        src = codes[:, rng.integers(0, j)]
        codes[:, j] = np.where(rng.random(n_rows) < 0.3, rng.integers(0, 3, n_rows), src)
    return from_codes(codes, [f"v{j}" for j in range(n_cols)], [("s0", "s1", "s2")] * n_cols)


def main() -> None:
    data = wide_data()
    out = {"rows": data.n_rows, "columns": data.n_vars, "scores": {}}
    print(f"{'score':6s} {'ours: full climb':>22s} {'ours: 5 steps':>14s} {'pgmpy: 5 steps':>15s}")
    for score in ("bic", "qnml"):
        rec = {}
        for engine in ("bnfk", "pgmpy"):
            scorer = LocalScorer(data.codes, data.cardinalities, score)
            t = time.perf_counter()
            ps = hill_climb(scorer, data.variables, engine=engine, max_iter=5)
            rec[f"{engine}_5_steps_seconds"] = time.perf_counter() - t
            rec[f"{engine}_5_steps_arcs"] = sum(map(len, ps))
        scorer = LocalScorer(data.codes, data.cardinalities, score)
        t = time.perf_counter()
        ps = hill_climb(scorer, data.variables)
        rec["bnfk_full_seconds"] = time.perf_counter() - t
        rec["bnfk_full_arcs"] = sum(map(len, ps))
        rec["families_scored"] = len(scorer.cache)
        out["scores"][score] = rec
        print(
            f"{score:6s} {rec['bnfk_full_seconds']:8.1f} s ({rec['bnfk_full_arcs']} arcs) "
            f"{rec['bnfk_5_steps_seconds']:12.1f} s {rec['pgmpy_5_steps_seconds']:13.1f} s",
            flush=True,
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "wide.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
