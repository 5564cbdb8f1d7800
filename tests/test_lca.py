"""Latent class models: poLCA's published carcinoma maxima, EM monotonicity, missing cells against a
brute-force marginal-likelihood maximiser, weights, exports (bnfk_core.lca.model)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.inference.queries import log_likelihood as bn_log_likelihood
from bnfk_core.lca import LcaError, fit_lca, fit_lca_range, free_parameters, parse_classes
from bnfk_core.lca.em import em_runs
from bnfk_core.lca.model import initial_parameters, one_hot
from bnfk_core.lca.report import criteria_table, posterior_table
from bnfk_core.network.formats import read_model, write_model

POLCA_CARCINOMA = {2: -317.2568, 3: -293.7050, 4: -289.2858}  # poLCA's documented maxima


@pytest.fixture(scope="module")
def carcinoma(sample_path):
    return load_csv(sample_path("carcinoma"))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_carcinoma_reaches_polca_maxima(carcinoma, k):
    m = fit_lca(carcinoma, k, starts=30, seed=0)
    assert m.loglik == pytest.approx(POLCA_CARCINOMA[k], abs=1e-3)
    assert m.parameters == (k - 1) + k * 7  # 7 binary ratings
    assert m.bic == pytest.approx(-2 * m.loglik + m.parameters * np.log(118))
    assert m.aic == pytest.approx(-2 * m.loglik + 2 * m.parameters)
    assert 1 <= m.starts_at_best <= 30 and m.converged
    assert np.all(np.diff(m.weights) <= 0) and m.weights.sum() == pytest.approx(1.0)
    # the hidden-root network gives the same likelihood by the project's own inference (class column missing)
    net = m.to_bayesnet()
    assert bn_log_likelihood(net, carcinoma).sum() == pytest.approx(m.loglik, abs=1e-8)


def test_criteria_table_lists_each_fit_with_its_criteria(carcinoma):
    fits = [fit_lca(carcinoma, k, starts=5, seed=0) for k in (1, 2)]
    table = criteria_table(fits)
    assert list(table.columns) == ["classes", "log-likelihood", "parameters", "BIC", "AIC", "starts at best"]
    assert table["classes"].tolist() == [1, 2] and table["parameters"].tolist() == [7, 1 + 2 * 7]
    for row, m in zip(table.itertuples(index=False), fits):
        assert row[1] == m.loglik and row[3] == pytest.approx(-2 * m.loglik + m.parameters * np.log(118))
        assert row[4] == pytest.approx(-2 * m.loglik + 2 * m.parameters)
        assert row[5] == f"{m.starts_at_best}/5"


def test_posterior_table_numbers_rows_from_zero_and_classes_from_one():
    post = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.25, 0.5, 0.25]])
    table = posterior_table(post)
    assert list(table.columns) == ["row", "modal class", "P(class 1)", "P(class 2)", "P(class 3)"]
    assert table["row"].tolist() == [0, 1, 2] and table["modal class"].tolist() == [1, 3, 2]
    np.testing.assert_array_equal(table.iloc[:, 2:].to_numpy(), post)


def test_free_parameters_counts_every_profile():
    assert free_parameters(1, [2, 3, 4]) == 1 + 2 + 3
    assert free_parameters(3, [2, 3, 4]) == 2 + 3 * 6


def _random_codes(rng, n, cards, p_missing):
    codes = np.column_stack([rng.integers(0, r, n) for r in cards]).astype(np.int32)
    codes[rng.random(codes.shape) < p_missing] = -1
    return codes


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(1, 4),
    p_missing=st.sampled_from([0.0, 0.2]),
    accelerate=st.booleans(),
)
def test_em_never_lowers_the_likelihood(seed, k, p_missing, accelerate):
    """Plain EM and SQUAREM with its fallback: the accepted points' log-likelihoods never decrease, and the
    returned one is the trace's last (recomputed independently from the returned parameters)."""
    rng = np.random.default_rng(seed)
    cards = [int(r) for r in rng.integers(2, 4, size=int(rng.integers(2, 5)))]
    codes = _random_codes(rng, int(rng.integers(5, 40)), cards, p_missing)
    weights = rng.integers(1, 4, codes.shape[0]).astype(float)
    theta, w = initial_parameters(cards, k, 4, seed)
    res = em_runs(codes, weights, cards, theta, w, tol=1e-12, max_iter=60, trace=True, accelerate=accelerate)
    X = one_hot(codes, cards)
    for s, row in enumerate(res["trace"]):
        row = row[np.isfinite(row)]
        assert np.all(np.diff(row) >= -1e-9 * np.abs(row[:-1]).max())
        assert row[-1] == pytest.approx(res["loglik"][s], abs=1e-9)
        L = X @ np.log(np.maximum(res["theta"][s], 1e-300)) + np.log(np.maximum(res["w"][s], 1e-300))
        assert weights @ logsumexp(L, axis=1) == pytest.approx(res["loglik"][s], abs=1e-8)


