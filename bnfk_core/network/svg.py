"""A DAG or a network drawn as a small self-contained SVG, so that it shows itself in a notebook
(``_repr_svg_`` of :class:`~bnfk_core.network.dag.DAG` and :class:`~bnfk_core.network.model.BayesNet`).

Nodes sit where :func:`bnfk_core.network.layout.layered_layout` puts them (parents above children); each is an
ellipse with its name (cut to :data:`LABEL_CHARS` characters, the full name and its states in a ``<title>``
tooltip); each arc is a path from the parent's border to the child's with an arrow head, bent a little when it
spans more than one layer so that it does not run through the nodes between.  Every name is XML-escaped; the
picture needs nothing from outside (no script, no font or style sheet fetched).
"""

from __future__ import annotations

import math
import re
from html import escape as _escape

from .layout import layered_layout

__all__ = ["dag_svg", "escape", "LABEL_CHARS"]

#: the longest node label drawn (longer names are cut, whole in the tooltip)
LABEL_CHARS = 16

_DX, _DY, _RX, _RY, _PAD = 130.0, 90.0, 58.0, 20.0, 12.0


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text) -> str:
    """``text`` escaped for XML text and attribute values, characters XML cannot hold shown as U+FFFD.

    Parameters
    ----------
    text : object
        Shown as ``str(text)``.

    Returns
    -------
    str
    """
    return _escape(_NOT_XML.sub("\ufffd", str(text)), quote=True)


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def _border(p, q):
    """The point where the segment from ellipse centre ``p`` towards ``q`` leaves the ellipse."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    if dx == 0 and dy == 0:
        return p
    t = 1.0 / math.sqrt((dx / _RX) ** 2 + (dy / _RY) ** 2)
    return p[0] + t * dx, p[1] + t * dy


def dag_svg(dag, *, states: dict | None = None, title: str | None = None) -> str:
    """SVG text drawing ``dag``.

    Parameters
    ----------
    dag : DAG
    states : dict, optional
        ``{variable: states}``, shown in each node's tooltip.
    title : str, optional
        A caption above the graph.

    Returns
    -------
    str
        One ``<svg>`` element (``xmlns`` set): a ``<g class="node" data-name=...>`` per node and a
        ``<path class="arc" data-from=... data-to=...>`` per arc, every name escaped.
    """
    nodes = list(dag.nodes)
    arcs = dag.sorted_arcs()
    pos = layered_layout(nodes, arcs)
    xs = [x for x, _ in pos.values()] or [0.0]
    ys = [y for _, y in pos.values()] or [0.0]
    top = 24.0 if title else 0.0
    x0, y0 = min(xs), max(ys)
    width = (max(xs) - x0) * _DX + 2 * (_RX + _PAD)
    height = (y0 - min(ys)) * _DY + 2 * (_RY + _PAD) + top
    at = {v: ((x - x0) * _DX + _RX + _PAD, (y0 - y) * _DY + _RY + _PAD + top) for v, (x, y) in pos.items()}
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="12">',
        '<defs><marker id="bnfk-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
    ]
    if title:
        out.append(f'<text x="{_PAD}" y="16" font-weight="bold">{escape(title)}</text>')
    for u, v in arcs:
        (px, py), (qx, qy) = at[u], at[v]
        span = abs(pos[u][1] - pos[v][1])
        if span > 1.01 or (span < 0.01 and abs(pos[u][0] - pos[v][0]) > 1.01):  # bend past the nodes between
            length = math.hypot(qx - px, qy - py) or 1.0
            bend = 0.18 * length
            cx, cy = (px + qx) / 2 + bend * (qy - py) / length, (py + qy) / 2 - bend * (qx - px) / length
        else:
            cx, cy = (px + qx) / 2, (py + qy) / 2
        a, b = _border((px, py), (cx, cy)), _border((qx, qy), (cx, cy))
        out.append(
            f'<path class="arc" data-from="{escape(u)}" data-to="{escape(v)}" '
            f'd="M {a[0]:.1f} {a[1]:.1f} Q {cx:.1f} {cy:.1f} {b[0]:.1f} {b[1]:.1f}" fill="none" '
            'stroke="#555" stroke-width="1.4" marker-end="url(#bnfk-arrow)"/>'
        )
    for v in nodes:
        x, y = at[v]
        tip = v if not states or v not in states else f"{v}: {', '.join(map(str, states[v]))}"
        out.append(
            f'<g class="node" data-name="{escape(v)}"><title>{escape(tip)}</title>'
            f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{_RX}" ry="{_RY}" fill="#eef4fb" stroke="#2b5d8a"/>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{escape(_label(v))}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out)
