"""Clustering beyond the Gram limit: kernel k-means in the explicit feature space.

The Fisher kernel is an inner product of explicit sparse features, K = Phi Phi^T (paper, Theorem 1;
:func:`bnfk_core.kernels.fisher.features`); so is scaled-Hamming (the Fisher kernel of the empty network) and
the Hamming kernel (one-hot indicators scaled by 1/sqrt(d), thesis eq. 2.17).  Kernel k-means -- minimise
the within-cluster kernel distances

    sum_c sum_{x in c} ||phi(x) - mu_c||^2,   mu_c = mean_{y in c} phi(y),

    ||phi(x) - mu_c||^2 = K(x,x) - (2/|c|) sum_{y in c} K(x,y) + (1/|c|^2) sum_{y,z in c} K(y,z)

-- is then ordinary k-means on the rows of Phi: the right-hand side needs the Gram matrix (N x N), the
left-hand side only Phi (O(nnz) memory, Sigma_i r_i non-zeros a row) and k dense centres.  One Lloyd
iteration costs O(nnz * k).  We run scikit-learn's algorithm (``KMeans(algorithm="lloyd")``: seeded greedy
k-means++ starts, ``n_init`` of them, Lloyd's iterations, the lowest cost kept) written as passes over fixed
blocks of rows (:mod:`.lloyd`), on one BLAS thread, so that the very same passes run in this process or on the
workers of a Dask cluster (:func:`kernel_kmeans_rows` with a runner) and give the same floats.  The blocks are
dense arrays when Phi is dense enough for that to pay and fits a share of the memory limit
(:func:`dense_layout`; the Fisher features of the letter-like data have 30 % of their cells non-zero), else
CSR matrices: the same algorithm on the same numbers; only the summation order of the distances differs, so
where distances tie exactly (the Hamming features take few distinct values) the two layouts may break a tie
differently and stop at another fixed point of the same objective.

Why this method and not spectral clustering on a truncated SVD of Phi: kernel k-means optimises the
kernel-induced distances themselves, exactly (no rank truncation), is deterministic for a seed, and
its cost and memory are linear in N; an SVD-then-k-means pipeline adds a rank choice and an iterative
eigensolver whose result depends on its own tolerances.  The thesis's correlation clustering stays
the reference wherever the Gram matrix and its work space fit (``algorithm="auto"`` in
:func:`bnfk_core.analyses.cluster.clustering.run_clustering` picks it there).  The shift does not matter here:
k-means is invariant to translating the features, and the adaptive shift (double centering) is
exactly such a translation (centring in feature space).

Kernels without an explicit feature map (the similarity measures of ``similarity.py``) cannot use this
method; they need the Gram matrix.

The silhouette (kernel distance) is computed on a seeded sample of at most ``SILHOUETTE_ROWS`` rows.
"""

from __future__ import annotations

import functools
import time

import numpy as np
import scipy.sparse as sp

from ...data.encoding import one_hot
from ...data.limits import max_rows as max_rows_within
from ...data.limits import memory_limit
from ...kernels.features import features
from ...kernels.fisher import NetworkKernel
from ...kernels.hamming import HammingKernel
from .common import ClusterError, ClusterResult, check_k, renumber
from .lloyd import HERE, blocked_kmeans, groups_from_data, groups_from_phi, kept_runner
from .members import FEATURE_CLUSTERER
from .metrics import kernel_silhouette

__all__ = [
    "FEATURE_ALGORITHM",
    "SILHOUETTE_ROWS",
    "DENSE_MIN_DENSITY",
    "DENSE_MEMORY_SHARE",
    "has_feature_map",
    "feature_map",
    "feature_sq_distances",
    "dense_layout",
    "dense_for",
    "kernel_kmeans_features",
    "kernel_kmeans_rows",
    "silhouette_rows",
    "sampled_silhouette",
]

FEATURE_ALGORITHM = FEATURE_CLUSTERER.name  # the one place the name is written: .members
SILHOUETTE_ROWS = 2000
#: k-means runs on a dense copy of Phi when at least this share of its cells is non-zero ...
DENSE_MIN_DENSITY = 0.1
#: ... and the dense copy (N x D float64) takes at most this share of the memory limit
DENSE_MEMORY_SHARE = 0.25


def has_feature_map(fitted) -> bool:
    """Whether the fitted kernel's Gram is Phi Phi^T of a feature map :func:`feature_map` knows: a network
    kernel (Fisher, scaled-Hamming) or the Hamming kernel, with their own ``gram`` (not a subclass that
    redefines it), or a kernel with its own ``features(data)`` method."""
    return callable(getattr(fitted, "features", None)) or type(fitted).gram in (
        NetworkKernel.gram,
        HammingKernel.gram,
    )


