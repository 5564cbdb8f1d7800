"""Figures of the Model page: the network with its observed variables and an independence query's active
trails, and every variable's posterior as a small bar chart.  Built from the shared DAG drawing of
:mod:`bnfk_core.views.figures.base`; nothing here computes results."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import FONT, SEGMENT_COLOR, dag_figure, plain, shared_layout

__all__ = ["model_graph", "posterior_grid", "OBSERVED_COLOR", "POSTERIOR_COLOR", "PRIOR_COLOR"]

OBSERVED_COLOR = SEGMENT_COLOR
POSTERIOR_COLOR = "#1f77b4"
PRIOR_COLOR = "rgba(120,120,120,0.35)"


def model_graph(
    nodes: Sequence[str],
    arcs,
    *,
    observed: Mapping[str, str] | None = None,
    trails: Sequence[Sequence[str]] = (),
    node_info: Mapping[str, str] | None = None,
    picked: str | None = None,
    observed_label: str = "observed",
) -> go.Figure:
    """The network drawn as on the Structure page, its variables clickable (no arc dots): the observed ones
    in orange boxes with their state (when not empty) written under them, and the arcs of ``trails`` (node
    sequences of the skeleton, either direction) in orange.

    Parameters
    ----------
    nodes : sequence of str
    arcs : iterable of (u, v)
    observed : mapping of str to str, optional
        Evidence, ``{variable: state}``.
    trails : sequence of sequence of str
        Active trails to draw.
    node_info : mapping, optional
        node -> hover text (the posterior).
    picked : str, optional
        The variable chosen in the page's selector.
    observed_label : str
        The legend's name of the orange boxes.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    nodes, arcs = list(nodes), [tuple(a) for a in arcs]
    arc_set = set(arcs)
    on_trail = set()
    for t in trails:
        for a, b in zip(t, t[1:]):
            on_trail.add((a, b) if (a, b) in arc_set else (b, a))
    pos = shared_layout(nodes, arcs)
    fig = dag_figure(
        nodes,
        arcs,
        highlight=sorted(on_trail),
        node_info=dict(node_info or {}),
        clickable=True,
        picked=picked,
        pos=pos,
    )
    fig.data = [t for t in fig.data if t.name not in ("arcs", "current segment")]
    if on_trail:
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines", line=dict(color=SEGMENT_COLOR, width=3), name="active trail"
            )
        )
    observed = dict(observed or {})
    if observed:
        spots = {(float(pos[v][0]), float(pos[v][1])): v for v in nodes if v in observed}
        boxes = list(fig.layout.annotations)
        for a in boxes:  # the observed variables' boxes in orange
            if not a.showarrow and (float(a.x), float(a.y)) in spots:
                a.update(bgcolor="#ffe8d1", bordercolor=OBSERVED_COLOR, borderwidth=2.5)
        for v in nodes:
            if observed.get(v):
                boxes.append(
                    dict(
                        x=pos[v][0],
                        y=pos[v][1] - 0.3,
                        xref="x",
                        yref="y",
                        text=f"= {plain(observed[v])}",
                        showarrow=False,
                        font=dict(size=11, color=OBSERVED_COLOR),
                    )
                )
        fig.update_layout(annotations=boxes, showlegend=True)
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                marker=dict(
                    symbol="square", size=12, color="#ffe8d1", line=dict(color=OBSERVED_COLOR, width=2)
                ),
                name=observed_label,
            )
        )
    return fig


#: the longest panel title (a longer variable name is cut; its hover shows it whole)
TITLE_CHARS = 20


def _cut(text, n: int) -> str:
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def posterior_grid(
    variables: Sequence[str],
    states: Sequence[Sequence[str]],
    posterior: Mapping[str, Mapping[str, float]],
    prior: Mapping[str, Mapping[str, float]] | None = None,
    observed: Sequence[str] = (),
    columns: int = 3,
) -> go.Figure:
    """Every variable's posterior as a small horizontal bar chart (one panel per variable, in model order),
    with the prior (no evidence) as a grey bar behind it; an observed variable's panel is titled so
    ("(obs.)").  Titles longer than :data:`TITLE_CHARS` are cut.

    Parameters
    ----------
    variables : sequence of str
    states : sequence of sequence of str
        Each variable's states.
    posterior, prior : mapping of str to mapping of str to float
        ``{variable: {state: probability}}``.
    observed : sequence of str
    columns : int
        Panels per row.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    n = len(variables)
    columns = max(1, min(columns, n))
    rows = max(1, math.ceil(n / columns))
    seen = set(observed)
    titles = [
        plain(_cut(v, TITLE_CHARS - 7) + " (obs.)" if v in seen else _cut(v, TITLE_CHARS)) for v in variables
    ]
    fig = make_subplots(
        rows=rows, cols=columns, subplot_titles=titles, horizontal_spacing=0.12, vertical_spacing=0.5 / rows
    )
    for k, v in enumerate(variables):
        r, c = k // columns + 1, k % columns + 1
        labels = [plain(s) for s in states[k]]
        post = [float(posterior[v][s]) for s in states[k]]
        if prior is not None:
            fig.add_trace(
                go.Bar(
                    x=[float(prior[v][s]) for s in states[k]],
                    y=labels,
                    orientation="h",
                    marker_color=PRIOR_COLOR,
                    width=0.9,
                    hoverinfo="skip",
                    showlegend=k == 0,
                    name="no evidence",
                ),
                row=r,
                col=c,
            )
        fig.add_trace(
            go.Bar(
                x=post,
                y=labels,
                orientation="h",
                marker_color=OBSERVED_COLOR if v in seen else POSTERIOR_COLOR,
                width=0.5,
                text=[f"{p:.3f}" for p in post],
                textposition="outside",
                cliponaxis=False,
                hovertemplate=f"{plain(v)} = %{{y}}: %{{x:.4f}}<extra></extra>",
                showlegend=k == 0,
                name="given the evidence",
            ),
            row=r,
            col=c,
        )
    fig.update_xaxes(range=[0, 1.3], showticklabels=False, showgrid=False)
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=10))
    fig.update_layout(
        barmode="overlay",
        height=max(220, 120 * rows + 40),
        margin=dict(l=10, r=10, t=40, b=10),
        font=FONT,
        plot_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.0 + 0.4 / rows, xanchor="right", x=1.0),
    )
    fig.update_annotations(font_size=11)
    return fig
