"""The bootstrap arc strengths (:mod:`bnfk_core.learning.bootstrap`) drawn on the network: every pair at or
above a strength threshold as an arc (in its majority direction; undirected when the directions tie), its
width growing with the strength and its strength written at its middle."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .base import dag_figure, plain, shared_layout

__all__ = ["strength_figure", "strong_arcs"]


def strong_arcs(records: Sequence[dict], threshold: float = 0.5) -> tuple[list, list, dict]:
    """The arcs to draw from ``records`` (``{"from", "to", "strength", "direction"}``, as
    :meth:`~bnfk_core.learning.bootstrap.ArcStrength.to_records`): ``(directed, undirected, strength)`` --
    the pairs whose strength reaches ``threshold``, directed ``from -> to`` when that direction holds in more
    than half of the networks joining them, undirected when the two directions tie; ``strength`` by pair.

    Parameters
    ----------
    records : sequence of dict
        ``{"from", "to", "strength", "direction"}`` rows.
    threshold : float
        The least strength kept.

    Returns
    -------
    (list, list, dict)
        The directed arcs, the undirected pairs, and the strength of every kept pair (``frozenset`` keys).
    """
    directed, undirected, strength = [], [], {}
    for r in records:
        u, v, s, d = str(r["from"]), str(r["to"]), float(r["strength"]), float(r["direction"])
        if s < threshold:
            continue
        if d > 0.5:
            directed.append((u, v))
        elif d == 0.5 and u < v:
            undirected.append((u, v))
        strength[frozenset((u, v))] = s
    return directed, undirected, strength


def strength_figure(
    nodes: Sequence[str], records: Sequence[dict], threshold: float = 0.5, title: str = ""
) -> go.Figure:
    """The network of the arcs whose bootstrap strength reaches ``threshold`` (:func:`strong_arcs`), each
    arc's width 1 + 5 x its strength and its strength written at its middle; the legend says an arrow is the
    majority direction and a plain line a pair found as often in both directions.

    Parameters
    ----------
    nodes : sequence of str
    records : sequence of dict
        ``{"from", "to", "strength", "direction"}`` rows.
    threshold : float
        The least strength drawn.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    directed, undirected, strength = strong_arcs(records, threshold)
    # the majority directions may form a cycle: the layout is that of the pairs, each oriented by node order
    rank = {v: i for i, v in enumerate(nodes)}
    pos = shared_layout(list(nodes), [tuple(sorted(e, key=rank.get)) for e in directed + undirected])
    widths = {(u, v): 1.0 + 5.0 * strength[frozenset((u, v))] for u, v in directed}
    fig = dag_figure(list(nodes), directed, undirected=undirected, pos=pos, title=title, widths=widths)
    lines = {(pos[u], pos[v]): frozenset((u, v)) for u, v in undirected}
    for tr in fig.data:
        if tr.mode == "lines" and tr.x is not None and len(tr.x) == 2:
            pair = lines.get(((tr.x[0], tr.y[0]), (tr.x[1], tr.y[1])))
            if pair is not None:
                tr.line.width = 1.0 + 5.0 * strength[pair]
    names = {
        "arc": "arc (its majority direction)",
        "compelled arc": "arc (its majority direction)",
        "reversible edge": "both directions equally often",
    }
    for tr in fig.data:
        if tr.name in names and tr.x == (None,):
            tr.name = names[tr.name]
    for u, v in directed + undirected:
        (x0, y0), (x1, y1) = pos[u], pos[v]
        fig.add_annotation(
            x=(x0 + x1) / 2,
            y=(y0 + y1) / 2,
            text=f"{strength[frozenset((u, v))]:.2f}",
            showarrow=False,
            font=dict(size=11, color="#333"),
            bgcolor="rgba(255,255,255,0.85)",
            hovertext=f"{plain(u)} – {plain(v)}",
        )
    return fig
