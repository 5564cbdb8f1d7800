"""Structure search over mixed columns: greedy hill climbing with arc additions, deletions and reversals,
then an optional tabu phase, or the exact dynamic programme of :mod:`bnfk_core.learning.exact`, on the
decomposable BIC or AIC of :class:`bnfk_core.hybrid.scoring.HybridScorer`; every DAG keeps to the CLG family
(a discrete node never gets a numeric parent) and to the in-degree bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import StructureError
from ..network.dag import DAG
from .scoring import HybridScorer
from .table import MixedData

__all__ = ["HybridSearch", "hybrid_hill_climb", "hybrid_exact", "hybrid_kgv_climb", "kgv_scorer"]


@dataclass
class HybridSearch:
    """What a hybrid search found: the DAG, its score (the sum of the local scores), the moves taken and the
    local scores computed."""

    dag: DAG
    score: float
    score_name: str
    moves: int
    evaluations: int
    seconds: float
    notes: list = field(default_factory=list)


def _reaches(parents: list, start: int, goal: int) -> bool:
    """A directed path start -> ... -> goal (walking child to parent from goal)."""
    todo, seen = [goal], set()
    while todo:
        v = todo.pop()
        if v == start:
            return True
        for p in parents[v]:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return False


def _moves(parents: list, scorer: HybridScorer, max_parents: int | None):
    """Every legal move with its score change: ('add'|'delete'|'reverse', u, v, delta)."""
    n = len(parents)
    for v in range(n):
        for u in range(n):
            if u == v:
                continue
            if u in parents[v]:
                rest = tuple(p for p in parents[v] if p != u)
                d_del = scorer.delta(v, parents[v], rest)
                yield ("delete", u, v, d_del)
                if scorer.allowed(v, u) and (max_parents is None or len(parents[u]) < max_parents):
                    without = [list(ps) for ps in parents]
                    without[v] = list(rest)
                    if not _reaches(without, u, v):  # v -> u closes no cycle once u -> v is gone
                        d_add = scorer.delta(u, parents[u], tuple(parents[u]) + (v,))
                        yield ("reverse", u, v, d_del + d_add)
            elif v not in parents[u] and scorer.allowed(u, v):
                if max_parents is not None and len(parents[v]) >= max_parents:
                    continue
                if not _reaches(parents, v, u):
                    yield ("add", u, v, scorer.delta(v, parents[v], tuple(parents[v]) + (u,)))


def _apply(parents: list, move) -> list:
    kind, u, v, _ = move
    out = [tuple(ps) for ps in parents]
    if kind == "add":
        out[v] = tuple(sorted(out[v] + (u,)))
    else:
        out[v] = tuple(p for p in out[v] if p != u)
        if kind == "reverse":
            out[u] = tuple(sorted(out[u] + (v,)))
    return out


def hybrid_hill_climb(
    data: MixedData,
    score: str = "bic",
    max_parents: int | None = None,
    tabu_steps: int = 0,
    max_moves: int = 10_000,
    progress=None,
    scorer=None,
    start=None,
) -> HybridSearch:
    """Hill climbing from the empty graph (or ``start``) over the CLG family, then ``tabu_steps`` moves of
    tabu search.

    Each step takes the best legal move (the largest score gain, two parent sets of a child compared on the
    rows where both are observed: :meth:`~bnfk_core.hybrid.scoring.HybridScorer.delta`); the greedy phase
    ends when no move gains more than 1e-9.  The tabu phase then takes the best move to a graph not visited
    yet even when it loses, and the best graph seen is returned.

    Parameters
    ----------
    data : MixedData
    score : {"bic", "aic"}
    max_parents : int, optional
        The in-degree bound.
    tabu_steps : int
        Moves of the tabu phase (0: plain hill climbing).
    max_moves : int
        A bound on the greedy moves.
    progress : callable, optional
        ``progress(fraction, message)``.
    scorer : HybridScorer-like, optional
        The local scores (default: :class:`~bnfk_core.hybrid.scoring.HybridScorer` of ``data``; structural
        EM passes its expected scores).
    start : sequence of tuples of int, optional
        The parents of every column to start from (default: none).

    Returns
    -------
    HybridSearch
    """
    if max_parents is not None and max_parents < 0:
        raise StructureError(f"max_parents must be at least 0, not {max_parents}.")
    t0 = time.perf_counter()
    scorer = scorer if scorer is not None else HybridScorer(data, score)
    n = data.n_vars
    parents = [tuple(sorted(ps)) for ps in start] if start is not None else [() for _ in range(n)]
    current = scorer.total(parents)
    moves = 0
    while moves < max_moves:
        best = max(_moves(parents, scorer, max_parents), key=lambda m: m[3], default=None)
        if best is None or best[3] <= 1e-9:
            break
        parents = _apply(parents, best)
        current = scorer.total(parents)
        moves += 1
        if progress is not None:
            progress(min(0.9, moves / (moves + n)), f"hill climbing: {moves} moves")
    best_parents, best_score = parents, current
    seen = {tuple(parents)}
    for _ in range(int(tabu_steps)):
        candidates = sorted(_moves(parents, scorer, max_parents), key=lambda m: -m[3])
        step = next((m for m in candidates if tuple(_apply(parents, m)) not in seen), None)
        if step is None:
            break
        parents = _apply(parents, step)
        seen.add(tuple(parents))
        current = scorer.total(parents)
        moves += 1
        if current > best_score + 1e-9:
            best_parents, best_score = parents, current
    names = data.variables
    dag = DAG(names, [(names[p], names[v]) for v in range(n) for p in best_parents[v]])
    notes = []
    if not getattr(scorer, "complete", True):
        notes.append(
            "Numeric cells are missing: each family was scored on its available cases (scaled to all rows), "
            "two parent sets compared on the rows where both are observed."
        )
    return HybridSearch(
        dag,
        float(scorer.total(best_parents)),
        score,
        moves,
        scorer.evaluations,
        time.perf_counter() - t0,
        notes,
    )


def hybrid_exact(data: MixedData, score: str = "bic", max_parents: int | None = None, progress=None):
    """The DAG of the best BIC (or AIC) among every CLG DAG of ``data`` (a complete table): Silander and
    Myllymäki's dynamic programme (:func:`bnfk_core.learning.exact.exact_search`) with every arc from a
    numeric node to a discrete one forbidden.

    The penalty bound that prunes the discrete search is not used: a Gaussian family's log-likelihood can be
    positive (a density above 1), so a family's penalty does not bound its score.

    Parameters
    ----------
    data : MixedData
        Complete (every family is scored on all rows).
    score : {"bic", "aic"}
    max_parents : int, optional
    progress : callable, optional

    Returns
    -------
    HybridSearch
        ``moves`` is 0; ``evaluations`` the parent sets scored.

    Raises
    ------
    StructureError
        A table with missing cells, or more variables or parent sets than the exact search takes.
    """
    from ..learning.exact import exact_search

    if not data.complete_rows().all():
        raise StructureError(
            "Exact search scores every family on all rows; this table has missing cells (learn on its "
            "complete rows, or use hill climbing)."
        )
    t0 = time.perf_counter()
    scorer = HybridScorer(data, score)
    n = len(data.variables)
    forbid = [(u, v) for v in range(n) for u in range(n) if u != v and not scorer.allowed(u, v)]
    parents, stats = exact_search(
        scorer, max_parents=max_parents, progress=progress, prune=False, forbid=forbid
    )
    names = data.variables
    dag = DAG(names, [(names[p], names[v]) for v in range(n) for p in parents[v]])
    return HybridSearch(
        dag,
        float(scorer.total(parents)),
        score,
        0,
        scorer.evaluations,
        time.perf_counter() - t0,
        [f"Exact search over every CLG DAG: {stats['scored']:,} parent sets scored."],
    )


def kgv_scorer(data: MixedData):
    """The KGV local score (:mod:`bnfk_core.learning.kgv`) of ``data``'s columns, the numbers unbinned."""
    import numpy as np

    from ..learning.scores import scorer_for

    n = len(data.variables)
    numeric = set(data.numeric)
    codes = np.where([j in numeric for j in range(n)], 0, data.codes).astype(np.int64)
    cards = [1 if j in numeric else int(c) for j, c in enumerate(data.cardinalities)]
    return scorer_for(codes, cards, "kgv", numbers={j: data.values[:, j] for j in numeric})


