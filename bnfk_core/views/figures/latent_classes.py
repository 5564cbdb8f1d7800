"""Figures of the Latent classes page: BIC/AIC against K, the class-profile heatmap, the class sizes and the
singular values of the rank diagnostic."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import plain


def criteria_figure(ks: Sequence[int], bic: Sequence[float], aic: Sequence[float]) -> go.Figure:
    """BIC and AIC against the number of classes (lower is better; the least BIC marked).

    Parameters
    ----------
    ks : sequence of int
    bic, aic : sequence of float

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(ks), y=list(bic), mode="lines+markers", name="BIC"))
    fig.add_trace(go.Scatter(x=list(ks), y=list(aic), mode="lines+markers", name="AIC"))
    best = int(np.argmin(bic))
    fig.add_trace(
        go.Scatter(
            x=[ks[best]],
            y=[bic[best]],
            mode="markers",
            name="least BIC",
            marker=dict(size=14, symbol="star", color="#d62728"),
        )
    )
    fig.update_layout(
        xaxis_title="classes K",
        yaxis_title="criterion (lower is better)",
        height=340,
        margin=dict(l=10, r=10, t=30, b=10),
        xaxis=dict(dtick=1),
    )
    return fig


def profile_figure(
    variables: Sequence[str],
    states: Sequence[Sequence[str]],
    profiles: Sequence[np.ndarray],
    weights: np.ndarray,
) -> go.Figure:
    """Heatmap of P(x_i = value | class): one row per (variable, value), one column per class (names shown as
    text, :func:`~bnfk_core.views.figures.base.plain`).

    Parameters
    ----------
    variables : sequence of str
    states : sequence of sequence of str
    profiles : sequence of ndarray, shape (K, r_i)
    weights : ndarray, shape (K,)

    Returns
    -------
    plotly.graph_objects.Figure
    """
    rows, z = [], []
    for v, st_, p in zip(variables, states, profiles):
        for k, s in enumerate(st_):
            rows.append(plain(f"{v} = {s}"))
            z.append(p[:, k])
    cols = [f"class {t + 1} ({w:.0%})" for t, w in enumerate(weights)]
    fig = go.Figure(
        go.Heatmap(
            z=np.array(z),
            x=cols,
            y=rows,
            zmin=0,
            zmax=1,
            colorscale="Blues",
            colorbar=dict(title="P(value | class)"),
            hovertemplate="%{y}<br>%{x}<br>%{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        height=max(300, 16 * len(rows) + 80),
        margin=dict(l=10, r=10, t=30, b=10),
        yaxis=dict(autorange="reversed"),
    )
    return fig


def sizes_figure(weights: np.ndarray, modal_counts: Sequence[int]) -> go.Figure:
    """Estimated class weights (times N) and the rows whose modal class each is.

    Parameters
    ----------
    weights : ndarray, shape (K,)
    modal_counts : sequence of int

    Returns
    -------
    plotly.graph_objects.Figure
    """
    n = float(sum(modal_counts))
    xs = [f"class {t + 1}" for t in range(len(weights))]
    fig = go.Figure(
        [
            go.Bar(x=xs, y=np.asarray(weights) * n, name="weight × rows"),
            go.Bar(x=xs, y=list(modal_counts), name="rows with this modal class"),
        ]
    )
    fig.update_layout(barmode="group", height=300, yaxis_title="rows", margin=dict(l=10, r=10, t=30, b=10))
    return fig


def singular_values_figure(sv: Sequence[float], tol: float) -> go.Figure:
    """Singular values of the cross-moment matrix (rank diagnostic) with the noise level.

    Parameters
    ----------
    sv : sequence of float
    tol : float

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure(go.Bar(x=[str(i + 1) for i in range(len(sv))], y=list(sv), name="singular value"))
    fig.add_hline(y=tol, line_dash="dash", annotation_text="noise level")
    fig.update_layout(height=260, yaxis_type="log", xaxis_title="index", margin=dict(l=10, r=10, t=30, b=10))
    return fig
