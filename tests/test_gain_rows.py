"""The addition gains shared by a search's climbs (:class:`bnfk_core.learning.hill_climb.GainRows`): every
climb on one scorer -- a discrete BIC scorer or the KGV scorer of numbers -- returns the DAG it returns on a
scorer of its own, every kept row is the rounded difference of two family scores recomputed here, and the
later climbs compute fewer new family scores than they would alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bnfk_core.data.table import load_csv
from bnfk_core.learning.hill_climb import hill_climb
from bnfk_core.learning.kgv import KGVScorer
from bnfk_core.learning.scores import LocalScorer

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (0, 1, 2, 3)


def _zoo():
    zoo = load_csv(ROOT / "sample_data" / "zoo.csv")
    return (lambda: LocalScorer(zoo.codes, zoo.cardinalities, "bic")), list(zoo.variables)


def _numbers():
    rng = np.random.default_rng(4)
    n, d = 400, 6
    X = rng.normal(size=(n, d))
    for j in range(1, d):
        X[:, j] += 0.8 * X[:, j - 1]
    X[:, 5] += 0.7 * X[:, 2]
    numbers = {j: X[:, j] for j in range(d)}
    codes = np.zeros((n, d), dtype=np.int32)
    return (lambda: KGVScorer(codes, [1] * d, numbers=numbers)), [f"x{j}" for j in range(d)]


@pytest.mark.parametrize("make", [_zoo, _numbers], ids=["bic", "kgv"])
def test_climbs_on_one_scorer_share_gains_and_return_their_own_dags(make):
    new_scorer, names = make()
    shared = new_scorer()
    alone_scores = []
    for seed in SEEDS:
        own = new_scorer()
        alone = hill_climb(own, names, seed=seed)
        alone_scores.append(len(own.cache))
        before = len(shared.cache)
        together = hill_climb(shared, names, seed=seed)
        assert [tuple(sorted(p)) for p in together] == [tuple(sorted(p)) for p in alone], seed
        if seed != SEEDS[0]:  # the rows kept by the climbs before spare this one most of its scores
            assert len(shared.cache) - before < alone_scores[-1]
    assert shared.gain_rows
    check = new_scorer()
    for (y, own), row in shared.gain_rows.items():
        old = check(y, own)
        for x in range(len(names)):
            if x == y or x in own:
                assert row[x] == -np.inf
            else:
                assert row[x] == round(float(check(y, (*own, x)) - old), 6)
