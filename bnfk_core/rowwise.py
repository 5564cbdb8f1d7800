"""Row-wise work on files too big for memory: mean embeddings, greedy-MMD prototypes, kernels against a
fixed set and log-likelihoods, a chunk of rows at a time (issue 14, part 2).

The rows come from :class:`bnfk_core.stream.CodeChunks` (the same codes as ``load_csv(path, model=...)``).

**The mean embedding from expected family counts.**  Block i of phi(x) for a complete family with parent
configuration j and state k is the column vector ([k = k'] - theta_jk') s_jk' (k' = 0..r_i-1, at offset
j r_i), with s_jk' = 1 / sqrt(theta_jk' P(pi_i = j)) (0 where that is 0).  It is linear in the indicator
of (j, k), so the sum of phi over rows -- complete or the marginalised E[phi | x_obs] of rows with
missing cells -- is a linear function of the (expected) family counts C_i[j, k]:

    sum_x phi(x)[j r_i + k'] = (C_i[j, k'] - C_i[j, .] theta_jk') s_jk'.

A chunk's counts come from one compiled pass: a complete family adds 1 at (j, k); a row with missing
cells enumerates the completions of its missing cells, weights them by P(completion | x_obs) (the
product of the CPT entries of the families that touch a missing cell, normalised; the other factors are
constants of the row) and adds each weight at the (j, k) the completion gives every touched family.
Rows with more than :data:`ENUMERATE_LIMIT` completions take the general path
(:func:`bnfk_core.kernels.features`, family posteriors from the batched junction tree) and add their feature
sums directly.  So ``mean_embedding`` is linear in N, with memory for one chunk.

**Prototypes in feature space (paper Algorithm 1) over millions of candidates.**  The objective is
d(S) = |s/k - mu|^2 with mu the mean embedding of ALL rows (above).  The candidates are the **complete
rows** (every family observed): for them phi(c) . w = sum_i t_i[j_i(c) r_i + k_i(c)] with per-variable
tables t_i computed from w in O(sum_i q_i r_i):

    t_i[j, k] = w[j, k] s_jk - sum_k' w[j, k'] theta_jk' s_jk',

so one swap visit (w = (s - phi(o))/k - mu, scores |w|^2 + (2/k) phi(c).w + |phi(c)|^2/k^2 for every
candidate c, best non-member) is one compiled gather per variable over a (candidates, n_vars) matrix of
flat cell indices (int16 when the feature map has fewer than 32,767 columns): 2 n bytes a candidate
instead of the sparse Phi's 12 bytes a non-zero.  Rows with a missing cell are not candidates: their
expected features have one entry per completion of each touched family (23 entries a row on the
letter-like data, 2.7 GB per 10 M rows at 12 bytes each), which would break the memory target; they
still count fully in mu.  The greedy loop, the random starts (best of ``n_init`` subsets of the
candidates, ``numpy.random.default_rng(seed)``) and the stopping rule are those of
:func:`bnfk_core.analyses.prototypes.greedy_swap`, so the result equals the in-memory
``select_prototypes`` on the complete rows with the objective's mean taken from all rows
(``MMDCriterion(..., mean=...)``); with no missing cell, exactly ``select_prototypes`` on the file.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp

from .analyses.prototype_criteria import log_chi2_sf
from .analyses.prototypes import (
    PrototypeError,
    greedy_swap,
    random_subsets,
)
from .errors import KernelError, ModelError
from .inference import log_likelihood, parent_marginals
from .kernels import _check_positive, feature_offsets, features
from .stream import DEFAULT_CHUNKSIZE, CodeChunks

__all__ = [
    "ENUMERATE_LIMIT",
    "CellTables",
    "ChunkedMMDCriterion",
    "ChunkedPrototypes",
    "chunk_features",
    "chunked_prototypes",
    "mean_embedding",
    "stream_gram",
    "stream_loglik",
    "stream_mmd",
]

#: rows whose missing cells have more completions than this take the general (junction-tree) inference path
ENUMERATE_LIMIT = 4096


# ====================================================================== the model's cells
class CellTables:
    """The model's CPT cells laid out as the feature map's columns (cell ``off_i + j r_i + k``), with what
    the compiled kernels need: theta, log theta, s = 1/sqrt(theta P_j) (0 where theta P_j = 0), the start
    and size of each cell's (variable, parent configuration) group, parents and their strides."""

    def __init__(self, model, marginals=None):
        self.model = model
        self.pm = parent_marginals(model) if marginals is None else marginals
        n = model.n_vars
        self.n = n
        self.off = feature_offsets(model)
        self.D = int(self.off[-1])
        self.cards = np.asarray(model.cardinalities, dtype=np.int64)
        self.theta = np.concatenate([np.asarray(t, dtype=float).ravel() for t in model.cpts])
        with np.errstate(divide="ignore"):
            self.log_theta = np.log(self.theta)
        P = np.concatenate([np.repeat(np.asarray(self.pm.probs[i], dtype=float), self.cards[i]) for i in range(n)])
        self.P = P
        tp = self.theta * P
        self.s = np.divide(1.0, np.sqrt(tp), out=np.zeros_like(tp), where=tp > 0)
        q = [int(model.cpts[i].shape[0]) for i in range(n)]
        self.group_starts = np.concatenate([self.off[i] + np.arange(q[i]) * self.cards[i] for i in range(n)]).astype(np.int64)
        self.group_size = np.concatenate([np.full(q[i], self.cards[i]) for i in range(n)]).astype(np.int64)
        self.cell_start = np.repeat(self.group_starts, self.group_size)
        self.cell_size = np.repeat(self.group_size, self.group_size)
        maxp = max((len(model.parents[i]) for i in range(n)), default=0)
        self.par = np.full((n, max(maxp, 1)), -1, np.int64)
        self.npar = np.zeros(n, np.int64)
        self.stride = np.zeros((n, max(maxp, 1)), np.int64)
        for i in range(n):
            ps = list(model.parents[i])
            self.npar[i] = len(ps)
            st = 1
            for m in range(len(ps) - 1, -1, -1):      # C order, as model.parent_config (ravel_multi_index)
                self.par[i, m] = ps[m]
                self.stride[i, m] = st
                st *= int(self.cards[ps[m]])
        ts = self.theta * self.s
        # |phi|^2 of a complete family at cell g: sum_k' (theta s)^2 over its group + s_g^2 (1 - 2 theta_g)
        g2 = np.add.reduceat(ts * ts, self.group_starts) if self.D else np.zeros(0)
        self.sq_cell = np.repeat(g2, self.group_size) + self.s ** 2 * (1.0 - 2.0 * self.theta)
        self.index_dtype = np.int16 if self.D < 2 ** 15 - 1 else np.int32

    def args(self):
        return (self.cards, self.par, self.npar, self.stride, self.off, self.log_theta, self.P)

    def tables(self, w: np.ndarray) -> np.ndarray:
        """t[g] = phi(complete family at cell g) . w, for every cell g (module docstring)."""
        ws = w * self.s
        grp = np.add.reduceat(ws * self.theta, self.group_starts) if self.D else np.zeros(0)
        return ws - np.repeat(grp, self.group_size)

    def embed_counts(self, C: np.ndarray) -> np.ndarray:
        """sum of phi over rows whose (expected) family counts are ``C`` (per cell)."""
        n_j = np.add.reduceat(C, self.group_starts) if self.D else np.zeros(0)
        return (C - np.repeat(n_j, self.group_size) * self.theta) * self.s

    def phi_sum(self, gidx: np.ndarray) -> np.ndarray:
        """sum of phi over complete rows given by their cell indices (rows, n_vars)."""
        out = np.zeros(self.D)
        _phi_sum(np.ascontiguousarray(gidx), self.theta, self.s, self.cell_start, self.cell_size, out)
        return out

    def cell_features(self) -> sp.csr_matrix:
        """(D, D): row g is phi of a complete family at cell g, ([c = g] - theta_c) s_c over g's group."""
        if getattr(self, "_cell_features", None) is None:
            rows = np.repeat(np.arange(self.D), self.cell_size)
            first = np.concatenate([[0], np.cumsum(self.cell_size)[:-1]])
            cols = np.repeat(self.cell_start, self.cell_size) + (np.arange(rows.size) - np.repeat(first, self.cell_size))
            vals = ((cols == rows).astype(float) - self.theta[cols]) * self.s[cols]
            self._cell_features = sp.csr_matrix((vals, (rows, cols)), shape=(self.D, self.D))
        return self._cell_features

    def codes_of(self, gidx: np.ndarray) -> np.ndarray:
        """The states of complete rows from their cell indices."""
        return ((np.asarray(gidx, dtype=np.int64) - self.off[:-1][None, :]) % self.cards[None, :]).astype(np.int32)


