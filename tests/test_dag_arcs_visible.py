"""Every arc of a DAG figure is visible: no drawn arc runs through the box of a node other than its own two,
and no two drawn arcs coincide (checked on the figure's own paths, in pixels at the narrowest width it is
drawn at, by dense sampling and point-in-rectangle tests)."""

import itertools

import numpy as np
import pytest
from conftest import _sample

from bnfk_core.data.table import load_csv
from bnfk_core.learning.recipe import learn_recipe
from bnfk_core.network.dag import DAG, segment_arcs
from bnfk_core.network.layout import arc_path, path_hits_box
from bnfk_core.views.figures.base import DAG_MIN_WIDTH, _box_size, _wrap, dag_figure


def _scale(fig):
    xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
    x_span = xr[1] - xr[0]
    # the figure's own y scale: the plot area is its height less 60 px over its y range
    return np.array([DAG_MIN_WIDTH / x_span, (fig.layout.height - 60) / (yr[1] - yr[0])])


def _drawn(fig, nodes):
    """(node boxes, drawn paths) in pixels: straight arrows from their annotations, curves from their line
    traces (the arrow head on a curve's last piece belongs to the curve)."""
    s = _scale(fig)
    ann = {a.text: (a.x, a.y) for a in fig.layout.annotations if not a.showarrow}
    centre = {v: np.array(ann["<br>".join(_wrap(v))], float) * s for v in nodes}
    boxes = {v: (*centre[v], *(np.array(_box_size(_wrap(v))) / 2)) for v in nodes}
    curves = [
        np.column_stack([t.x, t.y]).astype(float) * s
        for t in fig.data
        if t.mode == "lines" and t.x is not None and t.x[0] is not None and len(t.x) > 2
    ]
    ends = [tuple(np.round(c[-1], 6)) for c in curves]
    straight = []
    for a in fig.layout.annotations:
        if not a.showarrow:
            continue
        head = np.array([a.x, a.y], float) * s
        if tuple(np.round(head, 6)) in ends:
            continue
        straight.append(np.vstack([np.array([a.ax, a.ay], float) * s, head]))
    return boxes, straight + curves


def _dense(path, n=400):
    seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
    t = np.concatenate([[0], np.cumsum(seg)])
    at = np.linspace(0, t[-1], n)
    return np.column_stack([np.interp(at, t, path[:, 0]), np.interp(at, t, path[:, 1])])


def _inside(pts, box):
    cx, cy, hw, hh = box
    return (np.abs(pts[:, 0] - cx) < hw) & (np.abs(pts[:, 1] - cy) < hh)


def _check(nodes, arcs):
    fig = dag_figure(nodes, arcs)
    boxes, paths = _drawn(fig, nodes)
    assert len(paths) == len(arcs)  # every arc counted is drawn
    dense = [_dense(p) for p in paths]
    for d in dense:
        # the path's own nodes: the two whose centres are nearest its ends
        own = {min(boxes, key=lambda v: np.hypot(*(np.array(boxes[v][:2]) - d[k]))) for k in (0, -1)}
        for v, b in boxes.items():
            if v not in own:
                assert not _inside(d, b).any(), f"an arc runs through {v}'s box"
    for a, b in itertools.combinations(dense, 2):
        gap = np.min(np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2), axis=1)
        assert np.mean(gap) > 3.0, "two arcs coincide"
    return fig, paths


@pytest.mark.parametrize("m", [3, 4, 5])
def test_fully_connected_every_arc_visible(m):
    nodes = [f"X{i}" for i in range(m)]
    fig, paths = _check(nodes, segment_arcs("full", nodes))
    assert sum(len(p) > 2 for p in paths) >= 1  # the long arcs are curved


def test_chain_stays_straight():
    _, paths = _check(["a", "b", "c"], [("a", "b"), ("b", "c")])
    assert all(len(p) == 2 for p in paths)


def test_learned_network_every_arc_visible():
    data = load_csv(_sample("zoo"), class_column="class", missing_policy="category")
    dag = learn_recipe(data).dag
    extra = DAG(dag.nodes, dag.sorted_arcs())
    _check(extra.nodes, extra.sorted_arcs())


def test_the_check_can_fail():
    """A straight arc through a middle box is caught by the same geometry the test uses."""
    p, q, box = np.array([0.0, 0.0]), np.array([0.0, 200.0]), (0.0, 100.0, 10.0, 10.0)
    assert _inside(_dense(np.vstack([p, q])), box).any() and path_hits_box(np.vstack([p, q]), box)
    curve = arc_path(p, q, [box])
    assert len(curve) > 2 and not _inside(_dense(curve), box).any()


def test_every_box_at_once_answers_as_each_box_alone():
    """path_hits_boxes (every segment against every box in one array pass) gives path_hits_box's answer for
    random polylines -- segments parallel to an axis included -- and random boxes, with and without a
    margin."""
    from bnfk_core.network.layout import path_hits_boxes

    rng = np.random.default_rng(0)
    hits = 0
    for trial in range(400):
        pts = rng.uniform(0, 100, size=(int(rng.integers(2, 6)), 2))
        if trial % 3 == 0:  # a horizontal or vertical segment
            pts[1, trial % 2] = pts[0, trial % 2]
        boxes = np.column_stack([rng.uniform(0, 100, (5, 2)), rng.uniform(1, 15, (5, 2))])
        for margin in (0.0, 4.0):
            want = any(path_hits_box(pts, b, margin) for b in boxes)
            assert path_hits_boxes(pts, boxes, margin) == want
            hits += want
            for b in boxes[:2]:
                assert path_hits_boxes(pts, b[None], margin) == path_hits_box(pts, b, margin)
    assert 100 < hits < 700  # both answers are exercised


def test_the_gap_to_drawn_paths_in_one_pass_equals_the_loop():
    """arc_path's distance to the paths already drawn (straight ones and 25-point curves), stacked: the same
    float as the smallest of the per-path distances."""
    from bnfk_core.network.layout import _distance, _gap, _samples

    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 1.0, 25)[:, None]
    for _ in range(50):
        taken = [rng.uniform(0, 100, (2, 2)) for _ in range(3)]
        p, c, q = rng.uniform(0, 100, (3, 2))
        taken.append((1 - t) ** 2 * p + 2 * (1 - t) * t * c + t**2 * q)
        curve = (1 - t) ** 2 * q + 2 * (1 - t) * t * p + t**2 * c
        assert _gap(curve, _samples(taken, 25)) == min(_distance(curve, o) for o in taken)
    assert _samples([np.zeros((7, 2))], 25) is None and _gap(curve, _samples([], 25)) == np.inf
