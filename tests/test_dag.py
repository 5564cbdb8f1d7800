"""DAG edits, segment presets and Markov equivalence (CPDAG, covered arcs)."""

import itertools

import pytest

from bnfk_core.errors import StructureError
from bnfk_core.network.dag import (
    CPDAG,
    DAG,
    apply_segment,
    covered_arcs,
    cpdag,
    empty_dag,
    equivalent,
    naive_bayes,
    segment_arcs,
    skeleton,
    structural_hamming_distance,
    v_structures,
)

NODES = ["a", "b", "c", "d", "e"]


def all_dags(nodes):
    """Every DAG over ``nodes`` (543 for 4 nodes)."""
    pairs = list(itertools.combinations(nodes, 2))
    for states in itertools.product((0, 1, 2), repeat=len(pairs)):
        arcs = [(u, v) if s == 1 else (v, u) for (u, v), s in zip(pairs, states) if s]
        try:
            yield DAG(nodes, arcs)
        except StructureError:
            continue


# ---------------------------------------------------------------- edits
def test_edits_return_new_dags_and_keep_parent_order():
    g = empty_dag(NODES)
    g2 = g.add_arc("c", "a").add_arc("b", "a")
    assert g.n_arcs == 0 and g2.n_arcs == 2
    assert g2.parents("a") == ("b", "c")
    g3 = g2.reverse_arc("c", "a")
    assert g3.has_arc("a", "c") and not g3.has_arc("c", "a")
    assert g3.remove_arc("b", "a").arcs == {("a", "c")}


def test_edit_errors():
    g = DAG(NODES, [("a", "b"), ("b", "c")])
    with pytest.raises(StructureError, match="cycle"):
        g.add_arc("c", "a")
    with pytest.raises(StructureError, match="unknown variable|Unknown variable"):
        g.add_arc("a", "zz")
    with pytest.raises(StructureError, match="already"):
        g.add_arc("a", "b")
    with pytest.raises(StructureError, match="not in the DAG"):
        g.remove_arc("c", "b")
    with pytest.raises(StructureError, match="cycle"):
        DAG(["x", "y"], [("x", "y"), ("y", "x")])


# ---------------------------------------------------------------- presets
def test_empty_and_naive_bayes():
    assert empty_dag(NODES).arcs == frozenset()
    nb = naive_bayes(NODES, "c")
    assert nb.arcs == {("c", v) for v in NODES if v != "c"}
    assert nb.parents("c") == ()
    with pytest.raises(StructureError, match="'zz'"):
        naive_bayes(NODES, "zz")


@pytest.mark.parametrize(
    "kind, variables, arcs",
    [
        ("single-arc", ["a", "b"], {("a", "b")}),
        ("v", ["a", "b", "c"], {("a", "c"), ("b", "c")}),
        ("a", ["a", "b", "c"], {("a", "b"), ("a", "c")}),
        ("chain", ["a", "b", "c"], {("c", "a"), ("a", "b")}),
        ("full", ["d", "a", "b"], {("d", "a"), ("d", "b"), ("a", "b")}),
    ],
)
def test_segment_arcs(kind, variables, arcs):
    assert set(segment_arcs(kind, variables)) == arcs
    g = apply_segment(DAG(NODES, [("d", "e")]), kind, variables)
    assert g.arcs == arcs | {("d", "e")} - {("e", "d")}


def test_segment_errors():
    with pytest.raises(StructureError, match="Unknown segment kind 'x'"):
        segment_arcs("x", ["a", "b"])
    with pytest.raises(StructureError, match="exactly 3"):
        segment_arcs("v", ["a", "b"])
    with pytest.raises(StructureError, match="distinct"):
        segment_arcs("chain", ["a", "a", "b"])
    with pytest.raises(StructureError, match="'zz'"):
        apply_segment(empty_dag(NODES), "v", ["a", "b", "zz"])
    with pytest.raises(StructureError, match="cycle"):
        apply_segment(DAG(NODES, [("b", "d"), ("d", "a")]), "single-arc", ["a", "b"])


