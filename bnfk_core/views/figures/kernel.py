"""Figures of the Kernel page: two Gram matrices and their difference on one colour scale, the pair
contributions.  Built from the shared builders of :mod:`bnfk_core.views.figures.base`; nothing here computes
results."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import contributions_figure, gram_figure, kernel_range

__all__ = ["gram_panels", "pair_figure"]


def gram_panels(
    K: np.ndarray,
    K2: np.ndarray,
    order: np.ndarray,
    rows: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
    *,
    titles: tuple[str, str],
) -> tuple[list[go.Figure], float]:
    """Heatmaps of ``K``, ``K2`` and ``K - K2`` (rows in ``order``) and their shared colour limit: the 99th
    percentile of |K| over both kernels, so the diagonal does not swamp them.

    Parameters
    ----------
    K, K2 : ndarray, shape (N, N)
    order : ndarray of int
        Row order.
    rows : ndarray of int
        Row numbers shown.
    labels : ndarray of int
        Class codes (-1 = missing).
    class_states : sequence of str
    titles : (str, str)

    Returns
    -------
    figures : list of plotly.graph_objects.Figure
    zmax : float
    """
    zmax = kernel_range(K, K2)
    figs = [
        gram_figure(K, order, rows, labels, class_states, title=titles[0], zmax=zmax),
        gram_figure(K2, order, rows, labels, class_states, title=titles[1], zmax=zmax),
        gram_figure(
            K - K2, order, rows, labels, class_states, title="Difference (left − right)", colorbar_title="ΔK"
        ),
    ]
    return figs, zmax


def pair_figure(
    variables: Sequence[str],
    contrib: np.ndarray,
    x_vals: Sequence[str],
    y_vals: Sequence[str],
    a: int,
    b: int,
    kernel_label: str,
) -> go.Figure:
    """The per-variable contributions K_i(a, b) of two rows, titled with the rows and the kernel.

    Parameters
    ----------
    variables : sequence of str
    contrib : ndarray, shape (n_vars,)
    x_vals, y_vals : sequence of str
    a, b : int
        Row numbers.
    kernel_label : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    return contributions_figure(
        variables,
        contrib,
        x_vals,
        y_vals,
        title=f"K_i(#{a}, #{b}) per variable",
        subtitle=f"{kernel_label} kernel",
    )
