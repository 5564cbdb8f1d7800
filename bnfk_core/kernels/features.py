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
        val = _safe_div(np.eye(r)[x[ok]] - th, np.sqrt(th * P[pj][:, None]))
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


FEATURE_CHUNK_ROWS = (
    65_536  # rows of one block of the feature map (about 100 MiB of temporaries for 100 columns)
)


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
    """Yield ``(start, Phi[start:start + chunk_rows])``: the feature map (:func:`features`) a block of rows at
    a time, for row-wise work (mean embeddings, kernels against a fixed set) on more rows than Phi would hold.

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
    step = max(1, int(chunk_rows))
    for a in range(0, codes.shape[0], step):
        yield a, _feature_block(model, pm, codes[a : a + step], off)


def features(model, data, marginals=None, chunk_rows: int = FEATURE_CHUNK_ROWS) -> sp.csr_matrix:
    """The explicit Fisher feature map Phi (N, sum_i q_i r_i), K = Phi Phi^T (module docstring).

    Built ``chunk_rows`` rows at a time (each row's entries are computed from that row alone, so the blocks
    are the rows of the one-block matrix); the temporaries are those of one block, not of all N rows.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData or numpy.ndarray
        The rows (codes aligned to the model; -1 is missing).
    marginals : ParentMarginals, optional
        P(pi_i = j) to use instead of the model's exact ones.
    chunk_rows : int
        Rows built at once.

    Returns
    -------
    scipy.sparse.csr_matrix
        Row x holds [pi_i(x) = j] ([x_i = k] - theta_ijk) / sqrt(theta_ijk P(pi_i = j)) in column
        ``offset_i + j r_i + k``; a row with missing cells holds E[phi(x) | x_observed].

    Raises
    ------
    KernelError
        Rows of the wrong width, or a cell the model gives probability zero.

    References
    ----------
    The bnfk paper, Theorem 1 and its derivation ("Multivariate Fisher kernel", eqs. 8-9):
    phi(x) . phi(y) = s(x; theta)^T I(theta)^-1 s(y; theta), block i giving K_i of eq. (2).
    """
    codes = row_codes(model, data)
    pm = parent_marginals(model) if marginals is None else marginals
    off = feature_offsets(model)
    N = codes.shape[0]
    step = max(1, int(chunk_rows))
    if N <= step:
        return _feature_block(model, pm, codes, off)
    parts = [_feature_block(model, pm, codes[a : a + step], off) for a in range(0, N, step)]
    nnz = sum(int(P.nnz) for P in parts)
    idx = np.int64 if max(nnz, int(off[-1])) >= 2**31 - 1 else np.int32
    indptr = np.zeros(N + 1, idx)
    data_ = np.empty(nnz)
    indices = np.empty(nnz, idx)
    at, row = 0, 0
    for P in parts:
        n, z = P.shape[0], int(P.nnz)
        data_[at : at + z] = P.data
        indices[at : at + z] = P.indices
        indptr[row + 1 : row + n + 1] = P.indptr[1:] + at
        at, row = at + z, row + n
    del parts
    return sp.csr_matrix((data_, indices, indptr), shape=(N, int(off[-1])))
