"""Score landscapes: every DAG on k ≤ 5 variables, scored, ranked and grouped into equivalence classes.

A DAG on k nodes is stored as its *parent masks*: ``pm[g, v]`` is the bitmask (over variable indices)
of the parents of node v in graph g.  The enumeration is vectorised:

1. every node pair {i < j} is absent, i -> j or j -> i: the 3^C(k,2) candidates (59,049 for k = 5) are
   the base-3 numbers ``code = Σ_p state_p 3^p`` (pairs p in ``itertools.combinations`` order), so
   the list is sorted by code and a DAG is found again by ``np.searchsorted``;
2. acyclicity by peeling sources: k times, every remaining node whose parents have all been removed is
   removed; a graph is acyclic iff nothing remains (Kahn's algorithm, all graphs at once).

Scores come from a *family table* ``T[v, mask]`` (each of the k 2^(k-1) families scored once by the
score's cached local scorer, :func:`bnfk_core.learning.scores.scorer_for`); a DAG's score is
``T[arange(k), pm].sum(axis=1)``, one gather.

Markov equivalence (Verma & Pearl 1990): same skeleton and same v-structures.  The canonical key packs
the C(k,2) skeleton bits and one bit per (collider w, pair {u, v}) for u -> w <- v with u, v not
adjacent (k C(k,2) bits): at most 60 bits for k = 5, one int64; classes are ``np.unique`` of the keys
(1, 2, 11, 185, 8,782 classes for k = 1..5).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import StructureError
from ..registry import SCORES
from .hill_climb import hill_climb
from .members import MAX_LANDSCAPE_VARIABLES
from .scores import scorer_for
from .structure import scorer_context

__all__ = [
    "MAX_LANDSCAPE_VARIABLES",
    "DAG_COUNTS",
    "Landscape",
    "pairs",
    "enumerate_dags",
    "family_table",
    "dag_scores",
    "equivalence_keys",
    "landscape_scorer",
    "score_landscape",
    "climb_path",
    "place_dag",
    "expected_dag_count",
]

#: labelled DAGs on k = 0..5 nodes (OEIS A003024)
DAG_COUNTS = (1, 1, 3, 25, 543, 29281)


def pairs(k: int) -> list[tuple[int, int]]:
    """The node pairs (i < j) in the order of the pair states and of the fixed-order arc bits."""
    return list(itertools.combinations(range(k), 2))


def enumerate_dags(k: int) -> tuple[np.ndarray, np.ndarray]:
    """All DAGs on ``k`` labelled nodes: ``(parent_masks (n, k) int64, codes (n,) int64)``, sorted by code.

    ``code`` is Σ_p s_p 3^p over the pairs p = (i, j) of :func:`pairs`, s_p = 0 (no arc), 1 (i -> j),
    2 (j -> i)."""
    k = int(k)
    if not 1 <= k <= MAX_LANDSCAPE_VARIABLES:
        raise StructureError(f"A landscape has 1 to {MAX_LANDSCAPE_VARIABLES} variables, got {k}.")
    prs = pairs(k)
    codes = np.arange(3 ** len(prs), dtype=np.int64)
    pm = np.zeros((codes.size, k), dtype=np.int64)
    rest = codes.copy()
    for i, j in prs:
        s = rest % 3
        rest //= 3
        pm[:, j] |= (s == 1).astype(np.int64) << i
        pm[:, i] |= (s == 2).astype(np.int64) << j
    remaining = np.full(codes.size, (1 << k) - 1, dtype=np.int64)
    for _ in range(k):
        sources = np.zeros(codes.size, dtype=np.int64)
        for v in range(k):
            free = ((remaining >> v) & 1 == 1) & (pm[:, v] & remaining == 0)
            sources |= free.astype(np.int64) << v
        remaining &= ~sources
    ok = remaining == 0
    return pm[ok], codes[ok]


def landscape_scorer(data, variables: Sequence[str], score: str, ess: float = 1.0):
    """The cached local scorer (:func:`bnfk_core.learning.scores.scorer_for`) of ``score`` over ``variables``
    of ``data`` (their complete rows; the data's weights and, for scores that use them, its unbinned
    numbers)."""
    cols = [list(data.variables).index(v) for v in variables]
    codes = np.asarray(data.codes)[:, cols]
    cards = [int(np.asarray(data.cardinalities)[c]) for c in cols]
    raw = getattr(data, "numbers", None) or {}
    numbers = {j: raw[v] for j, v in enumerate(variables) if v in raw}
    return scorer_for(codes, cards, score, ess=ess, weights=getattr(data, "weights", None), numbers=numbers)


def family_table(scorer, nodes: Sequence[int] | None = None) -> np.ndarray:
    """``T[v, mask]``: the local score of node v with the parents in ``mask`` (bits over positions in
    ``nodes``, default all the scorer's columns); masks containing v are NaN.  k 2^(k-1) families."""
    nodes = list(range(scorer.n_vars)) if nodes is None else [int(x) for x in nodes]
    k = len(nodes)
    table = np.full((k, 1 << k), np.nan)
    for v in range(k):
        for mask in range(1 << k):
            if not mask >> v & 1:
                table[v, mask] = scorer(nodes[v], [nodes[b] for b in range(k) if mask >> b & 1])
    return table


def dag_scores(parent_masks: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Total score of every DAG: Σ_v T[v, pm[:, v]] (one gather, no loop over graphs)."""
    k = parent_masks.shape[1]
    return table[np.arange(k), parent_masks].sum(axis=1)


def equivalence_keys(parent_masks: np.ndarray) -> np.ndarray:
    """Canonical Markov-equivalence key of every DAG (skeleton bits, then v-structure bits; module docstring).

    Parameters
    ----------
    parent_masks : numpy.ndarray
        (n, k) parent bit masks of every DAG.

    Returns
    -------
    numpy.ndarray
        (n,) int keys, equal exactly for Markov-equivalent DAGs.

    References
    ----------
    Verma & Pearl (1990): equivalent iff same skeleton and same v-structures.
    """
    n, k = parent_masks.shape
    prs = pairs(k)
    key = np.zeros(n, dtype=np.int64)
    adjacent = {}
    for p, (i, j) in enumerate(prs):
        a = ((parent_masks[:, j] >> i) & 1) | ((parent_masks[:, i] >> j) & 1)
        adjacent[(i, j)] = a
        key |= a << p
    bit = len(prs)
    for w in range(k):
        pw = parent_masks[:, w]
        for i, j in prs:
            if w not in (i, j):
                vs = ((pw >> i) & 1) & ((pw >> j) & 1) & (1 - adjacent[(i, j)])
                key |= vs << bit
            bit += 1
    return key


@dataclass
class Landscape:
    """Every DAG over ``variables`` with its scores and equivalence class.

    Attributes
    ----------
    variables : the chosen variables (node order everywhere).
    parent_masks, codes : from :func:`enumerate_dags` (rows = graphs, sorted by code).
    scores : score name -> total score of every graph (every registered score).
    tables : score name -> family table (:func:`family_table`).
    score : the score the landscape is ranked by.
    class_id : equivalence class of every graph (0 .. n_classes - 1, classes numbered by their best graph's
    rank). n_rows_used : complete rows (over the chosen variables) the scores use.
    """

    variables: tuple
    parent_masks: np.ndarray
    codes: np.ndarray
    scores: dict
    tables: dict
    score: str
    class_id: np.ndarray
    n_rows_used: int
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def k(self) -> int:
        return len(self.variables)

    @property
    def n_dags(self) -> int:
        return int(self.codes.size)

    @property
    def n_classes(self) -> int:
        return int(self.class_id.max()) + 1 if self.class_id.size else 0

    @property
    def values(self) -> np.ndarray:
        """The ranking score of every graph."""
        return self.scores[self.score]

    def ranking(self) -> np.ndarray:
        """Graph indices from the best score down (ties by code)."""
        return np.lexsort((self.codes, -np.round(self.values, 9)))

    def ranks(self) -> np.ndarray:
        """Rank of every graph (1 = best)."""
        r = np.empty(self.n_dags, dtype=np.int64)
        r[self.ranking()] = np.arange(1, self.n_dags + 1)
        return r

    def n_arcs(self) -> np.ndarray:
        return np.bitwise_count(self.parent_masks).sum(axis=1).astype(np.int64)

    def arcs(self, g: int) -> list[tuple[str, str]]:
        """The arcs (u, v) of graph ``g``, by (tail, head) index."""
        pm = self.parent_masks[int(g)]
        return [
            (self.variables[u], self.variables[v])
            for u in range(self.k)
            for v in range(self.k)
            if pm[v] >> u & 1
        ]

    def index_of(self, parent_indices: Sequence[Sequence[int]]) -> int:
        """Index of the DAG with the given parents of every node (positions in ``variables``)."""
        code = 0
        for p, (i, j) in enumerate(pairs(self.k)):
            s = 1 if i in parent_indices[j] else 2 if j in parent_indices[i] else 0
            code += s * 3**p
        g = int(np.searchsorted(self.codes, code))
        if g >= self.n_dags or self.codes[g] != code:
            raise StructureError("That graph is not a DAG over the landscape's variables.")
        return g

    def fixed_order(self) -> tuple[np.ndarray, np.ndarray]:
        """The 2^C(k,2) graphs that respect the variables' order: ``(graph indices, bits (n, d) uint8)``,
        row ``b`` the graph whose arc bits (pairs of :func:`pairs`, bit p = arc i -> j) spell the integer
        b."""
        prs = pairs(self.k)
        d = len(prs)
        b = np.arange(1 << d, dtype=np.int64)
        bits = ((b[:, None] >> np.arange(d)) & 1).astype(np.uint8)
        code = (bits.astype(np.int64) * 3 ** np.arange(d, dtype=np.int64)).sum(axis=1)
        return np.searchsorted(self.codes, code), bits

    def skeleton_bits(self) -> np.ndarray:
        """All graphs as C(k,2) pair bits (n, d) uint8: bit p = the pair p of :func:`pairs` is adjacent (for a
        graph that respects the order these are its fixed-order arc bits)."""
        cols = [
            ((self.parent_masks[:, j] >> i) & 1) | ((self.parent_masks[:, i] >> j) & 1)
            for i, j in pairs(self.k)
        ]
        return np.stack(cols, axis=1).astype(np.uint8) if cols else np.zeros((self.n_dags, 0), np.uint8)

    def arc_bits(self) -> np.ndarray:
        """All graphs as k(k-1) directed-arc bits (n, k(k-1)) uint8: bit u(k-1) + v - [v > u] = arc u -> v."""
        k = self.k
        cols = [((self.parent_masks[:, v] >> u) & 1) for u in range(k) for v in range(k) if u != v]
        return np.stack(cols, axis=1).astype(np.uint8) if cols else np.zeros((self.n_dags, 0), np.uint8)


def score_landscape(data, variables: Sequence[str], score: str = "bdeu", *, ess: float = 1.0) -> Landscape:
    """Every DAG over ``variables`` of ``data`` scored by every registered score (ranked by ``score``).

    The scores use the rows complete over the chosen variables (``data.weights`` honoured); each score's
    scorer comes from :func:`landscape_scorer` (count scores and, e.g., KGV alike)."""
    t0 = time.perf_counter()
    variables = [str(v) for v in variables]
    if len(set(variables)) != len(variables):
        raise StructureError("Each landscape variable may be chosen once.")
    unknown = [v for v in variables if v not in data.variables]
    if unknown:
        raise StructureError(
            f"Unknown variable '{unknown[0][:80]}'; the data have {', '.join(data.variables)[:80]}."
        )
    if not 1 <= len(variables) <= MAX_LANDSCAPE_VARIABLES:
        raise StructureError(
            f"Choose 1 to {MAX_LANDSCAPE_VARIABLES} variables for a landscape, got {len(variables)}."
        )
    score = str(score).lower()
    if score not in SCORES:
        raise StructureError(f"Unknown score '{score}'; choose one of {', '.join(SCORES)}.")
    pm, dag_codes = enumerate_dags(len(variables))
    scores, tables = {}, {}
    n_used = 0
    for s in SCORES:
        scorer = landscape_scorer(data, variables, s, ess)
        n_used = scorer.n
        with scorer_context(scorer):
            tables[s] = family_table(scorer)
        scores[s] = dag_scores(pm, tables[s])
    if n_used == 0:
        raise StructureError("No row is complete over the chosen variables; a landscape needs complete rows.")
    _, inverse = np.unique(equivalence_keys(pm), return_inverse=True)
    inverse = inverse.ravel()
    land = Landscape(tuple(variables), pm, dag_codes, scores, tables, score, inverse, n_used)
    # number the classes by the rank of their best graph
    first = np.full(inverse.max() + 1, land.n_dags, dtype=np.int64)
    np.minimum.at(first, inverse, land.ranks())
    renumber = np.empty_like(first)
    renumber[np.argsort(first, kind="stable")] = np.arange(first.size)
    land.class_id = renumber[inverse]
    land.seconds = time.perf_counter() - t0
    return land


def climb_path(
    land: Landscape, data, *, seed: int = 0, ess: float = 1.0, max_parents: int | None = None
) -> dict:
    """Hill climbing (:func:`bnfk_core.learning.hill_climb.hill_climb`, bnfk engine, from the empty graph, one
    climb with ``seed``) on the landscape's variables and score, placed among the enumerated graphs.

    Returns ``{"moves": [(op, u, v)], "graphs": [index of every graph visited, start and end included]}``.
    """
    scorer = landscape_scorer(data, land.variables, land.score, ess)
    moves: list = []
    with scorer_context(scorer):
        hill_climb(scorer, list(land.variables), seed=seed, max_parents=max_parents, path=moves)
    parents = [set() for _ in range(land.k)]
    graphs = [land.index_of(parents)]
    for op, x, y in moves:
        if op == "+":
            parents[y].add(x)
        elif op == "-":
            parents[y].discard(x)
        else:
            parents[y].discard(x)
            parents[x].add(y)
        graphs.append(land.index_of(parents))
    named = [(op, land.variables[x], land.variables[y]) for op, x, y in moves]
    return {"moves": named, "graphs": graphs}


def place_dag(land: Landscape, dag) -> int:
    """Index of ``dag`` restricted to the landscape's variables (its arcs among them; a
    :class:`~bnfk_core.network.dag.DAG` over at least those variables)."""
    missing = [v for v in land.variables if v not in dag.nodes]
    if missing:
        raise StructureError(f"The structure has no variable '{missing[0][:80]}' of the landscape.")
    sub = dag.subgraph(list(land.variables))
    return land.index_of(sub.parent_indices())


def expected_dag_count(k: int) -> int:
    """Robinson's recurrence a(k) = Σ_{i=1..k} (-1)^(i+1) C(k,i) 2^(i(k-i)) a(k-i), a(0) = 1.

    Parameters
    ----------
    k : int

    Returns
    -------
    int
        The number of labelled DAGs on k nodes (1, 1, 3, 25, 543, 29281, ...).

    References
    ----------
    Robinson (1973), "Counting labeled acyclic digraphs".
    """
    a = [1]
    for m in range(1, int(k) + 1):
        a.append(
            sum((-1) ** (i + 1) * math.comb(m, i) * 2 ** (i * (m - i)) * a[m - i] for i in range(1, m + 1))
        )
    return a[int(k)]
