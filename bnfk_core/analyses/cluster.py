"""Clustering and classification with precomputed kernels (thesis ch. 5 and App. C, D).

Two clustering algorithms on a Gram matrix ``K``:

* **Spectral clustering** (scikit-learn, ``affinity="precomputed"``) on an affinity built
  from ``K`` by one of :data:`TRANSFORMS`:

  - ``shift-min`` (the thesis): ``K - min K`` when ``K`` has negative entries, else ``K``;
  - ``cosine``: ``(1 + K(x,y) / sqrt(K(x,x) K(y,y))) / 2`` -- the cosine-normalised kernel
    mapped to [0, 1]; still positive semi-definite and independent of feature norms;
  - ``rbf``: ``exp(-d²(x,y) / median d²)`` with the kernel-induced distance
    ``d²(x,y) = K(x,x) + K(y,y) - 2 K(x,y)``; positive definite (Schoenberg), in (0, 1].

  ``shift-min`` is the default because it is what the thesis did, not because it is well
  founded: the affinity then depends on the single most negative pair.

* **Correlation clustering** with a fixed (maximum) number of clusters ``K``: minimise the
  cost of thesis eq. (5.2)

      cost(C) = 1/2 Σ_p Σ_{i,j ∈ C_p} (|X_ij| - X_ij) + 1/2 Σ_p Σ_{p'≠p} Σ_{i∈C_p, j∈C_p'} (|X_ij| + X_ij)

  over ordered pairs (the diagonal i = j included, where it only adds a constant) by local
  search with restarts (Chehreghani, "Clustering by shift", ICDM 2017; thesis §5.1.1).
  For symmetric X the cost is ``1/2 Σ_ij (|X_ij| + X_ij) - Σ_p Σ_{i,j∈C_p} X_ij``, so moving
  object i from cluster a to cluster b changes it by

      Δ(i → b) = -2 (S_ib - S_ia + X_ii),      S_ic = Σ_{j ∈ C_c} X_ij,

  and after a move only two columns of S change (O(N)).  One restart starts from a uniformly
  random assignment and visits the objects in a random order, moving each to the cluster of
  least cost given the others (strict improvement only; ties keep the object where it is),
  until a full pass moves nothing.  The best of ``restarts`` (default 25) is kept.
  Clusters may become empty, so ``n_clusters`` is an upper bound (the result reports how
  many are used).

  Warm start (``init_labels=``, for live structure editing): the previous structure's partition
  replaces the first restart's random starting assignment; everything else (the random numbers
  drawn, the other restarts, the visiting orders) is the thesis protocol above, which stays the
  default.  What it changes: the result is the best of the default random restarts 2..R and one
  local search from the old partition, so a small kernel change tends to keep the partition (and
  with ``restarts=1`` it costs one local search instead of 25).  It can differ from the default
  result; ARIs reported as the thesis's must use the default.

  Shift (thesis §5.2): the *adaptive shift* for the Hamming and scaled-Hamming kernels,
  none for the Fisher kernel.  We implement the adaptive shift as double centering,

      X'_ij = X_ij - (1/N) Σ_k X_ik - (1/N) Σ_k X_kj + (1/N²) Σ_kl X_kl,

  which makes every row (and column) of X' sum to zero -- the property the thesis states
  ("the sum of the similarities between i and all other objects equals zero, and likewise
  for j").  The thesis does not print the formula; this is the centring of the Gram matrix
  in feature space (X' = J X J with J = I - 11ᵀ/N).

Metrics against labels (scikit-learn): adjusted Rand index, adjusted mutual information
(normalised by max{H(U), H(V)}, thesis eq. C.4), V-measure; without labels, the silhouette under the kernel distance d = sqrt(d²).

Kernel classification (thesis App. D): kNN (k = 7, uniform weights, neighbours by kernel
distance, scikit-learn's KNeighborsClassifier) and SVM (``SVC(kernel="precomputed", C=1, probability=True)``) over seeded 80/20
splits, scored by accuracy and log loss; the model behind the kernel (the Fisher network, or
the marginal frequencies of scaled-Hamming) is estimated on the training split only.

The label column is never a feature: every kernel is computed on ``data.without_class()``.
Everything random takes a seed; the same seed gives the same result.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numba
import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.cluster import SpectralClustering
from sklearn.metrics import (
    accuracy_score,
    adjusted_mutual_info_score,
    adjusted_rand_score,
    log_loss,
    silhouette_score,
    v_measure_score,
)
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from ..embed import class_order, kernel_pca
from ..errors import BnfkError, DataError
from ..kernels import FISHER, HAMMING, SCALED_HAMMING
from ..limits import fits, format_bytes, guard_workspace, resolve_limit, workspace_bytes
from ..registry import CLUSTERERS, KERNELS, kernel_abbr

__all__ = [
    "ALGORITHMS", "CLUSTER_ALGORITHMS", "choose_algorithm", "TRANSFORMS", "SHIFTS", "CLASSIFIERS",
    "ClusterResult", "ClassificationResult", "KernelSetup",
    "affinity", "adaptive_shift", "cc_cost", "cc_move_deltas", "correlation_clustering",
    "spectral_clustering", "cluster", "clustering_metrics", "kernel_silhouette",
    "kernel_setup", "feature_network", "run_clustering", "compare", "classify", "classify_many",
    "classification_table", "classifier_label",
    "contingency", "cluster_ordering", "embedding", "default_n_clusters", "MAX_DEFAULT_CLUSTERS", "ClusterError",
]

ALGORITHMS = ("spectral", "correlation")          # the Gram-based algorithms
#: what :func:`run_clustering` (and the CLI's ``cluster --algorithm``) accepts: the Gram-based algorithms, kernel
#: k-means in the explicit feature space (:mod:`.cluster_features`), and ``auto`` (correlation clustering when
#: the Gram matrix and its work space fit the memory limit, else the feature-space method)
#: (the kernel-path members of :data:`bnfk_core.registry.CLUSTERERS`; other members, e.g. ``lca``, cluster the rows
#: themselves)
CLUSTER_ALGORITHMS = CLUSTERERS.names(uses_kernel=True)
TRANSFORMS = ("shift-min", "cosine", "rbf")
SHIFTS = ("auto", "adaptive", "none")
CLASSIFIERS = ("knn", "svm")

Progress = Callable[[float, str], None]


class ClusterError(BnfkError):
    """A clustering or classification request cannot be carried out as asked."""


# ====================================================================== affinities and shifts
def _square(K, what: str = "kernel matrix") -> np.ndarray:
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ClusterError(f"The {what} must be square, got shape {K.shape}.")
    if not np.isfinite(K).all():
        raise ClusterError(f"The {what} has non-finite entries.")
    return K


def _sq_distances(K: np.ndarray) -> np.ndarray:
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.clip(D2, 0.0, None)


def affinity(K, transform: str = "shift-min") -> np.ndarray:
    """A non-negative symmetric affinity for spectral clustering (module docstring)."""
    K = _square(K)
    K = 0.5 * (K + K.T)
    if transform == "shift-min":
        m = K.min() if K.size else 0.0
        return K - m if m < 0 else K.copy()
    if transform == "cosine":
        d = np.sqrt(np.clip(np.diag(K), 1e-300, None))
        C = K / np.outer(d, d)
        return np.clip((1.0 + C) / 2.0, 0.0, 1.0)
    if transform == "rbf":
        D2 = _sq_distances(K)
        off = D2[~np.eye(len(D2), dtype=bool)]
        pos = off[off > 0]
        scale = float(np.median(pos)) if pos.size else 1.0
        return np.exp(-D2 / scale)
    raise ClusterError(f"Unknown affinity transform '{transform}'; choose one of {', '.join(TRANSFORMS)}.")


def adaptive_shift(X) -> np.ndarray:
    """Double centering X' = J X J (J = I - 11ᵀ/N): every row and column of X' sums to zero."""
    X = _square(X, "similarity matrix")
    r = X.mean(axis=1, keepdims=True)
    c = X.mean(axis=0, keepdims=True)
    return X - r - c + X.mean()


def _shift_for(kernel: str | None, shift: str) -> str:
    if shift not in SHIFTS:
        raise ClusterError(f"Unknown shift '{shift}'; choose one of {', '.join(SHIFTS)}.")
    if shift == "auto":
        return "none" if kernel is None else KERNELS[kernel].shift
    return shift


# ====================================================================== correlation clustering
def cc_cost(X, labels) -> float:
    """Correlation-clustering cost of thesis eq. (5.2) (ordered pairs, diagonal included)."""
    X = _square(X, "similarity matrix")
    labels = np.asarray(labels)
    same = labels[:, None] == labels[None, :]
    return float(0.5 * ((np.abs(X) - X)[same].sum() + (np.abs(X) + X)[~same].sum()))


def _onehot_sums(X: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """S[i, c] = Σ_{j in cluster c} X_ij."""
    H = np.zeros((len(labels), k))
    H[np.arange(len(labels)), labels] = 1.0
    return X @ H


def cc_move_deltas(X, labels, n_clusters: int | None = None) -> np.ndarray:
    """Δcost of moving each object to each cluster, all others fixed: array (N, K), 0 where it is.

    Vectorised form of Δ(i → b) = -2 (S_ib - S_ia + X_ii) for symmetric X.
    """
    X = _square(X, "similarity matrix")
    labels = np.asarray(labels, dtype=np.int64)
    k = int(n_clusters if n_clusters is not None else labels.max() + 1)
    S = _onehot_sums(X, labels, k)
    own = S[np.arange(len(labels)), labels]
    D = -2.0 * (S - own[:, None] + np.diag(X)[:, None])
    D[np.arange(len(labels)), labels] = 0.0
    return D


def _local_search_py(X, labels, k, order, tol, max_sweeps):
    """Reference implementation in numpy (used when numba is unavailable and in tests)."""
    S = _onehot_sums(X, labels, k).T.copy()  # (k, N)
    diag = np.diag(X)
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        moved = False
        for i in order:
            a = labels[i]
            gain = S[:, i] - S[a, i] + diag[i]
            gain[a] = 0.0
            b = int(np.argmax(gain))
            if gain[b] > tol:
                S[a] -= X[i]
                S[b] += X[i]
                labels[i] = b
                moved = True
        if not moved:
            break
    return sweeps


@numba.njit(cache=True)
def _ls_sweeps(X, labels, k, order, tol, max_sweeps, S):  # pragma: no cover - compiled
    """The sweeps of the local search from ``labels`` (changed in place) given the cluster sums
    S[c, i] = Σ_{j in cluster c} X[i, j]; returns (sweeps, Σ_i S[labels_i, i]), the same-cluster sum of
    the result read off the maintained sums (cc_cost = ½ Σ(|X| + X) − it)."""
    N = X.shape[0]
    sweeps = 0
    for s in range(max_sweeps):
        sweeps = s + 1
        moved = False
        for t in range(N):
            i = order[t]
            a = labels[i]
            base = S[a, i] - X[i, i]
            best = 0.0
            b = a
            for c in range(k):
                if c != a:
                    g = S[c, i] - base
                    if g > best + tol:
                        best = g
                        b = c
            if b != a:
                for j in range(N):
                    v = X[i, j]
                    S[a, j] -= v
                    S[b, j] += v
                labels[i] = b
                moved = True
        if not moved:
            break
    same = 0.0
    for i in range(N):
        same += S[labels[i], i]
    return sweeps, same


@numba.njit(cache=True)
def _ls_numba(X, labels, k, order, tol, max_sweeps):  # pragma: no cover - compiled
    """One restart: cluster sums, then :func:`_ls_sweeps`; returns (sweeps, same-cluster sum)."""
    N = X.shape[0]
    S = np.zeros((k, N))
    acc = np.zeros(k)
    for i in range(N):              # S[c, i] = Σ_j [labels_j = c] X[i, j], j ascending, row by row
        acc[:] = 0.0
        for j in range(N):
            acc[labels[j]] += X[i, j]
        for c in range(k):
            S[c, i] = acc[c]
    return _ls_sweeps(X, labels, k, order, tol, max_sweeps, S)


@numba.njit(parallel=True, cache=True)
def _restart_sums(X, labT, k):  # pragma: no cover - compiled
    """S[r, c, i] = Σ_j [labT[j, r] = c] X[i, j] for every restart r at once, summed in ascending j exactly
    as :func:`_ls_numba` does (so bit-identical), but with the R restarts' sums interleaved: R independent
    addition chains instead of one latency-bound chain per restart."""
    N = X.shape[0]
    R = labT.shape[1]
    S = np.empty((R, k, N))
    for i in numba.prange(N):
        acc = np.zeros((R, k))
        for j in range(N):
            x = X[i, j]
            for r in range(R):
                acc[r, labT[j, r]] += x
        for r in range(R):
            for c in range(k):
                S[r, c, i] = acc[r, c]
    return S


#: :func:`_restart_sums` in one thread (``prange`` is a plain ``range`` in this compilation)
_restart_sums_serial = numba.njit(cache=True)(_restart_sums.py_func)


@numba.njit(cache=True)
def _cc_same_sum(X, labels):  # pragma: no cover - compiled
    """Σ_{i,j in the same cluster} X_ij; cc_cost = ½ Σ_ij (|X_ij| + X_ij) − this (module docstring)."""
    N = X.shape[0]
    s = 0.0
    for i in range(N):
        li = labels[i]
        t = 0.0
        for j in range(N):
            if labels[j] == li:
                t += X[i, j]
        s += t
    return s


@numba.njit(parallel=True, cache=True)
def _ls_restarts(X, labels, k, orders, tol, max_sweeps, S):  # pragma: no cover - compiled
    """:func:`_ls_sweeps` for every restart (rows of ``labels``/``orders``, sums ``S[r]``) in parallel
    threads, each exactly the sequential computation; (sweeps, same-cluster sums)."""
    R = labels.shape[0]
    sweeps = np.zeros(R, np.int64)
    same = np.zeros(R)
    for r in numba.prange(R):
        sw, sm = _ls_sweeps(X, labels[r], k, orders[r], tol, max_sweeps, S[r])
        sweeps[r] = sw
        same[r] = sm
    return sweeps, same


@numba.njit(cache=True)
def _ls_restarts_serial(X, labels, k, orders, tol, max_sweeps, S):  # pragma: no cover - compiled
    """:func:`_ls_restarts` in one thread (small problems: waking threads costs more than it saves,
    and much more on a loaded machine)."""
    R = labels.shape[0]
    sweeps = np.zeros(R, np.int64)
    same = np.zeros(R)
    for r in range(R):
        sw, sm = _ls_sweeps(X, labels[r], k, orders[r], tol, max_sweeps, S[r])
        sweeps[r] = sw
        same[r] = sm
    return sweeps, same


PARALLEL_RESTART_WORK = 2e7     # restarts x N^2 above which the restarts run in parallel


@dataclass
class ClusterResult:
    """The outcome of one clustering run.

    Attributes
    ----------
    labels : cluster index of every row (0 .. n_used-1, renumbered by first appearance).
    algorithm : "spectral" or "correlation".
    n_clusters : clusters asked for; ``n_used`` non-empty clusters found.
    transform : affinity transform (spectral) or shift (correlation) applied to the kernel.
    cost : eq. (5.2) cost of ``labels`` on the (shifted) matrix (correlation only).
    restart_costs : cost of every restart (correlation only).
    seconds : wall-clock time of the clustering (not of the kernel).
    """

    labels: np.ndarray
    algorithm: str
    n_clusters: int
    n_used: int
    transform: str
    seed: int
    cost: float | None = None
    restart_costs: list = field(default_factory=list)
    sweeps: list = field(default_factory=list)
    seconds: float = 0.0


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Cluster ids by order of first appearance (0, 1, ...), so equal partitions get equal labels."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inv.ravel()]


def _check_k(n: int, n_clusters) -> int:
    try:
        k = int(n_clusters)
    except (TypeError, ValueError):
        raise ClusterError(f"The number of clusters must be an integer, got {n_clusters!r}.") from None
    if k < 1:
        raise ClusterError(f"The number of clusters must be at least 1, got {k}.")
    if k > n:
        raise ClusterError(f"Cannot make {k} clusters from {n} rows.")
    return k


def correlation_clustering(X, n_clusters: int, *, restarts: int = 25, seed: int = 0, shift: str = "adaptive",
                           kernel: str | None = None, max_sweeps: int = 1000, compiled: bool = True,
                           init_labels=None) -> ClusterResult:
    """Correlation clustering of a similarity matrix by local search with restarts (module docstring).

    Parameters
    ----------
    X : (N, N) symmetric similarities (a Gram matrix).
    n_clusters : maximum number of clusters.
    restarts : independent random starts (thesis: 25); the lowest cost wins (first on ties).
    seed : seeds the starts and the visiting orders.
    shift : "adaptive" (double centering), "none", or "auto" (none for ``kernel == "fisher"``,
        adaptive otherwise -- the thesis's choice).
    init_labels : optional warm start, e.g. the partition found for the previous structure.  It
        replaces the *first* restart's random starting assignment (that restart keeps its random
        visiting order; the random numbers drawn are the same, so restarts 2.. are exactly the
        default protocol's).  The result is the best of the warm-started local search and the other
        random restarts, so it is never worse (in cost) than the warm start itself; with
        ``restarts=1`` it is a single local search from ``init_labels`` -- fast, but it stays in the
        previous partition's basin.  None (default) is the thesis protocol.  Labels must be
        integers in 0 .. n_clusters-1, one per row.
    """
    t0 = time.perf_counter()
    X = _square(X, "similarity matrix")
    n = X.shape[0]
    guard_workspace("correlation", n)
    X = 0.5 * (X + X.T)
    k = _check_k(n, n_clusters)
    if int(restarts) < 1:
        raise ClusterError(f"restarts must be at least 1, got {restarts}.")
    shift = _shift_for(kernel, shift)
    Xs = adaptive_shift(X) if shift == "adaptive" else X
    del X                                   # the symmetrised copy is not needed once shifted
    Xs = np.ascontiguousarray(Xs)
    absX = np.abs(Xs)
    tol = 1e-12 * max(float(absX.max(initial=0.0)), 1e-300) * max(n, 1)
    rng = np.random.default_rng(seed)
    best, best_cost, costs, sweeps = None, np.inf, [], []
    warm = None
    if init_labels is not None:
        warm = np.asarray(init_labels)
        if warm.shape != (n,) or warm.dtype.kind not in "iu" or (n and (warm.min() < 0 or warm.max() >= k)):
            raise ClusterError(f"The starting labels must be {n} integers between 0 and {k - 1}.")
        warm = warm.astype(np.int64)
    R = int(restarts)
    labs = np.empty((R, n), np.int64)
    orders = np.empty((R, n), np.int64)
    for r in range(R):                      # the random numbers in the order of the sequential protocol
        labs[r] = rng.integers(0, k, size=n)
        orders[r] = rng.permutation(n)
    if warm is not None:
        labs[0] = warm
    if compiled:
        big = R * n * n >= PARALLEL_RESTART_WORK
        S0 = (_restart_sums if big else _restart_sums_serial)(Xs, np.ascontiguousarray(labs.T), k)
        run = _ls_restarts if big else _ls_restarts_serial
        sws, same = run(Xs, labs, k, orders, tol, int(max_sweeps), S0)
        half_abs = 0.5 * (float(absX.sum()) + float(Xs.sum()))
    for r in range(R):
        lab = labs[r]
        if compiled:
            sw, c = sws[r], float(half_abs - same[r])
        else:
            sw = _local_search_py(Xs, lab, k, orders[r], tol, int(max_sweeps))
            c = cc_cost(Xs, lab)
        costs.append(c)
        sweeps.append(int(sw))
        if best is None or c < best_cost - 1e-9 * max(abs(best_cost), 1.0):
            best, best_cost = lab.copy(), c
    labels = _renumber(best)
    return ClusterResult(labels, "correlation", k, int(labels.max() + 1) if n else 0, shift, int(seed),
                         cost=float(best_cost), restart_costs=costs, sweeps=sweeps,
                         seconds=time.perf_counter() - t0)


# ====================================================================== spectral clustering
def spectral_clustering(K, n_clusters: int, *, transform: str = "shift-min", seed: int = 0,
                        n_init: int = 10) -> ClusterResult:
    """scikit-learn's SpectralClustering on ``affinity(K, transform)`` (defaults as in the thesis)."""
    t0 = time.perf_counter()
    guard_workspace("spectral", np.shape(K)[0])
    A = affinity(K, transform)
    k = _check_k(A.shape[0], n_clusters)
    if k == 1:
        labels = np.zeros(A.shape[0], dtype=np.int64)
    else:
        # the eigensolver and k-means run on one thread: the same labels, and on a busy 2-core machine (thread
        # pools spinning against other work) 2-4x faster at N = 300-2,000 and up to 17x for k-means alone
        with warnings.catch_warnings(), threadpool_limits(limits=1):
            warnings.simplefilter("ignore", UserWarning)  # "graph is not fully connected"
            sc = SpectralClustering(n_clusters=k, affinity="precomputed", random_state=int(seed), n_init=n_init)
            labels = _renumber(sc.fit_predict(A))
    return ClusterResult(labels, "spectral", k, int(labels.max() + 1), transform, int(seed),
                         seconds=time.perf_counter() - t0)


def cluster(K, n_clusters: int, algorithm: str = "correlation", *, kernel: str | None = None,
            transform: str = "shift-min", shift: str = "auto", restarts: int = 25, seed: int = 0,
            init_labels=None) -> ClusterResult:
    """Dispatch to :func:`spectral_clustering` or :func:`correlation_clustering` (``init_labels``: the
    correlation clustering's warm start; spectral clustering has none and ignores it)."""
    if algorithm == "spectral":
        return spectral_clustering(K, n_clusters, transform=transform, seed=seed)
    if algorithm == "correlation":
        return correlation_clustering(K, n_clusters, restarts=restarts, seed=seed, shift=shift, kernel=kernel,
                                      init_labels=init_labels)
    raise ClusterError(f"Unknown clustering algorithm '{algorithm}'; choose one of {', '.join(ALGORITHMS)}.")


# ====================================================================== metrics
def kernel_silhouette(K, labels) -> float | None:
    """Mean silhouette with the kernel distance d(x,y) = sqrt(K(x,x)+K(y,y)-2K(x,y)); None if undefined."""
    K = _square(K)
    guard_workspace("silhouette", K.shape[0])
    labels = np.asarray(labels)
    n_lab = len(np.unique(labels))
    if not 2 <= n_lab <= len(labels) - 1:
        return None
    return float(silhouette_score(np.sqrt(_sq_distances(K)), labels, metric="precomputed"))


def clustering_metrics(labels_true, labels_pred, K=None, *, ami_average: str = "max") -> dict:
    """ARI, AMI and V-measure against ``labels_true`` (rows with a negative label are left out),
    and the kernel-distance silhouette when ``K`` is given.

    AMI is normalised by max{H(U), H(V)} as in thesis eq. (C.4) (scikit-learn's default before
    0.22; today's default is ``ami_average="arithmetic"``).
    """
    pred = np.asarray(labels_pred)
    out = {"ari": None, "ami": None, "v_measure": None, "silhouette": None, "n_labelled": 0}
    if labels_true is not None:
        true = np.asarray(labels_true)
        if true.shape != pred.shape:
            raise ClusterError(f"{len(true)} labels but {len(pred)} cluster assignments.")
        ok = true >= 0 if true.dtype.kind in "iu" else np.ones(len(true), bool)
        if ok.any():
            t, p = true[ok], pred[ok]
            out.update(ari=float(adjusted_rand_score(t, p)),
                       ami=float(adjusted_mutual_info_score(t, p, average_method=ami_average)),
                       v_measure=float(v_measure_score(t, p)), n_labelled=int(ok.sum()))
    if K is not None:
        out["silhouette"] = kernel_silhouette(K, pred)
    return out


# ====================================================================== kernels from data
@dataclass
class KernelSetup:
    """A Gram matrix over the feature columns and what produced it."""

    K: np.ndarray
    kernel: str
    model: object | None          # the BayesNet behind the Fisher kernel (None otherwise)
    feature_columns: tuple        # the variables the kernel sees (never the label column)
    structure: str | None = None  # e.g. "hc/qnml", "exact/qnml", "given"
    params: str | None = None
    n_arcs: int | None = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)


