"""Node boxes of a DAG figure do not overlap at the narrowest width it is drawn at (the Structure page at 1280
pixels):
house votes' learned tree has a wide layer of long names, which is staggered."""

import itertools

import pytest
from conftest import _sample

from bnfk_core.data.table import load_csv
from bnfk_core.learning.recipe import learn_recipe
from bnfk_core.views.figures.base import DAG_MIN_WIDTH, _box_size, _wrap, dag_figure


def _boxes(fig, nodes, width_px):
    """Pixel rectangles of the node boxes: positions from the figure, sizes from the drawn lines."""
    ann = {a.text: (a.x, a.y) for a in fig.layout.annotations if not a.showarrow}
    pos = {v: ann["<br>".join(_wrap(v))] for v in nodes}
    xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
    sx, sy = width_px / (xr[1] - xr[0]), (fig.layout.height - 20) / (yr[1] - yr[0])
    out = {}
    for v, (x, y) in pos.items():
        w, h = _box_size(_wrap(v))
        out[v] = (x * sx - w / 2, y * sy - h / 2, x * sx + w / 2, y * sy + h / 2)
    return out


@pytest.mark.parametrize("name", ["house_votes_84", "zoo"])
def test_learned_networks_boxes_do_not_overlap(name):
    data = load_csv(_sample(name), class_column="class", missing_policy="category")
    dag = learn_recipe(data).dag
    fig = dag_figure(dag.nodes, dag.sorted_arcs())
    boxes = _boxes(fig, dag.nodes, DAG_MIN_WIDTH)
    hits = [
        (a, b)
        for a, b in itertools.combinations(boxes, 2)
        if boxes[a][0] < boxes[b][2]
        and boxes[b][0] < boxes[a][2]
        and boxes[a][1] < boxes[b][3]
        and boxes[b][1] < boxes[a][3]
    ]
    assert not hits, hits


def test_without_staggering_house_votes_boxes_overlap(monkeypatch):
    """The check above can fail: the same layout with the stagger switched off has overlapping boxes."""
    from bnfk_core.views.figures import base

    monkeypatch.setattr(base, "STAGGER", 0.0)
    data = load_csv(_sample("house_votes_84"), class_column="class", missing_policy="category")
    dag = learn_recipe(data).dag
    boxes = _boxes(dag_figure(dag.nodes, dag.sorted_arcs()), dag.nodes, DAG_MIN_WIDTH)
    assert any(
        boxes[a][0] < boxes[b][2]
        and boxes[b][0] < boxes[a][2]
        and boxes[a][1] < boxes[b][3]
        and boxes[b][1] < boxes[a][3]
        for a, b in itertools.combinations(boxes, 2)
    )
