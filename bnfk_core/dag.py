"""Directed acyclic graphs over named variables: edits, segment presets, Markov equivalence.

A :class:`DAG` is immutable: every edit returns a new DAG, which makes undo, caching
(``hash``) and comparison trivial.  The parents of a node are always listed in the
order of ``nodes`` -- the CPT layout of :mod:`bnfk_core.model` relies on that.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import networkx as nx

from .errors import StructureError

__all__ = ["DAG"]


class DAG:
    """A DAG over an ordered tuple of node names.

    Parameters
    ----------
    nodes : sequence of str
        Variable names; their order fixes the order of parents everywhere.
    arcs : iterable of (u, v)
        Directed arcs u -> v.

    Raises
    ------
    StructureError
        On duplicate or unknown nodes, self-loops or a directed cycle.
    """

    __slots__ = ("_nodes", "_index", "_arcs", "_parents")

    def __init__(self, nodes: Sequence[str], arcs: Iterable[tuple[str, str]] = ()):
        nodes = tuple(str(v) for v in nodes)
        if len(set(nodes)) != len(nodes):
            dup = next(v for v in nodes if nodes.count(v) > 1)
            raise StructureError(f"Node '{dup}' appears twice in the DAG.")
        index = {v: i for i, v in enumerate(nodes)}
        arc_set = set()
        for u, v in arcs:
            u, v = str(u), str(v)
            for w in (u, v):
                if w not in index:
                    raise StructureError(f"Arc {u} -> {v} names unknown variable '{w}'.")
            if u == v:
                raise StructureError(f"Arc {u} -> {v} is a self-loop.")
            arc_set.add((u, v))
        parents = [[] for _ in nodes]
        for u, v in arc_set:
            parents[index[v]].append(index[u])
        self._nodes = nodes
        self._index = index
        self._arcs = frozenset(arc_set)
        self._parents = tuple(tuple(sorted(p)) for p in parents)
        cycle = self._find_cycle()
        if cycle:
            raise StructureError("The arcs form a directed cycle: " + " -> ".join(cycle + [cycle[0]]) + ".")

    # ------------------------------------------------------------------ basics
    @property
    def nodes(self) -> tuple[str, ...]:
        return self._nodes

    @property
    def arcs(self) -> frozenset[tuple[str, str]]:
        return self._arcs

    def sorted_arcs(self) -> list[tuple[str, str]]:
        """Arcs ordered by (index of tail, index of head)."""
        return sorted(self._arcs, key=lambda a: (self._index[a[0]], self._index[a[1]]))

    @property
    def n_arcs(self) -> int:
        return len(self._arcs)

    def index(self, node: str) -> int:
        try:
            return self._index[node]
        except KeyError:
            raise StructureError(f"Unknown variable '{node}'.") from None

    def parents(self, node: str) -> tuple[str, ...]:
        """Parents of ``node`` in node order."""
        return tuple(self._nodes[j] for j in self._parents[self.index(node)])

    def parent_indices(self) -> tuple[tuple[int, ...], ...]:
        """For every node (in node order) the sorted indices of its parents."""
        return self._parents

    def children(self, node: str) -> tuple[str, ...]:
        i = self.index(node)
        return tuple(v for k, v in enumerate(self._nodes) if i in self._parents[k])

    def has_arc(self, u: str, v: str) -> bool:
        return (u, v) in self._arcs

    def topological_order(self) -> list[int]:
        """Node indices such that every parent precedes its children (ties by node order)."""
        indeg = [len(p) for p in self._parents]
        children = [[] for _ in self._nodes]
        for k, ps in enumerate(self._parents):
            for p in ps:
                children[p].append(k)
        ready = [k for k, d in enumerate(indeg) if d == 0]
        order = []
        while ready:
            ready.sort()
            k = ready.pop(0)
            order.append(k)
            for c in children[k]:
                indeg[c] -= 1
                if indeg[c] == 0:
                    ready.append(c)
        return order

    def ancestors(self, indices: Iterable[int]) -> set[int]:
        """The given node indices and all their ancestors."""
        seen, stack = set(), list(indices)
        while stack:
            k = stack.pop()
            if k not in seen:
                seen.add(k)
                stack.extend(self._parents[k])
        return seen

    def _find_cycle(self) -> list[str]:
        if len(self.topological_order()) == len(self._nodes):
            return []
        g = nx.DiGraph(list(self._arcs))
        return [u for u, _ in nx.find_cycle(g)]

    # ------------------------------------------------------------------ edits
    def add_arc(self, u: str, v: str) -> "DAG":
        """A new DAG with u -> v added (error if present, unknown node or cycle)."""
        self.index(u), self.index(v)
        if (u, v) in self._arcs:
            raise StructureError(f"Arc {u} -> {v} is already in the DAG.")
        if (v, u) in self._arcs:
            raise StructureError(f"Arc {v} -> {u} is already in the DAG; reverse it instead of adding {u} -> {v}.")
        return DAG(self._nodes, self._arcs | {(u, v)})

    def remove_arc(self, u: str, v: str) -> "DAG":
        if (u, v) not in self._arcs:
            raise StructureError(f"Arc {u} -> {v} is not in the DAG.")
        return DAG(self._nodes, self._arcs - {(u, v)})

    def reverse_arc(self, u: str, v: str) -> "DAG":
        if (u, v) not in self._arcs:
            raise StructureError(f"Arc {u} -> {v} is not in the DAG.")
        return DAG(self._nodes, (self._arcs - {(u, v)}) | {(v, u)})

    def with_arcs(self, arcs: Iterable[tuple[str, str]]) -> "DAG":
        """Same nodes, arcs replaced."""
        return DAG(self._nodes, arcs)

    def subgraph(self, nodes: Sequence[str]) -> "DAG":
        """The induced sub-DAG on ``nodes`` (in the given order)."""
        keep = set(nodes)
        return DAG(nodes, [(u, v) for u, v in self._arcs if u in keep and v in keep])

    # ------------------------------------------------------------------ conversions
    def to_networkx(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_nodes_from(self._nodes)
        g.add_edges_from(self.sorted_arcs())
        return g

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph, nodes: Sequence[str] | None = None) -> "DAG":
        return cls(list(nodes) if nodes is not None else list(graph.nodes), list(graph.edges))

    def to_dict(self) -> dict:
        return {"nodes": list(self._nodes), "arcs": [list(a) for a in self.sorted_arcs()]}

    @classmethod
    def from_dict(cls, d: dict) -> "DAG":
        return cls(d["nodes"], [tuple(a) for a in d.get("arcs", [])])

    # ------------------------------------------------------------------ dunder
    def __eq__(self, other) -> bool:
        return isinstance(other, DAG) and self._nodes == other._nodes and self._arcs == other._arcs

    def __hash__(self) -> int:
        return hash((self._nodes, self._arcs))

    def __repr__(self) -> str:
        arcs = ", ".join(f"{u}->{v}" for u, v in self.sorted_arcs())
        return f"DAG({len(self._nodes)} nodes: [{arcs}])"