@numba.njit(cache=True)
def _config(x, i, par, npar, stride):  # pragma: no cover - compiled
    j = 0
    for m in range(npar[i]):
        v = x[par[i, m]]
        if v < 0:
            return -1
        j += v * stride[i, m]
    return j


@numba.njit(cache=True)
def _chunk_counts(codes, cards, par, npar, stride, off, log_theta, P, limit, counts, gidx, status,
                  emit, pos, er, eg, ew):  # pragma: no cover
    """With ``emit`` the weights are written as entries (row, cell, weight) from ``pos[row]`` on instead of
    added to ``counts`` (a chunk's sparse matrix of expected cell counts).  Per row: complete families add 1 to their cell (and give gidx); a row with missing cells adds its
    posterior weights over the completions of its missing cells.  status: 0 fine, 1 the observed values have
    probability zero, 2 too many completions (general path), 3 + i a complete family i at a zero-probability
    cell (theta = 0 or P(pi_i = j) = 0)."""
    N, n = codes.shape
    x = np.empty(n, np.int64)
    mv = np.empty(n, np.int64)
    touched = np.zeros(n, np.bool_)
    for row in range(N):
        m = 0
        for i in range(n):
            x[i] = codes[row, i]
            if x[i] < 0:
                mv[m] = i
                m += 1
        status[row] = 0
        A = 1
        for t in range(m):
            A *= cards[mv[t]]
            if A > limit:
                break
        if A > limit:
            status[row] = 2
            for i in range(n):
                gidx[row, i] = -1
            continue
        for i in range(n):
            tch = x[i] < 0
            for pm in range(npar[i]):
                if x[par[i, pm]] < 0:
                    tch = True
            touched[i] = tch
        bad = -1
        for i in range(n):
            if touched[i]:
                gidx[row, i] = -1
                continue
            g = off[i] + _config(x, i, par, npar, stride) * cards[i] + x[i]
            gidx[row, i] = g
            if not (log_theta[g] > -np.inf and P[g] > 0):
                bad = i
                break
        if bad >= 0:
            status[row] = 3 + bad
            continue
        p = pos[row] if emit else 0
        for i in range(n):
            if not touched[i]:
                if emit:
                    er[p], eg[p], ew[p] = row, gidx[row, i], 1.0
                    p += 1
                else:
                    counts[gidx[row, i]] += 1.0
        if m == 0:
            continue
        lp = np.empty(A)
        mx = -np.inf
        for a in range(A):
            rem = a
            for t in range(m - 1, -1, -1):
                v = mv[t]
                x[v] = rem % cards[v]
                rem //= cards[v]
            s = 0.0
            for i in range(n):
                if touched[i]:
                    s += log_theta[off[i] + _config(x, i, par, npar, stride) * cards[i] + x[i]]
            lp[a] = s
            mx = max(mx, s)
        if mx == -np.inf:
            status[row] = 1
            continue
        tot = 0.0
        for a in range(A):
            lp[a] = np.exp(lp[a] - mx)
            tot += lp[a]
        for a in range(A):
            w = lp[a] / tot
            if w == 0.0:
                continue
            rem = a
            for t in range(m - 1, -1, -1):
                v = mv[t]
                x[v] = rem % cards[v]
                rem //= cards[v]
            for i in range(n):
                if touched[i]:
                    g = off[i] + _config(x, i, par, npar, stride) * cards[i] + x[i]
                    if emit:
                        er[p], eg[p], ew[p] = row, g, w
                        p += 1
                    else:
                        counts[g] += w