def _feature_columns(data):
    feats = data.without_class()
    if feats.n_vars == 0:
        raise DataError(f"{data.source} has no feature columns besides the label column.")
    return feats


def _check_model(model, data) -> None:
    if data.class_column is not None and data.class_column in model.variables:
        raise ClusterError(f"The model includes the label column '{data.class_column}'; the label is never a "
                           "feature -- learn the model without it.")


def _fit_kernel(data, kernel: str, *, model=None, structure: str = "hc", score: str = "qnml",
                params: str = "cnml", seed: int = 0, progress: Progress | None = None):
    """(the kernel fitted on the feature columns of ``data``, those columns) -- linear work, no Gram."""
    spec = KERNELS[kernel]
    feats = _feature_columns(data)
    if model is not None:
        _check_model(model, data)
    fitted = spec.fit(feats, model=model, structure=structure, score=score, params=params, seed=seed,
                      progress=progress)
    return fitted, feats


def _setup_from(fitted, kernel: str, K, seconds: float) -> KernelSetup:
    net = KERNELS[kernel].uses_network
    return KernelSetup(K, kernel, fitted.model if net else None, tuple(fitted.variables),
                       fitted.structure if net else None, fitted.params if net else None,
                       fitted.n_arcs if net else None, seconds, list(fitted.notes))


