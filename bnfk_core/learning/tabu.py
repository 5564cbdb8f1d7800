"""Iterated tabu search over DAGs: the default ``hc`` structure search.

Chains of a greedy climb (:func:`~bnfk_core.learning.hill_climb.hill_climb`'s moves and family-score cache)
followed by a tabu walk that also takes downhill moves, and seeded perturbations ("kicks") of the chain's best
graph, each climbed and walked again (iterated local search).  Two more chains start from the two best
distinct local optima of
20 greedy climbs (``hc-greedy``'s 5 among them), so ``hc`` never scores below ``hc-greedy``.  Ties are broken
by a seeded random order of the moves whose gains agree to 1e-6: the same seed gives the same DAG.

References
----------
.. [1] Glover (1989), "Tabu search -- part I", ORSA Journal on Computing 1(3).
.. [2] Lourenço, Martin & Stützle (2003), "Iterated local search", Handbook of Metaheuristics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import StructureError
from .hill_climb import GainRows, hill_climb, reachability, start_parents
from .scores import LocalScorer

__all__ = [
    "tabu_search",
    "learn_tabu",
    "ILS_RESTARTS",
    "ILS_KICKS",
    "GREEDY_CLIMBS",
    "GREEDY_CHAINS",
    "TABU_TENURE",
    "TABU_PATIENCE",
    "scores_computed",
]


#: the default budget of the iterated tabu search: seeded perturbations of the best graph, each followed by a
#: climb and a tabu walk; the tabu walk's tenure and its patience (non-improving steps before it stops)
ILS_RESTARTS = 2
ILS_KICKS = 10
#: the greedy climbs (seeds ``seed .. seed + GREEDY_CLIMBS - 1``; ``hc-greedy``'s 5 are the first) whose best
#: distinct local optima start more chains of ``hc``: on the repository networks the greedy climbs of other
#: tie orders spread widely, and one of them can lie in the basin of a peer's optimum that no kicked chain
#: enters
GREEDY_CLIMBS = 20
#: the best distinct local optima of those climbs that each start a chain
GREEDY_CHAINS = 2
TABU_TENURE = 10
TABU_PATIENCE = 20


class _Moves:
    """A DAG and the cached score gain of every single-arc move (add, remove, reverse x -> y) -- the state of
    the iterated tabu search.  The gains are rounded to 1e-6 as in :func:`greedy_climb`; a move changes the
    parents of one node (two for a reversal) and only the gains that read those parents are recomputed, from
    the scorer's cache of family scores."""

    def __init__(self, scorer, n: int, maxp: float, prio: np.ndarray, allowed: np.ndarray | None = None):
        self.scorer, self.n, self.maxp, self.prio = scorer, n, maxp, prio.reshape(3, n, n)
        self.allowed = allowed  # the moves the arc constraints leave (knowledge.move_mask); None: every move
        self.rows = GainRows(scorer, n)  # family scores and addition gains, shared with the greedy climbs
        self.local = self.rows.local
        self.no_loop = ~np.eye(n, dtype=bool)
        self.load([()] * n)

    def load(self, parents) -> None:
        n = self.n
        self.parents = [set(ps) for ps in parents]
        self.children = [set() for _ in range(n)]
        self.adj = np.zeros((n, n), dtype=bool)
        for v, ps in enumerate(self.parents):
            for p in ps:
                self.children[p].add(v)
                self.adj[p, v] = True
        self.R = reachability([list(c) for c in self.children])
        self.gain = np.full((3, n, n), -np.inf)
        self._prefetch(range(n))
        self.fam = np.array([self.local(v, self.parents[v]) for v in range(n)])
        for y in range(n):
            self._refresh_child(y)

    def snapshot(self) -> list[tuple[int, ...]]:
        return [tuple(sorted(p)) for p in self.parents]

    @property
    def total(self) -> float:
        return float(self.fam.sum())

    def _prefetch(self, ys) -> None:
        """Hand the scorer, in one batch, every family that refreshing the gains of ``ys`` reads (their own
        families, their additions, removals and reversals), for scorers that count batches (``prefetch``)."""
        self.rows.prefetch(self.parents, self.children, ys, self.maxp)

    def _refresh_flip(self, x: int, y: int) -> None:
        px, py = self.parents[x], self.parents[y]
        if len(px) + 1 > self.maxp:
            self.gain[2, x, y] = -np.inf
            return
        d = self.local(x, (*px, y)) + self.local(y, py - {x}) - self.fam[x] - self.fam[y]
        self.gain[2, x, y] = round(float(d), 6)

    def _refresh_child(self, y: int) -> None:
        py, old = self.parents[y], self.fam[y]
        add, rem = self.gain[0], self.gain[1]
        if len(py) + 1 <= self.maxp:
            add[:, y] = self.rows.row(y, tuple(sorted(py)), old)
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
        if self.allowed is not None:
            legal &= self.allowed
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
            self.R = reachability([list(c) for c in ch])
        self._prefetch(changed)
        for c in changed:
            self.fam[c] = self.local(c, par[c])
        for c in changed:
            self._refresh_child(c)

    def kick(self, rng: np.random.Generator) -> bool:
        """One random legal move: its kind (add, remove, reverse) uniformly among the kinds with a legal move,
        then the move uniformly among that kind's.  (Drawn uniformly among all legal moves, a kick would
        almost always add an arc -- a DAG of n nodes and e arcs has about n²/2 legal additions against e
        removals and e reversals -- and the next climb would mostly remove that arc again and fall back into
        the same optimum.) False when no move is legal; a move the arc constraints forbid is never legal."""
        legal = self.legal()
        kinds = [k for k in range(3) if legal[k].any()]
        if not kinds:
            return False
        k = kinds[int(rng.integers(len(kinds)))]
        x, y = np.nonzero(legal[k])
        i = int(rng.integers(x.size))
        self.apply(k, int(x[i]), int(y[i]))
        return True

    def prune(self) -> int:
        """Remove, one at a time, every arc whose removal does not lower the score (gain >= 0 at 1e-6; e.g. an
        arc from or to a column with one observed state, whose every family scores 0): of equally good graphs
        the one with fewer arcs.  The number of arcs removed."""
        removed = 0
        while True:
            keep = self.adj if self.allowed is None else self.adj & self.allowed[1]
            x, y = np.nonzero(keep & (self.gain[1] >= 0))
            if x.size == 0:
                return removed
            self.apply(1, int(x[0]), int(y[0]))
            removed += 1

    def climb(self, epsilon: float, budget: int) -> int:
        """Greedy ascent: the best legal move while its gain reaches ``epsilon`` (at most ``budget``
        moves)."""
        steps = 0
        while steps < budget:
            mv = self.best(self.legal())
            if mv is None or mv[3] < epsilon:
                break
            self.apply(*mv[:3])
            steps += 1
        return steps


