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

from ..errors import StructureError
from ..network.dag import DAG
from .em import em_hybrid, expected_completions
from .model import HybridNet
from .scoring import HYBRID_SCORES
from .search import hybrid_hill_climb
from .stats import VARIANCE_FLOOR, regress, variance_floor
from .table import DISCRETE, NUMERIC, MixedData

__all__ = ["ExpectedScorer", "StructuralEM", "structural_em_hybrid"]


class ExpectedScorer:
    """Expected local scores ``scorer(child, parents)`` from the E-step's completions.

    Parameters
    ----------
    completed : list of (codes, xhat, cov, weights)
        :func:`bnfk_core.hybrid.em.expected_completions` of ``data``.
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
        dps = [p for p in parents if self.kinds[p] == DISCRETE]
        cps = [p for p in parents if self.kinds[p] == NUMERIC]
        shape = [int(self.cards[p]) for p in dps]
        q = int(np.prod(shape)) if dps else 1

        def config(codes) -> int:
            return int(np.ravel_multi_index([int(codes[p]) for p in dps], shape)) if dps else 0

        if self.kinds[child] == DISCRETE:
            r = int(self.cards[child])
            counts = np.zeros((q, r))
            for codes, _, _, w in self.completed:
                counts[config(codes), int(codes[child])] += float(w.sum())
            nj = counts.sum(axis=1)
            ll = float(xlogy(counts, counts).sum() - xlogy(nj, nj).sum())
            return ll - self._penalty(q * (r - 1))
        cols = [self.npos[p] for p in cps] + [self.npos[child]]
        k = len(cols) + 1
        S = np.zeros((q, k, k))
        for codes, xhat, C, w in self.completed:
            z = np.column_stack([np.ones(xhat.shape[0]), xhat[:, cols]])
            Cz = np.zeros((k, k))
            Cz[1:, 1:] = C[np.ix_(cols, cols)]
            S[config(codes)] += (z * w[:, None]).T @ z + float(w.sum()) * Cz
        _, _, loglik, _ = regress(S, self.floors[child])
        return float(loglik.sum()) - self._penalty(q * (len(cps) + 2))


@dataclass
class StructuralEM:
    """What structural EM found: the DAG, its network fitted by EM, the observed-data log-likelihood, the
    rounds taken and notes."""

    dag: DAG
    model: HybridNet
    loglik: float
    rounds: int
    notes: list = field(default_factory=list)


def structural_em_hybrid(
    data: MixedData,
    score: str = "bic",
    max_parents: int | None = None,
    tabu_steps: int = 0,
    max_rounds: int = 10,
    progress=None,
) -> StructuralEM:
    """Structural EM: start from the available-case hill climb and its EM fit; then, each round, search from
    the current DAG on the expected scores of the current network's completions and refit the DAG found by
    EM, until the DAG no longer changes (or ``max_rounds``).

    Parameters
    ----------
    data : MixedData
    score : {"bic", "aic"}
    max_parents : int, optional
    tabu_steps : int
    max_rounds : int
    progress : callable, optional

    Returns
    -------
    StructuralEM

    References
    ----------
    Friedman, N. (1998), "The Bayesian structural EM algorithm", UAI.
    """
    dag = hybrid_hill_climb(data, score, max_parents, tabu_steps).dag
    model = em_hybrid(dag, data)
    rounds = 0
    for rounds in range(1, int(max_rounds) + 1):
        if progress is not None:
            progress(min(0.95, rounds / (max_rounds + 1)), f"structural EM: round {rounds}")
        completed, _ = expected_completions(model, model.align(data))
        scorer = ExpectedScorer(completed, data, score)
        found = hybrid_hill_climb(
            data, score, max_parents, tabu_steps, scorer=scorer, start=dag.parent_indices()
        ).dag
        if found == dag:
            break
        dag = found
        model = em_hybrid(dag, data)
    ll = float(model.fit_info["observed_loglik"])
    notes = [f"Structural EM: {rounds} round(s); parameters by EM over the missing cells."]
    return StructuralEM(dag, model, ll, rounds, notes)
