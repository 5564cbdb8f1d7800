"""Figures of the Kernel zoo page: average ranks with the Nemenyi critical difference (a critical-difference
style dot plot) and a kernels x data sets heatmap of one metric.  Built from the stored CSVs of
``reproduce kernel-zoo``; nothing here computes results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .base import FONT, plain_all

__all__ = ["FISHER_COLOR", "MEASURE_COLOR", "dataset_heatmap", "rank_dot_figure"]

FISHER_COLOR = "#d62728"
MEASURE_COLOR = "#1f77b4"


def rank_dot_figure(ranks: pd.DataFrame, metric: str, metric_label: str, cd: float | None) -> go.Figure:
    """Average rank of every kernel (1 = best, left), Fisher kernels in red; the bar under the title is the
    Nemenyi critical difference: kernels closer than it are not distinguishable at alpha = 0.05.

    Parameters
    ----------
    ranks : pandas.DataFrame
    metric, metric_label : str
    cd : float or None
        Nemenyi critical difference.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    r = ranks.sort_values(metric)
    fisher = r["kernel"].str.startswith("fisher-")
    fig = go.Figure(
        go.Scatter(
            x=r[metric],
            y=plain_all(r["label"]),
            mode="markers",
            marker={"size": 11, "color": np.where(fisher, FISHER_COLOR, MEASURE_COLOR)},
            hovertemplate="%{y}: average rank %{x:.2f}<extra></extra>",
        )
    )
    best = float(r[metric].min())
    if cd is not None and np.isfinite(cd):
        fig.add_shape(type="rect", x0=best, x1=best + cd, y0=-0.9, y1=-0.6, fillcolor="#888", line_width=0)
        fig.add_annotation(x=best + cd / 2, y=-1.3, text=f"critical difference {cd:.1f}", showarrow=False)
    fig.update_layout(
        title=f"{metric_label}: average rank over the data sets (1 = best)",
        font=FONT,
        height=90 + 26 * len(r),
        margin={"l": 210, "r": 20, "t": 50, "b": 40},
        xaxis={"title": "average rank", "autorange": "reversed"},
        yaxis={"autorange": "reversed", "range": [-1.6, len(r)]},
        showlegend=False,
    )
    return fig


def dataset_heatmap(summary: pd.DataFrame, metric: str, metric_label: str, order: list[str]) -> go.Figure:
    """Mean of ``metric`` over seeds per kernel (rows, in ``order`` = kernel labels) and data set (columns);
    hover shows mean ± std.

    Parameters
    ----------
    summary : pandas.DataFrame
    metric, metric_label : str
    order : list of str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    mean = summary.pivot(index="label", columns="dataset", values=metric).reindex(order)
    std = summary.pivot(index="label", columns="dataset", values=f"{metric}_std").reindex(order)
    text = np.vectorize(lambda a, b: f"{a:.3f} ± {b:.3f}")(mean.to_numpy(), std.to_numpy())
    fig = go.Figure(
        go.Heatmap(
            z=mean.to_numpy(),
            x=plain_all(mean.columns),
            y=plain_all(mean.index),
            colorscale="Viridis",
            customdata=text,
            hovertemplate="%{y} on %{x}: %{customdata}<extra></extra>",
            colorbar={"title": metric_label.split(",")[0]},
        )
    )
    fig.update_layout(
        title=f"{metric_label} per data set (mean over seeds)",
        font=FONT,
        height=90 + 24 * len(order),
        margin={"l": 210, "r": 20, "t": 50, "b": 90},
        yaxis={"autorange": "reversed"},
    )
    return fig
