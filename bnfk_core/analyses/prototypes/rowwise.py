"""Greedy prototypes of a file too big for memory, from one pass of
:mod:`bnfk_core.analyses.rowwise`.

**Prototypes in feature space (paper Algorithm 1) over millions of candidates.**  The objective is
d(S) = |s/k - mu|^2 with mu the mean embedding of ALL rows (:mod:`bnfk_core.analyses.rowwise`).  The
candidates are the **complete rows** (every family observed): for them phi(c) . w = sum_i t_i[j_i(c) r_i +
k_i(c)] with per-variable tables t_i computed from w in O(sum_i q_i r_i):

    t_i[j, k] = w[j, k] s_jk - sum_k' w[j, k'] theta_jk' s_jk',

so one swap visit (w = (s - phi(o))/k - mu, scores |w|^2 + (2/k) phi(c).w + |phi(c)|^2/k^2 for every
candidate c, best non-member) is one compiled gather per variable over a (candidates, n_vars) matrix of
flat cell indices (int16 when the feature map has fewer than 32,767 columns): 2 n bytes a candidate
instead of the sparse Phi's 12 bytes a non-zero.  Rows with a missing cell are not candidates: their
expected features have one entry per completion of each touched family (23 entries a row on the
letter-like data, 2.7 GB per 10 M rows at 12 bytes each), which would break the memory target; they
still count fully in mu.  The greedy loop, the random starts (best of ``n_init`` subsets of the
candidates, ``numpy.random.default_rng(seed)``) and the stopping rule are those of
:func:`bnfk_core.analyses.prototypes.selection.greedy_swap`, so the result equals the in-memory
``select_prototypes`` on the complete rows with the objective's mean taken from all rows
(``MMDCriterion(..., mean=...)``); with no missing cell, exactly ``select_prototypes`` on the file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from ...data.runners import runner_for
from ...data.stream import DEFAULT_CHUNKSIZE
from ...errors import PrototypeError
from ..rowwise import CellTables, file_codes, scan_file, sum_squares
from .criteria import log_chi2_sf
from .search import greedy_swap, random_subsets

__all__ = ["ChunkedMMDCriterion", "ChunkedPrototypes", "chunked_prototypes"]


@numba.njit(cache=True, parallel=True)
def _best_swap(gidx, sq, member, t, ww, a, b, nblocks):  # pragma: no cover - compiled
    """argmin over non-members c of ww + a sum_i t[gidx[c, i]] + b sq[c] (first index on ties)."""
    N, n = gidx.shape
    bv = np.full(nblocks, np.inf)
    ba = np.full(nblocks, -1, np.int64)
    step = (N + nblocks - 1) // nblocks
    for blk in numba.prange(nblocks):
        lo = blk * step
        hi = min(N, lo + step)
        best, arg = np.inf, -1
        for c in range(lo, hi):
            if member[c]:
                continue
            v = 0.0
            for i in range(n):
                v += t[gidx[c, i]]
            v = ww + a * v + sq[c] * b
            if v < best:
                best, arg = v, c
        bv[blk] = best
        ba[blk] = arg
    best, arg = np.inf, -1
    for blk in range(nblocks):
        if bv[blk] < best:
            best, arg = bv[blk], ba[blk]
    return arg, best


# ====================================================================== prototypes
class ChunkedMMDCriterion:
    """d(S) = |s/k - mu|^2 over candidates given by their cell indices (module docstring); the greedy
    interface of :func:`bnfk_core.analyses.prototypes.selection.greedy_swap` (``start``, ``best_swap``,
    ``swap``)."""

    name = "mmd"

    def __init__(self, tables: CellTables, mu: np.ndarray, gidx: np.ndarray):
        self.tables = tables
        self.mu = np.asarray(mu, dtype=float)
        self.gidx = np.ascontiguousarray(gidx)
        self.N = self.gidx.shape[0]
        self.sq = sum_squares(self.gidx, tables)
        self.nblocks = max(1, min(256, self.N // 4096))

    def _sums(self, idx) -> np.ndarray:
        return self.tables.phi_sum(self.gidx[np.asarray(idx, dtype=np.int64)])

    def value(self, idx) -> float:
        d = self._sums(idx) / len(idx) - self.mu
        return float(d @ d)

    def values(self, subsets: np.ndarray) -> np.ndarray:
        return np.array([self.value(s) for s in np.atleast_2d(subsets)])

    def start(self, idx) -> float:
        self._k = len(idx)
        self._s = self._sums(idx)
        diff = self._s / self._k - self.mu
        self._d = float(diff @ diff)
        return self._d

    def best_swap(self, o: int, member: np.ndarray) -> tuple[int, float]:
        k = self._k
        w = (self._s - self._sums([o])) / k - self.mu
        t = self.tables.tables(w)
        c, val = _best_swap(self.gidx, self.sq, member, t, float(w @ w), 2.0 / k, 1.0 / (k * k), self.nblocks)
        return int(c), float(val)

    def swap(self, o: int, c: int) -> float:
        self._s += self._sums([c]) - self._sums([o])
        diff = self._s / self._k - self.mu
        self._d = float(diff @ diff)
        return self._d


def _chi2_value(cat: np.ndarray, codes: np.ndarray, cards: np.ndarray) -> float:
    """The chi-square criterion of :class:`~bnfk_core.analyses.prototypes.selection.Chi2Criterion` of the
    subset ``codes`` against the frequencies ``cat`` of all rows (per variable, the missing category last)."""
    n_all = cat.sum(axis=1)[0]
    k, width = codes.shape[0], cat.shape[1]
    freq = cat / n_all  # the missing category of variable i is column cards[i], as in Chi2Criterion
    seen = freq > 0
    dof = seen.sum(axis=1) - 1
    tested = dof >= 1
    inv = np.where(seen, 1.0 / np.where(seen, freq, 1.0), 0.0)
    c = np.where(codes < 0, cards[None, :], codes)
    O = np.zeros_like(freq)
    for i in range(codes.shape[1]):
        O[i] = np.bincount(c[:, i], minlength=width)
    stat = (O**2 * inv).sum(axis=1) / k - k
    lp = log_chi2_sf(stat, np.maximum(dof, 1))
    return float(-np.where(tested, lp, 0.0).sum())


@dataclass
class ChunkedPrototypes:
    """Outcome of :func:`chunked_prototypes` (``indices``: 0-based data-row numbers of the file)."""

    indices: np.ndarray
    codes: np.ndarray
    criterion: str
    mmd: float
    chi2: float
    value: float
    start_value: float | None
    swaps: int
    passes: float
    converged: bool
    seconds: float
    seconds_start: float
    seconds_read: float
    n_init: int
    rows: int
    candidates: int

    def to_dict(self) -> dict:
        """The result as JSON-ready values.

        Returns
        -------
        dict
        """
        return {
            "indices": [int(i) for i in self.indices],
            "criterion": self.criterion,
            "k": len(self.indices),
            "mmd": self.mmd,
            "chi2": self.chi2,
            "value": self.value,
            "start_value": self.start_value,
            "swaps": self.swaps,
            "passes": self.passes,
            "converged": self.converged,
            "seconds": self.seconds,
            "seconds_start": self.seconds_start,
            "seconds_read": self.seconds_read,
            "n_init": self.n_init,
            "rows": self.rows,
            "candidates": "complete rows",
            "n_candidates": self.candidates,
            "mean_embedding": "all rows",
        }


def chunked_prototypes(
    model,
    path,
    k: int,
    criterion: str = "mmd",
    *,
    chunksize: int = DEFAULT_CHUNKSIZE,
    n_init: int = 100,
    seed: int = 0,
    max_passes: int = 50,
    progress=None,
    engine: str = "local",
    scheduler: str | None = None,
    client=None,
    blocksize="64MB",
    **options,
) -> ChunkedPrototypes:
    """Greedy-MMD prototypes (paper Algorithm 1) of a file read ``chunksize`` rows at a time: candidates
    are the complete rows, the objective's mean embedding is that of all rows (module docstring).
    ``criterion``: ``mmd`` or ``random``; ``options``: the data options of ``load_csv``.  ``engine="dask"``:
    the pass over the file runs on a Dask cluster's partitions (:mod:`bnfk_core.data.runners`), the
    greedy swaps on the client.

    Parameters
    ----------
    model : BayesNet
    path : str or path-like
        The CSV file.
    k : int
    criterion : {"mmd", "random"}
    chunksize : int
    n_init : int
        Random subsets the search starts from the best of.
    seed : int
    max_passes : int
    progress : callable, optional
    engine : {"local", "dask"}
    scheduler, client, blocksize
        Dask settings.
    **options
        Data options of ``load_csv``.

    Returns
    -------
    ChunkedPrototypes

    Raises
    ------
    PrototypeError
        For another criterion or a bad ``k``.
    """
    criterion = str(criterion).lower()
    if criterion not in ("mmd", "random"):
        raise PrototypeError(f"Criterion '{criterion}' is not available in chunks; choose mmd or random.")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise PrototypeError(f"The subset size k must be a whole number, got {k!r}.")
    tables = CellTables(model)
    with runner_for(
        engine,
        chunksize=chunksize,
        scheduler=scheduler,
        client=client,
        blocksize=blocksize,
        error=PrototypeError,
    ) as runner:
        chunks = file_codes(path, model, chunksize, options, runner)
        scan = scan_file(chunks, tables, keep_candidates=True, progress=progress, share=0.999)
    source = chunks.source
    if scan.gidx is None:
        scan.gidx, scan.rows = np.zeros((0, tables.n), tables.index_dtype), np.zeros(0, np.int64)
    mu = scan.phi_total / scan.n_rows
    Nc = scan.gidx.shape[0]
    if not 1 <= k < Nc:
        raise PrototypeError(
            f"The subset size k must be between 1 and {Nc - 1} (the complete rows of "
            f"{source}, the candidates: {Nc:,} of {scan.n_rows:,} rows), got {k}."
        )
    crit = ChunkedMMDCriterion(tables, mu, scan.gidx)
    t0 = time.perf_counter()
    n_used = 1 if criterion == "random" else max(int(n_init), 1)
    cands = random_subsets(Nc, k, n_used, seed)
    start = cands[int(np.argmin(crit.values(cands)))] if criterion == "mmd" else cands[0]
    t_start = time.perf_counter() - t0
    if criterion == "mmd":
        res = greedy_swap(crit, start, max_passes=max_passes, progress=progress)
        idx, value, start_value = res.indices, res.value, res.start_value
        swaps, passes, converged, secs = res.swaps, res.passes, res.converged, res.seconds
    else:
        idx, start_value, swaps, passes, converged, secs = start, None, 0, 0.0, True, 0.0
        value = crit.value(idx)
    codes = tables.codes_of(scan.gidx[idx])
    return ChunkedPrototypes(
        indices=scan.rows[idx],
        codes=codes,
        criterion=criterion,
        mmd=crit.value(idx),
        chi2=_chi2_value(scan.category_counts, codes, tables.cards),
        value=value,
        start_value=start_value,
        swaps=swaps,
        passes=passes,
        converged=converged,
        seconds=secs,
        seconds_start=t_start,
        seconds_read=scan.seconds,
        n_init=n_used,
        rows=scan.n_rows,
        candidates=Nc,
    )
