"""One-hot encoding of categorical codes: one 0/1 column per (variable, state).

The one home of the encoding that the Hamming kernel, the weighted-kNN and kNN imputers, latent class EM and
kernel k-means on Hamming features all start from.  Column ``state_offsets(cards)[i] + s`` is state ``s`` of
variable ``i``; a missing cell (code ``-1``) is an all-zero block (or an all-NaN block, for imputers that
average observed blocks only).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import DataError

__all__ = ["state_offsets", "one_hot"]


def state_offsets(cards: Sequence[int]) -> np.ndarray:
    """Where each variable's block of one-hot columns starts.

    Parameters
    ----------
    cards : sequence of int
        The number of states r_i of every variable.

    Returns
    -------
    ndarray of int64, length n + 1
        ``[0, r_0, r_0 + r_1, ..., sum r_i]``: block i is columns ``off[i]:off[i + 1]``, the last entry the
        number of columns.
    """
    cards = np.asarray([int(r) for r in cards], dtype=np.int64)
    return np.concatenate([[0], np.cumsum(cards)]).astype(np.int64)


def one_hot(
    codes: np.ndarray,
    cards: Sequence[int],
    *,
    dtype=np.float64,
    sparse: bool = False,
    value: float = 1.0,
    missing: str = "zero",
):
    """The one-hot matrix (N, sum r_i) of ``codes`` (N, n; ``-1`` = missing).

    Parameters
    ----------
    codes : int array (N, n)
        State indices, ``-1`` for a missing cell.
    cards : sequence of int
        The number of states r_i of every column.
    dtype : numpy dtype of the result (``float64`` by default; ``int32`` keeps products of 0/1 codes exact
        off the BLAS).
    sparse : return a ``scipy.sparse.csr_matrix`` (one stored entry per observed cell) instead of a dense
    array. value : the entry of an observed cell (``1``; kernel k-means scales Hamming features by
    ``1/sqrt(n)``). missing : ``"zero"`` (a missing cell's block is all zero) or ``"nan"`` (all NaN; dense
    only).

    Returns
    -------
    ndarray or csr_matrix (N, sum r_i)

    Raises
    ------
    DataError
        A code outside ``-1 .. r_i - 1``, or codes and cards that disagree on the number of columns.
    """
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] != len(cards):
        raise DataError(
            f"One-hot encoding needs one cardinality per column: codes have shape {codes.shape}, "
            f"{len(cards)} cardinalities given."
        )
    if missing not in ("zero", "nan") or (missing == "nan" and sparse):
        raise DataError(
            f"A missing cell is one-hot coded as 'zero' (dense or sparse) or 'nan' (dense), not "
            f"'{missing}'{' in a sparse matrix' if sparse else ''}."
        )
    off = state_offsets(cards)
    rows, cols = np.nonzero(codes >= 0)
    states = codes[rows, cols].astype(np.int64)
    if states.size and np.any(states >= np.asarray(cards, dtype=np.int64)[cols]):
        bad = int(cols[np.argmax(states >= np.asarray(cards, dtype=np.int64)[cols])])
        raise DataError(f"Column {bad} has a code beyond its {int(cards[bad])} states.")
    where = off[cols] + states
    shape = (codes.shape[0], int(off[-1]))
    if sparse:
        return sp.csr_matrix((np.full(rows.size, value, dtype=dtype), (rows, where)), shape=shape)
    X = np.zeros(shape, dtype=dtype)
    X[rows, where] = value
    if missing == "nan":
        X[np.repeat(codes < 0, np.asarray(cards, dtype=np.int64), axis=1)] = np.nan
    return X
