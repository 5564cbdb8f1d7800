"""Figures of the Segments lab: the base and segment Gram matrices and their difference on one colour scale,
and the kernel change of a structure edit.  Built from the shared builders of
:mod:`bnfk_core.views.figures.base`; nothing here computes results."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import gram_figure, kernel_range

__all__ = [
    "segment_panels",
    "edit_difference_figure",
    "gallery_panels",
    "comparison_panels",
    "comparison_panel",
    "outcome_figure",
    "prototype_map",
]


def segment_panels(
    K_base: np.ndarray,
    K_seg: np.ndarray,
    order: np.ndarray,
    rows: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
) -> tuple[list[go.Figure], float]:
    """Heatmaps of the base kernel, the kernel with the segment and their difference (segment − base), rows in
    ``order``; the first two share a colour limit (99th percentile of |K| over both), which is returned too.

    Parameters
    ----------
    K_base, K_seg : ndarray, shape (N, N)
    order : ndarray of int
        Row order.
    rows : ndarray of int
        Row numbers shown.
    labels : ndarray of int
        Class codes (-1 = missing).
    class_states : sequence of str

    Returns
    -------
    figures : list of plotly.graph_objects.Figure
    zmax : float
    """
    zmax = kernel_range(K_base, K_seg)
    figs = [
        gram_figure(K_base, order, rows, labels, class_states, title="Base", zmax=zmax),
        gram_figure(K_seg, order, rows, labels, class_states, title="Base + segment", zmax=zmax),
        gram_figure(
            K_seg - K_base,
            order,
            rows,
            labels,
            class_states,
            title="Difference (segment − base)",
            colorbar_title="ΔK",
        ),
    ]
    return figs, zmax


def edit_difference_figure(
    K_edit: np.ndarray,
    K: np.ndarray,
    order: np.ndarray,
    rows: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
    edit: str,
) -> go.Figure:
    """Heatmap of ``K_edit − K``: how a structure edit (named ``edit``) changes the kernel.

    Parameters
    ----------
    K_edit, K : ndarray, shape (N, N)
    order : ndarray of int
        Row order.
    rows : ndarray of int
        Row numbers shown.
    labels : ndarray of int
        Class codes (-1 = missing).
    class_states : sequence of str
    edit : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    return gram_figure(
        K_edit - K, order, rows, labels, class_states, title=f"ΔK: {edit}", colorbar_title="ΔK", height=420
    )


def gallery_panels(
    K_base: np.ndarray,
    K_segments: Sequence[np.ndarray],
    titles: Sequence[str],
    order: np.ndarray,
    rows: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
) -> tuple[list[go.Figure], float]:
    """Small multiples of ΔK = K(segment) − K(base), one per segment, on one colour scale (returned too).

    Parameters
    ----------
    K_base : ndarray, shape (N, N)
    K_segments : sequence of ndarray
    titles : sequence of str
    order : ndarray of int
        Row order.
    rows : ndarray of int
        Row numbers shown.
    labels : ndarray of int
        Class codes (-1 = missing).
    class_states : sequence of str

    Returns
    -------
    figures : list of plotly.graph_objects.Figure
    zmax : float
    """
    deltas = [K - K_base for K in K_segments]
    zmax = kernel_range(*deltas) if deltas else 1.0
    figs = [
        gram_figure(D, order, rows, labels, class_states, title=t, zmax=zmax, colorbar_title="ΔK", height=300)
        for D, t in zip(deltas, titles)
    ]
    return figs, zmax


