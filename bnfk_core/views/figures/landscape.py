"""Figures of the Score landscape panel: graphs ranked by score, the hypercube with the hill-climb path,
predicted vs exact scores of the metagraph surrogate, RMSE by order and the Walsh energy by degree.
Built from arrays the core computed (:mod:`bnfk_core.learning.landscape`,
:mod:`bnfk_core.analyses.landscape`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import SEGMENT_COLOR, class_colors, plain

__all__ = [
    "ranked_figure",
    "hypercube_figure",
    "cube_projection",
    "surrogate_figure",
    "rmse_figure",
    "walsh_figure",
]

_PATH_COLOR = SEGMENT_COLOR
_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=50))


def ranked_figure(
    scores: np.ndarray,
    rank: np.ndarray,
    class_id: np.ndarray,
    path_graphs: Sequence[int],
    score_label: str,
    top_classes: int = 8,
    mine: int | None = None,
) -> go.Figure:
    """Every graph's score against its rank; the best ``top_classes`` equivalence classes coloured, the
    hill-climb path's graphs marked, and graph ``mine`` (the page's structure) as a star; ``rank`` of every
    graph (1 = best, :meth:`bnfk_core.learning.landscape.Landscape.ranks`).

    Parameters
    ----------
    scores : ndarray
    rank : ndarray of int
    class_id : ndarray of int
        Equivalence class of every graph.
    path_graphs : sequence of int
    score_label : str
    top_classes : int
    mine : int, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    colors = class_colors([str(c) for c in range(top_classes)])
    rest = class_id >= top_classes
    fig.add_trace(
        go.Scattergl(
            x=rank[rest],
            y=scores[rest],
            mode="markers",
            name="other classes",
            marker=dict(size=4, color="#b0b0b0"),
            hovertemplate="rank %{x}<br>score %{y:.2f}<extra></extra>",
        )
    )
    for c in range(min(top_classes, int(class_id.max()) + 1)):
        m = class_id == c
        fig.add_trace(
            go.Scattergl(
                x=rank[m],
                y=scores[m],
                mode="markers",
                name=f"class {c + 1} ({m.sum()} graphs)",
                marker=dict(size=7, color=colors[str(c)]),
                hovertemplate=f"class {c + 1}<br>rank %{{x}}<br>score %{{y:.2f}}<extra></extra>",
            )
        )
    p = np.asarray(path_graphs, dtype=np.int64)
    fig.add_trace(
        go.Scatter(
            x=rank[p],
            y=scores[p],
            mode="lines+markers",
            name="hill-climb path",
            line=dict(color=_PATH_COLOR, width=1.5, dash="dot"),
            marker=dict(size=10, symbol="diamond", color=_PATH_COLOR),
            hovertemplate="step %{text}<br>rank %{x}<br>score %{y:.2f}<extra></extra>",
            text=[str(i) for i in range(p.size)],
        )
    )
    if mine is not None:
        fig.add_trace(
            go.Scatter(
                x=[rank[mine]],
                y=[scores[mine]],
                mode="markers",
                name="your structure",
                marker=dict(size=16, symbol="star", color="#d62728", line=dict(color="black", width=1)),
                hovertemplate="your structure<br>rank %{x}<br>score %{y:.2f}<extra></extra>",
            )
        )
    fig.update_layout(
        title="Every DAG, ranked by score",
        height=420,
        xaxis=dict(title="rank (1 = best)", type="log"),
        yaxis_title=score_label,
        **_LAYOUT,
    )
    return fig


def cube_projection(bits: np.ndarray) -> np.ndarray:
    """A 2-D layout of bit strings: bit p moves a point by (cos θ_p, sin θ_p), θ_p = π p / d (a zonotope
    projection of the hypercube: neighbours are one unit step apart, the empty graph at the origin).

    Parameters
    ----------
    bits : ndarray, shape (n, d)

    Returns
    -------
    ndarray, shape (n, 2)
    """
    d = bits.shape[1]
    theta = np.pi * np.arange(d) / max(d, 1)
    return bits.astype(float) @ np.column_stack([np.cos(theta), np.sin(theta)])