def kernel_setup(data, kernel: str, *, model=None, structure: str = "hc", score: str = "qnml",
                 params: str = "cnml", seed: int = 0, progress: Progress | None = None) -> KernelSetup:
    """The Gram matrix of ``kernel`` (a name of :data:`bnfk_core.registry.KERNELS`) over the feature
    columns of ``data`` (label column excluded), the kernel fitted on those same rows.

    The Fisher kernel uses ``model`` when given, else a network learned on the features
    (``structure``/``score``, CPTs by ``params``).  scaled-Hamming uses the marginal
    frequencies of the features (thesis eq. 3.2); Hamming the fraction of equal values.
    """
    t0 = time.perf_counter()
    fitted, feats = _fit_kernel(data, kernel, model=model, structure=structure, score=score, params=params,
                                seed=seed, progress=progress)
    K = fitted.gram(feats)
    return _setup_from(fitted, kernel, K, time.perf_counter() - t0)


def feature_network(data, *, kernel: str = FISHER, structure: str = "hc", score: str = "qnml",
                    params: str = "cnml", seed: int = 0, progress: Progress | None = None):
    """The Bayesian network behind the network kernel ``kernel`` (``KERNELS[kernel].uses_network``), learned on
    the feature columns of ``data`` exactly as :func:`kernel_setup` learns it without a ``model``.

    So ``run_clustering(data, kernel, ..., model=feature_network(data, structure=S, score=C, params=P, seed=s),
    seed=s)`` equals ``run_clustering(data, kernel, ..., structure=S, score=C, params=P, seed=s)`` -- what the
    CLI computes from ``--structure S --score C --params P --seed s`` -- while the network can be kept and reused.
    """
    spec = KERNELS[kernel]
    if not spec.uses_network:
        raise ClusterError(f"The {spec.label} kernel is not built from a network.")
    fitted = spec.fit(_feature_columns(data), structure=structure, score=score, params=params, seed=seed,
                      progress=progress)
    return fitted.model


