"""The numpy latent class EM (bnfk_core.lca.em_numpy) against the compiled engine (bnfk_core.lca.em) and
against the model's own log-likelihood; the imputation's LCA uses it on small tables."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.lca import LcaError, em_numpy, fit_lca
from bnfk_core.lca.em import e_step as numba_e_step
from bnfk_core.lca.em import em_runs, prepare_rows
from bnfk_core.lca.model import initial_parameters


def _table(seed, n=150, cards=(2, 3, 4, 2, 3), missing=0.2, weights=False):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    codes = np.stack([(z + rng.integers(0, 2, n)) % r for r in cards], axis=1)
    codes[rng.random(codes.shape) < missing] = -1
    codes[0] = [max(c, 0) for c in codes[0]]  # every column observed somewhere
    w = rng.integers(1, 4, n).astype(float) if weights else np.ones(n)
    return codes, w, list(cards)


@pytest.mark.parametrize(
    "seed,k,weights,accelerate",
    [(0, 2, False, True), (1, 3, True, True), (2, 4, False, True), (3, 3, False, False), (4, 1, True, True)],
)
def test_numpy_engine_follows_the_compiled_engine(seed, k, weights, accelerate):
    """Same starts, same E-step counts, the same maximum (log-likelihood to 1e-8, parameters to 1e-6) per
    start."""
    codes, w, cards = _table(seed, weights=weights)
    theta0, w0 = initial_parameters(cards, k, 6, seed)
    a = em_runs(codes, w, cards, theta0, w0, accelerate=accelerate)
    b = em_numpy.em_runs(em_numpy.distinct_rows(codes, w, cards), theta0, w0, accelerate=accelerate)
    np.testing.assert_allclose(b["loglik"], a["loglik"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(b["theta"], a["theta"], atol=1e-6)
    np.testing.assert_allclose(b["w"], a["w"], atol=1e-6)
    assert np.array_equal(a["converged"], b["converged"])
    assert (
        np.abs(a["iterations"] - b["iterations"]).max() <= 2
        and (a["iterations"] == b["iterations"]).mean() >= 0.5
    )


def test_numpy_e_step_is_the_compiled_one_and_the_models_likelihood():
    codes, w, cards = _table(7, weights=True)
    theta0, w0 = initial_parameters(cards, 3, 1, 7)
    ll_a, counts_a, nk_a = numba_e_step(prepare_rows(codes, w, cards), theta0[0], w0[0])
    ll_b, counts_b, nk_b = em_numpy.e_step(em_numpy.distinct_rows(codes, w, cards), theta0[0], w0[0])
    assert ll_b == pytest.approx(ll_a, abs=1e-9)
    np.testing.assert_allclose(counts_b, counts_a, atol=1e-10)
    np.testing.assert_allclose(nk_b, nk_a, atol=1e-10)
    # by hand: sum_n w_n log sum_t w_t prod_{observed i} theta_i[x_ni, t]
    off = np.concatenate([[0], np.cumsum(cards)])
    L = np.tile(np.log(w0[0]), (len(codes), 1))
    for i in range(len(cards)):
        obs = codes[:, i] >= 0
        L[obs] += np.log(theta0[0][off[i] + codes[obs, i]])
    assert ll_b == pytest.approx(float(w @ logsumexp(L, axis=1)), abs=1e-9)


@pytest.mark.parametrize("name,k", [("house_votes_84", 5), ("zoo", 4), ("breast_cancer", 3)])
def test_fit_lca_engines_agree_on_bundled_data(sample_path, name, k):
    data = load_csv(sample_path(name), na_values="default-list")
    a = fit_lca(data, k, 5, 0, engine="numba")
    b = fit_lca(data, k, 5, 0, engine="numpy")
    c = fit_lca(data, k, 5, 0, engine="auto")
    assert b.loglik == pytest.approx(a.loglik, abs=1e-8) and c.loglik == b.loglik
    np.testing.assert_allclose(b.start_logliks, a.start_logliks, atol=1e-8)
    np.testing.assert_allclose(b.weights, a.weights, atol=1e-6)
    for p, q, x, y in zip(a.profiles, b.profiles, a.expected_counts, b.expected_counts):
        np.testing.assert_allclose(q, p, atol=1e-6)
        np.testing.assert_allclose(y, x, atol=1e-4)
    # the returned log-likelihood is the model's own (missing cells marginalised), computed row by row
    assert float(b.log_likelihood(data.codes).sum()) == pytest.approx(b.loglik, abs=1e-8)


def test_auto_is_the_default_and_picks_numba_beyond_the_small_tables(sample_path, monkeypatch):
    """``fit_lca``'s default engine is ``auto``: numpy's fit on a small table, the compiled engine's (the same
    floats) once distinct rows x one-hot columns pass SMALL_CELLS, without making the one-hot codes then."""
    from bnfk_core.lca import em_numpy

    data = load_csv(sample_path("zoo"), na_values="default-list")
    assert (
        fit_lca(data, 3, 4, 0).start_logliks.tolist()
        == fit_lca(data, 3, 4, 0, engine="numpy").start_logliks.tolist()
    )
    compiled = fit_lca(data, 3, 4, 0, engine="numba")
    monkeypatch.setattr(em_numpy, "SMALL_CELLS", 10)
    assert (
        em_numpy.distinct_rows(data.codes, np.ones(data.n_rows), [len(s) for s in data.states], True) is None
    )
    assert fit_lca(data, 3, 4, 0).start_logliks.tolist() == compiled.start_logliks.tolist()


def test_screened_starts_and_engine_choice():
    codes, w, cards = _table(9, n=300)
    data = from_codes(codes, [f"v{i}" for i in range(len(cards))], [tuple("abcd"[:r]) for r in cards])
    a = fit_lca(data, 3, 12, 1, screen=3, keep=4)
    b = fit_lca(data, 3, 12, 1, screen=3, keep=4, engine="numpy")
    assert b.loglik == pytest.approx(a.loglik, abs=1e-8) and b.runs_completed == a.runs_completed
    np.testing.assert_allclose(b.start_logliks, a.start_logliks, atol=1e-8)
    assert em_numpy.use_numpy(300, 14) and not em_numpy.use_numpy(10_000, 100)
    with pytest.raises(LcaError, match="engine"):
        fit_lca(data, 2, 2, 0, engine="jax")


def test_reductions_over_the_classes_are_numpys():
    """The E-step's class-by-class max and sum give numpy's own max / sum over the class axis bit for bit (K <
    8) and the same to rounding beyond."""
    rng = np.random.default_rng(5)
    for K in range(1, 12):
        A = np.exp(rng.normal(size=(3, 40, K)) * 20.0)
        np.testing.assert_array_equal(em_numpy._over_classes(np.maximum, A), A.max(axis=2, keepdims=True))
        s = em_numpy._over_classes(np.add, A)
        if K < 8:
            np.testing.assert_array_equal(s, A.sum(axis=2, keepdims=True))
        np.testing.assert_allclose(s, A.sum(axis=2, keepdims=True), rtol=1e-14)
