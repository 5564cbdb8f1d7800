"""Hill climbing with a tabu list on a decomposable score (Koller & Friedman (2009), §18.4.3): pgmpy's
``HillClimbSearch`` moves step for step, with cached gains (the ``bnfk`` engine) or through pgmpy itself.
Registered as the ``hc-greedy`` learner in :mod:`bnfk_core.learning.members`; :func:`tabu_search`, the
iterated tabu search that does not stop at the first local optimum, is the ``hc`` learner."""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..errors import StructureError, shorten
from .scores import LocalScorer
from .trees import parents_from_arcs

__all__ = ["hill_climb", "learn_hc", "reachability", "start_parents", "GainRows"]


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
        _tags = {
            "name": "bnfk",
            "supported_datatype": "discrete",
            "default_for": None,
            "is_parameteric": False,
        }

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


def hill_climb(
    scorer: LocalScorer,
    names: Sequence[str],
    *,
    max_parents: int | None = None,
    tabu: int = 100,
    max_iter: int = 1_000_000,
    epsilon: float = 1e-4,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
    pgmpy_score=None,
    engine: str = "bnfk",
    path: list | None = None,
    start: Sequence[Sequence[int]] | None = None,
    forbid: Sequence[tuple[int, int]] = (),
    require: Sequence[tuple[int, int]] = (),
) -> list[tuple[int, ...]]:
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
    ``(op, x, y)`` with op ``"+"``, ``"-"`` or ``"flip"`` of the arc x -> y
    (:mod:`bnfk_core.learning.landscape`).

    ``start``: the parents of every node of an acyclic graph to climb from (pgmpy's ``start_dag``; structural
    EM climbs from its current network, Friedman 1998); default the empty graph.  The moves, their
    tie-breaking and the stopping rule are the same; the tabu list starts empty.

    ``forbid`` and ``require``: (parent, child) index pairs checked by
    :func:`~bnfk_core.learning.knowledge.check_knowledge`.  The climb starts from ``start`` with the required
    arcs added and never takes a move that adds a forbidden arc, removes or reverses a required one, or
    reverses an arc into a forbidden direction (pgmpy's ``ExpertKnowledge``, bnlearn's black and white lists);
    the result holds every required arc and no forbidden one.
    """
    from .knowledge import move_mask, with_required

    names = list(names)
    n = len(names)
    if engine not in ("bnfk", "pgmpy"):
        raise StructureError(f"Unknown hill-climbing engine '{engine}'; choose bnfk or pgmpy.")
    start = start_parents(with_required(start, list(require), n), n)
    allowed = move_mask(n, list(forbid), list(require))
    priority = np.random.default_rng(seed).permutation(3 * n * n)
    if engine == "bnfk" and pgmpy_score is None:
        return _climb(
            scorer,
            n,
            priority,
            max_parents=max_parents,
            tabu=int(tabu),
            max_iter=int(max_iter),
            epsilon=epsilon,
            progress=progress,
            path=path,
            start=start,
            allowed=allowed,
        )
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
                progress(
                    min(0.95, it / (it + 20.0)),
                    f"hill climbing: step {it}, {kw['model'].number_of_edges()} arcs",
                )
            return ops

    score = pgmpy_score if pgmpy_score is not None else _make_pgmpy_score(scorer, names)
    start_dag = None
    if start is not None:
        from pgmpy.base import DAG as PgmpyDAG

        start_dag = PgmpyDAG()
        start_dag.add_nodes_from(names)
        start_dag.add_edges_from((names[p], names[v]) for v, ps in enumerate(start) for p in ps)
    knowledge = None
    if forbid or require:
        from pgmpy.causal_discovery import ExpertKnowledge

        knowledge = ExpertKnowledge(
            forbidden_edges=[(names[u], names[v]) for u, v in forbid],
            required_edges=[(names[u], names[v]) for u, v in require],
        )
    hc = SortedHillClimb(
        scoring_method=score,
        expert_knowledge=knowledge,
        tabu_length=int(tabu),
        max_indegree=max_parents,
        start_dag=start_dag,
        return_type="dag",
        epsilon=epsilon,
        max_iter=int(max_iter),
        show_progress=False,
    )
    frame = pd.DataFrame({v: scorer.cols[i] for i, v in enumerate(names)}, columns=names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hc.fit(frame)
    arcs = [(pos[u], pos[v]) for u, v in hc.causal_graph_.edges()]
    return parents_from_arcs(n, arcs)


def child_families(parents, children, ys, maxp: float, rows=None) -> list[tuple[int, tuple[int, ...]]]:
    """The families (child, sorted parents) that the gains of the moves touching the parents of each of ``ys``
    read:
    y's own family, y with one more parent, with one parent fewer, and both families of every reversal of an
    arc into or out of y (the terms of :func:`_climb`'s ``refresh_child`` and the tabu search's).  ``rows``
    (:class:`GainRows`): the additions into a y whose gains it holds already are left out."""
    n = len(parents)
    keys = []
    for y in ys:
        py = parents[y]
        own = tuple(sorted(py))
        keys.append((y, own))
        if len(py) + 1 <= maxp and (rows is None or (y, own) not in rows.rows):
            keys += [(y, tuple(sorted((*py, x)))) for x in range(n) if x != y and x not in py]
        for x in py:
            keys.append((y, tuple(sorted(py - {x}))))
            if len(parents[x]) + 1 <= maxp:
                keys.append((x, tuple(sorted((*parents[x], y)))))
        for z in children[y]:
            if len(py) + 1 <= maxp:
                keys.append((y, tuple(sorted((*py, z)))))
            keys.append((z, tuple(sorted(parents[z] - {y}))))
    return keys


class GainRows:
    """The gains of adding one parent, per family: ``row(y, py)`` is the array over x of
    ``round(score(y, py + x) - score(y, py), 6)`` (-inf where x is y or already a parent), the additions
    into y that :func:`_climb` and the tabu search read whenever y's parents change.  A row depends on the
    family alone, not on the rest of the graph, so the rows are kept on the scorer (its ``gain_rows``, beside
    its cache of family scores) and shared by every climb, walk and chain of a search on it: the climbs of
    other seeds and the walks back through a graph seen before read a row instead of n family scores.  The
    values are the floats the family scores give, so the moves do not change."""

    def __init__(self, scorer, n: int):
        self.scorer, self.n = scorer, n
        cache = getattr(scorer, "cache", None)  # family scores by (child, sorted parents)
        self.cache = cache if isinstance(cache, dict) else {}
        shared = getattr(scorer, "gain_rows", None)
        self.rows: dict = shared if isinstance(shared, dict) else {}
        self.fetch = getattr(scorer, "prefetch", None)  # scorers that count a batch of families at once

    def local(self, v: int, ps) -> float:
        key = (v, tuple(sorted(ps)))
        val = self.cache.get(key)
        return self.scorer(v, key[1]) if val is None else val

    def row(self, y: int, own: tuple, old: float) -> np.ndarray:
        """The rounded gains of adding each x -> y to the parents ``own`` (sorted) of y, whose score is
        ``old``."""
        key = (y, own)
        got = self.rows.get(key)
        if got is None:
            got = np.full(self.n, -np.inf)
            taken = set(own)
            for x in range(self.n):
                if x != y and x not in taken:
                    got[x] = round(float(self.local(y, (*own, x)) - old), 6)
            got.flags.writeable = False
            self.rows[key] = got
        return got

    def prefetch(self, parents, children, ys, maxp: float) -> None:
        """Hand the scorer, in one batch, the families that refreshing the gains of ``ys`` reads and no row
        holds yet."""
        if self.fetch is not None:
            self.fetch(child_families(parents, children, ys, maxp, self))


def start_parents(start, n: int):
    """``start`` as n sorted parent tuples (None stays None); a StructureError unless it is an acyclic graph
    on n nodes."""
    if start is None:
        return None
    try:  # a number, or parents that are not whole numbers: not a graph
        start = [tuple(sorted({_node(p) for p in ps})) for ps in start]
    except (TypeError, ValueError, OverflowError):
        raise StructureError(
            f"The start graph must give the parents (node indices) of each of the {n} nodes, not "
            f"{shorten(repr(start))}."
        ) from None
    if len(start) != n or any(not 0 <= p < n or p == v for v, ps in enumerate(start) for p in ps):
        raise StructureError(
            f"The start graph must give the parents of each of the {n} nodes (no self-loop)."
        )
    children = [[] for _ in range(n)]
    for v, ps in enumerate(start):
        for p in ps:
            children[p].append(v)
    if len(_kahn(children)) < n:
        raise StructureError("The start graph of hill climbing has a cycle.")
    return start


def _node(p) -> int:
    """A node index given as an integer (``True``, ``2.5``, ``'1'`` or NaN are not one)."""
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)):
        raise ValueError(p)
    return int(p)


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


def reachability(children: list) -> np.ndarray:
    """``R[a, b]``: a directed path of one or more arcs leads from a to b (the graph is acyclic)."""
    n = len(children)
    order = _kahn(children)
    R = np.zeros((n, n), dtype=bool)
    for v in reversed(order):
        for c in children[v]:
            R[v, c] = True
            R[v] |= R[c]
    return R


def _climb(
    scorer: LocalScorer,
    n: int,
    priority: np.ndarray,
    *,
    max_parents,
    tabu: int,
    max_iter: int,
    epsilon: float,
    progress: Callable[[float, str], None] | None,
    path: list | None = None,
    start: list | None = None,
    allowed: np.ndarray | None = None,
) -> list[tuple[int, ...]]:
    """pgmpy's hill climbing (see :func:`hill_climb`) with cached gains: the same moves, in the same order.

    ``gain[k, x, y]`` holds the rounded gain of adding (k = 0), removing (1) or reversing (2) x -> y
    given the current parents, computed as pgmpy does (new family scores minus old ones, in its
    order of terms).  A move changes the parents of one node (two for a reversal) and only the
    gains that read those parents are recomputed.  The legal moves of a step are a mask
    (adjacency, reachability for cycles, tabu list; the in-degree bound is in the gains); the best
    gain wins and ties go to the lowest ``priority`` -- the first maximum of pgmpy's list sorted by
    priority.  ``allowed`` (:func:`~bnfk_core.learning.knowledge.move_mask`) masks the moves the arc
    constraints forbid.
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
        R = reachability(children)

    # the scorer's cache of family scores read directly (its key: child, sorted parents), and the rows of
    # addition gains shared by every climb on the scorer
    rows = GainRows(scorer, n)
    local = rows.local

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
        own = tuple(sorted(py))
        old = local(y, own)
        if len(py) + 1 <= maxp:
            add[:, y] = rows.row(y, own, old)
        else:
            add[:, y] = NEG
        for x in py:
            rem[x, y] = round(float(local(y, py - {x}) - old), 6)
            refresh_flip(x, y)
        for z in children[y]:
            refresh_flip(y, z)

    def prefetch(ys) -> None:
        rows.prefetch(parents, children, ys, maxp)

    prefetch(range(n))
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
        if allowed is not None:
            legal &= allowed
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
        if (
            kind == 0
        ):  # a new arc x -> y: x and its ancestors now reach y and its descendants (no path is lost)
            up, down = R[:, x].copy(), R[y].copy()
            up[x] = down[y] = True
            R = R | np.outer(up, down)
        else:
            R = reachability(children)
        prefetch(changed)
        for c in changed:
            refresh_child(c)
    return [tuple(sorted(p)) for p in parents]


