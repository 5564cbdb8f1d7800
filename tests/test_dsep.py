"""d-separation checked against networkx on random DAGs and queries, and on the textbook segments."""

import networkx as nx
import numpy as np
import pytest

from bnfk_core.errors import StructureError
from bnfk_core.network.dag import DAG
from bnfk_core.network.dsep import d_separated, trail_is_active

_nx_separated = getattr(nx, "is_d_separator", None) or nx.d_separated


def _random_dag(n, rng, p):
    nodes = [f"n{i}" for i in range(n)]
    order = rng.permutation(n)
    arcs = [(nodes[order[a]], nodes[order[b]]) for a in range(n) for b in range(a + 1, n) if rng.random() < p]
    return DAG(nodes, arcs)


def _active(graph, trail, given):
    """The textbook rule, on networkx's graph: a collider is open when it or one of its descendants is
    given, any other inner node when it is not given."""
    for a, b, c in zip(trail, trail[1:], trail[2:]):
        if graph.has_edge(a, b) and graph.has_edge(c, b):
            if b not in given and not nx.descendants(graph, b) & set(given):
                return False
        elif b in given:
            return False
    return True


def _check_trails(dag, xs, ys, given, trails):
    graph = dag.to_networkx()
    skeleton = graph.to_undirected()
    for t in trails:
        assert t[0] in xs and t[-1] in ys and len(set(t)) == len(t)
        assert all(skeleton.has_edge(a, b) for a, b in zip(t, t[1:]))
        assert not set(t[1:-1]) & (set(xs) | set(ys))
        assert _active(graph, t, given) and trail_is_active(dag, t, given)


@pytest.mark.parametrize("seed", range(12))
def test_agrees_with_networkx_on_random_queries(seed):
    rng = np.random.default_rng(seed)
    dag = _random_dag(int(rng.integers(4, 11)), rng, float(rng.choice([0.2, 0.35, 0.5])))
    graph = dag.to_networkx()
    for _ in range(40):
        perm = [dag.nodes[i] for i in rng.permutation(len(dag.nodes))]
        nx_, ny_, nz_ = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(0, 4))
        xs, ys, zs = perm[:nx_], perm[nx_ : nx_ + ny_], perm[nx_ + ny_ : nx_ + ny_ + nz_]
        separated, trails = d_separated(dag, xs, ys, zs)
        assert separated == _nx_separated(graph, set(xs), set(ys), set(zs)), (xs, ys, zs)
        assert (trails == []) == separated
        _check_trails(dag, xs, ys, zs, trails)


CHAIN = DAG(["u", "v", "w"], [("u", "v"), ("v", "w")])
FORK = DAG(["u", "v", "w"], [("v", "u"), ("v", "w")])
V = DAG(["u", "v", "w", "d"], [("u", "v"), ("w", "v"), ("v", "d")])


def test_textbook_segments():
    assert d_separated(CHAIN, "u", "w", ["v"]) == (True, [])
    assert d_separated(CHAIN, "u", "w") == (False, [["u", "v", "w"]])
    assert d_separated(FORK, "u", "w", ["v"])[0] and not d_separated(FORK, "u", "w")[0]
    assert d_separated(V, "u", "w") == (True, [])
    assert d_separated(V, "u", "w", ["v"]) == (False, [["u", "v", "w"]])
    # a descendant of the collider activates it too
    assert d_separated(V, "u", "w", ["d"]) == (False, [["u", "v", "w"]])


def test_trail_is_active_follows_the_textbook_rule():
    rng = np.random.default_rng(99)
    for _ in range(20):
        dag = _random_dag(7, rng, 0.4)
        graph = dag.to_networkx()
        skeleton = graph.to_undirected()
        given = [dag.nodes[i] for i in rng.permutation(7)[: int(rng.integers(0, 4))]]
        for path in list(nx.all_simple_paths(skeleton, dag.nodes[0], dag.nodes[1]))[:30]:
            assert trail_is_active(dag, path, given) == _active(graph, path, given)


def test_several_trails_are_returned():
    dag = DAG(["x", "a", "b", "y"], [("x", "a"), ("a", "y"), ("x", "b"), ("b", "y")])
    separated, trails = d_separated(dag, "x", "y")
    assert not separated and sorted(trails) == [["x", "a", "y"], ["x", "b", "y"]]
    assert d_separated(dag, "x", "y", ["a"])[1] == [["x", "b", "y"]]
    assert len(d_separated(dag, "x", "y", max_trails=1)[1]) == 1


@pytest.mark.parametrize(
    "xs, ys, given, culprit",
    [("q", "w", (), "'q'"), ("u", "u", (), "'u'"), ("u", "w", ["u"], "'u'"), ([], "w", (), "each side")],
)
def test_bad_queries_are_one_sentence_naming_the_node(xs, ys, given, culprit):
    with pytest.raises(StructureError, match=culprit):
        d_separated(CHAIN, xs, ys, given)
