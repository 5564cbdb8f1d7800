"""Structure learning: presets, hill climbing, Chow–Liu trees, TAN, KDB and exact search.

One entry point, :func:`learn_structure`, returns a :class:`LearnResult` whose DAG is over the
data's variables.  Every method learns from the rows without missing cells, and every result is
scored with the same decomposable score (:mod:`bnfk_core.scores`) on those rows.  All methods are
deterministic: ties are broken by column order.

References
----------
- Chow & Liu (1968), Approximating discrete probability distributions with dependence trees.
- Friedman, Geiger & Goldszmidt (1997), Bayesian network classifiers (TAN).
- Sahami (1996), Learning limited dependence Bayesian classifiers (KDB).
- Silander & Myllymäki (2006), A simple approach for finding the globally optimal Bayesian
  network structure (exact dynamic programming over parent sets and sinks).
- Koller & Friedman (2009), §18.4.3 (hill climbing): pgmpy's ``HillClimbSearch`` moves, with cached gains.
"""
from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.special import xlogy

from .dag import DAG, naive_bayes
from .errors import StructureError
from .limits import DEFAULT_MAX_BYTES, format_bytes, resolve_limit
from .registry import LEARNERS, LearnerSpec
from .kgv import raw_numbers  # importing kgv registers the kgv score
from .scores import (SCORES, LocalScorer, _config_index, log_multinomial_normalizer, score_dag, scorer_for,
                     weighted_bincount)

__all__ = ["EXACT_MAX_VARIABLES", "PAIR_BYTES", "guard_width", "LearnResult", "learn_structure", "learn_feature_structure",
           "raw_numbers",
           "scorer_mutual_information", "scorer_conditional_mutual_information", "chow_liu", "tan", "kdb",
           "hill_climb", "exact_search", "penalty_bounds"]

for _spec in (
        LearnerSpec("empty", "Empty network (no arcs)"),
        LearnerSpec("naive-bayes", "Naive Bayes (class -> every feature)", needs_class=True),
        LearnerSpec("hc", "Hill climbing (greedy, optimises the score)", uses_score=True),
        LearnerSpec("tree", "Chow–Liu tree"),
        LearnerSpec("tan", "TAN (tree-augmented naive Bayes)", needs_class=True),
        LearnerSpec("kdb", "KDB (k-dependence Bayes)", needs_class=True),
        LearnerSpec("exact", "Exact optimum (dynamic programming, ≤ 20 variables)", uses_score=True)):
    LEARNERS.register(_spec)
EXACT_MAX_VARIABLES = 20
#: bytes per pair of variables a search keeps at once: the spanning tree's weight matrix (tree, tan);
#: hill climbing's gains (3 float64), legal moves (3 bool), adjacency and reachability (bool) -- 29, rounded up
PAIR_BYTES = {"tree": 8, "tan": 8, "hc": 32}
#: Without a pruning bound (K2, BDeu) the exact search refuses to score more parent sets than this.
EXACT_MAX_CANDIDATES = 2_000_000

Progress = Callable[[float, str], None]


@dataclass
class LearnResult:
    """The outcome of :func:`learn_structure`.

    Attributes
    ----------
    dag : DAG over the data's variables (in data order).
    method, score_name : what was asked.
    score : total score of ``dag`` on the rows used (natural log, higher is better).
    n_rows_used : number of complete rows the structure was learned on.
    notes : sentences worth showing the user.
    seconds : wall-clock time.
    searched_raw : the numeric columns the score searched as numbers (``kgv``); their CPTs are
        still fitted on the quantile bins of ``data.states``.
    """

    dag: DAG
    method: str
    score_name: str
    score: float
    n_rows_used: int
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    searched_raw: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"dag": self.dag.to_dict(), "method": self.method, "score_name": self.score_name,
                "score": self.score, "n_rows_used": self.n_rows_used, "notes": list(self.notes),
                "seconds": self.seconds, "searched_raw": list(self.searched_raw)}


