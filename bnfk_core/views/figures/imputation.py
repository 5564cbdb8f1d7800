"""Figures of the Imputation page: the benchmark heatmaps (thesis Figs 4.1-4.2) and the imputed cells of the
user's data.  Nothing here computes results; the numbers come from :mod:`bnfk_core.analyses.impute.core`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from bnfk_core.analyses.impute.core import METHOD_LABELS

from .base import plain, plain_all

__all__ = ["benchmark_heatmaps", "imputed_cells_figure"]


def benchmark_heatmaps(res, metric: str, labels: dict | None = None) -> go.Figure:
    """One heatmap per method of a ``BenchmarkResult`` over (test ratio x missing ratio), shared colour scale.

    Parameters
    ----------
    res : BenchmarkResult
    metric : str
    labels : dict, optional
        method -> label.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    labels = METHOD_LABELS if labels is None else labels
    mats = [res.matrix(m, metric) for m in res.methods]
    finite = np.concatenate([M[np.isfinite(M)] for M in mats]) if mats else np.array([0.0])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    fig = make_subplots(
        rows=1,
        cols=len(mats),
        subplot_titles=[plain(labels.get(m, m)) for m in res.methods],
        horizontal_spacing=0.04,
        shared_yaxes=True,
    )
    for k, (m, M) in enumerate(zip(res.methods, mats)):
        name = plain(labels.get(m, m))
        fig.add_trace(
            go.Heatmap(
                z=M,
                x=[f"{r:g}" for r in res.missing_ratios],
                y=[f"{r:g}" for r in res.test_ratios],
                zmin=lo,
                zmax=hi,
                coloraxis="coloraxis",
                text=np.round(M, 3),
                texttemplate="%{text}",
                hovertemplate=f"{name}<br>test ratio %{{y}}<br>missing ratio %{{x}}<br>{metric} "
                f"%{{z:.3f}}<extra></extra>",
            ),
            row=1,
            col=k + 1,
        )
        fig.update_xaxes(title_text="missing ratio", type="category", row=1, col=k + 1)
    fig.update_yaxes(title_text="test ratio", type="category", row=1, col=1)
    scale = "Viridis" if metric == "accuracy" else "Viridis_r"
    fig.update_layout(
        coloraxis=dict(colorscale=scale, cmin=lo, cmax=hi, colorbar=dict(title=metric.replace("_", "-"))),
        height=330,
        margin=dict(l=10, r=10, t=40, b=10),
    )
    return fig


def imputed_cells_figure(values, columns, rows, P: np.ndarray, dist: np.ndarray) -> go.Figure:
    """Rows x columns of a completed table; imputed cells coloured by the probability of the filled value.

    ``values`` (rows x columns) are the shown cell values, ``P`` and ``dist`` come from
    ``ImputedData.cell_probabilities`` (NaN / None for observed cells); hover shows the distribution.

    Parameters
    ----------
    values : array-like, shape (rows, columns)
    columns, rows : sequence
    P : ndarray
    dist : ndarray

    Returns
    -------
    plotly.graph_objects.Figure
    """
    hover = np.empty(P.shape, dtype=object)
    for idx, pairs in np.ndenumerate(dist):
        hover[idx] = "observed" if pairs is None else "<br>".join(f"{plain(s)}: {p:.3f}" for s, p in pairs)
    text = (
        np.vectorize(plain, otypes=[object])(np.asarray(values, dtype=object)) if np.size(values) else values
    )
    fig = go.Figure(
        go.Heatmap(
            z=P,
            x=plain_all(columns),
            y=[str(r) for r in rows],
            text=text,
            texttemplate="%{text}",
            customdata=hover,
            colorscale="Oranges_r",
            zmin=0,
            zmax=1,
            colorbar=dict(title="P(filled value)"),
            hovertemplate="row %{y} · %{x}: <b>%{text}</b><br>%{customdata}<extra></extra>",
        )
    )
    fig.update_layout(
        height=min(120 + 22 * len(rows), 900),
        margin=dict(l=10, r=10, t=10, b=10),
        yaxis=dict(autorange="reversed", type="category", title="row"),
        xaxis=dict(side="top", tickangle=-30),
    )
    return fig
