"""Structural EM for CLG networks on tables with missing cells (Friedman 1998): the structure searched on the
expected scores of the completions the current network gives, its parameters refitted by EM, until the
structure no longer changes.

:class:`ExpectedScorer` is the expected BIC/AIC: the complete-data local scores of
:mod:`bnfk_core.hybrid.scoring` with counts and cross-products replaced by their expectations under the
current network (:func:`bnfk_core.hybrid.em.expected_completions`), so every family is scored on all N rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import xlogy

from ..errors import DataError, StructureError
from ..network.dag import DAG
from .em import (
    EM_COMPLETIONS,
    EM_MAX_ITER,
    EM_TOL,
    Completions,
    check_em_options,
    completion_table,
    em_hybrid,
    family_sums,
)
from .model import HybridNet
from .scoring import HYBRID_SCORES
from .search import hybrid_hill_climb
from .stats import VARIANCE_FLOOR, regress, variance_floor
from .table import DISCRETE, NUMERIC, MixedData

__all__ = [
    "ExpectedScorer",
    "StructuralEM",
    "structural_em_hybrid",
    "check_sem_options",
    "SEM_MAX_ROUNDS",
    "SEM_ROUND_ITERATIONS",
    "SEM_ROUND_MOVES",
]

#: the most rounds (search on the expected scores, then EM) of structural EM
SEM_MAX_ROUNDS = 10
#: EM iterations per round, warm-started from the previous round's network (the last fit converges)
SEM_ROUND_ITERATIONS = 5
#: the most hill-climbing moves of one round's search (the next round goes on from there)
SEM_ROUND_MOVES = 20


class ExpectedScorer:
    """Expected local scores ``scorer(child, parents)`` from the E-step's completions.

    Parameters
    ----------
    completed : Completions, or list of (codes, xhat, cov, weights)
        :func:`bnfk_core.hybrid.em.completion_table` (or :func:`~bnfk_core.hybrid.em.expected_completions`)
        of ``data``.
    data : MixedData
    score : {"bic", "aic"}
    relative_floor : float
    """

    complete = True  # every family is scored on all rows

    def __init__(
        self, completed, data: MixedData, score: str = "bic", relative_floor: float = VARIANCE_FLOOR
    ):
        if score not in HYBRID_SCORES:
            raise StructureError(f"Unknown hybrid score '{score}'; choose one of {', '.join(HYBRID_SCORES)}.")
        if not isinstance(completed, Completions):
            completed = _as_table(completed, data)
        self.completed, self.score = completed, score
        self.kinds, self.cards, self.N = data.kinds, data.cardinalities, data.n_rows
        self.npos = {v: k for k, v in enumerate(data.numeric)}
        self.floors = {i: variance_floor(data.values[:, i], relative_floor) for i in data.numeric}
        self._local: dict = {}
        self.evaluations = 0

    def allowed(self, parent: int, child: int) -> bool:
        """An arc parent -> child keeps to the CLG family."""
        return not (self.kinds[child] == DISCRETE and self.kinds[parent] == NUMERIC)

    def __call__(self, child: int, parents, members=()) -> float:
        key = (child, tuple(sorted(parents)))
        got = self._local.get(key)
        if got is None:
            got = self._local[key] = self._compute(child, key[1])
        return got

    def delta(self, child: int, old, new) -> float:
        """The expected score change of replacing the parents ``old`` of ``child`` by ``new``."""
        return self(child, new) - self(child, old)

    def total(self, parent_sets) -> float:
        """The sum of the expected local scores."""
        return float(sum(self(i, ps) for i, ps in enumerate(parent_sets)))

    def _penalty(self, k: int) -> float:
        return 0.5 * k * math.log(self.N) if self.score == "bic" else float(k)

    def _compute(self, child: int, parents: tuple) -> float:
        self.evaluations += 1
        S = family_sums(self.completed, self.kinds, self.cards, self.npos, child, parents)
        dps = [p for p in parents if self.kinds[p] == DISCRETE]
        q = int(np.prod([int(self.cards[p]) for p in dps])) if dps else 1
        if self.kinds[child] == DISCRETE:
            nj = S.sum(axis=1)
            ll = float(xlogy(S, S).sum() - xlogy(nj, nj).sum())
            return ll - self._penalty(q * (S.shape[1] - 1))
        _, _, loglik, _ = regress(S, self.floors[child])
        return float(loglik.sum()) - self._penalty(q * (S.shape[1]))


def _as_table(completed, data: MixedData) -> Completions:
    """A list of (codes, xhat, cov, weights) as :class:`~bnfk_core.hybrid.em.Completions`."""
    sizes = [len(c[3]) for c in completed]
    m = len(data.numeric)
    return Completions(
        np.zeros(sum(sizes), dtype=np.int64),
        np.repeat(np.stack([np.asarray(c[0]) for c in completed]), sizes, axis=0)
        if completed
        else np.zeros((0, data.n_vars), int),
        np.concatenate([c[1] for c in completed]) if completed else np.zeros((0, m)),
        np.repeat(np.arange(len(completed)), sizes),
        np.stack([c[2] for c in completed]) if completed else np.zeros((1, m, m)),
        np.concatenate([c[3] for c in completed]) if completed else np.zeros(0),
        float("nan"),
    )


@dataclass
class StructuralEM:
    """What structural EM found: the DAG, its network fitted by EM, the observed-data log-likelihood, the
    rounds taken and notes."""

    dag: DAG
    model: HybridNet
    loglik: float
    rounds: int
    notes: list = field(default_factory=list)


def check_sem_options(max_rounds: int, round_iterations: int, round_moves: int | None) -> None:
    """A DataError in one sentence naming the first of the structural-EM budgets that is not a whole number
    of at least 1 (``round_moves`` may be None: unbounded)."""
    for name, value in (
        ("rounds of structural EM", max_rounds),
        ("EM iterations per round", round_iterations),
        ("search moves per round", round_moves),
    ):
        if value is None and name.startswith("search"):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise DataError(f"The {name} must be a whole number of at least 1, not {value!r}.")


def structural_em_hybrid(
    data: MixedData,
    score: str = "bic",
    max_parents: int | None = None,
    tabu_steps: int = 0,
    max_rounds: int = SEM_MAX_ROUNDS,
    progress=None,
    *,
    round_iterations: int = SEM_ROUND_ITERATIONS,
    round_moves: int | None = SEM_ROUND_MOVES,
    tol: float = EM_TOL,
    max_iter: int = EM_MAX_ITER,
) -> StructuralEM:
    """Structural EM: start from the available-case hill climb and a few EM iterations on it; then, each
    round, search from the current DAG on the expected scores of the current network's completions (at most
    ``round_moves`` moves) and run ``round_iterations`` EM iterations on the DAG found, warm-started from the
    current network, until the DAG no longer changes (or ``max_rounds``).  The final DAG's parameters are then
    run by EM to convergence (``tol``, ``max_iter``), again from the last network.

    Parameters
    ----------
    data : MixedData
    score : {"bic", "aic"}
    max_parents : int, optional
    tabu_steps : int
    max_rounds : int
        :data:`SEM_MAX_ROUNDS`.
    progress : callable, optional
    round_iterations : int
        EM iterations per round (:data:`SEM_ROUND_ITERATIONS`); the rounds need the completions only to
        rank structures, the last fit converges.
    round_moves : int or None
        The search budget of a round (:data:`SEM_ROUND_MOVES`; None: until no move gains).
    tol, max_iter
        The final EM fit's (:data:`~bnfk_core.hybrid.em.EM_TOL`, :data:`~bnfk_core.hybrid.em.EM_MAX_ITER`).

    Returns
    -------
    StructuralEM

    References
    ----------
    Friedman, N. (1998), "The Bayesian structural EM algorithm", UAI.
    """
    check_sem_options(max_rounds, round_iterations, round_moves)
    check_em_options(tol, max_iter)
    dag = hybrid_hill_climb(data, score, max_parents, tabu_steps).dag
    model = em_hybrid(dag, data, max_iter=round_iterations, tol=tol)
    rounds = 0
    budget = 10_000 if round_moves is None else int(round_moves)
    for rounds in range(1, int(max_rounds) + 1):
        if progress is not None:
            progress(min(0.95, rounds / (max_rounds + 1)), f"structural EM: round {rounds}")
        scorer = ExpectedScorer(completion_table(model, model.align(data), EM_COMPLETIONS), data, score)
        found = hybrid_hill_climb(
            data, score, max_parents, tabu_steps, max_moves=budget, scorer=scorer, start=dag.parent_indices()
        ).dag
        if found == dag:
            break
        dag = found
        model = em_hybrid(dag, data, max_iter=round_iterations, tol=tol, init=model)
    model = em_hybrid(dag, data, max_iter=max_iter, tol=tol, init=model)
    ll = float(model.fit_info["observed_loglik"])
    notes = [
        f"Structural EM: {rounds} round(s); parameters by EM over the missing cells "
        f"({model.fit_info['em_iterations']} iteration(s) of the final fit, relative tolerance {tol:g})."
    ]
    return StructuralEM(dag, model, ll, rounds, notes)
