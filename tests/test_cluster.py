"""Clustering and kernel classification (bnfk_core.analyses.cluster.clustering, CLI cluster/classify)."""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, silhouette_score, v_measure_score

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.cli import main
from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.errors import BnfkError
from bnfk_core.kernels.embed import kernel_pca
from bnfk_core.kernels.fisher import gram
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import write_model
from bnfk_core.network.model import fit

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")


# ---------------------------------------------------------------------- helpers
def brute_cost(X, labels):
    """Thesis eq. (5.2) term by term."""
    n = len(labels)
    total = 0.0
    for i in range(n):
        for j in range(n):
            if labels[i] == labels[j]:
                total += 0.5 * (abs(X[i, j]) - X[i, j])
            else:
                total += 0.5 * (abs(X[i, j]) + X[i, j])
    return total


def random_sym(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    return A + A.T


def planted(n_per=20, n_vars=12, noise=0.08, seed=0, with_class=True):
    """Two blocks: block b takes value b in every variable, except a few noisy cells (value 2)."""
    rng = np.random.default_rng(seed)
    codes = np.repeat([0, 1], n_per)[:, None].repeat(n_vars, axis=1)
    flip = rng.random(codes.shape) < noise
    codes = np.where(flip, 2, codes)
    truth = np.repeat([0, 1], n_per)
    names = [f"v{i}" for i in range(n_vars)]
    states = [("a", "b", "c")] * n_vars
    if with_class:
        codes = np.column_stack([codes, truth])
        names, states = names + ["class"], states + [("A", "B")]
    return from_codes(codes, names, states, "class" if with_class else None, "planted"), truth


@pytest.fixture(scope="module")
def hv():
    return load_csv(HV, class_column="class", missing_policy="category")


# ---------------------------------------------------------------------- cost and moves
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cost_equals_bruteforce_eq_5_2(seed):
    X = random_sym(13, seed)
    labels = np.random.default_rng(seed).integers(0, 3, 13)
    assert C.cc_cost(X, labels) == pytest.approx(brute_cost(X, labels), rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_move_deltas_equal_bruteforce_recomputation(seed):
    X = random_sym(11, seed)
    k = 4
    labels = np.random.default_rng(seed + 10).integers(0, k, 11)
    D = C.cc_move_deltas(X, labels, k)
    base = brute_cost(X, labels)
    for i in range(11):
        for c in range(k):
            moved = labels.copy()
            moved[i] = c
            assert D[i, c] == pytest.approx(brute_cost(X, moved) - base, abs=1e-9)


def test_local_search_ends_in_local_optimum_and_compiled_equals_numpy():
    X = C.adaptive_shift(random_sym(60, 5))
    a = C.correlation_clustering(X, 4, restarts=3, seed=3, shift="none")
    b = C.correlation_clustering(X, 4, restarts=3, seed=3, shift="none", compiled=False)
    assert np.array_equal(a.labels, b.labels) and a.restart_costs == pytest.approx(b.restart_costs)
    assert a.cost == pytest.approx(min(a.restart_costs)) == pytest.approx(C.cc_cost(X, a.labels))
    assert (C.cc_move_deltas(X, a.labels) >= -1e-9).all()


def test_adaptive_shift_makes_row_and_column_sums_zero():
    X = random_sym(30, 4) + 5.0
    Xs = C.adaptive_shift(X)
    assert np.allclose(Xs.sum(axis=1), 0, atol=1e-10) and np.allclose(Xs.sum(axis=0), 0, atol=1e-10)
    J = np.eye(30) - 1 / 30
    assert np.allclose(Xs, J @ X @ J)


def test_shift_auto_follows_the_thesis():
    K = gram(None, planted()[0].without_class(), kind="hamming")
    assert C.correlation_clustering(K, 2, kernel="hamming", shift="auto", restarts=2).transform == "adaptive"
    assert C.correlation_clustering(K, 2, kernel="fisher", shift="auto", restarts=2).transform == "none"


# ---------------------------------------------------------------------- planted partition
@pytest.mark.parametrize("algorithm", ["correlation", "spectral"])
@pytest.mark.parametrize("kernel", ["hamming", "scaled-hamming", "fisher"])
def test_planted_partition_is_recovered(algorithm, kernel):
    data, truth = planted()
    out = C.run_clustering(data, kernel, algorithm, seed=1, structure="empty", restarts=5)
    assert out["ari"] == pytest.approx(1.0)
    assert out["n_used"] == 2 and len(out["labels"]) == data.n_rows


@pytest.mark.parametrize("transform", C.TRANSFORMS)
def test_affinities_are_nonnegative_symmetric_and_recover_planted(transform):
    data, truth = planted()
    K = gram(None, data.without_class(), kind="scaled-hamming")
    A = C.affinity(K, transform)
    assert (A >= 0).all() and np.allclose(A, A.T)
    if transform != "shift-min":
        assert np.linalg.eigvalsh(A).min() > -1e-8  # PSD
    res = C.spectral_clustering(K, 2, transform=transform, seed=0)
    assert adjusted_rand_score(truth, res.labels) == pytest.approx(1.0)


def test_shift_min_is_k_minus_min():
    K = random_sym(10, 1)
    assert np.allclose(C.affinity(K, "shift-min"), K - K.min())
    P = np.abs(K)
    assert np.allclose(C.affinity(P, "shift-min"), P)


# ---------------------------------------------------------------------- metrics
def test_metrics_equal_sklearn_and_silhouette_uses_kernel_distance():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(50, 4))
    K = F @ F.T
    true = rng.integers(0, 3, 50)
    pred = rng.integers(0, 4, 50)
    m = C.clustering_metrics(true, pred, K)
    assert m["ari"] == pytest.approx(adjusted_rand_score(true, pred))
    assert m["ami"] == pytest.approx(adjusted_mutual_info_score(true, pred, average_method="max"))  # eq. C.4
    assert C.clustering_metrics(true, pred, ami_average="arithmetic")["ami"] == pytest.approx(
        adjusted_mutual_info_score(true, pred)
    )
    assert m["v_measure"] == pytest.approx(v_measure_score(true, pred))
    # kernel distance of a linear kernel is the Euclidean distance of the features
    assert m["silhouette"] == pytest.approx(silhouette_score(F, pred), abs=1e-9)


def test_metrics_skip_missing_labels_and_undefined_silhouette():
    true = np.array([0, 0, 1, 1, -1])
    pred = np.array([1, 1, 0, 0, 0])
    m = C.clustering_metrics(true, pred, np.eye(5))
    assert m["ari"] == pytest.approx(1.0) and m["n_labelled"] == 4
    assert C.kernel_silhouette(np.eye(3), [0, 0, 0]) is None
    assert C.clustering_metrics(None, pred)["ari"] is None


# ---------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("algorithm", ["correlation", "spectral"])
def test_same_seed_same_result(hv, algorithm):
    setup = C.kernel_setup(hv, "scaled-hamming")
    a = C.run_clustering(hv, "scaled-hamming", algorithm, setup=setup, seed=7, restarts=5)
    b = C.run_clustering(hv, "scaled-hamming", algorithm, setup=setup, seed=7, restarts=5)
    assert a["labels"] == b["labels"] and a["ari"] == b["ari"]


def test_house_votes_matches_thesis_table_5_1_for_scaled_hamming(hv):
    """Seed 0 lands on the thesis's mean (CC-SH 0.557, SC-SH 0.564) within 0.05."""
    setup = C.kernel_setup(hv, "scaled-hamming")
    cc = C.run_clustering(hv, "scaled-hamming", "correlation", setup=setup, seed=0, restarts=5)
    sc = C.run_clustering(hv, "scaled-hamming", "spectral", setup=setup, seed=0)
    assert abs(cc["ari"] - 0.557) < 0.05 and abs(sc["ari"] - 0.564) < 0.05


# ---------------------------------------------------------------------- label column
def test_label_column_is_never_a_feature():
    data, truth = planted()
    # a label identical to a feature would change the kernel if it were used
    setup = C.kernel_setup(data, "hamming")
    assert "class" not in setup.feature_columns
    assert np.allclose(setup.K, gram(None, data.without_class(), kind="hamming"))
    fs = C.kernel_setup(data, "fisher", structure="hc", score="bic")
    assert "class" not in fs.model.variables and "class" not in fs.feature_columns


def test_a_model_containing_the_label_is_refused():
    data, _ = planted()
    m = fit(DAG(data.variables), data)
    with pytest.raises(BnfkError, match="label column 'class'"):
        C.kernel_setup(data, "fisher", model=m)
    with pytest.raises(BnfkError, match="label column 'class'"):
        C.classify(data, "fisher", "knn", model=m, repeats=1)


def test_bad_requests_raise_one_sentence_errors():
    data, _ = planted()
    K = gram(None, data.without_class(), kind="hamming")
    with pytest.raises(BnfkError, match="clusters"):
        C.correlation_clustering(K, 0)
    with pytest.raises(BnfkError, match="Cannot make 100 clusters"):
        C.spectral_clustering(K, 100)
    with pytest.raises(BnfkError, match="transform"):
        C.affinity(K, "log")
    with pytest.raises(BnfkError, match="algorithm"):
        C.cluster(K, 2, "kmeans")
    with pytest.raises(BnfkError, match="number of clusters"):
        C.run_clustering(planted(with_class=False)[0], "hamming", "spectral")


# ---------------------------------------------------------------------- classification
@pytest.mark.parametrize("kernel", ["hamming", "scaled-hamming", "fisher"])
@pytest.mark.parametrize("classifier", ["knn", "svm"])
def test_classification_on_separable_toy_problem(kernel, classifier):
    data, _ = planted(n_per=30, noise=0.05)
    res = C.classify(data, kernel, classifier, repeats=3, seed=0, structure="empty")
    d = res.to_dict()
    assert d["accuracy"] == 1.0 and len(d["accuracy_per_repeat"]) == 3
    assert d["log_loss"] < 0.35 and d["seeds"] == [0, 1, 2]
    assert (
        C.classify(data, kernel, classifier, repeats=3, seed=0, structure="empty").to_dict()["log_loss"]
        == d["log_loss"]
    )


def test_knn_uses_kernel_distance_with_uniform_votes():
    # 1-D points; linear kernel -> Euclidean distance
    x = np.array([0.0, 1.0, 2.0, 10.0, 11.0, 12.0])
    Ktr = np.outer(x, x)
    Kte = np.outer([1.4, 10.6], x)
    dte = np.array([1.4, 10.6]) ** 2
    P = C.knn_proba(Ktr, Kte, dte, np.array([0, 0, 0, 1, 1, 1]), np.array([0, 1]), 3)
    assert np.allclose(P, [[1, 0], [0, 1]])
    P = C.knn_proba(Ktr, Kte, dte, np.array([0, 0, 0, 1, 1, 1]), np.array([0, 1]), 4)
    assert np.allclose(P, [[0.75, 0.25], [0.25, 0.75]])


# ---------------------------------------------------------------------- views
def test_contingency_ordering_embedding(hv):
    hv = hv.subset(np.arange(150))
    setup = C.kernel_setup(hv, "hamming")
    res = C.correlation_clustering(setup.K, 2, restarts=3)
    tab = C.contingency(hv.labels(), res.labels, hv.states[hv.index("class")])
    assert tab.values.sum() == hv.n_rows and list(tab.columns) == list(hv.states[hv.index("class")])
    order = C.cluster_ordering(res.labels, setup.K)
    assert sorted(order) == list(range(hv.n_rows))
    lab = res.labels[order]
    assert (np.diff(lab) != 0).sum() == res.n_used - 1  # one contiguous run per cluster
    assert np.allclose(C.embedding(setup.K), kernel_pca(setup.K, 2))


def test_compare_has_table_5_1_layout(hv):
    small = hv.subset(np.arange(120))
    steps = []
    tab = C.compare(
        small,
        kernels=("hamming", "scaled-hamming"),
        runs=2,
        restarts=3,
        progress=lambda f, m: steps.append(f),
    )
    assert list(tab["combination"]) == ["CC-H", "SC-H", "CC-SH", "SC-SH"]
    assert {"ari", "ami", "v_measure", "ari_std"} <= set(tab.columns)
    assert steps[-1] == pytest.approx(1.0)


# ---------------------------------------------------------------------- CLI
def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_cluster_json(capsys):
    code, out, _ = run(
        capsys,
        "cluster",
        HV,
        "--label-column",
        "class",
        "--missing-policy",
        "category",
        "--kernel",
        "scaled-hamming",
        "--algorithm",
        "correlation",
        "--restarts",
        "5",
        "--seed",
        "0",
    )
    assert code == 0
    res = json.loads(out)
    assert {"ari", "ami", "v_measure", "labels", "seconds", "silhouette", "n_clusters"} <= set(res)
    assert len(res["labels"]) == 435 and res["n_clusters"] == 2 and "class" not in res["features"]


def test_cli_cluster_fisher_with_model_and_classify(capsys, tmp_path):
    d = load_csv(HV, missing_policy="category", drop_columns=["class"])
    path = tmp_path / "m.bif"
    write_model(fit(DAG(d.variables, [("crime", "el-salvador-aid")]), d, method="cnml"), path)
    code, out, _ = run(
        capsys,
        "cluster",
        HV,
        "--label-column",
        "class",
        "--missing-policy",
        "category",
        "--kernel",
        "fisher",
        "--model",
        path,
        "--algorithm",
        "spectral",
        "--transform",
        "cosine",
        "--clusters",
        "3",
    )
    res = json.loads(out)
    assert code == 0 and res["structure"] == "given" and res["n_arcs"] == 1 and res["n_clusters"] == 3
    code, out, _ = run(
        capsys,
        "classify",
        HV,
        "--label-column",
        "class",
        "--missing-policy",
        "category",
        "--kernel",
        "hamming",
        "--classifier",
        "knn",
        "--repeats",
        "2",
        "--quiet",
    )
    res = json.loads(out)
    assert code == 0 and {
        "accuracy",
        "log_loss",
        "accuracy_std",
        "log_loss_std",
        "accuracy_per_repeat",
        "log_loss_per_repeat",
    } <= set(res)
    assert len(res["accuracy_per_repeat"]) == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["cluster", HV, "--label-column", "nope"], "nope"),
        (["cluster", HV, "--clusters", "0"], "--clusters"),
        (["cluster", HV, "--label-column", "class", "--clusters", "1000"], "1000 clusters"),
        (["cluster", HV, "--kernel", "gauss"], "invalid choice"),
        (["cluster", HV], "--clusters N or --label-column"),
        (["classify", HV], "--label-column"),
        (["classify", HV, "--label-column", "class", "--repeats", "0"], "--repeats"),
        (["cluster", HV, "--label-column", "class", "--model", "/nonexistent/m.bif"], "m.bif"),
    ],
)
def test_cli_errors_exit_2_with_one_line(capsys, argv, message):
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_cli_model_with_label_column_exits_2(capsys, tmp_path):
    d = load_csv(HV, missing_policy="category")
    path = tmp_path / "withclass.bif"
    write_model(fit(DAG(d.variables), d), path)
    code, _, err = run(
        capsys,
        "cluster",
        HV,
        "--label-column",
        "class",
        "--missing-policy",
        "category",
        "--kernel",
        "fisher",
        "--model",
        path,
    )
    assert code == 2 and "label column 'class'" in err


