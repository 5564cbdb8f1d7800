"""The explicit feature map of the Bayesian-network Fisher kernel (paper, Theorem 1).

Block i of phi(x) has q_i * r_i columns; column ``offset_i + j * r_i + k`` holds

    [pi_i(x) = j] * ([x_i = k] - theta_ijk) / sqrt(theta_ijk * P(pi_i = j)),

so that phi(x) . phi(y) = K(x, y) exactly (block i contributes K_i).  Row x has r_i
non-zeros in block i.  Rows with missing values get the *marginalized* kernel: their
features are E[phi(x) | x_observed] under the model (paper, conclusion), i.e. the
posterior-weighted average over completions.  The Gram matrix itself is :func:`bnfk_core.kernels.fisher.gram`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..data.limits import DEFAULT_FEATURE_BYTES, format_bytes, resolve_feature_limit
from ..data.table import as_data
from ..errors import KernelError
from ..inference.queries import cached_family_posteriors, parent_marginals

__all__ = [
    "row_codes",
    "check_positive",
    "feature_offsets",
    "block_matrix",
    "used_blocks",
    "DENSE_BLOCK_BYTES",
    "FEATURE_CHUNK_ROWS",
    "FEATURE_BLOCK_ENTRIES",
    "FEATURE_ENTRY_BYTES",
    "FEATURE_TEMP_BYTES",
    "row_entries",
    "feature_bytes",
    "guard_features",
    "guard_table_features",
    "iter_features",
    "features",
]


# ---------------------------------------------------------------------- helpers
def row_codes(model, data) -> np.ndarray:
    """The code rows of ``data`` (a CategoricalData, a pandas DataFrame or codes) aligned to ``model``.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData, pandas.DataFrame or ndarray of int

    Returns
    -------
    ndarray of int, shape (n, n_vars)

    Raises
    ------
    KernelError
        When code rows have another number of columns than the model has variables.
    """
    data = as_data(data, model=model)
    if hasattr(data, "codes"):
        return model.align(data).codes
    codes = np.atleast_2d(np.asarray(data))
    if codes.shape[1] != model.n_vars:
        raise KernelError(f"Rows have {codes.shape[1]} values but the model has {model.n_vars} variables.")
    return codes


def _label(model, i: int, j: int) -> str:
    ps = model.parents[i]
    if not ps:
        return ""
    cards = [int(model.cardinalities[p]) for p in ps]
    vals = np.unravel_index(j, cards)
    return " given " + ", ".join(f"{model.variables[p]}={model.states[p][v]}" for p, v in zip(ps, vals))


def check_positive(model, pm, i: int, p: np.ndarray, x: np.ndarray):
    """KernelError naming the variable and configuration if a used cell has probability zero.

    Parameters
    ----------
    model : BayesNet
    pm : parent marginals of ``model`` (:func:`~bnfk_core.inference.queries.parent_marginals`)
    i : int
        Variable index.
    p, x : ndarray of int
        Parent configuration and state of the rows used.

    Raises
    ------
    KernelError
        When theta_{i,p,x} or P(pi_i = p) is 0 (Theorem 1 divides by both).
    """
    theta = model.cpts[i][p, x]
    P = pm.probs[i][p]
    bad = np.flatnonzero(~((theta > 0) & (P > 0)))
    if bad.size:
        j, k = int(p[bad[0]]), int(x[bad[0]])
        what = "parent configuration" if not P[bad[0]] > 0 else "value"
        raise KernelError(
            f"Variable '{model.variables[i]}' has probability zero for {what} "
            f"'{model.states[i][k]}'{_label(model, i, j)}; the Fisher kernel is undefined there — "
            "fit the parameters with a pseudo-count (method 'smoothed')."
        )


# ---------------------------------------------------------------------- feature blocks
def feature_offsets(model) -> np.ndarray:
    """Column offset of every variable's block in :func:`features` (length n+1).

    Parameters
    ----------
    model : BayesNet

    Returns
    -------
    ndarray of int64, shape (n_vars + 1,)
    """
    sizes = [t.size for t in model.cpts]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _block_entries(model, pm, i: int, codes: np.ndarray, rows: np.ndarray | None = None):
    """COO entries (row, col within block, value) of block i for the given rows (all if None).

    Complete-family rows get phi exactly; the others get E[phi | observed].
    """
    if rows is None:
        rows = np.arange(codes.shape[0])
    theta, P = model.cpts[i], pm.probs[i]
    r = theta.shape[1]
    sub = codes[rows]
    p = model.parent_config(i, sub)
    x = sub[:, i].astype(np.int64)
    ok = (p >= 0) & (x >= 0)
    R, C, V = [], [], []
    if ok.any():
        check_positive(model, pm, i, p[ok], x[ok])
        pj = p[ok]
        th = theta[pj]  # (n, r)
        den = np.sqrt(th * P[pj][:, None])
        val = _safe_div(-th, den)
        at = np.arange(len(pj))
        val[at, x[ok]] += 1.0 / den[at, x[ok]]  # the row's own state: [x_i = k] = 1 (den > 0, checked)
        R.append(np.repeat(np.flatnonzero(ok), r))
        C.append((pj[:, None] * r + np.arange(r)).ravel())
        V.append(val.ravel())
    if (~ok).any():
        # E[phi | x_obs] from F[b, j, k] = P(pi_i = j, X_i = k | x_obs):  (F_jk' - P(pi_i = j | x_obs)
        # theta_jk') / sqrt(theta_jk' P_j), over the parent configurations the row can take
        frows, F = cached_family_posteriors(model, sub)[i]
        q = theta.shape[0]
        F = F.reshape(len(frows), q, r)
        Pj = F.sum(axis=2)
        b, pj = np.nonzero(Pj > 0)
        th = theta[pj]
        val = _safe_div(F[b, pj] - Pj[b, pj][:, None] * th, np.sqrt(th * P[pj][:, None]))
        R.append(np.repeat(frows[b], r))
        C.append((pj[:, None] * r + np.arange(r)).ravel())
        V.append(val.ravel())
    if not R:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(R), np.concatenate(C), np.concatenate(V)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0 (a zero-probability state that the row does not take: its
    feature entry is (0 - 0) / 0, whose limit is 0)."""
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def block_matrix(model, pm, i, codes, rows=None) -> sp.csr_matrix:
    """Block i of the feature map as a sparse (rows, q_i r_i) matrix (all rows of ``codes`` if ``rows`` is
    None).

    Parameters
    ----------
    model : BayesNet
    pm : parent marginals of ``model``
    i : int
    codes : ndarray of int, shape (n, n_vars)
    rows : ndarray of int, optional

    Returns
    -------
    scipy.sparse.csr_matrix

    References
    ----------
    Paper, Theorem 1 (the features of variable i).
    """
    n = codes.shape[0] if rows is None else len(rows)
    r_, c_, v_ = _block_entries(model, pm, i, codes, rows)
    if rows is not None and len(r_):
        pos = np.full(codes.shape[0], -1, np.int64)
        pos[rows] = np.arange(len(rows))
        r_ = pos[r_]
    return sp.csr_matrix((v_, (r_, c_)), shape=(n, model.cpts[i].size))