#: the most clusters a default asks for (the Clustering page's widget goes to 200 too)
MAX_DEFAULT_CLUSTERS = 200


def default_n_clusters(data) -> int:
    """Number of distinct (observed) labels of the class column, at most :data:`MAX_DEFAULT_CLUSTERS` (a class
    column of 100,000 levels would otherwise ask correlation clustering for 100,000 clusters)."""
    lab = data.labels()
    return min(int(len(np.unique(lab[lab >= 0]))), MAX_DEFAULT_CLUSTERS)


def choose_algorithm(n_rows: int, algorithm: str = "auto", *, feature_map: bool = True) -> tuple[str, str]:
    """(algorithm, reason): what ``algorithm="auto"`` runs on ``n_rows`` rows under the current memory limit.

    Correlation clustering (the thesis's reference) when the Gram matrix and its whole work space fit
    (:func:`bnfk_core.limits.workspace_bytes`), else kernel k-means in the explicit feature space
    (``kmeans-features``) when the kernel has a feature map; otherwise the memory guard's refusal.  Any
    other ``algorithm`` is returned as asked."""
    if algorithm not in CLUSTERERS:
        raise ClusterError(f"Unknown clustering algorithm '{algorithm}'; choose one of {', '.join(CLUSTERERS)}.")
    if algorithm != "auto":
        return algorithm, "asked for"
    n = int(n_rows)
    need = workspace_bytes("correlation", n)
    limit = resolve_limit()
    within = "no memory limit" if limit is None else f"the {format_bytes(limit)} limit"
    if fits("correlation", n):
        return "correlation", (f"the {n:,} x {n:,} Gram matrix and the work space of correlation clustering "
                               f"({format_bytes(need)}) fit {within}")
    if not feature_map:
        guard_workspace("correlation", n)      # refuses, with the sampling suggestion
    return "kmeans-features", (f"the {n:,} x {n:,} Gram matrix and the work space of correlation clustering "
                               f"({format_bytes(need)}) exceed {within}: kernel k-means in the explicit "
                               "feature space (linear memory)")


