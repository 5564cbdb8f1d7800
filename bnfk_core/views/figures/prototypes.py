"""Figures of the Prototypes page: random subsets against the greedy ones, the curve over k, the kernel-PCA
map."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from bnfk_core.analyses.prototypes.selection import criterion_value
from bnfk_core.registry import CRITERIA

from .base import embedding_figure

COLORS = {"mmd": "#d62728", "chi2": "#2ca02c", "random": "#7f7f7f", "full": "#1f77b4"}
METRICS = {"nll": "held-out NLL per row", "error": "misclassification rate", "log_loss": "log loss per row"}
MARKS = {"mmd": "greedy MMD", "chi2": "greedy χ²", "full": "all training rows"}
#: at most this many background rows on the kernel-PCA map (a seeded sample; the prototypes are always drawn)
MAP_ROWS = 2000


def map_title(ringed: str) -> str:
    """The kernel-PCA map's title, naming what is ringed.

    Parameters
    ----------
    ringed : str

    Returns
    -------
    str
    """
    return f"Training half on the top two kernel principal axes — {ringed} ringed"


def distribution_figure(res: dict, criterion: str) -> go.Figure:
    """Random subsets' MMD and held-out NLL, with the greedy subsets (and the full data) marked.

    ``res`` is a ``run_summarization`` result with details; ``criterion`` is drawn thicker (``random``:
    dashed).

    Parameters
    ----------
    res : dict
    criterion : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    d = res["details"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("MMD to the training half (eq. 10)", METRICS["nll"]))
    listed: set = set()
    for col, (vals, metric) in enumerate(((d["random_mmd"], "mmd"), (d["random_nll"], "nll")), start=1):
        fig.add_trace(
            go.Histogram(
                x=vals,
                name=f"{len(vals)} random subsets",
                marker_color=COLORS["random"],
                opacity=0.6,
                showlegend=col == 1,
            ),
            row=1,
            col=col,
        )
        marks = [(c, criterion_value(res, c, metric)) for c in CRITERIA.names(greedy=True) if c in res]
        if metric == "nll":
            marks.append(("full", res["full"]["nll"]))
        for name, x in marks:
            label = MARKS[name]
            width = 4 if name == criterion else 2
            fig.add_vline(
                x=x,
                line=dict(color=COLORS[name], width=width, dash="solid" if name != "full" else "dot"),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=[x],
                    y=[0],
                    mode="markers",
                    marker=dict(color=COLORS[name], size=10, symbol="triangle-up"),
                    name=label,
                    showlegend=name not in listed,
                    legendgroup=name,
                    hovertemplate=f"{label}: %{{x:.4g}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
            listed.add(name)  # each method once in the legend
        if criterion in CRITERIA and not CRITERIA[criterion].greedy:  # the random baseline: its mean
            fig.add_vline(
                x=criterion_value(res, "random", metric),
                line=dict(color="black", width=3, dash="dash"),
                row=1,
                col=col,
            )
    fig.update_yaxes(title_text="subsets", row=1, col=1)
    fig.update_layout(
        barmode="overlay",
        height=380,
        margin=dict(l=10, r=10, t=40, b=10),
        legend=dict(orientation="h", yanchor="bottom", y=-0.3),
    )
    return fig


def curve_figure(curve: Sequence[dict], metric: str) -> go.Figure:
    """Paper Fig. 1 style: the metric against k for greedy MMD, greedy χ², random (mean ± sd) and all rows.

    Parameters
    ----------
    curve : sequence of dict
        :func:`~bnfk_core.analyses.prototypes.selection.run_summarization` results.
    metric : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    ks = [r["k"] for r in curve]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=ks,
            y=[r["random"][f"{metric}_mean"] for r in curve],
            name="random mean ± sd",
            mode="lines+markers",
            line=dict(color=COLORS["random"]),
            error_y=dict(type="data", array=[r["random"][f"{metric}_std"] for r in curve]),
        )
    )
    for c in (c for c in CRITERIA.names(greedy=True) if c in curve[0]):
        fig.add_trace(
            go.Scatter(
                x=ks,
                y=[r[c][metric] for r in curve],
                name=MARKS[c],
                mode="lines+markers",
                line=dict(color=COLORS[c]),
            )
        )
    fig.add_trace(
        go.Scatter(
            x=ks,
            y=[curve[0]["full"][metric]] * len(ks),
            name=MARKS["full"],
            mode="lines",
            line=dict(color=COLORS["full"], dash="dot"),
        )
    )
    fig.update_layout(
        height=380,
        margin=dict(l=10, r=10, t=10, b=10),
        xaxis_title="subset size k",
        yaxis_title=METRICS[metric],
        legend=dict(orientation="h", yanchor="bottom", y=1.0),
    )
    return fig


def map_figure(
    Y: np.ndarray,
    row_ids: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
    chosen: np.ndarray,
    background: np.ndarray,
    title: str,
) -> go.Figure:
    """Kernel-PCA map: the ``background`` positions (into ``Y``/``row_ids``/``labels``) coloured by class,
    the ``chosen`` positions ringed as prototypes.

    Parameters
    ----------
    Y : ndarray, shape (N, 2)
    row_ids : ndarray of int
    labels : ndarray of int
    class_states : sequence of str
    chosen, background : ndarray of int
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = embedding_figure(Y[background], row_ids[background], labels[background], class_states, title=title)
    fig.update_traces(marker=dict(size=5, opacity=0.35))
    fig.add_trace(
        go.Scatter(
            x=Y[chosen, 0],
            y=Y[chosen, 1],
            mode="markers",
            name=f"{len(chosen)} prototypes",
            customdata=row_ids[chosen],
            hovertemplate="prototype row #%{customdata}<extra></extra>",
            marker=dict(size=11, color="rgba(0,0,0,0)", line=dict(color="black", width=2)),
        )
    )
    return fig
