"""d-separation in a DAG: is X independent of Y given Z in every distribution the graph factorises, and, when
it is not, the active trails that connect them.

The answer comes from the reachability ("Bayes-ball") algorithm: the ancestors of Z first, then a search over
(node, direction of arrival) from X that passes a node arrived at from a child unless it is in Z, and one
arrived at from a parent on to its children unless it is in Z and back to its parents when it is an ancestor
of Z (a collider with evidence at or below it).  The active trails shown are simple paths of the skeleton
found by a depth-first search that extends a trail only while every inner node is active on it, within a
budget of steps (the answer itself never depends on the budget).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

from ..errors import StructureError
from .dag import DAG, segment_arcs

__all__ = ["d_separated", "trail_is_active", "segment_independencies", "MAX_TRAILS", "TRAIL_STEPS"]

#: active trails returned at most
MAX_TRAILS = 5
#: steps of the depth-first search for trails
TRAIL_STEPS = 100_000


def _names(dag: DAG, nodes, what: str) -> list[str]:
    nodes = [nodes] if isinstance(nodes, str) else [str(v) for v in nodes]
    for v in nodes:
        if v not in dag.nodes:
            raise StructureError(f"The {what} names '{v}', which is no node of the graph.")
    return nodes


def _ancestors_of(dag: DAG, nodes: set) -> set:
    out, stack = set(nodes), list(nodes)
    while stack:
        for p in dag.parents(stack.pop()):
            if p not in out:
                out.add(p)
                stack.append(p)
    return out


def trail_is_active(dag: DAG, trail: list, given: Iterable[str]) -> bool:
    """Whether a trail (a path of the skeleton, as node names) is active given ``given``: every collider on it
    is in ``given`` or has a descendant there, and no other inner node is in ``given``.

    Parameters
    ----------
    dag : DAG
    trail : list of str
    given : iterable of str

    Returns
    -------
    bool
    """
    given = set(given)
    anc = _ancestors_of(dag, given)
    for a, b, c in zip(trail, trail[1:], trail[2:]):
        collider = dag.has_arc(a, b) and dag.has_arc(c, b)
        if (collider and b not in anc) or (not collider and b in given):
            return False
    return True


def _trails(dag: DAG, xs: list, ys: set, given: set, anc: set, limit: int) -> list[list[str]]:
    """Up to ``limit`` active simple trails from a node of ``xs`` to one of ``ys`` (inner nodes in none)."""
    ends = set(xs) | ys
    out: list = []
    steps = 0
    for x in xs:
        stack = [(x, [x])]
        while stack and len(out) < limit and steps < TRAIL_STEPS:
            node, trail = stack.pop()
            steps += 1
            neighbours = sorted(set(dag.parents(node)) | set(dag.children(node)), reverse=True)
            for nxt in neighbours:
                if nxt in trail:
                    continue
                if len(trail) >= 2:  # is ``node`` active between its neighbours on the trail?
                    a = trail[-2]
                    collider = dag.has_arc(a, node) and dag.has_arc(nxt, node)
                    if (collider and node not in anc) or (not collider and node in given):
                        continue
                if nxt in ys:
                    out.append(trail + [nxt])
                    if len(out) >= limit:
                        break
                elif nxt not in ends:
                    stack.append((nxt, trail + [nxt]))
    return out


def d_separated(dag: DAG, xs, ys, given=(), max_trails: int = MAX_TRAILS) -> tuple[bool, list[list[str]]]:
    """Whether ``xs`` and ``ys`` are d-separated by ``given`` in ``dag``, with a few active trails when not.

    Parameters
    ----------
    dag : DAG
    xs, ys : str or iterable of str
        The two node sets (a single name is a set of one).
    given : str or iterable of str
        The conditioning set Z.
    max_trails : int
        Active trails returned at most.

    Returns
    -------
    separated : bool
    active_trails : list of list of str
        Empty when separated; else up to ``max_trails`` simple trails, each from a node of ``xs`` to one of
        ``ys`` with no other node of either set on it, active given ``given`` (at least one unless the
        search's budget :data:`TRAIL_STEPS` runs out first).

    Raises
    ------
    StructureError
        An unknown node, an empty X or Y, or sets that overlap.

    References
    ----------
    Koller & Friedman (2009), Algorithm 3.1 (reachable nodes); Shachter (1998), "Bayes-ball".
    """
    x = _names(dag, xs, "first set")
    y = _names(dag, ys, "second set")
    z = _names(dag, given, "conditioning set")
    if not x or not y:
        raise StructureError("d-separation needs at least one node on each side.")
    for a, b, what in (
        (x, y, "both sides"),
        (x, z, "a side and the conditioning set"),
        (y, z, "a side and the conditioning set"),
    ):
        common = sorted(set(a) & set(b))
        if common:
            raise StructureError(f"Node '{common[0]}' is in {what}; the sets must be disjoint.")
    zs = set(z)
    anc = _ancestors_of(dag, zs)
    seen, reached = set(), set()
    todo = [(v, "up") for v in x]  # "up": arrived from a child (or the start), "down": from a parent
    while todo:
        node, way = todo.pop()
        if (node, way) in seen:
            continue
        seen.add((node, way))
        if node not in zs:
            reached.add(node)
        if way == "up" and node not in zs:
            todo += [(p, "up") for p in dag.parents(node)]
            todo += [(c, "down") for c in dag.children(node)]
        elif way == "down":
            if node not in zs:
                todo += [(c, "down") for c in dag.children(node)]
            if node in anc:
                todo += [(p, "up") for p in dag.parents(node)]
    if not reached & set(y):
        return True, []
    return False, _trails(dag, x, set(y), zs, anc, max(1, int(max_trails)))


def segment_independencies(kind: str, variables: Sequence[str]) -> list[tuple[str, str, tuple, bool]]:
    """What a segment preset says about independence: for every pair of its variables and every set of the
    others as evidence, whether the segment alone d-separates them.

    Parameters
    ----------
    kind : str
        One of ``SEGMENT_KINDS``.
    variables : sequence of str
        In the role order of :func:`bnfk_core.network.dag.segment_arcs`.

    Returns
    -------
    list of (x, y, given, separated)
        ``given`` a tuple of the segment's other variables (empty first); the pairs in the order of
        ``variables``.  A chain ``u → v → w`` gives (u, w, (), False) and (u, w, (v,), True); a V-structure
        ``u → v ← w`` the reverse (explaining away); a single arc or a full segment none.

    Raises
    ------
    StructureError
        For an unknown kind or a wrong number of variables.

    References
    ----------
    Thesis §6.1 (the segments); Koller & Friedman (2009), §3.3.1 (the three two-arc trails).
    """
    variables = [str(v) for v in variables]
    dag = DAG(variables, segment_arcs(kind, variables))
    out = []
    for x, y in combinations(variables, 2):
        rest = [v for v in variables if v not in (x, y)]
        for k in range(len(rest) + 1):
            for given in combinations(rest, k):
                out.append((x, y, tuple(given), d_separated(dag, x, y, given, max_trails=1)[0]))
    return out
