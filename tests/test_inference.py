"""Exact inference checked against brute-force enumeration of the joint distribution.

The parent marginals P(pi_i = j) are the quantity Theorem 1 needs; an unpropagated
junction tree gets them wrong for A-structures and chains (house guide), so those
structures are included explicitly.
"""

import helpers_bruteforce as bf
import numpy as np
import pytest

from bnfk_core.data.table import from_codes
from bnfk_core.inference import elimination, junction
from bnfk_core.inference import queries as inference
from bnfk_core.network.dag import DAG

# name -> (nodes, arcs, cardinalities)
SUMMARIZATION_STRUCTURES = {
    "a-structure": (["u", "v", "w"], [("u", "v"), ("u", "w")], [3, 2, 4]),
    "chain": (["u", "v", "w"], [("w", "u"), ("u", "v")], [3, 4, 2]),
    "v-structure": (["u", "v", "w"], [("u", "w"), ("v", "w")], [2, 3, 3]),
    # parents listed after their child in node order: C-order ravel must follow node order
    "reverse-order": (["c", "b", "a", "d"], [("a", "b"), ("b", "c"), ("a", "c"), ("d", "c")], [2, 3, 2, 3]),
    "a-then-chain": (
        ["x0", "x1", "x2", "x3", "x4"],
        [("x0", "x1"), ("x0", "x2"), ("x2", "x3"), ("x1", "x4"), ("x3", "x4")],
        [2, 3, 2, 4, 3],
    ),
    "empty": (["p", "q", "r"], [], [2, 3, 4]),
}


def _models():
    out = []
    for name, (nodes, arcs, cards) in SUMMARIZATION_STRUCTURES.items():
        for seed in (0, 1):
            out.append(pytest.param(bf.random_model(DAG(nodes, arcs), cards, seed=seed), id=f"{name}-{seed}"))
    for seed in range(4):
        dag = bf.random_dag(4 + seed % 2, seed=100 + seed)
        cards = np.random.default_rng(seed).integers(2, 5, len(dag.nodes))
        out.append(pytest.param(bf.random_model(dag, cards, seed=seed), id=f"random-{seed}"))
    return out


MODELS = _models()


@pytest.mark.parametrize("model", MODELS)
def test_parent_marginals_match_enumeration(model):
    table = bf.joint_table(model)
    pm = inference.parent_marginals(model)
    for i in range(model.n_vars):
        want = bf.parent_marginal_vector(model, i, table)
        np.testing.assert_allclose(pm.probs[i], want, rtol=1e-10, atol=1e-13)
        assert pm.methods[i] in ("root", "exact")


def test_parent_marginals_a_structure_and_chain_not_uniform():
    """The classic junction-tree slip: for v in u -> v, P(u) must be the propagated marginal."""
    # chain w -> u -> v with a very skewed P(w): P(u) is far from uniform and from P(u|w=0)
    dag = DAG(["u", "v", "w"], [("w", "u"), ("u", "v")])
    cpt_w = np.array([[0.9, 0.1]])
    cpt_u = np.array([[0.8, 0.2], [0.1, 0.9]])  # rows: w = 0, 1
    cpt_v = np.array([[0.5, 0.5], [0.3, 0.7]])  # rows: u = 0, 1
    from bnfk_core.network.model import BayesNet

    model = BayesNet(dag, (("0", "1"),) * 3, (cpt_u, cpt_v, cpt_w))
    pm = inference.parent_marginals(model)
    # P(u=0) = 0.9*0.8 + 0.1*0.1 = 0.73 (hand computation)
    np.testing.assert_allclose(pm.probs[1], [0.73, 0.27], rtol=1e-12)
    np.testing.assert_allclose(pm.probs[0], [0.9, 0.1], rtol=1e-12)
    np.testing.assert_allclose(pm.probs[2], [1.0], rtol=1e-12)


@pytest.mark.parametrize("model", MODELS)
def test_marginal_matches_enumeration(model):
    D, P = bf.joint_table(model)
    n = model.n_vars
    rng = np.random.default_rng(7)
    for _ in range(4):
        k = int(rng.integers(1, min(n, 3) + 1))
        vars_ = [int(v) for v in rng.choice(n, size=k, replace=False)]  # any order
        got = inference.marginal(model, vars_)
        cards = [len(model.states[v]) for v in vars_]
        want = np.zeros(cards)
        for d, p in zip(D, P):
            want[tuple(d[vars_])] += p
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "joint_cells", [None, 0, 10**9], ids=["junction-tree", "per-variable", "joint-per-pattern"]
)
@pytest.mark.parametrize("model", MODELS)
def test_posterior_matches_enumeration(model, joint_cells, monkeypatch):
    """The batched junction tree and both per-pattern ways of getting a pattern's margins (its fallback: one
    contraction per missing variable, or the joint of all missing variables and its margins) against
    brute-force enumeration of the full joint."""
    if joint_cells is not None:
        monkeypatch.setattr(junction, "MAX_TREE_CELLS", 0)
        monkeypatch.setattr(elimination, "JOINT_POSTERIOR_CELLS", joint_cells)
    table = bf.joint_table(model)
    X = bf.random_rows(model, 25, seed=3, missing=0.35)
    X[0] = -1  # a fully missing row: posterior = prior marginal
    X[1] = bf.random_rows(model, 1, seed=4)[0]  # a complete row: no entry
    post = inference.posterior(model, X)
    seen = set()
    for v, (rows, probs) in post.items():
        assert list(rows) == sorted(rows)
        for row, p in zip(rows, probs):
            seen.add((int(row), v))
            x = X[row]
            ev = {u: int(x[u]) for u in range(model.n_vars) if x[u] >= 0}
            pe = bf.marginal_prob(model, ev, table)
            want = [bf.marginal_prob(model, {**ev, v: k}, table) / pe for k in range(len(model.states[v]))]
            np.testing.assert_allclose(p, want, rtol=1e-9, atol=1e-13)
    expected = {(int(r), int(v)) for r, v in zip(*np.nonzero(X < 0))}
    assert seen == expected


