"""What every clustering module shares: the error, the result type, label renumbering, the cluster-count
check, the square-matrix check and kernel distances, and the feature columns a kernel sees (never the label
column)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import BnfkError, DataError

__all__ = [
    "ClusterError",
    "ClusterResult",
    "Progress",
    "square_matrix",
    "sq_distances",
    "renumber",
    "check_k",
    "feature_columns",
    "check_model",
]

Progress = Callable[[float, str], None]


class ClusterError(BnfkError):
    """A clustering or classification request cannot be carried out as asked."""


def square_matrix(K, what: str = "kernel matrix") -> np.ndarray:
    """``K`` as a finite square float array (else a ClusterError naming ``what``)."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ClusterError(f"The {what} must be square, got shape {K.shape}.")
    if not np.isfinite(K).all():
        raise ClusterError(f"The {what} has non-finite entries.")
    return K


def sq_distances(K: np.ndarray) -> np.ndarray:
    """Kernel-induced squared distances d²(x,y) = K(x,x) + K(y,y) - 2 K(x,y), symmetric, zero diagonal, >=
    0."""
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.clip(D2, 0.0, None)


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
    info: dict = field(
        default_factory=dict
    )  # what the algorithm adds (kmeans-features: the features' non-zeros)


def renumber(labels: np.ndarray) -> np.ndarray:
    """Cluster ids by order of first appearance (0, 1, ...), so equal partitions get equal labels."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inv.ravel()]


def check_k(n: int, n_clusters) -> int:
    """``n_clusters`` as an int in 1 .. n (else a one-line ClusterError)."""
    try:
        k = int(n_clusters)
    except (TypeError, ValueError):
        raise ClusterError(f"The number of clusters must be an integer, got {n_clusters!r}.") from None
    if k < 1:
        raise ClusterError(f"The number of clusters must be at least 1, got {k}.")
    if k > n:
        raise ClusterError(f"Cannot make {k} clusters from {n} rows.")
    return k


def feature_columns(data):
    """``data`` without its label column (refused when nothing is left)."""
    feats = data.without_class()
    if feats.n_vars == 0:
        raise DataError(f"{data.source} has no feature columns besides the label column.")
    return feats


def check_model(model, data) -> None:
    """Refuse a model that has the label column as a node (the label is never a feature)."""
    if data.class_column is not None and data.class_column in model.variables:
        raise ClusterError(
            f"The model includes the label column '{data.class_column}'; the label is never a "
            "feature -- learn the model without it."
        )
