"""Directed acyclic graphs over named variables: edits, segment presets, Markov equivalence.

A :class:`DAG` is immutable: every edit returns a new DAG, which makes undo, caching
(``hash``) and comparison trivial.  The parents of a node are always listed in the
order of ``nodes`` -- the CPT layout of :mod:`bnfk_core.network.model` relies on that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import StructureError
from .members import SEGMENT_KINDS

if TYPE_CHECKING:  # networkx is imported where a graph is made (0.15 CPU s a process that makes none)
    import networkx as nx

__all__ = [
    "DAG",
    "CPDAG",
    "SEGMENT_KINDS",
    "SEGMENT_SIZES",
    "SEGMENT_LABELS",
    "SEGMENT_PATTERNS",
    "empty_dag",
    "naive_bayes",
    "SEGMENT_READING",
    "segment_arcs",
    "segment_roles",
    "segment_pattern",
    "apply_segment",
    "skeleton",
    "v_structures",
    "cpdag",
    "covered_arcs",
    "equivalent",
    "structural_hamming_distance",
]


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
        """Arcs ordered by (index of tail, index of head).

        Returns
        -------
        list of (str, str)
        """
        return sorted(self._arcs, key=lambda a: (self._index[a[0]], self._index[a[1]]))

    @property
    def n_arcs(self) -> int:
        return len(self._arcs)

    def index(self, node: str) -> int:
        """The position of ``node`` in :attr:`nodes`.

        Parameters
        ----------
        node : str

        Returns
        -------
        int

        Raises
        ------
        StructureError
            When ``node`` is not a node of the DAG.
        """
        try:
            return self._index[node]
        except KeyError:
            raise StructureError(f"Unknown variable '{node}'.") from None

    def parents(self, node: str) -> tuple[str, ...]:
        """Parents of ``node`` in node order.

        Parameters
        ----------
        node : str

        Returns
        -------
        tuple of str
            In the order of :attr:`nodes` (the order of the parent axes of the node's CPT).

        Raises
        ------
        StructureError
            When ``node`` is not a node of the DAG.
        """
        return tuple(self._nodes[j] for j in self._parents[self.index(node)])

    def parent_indices(self) -> tuple[tuple[int, ...], ...]:
        """For every node (in node order) the sorted indices of its parents.

        Returns
        -------
        tuple of tuple of int
        """
        return self._parents

    def children(self, node: str) -> tuple[str, ...]:
        """Children of ``node`` in node order.

        Parameters
        ----------
        node : str

        Returns
        -------
        tuple of str

        Raises
        ------
        StructureError
            When ``node`` is not a node of the DAG.
        """
        i = self.index(node)
        return tuple(v for k, v in enumerate(self._nodes) if i in self._parents[k])

    def has_arc(self, u: str, v: str) -> bool:
        """Whether the arc u -> v is in the DAG (v -> u does not count).

        Parameters
        ----------
        u, v : str

        Returns
        -------
        bool
        """
        return (u, v) in self._arcs

    def topological_order(self) -> list[int]:
        """Node indices such that every parent precedes its children (Kahn's algorithm, ties by node
        order).

        Returns
        -------
        list of int
            Shorter than :attr:`nodes` only if the arcs form a cycle (which the constructor refuses).
        """
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
        """The given node indices and all their ancestors.

        Parameters
        ----------
        indices : iterable of int
            Positions in :attr:`nodes`.

        Returns
        -------
        set of int
            ``indices`` included.
        """
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
        import networkx as nx

        g = nx.DiGraph(list(self._arcs))
        return [u for u, _ in nx.find_cycle(g)]

    # ------------------------------------------------------------------ edits
    def add_arc(self, u: str, v: str) -> DAG:
        """A new DAG with u -> v added.

        Parameters
        ----------
        u, v : str
            Nodes of the DAG.

        Returns
        -------
        DAG

        Raises
        ------
        StructureError
            For an unknown node, an arc already there (either way round) or an arc that closes a directed
            cycle.
        """
        self.index(u), self.index(v)
        if (u, v) in self._arcs:
            raise StructureError(f"Arc {u} -> {v} is already in the DAG.")
        if (v, u) in self._arcs:
            raise StructureError(
                f"Arc {v} -> {u} is already in the DAG; reverse it instead of adding {u} -> {v}."
            )
        return DAG(self._nodes, self._arcs | {(u, v)})

    def remove_arc(self, u: str, v: str) -> DAG:
        """A new DAG without u -> v.

        Parameters
        ----------
        u, v : str

        Returns
        -------
        DAG

        Raises
        ------
        StructureError
            When u -> v is not an arc of the DAG.
        """
        if (u, v) not in self._arcs:
            raise StructureError(f"Arc {u} -> {v} is not in the DAG.")
        return DAG(self._nodes, self._arcs - {(u, v)})

    def reverse_arc(self, u: str, v: str) -> DAG:
        """A new DAG with u -> v turned into v -> u.

        Parameters
        ----------
        u, v : str

        Returns
        -------
        DAG

        Raises
        ------
        StructureError
            When u -> v is not an arc of the DAG, or its reversal closes a directed cycle.
        """
        if (u, v) not in self._arcs:
            raise StructureError(f"Arc {u} -> {v} is not in the DAG.")
        return DAG(self._nodes, (self._arcs - {(u, v)}) | {(v, u)})

    def with_arcs(self, arcs: Iterable[tuple[str, str]]) -> DAG:
        """Same nodes, arcs replaced.

        Parameters
        ----------
        arcs : iterable of (str, str)

        Returns
        -------
        DAG

        Raises
        ------
        StructureError
            As the constructor (unknown nodes, self-loops, a cycle).
        """
        return DAG(self._nodes, arcs)

    def subgraph(self, nodes: Sequence[str]) -> DAG:
        """The induced sub-DAG on ``nodes`` (in the given order).

        Parameters
        ----------
        nodes : sequence of str
            Nodes of this DAG; the arcs between them are kept.

        Returns
        -------
        DAG
        """
        keep = set(nodes)
        return DAG(nodes, [(u, v) for u, v in self._arcs if u in keep and v in keep])

    def over(self, variables: Sequence[str], source: str = "the structure") -> DAG:
        """This DAG over exactly ``variables`` (in that order), for a structure read from a file.

        Parameters
        ----------
        variables : sequence of str
        source : str
            Named in the error message.

        Returns
        -------
        DAG

        Raises
        ------
        StructureError
            Naming ``source`` and up to five variables it lacks or has beyond ``variables``.
        """
        missing = [x for x in variables if x not in self._nodes]
        extra = [x for x in self._nodes if x not in set(variables)]
        if missing or extra:
            parts = ([f"it lacks {', '.join(missing[:5])}"] if missing else []) + (
                [f"it has unknown variable(s) {', '.join(extra[:5])}"] if extra else []
            )
            raise StructureError(f"{source} does not match the data: {'; '.join(parts)}.")
        return self.subgraph(variables)

    # ------------------------------------------------------------------ conversions
    def to_networkx(self) -> nx.DiGraph:
        """The DAG as a networkx graph (nodes in node order, arcs in :meth:`sorted_arcs` order).

        Returns
        -------
        networkx.DiGraph
        """
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(self._nodes)
        g.add_edges_from(self.sorted_arcs())
        return g

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph, nodes: Sequence[str] | None = None) -> DAG:
        """The DAG of a networkx graph.

        Parameters
        ----------
        graph : networkx.DiGraph
        nodes : sequence of str, optional
            The node order (default: the graph's).

        Returns
        -------
        DAG

        Raises
        ------
        StructureError
            As the constructor (a cycle, an arc naming a node not in ``nodes``).
        """
        return cls(list(nodes) if nodes is not None else list(graph.nodes), list(graph.edges))

    def to_dict(self) -> dict:
        """The DAG as plain JSON data, read back by :meth:`from_dict`.

        Returns
        -------
        dict
            ``{"nodes": [...], "arcs": [[u, v], ...]}``, arcs in :meth:`sorted_arcs` order.
        """
        return {"nodes": list(self._nodes), "arcs": [list(a) for a in self.sorted_arcs()]}

    @classmethod
    def from_dict(cls, d: dict) -> DAG:
        """The DAG of :meth:`to_dict`'s data.

        Parameters
        ----------
        d : dict
            ``"nodes"`` (a list of names) and optionally ``"arcs"`` (a list of [u, v]).

        Returns
        -------
        DAG
        """
        return cls(d["nodes"], [tuple(a) for a in d.get("arcs", [])])

    # ------------------------------------------------------------------ dunder
    def __eq__(self, other) -> bool:
        return isinstance(other, DAG) and self._nodes == other._nodes and self._arcs == other._arcs

    def __hash__(self) -> int:
        return hash((self._nodes, self._arcs))

    def __repr__(self) -> str:
        arcs = ", ".join(f"{u}->{v}" for u, v in self.sorted_arcs())
        return f"DAG({len(self._nodes)} nodes: [{arcs}])"

    def _repr_svg_(self) -> str:
        """The graph as SVG, for a notebook (:func:`bnfk_core.network.svg.dag_svg`)."""
        from .svg import dag_svg

        return dag_svg(self)


# ====================================================================== presets
#: Variables a segment takes (``full``: two or more, so it has no entry).
SEGMENT_SIZES = {"single-arc": 2, "v": 3, "a": 3, "chain": 3}
#: Display names of the segments (thesis ch. 6).
SEGMENT_LABELS = {
    "single-arc": "Single arc",
    "v": "V-structure",
    "a": "A-structure (common parent)",
    "chain": "Chain",
    "full": "Fully connected",
}
#: The arcs each segment adds, in the role order of :func:`segment_arcs`.
SEGMENT_PATTERNS = {
    "single-arc": "u → v",
    "v": "u → w ← v",
    "a": "v ← u → w",
    "chain": "w → u → v",
    "full": "x₁ → x₂ → …, every earlier variable a parent of every later one",
}
#: The roles in the order the pattern reads from left to right: variables picked in this order fill the
#: pattern as it is written (picking A, B, C for the chain ``w → u → v`` gives A → B → C).
SEGMENT_READING = {
    "single-arc": ("u", "v"),
    "v": ("u", "w", "v"),
    "a": ("v", "u", "w"),
    "chain": ("w", "u", "v"),
}
_ROLE_ORDER = {"single-arc": ("u", "v"), "v": ("u", "v", "w"), "a": ("u", "v", "w"), "chain": ("u", "v", "w")}


def empty_dag(nodes: Sequence[str]) -> DAG:
    """The DAG over ``nodes`` without arcs (every variable independent).

    Parameters
    ----------
    nodes : sequence of str

    Returns
    -------
    DAG
        Its Fisher kernel with the marginal frequencies is the scaled-Hamming kernel (thesis eq. 3.2).
    """
    return DAG(nodes)


def naive_bayes(nodes: Sequence[str], class_node: str) -> DAG:
    """The naive Bayes DAG: ``class_node`` -> every other node, nothing else.

    Parameters
    ----------
    nodes : sequence of str
    class_node : str

    Returns
    -------
    DAG

    Raises
    ------
    StructureError
        If ``class_node`` is not one of ``nodes``.

    References
    ----------
    Friedman, Geiger & Goldszmidt (1997), "Bayesian network classifiers"; the latent class model
    (:mod:`bnfk_core.lca`, Auvray & Wehenkel 2008) is this DAG with the class hidden.
    """
    nodes = [str(v) for v in nodes]
    if class_node not in nodes:
        raise StructureError(f"Class variable '{class_node}' is not one of the DAG's variables.")
    return DAG(nodes, [(class_node, v) for v in nodes if v != class_node])


def segment_arcs(kind: str, variables: Sequence[str]) -> list[tuple[str, str]]:
    """The arcs of a segment preset.

    ``single-arc`` (u, v): u -> v;  ``v`` (u, v, w): u -> w <- v;  ``a`` (u, v, w): u -> v, u -> w;
    ``chain`` (u, v, w): w -> u -> v;  ``full`` (x1, ..., xm): the complete DAG xa -> xb for a < b.

    Parameters
    ----------
    kind : str
    variables : sequence of str

    Returns
    -------
    list of (u, v)

    Raises
    ------
    StructureError
        For an unknown kind, a wrong number of variables or a repeated variable.
    """
    variables = [str(v) for v in variables]
    if kind not in SEGMENT_KINDS:
        raise StructureError(f"Unknown segment kind '{kind}'; choose one of {', '.join(SEGMENT_KINDS)}.")
    if len(set(variables)) != len(variables):
        raise StructureError(f"The '{kind}' segment needs distinct variables, got {', '.join(variables)}.")
    need = SEGMENT_SIZES.get(kind)
    if need is not None and len(variables) != need:
        raise StructureError(f"The '{kind}' segment needs exactly {need} variables, got {len(variables)}.")
    if kind == "full" and len(variables) < 2:
        raise StructureError(f"The 'full' segment needs at least 2 variables, got {len(variables)}.")
    if kind == "single-arc":
        u, v = variables
        return [(u, v)]
    if kind == "v":
        u, v, w = variables
        return [(u, w), (v, w)]
    if kind == "a":
        u, v, w = variables
        return [(u, v), (u, w)]
    if kind == "chain":
        u, v, w = variables
        return [(w, u), (u, v)]
    return [(variables[a], variables[b]) for a in range(len(variables)) for b in range(a + 1, len(variables))]


def segment_roles(kind: str, picked: Sequence[str]) -> list[str]:
    """The variables ``picked`` in the reading order of the segment's pattern, put in its role order.

    Picking A, B, C for the chain (pattern ``w → u → v``) makes w = A, u = B, v = C, so that
    ``segment_arcs("chain", segment_roles("chain", [A, B, C]))`` is A → B → C; the V-structure's middle
    pick is its common child, the A-structure's its common parent.  The full segment reads as it is given.

    Parameters
    ----------
    kind : str
    picked : sequence of str

    Returns
    -------
    list of str
        The variables in the role order of :func:`segment_arcs`.

    Raises
    ------
    StructureError
        For an unknown kind or a wrong number of variables.
    """
    picked = [str(v) for v in picked]
    if kind not in SEGMENT_KINDS:
        raise StructureError(f"Unknown segment kind '{kind}'; choose one of {', '.join(SEGMENT_KINDS)}.")
    if kind == "full":
        return picked
    reading = SEGMENT_READING[kind]
    if len(picked) != len(reading):
        raise StructureError(
            f"The '{kind}' segment needs exactly {len(reading)} variables, got {len(picked)}."
        )
    role_of = dict(zip(reading, picked))
    return [role_of[r] for r in _ROLE_ORDER[kind]]


def segment_pattern(kind: str, variables: Sequence[str]) -> str:
    """The segment's pattern written with the variables' names (``"A → B ← C"``), ``variables`` in role order.

    Parameters
    ----------
    kind : str
    variables : sequence of str
        In the role order of :func:`segment_arcs`.

    Returns
    -------
    str
    """
    variables = [str(v) for v in variables]
    if kind == "full":
        return ", ".join(f"{a} → {b}" for a, b in segment_arcs(kind, variables))
    names = dict(zip(_ROLE_ORDER[kind], variables))
    return " ".join(names.get(t, t) for t in SEGMENT_PATTERNS[kind].split())


def apply_segment(dag: DAG, kind: str, variables: Sequence[str], *, replace: bool = True) -> DAG:
    """``dag`` with the segment preset built on ``variables``.

    The segment fixes the local structure among its variables: every arc of ``dag`` between two of them is
    replaced by the segment's arcs (so a V-structure applied after a chain on the same three variables is a
    V-structure, not a triangle); arcs to and from the other variables are kept.  With ``replace=False`` the
    segment's arcs are only added (an opposite arc between two segment variables is still reversed).

    Parameters
    ----------
    dag : DAG
    kind, variables : see :func:`segment_arcs`
    replace : bool
        Drop the arcs among the segment's variables that are not the segment's.

    Returns
    -------
    DAG

    Raises
    ------
    StructureError
        For an unknown kind or node, or when the result would contain a directed cycle.
    """
    arcs = segment_arcs(kind, variables)
    for w in variables:
        if str(w) not in dag._index:
            raise StructureError(f"The '{kind}' segment names '{w}', which is not a variable of the DAG.")
    inside = {str(w) for w in variables}
    new = {(u, v) for u, v in dag.arcs if not (replace and u in inside and v in inside)}
    for u, v in arcs:
        new.discard((v, u))
        new.add((u, v))
    try:
        return DAG(dag.nodes, new)
    except StructureError as exc:
        raise StructureError(
            f"Applying the '{kind}' segment on {', '.join(map(str, variables))} would create a cycle. {exc}"
        ) from None


# ====================================================================== equivalence
class CPDAG:
    """A completed partially directed acyclic graph (essential graph).

    Attributes
    ----------
    nodes : tuple of str
    directed : frozenset of (u, v)
        Compelled arcs.
    undirected : frozenset of frozenset({u, v})
        Reversible edges.
    """

    __slots__ = ("nodes", "directed", "undirected")

    def __init__(self, nodes, directed, undirected):
        self.nodes = tuple(nodes)
        self.directed = frozenset(directed)
        self.undirected = frozenset(frozenset(e) for e in undirected)

    def edge_status(self, u: str, v: str) -> str:
        """How the pair (u, v) is joined in the CPDAG.

        Parameters
        ----------
        u, v : str

        Returns
        -------
        str
            ``'->'`` (compelled u -> v), ``'<-'`` (compelled v -> u), ``'--'`` (reversible) or ``''`` (not
            adjacent).
        """
        if (u, v) in self.directed:
            return "->"
        if (v, u) in self.directed:
            return "<-"
        if frozenset((u, v)) in self.undirected:
            return "--"
        return ""

    def to_networkx(self) -> nx.DiGraph:
        """A DiGraph with one arc per compelled edge and both arcs per undirected edge.

        Returns
        -------
        networkx.DiGraph
        """
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(self.nodes)
        g.add_edges_from(self.directed)
        for e in self.undirected:
            u, v = tuple(e)
            g.add_edge(u, v)
            g.add_edge(v, u)
        return g

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, CPDAG)
            and set(self.nodes) == set(other.nodes)
            and self.directed == other.directed
            and self.undirected == other.undirected
        )

    def __hash__(self) -> int:
        return hash((frozenset(self.nodes), self.directed, self.undirected))

    def __repr__(self) -> str:
        d = ", ".join(f"{u}->{v}" for u, v in sorted(self.directed))
        u = ", ".join("--".join(sorted(e)) for e in sorted(self.undirected, key=sorted))
        return f"CPDAG(directed=[{d}], undirected=[{u}])"


def skeleton(dag: DAG) -> nx.Graph:
    """The undirected graph of ``dag`` (same nodes, arcs without direction).

    Parameters
    ----------
    dag : DAG

    Returns
    -------
    networkx.Graph
    """
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(dag.nodes)
    g.add_edges_from(dag.sorted_arcs())
    return g


def v_structures(dag: DAG) -> set[tuple[str, str, str]]:
    """Immoralities u -> w <- v with u, v not adjacent, as (u, w, v) with u before v in node order.

    Parameters
    ----------
    dag : DAG

    Returns
    -------
    set of (str, str, str)

    References
    ----------
    Verma & Pearl (1990): with the skeleton, the v-structures determine the Markov equivalence class.
    """
    out = set()
    nodes = dag.nodes
    for w, ps in enumerate(dag.parent_indices()):
        for a in range(len(ps)):
            for b in range(a + 1, len(ps)):
                u, v = nodes[ps[a]], nodes[ps[b]]
                if not dag.has_arc(u, v) and not dag.has_arc(v, u):
                    out.add((u, nodes[w], v))
    return out


def cpdag(dag: DAG) -> CPDAG:
    """The CPDAG (essential graph) of ``dag``'s Markov equivalence class.

    Arcs of v-structures are compelled; the remaining edges are oriented by Meek's rules R1-R3
    (Meek 1995), which are complete when starting from a DAG's skeleton and v-structures.

    Parameters
    ----------
    dag : DAG

    Returns
    -------
    CPDAG
        Its compelled (directed) arcs and reversible (undirected) edges.

    References
    ----------
    Meek (1995), "Causal inference and causal explanation with background knowledge", UAI; the bnfk paper,
    Theorem 4: every DAG of the class gives the same Fisher kernel.
    """
    nodes = dag.nodes
    adj = {v: set() for v in nodes}
    for u, v in dag.arcs:
        adj[u].add(v)
        adj[v].add(u)
    directed = set()
    for u, w, v in v_structures(dag):
        directed.add((u, w))
        directed.add((v, w))
    undirected = {frozenset(a) for a in dag.arcs} - {frozenset(a) for a in directed}

    def is_dir(a, b):
        return (a, b) in directed

    def is_und(a, b):
        return frozenset((a, b)) in undirected

    changed = True
    while changed:
        changed = False
        for e in sorted(undirected, key=lambda e: sorted(e)):
            a, b = sorted(e)
            for x, y in ((a, b), (b, a)):
                orient = False
                # R1: z -> x - y, z and y not adjacent  =>  x -> y
                if any(is_dir(z, x) and y not in adj[z] for z in adj[x] if z != y):
                    orient = True
                # R2: x -> z -> y and x - y  =>  x -> y
                elif any(is_dir(x, z) and is_dir(z, y) for z in adj[x] & adj[y]):
                    orient = True
                # R3: x - z1 -> y, x - z2 -> y, z1, z2 not adjacent  =>  x -> y
                else:
                    zs = [z for z in adj[x] & adj[y] if is_und(x, z) and is_dir(z, y)]
                    orient = any(z2 not in adj[z1] for i, z1 in enumerate(zs) for z2 in zs[i + 1 :])
                if orient:
                    undirected.discard(e)
                    directed.add((x, y))
                    changed = True
                    break
    return CPDAG(nodes, directed, undirected)


def covered_arcs(dag: DAG) -> list[tuple[str, str]]:
    """Arcs u -> v with pa(v) = pa(u) ∪ {u}; reversing one keeps the equivalence class (Chickering 1995).

    Parameters
    ----------
    dag : DAG

    Returns
    -------
    list of (str, str)
        The covered arcs, in the DAG's sorted arc order.

    References
    ----------
    Chickering (1995), "A transformational characterization of equivalent Bayesian network structures";
    with the bnfk paper's Theorem 4, reversing a covered arc leaves the Fisher kernel unchanged.
    """
    out = []
    for u, v in dag.sorted_arcs():
        if set(dag.parents(v)) == set(dag.parents(u)) | {u}:
            out.append((u, v))
    return out


def equivalent(g1: DAG, g2: DAG) -> bool:
    """Markov equivalence: same skeleton and same v-structures (Verma & Pearl 1990).

    Parameters
    ----------
    g1, g2 : DAG

    Returns
    -------
    bool
        False as well when the node sets differ.

    References
    ----------
    Verma & Pearl (1990), "Equivalence and synthesis of causal models"; the bnfk paper, "Invariance of Fisher
    kernel for equivalent network structures" (Theorem 4).
    """
    if set(g1.nodes) != set(g2.nodes):
        return False
    if {frozenset(a) for a in g1.arcs} != {frozenset(a) for a in g2.arcs}:
        return False
    return v_structures(g1) == v_structures(g2)


def structural_hamming_distance(g1, g2) -> int:
    """SHD between two DAGs or CPDAGs over the same nodes.

    Counts node pairs whose edge differs (missing, extra, or different orientation / directedness);
    DAGs are first turned into their CPDAGs, so the distance compares equivalence classes.

    Parameters
    ----------
    g1, g2 : DAG or CPDAG

    Returns
    -------
    int

    References
    ----------
    Tsamardinos, Brown & Aliferis (2006), "The max-min hill-climbing Bayesian network structure learning
    algorithm", Machine Learning 65 (SHD on CPDAGs).
    """
    c1 = g1 if isinstance(g1, CPDAG) else cpdag(g1)
    c2 = g2 if isinstance(g2, CPDAG) else cpdag(g2)
    if set(c1.nodes) != set(c2.nodes):
        raise StructureError("The two graphs have different variables; their distance is undefined.")
    pairs = {frozenset(a) for a in c1.directed | c2.directed} | set(c1.undirected) | set(c2.undirected)
    d = 0
    for e in pairs:
        u, v = sorted(e)
        if c1.edge_status(u, v) != c2.edge_status(u, v):
            d += 1
    return d