def hybrid_kgv_climb(data: MixedData, max_parents: int | None = None, seed: int = 0, progress=None):
    """A CLG DAG of ``data`` searched by the KGV score with the numbers unbinned (Bach & Jordan 2002, §4):
    the hill climbing of :func:`bnfk_core.learning.hill_climb.hill_climb` on the KGV local score of
    :mod:`bnfk_core.learning.kgv` (its default kernel and regularisation for N), every numeric -> discrete arc
    forbidden so the DAG is one a CLG network can be fitted on.

    Parameters
    ----------
    data : MixedData
        Rows with a missing cell are left out of the KGV (as the discrete KGV does).
    max_parents : int, optional
    seed : int
        The search's tie-breaking.
    progress : callable, optional

    Returns
    -------
    HybridSearch
        ``score`` is the KGV score of the DAG (nats; the log-likelihood surrogate minus its penalty).
    """
    from ..learning.hill_climb import hill_climb

    t0 = time.perf_counter()
    n = len(data.variables)
    scorer = kgv_scorer(data)
    numeric, kinds = set(data.numeric), data.kinds
    forbid = [(u, v) for v in range(n) for u in numeric if u != v and kinds[v] != kinds[u]]
    parents = hill_climb(
        scorer, list(data.variables), max_parents=max_parents, seed=seed, forbid=forbid, progress=progress
    )
    names = data.variables
    dag = DAG(names, [(names[p], names[v]) for v in range(n) for p in parents[v]])
    complete = int(data.complete_rows().sum())
    notes = [f"KGV hill climbing with the numbers unbinned, on the {complete} complete row(s)."]
    return HybridSearch(
        dag,
        float(sum(scorer(v, tuple(parents[v])) for v in range(n))),
        "kgv",
        0,
        0,
        time.perf_counter() - t0,
        notes,
    )
