"""Counting families: the counts N_ijk every score and every CPT estimate starts from.

Parent configurations are mixed-radix codes (re-compressed with ``np.unique`` before they could overflow) and
family counts one ``np.bincount``; only observed parent configurations are materialised, so a family with 20
parents costs O(N), not prod r_p.  Pure counting on code matrices (``-1`` = missing): it sits on the data
floor, below the model (:mod:`bnfk_core.network.model`) and the scores (:mod:`bnfk_core.learning.scores`) that
use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "THREADS_MIN_PASSES",
    "NUMPY_MAX_ROWS",
    "complete_codes",
    "config_index",
    "weighted_bincount",
    "counts_from_columns",
    "family_counts",
    "merge_rows",
    "code_matrix",
    "dense_cells",
    "dense_family_counts",
    "DENSE_MAX_CELLS",
    "shifted_matrix",
    "table_cells",
    "family_tables",
]


def complete_codes(codes: np.ndarray) -> np.ndarray:
    """The rows of ``codes`` without a missing cell (``-1``)."""
    codes = np.asarray(codes)
    return codes[~(codes < 0).any(axis=1)]


def config_index(cols: Sequence[np.ndarray], cards: Sequence[int], n_rows: int) -> tuple[np.ndarray, int]:
    """Mixed-radix index of the joint configuration of ``cols`` and an upper bound of its range.

    The index is re-compressed to the observed configurations whenever the radix product would
    exceed 2**31, so it never overflows however many columns are combined.
    """
    if not cols:
        return np.zeros(n_rows, dtype=np.int64), 1
    idx = cols[0].astype(np.int64, copy=True)
    size = int(cards[0])
    for col, r in zip(cols[1:], cards[1:]):
        r = int(r)
        if size * r > 2**31:
            _, idx = np.unique(idx, return_inverse=True)
            idx = idx.astype(np.int64).ravel()
            size = int(idx.max()) + 1 if idx.size else 1
        idx = idx * r + col
        size *= r
    return idx, size


def weighted_bincount(idx: np.ndarray, weights: np.ndarray | None, minlength: int) -> np.ndarray:
    """``np.bincount`` as int64, optionally with integer row ``weights`` (multiplicities).

    With weights the bins are summed in float64 -- exact for integer sums below 2**53 -- and turned
    back into int64, so counts over distinct rows with multiplicities are the very same array as the
    counts over the plain rows (:mod:`bnfk_core.data.stream`).  Float ``weights`` (the expected counts of
    :mod:`bnfk_core.learning.incomplete`) give float counts, unrounded."""
    if weights is None:
        return np.bincount(idx, minlength=minlength)
    if np.asarray(weights).dtype.kind == "f":
        return np.bincount(idx, weights=weights, minlength=minlength)
    return np.rint(np.bincount(idx, weights=weights, minlength=minlength)).astype(np.int64)


def counts_from_columns(
    child_col: np.ndarray, r: int, parent_cols, parent_cards, n_rows: int, weights: np.ndarray | None = None
) -> np.ndarray:
    """Family counts; ``n_rows`` is the number of rows given (distinct rows when ``weights`` is set),
    which only decides between a dense and a compressed count, never the result."""
    pidx, size = config_index(parent_cols, parent_cards, n_rows)
    if size * r <= max(4 * n_rows, 1024):
        counts = weighted_bincount(pidx * r + child_col, weights, size * r).reshape(size, r)
        return counts[counts.sum(axis=1) > 0]
    _, inv = np.unique(pidx, return_inverse=True)
    inv = inv.ravel()
    j = int(inv.max()) + 1 if inv.size else 0
    return weighted_bincount(inv * r + child_col, weights, j * r).reshape(j, r)


def family_counts(
    codes: np.ndarray,
    cards: Sequence[int],
    child: int,
    parents: Sequence[int] = (),
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Counts N_ijk of a family over the rows where the child and all parents are observed.

    Parameters
    ----------
    codes : int array (N, n), ``-1`` = missing
    cards : cardinality of every column
    child : column index of the child
    parents : column indices of the parents
    weights : optional int array (N,), the multiplicity of every row (distinct rows with counts)

    Returns
    -------
    counts : int array (J, r_child)
        One row per *observed* parent configuration j (in increasing mixed-radix order of the
        parents, first parent most significant); unobserved configurations are left out.
    """
    codes = np.asarray(codes)
    cols = [int(child)] + [int(p) for p in parents]
    rows = ~(codes[:, cols] < 0).any(axis=1)
    sub = codes[rows]
    w = None if weights is None else np.asarray(weights, dtype=np.int64)[rows]
    parents = [int(p) for p in parents]
    return counts_from_columns(
        sub[:, child].astype(np.int64),
        int(cards[child]),
        [sub[:, p].astype(np.int64) for p in parents],
        [int(cards[p]) for p in parents],
        sub.shape[0],
        w,
    )


