"""Clustering beyond the Gram limit: kernel k-means in the explicit feature space, the
'auto' choice, the work-space guard of every quadratic path, row-wise features and linear-time MMD."""

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.analyses.cluster import features as CF
from bnfk_core.data import limits
from bnfk_core.data.limits import memory_limit_set
from bnfk_core.data.table import load_csv
from bnfk_core.errors import BnfkError, KernelError
from bnfk_core.kernels import fisher as kernels
from bnfk_core.learning.structure import learn_structure
from bnfk_core.network.model import fit
from bnfk_core.registry import KERNELS

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
REFUSAL = "sample at most about"


@pytest.fixture(scope="module")
def hv():
    """House votes with its original missing cells as real missing values (marginalised features)."""
    return load_csv(HV, class_column="class", na_values="default-list")


@pytest.fixture(scope="module")
def fisher_hv(hv):
    feats = hv.without_class()
    dag = learn_structure(feats, "tree", score="bic").dag
    return KERNELS["fisher"].fit(feats, dag=dag, params="smoothed"), feats


def _fitted(hv, fisher_hv, name):
    if name == "fisher":
        return fisher_hv
    feats = hv.without_class()
    return KERNELS[name].fit(feats), feats


def gram_distances(K, labels, k):
    """||phi(x) - mu_c||^2 from the Gram matrix alone: K(x,x) - 2/|c| sum_c K(x,.) + 1/|c|^2 sum_cc K."""
    H = np.zeros((len(labels), k))
    H[np.arange(len(labels)), labels] = 1.0
    n = H.sum(axis=0)
    return np.diag(K)[:, None] - 2.0 * (K @ H) / n + np.diag(H.T @ K @ H)[None, :] / n**2


