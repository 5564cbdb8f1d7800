"""Figures and tables of a hybrid (conditional linear Gaussian) network: a numeric node's data as a histogram
with the fitted density over it, its conditional densities (one Gaussian per configuration of its discrete
parents) with their regressions, and the density of a numeric node given evidence.  Plain text everywhere
(column and state names are the visitor's)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .base import FONT, UNDIRECTED_COLOR, class_colors, plain

__all__ = [
    "mixture_density",
    "density_figure",
    "conditional_figure",
    "conditional_table",
    "regression_formula",
    "evidence_density_figure",
    "completed_frame",
    "GRID_POINTS",
]

#: points of the x grid a density is drawn on
GRID_POINTS = 241
DENSITY_COLOR = "#c0392b"


def mixture_density(x, weights, means, variances) -> np.ndarray:
    """sum_k w_k N(x; m_k, v_k) at the points ``x`` (vectorised over points and components).

    Parameters
    ----------
    x : array of float
    weights, means, variances : array of float
        The mixture's components.

    Returns
    -------
    ndarray
        The density at each point.
    """
    x = np.asarray(x, float)[:, None]
    v = np.asarray(variances, float)[None, :]
    comp = np.exp(-0.5 * (x - np.asarray(means, float)[None, :]) ** 2 / v) / np.sqrt(2.0 * np.pi * v)
    return comp @ np.asarray(weights, float)


def _grid(values, means, variances) -> np.ndarray:
    sd = np.sqrt(np.asarray(variances, float))
    lo = [np.min(means - 3.5 * sd)] if len(sd) else []
    hi = [np.max(means + 3.5 * sd)] if len(sd) else []
    obs = np.asarray(values, float)
    obs = obs[np.isfinite(obs)]
    if obs.size:
        lo.append(obs.min())
        hi.append(obs.max())
    a, b = min(lo), max(hi)
    if not b > a:
        a, b = a - 1.0, b + 1.0
    return np.linspace(a, b, GRID_POINTS)


def density_figure(name: str, values, weights, means, variances, *, title: str = "") -> go.Figure:
    """The observed values of numeric node ``name`` as a density histogram, the fitted marginal density (the
    Gaussian mixture ``weights``, ``means``, ``variances``) drawn over it.

    Parameters
    ----------
    name : str
    values : array of float
        The column (NaN = missing, left out).
    weights, means, variances : array of float
        The mixture (:class:`bnfk_core.hybrid.NumericMarginal`).
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    xs = _grid(v, np.asarray(means, float), np.asarray(variances, float))
    fig = go.Figure()
    if v.size:
        counts, edges = np.histogram(v, bins=min(40, max(8, int(np.sqrt(v.size)))), density=True)
        fig.add_trace(
            go.Bar(
                x=(edges[:-1] + edges[1:]) / 2,
                y=counts,
                width=float(edges[1] - edges[0]),
                marker_color=UNDIRECTED_COLOR,
                opacity=0.45,
                name=f"data ({v.size:,} values)",
                hovertemplate="%{x:.4g}: density %{y:.4g}<extra>data</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=mixture_density(xs, weights, means, variances),
            mode="lines",
            line=dict(color=DENSITY_COLOR, width=2.5),
            name=f"fitted density ({len(np.asarray(weights))} component(s))",
            hovertemplate="%{x:.4g}: %{y:.4g}<extra>fitted</extra>",
        )
    )
    fig.update_layout(
        title=plain(title) if title else None,
        height=320,
        font=FONT,
        margin=dict(l=10, r=10, t=50 if title else 10, b=10),
        xaxis_title=plain(name),
        yaxis_title="density",
        bargap=0,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )
    return fig


def regression_formula(coef: Sequence[float], parents: Sequence[str]) -> str:
    """``μ = b0 + w1·P1 + ...`` of one regression (plain text; weights with their signs).

    Parameters
    ----------
    coef : sequence of float
        The intercept, then one weight per numeric parent.
    parents : sequence of str

    Returns
    -------
    str
    """
    out = f"μ = {coef[0]:.4g}"
    for w, p in zip(coef[1:], parents):
        out += f" {'−' if w < 0 else '+'} {abs(w):.4g}·{p}"
    return out


