"""A seeded real-sized table: rows sampled from the ALARM network (37 variables, bundled with pgmpy, no
network access) with a share of cells blanked completely at random.

    python benchmarks/alarm_sample.py [-o alarm_2000.csv] [--rows 2000 --missing 0.05 --seed 0]

Rows come from :meth:`bnfk_core.network.model.BayesNet.sample` (numpy ``default_rng(seed)``), the blanks from
a second generator seeded ``seed + 1``; same arguments, same table.  Columns in pgmpy's node order, values
are the network's state names, blank cells are empty strings in the CSV (``None`` in the frame).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def alarm_model():
    """The ALARM network as a :class:`bnfk_core.network.model.BayesNet` (pgmpy's bundled copy)."""
    from bnfk_core.network.model import BayesNet

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.utils import get_example_model

        net = get_example_model("alarm")
    return BayesNet.from_pgmpy(net)


def alarm_sample(rows: int = 2000, missing: float = 0.05, seed: int = 0) -> pd.DataFrame:
    """``rows`` forward samples of ALARM with each cell blank (None) with probability ``missing``."""
    model = alarm_model()
    codes = model.sample(rows, seed).codes
    blank = np.random.default_rng(seed + 1).random(codes.shape) < missing
    cols = {}
    for i, v in enumerate(model.variables):
        vals = np.asarray(model.states[i], dtype=object)[codes[:, i]]
        vals[blank[:, i]] = None
        cols[v] = vals
    return pd.DataFrame(cols)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", default="alarm_2000.csv")
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--missing", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    frame = alarm_sample(a.rows, a.missing, a.seed)
    frame.to_csv(a.output, index=False)
    print(
        f"wrote {a.output}: {frame.shape[0]} rows x {frame.shape[1]} columns, "
        f"{int(frame.isna().to_numpy().sum())} blank cells"
    )


if __name__ == "__main__":
    main()