def _brute_marginal_fit(codes, cards, k, starts=4, seed=0):
    """Maximise sum_n log sum_t w_t prod_{i observed} theta_i[t, x_ni] over softmax parameters (L-BFGS)."""
    rng = np.random.default_rng(seed)
    sizes = [k] + [k * r for r in cards]

    def unpack(z):
        parts, at = [], 0
        for s in sizes:
            parts.append(z[at : at + s])
            at += s
        lw = np.log(softmax(parts[0]))
        lts = [np.log(np.maximum(softmax(p.reshape(k, r), axis=1), 1e-300)) for p, r in zip(parts[1:], cards)]
        return lw, lts

    def nll(z):
        lw, lts = unpack(z)
        L = np.tile(lw, (codes.shape[0], 1))
        for i, lt in enumerate(lts):
            obs = codes[:, i] >= 0
            L[obs] += lt[:, codes[obs, i]].T
        return -logsumexp(L, axis=1).sum()

    best = np.inf
    for _ in range(starts):
        r = minimize(
            nll, rng.normal(size=sum(sizes)), method="L-BFGS-B", options={"maxiter": 5000, "gtol": 1e-10}
        )
        best = min(best, r.fun)
    return -best


def test_missing_cells_match_a_brute_force_marginal_maximiser():
    rng = np.random.default_rng(3)
    cards = [2, 3, 2]
    codes = _random_codes(rng, 30, cards, 0.25)
    data = from_codes(codes, ["a", "b", "c"], [tuple(map(str, range(r))) for r in cards], None, "tiny")
    m = fit_lca(data, 2, starts=20, seed=1, tol=1e-12, max_iter=5000)
    assert m.loglik == pytest.approx(_brute_marginal_fit(codes, cards, 2), abs=1e-5)
    assert m.log_likelihood(codes).sum() == pytest.approx(m.loglik, abs=1e-9)


def test_weighted_distinct_rows_equal_the_table(carcinoma):
    u, inv, cnt = np.unique(carcinoma.codes, axis=0, return_inverse=True, return_counts=True)

    class Distinct:
        codes, weights = u, cnt
        variables, states, source = carcinoma.variables, carcinoma.states, "distinct"

    a = fit_lca(carcinoma, 3, starts=10, seed=2)
    b = fit_lca(Distinct, 3, starts=10, seed=2)
    assert b.loglik == pytest.approx(a.loglik, abs=1e-9) and b.n_rows == 118
    for pa, pb in zip(a.profiles, b.profiles):
        np.testing.assert_allclose(pa, pb, atol=1e-9)


def test_posteriors_modal_classes_and_imputation_against_enumeration():
    rng = np.random.default_rng(5)
    cards = [2, 3, 2, 2]
    codes = _random_codes(rng, 60, cards, 0.15)
    data = from_codes(codes, list("abcd"), [tuple(map(str, range(r))) for r in cards], None, "t")
    m = fit_lca(data, 2, starts=8, seed=0)
    post = m.posterior(codes)
    filled = m.predict_missing(codes)
    for n in range(codes.shape[0]):
        joint = m.weights.copy()
        for i in range(4):
            if codes[n, i] >= 0:
                joint = joint * m.profiles[i][:, codes[n, i]]
        np.testing.assert_allclose(post[n], joint / joint.sum(), atol=1e-12)
        for i in range(4):
            if codes[n, i] < 0:
                assert filled[n, i] == int(np.argmax(post[n] @ m.profiles[i]))
            else:
                assert filled[n, i] == codes[n, i]
    assert (m.modal_classes(codes) == post.argmax(axis=1)).all()
    assert sum(m.class_sizes(codes)) == 60