# ---------------------------------------------------------------------- as a learner (LearnerSpec.learn)
def learn_hc(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``hc-greedy``: the best of ``task.restarts + 1`` climbs (``restarts`` None: 4) with seeds ``seed ..
    seed + restarts``, each from
    ``task.start`` (the parents of every variable; None: the empty graph)."""
    if task.rows_used < 2:
        raise StructureError(
            f"Hill climbing needs at least two complete rows; {task.source} has {task.rows_used}."
        )
    runs = (4 if task.restarts is None else max(int(task.restarts), 0)) + 1
    progress, seed, max_parents = task.progress, int(task.seed), task.max_parents
    best = None
    for r in range(runs):
        sub = (
            None
            if progress is None
            else (
                lambda f, msg, r=r: progress(
                    (r + f) / runs, msg + (f" (climb {r + 1} of {runs})" if runs > 1 else "")
                )
            )
        )
        cand = hill_climb(
            scorer,
            task.variables,
            max_parents=max_parents,
            tabu=task.tabu,
            max_iter=task.max_iter,
            epsilon=task.epsilon,
            seed=seed + r,
            progress=sub,
            start=getattr(task, "start", None),
            forbid=task.forbid or (),
            require=task.require or (),
        )
        val = scorer.total(cand)
        if best is None or val > best[0] + 1e-9:
            best = (val, cand)
    task.notes.append(
        f"hill climbing (tabu {task.tabu}) on the {task.score} score"
        + (" from the given graph" if getattr(task, "start", None) is not None else "")
        + (f", at most {max_parents} parents" if max_parents is not None else "")
        + (f", best of {runs} climbs with seeds {seed}..{seed + runs - 1}" if runs > 1 else "")
        + (", within the given arc constraints" if task.forbid or task.require else "")
    )
    return best[1]


# ---------------------------------------------------------------------- iterated tabu search (the default
# ``hc``)