def test_classify_with_fixed_dag_refits_per_split_and_refuses_the_label():
    data, _ = planted(n_per=20, noise=0.2)
    feats = data.without_class()
    a = C.classify(data, "fisher", "svm", repeats=2, dag=DAG(feats.variables), params="cnml").to_dict()
    b = C.classify(data, "fisher", "svm", repeats=2, structure="empty", params="cnml").to_dict()
    assert a["log_loss_per_repeat"] == b["log_loss_per_repeat"]
    with pytest.raises(BnfkError, match="label column 'class'"):
        C.classify(data, "fisher", "knn", repeats=1, dag=DAG(data.variables))


def test_knn_by_similarity_takes_the_largest_kernel_values():
    # row 0 has a huge self-similarity: far by distance, most similar by kernel value
    Ktr = np.array([[100.0, 0, 0], [0, 1, 0.9], [0, 0.9, 1]])
    Kte = np.array([[5.0, 0.5, 0.5]])
    y = np.array([0, 1, 1])
    by_sim = C.knn_proba(Ktr, Kte, np.array([1.0]), y, np.array([0, 1]), 1, "similarity")
    by_dist = C.knn_proba(Ktr, Kte, np.array([1.0]), y, np.array([0, 1]), 1, "distance")
    assert np.allclose(by_sim, [[1, 0]]) and np.allclose(by_dist, [[0, 1]])