def run_clustering(data, kernel: str, algorithm: str, *, n_clusters: int | None = None, setup: KernelSetup | None = None,
                   transform: str = "shift-min", shift: str = "auto", restarts: int = 25, seed: int = 0,
                   model=None, structure: str = "hc", score: str = "qnml", params: str = "cnml",
                   n_init: int = 3) -> dict:
    """Kernel + clustering + metrics for one dataset: a JSON-ready dict (labels included).

    ``algorithm``: a name of :data:`bnfk_core.registry.CLUSTERERS`; one that does not use a kernel (``lca``) runs its
    own ``run`` and ignores the kernel options.  ``auto`` runs :func:`choose_algorithm`'s choice (a given
    ``setup`` already holds the Gram matrix, so it means correlation clustering) and reports it as
    ``algorithm_chosen`` with ``algorithm_reason``.  ``kmeans-features`` is kernel k-means on the explicit
    features (:mod:`bnfk_core.analyses.cluster_features`, ``n_init`` seeded starts; its silhouette is on a
    seeded sample of rows).  Every Gram-based path is refused (one line, sampling suggestion) before it
    allocates when its whole work space exceeds the memory limit.
    """
    t0 = time.perf_counter()
    requested = algorithm
    if algorithm not in CLUSTERERS:
        raise ClusterError(f"Unknown clustering algorithm '{algorithm}'; choose one of {', '.join(CLUSTERERS)}.")
    true = data.labels() if data.class_column is not None else None
    if n_clusters is None:
        if true is None:
            raise ClusterError("Give the number of clusters (there is no label column to count them from).")
        n_clusters = default_n_clusters(data)
    spec = CLUSTERERS[algorithm]
    if not spec.uses_kernel:       # the algorithm clusters the rows itself (e.g. lca): no kernel, no Gram
        res = spec.run(data, n_clusters, seed=seed, starts=restarts)
        labels = np.asarray(res["labels"])
        out = {**clustering_metrics(true, labels), **{k: v for k, v in res.items() if k not in ("labels", "model")},
               "labels": labels.tolist(), "algorithm": algorithm, "kernel": None, "seed": seed,
               "label_column": data.class_column, "seconds": time.perf_counter() - t0}
        return out
    fitted = feats = fit_seconds = None
    if setup is None and (algorithm != "auto" or not fits("correlation", data.n_rows)):
        if algorithm in ALGORITHMS:
            guard_workspace(algorithm, data.n_rows)      # before the structure search and the Gram
        t1 = time.perf_counter()
        fitted, feats = _fit_kernel(data, kernel, model=model, structure=structure, score=score, params=params,
                                    seed=seed)
        fit_seconds = time.perf_counter() - t1
    reason = None
    if algorithm == "auto":
        if setup is not None:
            algorithm, reason = "correlation", "the Gram matrix was given"
        else:
            from .cluster_features import has_feature_map
            algorithm, reason = choose_algorithm(data.n_rows, feature_map=fitted is None or has_feature_map(fitted))
    if algorithm == "kmeans-features":
        out = _run_feature_clustering(data, kernel, fitted, feats, fit_seconds, true, n_clusters, seed, n_init,
                                      setup)
    else:
        if setup is None:
            if fitted is None:
                setup = kernel_setup(data, kernel, model=model, structure=structure, score=score, params=params,
                                     seed=seed)
            else:
                t1 = time.perf_counter()
                setup = _setup_from(fitted, kernel, fitted.gram(feats), fit_seconds + time.perf_counter() - t1)
        res = cluster(setup.K, n_clusters, algorithm, kernel=kernel, transform=transform, shift=shift,
                      restarts=restarts, seed=seed)
        m = clustering_metrics(true, res.labels, setup.K)
        out = {**m, "labels": res.labels.tolist(), "kernel": kernel, "algorithm": algorithm,
               "n_clusters": res.n_clusters, "n_used": res.n_used,
               "transform" if algorithm == "spectral" else "shift": res.transform,
               "cost": res.cost, "restarts": restarts if algorithm == "correlation" else None,
               "seed": seed, "structure": setup.structure, "params": setup.params, "n_arcs": setup.n_arcs,
               "features": list(setup.feature_columns), "label_column": data.class_column,
               "kernel_seconds": setup.seconds, "cluster_seconds": res.seconds}
    if requested == "auto":
        out.update(algorithm_requested="auto", algorithm_chosen=algorithm, algorithm_reason=reason)
    out["seconds"] = time.perf_counter() - t0
    return out


