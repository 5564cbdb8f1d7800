"""Segment presets as a lecture uses them: a preset builds the segment it names (replacing the arcs among its
variables), picks fill the pattern in reading order, and the independencies shown come from d-separation,
checked here against networkx's d-separation on the segment's own graph."""

import itertools

import networkx as nx
import pytest

from bnfk_core.errors import StructureError
from bnfk_core.network.dag import (
    DAG,
    SEGMENT_KINDS,
    apply_segment,
    segment_arcs,
    segment_pattern,
    segment_roles,
)
from bnfk_core.network.dsep import segment_independencies

NODES = ["A", "B", "C", "D"]


READ = {
    "chain": {("A", "B"), ("B", "C")},
    "v": {("A", "B"), ("C", "B")},
    "a": {("B", "A"), ("B", "C")},
    "single-arc": {("A", "B")},
    "full": {("A", "B"), ("A", "C"), ("B", "C")},
}


@pytest.mark.parametrize("kind", ["chain", "v", "a", "single-arc"])
def test_reading_order_fills_the_pattern(kind):
    want = READ[kind]
    picked = ["A", "B", "C"][: 2 if kind == "single-arc" else 3]
    roles = segment_roles(kind, picked)
    assert set(segment_arcs(kind, roles)) == want
    # the pattern written with the names reads as the picks were made
    pattern = segment_pattern(kind, roles)
    assert [t for t in pattern.split() if t in picked] == picked


def test_roles_refuse_wrong_sizes():
    with pytest.raises(StructureError, match="exactly 3"):
        segment_roles("v", ["A", "B"])
    with pytest.raises(StructureError, match="Unknown"):
        segment_roles("zz", ["A", "B"])
    assert segment_roles("full", ["C", "A"]) == ["C", "A"]


def test_presets_in_a_row_build_what_they_name():
    """chain, then V, then A on the same three variables, without starting empty: each is exactly its
    segment among them, and the arc to the fourth variable is kept."""
    g = DAG(NODES, [("C", "D"), ("A", "C")])
    for kind in ("chain", "v", "a", "full", "single-arc"):
        picked = ["A", "B", "C"][: 2 if kind == "single-arc" else 3]
        g = apply_segment(g, kind, segment_roles(kind, picked))
        among = {(u, v) for u, v in g.arcs if u in picked and v in picked}
        assert among == READ[kind]
        assert ("C", "D") in g.arcs
        if kind in ("chain", "v", "a"):
            assert len(among) == 2  # never a triangle
    # the old behaviour stays available
    g = apply_segment(
        DAG(NODES, [("A", "C")]), "chain", segment_roles("chain", ["A", "B", "C"]), replace=False
    )
    assert g.arcs == {("A", "C"), ("A", "B"), ("B", "C")}


@pytest.mark.parametrize("kind", SEGMENT_KINDS)
def test_independencies_agree_with_networkx(kind):
    variables = ["u", "v", "w"][: 2 if kind == "single-arc" else 3]
    rows = segment_independencies(kind, variables)
    arcs = segment_arcs(kind, variables)
    pairs = list(itertools.combinations(variables, 2))
    assert {(x, y) for x, y, _, _ in rows} == set(pairs)
    for x, y, given, sep in rows:
        g = nx.DiGraph(arcs)
        g.add_nodes_from(variables)
        test = getattr(nx, "is_d_separator", None) or nx.d_separated
        assert sep == test(g, {x}, {y}, set(given))
    seps = {(x, y, given) for x, y, given, sep in rows if sep}
    if kind in ("single-arc", "full"):
        assert seps == set()


def test_textbook_independencies():
    # the three two-arc trails as every textbook states them, picks in reading order A, B, C
    def seps(kind):
        rows = segment_independencies(kind, segment_roles(kind, ["A", "B", "C"]))
        return {(frozenset((x, y)), given) for x, y, given, s in rows if s}

    assert seps("chain") == {(frozenset("AC"), ("B",))}
    assert seps("a") == {(frozenset("AC"), ("B",))}
    assert seps("v") == {(frozenset("AC"), ())}


def test_default_segment_changes_the_base():
    import pandas as pd

    from bnfk_core.analyses.segments.information import default_segment_variables

    ranking = pd.DataFrame({"variables": [("A", "B"), ("C", "D"), ("A", "C")], "score": [3.0, 2.0, 1.0]})
    base = DAG(NODES, [("A", "B"), ("D", "C")])
    # the top pair's arc is already there; the next one's arc would only be reversed: a change too
    assert default_segment_variables(ranking, NODES, 2, "single-arc", base) == ["C", "D"]
    assert default_segment_variables(ranking, NODES, 2, "single-arc") == ["A", "B"]
    full = DAG(NODES, [("A", "B"), ("C", "D"), ("A", "C")])
    assert default_segment_variables(ranking, NODES, 2, "single-arc", full) == ["A", "B"]  # none changes it