def conditional_table(
    configs: Sequence[str], coef, variance, parents: Sequence[str], at: Sequence[float] = ()
) -> pd.DataFrame:
    """One row per configuration of the discrete parents: its label, the regression formula, σ, and the mean
    at the numeric parents' values ``at`` (their sample means) when there are numeric parents.

    Parameters
    ----------
    configs : sequence of str
        ``parent=state, ...`` per configuration (``(no discrete parent)`` for one).
    coef : array (q, 1 + p)
    variance : array (q,)
    parents : sequence of str
        The numeric parents, in the order of ``coef[:, 1:]``.
    at : sequence of float

    Returns
    -------
    pandas.DataFrame
    """
    coef, variance = np.asarray(coef, float), np.asarray(variance, float)
    frame = pd.DataFrame(
        {
            "given": list(configs),
            "regression": [regression_formula(c, parents) for c in coef],
            "σ": np.sqrt(variance),
        }
    )
    if len(parents):
        frame["μ at the parents' means"] = coef[:, 0] + coef[:, 1:] @ np.asarray(at, float)
    return frame


def conditional_figure(name: str, configs: Sequence[str], means, variances, *, title: str = "") -> go.Figure:
    """The conditional densities of numeric node ``name``: one Gaussian N(means[j], variances[j]) per
    configuration ``configs[j]`` of its discrete parents (at most 24 coloured, the rest grey).

    Parameters
    ----------
    name : str
    configs : sequence of str
    means, variances : array of float
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    means, variances = np.asarray(means, float), np.asarray(variances, float)
    xs = _grid([], means, variances)
    colors = class_colors(list(configs)[:24])
    fig = go.Figure()
    for j, label in enumerate(configs):
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=mixture_density(xs, [1.0], [means[j]], [variances[j]]),
                mode="lines",
                line=dict(color=colors.get(label, "#8c8c8c"), width=2),
                name=plain(label),
                hovertemplate="%{x:.4g}: %{y:.4g}<extra>%{fullData.name}</extra>",
            )
        )
    fig.update_layout(
        title=plain(title) if title else None,
        height=340,
        font=FONT,
        margin=dict(l=10, r=10, t=50 if title else 10, b=10),
        xaxis_title=plain(name),
        yaxis_title="density",
        showlegend=True,
    )
    return fig


def evidence_density_figure(name: str, prior, given=None, *, title: str = "") -> go.Figure:
    """The density of numeric node ``name``: its marginal ``prior`` (weights, means, variances) and, when
    covered, its Gaussian ``given`` the evidence (mean, variance).

    Parameters
    ----------
    name : str
    prior : tuple of arrays
        (weights, means, variances) of the marginal mixture.
    given : tuple of float, optional
        (mean, variance) given the evidence.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    w, m, v = (np.asarray(a, float) for a in prior)
    pts = [m]
    if given is not None:
        pts.append(np.asarray([given[0]]))
    xs = _grid([], np.concatenate(pts), np.concatenate([v] + ([np.asarray([given[1]])] if given else [])))
    fig = go.Figure(
        go.Scatter(
            x=xs,
            y=mixture_density(xs, w, m, v),
            mode="lines",
            line=dict(color="rgba(120,120,120,0.7)", width=2, dash="dot"),
            name="no evidence",
        )
    )
    if given is not None:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=mixture_density(xs, [1.0], [given[0]], [given[1]]),
                mode="lines",
                line=dict(color=DENSITY_COLOR, width=2.5),
                name="given the evidence",
            )
        )
    fig.update_layout(
        title=plain(title) if title else None,
        height=260,
        font=FONT,
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        xaxis_title=plain(name),
        yaxis_title="density",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )
    return fig


def completed_frame(data, imputed, rows=None) -> pd.DataFrame:
    """A completed mixed table as a frame: numbers as floats, categories as their states, rows ``rows``
    (default all).

    Parameters
    ----------
    data : bnfk_core.hybrid.MixedData
        The completed table.
    imputed : ndarray of bool, shape (N, n)
        Which cells were filled (unused for the values; kept for the caller's styling).
    rows : array of int, optional

    Returns
    -------
    pandas.DataFrame
    """
    rows = np.arange(data.n_rows) if rows is None else np.asarray(rows)
    cols = {}
    for j, v in enumerate(data.variables):
        if data.kinds[j] == "numeric":
            cols[v] = data.values[rows, j]
        else:
            st = np.asarray(list(data.states[j]) + [""], dtype=object)
            c = data.codes[rows, j]
            cols[v] = st[np.where(c < 0, len(st) - 1, c)]
    return pd.DataFrame(cols, index=rows)
