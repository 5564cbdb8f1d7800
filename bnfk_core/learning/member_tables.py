"""Count tables kept by member set, counted in batches: what a search's local scores read.

A family's counts are a table over its *members* (the child and its parents), so the families with the same
members -- (y, {a, b}), (a, {y, b}) and (b, {a, y}) -- read one table, transposed.  A search asks for every
family one move needs in one batch (``prefetch``); the batch is counted by a *counter*, by default
:func:`bnfk_core.data.counts.family_tables` (one compiled pass over the rows a family, the families spread
over numba's threads), or on the row blocks a Dask cluster holds (a runner's ``family_counter``).  Each cell
is the sum of its rows' weights in row order, so a table read here has the very floats of
:func:`bnfk_core.data.counts.dense_family_counts` of the same family.

Used by :class:`bnfk_core.learning.available_case.AvailableCaseScorer` (the observed rows, missing cells one
more state that the tables leave out) and :class:`bnfk_core.learning.incomplete.ExpectedScorer` (structural
EM's expected rows, complete).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data.counts import DENSE_MAX_CELLS, family_tables, shifted_matrix, table_cells

__all__ = ["MemberTables", "TABLES_MAX_CELLS"]

#: the cells of count tables kept by member set (8 bytes each: 256 MiB); beyond, the store starts afresh
TABLES_MAX_CELLS = 1 << 25


class MemberTables:
    """The count tables of member sets over one code matrix, counted in batches and kept.

    Parameters
    ----------
    colmat : (n, N) int array
        The rows as :func:`bnfk_core.data.counts.code_matrix` holds them (missing cells ``-1``).
    cards : sequence of int
        Cardinality r_j of every column.
    weights : (N,) float64 array or None
        Every row's weight (1 without).
    counter : callable or None
        ``counter(shifted, weights, cards)`` returns ``count(member_sets) -> tables`` with the contract of
        :func:`bnfk_core.data.counts.family_tables`; None: that function in this process.
    """

    def __init__(
        self, colmat: np.ndarray, cards: Sequence[int], weights: np.ndarray | None = None, counter=None
    ):
        self._colmat, self.cards, self._wf = colmat, [int(r) for r in cards], weights
        self._counter, self._ready = counter, False
        self._tables: dict = {}  # sorted members -> their count table (axes in that order)
        self._kept = 0  # cells in _tables
        self.passes = 0  # member sets counted (one pass over the rows each)

    def fits(self, members: Sequence[int]) -> bool:
        """Whether the table of ``members`` (with the missing state the counter's codes add) is small enough
        to count (:data:`bnfk_core.data.counts.DENSE_MAX_CELLS`)."""
        return table_cells(self.cards, members) <= DENSE_MAX_CELLS

    def _count(self, member_sets: list) -> list:
        if not self._ready:
            shifted = shifted_matrix(self._colmat, self.cards)
            if self._counter is None:
                self._counter = lambda fams: family_tables(shifted, fams, self.cards, self._wf)
            else:
                self._counter = self._counter(shifted, self._wf, self.cards)
            self._ready = True
        self.passes += len(member_sets)
        return self._counter([list(m) for m in member_sets])

    def prefetch(self, member_sets) -> None:
        """Count, in one batch, those of ``member_sets`` (sorted tuples) whose table is not kept."""
        todo = list(dict.fromkeys(m for m in member_sets if m not in self._tables))  # first seen first
        if not todo:
            return
        tables = self._count(todo)
        size = sum(t.size for t in tables)
        if self._kept + size > TABLES_MAX_CELLS:
            self._tables.clear()
            self._kept = 0
        self._tables.update(zip(todo, tables))
        self._kept += size

    def family(self, child: int, parents: Sequence[int]) -> np.ndarray:
        """The dense (q, r) count table of family (``child``, sorted ``parents``): row j the parents'
        mixed-radix configuration (the first parent most significant), column k the child's state -- the
        layout and the floats of :func:`bnfk_core.data.counts.dense_family_counts`."""
        members = tuple(sorted((int(child), *(int(p) for p in parents))))
        if members not in self._tables:
            self.prefetch([members])
        full = self._tables[members]
        table = full.transpose([members.index(int(p)) for p in parents] + [members.index(int(child))])
        return table.reshape(-1, self.cards[int(child)])