@numba.njit(cache=True)
def _row_sizes(codes, cards, par, npar, limit, out):  # pragma: no cover - compiled
    """Entries each row emits: 1 per complete family, its completions per touched family (0 past ``limit``)."""
    N, n = codes.shape
    for row in range(N):
        A = 1
        for i in range(n):
            if codes[row, i] < 0:
                A *= cards[i]
                if A > limit:
                    break
        if A > limit:
            out[row] = 0
            continue
        tot = 0
        for i in range(n):
            tch = codes[row, i] < 0
            for m in range(npar[i]):
                if codes[row, par[i, m]] < 0:
                    tch = True
            tot += A if tch else 1
        out[row] = tot


@numba.njit(cache=True)
def _phi_sum(gidx, theta, s, cell_start, cell_size, out):  # pragma: no cover - compiled
    for row in range(gidx.shape[0]):
        for i in range(gidx.shape[1]):
            g = gidx[row, i]
            a = cell_start[g]
            for c in range(a, a + cell_size[g]):
                out[c] += ((1.0 if c == g else 0.0) - theta[c]) * s[c]


@numba.njit(cache=True)
def _sq(gidx, sq_cell, out):  # pragma: no cover - compiled
    for row in range(gidx.shape[0]):
        v = 0.0
        for i in range(gidx.shape[1]):
            v += sq_cell[gidx[row, i]]
        out[row] = v


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


