"""The metagraph kernel: Krawtchouk form vs the hypercube Laplacian, the surrogate vs its primal, Walsh
energy."""

import math

import numpy as np
import pytest

from bnfk_core.data.table import load_csv
from bnfk_core.learning.landscape import score_landscape
from bnfk_core.learning.metagraph import (
    DEFAULT_C,
    MetagraphError,
    fit_surrogate,
    hamming,
    kernel_by_distance,
    krawtchouk,
    observed_split,
    paper_regulariser,
    parse_orders,
    rmse,
    walsh_energy,
    walsh_transform,
)
from bnfk_core.reproduce.landscape import random_ordered_network


def cube(d):
    return ((np.arange(1 << d)[:, None] >> np.arange(d)) & 1).astype(np.uint8)


@pytest.mark.parametrize("d", [4, 6])
def test_krawtchouk_form_equals_laplacian_eigendecomposition(d):
    """K₁ = Σ_{0 < λ ≤ 2r/d} λ^(-2) v vᵀ of the normalised hypercube Laplacian I − A/d, to 1e-12."""
    B = cube(d)
    H = hamming(B, B)
    L = np.eye(1 << d) - (H == 1) / d
    w, V = np.linalg.eigh(L)
    for r in range(1, d + 1):
        sel = (w > 1e-9) & (w < 2 * r / d + 1e-9)
        brute = (V[:, sel] * w[sel] ** -2.0) @ V[:, sel].T
        ours = kernel_by_distance(d, r, 2, normalise=False)[H]
        np.testing.assert_allclose(ours, brute, atol=1e-12, rtol=0)
        assert ours[0, 0] * (1 + 1e-9) >= np.abs(ours).max()
        # our c on the unit-diagonal kernel is the paper's c · K₁(0)
        assert paper_regulariser(1.0, d, r) == pytest.approx(ours[0, 0], rel=1e-12)


def test_normalised_krawtchouk_equals_the_sum():
    d = 12
    for h in range(d + 1):
        for s, val in enumerate(krawtchouk(d, 6, h)[:, 0]):
            direct = sum((-1) ** j * math.comb(h, j) * math.comb(d - h, s - j) for j in range(s + 1))
            assert val == pytest.approx(direct / math.comb(d, s), abs=1e-12)
    # large d stays finite (ALARM: 37 * 36 arc bits, orders up to 20)
    t = kernel_by_distance(37 * 36, 20)
    assert np.all(np.isfinite(t)) and t[0] == pytest.approx(1.0)


def test_walsh_transform_equals_hadamard_product():
    d = 5
    f = np.random.default_rng(0).normal(size=1 << d)
    B = cube(d).astype(int)
    H = (-1.0) ** (B @ B.T)
    np.testing.assert_allclose(walsh_transform(f), H @ f / (1 << d), atol=1e-12)
    e = walsh_energy(f)
    assert e.sum() == pytest.approx(np.mean(f**2))  # Parseval


def _primal_predict(bits_obs, y, bits_new, r, c, m=2):
    """The same fit solved in the Walsh basis: f = β0 + Σ_{1≤|l|≤r} β_l χ_l, penalty c Σ β_l² / v_l."""
    d = bits_obs.shape[1]
    ls = [l for l in range(1, 1 << d) if bin(l).count("1") <= r]
    deg = np.array([bin(l).count("1") for l in ls])
    norm = sum((d / (2 * s)) ** m * math.comb(d, s) for s in range(1, r + 1))
    v = (d / (2.0 * deg)) ** m / norm
    L = (np.array(ls)[:, None] >> np.arange(d)) & 1

    def chi(b):
        return (-1.0) ** (b.astype(int) @ L.T)

    n = len(y)
    X = np.hstack([np.ones((n, 1)), chi(bits_obs)])
    # (1/n)||y - Xβ||² + c Σ β_l²/v_l  <=>  least squares with rows sqrt(n c / v_l) for l ≥ 1
    P = np.hstack([np.zeros((len(ls), 1)), np.diag(np.sqrt(n * c / v))])
    beta = np.linalg.lstsq(np.vstack([X, P]), np.concatenate([y, np.zeros(len(ls))]), rcond=None)[0]
    return np.hstack([np.ones((bits_new.shape[0], 1)), chi(bits_new)]) @ beta