def feature_map(fitted, data) -> sp.csr_matrix:
    """Phi (CSR, float64) with ``fitted.gram(data) == Phi @ Phi.T`` (up to rounding).

    Network kernels: the Fisher feature map of their model (missing cells: expected features, the
    marginalised kernel the Gram uses).  Hamming: one-hot (variable, state) indicators of the observed
    cells, scaled by 1/sqrt(d).  A kernel with its own ``features(data)`` method (the normalised Fisher
    kernel): that map."""
    if not has_feature_map(fitted):
        raise ClusterError(
            f"The {fitted.name} kernel has no explicit feature map; cluster it with the Gram "
            "matrix (correlation or spectral clustering)."
        )
    if callable(getattr(fitted, "features", None)):
        return sp.csr_matrix(fitted.features(data))
    if isinstance(fitted, NetworkKernel):
        return features(fitted.model, data)
    X = data.select(list(fitted.variables))
    return one_hot(X.codes, [len(s) for s in X.states], sparse=True, value=1.0 / np.sqrt(max(X.n_vars, 1)))


def _centres(Phi: sp.csr_matrix, labels: np.ndarray, k: int) -> np.ndarray:
    H = sp.csr_matrix((np.ones(len(labels)), (labels, np.arange(len(labels)))), shape=(k, len(labels)))
    sizes = np.bincount(labels, minlength=k).astype(float)
    return (H @ Phi).toarray() / np.maximum(sizes, 1.0)[:, None]