def merge_rows(table: np.ndarray, weight: np.ndarray, cards: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Equal rows of ``table`` merged into one with the sum of their weights (rows in sorted order)."""
    if math.prod(int(c) for c in cards) < 2**62:
        key = np.ravel_multi_index(
            tuple(table[:, j].astype(np.int64) for j in range(table.shape[1])), tuple(int(c) for c in cards)
        )
        uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
        return table[first], np.bincount(inv.ravel(), weights=weight, minlength=uk.size)
    uniq, inv = np.unique(table, axis=0, return_inverse=True)
    return uniq, np.bincount(inv.ravel(), weights=weight, minlength=uniq.shape[0])


# ---------------------------------------------------------------------- compiled counting over a code matrix
#: the largest dense count table (cells) the compiled counters fill; a family beyond it is counted by
#: :func:`counts_from_columns` (``np.unique`` over its observed configurations)
DENSE_MAX_CELLS = 1 << 22


def code_matrix(codes: np.ndarray, cards: Sequence[int]) -> np.ndarray:
    """``codes`` (N, n) as the compiled counters read them: one C-contiguous row per column (n, N), in the
    narrowest signed integer type holding every code and ``-1`` (1 byte a cell for up to 127 states)."""
    top = max((int(c) for c in cards), default=1)
    ctype = np.int8 if top <= 127 else np.int16 if top <= 32767 else np.int32 if top < 2**31 else np.int64
    return np.ascontiguousarray(np.asarray(codes).T, dtype=ctype)


def dense_cells(cards: Sequence[int], n_rows: int) -> bool:
    """Whether a family of these cardinalities is counted densely: the rule of :func:`counts_from_columns`
    (at most ``max(4 n_rows, 1024)`` cells) within :data:`DENSE_MAX_CELLS`."""
    cells = math.prod(int(c) for c in cards)
    return cells <= min(max(4 * int(n_rows), 1024), DENSE_MAX_CELLS)


def dense_family_counts(
    cols: np.ndarray,
    child: int,
    parents: Sequence[int],
    cards: Sequence[int],
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """The dense (q, r) count table of a family over the rows of ``cols`` (:func:`code_matrix`) where the
    child and every parent are observed: row j is the parents' mixed-radix configuration (``parents`` in the
    given order, the first most significant), column k the child's state.  One compiled pass, or
    ``np.bincount`` over at most :data:`NUMPY_MAX_ROWS` rows (nothing to compile for a small table); each cell
    is the sum of its rows' ``weights`` (1 without) in row order -- the very floats of ``np.bincount``
    (:func:`counts_from_columns`)."""
    fam = np.array([int(p) for p in parents] + [int(child)], dtype=np.int64)
    radix = np.array([int(cards[v]) for v in fam], dtype=np.int64)
    w = np.zeros(0) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    cells = int(np.prod(radix))
    if cols.shape[1] <= NUMPY_MAX_ROWS:
        idx = np.zeros(cols.shape[1], dtype=np.int64)
        seen = np.ones(cols.shape[1], dtype=bool)
        for v, r in zip(fam, radix):
            col = cols[v]
            seen &= col >= 0
            idx = idx * int(r) + col
        table = np.bincount(idx[seen], weights=w[seen] if w.size else None, minlength=cells)
        return table.astype(np.float64).reshape(-1, int(cards[child]))
    from .compiled_counts import dense_counts

    out = np.zeros(cells, dtype=np.float64)
    dense_counts(cols, fam, radix, w, out)
    return out.reshape(-1, int(cards[child]))


# ---------------------------------------------------------------------- many families in one call (the
# search's batches)
def shifted_matrix(cols: np.ndarray, cards: Sequence[int]) -> np.ndarray:
    """A :func:`code_matrix` ``cols`` (n, N) with every missing cell (``-1``) coded as its column's
    cardinality r_j (one extra state): unsigned, 1 byte a cell while every r_j < 255.  A family's table over
    these codes has one more state per member; its cells with no extra state are the family's counts on the
    rows observing it whole, so a pass needs no test for a missing member (:func:`family_tables`)."""
    top = max((int(c) for c in cards), default=1)
    ctype = np.uint8 if top < 255 else np.uint16 if top < 65535 else np.int64
    cols = np.asarray(cols)
    # one column at a time, in the narrow type: no full-size int64 temporary (8 bytes a cell: 1.3 GB for
    # 9.3 million rows of 17 columns)
    out = np.empty(cols.shape, dtype=ctype)
    for j in range(cols.shape[0]):
        col = cols[j]
        np.copyto(out[j], col, casting="unsafe")
        out[j][col < 0] = int(cards[j])
    return out


def table_cells(cards: Sequence[int], members: Sequence[int]) -> int:
    """The cells of a family's table over :func:`shifted_matrix` codes: prod (r_j + 1) over its
    ``members``."""
    return math.prod(int(cards[m]) + 1 for m in members)


#: a batch of families with fewer row passes than this (rows x families) runs on one thread: two threads on
#: such batches cost up to twice the CPU for little wall time (numba's OpenMP threads spin between regions;
#: the measurements are in docs/LARGE_FILES.md)
THREADS_MIN_PASSES = 1 << 22


#: a family whose table with one extra state a member would have more cells than this, and more than twice
#: its cells without them, is counted without them (:func:`bnfk_core.data.compiled_counts.one_compact`): 14
#: binary members make 4.8 million cells with the extra states (38 MB to zero and gather from), 16,384 without
COMPACT_MIN_CELLS = 1 << 16


#: a batch over at most this many rows is counted by numpy (:func:`_numpy_tables`), as fast as the compiled
#: pass on such tables -- the whole default search in CPU-s, compiled against numpy (the same DAGs and
#: scores):
#: house_votes_84 (435 rows) 0.17 / 0.17, ALARM 2,000 rows 0.38 / 0.39 -- and nothing is compiled for it on a
#: fresh cache.  Beyond, the compiled pass wins as rows and members grow: mushroom (8,124 rows) 1.15 / 1.19,
#: win95pts 5,000 rows (families of up to 14 members) 6.7-7.2 / 7.5-7.9
NUMPY_MAX_ROWS = 2_000


def _numpy_tables(shifted, members, offs, radix, compact, w, out, out_offs) -> None:
    """:func:`bnfk_core.data.compiled_counts.count_batch` by ``np.bincount``, one family at a time: a
    family's cells get its rows' weights added in row order, as the compiled pass adds them (the very
    floats).  A compact family's radix is its members' r_j, so a code r_j there (missing) leaves its row
    out."""
    for f in range(offs.shape[0] - 1):
        mem, rad = members[offs[f] : offs[f + 1]], radix[offs[f] : offs[f + 1]]
        idx = shifted[mem[0]].astype(np.int64)
        keep = idx < rad[0] if compact[f] else None
        for m, r in zip(mem[1:], rad[1:]):
            col = shifted[m]
            idx = idx * int(r) + col
            if keep is not None:
                keep &= col < r
        cells = out[out_offs[f] : out_offs[f + 1]]
        if keep is None:
            cells[:] = np.bincount(idx, weights=w, minlength=cells.size)
        else:
            cells[:] = np.bincount(idx[keep], weights=w[keep], minlength=cells.size)


def family_tables(
    shifted: np.ndarray,
    families: Sequence[Sequence[int]],
    cards: Sequence[int],
    weights: np.ndarray | None = None,
    threads: int | None = None,
) -> list[np.ndarray]:
    """The count tables of several families, one compiled pass over the rows per family, the families spread
    over ``threads`` threads (numba's when None and the batch is large); a batch over at most
    :data:`NUMPY_MAX_ROWS` rows is counted by ``np.bincount`` instead (the same floats).  A family whose table
    with the extra states would be large (:data:`COMPACT_MIN_CELLS`) is counted without them, testing every
    row for a missing member (the same sums in the same order).

    Parameters
    ----------
    shifted : (n, N) codes of :func:`shifted_matrix` (missing = the column's cardinality)
    families : each family's members (column indices), in the order of the table's axes
    cards : cardinality r_j of every column
    weights : optional (N,) weight of every row (float64; 1 without)
    threads : how many threads share the families (the result does not depend on it); None: numba's, or one
    for a
        batch of fewer than :data:`THREADS_MIN_PASSES` row passes

    Returns
    -------
    tables : one float64 array per family, of shape ``[cards[m] for m in members]``: cell (s_1, ..., s_k) is
    the
        sum of the weights of the rows where member m takes state s_m for every m (rows missing a member are
        left out), added in row order -- the very floats of :func:`dense_family_counts` of the same family,
        whatever the batch or the threads (every family is one thread's loop over the rows).
    """
    fams = [[int(m) for m in f] for f in families]
    if not fams:
        return []
    members = np.array([m for f in fams for m in f], dtype=np.int64)
    offs = np.cumsum([0] + [len(f) for f in fams]).astype(np.int64)
    shifted_sizes = [table_cells(cards, f) for f in fams]
    sizes = [math.prod(int(cards[m]) for m in f) for f in fams]
    compact = np.array(
        [big > COMPACT_MIN_CELLS and big > 2 * small for big, small in zip(shifted_sizes, sizes)],
        dtype=np.bool_,
    )
    radix = np.array(
        [int(cards[m]) + (0 if c else 1) for f, c in zip(fams, compact) for m in f], dtype=np.int64
    )
    sizes = [small if c else big for big, small, c in zip(shifted_sizes, sizes, compact)]
    out_offs = np.cumsum([0] + sizes).astype(np.int64)
    out = np.zeros(int(out_offs[-1]), dtype=np.float64)
    w = (
        np.ones(shifted.shape[1]) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    )  # 1.0 a row without weights: the same floats
    if int(shifted.shape[1]) <= NUMPY_MAX_ROWS:
        _numpy_tables(shifted, members, offs, radix, compact, w, out, out_offs)
    else:
        from .compiled_counts import count_batch

        if threads is None and int(shifted.shape[1]) * len(fams) < THREADS_MIN_PASSES:
            threads = 1
        count_batch(shifted, members, offs, radix, compact, w, out, out_offs, threads)
    tables = []
    for f, c, a, b in zip(fams, compact, out_offs[:-1], out_offs[1:]):
        if c:
            tables.append(out[a:b].reshape([int(cards[m]) for m in f]).copy())
            continue
        full = out[a:b].reshape([int(cards[m]) + 1 for m in f])
        tables.append(np.ascontiguousarray(full[tuple(slice(0, int(cards[m])) for m in f)]))
    return tables