# ====================================================================== one pass over a file
@dataclass
class _Pass:
    """What one pass over a file gives: the sum of phi over all rows, the complete rows (cell indices and row
    numbers), per-variable category counts (missing = one more category) and the row count."""
    phi_total: np.ndarray
    n_rows: int
    gidx: np.ndarray | None
    rows: np.ndarray | None
    category_counts: np.ndarray
    seconds: float
    direct: np.ndarray | None = None   # a chunk's part only: features of the rows counted directly


def _chunk(tables: CellTables, codes: np.ndarray, row0: int, counts: np.ndarray, entries=None, rows_out=False):
    """Counts of one chunk into ``counts`` (or, with ``entries`` = (pos, er, eg, ew), its entries); returns
    (gidx, status, feature sum of the general-path rows -- or their feature rows with ``rows_out``)."""
    model = tables.model
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    N = codes.shape[0]
    gidx = np.empty((N, tables.n), np.int64)
    status = np.zeros(N, np.int64)
    if entries is None:
        z = np.zeros(0, np.int64)
        _chunk_counts(codes, *tables.args()[:4], tables.off, tables.log_theta, tables.P, ENUMERATE_LIMIT,
                      counts, gidx, status, False, z, z, z, np.zeros(0))
    else:
        _chunk_counts(codes, *tables.args()[:4], tables.off, tables.log_theta, tables.P, ENUMERATE_LIMIT,
                      counts, gidx, status, True, *entries)
    bad = np.flatnonzero((status == 1) | (status >= 3))
    if bad.size:
        r = int(bad[0])
        if status[r] == 1:
            raise ModelError(f"Row {row0 + r + 1} has observed values that the model gives probability zero; "
                             "fit the parameters with a pseudo-count (method 'smoothed').")
        i = int(status[r] - 3)
        sub = codes[r:r + 1]
        _check_positive(model, tables.pm, i, model.parent_config(i, sub), sub[:, i])
        raise KernelError(f"Variable '{model.variables[i]}' has probability zero in row {row0 + r + 1}; fit the "
                          "parameters with a pseudo-count (method 'smoothed').")
    extra = None
    big = np.flatnonzero(status == 2)
    if big.size:
        F = features(model, codes[big], tables.pm)
        extra = (big, F) if rows_out else np.asarray(F.sum(axis=0)).ravel()
    return gidx, status, extra


def scan_chunk(tables: CellTables, codes: np.ndarray, row0: int = 0, keep_candidates: bool = True) -> _Pass:
    """One chunk's part of a pass: its expected family counts (``phi_total`` holds the *counts* here, plus
    the directly counted features in ``direct``), category counts and -- with ``keep_candidates`` -- the
    cell indices and row numbers (``row0`` + position) of its complete rows.  :func:`merge_scans` adds
    chunks' parts up; a Dask partition runs this with ``row0 = 0`` and the client shifts its rows."""
    t0 = time.perf_counter()
    counts = np.zeros(tables.D)
    gidx, _status, extra = _chunk(tables, codes, row0, counts)
    width = int(tables.cards.max()) + 1 if tables.n else 1
    cat = np.zeros((tables.n, width), np.int64)
    c = np.where(codes < 0, tables.cards[None, :], codes).astype(np.int64)
    for i in range(tables.n):
        cat[i] = np.bincount(c[:, i], minlength=width)
    g = rows = None
    if keep_candidates:
        comp = np.flatnonzero((codes >= 0).all(axis=1))
        g, rows = gidx[comp].astype(tables.index_dtype), comp.astype(np.int64) + row0
    return _Pass(counts, int(codes.shape[0]), g, rows, cat, time.perf_counter() - t0, extra)