#: :func:`used_blocks` returns dense blocks up to this many bytes in all
DENSE_BLOCK_BYTES = 64 * 2**20


def used_blocks(model, pm, i, *codes, max_bytes: float | None = None) -> tuple[list, bool]:
    """Block i of the feature map for each code matrix in ``codes``, and whether they are dense.

    Dense arrays over the columns that any of the rows uses (a few dozen: the states of the parent
    configurations the rows can take), in the same order for every matrix, when they fit ``max_bytes`` --
    so products run in BLAS and need no densifying; else sparse (rows, q_i r_i) matrices as
    :func:`block_matrix`.  Either way ``F_x @ F_y.T`` is the same block-i kernel term.

    Parameters
    ----------
    model : BayesNet
    pm : parent marginals of ``model``
    i : int
    *codes : ndarray of int, shape (n, n_vars)
    max_bytes : float, optional
        Default ``DENSE_BLOCK_BYTES``.

    Returns
    -------
    blocks : list of ndarray or csr_matrix
    dense : bool
    """
    entries = [_block_entries(model, pm, i, c) for c in codes]
    cols = np.unique(np.concatenate([e[1] for e in entries]))
    if sum(c.shape[0] for c in codes) * len(cols) * 8 > (
        DENSE_BLOCK_BYTES if max_bytes is None else max_bytes
    ):
        return [
            sp.csr_matrix((v_, (r_, c_)), shape=(c.shape[0], model.cpts[i].size))
            for c, (r_, c_, v_) in zip(codes, entries)
        ], False
    out = []
    for c, (r_, c_, v_) in zip(codes, entries):
        n, m = c.shape[0], len(cols)
        flat = r_ * m + np.searchsorted(cols, c_)
        out.append(np.bincount(flat, weights=v_, minlength=n * m).reshape(n, m))
    return out, True