# ---------------------------------------------------------------------- the app's building blocks
@pytest.mark.parametrize("seed", [0, 5])
def test_feature_network_is_the_network_the_clustering_learns(hv, seed):
    from bnfk_core.learning.structure import learn_structure

    m = C.feature_network(hv, structure="hc", score="qnml", params="cnml", seed=seed)
    # independent: learn hill climbing on the feature columns and fit cNML CPTs directly
    feats = hv.without_class()
    ref = fit(
        learn_structure(feats, "hc", score="qnml", seed=seed, class_column=None).dag, feats, method="cnml"
    )
    assert m.dag.to_dict() == ref.dag.to_dict() and "class" not in m.variables
    for a, b in zip(m.cpts, ref.cpts):
        np.testing.assert_allclose(a, b, rtol=0, atol=0)
    # the clustering given this network equals the one that learns it (what the CLI's --seed does)
    given = C.run_clustering(hv, "fisher", "correlation", model=m, restarts=3, seed=seed)
    learned = C.run_clustering(
        hv, "fisher", "correlation", structure="hc", score="qnml", params="cnml", restarts=3, seed=seed
    )
    assert given["labels"] == learned["labels"] and given["ari"] == learned["ari"]
    with pytest.raises(BnfkError, match="not built from a network"):
        C.feature_network(hv, kernel="hamming")


