"""Plotly figure builders and the one class palette every page uses.

Names are text: plotly renders its own HTML subset (``<b>``, ``<a href>``, ``<span style>``, ``<br>`` ...) and
MathJax (``$...$``) in every string it draws -- titles, axes, ticks, legends, hovers, annotations, heatmap
labels.  Every user-supplied string (a column, a level, a file name) goes through :func:`plain` (or
:func:`plain_all`) in the builders here, which the other figure modules use too, so it shows literally; markup
the builders add themselves is put around the escaped text.  A class with many levels is drawn with at most
MAX_CLASS_COLORS colours (:func:`bounded_classes`: the most frequent levels, the rest as one grey group).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from bnfk_core.network.layout import arc_path, layered_layout

__all__ = [
    "KERNEL_SCALE",
    "shared_layout",
    "stagger_layers",
    "DAG_MIN_WIDTH",
    "LEGEND_BELOW",
    "MISSING_COLOR",
    "ARC_COLOR",
    "SEGMENT_COLOR",
    "COVERED_COLOR",
    "UNDIRECTED_COLOR",
    "OTHER_COLOR",
    "NUMERIC_FILL",
    "NUMERIC_BORDER",
    "FONT",
    "MAX_CLASS_COLORS",
    "MAX_BARS",
    "plain",
    "plain_all",
    "bounded_classes",
    "class_colors",
    "dag_figure",
    "kernel_range",
    "gram_figure",
    "DRAW_ROWS",
    "PANEL_ROWS",
    "evenly_drawn",
    "histogram_figure",
    "contributions_figure",
    "embedding_figure",
    "levels_figure",
]

KERNEL_SCALE = "RdBu_r"  # diverging, centred at 0 (zmid=0) for every kernel value
MISSING_COLOR = "#bdbdbd"
ARC_COLOR = "#4a4a4a"
SEGMENT_COLOR = "#ff7f0e"
COVERED_COLOR = "#2ca02c"
UNDIRECTED_COLOR = "#1f77b4"
OTHER_COLOR = "#8c8c8c"
#: the box of a numeric (Gaussian) node in a DAG
NUMERIC_FILL, NUMERIC_BORDER = "#e8f5e9", "#2e7d32"
#: named classes a figure colours at most (the rest: one "other levels" group); bars a levels chart draws at
#: most
MAX_CLASS_COLORS = 24
MAX_BARS = 200
_PALETTE = pc.qualitative.D3 + pc.qualitative.Pastel + pc.qualitative.Dark24
FONT = dict(family="Source Sans Pro, sans-serif")
#: a horizontal legend under the plot (below the x-axis title): it never covers a figure's title, however
#: many entries wrap onto more lines on a narrow (projector) screen
LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0.0)
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "&#36;", "%": "&#37;"})


# ---------------------------------------------------------------------- names are text
def plain(text) -> str:
    """``text`` as plotly shows it literally: its HTML subset (``<b>``, ``<a href=..>``, ``<br>``, entities)
    and MathJax delimiters (``$x^2$``) escaped as entities plotly decodes only when it draws the text (``%``
    too, so a name inside a hover template is not a template field).

    Parameters
    ----------
    text : object

    Returns
    -------
    str
    """
    return str(text).translate(_ESCAPES)


def plain_all(texts) -> list[str]:
    """:func:`plain` of every string in ``texts``.

    Parameters
    ----------
    texts : iterable of object

    Returns
    -------
    list of str
    """
    return [plain(t) for t in texts]


def bounded_classes(labels, class_states: Sequence[str]) -> tuple[np.ndarray, list[str], bool]:
    """``(labels, names, other)`` with at most MAX_CLASS_COLORS classes: unchanged for few levels; else the
    MAX_CLASS_COLORS - 1 levels most frequent in ``labels`` (in their order) and one last group "other levels"
    (``other`` True) holding the rest -- so a class with 100,000 levels draws a scale of 24 colours.

    Parameters
    ----------
    labels : array-like of int
    class_states : sequence of str

    Returns
    -------
    labels : ndarray of int64
    names : list of str
    other : bool
    """
    labels = np.asarray(labels, dtype=np.int64)
    states = list(class_states)
    if len(states) <= MAX_CLASS_COLORS:
        return labels, states, False
    ok = labels >= 0
    counts = np.bincount(labels[ok], minlength=len(states))
    top = np.argsort(-counts, kind="stable")[: MAX_CLASS_COLORS - 1]
    keep = np.sort(top[counts[top] > 0])
    remap = np.full(len(states), len(keep), dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    new = np.where(ok, remap[np.where(ok, labels, 0)], -1)
    names = [str(states[k]) for k in keep] + [f"other levels ({len(states) - len(keep):,})"]
    return new, names, True


# ---------------------------------------------------------------------- palette
def class_colors(states: Sequence[str], other: bool = False) -> dict[str, str]:
    """State -> colour for a class variable; the same states get the same colours on every page.

    Parameters
    ----------
    states : sequence of str
        The class variable's states, in order; a blank state (``?``, ``""``) is drawn in the missing colour.
    other : bool
        The last state is :func:`bounded_classes`'s "other levels" group, drawn in grey.

    Returns
    -------
    dict of str to str
        A colour of the palette per state, the palette taken in order by the non-blank states.
    """
    out, k = {}, 0
    for j, s in enumerate(states):
        if other and j == len(states) - 1:
            out[s] = OTHER_COLOR
            continue
        if s in ("?", "", None):
            out[s] = MISSING_COLOR
        else:
            out[s] = _PALETTE[k % len(_PALETTE)]
            k += 1
    return out


def _discrete_scale(colors: Sequence[str]) -> list:
    """A colour scale mapping the integers 0..n-1 to ``colors`` (for class strips)."""
    n = max(len(colors), 1)
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale or [[0, MISSING_COLOR], [1, MISSING_COLOR]]


# ---------------------------------------------------------------------- DAG
def _wrap(label: str, width: int = 14) -> list[str]:
    """A variable's name cut into lines of about ``width`` characters (at - _ space .)."""
    if len(label) <= width:
        return [label]
    parts = re.split(r"(?<=[-_ .])", label)
    lines, cur = [], ""
    for p in parts:
        if cur and len(cur) + len(p) > width:
            lines.append(cur)
            cur = p
        else:
            cur += p
    lines.append(cur)
    return lines