def comparison_panels(
    K_a: np.ndarray,
    K_b: np.ndarray,
    order: np.ndarray,
    rows: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
    *,
    height: int = 330,
) -> tuple[list[go.Figure], float]:
    """Heatmaps of structure A's kernel, structure B's and ΔK = K_B − K_A (rows in ``order``), small enough
    for three across one projector screen.  B is drawn on A's colour limit (returned too): the colours of the
    two compare directly, and A's figure does not change while only B is edited (the browser keeps it as
    drawn).

    Parameters
    ----------
    K_a, K_b : ndarray, shape (N, N)
        The two Gram matrices on the same sampled rows.
    order : ndarray of int
        Row order.
    rows : ndarray of int
        Row numbers shown.
    labels : ndarray of int
        Class codes (-1 = missing).
    class_states : sequence of str
    height : int

    Returns
    -------
    figures : list of plotly.graph_objects.Figure
        A, B and ΔK.
    zmax : float
        A's colour limit, shared by B.
    """
    zmax = kernel_range(K_a)
    figs = [
        comparison_panel(K_a, order, rows, labels, class_states, zmax, height=height),
        gram_figure(K_b, order, rows, labels, class_states, title="B", zmax=zmax, height=height),
        gram_figure(
            K_b - K_a,
            order,
            rows,
            labels,
            class_states,
            title="ΔK = K_B − K_A",
            colorbar_title="ΔK",
            height=height,
        ),
    ]
    return figs, zmax


def comparison_panel(
    K_a: np.ndarray,
    order: np.ndarray,
    rows: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
    zmax: float | None = None,
    *,
    height: int = 330,
) -> go.Figure:
    """A's panel of :func:`comparison_panels` alone (its colour limit ``zmax``, default A's own).

    Parameters
    ----------
    K_a : ndarray, shape (N, N)
    order, rows, labels, class_states, height
        As in :func:`comparison_panels`.
    zmax : float, optional
        Colour limit; A's own range when None.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    return gram_figure(
        K_a, order, rows, labels, class_states, title="A", zmax=zmax or kernel_range(K_a), height=height
    )


def outcome_figure(values: dict, *, height: int = 260) -> go.Figure:
    """Grouped bars: ``values`` is ``{measure: {"empty": x, "A": y, "B": z}}`` (None values left out).

    Parameters
    ----------
    values : dict
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
    """
    colors = {"empty": "#9e9e9e", "A": "#1f77b4", "B": "#ff7f0e"}
    fig = go.Figure()
    for net in ("empty", "A", "B"):
        xs = [m for m, v in values.items() if v.get(net) is not None]
        fig.add_bar(
            name="empty network" if net == "empty" else net,
            x=xs,
            y=[values[m][net] for m in xs],
            marker_color=colors[net],
            text=[f"{values[m][net]:.3f}" for m in xs],
            textposition="outside",
        )
    fig.update_layout(
        barmode="group",
        height=height,
        margin=dict(l=40, r=10, t=30, b=30),
        yaxis_range=[0, 1.1],
        legend=dict(orientation="h", y=1.15, x=0),
        title=None,
    )
    return fig


def prototype_map(
    Y: np.ndarray, rows: np.ndarray, protos_a: Sequence[int], protos_b: Sequence[int], *, height: int = 260
) -> go.Figure:
    """The sampled rows on A's kernel-PCA plane, A's prototypes ringed, B's crossed (``Y`` rows follow
    ``rows``).

    Parameters
    ----------
    Y : ndarray, shape (N, 2)
    rows : ndarray of int
    protos_a, protos_b : sequence of int
        Row numbers.
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
    """
    pos = {int(r): i for i, r in enumerate(rows)}
    # SVG, not WebGL: a few hundred points draw faster so, and a browser without a GPU emulates WebGL slowly
    fig = go.Figure(
        go.Scatter(
            x=Y[:, 0],
            y=Y[:, 1],
            mode="markers",
            name="rows",
            marker=dict(size=4, color="#cfd8dc"),
            text=[f"row {int(r)}" for r in rows],
        )
    )
    for name, pr, sym, col in (
        ("A's prototypes", protos_a, "circle-open", "#1f77b4"),
        ("B's prototypes", protos_b, "x", "#ff7f0e"),
    ):
        i = [pos[int(r)] for r in pr if int(r) in pos]
        fig.add_scatter(
            x=Y[i, 0],
            y=Y[i, 1],
            mode="markers",
            name=name,
            text=[f"row {int(rows[j])}" for j in i],
            marker=dict(size=11, symbol=sym, color=col, line=dict(width=2, color=col)),
        )
    fig.update_layout(
        height=height,
        margin=dict(l=30, r=10, t=30, b=30),
        legend=dict(orientation="h", y=1.15, x=0),
        xaxis_title="kernel PC 1 (A)",
        yaxis_title="kernel PC 2 (A)",
    )
    return fig
