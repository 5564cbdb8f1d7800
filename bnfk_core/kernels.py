"""The Bayesian-network Fisher kernel (paper, Theorem 1), scaled-Hamming, Hamming, set kernel, MMD.

Theorem 1:  K(x, y) = sum_i K_i(x, y) with

    K_i(x, y) = [pi_i(x) = pi_i(y)] / P(pi_i(x)) * ( [x_i = y_i] / theta_{i, pi_i(x), x_i} - 1 ).

Explicit feature map (``features``).  Block i of phi(x) has q_i * r_i columns; column
``offset_i + j * r_i + k`` holds

    [pi_i(x) = j] * ([x_i = k] - theta_ijk) / sqrt(theta_ijk * P(pi_i = j)),

so that phi(x) . phi(y) = K(x, y) exactly (block i contributes K_i).  Row x has r_i
non-zeros in block i.  Rows with missing values get the *marginalized* kernel: their
features are E[phi(x) | x_observed] under the model (paper, conclusion), i.e. the
posterior-weighted average over completions.

Fast Gram (``gram``).  Per variable one of two exact evaluations is chosen by cost:

* dense: each row of block i is compressed to r_i - 1 numbers -- the component of
  (e_x - theta_j)/sqrt(theta_j) orthogonal to sqrt(theta_j), written in a Householder
  basis -- only over the parent configurations that occur; all dense blocks go into one
  BLAS product (``A @ A.T`` runs as a symmetric rank-k update);
* scatter: when a variable has many parent configurations, only pairs sharing one
  contribute (sum_j N_j M_j pairs, few); they are generated in bulk and added in place.
  A variable with a single parent configuration and no missing family cell (a root) puts its
  -1/P into one constant that initialises K and visits only the pairs with equal states
  (sum_k N_k M_k instead of N M).

Rows whose family has a missing cell are added afterwards with sparse expected features.
"""
from __future__ import annotations


import numba
import numpy as np
import scipy.sparse as sp

from .dag import DAG
from .errors import KernelError
from .limits import DEFAULT_MAX_BYTES, format_bytes, memory_limit, memory_limit_set, resolve_limit
from .inference import cached_family_posteriors, parent_marginals
from .learn import learn_structure
from .model import BayesNet, cpt_counts, estimate_cpt, fit
from .registry import KERNELS, LEARNERS, KernelSpec, feature_learners

__all__ = ["gram", "features", "feature_offsets", "contributions", "set_kernel", "mmd",
           "mean_features", "scaled_hamming_model", "DEFAULT_MAX_BYTES", "estimate_gram_bytes", "memory_limit", "memory_limit_set", "guard_tables",
           "workspace_bytes", "guard_workspace", "fits", "max_rows", "format_bytes", "resolve_limit", "WORKSPACE_MATRICES", "iter_features", "FISHER", "SCALED_HAMMING", "HAMMING", "THESIS_KERNELS",
           "FittedKernel", "NetworkKernel", "HammingKernel", "fit_fisher", "fit_scaled_hamming", "fit_hamming"]

#: the kernel names of the paper and the thesis (registered at the bottom of this module)
FISHER, SCALED_HAMMING, HAMMING = "fisher", "scaled-hamming", "hamming"
THESIS_KERNELS = (FISHER, HAMMING, SCALED_HAMMING)

# cost model of the two exact evaluations (seconds per unit), measured on the 2-core CI machine
_T_FLOP = 1.2e-10    # one multiply-add of the dense product
_T_OUT = 4e-9       # one output element of the dense product (symmetric update + copy)
_T_PAIR = 2.5e-9     # one pair of the compiled pair path
_T_GROUP = 1e-7      # fixed cost per parent configuration of the pair path


# ---------------------------------------------------------------------- helpers
def _codes(model, data) -> np.ndarray:
    if hasattr(data, "codes"):
        return model.align(data).codes
    codes = np.atleast_2d(np.asarray(data))
    if codes.shape[1] != model.n_vars:
        raise KernelError(f"Rows have {codes.shape[1]} values but the model has {model.n_vars} variables.")
    return codes


def estimate_gram_bytes(n_rows: int, n_cols: int) -> int:
    """Bytes of an (n_rows, n_cols) float64 Gram matrix."""
    return int(n_rows) * int(n_cols) * 8


#: The peak number of N x M float64 matrices alive at once on each quadratic path, the Gram matrix itself
#: included, measured with tracemalloc at N = 1,200 and 3,000 (tests/test_cluster_features.py checks that
#: the measured peaks stay within these estimates):
#:
#: * ``gram``: the matrix (1.0; ``normalize`` rescales it in place a block of rows at a time); the Fisher
#:   kernel's dense features and missing-row products are added by the caller as ``extra``;
#: * ``correlation``: the Gram, its symmetrised copy (dropped once shifted), the shifted matrix, a temporary
#:   of the shift and |shifted| (eq. 5.2's cost needs sum |X|): 4.0 at the peak;
#: * ``silhouette``: the Gram, the squared kernel distances and their roots: 3.0;
#: * ``spectral``: the Gram, the symmetrised affinity, scikit-learn's Laplacian and the eigensolver's
#:   shift-invert factorisation: 5.0;
#: * ``classification``: per split 3 train x train, 3 test x train and 1 test x test matrices (the fitted
#:   Grams, kNN's distances, the test Gram whose diagonal is used) -- measured 2.1 N^2 at test size 0.2,
#:   estimated 2.4 N^2.
#:
WORKSPACE_MATRICES = {"gram": 1.0, "correlation": 4.0, "spectral": 5.0, "silhouette": 3.0}
_CLASSIFICATION = (3.0, 3.0, 1.0)        # train x train, test x train, test x test matrices at the peak
_PATH_WORDS = {"correlation": "correlation clustering", "spectral": "spectral clustering", "silhouette": "the silhouette",
               "classification": "kernel classification"}