def _box_standoff(lines: list[str], dx: float, dy: float) -> float:
    """Pixels from a node box's centre to its border in direction (dx, dy) (screen units)."""
    hw = max(len(s) for s in lines) * 3.6 + 7
    hh = len(lines) * 7.5 + 5
    L = math.hypot(dx, dy) or 1.0
    c, s = abs(dx) / L, abs(dy) / L
    return min(hw / c if c > 1e-9 else 1e9, hh / s if s > 1e-9 else 1e9) + 2


def _box_size(lines: list[str]) -> tuple[float, float]:
    """(width, height) in pixels of a node's box (font 12, border pad 3), as :func:`_box_standoff` assumes."""
    return 2 * (max(len(s) for s in lines) * 3.6 + 7), 2 * (len(lines) * 7.5 + 5)


#: the narrowest width a DAG figure is drawn at (the Structure page's graph beside its arc edits at 1280
#: pixels)
DAG_MIN_WIDTH = 620
#: how far every second box of a crowded layer moves off its layer (layers are 1 apart)
STAGGER = 0.45


def stagger_layers(pos: dict, lines: dict, px_per_x: float) -> tuple[dict, bool]:
    """``pos`` with every second node of a layer moved by :data:`STAGGER` when two neighbouring boxes of that
    layer would overlap at ``px_per_x`` pixels per unit of x (so a wide layer of long names stays readable);
    and whether any layer was staggered.

    Parameters
    ----------
    pos : dict
        node -> (x, y).
    lines : dict
        node -> its label's lines.
    px_per_x : float

    Returns
    -------
    pos : dict
    staggered : bool
    """
    layers: dict = {}
    for v, (x, y) in pos.items():
        layers.setdefault(round(float(y), 6), []).append(v)
    out, moved = dict(pos), False
    for vs in layers.values():
        vs.sort(key=lambda v: pos[v][0])
        if any(
            (pos[b][0] - pos[a][0]) * px_per_x < (_box_size(lines[a])[0] + _box_size(lines[b])[0]) / 2 + 6
            for a, b in zip(vs, vs[1:])
        ):
            moved = True
            for k, v in enumerate(vs):
                if k % 2:
                    out[v] = (pos[v][0], pos[v][1] + STAGGER)
    return out, moved


