"""Counting families: the counts N_ijk every score and every CPT estimate starts from.

Parent configurations are mixed-radix codes (re-compressed with ``np.unique`` before they could overflow) and
family counts one ``np.bincount``; only observed parent configurations are materialised, so a family with 20
parents costs O(N), not prod r_p.  Pure counting on code matrices (``-1`` = missing): it sits on the data floor,
below the model (:mod:`bnfk_core.network.model`) and the scores (:mod:`bnfk_core.learning.scores`) that use it.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["complete_codes", "config_index", "weighted_bincount", "counts_from_columns", "family_counts", "merge_rows"]


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
        if size * r > 2 ** 31:
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


def counts_from_columns(child_col: np.ndarray, r: int, parent_cols, parent_cards, n_rows: int,
                        weights: np.ndarray | None = None) -> np.ndarray:
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


def family_counts(codes: np.ndarray, cards: Sequence[int], child: int, parents: Sequence[int] = (),
                  weights: np.ndarray | None = None) -> np.ndarray:
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
    return counts_from_columns(sub[:, child].astype(np.int64), int(cards[child]),
                               [sub[:, p].astype(np.int64) for p in parents],
                               [int(cards[p]) for p in parents], sub.shape[0], w)


def merge_rows(table: np.ndarray, weight: np.ndarray, cards: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Equal rows of ``table`` merged into one with the sum of their weights (rows in sorted order)."""
    if math.prod(int(c) for c in cards) < 2 ** 62:
        key = np.ravel_multi_index(tuple(table[:, j].astype(np.int64) for j in range(table.shape[1])),
                                   tuple(int(c) for c in cards))
        uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
        return table[first], np.bincount(inv.ravel(), weights=weight, minlength=uk.size)
    uniq, inv = np.unique(table, axis=0, return_inverse=True)
    return uniq, np.bincount(inv.ravel(), weights=weight, minlength=uniq.shape[0])
