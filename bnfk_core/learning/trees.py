"""Tree-shaped structures from mutual information: Chow–Liu trees, TAN and KDB.

- Chow & Liu (1968), Approximating discrete probability distributions with dependence trees.
- Friedman, Geiger & Goldszmidt (1997), Bayesian network classifiers (TAN).
- Sahami (1996), Learning limited dependence Bayesian classifiers (KDB).

Each method returns the parent indices of every column; ties are broken by column order.
Registered as learners by :mod:`bnfk_core.learning.structure`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import xlogy

from ..data.counts import config_index, weighted_bincount
from ..errors import StructureError
from .scores import LocalScorer

__all__ = [
    "scorer_mutual_information",
    "scorer_conditional_mutual_information",
    "mutual_information_matrix",
    "chow_liu",
    "tan",
    "kdb",
    "parents_from_arcs",
    "learn_tree",
    "learn_tan",
    "learn_kdb",
]


# ---------------------------------------------------------------------- information
def _sum_nlogn(scorer: LocalScorer, cols: Sequence[int]) -> float:
    """Σ n log n over the joint configurations of ``cols`` (complete rows)."""
    if not cols:
        return float(xlogy(scorer.n, scorer.n))
    m = scorer.n_distinct
    idx, size = config_index([scorer.cols[c] for c in cols], [scorer.cards[c] for c in cols], m)
    if size <= max(4 * m, 1024):
        counts = weighted_bincount(idx, scorer.weights, size)
    elif scorer.weights is None:
        counts = np.unique(idx, return_counts=True)[1]
    else:
        _, inv = np.unique(idx, return_inverse=True)
        counts = weighted_bincount(inv.ravel(), scorer.weights, 0)
    return float(xlogy(counts, counts).sum())


def scorer_mutual_information(scorer: LocalScorer, i: int, j: int) -> float:
    """Empirical I(X_i; X_j) in nats on the scorer's rows."""
    if scorer.n == 0:
        return 0.0
    t = (
        _sum_nlogn(scorer, [i, j])
        - _sum_nlogn(scorer, [i])
        - _sum_nlogn(scorer, [j])
        + _sum_nlogn(scorer, [])
    )
    return max(t / scorer.n, 0.0)


def scorer_conditional_mutual_information(scorer: LocalScorer, i: int, j: int, c: int) -> float:
    """Empirical I(X_i; X_j | X_c) in nats on the scorer's rows."""
    if scorer.n == 0:
        return 0.0
    t = (
        _sum_nlogn(scorer, [i, j, c])
        + _sum_nlogn(scorer, [c])
        - _sum_nlogn(scorer, [i, c])
        - _sum_nlogn(scorer, [j, c])
    )
    return max(t / scorer.n, 0.0)


def _max_spanning_tree(nodes: Sequence[int], weight, root: int) -> list[tuple[int, int]]:
    """Prim's maximum spanning tree from ``root``; arcs point away from the root.

    ``weight`` is a function of two nodes or the symmetric matrix of the weights between ``nodes`` (in their
    order).  Ties are broken by the position in ``nodes`` (first the new node, then the tree node)."""
    nodes = list(nodes)
    m = len(nodes)
    if callable(weight):
        w = np.zeros((m, m))
        for a in range(m):
            for b in range(a + 1, m):
                w[a, b] = w[b, a] = weight(nodes[a], nodes[b])
    else:
        w = np.asarray(weight, dtype=float)
    in_tree = np.zeros(m, dtype=bool)
    r = nodes.index(root)
    in_tree[r] = True
    best = w[r].copy()
    best_from = np.full(m, r)
    arcs = []
    for _ in range(m - 1):
        cand = np.where(in_tree, -np.inf, best)
        b = int(np.argmax(cand))  # first maximum: lowest position
        arcs.append((nodes[int(best_from[b])], nodes[b]))
        in_tree[b] = True
        better = (~in_tree) & (w[b] > best)
        best_from[better] = b
        best[better] = w[b][better]
    return arcs


#: elements of one block of the pairwise counts (pairs x cells): about 32 MB of int64 at a time
PAIR_BLOCK = 2**22


def _row_nlogn(cells: np.ndarray) -> np.ndarray:
    """Σ c log c of each row of ``cells`` -- numpy sums each row as it sums the same numbers as one array, so
    a row holding a pair's counts in :func:`_sum_nlogn`'s layout gives its very number (and the Chow–Liu tree
    the very same tie-breaks as the pair-by-pair computation).  Integer counts look their c log c up in a
    table of ``xlogy`` (the same numbers, without a logarithm per cell)."""
    if not cells.shape[1]:
        return np.zeros(cells.shape[0])
    if cells.dtype.kind in "iu" and cells.size > 64:
        top = int(cells.max())
        if top <= 4 * cells.size:
            k = np.arange(top + 1, dtype=float)
            return xlogy(k, k)[cells].sum(axis=1)
    cells = np.asarray(cells, dtype=float)
    return xlogy(cells, cells).sum(axis=1)