def _run_feature_clustering(data, kernel, fitted, feats, fit_seconds, true, n_clusters, seed, n_init, setup) -> dict:
    """run_clustering's ``kmeans-features`` branch: features, kernel k-means, metrics (sampled silhouette)."""
    from .cluster_features import feature_map, kernel_kmeans_features, sampled_silhouette
    if fitted is None:
        raise ClusterError("kmeans-features clusters the explicit features; it cannot use a given Gram matrix.")
    t1 = time.perf_counter()
    Phi = feature_map(fitted, feats)
    feat_seconds = time.perf_counter() - t1
    res = kernel_kmeans_features(Phi, n_clusters, seed=seed, n_init=n_init)
    m = clustering_metrics(true, res.labels)
    m["silhouette"], sil_rows = sampled_silhouette(Phi, res.labels, seed=seed)
    info = _setup_from(fitted, kernel, None, 0.0)
    return {**m, "silhouette_rows": sil_rows, "labels": res.labels.tolist(), "kernel": kernel,
            "algorithm": res.algorithm, "n_clusters": res.n_clusters, "n_used": res.n_used, "transform": res.transform,
            "cost": res.cost, "n_init": int(n_init), "seed": seed, "structure": info.structure,
            "params": info.params, "n_arcs": info.n_arcs, "features": list(info.feature_columns),
            "feature_columns_phi": int(Phi.shape[1]), "feature_nnz": int(Phi.nnz),
            "label_column": data.class_column, "kernel_seconds": fit_seconds + feat_seconds,
            "cluster_seconds": res.seconds}


def compare(data, *, kernels: Sequence[str] = (FISHER, SCALED_HAMMING, HAMMING), algorithms: Sequence[str] = ("correlation", "spectral"),
            runs: int = 10, seed: int = 0, n_clusters: int | None = None, transform: str = "shift-min",
            restarts: int = 25, structure: str = "hc", score: str = "qnml", params: str = "cnml", model=None,
            progress: Progress | None = None) -> pd.DataFrame:
    """The thesis's Table 5.1 layout for one dataset: one row per (algorithm, kernel) with mean and std of
    ARI, AMI and V-measure over ``runs`` seeds (``seed``, ``seed+1``, ...).

    The kernel is computed once per kernel (for the Fisher kernel: one structure, seed ``seed``);
    the runs differ in the clustering's random starts, as in the thesis.
    """
    if int(runs) < 1:
        raise ClusterError(f"runs must be at least 1, got {runs}.")
    rows = []
    total = len(kernels) * (1 + len(algorithms) * runs)
    done = 0

    def tick(msg):
        nonlocal done
        done += 1
        if progress is not None:
            progress(done / total, msg)

    if n_clusters is None:
        n_clusters = default_n_clusters(data)
    for alg in algorithms:
        if alg not in ALGORITHMS:
            raise ClusterError(f"Unknown clustering algorithm '{alg}'; choose one of {', '.join(ALGORITHMS)}.")
        guard_workspace(alg, data.n_rows)           # before any structure search or Gram matrix
    for kern in kernels:
        setup = kernel_setup(data, kern, model=model, structure=structure, score=score, params=params, seed=seed)
        tick(f"{kern}: kernel")
        for alg in algorithms:
            vals = []
            for r in range(int(runs)):
                out = run_clustering(data, kern, alg, n_clusters=n_clusters, setup=setup, transform=transform,
                                     restarts=restarts, seed=seed + r)
                vals.append((out["ari"], out["ami"], out["v_measure"], out["cluster_seconds"]))
                tick(f"{alg} / {kern}: run {r + 1}/{runs}")
            v = np.array(vals, dtype=float)
            abbrev = {"correlation": "CC", "spectral": "SC"}[alg] + "-" + kernel_abbr(kern)
            rows.append({"combination": abbrev, "algorithm": alg, "kernel": kern,
                         "ari": v[:, 0].mean(), "ari_std": v[:, 0].std(), "ami": v[:, 1].mean(),
                         "ami_std": v[:, 1].std(), "v_measure": v[:, 2].mean(), "v_measure_std": v[:, 2].std(),
                         "seconds": v[:, 3].mean(), "structure": setup.structure, "n_arcs": setup.n_arcs})
    return pd.DataFrame(rows)


