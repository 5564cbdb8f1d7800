"""Rows seen through a kernel matrix: samples, orderings, distances, embeddings.

Plain numbers in, plain numbers out (index orders, coordinates), used by the analyses and by
the app's figures alike.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.cluster.hierarchy import leaves_list, linkage
from scipy.spatial.distance import squareform

__all__ = ["sample_rows", "kernel_distance", "cluster_order", "class_order", "kernel_pca", "pair_values"]


# ---------------------------------------------------------------------- rows and kernels
def sample_rows(n_total: int, n: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of ``min(n, n_total)`` rows drawn without replacement (all rows if n >= n_total)."""
    n_total, n = int(n_total), int(n)
    if n >= n_total:
        return np.arange(n_total)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_total, size=max(n, 0), replace=False))


def kernel_distance(K: np.ndarray) -> np.ndarray:
    """Feature-space distance d(x, y) = sqrt(K(x,x) + K(y,y) - 2 K(x,y)), clipped at 0."""
    K = np.asarray(K, float)
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.sqrt(np.clip(D2, 0.0, None))


def cluster_order(K: np.ndarray, method: str = "average") -> np.ndarray:
    """Leaf order of hierarchical clustering (average linkage) on the kernel distance."""
    K = np.asarray(K, float)
    n = K.shape[0]
    if n <= 2:
        return np.arange(n)
    Z = linkage(squareform(kernel_distance(K), checks=False), method=method)
    return np.asarray(leaves_list(Z), dtype=np.int64)


def class_order(labels: Sequence[int], K: np.ndarray | None = None) -> np.ndarray:
    """Rows grouped by class code (missing, -1, last); inside a class, clustered when ``K`` is given."""
    labels = np.asarray(labels)
    keys = np.where(labels < 0, labels.max(initial=0) + 1, labels)
    out = []
    for c in np.unique(keys):
        idx = np.flatnonzero(keys == c)
        if K is not None and len(idx) > 2:
            idx = idx[cluster_order(np.asarray(K)[np.ix_(idx, idx)])]
        out.append(idx)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def kernel_pca(K: np.ndarray, k: int = 2) -> np.ndarray:
    """Rows embedded on the top ``k`` principal axes of the centred kernel matrix (N, k)."""
    K = np.asarray(K, float)
    n = K.shape[0]
    if n == 0:
        return np.zeros((0, k))
    J = np.eye(n) - 1.0 / n
    Kc = J @ K @ J
    Kc = 0.5 * (Kc + Kc.T)
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
