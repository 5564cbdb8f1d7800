"""Figures of the Model page: the network with its observed variables and an independence query's active
trails, and every variable's posterior as a small bar chart.  Built from the shared DAG drawing of
:mod:`bnfk_core.views.figures.base`; nothing here computes results."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from .base import FONT, SEGMENT_COLOR, dag_figure, plain, shared_layout

__all__ = [
    "model_graph",
    "posterior_grid",
    "OBSERVED_COLOR",
    "OBSERVED_FILL",
    "POSTERIOR_COLOR",
    "PRIOR_COLOR",
    "TITLE_CHARS",
]

OBSERVED_COLOR = "#7b4fb0"
OBSERVED_FILL = "#efe4fa"
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
    numeric=(),
) -> go.Figure:
    """The network drawn as on the Structure page, its variables clickable (no arc dots): the observed ones
    in purple boxes with their state (when not empty) written under them, and the arcs of ``trails`` (node
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
        The legend's name of the purple boxes.
    numeric : iterable of str
        The numeric nodes of a hybrid network (green boxes, :func:`~.base.dag_figure`).

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
        numeric=tuple(numeric),
    )
    # edited as a dict and validated once (editing a figure's annotations one by one costs 10 ms each)
    spec = fig.to_dict()
    data = [t for t in spec["data"] if t.get("name") not in ("arcs", "current segment")]
    layout = spec["layout"]
    if on_trail:
        data.append(_legend_entry("active trail", mode="lines", line=dict(color=SEGMENT_COLOR, width=3)))
    observed = dict(observed or {})
    if observed:
        spots = {(float(pos[v][0]), float(pos[v][1])) for v in nodes if v in observed}
        boxes = list(layout.get("annotations", []))
        for a in boxes:  # the observed variables' boxes in purple
            if not a.get("showarrow", True) and (float(a["x"]), float(a["y"])) in spots:
                a.update(bgcolor=OBSERVED_FILL, bordercolor=OBSERVED_COLOR, borderwidth=2.5)
        boxes += [
            dict(
                x=pos[v][0],
                y=pos[v][1] - 0.3,
                xref="x",
                yref="y",
                text=f"= {plain(observed[v])}",
                showarrow=False,
                font=dict(size=11, color=OBSERVED_COLOR),
            )
            for v in nodes
            if observed.get(v)
        ]
        layout.update(annotations=boxes, showlegend=True)
        data.append(
            _legend_entry(
                observed_label,
                mode="markers",
                marker=dict(
                    symbol="square", size=12, color=OBSERVED_FILL, line=dict(color=OBSERVED_COLOR, width=2)
                ),
            )
        )
    return go.Figure(dict(data=data, layout=layout))


def _legend_entry(name: str, **style) -> dict:
    return dict(type="scatter", x=[None], y=[None], name=name, **style)


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
    gap_x, gap_y = 0.12, 0.5 / rows
    width, height = (1 - gap_x * (columns - 1)) / columns, (1 - gap_y * (rows - 1)) / rows
    data, layout, titles = [], {}, []
    for k, v in enumerate(variables):
        r, c = k // columns, k % columns
        ax = "" if k == 0 else str(k + 1)
        x0, y1 = c * (width + gap_x), 1 - r * (height + gap_y)
        y0 = max(0.0, y1 - height)
        layout[f"xaxis{ax}"] = dict(
            domain=[x0, min(1.0, x0 + width)],
            anchor=f"y{ax}",
            range=[0, 1.3],
            showticklabels=False,
            showgrid=False,
        )
        layout[f"yaxis{ax}"] = dict(
            domain=[y0, y1], anchor=f"x{ax}", autorange="reversed", tickfont=dict(size=10)
        )
        name = _cut(v, TITLE_CHARS - 7) + " (obs.)" if v in seen else _cut(v, TITLE_CHARS)
        titles.append(
            dict(
                text=plain(name),
                x=x0 + width / 2,
                y=y1,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=11),
            )
        )
        labels = [plain(s) for s in states[k]]
        post = [float(posterior[v][s]) for s in states[k]]
        common = dict(type="bar", y=labels, orientation="h", xaxis=f"x{ax}", yaxis=f"y{ax}")
        if prior is not None:
            data.append(
                dict(
                    common,
                    x=[float(prior[v][s]) for s in states[k]],
                    marker=dict(color=PRIOR_COLOR),
                    width=0.9,
                    hoverinfo="skip",
                    showlegend=k == 0,
                    name="no evidence",
                )
            )
        data.append(
            dict(
                common,
                x=post,
                marker=dict(color=OBSERVED_COLOR if v in seen else POSTERIOR_COLOR),
                width=0.5,
                text=[f"{p:.3f}" for p in post],
                textposition="outside",
                cliponaxis=False,
                hovertemplate=f"{plain(v)} = %{{y}}: %{{x:.4f}}<extra></extra>",
                showlegend=k == 0,
                name="given the evidence" if prior is not None else "no evidence (marginal)",
            )
        )
    layout.update(
        annotations=titles,
        barmode="overlay",
        height=max(220, 120 * rows + 40),
        margin=dict(l=10, r=10, t=40, b=10),
        font=FONT,
        plot_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.0 + 0.4 / rows, xanchor="right", x=1.0),
    )
    return go.Figure(dict(data=data, layout=layout))