def tabu_search(
    scorer: LocalScorer,
    names: Sequence[str],
    *,
    max_parents: int | None = None,
    seed: int = 0,
    restarts: int = ILS_RESTARTS,
    kicks: int = ILS_KICKS,
    tenure: int = TABU_TENURE,
    patience: int = TABU_PATIENCE,
    kick_size: int | None = None,
    epsilon: float = 1e-4,
    max_iter: int = 1_000_000,
    start: Sequence[Sequence[int]] | None = None,
    also_from: Sequence | None = None,
    progress: Callable[[float, str], None] | None = None,
    forbid: Sequence[tuple[int, int]] = (),
    require: Sequence[tuple[int, int]] = (),
    budget: int | None = None,
) -> list[tuple[int, ...]]:
    """Iterated tabu search over DAGs on a decomposable score: it does not stop at the first local optimum.

    1. **Climb** (Koller & Friedman (2009), §18.4.3): from ``start`` (default the empty graph) take the legal
       single-arc move (add, remove or reverse one arc; acyclic; at most ``max_parents`` parents) with the
       largest gain while that gain reaches ``epsilon``.
    2. **Tabu walk** (Glover 1989; the tabu search of Bouckaert 1995 and bnlearn): from the local optimum keep
       taking the best legal move even when it lowers the score; a move is tabu for ``tenure`` steps after an
       arc between the same two nodes changed, unless it would beat the best graph found (aspiration).  The
       walk ends after ``patience`` steps without a new best graph.
    3. **Perturb and repeat** (iterated local search, Lourenço, Martin & Stützle 2003): ``kicks`` times, apply
       ``kick_size`` random legal moves (default one per ten nodes, at least three) to the best graph of the
       chain and run 1-2 from there with a fresh tie-breaking order.  Each random move first draws its kind
       (add, remove, reverse) uniformly, then the move within the kind: the kicks change the arcs the graph
       has, not only add arcs the next climb removes again.
    4. **Restart**: ``restarts`` more chains, each from ``start`` with its own tie-breaking order, then one
    more
       chain from every graph in ``also_from`` (parent tuples of acyclic graphs; :func:`learn_tabu` passes the
       best distinct optima of the greedy climbs, so the result scores at least as high as ``hc-greedy``'s, to
       ``epsilon``).

    The result is the best graph of all chains, and a local optimum under every single-arc move (a final climb
    makes sure); arcs whose removal does not lower the score are then removed (and the graph climbed again),
    so of equally good graphs the search returns one without arcs that add nothing.  Ties between equally good
    moves (gains rounded to 1e-6) go to the move with the highest priority in a random order of all moves,
    drawn afresh for every chain and after every kick; the orders and the kicks all come from one generator
    seeded with ``seed``, so the same seed gives the same DAG in every run (the
    first chain's first climb is :func:`hill_climb`'s with the same seed).  Family scores come from the
    scorer's cache: a step rescores only the families whose parents it changed.  ``max_iter`` bounds the moves
    of every climb and walk.

    ``forbid`` and ``require`` ((parent, child) index pairs, :mod:`bnfk_core.learning.knowledge`): every chain
    starts from its graph with the required arcs added, and no climb, walk, kick or pruning step adds a
    forbidden arc or removes or reverses a required one, so the result honours both.

    ``budget``: the most family scores (new entries of the scorer's cache, :func:`scores_computed`) this call
    computes before it stops exploring; None: no bound.  It is checked at every step of a tabu walk and before
    every kick and chain: once it is spent, the walk ends, no kick or chain starts, and the graphs of
    ``also_from`` whose chains did not run still compete for the result.  A climb that started runs to its
    local optimum, and so does the final climb, so the search may compute a few scores beyond the budget.
    Counted in scores, not seconds: the same seed and budget give the same DAG on every machine.
    """
    from .knowledge import move_mask, with_required

    names = list(names)
    n = len(names)
    maxp = math.inf if max_parents is None else int(max_parents)
    rng = np.random.default_rng(int(seed))  # every tie-breaking order and every kick

    def order() -> np.ndarray:
        return rng.permutation(3 * n * n).reshape(3, n, n)

    state = _Moves(scorer, n, maxp, order(), move_mask(n, list(forbid), list(require)))
    start = start_parents(with_required(start, list(require), n), n) or [()] * n
    chain_starts = [start] * (int(restarts) + 1) + [
        start_parents(with_required(g, list(require), n), n) for g in (also_from or ())
    ]
    kick_size = max(3, n // 10) if kick_size is None else int(kick_size)
    best, best_score = None, -math.inf
    first_greedy = int(restarts) + 1  # chain_starts[first_greedy:] are the graphs of also_from
    spent0 = scores_computed(scorer)

    def over() -> bool:
        return budget is not None and scores_computed(scorer) - spent0 >= budget

    rounds, done = len(chain_starts) * (int(kicks) + 1), 0

    def walk(chain_best, chain_score):
        """The tabu walk from the current graph; the best graph seen (it or ``chain_best``) and its score."""
        if state.total > chain_score + epsilon:
            chain_best, chain_score = state.snapshot(), state.total
        until = np.zeros((n, n), dtype=np.int64)  # the step from which a move on the pair is free again
        step = stall = 0
        while stall < patience and step < max_iter and not over():
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
        if chain and over():  # the budget is spent: the greedy optima left compete as they are
            for g in chain_starts[max(chain, first_greedy) :]:
                state.load(g)
                if state.total > best_score + epsilon:
                    best, best_score = state.snapshot(), state.total
            break
        if chain:
            state.prio = order()
        state.load(first)
        state.climb(epsilon, max_iter)
        chain_best, chain_score = walk(None, -math.inf)
        for kick in range(int(kicks) + 1):
            if progress is not None:
                progress(
                    min(0.95, done / rounds),
                    f"tabu search: chain {chain + 1} of {len(chain_starts)}, kick {kick} "
                    f"of {kicks}, best score {max(best_score, chain_score):.2f}",
                )
            done += 1
            if kick and over():
                break
            if kick:
                state.load(chain_best)
                state.prio = order()
                for _ in range(kick_size):
                    if not state.kick(rng):
                        break
                state.climb(epsilon, max_iter)
                chain_best, chain_score = walk(chain_best, chain_score)
        if chain_score > best_score + epsilon:
            best, best_score = chain_best, chain_score
    state.load(best)
    state.climb(epsilon, max_iter)
    while state.prune() and state.climb(epsilon, max_iter):
        pass
    return state.snapshot()


def scores_computed(scorer) -> int:
    """The family scores ``scorer`` has computed so far: the size of its cache (0 for a scorer without one,
    which no budget then bounds)."""
    cache = getattr(scorer, "cache", None)
    return len(cache) if isinstance(cache, dict) else 0


def learn_tabu(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``hc``: the iterated tabu search (:func:`tabu_search`) with ``task.restarts`` perturbations per chain
    (None:
    the default :data:`ILS_KICKS`), tie-breaking and kicks drawn from ``task.seed``; its last
    :data:`GREEDY_CHAINS` chains start from the best distinct local optima of :data:`GREEDY_CLIMBS` greedy
    climbs (``hc-greedy``'s, seeds ``seed ..``), so ``hc`` never scores below ``hc-greedy`` (by more than
    ``epsilon``).  ``task.budget`` (None: no bound) caps the family scores the whole search computes: the
    greedy climbs stop starting at half of it (the first always runs), :func:`tabu_search` spends the rest;
    then the result need not reach ``hc-greedy``'s, only the best of the climbs that ran."""
    if task.rows_used < 2:
        raise StructureError(
            f"Hill climbing needs at least two complete rows; {task.source} has {task.rows_used}."
        )
    kicks = ILS_KICKS if task.restarts is None else max(int(task.restarts), 0)
    start, seed = getattr(task, "start", None), int(task.seed)
    budget = getattr(task, "budget", None)
    spent0 = scores_computed(scorer)
    greedy = []
    for r in range(GREEDY_CLIMBS):
        # within a budget the greedy climbs take at most half of it (the first always runs)
        if r and budget is not None and 2 * (scores_computed(scorer) - spent0) >= budget:
            break
        greedy.append(
            hill_climb(
                scorer,
                task.variables,
                max_parents=task.max_parents,
                tabu=task.tabu,
                max_iter=task.max_iter,
                epsilon=task.epsilon,
                seed=seed + r,
                start=start,
                forbid=task.forbid or (),
                require=task.require or (),
            )
        )
    optima = {}  # the distinct local optima of the climbs, first seen first
    for g in greedy:
        optima.setdefault(tuple(tuple(p) for p in g), scorer.total(g))
    elite = sorted(optima, key=lambda g: -optima[g])[:GREEDY_CHAINS]  # stable: the first of equal scores
    parents = tabu_search(
        scorer,
        task.variables,
        max_parents=task.max_parents,
        seed=seed,
        kicks=kicks,
        restarts=ILS_RESTARTS,
        epsilon=task.epsilon,
        max_iter=task.max_iter,
        start=start,
        also_from=[list(g) for g in elite],
        progress=task.progress,
        forbid=task.forbid or (),
        require=task.require or (),
        budget=None if budget is None else max(budget - (scores_computed(scorer) - spent0), 0),
    )
    task.notes.append(
        f"iterated tabu search on the {task.score} score: {ILS_RESTARTS + 1} chains from the start and "
        f"{'one' if GREEDY_CHAINS == 1 else GREEDY_CHAINS} from the best distinct optima of {GREEDY_CLIMBS} "
        "greedy "
        f"climbs, each a climb, tabu walks (tenure "
        f"{TABU_TENURE}, patience {TABU_PATIENCE}) and {kicks} seeded perturbations (seed {task.seed})"
        + (" from the given graph" if getattr(task, "start", None) is not None else "")
        + (f", at most {task.max_parents} parents" if task.max_parents is not None else "")
        + (
            ""
            if budget is None
            else f"; {len(greedy)} greedy climbs and {scores_computed(scorer) - spent0:,} family scores "
            f"within the budget of {budget:,}"
        )
    )
    return parents