def shared_layout(nodes: Sequence[str], arcs, width: float = DAG_MIN_WIDTH) -> dict:
    """A layered layout (staggered where a layer is crowded at ``width`` pixels) for drawing several networks
    over the same variables in the same places (pass it as ``dag_figure(pos=...)``).

    Parameters
    ----------
    nodes : sequence of str
    arcs : iterable of (u, v)
    width : float
        Figure width in pixels.

    Returns
    -------
    dict
        node -> (x, y).
    """
    pos = layered_layout(list(nodes), [tuple(a) for a in arcs])
    xs = [p[0] for p in pos.values()] or [0]
    return stagger_layers(
        pos, {v: _wrap(str(v)) for v in nodes}, width / (max(max(xs) - min(xs), 1.0) + 1.2)
    )[0]


def dag_figure(
    nodes: Sequence[str],
    arcs,
    *,
    undirected=(),
    highlight=(),
    covered=(),
    node_info: dict | None = None,
    title: str = "",
    height: int | None = None,
    pos: dict | None = None,
    clickable: bool = False,
    picked: str | None = None,
    widths: dict | None = None,
    numeric=(),
) -> go.Figure:
    """A DAG (or CPDAG: ``undirected`` edges drawn as plain lines) in a layered layout.

    ``numeric`` nodes (Gaussian nodes of a hybrid network) are drawn in green boxes, with a legend entry
    for each kind of node.

    ``highlight`` arcs (the current segment) are orange, ``covered`` arcs green.  ``clickable`` makes the
    variables and a dot at the middle of every arc selectable points whose ``customdata`` is the variable's
    name or ``"u\tv"`` (for ``st.plotly_chart(on_select=...)``); ``picked`` is drawn as chosen.

    Parameters
    ----------
    nodes : sequence of str
    arcs, undirected, highlight, covered : iterable of (u, v)
    node_info : dict, optional
        node -> hover text.
    title : str
    height : int, optional
    pos : dict, optional
        node -> (x, y); default :func:`~bnfk_core.network.layout.layered_layout`.
    clickable : bool
    picked : str, optional
    widths : dict, optional
        ``(u, v)`` -> the line width of that arc (its head scaled to stay about even).
    numeric : iterable of str
        The numeric nodes.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    nodes = list(nodes)
    arcs = [tuple(a) for a in arcs]
    undirected = [tuple(e) for e in undirected]
    lines = {v: _wrap(str(v)) for v in nodes}
    moved = False
    if pos is None:
        pos = layered_layout(nodes, arcs + undirected)
        xs = [p[0] for p in pos.values()] or [0]
        pos, moved = stagger_layers(pos, lines, DAG_MIN_WIDTH / (max(max(xs) - min(xs), 1.0) + 1.2))
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    n_rows = int(round(max(ys) - min(ys))) + 1
    height = height or max(320, (140 if moved else 105) * n_rows + 60)
    width_px, x_span = 900.0, max(max(xs) - min(xs), 1.0) + 1.2
    y_span = max(max(ys) - min(ys), 0.5) + 0.8
    sx, sy = width_px / x_span, (height - 60) / y_span
    labels = {v: "<br>".join(plain_all(lines[v])) for v in nodes}
    highlight, covered = set(map(tuple, highlight)), set(map(tuple, covered))

    fig = go.Figure()
    ann = []
    for u, v in undirected:
        (x0, y0), (x1, y1) = pos[u], pos[v]
        fig.add_trace(
            go.Scatter(
                x=[x0, x1],
                y=[y0, y1],
                mode="lines",
                hoverinfo="skip",
                showlegend=False,
                line=dict(color=UNDIRECTED_COLOR, width=2.5),
            )
        )
    paths = arc_paths(pos, lines, arcs, x_span, sy)
    for u, v in sorted(arcs):
        (x0, y0), (x1, y1) = pos[u], pos[v]
        dx, dy = (x1 - x0) * sx, (y1 - y0) * sy
        color, width = ARC_COLOR, 1.4
        if (u, v) in highlight:
            color, width = SEGMENT_COLOR, 3.0
        elif (u, v) in covered:
            color, width = COVERED_COLOR, 2.0
        size = 1.1
        if widths and (u, v) in widths:  # the head's size grows with the width: kept about even
            width = widths[(u, v)]
            size = max(0.5, 1.8 / width)
        arrow = dict(
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            text="",
            showarrow=True,
            arrowhead=2,
            arrowsize=size,
            arrowwidth=width,
            arrowcolor=color,
        )
        path = paths[(u, v)]
        if len(path) > 2:  # curved around a box: the line as a trace, the head on its last piece
            fig.add_trace(
                go.Scatter(
                    x=path[:, 0],
                    y=path[:, 1],
                    mode="lines",
                    hoverinfo="skip",
                    showlegend=False,
                    line=dict(color=color, width=width),
                )
            )
            ann.append(dict(arrow, x=path[-1, 0], y=path[-1, 1], ax=path[-2, 0], ay=path[-2, 1], standoff=0))
            continue
        ann.append(
            dict(
                arrow,
                x=x1,
                y=y1,
                ax=x0,
                ay=y0,
                standoff=_box_standoff(lines[v], dx, dy),
                startstandoff=_box_standoff(lines[u], dx, dy),
            )
        )
    hl_nodes = {w for a in highlight for w in a}
    numeric = set(numeric)
    for v in nodes:
        x, y = pos[v]
        num = v in numeric
        ann.append(
            dict(
                x=x,
                y=y,
                xref="x",
                yref="y",
                text=labels[v],
                showarrow=False,
                font=dict(size=12, color="#111"),
                align="center",
                bgcolor="#fff4e6" if v in hl_nodes else NUMERIC_FILL if num else "#f0f4fa",
                bordercolor=SEGMENT_COLOR if v in hl_nodes else NUMERIC_BORDER if num else "#5b7db1",
                borderwidth=2.4 if num else 1.2,
                borderpad=3,
            )
        )
    info = node_info or {}
    fig.add_trace(
        go.Scatter(
            x=[pos[v][0] for v in nodes],
            y=[pos[v][1] for v in nodes],
            mode="markers",
            marker=dict(
                size=[44 if v == picked else 28 for v in nodes],
                color=["rgba(221,132,82,0.35)" if v == picked else "rgba(0,0,0,0)" for v in nodes],
            ),
            showlegend=False,
            customdata=nodes if clickable else None,
            hovertext=[_node_hover(v, info.get(v)) for v in nodes],
            hoverinfo="text",
            name="variables",
        )
    )
    if clickable and arcs:
        mids = [_path_middle(paths[a]) for a in sorted(arcs)]
        fig.add_trace(
            go.Scatter(
                x=[m[0] for m in mids],
                y=[m[1] for m in mids],
                mode="markers",
                showlegend=False,
                marker=dict(size=10, color=ARC_COLOR, line=dict(color="white", width=1)),
                customdata=[f"{u}\t{v}" for u, v in sorted(arcs)],
                name="arcs",
                hovertext=[f"{plain(u)} → {plain(v)}: click to remove or reverse" for u, v in sorted(arcs)],
                hoverinfo="text",
            )
        )
    legend = [(ARC_COLOR, "arc")]
    if highlight:
        legend.append((SEGMENT_COLOR, "current segment"))
    if covered:
        legend.append((COVERED_COLOR, "covered arc (reversible within the class)"))
    if undirected:
        legend = [(ARC_COLOR, "compelled arc"), (UNDIRECTED_COLOR, "reversible edge")]
    if arcs or undirected:
        for c, name in legend:
            fig.add_trace(
                go.Scatter(x=[None], y=[None], mode="lines", line=dict(color=c, width=3), name=name)
            )
    if numeric:  # the two kinds of node of a hybrid network
        for fill, line, name in (
            ("#f0f4fa", "#5b7db1", "discrete node (CPT)"),
            (NUMERIC_FILL, NUMERIC_BORDER, "numeric node (Gaussian)"),
        ):
            fig.add_trace(
                go.Scatter(
                    x=[None],
                    y=[None],
                    mode="markers",
                    marker=dict(symbol="square", size=14, color=fill, line=dict(color=line, width=2)),
                    name=name,
                )
            )
    fig.update_layout(
        annotations=ann,
        height=height,
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        title=plain(title) if title else None,
        plot_bgcolor="white",
        font=FONT,
        showlegend=bool(arcs or undirected or numeric),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        dragmode="pan",
    )
    fig.update_xaxes(visible=False, range=[min(xs) - 0.6, max(xs) + 0.6])
    fig.update_yaxes(visible=False, range=[min(ys) - 0.4, max(ys) + 0.4])
    return fig


def _in_box(pt, box, margin: float = 2.0) -> bool:
    return abs(pt[0] - box[0]) <= box[2] + margin and abs(pt[1] - box[1]) <= box[3] + margin


def _path_middle(path: np.ndarray) -> tuple[float, float]:
    """The middle of a drawn arc: its midpoint when straight, the middle sample of a curve."""
    if len(path) == 2:
        return float(path[:, 0].mean()), float(path[:, 1].mean())
    m = path[len(path) // 2]
    return float(m[0]), float(m[1])


def arc_paths(pos: dict, lines: dict, arcs, x_span: float, px_per_y: float) -> dict:
    """node -> node: the path each arc is drawn along, in data units: straight, or curved around the boxes of
    the other nodes (:func:`bnfk_core.network.layout.arc_path`), checked at the narrowest width the figure is
    drawn at (:data:`DAG_MIN_WIDTH`, where boxes are largest in data units).  A curve is cut where it enters
    its two nodes' boxes.

    Parameters
    ----------
    pos : dict
        node -> (x, y).
    lines : dict
        node -> its label's lines.
    arcs : iterable of (u, v)
    x_span : float
        The x range the figure shows.
    px_per_y : float
        Pixels per unit of y.

    Returns
    -------
    dict
        (u, v) -> ndarray of shape (n, 2): two points for a straight arc (the node centres), more for a curve.
    """
    s = np.array([DAG_MIN_WIDTH / x_span, px_per_y])  # pixels per unit of x and of y
    px = {v: np.array(p, float) * s for v, p in pos.items()}
    box = {v: (*px[v], *(np.array(_box_size(lines[v])) / 2)) for v in pos}
    out, taken = {}, []
    # shortest arcs first: a long arc bends around the short ones, never the other way
    for u, v in sorted(arcs, key=lambda a: (float(np.hypot(*(px[a[0]] - px[a[1]]))), a)):
        others = [box[w] for w in pos if w not in (u, v)]
        path = arc_path(px[u], px[v], others, taken=taken)
        taken.append(path)
        if len(path) > 2:
            keep = [pt for pt in path if not (_in_box(pt, box[u]) or _in_box(pt, box[v]))]
            path = np.array(keep) if len(keep) >= 2 else path
        out[(u, v)] = path / s
    return out


def _node_hover(v, info: str | None) -> str:
    """A variable's hover: its name in bold, then the lines of ``info`` (plain text, lines split at
    newlines)."""
    return "<br>".join([f"<b>{plain(v)}</b>"] + plain_all(str(info).split("\n") if info else []))


# ---------------------------------------------------------------------- kernels
def kernel_range(*Ks: np.ndarray, q: float = 0.99) -> float:
    """A symmetric colour limit: the q-quantile of |K| over the given matrices (diagonals dominate
    otherwise).

    Parameters
    ----------
    *Ks : ndarray
    q : float
        The quantile, in [0, 1].

    Returns
    -------
    float
        Positive: the largest |K| when the quantile is 0, and 1.0 for no matrix or all-zero matrices.
    """
    vals = np.concatenate([np.abs(np.asarray(K, float)).ravel() for K in Ks]) if Ks else np.zeros(1)
    z = float(np.quantile(vals, q)) if vals.size else 1.0
    return z if z > 0 else (float(vals.max()) or 1.0)


#: at most this many rows of an N x N heatmap are drawn, evenly spaced along the plotted order: a browser
#: takes seconds to draw 1,000 x 1,000 cells (a 500 x 500 float32 matrix alone is 1.3 MB of figure); every row
#: stays in the analysis and the downloads
DRAW_ROWS = 400
#: the same for three N x N panels side by side (about 380 px wide each on a 1280 px screen)
PANEL_ROWS = 300


def evenly_drawn(order, limit: int = DRAW_ROWS) -> np.ndarray:
    """``order`` itself, or ``limit`` of its entries evenly spaced along it (first and last kept).

    Parameters
    ----------
    order : sequence of int
        Row positions in plotted order.
    limit : int

    Returns
    -------
    ndarray
        At most ``limit`` entries of ``order``, in its order.
    """
    order = np.asarray(order)
    if len(order) <= limit:
        return order
    return order[np.linspace(0, len(order) - 1, limit).round().astype(int)]


def gram_figure(
    K: np.ndarray,
    order: np.ndarray,
    row_ids: np.ndarray,
    labels: np.ndarray | None = None,
    class_states: Sequence[str] = (),
    *,
    title: str = "",
    zmax: float | None = None,
    colorbar_title: str = "K",
    height: int = 520,
    colors: dict | None = None,
) -> go.Figure:
    """A Gram matrix heatmap (rows in ``order``), diverging colours centred at 0, class strips on top/left
    (class colours, or ``colors``: state -> colour, shared with a figure beside it).

    Parameters
    ----------
    K : ndarray, shape (N, N)
    order : ndarray of int
    row_ids : ndarray of int
    labels : ndarray of int, optional
    class_states : sequence of str
    title : str
    zmax : float, optional
        Colour limit (default :func:`kernel_range`).
    colorbar_title : str
    height : int
    colors : dict, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    Ko = np.asarray(K, float)[np.ix_(order, order)].astype(np.float32)
    # category labels must not look numeric: plotly reads "#12" as the number 12
    ids = [f"row {int(r)}" for r in np.asarray(row_ids)[order]]
    zmax = zmax or kernel_range(Ko)
    heat = dict(
        type="heatmap",
        z=Ko,
        x=ids,
        y=ids,
        colorscale=KERNEL_SCALE,
        zmid=0,
        zmin=-zmax,
        zmax=zmax,
        colorbar=dict(title=dict(text=colorbar_title), thickness=12, len=0.8),
        hovertemplate="%{y} × %{x}<br>K = %{z:.4g}<extra></extra>",
    )
    with_strip = labels is not None and len(class_states) > 0 and bool((np.asarray(labels) >= 0).any())
    hidden = dict(showticklabels=False, showgrid=False, zeroline=False, type="category")
    colorbar_title = plain(colorbar_title)
    heat["colorbar"]["title"]["text"] = colorbar_title
    layout = dict(
        title=dict(text=plain(title)) if title else None,
        height=height,
        font=FONT,
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50 if title else 10, b=10),
    )
    if not with_strip:
        data = [heat]
        layout.update(xaxis=dict(**hidden), yaxis=dict(autorange="reversed", **hidden))
    else:
        lab, states, other = bounded_classes(np.asarray(labels)[order], class_states)
        cols = (
            [colors[s] for s in states]
            if colors and not other
            else list(class_colors(states, other).values())
        )
        z = np.where(lab < 0, len(cols), lab)
        scale = _discrete_scale(cols + [MISSING_COLOR])
        names = np.array(plain_all(states) + ["(missing)"], dtype=object)[z]
        strip = dict(type="heatmap", colorscale=scale, zmin=-0.5, zmax=len(cols) + 0.5, showscale=False)
        # main heatmap on (x, y); the class strips share its axes: top strip on (x, y2), left strip on (x2, y)
        data = [
            dict(heat, xaxis="x", yaxis="y"),
            dict(
                strip,
                z=[z.tolist()],
                x=ids,
                y=["class"],
                customdata=[names.tolist()],
                xaxis="x",
                yaxis="y2",
                hovertemplate="%{x}: %{customdata}<extra></extra>",
            ),
            dict(
                strip,
                z=z[:, None].tolist(),
                x=["class"],
                y=ids,
                customdata=names[:, None].tolist(),
                xaxis="x2",
                yaxis="y",
                hovertemplate="%{y}: %{customdata}<extra></extra>",
            ),
        ]
        layout.update(
            xaxis=dict(domain=[0.04, 1.0], **hidden),
            yaxis=dict(domain=[0.0, 0.96], autorange="reversed", **hidden),
            xaxis2=dict(domain=[0.0, 0.032], **hidden),
            yaxis2=dict(domain=[0.968, 1.0], **hidden),
        )
    fig = go.Figure(data=data, layout=layout)
    return fig