# ====================================================================== classification
@dataclass
class ClassificationResult:
    kernel: str
    classifier: str
    accuracy: list
    log_loss: list
    seeds: list
    test_size: float
    n_classes: int
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        acc, ll = np.asarray(self.accuracy), np.asarray(self.log_loss)
        return {"kernel": self.kernel, "classifier": self.classifier,
                "accuracy": float(acc.mean()), "accuracy_std": float(acc.std()),
                "log_loss": float(ll.mean()), "log_loss_std": float(ll.std()),
                "accuracy_per_repeat": acc.tolist(), "log_loss_per_repeat": ll.tolist(),
                "seeds": list(self.seeds), "repeats": len(self.seeds), "test_size": self.test_size,
                "n_classes": self.n_classes, "notes": list(self.notes), "seconds": self.seconds}


def _train_test_kernels(feats, kernel, tr, te, *, structure, score, params, seed, model, dag=None):
    """(K_train_train, K_test_train, diag K_test_test) with the kernel fitted on the training rows only."""
    train, test = feats.subset(tr), feats.subset(te)
    fitted = KERNELS[kernel].fit(train, model=model, dag=dag, structure=structure, score=score, params=params,
                                 seed=seed)
    return fitted.gram(train), fitted.gram(test, train), np.diag(fitted.gram(test)).copy()


def _settle_ties(*Ds):
    """The neighbour distances rounded to 12 significant digits of their largest value: kernels with few
    distinct values (Hamming, scaled-Hamming) have many exactly tied neighbours, and without this their
    order would follow the last bits of a floating-point sum -- which any change in summation order moves."""
    scale = max(float(np.abs(D).max(initial=0.0)) for D in Ds) or 1.0
    return tuple(np.round(D / scale, 12) * scale for D in Ds)


def _knn_proba(Ktr, Kte, dte, ytr, classes, k, by: str = "distance"):
    """scikit-learn's uniform kNN, neighbours by kernel distance d(x,y) = sqrt(K(x,x) + K(y,y) - 2 K(x,y))
    (``by="distance"``) or by the kernel value itself, most similar first (``by="similarity"``)."""
    if by == "distance":
        dtr = np.diag(Ktr)
        Dtr = np.sqrt(np.clip(dtr[:, None] + dtr[None, :] - 2.0 * Ktr, 0.0, None))
        np.fill_diagonal(Dtr, 0.0)
        Dte = np.sqrt(np.clip(np.asarray(dte)[:, None] + dtr[None, :] - 2.0 * Kte, 0.0, None))
    elif by == "similarity":
        top = max(float(Ktr.max(initial=0.0)), float(Kte.max(initial=0.0)))
        Dtr, Dte = top - Ktr, top - Kte
    else:
        raise ClusterError(f"Unknown neighbour criterion '{by}'; choose distance or similarity.")
    Dtr, Dte = _settle_ties(Dtr, Dte)
    knn = KNeighborsClassifier(n_neighbors=min(int(k), Ktr.shape[0]), weights="uniform", metric="precomputed")
    knn.fit(Dtr, ytr)
    P = np.zeros((Kte.shape[0], len(classes)))
    P[:, np.searchsorted(classes, knn.classes_)] = knn.predict_proba(Dte)
    return P


def _svm_proba(Ktr, Kte, ytr, classes, C):
    """SVC on a precomputed kernel with sigmoid-calibrated probabilities (columns in ``classes`` order)."""
    svc = SVC(kernel="precomputed", C=float(C))
    folds = min(5, int(np.bincount(np.searchsorted(classes, ytr)).max(initial=0)))
    smallest = int(np.min(np.unique(ytr, return_counts=True)[1]))
    P = np.zeros((Kte.shape[0], len(classes)))
    if smallest >= 2 and folds >= 2:
        model = CalibratedClassifierCV(svc, method="sigmoid", cv=min(folds, smallest), ensemble=False)
        model.fit(Ktr, ytr)
        P[:, np.searchsorted(classes, model.classes_)] = model.predict_proba(Kte)
    else:  # a class with one training row cannot be calibrated: hard votes
        svc.fit(Ktr, ytr)
        P[np.arange(len(P)), np.searchsorted(classes, svc.predict(Kte))] = 1.0
    return P


def classify(data, kernel: str, classifier: str, **options) -> ClassificationResult:
    """Kernel kNN / SVM over seeded train/test splits (thesis App. D); see :func:`classify_many`."""
    return classify_many(data, kernel, (classifier,), **options)[classifier]


