"""Latent classes with Gaussian indicators: the M-step against a hand computation, EM monotone, the likelihood
and the fit against StepMix's mixed measurement model (categorical_nan + gaussian_diag_nan), same data."""

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from bnfk_core.hybrid import load_mixed, mixed_from_arrays
from bnfk_core.lca.mixed import _floors, _m_step, em_mixed, fit_mixed_lca

SURVEY = Path(__file__).resolve().parents[1] / "sample_data" / "hybrid" / "survey.csv"


def tiny():
    return mixed_from_arrays(
        {"g": np.array([0, 1, 1, -1, 0]), "x": np.array([1.0, 2.0, np.nan, 4.0, 0.5])}, {"g": ["a", "b"]}
    )


def test_the_m_step_is_the_closed_form_with_missing_cells_skipped():
    d = tiny()
    R = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [0.3, 0.7], [0.6, 0.4]])
    w, prof, mu, var = _m_step(d, R, _floors(d, 0.0), (None, np.zeros(2)), (None, np.ones(2)))
    np.testing.assert_allclose(w, R.mean(axis=0))
    obs_g = [0, 1, 2, 4]  # row 3's g is missing
    for t in range(2):
        tot = R[obs_g, t].sum()
        assert prof[0][t, 0] == pytest.approx((R[0, t] + R[4, t]) / tot)
        assert prof[0][t, 1] == pytest.approx((R[1, t] + R[2, t]) / tot)
        ox = [0, 1, 3, 4]  # row 2's x is missing
        xs = np.array([1.0, 2.0, 4.0, 0.5])
        m = (R[ox, t] * xs).sum() / R[ox, t].sum()
        assert mu[1][t] == pytest.approx(m)
        assert var[1][t] == pytest.approx((R[ox, t] * (xs - m) ** 2).sum() / R[ox, t].sum())


def test_the_likelihood_skips_missing_cells_and_em_is_monotone():
    d = tiny()
    m = fit_mixed_lca(d, 2, starts=3, seed=1, tol=1e-12)
    # brute force: sum over classes of w_t times the densities of the observed cells
    ll = 0.0
    for r in range(d.n_rows):
        p = 0.0
        for t in range(2):
            q = m.weights[t]
            if d.codes[r, 0] >= 0:
                q *= m.profiles[0][t, d.codes[r, 0]]
            if not np.isnan(d.values[r, 1]):
                q *= stats.norm.pdf(d.values[r, 1], m.means[1][t], math.sqrt(m.variances[1][t]))
            p += q
        ll += math.log(p)
    assert m.loglik == pytest.approx(ll, abs=1e-9)
    assert m.log_likelihood(d) == pytest.approx(ll, abs=1e-9)
    data = load_mixed(SURVEY)
    from bnfk_core.lca.mixed import _start

    _, _, _, _, trace = em_mixed(data, _start(data, 3, 0, 0), _floors(data, 1e-6), tol=1e-10, max_iter=300)
    assert len(trace) > 20
    assert (np.diff(trace) >= -1e-9).all()


def _stepmix(data, k, seed, n_init):
    from stepmix.stepmix import StepMix

    cat, num = list(data.discrete), list(data.numeric)
    X = np.column_stack(
        [np.where(data.codes[:, cat] < 0, np.nan, data.codes[:, cat]).astype(float), data.values[:, num]]
    )
    desc = {
        "cat": {"model": "categorical_nan", "n_columns": len(cat)},
        "num": {"model": "gaussian_diag_nan", "n_columns": len(num)},
    }
    sm = StepMix(
        n_components=k,
        measurement=desc,
        n_init=n_init,
        random_state=seed,
        abs_tol=1e-10,
        max_iter=5000,
        verbose=0,
        progress_bar=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm.fit(X)
    return sm, X, cat, num


def test_our_fit_equals_or_beats_stepmix_and_our_likelihood_is_theirs():
    pytest.importorskip("stepmix")
    data = load_mixed(SURVEY)  # 237 rows, 7 categorical + 5 numeric columns, 131 cells missing
    sm, X, cat, num = _stepmix(data, 3, 0, 5)
    theirs = sm.score(X) * data.n_rows
    P = sm.get_parameters()
    pis = P["measurement"]["cat"]["pis"]
    L = int(P["measurement"]["cat"]["max_n_outcomes"])
    k = 3
    prof, mu, var = [None] * data.n_vars, [None] * data.n_vars, [None] * data.n_vars
    for a, i in enumerate(cat):
        prof[i] = pis[:, a * L : a * L + len(data.states[i])]
    for a, i in enumerate(num):
        mu[i] = P["measurement"]["num"]["means"][:, a]
        var[i] = P["measurement"]["num"]["covariances"][:, a]
    init = (np.asarray(P["weights"]), tuple(prof), tuple(mu), tuple(var))
    # our likelihood of StepMix's parameters is StepMix's
    from_theirs = fit_mixed_lca(data, k, init=init, tol=1e-12, max_iter=1)
    assert from_theirs.start_logliks[0] >= theirs - 1e-6
    from bnfk_core.lca.mixed import _log_joint, _lse

    assert float(_lse(_log_joint(data, *init)).sum()) == pytest.approx(theirs, abs=1e-6)
    # from StepMix's converged point, our EM stays at (or climbs above) it
    kept = fit_mixed_lca(data, k, init=init, tol=1e-12)
    assert kept.loglik >= theirs - 1e-9
    # our own seeded starts reach its maximum
    ours = fit_mixed_lca(data, k, starts=5, seed=0, tol=1e-10)
    assert ours.loglik >= theirs - 1e-6


def test_cli_lca_keep_fits_gaussian_indicators_and_scores_the_class(tmp_path, capsys):
    import json

    from bnfk_core.cli.main import main
    from bnfk_core.hybrid import mixed_from_arrays

    rng = np.random.default_rng(0)
    z = rng.integers(0, 2, 400)
    g = np.where(rng.random(400) < 0.9, z, 1 - z)
    x = np.where(z == 1, 4.0, 0.0) + rng.standard_normal(400)
    y = rng.standard_normal(400) * np.where(z == 1, 2.0, 0.5)
    cols = {"g": g, "x": x, "y": y, "label": z}
    data = mixed_from_arrays(cols, {"g": ["a", "b"], "label": ["no", "yes"]})
    from bnfk_core.cli.hybrid import write_mixed_csv

    src = tmp_path / "d.csv"
    with open(src, "w", encoding="utf-8", newline="") as fh:
        write_mixed_csv(data, fh)
    argv = [
        "lca",
        str(src),
        "--numbers",
        "keep",
        "--classes",
        "2",
        "--class-column",
        "label",
        "--starts",
        "4",
    ]
    assert main(argv + ["--profiles"]) == 0
    res = json.loads(capsys.readouterr().out)
    feats = load_mixed(src, numeric_columns=["x", "y"]).select(["g", "x", "y"])
    want = fit_mixed_lca(feats, 2, starts=4, seed=0)
    assert res["loglik"] == pytest.approx(want.loglik, abs=1e-9)
    assert res["numeric_columns"] == ["x", "y"] and res["ari"] > 0.9
    assert res["profiles"]["x"]["mean"] == pytest.approx(want.means[1].tolist(), abs=1e-9)
    assert main(["lca", str(src), "--numbers", "keep", "--classes", "2", "-o", str(tmp_path / "m.bif")]) == 2
    assert capsys.readouterr().err.startswith("error: -o writes a discrete network")
