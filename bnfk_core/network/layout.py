"""Where to draw a DAG: layered node coordinates and arrow end points.

Nothing here draws: every function returns plain numbers, so figures can be rebuilt and
checked outside Streamlit and plotly (the figure builders live in ``bnfk_core.views.figures``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["layered_layout", "arrow_segment", "arc_path", "path_hits_box", "path_hits_boxes"]


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


#: bends tried for an arc that must go around a box, as a share of its length (the smallest that clears wins)
BENDS = (0.12, 0.2, 0.3, 0.42, 0.55, 0.7, 0.9)


def path_hits_box(points: np.ndarray, box: Sequence[float], margin: float = 0.0) -> bool:
    """Whether a polyline enters an axis-aligned box (grown by ``margin``).

    Parameters
    ----------
    points : ndarray, shape (n, 2)
    box : sequence of float
        (cx, cy, half_width, half_height).
    margin : float

    Returns
    -------
    bool
        True when a segment of the polyline meets the box (Liang-Barsky clipping of each segment).
    """
    cx, cy, hw, hh = (float(b) for b in box)
    lo = np.array([cx - hw - margin, cy - hh - margin])
    hi = np.array([cx + hw + margin, cy + hh + margin])
    pts = np.asarray(points, float)
    for a, b in zip(pts[:-1], pts[1:]):
        d = b - a
        t0, t1 = 0.0, 1.0
        for k in range(2):
            if abs(d[k]) < 1e-12:
                if a[k] < lo[k] or a[k] > hi[k]:
                    t0, t1 = 1.0, 0.0
                    break
                continue
            ta, tb = (lo[k] - a[k]) / d[k], (hi[k] - a[k]) / d[k]
            t0, t1 = max(t0, min(ta, tb)), min(t1, max(ta, tb))
        if t0 <= t1:
            return True
    return False


def path_hits_boxes(points: np.ndarray, boxes: np.ndarray, margin: float = 0.0) -> bool:
    """Whether a polyline enters any of several boxes: :func:`path_hits_box` of every box, every segment
    against every box at once (the same clipping arithmetic, so the same answers).

    Parameters
    ----------
    points : ndarray, shape (n, 2)
    boxes : ndarray, shape (k, 4)
        (cx, cy, half_width, half_height) of each box.
    margin : float

    Returns
    -------
    bool
    """
    boxes = np.asarray(boxes, float).reshape(-1, 4)
    pts = np.asarray(points, float)
    if not len(boxes) or len(pts) < 2:
        return False
    a = pts[:-1, None, :]  # (segments, 1, 2)
    d = (pts[1:] - pts[:-1])[:, None, :]
    lo = (boxes[:, :2] - boxes[:, 2:] - margin)[None]  # (1, boxes, 2)
    hi = (boxes[:, :2] + boxes[:, 2:] + margin)[None]
    flat = np.abs(d) < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        ta, tb = (lo - a) / d, (hi - a) / d
    t0 = np.maximum(0.0, np.where(flat, -np.inf, np.minimum(ta, tb)).max(axis=2))
    t1 = np.minimum(1.0, np.where(flat, np.inf, np.maximum(ta, tb)).min(axis=2))
    outside = (flat & ((a < lo) | (a > hi))).any(axis=2)  # parallel to an axis and beside the box
    return bool(((t0 <= t1) & ~outside).any())


def arc_path(
    p: Sequence[float],
    q: Sequence[float],
    boxes: Iterable[Sequence[float]],
    *,
    taken: Iterable[np.ndarray] = (),
    margin: float = 4.0,
    steps: int = 24,
) -> np.ndarray:
    """The path an arc p -> q is drawn along: straight when that clears every other node's box, else a
    quadratic Bézier curve bent just enough to go around them (the long arc of a fully connected triple in a
    layered layout, which would run behind the middle node and the two short arcs).

    Parameters
    ----------
    p, q : sequence of float
        The centres of the arc's two nodes, in screen-like units (the same scale on both axes).
    boxes : iterable of (cx, cy, half_width, half_height)
        The boxes of the other nodes, in the same units.
    taken : iterable of ndarray
        Paths already drawn: a curve is bent to the side (and by the amount) that does not run along one.
    margin : float
        Room kept between a path and a box.
    steps : int
        Points a curve is sampled at.

    Returns
    -------
    ndarray, shape (2, 2) or (steps + 1, 2)
        From p to q.
    """
    p, q = np.asarray(p, float), np.asarray(q, float)
    boxes = np.asarray([tuple(b) for b in boxes], float).reshape(-1, 4)
    taken = [np.asarray(t, float) for t in taken]
    samples = _samples(taken, steps + 1)
    straight = np.vstack([p, q])
    if not path_hits_boxes(straight, boxes, margin):
        return straight
    d = q - p
    L = float(np.hypot(*d)) or 1.0
    normal = np.array([-d[1], d[0]]) / L
    t = np.linspace(0.0, 1.0, steps + 1)[:, None]
    mid = (p + q) / 2
    best = None
    for bend in BENDS:
        for side in (1.0, -1.0):
            c = mid + side * bend * L * normal
            curve = (1 - t) ** 2 * p + 2 * (1 - t) * t * c + t**2 * q
            if path_hits_boxes(curve, boxes, margin):
                continue
            gap = (
                _gap(curve, samples)
                if samples is not None
                else min((_distance(curve, o) for o in taken), default=np.inf)
            )
            if gap > margin:
                return curve
            if best is None or gap > best[0]:
                best = (gap, curve)
    if best is not None:
        return best[1]
    c = mid + BENDS[-1] * L * normal
    return (1 - t) ** 2 * p + 2 * (1 - t) * t * c + t**2 * q


def _samples(taken: list, n: int) -> np.ndarray | None:
    """The drawn paths as :func:`_distance` samples them, stacked (paths, n, 2): a straight one at 25 points,
    a curve at its own; None when some path has another number of points."""
    rows = []
    for b in taken:
        if len(b) == 2:
            b = b[0] + np.linspace(0.0, 1.0, 25)[:, None] * (b[1] - b[0])
        if len(b) != n:
            return None
        rows.append(b)
    return np.stack(rows) if rows else np.zeros((0, n, 2))


def _gap(a: np.ndarray, samples: np.ndarray) -> float:
    """``min(_distance(a, b) for b in taken)`` of the paths :func:`_samples` stacked, in one array pass (the
    same sums, each path's mean over the last axis)."""
    if not len(samples):
        return np.inf
    inner = a[1:-1] if len(a) > 2 else (a[:1] + a[1:]) / 2
    near = np.min(np.linalg.norm(inner[None, :, None, :] - samples[:, None, :, :], axis=3), axis=2)
    return float(np.mean(near, axis=1).min())


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    """The mean distance from the inner points of polyline ``a`` to the nearest sample of ``b`` (how far
    apart two drawn paths run)."""
    inner = a[1:-1] if len(a) > 2 else (a[:1] + a[1:]) / 2
    if len(b) == 2:
        b = b[0] + np.linspace(0.0, 1.0, 25)[:, None] * (b[1] - b[0])
    return float(np.mean(np.min(np.linalg.norm(inner[:, None, :] - b[None, :, :], axis=2), axis=1)))