def hypercube_figure(
    bits: np.ndarray, scores: np.ndarray, path_bits: np.ndarray | None, title: str, edges: bool = False
) -> go.Figure:
    """The graphs of the space at :func:`cube_projection`, coloured by score, with the hill-climb path.

    Parameters
    ----------
    bits : ndarray, shape (n, d)
    scores : ndarray, shape (n,)
    path_bits : ndarray, optional
    title : str
    edges : bool
        Draw the hypercube's edges (at most 1024 graphs).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    xy = cube_projection(bits)
    fig = go.Figure()
    if edges and bits.shape[0] <= 1024:
        code = (bits.astype(np.int64) << np.arange(bits.shape[1])).sum(axis=1)
        where = np.full(1 << bits.shape[1], -1)
        where[code] = np.arange(code.size)
        lo, hi = [], []
        for p in range(bits.shape[1]):
            src = np.flatnonzero((code >> p) & 1 == 0)
            dst = where[code[src] | (1 << p)]
            lo.append(src[dst >= 0])
            hi.append(dst[dst >= 0])
        lo, hi = np.concatenate(lo), np.concatenate(hi)
        seg = np.full((lo.size, 3, 2), np.nan)
        seg[:, 0], seg[:, 1] = xy[lo], xy[hi]
        fig.add_trace(
            go.Scattergl(
                x=seg[:, :, 0].ravel(),
                y=seg[:, :, 1].ravel(),
                mode="lines",
                line=dict(color="#dddddd", width=0.5),
                hoverinfo="skip",
                showlegend=False,
            )
        )
    fig.add_trace(
        go.Scattergl(
            x=xy[:, 0],
            y=xy[:, 1],
            mode="markers",
            name="graphs",
            showlegend=False,
            marker=dict(
                size=5 if bits.shape[0] > 2000 else 8,
                color=scores,
                colorscale="Viridis",
                colorbar=dict(title="score"),
            ),
            customdata=bits.sum(axis=1),
            hovertemplate="%{customdata} arcs<br>score %{marker.color:.2f}<extra></extra>",
        )
    )
    if path_bits is not None and len(path_bits):
        pxy = cube_projection(np.asarray(path_bits))
        fig.add_trace(
            go.Scatter(
                x=pxy[:, 0],
                y=pxy[:, 1],
                mode="lines+markers",
                name="hill-climb path",
                line=dict(color=_PATH_COLOR, width=3),
                marker=dict(size=11, symbol="diamond", color=_PATH_COLOR, line=dict(color="black", width=1)),
                text=[f"step {i}" for i in range(len(pxy))],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    fig.update_layout(
        title=plain(title),
        height=480,
        xaxis=dict(visible=False),
        yaxis=dict(visible=False, scaleanchor="x"),
        legend=dict(orientation="h", y=-0.05),
        **_LAYOUT,
    )
    return fig


def surrogate_figure(
    exact: np.ndarray, predicted: dict, score_label: str, max_points: int = 2000
) -> go.Figure:
    """Predicted against exact score of the unobserved graphs, one colour per kernel order (at most
    ``max_points`` evenly spaced graphs drawn per order; the RMSE uses them all).

    Parameters
    ----------
    exact : ndarray
    predicted : dict
        order -> predicted scores.
    score_label : str
    max_points : int

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    show = np.unique(np.linspace(0, exact.size - 1, min(exact.size, max_points)).astype(np.int64))
    colors = class_colors([str(r) for r in predicted])
    lo, hi = float(np.min(exact)), float(np.max(exact))
    fig.add_trace(
        go.Scatter(
            x=[lo, hi],
            y=[lo, hi],
            mode="lines",
            line=dict(color="#888", dash="dash"),
            name="exact = predicted",
            hoverinfo="skip",
        )
    )
    for r, pred in predicted.items():
        fig.add_trace(
            go.Scattergl(
                x=exact[show],
                y=pred[show],
                mode="markers",
                name=f"order {r}",
                opacity=0.7,
                marker=dict(size=5, color=colors[str(r)]),
                hovertemplate=f"order {r}<br>exact %{{x:.2f}}<br>predicted %{{y:.2f}}<extra></extra>",
            )
        )
    fig.update_layout(
        title="Surrogate on the unobserved graphs",
        height=460,
        xaxis_title=f"exact {score_label}",
        yaxis_title=f"predicted {score_label}",
        legend=dict(orientation="h", y=-0.25),
        **_LAYOUT,
    )
    return fig


def rmse_figure(rmse: dict, baseline: float) -> go.Figure:
    """RMSE of every kernel order over the unobserved graphs, with the observed-mean baseline.

    Parameters
    ----------
    rmse : dict
        order -> RMSE.
    baseline : float

    Returns
    -------
    plotly.graph_objects.Figure
    """
    orders = [str(r) for r in rmse]
    fig = go.Figure(
        go.Bar(
            x=orders,
            y=list(rmse.values()),
            marker_color="#4c78a8",
            name="metagraph kernel",
            text=[f"{v:.3g}" for v in rmse.values()],
            textposition="outside",
        )
    )
    fig.add_hline(
        y=baseline,
        line=dict(color="#d62728", dash="dash"),
        annotation_text=f"mean of the observed scores: {baseline:.3g}",
    )
    fig.update_layout(
        title="RMSE by kernel order", height=460, xaxis_title="order r", yaxis_title="RMSE", **_LAYOUT
    )
    return fig


def walsh_figure(energy: np.ndarray) -> go.Figure:
    """Share of the score's variance by Walsh degree (degree 0, the mean, left out), log scale.

    Parameters
    ----------
    energy : ndarray
        Variance by Walsh degree, degree 0 first.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    e = np.asarray(energy, dtype=float)[1:]
    share = e / e.sum() if e.sum() > 0 else e
    shown = np.maximum(share, 1e-18)
    fig = go.Figure(
        go.Bar(
            x=[str(s) for s in range(1, e.size + 1)],
            y=shown,
            marker_color="#72b7b2",
            text=[f"{v:.2%}" if v >= 1e-4 else ("0" if v < 1e-15 else f"{v:.1e}") for v in share],
            textposition="outside",
        )
    )
    fig.update_layout(
        title="Walsh energy by degree (fixed order)",
        height=460,
        xaxis_title="degree (arcs in the term)",
        yaxis=dict(title="share of the variance", type="log", range=[-18, 1.5]),
        **_LAYOUT,
    )
    return fig
