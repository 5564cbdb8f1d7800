"""Tree-shaped structures from mutual information: Chow–Liu trees, TAN and KDB.

- Chow & Liu (1968), Approximating discrete probability distributions with dependence trees.
- Friedman, Geiger & Goldszmidt (1997), Bayesian network classifiers (TAN).
- Sahami (1996), Learning limited dependence Bayesian classifiers (KDB).

Each method returns the parent indices of every column; ties are broken by column order.
Registered as learners by :mod:`bnfk_core.learning.structure`.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from scipy.special import xlogy

from ..data.counts import config_index, weighted_bincount
from .scores import LocalScorer

__all__ = ["scorer_mutual_information", "scorer_conditional_mutual_information", "chow_liu", "tan", "kdb",
           "parents_from_arcs", "learn_tree", "learn_tan", "learn_kdb"]


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
    t = _sum_nlogn(scorer, [i, j]) - _sum_nlogn(scorer, [i]) - _sum_nlogn(scorer, [j]) + _sum_nlogn(scorer, [])
    return max(t / scorer.n, 0.0)


def scorer_conditional_mutual_information(scorer: LocalScorer, i: int, j: int, c: int) -> float:
    """Empirical I(X_i; X_j | X_c) in nats on the scorer's rows."""
    if scorer.n == 0:
        return 0.0
    t = _sum_nlogn(scorer, [i, j, c]) + _sum_nlogn(scorer, [c]) - _sum_nlogn(scorer, [i, c]) - _sum_nlogn(scorer, [j, c])
    return max(t / scorer.n, 0.0)


def _max_spanning_tree(nodes: Sequence[int], weight: Callable[[int, int], float], root: int) -> list[tuple[int, int]]:
    """Prim's maximum spanning tree from ``root``; arcs point away from the root.

    Ties are broken by the position in ``nodes`` (first the new node, then the tree node)."""
    nodes = list(nodes)
    m = len(nodes)
    w = np.zeros((m, m))
    for a in range(m):
        for b in range(a + 1, m):
            w[a, b] = w[b, a] = weight(nodes[a], nodes[b])
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
    arcs = _max_spanning_tree(range(n), lambda a, b: scorer_mutual_information(scorer, a, b), root)
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
        arcs += _max_spanning_tree(feats, lambda a, b: scorer_conditional_mutual_information(scorer, a, b, cls), feats[0])
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
def learn_tree(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``tree``: the Chow–Liu tree rooted at the class (if any) or the first variable."""
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
