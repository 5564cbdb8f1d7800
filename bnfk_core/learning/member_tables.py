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
        self.summed = 0  # member sets summed out of a kept table one member larger (no pass)
        # a table is summed out of a larger one only where that gives the very floats of a pass: whole counts
        # (sums of integers below 2**53 are exact in any order) and a dropped column with no missing cell
        w = None if weights is None else np.asarray(weights, dtype=float)
        whole = w is None or bool(np.all(w == np.round(w)) and np.abs(w).sum() < 2.0**53)
        self._droppable = np.all(np.asarray(colmat) >= 0, axis=1) if whole and np.ndim(colmat) == 2 else None
        self._larger: dict = {}  # sorted members -> a kept member set one droppable member larger

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
        """Count, in one batch, those of ``member_sets`` (sorted tuples) whose table is not kept; a set whose
        members plus one complete column are kept is summed out of that table instead (the same floats)."""
        todo = list(dict.fromkeys(m for m in member_sets if m not in self._tables))  # first seen first
        if not todo:
            return
        summed = {}
        if self._larger:
            for m in todo:
                big = self._larger.get(m)
                if big is not None and big in self._tables:
                    drop = next(i for i, b in enumerate(big) if b not in m)
                    summed[m] = self._tables[big].sum(axis=drop)
            if summed:
                todo = [m for m in todo if m not in summed]
                self.summed += len(summed)
        tables = self._count(todo) if todo else []
        size = sum(t.size for t in tables) + sum(t.size for t in summed.values())
        if self._kept + size > TABLES_MAX_CELLS:
            self._tables.clear()
            self._larger.clear()
            self._kept = 0
        self._keep(zip(todo, tables))
        self._keep(summed.items())
        self._kept += size

    def _keep(self, pairs) -> None:
        larger, droppable = self._larger, self._droppable
        for members, table in pairs:
            self._tables[members] = table
            if droppable is not None and len(members) > 1:
                for i, d in enumerate(members):
                    if droppable[d]:
                        larger.setdefault(members[:i] + members[i + 1 :], members)

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