def test_segment_replaces_reversed_arc():
    g = apply_segment(DAG(NODES, [("b", "a")]), "single-arc", ["a", "b"])
    assert g.arcs == {("a", "b")}


# ---------------------------------------------------------------- equivalence
def test_skeleton_and_v_structures():
    g = DAG(NODES, [("a", "c"), ("b", "c"), ("c", "d"), ("a", "b")])
    assert set(map(frozenset, skeleton(g).edges)) == {frozenset(p) for p in g.arcs}
    assert v_structures(g) == set()
    g2 = g.remove_arc("a", "b")
    assert v_structures(g2) == {("a", "c", "b")}


def test_cpdag_chain_and_collider():
    chain = DAG(["a", "b", "c"], [("a", "b"), ("b", "c")])
    c = cpdag(chain)
    assert c.directed == frozenset() and len(c.undirected) == 2
    coll = DAG(["a", "b", "c", "d"], [("a", "c"), ("b", "c"), ("c", "d")])
    c = cpdag(coll)
    assert c.directed == {("a", "c"), ("b", "c"), ("c", "d")}  # c -> d compelled by Meek R1
    assert c.undirected == frozenset()


def test_cpdag_matches_brute_force_equivalence_classes():
    """Group all 543 DAGs on 4 nodes by (skeleton, v-structures); an edge of the CPDAG is directed
    iff it has the same orientation in every member of the class."""
    nodes = ["a", "b", "c", "d"]
    classes = {}
    dags = list(all_dags(nodes))
    assert len(dags) == 543
    for g in dags:
        key = (frozenset(frozenset(a) for a in g.arcs), frozenset(v_structures(g)))
        classes.setdefault(key, []).append(g)
    assert len(classes) == 185  # number of Markov equivalence classes on 4 nodes
    for members in classes.values():
        common = frozenset.intersection(*(m.arcs for m in members))
        for m in members:
            c = cpdag(m)
            assert c.directed == common
            assert c.undirected == {frozenset(a) for a in m.arcs} - {frozenset(a) for a in common}
            assert all(equivalent(m, o) for o in members)


def test_cpdag_invariant_under_covered_arc_reversal():
    g = DAG(NODES, [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d"), ("b", "e")])
    base = cpdag(g)
    cov = covered_arcs(g)
    assert ("a", "b") in cov and ("c", "d") not in cov
    for u, v in cov:
        h = g.reverse_arc(u, v)
        assert equivalent(g, h)
        assert cpdag(h) == base
    # a non-covered reversal that creates a v-structure changes the class
    h = g.reverse_arc("c", "d")  # d -> c <- a, b: new v-structures
    assert not equivalent(g, h) and cpdag(h) != base
    # adding a v-structure changes the class
    h = g.add_arc("e", "d")  # c -> d <- e, c and e not adjacent
    assert v_structures(h) - v_structures(g) == {("c", "d", "e")}
    assert cpdag(h) != base


def test_cpdag_covered_reversal_random_walk():
    import random

    rng = random.Random(0)
    for _ in range(20):
        g = DAG(NODES, [(u, v) for u, v in itertools.combinations(NODES, 2) if rng.random() < 0.5])
        base = cpdag(g)
        h = g
        for _ in range(5):
            cov = covered_arcs(h)
            if not cov:
                break
            h = h.reverse_arc(*rng.choice(cov))
            assert cpdag(h) == base


def test_structural_hamming_distance():
    g = DAG(["a", "b", "c"], [("a", "b"), ("b", "c")])
    assert structural_hamming_distance(g, g.reverse_arc("a", "b")) == 0  # same class
    assert structural_hamming_distance(g, g.remove_arc("b", "c")) == 1
    coll = DAG(["a", "b", "c"], [("a", "b"), ("c", "b")])
    assert structural_hamming_distance(g, coll) == 2  # both edges change from -- to ->
    assert isinstance(cpdag(g), CPDAG)
