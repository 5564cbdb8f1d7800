"""Available-case local scores: every family counted on the rows where all of its variables are observed.

The ``available-case`` missing-data method of :mod:`bnfk_core.learning.incomplete` (no observed cell is thrown
away); the penalty uses the family's own row count n_f and the local score is scaled by N / n_f so that
families counted on different rows compare.

A family's counts are a table over its *members* (the child and its parents), kept by member set and counted
in batches (:class:`bnfk_core.learning.member_tables.MemberTables`): a search asks for the families one move
needs in one batch (``prefetch``, inherited from :class:`~bnfk_core.learning.scores.LocalScorer`), counted
here (:func:`bnfk_core.data.counts.family_tables`, the families spread over threads) or on the row blocks a
Dask cluster holds (a runner's ``family_counter``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np

from ..data.counts import code_matrix, counts_from_columns, dense_cells
from .exact import penalty_bounds
from .member_tables import MemberTables
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

    ``counter`` makes the function that counts a batch of families: ``counter(shifted, weights, cards)``,
    given the rows as :func:`bnfk_core.data.counts.shifted_matrix` codes and their weights (float64 or None),
    returns ``count(families) -> tables`` with the contract of :func:`bnfk_core.data.counts.family_tables` (a
    runner's ``family_counter``: the row blocks on Dask workers; the weights are integers, so the blocks'
    tables add up exactly).  None: :func:`~bnfk_core.data.counts.family_tables` in this process, on numba's
    threads.
    """

    def __init__(self, codes, cards, score: str = "bic", ess: float = 1.0, weights=None, counter=None):
        super().__init__(codes, cards, score, ess=ess, weights=weights)
        self.all_codes = np.asarray(codes)
        self.all_weights = None if weights is None else np.asarray(weights, dtype=np.int64)
        # every row (missing cells as -1) as the compiled counters read them: a family's pass skips the rows
        # where one of its members is missing, and its count table's sum is the family's (weighted) rows
        self._allmat = code_matrix(self.all_codes, self.cards)
        self._all_wf = None if self.all_weights is None else self.all_weights.astype(np.float64)
        self._n_cache: dict = {}
        self._last: tuple = (None, None)
        self._members = MemberTables(self._allmat, self.cards, self._all_wf, counter)
        observed = self._allmat >= 0
        self.rows_used = int(self.n_rows_total if observed.any(axis=1).all() else 0)
        self.note = (
            f"structure learned on all {self.n_rows_total} rows, every family on the rows where it is "
            f"observed (available case; {self.n} rows are complete)"
        )

    @property
    def observed(self) -> np.ndarray:
        return self.all_codes >= 0

    def family_rows(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        cols = [int(child)] + sorted(int(p) for p in parents)
        return (self.all_codes[:, cols] >= 0).all(axis=1)

    def _dense(self, key: tuple) -> bool:
        """Whether family ``key`` is counted as a dense table (:func:`~bnfk_core.data.counts.dense_cells`, and
        its table with the missing state within :data:`~bnfk_core.data.counts.DENSE_MAX_CELLS`)."""
        child, ps = key
        members = (child, *ps)
        return dense_cells(
            [self.cards[v] for v in members], int(self.all_codes.shape[0])
        ) and self._members.fits(members)

    def _counted(self, key: tuple) -> tuple:
        """(counts, n_f) of family ``key`` on the rows where it is observed (the last family's kept)."""
        if self._last[0] == key:
            return self._last[1]
        child, ps = key
        if self._dense(key):
            table = self._members.family(child, ps)  # the table of dense_family_counts, the same cells
            got = (self._from_dense(key, table), int(round(float(table.sum()))))
        else:
            rows = self.family_rows(child, ps)
            w = None if self.all_weights is None else self.all_weights[rows]
            col = lambda j: self.all_codes[rows, j].astype(np.int64)  # noqa: E731
            counts = counts_from_columns(
                col(child),
                int(self.cards[child]),
                [col(p) for p in ps],
                [int(self.cards[p]) for p in ps],
                int(rows.sum()),
                w,
            )
            got = (counts, int(rows.sum()) if w is None else int(w.sum()))
        self._last = (key, got)
        return got

    def family_n(self, child: int, parents: Sequence[int] = ()) -> int:
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        n = self._n_cache.get(key)
        if n is None:
            n = self._n_cache[key] = self._counted(key)[1]
        return n

    def penalty_array(self, child: int, others: Sequence[int]):
        """The exact search's bound of every parent mask: the scaled score (LL_f - pen(n_f)) N / n_f is at
        most
        -pen(N) N / N for BIC, AIC and qNML (pen(n) / n falls as n grows), so the bound on all N rows
        holds."""
        view = SimpleNamespace(score=self.score, cards=self.cards, n=self.n_rows_total)
        return penalty_bounds(view, child, others)

    def counts(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        """:func:`~bnfk_core.learning.scores.family_counts` on the family's rows (when the family's table is
        dense: the kept table of its members, transposed, or one compiled pass over every row, its missing
        cells one more state that the table leaves out)."""
        return self._counted((int(child), tuple(sorted(int(p) for p in parents))))[0]

    def dense_counts(self, child: int, parents: Sequence[int] = ()) -> np.ndarray | None:
        """The family's dense (q, r) table on the rows that observe it whole, parents sorted: the layout and
        the floats of :func:`bnfk_core.data.counts.dense_family_counts` (from the kept tables of its
        members, counted once for the search); None when the family is not counted densely."""
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        return self._members.family(*key) if self._dense(key) else None

    def _value(self, key: tuple, counts: np.ndarray) -> float:
        n_f = self.family_n(*key)
        if key[1] and n_f < MIN_FAMILY_ROWS:
            return -math.inf  # a parent set observed together with the child on too few rows to score
        return super()._value(key, counts) * (self.n_rows_total / n_f) if n_f else 0.0


# ---------------------------------------------------------------------- expected counts (exact E-step)
