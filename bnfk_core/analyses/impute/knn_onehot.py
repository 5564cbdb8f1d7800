"""k-nearest-neighbour imputation on one-hot codes in numpy: scikit-learn's ``KNNImputer`` (uniform weights,
NaN-Euclidean distance) without importing scikit-learn (~0.9 CPU-s), for the stacked default imputer.

On one-hot codes the NaN-Euclidean distance of rows a and b is

    d(a, b)^2 = (C / C_ab) * 2 * (number of variables observed in both rows with different states),

C the number of one-hot columns, C_ab those observed in both rows (the sum of the cardinalities of the
variables observed in both); undefined when C_ab = 0 (such a row is never a donor).  A missing cell of
variable i takes the mean one-hot block of the
``k`` rows nearest to its row among the rows observing i (fewer when fewer observe it; rows at an undefined
distance are not counted), i.e. their vote shares; a row with no donor at a defined distance gets the column's
relative frequencies (``KNNImputer``'s column mean).  Donors tied at the k-th distance share the votes left
after the nearer ones equally (scikit-learn's ``argpartition`` picks some of them; Hamming-like distances tie
often), so the result does not depend on the row order.  Every pairwise count is one matrix product of 0/1
matrices.
"""

from __future__ import annotations

import time

import numpy as np

from ...data.encoding import one_hot, state_offsets
from .core import Imputation

__all__ = ["knn_onehot_cells", "impute_knn_numpy"]


#: entries of one block of the (receiving rows x rows) distance matrix (memory ~ 4 matrices of 8 bytes each)
BLOCK_ENTRIES = 4_000_000


def knn_onehot_cells(codes: np.ndarray, cards, k: int = 5, block_entries: int = BLOCK_ENTRIES) -> dict:
    """``{variable: (rows, vote shares)}`` for every missing cell of ``codes`` (-1 = missing; module
    docstring).

    Distances are computed for blocks of the rows with a missing cell against every row (memory bounded by
    ``block_entries``)."""
    codes = np.asarray(codes)
    cards = np.asarray(cards, dtype=np.int64)
    N, n = codes.shape
    # 0/1 codes as integers: the three products below are exact counts either way, and integer products stay
    # off the multi-threaded BLAS, whose idle worker spins cost more CPU than these small products
    obs = (codes >= 0).astype(np.int32)  # (N, n)
    offs = state_offsets(cards)
    X = one_hot(codes, cards, dtype=np.int32)
    wobs = obs * cards.astype(np.int32)
    freq = []
    for i in range(n):
        f = np.bincount(codes[codes[:, i] >= 0, i], minlength=int(cards[i])).astype(float)
        freq.append(f / f.sum() if f.sum() > 0 else np.full(int(cards[i]), 1.0 / cards[i]))
    parts: dict = {i: ([], []) for i in range(n)}
    receivers = np.flatnonzero((codes < 0).any(axis=1))
    step = max(1, int(block_entries) // max(N, 1))
    for b0 in range(0, receivers.size, step):
        R = receivers[b0 : b0 + step]
        both = obs[R] @ obs.T  # variables observed in both rows
        same = X[R] @ X.T  # ... and equal
        cols = wobs[R] @ obs.T  # one-hot columns observed in both
        with np.errstate(divide="ignore", invalid="ignore"):
            d2 = np.where(cols > 0, offs[-1] / cols * 2.0 * (both - same), np.inf)
        for i in range(n):
            sel = np.flatnonzero(codes[R, i] < 0)
            if not sel.size:
                continue
            donors = np.flatnonzero(codes[:, i] >= 0)
            r_i = int(cards[i])
            P = np.tile(freq[i], (sel.size, 1))
            if donors.size:
                D = d2[np.ix_(sel, donors)]
                kk = min(int(k), donors.size)
                kth = np.partition(D, kk - 1, axis=1)[:, kk - 1 : kk]  # the k-th smallest distance
                below = D < kth
                tied = (D == kth) & np.isfinite(kth)
                # the k - #below remaining votes shared by the donors tied at the k-th distance
                share = (kk - below.sum(axis=1, keepdims=True)) / np.maximum(
                    tied.sum(axis=1, keepdims=True), 1
                )
                W = below + tied * share
                V = W @ np.eye(r_i)[codes[donors, i]]
                tot = W.sum(axis=1, keepdims=True)
                P = np.where(tot > 0, V / np.where(tot > 0, tot, 1.0), P)
            parts[i][0].append(R[sel])
            parts[i][1].append(P)
    return {i: (np.concatenate(rows), np.concatenate(Ps)) for i, (rows, Ps) in parts.items() if rows}


def impute_knn_numpy(data, k: int = 5) -> Imputation:
    """:func:`knn_onehot_cells` of a :class:`~bnfk_core.data.table.CategoricalData` as an Imputation
    (``knn``)."""
    t0 = time.perf_counter()
    cells = knn_onehot_cells(data.codes, data.cardinalities, k)
    return Imputation("knn", cells, seconds=time.perf_counter() - t0)