# ---------------------------------------------------------------------- information
def _sum_nlogn(scorer: LocalScorer, cols: Sequence[int]) -> float:
    """Σ n log n over the joint configurations of ``cols`` (complete rows)."""
    if not cols:
        return float(xlogy(scorer.n, scorer.n))
    m = scorer.n_distinct
    idx, size = _config_index([scorer.cols[c] for c in cols], [scorer.cards[c] for c in cols], m)
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
    Returns the parent indices of every column."""
    n = scorer.n_vars
    arcs = _max_spanning_tree(range(n), lambda a, b: scorer_mutual_information(scorer, a, b), root)
    return _parents_from_arcs(n, arcs)


def tan(scorer: LocalScorer, cls: int) -> list[tuple[int, ...]]:
    """Tree-augmented naive Bayes: a maximum conditional-MI spanning tree over the features,
    rooted at the first feature, plus class -> every feature."""
    n = scorer.n_vars
    feats = [i for i in range(n) if i != cls]
    arcs = [(cls, f) for f in feats]
    if feats:
        arcs += _max_spanning_tree(feats, lambda a, b: scorer_conditional_mutual_information(scorer, a, b, cls), feats[0])
    return _parents_from_arcs(n, arcs)


def kdb(scorer: LocalScorer, cls: int, k: int = 3) -> list[tuple[int, ...]]:
    """k-dependence Bayesian classifier (Sahami 1996).

    Features are taken in decreasing I(X; C) (ties by column order); each gets the class and up to
    ``k`` parents among the features before it, those with the highest I(X_i; X_j | C) > 0."""
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
    return _parents_from_arcs(n, arcs)


def _parents_from_arcs(n: int, arcs) -> list[tuple[int, ...]]:
    parents = [[] for _ in range(n)]
    for u, v in arcs:
        parents[v].append(u)
    return [tuple(sorted(p)) for p in parents]


# ---------------------------------------------------------------------- hill climbing
def _pgmpy_classes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.causal_discovery import HillClimbSearch
        from pgmpy.structure_score._base import BaseStructureScore
    return HillClimbSearch, BaseStructureScore


def _make_pgmpy_score(scorer: LocalScorer, names: Sequence[str]):
    """Our cached local score wrapped as a pgmpy structure score."""
    _, BaseStructureScore = _pgmpy_classes()

    class BnfkStructureScore(BaseStructureScore):
        _tags = {"name": "bnfk", "supported_datatype": "discrete", "default_for": None,
                 "is_parameteric": False}

        def __init__(self, scorer=None, names=None):
            self.scorer = scorer
            self.names = names
            self._pos = {v: i for i, v in enumerate(names or ())}
            self.data = None
            self.variables = list(names or ())
            self._cached_local_score = self._local_score
            super(BaseStructureScore, self).__init__()

        def _local_score(self, variable, parents):
            return self.scorer(self._pos[variable], [self._pos[p] for p in parents])

    return BnfkStructureScore(scorer, list(names))


def hill_climb(scorer: LocalScorer, names: Sequence[str], *, max_parents: int | None = None,
               tabu: int = 100, max_iter: int = 1_000_000, epsilon: float = 1e-4, seed: int = 0,
               progress: Progress | None = None, pgmpy_score=None, engine: str = "bnfk",
               path: list | None = None) -> list[tuple[int, ...]]:
    """Greedy hill climbing with a tabu list (Koller & Friedman §18.4.3) on our local score.

    The search is pgmpy's ``HillClimbSearch`` step for step: every step takes the legal move
    (add, remove or reverse one arc; not on the tabu list of the last ``tabu`` moves' inverses;
    at most ``max_parents`` parents; no cycle) with the largest score gain, and stops when no gain
    reaches ``epsilon`` or after ``max_iter`` steps.

    Ties decide much of the path: with a score-equivalent score (BIC, BDeu, qNML) adding X -> Y
    and Y -> X gain the same, and which one wins only depends on rounding and, in pgmpy, on the
    order of a Python set (so pgmpy alone differs between runs).  Here every candidate's gain is
    rounded to 1e-6 and ties go to the operation with the highest priority in a random order
    drawn from ``seed``: the same seed gives the same DAG in every run, and different seeds
    explore different tie-breaks (see ``restarts`` in :func:`learn_structure`).

    ``engine="bnfk"`` (default) keeps every candidate's gain and rescores only the families whose
    parents a move changed (one child's additions, its removals and the reversals that touch it),
    and tests cycles on a reachability matrix: a step costs O(d) local scores plus O(d²)
    vectorised work, where pgmpy computes O(d²) gains each with a graph search.  It gives the same
    DAG as ``engine="pgmpy"`` (pgmpy's own search with the same tie-breaking; checked in the tests
    on the bundled datasets for every score).  ``pgmpy_score`` replaces our score by a pgmpy
    scorer and implies the pgmpy engine (used by the benchmark).

    ``path``, a list (bnfk engine only), receives every move taken from the empty start, in order, as
    ``(op, x, y)`` with op ``"+"``, ``"-"`` or ``"flip"`` of the arc x -> y (:mod:`bnfk_core.landscape`).
    """
    names = list(names)
    n = len(names)
    if engine not in ("bnfk", "pgmpy"):
        raise StructureError(f"Unknown hill-climbing engine '{engine}'; choose bnfk or pgmpy.")
    priority = np.random.default_rng(seed).permutation(3 * n * n)
    if engine == "bnfk" and pgmpy_score is None:
        return _climb(scorer, n, priority, max_parents=max_parents, tabu=int(tabu), max_iter=int(max_iter),
                      epsilon=epsilon, progress=progress, path=path)
    if path is not None:
        raise StructureError("The hill-climbing path is recorded by the bnfk engine only.")
    HillClimbSearch, _ = _pgmpy_classes()
    pos = {v: i for i, v in enumerate(names)}
    rank = {"+": 0, "-": 1, "flip": 2}
    state = {"iter": 0}

    def key(t):
        (op, (x, y)), _ = t
        return int(priority[(rank[op] * n + pos[x]) * n + pos[y]])

    class SortedHillClimb(HillClimbSearch):
        def _legal_operations_dag(self, **kw):
            ops = [(op, round(float(delta), 6)) for op, delta in super()._legal_operations_dag(**kw)]
            ops.sort(key=key)
            state["iter"] += 1
            if progress is not None:
                it = state["iter"]
                progress(min(0.95, it / (it + 20.0)), f"hill climbing: step {it}, {kw['model'].number_of_edges()} arcs")
            return ops

    score = pgmpy_score if pgmpy_score is not None else _make_pgmpy_score(scorer, names)
    hc = SortedHillClimb(scoring_method=score, tabu_length=int(tabu), max_indegree=max_parents,
                         return_type="dag", epsilon=epsilon, max_iter=int(max_iter), show_progress=False)
    frame = pd.DataFrame({v: scorer.cols[i] for i, v in enumerate(names)}, columns=names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hc.fit(frame)
    arcs = [(pos[u], pos[v]) for u, v in hc.causal_graph_.edges()]
    return _parents_from_arcs(n, arcs)


def _reachability(children: list) -> np.ndarray:
    """``R[a, b]``: a directed path of one or more arcs leads from a to b (the graph is acyclic)."""
    n = len(children)
    indeg = np.zeros(n, dtype=np.int64)
    for ch in children:
        for c in ch:
            indeg[c] += 1
    order = [v for v in range(n) if indeg[v] == 0]
    for v in order:  # Kahn's algorithm; ``order`` grows while it is walked
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                order.append(c)
    R = np.zeros((n, n), dtype=bool)
    for v in reversed(order):
        for c in children[v]:
            R[v, c] = True
            R[v] |= R[c]
    return R


def _climb(scorer: LocalScorer, n: int, priority: np.ndarray, *, max_parents, tabu: int, max_iter: int,
           epsilon: float, progress: Progress | None, path: list | None = None) -> list[tuple[int, ...]]:
    """pgmpy's hill climbing (see :func:`hill_climb`) with cached gains: the same moves, in the same order.

    ``gain[k, x, y]`` holds the rounded gain of adding (k = 0), removing (1) or reversing (2) x -> y
    given the current parents, computed as pgmpy does (new family scores minus old ones, in its
    order of terms).  A move changes the parents of one node (two for a reversal) and only the
    gains that read those parents are recomputed.  The legal moves of a step are a mask
    (adjacency, reachability for cycles, tabu list; the in-degree bound is in the gains); the best
    gain wins and ties go to the lowest ``priority`` -- the first maximum of pgmpy's list sorted by
    priority.
    """
    maxp = math.inf if max_parents is None else int(max_parents)
    NEG = -np.inf
    parents: list[set] = [set() for _ in range(n)]
    children: list[set] = [set() for _ in range(n)]
    adj = np.zeros((n, n), dtype=bool)
    R = np.zeros((n, n), dtype=bool)
    gain = np.full((3, n, n), NEG)
    add, rem, flip = gain[0], gain[1], gain[2]
    legal = np.zeros((3, n, n), dtype=bool)
    prio = priority.reshape(3, n, n)
    no_loop = ~np.eye(n, dtype=bool)

    def local(v, ps) -> float:
        return scorer(v, tuple(ps))

    def refresh_flip(x: int, y: int) -> None:
        px, py = parents[x], parents[y]
        if len(px) + 1 > maxp:
            flip[x, y] = NEG
            return
        d = local(x, (*px, y)) + local(y, py - {x}) - local(x, px) - local(y, py)
        flip[x, y] = round(float(d), 6)

    def refresh_child(y: int) -> None:
        """Every gain that reads the parents of y: additions into y, removals and reversals of its arcs."""
        py = parents[y]
        old = local(y, py)
        if len(py) + 1 <= maxp:
            for x in range(n):
                if x != y and x not in py:
                    add[x, y] = round(float(local(y, (*py, x)) - old), 6)
        else:
            add[:, y] = NEG
        for x in py:
            rem[x, y] = round(float(local(y, py - {x}) - old), 6)
            refresh_flip(x, y)
        for z in children[y]:
            refresh_flip(y, z)

    for y in range(n):
        refresh_child(y)
    tabu_list: deque = deque(maxlen=tabu)
    kinds = {"+": 0, "-": 1, "flip": 2}
    for it in range(1, max_iter + 1):
        if progress is not None:
            progress(min(0.95, it / (it + 20.0)), f"hill climbing: step {it}, {int(adj.sum())} arcs")
        # legal: add x -> y when neither arc exists and y does not reach x; remove or reverse an arc
        # (reverse only when no other path leads from x to y); nothing on the tabu list
        np.logical_and(no_loop, ~(adj | adj.T | R.T), out=legal[0])
        legal[1] = adj
        legal[2] = adj
        ex, ey = np.nonzero(adj)
        if ex.size:
            other = (adj[ex] & R[:, ey].T).any(axis=1)
            legal[2, ex[other], ey[other]] = False
        for op, (x, y) in tabu_list:
            k = kinds[op]
            legal[k, x, y] = False
            if k == 2:
                legal[2, y, x] = False
        cand = gain[legal]
        if cand.size == 0:
            break
        best = cand.max()
        if best < epsilon:
            break
        pick = np.where(legal & (gain == best), prio, prio.size)
        kind, x, y = (int(t) for t in np.unravel_index(int(np.argmin(pick)), pick.shape))
        if kind == 0:
            parents[y].add(x)
            children[x].add(y)
            adj[x, y] = True
            tabu_list.append(("-", (x, y)))
            changed = (y,)
        elif kind == 1:
            parents[y].discard(x)
            children[x].discard(y)
            adj[x, y] = False
            tabu_list.append(("+", (x, y)))
            changed = (y,)
        else:
            parents[y].discard(x)
            children[x].discard(y)
            parents[x].add(y)
            children[y].add(x)
            adj[x, y], adj[y, x] = False, True
            tabu_list.append(("flip", (x, y)))
            changed = (x, y)
        if path is not None:
            path.append((("+", "-", "flip")[kind], x, y))
        R = _reachability(children)
        for c in changed:
            refresh_child(c)
    return [tuple(sorted(p)) for p in parents]


# ---------------------------------------------------------------------- exact search
def _popcounts(bits: int) -> np.ndarray:
    pc = np.zeros(1, dtype=np.int8)
    for _ in range(bits):
        pc = np.concatenate([pc, pc + 1])
    return pc


def penalty_bounds(scorer: LocalScorer, child: int, others: Sequence[int]) -> np.ndarray | None:
    """For BIC / AIC / qNML, the penalty of every parent mask over ``others`` (score ≤ −penalty); a scorer
    with its own ``penalty_array`` (KGV) gives it."""
    if hasattr(scorer, "penalty_array"):
        return scorer.penalty_array(child, others)
    if scorer.score not in ("bic", "aic", "qnml"):
        return None
    logq = np.zeros(1)
    for o in others:
        logq = np.concatenate([logq, logq + math.log(scorer.cards[o])])
    r = scorer.cards[child]
    q = np.exp(logq)
    if scorer.score == "bic":
        return 0.5 * math.log(max(scorer.n, 1)) * q * (r - 1)
    if scorer.score == "aic":
        return q * (r - 1)
    qr = np.round(q)
    uniq, inv = np.unique(qr, return_inverse=True)
    vals = np.array([log_multinomial_normalizer(scorer.n, int(u) * r if u * r <= 2 ** 62 else u * r)
                     - log_multinomial_normalizer(scorer.n, int(u) if u <= 2 ** 62 else u) for u in uniq])
    return vals[inv.ravel()]


def exact_search(scorer: LocalScorer, *, max_parents: int | None = None,
                 progress: Progress | None = None, prune: bool = True) -> tuple[list[tuple[int, ...]], dict]:
    """Globally optimal DAG by dynamic programming (Silander & Myllymäki 2006).

    1. For every variable v and every candidate set C ⊆ V∖{v}: the best parent set within C,
       bps(v, C) = max(s(v, C), max_{u∈C} bps(v, C∖{u})), layer by layer over |C|, as numpy
       arrays indexed by bitmask.  Parent sets larger than ``max_parents`` are never scored; for
       BIC/AIC/qNML (and KGV) a set is not scored either when its penalty alone is worse than the best subset
       (the penalty grows with the set, so this prunes all its supersets too).
    2. Best sinks: score(W) = max_{s∈W} score(W∖{s}) + bps(s, W∖{s}), layer by layer over |W|.
    3. Reconstruct the DAG by peeling off sinks from V.

    ``prune=False`` switches the penalty bound off (for checking it).
    Returns the parent indices and statistics (``scored`` parent sets, ``pruned``, ``optimum``).
    """
    n = scorer.n_vars
    if n > EXACT_MAX_VARIABLES:
        raise StructureError(f"Exact search handles at most {EXACT_MAX_VARIABLES} variables; the data has {n}. "
                             "Use 'hc' or drop columns.")
    maxp = n - 1 if max_parents is None else min(int(max_parents), n - 1)
    m = n - 1
    pc_m = _popcounts(m)
    layers_m = [np.flatnonzero(pc_m == k) for k in range(m + 1)]
    if not prune or (scorer.score not in ("bic", "aic", "qnml") and not hasattr(scorer, "penalty_array")):
        cand = n * sum(len(layers_m[k]) for k in range(maxp + 1))
        if cand > EXACT_MAX_CANDIDATES:
            raise StructureError(f"Exact search with the {scorer.score} score would score {cand:,} parent sets; "
                                 "set max_parents (e.g. 2 or 3) or use fewer variables.")
    bps, arg = [], []
    scored = pruned = 0
    for v in range(n):
        others = [u for u in range(n) if u != v]
        pen = penalty_bounds(scorer, v, others) if prune else None
        best = np.full(1 << m, -np.inf)
        barg = np.zeros(1 << m, dtype=np.int64)
        best[0] = scorer(v, ())
        scored += 1
        for k in range(1, m + 1):
            masks = layers_m[k]
            sub_best = np.full(masks.size, -np.inf)
            sub_arg = np.zeros(masks.size, dtype=np.int64)
            for b in range(m):
                has = (masks >> b) & 1 == 1
                sub = masks[has] ^ (1 << b)
                cand = best[sub]
                upd = cand > sub_best[has]
                idx = np.flatnonzero(has)[upd]
                sub_best[idx] = cand[upd]
                sub_arg[idx] = barg[sub[upd]]
            if k <= maxp:
                todo = np.ones(masks.size, dtype=bool) if pen is None else (-pen[masks] > sub_best)
                pruned += int(masks.size - todo.sum())
                for t in np.flatnonzero(todo):
                    mask = int(masks[t])
                    ps = [others[b] for b in range(m) if mask >> b & 1]
                    s = scorer(v, ps)
                    scored += 1
                    if s > sub_best[t]:
                        sub_best[t] = s
                        sub_arg[t] = mask
            best[masks] = sub_best
            barg[masks] = sub_arg
        bps.append(best)
        arg.append(barg)
        if progress is not None:
            progress(0.9 * (v + 1) / n, f"exact search: parent sets of variable {v + 1} of {n}")
    # best sinks over all subsets W of V
    full = (1 << n) - 1
    pc_n = _popcounts(n)
    total = np.full(1 << n, -np.inf)
    sink = np.zeros(1 << n, dtype=np.int8)
    total[0] = 0.0
    for k in range(1, n + 1):
        ws = np.flatnonzero(pc_n == k)
        cur = np.full(ws.size, -np.inf)
        cur_s = np.zeros(ws.size, dtype=np.int8)
        for s in range(n):
            has = (ws >> s) & 1 == 1
            rest = ws[has] ^ (1 << s)
            comp = (rest & ((1 << s) - 1)) | ((rest >> (s + 1)) << s)
            cand = total[rest] + bps[s][comp]
            upd = cand > cur[has]
            idx = np.flatnonzero(has)[upd]
            cur[idx] = cand[upd]
            cur_s[idx] = s
        total[ws] = cur
        sink[ws] = cur_s
    if progress is not None:
        progress(0.98, "exact search: reconstructing the optimal DAG")
    parents: list[tuple[int, ...]] = [()] * n
    w = full
    while w:
        s = int(sink[w])
        rest = w ^ (1 << s)
        comp = (rest & ((1 << s) - 1)) | ((rest >> (s + 1)) << s)
        pm = int(arg[s][comp])
        others = [u for u in range(n) if u != s]
        parents[s] = tuple(sorted(others[b] for b in range(m) if pm >> b & 1))
        w = rest
    return parents, {"scored": scored, "pruned": pruned, "optimum": float(total[full])}


# ---------------------------------------------------------------------- entry point
def guard_width(method: str, n_vars: int, max_bytes: float | None = None, source: str = "the data") -> None:
    """Refuse, before any counting, a search whose n x n tables (:data:`PAIR_BYTES` per pair) exceed the memory
    limit (``max_bytes``, default the limit set for this run, :func:`bnfk_core.limits.memory_limit`): a
    50,000-column file asks ``tree`` for 20 GB before it counts anything."""
    per_pair = PAIR_BYTES.get(str(method).lower(), 0)
    limit = resolve_limit(DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
    need = per_pair * int(n_vars) ** 2
    if per_pair and limit is not None and need > limit:
        label = LEARNERS[method].label if method in LEARNERS else method
        raise StructureError(f"{label} on {int(n_vars):,} variables of {source} needs about {format_bytes(need)} for its "
                             f"variable-by-variable tables, more than the memory limit of {format_bytes(limit)}; "
                             "drop columns, or raise the memory limit.")


def scorer_context(scorer):
    """The context a search with ``scorer`` runs in: its ``search_context()`` if it has one (the KGV scorer
    pins BLAS to one thread), else nothing."""
    make = getattr(scorer, "search_context", None)
    return make() if make is not None else contextlib.nullcontext()


def learn_structure(data, method: str, *, score: str = "bic", class_column: str | None = None, k: int = 3,
                    max_parents: int | None = None, ess: float = 1.0, seed: int = 0,
                    progress: Progress | None = None, max_iter: int = 1_000_000, tabu: int = 100,
                    epsilon: float = 1e-4, restarts: int = 4, score_options: dict | None = None,
                    scorer: LocalScorer | None = None) -> LearnResult:
    """Learn a DAG over ``data.variables``.

    Parameters
    ----------
    data : CategoricalData
    method : a name of :data:`bnfk_core.registry.LEARNERS`
        ``empty``; ``naive-bayes`` (class); ``hc`` hill climbing; ``tree`` Chow–Liu tree rooted at
        the class (if any) or the first variable; ``tan`` (class); ``kdb`` (class, ``k`` feature
        parents); ``exact`` optimal DAG by dynamic programming (≤ 20 variables).
    score : one of ``bic``, ``aic``, ``k2``, ``bdeu``, ``qnml``
        Optimised by ``hc`` and ``exact``; reported for every method.
    class_column : the class variable; defaults to ``data.class_column``.
    k : feature parents per feature in ``kdb``.
    max_parents : in-degree bound for ``hc`` and ``exact``.
    ess : equivalent sample size of ``bdeu``.
    seed : how ``hc`` breaks ties between equally good moves (see :func:`hill_climb`); every method
        is deterministic for a given seed (the others break ties by column order).
    progress : optional ``progress(fraction, message)`` callback.
    max_iter, tabu, epsilon : hill-climbing iterations, tabu-list length, minimal improvement.
    restarts : ``hc`` also climbs with seeds ``seed+1 .. seed+restarts`` and keeps the best DAG
        (default 4: best of 5 climbs; single climbs land in poor local optima often enough).
    score_options : options of a score with its own scorer (``kgv``: ``kappa``, ``sigma``, ``kernel``,
        ``bin_numbers``); the numeric columns ``data.numbers`` are offered to it as raw values.
    scorer : a ready :class:`~bnfk_core.scores.LocalScorer` over ``data``'s columns in place of the
        one on the complete rows (how :mod:`bnfk_core.missing` learns from every row); its
        ``rows_used`` and ``note`` attributes, when present, say which rows it counts.

    Raises
    ------
    StructureError
        Unknown method or score, missing class column, no complete rows, too many variables
        for ``exact``.
    """
    t0 = time.perf_counter()
    method = str(method).lower()
    if method not in LEARNERS:
        raise StructureError(f"Unknown structure-learning method '{method}'; choose one of {', '.join(LEARNERS)}.")
    score = str(score).lower()
    if score not in SCORES:
        raise StructureError(f"Unknown score '{score}'; choose one of {', '.join(SCORES)}.")
    if max_parents is not None and int(max_parents) < 0:
        raise StructureError(f"max_parents must be 0 or more, got {max_parents}.")
    if int(k) < 0:
        raise StructureError(f"k (feature parents in KDB) must be 0 or more, got {k}.")
    variables = list(data.variables)
    cls_name = class_column if class_column is not None else getattr(data, "class_column", None)
    cls = None
    if cls_name is not None:
        if cls_name not in variables:
            raise StructureError(f"Class column '{cls_name}' is not one of the data's variables.")
        cls = variables.index(cls_name)
    if LEARNERS[method].needs_class and cls is None:
        raise StructureError(f"Method '{method}' needs a class column; choose one.")

    def report(frac, msg):
        if progress is not None:
            progress(float(frac), msg)

    guard_width(method, len(variables), source=getattr(data, "source", "the data"))
    report(0.0, f"{method}: counting")
    if scorer is None:
        scorer = scorer_for(data.codes, data.cardinalities, score, ess=ess, weights=getattr(data, "weights", None),
                            numbers=raw_numbers(data), options=score_options)
    searched_raw = [variables[i] for i in getattr(scorer, "raw_columns", ())]
    used = int(getattr(scorer, "rows_used", scorer.n))
    notes = [getattr(scorer, "note", None) or (
        f"structure learned on {scorer.n} complete rows of {scorer.n_rows_total}"
        + (" (rows with missing cells are skipped)" if scorer.n < scorer.n_rows_total else ""))]
    if used == 0 and method not in ("empty", "naive-bayes"):
        raise StructureError("No row is complete (every row has a missing cell); structure learning needs complete rows "
                             "(or --missing-data available-case / em).")
    if used < 2 and method == "hc":
        raise StructureError(f"Hill climbing needs at least two complete rows; {getattr(data, 'source', 'the data')} "
                             f"has {used}.")

    n = len(variables)
    with scorer_context(scorer):
        if method == "empty":
            parents = [()] * n
        elif method == "naive-bayes":
            parents = list(naive_bayes(variables, cls_name).parent_indices())
        elif method == "tree":
            root = cls if cls is not None else 0
            parents = chow_liu(scorer, root)
            notes.append(f"Chow–Liu tree rooted at '{variables[root]}'")
        elif method == "tan":
            parents = tan(scorer, cls)
        elif method == "kdb":
            parents = kdb(scorer, cls, int(k))
            notes.append(f"KDB with up to k={int(k)} feature parents per feature")
        elif method == "hc":
            runs = max(int(restarts), 0) + 1
            best = None
            for r in range(runs):
                sub = None if progress is None else (
                    lambda f, msg, r=r: progress((r + f) / runs,
                                                 msg + (f" (climb {r + 1} of {runs})" if runs > 1 else "")))
                cand = hill_climb(scorer, variables, max_parents=max_parents, tabu=tabu, max_iter=max_iter,
                                  epsilon=epsilon, seed=int(seed) + r, progress=sub)
                val = scorer.total(cand)
                if best is None or val > best[0] + 1e-9:
                    best = (val, cand)
            parents = best[1]
            notes.append(f"hill climbing (tabu {tabu}) on the {score} score"
                         + (f", at most {max_parents} parents" if max_parents is not None else "")
                         + (f", best of {runs} climbs with seeds {seed}..{int(seed) + runs - 1}" if runs > 1 else ""))
        else:  # exact
            parents, stats = exact_search(scorer, max_parents=max_parents, progress=progress)
            notes.append(f"exact search scored {stats['scored']:,} parent sets "
                         f"({stats['pruned']:,} pruned by the score bound)"
                         + (f", at most {max_parents} parents" if max_parents is not None else ""))
    dag = DAG(variables, [(variables[p], variables[i]) for i, ps in enumerate(parents) for p in ps])
    total = scorer.total(dag.parent_indices()) if used else 0.0
    if searched_raw:
        notes.append(f"the {score} score searched {len(searched_raw)} numeric column(s) as numbers; their CPTs "
                     "use the quantile bins")
    report(1.0, f"{method}: done, {dag.n_arcs} arcs")
    return LearnResult(dag=dag, method=method, score_name=score, score=float(total), n_rows_used=used,
                       notes=notes, seconds=time.perf_counter() - t0, searched_raw=searched_raw)



def learn_feature_structure(data, method: str, *, score: str = "bic", k: int = 3, max_parents: int | None = None,
                            seed: int = 0, progress: Progress | None = None,
                            score_options: dict | None = None) -> LearnResult:
    """A structure over the *feature* columns of ``data`` (its class column is never a node of the result).

    Methods that need the class as a node (``naive-bayes``, ``tan``, ``kdb``) learn on all of ``data``
    with its class column, then drop the class and its arcs; the reported score is recomputed on the
    features.  The other methods learn on ``data.without_class()``.  This is how the app turns a
    classifier structure into a network for the Fisher kernel, whose features never include the class.
    """
    feats = data.without_class()
    if not LEARNERS[method].needs_class:
        return learn_structure(feats, method, score=score, k=k, max_parents=max_parents, seed=seed,
                               progress=progress, score_options=score_options)
    if data.class_column is None:
        raise StructureError(f"Method '{method}' needs a class column; choose one.")
    res = learn_structure(data, method, score=score, k=k, max_parents=max_parents, seed=seed, progress=progress,
                          score_options=score_options)
    dag = res.dag.subgraph(feats.variables)
    res.notes.append(f"the arcs from the class '{data.class_column}' are dropped: the class is never a kernel feature")
    res.dag = dag
    res.score = score_dag(feats.codes, feats.cardinalities, dag, score, weights=getattr(feats, "weights", None),
                          numbers=raw_numbers(feats), options=score_options)
    return res