def _binned_shares(values, edges: np.ndarray) -> np.ndarray:
    """Share of ``values`` (all of them, inside the bins or not) in each bin ``[edges[k], edges[k+1])`` (the
    last bin also holds its right edge, as ``np.histogram`` counts)."""
    v = np.asarray(values, float)
    counts = np.histogram(v, bins=edges)[0]
    return counts / max(v.size, 1)


def histogram_figure(pairs: dict, class_states: Sequence[str] = (), *, title: str = "") -> go.Figure:
    """Distribution of kernel values of distinct pairs: within each class (class colours) and between classes.

    Each group is normalised to a share of its own pairs (groups differ a lot in size); the x axis
    shows the central 99% of all values, with 60 shared bins.  The bins are counted here and drawn as
    bars, so the figure carries 60 numbers a group, not every pair's value (500 rows: 124,750 pairs).

    Parameters
    ----------
    pairs : dict
        From :func:`~bnfk_core.kernels.embed.pair_values`.
    class_states : sequence of str
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    allv = np.asarray(pairs["all"], float)
    lo, hi = np.quantile(allv, [0.005, 0.995]) if allv.size else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    pad = 0.02 * (hi - lo)
    edges = np.linspace(lo - pad, hi + pad, 61)
    mids, width = (edges[:-1] + edges[1:]) / 2, float(edges[1] - edges[0])
    lows, highs = plain_all([f"{e:.4g}" for e in edges[:-1]]), plain_all([f"{e:.4g}" for e in edges[1:]])

    def bars(values, name: str, color: str, opacity: float | None = None) -> go.Bar:
        return go.Bar(
            x=mids,
            y=_binned_shares(values, edges),
            width=width,
            name=name,
            marker_color=color,
            opacity=opacity,
            customdata=np.stack([lows, highs], axis=1),
            hovertemplate="K in [%{customdata[0]}, %{customdata[1]}): "
            "%{y:.1%}<extra>%{fullData.name}</extra>",
        )

    if "within" in pairs and len(class_states):
        within = {int(c): v for c, v in pairs["within"].items() if len(v)}
        codes = np.fromiter(within, dtype=np.int64, count=len(within))
        sizes = np.array([len(within[c]) for c in codes], dtype=np.int64)
        lab, states, other = bounded_classes(np.repeat(codes, sizes), class_states)  # weighted by pairs
        colors = class_colors(states, other)
        groups: dict = {}
        for code, g in zip(codes, lab[np.cumsum(sizes) - 1] if len(codes) else []):
            groups.setdefault(int(g), []).append(within[int(code)])
        for g in sorted(groups):
            s = states[g]
            fig.add_trace(bars(np.concatenate(groups[g]), f"within {plain(s)}", colors[s], 0.6))
        if len(pairs["between"]):
            fig.add_trace(bars(pairs["between"], "between classes", "#7f7f7f", 0.5))
    else:
        fig.add_trace(bars(allv, "all pairs", UNDIRECTED_COLOR))
    fig.add_vline(x=0, line=dict(color="#444", width=1, dash="dot"))
    fig.update_layout(
        barmode="overlay",
        bargap=0,
        title=plain(title) if title else None,
        height=460,
        font=FONT,
        margin=dict(l=10, r=10, t=50 if title else 10, b=10),
        xaxis=dict(
            title="K(x, y) of distinct pairs (central 99 %)", range=[float(edges[0]), float(edges[-1])]
        ),
        yaxis=dict(title="share of the group's pairs", tickformat=".0%"),
        legend=LEGEND_BELOW,
    )
    return fig


def contributions_figure(
    variables: Sequence[str],
    k: np.ndarray,
    x_vals: Sequence[str],
    y_vals: Sequence[str],
    *,
    title: str = "",
    subtitle: str = "",
) -> go.Figure:
    """Per-variable terms K_i(x, y) as horizontal bars, one line per variable (so no name touches another or a
    bar), coloured by sign; the name's line says whether both rows agree (``=``) or not (``≠``), and hover
    shows both rows' values; ``subtitle`` is a smaller second title line (a long title is cut in a narrow
    column).

    Parameters
    ----------
    variables : sequence of str
    k : ndarray, shape (n_vars,)
    x_vals, y_vals : sequence of str
    title, subtitle : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    k = np.asarray(k, float)
    lim = float(np.abs(k).max()) or 1.0
    names = [f"{plain(v)}  {'=' if a == b else '≠'}" for v, a, b in zip(variables, x_vals, y_vals)]
    fig = go.Figure(
        go.Bar(
            y=names,
            x=k,
            orientation="h",
            marker=dict(
                color=k,
                colorscale=KERNEL_SCALE,
                cmid=0,
                cmin=-lim,
                cmax=lim,
                line=dict(color="#333", width=0.5),
            ),
            customdata=np.stack([plain_all(variables), plain_all(x_vals), plain_all(y_vals)], axis=1),
            hovertemplate="%{customdata[0]}<br>row A: %{customdata[1]}<br>row B: %{customdata[2]}"
            "<br>K_i = %{x:.4g}<extra></extra>",
        )
    )
    fig.add_vline(x=0, line=dict(color="#444", width=1))
    heading = plain(title) + (f"<br><sup>{plain(subtitle)}</sup>" if subtitle else "")
    fig.update_layout(
        title=heading or None,
        height=max(320, 20 * len(names) + 110),
        font=FONT,
        bargap=0.25,
        margin=dict(l=10, r=10, t=70 if title else 10, b=10),
        xaxis_title="K_i(A, B)",
        yaxis=dict(type="category", autorange="reversed", automargin=True, tickfont=dict(size=12)),
    )
    return fig


