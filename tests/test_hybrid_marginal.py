"""The marginal density of a numeric node of a CLG network (bnfk_core.hybrid.marginal) against its closed
form and against a large forward sample."""

import numpy as np
import pytest

from bnfk_core.errors import ModelError
from bnfk_core.hybrid import HybridNet, LinearGaussian, numeric_marginal
from bnfk_core.hybrid import marginal as marginal_module
from bnfk_core.network.dag import DAG


def _net() -> HybridNet:
    """A -> X -> Y <- C, A -> C, D alone (D does not reach Y)."""
    dag = DAG(["A", "C", "D", "X", "Y"], [("A", "X"), ("A", "C"), ("X", "Y"), ("C", "Y")])
    return HybridNet(
        dag,
        ("discrete", "discrete", "discrete", "numeric", "numeric"),
        (("a0", "a1"), ("c0", "c1", "c2"), ("d0", "d1"), (), ()),
        (
            np.array([[0.3, 0.7]]),
            np.array([[0.6, 0.3, 0.1], [0.1, 0.2, 0.7]]),
            np.array([[0.5, 0.5]]),
            None,
            None,
        ),
        (
            None,
            None,
            None,
            LinearGaussian(np.array([[-1.0], [2.0]]), np.array([0.5, 1.5])),
            LinearGaussian(np.array([[0.0, 1.0], [1.0, -0.5], [3.0, 2.0]]), np.array([0.2, 0.4, 0.3])),
        ),
    )


def _normal(x, mean, var):
    return np.exp(-0.5 * (x - mean) ** 2 / var) / np.sqrt(2 * np.pi * var)


def _closed_form_y(x):
    """p(y) = sum_{a, c} P(a) P(c | a) N(y; b0_c + w_c mu_a, s_c^2 + w_c^2 s_a^2), written out."""
    pa = [0.3, 0.7]
    pc = [[0.6, 0.3, 0.1], [0.1, 0.2, 0.7]]
    mu, sa = [-1.0, 2.0], [0.5, 1.5]
    b0, w, sc = [0.0, 1.0, 3.0], [1.0, -0.5, 2.0], [0.2, 0.4, 0.3]
    out = np.zeros_like(x)
    for a in range(2):
        for c in range(3):
            out += pa[a] * pc[a][c] * _normal(x, b0[c] + w[c] * mu[a], sc[c] + w[c] ** 2 * sa[a])
    return out


def test_the_marginal_of_a_numeric_node_is_its_closed_form_mixture():
    m = _net()
    grid = np.linspace(-8, 12, 401)
    mix = numeric_marginal(m, "Y")
    assert mix.exact and mix.over == ("A", "C") and len(mix.weights) == 6
    np.testing.assert_allclose(mix.density(grid), _closed_form_y(grid), rtol=1e-12, atol=1e-15)
    x = numeric_marginal(m, "X")  # no numeric parent: its own regressions weighted by P(A)
    assert x.over == ("A",)
    np.testing.assert_allclose(x.density(grid), 0.3 * _normal(grid, -1, 0.5) + 0.7 * _normal(grid, 2, 1.5))


def test_the_sampled_weights_approach_the_exact_ones(monkeypatch):
    m = _net()
    monkeypatch.setattr(marginal_module, "MAX_EXACT_STATES", 1)  # forces the forward sample
    mix = numeric_marginal(m, "Y", seed=5, n_sample=200_000)
    assert not mix.exact
    grid = np.linspace(-8, 12, 201)
    np.testing.assert_allclose(mix.density(grid), _closed_form_y(grid), atol=4e-3)
    # the same seed gives the same estimate
    again = numeric_marginal(m, "Y", seed=5, n_sample=200_000)
    np.testing.assert_array_equal(again.weights, mix.weights)


def test_a_discrete_node_has_no_numeric_marginal():
    with pytest.raises(ModelError, match="'A' is not a numeric node"):
        numeric_marginal(_net(), "A")