def merge_scans(tables: CellTables, parts, shift_rows: bool = False) -> _Pass:
    """The pass over all chunks from their :func:`scan_chunk` parts, in file order (``shift_rows``: the
    parts' row numbers start at 0 and are shifted by the rows before them)."""
    t0 = time.perf_counter()
    counts, direct = np.zeros(tables.D), np.zeros(tables.D)
    cat, g_parts, r_parts, n = None, [], [], 0
    for part in parts:
        counts += part.phi_total
        if part.direct is not None:
            direct += part.direct
        cat = part.category_counts if cat is None else cat + part.category_counts
        if part.gidx is not None:
            g_parts.append(part.gidx)
            r_parts.append(part.rows + (n if shift_rows else 0))
        n += part.n_rows
    gidx = np.concatenate(g_parts) if g_parts else None
    rows = np.concatenate(r_parts) if r_parts else None
    return _Pass(tables.embed_counts(counts) + direct, n, gidx, rows, cat, time.perf_counter() - t0)


def _scan(chunks: CodeChunks, tables: CellTables, *, keep_candidates: bool, progress=None, share=1.0) -> _Pass:
    def parts():
        n = 0
        for row0, codes in chunks:
            yield scan_chunk(tables, codes, row0, keep_candidates)
            n += codes.shape[0]
            if progress is not None:
                progress(share * n / chunks.n_rows, f"{chunks.source}: {n:,} of {chunks.n_rows:,} rows")
    out = merge_scans(tables, parts())
    if keep_candidates and out.gidx is None:
        out.gidx, out.rows = np.zeros((0, tables.n), tables.index_dtype), np.zeros(0, np.int64)
    return out


def _chunks(path, model, chunksize, options) -> CodeChunks:
    return path if isinstance(path, CodeChunks) else CodeChunks(path, model, chunksize=chunksize, **(options or {}))


def mean_embedding(model, path, *, chunksize: int = DEFAULT_CHUNKSIZE, tables: CellTables | None = None,
                   progress=None, **options) -> tuple[np.ndarray, int]:
    """(mean phi over the rows of the file ``path``, rows): :func:`bnfk_core.kernels.mean_features` of
    ``load_csv(path, model=model)`` read ``chunksize`` rows at a time (module docstring)."""
    tables = CellTables(model) if tables is None else tables
    res = _scan(_chunks(path, model, chunksize, options), tables, keep_candidates=False, progress=progress)
    return res.phi_total / res.n_rows, res.n_rows


def stream_mmd(model, path_a, path_b, *, chunksize: int = DEFAULT_CHUNKSIZE, progress=None, engine: str = "local",
               scheduler: str | None = None, client=None, **options) -> dict:
    """Squared MMD (paper eq. 10) between two files via their mean embeddings, each read in chunks -- here, or
    with ``engine="dask"`` on a Dask cluster's workers (:func:`bnfk_core.stream_dask.mean_embedding_dask`)."""
    tables = CellTables(model)
    if engine == "dask":
        from .stream_dask import connect, mean_embedding_dask
        with connect(scheduler, client) as c:
            mu_a, na = mean_embedding_dask(model, path_a, tables=tables, client=c, **options)
            mu_b, nb = mean_embedding_dask(model, path_b, tables=tables, client=c, **options)
    elif engine == "local":
        mu_a, na = mean_embedding(model, path_a, chunksize=chunksize, tables=tables, progress=progress, **options)
        mu_b, nb = mean_embedding(model, path_b, chunksize=chunksize, tables=tables, progress=progress, **options)
    else:
        raise KernelError(f"engine must be 'local' or 'dask', not {engine!r}.")
    d = mu_a - mu_b
    return {"mmd": float(d @ d), "rows_a": na, "rows_b": nb, "engine": engine}


