"""Available-case local scores: every family counted on the rows where all of its variables are observed.

The ``available-case`` missing-data method of :mod:`bnfk_core.learning.incomplete` (no observed cell is thrown
away); the penalty uses the family's own row count n_f and the local score is scaled by N / n_f so that families
counted on different rows compare.
"""
from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Sequence

import numpy as np

from ..data.counts import counts_from_columns
from .exact import penalty_bounds
from .scores import LocalScorer

__all__ = ["AvailableCaseScorer", "MIN_FAMILY_ROWS"]

#: available case: a family with parents needs this many rows observing it (below, its scaled score
#: would not be bounded by the penalty on all rows: log n_f / n_f only falls from n_f = 3 on)
MIN_FAMILY_ROWS = 3


class AvailableCaseScorer(LocalScorer):
    """Local scores on the rows where the family is observed (available-case analysis).

    ``counts(child, parents)`` are :func:`bnfk_core.learning.scores.family_counts` over those rows and the
    penalty of the score uses their (weighted) number n_f; the local score is multiplied by N / n_f
    (N = all rows) so that families counted on different rows compare (module docstring).  ``n`` stays
    the number of complete rows; the exact search's penalty bound is :meth:`penalty_array`.  A family
    with parents observed on fewer than :data:`MIN_FAMILY_ROWS` rows scores -inf (never chosen).
    Chow-Liu, TAN and KDB read mutual information on the complete rows.
    """

    def __init__(self, codes, cards, score: str = "bic", ess: float = 1.0, weights=None):
        super().__init__(codes, cards, score, ess=ess, weights=weights)
        self.all_codes = np.asarray(codes)
        self.all_weights = None if weights is None else np.asarray(weights, dtype=np.int64)
        self.observed = self.all_codes >= 0
        self._n_cache: dict = {}
        # the columns as int64 (as family_counts reads them) and the last family's rows, shared by family_n and counts
        self._cols64 = [np.ascontiguousarray(self.all_codes[:, j], dtype=np.int64) for j in range(self.all_codes.shape[1])]
        self._last_rows: tuple = (None, None)
        self.rows_used = int(self.n_rows_total if self.observed.any(axis=0).all() else 0)
        self.note = (f"structure learned on all {self.n_rows_total} rows, every family on the rows where it is "
                     f"observed (available case; {self.n} rows are complete)")

    def family_rows(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        cols = [int(child)] + sorted(int(p) for p in parents)
        return self.observed[:, cols].all(axis=1)

    def family_n(self, child: int, parents: Sequence[int] = ()) -> int:
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        n = self._n_cache.get(key)
        if n is None:
            rows = self.family_rows(child, parents)
            self._last_rows = (key, rows)
            n = int(rows.sum()) if self.all_weights is None else int(self.all_weights[rows].sum())
            self._n_cache[key] = n
        return n

    def penalty_array(self, child: int, others: Sequence[int]):
        """The exact search's bound of every parent mask: the scaled score (LL_f - pen(n_f)) N / n_f is at most
        -pen(N) N / N for BIC, AIC and qNML (pen(n) / n falls as n grows), so the bound on all N rows holds."""
        view = SimpleNamespace(score=self.score, cards=self.cards, n=self.n_rows_total)
        return penalty_bounds(view, child, others)

    def counts(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        """:func:`~bnfk_core.learning.scores.family_counts` on the family's rows: the same arrays, but only the family's
        columns are cut to those rows (and the rows' mask of :meth:`family_n` is reused)."""
        ps = sorted(int(p) for p in parents)
        key = (int(child), tuple(ps))
        rows = self._last_rows[1] if self._last_rows[0] == key else self.family_rows(child, ps)
        w = None if self.all_weights is None else self.all_weights[rows]
        return counts_from_columns(self._cols64[key[0]][rows], int(self.cards[key[0]]),
                                   [self._cols64[p][rows] for p in ps], [int(self.cards[p]) for p in ps],
                                   int(rows.sum()), w)

    def __call__(self, child: int, parents: Sequence[int] = ()) -> float:
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        val = self.cache.get(key)
        if val is None:
            n_f = self.family_n(*key)
            if key[1] and n_f < MIN_FAMILY_ROWS:
                val = -math.inf  # a parent set observed together with the child on too few rows to score
            else:
                val = super().__call__(*key) * (self.n_rows_total / n_f) if n_f else 0.0
            self.cache[key] = val
        return val


# ---------------------------------------------------------------------- expected counts (exact E-step)
