"""The wide rows' posteriors from per-group tables (bnfk_core.learning.wide_posteriors) against brute-force
enumeration of every joint completion and against the blanket contraction they replace."""

from __future__ import annotations

import itertools
import re
import time

import numpy as np
import pytest

from bnfk_core.inference.queries import joint_posteriors, missingness_patterns
from bnfk_core.learning import wide_posteriors
from bnfk_core.learning.wide_posteriors import WidePosteriors
from bnfk_core.network.dag import DAG
from tests.helpers_bruteforce import completions, joint_prob, random_dag, random_model


def _brute(model, row, S):
    """P(x_S | x_obs) of one row by enumerating every completion of all its missing cells."""
    cards = [int(c) for c in model.cardinalities]
    out = np.zeros([cards[v] for v in S])
    for c in completions(model, row):
        out[tuple(int(c[v]) for v in S)] += joint_prob(model, c)
    return (out / out.sum()).ravel()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_subset_equals_brute_force_and_the_contraction(seed):
    cards = [2, 3, 2, 2, 3, 2, 2]
    model = random_model(random_dag(7, seed=seed), cards, seed=seed)
    codes = model.sample(30, seed=seed).codes.copy()
    codes[np.random.default_rng(seed).random(codes.shape) < 0.5] = -1
    wp = WidePosteriors(model, codes)
    assert wp.tables  # some rows go through the groups' tables
    for S in itertools.chain.from_iterable(itertools.combinations(range(7), k) for k in (1, 2, 3)):
        rows, P = wp.posterior(S)
        np.testing.assert_array_equal(rows, np.flatnonzero((codes[:, list(S)] < 0).all(axis=1)))
        for r, p in zip(rows, P):
            np.testing.assert_allclose(p, _brute(model, codes[r], S), rtol=1e-9, atol=1e-12)
        for prow, missing in missingness_patterns(codes):  # the old per-pattern contraction, row by row
            if set(S) <= set(missing.tolist()):
                want = joint_posteriors(model, codes, prow, missing, list(S))
                np.testing.assert_allclose(P[np.searchsorted(rows, prow)], want, rtol=1e-9, atol=1e-12)


def test_a_group_beyond_the_bound_is_contracted(monkeypatch):
    """Rows whose groups exceed GROUP_MAX_STATES keep the contraction: the same numbers."""
    cards = [2, 3, 2, 2, 3, 2]
    model = random_model(random_dag(6, seed=5), cards, seed=5)
    codes = model.sample(40, seed=5).codes.copy()
    codes[np.random.default_rng(5).random(codes.shape) < 0.6] = -1
    a = WidePosteriors(model, codes)
    monkeypatch.setattr(wide_posteriors, "GROUP_MAX_STATES", 1)
    b = WidePosteriors(model, codes)
    assert not b.tables and b.contracted
    for S in [(0,), (1, 4), (0, 2, 5)]:
        ra, Pa = a.posterior(S)
        rb, Pb = b.posterior(S)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_allclose(Pa, Pb, rtol=1e-9, atol=1e-12)


def test_rows_missing_most_cells_are_quick():
    """40 binary variables in families of two, rows missing 30 of them: 2**30 joint completions each, here
    groups of one or two cells.  A family's pair posterior, both cells missing, is its prior joint."""
    n = 40
    dag = DAG([f"v{i}" for i in range(n)], [(f"v{i}", f"v{i + 1}") for i in range(0, n - 1, 3)])
    model = random_model(dag, [2] * n, seed=1)
    rng = np.random.default_rng(1)
    codes = model.sample(200, seed=1).codes.copy()
    for r in range(len(codes)):
        codes[r, rng.choice(n, 30, replace=False)] = -1
    t0 = time.process_time()
    wp = WidePosteriors(model, codes)
    for S in itertools.combinations(range(12), 2):
        wp.posterior(S)
    assert time.process_time() - t0 < 20.0
    rows, P = wp.posterior((0, 1))
    assert len(rows) > 0
    want = (model.cpts[0][0][:, None] * model.cpts[1]).ravel()  # P(v0) P(v1 | v0)
    for p in P:
        np.testing.assert_allclose(p, want, rtol=1e-9)


def test_structural_em_reports_its_rounds_search():
    """The search inside a structural-EM round reports under the round's heading, fractions in [0, 1] never
    falling, so a long round shows progress on the CLI's stderr."""
    from bnfk_core.data.table import from_codes
    from bnfk_core.learning.incomplete import structural_em

    cards = [2, 3, 2, 2, 3]
    model = random_model(random_dag(5, seed=4), cards, seed=4)
    codes = model.sample(150, seed=2).codes.copy()
    codes[np.random.default_rng(3).random(codes.shape) < 0.3] = -1
    data = from_codes(codes, [f"x{k}" for k in range(5)], [[str(s) for s in range(c)] for c in cards])
    seen = []
    structural_em(data, "hc", max_rounds=3, progress=lambda f, msg: seen.append((f, msg)))
    fr = [f for f, _ in seen]
    assert all(0.0 <= f <= 1.0 for f in fr) and fr == sorted(fr)
    assert any(
        re.match(r"structural EM: round 1( \(climb\))?, score", msg) and msg.count(":") >= 3
        for _, msg in seen
    )
