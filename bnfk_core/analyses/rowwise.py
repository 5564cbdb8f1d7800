"""Row-wise work on files too big for memory: mean embeddings, greedy-MMD prototypes, kernels against a
fixed set and log-likelihoods, a chunk of rows at a time.

The rows come from :class:`bnfk_core.data.stream.CodeChunks` (the same codes as ``load_csv(path,
model=...)``).

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
(:func:`bnfk_core.kernels.fisher.features`, family posteriors from the batched junction tree) and add their
feature sums directly.  So ``mean_embedding`` is linear in N, with memory for one chunk.

The pass over the file runs on a runner (:mod:`bnfk_core.data.runners`: here a chunk at a time, or on the
partitions of a Dask cluster): each piece gives its counts (:func:`scan_chunk`), the client adds them up in
file order (:func:`merge_scans`).  Greedy-MMD prototypes over the complete rows:
:mod:`bnfk_core.analyses.prototypes.rowwise`.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..data.runners import runner_for
from ..data.stream import DEFAULT_CHUNKSIZE, CodeChunks
from ..errors import KernelError, ModelError
from ..inference.queries import log_likelihood, parent_marginals
from ..kernels.features import check_positive, feature_offsets, features, row_codes
from ..kernels.fisher import normalize_rows

__all__ = [
    "ENUMERATE_LIMIT",
    "CellTables",
    "chunk_features",
    "mean_embedding",
    "mean_embedding_dask",
    "merge_scans",
    "scan_chunk",
    "scan_file",
    "file_codes",
    "sum_squares",
    "stream_gram",
    "stream_loglik",
    "stream_mmd",
]

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
        P = np.concatenate(
            [np.repeat(np.asarray(self.pm.probs[i], dtype=float), self.cards[i]) for i in range(n)]
        )
        self.P = P
        tp = self.theta * P
        self.s = np.divide(1.0, np.sqrt(tp), out=np.zeros_like(tp), where=tp > 0)
        q = [int(model.cpts[i].shape[0]) for i in range(n)]
        self.group_starts = np.concatenate(
            [self.off[i] + np.arange(q[i]) * self.cards[i] for i in range(n)]
        ).astype(np.int64)
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
            for m in range(len(ps) - 1, -1, -1):  # C order, as model.parent_config (ravel_multi_index)
                self.par[i, m] = ps[m]
                self.stride[i, m] = st
                st *= int(self.cards[ps[m]])
        ts = self.theta * self.s
        # |phi|^2 of a complete family at cell g: sum_k' (theta s)^2 over its group + s_g^2 (1 - 2 theta_g)
        g2 = np.add.reduceat(ts * ts, self.group_starts) if self.D else np.zeros(0)
        self.sq_cell = np.repeat(g2, self.group_size) + self.s**2 * (1.0 - 2.0 * self.theta)
        self.index_dtype = np.int16 if self.D < 2**15 - 1 else np.int32

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
            cols = np.repeat(self.cell_start, self.cell_size) + (
                np.arange(rows.size) - np.repeat(first, self.cell_size)
            )
            vals = ((cols == rows).astype(float) - self.theta[cols]) * self.s[cols]
            self._cell_features = sp.csr_matrix((vals, (rows, cols)), shape=(self.D, self.D))
        return self._cell_features

    def codes_of(self, gidx: np.ndarray) -> np.ndarray:
        """The states of complete rows from their cell indices."""
        return ((np.asarray(gidx, dtype=np.int64) - self.off[:-1][None, :]) % self.cards[None, :]).astype(
            np.int32
        )


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
def _chunk_counts(
    codes, cards, par, npar, stride, off, log_theta, P, limit, counts, gidx, status, emit, pos, er, eg, ew
):  # pragma: no cover
    """With ``emit`` the weights are written as entries (row, cell, weight) from ``pos[row]`` on instead of
    added to ``counts`` (a chunk's sparse matrix of expected cell counts).  Per row: complete families add 1
    to their cell (and give gidx); a row with missing cells adds its
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
    """Entries each row emits: 1 per complete family, its completions per touched family (0 past
    ``limit``)."""
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
    direct: np.ndarray | None = None  # a chunk's part only: features of the rows counted directly
    row0: int = 0  # a chunk's part only: the row its row numbers count from


def _chunk(
    tables: CellTables, codes: np.ndarray, row0: int, counts: np.ndarray, entries=None, rows_out=False
):
    """Counts of one chunk into ``counts`` (or, with ``entries`` = (pos, er, eg, ew), its entries); returns
    (gidx, status, feature sum of the general-path rows -- or their feature rows with ``rows_out``)."""
    model = tables.model
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    N = codes.shape[0]
    gidx = np.empty((N, tables.n), np.int64)
    status = np.zeros(N, np.int64)
    if entries is None:
        z = np.zeros(0, np.int64)
        _chunk_counts(
            codes,
            *tables.args()[:4],
            tables.off,
            tables.log_theta,
            tables.P,
            ENUMERATE_LIMIT,
            counts,
            gidx,
            status,
            False,
            z,
            z,
            z,
            np.zeros(0),
        )
    else:
        _chunk_counts(
            codes,
            *tables.args()[:4],
            tables.off,
            tables.log_theta,
            tables.P,
            ENUMERATE_LIMIT,
            counts,
            gidx,
            status,
            True,
            *entries,
        )
    bad = np.flatnonzero((status == 1) | (status >= 3))
    if bad.size:
        r = int(bad[0])
        if status[r] == 1:
            raise ModelError(
                f"Row {row0 + r + 1} has observed values that the model gives probability zero; "
                "fit the parameters with a pseudo-count (method 'smoothed')."
            )
        i = int(status[r] - 3)
        sub = codes[r : r + 1]
        check_positive(model, tables.pm, i, model.parent_config(i, sub), sub[:, i])
        raise KernelError(
            f"Variable '{model.variables[i]}' has probability zero in row {row0 + r + 1}; fit the "
            "parameters with a pseudo-count (method 'smoothed')."
        )
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
    chunks' parts up; a Dask partition runs this with ``row0 = 0``."""
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
    return _Pass(counts, int(codes.shape[0]), g, rows, cat, time.perf_counter() - t0, extra, int(row0))


def merge_scans(tables: CellTables, parts) -> _Pass:
    """The pass over all chunks from their :func:`scan_chunk` parts, in file order: each part's row numbers
    (counted from its ``row0``) are shifted by the rows before it."""
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
            r_parts.append(part.rows - part.row0 + n)
        n += part.n_rows
    gidx = np.concatenate(g_parts) if g_parts else None
    rows = np.concatenate(r_parts) if r_parts else None
    return _Pass(tables.embed_counts(counts) + direct, n, gidx, rows, cat, time.perf_counter() - t0)


def _scan_part(codes: np.ndarray, row0: int, tables: CellTables, keep_candidates: bool) -> _Pass:
    """:func:`scan_chunk` as a piece of a pass on a runner (:meth:`bnfk_core.data.stream.CodeChunks.map`)."""
    return scan_chunk(tables, codes, row0, keep_candidates)


def scan_file(
    chunks: CodeChunks, tables: CellTables, *, keep_candidates: bool, progress=None, share=1.0
) -> _Pass:
    """The pass over the file of ``chunks`` on its runner: its pieces' :func:`scan_chunk` parts merged."""
    t0 = time.perf_counter()

    def parts():
        n = 0
        for rows, part, _ in chunks.map(_scan_part, (tables, keep_candidates)):
            yield part
            n += rows
            if progress is not None:
                progress(share * n / chunks.n_rows, f"{chunks.source}: {n:,} of {chunks.n_rows:,} rows")

    out = merge_scans(tables, parts())
    if keep_candidates and out.gidx is None:
        out.gidx, out.rows = np.zeros((0, tables.n), tables.index_dtype), np.zeros(0, np.int64)
    out.seconds = time.perf_counter() - t0
    return out


def file_codes(path, model, chunksize, options, runner=None) -> CodeChunks:
    """``path`` (a file, or already :class:`~bnfk_core.data.stream.CodeChunks`) read in chunks aligned to
    ``model`` on ``runner`` (pass 1 runs here)."""
    if isinstance(path, CodeChunks):
        return path
    return CodeChunks(path, model, chunksize=chunksize, runner=runner, **(options or {}))


def mean_embedding(
    model,
    path,
    *,
    chunksize: int = DEFAULT_CHUNKSIZE,
    tables: CellTables | None = None,
    progress=None,
    engine: str = "local",
    scheduler: str | None = None,
    client=None,
    blocksize="64MB",
    runner=None,
    **options,
) -> tuple[np.ndarray, int]:
    """(mean phi over the rows of the file ``path``, rows): :func:`bnfk_core.kernels.fisher.mean_features` of
    ``load_csv(path, model=model)`` read ``chunksize`` rows at a time (module docstring), on ``runner`` or the
    runner of ``engine`` (``dask``: the partitions of a Dask cluster,
    :func:`bnfk_core.data.runners.runner_for`)."""
    if runner is None:
        with runner_for(
            engine,
            chunksize=chunksize,
            scheduler=scheduler,
            client=client,
            blocksize=blocksize,
            error=KernelError,
        ) as r:
            return mean_embedding(
                model, path, chunksize=chunksize, tables=tables, progress=progress, runner=r, **options
            )
    tables = CellTables(model) if tables is None else tables
    res = scan_file(
        file_codes(path, model, chunksize, options, runner), tables, keep_candidates=False, progress=progress
    )
    return res.phi_total / res.n_rows, res.n_rows


def mean_embedding_dask(
    model, path, *, tables=None, scheduler: str | None = None, client=None, blocksize="64MB", **options
) -> tuple[np.ndarray, int]:
    """:func:`mean_embedding` on the partitions of a Dask cluster."""
    return mean_embedding(
        model,
        path,
        tables=tables,
        engine="dask",
        scheduler=scheduler,
        client=client,
        blocksize=blocksize,
        **options,
    )


def stream_mmd(
    model,
    path_a,
    path_b,
    *,
    chunksize: int = DEFAULT_CHUNKSIZE,
    progress=None,
    engine: str = "local",
    scheduler: str | None = None,
    client=None,
    blocksize="64MB",
    **options,
) -> dict:
    """Squared MMD (paper eq. 10) between two files via their mean embeddings, each read in chunks -- here, or
    with ``engine="dask"`` on a Dask cluster's workers (one runner for both files)."""
    tables = CellTables(model)
    with runner_for(
        engine,
        chunksize=chunksize,
        scheduler=scheduler,
        client=client,
        blocksize=blocksize,
        error=KernelError,
    ) as runner:
        mu_a, na = mean_embedding(
            model, path_a, chunksize=chunksize, tables=tables, progress=progress, runner=runner, **options
        )
        mu_b, nb = mean_embedding(
            model, path_b, chunksize=chunksize, tables=tables, progress=progress, runner=runner, **options
        )
    d = mu_a - mu_b
    return {"mmd": float(d @ d), "rows_a": na, "rows_b": nb, "engine": engine}


def sum_squares(gidx: np.ndarray, tables: CellTables) -> np.ndarray:
    """|phi(c)|^2 of complete rows given by their cell indices."""
    out = np.empty(gidx.shape[0])
    _sq(np.ascontiguousarray(gidx), tables.sq_cell, out)
    return out


def chunk_features(tables: CellTables, codes: np.ndarray, row0: int = 0) -> sp.csr_matrix:
    """The feature map Phi of a chunk (:func:`bnfk_core.kernels.fisher.features`) as (expected cell counts) x
    (the complete-family feature of each cell): one compiled pass, then one sparse product."""
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


def stream_gram(
    model,
    path,
    other,
    out,
    *,
    chunksize: int = DEFAULT_CHUNKSIZE,
    normalize: bool = False,
    progress=None,
    **options,
) -> tuple[int, int]:
    """The Fisher kernel between the rows of the file ``path`` (read in chunks) and the fixed set ``other``
    (CategoricalData in memory) -- each chunk's features by :func:`chunk_features` times the set's -- written
    a block of rows at a time to ``out``: a ``.npy`` path (the header of
    the N x M matrix, then its rows in order) or a ``.csv`` path (the plain matrix, appended).  Returns the
    shape."""
    chunks = file_codes(path, model, chunksize, options)
    other = model.align(other)
    N, M = chunks.n_rows, other.n_rows
    tables = CellTables(model)
    Phi_o = features(model, other, tables.pm)
    PhiT = Phi_o.T.tocsc()
    dy = np.asarray(Phi_o.multiply(Phi_o).sum(axis=1)).ravel()
    empty_y = (row_codes(model, other) < 0).all(axis=1)
    ext = str(out).lower().rsplit(".", 1)[-1]
    with open(out, "wb" if ext == "npy" else "w") as fh:
        if ext == "npy":  # the .npy header, then the rows in order (C order): no memory map held in RSS
            np.lib.format.write_array_header_1_0(
                fh,
                {
                    "descr": np.lib.format.dtype_to_descr(np.dtype(np.float64)),
                    "fortran_order": False,
                    "shape": (N, M),
                },
            )
        done = 0
        for row0, codes in chunks:
            for a in range(0, codes.shape[0], KERNEL_BLOCK_ROWS):
                P = chunk_features(tables, codes[a : a + KERNEL_BLOCK_ROWS], row0 + a)
                block = (P @ PhiT).toarray()
                if normalize:
                    dx = np.asarray(P.multiply(P).sum(axis=1)).ravel()
                    rows = codes[a : a + KERNEL_BLOCK_ROWS]
                    normalize_rows(block, dx, dy, (rows < 0).all(axis=1), empty_y)
                if ext == "npy":
                    fh.write(np.ascontiguousarray(block, dtype="<f8").tobytes())
                else:
                    np.savetxt(fh, block, delimiter=",", fmt="%.17g")
            done += codes.shape[0]
            if progress is not None:
                progress(min(done / N, 0.999), f"kernel: {done:,} of {N:,} rows")
    return N, M


def stream_loglik(
    model, path, *, chunksize: int = DEFAULT_CHUNKSIZE, out=None, progress=None, **options
) -> dict:
    """Per-row log P(x_observed) (:func:`bnfk_core.inference.queries.log_likelihood`) of a file read in
    chunks, written to the CSV ``out`` (one column ``loglik``, the file's row order) when given; returns the
    total."""
    chunks = file_codes(path, model, chunksize, options)
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
