"""Figures of the Clustering page: the Gram matrix ordered by cluster and the kernel-PCA maps coloured by
cluster and by label.  Built from the shared builders of :mod:`bnfk_core.views.figures.base`; nothing here
computes results."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import MAX_CLASS_COLORS, class_colors, embedding_figure, gram_figure

__all__ = ["cluster_names", "cluster_colors", "cluster_heatmap", "cluster_maps"]


def cluster_names(n_used: int) -> list[str]:
    """``cluster 0``, ``cluster 1``, ... (the names of the contingency table's rows).

    Parameters
    ----------
    n_used : int

    Returns
    -------
    list of str
    """
    return [f"cluster {c}" for c in range(int(n_used))]


def cluster_colors(
    clusters: np.ndarray, n_used: int, labels: np.ndarray, class_states: Sequence[str]
) -> dict:
    """Cluster name -> colour, shared with the label colours: each label's colour goes to the cluster that
    holds most of that label's rows (largest overlap first, one cluster per label), so a map coloured by
    cluster and one coloured by label beside it show the same category in the same colour; other clusters get
    unused colours.

    Parameters
    ----------
    clusters : ndarray of int
    n_used : int
    labels : ndarray of int
    class_states : sequence of str

    Returns
    -------
    dict
    """
    names = cluster_names(n_used)
    # a label with more levels than a figure colours is drawn in groups (base.bounded_classes): no shared map
    # then
    label_colors = class_colors(class_states) if 0 < len(class_states) <= MAX_CLASS_COLORS else {}
    clusters, labels = np.asarray(clusters), np.asarray(labels)
    out: dict = {}
    if label_colors:
        ok = (clusters >= 0) & (labels >= 0)
        table = np.zeros((n_used, len(class_states)), dtype=np.int64)
        np.add.at(table, (clusters[ok], labels[ok]), 1)
        used_labels: set = set()
        for flat in np.argsort(-table, axis=None, kind="stable"):
            c, lab = divmod(int(flat), len(class_states))
            if table[c, lab] == 0:
                break
            if names[c] not in out and lab not in used_labels:
                out[names[c]] = label_colors[class_states[lab]]
                used_labels.add(lab)
    taken = set(out.values()) | set(label_colors.values())
    pool = [
        c
        for c in class_colors([f"#{i}" for i in range(len(label_colors) + n_used + 1)]).values()
        if c not in taken
    ]
    for name in names:
        if name not in out:
            out[name] = pool.pop(0)
    return out


def cluster_heatmap(
    K: np.ndarray,
    order: np.ndarray,
    rows: np.ndarray,
    clusters: np.ndarray,
    n_used: int,
    kernel_label: str,
    colors: dict | None = None,
) -> go.Figure:
    """The Gram matrix with rows ordered by cluster; the strips show the clusters (in ``colors``, if given).

    Parameters
    ----------
    K : ndarray, shape (N, N)
    order, rows, clusters : ndarray of int
    n_used : int
    kernel_label : str
    colors : dict, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    return gram_figure(
        K,
        order,
        rows,
        clusters,
        cluster_names(n_used),
        title=f"{kernel_label} kernel, rows ordered by cluster (strip: cluster)",
        colors=colors,
    )


def cluster_maps(
    Y: np.ndarray,
    rows: np.ndarray,
    clusters: np.ndarray,
    n_used: int,
    labels: np.ndarray,
    class_states: Sequence[str],
) -> tuple[go.Figure, go.Figure]:
    """The kernel-PCA map ``Y`` twice: coloured by cluster, and by label (``class_states`` empty: no class),
    with one category -> colour map (:func:`cluster_colors`).

    Parameters
    ----------
    Y : ndarray, shape (N, 2)
    rows, clusters : ndarray of int
    n_used : int
    labels : ndarray of int
    class_states : sequence of str

    Returns
    -------
    by_cluster, by_label : plotly.graph_objects.Figure
    """
    colors = cluster_colors(clusters, n_used, labels, class_states)
    by_cluster = embedding_figure(
        Y, rows, clusters, cluster_names(n_used), title="Kernel PCA — coloured by cluster", colors=colors
    )
    by_label = embedding_figure(
        Y,
        rows,
        labels,
        class_states,
        title="Kernel PCA — coloured by label" if len(class_states) else "Kernel PCA (no class column)",
    )
    return by_cluster, by_label