# ====================================================================== prototypes
class ChunkedMMDCriterion:
    """d(S) = |s/k - mu|^2 over candidates given by their cell indices (module docstring); the greedy
    interface of :func:`bnfk_core.analyses.prototypes.greedy_swap` (``start``, ``best_swap``, ``swap``)."""

    name = "mmd"

    def __init__(self, tables: CellTables, mu: np.ndarray, gidx: np.ndarray):
        self.tables = tables
        self.mu = np.asarray(mu, dtype=float)
        self.gidx = np.ascontiguousarray(gidx)
        self.N = self.gidx.shape[0]
        self.sq = np.empty(self.N)
        _sq(self.gidx, tables.sq_cell, self.sq)
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
    """The chi-square criterion of :class:`~bnfk_core.analyses.prototypes.Chi2Criterion` of the subset
    ``codes`` against the frequencies ``cat`` of all rows (per variable, the missing category last)."""
    n_all = cat.sum(axis=1)[0]
    k, width = codes.shape[0], cat.shape[1]
    freq = cat / n_all             # the missing category of variable i is column cards[i], as in Chi2Criterion
    seen = freq > 0
    dof = seen.sum(axis=1) - 1
    tested = dof >= 1
    inv = np.where(seen, 1.0 / np.where(seen, freq, 1.0), 0.0)
    c = np.where(codes < 0, cards[None, :], codes)
    O = np.zeros_like(freq)
    for i in range(codes.shape[1]):
        O[i] = np.bincount(c[:, i], minlength=width)
    stat = (O ** 2 * inv).sum(axis=1) / k - k
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
        return {"indices": [int(i) for i in self.indices], "criterion": self.criterion, "k": len(self.indices),
                "mmd": self.mmd, "chi2": self.chi2, "value": self.value, "start_value": self.start_value,
                "swaps": self.swaps, "passes": self.passes, "converged": self.converged, "seconds": self.seconds,
                "seconds_start": self.seconds_start, "seconds_read": self.seconds_read, "n_init": self.n_init,
                "rows": self.rows, "candidates": "complete rows", "n_candidates": self.candidates,
                "mean_embedding": "all rows"}


def chunked_prototypes(model, path, k: int, criterion: str = "mmd", *, chunksize: int = DEFAULT_CHUNKSIZE,
                       n_init: int = 100, seed: int = 0, max_passes: int = 50, progress=None, engine: str = "local",
                       scheduler: str | None = None, client=None, **options) -> ChunkedPrototypes:
    """Greedy-MMD prototypes (paper Algorithm 1) of a file read ``chunksize`` rows at a time: candidates
    are the complete rows, the objective's mean embedding is that of all rows (module docstring).
    ``criterion``: ``mmd`` or ``random``; ``options``: the data options of ``load_csv``.  ``engine="dask"``:
    the pass over the file runs on a Dask cluster's partitions (:func:`bnfk_core.stream_dask.scan_dask`), the
    greedy swaps on the client."""
    criterion = str(criterion).lower()
    if criterion not in ("mmd", "random"):
        raise PrototypeError(f"Criterion '{criterion}' is not available in chunks; choose mmd or random.")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise PrototypeError(f"The subset size k must be a whole number, got {k!r}.")
    tables = CellTables(model)
    if engine == "dask":
        from .stream_dask import scan_dask
        scan, plan = scan_dask(model, path, tables=tables, keep_candidates=True, scheduler=scheduler, client=client,
                               **options)
        source = plan.source
    elif engine == "local":
        chunks = _chunks(path, model, chunksize, options)
        scan = _scan(chunks, tables, keep_candidates=True, progress=progress, share=0.999)
        source = chunks.source
    else:
        raise PrototypeError(f"engine must be 'local' or 'dask', not {engine!r}.")
    if scan.gidx is None:
        scan.gidx, scan.rows = np.zeros((0, tables.n), tables.index_dtype), np.zeros(0, np.int64)
    mu = scan.phi_total / scan.n_rows
    Nc = scan.gidx.shape[0]
    if not 1 <= k < Nc:
        raise PrototypeError(f"The subset size k must be between 1 and {Nc - 1} (the complete rows of "
                             f"{source}, the candidates: {Nc:,} of {scan.n_rows:,} rows), got {k}.")
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
    return ChunkedPrototypes(indices=scan.rows[idx], codes=codes, criterion=criterion, mmd=crit.value(idx),
                             chi2=_chi2_value(scan.category_counts, codes, tables.cards), value=value,
                             start_value=start_value, swaps=swaps, passes=passes, converged=converged, seconds=secs,
                             seconds_start=t_start, seconds_read=scan.seconds, n_init=n_used, rows=scan.n_rows,
                             candidates=Nc)


