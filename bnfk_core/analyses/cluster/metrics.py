"""Clustering metrics and views: ARI, AMI (thesis eq. C.4), V-measure, the kernel-distance silhouette; the
clusters x labels table, a row order grouped by cluster, and the kernel-PCA embedding."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, silhouette_score, v_measure_score

from ...data.limits import guard_workspace
from ...kernels.embed import class_order, kernel_pca
from .common import ClusterError, sq_distances, square_matrix

__all__ = ["kernel_silhouette", "clustering_metrics", "contingency", "cluster_ordering", "embedding"]


def kernel_silhouette(K, labels) -> float | None:
    """Mean silhouette with the kernel distance d(x,y) = sqrt(K(x,x)+K(y,y)-2K(x,y)); None if undefined."""
    K = square_matrix(K)
    guard_workspace("silhouette", K.shape[0])
    labels = np.asarray(labels)
    n_lab = len(np.unique(labels))
    if not 2 <= n_lab <= len(labels) - 1:
        return None
    return float(silhouette_score(np.sqrt(sq_distances(K)), labels, metric="precomputed"))


def clustering_metrics(labels_true, labels_pred, K=None, *, ami_average: str = "max") -> dict:
    """ARI, AMI and V-measure against ``labels_true`` (rows with a negative label are left out),
    and the kernel-distance silhouette when ``K`` is given.

    AMI is normalised by max{H(U), H(V)} as in thesis eq. (C.4) (scikit-learn's default before
    0.22; today's default is ``ami_average="arithmetic"``).

    Parameters
    ----------
    labels_true, labels_pred : array_like of int
    K : numpy.ndarray, optional
        The Gram matrix, for the silhouette.
    ami_average : str
        scikit-learn's ``average_method`` of AMI.

    Returns
    -------
    dict
        ``ari``, ``ami``, ``v_measure`` and, with ``K``, ``silhouette``.

    References
    ----------
    Thesis §5.2.1 and App. C.1 (ARI, AMI with eq. (C.4), V-measure).
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
            out.update(
                ari=float(adjusted_rand_score(t, p)),
                ami=float(adjusted_mutual_info_score(t, p, average_method=ami_average)),
                v_measure=float(v_measure_score(t, p)),
                n_labelled=int(ok.sum()),
            )
    if K is not None:
        out["silhouette"] = kernel_silhouette(K, pred)
    return out


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
    """Kernel PCA of the Gram matrix: centre it, take the top-``k`` eigenvectors (see
    ``bnfk_core.kernels.embed.kernel_pca``)."""
    return kernel_pca(square_matrix(K), k)
