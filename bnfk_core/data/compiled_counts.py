"""The compiled counting passes of :mod:`bnfk_core.data.counts`: numba loops over code matrices.

They live apart so that importing the counting functions does not import numba (0.2 CPU s): a process that
counts only small batches (numpy's, :data:`~bnfk_core.data.counts.NUMPY_MAX_ROWS`) or none at all -- a Dask
client, whose workers count -- never loads it.  :mod:`bnfk_core.data.counts` imports this module when a pass
needs it.
"""

from __future__ import annotations

import numba
import numpy as np

from ..compiled import one_thread_twin

__all__ = [
    "dense_counts",
    "one_table",
    "one_compact",
    "family_tables_parallel",
    "family_tables_serial",
    "count_batch",
    "warm_up",
]


@numba.njit(cache=True, nogil=True)
def dense_counts(cols, fam, radix, weights, out):  # pragma: no cover - compiled
    """One family's dense table (:func:`bnfk_core.data.counts.dense_family_counts`) added into ``out``."""
    n_rows = cols.shape[1]
    k = fam.shape[0]
    unit = weights.shape[0] == 0
    for n in range(n_rows):
        idx = 0
        for j in range(k):
            c = cols[fam[j], n]
            if c < 0:
                idx = -1
                break
            idx = idx * radix[j] + c
        if idx >= 0:
            out[idx] += 1.0 if unit else weights[n]


@numba.njit(cache=True, nogil=True)
def one_table(cols, mem, radix, w, out):  # pragma: no cover - compiled
    """One family's table over shifted codes (a missing member is one more state) added into ``out``."""
    # one family's pass: a loop per number of members over 1-D columns (the index arithmetic unrolled, about
    # 5x faster than a loop over the members), a general loop beyond six
    k = mem.shape[0]
    n_rows = cols.shape[1]
    c0 = cols[mem[0]]
    if k == 1:
        for n in range(n_rows):
            out[c0[n]] += w[n]
        return
    c1 = cols[mem[1]]
    r1 = radix[1]
    if k == 2:
        for n in range(n_rows):
            out[c0[n] * r1 + c1[n]] += w[n]
        return
    c2 = cols[mem[2]]
    r2 = radix[2]
    if k == 3:
        for n in range(n_rows):
            out[(c0[n] * r1 + c1[n]) * r2 + c2[n]] += w[n]
        return
    c3 = cols[mem[3]]
    r3 = radix[3]
    if k == 4:
        for n in range(n_rows):
            out[((c0[n] * r1 + c1[n]) * r2 + c2[n]) * r3 + c3[n]] += w[n]
        return
    c4 = cols[mem[4]]
    r4 = radix[4]
    if k == 5:
        for n in range(n_rows):
            out[(((c0[n] * r1 + c1[n]) * r2 + c2[n]) * r3 + c3[n]) * r4 + c4[n]] += w[n]
        return
    c5 = cols[mem[5]]
    r5 = radix[5]
    if k == 6:
        for n in range(n_rows):
            out[((((c0[n] * r1 + c1[n]) * r2 + c2[n]) * r3 + c3[n]) * r4 + c4[n]) * r5 + c5[n]] += w[n]
        return
    for n in range(n_rows):
        idx = 0
        for j in range(k):
            idx = idx * radix[j] + cols[mem[j], n]
        out[idx] += w[n]


@numba.njit(cache=True, nogil=True)
def one_compact(cols, mem, cards, w, out):  # pragma: no cover - compiled
    """One family's table without the extra states (rows missing a member left out) added into ``out``."""
    # one family's pass into its table without the extra states (``cards`` the members' r_j): a row with a
    # missing member (code r_j) is skipped -- for a table whose extra states would make it far larger
    k = mem.shape[0]
    for n in range(cols.shape[1]):
        idx = 0
        for j in range(k):
            c = cols[mem[j], n]
            if c >= cards[j]:
                idx = -1
                break
            idx = idx * cards[j] + c
        if idx >= 0:
            out[idx] += w[n]


@numba.njit(cache=True, nogil=True, parallel=True)
def family_tables_parallel(
    cols, members, offs, radix, compact, w, out, out_offs
):  # pragma: no cover - compiled
    for f in numba.prange(offs.shape[0] - 1):
        a, b = offs[f], offs[f + 1]
        if compact[f]:
            one_compact(cols, members[a:b], radix[a:b], w, out[out_offs[f] : out_offs[f + 1]])
        else:
            one_table(cols, members[a:b], radix[a:b], w, out[out_offs[f] : out_offs[f + 1]])


#: the batch in one thread: no parallel region to compile (about 1 s less on a fresh cache) or to start
family_tables_serial = one_thread_twin(family_tables_parallel, "family_tables_serial", nogil=True)


def warm_up() -> None:
    """Run both compiled passes of :func:`count_batch` (the parallel one and its one-thread twin) on a small
    batch, so that numba's cache holds them before a batch over more than
    :data:`~bnfk_core.data.counts.NUMPY_MAX_ROWS` rows needs them (smaller batches are numpy's)."""
    shifted = np.zeros((2, 3), dtype=np.uint8)  # the codes' type of columns with fewer than 255 states
    members, offs = np.array([0, 1, 1], dtype=np.int64), np.array([0, 2, 3], dtype=np.int64)
    radix, compact = np.array([2, 2, 2], dtype=np.int64), np.array([False, True])
    out_offs = np.array([0, 4, 6], dtype=np.int64)
    for kernel in (family_tables_parallel, family_tables_serial):
        kernel(shifted, members, offs, radix, compact, np.ones(3), np.zeros(6), out_offs)


def count_batch(shifted, members, offs, radix, compact, w, out, out_offs, threads: int | None = None) -> None:
    """Every family of a batch counted into ``out`` (the arrays of
    :func:`bnfk_core.data.counts.family_tables`), the families spread over ``threads`` threads (numba's
    when None; at most numba's thread count and the families): one thread runs
    :func:`family_tables_serial`, no parallel region."""
    old = numba.get_num_threads()
    threads = max(1, min(int(threads or old), numba.config.NUMBA_NUM_THREADS, offs.shape[0] - 1))
    if threads == 1:
        family_tables_serial(shifted, members, offs, radix, compact, w, out, out_offs)
        return
    numba.set_num_threads(threads)
    try:
        family_tables_parallel(shifted, members, offs, radix, compact, w, out, out_offs)
    finally:
        numba.set_num_threads(old)
