"""The Fisher kernel of a hybrid (CLG) network, every number against an independent computation: scores by
finite differences of log p(x), the Fisher information by exact Gauss-Hermite quadrature over the model, the
discrete kernel of bnfk_core.kernels, brute-force integration over the missing cells, and the features'
sample moments."""

import itertools

import numpy as np
import pytest
from scipy.special import softmax
from test_hybrid import true_net

from bnfk_core.errors import KernelError, ModelError
from bnfk_core.hybrid import (
    HybridNet,
    LinearGaussian,
    hybrid_feature_offsets,
    hybrid_fisher_features,
    hybrid_fisher_gram,
    mixed_from_arrays,
)
from bnfk_core.hybrid.table import MixedData
from bnfk_core.kernels.features import features as discrete_features
from bnfk_core.kernels.fisher import gram as discrete_gram
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import BayesNet

# ---------------------------------------------------------------------- a small network and its parameters
SMALL_NODES = ["A", "B", "X", "Y"]
SMALL_ARCS = [("A", "B"), ("A", "X"), ("X", "Y"), ("B", "Y")]
SMALL_KINDS = ("discrete", "discrete", "numeric", "numeric")
SMALL_STATES = (("a0", "a1"), ("b0", "b1", "b2"), (), ())


def small_params() -> dict:
    """The free parameters of the small network: CPT rows as softmax logits (first fixed at 0), the
    regressions' coefficients and variances as they are."""
    return {
        "A": np.array([[0.0, 0.4]]),
        "B": np.array([[0.0, -0.5, 0.3], [0.0, 0.8, 1.1]]),
        "X": (np.array([[-1.0], [1.5]]), np.array([0.8, 0.5])),
        "Y": (np.array([[0.5, 1.2], [-1.0, -0.7], [2.0, 0.3]]), np.array([0.6, 0.9, 0.4])),
    }


def small_net(p=None) -> HybridNet:
    p = small_params() if p is None else p
    cpts = (softmax(p["A"], axis=1), softmax(p["B"], axis=1), None, None)
    gs = (None, None, LinearGaussian(*p["X"]), LinearGaussian(*p["Y"]))
    return HybridNet(DAG(SMALL_NODES, SMALL_ARCS), SMALL_KINDS, SMALL_STATES, cpts, gs)


def flat_params(p) -> np.ndarray:
    """The free parameters as one vector (logits without their fixed first entry)."""
    out = []
    for v in SMALL_NODES:
        if isinstance(p[v], tuple):
            out += [p[v][0].ravel(), p[v][1]]
        else:
            out.append(p[v][:, 1:].ravel())
    return np.concatenate(out)


def unflat(vec) -> dict:
    p, at = {}, 0
    for v, ref in small_params().items():
        if isinstance(ref, tuple):
            c = vec[at : at + ref[0].size].reshape(ref[0].shape)
            at += ref[0].size
            s = vec[at : at + ref[1].size]
            at += ref[1].size
            p[v] = (c, s)
        else:
            k = ref[:, 1:].size
            p[v] = np.column_stack([np.zeros(ref.shape[0]), vec[at : at + k].reshape(ref.shape[0], -1)])
            at += k
    return p


def fd_scores(data: MixedData, h: float = 1e-5) -> np.ndarray:
    """d log p(x) / d theta of every complete row by central finite differences of HybridNet.log_density."""
    theta = flat_params(small_params())
    S = np.empty((data.n_rows, theta.size))
    for k in range(theta.size):
        up, dn = theta.copy(), theta.copy()
        up[k] += h
        dn[k] -= h
        S[:, k] = (small_net(unflat(up)).log_density(data) - small_net(unflat(dn)).log_density(data)) / (
            2 * h
        )
    return S


def quadrature(model: HybridNet, n_points: int = 6):
    """Rows and weights that integrate exactly every polynomial of degree < 2 n_points in the numbers under
    the model: every discrete state with its probability, and the Gaussian nodes in topological order by
    Gauss-Hermite nodes of their regression given the parents already placed (no joint moments used)."""
    t, w = np.polynomial.hermite_e.hermegauss(n_points)
    w = w / w.sum()
    disc, num = list(model.discrete), [i for i in model.dag.topological_order() if i in model.numeric]
    rows_c, rows_v, weights = [], [], []
    for st in itertools.product(*[range(len(model.states[i])) for i in disc]):
        codes = np.full((1, model.n_vars), -1, np.int32)
        codes[0, disc] = st
        pd = np.prod([model.cpts[i][model.config(i, codes)[0], codes[0, i]] for i in disc])
        for nodes in itertools.product(range(n_points), repeat=len(num)):
            vals = np.full((1, model.n_vars), np.nan)
            for i, q in zip(num, nodes):
                sd = np.sqrt(model.gaussians[i].variance[model.config(i, codes)[0]])
                vals[0, i] = model.node_mean(i, codes, vals)[0] + sd * t[q]
            rows_c.append(codes[0].copy())
            rows_v.append(vals[0].copy())
            weights.append(pd * np.prod(w[list(nodes)]))
    data = MixedData(model.variables, model.kinds, model.states, np.array(rows_c), np.array(rows_v), "quad")
    return data, np.array(weights)