FEATURE_CHUNK_ROWS = 65_536  # the most rows of one block of the feature map

#: the most entries of one block of the feature map: blocks are cut so that their rows' entries (and the
#: expected features' dense family posteriors of rows with a missing cell) stay below this many
FEATURE_BLOCK_ENTRIES = 2**22
#: bytes one stored entry of the assembled map takes at the peak: the blocks' CSR (value and column, 12) and
#: the assembled matrix they are copied into (12)
FEATURE_ENTRY_BYTES = 24
#: bytes one entry of a block takes while the block is built (triplets, their concatenation, values and
#: denominators, the CSR conversion): about 100, so a block's temporaries stay near 400 MiB
FEATURE_TEMP_BYTES = 100


def row_entries(model, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many entries each row puts into the feature map, and how many its block's temporaries hold.

    A row whose family i is observed holds r_i entries in block i (its score is dense over the states,
    module docstring); one with a missing cell holds r_i entries for every parent configuration its observed
    parents allow (the expected features), and its family posterior is dense over all q_i r_i cells while the
    block is built.

    Parameters
    ----------
    model : BayesNet
    codes : ndarray of int, shape (n, n_vars)
        Rows aligned to the model (-1: missing).

    Returns
    -------
    stored : ndarray of int64, shape (n_vars, n)
        Entries of row b in block i (at most; a configuration of posterior zero stores none).
    temporary : ndarray of int64, shape (n,)
        Entries of row b's temporaries summed over the blocks.
    """
    n = codes.shape[0]
    stored = np.zeros((model.n_vars, n), np.int64)
    temporary = np.zeros(n, np.int64)
    cards = np.asarray(model.cardinalities, np.int64)
    for i in range(model.n_vars):
        q, r = (int(d) for d in model.cpts[i].shape)
        configs = np.ones(n, np.int64)
        for p in model.parents[i]:
            configs *= np.where(codes[:, p] < 0, cards[p], 1)
        complete = (configs == 1) & (codes[:, i] >= 0)
        stored[i] = configs * r
        temporary += np.where(complete, r, q * r)
    return stored, temporary


def feature_bytes(model, data) -> int:
    """Bytes :func:`features` needs at its peak for the rows of ``data``: :data:`FEATURE_ENTRY_BYTES` for
    each stored entry (:func:`row_entries`) and :data:`FEATURE_TEMP_BYTES` for each entry of its largest
    block.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData, pandas.DataFrame or codes

    Returns
    -------
    int
    """
    stored, temporary = row_entries(model, row_codes(model, data))
    return _need(stored, temporary)


def _need(stored: np.ndarray, temporary: np.ndarray) -> int:
    block = min(int(temporary.sum()), max(FEATURE_BLOCK_ENTRIES, int(temporary.max(initial=0))))
    return int(stored.sum()) * FEATURE_ENTRY_BYTES + block * FEATURE_TEMP_BYTES


def guard_features(model, codes: np.ndarray, max_bytes: float | None = DEFAULT_FEATURE_BYTES) -> np.ndarray:
    """Refuse, before any entry is computed, a feature map over its memory limit, in one sentence naming the
    column that takes the most of it; else return every row's temporary entries (to cut the blocks).

    The feature map has a budget of its own (:func:`bnfk_core.data.limits.feature_limit`: the CLI's
    ``--max-feature-memory``, else the operator's ceiling), apart from the N x N work's ``--max-memory``.

    Parameters
    ----------
    model : BayesNet
    codes : ndarray of int, shape (n, n_vars)
    max_bytes : float or None
        The limit (default: the one set for this run; None: none).

    Returns
    -------
    ndarray of int64, shape (n,)
        :func:`row_entries`' temporaries.

    Raises
    ------
    KernelError
    """
    stored, temporary = row_entries(model, codes)
    limit = resolve_feature_limit(max_bytes)
    need = _need(stored, temporary)
    if limit is not None and need > limit:
        per = stored.sum(axis=1)
        w = int(np.argmax(per))
        name = str(model.variables[w])
        name = name if len(name) <= 80 else name[:79] + "…"
        raise KernelError(
            f"The Fisher feature map of {codes.shape[0]:,} rows needs about {format_bytes(need)}, over the "
            f"feature-map memory limit of {format_bytes(limit)}: every row holds one entry per state, and "
            f"column '{name}' ({len(model.states[w]):,} states) alone takes "
            f"{format_bytes(int(per[w]) * FEATURE_ENTRY_BYTES)}; use fewer rows, bin or drop that column, "
            "or raise the feature-map memory limit."
        )
    return temporary


def guard_table_features(
    n_rows: int, variables, state_counts, source: str, max_bytes: float | None = DEFAULT_FEATURE_BYTES
) -> None:
    """Refuse, before any network is learned, a table whose Fisher feature map over ``n_rows`` rows would
    exceed the feature map's memory limit, in one sentence naming ``source`` and its widest column.

    Whatever the network, a row holds r_i entries in block i (:func:`row_entries`; more with missing
    cells), so ``n_rows`` x sum_i r_i entries is what every page building the map (clusters in feature space,
    prototypes, similar cases) needs at least.

    Parameters
    ----------
    n_rows : int
        The rows the map is built on.
    variables : sequence of str
    state_counts : sequence of int
        r_i of every variable.
    source : str
        The table's name, for the message.
    max_bytes : float or None
        The limit (default: the one set for this run; None: none).

    Raises
    ------
    KernelError
    """
    r = np.asarray(state_counts, np.int64)
    limit = resolve_feature_limit(max_bytes)
    if limit is None or r.size == 0:
        return
    per_row = int(r.sum())
    need = int(n_rows) * per_row * FEATURE_ENTRY_BYTES
    need += min(int(n_rows) * per_row, max(FEATURE_BLOCK_ENTRIES, per_row)) * FEATURE_TEMP_BYTES
    if need > limit:
        w = int(np.argmax(r))
        name = str(variables[w])
        name = name if len(name) <= 80 else name[:79] + "…"
        raise KernelError(
            f"{source}: the Fisher feature map of its {int(n_rows):,} rows needs about {format_bytes(need)}, "
            f"over the feature-map memory limit of {format_bytes(limit)} (every row holds one entry per "
            f"state of every column; {len(r):,} columns, {per_row:,} states; the widest, '{name}', has "
            f"{int(r[w]):,}); drop or bin columns, or use fewer rows."
        )


def _block_starts(temporary: np.ndarray, chunk_rows: int) -> list[int]:
    """Row offsets cutting the map into blocks of at most ``chunk_rows`` rows and (but for a single row)
    :data:`FEATURE_BLOCK_ENTRIES` temporary entries."""
    n = len(temporary)
    step = max(1, int(chunk_rows))
    cum = np.cumsum(temporary)
    starts = [0]
    while starts[-1] < n:
        a = starts[-1]
        base = int(cum[a - 1]) if a else 0
        b = int(np.searchsorted(cum, base + FEATURE_BLOCK_ENTRIES, side="right"))
        starts.append(min(max(b, a + 1), a + step, n))
    return starts


def _feature_block(model, pm, codes: np.ndarray, off: np.ndarray) -> sp.csr_matrix:
    R, C, V = [], [], []
    for i in range(model.n_vars):
        r_, c_, v_ = _block_entries(model, pm, i, codes)
        R.append(r_)
        C.append(c_ + off[i])
        V.append(v_)
    return sp.csr_matrix(
        (np.concatenate(V), (np.concatenate(R), np.concatenate(C))), shape=(codes.shape[0], int(off[-1]))
    )


def iter_features(model, data, chunk_rows: int = FEATURE_CHUNK_ROWS, marginals=None):
    """Yield ``(start, Phi[start:stop])``: the feature map (:func:`features`) a block of rows at a time, for
    row-wise work (mean embeddings, kernels against a fixed set) on more rows than Phi would hold.

    Blocks hold at most ``chunk_rows`` rows, fewer when the rows are wide (:data:`FEATURE_BLOCK_ENTRIES`), so
    one block's memory stays bounded whatever the number of states.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData, pandas.DataFrame or codes
    chunk_rows : int
    marginals : parent marginals of ``model``, optional

    Yields
    ------
    start : int
    Phi : scipy.sparse.csr_matrix
    """
    codes = row_codes(model, data)
    pm = parent_marginals(model) if marginals is None else marginals
    off = feature_offsets(model)
    _, temporary = row_entries(model, codes)
    starts = _block_starts(temporary, chunk_rows)
    for a, b in zip(starts[:-1], starts[1:]):
        yield a, _feature_block(model, pm, codes[a:b], off)


def features(
    model,
    data,
    marginals=None,
    chunk_rows: int = FEATURE_CHUNK_ROWS,
    max_bytes: float | None = DEFAULT_FEATURE_BYTES,
) -> sp.csr_matrix:
    """The explicit Fisher feature map Phi (N, sum_i q_i r_i), K = Phi Phi^T (module docstring).

    Refused before any entry is computed when it would exceed its memory limit (:func:`guard_features`);
    built a block of rows at a time (each row's entries are computed from that row alone, so the blocks are
    the rows of the one-block matrix; at most ``chunk_rows`` rows and :data:`FEATURE_BLOCK_ENTRIES` entries a
    block), so the temporaries are those of one block, not of all N rows.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData or numpy.ndarray
        The rows (codes aligned to the model; -1 is missing).
    marginals : ParentMarginals, optional
        P(pi_i = j) to use instead of the model's exact ones.
    chunk_rows : int
        The most rows built at once.
    max_bytes : float or None
        The memory the map may take (default: the feature-map limit set for this run,
        :func:`bnfk_core.data.limits.feature_limit`; None: no limit).

    Returns
    -------
    scipy.sparse.csr_matrix
        Row x holds [pi_i(x) = j] ([x_i = k] - theta_ijk) / sqrt(theta_ijk P(pi_i = j)) in column
        ``offset_i + j r_i + k``; a row with missing cells holds E[phi(x) | x_observed].

    Raises
    ------
    KernelError
        Rows of the wrong width, a cell the model gives probability zero, or a map over ``max_bytes``.

    References
    ----------
    The bnfk paper, Theorem 1 and its derivation ("Multivariate Fisher kernel", eqs. 8-9):
    phi(x) . phi(y) = s(x; theta)^T I(theta)^-1 s(y; theta), block i giving K_i of eq. (2).
    """
    codes = row_codes(model, data)
    temporary = guard_features(model, codes, max_bytes)
    pm = parent_marginals(model) if marginals is None else marginals
    off = feature_offsets(model)
    N = codes.shape[0]
    starts = _block_starts(temporary, chunk_rows)
    if len(starts) <= 2:
        return _feature_block(model, pm, codes, off)
    parts = [_feature_block(model, pm, codes[a:b], off) for a, b in zip(starts[:-1], starts[1:])]
    nnz = sum(int(P.nnz) for P in parts)
    idx = np.int64 if max(nnz, int(off[-1])) >= 2**31 - 1 else np.int32
    indptr = np.zeros(N + 1, idx)
    data_ = np.empty(nnz)
    indices = np.empty(nnz, idx)
    at, row = 0, 0
    for j in range(len(parts)):
        P, parts[j] = parts[j], None  # each block freed once copied
        n, z = P.shape[0], int(P.nnz)
        data_[at : at + z] = P.data
        indices[at : at + z] = P.indices
        indptr[row + 1 : row + n + 1] = P.indptr[1:] + at
        at, row = at + z, row + n
    del parts
    return sp.csr_matrix((data_, indices, indptr), shape=(N, int(off[-1])))