def gram_kernel_kmeans(K, init_rows, max_iter=300):
    """Lloyd's kernel k-means on the Gram matrix, starting from centres at the rows ``init_rows``."""
    d = np.diag(K)
    D = d[:, None] - 2.0 * K[:, init_rows] + d[init_rows][None, :]
    labels = np.argmin(D, axis=1)
    for _ in range(max_iter):
        new = np.argmin(gram_distances(K, labels, len(init_rows)), axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


# ====================================================================== feature map and distances
@pytest.mark.parametrize("name", ["fisher", "scaled-hamming", "hamming"])
def test_feature_map_reproduces_the_gram(hv, fisher_hv, name):
    fitted, feats = _fitted(hv, fisher_hv, name)
    Phi = CF.feature_map(fitted, feats)
    assert np.allclose((Phi @ Phi.T).toarray(), fitted.gram(feats), atol=1e-9)


@pytest.mark.parametrize("name", ["fisher", "scaled-hamming", "hamming"])
def test_feature_space_distances_equal_gram_distances(hv, fisher_hv, name):
    fitted, feats = _fitted(hv, fisher_hv, name)
    Phi = CF.feature_map(fitted, feats)
    K = fitted.gram(feats)
    labels = np.random.default_rng(3).integers(0, 4, size=feats.n_rows)
    D = CF.feature_sq_distances(Phi, labels, 4)
    assert D.shape == (feats.n_rows, 4)
    assert np.allclose(D, gram_distances(K, labels, 4), atol=1e-8 * np.abs(K).max())


@pytest.mark.parametrize("name", ["fisher", "hamming"])
def test_kmeans_on_features_is_kernel_kmeans_on_the_gram(hv, fisher_hv, name):
    """Lloyd on the rows of Phi from given centres = Lloyd on K from the same centres (same labels)."""
    fitted, feats = _fitted(hv, fisher_hv, name)
    Phi = CF.feature_map(fitted, feats)
    K = fitted.gram(feats)
    for seed in range(3):
        rows = np.random.default_rng(seed).choice(feats.n_rows, size=3, replace=False)
        km = KMeans(3, init=Phi[rows].toarray(), n_init=1, tol=0.0, max_iter=300, algorithm="lloyd").fit(Phi)
        ref = gram_kernel_kmeans(K, rows)
        assert np.array_equal(km.labels_, ref)


def test_kernel_kmeans_result_is_a_fixed_point_of_gram_kernel_kmeans(hv, fisher_hv):
    fitted, feats = fisher_hv
    Phi = CF.feature_map(fitted, feats)
    K = fitted.gram(feats)
    res = CF.kernel_kmeans_features(Phi, 3, seed=5)
    D = gram_distances(K, res.labels, res.n_used)
    assert res.algorithm == "kmeans-features" and res.n_used == 3
    assert np.array_equal(np.argmin(D, axis=1), res.labels)  # no row prefers another cluster
    assert res.cost == pytest.approx(D[np.arange(len(D)), res.labels].sum(), rel=1e-9)


def test_same_seed_same_labels_and_seeds_matter(hv):
    fitted = KERNELS["scaled-hamming"].fit(hv.without_class())
    Phi = CF.feature_map(fitted, hv.without_class())
    a = CF.kernel_kmeans_features(Phi, 4, seed=11, n_init=1)
    b = CF.kernel_kmeans_features(Phi, 4, seed=11, n_init=1)
    assert np.array_equal(a.labels, b.labels) and a.cost == b.cost
    others = [CF.kernel_kmeans_features(Phi, 4, seed=s, n_init=1) for s in range(6)]
    assert len({o.cost for o in others}) > 1  # the seed reaches the k-means++ starts
    more = CF.kernel_kmeans_features(Phi, 4, seed=11, n_init=6)
    assert more.cost <= a.cost + 1e-9


def test_kmeans_features_refuses_kernels_without_a_feature_map(hv):
    fitted = KERNELS["eskin"].fit(hv.without_class())
    assert not CF.has_feature_map(fitted)
    with pytest.raises(BnfkError, match="no explicit feature map"):
        CF.feature_map(fitted, hv.without_class())


def test_run_clustering_kmeans_features(hv):
    out = C.run_clustering(hv, "scaled-hamming", "kmeans-features", seed=2)
    assert out["algorithm"] == "kmeans-features" and out["n_used"] == 2 and len(out["labels"]) == hv.n_rows
    assert out["ari"] > 0.4  # the parties separate (correlation clustering: 0.56)
    assert out["silhouette_rows"] == hv.n_rows and out["silhouette"] is not None
    assert "algorithm_chosen" not in out  # only 'auto' reports a choice


# ====================================================================== the automatic choice
def test_auto_is_correlation_clustering_when_the_gram_fits(hv):
    setup = C.kernel_setup(hv, "scaled-hamming")
    ref = C.run_clustering(hv, "scaled-hamming", "correlation", setup=setup, restarts=3, seed=4)
    out = C.run_clustering(hv, "scaled-hamming", "auto", restarts=3, seed=4)
    assert out["algorithm_chosen"] == "correlation" and out["algorithm"] == "correlation"
    assert "fit" in out["algorithm_reason"] and out["algorithm_requested"] == "auto"
    assert out["labels"] == ref["labels"] and out["cost"] == ref["cost"]


def test_auto_picks_feature_space_when_the_gram_does_not_fit(hv):
    with memory_limit_set(2**20):
        out = C.run_clustering(hv, "hamming", "auto", seed=1)
        assert out["algorithm_chosen"] == "kmeans-features" and "exceed" in out["algorithm_reason"]
        assert out["silhouette_rows"] < hv.n_rows  # the silhouette's sample obeys the limit too
        ref = C.run_clustering(hv, "hamming", "kmeans-features", seed=1)
    assert out["labels"] == ref["labels"]
    assert C.choose_algorithm(hv.n_rows, "spectral") == ("spectral", "asked for")


def test_auto_without_a_feature_map_refuses_with_the_guard_message(hv):
    with memory_limit_set(2**20), pytest.raises(KernelError, match=REFUSAL):
        C.run_clustering(hv, "eskin", "auto")


def test_cli_cluster_auto_reports_its_choice(capsys):
    from bnfk_core.cli import main

    args = [
        "cluster",
        HV,
        "--label-column",
        "class",
        "--missing-policy",
        "category",
        "--kernel",
        "hamming",
        "--no-labels-out",
    ]
    assert main([*args, "--max-memory", "1M"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm_chosen"] == "kmeans-features" and out["algorithm"] == "kmeans-features"
    assert main([*args, "--restarts", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm_chosen"] == "correlation" and out["restarts"] == 2


# ====================================================================== the work-space guard
def _refuses(fn, *a, **kw):
    with pytest.raises(KernelError) as e:
        fn(*a, **kw)
    msg = str(e.value)
    assert REFUSAL in msg and msg.endswith("(or raise the memory limit).") and "\n" not in msg
    return msg


def test_every_quadratic_path_refuses_with_the_same_sentence(hv):
    K = C.kernel_setup(hv, "hamming").K
    lab = np.arange(hv.n_rows) % 2
    limit = 2 * hv.n_rows**2 * 8  # the Gram fits, none of the work spaces does
    with memory_limit_set(limit):
        kernels.gram(None, hv.without_class(), kind="hamming")  # fits
        assert "correlation clustering" in _refuses(C.correlation_clustering, K, 2)
        assert "spectral clustering" in _refuses(C.spectral_clustering, K, 2)
        _refuses(C.cluster, K, 2, "correlation")
        assert "silhouette" in _refuses(C.kernel_silhouette, K, lab)
        assert "classification" in _refuses(C.classify_many, hv, "hamming", ("knn",), repeats=1)
        _refuses(C.run_clustering, hv, "hamming", "correlation")
        _refuses(C.run_clustering, hv, "hamming", "spectral")
        _refuses(C.compare, hv, kernels=("hamming",), runs=1)
    with memory_limit_set(hv.n_rows**2 * 8 // 2):
        assert "Gram matrix needs" in _refuses(
            kernels.gram, None, hv.without_class(), kind="hamming", normalize=True
        )


def test_the_guard_refuses_before_any_kernel_work(hv, monkeypatch):
    calls = []
    monkeypatch.setattr(C, "_fit_kernel", lambda *a, **k: calls.append(1))
    monkeypatch.setattr(C, "kernel_setup", lambda *a, **k: calls.append(1))
    with memory_limit_set(2**20):
        for alg in ("correlation", "spectral"):
            _refuses(C.run_clustering, hv, "fisher", alg)
        _refuses(C.compare, hv, kernels=("fisher",), runs=1)
    assert calls == []


def test_the_suggested_sample_size_fits():
    limit = 50 * 2**20
    for path in ("correlation", "spectral", "silhouette", "classification"):
        n = limits.max_rows(path, limit)
        assert limits.workspace_bytes(path, n) <= limit < limits.workspace_bytes(path, n + 1)
        with memory_limit_set(limit):
            assert limits.fits(path, n) and not limits.fits(path, n + 1)
            with pytest.raises(KernelError, match=f"about {n:,} rows"):
                limits.guard_workspace(path, n + 1)


def _peak(fn, *a, **kw):
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn(*a, **kw)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_the_estimates_cover_the_measured_work_space(hv):
    """numpy's allocations (tracemalloc) at the peak of each path stay within workspace_bytes, the Gram matrix
    (allocated before the call where it is an argument) counted in both."""
    N = hv.n_rows
    K = C.kernel_setup(hv, "scaled-hamming").K
    gram_b = K.nbytes
    lab = np.arange(N) % 2
    C.correlation_clustering(K[:50, :50], 2, restarts=2)  # compile first (numba's compiler allocates too)
    C.correlation_clustering(K[:50, :50], 2, restarts=40)
    measured = {
        "correlation": _peak(C.correlation_clustering, K, 2, restarts=2) + gram_b,
        "spectral": _peak(C.spectral_clustering, K, 2) + gram_b,
        "silhouette": _peak(C.kernel_silhouette, K, lab) + gram_b,
        "classification": _peak(C.classify_many, hv, "hamming", ("knn", "svm"), repeats=1),
    }
    for path, m in measured.items():
        assert m <= limits.workspace_bytes(path, N) * 1.02 + 2**20, (path, m / gram_b)
    # the Gram, then the normalisation's two block temporaries (here one block: the whole matrix)
    blocks = 16 * min(kernels.NORMALIZE_BLOCK_CELLS, N * N)
    assert (
        _peak(kernels.gram, None, hv.without_class(), kind="hamming", normalize=True)
        <= gram_b + blocks + 2**20
    )


def test_normalize_is_unchanged_by_blocks(hv, monkeypatch):
    feats = hv.without_class()
    model = fit(learn_structure(feats, "tree", score="bic").dag, feats, method="smoothed")
    K = kernels.gram(model, feats)
    d = np.diag(K).copy()
    ref = K / np.sqrt(np.outer(d, d))
    blank = (feats.codes < 0).all(axis=1)  # a row of blanks: E[s] = 0, normalised to 0
    assert blank.sum() >= 1
    ref[blank], ref[:, blank] = 0.0, 0.0
    monkeypatch.setattr(kernels, "NORMALIZE_BLOCK_CELLS", 1000)  # many blocks
    assert np.array_equal(kernels.gram(model, feats, normalize=True), ref)


@pytest.mark.parametrize(
    "argv, refused",
    [
        (["kernel", "{csv}", "--kind", "hamming", "--normalize", "-o", "{out}"], True),
        (
            [
                "cluster",
                "{csv}",
                "--label-column",
                "class",
                "--kernel",
                "hamming",
                "--algorithm",
                "correlation",
            ],
            True,
        ),
        (
            ["cluster", "{csv}", "--label-column", "class", "--kernel", "hamming", "--algorithm", "spectral"],
            True,
        ),
        (["classify", "{csv}", "--label-column", "class", "--kernel", "hamming", "--repeats", "1"], True),
        (["cluster", "{csv}", "--label-column", "class", "--kernel", "hamming", "--no-labels-out"], False),
    ],
)
def test_cli_refuses_before_allocating_peak_rss(tmp_path, argv, refused):
    """A fresh process on 6,000 rows under --max-memory 40M: the Gram alone would be 275 MiB (the old
    normalisation 3x that); the process stays near its import footprint and says why in one line."""
    rng = np.random.default_rng(0)
    n = 6000
    csv = tmp_path / "big.csv"
    cols = rng.integers(0, 4, size=(n, 10))
    lines = ["class," + ",".join(f"v{j}" for j in range(10))]
    lines += [f"c{r % 3}," + ",".join(f"s{v}" for v in row) for r, row in enumerate(cols)]
    csv.write_text("\n".join(lines) + "\n")
    args = [a.format(csv=csv, out=tmp_path / "K.npy") for a in argv] + ["--max-memory", "40M"]
    probe = (
        "import resource, subprocess, sys; "
        "p = subprocess.run([sys.executable, '-m', 'bnfk_core', *sys.argv[1:]], capture_output=True, "
        "text=True); "
        "print(p.returncode); print(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    res = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    code, err, rss_kib = res.stdout.strip().splitlines()
    rss = int(rss_kib) * 1024
    if refused:
        assert code == "2" and err.startswith("error: ") and REFUSAL in err and "--max-memory" in err
    else:
        assert code == "0"
    assert rss < 600 * 2**20, rss / 2**20  # imports (numba, scikit-learn, pandas) take most of this
    assert rss < 275 * 2**20 + _baseline_rss(), rss / 2**20


_BASE = {}


def _baseline_rss() -> int:
    """Peak RSS of a process that only imports the CLI (what any run costs before its work)."""
    if "rss" not in _BASE:
        probe = (
            "import resource, subprocess, sys; "
            "subprocess.run([sys.executable, '-c', 'import bnfk_core.cli.main, "
            "bnfk_core.analyses.cluster.features'])"
            "; print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        )
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300
        )
        _BASE["rss"] = int(out.stdout.strip()) * 1024
    return _BASE["rss"]


# ====================================================================== row-wise work
def test_features_in_blocks_equal_one_block(hv, fisher_hv):
    fitted, feats = fisher_hv
    model = fitted.model
    complete = feats.subset(
        np.flatnonzero(~feats.missing_mask.any(axis=1))
        if hasattr(feats.missing_mask, "any")
        else np.arange(feats.n_rows)
    )
    A = kernels.features(model, complete)
    B = kernels.features(model, complete, chunk_rows=17)
    assert (A != B).nnz == 0 and np.array_equal(A.indptr, B.indptr)
    A = kernels.features(model, feats)  # missing cells: expected features
    B = kernels.features(model, feats, chunk_rows=50)
    assert np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices)
    assert np.allclose(A.data, B.data, rtol=1e-12, atol=1e-14)
    blocks = list(kernels.iter_features(model, feats, chunk_rows=100))
    assert [a for a, _ in blocks] == [0, 100, 200, 300, 400]
    assert np.allclose(sp.vstack([P for _, P in blocks]).toarray(), A.toarray())


def test_mmd_is_the_pairwise_formula_without_a_gram(hv, fisher_hv, monkeypatch):
    fitted, feats = fisher_hv
    model = fitted.model
    X, Y = feats.subset(np.arange(0, 200)), feats.subset(np.arange(200, 435))
    Kxx, Kyy, Kxy = kernels.gram(model, X), kernels.gram(model, Y), kernels.gram(model, X, Y)
    pairwise = Kxx.mean() + Kyy.mean() - 2.0 * Kxy.mean()  # paper eq. (10), quadratic form
    monkeypatch.setattr(kernels, "_fisher_gram", lambda *a, **k: pytest.fail("mmd built a Gram matrix"))
    assert kernels.mmd(model, X, Y) == pytest.approx(pairwise, rel=1e-9, abs=1e-12)
    chunked = kernels.mean_features(model, X, chunk_rows=7) - kernels.mean_features(model, Y, chunk_rows=7)
    assert float(chunked @ chunked) == pytest.approx(pairwise, rel=1e-9, abs=1e-12)


# ====================================================================== dense or sparse layout of Phi
def test_dense_and_sparse_layouts_give_the_same_clustering(fisher_hv):
    """k-means on a dense copy of the Fisher features = k-means on the CSR matrix: the same labels, the cost
    to rounding, and a fixed point of kernel k-means on the Gram matrix."""
    fitted, feats = fisher_hv
    Phi = CF.feature_map(fitted, feats)
    K = fitted.gram(feats)
    for seed in range(4):
        a = CF.kernel_kmeans_features(Phi, 4, seed=seed, dense=True)
        b = CF.kernel_kmeans_features(Phi, 4, seed=seed, dense=False)
        assert np.array_equal(a.labels, b.labels)
        assert a.cost == pytest.approx(b.cost, rel=1e-12)
        D = gram_distances(K, a.labels, a.n_used)
        assert np.array_equal(np.argmin(D, axis=1), a.labels)
        assert a.cost == pytest.approx(D[np.arange(len(D)), a.labels].sum(), rel=1e-9)


def test_dense_layout_with_ties_reaches_a_fixed_point(hv, fisher_hv):
    """The Hamming features take few distinct values, so distances tie exactly and the two layouts' rounding
    may break a tie differently: each result is still a fixed point of kernel k-means on the Gram matrix, its
    cost the Gram's within-cluster sum."""
    fitted, feats = _fitted(hv, fisher_hv, "hamming")
    Phi = CF.feature_map(fitted, feats)
    K = fitted.gram(feats)
    for seed in range(3):
        for dense in (True, False):
            r = CF.kernel_kmeans_features(Phi, 4, seed=seed, dense=dense)
            D = gram_distances(K, r.labels, r.n_used)
            best = D.min(axis=1)
            assert np.all(D[np.arange(len(D)), r.labels] <= best + 1e-9)
            assert r.cost == pytest.approx(D[np.arange(len(D)), r.labels].sum(), rel=1e-9)


def test_dense_layout_by_density_and_memory_limit():
    n, d = 1000, 40
    rng = np.random.default_rng(0)
    dense_phi = sp.csr_matrix(rng.random((n, d)) * (rng.random((n, d)) < 0.3))  # about 30 % non-zero
    sparse_phi = sp.csr_matrix(rng.random((n, d)) * (rng.random((n, d)) < 0.02))  # about 2 % non-zero
    with memory_limit_set(None):
        assert CF.dense_layout(dense_phi) and not CF.dense_layout(sparse_phi)
    need = n * d * 8  # the dense copy's bytes
    with memory_limit_set(need / CF.DENSE_MEMORY_SHARE):
        assert CF.dense_layout(dense_phi)
    with memory_limit_set(need / CF.DENSE_MEMORY_SHARE - 1):
        assert not CF.dense_layout(dense_phi)
    assert not CF.dense_layout(sp.csr_matrix((0, d)))
