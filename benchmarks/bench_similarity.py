"""Similarity-measure benchmark: the N = 5,000 Gram of every measure against the Fisher Gram.

    # prints a table, writes benchmarks/results/similarity.json
    python benchmarks/bench_similarity.py [--quick]

Two problems, each timed best-of-3 after a warm-up (numba compilation excluded):

- ``letter_like``: the letter-like random network of ``bench_kernels.py`` (17 variables, 16 with 4 states
  and one with 26, <= 2 parents), N rows forward-sampled; Fisher Gram of that network;
- ``mushroom``: the first N rows of the mushroom sample (22 nominal features, missing values as a
  category), Fisher Gram of an hc/BIC network learned on them (learning not timed).

Every measure is fitted on the same rows (frequencies; not timed) and its ``gram(X)`` timed.  Target:
measure time <= 2 x the Fisher Gram time.  ``--quick`` uses N = 2,000 and one repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from letter_like import letter_like_model

from bnfk_core.data.table import load_csv
from bnfk_core.kernels.fisher import gram
from bnfk_core.kernels.similarity import MEASURES, fit_measure
from bnfk_core.learning.structure import learn_structure
from bnfk_core.network.model import fit

RESULTS = ROOT / "benchmarks" / "results"


def best_of(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def problems(N):
    model = letter_like_model(seed=0)
    yield "letter_like", model, model.sample(N, seed=1).codes
    data = (
        load_csv(ROOT / "sample_data" / "mushroom.csv", class_column="class", missing_policy="category")
        .without_class()
        .subset(np.arange(N))
    )
    dag = learn_structure(data, "hc", score="bic", seed=0).dag
    m = fit(dag, data, method="smoothed")
    yield "mushroom", m, m.align(data).codes


def main(quick: bool = False):
    warnings.simplefilter("ignore")
    N = 2000 if quick else 5000
    repeat = 1 if quick else 3
    out = {"N": N, "repeat": repeat, "cpus": os.cpu_count(), "problems": {}}
    for pname, model, X in problems(N):
        gram(model, X[:50])
        tf = best_of(lambda model=model, X=X: gram(model, X), repeat)
        rows = {"fisher_seconds": tf, "measures": {}}
        print(f"\n{pname}: N = {N:,}, {X.shape[1]} variables; Fisher Gram {tf:.3f} s")
        print(f"{'measure':18s} {'seconds':>8s} {'x Fisher':>9s}")
        for name in MEASURES:
            fm = fit_measure(name, X)
            fm.gram(X[:20])  # warm-up (compiled pass)
            t = best_of(lambda fm=fm, X=X: fm.gram(X), repeat)
            rows["measures"][name] = {"seconds": t, "ratio_to_fisher": t / tf, "within_2x": bool(t <= 2 * tf)}
            print(f"{name:18s} {t:8.3f} {t / tf:9.2f}")
        rows["max_ratio"] = max(v["ratio_to_fisher"] for v in rows["measures"].values())
        rows["all_within_2x"] = all(v["within_2x"] for v in rows["measures"].values())
        out["problems"][pname] = rows
    out["load_average_end"] = list(os.getloadavg())
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "similarity_quick.json" if quick else "similarity.json"
    (RESULTS / name).write_text(json.dumps(out, indent=1))
    print(f"\nwrote {RESULTS / name}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    main(ap.parse_args().quick)
