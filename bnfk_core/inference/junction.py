"""Batched exact inference: one calibrated junction tree run on a whole batch of rows at once.

The tree is built once per model (cached): moral graph -> min-fill triangulation -> maximal cliques ->
maximum-weight spanning tree on separator sizes (Kruskal; running intersection holds for the cliques of a
chordal graph).  Every CPT goes to the smallest clique holding its family; the product of a clique's CPTs
is a constant table T_c.

A batch of B rows is B independent evidence cases with the *same* tree: row b's potential of clique c is

    psi_c[b] = T_c * prod_{v homed in c} lambda_v[b],   lambda_v[b] = e_{x_bv} (observed) or 1 (missing),

so there is no planning per missingness pattern.  A row that observes every variable of a clique has one
non-zero cell there: it skips the full table and looks that cell up (its message is one-hot on the separator),
so the full tables are built only for the rows with a missing variable in the clique.  Shafer-Shenoy messages
(no division, exact with zero probabilities) flow up to the root and back; every message is rescaled per row
to sum one and the logarithms of the scales add up to log P(x_observed).  A calibrated clique belief,
normalised per row, is P(C | x_observed); the posterior of a missing cell, or the joint of a family's missing
members, is one of its margins.

Every operation is elementwise over a leading batch axis or a sum over the other axes, so a row's numbers
carry the same bits in any batch (a file done in blocks equals the whole file).  Memory per batch is
bounded: :func:`batch_rows` picks the rows from :data:`BATCH_BYTES` and the tree's total clique size.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "JunctionTree",
    "TreeShape",
    "tree_shape",
    "junction_tree",
    "batch_rows",
    "BATCH_BYTES",
    "MAX_TREE_CELLS",
]

#: working memory of one batch (clique potentials, beliefs and messages of all its rows)
BATCH_BYTES = 64 * 2**20
#: largest total clique size (cells per row) for which a tree is built; bigger models are inferred per
#: missingness pattern over the Markov blankets only (:mod:`bnfk_core.inference.elimination`)
MAX_TREE_CELLS = 4_000_000


def _elimination_cliques(n: int, nbrs: list[set], cards: np.ndarray) -> list[tuple[int, ...]]:
    """Cliques of a min-fill elimination (ties: smaller clique weight, then lower index)."""
    nbrs = [set(s) for s in nbrs]
    alive = set(range(n))
    cliques = []
    while alive:
        best = None
        for v in alive:
            nb = list(nbrs[v])
            fill = sum(1 for a in range(len(nb)) for b in range(a + 1, len(nb)) if nb[b] not in nbrs[nb[a]])
            weight = math.prod(int(cards[u]) for u in nb) * int(cards[v])
            key = (fill, weight, v)
            if best is None or key < best:
                best = key
        v = best[2]
        nb = list(nbrs[v])
        for a in nb:
            nbrs[a] |= set(nb) - {a}
            nbrs[a].discard(v)
        cliques.append(tuple(sorted(nb + [v])))
        alive.discard(v)
    return cliques


def _maximal(cliques: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    sets = [set(c) for c in cliques]
    keep = []
    for i, c in enumerate(sets):
        if any((c < d) or (c == d and j < i) for j, d in enumerate(sets) if j != i):
            continue
        keep.append(cliques[i])
    return keep


@dataclass(frozen=True)
class _Edge:
    child: int
    parent: int
    up_axes: tuple  # axes of the child's table summed away for the upward message
    down_axes: tuple  # axes of the parent's table summed away for the downward message
    in_child: tuple  # broadcast shape of the separator in the child's table (without batch)
    in_parent: tuple  # ... in the parent's table
    sep: tuple  # the separator's variables (sorted)
    sep_cards: tuple  # ... and their cardinalities


class TreeShape:
    """The cliques, tree, message axes and homes of a junction tree: they depend on the graph and the
    cardinalities only, so models that differ in their CPTs share one (:func:`tree_shape`)."""

    def __init__(self, parents: tuple, cards: tuple):
        n = len(cards)
        nbrs = [set() for _ in range(n)]
        for v in range(n):
            fam = list(parents[v]) + [v]
            for a in fam:
                nbrs[a] |= set(fam) - {a}
        self.n_vars = n
        self.var_cards = list(cards)
        self.cliques = _maximal(_elimination_cliques(n, nbrs, np.asarray(cards)))
        self.cards = [tuple(cards[v] for v in c) for c in self.cliques]
        self.size = [math.prod(s) for s in self.cards]
        self.total_cells = int(sum(self.size))
        if self.total_cells > MAX_TREE_CELLS:
            return
        k = len(self.cliques)
        member = np.zeros((k, n), dtype=np.int64)
        for c, vs in enumerate(self.cliques):
            member[c, list(vs)] = 1
        # maximum-weight spanning tree on separator sizes (Kruskal, deterministic ties)
        inter = member @ member.T
        pairs = sorted((-int(inter[a, b]), a, b) for a in range(k) for b in range(a + 1, k))
        root_of = list(range(k))

        def find(a):
            while root_of[a] != a:
                root_of[a] = root_of[root_of[a]]
                a = root_of[a]
            return a

        adj = [[] for _ in range(k)]
        for _, a, b in pairs:
            ra, rb = find(a), find(b)
            if ra != rb:
                root_of[ra] = rb
                adj[a].append(b)
                adj[b].append(a)
        # root the tree at the largest clique; breadth-first order, parents before children
        root = int(np.argmax(self.size))
        order, parent = [root], {root: -1}
        for c in order:
            for d in sorted(adj[c]):
                if d not in parent:
                    parent[d] = c
                    order.append(d)
        self.root, self.order = root, order
        self.parent = [parent[c] for c in range(k)]
        self.children = [[d for d in order if parent[d] == c] for c in range(k)]
        self.edges = {}
        for c in order[1:]:
            p = parent[c]
            sep = set(self.cliques[c]) & set(self.cliques[p])
            self.edges[c] = _Edge(
                c,
                p,
                tuple(1 + a for a, v in enumerate(self.cliques[c]) if v not in sep),
                tuple(1 + a for a, v in enumerate(self.cliques[p]) if v not in sep),
                tuple(cards[v] if v in sep else 1 for v in self.cliques[c]),
                tuple(cards[v] if v in sep else 1 for v in self.cliques[p]),
                tuple(sorted(sep)),
                tuple(cards[v] for v in sorted(sep)),
            )
        # homes: the smallest clique holding a variable (its evidence) and a family (its CPT)
        sets = [set(c) for c in self.cliques]

        def smallest(vs):
            return min((c for c in range(k) if vs <= sets[c]), key=lambda c: (self.size[c], c))

        self.home = [smallest({v}) for v in range(n)]
        self.family_home = [smallest(set(parents[v]) | {v}) for v in range(n)]
        self.evidence = [[v for v in range(n) if self.home[v] == c] for c in range(k)]


_SHAPES: dict = {}


def tree_shape(model) -> TreeShape:
    """The (cached) :class:`TreeShape` of the model's graph and cardinalities.

    Parameters
    ----------
    model : BayesNet

    Returns
    -------
    TreeShape
    """
    key = (tuple(model.parents), tuple(int(c) for c in model.cardinalities), MAX_TREE_CELLS)
    shape = _SHAPES.get(key)
    if shape is None:
        if len(_SHAPES) >= 64:
            _SHAPES.clear()
        shape = _SHAPES[key] = TreeShape(key[0], key[1])
    return shape


class JunctionTree:
    """A junction tree of a :class:`~bnfk_core.network.model.BayesNet` (build with :func:`junction_tree`): the
    shared
    :class:`TreeShape` and the model's clique tables T_c (``tables`` is None when the tree is too large)."""

    def __init__(self, model):
        shape = tree_shape(model)
        self.shape = shape
        for name in ("n_vars", "var_cards", "cliques", "cards", "size", "total_cells"):
            setattr(self, name, getattr(shape, name))
        self.tables = None
        if self.total_cells > MAX_TREE_CELLS:
            return
        for name in ("root", "order", "parent", "children", "edges", "home", "family_home", "evidence"):
            setattr(self, name, getattr(shape, name))
        cards = self.var_cards
        tables = [np.ones(s) for s in self.cards]
        for v in range(self.n_vars):
            c = self.family_home[v]
            scope = list(model.parents[v]) + [v]
            t = model.cpts[v].reshape([cards[u] for u in scope])
            srt = sorted(scope)
            t = np.transpose(t, [scope.index(u) for u in srt])
            tables[c] = tables[c] * t.reshape([cards[u] if u in srt else 1 for u in self.cliques[c]])
        self.tables = tables

    # ------------------------------------------------------------------ one batch
    def _potential(self, c: int, codes: np.ndarray) -> np.ndarray:
        """psi_c = T_c * the indicators of the variables homed in c, per row of ``codes`` (a read-only
        broadcast of T_c when none of them is observed)."""
        B = codes.shape[0]
        vs = self.cliques[c]
        psi = np.broadcast_to(self.tables[c], (B,) + self.cards[c])
        fresh = False
        for v in self.evidence[c]:
            x = codes[:, v]
            obs = np.flatnonzero(x >= 0)
            if not obs.size:
                continue
            r = self.var_cards[v]
            lam = np.ones((B, r))
            lam[obs] = 0.0
            lam[obs, x[obs]] = 1.0
            lam = lam.reshape([B] + [r if u == v else 1 for u in vs])
            if fresh:
                psi *= lam
            else:
                psi, fresh = psi * lam, True
        return psi

    def _times_messages(self, b: np.ndarray, msgs) -> np.ndarray:
        """b times every (message, its broadcast shape) of ``msgs``; b itself is left unchanged."""
        fresh = False
        for m, shape in msgs:
            m = m.reshape((b.shape[0],) + shape)
            if fresh:
                b *= m
            else:
                b, fresh = b * m, True
        return b

    def _plan(self, codes: np.ndarray) -> _Plan:
        """The rows of each clique that take the full table or the look-up, cached per row set on the shared
        :class:`TreeShape` (the same rows under refitted CPTs reuse it)."""
        codes = np.ascontiguousarray(codes)
        key = (codes.shape, str(codes.dtype), hashlib.sha1(codes.tobytes()).digest())
        plans = self.shape.__dict__.setdefault("plans", {})
        plan = plans.get(key)
        if plan is None:
            if len(plans) >= 4:
                plans.clear()
            plan = plans[key] = _Plan(self.shape, codes)
        return plan

    @staticmethod
    def _at(msg: np.ndarray, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """A message's value at each row's observed separator configuration (flat ``cells``)."""
        return msg[rows].reshape(len(rows), -1)[np.arange(len(rows)), cells]

    @staticmethod
    def _one_hot(shape: tuple, cells: np.ndarray, values: np.ndarray) -> np.ndarray:
        """(len(cells), *shape) zeros with 1.0 at each row's observed configuration (flat ``cells``) where its
        ``values`` are positive: a normalised table whose only non-zero is that configuration."""
        out = np.zeros((len(cells),) + tuple(shape))
        pos = np.flatnonzero(values > 0)
        out.reshape(len(cells), -1)[pos, cells[pos]] = 1.0
        return out

    def calibrate(self, codes: np.ndarray, want) -> tuple[dict, np.ndarray]:
        """Beliefs P(C | x_observed) of the cliques in ``want`` for every row of ``codes`` (B, n), each of
        shape (B, *clique cards) and summing to one per row, and log P(x_observed) per row (-inf for rows the
        model gives probability zero; their beliefs are zero).

        Only the rows with a missing variable in a clique work on its full table; in a row that observes all
        of a clique's variables the table has one non-zero cell, so its message is that cell's value (looked
        up) on a one-hot separator configuration -- the same numbers, bit for bit, as the full table gives.

        Parameters
        ----------
        codes : ndarray of int, shape (B, n)
        want : iterable of int
            Clique indices.

        Returns
        -------
        beliefs : dict
            clique -> ndarray (B, *clique cards).
        log_evidence : ndarray, shape (B,)
        """
        B = codes.shape[0]
        plan = self._plan(codes)
        dense, look, cell = plan.dense, plan.look, plan.cell
        log_z = np.zeros(B)
        up: dict = {}
        with np.errstate(divide="ignore"):
            for c in reversed(self.order):  # children before parents
                kids, R, L = self.children[c], dense[c], look[c]
                if R.size:
                    b = self._times_messages(
                        self._potential(c, codes[R]), [(up[d][R], self.edges[d].in_parent) for d in kids]
                    )
                if L.size:
                    val = self.tables[c].ravel()[cell(c, c)]
                    for d in kids:
                        val = val * self._at(up[d], L, cell(c, d))
                if c == self.root:
                    if R.size:
                        log_z[R] += np.log(b.reshape(len(R), -1).sum(axis=1))
                    if L.size:
                        log_z[L] += np.log(val)
                    continue
                e = self.edges[c]
                msg = np.zeros((B,) + e.sep_cards)
                if R.size:
                    lz = np.zeros(len(R))
                    msg[R] = _rescale(b.sum(axis=e.up_axes), lz)
                    log_z[R] += lz
                if L.size:
                    log_z[L] += np.log(val)
                    msg[L] = self._one_hot(e.sep_cards, cell(c, c, True), val)
                up[c] = msg
        beliefs: dict = {}
        want = set(want)
        if not want:  # log P(x_observed) needs the upward pass only
            return beliefs, log_z
        down: dict = {}
        for c in self.order:  # parents before children
            kids, R, L = self.children[c], dense[c], look[c]
            if R.size:
                base = self._potential(c, codes[R])
                if c != self.root:
                    base = self._times_messages(base, [(down[c][R], self.edges[c].in_child)])
            if L.size:
                lval = self.tables[c].ravel()[cell(c, c)]
                if c != self.root:
                    lval = lval * self._at(down[c], L, cell(c, c, True))
            for d in kids:
                e = self.edges[d]
                msg = np.zeros((B,) + e.sep_cards)
                if R.size:
                    b = self._times_messages(
                        base, [(up[o][R], self.edges[o].in_parent) for o in kids if o != d]
                    )
                    msg[R] = _rescale(b.sum(axis=e.down_axes), None)
                if L.size:
                    v = lval
                    for o in kids:
                        if o != d:
                            v = v * self._at(up[o], L, cell(c, o))
                    msg[L] = self._one_hot(e.sep_cards, cell(c, d), v)
                down[d] = msg
            if c in want:
                bel = np.zeros((B,) + self.cards[c])
                if R.size:
                    b = self._times_messages(base, [(up[o][R], self.edges[o].in_parent) for o in kids])
                    s = b.reshape(len(R), -1).sum(axis=1)
                    bel[R] = b / np.where(s > 0, s, 1.0).reshape((len(R),) + (1,) * len(self.cards[c]))
                if L.size:
                    v = lval
                    for o in kids:
                        v = v * self._at(up[o], L, cell(c, o))
                    bel[L] = self._one_hot(self.cards[c], cell(c, c), v)
                beliefs[c] = bel
        return beliefs, log_z

    def margin(self, belief: np.ndarray, c: int, keep) -> np.ndarray:
        """The margin of a clique belief (B, *cards) on the variables ``keep`` (axes in sorted order).

        Parameters
        ----------
        belief : ndarray, shape (B, *cards)
        c : int
            Clique index.
        keep : iterable of int
            Variables kept.

        Returns
        -------
        ndarray
        """
        keep = set(keep)
        axes = tuple(1 + a for a, v in enumerate(self.cliques[c]) if v not in keep)
        return belief.sum(axis=axes) if axes else belief


class _Plan:
    """For one row set: per clique the rows with a missing variable in it (``dense``) and the others
    (``look``), and the flat cells of the latter's observed values (:meth:`cell`)."""

    def __init__(self, tree: TreeShape, codes: np.ndarray):
        miss = codes < 0
        self.tree, self.codes = tree, codes.copy()  # a copy: the caller may change its array later
        self.dense, self.look = [], []
        for vs in tree.cliques:
            m = miss[:, list(vs)].any(axis=1)
            self.dense.append(np.flatnonzero(m))
            self.look.append(np.flatnonzero(~m))
        self._cells: dict = {}

    def cell(self, c: int, d: int, own_separator: bool = False) -> np.ndarray:
        """Flat cell of each look-up row of clique c: in c itself (d == c), on the separator of the edge
        d -> c (d a child of c), or on c's own separator with its parent (``own_separator``)."""
        key = (c, d, own_separator)
        out = self._cells.get(key)
        if out is None:
            t = self.tree
            if d == c and not own_separator:
                variables, cards = t.cliques[c], t.cards[c]
            else:
                e = t.edges[c if own_separator else d]
                variables, cards = e.sep, e.sep_cards
            rows = self.look[c]
            out = (
                np.ravel_multi_index(tuple(self.codes[rows, v] for v in variables), cards)
                if len(variables)
                else np.zeros(len(rows), dtype=np.intp)
            )
            self._cells[key] = out
        return out


def _rescale(m: np.ndarray, log_z: np.ndarray | None) -> np.ndarray:
    """m / (its sum per row) in place (m is a fresh sum), adding log(sum) to ``log_z``; rows summing to zero
    stay zero."""
    B = m.shape[0]
    s = m.reshape(B, -1).sum(axis=1)
    if log_z is not None:
        with np.errstate(divide="ignore"):
            log_z += np.log(s)
    m /= np.where(s > 0, s, 1.0).reshape((B,) + (1,) * (m.ndim - 1))
    return m


def junction_tree(model) -> JunctionTree | None:
    """The model's junction tree (cached on the model), or None when its cliques hold more than
    :data:`MAX_TREE_CELLS` cells per row.

    Parameters
    ----------
    model : BayesNet

    Returns
    -------
    JunctionTree or None

    References
    ----------
    Lauritzen & Spiegelhalter (1988); thesis App. A.3 (the junction tree algorithm); the bnfk paper,
    "Fisher kernel" (after Theorem 1): P(pi_i(x)) marginalised from clique probabilities.
    """
    key = ("junction_tree", MAX_TREE_CELLS)
    if key not in model._cache:
        jt = JunctionTree(model)
        model._cache[key] = jt if jt.tables is not None else None
    return model._cache[key]


def batch_rows(tree: JunctionTree, max_bytes: float | None = None) -> int:
    """Rows per batch: potentials, beliefs and temporaries (about four tables per clique) within
    ``max_bytes`` (default :data:`BATCH_BYTES`).

    Parameters
    ----------
    tree : JunctionTree
    max_bytes : float, optional

    Returns
    -------
    int
        At least 1.
    """
    budget = BATCH_BYTES if max_bytes is None else max_bytes
    return max(1, int(budget // (8 * 4 * max(tree.total_cells, 1))))
