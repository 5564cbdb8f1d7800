"""The power- and L2-normalised Fisher kernel (bnfk_core.kernels.fisher_normalized).

Reference: an independent brute force.  The score of log p(d) in the square-root coordinates
eta_ijk = 2 sqrt(theta_ijk) (one coordinate per CPT entry), projected on the tangent space of each sphere
|eta_ij| = 2; the Fisher information I = sum_d p(d) s(d) s(d)^T enumerated over the whole joint; its
pseudo-inverse square root from an eigendecomposition; phi_bf(x) = I^{+1/2} E[s(x) | observed]; then the
signed power and the L2 normalisation written out by hand.
"""

from __future__ import annotations

import helpers_bruteforce as bf
import numpy as np
import pytest

from bnfk_core.data.table import from_codes
from bnfk_core.errors import KernelError
from bnfk_core.kernels import fisher as kernels
from bnfk_core.kernels import fisher_normalized as fn
from bnfk_core.kernels.features import features
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit
from bnfk_core.registry import KERNELS


# ---------------------------------------------------------------------- brute force
def eta_score(model, d) -> np.ndarray:
    """d/d eta log p(d), eta_ijk = 2 sqrt(theta_ijk), projected on the spheres' tangent spaces (columns
    offset_i + j r_i + k, the documented CPT layout)."""
    out = []
    for i, t in enumerate(model.cpts):
        q, r = t.shape
        block = np.zeros((q, r))
        j = bf.pconf(model, i, d)
        eta = 2.0 * np.sqrt(t[j])
        g = np.zeros(r)
        g[int(d[i])] = 2.0 / eta[int(d[i])]  # d/d eta_k of log(eta_x^2 / 4)
        u = eta / np.linalg.norm(eta)
        block[j] = g - (g @ u) * u  # tangent projection
        out.append(block.ravel())
    return np.concatenate(out)


class BruteNormalized:
    def __init__(self, model):
        self.model = model
        D, P = bf.joint_table(model)
        S = np.array([eta_score(model, d) for d in D])
        info = S.T @ (P[:, None] * S)
        w, V = np.linalg.eigh(info)
        keep = w > 1e-10 * w.max()
        self.root = (V[:, keep] / np.sqrt(w[keep])) @ V[:, keep].T  # I^{+1/2}
        table = bf.joint_table(model)
        self.scale = np.sqrt(
            np.concatenate(
                [
                    (t * bf.parent_marginal_vector(model, i, table)[:, None]).ravel()
                    for i, t in enumerate(model.cpts)
                ]
            )
        )

    def phi(self, row) -> np.ndarray:
        C, w = bf.completion_weights(self.model, row)
        s = sum(wk * eta_score(self.model, c) for c, wk in zip(C, w))
        v = self.root @ s
        v[np.abs(v) * self.scale < 1e-12] = 0.0  # rounding noise where the exact value is 0 (ZERO_TOL)
        return v

    def psi(self, row, alpha) -> np.ndarray:
        u = np.array([np.sign(z) * abs(z) ** alpha for z in self.phi(row)])
        n = np.sqrt(np.sum(u * u))
        return u / n if n > 0 else u


def model_from(nodes, arcs, cards, seed):
    return bf.random_model(DAG(nodes, arcs), cards, seed=seed)


MODELS = [
    (["a", "b", "c"], [("a", "b"), ("b", "c")], [2, 3, 2]),  # chain
    (["a", "b", "c"], [("a", "c"), ("b", "c")], [3, 2, 2]),  # v-structure
    (["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], [2, 2, 3, 2]),
    (["a", "b"], [], [3, 4]),  # empty network
]


@pytest.mark.parametrize("case", range(len(MODELS)))
@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.25])
def test_features_match_brute_force_normalisation(case, alpha):
    m = model_from(*MODELS[case], seed=case)
    B = BruteNormalized(m)
    D = bf.all_configs(m)
    X = np.vstack([D, bf.random_rows(m, 12, seed=case, missing=0.35)])
    # the Fisher features are I^{+1/2} s_eta: the coordinates the power map acts on
    np.testing.assert_allclose(features(m, X).toarray(), np.array([B.phi(x) for x in X]), rtol=0, atol=1e-9)
    got = fn.normalized_features(m, X, alpha).toarray()
    want = np.array([B.psi(x, alpha) for x in X])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("case", range(len(MODELS)))