def classify_many(data, kernel: str, classifiers: Sequence[str] = CLASSIFIERS, *, repeats: int = 10, seed: int = 0,
                  test_size: float = 0.2, k: int = 7, C: float = 1.0, structure: str = "hc", score: str = "qnml",
                  params: str = "cnml", model=None, dag=None, neighbours: str = "distance",
                  progress: Progress | None = None) -> dict:
    """Kernel kNN and/or SVM over ``repeats`` seeded train/test splits (thesis App. D).

    Split r uses ``seed + r`` (``sklearn.model_selection.train_test_split``, shuffled, not stratified);
    the kernel's model is estimated on its training rows (one kernel per split, shared by the
    classifiers).  kNN: scikit-learn's ``KNeighborsClassifier(k, weights="uniform",
    metric="precomputed")`` on the kernel distance (ties between equally distant rows broken as
    scikit-learn does); class probabilities are the vote shares.  ``neighbours="similarity"`` takes the
    ``k`` training rows with the largest K(x, y) instead -- the same for the Hamming kernel without
    missing cells (K(y, y) = 1), different for kernels whose self-similarity varies.  SVM: ``SVC(kernel="precomputed", C=C,
    probability=True, random_state=seed+r)``.  Log loss is scikit-learn's over all classes of the label
    column, probabilities clipped to [1e-15, 1].  Rows with a missing label are left out.

    The Fisher kernel's network: learned per training split with ``structure``/``score`` (default),
    or a fixed ``dag`` whose CPTs are fitted per training split by ``params``, or a fixed ``model``
    (used as is -- its parameters may have seen the test rows' features, never their labels).

    Returns ``{classifier: ClassificationResult}``.
    """
    KERNELS[kernel]  # unknown names are refused here, before any work
    for c in classifiers:
        if c not in CLASSIFIERS:
            raise ClusterError(f"Unknown classifier '{c}'; choose one of {', '.join(CLASSIFIERS)}.")
    if not 0 < float(test_size) < 1:
        raise ClusterError(f"test_size must be between 0 and 1, got {test_size}.")
    if int(repeats) < 1:
        raise ClusterError(f"repeats must be at least 1, got {repeats}.")
    if int(k) < 1:
        raise ClusterError(f"k (neighbours) must be at least 1, got {k}.")
    if neighbours not in ("distance", "similarity"):
        raise ClusterError(f"Unknown neighbour criterion '{neighbours}'; choose distance or similarity.")
    if model is not None:
        _check_model(model, data)
    guard_workspace("classification", int((data.labels() >= 0).sum()), test_size=float(test_size))
    if dag is not None and data.class_column in dag.nodes:
        raise ClusterError(f"The structure includes the label column '{data.class_column}'; the label is never a "
                           "feature -- remove it from the structure.")
    t0 = time.perf_counter()
    y_all = data.labels()
    keep = np.flatnonzero(y_all >= 0)
    notes = []
    if len(keep) < len(y_all):
        notes.append(f"{len(y_all) - len(keep)} rows with a missing label left out")
    feats = _feature_columns(data).subset(keep)
    y = y_all[keep]
    classes = np.unique(y)
    if len(classes) < 2:
        raise ClusterError(f"Label column '{data.class_column}' has fewer than two classes.")
    acc = {c: [] for c in classifiers}
    ll = {c: [] for c in classifiers}
    seeds = []
    for r in range(int(repeats)):
        s = int(seed) + r
        tr, te = train_test_split(np.arange(len(y)), test_size=float(test_size), random_state=s, shuffle=True)
        if len(np.unique(y[tr])) < 2:
            raise ClusterError(f"Split {r + 1} has a single class in its training rows; use more data.")
        Ktr, Kte, dte = _train_test_kernels(feats, kernel, tr, te, structure=structure, score=score, params=params,
                                       seed=s, model=model, dag=dag)
        for clf in classifiers:
            if clf == "knn":
                P = _knn_proba(Ktr, Kte, dte, y[tr], classes, k, neighbours)
            else:
                P = _svm_proba(Ktr, Kte, y[tr], classes, C)
            pred = classes[np.argmax(P, axis=1)]
            acc[clf].append(float(accuracy_score(y[te], pred)))
            Pc = np.clip(P, 1e-15, 1.0)
            ll[clf].append(float(log_loss(y[te], Pc / Pc.sum(axis=1, keepdims=True), labels=classes)))
        seeds.append(s)
        if progress is not None:
            progress((r + 1) / repeats, f"{kernel}: split {r + 1}/{repeats}")
    secs = time.perf_counter() - t0
    return {c: ClassificationResult(kernel, c, acc[c], ll[c], list(seeds), float(test_size), len(classes), secs,
                                    list(notes)) for c in classifiers}


def classifier_label(classifier: str, *, k: int = 7, C: float = 1.0) -> str:
    """How a classifier of :data:`CLASSIFIERS` is named in tables, with its setting."""
    if classifier == "knn":
        return f"kNN (k = {int(k)}, uniform)"
    if classifier == "svm":
        return f"SVM (C = {C:g}, precomputed kernel)"
    raise ClusterError(f"Unknown classifier '{classifier}'; choose one of {', '.join(CLASSIFIERS)}.")


def classification_table(data, kernels: Sequence[str], classifiers: Sequence[str] = CLASSIFIERS, *,
                         repeats: int = 10, seed: int = 0, k: int = 7, C: float = 1.0, model=None,
                         structure: str = "hc", score: str = "qnml", params: str = "cnml",
                         progress: Progress | None = None) -> pd.DataFrame:
    """Every classifier on every kernel (:func:`classify_many`, thesis App. D) as one table:
    ``classifier, kernel`` (labels), ``accuracy, accuracy_std, log_loss, log_loss_std``, kernels outer.

    A network kernel (``KERNELS[name].uses_network``) given ``model`` keeps that network's structure and
    re-fits its CPTs on each training split with the model's own estimator (``model.fit_info["method"]``,
    else ``params``); without ``model`` the network is learned per split by ``structure``/``score``.
    The other kernels are fitted on each training split as always.
    """
    names = list(kernels)
    lines = []
    for j, kern in enumerate(names):
        spec = KERNELS[kern]
        net = spec.uses_network and model is not None
        est = (getattr(model, "fit_info", None) or {}).get("method", params) if net else params
        out = classify_many(data, kern, tuple(classifiers), repeats=repeats, seed=seed, k=k, C=C,
                            dag=model.dag if net else None, params=est, structure=structure, score=score,
                            progress=None if progress is None else
                            (lambda f, msg, j=j: progress(min((j + f) / len(names), 1.0), msg)))
        for clf, res in out.items():
            r = res.to_dict()
            lines.append({"classifier": classifier_label(clf, k=k, C=C), "kernel": spec.label,
                          **{c: r[c] for c in ("accuracy", "accuracy_std", "log_loss", "log_loss_std")}})
    return pd.DataFrame(lines, columns=["classifier", "kernel", "accuracy", "accuracy_std", "log_loss", "log_loss_std"])


# ====================================================================== views
def contingency(labels_true, labels_pred, true_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Clusters × labels counts (rows: clusters, columns: labels; a missing label is column '(missing)')."""
    pred = np.asarray(labels_pred)
    true = np.asarray(labels_true)
    names = list(true_names) if true_names is not None else None

    def name(c):
        if c < 0:
            return "(missing)"
        return str(names[c]) if names is not None else str(c)

    t = pd.Series([name(c) for c in true], name="label")
    p = pd.Series([f"cluster {c}" for c in pred], name="cluster")
    tab = pd.crosstab(p, t)
    order = [name(c) for c in sorted(set(true.tolist()), key=lambda c: (c < 0, c))]
    return tab.reindex(columns=order, fill_value=0)


def cluster_ordering(labels, K=None) -> np.ndarray:
    """Rows grouped by cluster (largest first), clustered inside each group when ``K`` is given."""
    labels = np.asarray(labels)
    sizes = np.bincount(labels)
    rank = np.empty_like(sizes)
    rank[np.argsort(-sizes, kind="stable")] = np.arange(len(sizes))
    return class_order(rank[labels], K)


def embedding(K, k: int = 2) -> np.ndarray:
    """Kernel PCA of the Gram matrix: centre it, take the top-``k`` eigenvectors (see ``bnfk_core.embed.kernel_pca``)."""
    return kernel_pca(_square(K), k)
