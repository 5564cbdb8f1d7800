"""Figures of the Segments lab: the base and segment Gram matrices and their difference on one colour scale,
and the kernel change of a structure edit.  Built from the shared builders of :mod:`bnfk_core.views.figures.base`;
nothing here computes results."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import gram_figure, kernel_range

__all__ = ["segment_panels", "edit_difference_figure", "gallery_panels"]


def segment_panels(K_base: np.ndarray, K_seg: np.ndarray, order: np.ndarray, rows: np.ndarray, labels: np.ndarray,
                   class_states: Sequence[str]) -> tuple[list[go.Figure], float]:
    """Heatmaps of the base kernel, the kernel with the segment and their difference (segment − base), rows in
    ``order``; the first two share a colour limit (99th percentile of |K| over both), which is returned too."""
    zmax = kernel_range(K_base, K_seg)
    figs = [gram_figure(K_base, order, rows, labels, class_states, title="Base", zmax=zmax),
            gram_figure(K_seg, order, rows, labels, class_states, title="Base + segment", zmax=zmax),
            gram_figure(K_seg - K_base, order, rows, labels, class_states, title="Difference (segment − base)",
                        colorbar_title="ΔK")]
    return figs, zmax


def edit_difference_figure(K_edit: np.ndarray, K: np.ndarray, order: np.ndarray, rows: np.ndarray,
                           labels: np.ndarray, class_states: Sequence[str], edit: str) -> go.Figure:
    """Heatmap of ``K_edit − K``: how a structure edit (named ``edit``) changes the kernel."""
    return gram_figure(K_edit - K, order, rows, labels, class_states, title=f"ΔK: {edit}", colorbar_title="ΔK",
                       height=420)


def gallery_panels(K_base: np.ndarray, K_segments: Sequence[np.ndarray], titles: Sequence[str], order: np.ndarray,
                   rows: np.ndarray, labels: np.ndarray, class_states: Sequence[str]) -> tuple[list[go.Figure], float]:
    """Small multiples of ΔK = K(segment) − K(base), one per segment, on one colour scale (returned too)."""
    deltas = [K - K_base for K in K_segments]
    zmax = kernel_range(*deltas) if deltas else 1.0
    figs = [gram_figure(D, order, rows, labels, class_states, title=t, zmax=zmax, colorbar_title="ΔK", height=300)
            for D, t in zip(deltas, titles)]
    return figs, zmax
