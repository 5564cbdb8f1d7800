"""``reproduce kgv-toy`` (Bach & Jordan Fig. 1, left) and ``reproduce kgv-hybrid`` (Table 1): the Gaussian KL
against Monte Carlo, the linear Gaussian network's moments against its samples, K-means against scikit-learn,
the mixture of regressions and the hybrid conditionals against scipy / scikit-learn, the bundled data against
the counts their documentation gives, and small runs writing ours beside the published numbers."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from bnfk_core.cli import main
from bnfk_core.data.samples import sample_dir
from bnfk_core.reproduce.kgv_hybrid import (
    PUBLISHED,
    HybridNet,
    hybrid_catalog,
    load_hybrid,
    mixture_of_regressions,
)
from bnfk_core.reproduce.kgv_toy import (
    fit_linear_gaussian,
    gaussian_kl,
    gaussian_of,
    kmeans_1d,
    linear_star,
)


def test_gaussian_kl_against_monte_carlo():
    rng = np.random.default_rng(0)
    m = 3
    A0, A1 = rng.normal(size=(m, m)), rng.normal(size=(m, m))
    S0, S1 = A0 @ A0.T + np.eye(m), A1 @ A1.T + np.eye(m)
    mu0, mu1 = rng.normal(size=m), rng.normal(size=m)
    x = rng.multivariate_normal(mu0, S0, size=200_000)
    mc = float(
        np.mean(sps.multivariate_normal(mu0, S0).logpdf(x) - sps.multivariate_normal(mu1, S1).logpdf(x))
    )
    assert gaussian_kl(mu0, S0, mu1, S1) == pytest.approx(mc, abs=0.03)
    assert gaussian_kl(mu0, S0, mu0, S0) == pytest.approx(0.0, abs=1e-10)


def test_linear_network_moments_and_fit_against_its_samples():
    rng = np.random.default_rng(1)
    m = 5
    B = linear_star(m, rng)
    assert (B[:-1] == 0).all() and (np.abs(B[-1, :-1]) <= 1).all() and B[-1, -1] == 0
    mu, S = gaussian_of(B, np.ones(m))
    n = 100_000
    X = rng.normal(size=(n, m))  # forward sampling, independently of gaussian_of
    X[:, -1] += X[:, :-1] @ B[-1, :-1]
    assert np.allclose(np.cov(X.T), S, atol=0.03) and np.allclose(mu, 0)
    parents = [(), (), (), (), (0, 1, 2, 3)]
    Bh, var, c = fit_linear_gaussian(parents, X[:5000])
    from sklearn.linear_model import LinearRegression

    lr = LinearRegression().fit(X[:5000, :4], X[:5000, 4])
    assert np.allclose(Bh[4, :4], lr.coef_, atol=1e-10) and c[4] == pytest.approx(lr.intercept_, abs=1e-10)
    resid = X[:5000, 4] - lr.predict(X[:5000, :4])
    assert var[4] == pytest.approx(float(np.mean(resid**2)), rel=1e-10)


def test_kmeans_1d_is_scikit_learns_partition():
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(c, 0.3, 200) for c in (-4, 0, 3, 7, 12)])
    ours = kmeans_1d(x, 5)
    theirs = KMeans(5, n_init=10, random_state=0).fit(x[:, None])
    order = np.argsort(theirs.cluster_centers_.ravel())
    relabel = np.empty(5, dtype=int)
    relabel[order] = np.arange(5)
    assert (ours == relabel[theirs.labels_]).all()


def test_mixture_of_regressions_picks_the_number_of_lines():
    rng = np.random.default_rng(3)
    n = 600
    a = rng.normal(size=n)
    A = np.column_stack([np.ones(n), a])
    line = a * 1.0 + 0.1 * rng.normal(size=n)
    w, coefs, var = mixture_of_regressions(A, line)
    assert len(w) == 1
    assert np.allclose(coefs[0], np.polyfit(a, line, 1)[::-1], atol=1e-8)
    two = np.where(rng.random(n) < 0.4, 3.0 + 2.0 * a, -1.0 - a) + 0.1 * rng.normal(size=n)
    w, coefs, var = mixture_of_regressions(A, two, seed=0)
    assert len(w) >= 2
    big = np.argsort(-w)[:2]
    found = sorted(tuple(np.round(coefs[k], 1)) for k in big)
    assert found == [(-1.0, -1.0), (3.0, 2.0)]
    assert sorted(np.round(w[big], 1)) == [0.4, 0.6]


def test_hybrid_conditionals_against_scipy_and_scikit_learn():
    """One component: a number given a number and a category is the least-squares Gaussian; a category with
    only discrete parents is its CPT with pseudo-count 1; with a numeric parent a softmax regression."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(4)
    n = 400
    g = rng.integers(0, 3, n)
    x = rng.normal(size=n)
    y = 1.5 * x + np.array([0.0, 2.0, -1.0])[g] + 0.5 * rng.normal(size=n)
    h = (rng.random(n) < 1 / (1 + np.exp(-2 * x))).astype(int)
    X = np.column_stack([g, x, y, h]).astype(float)
    net = HybridNet([[], [], [0, 1], [1]], X, [True, False, False, True], [3, 1, 1, 2], max_components=1)
    ll = net.loglik(X)
    D = np.column_stack([np.ones(n), g == 1, g == 2, x])
    coef = np.linalg.lstsq(D, y, rcond=None)[0]
    s2 = float(np.mean((y - D @ coef) ** 2))
    expected = (
        np.log((np.bincount(g, minlength=3)[g] + 1) / (n + 3))
        + sps.norm(x.mean(), x.std()).logpdf(x)
        + sps.norm(D @ coef, math.sqrt(s2)).logpdf(y)
    )
    z = ((x - x.mean()) / x.std())[:, None]
    lr = LogisticRegression(C=1.0, max_iter=2000).fit(z, h)
    expected += lr.predict_log_proba(z)[np.arange(n), h]
    assert np.allclose(ll, expected, atol=1e-6)