def chunk_features(tables: CellTables, codes: np.ndarray, row0: int = 0) -> sp.csr_matrix:
    """The feature map Phi of a chunk (:func:`bnfk_core.kernels.features`) as (expected cell counts) x (the
    complete-family feature of each cell): one compiled pass, then one sparse product."""
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    N = codes.shape[0]
    sizes = np.zeros(N, np.int64)
    _row_sizes(codes, tables.cards, tables.par, tables.npar, ENUMERATE_LIMIT, sizes)
    pos = np.concatenate([[0], np.cumsum(sizes)])
    E = int(pos[-1])
    er, eg, ew = np.zeros(E, np.int64), np.zeros(E, np.int64), np.zeros(E)
    _, _, extra = _chunk(tables, codes, row0, np.zeros(0), (pos[:-1], er, eg, ew), rows_out=True)
    C = sp.csr_matrix((ew, (er, eg)), shape=(N, tables.D))
    Phi = (C @ tables.cell_features()).tocsr()
    if extra is not None:
        big, F = extra
        sel = sp.csr_matrix((np.ones(big.size), (big, np.arange(big.size))), shape=(N, big.size))
        Phi = (Phi + sel @ F).tocsr()
    return Phi


# ====================================================================== kernels and log-likelihoods by chunks
#: rows of one block of the chunked kernel (features and the block of K: a few tens of MB)
KERNEL_BLOCK_ROWS = 16_384


def stream_gram(model, path, other, out, *, chunksize: int = DEFAULT_CHUNKSIZE, normalize: bool = False,
                progress=None, **options) -> tuple[int, int]:
    """The Fisher kernel between the rows of the file ``path`` (read in chunks) and the fixed set ``other``
    (CategoricalData in memory) -- each chunk's features by :func:`chunk_features` times the set's -- written a block of rows at a time to ``out``: a ``.npy`` path (the header of
    the N x M matrix, then its rows in order) or a ``.csv`` path (the plain matrix, appended).  Returns the shape."""
    chunks = _chunks(path, model, chunksize, options)
    other = model.align(other)
    N, M = chunks.n_rows, other.n_rows
    tables = CellTables(model)
    Phi_o = features(model, other, tables.pm)
    PhiT = Phi_o.T.tocsc()
    dy = np.maximum(np.asarray(Phi_o.multiply(Phi_o).sum(axis=1)).ravel(), 1e-300)
    ext = str(out).lower().rsplit(".", 1)[-1]
    with open(out, "wb" if ext == "npy" else "w") as fh:
        if ext == "npy":     # the .npy header, then the rows in order (C order): no memory map held in RSS
            np.lib.format.write_array_header_1_0(fh, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float64)),
                                                      "fortran_order": False, "shape": (N, M)})
        done = 0
        for row0, codes in chunks:
            for a in range(0, codes.shape[0], KERNEL_BLOCK_ROWS):
                P = chunk_features(tables, codes[a:a + KERNEL_BLOCK_ROWS], row0 + a)
                block = (P @ PhiT).toarray()
                if normalize:
                    dx = np.asarray(P.multiply(P).sum(axis=1)).ravel()
                    block /= np.sqrt(np.outer(np.maximum(dx, 1e-300), dy))
                if ext == "npy":
                    fh.write(np.ascontiguousarray(block, dtype="<f8").tobytes())
                else:
                    np.savetxt(fh, block, delimiter=",", fmt="%.17g")
            done += codes.shape[0]
            if progress is not None:
                progress(min(done / N, 0.999), f"kernel: {done:,} of {N:,} rows")
    return N, M


def stream_loglik(model, path, *, chunksize: int = DEFAULT_CHUNKSIZE, out=None, progress=None, **options) -> dict:
    """Per-row log P(x_observed) (:func:`bnfk_core.inference.log_likelihood`) of a file read in chunks,
    written to the CSV ``out`` (one column ``loglik``, the file's row order) when given; returns the total."""
    chunks = _chunks(path, model, chunksize, options)
    total, n = 0.0, 0
    with contextlib.ExitStack() as stack:
        fh = stack.enter_context(open(out, "w")) if out is not None else None
        if fh is not None:
            fh.write("loglik\n")
        for _, codes in chunks:
            ll = log_likelihood(model, chunks.data(codes))
            total += float(ll.sum())
            n += ll.shape[0]
            if fh is not None:
                pd.DataFrame({"loglik": ll}).to_csv(fh, header=False, index=False, float_format="%.17g")
            if progress is not None:
                progress(min(n / chunks.n_rows, 0.999), f"log-likelihood: {n:,} of {chunks.n_rows:,} rows")
    return {"total": total, "rows": n, "mean": total / n if n else float("nan")}
