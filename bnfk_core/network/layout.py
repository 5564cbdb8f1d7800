"""Where to draw a DAG: layered node coordinates and arrow end points.

Nothing here draws: every function returns plain numbers, so figures can be rebuilt and
checked outside Streamlit and plotly (the figure builders live in ``bnfk_core.views.figures``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["layered_layout", "arrow_segment"]


# ---------------------------------------------------------------------- DAG layout
def _layers(nodes: Sequence[str], arcs: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering: a node sits one layer below its deepest parent."""
    parents = {v: [] for v in nodes}
    children = {v: [] for v in nodes}
    for u, v in arcs:
        parents[v].append(u)
        children[u].append(v)
    layer: dict[str, int] = {}
    indeg = {v: len(parents[v]) for v in nodes}
    frontier = [v for v in nodes if indeg[v] == 0]
    for v in frontier:
        layer[v] = 0
    while frontier:
        nxt = []
        for u in frontier:
            for w in children[u]:
                layer[w] = max(layer.get(w, 0), layer[u] + 1)
                indeg[w] -= 1
                if indeg[w] == 0:
                    nxt.append(w)
        frontier = nxt
    if len(layer) != len(nodes):
        raise ValueError("layered_layout needs an acyclic graph.")
    return layer


def layered_layout(
    nodes: Sequence[str], arcs: Iterable[tuple[str, str]], *, max_per_row: int = 7, sweeps: int = 4
) -> dict[str, tuple[float, float]]:
    """Top-down coordinates of a DAG: parents above children, few crossings.

    Layers are longest paths from the sources; the order inside each layer follows the
    barycenter heuristic (mean position of the neighbours in the adjacent layers,
    alternating down and up sweeps).  Nodes without any arc are collected in a grid at the
    bottom; layers wider than ``max_per_row`` wrap onto several rows.

    Parameters
    ----------
    nodes : sequence of str
    arcs : iterable of (u, v)
    max_per_row : int
        Widest row before a layer wraps.
    sweeps : int
        Number of barycenter sweeps.

    Returns
    -------
    dict
        node -> (x, y) with y = 0 for the top row and decreasing downwards; x is centred on 0
        with unit spacing.
    """
    nodes = [str(v) for v in nodes]
    arcs = [(str(u), str(v)) for u, v in arcs]
    connected = {u for u, _ in arcs} | {v for _, v in arcs}
    linked = [v for v in nodes if v in connected]
    isolated = [v for v in nodes if v not in connected]
    rank = {v: i for i, v in enumerate(nodes)}
    layer = _layers(linked, arcs)
    n_layers = max(layer.values(), default=-1) + 1
    rows = [[v for v in linked if layer[v] == k] for k in range(n_layers)]
    nbrs = {v: set() for v in linked}
    for u, v in arcs:
        nbrs[u].add(v)
        nbrs[v].add(u)
    pos_in_row = {v: float(i) for row in rows for i, v in enumerate(row)}

    def sweep(order):
        for k in order:
            row = rows[k]

            def bary(v):
                ref = [pos_in_row[w] for w in nbrs[v] if abs(layer[w] - k) == 1]
                return (np.mean(ref) if ref else pos_in_row[v], rank[v])

            row.sort(key=bary)
            for i, v in enumerate(row):
                pos_in_row[v] = i - (len(row) - 1) / 2.0

    for s in range(sweeps):
        sweep(range(1, n_layers) if s % 2 == 0 else range(n_layers - 2, -1, -1))

    out: dict[str, tuple[float, float]] = {}
    y = 0.0
    for row in rows + ([isolated] if isolated else []):
        if not row:
            continue
        if row is isolated and linked:
            y -= 0.5  # a little gap before the unconnected nodes
        for start in range(0, len(row), max_per_row):
            chunk = row[start : start + max_per_row]
            offset = 0.5 if (start // max_per_row) % 2 else 0.0  # stagger wrapped rows
            for i, v in enumerate(chunk):
                out[v] = (i - (len(chunk) - 1) / 2.0 + offset, y)
            y -= 1.0
    return out


def arrow_segment(p: Sequence[float], q: Sequence[float], shrink: float) -> tuple[float, float, float, float]:
    """The segment p -> q shortened by ``shrink`` at both ends (so arrows stop at node borders).

    Parameters
    ----------
    p, q : sequence of float
        Start and end points (x, y).
    shrink : float
        Length cut at each end.

    Returns
    -------
    tuple of float
        (x0, y0, x1, y1); p and q unchanged when the segment is shorter than ``2 * shrink``.
    """
    p, q = np.asarray(p, float), np.asarray(q, float)
    d = q - p
    L = float(np.hypot(*d))
    if L <= 2 * shrink or L == 0:
        return (*p, *q)
    u = d / L
    a, b = p + shrink * u, q - shrink * u
    return float(a[0]), float(a[1]), float(b[0]), float(b[1])