@pytest.fixture(scope="module")
def quad():
    return quadrature(small_net())


# ---------------------------------------------------------------------- the kernel is s^T I^-1 s
def test_kernel_equals_score_inverse_information_score(quad):
    """K(x, y) = s(x)^T I^-1 s(y), s by finite differences of log p(x) in a minimal parameterisation (softmax
    logits, coefficients, variances) and I = E[s s^T] by exact quadrature: the features' whitening is the
    inverse of the true Fisher information, whatever the parameterisation."""
    data, w = quad
    S = fd_scores(data)
    info = (S * w[:, None]).T @ S
    rows = np.random.default_rng(0).choice(data.n_rows, 40, replace=False)
    sub = MixedData(data.variables, data.kinds, data.states, data.codes[rows], data.values[rows])
    ref = S[rows] @ np.linalg.solve(info, S[rows].T)
    K = hybrid_fisher_gram(small_net(), sub)
    assert np.abs(K - ref).max() < 1e-6 * np.abs(ref).max()
    fresh = small_net().sample(30, seed=3)
    Sf = fd_scores(fresh)
    ref2 = Sf @ np.linalg.solve(info, S[rows].T)
    assert np.allclose(hybrid_fisher_gram(small_net(), fresh, sub), ref2, atol=1e-6 * np.abs(ref2).max())


def test_numeric_features_are_whitened_scores(quad):
    """A numeric block's features are the finite-difference scores of its parameters times an inverse square
    root of their information block: phi_block phi_block^T = s I_block^-1 s^T."""
    data, w = quad
    S = fd_scores(data)
    off = hybrid_feature_offsets(small_net())
    Phi = hybrid_fisher_features(small_net(), data)
    sizes = [1, 2 * 2, 2 * 1 + 2, 3 * 2 + 3]  # free parameters per node in fd_scores' order (coef, variance)
    at = np.concatenate([[0], np.cumsum(sizes)])
    for i in (2, 3):
        s = S[:, at[i] : at[i + 1]]
        I_i = (s * w[:, None]).T @ s
        F = Phi[:, off[i] : off[i + 1]]
        ref = s @ np.linalg.solve(I_i, s.T)
        assert np.abs(F @ F.T - ref).max() < 1e-7 * np.abs(ref).max()


def test_features_exact_moments(quad):
    """Under the model, E[phi] = 0 and E[phi phi^T] is a projection (idempotent) of rank the number of free
    parameters, by exact quadrature."""
    data, w = quad
    Phi = hybrid_fisher_features(small_net(), data)
    assert np.abs(w @ Phi).max() < 1e-10
    C = (Phi * w[:, None]).T @ Phi
    assert np.abs(C @ C - C).max() < 1e-9
    assert np.isclose(np.trace(C), small_net().parameter_count(), atol=1e-9)


def test_features_sample_moments():
    """On 40,000 samples of the 3 + 3 test network: each feature's mean and each entry of the covariance lie
    within 5 of their standard errors (estimated from the same sample) of 0 and of the exact projection
    (identity on each Gaussian block, I - sqrt(theta_j) sqrt(theta_j)^T on each CPT row)."""
    model = true_net()
    Phi = hybrid_fisher_features(model, model.sample(40_000, seed=11))
    n = Phi.shape[0]
    se_mean = Phi.std(axis=0) / np.sqrt(n)
    assert (np.abs(Phi.mean(axis=0)) <= 5 * se_mean + 1e-12).all()
    off = hybrid_feature_offsets(model)
    proj = np.zeros((off[-1], off[-1]))
    for i in range(model.n_vars):
        if model.kinds[i] == "discrete":
            r = len(model.states[i])
            for j, th in enumerate(model.cpts[i]):
                a = off[i] + j * r
                s = np.sqrt(th)
                proj[a : a + r, a : a + r] = np.eye(r) - np.outer(s, s)
        else:
            proj[off[i] : off[i + 1], off[i] : off[i + 1]] = np.eye(off[i + 1] - off[i])
    C = Phi.T @ Phi / n
    sq = Phi * Phi
    se = np.sqrt(np.maximum(sq.T @ sq / n - C * C, 0.0) / n)  # sd of phi_a phi_b over sqrt(n)
    assert (np.abs(C - proj) <= 5 * se + 1e-12).all()
    assert np.abs(proj @ proj - proj).max() < 1e-12
    assert np.isclose(np.trace(proj), model.parameter_count())