def embedding_figure(
    Y: np.ndarray,
    row_ids: np.ndarray,
    labels: np.ndarray,
    class_states: Sequence[str],
    selected: Sequence[int] = (),
    *,
    title: str = "",
    colors: dict | None = None,
) -> go.Figure:
    """Kernel-PCA map of the rows (one trace per class, class colours or ``colors``: state -> colour, shared
    with a figure beside it); picked rows ringed.

    Parameters
    ----------
    Y : ndarray, shape (N, 2)
    row_ids : ndarray of int
    labels : ndarray of int
    class_states : sequence of str
    selected : sequence of int
    title : str
    colors : dict, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    labels, states, other = bounded_classes(labels, class_states)
    colors = (
        ((colors if colors and not other else None) or class_colors(states, other)) if len(states) else {}
    )
    groups = [(c, plain(states[c]), colors[states[c]]) for c in range(len(states))] if colors else []
    groups.append(
        (-1, "(no class)" if not colors else "(missing)", MISSING_COLOR if colors else UNDIRECTED_COLOR)
    )
    for code, name, color in groups:
        idx = np.flatnonzero(labels == code)
        if not len(idx):
            continue
        fig.add_trace(
            go.Scatter(
                x=Y[idx, 0],
                y=Y[idx, 1],
                mode="markers",
                name=name,
                marker=dict(color=color, size=7, opacity=0.8, line=dict(color="white", width=0.5)),
                customdata=np.asarray(row_ids)[idx],
                hovertemplate="row #%{customdata}<extra>" + name + "</extra>",
            )
        )
    sel = [i for i in selected if i is not None]
    if sel:
        pos = {int(r): j for j, r in enumerate(row_ids)}
        js = [pos[int(r)] for r in sel if int(r) in pos]
        fig.add_trace(
            go.Scatter(
                x=Y[js, 0],
                y=Y[js, 1],
                mode="markers+text",
                name="picked",
                text=["A", "B"][: len(js)],
                textposition="top center",
                marker=dict(size=16, color="rgba(0,0,0,0)", line=dict(color="black", width=2)),
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        title=plain(title) if title else None,
        height=460,
        font=FONT,
        margin=dict(l=10, r=10, t=50 if title else 10, b=10),
        xaxis_title="kernel PC 1",
        yaxis_title="kernel PC 2",
        clickmode="event+select",
        legend=LEGEND_BELOW,
    )
    return fig


def levels_figure(
    states: Sequence[str], counts: Sequence[int], missing: int, *, class_column: bool = False, title: str = ""
) -> go.Figure:
    """Counts of a column's levels (class colours for the class column), missing cells in grey; a column with
    more than MAX_BARS levels shows its MAX_BARS - 1 most frequent ones and one bar for the rest.

    Parameters
    ----------
    states : sequence of str
    counts : sequence of int
    missing : int
    class_column : bool
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
    """
    states, counts = [str(s) for s in states], list(counts)
    other = len(states) > MAX_BARS
    if other:
        c = np.asarray(counts)
        keep = np.sort(np.argsort(-c, kind="stable")[: MAX_BARS - 1])
        rest = int(c.sum() - c[keep].sum())
        states = [states[k] for k in keep] + [f"other levels ({len(c) - len(keep):,})"]
        counts = [int(c[k]) for k in keep] + [rest]
    if class_column:  # the palette's first colours, grey beyond MAX_CLASS_COLORS levels
        colors = list(class_colors(states[:MAX_CLASS_COLORS]).values()) + [OTHER_COLOR] * max(
            len(states) - MAX_CLASS_COLORS, 0
        )
    else:
        colors = [UNDIRECTED_COLOR] * len(states)
    if other:
        colors[-1] = OTHER_COLOR
    if missing:
        states, counts, colors = states + ["(missing)"], counts + [missing], colors + [MISSING_COLOR]
    fig = go.Figure(
        go.Bar(
            x=plain_all(states), y=counts, marker_color=colors, hovertemplate="%{x}: %{y} rows<extra></extra>"
        )
    )
    fig.update_layout(
        title=plain(title) if title else None,
        height=300,
        font=FONT,
        margin=dict(l=10, r=10, t=50 if title else 10, b=10),
        yaxis_title="rows",
        xaxis_type="category",
    )
    return fig