def workspace_bytes(path: str, n: int, m: int | None = None, *, test_size: float = 0.2) -> int:
    """Bytes of the whole work space of the quadratic ``path`` on ``n`` rows (``m``: the second side of
    a rectangular Gram; ``test_size``: the test fraction of ``classification``).  One estimate for every
    quadratic path, the Gram matrix included; see :data:`WORKSPACE_MATRICES`."""
    n = int(n)
    m = n if m is None else int(m)
    if path == "classification":
        nte = int(np.ceil(float(test_size) * n))
        ntr = n - nte
        a, b, c = _CLASSIFICATION
        cells = a * ntr * ntr + b * nte * ntr + c * nte * nte
    elif path in WORKSPACE_MATRICES:
        cells = WORKSPACE_MATRICES[path] * n * m
    else:
        raise KernelError(f"Unknown quadratic path '{path}'.")
    return int(np.ceil(cells)) * 8


def max_rows(path: str, max_bytes: float | None = DEFAULT_MAX_BYTES, *, test_size: float = 0.2) -> int | None:
    """The most rows whose work space on ``path`` fits the limit (None: no limit)."""
    limit = resolve_limit(max_bytes)
    return None if limit is None else _max_rows(path, limit, test_size=test_size)


def _max_rows(path: str, budget: float, extra_per_row: float = 0.0, test_size: float = 0.2) -> int:
    """The most rows whose work space on ``path`` (plus ``extra_per_row`` bytes a row) fits ``budget``."""
    lo, hi = 0, 1
    while workspace_bytes(path, hi, test_size=test_size) + extra_per_row * hi <= budget:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if workspace_bytes(path, mid, test_size=test_size) + extra_per_row * mid <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def fits(path: str, n: int, m: int | None = None, *, extra: int = 0, test_size: float = 0.2,
         max_bytes: float | None = DEFAULT_MAX_BYTES) -> bool:
    """Whether :func:`guard_workspace` would let ``path`` run on ``n`` rows."""
    limit = resolve_limit(max_bytes)
    return limit is None or workspace_bytes(path, n, m, test_size=test_size) + extra <= limit


def guard_workspace(path: str, n: int, m: int | None = None, *, extra: int = 0, test_size: float = 0.2,
                    max_bytes: float | None = DEFAULT_MAX_BYTES) -> int:
    """Refuse (KernelError, one line ending in a sampling suggestion) when the whole work space of the
    quadratic ``path`` on ``n`` rows -- :func:`workspace_bytes` plus ``extra`` bytes -- exceeds the limit.

    Every quadratic path calls this before it allocates.  ``max_bytes`` left at its default means the
    limit set for this run (the CLI's ``--max-memory``, the app's memory setting).  Returns the bytes."""
    limit = resolve_limit(max_bytes)
    m_ = int(n) if m is None else int(m)
    need = workspace_bytes(path, n, m_, test_size=test_size) + int(extra)
    if limit is None or need <= limit:
        return need
    if path == "gram":
        side = int(np.sqrt(max(limit - extra, 8) / 8))
        raise KernelError(f"A {int(n):,} x {m_:,} Gram matrix needs {format_bytes(need)}, over the "
                          f"{format_bytes(limit)} limit; sample at most about {side:,} rows "
                          "(or raise the memory limit).")
    side = _max_rows(path, limit - extra, test_size=test_size)
    raise KernelError(f"A {int(n):,} x {m_:,} Gram matrix with the work space of {_PATH_WORDS[path]} needs "
                      f"{format_bytes(need)}, over the {format_bytes(limit)} limit; sample at most about "
                      f"{side:,} rows (or raise the memory limit).")


def _guard(n: int, m: int, extra: int, max_bytes: float | None):
    """The Gram matrix's own guard (:func:`guard_workspace` on the ``gram`` path)."""
    guard_workspace("gram", n, m, extra=extra, max_bytes=max_bytes)


def _label(model, i: int, j: int) -> str:
    ps = model.parents[i]
    if not ps:
        return ""
    cards = [int(model.cardinalities[p]) for p in ps]
    vals = np.unravel_index(j, cards)
    return " given " + ", ".join(f"{model.variables[p]}={model.states[p][v]}" for p, v in zip(ps, vals))