def feature_sq_distances(Phi, labels, n_clusters: int | None = None) -> np.ndarray:
    """||phi(x) - mu_c||^2 for every row x and cluster c of ``labels``: array (N, k), O(nnz * k).

    Equals K(x,x) - (2/|c|) sum_{y in c} K(x,y) + (1/|c|^2) sum_{y,z in c} K(y,z) with K = Phi Phi^T
    (an empty cluster's centre is 0)."""
    Phi = sp.csr_matrix(Phi, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    k = int(n_clusters if n_clusters is not None else labels.max() + 1)
    M = _centres(Phi, labels, k)
    sq = np.asarray(Phi.multiply(Phi).sum(axis=1)).ravel()
    D = sq[:, None] - 2.0 * np.asarray(Phi @ M.T) + (M * M).sum(axis=1)[None, :]
    return np.maximum(D, 0.0)


def dense_layout(Phi) -> bool:
    """Whether :func:`kernel_kmeans_features` runs on a dense copy of ``Phi`` (N x D): at least
    :data:`DENSE_MIN_DENSITY` of its cells non-zero, and N * D * 8 bytes at most :data:`DENSE_MEMORY_SHARE` of
    the memory limit (:func:`bnfk_core.data.limits.memory_limit`, the CLI's ``--max-memory``; no limit:
    always)."""
    n, d = Phi.shape
    return dense_for(n, d, Phi.nnz)


def dense_for(n: int, d: int, nnz: int) -> bool:
    """:func:`dense_layout`'s rule for ``n`` rows of ``d`` columns with ``nnz`` non-zeros."""
    cells = float(n) * float(d)
    if cells == 0 or nnz < DENSE_MIN_DENSITY * cells:
        return False
    limit = memory_limit()
    return limit is None or cells * 8.0 <= DENSE_MEMORY_SHARE * limit


def kernel_kmeans_features(
    Phi,
    n_clusters: int,
    *,
    seed: int = 0,
    n_init: int = 3,
    max_iter: int = 300,
    tol: float = 1e-4,
    dense: bool | None = None,
    block_rows: int | None = None,
) -> ClusterResult:
    """Kernel k-means on the explicit features ``Phi`` (module docstring).

    Parameters
    ----------
    Phi : (N, D) sparse features with K = Phi Phi^T (:func:`feature_map`).
    n_clusters : number of clusters (clusters stay non-empty: Lloyd's algorithm relocates empty ones).
    seed : seeds the k-means++ starts (``random_state``); the same seed gives the same labels.
    n_init : seeded k-means++ starts, the lowest within-cluster sum of kernel distances (``cost``) kept.
    max_iter, tol : Lloyd's stopping rule (scikit-learn's; ``tol`` relative to the features' variance).
    dense : run on a dense copy of Phi (True), on the CSR matrix (False), or as :func:`dense_layout` decides
        (None, the default).  The same algorithm on the same numbers either way.
    block_rows : rows of a block of the passes (default :data:`.lloyd.BLOCK_ROWS`; a fixed cut: the same
    floats
        wherever they run).

    Returns a :class:`ClusterResult` with ``algorithm=FEATURE_ALGORITHM``, ``transform="features"`` and
    ``cost`` = sum_x ||phi(x) - mu_{c(x)}||^2 (the kernel k-means objective).
    """
    t0 = time.perf_counter()
    Phi = sp.csr_matrix(Phi, dtype=np.float64)
    n = Phi.shape[0]
    k = check_k(n, n_clusters)
    if int(n_init) < 1:
        raise ClusterError(f"n_init must be at least 1, got {n_init}.")
    labels, cost, info = blocked_kmeans(
        groups_from_phi(Phi, HERE, block_rows),
        n,
        k,
        seed=seed,
        n_init=n_init,
        max_iter=max_iter,
        tol=tol,
        dense=dense_for if dense is None else bool(dense),
        block_rows=block_rows,
    )
    return _result(labels, k, seed, cost, t0, info)


def kernel_kmeans_rows(
    fitted,
    data,
    n_clusters: int,
    *,
    seed: int = 0,
    n_init: int = 3,
    max_iter: int = 300,
    tol: float = 1e-4,
    dense: bool | None = None,
    runner=None,
    block_rows: int | None = None,
) -> ClusterResult:
    """:func:`kernel_kmeans_features` on the features of the rows of ``data`` (:func:`feature_map` of the
    fitted kernel ``fitted``), made block by block where the passes run: here (``runner`` None), or on the
    workers of a Dask runner (:class:`bnfk_core.data.dask_runner.DaskRunner`; the rows' codes are sent, the
    features made and kept there, every pass of k-means++ and Lloyd run there and only the blocks' sums come
    back,
    :mod:`.lloyd`).  The same labels and cost as :func:`kernel_kmeans_features` of ``feature_map(fitted,
    data)``, whichever the runner (``block_rows``: rows a block of the passes, as there)."""
    t0 = time.perf_counter()
    n = data.n_rows
    k = check_k(n, n_clusters)
    if int(n_init) < 1:
        raise ClusterError(f"n_init must be at least 1, got {n_init}.")
    if not has_feature_map(fitted):
        feature_map(fitted, data)  # its one-sentence refusal
    run = kept_runner(runner)
    groups = groups_from_data(functools.partial(feature_map, fitted), data, run, block_rows)
    labels, cost, info = blocked_kmeans(
        groups,
        n,
        k,
        runner=run,
        seed=seed,
        n_init=n_init,
        max_iter=max_iter,
        tol=tol,
        dense=dense_for if dense is None else bool(dense),
        block_rows=block_rows,
    )
    del groups
    return _result(labels, k, seed, cost, t0, info)


def _result(labels, k, seed, cost, t0, info) -> ClusterResult:
    labels = renumber(np.asarray(labels))
    return ClusterResult(
        labels,
        FEATURE_ALGORITHM,
        k,
        int(labels.max() + 1) if len(labels) else 0,
        "features",
        int(seed),
        cost=float(cost),
        seconds=time.perf_counter() - t0,
        info=info,
    )


def silhouette_rows(n: int, *, seed: int = 0, max_rows: int = SILHOUETTE_ROWS) -> np.ndarray | None:
    """The rows :func:`sampled_silhouette` uses: a seeded uniform sample of at most ``max_rows`` of ``n``
    (fewer when the memory limit allows fewer), sorted; None when fewer than 3 rows are allowed."""
    cap = max_rows_within("silhouette")
    max_rows = int(max_rows) if cap is None else min(int(max_rows), cap)
    if max_rows < 3:
        return None
    if n > max_rows:
        return np.sort(np.random.default_rng(seed).choice(n, size=max_rows, replace=False))
    return np.arange(n)


def sampled_silhouette(
    Phi, labels, *, seed: int = 0, max_rows: int = SILHOUETTE_ROWS
) -> tuple[float | None, int]:
    """The kernel-distance silhouette on a seeded uniform sample of at most ``max_rows`` rows (their Gram
    Phi_s Phi_s^T, max_rows^2 cells; fewer rows when the memory limit allows fewer); returns
    (silhouette or None, rows used)."""
    labels = np.asarray(labels)
    rows = silhouette_rows(len(labels), seed=seed, max_rows=max_rows)
    if rows is None:
        return None, 0
    P = sp.csr_matrix(Phi)[rows]
    K = (P @ P.T).toarray()
    return kernel_silhouette(K, labels[rows]), len(rows)