def test_same_seed_same_fit_and_starts_do_not_depend_on_their_number(carcinoma):
    a, b = fit_lca(carcinoma, 3, 12, seed=7), fit_lca(carcinoma, 3, 12, seed=7)
    assert a.loglik == b.loglik and np.array_equal(a.start_logliks, b.start_logliks)
    c = fit_lca(carcinoma, 3, 5, seed=7)
    np.testing.assert_allclose(c.start_logliks, a.start_logliks[:5], rtol=1e-12)


@pytest.mark.parametrize("ext", ["json", "bif"])
def test_export_with_a_hidden_root(carcinoma, tmp_path, ext):
    m = fit_lca(carcinoma, 2, 10, seed=0)
    path = tmp_path / f"lca.{ext}"
    write_model(m.to_bayesnet(), path)
    net = read_model(path)
    assert net.variables[0] == "latent_class" and net.dag.n_arcs == 7
    np.testing.assert_allclose(net.cpts[0][0], m.weights)
    if ext == "json":
        assert json.loads(path.read_text())["fit"]["hidden"] == "latent_class"
        assert bn_log_likelihood(net, carcinoma).sum() == pytest.approx(m.loglik, abs=1e-8)


def test_range_and_errors(carcinoma):
    assert parse_classes("2-4") == [2, 3, 4] and parse_classes(" 3 ") == [3]
    fits = fit_lca_range(carcinoma, "1-2", starts=3)
    assert [f.n_classes for f in fits] == [1, 2]
    assert fits[0].loglik == pytest.approx(
        sum(np.sum(np.bincount(c) * np.log(np.bincount(c) / 118)) for c in carcinoma.codes.T)
    )
    for bad in ("0", "3-1", "x", "1-99"):
        with pytest.raises(LcaError, match="--classes"):
            parse_classes(bad)
    with pytest.raises(LcaError, match="number of classes"):
        fit_lca(carcinoma, 0)
    with pytest.raises(LcaError, match="number of starts"):
        fit_lca(carcinoma, 2, starts=0)


def test_reproduce_lca_quick(tmp_path):
    import pandas as pd

    from bnfk_core.reproduce import experiments as rep

    rec = rep.run_experiment("lca", tmp_path, rep.Settings(quick=True))
    assert rec["carcinoma_max_abs_difference"] < 1e-3
    ari = pd.read_csv(tmp_path / "lca_ari.csv").set_index("dataset")
    assert ari.loc["soybean_small", "ari"] == pytest.approx(1.0) and set(ari.index) == {
        "zoo",
        "soybean_small",
    }


def _reference_em(X, weights, cards, theta, w, iterations):
    """Plain EM on the dense one-hot rows, written out with numpy (the independent yardstick): the
    log-likelihoods of ``iterations`` E-steps and the parameters of the last one."""
    off = np.concatenate([[0], np.cumsum(cards)])
    lls = []
    for it in range(iterations):
        with np.errstate(divide="ignore"):
            L = X @ np.log(np.maximum(theta, 1e-300)) + np.log(np.maximum(w, 1e-300))
        tot = logsumexp(L, axis=1, keepdims=True)
        lls.append(float(weights @ tot[:, 0]))
        if it == iterations - 1:
            break
        R = np.exp(L - tot) * weights[:, None]
        counts = X.T @ R
        blocks = np.split(counts, off[1:-1])  # an empty class: uniform profile
        theta = np.concatenate(
            [
                np.divide(c, c.sum(axis=0), out=np.full(c.shape, 1 / len(c)), where=c.sum(axis=0) > 0)
                for c in blocks
            ],
            axis=0,
        )
        w = R.sum(axis=0) / weights.sum()
    return theta, w, lls


