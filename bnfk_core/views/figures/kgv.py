"""Figures of the KGV panel on the Structure page: the pairwise KGV mutual information as a heatmap.
Nothing here computes results."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import FONT, plain

__all__ = ["kgv_mi_figure"]


def kgv_mi_figure(
    variables: Sequence[str],
    matrix: np.ndarray,
    *,
    raw: Sequence[str] = (),
    title: str = "",
    height: int = 520,
) -> go.Figure:
    """Heatmap of the KGV mutual information (nats) between every two variables; the names of the
    variables searched as numbers carry a '#' mark.

    Parameters
    ----------
    variables : sequence of str
    matrix : ndarray, shape (d, d)
    raw : sequence of str
        Variables searched as numbers.
    title : str
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
    """
    raw = set(raw)
    names = [plain(f"{v} #" if v in raw else v) for v in variables]  # names are text (figures.base.plain)
    M = np.asarray(matrix, float)
    off = M[~np.eye(len(M), dtype=bool)] if len(M) > 1 else np.zeros(1)
    zmax = float(np.quantile(off, 0.99)) if off.size else 1.0
    fig = go.Figure(
        go.Heatmap(
            z=M,
            x=names,
            y=names,
            colorscale="Viridis",
            zmin=0,
            zmax=zmax or 1.0,
            colorbar=dict(title=dict(text="KGV-MI"), thickness=12, len=0.8),
            hovertemplate="%{y} × %{x}<br>KGV-MI = %{z:.4f} nats<extra></extra>",
        )
    )
    fig.update_layout(
        title=dict(text=plain(title)) if title else None,
        height=height,
        font=FONT,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50 if title else 10, b=10),
        xaxis=dict(type="category", tickangle=-60),
        yaxis=dict(type="category", autorange="reversed"),
    )
    return fig
