"""Ward's hierarchical clustering in a kernel's feature space (kernel Ward), from the Gram matrix.

Ward (1963) merges, at every step, the two clusters whose union increases the within-cluster sum of squares
the least; cut where ``n_clusters`` clusters remain, it is a greedy, deterministic minimiser of the k-means
objective.  With a positive semidefinite kernel K = Phi Phi^T the sum of squares is taken in feature space,

    sum_c sum_{x in c} ||phi(x) - mu_c||^2 = sum_x K(x, x) - sum_c (1/|c|) sum_{x, y in c} K(x, y),

and everything Ward needs is the kernel-induced Euclidean distance d(x, y) = sqrt(K(x,x) + K(y,y) - 2 K(x,y)):
the Lance-Williams update of Ward's criterion is exact for Euclidean distances (Murtagh & Legendre 2014,
"Ward's hierarchical agglomerative clustering method: which algorithms implement Ward's criterion?").  We hand
those distances, condensed, to SciPy's ``linkage(method="ward")`` (the nearest-neighbour-chain algorithm,
O(N^2) time and memory) and cut the tree after its first N - k merges.  So kernel Ward on K equals Ward on the
explicit features when a kernel has them (tests: scikit-learn's ``AgglomerativeClustering(linkage="ward")`` on
the normalised Fisher features, and a brute-force Ward that tries every merge).

No randomness: the seed is recorded, not used.  Ties between equal merge costs are broken by SciPy's order of
the rows.  The Gram matrix must be positive semidefinite for the distances to be Euclidean; a kernel that is
not (some similarity measures) still gets a hierarchy of its clipped distances, without Ward's guarantee.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.cluster.hierarchy import linkage

from ...data.limits import guard_workspace
from .common import ClusterResult, check_k, renumber, square_matrix

__all__ = ["WARD", "condensed_distances", "cut_merges", "ward_cost", "ward_clustering", "cluster_gram"]

#: the algorithm's registered name (:data:`bnfk_core.registry.CLUSTERERS`)
WARD = "ward"


def condensed_distances(K) -> np.ndarray:
    """The kernel-induced distances d(x, y) of every pair x < y, in SciPy's condensed order (row by row), one
    row at a time (no second N x N matrix); squared distances below 0 (rounding) are 0."""
    K = square_matrix(K)
    n = K.shape[0]
    d = np.diag(K).copy()
    out = np.empty(n * (n - 1) // 2)
    at = 0
    for i in range(n - 1):
        row = d[i] + d[i + 1 :] - (K[i, i + 1 :] + K[i + 1 :, i])  # K(x,x) + K(y,y) - 2 K(x,y), symmetrised
        np.sqrt(np.maximum(row, 0.0), out=out[at : at + n - 1 - i])
        at += n - 1 - i
    return out


def cut_merges(Z: np.ndarray, n: int, k: int) -> np.ndarray:
    """Labels of the ``k`` clusters left after the first n - k merges of the linkage matrix ``Z`` (union-find
    over its node ids: merge m creates node n + m), renumbered by first appearance."""
    parent = np.arange(2 * n - 1)
    for m in range(n - k):
        a, b = int(Z[m, 0]), int(Z[m, 1])
        parent[a] = parent[b] = n + m

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    return renumber(np.array([root(i) for i in range(n)], dtype=np.int64))


def ward_cost(K, labels) -> float:
    """The within-cluster sum of squares in feature space, sum_x K(x,x) - sum_c (1/|c|) sum_{x,y in c}
    K(x,y)."""
    K = np.asarray(K, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)
    cost = float(np.trace(K))
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        cost -= float(K[np.ix_(idx, idx)].sum()) / len(idx)
    return cost


def ward_clustering(K, n_clusters: int, *, seed: int = 0) -> ClusterResult:
    """Kernel Ward (module docstring) of the Gram matrix ``K`` into ``n_clusters`` clusters.

    Parameters
    ----------
    K : (N, N) positive semidefinite Gram matrix.
    n_clusters : number of clusters, 1 .. N.
    seed : recorded in the result; Ward uses no randomness.

    Returns
    -------
    ClusterResult
        ``algorithm="ward"``, ``transform="distances"``, ``cost`` = the within-cluster sum of squares in
        feature space (:func:`ward_cost`, the k-means objective).
    """
    t0 = time.perf_counter()
    K = square_matrix(K)
    n = K.shape[0]
    k = check_k(n, n_clusters)
    guard_workspace(WARD, n)
    if n == 1 or k == n:
        labels = np.arange(n, dtype=np.int64)
    elif k == 1:
        labels = np.zeros(n, dtype=np.int64)
    else:
        Z = linkage(condensed_distances(K), method="ward")
        labels = cut_merges(Z, n, k)
    return ClusterResult(
        labels,
        WARD,
        k,
        int(labels.max() + 1) if n else 0,
        "distances",
        int(seed),
        cost=ward_cost(K, labels),
        seconds=time.perf_counter() - t0,
    )


def cluster_gram(K, n_clusters: int, *, seed: int = 0, **_) -> ClusterResult:
    """The ``ward`` member of :data:`bnfk_core.registry.CLUSTERERS`: :func:`ward_clustering` of a Gram matrix
    (options it does not use -- transform, shift, restarts, a warm start -- are ignored)."""
    return ward_clustering(K, n_clusters, seed=seed)