def _check_positive(model, pm, i: int, p: np.ndarray, x: np.ndarray):
    """KernelError naming the variable and configuration if a used cell has probability zero."""
    theta = model.cpts[i][p, x]
    P = pm.probs[i][p]
    bad = np.flatnonzero(~((theta > 0) & (P > 0)))
    if bad.size:
        j, k = int(p[bad[0]]), int(x[bad[0]])
        what = "parent configuration" if not P[bad[0]] > 0 else "value"
        raise KernelError(f"Variable '{model.variables[i]}' has probability zero for {what} "
                          f"'{model.states[i][k]}'{_label(model, i, j)}; the Fisher kernel is undefined there — "
                          "fit the parameters with a pseudo-count (method 'smoothed').")


class _Var:
    """Per-variable row data: parent configuration p, state x, complete-family mask."""

    def __init__(self, model, pm, i, codes):
        self.p = model.parent_config(i, codes)
        self.x = codes[:, i].astype(np.int64)
        self.ok = (self.p >= 0) & (self.x >= 0)
        self.rows = np.flatnonzero(self.ok)
        _check_positive(model, pm, i, self.p[self.ok], self.x[self.ok])


# ---------------------------------------------------------------------- feature blocks
def feature_offsets(model) -> np.ndarray:
    """Column offset of every variable's block in :func:`features` (length n+1)."""
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
        _check_positive(model, pm, i, p[ok], x[ok])
        pj = p[ok]
        th = theta[pj]                                     # (n, r)
        val = _safe_div(np.eye(r)[x[ok]] - th, np.sqrt(th * P[pj][:, None]))
        R.append(np.repeat(np.flatnonzero(ok), r))
        C.append((pj[:, None] * r + np.arange(r)).ravel())
        V.append(val.ravel())
    if (~ok).any():
        # E[phi | x_obs] from F[b, j, k] = P(pi_i = j, X_i = k | x_obs):  (F_jk' - P(pi_i = j | x_obs) theta_jk')
        # / sqrt(theta_jk' P_j), over the parent configurations the row can take
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


def _block_matrix(model, pm, i, codes, rows=None) -> sp.csr_matrix:
    n = codes.shape[0] if rows is None else len(rows)
    r_, c_, v_ = _block_entries(model, pm, i, codes, rows)
    if rows is not None and len(r_):
        pos = np.full(codes.shape[0], -1, np.int64)
        pos[rows] = np.arange(len(rows))
        r_ = pos[r_]
    return sp.csr_matrix((v_, (r_, c_)), shape=(n, model.cpts[i].size))


FEATURE_CHUNK_ROWS = 65_536     # rows of one block of the feature map (about 100 MiB of temporaries for 100 columns)


def _feature_block(model, pm, codes: np.ndarray, off: np.ndarray) -> sp.csr_matrix:
    R, C, V = [], [], []
    for i in range(model.n_vars):
        r_, c_, v_ = _block_entries(model, pm, i, codes)
        R.append(r_)
        C.append(c_ + off[i])
        V.append(v_)
    return sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))),
                         shape=(codes.shape[0], int(off[-1])))


def iter_features(model, data, chunk_rows: int = FEATURE_CHUNK_ROWS, marginals=None):
    """Yield ``(start, Phi[start:start + chunk_rows])``: the feature map (:func:`features`) a block of rows at
    a time, for row-wise work (mean embeddings, kernels against a fixed set) on more rows than Phi would hold."""
    codes = _codes(model, data)
    pm = parent_marginals(model) if marginals is None else marginals
    off = feature_offsets(model)
    step = max(1, int(chunk_rows))
    for a in range(0, codes.shape[0], step):
        yield a, _feature_block(model, pm, codes[a:a + step], off)


def features(model, data, marginals=None, chunk_rows: int = FEATURE_CHUNK_ROWS) -> sp.csr_matrix:
    """The explicit Fisher feature map Phi (N, sum_i q_i r_i), K = Phi Phi^T (module docstring).

    Built ``chunk_rows`` rows at a time (each row's entries are computed from that row alone, so the blocks
    are the rows of the one-block matrix); the temporaries are those of one block, not of all N rows."""
    codes = _codes(model, data)
    pm = parent_marginals(model) if marginals is None else marginals
    off = feature_offsets(model)
    N = codes.shape[0]
    step = max(1, int(chunk_rows))
    if N <= step:
        return _feature_block(model, pm, codes, off)
    parts = [_feature_block(model, pm, codes[a:a + step], off) for a in range(0, N, step)]
    nnz = sum(int(P.nnz) for P in parts)
    idx = np.int64 if max(nnz, int(off[-1])) >= 2**31 - 1 else np.int32
    indptr = np.zeros(N + 1, idx)
    data_ = np.empty(nnz)
    indices = np.empty(nnz, idx)
    at, row = 0, 0
    for P in parts:
        n, z = P.shape[0], int(P.nnz)
        data_[at:at + z] = P.data
        indices[at:at + z] = P.indices
        indptr[row + 1:row + n + 1] = P.indptr[1:] + at
        at, row = at + z, row + n
    del parts
    return sp.csr_matrix((data_, indices, indptr), shape=(N, int(off[-1])))


