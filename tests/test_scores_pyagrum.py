"""Our BIC of a DAG against pyAgrum's BIC of the same DAG on the same table (an independent implementation).

pyAgrum scores in bits (log base 2): BIC_2 = LL_2 - 1/2 log2(N) q (r - 1), so ours (nats) = ln 2 x pyAgrum's.
pyAgrum is a benchmark peer (benchmarks/requirements-peers.txt), not a requirement: without it these skip.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bnfk_core.data.table import load_csv
from bnfk_core.learning.scores import score_dag
from bnfk_core.learning.structure import learn_structure
from bnfk_core.network.dag import DAG

gum = pytest.importorskip("pyagrum")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_data"


def table(codes: np.ndarray, variables) -> pd.DataFrame:
    return pd.DataFrame({v: [f"s{c}" for c in codes[:, i]] for i, v in enumerate(variables)})


def pyagrum_bic_nats(frame: pd.DataFrame, dag: DAG) -> float:
    learner = gum.BNLearner(frame)
    learner.useScoreBIC()
    cols = list(frame.columns)
    parents = dag.parent_indices()
    return math.log(2) * sum(learner.score(v, [cols[p] for p in parents[i]]) for i, v in enumerate(cols))


def random_dag(variables, rng, max_parents=3) -> DAG:
    order = rng.permutation(len(variables))
    arcs = []
    for pos in range(1, len(order)):
        k = int(rng.integers(0, min(max_parents, pos) + 1))
        for p in rng.choice(order[:pos], size=k, replace=False):
            arcs.append((variables[p], variables[order[pos]]))
    return DAG(list(variables), arcs)


def test_bic_equals_pyagrum_bic_on_random_dags_of_a_random_table():
    rng = np.random.default_rng(7)
    cards = [2, 3, 4, 2, 5, 3]
    codes = np.column_stack([rng.integers(0, r, 400) for r in cards])
    codes[:, 1] = (codes[:, 0] + codes[:, 1]) % 3  # some dependence, so the scores differ by DAG
    variables = [f"x{i}" for i in range(len(cards))]
    frame = table(codes, variables)
    assert all(frame[v].nunique() == r for v, r in zip(variables, cards))  # every state observed
    seen = set()
    for _ in range(8):
        dag = random_dag(variables, rng)
        ours = score_dag(codes, cards, dag, "bic")
        theirs = pyagrum_bic_nats(frame, dag)
        assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-8)
        seen.add(round(ours, 6))
    assert len(seen) > 4  # the DAGs really were different


def test_bic_of_pyagrums_learned_dag_on_car_and_ours_is_no_worse():
    data = load_csv(SAMPLES / "car.csv")
    frame = table(data.codes, data.variables)
    learner = gum.BNLearner(frame)
    learner.useScoreBIC()
    learner.useGreedyHillClimbing()
    learner.setNumberOfThreads(1)
    learned = learner.learnDAG()
    names = learner.names()
    theirs = DAG(list(data.variables), [(names[a], names[b]) for a, b in learned.arcs()])
    assert score_dag(data.codes, data.cardinalities, theirs, "bic") == pytest.approx(
        pyagrum_bic_nats(frame, theirs), rel=1e-10
    )
    ours = learn_structure(data, "hc", score="bic")
    # our tabu climb (best of 5) reaches at least pyAgrum's greedy optimum on this table (-13686.56 vs
    # -13699.84)
    assert ours.score >= score_dag(data.codes, data.cardinalities, theirs, "bic") - 1e-6
    assert ours.score == pytest.approx(pyagrum_bic_nats(frame, ours.dag), rel=1e-10)
