"""The budgets of hybrid EM and structural EM: the relative tolerance, the iteration and round bounds, the
search moves per round and the beam over rows with many completions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from test_hybrid import ARCS, NODES, true_net

from bnfk_core.errors import DataError
from bnfk_core.hybrid import (
    MixedData,
    em_hybrid,
    hybrid_imputation,
    marginal_log_density,
    structural_em_hybrid,
)
from bnfk_core.hybrid.em import EM_TOL, completion_table
from bnfk_core.network.dag import DAG


@pytest.fixture(scope="module")
def small():
    """600 rows of the six-node network, 25 % of the cells of X, Y, B and C blank (seeded)."""
    d = true_net().sample(600, seed=5)
    rng = np.random.default_rng(2)
    values, codes = d.values.copy(), d.codes.copy()
    for col in (3, 4):
        values[rng.random(600) < 0.25, col] = np.nan
    for col in (1, 2):
        codes[rng.random(600) < 0.25, col] = -1
    return MixedData(d.variables, d.kinds, d.states, codes, values, "small")


@pytest.mark.parametrize(
    "kwargs, culprit",
    [
        ({"tol": -1e-3}, "EM tolerance"),
        ({"tol": float("nan")}, "EM tolerance"),
        ({"tol": "tight"}, "EM tolerance"),
        ({"max_iter": 0}, "most EM iterations"),
        ({"max_iter": 2.5}, "most EM iterations"),
    ],
)
def test_em_refuses_a_bad_tolerance_or_iteration_bound_in_one_sentence(small, kwargs, culprit):
    with pytest.raises(DataError) as err:
        em_hybrid(DAG(NODES, ARCS), small, **kwargs)
    msg = str(err.value)
    assert culprit in msg and msg.count(". ") == 0 and msg.endswith(".")


@pytest.mark.parametrize(
    "kwargs, culprit",
    [
        ({"max_rounds": 0}, "rounds of structural EM"),
        ({"round_iterations": -2}, "EM iterations per round"),
        ({"round_moves": 0}, "search moves per round"),
        ({"round_moves": True}, "search moves per round"),
        ({"tol": -1.0}, "EM tolerance"),
    ],
)
def test_structural_em_refuses_a_bad_budget_in_one_sentence(small, kwargs, culprit):
    with pytest.raises(DataError) as err:
        structural_em_hybrid(small, **kwargs)
    msg = str(err.value)
    assert culprit in msg and msg.count(". ") == 0 and msg.endswith(".")


def test_em_log_likelihood_never_decreases_and_is_the_marginal_one(small):
    """With tol 0 EM runs every iteration: the observed-data log-likelihood of the network after k
    iterations, computed independently by variable elimination (marginal_log_density), rises with k."""
    dag = DAG(NODES, ARCS)
    lls = []
    for k in range(1, 9):
        model = em_hybrid(dag, small, max_iter=k, tol=0)
        ll = float(marginal_log_density(model, small).sum())
        assert model.fit_info["observed_loglik"] == pytest.approx(ll, rel=1e-10)
        lls.append(ll)
    assert all(b >= a - 1e-8 for a, b in zip(lls, lls[1:]))
    assert lls[-1] > lls[0]


def test_the_default_tolerance_gives_the_tight_answer_to_a_stated_precision(small):
    """EM at EM_TOL (1e-6 relative) against EM at 1e-13: log-likelihoods within 1e-6 relative, the filled
    numbers within 1 % of their column's standard deviation, the filled categories the same (measured when
    written: 5 against 14 iterations, 1.1e-7, 0.15 %, identical)."""
    dag = DAG(NODES, ARCS)
    loose = em_hybrid(dag, small)
    tight = em_hybrid(dag, small, tol=1e-13, max_iter=2000)
    assert loose.fit_info["em_converged"] and tight.fit_info["em_converged"]
    assert loose.fit_info["em_iterations"] < tight.fit_info["em_iterations"]
    a, b = loose.fit_info["observed_loglik"], tight.fit_info["observed_loglik"]
    assert a <= b + 1e-8 and abs(a - b) <= 1e-6 * abs(b)
    fa, fb = hybrid_imputation(loose, small).data, hybrid_imputation(tight, small).data
    miss = small.missing_mask()
    for i in [i for i in small.numeric if miss[:, i].any()]:
        sd = np.nanstd(small.values[:, i])
        assert np.max(np.abs(fa.values[miss[:, i], i] - fb.values[miss[:, i], i])) < 0.01 * sd
    same = [
        np.mean(fa.codes[miss[:, i], i] == fb.codes[miss[:, i], i])
        for i in small.discrete
        if miss[:, i].any()
    ]
    assert min(same) == 1.0
    assert EM_TOL == 1e-6


def test_a_warm_start_reaches_the_same_maximum(small):
    """EM started from another DAG's network (structural EM's warm start) ends at the cold start's
    log-likelihood (to 1e-5 relative)."""
    dag = DAG(NODES, ARCS)
    other = em_hybrid(DAG(NODES, []), small)
    warm = em_hybrid(dag, small, init=other, tol=1e-10, max_iter=2000)
    cold = em_hybrid(dag, small, tol=1e-10, max_iter=2000)
    a, b = warm.fit_info["observed_loglik"], cold.fit_info["observed_loglik"]
    assert abs(a - b) <= 1e-5 * abs(b)


def test_completion_weights_equal_brute_force_and_a_wide_beam_is_exact(small):
    """Each row's completion weights against P(d) N(x_O; mu_O(d), S_OO(d)) computed from scratch with the
    network's factors, normalised over the row's completions; a beam at least as wide as every row's
    completions gives the same table."""
    from scipy import stats as st

    from bnfk_core.hybrid.moments import numeric_joint

    net = true_net()
    sub = small.subset(np.arange(40))
    comp = completion_table(net, sub)
    wide = completion_table(net, sub, width=64)
    np.testing.assert_allclose(wide.weights, comp.weights, atol=1e-14)
    assert wide.beamed == 0
    miss = sub.missing_mask()
    num = list(net.numeric)
    for r in range(sub.n_rows):
        mis_d = [i for i in net.discrete if miss[r, i]]
        want = []
        for d in itertools.product(*[range(len(net.states[i])) for i in mis_d]):
            codes = sub.codes[r].astype(int).copy()
            codes[mis_d] = d
            lp = sum(
                math.log(net.cpts[i][int(net.config(i, codes[None, :])[0]), codes[i]]) for i in net.discrete
            )
            mu, cov = numeric_joint(net, {net.variables[i]: int(codes[i]) for i in net.discrete})
            O = [k for k, v in enumerate(num) if not miss[r, v]]
            x = sub.values[r, [num[k] for k in O]]
            lp += st.multivariate_normal(mu[O], cov[np.ix_(O, O)]).logpdf(x) if O else 0.0
            want.append(lp)
        want = np.exp(np.array(want) - np.logaddexp.reduce(want))
        got = comp.weights[comp.rows == r]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_a_narrow_beam_keeps_the_most_probable_completions_of_a_row():
    """A row with all three discrete cells blank (12 completions) under width 3: three completions kept,
    and they are the three of largest P(A) P(B | A) P(C | B) (the beam's greedy choice finds them here:
    the brute-force ranking is checked), their weights normalised over the three."""
    net = true_net()
    codes = np.full((1, 6), -1, dtype=np.int32)
    values = np.array([[np.nan, np.nan, np.nan, 0.3, np.nan, np.nan]])
    row = MixedData(net.variables, net.kinds, net.states, codes, values, "row")
    comp = completion_table(net, row, width=3)
    assert comp.beamed == 1 and len(comp.rows) == 3
    prior = {}
    for d in itertools.product(range(2), range(3), range(2)):
        prior[d] = net.cpts[0][0, d[0]] * net.cpts[1][d[0], d[1]] * net.cpts[2][d[1], d[2]]
    top = sorted(prior, key=prior.get, reverse=True)[:3]
    assert {tuple(int(c) for c in cc[:3]) for cc in comp.codes} == set(top)
    assert comp.weights.sum() == pytest.approx(1.0)


def test_the_bundled_six_node_network_is_the_tests_network():
    """The example network of the core (the mixed benchmarks sample it) is this file's ``true_net``."""
    from bnfk_core.hybrid import six_node_clg

    a, b = six_node_clg(), true_net()
    assert a.dag == b.dag and a.kinds == b.kinds and a.states == b.states
    for x, y in zip(a.cpts, b.cpts):
        assert (x is None and y is None) or np.array_equal(x, y)
    for x, y in zip(a.gaussians, b.gaussians):
        assert (x is None and y is None) or (
            np.array_equal(x.coef, y.coef) and np.array_equal(x.variance, y.variance)
        )