@pytest.mark.parametrize("r", [1, 2, 3])
def test_surrogate_equals_its_primal_solution(r):
    d = 6
    B = cube(d)
    y = np.random.default_rng(r).normal(size=1 << d) * 10
    obs, _ = observed_split(1 << d, 20, seed=r)
    for c in (1e-2, 1e-4):
        s = fit_surrogate(B[obs], y[obs], r, c)
        np.testing.assert_allclose(s.predict(B), _primal_predict(B[obs], y[obs], B, r, c), atol=1e-6)


@pytest.fixture(scope="module")
def four_node():
    """The paper's §4.1 set-up: a random four-node network, 1,000 samples, BDe, the 64 fixed-order graphs."""
    data = random_ordered_network(0).sample(1000, seed=0)
    land = score_landscape(data, data.variables, "bdeu")
    idx, bits = land.fixed_order()
    return bits, land.values[idx]


def _degree3_rank(bits):
    d = bits.shape[1]
    ls = [l for l in range(1 << d) if bin(l).count("1") <= 3]
    L = (np.array(ls)[:, None] >> np.arange(d)) & 1
    return np.linalg.matrix_rank((-1.0) ** (bits.astype(int) @ L.T)), len(ls)


def test_score_is_a_polynomial_of_degree_at_most_the_in_degree(four_node, sample_path):
    _, y = four_node
    e = walsh_energy(y)
    assert e[4:].sum() < 1e-20 * e[1:].sum()
    land = score_landscape(
        load_csv(sample_path("zoo")), ["hair", "milk", "eggs", "toothed", "backbone"], "qnml"
    )
    idx, _ = land.fixed_order()
    e5 = walsh_energy(land.values[idx])  # d = 10, in-degree ≤ 4
    assert e5[5:].sum() < 1e-20 * e5[1:].sum() and e5[4] > 0


def test_order_three_fit_reproduces_every_score(four_node):
    """From 42 observed graphs that determine the 42 coefficients of degree ≤ 3 (a full-rank Walsh design;
    about half of the random 42-sets), the order-3 fit is exact to 0.05 at the default c; a rank-deficient set
    cannot determine the polynomial, so no fit can be exact there."""
    bits, y = four_node
    full = [s for s in range(30) if _degree3_rank(bits[observed_split(64, 42, s)[0]]) == (42, 42)]
    assert len(full) >= 8
    for seed in full:
        obs, rest = observed_split(64, 42, seed)
        assert rmse(fit_surrogate(bits[obs], y[obs], 3).predict(bits[rest]), y[rest]) <= 0.05, seed
    obs, rest = observed_split(64, 45, 0)
    errs = [
        rmse(fit_surrogate(bits[obs], y[obs], 3, c).predict(bits[rest]), y[rest]) for c in (1e-4, 1e-6, 1e-8)
    ]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3
    assert DEFAULT_C <= 1e-8


def test_order_one_is_best_with_few_observations(four_node):
    bits, y = four_node
    mean = {
        r: np.mean(
            [
                rmse(fit_surrogate(bits[o], y[o], r).predict(bits[u]), y[u])
                for o, u in (observed_split(64, 8, s) for s in range(20))
            ]
        )
        for r in (1, 2, 3)
    }
    assert mean[1] < mean[2] and mean[1] < mean[3]


def test_bad_requests():
    with pytest.raises(MetagraphError, match="order"):
        kernel_by_distance(6, 7)
    with pytest.raises(MetagraphError, match="positive"):
        fit_surrogate(cube(3), np.zeros(8), 1, c=0)
    with pytest.raises(MetagraphError, match="observed"):
        observed_split(10, 11)
    assert parse_orders("1-3,5", 4) == [1, 2, 3, 4]
    with pytest.raises(MetagraphError, match="range"):
        parse_orders("a-b", 4)