def test_gram_is_features_inner_products_and_cross_gram(case):
    m = model_from(*MODELS[case], seed=10 + case)
    X = bf.random_rows(m, 20, seed=case, missing=0.2)
    Y = bf.random_rows(m, 7, seed=case + 50, missing=0.2)
    P, Q = fn.normalized_features(m, X, 0.4), fn.normalized_features(m, Y, 0.4)
    np.testing.assert_allclose(fn.normalized_gram(m, X, alpha=0.4), (P @ P.T).toarray(), atol=1e-12)
    np.testing.assert_allclose(fn.normalized_gram(m, X, Y, alpha=0.4), (P @ Q.T).toarray(), atol=1e-12)
    # the registered kernel's Gram and contributions (they sum to K)
    fk = fn.NormalizedFisherKernel(m, 0.4)
    K = fk.gram(X)
    np.testing.assert_allclose(K, (P @ P.T).toarray(), atol=1e-12)
    for a, b in [(0, 1), (2, 2), (3, 9)]:
        assert fk.contributions(X[a], X[b]).sum() == pytest.approx(K[a, b], abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_properties_psd_symmetric_unit_diagonal_bounded(seed):
    rng = np.random.default_rng(seed)
    dag = bf.random_dag(5, seed)
    m = bf.random_model(dag, list(rng.integers(2, 4, 5)), seed=seed)
    X = bf.random_rows(m, 40, seed=seed)
    Xm = bf.random_rows(m, 40, seed=seed + 1, missing=0.3)
    for alpha in (1.0, 0.5, 0.2):
        K = fn.normalized_gram(m, np.vstack([X, Xm]), alpha=alpha)
        assert np.array_equal(K, K.T)
        assert np.linalg.eigvalsh(K).min() > -1e-10
        assert np.abs(K).max() <= 1 + 1e-12
        np.testing.assert_allclose(np.diag(K)[:40], 1.0, atol=1e-12)  # complete rows
        d = np.diag(K)[40:]  # incomplete rows: 1, or 0 if phi = 0
        assert np.all((np.abs(d - 1) < 1e-12) | (d == 0))


@pytest.mark.parametrize("case", range(len(MODELS)))
def test_alpha_one_is_the_cosine_normalised_fisher_kernel(case):
    m = model_from(*MODELS[case], seed=20 + case)
    X = bf.random_rows(m, 25, seed=case, missing=0.25)
    want = bf.BruteFisher(m).gram(X)  # s^T I^-1 s in the free parametrisation
    ok = np.diag(want) > 1e-20  # rows whose expected score is not 0 (not all blanks)
    d = np.sqrt(np.diag(want)[ok])
    got = fn.normalized_gram(m, X, alpha=1.0)
    np.testing.assert_allclose(got[np.ix_(ok, ok)], want[np.ix_(ok, ok)] / np.outer(d, d), atol=1e-9)
    np.testing.assert_allclose(
        got[np.ix_(ok, ok)], kernels.gram(m, X, normalize=True)[np.ix_(ok, ok)], atol=1e-12
    )
    assert not np.any(got[~ok])  # a row of blanks: psi = 0


def test_power_map_keeps_sparsity_and_zero_rows():
    m = model_from(*MODELS[2], seed=3)
    C = bf.random_rows(m, 10, seed=0)
    Phi, Psi = features(m, C), fn.normalized_features(m, C, 0.3)
    assert np.array_equal(Psi.indptr, Phi.indptr) and np.array_equal(
        Psi.indices, Phi.indices
    )  # complete rows
    assert Psi.nnz == sum(t.shape[1] for t in m.cpts) * 10  # sum_i r_i a row
    X = np.vstack([bf.random_rows(m, 10, seed=1, missing=0.3), [[-1, -1, -1, -1]]])
    Phi, Psi = features(m, X).toarray(), fn.normalized_features(m, X, 0.3).toarray()
    assert np.all((Psi == 0) | (np.sign(Psi) == np.sign(Phi)))  # zero stays zero, signs kept
    assert not np.any(Psi[10])  # E[phi] = 0 for a row of blanks


def test_incomplete_rows_use_the_completed_expectation_not_the_expected_normalisation():
    """psi(E[phi | observed]) (what we compute) differs from E[psi | observed] (the marginalised power
    map)."""
    m = model_from(*MODELS[0], seed=4)
    B = BruteNormalized(m)
    row = np.array([1, -1, 0])
    C, w = bf.completion_weights(m, row)
    expected_psi = sum(wk * B.psi(c, 0.5) for c, wk in zip(C, w))
    got = fn.normalized_features(m, row[None, :], 0.5).toarray()[0]
    np.testing.assert_allclose(got, B.psi(row, 0.5), atol=1e-9)
    assert np.abs(got - expected_psi).max() > 1e-3


# ---------------------------------------------------------------------- what it loses
def _equivalent_pair(seed):
    """Two Markov-equivalent DAGs (a covered arc reversed) with BDeu CPTs fitted to the same data."""
    rng = np.random.default_rng(seed)
    n = 300
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 3
    c = np.where(rng.random(n) < 0.7, b % 2, rng.integers(0, 2, n))
    codes = np.column_stack([a, b, c])
    data = from_codes(codes, ["a", "b", "c"], [["0", "1", "2"], ["0", "1", "2"], ["0", "1"]])
    m1 = fit(DAG(["a", "b", "c"], [("a", "b"), ("b", "c")]), data, method="bdeu")
    m2 = fit(DAG(["a", "b", "c"], [("b", "a"), ("b", "c")]), data, method="bdeu")
    return m1, m2, codes[:60]


@pytest.mark.parametrize("seed", range(3))
def test_equivalence_invariance_holds_for_fisher_and_alpha_one_but_not_below(seed):
    m1, m2, X = _equivalent_pair(seed)
    # the paper's Theorem 4 (BDeu is likelihood-equivalent): the same Fisher Gram, so the same norms ||phi||
    np.testing.assert_allclose(kernels.gram(m2, X), kernels.gram(m1, X), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        fn.normalized_gram(m2, X, alpha=1.0), fn.normalized_gram(m1, X, alpha=1.0), atol=1e-9
    )
    # the power map does not commute with the isometry between the two feature maps
    diff = np.abs(fn.normalized_gram(m2, X, alpha=0.5) - fn.normalized_gram(m1, X, alpha=0.5)).max()
    assert diff > 1e-3


def test_mean_features_no_longer_depend_on_family_counts_only():
    """Two sets with the same family counts: equal mean phi (paper eq. 10's count formula), different mean
    psi."""
    dag = DAG(["a", "b"], [])
    states = [["0", "1"], ["0", "1"]]
    m = fit(
        dag,
        from_codes(np.array([[0, 0], [1, 1], [1, 0], [1, 1], [0, 1], [1, 1]]), ["a", "b"], states),
        method="bdeu",
    )
    X1, X2 = np.array([[0, 0], [1, 1]]), np.array([[0, 1], [1, 0]])
    np.testing.assert_allclose(features(m, X1).mean(axis=0), features(m, X2).mean(axis=0), atol=1e-12)
    d = np.asarray(
        fn.normalized_features(m, X1, 0.5).mean(axis=0) - fn.normalized_features(m, X2, 0.5).mean(axis=0)
    )
    assert np.abs(d).max() > 1e-3


# ---------------------------------------------------------------------- registry, options, CLI
def _sample():
    from pathlib import Path

    from bnfk_core.data.table import load_csv

    return load_csv(
        Path(__file__).resolve().parents[1] / "sample_data" / "soybean_small.csv", class_column="class"
    )


def test_registered_with_its_facts():
    spec = KERNELS[fn.FISHER_NORMALIZED]
    assert spec.psd is True and spec.uses_network and spec.family == "fisher"
    assert "Perronnin" in spec.description and "alpha" in spec.description
    assert (
        list(KERNELS).index(fn.FISHER_NORMALIZED) == list(KERNELS).index("hamming") + 1
    )  # after the thesis's three


def _default_by_hand(X, k, seed=0):
    """The documented default from its pieces: (1 - w) K_alpha of the latent class network (EM with k classes
    on the rows with blanks read as missing, one pseudo-count) + w K_0.02 of the empty network (BDeu 5, rows
    as read, intra-normalised per variable)."""
    from bnfk_core.lca.model import fit_lca
    from bnfk_core.network.model import fit as fit_cpts

    rows = fn.blanks_as_missing(X)
    lca = fit_lca(rows, k, fn.LATENT_STARTS, seed).to_bayesnet(pseudo_count=1.0)
    empty = fit_cpts(DAG(tuple(X.variables)), X, method="bdeu", pseudo_count=5.0)
    w = fn.DEFAULT_NETWORK["empty_weight"]
    K = (1 - w) * fn.normalized_gram(lca, rows, alpha=fn.DEFAULT_ALPHA) + w * fn.normalized_gram(
        empty, X, alpha=0.02, intra=fn.DEFAULT_NETWORK["empty_intra"]
    )
    return K, lca, empty


def test_fit_uses_the_given_model_or_the_default_network():
    d = _sample().without_class()
    fk = KERNELS[fn.FISHER_NORMALIZED].fit(d, n_clusters=3)
    K, lca, empty = _default_by_hand(d, 3)
    assert fk.alpha == fn.DEFAULT_ALPHA and fk.weight == 0.25 and fk.blanks == "missing"
    assert (
        fk.model.fit_info["hidden"]
        and fk.model.fit_info["classes"] == 3
        and fk.variables == tuple(d.variables)
    )
    np.testing.assert_allclose(fk.gram(d), K, atol=1e-12)
    given = KERNELS[fn.FISHER_NORMALIZED].fit(d, model=empty, alpha=0.3)
    assert given.structure == "given" and given.alpha == 0.3 and given.beside is None
    np.testing.assert_allclose(
        kernels.gram(empty, d, kind=fn.FISHER_NORMALIZED),
        fn.normalized_gram(empty, d, alpha=fn.DEFAULT_ALPHA),
        atol=1e-12,
    )
    tree = KERNELS[fn.FISHER_NORMALIZED].fit(d, structure="tree", params="smoothed")
    assert tree.model.dag.n_arcs > 0 and tree.beside is None
    assert tree.params == "smoothed" and tree.structure == "tree/bic"
    alone = KERNELS[fn.FISHER_NORMALIZED].fit(d, structure=fn.LATENT_CLASSES, classes=3)
    np.testing.assert_allclose(
        alone.gram(d), fn.normalized_gram(lca, fn.blanks_as_missing(d), alpha=0.25), atol=1e-12
    )
    # without a number of classes: the least BIC for K = 1..LATENT_KMAX
    from bnfk_core.lca.model import fit_lca

    bics = [
        fit_lca(fn.blanks_as_missing(d), k, fn.LATENT_STARTS, 0).bic for k in range(1, fn.LATENT_KMAX + 1)
    ]
    assert KERNELS[fn.FISHER_NORMALIZED].fit(d).model.fit_info["classes"] == 1 + int(np.argmin(bics))


def test_default_kernel_features_gram_and_contributions_agree():
    d = _sample().without_class()
    fk = fn.fit_fisher_normalized(d, n_clusters=4, seed=1)
    F = fk.features(d)
    K = fk.gram(d)
    np.testing.assert_allclose((F @ F.T).toarray(), K, atol=1e-12)
    np.testing.assert_allclose(np.diag(K), 1.0, atol=1e-12)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    for a, b in [(0, 1), (5, 5), (7, 30)]:
        c = fk.contributions(d.subset([a]), d.subset([b]))
        assert c.shape == (d.n_vars,) and c.sum() == pytest.approx(K[a, b], abs=1e-12)
    np.testing.assert_allclose(fk.gram(d.subset([0, 1, 2]), d.subset([3, 4])), K[:3][:, 3:5], atol=1e-12)


def test_blanks_as_missing_drops_the_blank_category():
    from bnfk_core.data.table import from_codes as fc

    X = fc(np.array([[0, 1], [1, 2], [2, 0], [-1, 1]]), ["a", "b"], [("x", "?", "y"), ("p", "q", "?")])
    got = fn.blanks_as_missing(X)
    assert got.states == (("x", "y"), ("p", "q"))
    np.testing.assert_array_equal(got.codes, [[0, 1], [-1, -1], [1, 0], [-1, 1]])
    plain = fc(np.array([[0, 1]]), ["a", "b"], [("x", "y"), ("p", "q")])
    assert fn.blanks_as_missing(plain) is plain
    with pytest.raises(KernelError, match="blanks"):
        fn.fit_fisher_normalized(X, blanks="drop")
    with pytest.raises(KernelError, match="weight"):
        fn.fit_fisher_normalized(X, empty_weight=1.0)


@pytest.mark.parametrize("alpha", [0, -0.5, 1.5, "x", float("nan")])
def test_bad_alpha_is_one_sentence(alpha):
    with pytest.raises(KernelError, match="alpha"):
        KERNELS[fn.FISHER_NORMALIZED].fit(_sample().without_class(), alpha=alpha)


def _cli(argv):
    from bnfk_core.cli.main import build_parser

    args = build_parser("cluster").parse_args(["cluster", *argv])
    return args.func(args)


def test_cli_cluster_with_the_normalised_kernel(tmp_path):
    from pathlib import Path

    from sklearn.metrics import adjusted_rand_score

    from bnfk_core.analyses.cluster.clustering import cluster

    path = str(Path(__file__).resolve().parents[1] / "sample_data" / "soybean_small.csv")
    d = _sample()
    out = _cli(
        [
            path,
            "--label-column",
            "class",
            "--kernel",
            "fisher-normalized",
            "--algorithm",
            "correlation",
            "--seed",
            "1",
            "--alpha",
            "0.25",
            "--restarts",
            "5",
        ]
    )
    assert out["kernel"] == "fisher-normalized" and out["structure"] == "latent classes + empty"
    assert out["params"] == "EM + 1 pseudo-count"
    # the same clustering computed by hand from the documented pieces (the latent class network has k classes)
    fk = fn.fit_fisher_normalized(d.without_class(), alpha=0.25, seed=1, n_clusters=4)
    lab = cluster(
        fk.gram(d.without_class()), 4, "correlation", kernel=fn.FISHER_NORMALIZED, restarts=5, seed=1
    ).labels
    assert out["labels"] == lab.tolist()
    assert out["ari"] == pytest.approx(adjusted_rand_score(d.labels(), lab))
    # the feature-space path runs on psi
    km = _cli(
        [path, "--label-column", "class", "--kernel", "fisher-normalized", "--algorithm", "kmeans-features"]
    )
    assert (
        km["feature_nnz"]
        == fn.fit_fisher_normalized(d.without_class(), n_clusters=4).features(d.without_class()).nnz
    )
    # every default: auto runs Ward on K (the kernel's measured default)
    dflt = _cli([path, "--label-column", "class", "--kernel", "fisher-normalized", "--seed", "2"])
    assert dflt["algorithm_chosen"] == "ward" and dflt["structure"] == "latent classes + empty"
    assert dflt["recipe"] is None and dflt["n_arcs"] == d.n_vars - 1  # C -> every feature column
    from sklearn.cluster import AgglomerativeClustering

    fk = fn.fit_fisher_normalized(d.without_class(), seed=2, n_clusters=4)
    want = AgglomerativeClustering(4, linkage="ward").fit_predict(fk.features(d.without_class()).toarray())
    assert adjusted_rand_score(want, dflt["labels"]) == 1.0
    # the Fisher kernel follows the default recipe
    from bnfk_core.learning.recipe import DEFAULT_RECIPE

    f = _cli([path, "--label-column", "class", "--kernel", "fisher"])
    assert f["structure"] == f"{DEFAULT_RECIPE.structure}/{DEFAULT_RECIPE.score}"
    assert f["params"] == DEFAULT_RECIPE.params and f["algorithm_chosen"] == "correlation"


def test_cli_classify_takes_the_power(capsys):
    """``classify --alpha`` reaches the kernel: one SVM split computed by hand with K_alpha fitted on the
    training rows; its log loss depends on alpha, so an ignored --alpha would fail."""
    from pathlib import Path

    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split

    from bnfk_core.analyses.cluster.classification import svm_proba
    from bnfk_core.cli.main import build_parser, main

    path = str(Path(__file__).resolve().parents[1] / "sample_data" / "soybean_small.csv")
    argv = [
        "classify",
        path,
        "--label-column",
        "class",
        "--kernel",
        "fisher-normalized",
        "--classifier",
        "svm",
        "--repeats",
        "1",
        "--seed",
        "3",
        "--structure",
        "empty",
        "--score",
        "bic",
        "--params",
        "bdeu",
        "--quiet",
    ]
    d = _sample()
    X, y = d.without_class(), d.labels()
    classes = np.unique(y)
    tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=3, shuffle=True)

    def by_hand(alpha):
        fk = fn.fit_fisher_normalized(
            X.subset(tr), alpha=alpha, structure="empty", score="bic", params="bdeu", seed=3
        )
        P = svm_proba(fk.gram(X.subset(tr)), fk.gram(X.subset(te), X.subset(tr)), y[tr], classes, 1.0)
        P = np.clip(P, 1e-15, 1.0)
        return log_loss(y[te], P / P.sum(axis=1, keepdims=True), labels=classes)

    losses = {}
    for alpha in ("0.5", None):
        args = build_parser("classify").parse_args(argv + (["--alpha", alpha] if alpha else []))
        losses[alpha] = args.func(args)["log_loss"]
        assert losses[alpha] == pytest.approx(by_hand(float(alpha) if alpha else fn.DEFAULT_ALPHA), rel=1e-9)
    assert abs(losses["0.5"] - losses[None]) > 1e-6
    # validated like the app's slider: outside (0, 1] -> one error line, exit 2
    for bad in ("0", "1.5", "-0.1", "nan", "x"):
        assert main(argv + ["--alpha", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "--alpha" in err and err.count("\n") == 1


def test_cli_help_states_the_default_power():
    from bnfk_core.cli.cluster import ALPHA_DEFAULT_TEXT

    assert float(ALPHA_DEFAULT_TEXT) == fn.DEFAULT_ALPHA


def test_app_settings_default_to_the_measured_alpha():
    from bnfk_core.serving.settings import SETTINGS

    assert SETTINGS["kernel_alpha"].default == fn.DEFAULT_ALPHA == SETTINGS["clu_alpha"].default


def test_small_alpha_on_the_empty_network_tends_to_an_affine_hamming_kernel():
    """alpha -> 0: sign(phi) is +1 at the observed state and -1 at the others (empty network), so
    K_0(x, y) = (sum_i (r_i - 4) + 4 #matches) / sum_i r_i -- the limit the docs describe."""
    rng = np.random.default_rng(0)
    cards = [2, 3, 4]
    m = bf.random_model(DAG(["a", "b", "c"]), cards, seed=2)
    X = np.column_stack([rng.integers(0, r, 30) for r in cards])
    K = fn.normalized_gram(m, X, alpha=1e-7)
    matches = (X[:, None, :] == X[None, :, :]).sum(axis=2)
    want = (sum(r - 4 for r in cards) + 4 * matches) / sum(cards)
    np.testing.assert_allclose(K, want, atol=1e-5)


def test_kernel_zoo_keeps_earlier_runs_of_the_same_protocol_only(tmp_path):
    import json

    import pandas as pd

    from bnfk_core.reproduce import kernel_zoo as kz

    (tmp_path / kz.ZOO_DIR).mkdir()
    rows = [
        {
            "dataset": "zoo",
            "seed": s,
            "kernel": k,
            "label": k,
            "family": "measure",
            "rows": 101,
            "network": "",
            "n_arcs": float("nan"),
            "learn_seconds": 0.0,
            **{m: 0.5 for m in kz.METRICS},
            "seconds": 1.0,
        }
        for s in (0, 1)
        for k in ("overlap", "eskin")
    ] + [
        {
            "dataset": "car",
            "seed": 0,
            "kernel": "overlap",
            "label": "o",
            "family": "measure",
            "rows": 300,
            "network": "",
            "n_arcs": float("nan"),
            "learn_seconds": 0.0,
            **{m: 0.1 for m in kz.METRICS},
            "seconds": 1.0,
        }
    ]
    pd.DataFrame(rows).to_csv(tmp_path / kz.ZOO_DIR / "kernel_zoo_runs.csv", index=False)
    rec = {"seeds": [0, 1], "n_max": 300, "restarts": 10, "exact_max_vars": 16, "params": kz.PARAMS}
    (tmp_path / "manifest.json").write_text(json.dumps({"experiments": {"kernel-zoo": rec}}))
    kept = kz._earlier_runs(tmp_path, ["zoo"], (0, 1), 300, 10, 16)
    assert sorted(zip(kept["seed"], kept["kernel"])) == [
        (0, "eskin"),
        (0, "overlap"),
        (1, "eskin"),
        (1, "overlap"),
    ]
    assert list(kept.columns) == kz.RUN_COLUMNS
    assert kz._earlier_runs(tmp_path, ["zoo"], (0, 1), 120, 10, 16).empty  # other rows per seed: recompute
    assert kz._earlier_runs(tmp_path, ["zoo"], (0, 1, 2), 300, 10, 16).empty  # other seeds: recompute


# ---------------------------------------------------------------------- the app
def test_kernel_page_offers_the_normalised_kernel_with_its_power():
    from apptest_helpers import assert_clean, page_app

    at = page_app("kernel.py", kernel_rows=120, kernel_kind=fn.FISHER_NORMALIZED).run()
    assert_clean(at)
    assert (
        fn.FISHER_NORMALIZED in at.selectbox(key="w_kernel_kind").options
        or KERNELS[fn.FISHER_NORMALIZED].label in at.selectbox(key="w_kernel_kind").options
    )
    slider = at.slider(key="w_kernel_alpha")
    assert slider.value == pytest.approx(fn.DEFAULT_ALPHA)
    assert any(fn.ABOUT in c.value for c in at.caption)
    slider.set_value(0.5).run()
    assert_clean(at)
    assert at.session_state["kernel_alpha"] == pytest.approx(0.5)
    m = {x.label: x.value for x in at.metric}  # unit diagonal; the per-variable terms sum to K(A, B)
    assert m["K(A, A)"] == m["K(B, B)"] == "1" and m["K(A, B)"] == m["Σ K_i (unnormalised)"]


def test_clustering_page_offers_the_normalised_kernel_with_its_power():
    from apptest_helpers import assert_clean, page_app

    at = page_app(
        "clustering.py", clu_rows=435, clu_kernel=fn.FISHER_NORMALIZED, clu_algorithm="spectral"
    ).run()
    assert_clean(at)
    assert at.slider(key="w_clu_alpha").value == pytest.approx(fn.DEFAULT_ALPHA)
    assert any(fn.ABOUT in c.value for c in at.caption)
    assert at.session_state["clu_result"]["kernel"] == fn.FISHER_NORMALIZED
    # all rows: the page shows the command line, with the power
    assert any(
        "--kernel fisher-normalized" in c.value and f"--alpha {fn.DEFAULT_ALPHA:g}" in c.value
        for c in at.caption
    )


def test_a_given_structure_gets_bdeu_pseudo_count_5():
    """A structure without a recipe: BDeu CPTs by hand, the empty network's marginals (n_k + a/r) / (N + a), a
    = 5."""
    d = _sample()
    X = d.without_class()
    fk = fn.fit_fisher_normalized(X, dag=DAG(tuple(X.variables)))
    assert fk.model.dag.n_arcs == 0 and fn.DEFAULT_ALPHA == 0.25 and fk.beside is None
    for i, t in enumerate(fk.model.cpts):
        col = X.codes[:, i]
        r = t.shape[1]
        n = np.bincount(col[col >= 0], minlength=r)
        np.testing.assert_allclose(t[0], (n + 5.0 / r) / (n.sum() + 5.0), rtol=1e-12)
    # the default kernel's empty network beside the latent classes is the same one
    dflt = fn.fit_fisher_normalized(X, n_clusters=4)
    np.testing.assert_allclose(
        np.concatenate([t.ravel() for t in dflt.beside.model.cpts]),
        np.concatenate([t.ravel() for t in fk.model.cpts]),
        rtol=1e-12,
    )