def test_classification_table_knn_hamming_equals_sklearn_hamming_metric():
    """kNN on the Hamming kernel distance sqrt(2 - 2 matches/d) ranks neighbours as the Hamming metric does:
    the table's numbers equal scikit-learn's KNeighborsClassifier(metric="hamming") on the same splits."""
    from sklearn.metrics import accuracy_score, log_loss
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import KNeighborsClassifier

    data, _ = planted(n_per=25, noise=0.55, seed=3)
    steps = []
    tab = C.classification_table(
        data, ["hamming"], ["knn"], repeats=3, seed=4, progress=lambda f, msg: steps.append(f)
    )
    assert list(tab.columns) == [
        "classifier",
        "kernel",
        "accuracy",
        "accuracy_std",
        "log_loss",
        "log_loss_std",
    ]
    assert tab.iloc[0]["classifier"] == "kNN (k = 7, uniform)" and tab.iloc[0]["kernel"] == "Hamming"
    X, y = data.without_class().codes, data.labels()
    acc, ll = [], []
    for r in range(3):
        tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=4 + r, shuffle=True)
        knn = KNeighborsClassifier(n_neighbors=7, metric="hamming", algorithm="brute").fit(X[tr], y[tr])
        P = np.clip(knn.predict_proba(X[te]), 1e-15, 1)
        acc.append(accuracy_score(y[te], knn.classes_[P.argmax(axis=1)]))
        ll.append(log_loss(y[te], P / P.sum(axis=1, keepdims=True), labels=knn.classes_))
    assert tab.iloc[0]["accuracy"] == pytest.approx(np.mean(acc)) and tab.iloc[0][
        "accuracy_std"
    ] == pytest.approx(np.std(acc))
    assert tab.iloc[0]["log_loss"] == pytest.approx(np.mean(ll)) and tab.iloc[0][
        "log_loss_std"
    ] == pytest.approx(np.std(ll))
    assert steps[-1] == pytest.approx(1.0)