def _householder_table(theta_rows: np.ndarray, P: np.ndarray) -> np.ndarray:
    """G[c, k, :] = H_c[1:, k] / sqrt(theta_ck P_c), H_c the reflection taking sqrt(theta_c) to -e_0.

    Rows 1.. of H_c are an orthonormal basis of sqrt(theta_c)^perp, so
    G[c,k] . G[c,l] = [k = l] / (theta_ck P_c) - 1 / P_c  (Theorem 1, same parent configuration).
    """
    s = np.sqrt(theta_rows)                       # (c, r)
    v = s.copy()
    v[:, 0] += 1.0                                # v = s + e_0, |v|^2 = 2 + 2 s_0
    H = np.eye(s.shape[1])[None] - 2.0 * v[:, :, None] * v[:, None, :] / (2.0 + 2.0 * s[:, 0])[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 / np.sqrt(theta_rows * P[:, None])          # (c, r); inf for zero-probability states
    scale[~np.isfinite(scale)] = 0.0                            # ... which no row takes (checked before)
    return np.transpose(H[:, 1:, :], (0, 2, 1)) * scale[:, :, None]  # (c, r, r-1)


# ---------------------------------------------------------------------- Gram
def gram(model, data, other=None, kind: str = FISHER, normalize: bool = False,
         max_bytes: float | None = DEFAULT_MAX_BYTES, marginals=None) -> np.ndarray:
    """Kernel matrix between the rows of ``data`` and of ``other`` (default: ``data``).

    Parameters
    ----------
    model : BayesNet or None
        The network behind the Fisher kernel.  For the other kernels it only selects the
        variables (None: all columns of ``data``).
    data, other : CategoricalData (or code matrices aligned to the model)
    kind : a name of :data:`bnfk_core.registry.KERNELS`.  ``"fisher"`` is Theorem 1 of the paper;
        every other kernel is fitted on ``data`` (e.g. ``"scaled-hamming"``: the Fisher kernel of
        the empty network with the marginal frequencies of ``data``, thesis eq. 3.2; ``"hamming"``:
        the fraction of matching variables, thesis eq. 2.17) and evaluated on (data, other).
    normalize : bool
        Return K(x,y) / sqrt(K(x,x) K(y,y)) (cosine normalisation).
    max_bytes : float or None
        Refuse (KernelError) when the matrix and work space would exceed this many bytes.
    marginals : ParentMarginals or None
        Use these P(pi_i = j) instead of the model's exact ones (for ablations, e.g. the uniform
        marginals an unpropagated junction tree gives); Fisher kernel only.
    """
    spec = KERNELS[kind]
    if kind != FISHER:
        train = data if model is None else data.select(list(model.variables))
        return spec.fit(train).gram(data, other, normalize=normalize, max_bytes=max_bytes)
    if model is None:
        raise KernelError("The Fisher kernel needs a model; learn or load a structure first.")
    X = _codes(model, data)
    sym = other is None
    Y = X if sym else _codes(model, other)
    pm = parent_marginals(model) if marginals is None else marginals
    if len(pm.probs) != model.n_vars or any(len(p) != model.n_parent_configs(i) for i, p in enumerate(pm.probs)):
        raise KernelError("The given parent marginals do not match the model's parent configurations.")
    if normalize:     # the normalisation's block temporaries come after the product's work space
        _guard(X.shape[0], Y.shape[0], _normalize_bytes(X.shape[0], Y.shape[0]), max_bytes)
    K = _fisher_gram(model, X, Y, sym, max_bytes, pm)
    if normalize:
        dx = np.diag(K).copy() if sym else _self_kernel(model, X, pm)
        dy = dx if sym else _self_kernel(model, Y, pm)
        _normalize_rows(K, dx, dy)
    return K


NORMALIZE_BLOCK_CELLS = 1 << 20      # cells of one block of the in-place cosine normalisation (8 MiB temporaries)


def _normalize_bytes(n: int, m: int) -> int:
    """Bytes of :func:`_normalize_rows`' two block temporaries."""
    return 16 * min(NORMALIZE_BLOCK_CELLS, int(n) * int(m))


def _normalize_rows(K: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> None:
    """K /= sqrt(outer(max(dx, tiny), max(dy, tiny))) in place, a block of rows at a time: the same numbers
    as the one-line form without its two N x M temporaries (the work space stays the matrix itself)."""
    dx, dy = np.maximum(dx, 1e-300), np.maximum(dy, 1e-300)
    step = max(1, NORMALIZE_BLOCK_CELLS // max(K.shape[1], 1))
    for a in range(0, K.shape[0], step):
        K[a:a + step] /= np.sqrt(np.outer(dx[a:a + step], dy))


def _self_kernel(model, codes, pm) -> np.ndarray:
    """K(x, x) of every row (squared feature norms)."""
    Phi = features(model, codes, pm)
    return np.asarray(Phi.multiply(Phi).sum(axis=1)).ravel()


def _fisher_gram(model, X, Y, sym, max_bytes, pm):
    N, M = X.shape[0], Y.shape[0]
    _guard(N, M, 0, max_bytes)
    plans, missing = [], []
    miss_extra = 0
    for i in range(model.n_vars):
        r = model.cpts[i].shape[1]
        if r < 2:
            continue                                    # a one-state variable contributes nothing
        vx = _Var(model, pm, i, X)
        vy = vx if sym else _Var(model, pm, i, Y)
        if not (vx.ok.all() and vy.ok.all()):
            missing.append(i)
            # _add_missing's products: a sparse (12 B a cell at worst) and a dense block of N x |ey| or |ex| x M
            miss_extra = max(miss_extra, 20 * max(N * int((~vy.ok).sum()), int((~vx.ok).sum()) * M))
        q = model.cpts[i].shape[0]
        nx = np.bincount(vx.p[vx.ok], minlength=q)
        ny = nx if sym else np.bincount(vy.p[vy.ok], minlength=q)
        used = np.flatnonzero((nx > 0) | (ny > 0))
        dense_cost = N * M * len(used) * (r - 1) * (0.5 if sym else 1.0) * _T_FLOP
        shared = np.flatnonzero((nx > 0) & (ny > 0))
        const = len(used) == 1 and vx.ok.all() and vy.ok.all()    # one configuration, every family complete
        if const:       # −1/P reaches every pair (a constant); only equal states are pairs to visit
            kx = np.bincount(vx.x, minlength=r)
            ky = kx if sym else np.bincount(vy.x, minlength=r)
            pair_cost = float(np.dot(kx, ky)) * _T_PAIR + r * _T_GROUP
        else:
            pair_cost = float(np.dot(nx[shared], ny[shared])) * _T_PAIR + len(shared) * _T_GROUP
        plans.append([i, vx, vy, used, dense_cost, pair_cost, dense_cost < pair_cost, const])
    # the dense product also pays once per output element; if that outweighs its gain, use pairs only
    dense = [p for p in plans if p[6]]
    if dense and N * M * _T_OUT + sum(p[4] for p in dense) > sum(p[5] for p in dense):
        for p in dense:
            p[6] = False
        dense = []
    width = sum(len(p[3]) * (model.cpts[p[0]].shape[1] - 1) for p in dense)
    _guard(N, M, max((N + (0 if sym else M)) * width * 8, miss_extra), max_bytes)   # A is freed before the missing rows
    if dense:
        blocks = []
        for i, vx, vy, used, *_ in dense:
            G = _householder_table(model.cpts[i][used], pm.probs[i][used])    # (c, r, r-1)
            pos = np.full(model.cpts[i].shape[0], -1, np.int64)
            pos[used] = np.arange(len(used))
            blocks.append((vx, vy, pos, G))
        A = _dense_features([(vx, pos, G) for vx, _, pos, G in blocks], N, width)
        K = A @ A.T if sym else A @ _dense_features([(vy, pos, G) for _, vy, pos, G in blocks], M, width).T
        del A
    pairs = [(i, vx, vy, used, const) for i, vx, vy, used, _, _, d, const in plans if not d]
    c0 = -sum(1.0 / float(pm.probs[i][used[0]]) for i, _, _, used, const in pairs if const)
    if not dense:
        K = np.full((N, M), c0) if c0 else np.zeros((N, M))
    elif c0:
        K += c0
    if pairs:
        _scatter_add(K, model, pm, pairs)
    for i in missing:
        _add_missing(K, model, pm, i, X, Y, sym)
    return K


def _dense_features(blocks, n, width) -> np.ndarray:
    A = np.zeros((n, width))
    col = 0
    for v, pos, G in blocks:
        c, r, d = G.shape
        rows = v.rows
        cidx = pos[v.p[rows]]
        A[rows[:, None], col + cidx[:, None] * d + np.arange(d)] = G[cidx, v.x[rows]]
        col += c * d
    return A


def guard_tables(n_vars: int, configs: int, states: int, max_bytes: float | None = DEFAULT_MAX_BYTES) -> None:
    """Refuse padded per-variable tables of ``n_vars`` x ``configs`` parent configurations x ``states`` states
    (float64) beyond the memory limit, before they are allocated: the width guard (columns x levels) of the
    kernels' tables -- a column with 100,000 levels as a parent would otherwise ask for tens of GB."""
    need = 8 * int(n_vars) * int(configs) * (int(states) + 1)
    limit = resolve_limit(max_bytes)
    if limit is not None and need > limit:
        raise KernelError(f"The kernel's tables need {format_bytes(need)} ({int(n_vars):,} variables x up to "
                          f"{int(configs):,} parent configurations x up to {int(states):,} states), more than the "
                          f"memory limit of {format_bytes(limit)}; a column with that many levels (an identifier?) "
                          "is best dropped, or raise the memory limit.")


def pair_arrays(V: int, N: int, M: int, cmax: int, rmax: int) -> tuple:
    """The zeroed inputs of :func:`_pair_kernel` for ``V`` variables, ``N`` × ``M`` pairs, at most ``cmax``
    parent configurations and ``rmax`` states: pX (−1: skip), xX, xo, order, starts, W, B, r, c."""
    guard_tables(V, cmax, rmax)
    return (np.full((V, N), -1, np.int64), np.zeros((V, N), np.int64), np.zeros((V, M), np.int64),
            np.zeros((V, M), np.int64), np.zeros((V, cmax + 1), np.int64), np.zeros((V, cmax * rmax)),
            np.zeros((V, cmax)), np.zeros(V, np.int64), np.zeros(V, np.int64))


@numba.njit(parallel=True, cache=True)
def _pair_kernel(K, pX, xX, xo, order, starts, W, B, r, c):  # pragma: no cover - compiled
    """K[a, b] += K_i(a, b) over the pairs that share variable i's parent configuration.

    pX[v, a]: compact parent configuration of X row a for the v-th scatter variable (-1: skip);
    order[v, starts[v, j]:starts[v, j+1]]: the Y rows in configuration j and xo[v, t] the state of
    Y row order[v, t] (read in sequence, not gathered); W[v, j, k] = 1/(theta P), B[v, j] = 1/P.
    One row of K at a time, so the writes stay in cache.
    """
    N = K.shape[0]
    V = pX.shape[0]
    for a in numba.prange(N):
        for v in range(V):
            j = pX[v, a]
            if j < 0:
                continue
            xa = xX[v, a]
            w = W[v, j * r[v] + xa]
            bb = B[v, j]
            for t in range(starts[v, j], starts[v, j + 1]):
                b = order[v, t]
                if xo[v, t] == xa:
                    K[a, b] += w - bb
                else:
                    K[a, b] -= bb


#: :func:`_pair_kernel` in one thread, for small updates (waking threads costs more than the work);
#: ``prange`` is a plain ``range`` in this compilation
_pair_kernel_serial = numba.njit(cache=True)(_pair_kernel.py_func)


def _scatter_add(K, model, pm, scatter):
    """Add the terms of the pair-path variables (see :func:`_pair_kernel`).

    ``scatter`` holds (i, vx, vy, used, const).  A ``const`` variable has one parent configuration j0
    and a complete family in every row (a root, typically): its −1/P(j0) reaches every pair and was
    added to K as a constant beforehand, so here only pairs with equal states remain, grouped by state
    (Σ_k N_k M_k pairs instead of N M).
    """
    N, M = K.shape
    V = len(scatter)
    cmax = max(int(len(used)) if not const else int(model.cpts[i].shape[1]) for i, _, _, used, const in scatter)
    rmax = max(int(model.cpts[i].shape[1]) for i, *_ in scatter)
    pX, xX, xo, order, starts, W, B, r, c = pair_arrays(V, N, M, cmax, rmax)
    for v, (i, vx, vy, used, const) in enumerate(scatter):
        q, ri = model.cpts[i].shape
        xX[v] = vx.x
        if const:
            groups = ri
            pX[v] = vx.x
            py = vy.x
            rows_y = np.arange(M)
            th = model.cpts[i][used[0]]
            with np.errstate(divide="ignore"):
                d = np.where(th > 0, 1.0 / (th * pm.probs[i][used[0]]), 0.0)
            W[v, np.arange(ri) * ri + np.arange(ri)] = d
        else:
            groups = len(used)
            pos = np.full(q, -1, np.int64)
            pos[used] = np.arange(len(used))
            pX[v, vx.rows] = pos[vx.p[vx.rows]]
            py = pos[vy.p[vy.rows]]
            rows_y = vy.rows
            th = model.cpts[i][used]
            P = pm.probs[i][used]
            with np.errstate(divide="ignore"):
                W[v, :len(used) * ri] = np.where(th > 0, 1.0 / (th * P[:, None]), 0.0).ravel()
                B[v, :len(used)] = np.where(P > 0, 1.0 / P, 0.0)
        o = np.argsort(py, kind="stable")
        order[v, :len(o)] = rows_y[o]
        xo[v, :len(o)] = vy.x[rows_y[o]]
        starts[v, 1:groups + 1] = np.cumsum(np.bincount(py, minlength=groups))
        starts[v, groups + 1:] = starts[v, groups]
        r[v], c[v] = ri, groups
    _pair_kernel(K, pX, xX, xo, order, starts, W, B, r, c)


def _add_missing(K, model, pm, i, X, Y, sym):
    """Add block i's terms involving rows whose family i has a missing cell (expected features)."""
    ex = np.flatnonzero(~((model.parent_config(i, X) >= 0) & (X[:, i] >= 0)))
    ey = ex if sym else np.flatnonzero(~((model.parent_config(i, Y) >= 0) & (Y[:, i] >= 0)))
    Fx = _block_matrix(model, pm, i, X)
    Fy = Fx if sym else _block_matrix(model, pm, i, Y)
    if len(ey):
        K[:, ey] += (Fx @ Fy[ey].T).toarray()
    if len(ex):
        K[ex, :] += (Fx[ex] @ Fy.T).toarray()
        if len(ey):
            K[np.ix_(ex, ey)] -= (Fx[ex] @ Fy[ey].T).toarray()


def _onehot(codes: np.ndarray, r: int, dense: bool):
    ok = codes >= 0
    A = sp.csr_matrix((np.ones(int(ok.sum())), (np.flatnonzero(ok), codes[ok])), shape=(len(codes), r))
    return A.toarray() if dense else A


def _hamming_gram(X, Y, normalize, max_bytes):
    """Fraction of matching (observed) variables, thesis eq. 2.17 (X, Y share variables and states).

    The variables with at most 64 states go into one product of one-hot matrices (0/1 entries: the counts
    are exact integers, whatever the summation order); the others add their matches a block of rows at a
    time, so no N x M temporary besides the matrix itself."""
    d = max(X.n_vars, 1)
    N, M = X.n_rows, Y.n_rows
    rs = [len(X.states[i]) for i in range(X.n_vars)]
    small = [i for i in range(X.n_vars) if rs[i] <= 64]
    width = sum(rs[i] for i in small)
    _guard(N, M, max(8 * (N + M) * width, _normalize_bytes(N, M) if normalize else 0), max_bytes)
    if small:
        A = np.hstack([_onehot(X.codes[:, i], rs[i], True) for i in small])
        B = A if Y is X else np.hstack([_onehot(Y.codes[:, i], rs[i], True) for i in small])
        K = A @ B.T
        del A, B
    else:
        K = np.zeros((N, M))
    for i in range(X.n_vars):
        if rs[i] <= 64:
            continue
        Ax, Ay = _onehot(X.codes[:, i], rs[i], False), _onehot(Y.codes[:, i], rs[i], False)
        step = max(1, NORMALIZE_BLOCK_CELLS // max(M, 1))
        for a in range(0, N, step):
            K[a:a + step] += (Ax[a:a + step] @ Ay.T).toarray()
    K /= d
    if normalize:
        dx = np.asarray((X.codes >= 0).sum(axis=1)) / d
        dy = np.asarray((Y.codes >= 0).sum(axis=1)) / d
        _normalize_rows(K, dx, dy)
    return K


def _aligned_like(other, ref):
    """``other`` re-coded to the variables and states of ``ref`` (unknown values are errors)."""
    stub = BayesNet(DAG(ref.variables), ref.states,
                    tuple(np.full((1, len(s)), 1.0 / len(s)) for s in ref.states))
    return stub.align(other)


def scaled_hamming_model(data, variables=None):
    """The empty network whose CPTs are the marginal frequencies of ``data`` (thesis eq. 3.2).

    A variable with a state that ``data`` never shows (possible when ``data`` is a training split
    or aligned to a model) gets add-one frequencies instead, so rows with that state stay defined.
    """
    variables = list(variables) if variables is not None else list(data.variables)
    d = data.select(variables)
    dag = DAG(variables)
    cards = d.cardinalities
    cpts = []
    for i in range(len(variables)):
        cnt = cpt_counts(dag, d.codes, cards, i)
        if cnt.sum() <= 0:
            raise KernelError(f"Column '{variables[i]}' has no observed values.")
        cpts.append(estimate_cpt(cnt, "ml" if (cnt > 0).all() else "smoothed"))
    return BayesNet(dag, d.states, tuple(cpts), {"method": "marginal frequencies"})


# ---------------------------------------------------------------------- fitted kernels (the registry's currency)
class FittedKernel:
    """A kernel fitted on training rows: ``gram`` and per-variable ``contributions`` on any rows.

    Subclasses set ``name`` and ``variables``; analyses read ``model`` (the network, if any),
    ``structure`` (how it was obtained, e.g. ``"hc/qnml"`` or ``"given"``), ``params``,
    ``n_arcs`` and ``notes``.
    """

    name: str = ""
    variables: tuple = ()
    model = None
    structure: str | None = None
    params: str | None = None
    n_arcs: int | None = None
    notes: tuple = ()

    def gram(self, X, Y=None, *, normalize: bool = False, max_bytes: float | None = DEFAULT_MAX_BYTES) -> np.ndarray:
        raise NotImplementedError

    def contributions(self, x, y) -> np.ndarray:
        """Per-variable terms of K(x, y) for single rows ``x`` and ``y``; they sum to K(x, y)."""
        raise NotImplementedError


class NetworkKernel(FittedKernel):
    """The Fisher kernel of a fitted network (Theorem 1); the scaled-Hamming kernel is the one of the
    empty network with marginal frequencies."""

    def __init__(self, name: str, model, *, structure=None, params=None, notes=()):
        self.name, self.model = name, model
        self.variables = tuple(model.variables)
        self.structure, self.params, self.n_arcs = structure, params, model.dag.n_arcs
        self.notes = tuple(notes)

    def gram(self, X, Y=None, *, normalize=False, max_bytes=DEFAULT_MAX_BYTES):
        return gram(self.model, X, Y, normalize=normalize, max_bytes=max_bytes)

    def contributions(self, x, y):
        return contributions(self.model, x, y)


class HammingKernel(FittedKernel):
    """The Hamming kernel: the fraction of variables on which two rows agree (thesis eq. 2.17)."""

    name = HAMMING

    def __init__(self, data):
        self.variables = tuple(data.variables)

    def _rows(self, X):
        return X.select(list(self.variables))

    def gram(self, X, Y=None, *, normalize=False, max_bytes=DEFAULT_MAX_BYTES):
        X = self._rows(X)
        Y = X if Y is None else _aligned_like(Y, X)
        return _hamming_gram(X, Y, normalize, max_bytes)

    def contributions(self, x, y):
        X = self._rows(x)
        Y = _aligned_like(y, X)
        a, b = X.codes[0], Y.codes[0]
        return ((a == b) & (a >= 0)).astype(float) / max(len(self.variables), 1)


def fit_fisher(train, *, model=None, dag=None, structure: str = "hc", score: str = "qnml", params: str = "cnml",
               seed: int = 0, progress=None, **_ignored) -> NetworkKernel:
    """The Fisher kernel for ``train`` (no label column): ``model`` as given, else the CPTs of ``dag`` fitted
    on ``train`` by ``params``, else a structure learned on ``train`` by ``structure``/``score``."""
    if model is not None:
        info = getattr(model, "fit_info", None) or {}
        return NetworkKernel(FISHER, model, structure="given", params=info.get("method"))
    if dag is not None:
        return NetworkKernel(FISHER, fit(dag, train, method=params), structure="given structure", params=params)
    if LEARNERS[structure].needs_class:
        raise KernelError(f"Structure method '{structure}' needs the class as a node; the label column is never "
                          f"a feature here, so use one of {', '.join(feature_learners())}.")
    res = learn_structure(train, structure, score=score, seed=seed, class_column=None, progress=progress)
    return NetworkKernel(FISHER, fit(res.dag, train, method=params), structure=f"{structure}/{score}",
                         params=params, notes=res.notes)


def fit_scaled_hamming(train, **_ignored) -> NetworkKernel:
    """The scaled-Hamming kernel fitted on ``train``: marginal frequencies (thesis eq. 3.2)."""
    return NetworkKernel(SCALED_HAMMING, scaled_hamming_model(train))


def fit_hamming(train, **_ignored) -> HammingKernel:
    """The Hamming kernel over the variables of ``train`` (nothing to estimate)."""
    return HammingKernel(train)


KERNELS.register(KernelSpec(
    name=FISHER, label="Fisher", abbr="F", fit=fit_fisher, shift="none", psd=True, uses_network=True,
    family="fisher", description="Bayesian-network Fisher kernel, paper Theorem 1"))
KERNELS.register(KernelSpec(
    name=SCALED_HAMMING, label="Scaled Hamming", abbr="SH", fit=fit_scaled_hamming, shift="adaptive", psd=True,
    family="baseline", description="Fisher kernel of the empty network with marginal frequencies, thesis eq. 3.2"))
KERNELS.register(KernelSpec(
    name=HAMMING, label="Hamming", abbr="H", fit=fit_hamming, shift="adaptive", psd=True,
    family="baseline", description="fraction of matching variables, thesis eq. 2.17"))


# ---------------------------------------------------------------------- explanations and sets
def contributions(model, x, y) -> np.ndarray:
    """The per-variable terms K_i(x, y) of Theorem 1 (they sum to K(x, y)).

    ``x`` and ``y`` are single rows: 1-D code vectors aligned to the model, or one-row data.
    """
    cx, cy = _codes(model, x), _codes(model, y)
    Phi = features(model, np.vstack([cx, cy]))
    off = feature_offsets(model)
    prod = Phi[0].multiply(Phi[1]).tocsr()
    out = np.zeros(model.n_vars)
    np.add.at(out, np.searchsorted(off, prod.indices, side="right") - 1, prod.data)
    return out


def mean_features(model, data, chunk_rows: int = FEATURE_CHUNK_ROWS) -> np.ndarray:
    """mean_x phi(x) as a dense vector -- all that set kernels and MMD need (counts / N).

    Linear time, and memory for one block of ``chunk_rows`` rows of features: no N x M matrix and no
    N-row feature matrix (one block when N <= ``chunk_rows``)."""
    codes = _codes(model, data)
    N = codes.shape[0]
    if N <= chunk_rows:
        return np.asarray(features(model, codes).mean(axis=0)).ravel()
    total = np.zeros(int(feature_offsets(model)[-1]))
    for _, P in iter_features(model, codes, chunk_rows):
        total += np.asarray(P.sum(axis=0)).ravel()
    return total / N


def set_kernel(model, X, Y) -> float:
    """The paper's set kernel K(X, Y) = (1/NM) sum_{l,m} K(x_l, y_m) = mean phi(X) . mean phi(Y)."""
    return float(mean_features(model, X) @ mean_features(model, Y))


def mmd(model, X, Y) -> float:
    """Squared maximum mean discrepancy, paper eq. (10): |mean phi(X) - mean phi(Y)|^2.

    Linear time via the mean embeddings (:func:`mean_features`, computed a block of rows at a time); the
    N x M Gram matrix of the pairwise form (1/N^2 sum K(x,x') + 1/M^2 sum K(y,y') - 2/NM sum K(x,y)) is
    never built."""
    d = mean_features(model, X) - mean_features(model, Y)
    return float(d @ d)