def _dense_block(z: np.ndarray, size: int, w, rounded) -> np.ndarray:
    """Counts of every pair's paired codes ``z`` (pairs, rows) in ``size`` cells each, one ``bincount``."""
    p = z.shape[0]
    key = (np.arange(p, dtype=z.dtype)[:, None] * size + z).ravel()
    cells = np.bincount(key, weights=None if w is None else np.tile(w, p), minlength=p * size)
    return rounded(cells.reshape(p, size))


def _observed_block(z: np.ndarray, w, rounded) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the observed cells of every pair, in the order of their paired codes (as ``np.unique`` gives
    them): ``(counts of every pair one after another, the number of cells of each pair)``.  A stable sort
    keeps the rows of a cell in their order, so weights are summed as ``bincount`` sums them."""
    order = np.argsort(z, axis=1, kind="stable")
    zs = np.take_along_axis(z, order, axis=1)
    start = np.ones(zs.shape, dtype=bool)
    start[:, 1:] = zs[:, 1:] != zs[:, :-1]
    first = np.flatnonzero(start.ravel())
    vals = np.ones(zs.size, dtype=np.int64) if w is None else w[order].ravel()
    return rounded(np.add.reduceat(vals, first)), start.sum(axis=1)


def mutual_information_matrix(scorer: LocalScorer) -> np.ndarray:
    """Empirical I(X_i; X_j) in nats of every pair of columns on the scorer's (complete) rows, as a symmetric
    matrix with a zero diagonal: :func:`scorer_mutual_information` of every pair -- the very same numbers --
    without a Python loop over the pairs.

    I(X_i; X_j) = (Σ n_ab log n_ab − Σ n_a log n_a − Σ n_b log n_b + n log n) / n over the joint counts n_ab
    of the pair and its marginal counts (Chow & Liu 1968).  The pairs are counted in blocks of about
    :data:`PAIR_BLOCK` elements: a pair whose table has few cells (at most ``max(4 × rows, 1024)``) by one
    ``bincount`` of the paired codes of all pairs with a table of that size; a larger one (many states, few
    rows: a 2,000-column upload of 20 rows) by sorting each pair's paired codes and counting their runs, the
    observed cells only.  Either way each pair's counts are laid out and summed as the pair-by-pair
    computation lays them out and sums them, so ties fall the same way in the tree.

    Parameters
    ----------
    scorer : LocalScorer
        The counts of the columns (complete rows; weighted rows count their weights).

    Returns
    -------
    ndarray of float, shape (n_vars, n_vars)
        I(X_i; X_j) in nats, symmetric, zero on the diagonal.

    References
    ----------
    Chow & Liu (1968), "Approximating discrete probability distributions with dependence trees", IEEE Trans.
    Inf. Theory 14(3): the tree maximises the sum of these weights.
    """
    n_vars = scorer.n_vars
    mi = np.zeros((n_vars, n_vars))
    if scorer.n == 0 or n_vars < 2:
        return mi
    m = scorer.n_distinct
    cards = np.asarray(scorer.cards, dtype=np.int64)
    w = scorer.weights
    limit = max(4 * m, 1024)  # _sum_nlogn's dense / observed-cells switch
    # a dense block's keys (pair x cells + cell) stay below 2 max(PAIR_BLOCK, limit): int32 unless that is
    # huge
    codes = np.stack(scorer.cols).astype(np.int32 if 2 * max(PAIR_BLOCK, limit) < 2**31 else np.int64)

    def rounded(c):  # weighted_bincount: integer weights give integer counts
        return np.rint(c).astype(np.int64) if w is not None and w.dtype.kind in "iu" else c

    s1 = np.empty(n_vars)  # Σ n_a log n_a of every column
    for r in np.unique(cards):
        cols = np.flatnonzero(cards == r)
        if r <= limit:
            s1[cols] = _row_nlogn(_dense_block(codes[cols], int(r), w, rounded))
        else:
            s1[cols] = [_sum_nlogn(scorer, [int(c)]) for c in cols]
    s0 = float(xlogy(scorer.n, scorer.n))

    ia, ib = np.triu_indices(n_vars, 1)
    size = cards[ia] * cards[ib]
    s2 = np.empty(len(ia))
    for sz in np.unique(size[size <= limit]):  # pairs whose table has ``sz`` cells: counted densely
        sel = np.flatnonzero(size == sz)
        step = max(1, PAIR_BLOCK // max(m, int(sz)))
        for lo in range(0, sel.size, step):
            idx = sel[lo : lo + step]
            z = codes[ia[idx]] * cards[ib[idx]].astype(codes.dtype)[:, None] + codes[ib[idx]]
            s2[idx] = _row_nlogn(_dense_block(z, int(sz), w, rounded))
    sel = np.flatnonzero(size > limit)  # the observed cells only
    step = max(1, PAIR_BLOCK // max(m, 1))
    for lo in range(0, sel.size, step):
        idx = sel[lo : lo + step]
        z = codes[ia[idx]].astype(np.int64) * cards[ib[idx]][:, None] + codes[ib[idx]]
        runs, k = _observed_block(z, w, rounded)
        offset = np.concatenate([[0], np.cumsum(k)[:-1]])
        for kk in np.unique(k):  # pairs with kk observed cells: one row each
            rows = np.flatnonzero(k == kk)
            s2[idx[rows]] = _row_nlogn(runs[offset[rows][:, None] + np.arange(kk)])
    t = s2 - s1[ia] - s1[ib] + s0
    mi[ia, ib] = mi[ib, ia] = np.maximum(t / scorer.n, 0.0)
    return mi


# ---------------------------------------------------------------------- tree methods
def chow_liu(scorer: LocalScorer, root: int = 0) -> list[tuple[int, ...]]:
    """Chow–Liu tree (maximum mutual-information spanning tree) rooted at ``root``.

    Parameters
    ----------
    scorer : LocalScorer
        The counts of the columns (mutual information from the complete rows).
    root : int
        The column every arc points away from.

    Returns
    -------
    list of tuple of int
        The parent indices of every column (at most one each).

    References
    ----------
    Chow & Liu (1968), "Approximating discrete probability distributions with dependence trees", IEEE Trans.
    Inf. Theory 14(3).  The structure of the default recipe (:mod:`bnfk_core.learning.recipe`).
    """
    n = scorer.n_vars
    arcs = _max_spanning_tree(range(n), mutual_information_matrix(scorer), root)
    return parents_from_arcs(n, arcs)


def tan(scorer: LocalScorer, cls: int) -> list[tuple[int, ...]]:
    """Tree-augmented naive Bayes: a maximum conditional-MI spanning tree over the features,
    rooted at the first feature, plus class -> every feature.

    Parameters
    ----------
    scorer : LocalScorer
    cls : int
        The class column.

    Returns
    -------
    list of tuple of int
        The parent indices of every column.

    References
    ----------
    Friedman, Geiger & Goldszmidt (1997), "Bayesian network classifiers", Machine Learning 29; the bnfk
    paper, "Experiments: Bayesian network classifiers" (Fig. 2).
    """
    n = scorer.n_vars
    feats = [i for i in range(n) if i != cls]
    arcs = [(cls, f) for f in feats]
    if feats:
        arcs += _max_spanning_tree(
            feats, lambda a, b: scorer_conditional_mutual_information(scorer, a, b, cls), feats[0]
        )
    return parents_from_arcs(n, arcs)


def kdb(scorer: LocalScorer, cls: int, k: int = 3) -> list[tuple[int, ...]]:
    """k-dependence Bayesian classifier (Sahami 1996).

    Features are taken in decreasing I(X; C) (ties by column order); each gets the class and up to
    ``k`` parents among the features before it, those with the highest I(X_i; X_j | C) > 0.

    Parameters
    ----------
    scorer : LocalScorer
    cls : int
        The class column.
    k : int
        Feature parents per feature.

    Returns
    -------
    list of tuple of int
        The parent indices of every column.

    References
    ----------
    Sahami (1996), "Learning limited dependence Bayesian classifiers", KDD; the bnfk paper, "Experiments:
    Bayesian network classifiers" (K = 3, Fig. 3).
    """
    n = scorer.n_vars
    feats = [i for i in range(n) if i != cls]
    mi = {f: scorer_mutual_information(scorer, f, cls) for f in feats}
    order = sorted(feats, key=lambda f: (-mi[f], f))
    arcs = [(cls, f) for f in feats]
    for pos, f in enumerate(order):
        earlier = order[:pos]
        cmi = [(scorer_conditional_mutual_information(scorer, f, g, cls), g) for g in earlier]
        cmi = [t for t in cmi if t[0] > 1e-12]
        cmi.sort(key=lambda t: (-t[0], order.index(t[1])))
        arcs += [(g, f) for _, g in cmi[:k]]
    return parents_from_arcs(n, arcs)


def parents_from_arcs(n: int, arcs) -> list[tuple[int, ...]]:
    parents = [[] for _ in range(n)]
    for u, v in arcs:
        parents[v].append(u)
    return [tuple(sorted(p)) for p in parents]


# ---------------------------------------------------------------------- as learners (LearnerSpec.learn)
def constrained_forest(weight: np.ndarray, forbid=(), require=()) -> list[tuple[int, ...]]:
    """The heaviest spanning forest that Kruskal's greedy order finds among the forests of one parent per
    node that hold every required arc and no forbidden one (Chow & Liu's tree with knowledge).

    The required arcs (at most one per child, acyclic: a forest of arborescences) come first; then every pair
    by decreasing weight (ties by index) joins two components when one orientation is allowed: ``u -> v``
    needs ``v`` to become the root of its component, by reversing the arcs from its root to ``v``, which is
    allowed when none of them is required and none of the reversed arcs is forbidden; otherwise ``v -> u``
    is tried the same way, otherwise the pair is skipped.  Without a constraint this is a maximum spanning
    tree (as :func:`chow_liu`'s); with them the result may be a forest, and it is the greedy best, not always
    the best forest that honours the arcs.

    Parameters
    ----------
    weight : ndarray, shape (n, n)
        Symmetric pair weights (mutual information).
    forbid, require : sequence of (int, int)
        Forbidden and required arcs (parent, child).

    Returns
    -------
    list of tuple of int
        The parent of every node (at most one).
    """
    w = np.asarray(weight, dtype=float)
    n = w.shape[0]
    fb, rq = set(map(tuple, forbid)), set(map(tuple, require))
    parent = [-1] * n
    comp = list(range(n))  # union-find

    def find(a):
        while comp[a] != a:
            comp[a] = comp[comp[a]]
            a = comp[a]
        return a

    def reroot(v) -> bool:
        """Make v the root of its component by reversing the arcs above it, when allowed."""
        path, x = [], v
        while parent[x] >= 0:
            path.append((parent[x], x))
            x = parent[x]
        if any(a in rq or (a[1], a[0]) in fb for a in path):
            return False
        for p, c in path:
            parent[p] = c
        parent[v] = -1
        return True

    for u, v in sorted(rq):
        parent[v] = u
        comp[find(v)] = find(u)
    order = sorted(
        ((a, b) for a in range(n) for b in range(a + 1, n)), key=lambda e: (-w[e[0], e[1]], e[0], e[1])
    )
    for a, b in order:
        if find(a) == find(b):
            continue
        for u, v in ((a, b), (b, a)):
            if (u, v) not in fb and reroot(v):
                parent[v] = u
                comp[find(v)] = find(u)
                break
    return [() if p < 0 else (p,) for p in parent]


def learn_tree(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``tree``: the Chow–Liu tree rooted at the class (if any) or the first variable; with forbidden or
    required arcs (``task.forbid``, ``task.require``) the greedy forest of :func:`constrained_forest`, refused
    before any counting when a node has two required parents (a tree gives each node one)."""
    forbid, require = task.forbid or (), task.require or ()
    if forbid or require:
        children = [v for _, v in require]
        twice = next((v for v in children if children.count(v) > 1), None)
        if twice is not None:
            ps = ", ".join(task.variables[u] for u, v in require if v == twice)
            raise StructureError(
                f"A Chow–Liu tree gives each variable one parent; '{task.variables[twice]}' has two required "
                f"parents ({ps})."
            )
        parents = constrained_forest(mutual_information_matrix(scorer), forbid, require)
        roots = sum(1 for p in parents if not p)
        task.notes.append(
            "Chow–Liu tree with the given arcs (greedy: the heaviest pairs first that the arcs allow)"
            + (f", a forest of {roots} trees" if roots > 1 else "")
        )
        return parents
    root = task.cls if task.cls is not None else 0
    task.notes.append(f"Chow–Liu tree rooted at '{task.variables[root]}'")
    return chow_liu(scorer, root)


def learn_tan(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``tan``: tree-augmented naive Bayes around the class."""
    return tan(scorer, task.cls)


def learn_kdb(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``kdb``: up to ``task.k`` feature parents per feature."""
    task.notes.append(f"KDB with up to k={int(task.k)} feature parents per feature")
    return kdb(scorer, task.cls, int(task.k))
