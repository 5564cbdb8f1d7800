"""Hill climbing with a tabu list on a decomposable score (Koller & Friedman (2009), §18.4.3): pgmpy's
``HillClimbSearch`` moves step for step, with cached gains (the ``bnfk`` engine) or through pgmpy itself.
Registered as the ``hc-greedy`` learner by :mod:`bnfk_core.learning.structure`; :func:`tabu_search`, the iterated
tabu search that does not stop at the first local optimum, is the ``hc`` learner."""
from __future__ import annotations

import math
import warnings
from collections import deque
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..errors import StructureError
from .trees import parents_from_arcs
from .scores import LocalScorer, _score_from_counts, config_index, weighted_bincount

__all__ = ["hill_climb", "learn_hc", "tabu_search", "learn_tabu", "ILS_RESTARTS", "ILS_KICKS", "GREEDY_CLIMBS", "TABU_TENURE", "TABU_PATIENCE"]


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
               progress: Callable[[float, str], None] | None = None, pgmpy_score=None, engine: str = "bnfk",
               path: list | None = None, start: Sequence[Sequence[int]] | None = None) -> list[tuple[int, ...]]:
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

    ``path``, a list (bnfk engine only), receives every move taken from the start, in order, as
    ``(op, x, y)`` with op ``"+"``, ``"-"`` or ``"flip"`` of the arc x -> y (:mod:`bnfk_core.learning.landscape`).

    ``start``: the parents of every node of an acyclic graph to climb from (pgmpy's ``start_dag``; structural EM
    climbs from its current network, Friedman 1998); default the empty graph.  The moves, their tie-breaking and
    the stopping rule are the same; the tabu list starts empty.
    """
    names = list(names)
    n = len(names)
    if engine not in ("bnfk", "pgmpy"):
        raise StructureError(f"Unknown hill-climbing engine '{engine}'; choose bnfk or pgmpy.")
    start = _start_parents(start, n)
    priority = np.random.default_rng(seed).permutation(3 * n * n)
    if engine == "bnfk" and pgmpy_score is None:
        return _climb(scorer, n, priority, max_parents=max_parents, tabu=int(tabu), max_iter=int(max_iter),
                      epsilon=epsilon, progress=progress, path=path, start=start)
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
    start_dag = None
    if start is not None:
        from pgmpy.base import DAG as PgmpyDAG
        start_dag = PgmpyDAG()
        start_dag.add_nodes_from(names)
        start_dag.add_edges_from((names[p], names[v]) for v, ps in enumerate(start) for p in ps)
    hc = SortedHillClimb(scoring_method=score, tabu_length=int(tabu), max_indegree=max_parents, start_dag=start_dag,
                         return_type="dag", epsilon=epsilon, max_iter=int(max_iter), show_progress=False)
    frame = pd.DataFrame({v: scorer.cols[i] for i, v in enumerate(names)}, columns=names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hc.fit(frame)
    arcs = [(pos[u], pos[v]) for u, v in hc.causal_graph_.edges()]
    return parents_from_arcs(n, arcs)


def _start_parents(start, n: int):
    """``start`` as n sorted parent tuples (None stays None); a StructureError unless it is an acyclic graph on n nodes."""
    if start is None:
        return None
    start = [tuple(sorted({int(p) for p in ps})) for ps in start]
    if len(start) != n or any(not 0 <= p < n or p == v for v, ps in enumerate(start) for p in ps):
        raise StructureError(f"The start graph must give the parents of each of the {n} nodes (no self-loop).")
    children = [[] for _ in range(n)]
    for v, ps in enumerate(start):
        for p in ps:
            children[p].append(v)
    if len(_kahn(children)) < n:
        raise StructureError("The start graph of hill climbing has a cycle.")
    return start


def _kahn(children: list) -> list:
    """The nodes in a topological order (Kahn's algorithm); fewer than all of them when there is a cycle."""
    n = len(children)
    indeg = np.zeros(n, dtype=np.int64)
    for ch in children:
        for c in ch:
            indeg[c] += 1
    order = [v for v in range(n) if indeg[v] == 0]
    for v in order:  # ``order`` grows while it is walked
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                order.append(c)
    return order


def _reachability(children: list) -> np.ndarray:
    """``R[a, b]``: a directed path of one or more arcs leads from a to b (the graph is acyclic)."""
    n = len(children)
    order = _kahn(children)
    R = np.zeros((n, n), dtype=bool)
    for v in reversed(order):
        for c in children[v]:
            R[v, c] = True
            R[v] |= R[c]
    return R


def _climb(scorer: LocalScorer, n: int, priority: np.ndarray, *, max_parents, tabu: int, max_iter: int,
           epsilon: float, progress: Callable[[float, str], None] | None, path: list | None = None,
           start: list | None = None) -> list[tuple[int, ...]]:
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
    for v, ps in enumerate(start or ()):
        for p in ps:
            parents[v].add(p)
            children[p].add(v)
            adj[p, v] = True
    if start is not None:
        R = _reachability(children)

    # a LocalScorer's cache read directly (its key: child, sorted parents): the climb asks ~40 scores per move
    cache = scorer.cache if isinstance(scorer, LocalScorer) else {}

    def local(v, ps) -> float:
        key = (v, tuple(sorted(ps)))
        val = cache.get(key)
        return scorer(v, key[1]) if val is None else val

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
        if kind == 0:   # a new arc x -> y: x and its ancestors now reach y and its descendants (no path is lost)
            up, down = R[:, x].copy(), R[y].copy()
            up[x] = down[y] = True
            R = R | np.outer(up, down)
        else:
            R = _reachability(children)
        for c in changed:
            refresh_child(c)
    return [tuple(sorted(p)) for p in parents]


# ---------------------------------------------------------------------- as a learner (LearnerSpec.learn)
def learn_hc(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``hc-greedy``: the best of ``task.restarts + 1`` climbs (``restarts`` None: 4) with seeds ``seed .. seed + restarts``, each from
    ``task.start`` (the parents of every variable; None: the empty graph)."""
    if task.rows_used < 2:
        raise StructureError(f"Hill climbing needs at least two complete rows; {task.source} has {task.rows_used}.")
    runs = (4 if task.restarts is None else max(int(task.restarts), 0)) + 1
    progress, seed, max_parents = task.progress, int(task.seed), task.max_parents
    best = None
    for r in range(runs):
        sub = None if progress is None else (
            lambda f, msg, r=r: progress((r + f) / runs, msg + (f" (climb {r + 1} of {runs})" if runs > 1 else "")))
        cand = hill_climb(scorer, task.variables, max_parents=max_parents, tabu=task.tabu, max_iter=task.max_iter,
                          epsilon=task.epsilon, seed=seed + r, progress=sub, start=getattr(task, "start", None))
        val = scorer.total(cand)
        if best is None or val > best[0] + 1e-9:
            best = (val, cand)
    task.notes.append(f"hill climbing (tabu {task.tabu}) on the {task.score} score"
                      + (" from the given graph" if getattr(task, "start", None) is not None else "")
                      + (f", at most {max_parents} parents" if max_parents is not None else "")
                      + (f", best of {runs} climbs with seeds {seed}..{seed + runs - 1}" if runs > 1 else ""))
    return best[1]


# ---------------------------------------------------------------------- iterated tabu search (the default ``hc``)
#: the default budget of the iterated tabu search: seeded perturbations of the best graph, each followed by a
#: climb and a tabu walk; the tabu walk's tenure and its patience (non-improving steps before it stops)
ILS_RESTARTS = 2
ILS_KICKS = 10
#: the greedy climbs (``hc-greedy``'s) whose best graph starts one more chain of ``hc``
GREEDY_CLIMBS = 5
TABU_TENURE = 10
TABU_PATIENCE = 20


class _Moves:
    """A DAG and the cached score gain of every single-arc move (add, remove, reverse x -> y) -- the state of the
    iterated tabu search.  The gains are rounded to 1e-6 as in :func:`_climb`; a move changes the parents of one
    node (two for a reversal) and only the gains that read those parents are recomputed, from the scorer's cache
    of family scores."""

    def __init__(self, scorer, n: int, maxp: float, prio: np.ndarray):
        self.scorer, self.n, self.maxp, self.prio = scorer, n, maxp, prio.reshape(3, n, n)
        self.cache = scorer.cache if isinstance(scorer, LocalScorer) else {}
        self.no_loop = ~np.eye(n, dtype=bool)
        self.load([()] * n)

    def local(self, v: int, ps) -> float:
        key = (v, tuple(sorted(ps)))
        val = self.cache.get(key)
        return self.scorer(v, key[1]) if val is None else val

    def load(self, parents) -> None:
        n = self.n
        self.parents = [set(ps) for ps in parents]
        self.children = [set() for _ in range(n)]
        self.adj = np.zeros((n, n), dtype=bool)
        for v, ps in enumerate(self.parents):
            for p in ps:
                self.children[p].add(v)
                self.adj[p, v] = True
        self.R = _reachability([list(c) for c in self.children])
        self.gain = np.full((3, n, n), -np.inf)
        self.fam = np.array([self.local(v, self.parents[v]) for v in range(n)])
        for y in range(n):
            self._refresh_child(y)

    def snapshot(self) -> list[tuple[int, ...]]:
        return [tuple(sorted(p)) for p in self.parents]

    @property
    def total(self) -> float:
        return float(self.fam.sum())

    def _refresh_flip(self, x: int, y: int) -> None:
        px, py = self.parents[x], self.parents[y]
        if len(px) + 1 > self.maxp:
            self.gain[2, x, y] = -np.inf
            return
        d = self.local(x, (*px, y)) + self.local(y, py - {x}) - self.fam[x] - self.fam[y]
        self.gain[2, x, y] = round(float(d), 6)

    def _score_additions(self, y: int) -> None:
        """Cache the family score of y with every one more parent, counting from the parents' configuration index
        once (a plain :class:`LocalScorer` only; the same counts as ``scorer(y, parents + x)``, whose rows --
        parent configurations -- come in another order, so the score agrees to rounding)."""
        sc = self.scorer
        if type(sc) is not LocalScorer or sc.score not in ("bic", "aic", "k2", "bdeu", "qnml"):
            return
        py = sorted(self.parents[y])
        todo = [x for x in range(self.n) if x != y and x not in self.parents[y]
                and (y, tuple(sorted((*py, x)))) not in self.cache]
        if not todo:
            return
        rows = sc.n_distinct
        base, size = config_index([sc.cols[p] for p in py], [sc.cards[p] for p in py], rows)
        ry, ycol = sc.cards[y], sc.cols[y]
        for x in todo:
            rx = sc.cards[x]
            if size * rx * ry > max(4 * rows, 1024):
                continue                              # sparse: the scorer compresses the configurations itself
            ps = tuple(sorted((*py, x)))
            idx = (base * rx + sc.cols[x]) * ry + ycol
            counts = weighted_bincount(idx, sc.weights, size * rx * ry).reshape(size * rx, ry)
            counts = counts[counts.sum(axis=1) > 0]
            self.cache[(y, ps)] = _score_from_counts(counts, ry, sc.n_configs(ps), sc.family_n(y, ps), sc.score,
                                                     sc.ess)

    def _refresh_child(self, y: int) -> None:
        py, old = self.parents[y], self.fam[y]
        add, rem = self.gain[0], self.gain[1]
        if len(py) + 1 <= self.maxp:
            self._score_additions(y)
            for x in range(self.n):
                if x != y and x not in py:
                    add[x, y] = round(float(self.local(y, (*py, x)) - old), 6)
        else:
            add[:, y] = -np.inf
        for x in py:
            rem[x, y] = round(float(self.local(y, py - {x}) - old), 6)
            self._refresh_flip(x, y)
        for z in self.children[y]:
            self._refresh_flip(y, z)

    def legal(self) -> np.ndarray:
        """The legal moves: add x -> y when neither arc exists and y does not reach x; remove any arc; reverse
        x -> y when no other path leads from x to y; the in-degree bound is in the gains (-inf)."""
        adj, R = self.adj, self.R
        legal = np.empty((3, self.n, self.n), dtype=bool)
        np.logical_and(self.no_loop, ~(adj | adj.T | R.T), out=legal[0])
        legal[1] = adj
        legal[2] = adj
        ex, ey = np.nonzero(adj)
        if ex.size:
            other = (adj[ex] & R[:, ey].T).any(axis=1)
            legal[2, ex[other], ey[other]] = False
        legal &= np.isfinite(self.gain)
        return legal

    def best(self, legal: np.ndarray) -> tuple[int, int, int, float] | None:
        """The legal move with the largest gain, ties to the lowest priority; None without a legal move."""
        cand = self.gain[legal]
        if cand.size == 0:
            return None
        top = cand.max()
        pick = np.where(legal & (self.gain == top), self.prio, self.prio.size)
        k, x, y = (int(t) for t in np.unravel_index(int(np.argmin(pick)), pick.shape))
        return k, x, y, float(top)

    def apply(self, kind: int, x: int, y: int) -> None:
        par, ch = self.parents, self.children
        if kind == 0:
            par[y].add(x)
            ch[x].add(y)
            self.adj[x, y] = True
            up, down = self.R[:, x].copy(), self.R[y].copy()
            up[x] = down[y] = True
            self.R |= np.outer(up, down)
            changed = (y,)
        else:
            par[y].discard(x)
            ch[x].discard(y)
            self.adj[x, y] = False
            changed = (y,)
            if kind == 2:
                par[x].add(y)
                ch[y].add(x)
                self.adj[y, x] = True
                changed = (x, y)
            self.R = _reachability([list(c) for c in ch])
        for c in changed:
            self.fam[c] = self.local(c, par[c])
        for c in changed:
            self._refresh_child(c)

    def climb(self, epsilon: float, budget: int) -> int:
        """Greedy ascent: the best legal move while its gain reaches ``epsilon`` (at most ``budget`` moves)."""
        steps = 0
        while steps < budget:
            mv = self.best(self.legal())
            if mv is None or mv[3] < epsilon:
                break
            self.apply(*mv[:3])
            steps += 1
        return steps


def tabu_search(scorer: LocalScorer, names: Sequence[str], *, max_parents: int | None = None, seed: int = 0,
                restarts: int = ILS_RESTARTS, kicks: int = ILS_KICKS, tenure: int = TABU_TENURE,
                patience: int = TABU_PATIENCE, kick_size: int | None = None, epsilon: float = 1e-4, max_iter: int = 1_000_000,
                start: Sequence[Sequence[int]] | None = None, also_from: Sequence | None = None,
                progress: Callable[[float, str], None] | None = None) -> list[tuple[int, ...]]:
    """Iterated tabu search over DAGs on a decomposable score: it does not stop at the first local optimum.

    1. **Climb** (Koller & Friedman (2009), §18.4.3): from ``start`` (default the empty graph) take the legal
       single-arc move (add, remove or reverse one arc; acyclic; at most ``max_parents`` parents) with the
       largest gain while that gain reaches ``epsilon``.
    2. **Tabu walk** (Glover 1989; the tabu search of Bouckaert 1995 and bnlearn): from the local optimum keep
       taking the best legal move even when it lowers the score; a move is tabu for ``tenure`` steps after an
       arc between the same two nodes changed, unless it would beat the best graph found (aspiration).  The
       walk ends after ``patience`` steps without a new best graph.
    3. **Perturb and repeat** (iterated local search, Lourenço, Martin & Stützle 2003): ``kicks`` times, apply
       ``kick_size`` random legal moves (default one per ten nodes, at least three) to the best graph of the chain and
       run 1-2 from there with a fresh tie-breaking order.
    4. **Restart**: ``restarts`` more chains, each from ``start`` with its own tie-breaking order, then one more
       chain from every graph in ``also_from`` (parent tuples of acyclic graphs; :func:`learn_tabu` passes the best
       of the greedy climbs, so the result scores at least as high as ``hc-greedy``'s, to ``epsilon``).

    The result is the best graph of all chains, and a local optimum under every single-arc move (a final climb
    makes sure).  Ties between equally good moves (gains rounded to 1e-6) go to the move with the highest
    priority in a random order of all moves, drawn afresh for every chain and after every kick; the orders and the
    kicks all come from one generator seeded with ``seed``, so the same seed gives the same DAG in every run (the
    first chain's first climb is :func:`hill_climb`'s with the same seed).  Family scores come from the scorer's
    cache: a step rescores only the families whose parents it changed.  ``max_iter`` bounds the moves of
    every climb and walk.
    """
    names = list(names)
    n = len(names)
    maxp = math.inf if max_parents is None else int(max_parents)
    rng = np.random.default_rng(int(seed))     # every tie-breaking order and every kick

    def order() -> np.ndarray:
        return rng.permutation(3 * n * n).reshape(3, n, n)

    state = _Moves(scorer, n, maxp, order())
    start = _start_parents(start, n) or [()] * n
    chain_starts = [start] * (int(restarts) + 1) + [_start_parents(g, n) for g in (also_from or ())]
    kick_size = max(3, n // 10) if kick_size is None else int(kick_size)
    best, best_score = None, -math.inf
    rounds, done = len(chain_starts) * (int(kicks) + 1), 0

    def walk(chain_best, chain_score):
        """The tabu walk from the current graph; the best graph seen (it or ``chain_best``) and its score."""
        if state.total > chain_score + epsilon:
            chain_best, chain_score = state.snapshot(), state.total
        until = np.zeros((n, n), dtype=np.int64)   # the step from which a move on the pair is free again
        step = stall = 0
        while stall < patience and step < max_iter:
            step += 1
            legal = state.legal()
            free = legal & (until <= step)[None] & (until.T <= step)[None]
            aspire = legal & (state.gain > chain_score - state.total + epsilon)
            mv = state.best(free | aspire)
            if mv is None:
                break
            k, x, y, _ = mv
            state.apply(k, x, y)
            until[x, y] = until[y, x] = step + tenure
            if state.total > chain_score + epsilon:
                chain_best, chain_score, stall = state.snapshot(), state.total, 0
            else:
                stall += 1
        return chain_best, chain_score

    for chain, first in enumerate(chain_starts):
        if chain:
            state.prio = order()
        state.load(first)
        state.climb(epsilon, max_iter)
        chain_best, chain_score = walk(None, -math.inf)
        for kick in range(int(kicks) + 1):
            if progress is not None:
                progress(min(0.95, done / rounds), f"tabu search: chain {chain + 1} of {len(chain_starts)}, kick {kick} "
                         f"of {kicks}, best score {max(best_score, chain_score):.2f}")
            done += 1
            if kick:
                state.load(chain_best)
                state.prio = order()
                for _ in range(kick_size):
                    k, x, y = np.nonzero(state.legal())
                    if k.size == 0:
                        break
                    i = int(rng.integers(k.size))
                    state.apply(int(k[i]), int(x[i]), int(y[i]))
                state.climb(epsilon, max_iter)
                chain_best, chain_score = walk(chain_best, chain_score)
        if chain_score > best_score + epsilon:
            best, best_score = chain_best, chain_score
    state.load(best)
    state.climb(epsilon, max_iter)
    return state.snapshot()


def learn_tabu(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``hc``: the iterated tabu search (:func:`tabu_search`) with ``task.restarts`` perturbations per chain (None:
    the default :data:`ILS_KICKS`), tie-breaking and kicks drawn from ``task.seed``; its last chain starts from the
    best of :data:`GREEDY_CLIMBS` greedy climbs (``hc-greedy``'s, seeds ``seed ..``), so ``hc`` never scores below
    ``hc-greedy`` (by more than ``epsilon``)."""
    if task.rows_used < 2:
        raise StructureError(f"Hill climbing needs at least two complete rows; {task.source} has {task.rows_used}.")
    kicks = ILS_KICKS if task.restarts is None else max(int(task.restarts), 0)
    start, seed = getattr(task, "start", None), int(task.seed)
    greedy = [hill_climb(scorer, task.variables, max_parents=task.max_parents, tabu=task.tabu, max_iter=task.max_iter,
                         epsilon=task.epsilon, seed=seed + r, start=start) for r in range(GREEDY_CLIMBS)]
    best_greedy = max(greedy, key=scorer.total)     # the first of equal scores
    parents = tabu_search(scorer, task.variables, max_parents=task.max_parents, seed=seed, kicks=kicks,
                          epsilon=task.epsilon, max_iter=task.max_iter, start=start, also_from=[best_greedy],
                          progress=task.progress)
    task.notes.append(f"iterated tabu search on the {task.score} score: {ILS_RESTARTS + 1} chains from the start and "
                      f"one from the best of {GREEDY_CLIMBS} greedy climbs, each a climb, tabu walks (tenure "
                      f"{TABU_TENURE}, patience {TABU_PATIENCE}) and {kicks} seeded perturbations (seed {task.seed})"
                      + (" from the given graph" if getattr(task, "start", None) is not None else "")
                      + (f", at most {task.max_parents} parents" if task.max_parents is not None else ""))
    return parents
