"""scikit-learn estimators (bnfk_core.estimators): scikit-learn's own estimator checks, and each estimator
equal to the core function it is a face of (or to a brute-force computation)."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from bnfk_core import fit_lca, gram, load_csv
from bnfk_core.analyses.cluster import run_clustering
from bnfk_core.analyses.impute import impute_with_model
from bnfk_core.estimators import (
    EXPECTED_FAILED_CHECKS,
    FisherKernel,
    KernelClustering,
    LatentClassModel,
    NetworkClassifier,
    NetworkImputer,
)
from bnfk_core.kernels.features import features
from bnfk_core.learning.recipe import Recipe, learn_recipe

ESTIMATORS = [FisherKernel(), NetworkImputer(), LatentClassModel(), KernelClustering(), NetworkClassifier()]
POLCA_CARCINOMA_3 = -293.7050  # poLCA's documented maximum for three classes


@parametrize_with_checks(
    ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS[type(est).__name__]
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


def test_at_most_three_declared_failures_each():
    assert set(EXPECTED_FAILED_CHECKS) == {type(e).__name__ for e in ESTIMATORS}
    for name, checks in EXPECTED_FAILED_CHECKS.items():
        assert len(checks) <= 3, name
        assert all(isinstance(why, str) and why.endswith(".") for why in checks.values())


def test_tags_declare_categorical_string_and_missing_input():
    for est in ESTIMATORS:
        tags = est.__sklearn_tags__()
        assert tags.input_tags.categorical and tags.input_tags.string and tags.input_tags.allow_nan


@pytest.fixture(scope="module")
def carcinoma(sample_path):
    return pd.read_csv(sample_path("carcinoma"))


def test_latent_class_model_reaches_polca_carcinoma_maximum(carcinoma):
    lcm = LatentClassModel(3).fit(carcinoma)
    assert lcm.loglik_ == pytest.approx(POLCA_CARCINOMA_3, abs=1e-3)
    n = len(carcinoma)
    assert lcm.score(carcinoma) * n == pytest.approx(lcm.loglik_, abs=1e-8)  # mean log-likelihood per row
    assert lcm.bic(carcinoma) == pytest.approx(lcm.model_.bic, abs=1e-8)
    assert lcm.aic(carcinoma) == pytest.approx(lcm.model_.aic, abs=1e-8)
    # free parameters of 3 classes over 7 binary variables: 2 weights + 3 * 7 profiles
    assert lcm.bic(carcinoma) == pytest.approx(-2 * POLCA_CARCINOMA_3 + 23 * np.log(n), abs=2e-3)
    core = fit_lca(load_csv(sample_path_of("carcinoma")), 3, starts=20, seed=0)
    assert lcm.loglik_ == core.loglik
    P = lcm.predict_proba(carcinoma)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(lcm.predict(carcinoma), P.argmax(axis=1))


def sample_path_of(stem):
    from pathlib import Path

    return Path(__file__).resolve().parents[1] / "sample_data" / f"{stem}.csv"


@pytest.fixture(scope="module")
def votes():
    """house_votes_84 as a notebook reads it: '?' (a missing vote) is NaN."""
    frame = pd.read_csv(sample_path_of("house_votes_84"), na_values=["?"], keep_default_na=False)
    return frame.drop(columns="class"), frame["class"]


def test_fisher_kernel_is_the_cores_gram(votes):
    X, _ = votes
    fk = FisherKernel().fit(X)
    data = load_csv(sample_path_of("house_votes_84"), na_values="?", class_column="class").without_class()
    model = learn_recipe(data, Recipe(seed=0)).model
    assert fk.network_.dag.sorted_arcs() == model.dag.sorted_arcs()
    for a, b in zip(fk.network_.cpts, model.cpts):
        np.testing.assert_allclose(a, b, atol=1e-12)
    K = fk.gram(X)
    np.testing.assert_allclose(K, gram(model, data), atol=1e-9)
    np.testing.assert_allclose(
        fk.gram(X.iloc[:20], X.iloc[20:50]),
        gram(model, data.subset(range(20)), data.subset(range(20, 50))),
        atol=1e-9,
    )
    Phi = fk.transform(X)  # the explicit features: Phi Phi^T is the (marginalised) kernel
    assert (Phi != features(model, data)).nnz == 0
    np.testing.assert_allclose((Phi @ Phi.T).toarray(), K, atol=1e-8)
    names = fk.get_feature_names_out()
    assert len(names) == Phi.shape[1]
    complete = np.flatnonzero(~X.isna().any(axis=1).to_numpy())[0]
    row = X.iloc[complete]
    for name in names[Phi[complete].indices]:  # a complete row's non-zeros: its own parent configurations
        given = name.partition("|")[2]
        assert all(str(row[p]) == s for p, s in (g.split("=") for g in given.split(",") if g))


def test_pipeline_cross_validates_an_svm_on_the_fisher_kernel(votes):
    X, y = votes
    pipe = make_pipeline(NetworkImputer(), FisherKernel(output="gram"), SVC(kernel="precomputed"))
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(pipe, X, y, cv=cv)
    assert scores.shape == (3,)
    # the first fold by hand: impute, learn, Gram matrices, SVC
    train, test = next(cv.split(X, y))
    imp = NetworkImputer().fit(X.iloc[train])
    Xtr, Xte = imp.transform(X.iloc[train]), imp.transform(X.iloc[test])
    fk = FisherKernel().fit(Xtr)
    svc = SVC(kernel="precomputed").fit(fk.gram(Xtr), y.iloc[train])
    by_hand = (svc.predict(fk.gram(Xte, Xtr)) == y.iloc[test].to_numpy()).mean()
    assert scores[0] == pytest.approx(by_hand, abs=1e-12)
    majority = y.value_counts(normalize=True).max()
    assert scores.mean() > majority + 0.2  # far above always answering the larger party


def test_network_imputer_fills_only_missing_cells_with_the_posterior_mode(votes):
    X, _ = votes
    X = X.copy()
    X["party_guess"] = pd.Categorical(
        np.where(np.arange(len(X)) % 3 == 0, None, X["physician-fee-freeze"]), categories=["y", "n", "maybe"]
    )
    imp = NetworkImputer().fit(X)
    out = imp.transform(X)
    assert (
        isinstance(out, pd.DataFrame) and out.index.equals(X.index) and list(out.columns) == list(X.columns)
    )
    assert isinstance(out["party_guess"].dtype, pd.CategoricalDtype)
    assert list(out["party_guess"].cat.categories) == ["y", "n", "maybe"]
    missing = X.isna().to_numpy()
    assert missing.any() and not out.isna().to_numpy().any()
    observed = ~missing
    np.testing.assert_array_equal(
        out.astype(object).to_numpy()[observed], X.astype(object).to_numpy()[observed]
    )
    # the filled values are the core's: the arg-max of the exact posterior under the same network
    from bnfk_core.data import from_frame

    data = from_frame(X, model=imp.network_)
    ref = impute_with_model(imp.network_, data).frame
    np.testing.assert_array_equal(out.astype(str).to_numpy(), ref[list(X.columns)].astype(str).to_numpy())
    # an array in, an array out
    with pytest.warns(UserWarning, match="feature names"):  # scikit-learn's warning: fitted on named columns
        arr = imp.transform(X.to_numpy())
    assert isinstance(arr, np.ndarray) and arr.shape == X.shape


def test_network_imputer_keeps_every_dtype():
    rng = np.random.default_rng(0)
    n = 300
    a = rng.integers(0, 3, n)
    gap = lambda: rng.random(n) < 0.1  # noqa: E731
    X = pd.DataFrame(
        {
            "i": pd.array(np.where(gap(), None, a), dtype="Int64"),
            "s": pd.array(np.where(gap(), None, np.array(["p", "q", "r"])[a]), dtype="string"),
            "c": pd.Categorical(
                np.where(gap(), None, np.array(["lo", "mid", "hi"])[a]),
                categories=["lo", "mid", "hi", "never"],
            ),
            "o": np.where(gap(), None, np.array(["u", "v", "w"], dtype=object)[a]),
        }
    )
    out = NetworkImputer().fit_transform(X)
    assert out.dtypes.tolist() == X.dtypes.tolist()
    assert X.isna().to_numpy().any() and not out.isna().to_numpy().any()


def test_network_imputer_keeps_numbers_numbers():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 200)
    X = pd.DataFrame(
        {"a": a.astype(float), "b": (a + rng.integers(0, 2, 200)).astype(float), "c": rng.normal(size=200)}
    )
    X.loc[::7, "a"] = np.nan
    X.loc[::11, "c"] = np.nan
    out = NetworkImputer().fit_transform(X)
    assert out.dtypes.tolist() == [np.float64] * 3 and not out.isna().any().any()
    assert set(out["a"].unique()) <= {0.0, 1.0, 2.0}
    filled_c = out.loc[X["c"].isna(), "c"]
    assert filled_c.isin(X["c"].dropna()).all()  # a bin's median is one of the values fit saw


def test_network_classifier_posterior_is_brute_force_bayes(votes):
    X, y = votes
    for structure in ("naive-bayes", "tan", "kdb"):
        clf = NetworkClassifier(structure).fit(X, y)
        net = clf.network_
        c = net.variables.index(clf.class_name_)
        assert all(
            c in net.parents[i] for i in range(net.n_vars) if i != c
        )  # the class is every feature's parent
        rows = X.dropna().iloc[:40]
        P = clf.predict_proba(rows)
        # P(c | x) from the joint of each completed row: one log-likelihood per class value, normalised
        codes = np.zeros((len(rows), net.n_vars), dtype=np.int64)
        for j, v in enumerate(net.variables):
            if j != c:
                codes[:, j] = [net.states[j].index(str(s)) for s in rows[v]]
        logp = []
        for k in range(len(clf.classes_)):
            codes[:, c] = k
            logp.append(net.complete_log_likelihood(codes))
        logp = np.array(logp).T
        brute = np.exp(logp - logp.max(axis=1, keepdims=True))
        brute /= brute.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(P, brute, atol=1e-10)
        np.testing.assert_array_equal(clf.predict(rows), clf.classes_[P.argmax(axis=1)])
        assert clf.score(X, y) > 0.85


def test_kernel_clustering_is_the_cores_run_clustering(votes):
    X, y = votes
    for kernel, algorithm in (("fisher", "correlation"), ("hamming", "spectral")):
        est = KernelClustering(2, kernel=kernel, algorithm=algorithm, n_init=5).fit(X)
        data = load_csv(sample_path_of("house_votes_84"), na_values="?", class_column="class").without_class()
        model = learn_recipe(data, Recipe(seed=0)).model if kernel == "fisher" else None
        ref = run_clustering(data, kernel, algorithm, n_clusters=2, model=model, seed=0, restarts=5, n_init=5)
        np.testing.assert_array_equal(est.labels_, ref["labels"])
        np.testing.assert_array_equal(est.fit_predict(X), ref["labels"])


def test_unknown_values_are_missing_cells_or_an_error(votes):
    X, _ = votes
    X = X.dropna().iloc[:60]
    fk = FisherKernel().fit(X)
    odd = X.iloc[:3].copy()
    odd.iloc[1, 2] = "abstain"  # no state of the network
    blank = odd.copy()
    blank.iloc[1, 2] = np.nan
    np.testing.assert_allclose(fk.gram(odd, X), fk.gram(blank, X), atol=1e-12)  # "missing": marginalised
    strict = FisherKernel(handle_unknown="error").fit(X)
    column = X.columns[2]
    with pytest.raises(ValueError, match=f"Value 'abstain' of variable '{column}' on row 2 of DataFrame"):
        strict.gram(odd)
    with pytest.raises(ValueError, match="handle_unknown"):
        FisherKernel(handle_unknown="ignore").fit(X)


def test_network_classifier_marginalises_missing_features(votes):
    X, y = votes
    clf = NetworkClassifier("naive-bayes").fit(X, y)
    net = clf.network_
    c = net.variables.index(clf.class_name_)
    row = X.dropna().iloc[[0]].copy()
    gone = [X.columns[0], X.columns[5]]
    row[gone] = np.nan
    p = clf.predict_proba(row)[0]
    # brute force: sum the joint over every completion of the missing cells
    free = [net.variables.index(v) for v in gone]
    base = np.zeros(net.n_vars, dtype=np.int64)
    for j, v in enumerate(net.variables):
        if j != c and v not in gone:
            base[j] = net.states[j].index(str(row[v].iloc[0]))
    joint = np.zeros(len(clf.classes_))
    for k in range(len(clf.classes_)):
        for combo in itertools.product(*(range(len(net.states[f])) for f in free)):
            codes = base.copy()
            codes[c] = k
            codes[free] = combo
            joint[k] += np.exp(net.complete_log_likelihood(codes[None, :])[0])
    np.testing.assert_allclose(p, joint / joint.sum(), atol=1e-12)