def test_bundled_hybrid_data_match_their_documentation():
    cat = hybrid_catalog()
    assert set(cat) == {"biopsy", "boston", "pima", "auto"}
    readme = (sample_dir() / "hybrid" / "README.md").read_text(encoding="utf-8")
    counts = {
        "biopsy": ("class", {"benign": 444, "malignant": 239}),
        "boston": ("chas", {"0": 471, "1": 35}),
        "pima": ("type", {"No": 355, "Yes": 177}),
        "auto": ("origin", {"1": 245, "2": 68, "3": 79}),
    }
    for stem, entry in cat.items():
        raw = pd.read_csv(sample_dir() / "hybrid" / entry["file"])
        assert raw.shape == (entry["rows"], entry["columns"]) and not raw.isna().any().any()
        assert (
            entry["paper_name"] in PUBLISHED
            and entry["source"]
            and entry["licence"]
            and entry["file"] in readme
        )
        col, expected = counts[stem]
        assert raw[col].astype(str).value_counts().to_dict() == expected
        df, discrete = load_hybrid(stem)
        assert discrete == entry["discrete"] and all(df[c].dtype == float for c in df if c not in discrete)
    boston, _ = load_hybrid("boston")
    assert np.allclose(np.exp(boston["crim"]), pd.read_csv(sample_dir() / "hybrid" / "boston.csv")["crim"])


def test_reproduce_kgv_toy_writes_ours_beside_the_paper(tmp_path):
    args = [
        "reproduce",
        "kgv-toy",
        "--quick",
        "--repeats",
        "1",
        "--seed",
        "5",
        "-o",
        str(tmp_path),
        "--quiet",
    ]
    assert main(args) == 0
    table = pd.read_csv(tmp_path / "kgv_toy.csv")
    assert set(table["kind"]) == {"discrete", "linear"} and set(table["m"]) == {2, 4, 6, 8}
    assert set(table["label"]) == {"true DAG", "KGV", "BDe", "BIC", "BDe (d-5)", "BIC (d-5)"}
    assert (table["kl"] >= -1e-9).all() and (table["kl (published)"] == "plot only (see the notes)").all()
    runs = pd.read_csv(tmp_path / "kgv_toy_runs.csv")
    assert set(runs["seed"]) == {5} and len(runs) == 2 * 4 * 4
    fig = json.loads((tmp_path / "fig_kgv_toy.json").read_text(encoding="utf-8"))
    assert len(fig["data"]) == 8 and (tmp_path / "fig_kgv_toy.html").exists()
    md = (tmp_path / "kgv_toy.md").read_text(encoding="utf-8")
    assert "the discretization methods degrade significantly" in md
    # the yardstick rows are the true star structure (m − 1 arcs)
    true = table[table["label"] == "true DAG"]
    assert (true["arcs"] == true["m"] - 1).all()


def test_reproduce_kgv_hybrid_writes_ours_beside_table_1(tmp_path):
    args = ["reproduce", "kgv-hybrid", "--datasets", "auto", "--repeats", "1", "-o", str(tmp_path), "--quiet"]
    assert main(args) == 0
    table = pd.read_csv(tmp_path / "kgv_hybrid.csv")
    (row,) = table.to_dict("records")
    assert row["dataset"] == "CARS1" and (row["N"], row["D"], row["C"]) == (392, 1, 7)
    for k, m in enumerate(("d-5", "d-10", "KGV")):
        assert row[f"{m} (published)"] == PUBLISHED["CARS1"][3 + k]
        assert row[f"{m} (diff)"] == pytest.approx(row[m] - row[f"{m} (published)"], abs=1e-5)
        assert row[m] > 0  # every learned network beats the independent baseline on held-out rows
    runs = pd.read_csv(tmp_path / "kgv_hybrid_runs.csv")
    assert len(runs) == 3 and (runs["train"] == 314).all() and (runs["test"] == 78).all()
    assert np.allclose(runs["gain"], runs["heldout_ll"] - runs["baseline_ll"])
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["experiments"]["kgv-hybrid"]["datasets"] == ["auto"]
    assert main(["reproduce", "kgv-hybrid", "--datasets", "nope", "-o", str(tmp_path), "--quiet"]) == 2