# ---------------------------------------------------------------------- all-discrete: Theorem 1's kernel
def _all_discrete():
    dag = DAG(["A", "B", "C", "D"], [("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    rng = np.random.default_rng(5)
    cards = [2, 3, 2, 3]
    parents = [[], [0], [0], [1, 2]]
    cpts = tuple(
        rng.dirichlet(np.ones(cards[i]), size=int(np.prod([cards[p] for p in parents[i]]) or 1))
        for i in range(4)
    )
    states = tuple(tuple(f"s{k}" for k in range(c)) for c in cards)
    bn = BayesNet(dag, states, cpts)
    hy = HybridNet(dag, ("discrete",) * 4, states, cpts, (None,) * 4)
    return bn, hy


def test_all_discrete_equals_discrete_kernel():
    bn, hy = _all_discrete()
    codes = np.asarray(bn.sample(300, seed=2).codes, dtype=np.int32)
    rng = np.random.default_rng(1)
    codes[rng.random(codes.shape) < 0.2] = -1
    codes[7] = -1  # a row without an observed cell
    data = MixedData(hy.variables, hy.kinds, hy.states, codes, np.full(codes.shape, np.nan))
    Phi = hybrid_fisher_features(hy, data)
    assert np.abs(Phi - discrete_features(bn, codes).toarray()).max() < 1e-9
    other = data.codes[:50]
    od = MixedData(hy.variables, hy.kinds, hy.states, other, np.full(other.shape, np.nan))
    for norm in (False, True):
        assert (
            np.abs(
                hybrid_fisher_gram(hy, data, normalize=norm) - discrete_gram(bn, codes, normalize=norm)
            ).max()
            < 1e-9
        )
        assert (
            np.abs(
                hybrid_fisher_gram(hy, data, od, normalize=norm)
                - discrete_gram(bn, codes, other, normalize=norm)
            ).max()
            < 1e-9
        )
    assert (hybrid_fisher_gram(hy, data, normalize=True)[7] == 0).all()


# ---------------------------------------------------------------------- missing cells
def _brute_expected_features(model, codes_row, values_row, grid=np.linspace(-15, 15, 301)):
    """E[phi(x) | x_observed] by brute force: every completion of the missing discrete cells, every missing
    number on a grid of step 0.1 (trapezoid rule, spectrally accurate for these Gaussians times polynomials of
    sd at least 0.63), each complete row weighted by its density p(x) from HybridNet.log_density and
    normalised by their sum."""
    miss_d = [i for i in model.discrete if codes_row[i] < 0]
    miss_n = [i for i in model.numeric if np.isnan(values_row[i])]
    tw = np.full(grid.size, grid[1] - grid[0])
    tw[[0, -1]] *= 0.5  # trapezoid weights
    pts = [g.ravel() for g in np.meshgrid(*([grid] * len(miss_n)), indexing="ij")]
    gw = np.prod(np.meshgrid(*([tw] * len(miss_n)), indexing="ij"), axis=0).ravel() if miss_n else np.ones(1)
    rows_c, rows_v, wts = [], [], []
    for st in itertools.product(*[range(len(model.states[i])) for i in miss_d]):
        c = np.tile(codes_row, (gw.size, 1))
        c[:, miss_d] = st
        v = np.tile(values_row, (gw.size, 1))
        for i, x in zip(miss_n, pts):
            v[:, i] = x
        rows_c.append(c)
        rows_v.append(v)
        wts.append(gw)
    full = MixedData(
        model.variables, model.kinds, model.states, np.concatenate(rows_c), np.concatenate(rows_v)
    )
    p = np.exp(model.log_density(full)) * np.concatenate(wts)
    return (p / p.sum()) @ hybrid_fisher_features(model, full)


@pytest.mark.parametrize(
    "missing",
    [
        ("A",),
        ("B",),
        ("Y",),
        ("X",),
        ("A", "X"),
        ("B", "Y"),
        ("A", "B", "Y"),
        ("X", "Y"),
        ("A", "B", "X", "Y"),
    ],
)
def test_missing_cells_brute_force(missing):
    """The marginalised features of a row with missing cells equal the brute-force expectation over
    completions (discrete) and a fine grid (numeric), weighted by the model's density."""
    model = small_net()
    base = model.sample(5, seed=4)
    codes, values = base.codes.copy(), base.values.copy()
    for v in missing:
        i = model.variables.index(v)
        codes[:, i] = -1
        values[:, i] = np.nan
    data = MixedData(model.variables, model.kinds, model.states, codes, values)
    Phi = hybrid_fisher_features(model, data)
    for r in range(2):
        ref = _brute_expected_features(model, codes[r].copy(), values[r].copy())
        assert np.abs(Phi[r] - ref).max() < 1e-8


def test_missing_cells_fisher_identity(quad):
    """E[s(x) | x_observed] is the gradient of log p(x_observed) (Fisher's identity): the marginalised
    kernel against complete rows equals grad log p(x_obs)^T I^-1 s(y), the gradient by finite differences of
    marginal_log_density (the posterior module's variable elimination)."""
    from bnfk_core.hybrid import marginal_log_density

    data, w = quad
    S = fd_scores(data)
    info = (S * w[:, None]).T @ S
    model = small_net()
    obs = model.sample(6, seed=9)
    codes, values = obs.codes.copy(), obs.values.copy()
    codes[0, 0] = -1
    values[1, 2] = np.nan
    codes[2, 1], values[2, 3] = -1, np.nan
    codes[3, 0], values[3, 2] = -1, np.nan
    values[4, 2:] = np.nan
    codes[5, :2] = -1
    part = MixedData(model.variables, model.kinds, model.states, codes, values)
    theta, h = flat_params(small_params()), 1e-5
    G = np.empty((part.n_rows, theta.size))
    for k in range(theta.size):
        up, dn = theta.copy(), theta.copy()
        up[k] += h
        dn[k] -= h
        G[:, k] = (
            marginal_log_density(small_net(unflat(up)), part)
            - marginal_log_density(small_net(unflat(dn)), part)
        ) / (2 * h)
    rows = np.arange(0, data.n_rows, 7)
    sub = MixedData(data.variables, data.kinds, data.states, data.codes[rows], data.values[rows])
    ref = G @ np.linalg.solve(info, S[rows].T)
    assert np.abs(hybrid_fisher_gram(model, part, sub) - ref).max() < 1e-6 * np.abs(ref).max()


def test_empty_row_and_normalisation():
    model = small_net()
    data = model.sample(20, seed=1)
    codes, values = data.codes.copy(), data.values.copy()
    codes[3], values[3] = -1, np.nan
    d = MixedData(model.variables, model.kinds, model.states, codes, values)
    Phi = hybrid_fisher_features(model, d)
    assert np.abs(Phi[3]).max() < 1e-12
    K = hybrid_fisher_gram(model, d)
    Kn = hybrid_fisher_gram(model, d, normalize=True)
    keep = np.arange(20) != 3
    ref = K / np.sqrt(np.outer(np.diag(K), np.diag(K)))
    assert np.allclose(Kn[np.ix_(keep, keep)], ref[np.ix_(keep, keep)], atol=1e-12)
    assert (Kn[3] == 0).all() and (Kn[:, 3] == 0).all()


def test_zero_probability_and_too_many_completions():
    p = small_params()
    model = small_net(p)
    cpts = list(model.cpts)
    cpts[1] = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    zero = HybridNet(model.dag, model.kinds, model.states, tuple(cpts), model.gaussians)
    data = mixed_from_arrays(
        {"A": np.array([0]), "B": np.array([2]), "X": np.array([0.1]), "Y": np.array([0.3])},
        {"A": ["a0", "a1"], "B": ["b0", "b1", "b2"]},
    )
    with pytest.raises(KernelError, match="'B'"):
        hybrid_fisher_features(zero, data)
    import bnfk_core.hybrid.fisher as hf

    old = hf.MAX_COMPLETIONS
    try:
        hf.MAX_COMPLETIONS = 2
        data2 = mixed_from_arrays(
            {"A": np.array([-1]), "B": np.array([-1]), "X": np.array([0.1]), "Y": np.array([0.3])},
            {"A": ["a0", "a1"], "B": ["b0", "b1", "b2"]},
        )
        with pytest.raises(ModelError, match="completions"):
            hybrid_fisher_features(model, data2)
    finally:
        hf.MAX_COMPLETIONS = old