@pytest.mark.parametrize("model", MODELS)
def test_posterior_accepts_categorical_data(model):
    X = bf.random_rows(model, 10, seed=5, missing=0.3)
    data = from_codes(X, model.variables, model.states)
    a = inference.posterior(model, data)
    b = inference.posterior(model, X)
    assert a.keys() == b.keys()
    for v in a:
        np.testing.assert_array_equal(a[v][0], b[v][0])
        np.testing.assert_allclose(a[v][1], b[v][1], rtol=1e-12)


@pytest.mark.parametrize("model", MODELS)
def test_log_evidence_matches_enumeration(model):
    table = bf.joint_table(model)
    X = bf.random_rows(model, 30, seed=9, missing=0.3)
    X[0] = -1  # fully missing: log 1 = 0
    got = inference.log_evidence(model, X)
    want = [
        np.log(bf.marginal_prob(model, {u: int(x[u]) for u in range(model.n_vars) if x[u] >= 0}, table))
        for x in X
    ]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert abs(got[0]) < 1e-12


@pytest.mark.parametrize("model", MODELS[:6])
def test_log_likelihood_complete_and_missing(model):
    X = bf.random_rows(model, 12, seed=11, missing=0.2)
    data = from_codes(X, model.variables, model.states)
    table = bf.joint_table(model)
    want = [
        np.log(bf.marginal_prob(model, {u: int(x[u]) for u in range(model.n_vars) if x[u] >= 0}, table))
        for x in X
    ]
    np.testing.assert_allclose(inference.log_likelihood(model, data), want, rtol=1e-10, atol=1e-12)


def _zero_model():
    from bnfk_core.network.model import BayesNet

    dag = DAG(["a", "b"], [("a", "b")])
    return BayesNet(
        dag,
        (("0", "1"), ("0", "1", "2")),
        (np.array([[1.0, 0.0]]), np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])),
    )


def test_posterior_zero_probability_evidence_through_missing_variable_is_an_error():
    from bnfk_core.errors import ModelError

    # a missing, b = 2 forces a = 1, which has probability zero
    with pytest.raises(ModelError, match="probability zero"):
        inference.posterior(_zero_model(), np.array([[-1, 2]]))
    # fine evidence: b = 1 -> a = 0 with certainty
    post = inference.posterior(_zero_model(), np.array([[-1, 1]]))
    np.testing.assert_allclose(post[0][1], [[1.0, 0.0]])


def test_posterior_zero_probability_evidence_in_fully_observed_factor_is_an_error():
    """joint_posteriors documents a ModelError when P(x_observed) = 0.

    Here P(a = 1) = 0 and b is missing: P(b | a = 1) is undefined (0/0), and
    log_evidence correctly says -inf, but the zero sits in a factor whose axes are all
    observed, which only enters the log scale, so the normalised posterior comes out as
    the CPT row P(b | a = 1) = (0.2, 0.3, 0.5) instead of an error.
    """
    from bnfk_core.errors import ModelError

    model = _zero_model()
    assert inference.log_evidence(model, np.array([[1, -1]]))[0] == -np.inf
    with pytest.raises(ModelError, match="probability zero"):
        inference.posterior(model, np.array([[1, -1]]))


def test_parent_marginals_sampling_fallback_is_close_and_flagged():
    model = bf.random_model(DAG(["u", "v", "w"], [("w", "u"), ("u", "v")]), [3, 4, 2], seed=3)
    pm = inference.parent_marginals(model, max_intermediate=0, n_samples=40_000, seed=1)
    assert pm.method == "sampling"
    table = bf.joint_table(model)
    for i in range(model.n_vars):
        if model.parents[i]:
            assert pm.methods[i] == "sampling"
            np.testing.assert_allclose(pm.probs[i], bf.parent_marginal_vector(model, i, table), atol=0.015)
            assert pm.probs[i].sum() == pytest.approx(1.0)
    # the exact result is not affected by the sampled one (different cache key)
    exact = inference.parent_marginals(model)
    np.testing.assert_allclose(exact.probs[0], bf.parent_marginal_vector(model, 0, table), rtol=1e-10)
