"""Figures of the Clustering page: the Gram matrix ordered by cluster and the kernel-PCA maps coloured by
cluster and by label.  Built from the shared builders of :mod:`bnfk_ui.figures.base`; nothing here computes
results."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import embedding_figure, gram_figure

__all__ = ["cluster_names", "cluster_heatmap", "cluster_maps"]


def cluster_names(n_used: int) -> list[str]:
    """``cluster 0``, ``cluster 1``, ... (the names of the contingency table's rows)."""
    return [f"cluster {c}" for c in range(int(n_used))]


def cluster_heatmap(K: np.ndarray, order: np.ndarray, rows: np.ndarray, clusters: np.ndarray, n_used: int,
                    kernel_label: str) -> go.Figure:
    """The Gram matrix with rows ordered by cluster; the strips show the clusters."""
    return gram_figure(K, order, rows, clusters, cluster_names(n_used),
                       title=f"{kernel_label} kernel, rows ordered by cluster (strip: cluster)")


def cluster_maps(Y: np.ndarray, rows: np.ndarray, clusters: np.ndarray, n_used: int, labels: np.ndarray,
                 class_states: Sequence[str]) -> tuple[go.Figure, go.Figure]:
    """The kernel-PCA map ``Y`` twice: coloured by cluster, and by label (``class_states`` empty: no class)."""
    by_cluster = embedding_figure(Y, rows, clusters, cluster_names(n_used), title="Kernel PCA — coloured by cluster")
    by_label = embedding_figure(Y, rows, labels, class_states,
                                title="Kernel PCA — coloured by label" if len(class_states) else
                                "Kernel PCA (no class column)")
    return by_cluster, by_label