def test_classification_table_keeps_a_given_network_and_its_estimator():
    data, _ = planted(n_per=20, noise=0.2)
    feats = data.without_class()
    m = fit(DAG(feats.variables, [(feats.variables[0], feats.variables[1])]), feats, method="smoothed")
    tab = C.classification_table(
        data, ["fisher", "scaled-hamming"], ["svm", "knn"], repeats=2, seed=1, model=m
    )
    assert list(tab["kernel"]) == ["Fisher", "Fisher", "Scaled Hamming", "Scaled Hamming"]
    assert list(tab["classifier"]) == ["SVM (C = 1, precomputed kernel)", "kNN (k = 7, uniform)"] * 2
    want = C.classify_many(data, "fisher", ("svm", "knn"), repeats=2, seed=1, dag=m.dag, params="smoothed")
    sh = C.classify_many(data, "scaled-hamming", ("svm", "knn"), repeats=2, seed=1)
    for line, res in zip(tab.itertuples(index=False), [want["svm"], want["knn"], sh["svm"], sh["knn"]]):
        assert line.accuracy == res.to_dict()["accuracy"] and line.log_loss == res.to_dict()["log_loss"]


def test_knn_neighbour_ties_do_not_follow_rounding_noise():
    """A kernel with few distinct values has exactly tied neighbours; perturbing it at the 1e-15 level
    (another summation order) must not change a single kNN probability."""
    from bnfk_core.analyses.cluster.classification import knn_proba as _knn_proba

    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(60, 4))
    K = (X[:, None, :] == X[None, :, :]).mean(axis=2)  # Hamming kernel: 5 distinct values
    y = (X[:, 0] ^ (rng.random(60) < 0.2)).astype(int)
    tr, te = np.arange(40), np.arange(40, 60)
    classes = np.array([0, 1])
    for by in ("distance", "similarity"):
        P0 = _knn_proba(K[np.ix_(tr, tr)], K[np.ix_(te, tr)], np.diag(K)[te], y[tr], classes, 7, by)
        for s in range(5):
            noise = np.random.default_rng(s).normal(scale=1e-15, size=K.shape)
            Kn = K + (noise + noise.T) / 2
            P1 = _knn_proba(Kn[np.ix_(tr, tr)], Kn[np.ix_(te, tr)], np.diag(Kn)[te], y[tr], classes, 7, by)
            assert np.array_equal(P0, P1), by
