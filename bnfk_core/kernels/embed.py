"""Rows seen through a kernel matrix: samples, orderings, distances, embeddings.

Plain numbers in, plain numbers out (index orders, coordinates), used by the analyses and by
the app's figures alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.cluster.hierarchy import leaves_list, linkage
from scipy.spatial.distance import squareform

from ..data.table import sample_rows  # re-exported: the seeded row sample lives with the tables

__all__ = [
    "sample_rows",
    "kernel_distance",
    "cluster_order",
    "class_order",
    "kernel_pca",
    "pair_values",
    "LANCZOS_ROWS",
]


# ---------------------------------------------------------------------- rows and kernels
def kernel_distance(K: np.ndarray) -> np.ndarray:
    """Feature-space distance d(x, y) = sqrt(K(x,x) + K(y,y) - 2 K(x,y)), clipped at 0.

    Parameters
    ----------
    K : numpy.ndarray
        A square kernel matrix.

    Returns
    -------
    numpy.ndarray
        The (N, N) distances ||phi(x) - phi(y)||.
    """
    K = np.asarray(K, float)
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.sqrt(np.clip(D2, 0.0, None))


def cluster_order(K: np.ndarray, method: str = "average") -> np.ndarray:
    """Leaf order of hierarchical clustering (average linkage) on the kernel distance.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        Kernel matrix.
    method : str
        SciPy linkage method.

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    K = np.asarray(K, float)
    n = K.shape[0]
    if n <= 2:
        return np.arange(n)
    Z = linkage(squareform(kernel_distance(K), checks=False), method=method)
    return np.asarray(leaves_list(Z), dtype=np.int64)


def class_order(labels: Sequence[int], K: np.ndarray | None = None) -> np.ndarray:
    """Rows grouped by class code (missing, -1, last); inside a class, clustered when ``K`` is given.

    Parameters
    ----------
    labels : sequence of int
        Class code of every row.
    K : ndarray, shape (n, n), optional

    Returns
    -------
    ndarray of int64
        A permutation of the rows.
    """
    labels = np.asarray(labels)
    keys = np.where(labels < 0, labels.max(initial=0) + 1, labels)
    out = []
    for c in np.unique(keys):
        idx = np.flatnonzero(keys == c)
        if K is not None and len(idx) > 2:
            idx = idx[cluster_order(np.asarray(K)[np.ix_(idx, idx)])]
        out.append(idx)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


#: from this many rows on, :func:`kernel_pca` finds its top axes by Lanczos iteration (ARPACK) instead of a
#: full eigendecomposition (O(N^3): 1,000 rows took 0.3-20 s on a shared machine, the Lanczos run a few ms)
LANCZOS_ROWS = 300


def kernel_pca(K: np.ndarray, k: int = 2) -> np.ndarray:
    """Rows embedded on the top ``k`` principal axes of the centred kernel matrix (N, k).

    Centring ``Kc = J K J`` (J = I - 11'/N) is done with row and column means; the top ``k`` eigenpairs come
    from ``numpy.linalg.eigh`` below :data:`LANCZOS_ROWS` rows, else from ``scipy.sparse.linalg.eigsh``
    (largest algebraic, a seeded start vector, machine-precision tolerance: the same axes to ~1e-10).

    Parameters
    ----------
    K : numpy.ndarray
        A symmetric (N, N) kernel matrix.
    k : int
        The number of axes.

    Returns
    -------
    numpy.ndarray
        (N, k) coordinates: eigenvectors scaled by the square roots of their (non-negative) eigenvalues.

    References
    ----------
    Schölkopf, Smola & Müller (1998), "Nonlinear component analysis as a kernel eigenvalue problem", Neural
    Computation 10(5).
    """
    K = np.asarray(K, float)
    n = K.shape[0]
    if n == 0:
        return np.zeros((0, k))
    r = K.mean(axis=0)
    Kc = K - r[None, :] - K.mean(axis=1)[:, None] + r.mean()
    Kc = 0.5 * (Kc + Kc.T)
    w = None
    if n >= LANCZOS_ROWS and k < n - 1:
        from scipy.sparse.linalg import ArpackError, eigsh

        try:
            w, V = eigsh(Kc, k=k, which="LA", v0=np.random.default_rng(0).standard_normal(n), tol=0.0)
        except ArpackError:  # (no convergence) the full decomposition below
            w = None
    if w is None:
        w, V = np.linalg.eigh(Kc)
    top = np.argsort(w)[::-1][:k]
    Y = V[:, top] * np.sqrt(np.clip(w[top], 0.0, None))
    # deterministic signs: the largest loading of each axis is positive
    signs = np.sign(Y[np.abs(Y).argmax(axis=0), np.arange(Y.shape[1])])
    Y = Y * np.where(signs == 0, 1.0, signs)
    if Y.shape[1] < k:
        Y = np.hstack([Y, np.zeros((n, k - Y.shape[1]))])
    return Y


def pair_values(K: np.ndarray, labels: Sequence[int] | None = None) -> dict:
    """Kernel values of distinct pairs (upper triangle), split by class.

    Returns ``{"all": values}`` and, with labels, ``{"within": {code: values}, "between": values}``.

    Parameters
    ----------
    K : ndarray, shape (n, n)
    labels : sequence of int, optional
        Class codes (-1 = missing, in no class).

    Returns
    -------
    dict
    """
    K = np.asarray(K, float)
    iu = np.triu_indices(K.shape[0], k=1)
    out = {"all": K[iu]}
    if labels is not None:
        labels = np.asarray(labels)
        a, b = labels[iu[0]], labels[iu[1]]
        same = (a == b) & (a >= 0)
        out["within"] = {int(c): K[iu][same & (a == c)] for c in np.unique(labels[labels >= 0])}
        out["between"] = K[iu][~same]
    return out