@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_em_equals_a_numpy_reference_em(seed):
    """The compiled engine (distinct rows, groups of variables, no one-hot) gives plain EM's numbers step by
    step (missing cells, weights, duplicated rows, underflow-prone sharp profiles included); SQUAREM reaches
    the same fixed point."""
    from bnfk_core.lca.em import prepare_rows

    rng = np.random.default_rng(seed)
    cards = [int(r) for r in rng.integers(2, 5, size=9)]
    codes = _random_codes(rng, 300, cards, 0.1)
    codes = np.concatenate([codes, codes[:40]])  # duplicated rows collapse
    weights = rng.integers(1, 3, codes.shape[0]).astype(float)
    theta, w = initial_parameters(cards, 3, 5, seed)
    theta[0, :, 0] = np.where(theta[0, :, 0] > 0.5, 1 - 1e-200, 1e-200)  # a start with near-0/1 profiles
    rows = prepare_rows(codes, weights, cards)
    assert rows.inv.shape[1] >= 2 and rows.n_distinct == len(np.unique(codes, axis=0)) <= 300
    X = one_hot(codes, cards)
    res = em_runs(codes, weights, cards, theta, w, max_iter=15, tol=-1.0, accelerate=False, trace=True)
    for s in range(5):
        t_ref, w_ref, lls = _reference_em(X, weights, cards, theta[s], w[s], 16)
        np.testing.assert_allclose(res["trace"][s][:16], lls, rtol=1e-12)
        np.testing.assert_allclose(res["theta"][s], t_ref, atol=1e-10)
        np.testing.assert_allclose(res["w"][s], w_ref, atol=1e-12)
    plain = em_runs(codes, weights, cards, theta[1:], w[1:], tol=1e-13, max_iter=20000, accelerate=False)
    fast = em_runs(codes, weights, cards, theta[1:], w[1:], tol=1e-13, max_iter=20000)
    np.testing.assert_allclose(fast["loglik"], plain["loglik"], atol=1e-5)
    assert fast["iterations"].sum() < plain["iterations"].sum()


def test_log_joint_without_one_hot_equals_the_one_hot_product(carcinoma):
    m = fit_lca(carcinoma, 3, 5, seed=1)
    codes = carcinoma.codes.copy()
    codes[::7, 2] = -1
    X = one_hot(codes, m.cardinalities)
    ref = X @ np.log(np.maximum(np.concatenate(m.profiles, axis=1).T, 1e-300)) + np.log(m.weights)
    np.testing.assert_allclose(m.log_joint(codes), ref, atol=1e-12)


def test_screened_starts_reach_the_full_runs_maximum(carcinoma):
    """Short runs then the best continued: the same carcinoma maximum, and starts_at_best counts only among
    the runs taken to convergence."""
    full = fit_lca(carcinoma, 3, 30, seed=0)
    scr = fit_lca(carcinoma, 3, 30, seed=0, screen=10, keep=6)
    assert scr.loglik == pytest.approx(full.loglik, abs=1e-4)
    assert full.runs_completed == 30 and 6 <= scr.runs_completed <= 30
    assert 1 <= scr.starts_at_best <= scr.runs_completed


def test_streamed_distinct_rows_fit_like_the_file(sample_path):
    """The streaming reader's distinct rows with multiplicities (missing cells included) give the same fit."""
    from bnfk_core.data.stream import read_counts

    path = sample_path("breast_cancer")
    table = load_csv(path, class_column="class").without_class()
    streamed = read_counts(path, chunksize=50, class_column="class")
    a = fit_lca(table, 2, starts=6, seed=3)
    b = fit_lca(streamed, 2, starts=6, seed=3)
    assert streamed.codes.shape[0] < table.n_rows and b.n_rows == table.n_rows
    assert b.loglik == pytest.approx(a.loglik, abs=1e-8)
    for pa, pb in zip(a.profiles, b.profiles):
        np.testing.assert_allclose(pa, pb, atol=1e-8)


@pytest.mark.parametrize("n_vars", [5, 40])
def test_unique_rows_equals_numpy_unique(n_vars):
    """Integer keys (5 variables) and the np.unique fallback (40 variables of 4-5 states: keys would overflow)
    give np.unique(axis=0)'s rows, order and inverse."""
    from bnfk_core.lca.em import unique_rows

    rng = np.random.default_rng(n_vars)
    cards = [int(r) for r in rng.integers(2, 6, size=n_vars)]
    codes = _random_codes(rng, 500, cards, 0.1)
    codes = np.concatenate([codes, codes[::3]])
    u, inv = unique_rows(codes, cards)
    u_ref, inv_ref = np.unique(codes, axis=0, return_inverse=True)
    np.testing.assert_array_equal(u, u_ref)
    np.testing.assert_array_equal(inv, inv_ref.reshape(-1))
