"""The Bayesian-network Fisher kernel (paper, Theorem 1): its Gram matrix, per-variable terms, set kernel,
MMD;
:func:`gram`, the Gram matrix of every registered kernel; :class:`FittedKernel`, the registry's currency.

Theorem 1:  K(x, y) = sum_i K_i(x, y) with

    K_i(x, y) = [pi_i(x) = pi_i(y)] / P(pi_i(x)) * ( [x_i = y_i] / theta_{i, pi_i(x), x_i} - 1 ).

The explicit feature map phi (phi(x) . phi(y) = K(x, y)) is :mod:`bnfk_core.kernels.features`; the Hamming
and scaled-Hamming baselines are :mod:`bnfk_core.kernels.hamming`; the memory budget is
:mod:`bnfk_core.data.limits`.

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
  For a symmetric matrix (Y = X) the pairs are visited in one triangle only (b >= a, each pair once) and the
  other triangle is copied from it in cache-sized tiles.

Rows whose family has a missing cell are added afterwards with sparse expected features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..compiled import one_thread_twin
from ..data.limits import DEFAULT_MAX_BYTES, guard_gram, guard_tables, one_blas_thread
from ..data.table import as_data
from ..errors import KernelError
from ..inference.queries import parent_marginals
from ..network.model import fit
from ..registry import KERNELS, LEARNERS, feature_learners
from .features import (
    FEATURE_CHUNK_ROWS,
    check_positive,
    feature_offsets,
    features,
    iter_features,
    row_codes,
    used_blocks,
)
from .members import FISHER, FISHER_NORMALIZED, HAMMING, SCALED_HAMMING, THESIS_KERNELS

__all__ = [
    "gram",
    "contributions",
    "set_kernel",
    "mmd",
    "mean_features",
    "normalize_rows",
    "normalize_bytes",
    "NORMALIZE_BLOCK_CELLS",
    "pair_tables",
    "add_pair_terms",
    "warm_up",
    "FISHER",
    "SCALED_HAMMING",
    "HAMMING",
    "FISHER_NORMALIZED",
    "THESIS_KERNELS",
    "FittedKernel",
    "NetworkKernel",
    "fit_fisher",
    "network_gram",
]


# cost model of the two exact evaluations (seconds per unit, measured): it picks the faster one, both exact
_T_FLOP = 1.2e-10  # one multiply-add of the dense product
_T_OUT = 4e-9  # one output element of the dense product (symmetric update + copy)
_T_PAIR = 2.5e-9  # one pair of the compiled pair path
_T_GROUP = 1e-7  # fixed cost per parent configuration of the pair path


class _Var:
    """Per-variable row data: parent configuration p, state x, complete-family mask."""

    def __init__(self, model, pm, i, codes):
        self.p = model.parent_config(i, codes)
        self.x = codes[:, i].astype(np.int64)
        self.ok = (self.p >= 0) & (self.x >= 0)
        self.rows = np.flatnonzero(self.ok)
        check_positive(model, pm, i, self.p[self.ok], self.x[self.ok])


@dataclass
class _Plan:
    """How :func:`_fisher_gram` adds variable ``var``'s terms: by a dense product of its features (``dense``)
    or by visiting the pairs that share a parent configuration (:func:`_scatter_add`).

    ``vx``/``vy``: its rows of X and Y (:class:`_Var`); ``used``: the parent configurations either side
    observes; ``dense_cost``/``pair_cost``: the cost model's seconds of the two paths; ``const``: one
    configuration and a complete family in every row (its −1/P is a constant added to every pair)."""

    var: int
    vx: _Var
    vy: _Var
    used: np.ndarray
    dense_cost: float
    pair_cost: float
    dense: bool
    const: bool


def _householder_table(theta_rows: np.ndarray, P: np.ndarray) -> np.ndarray:
    """G[c, k, :] = H_c[1:, k] / sqrt(theta_ck P_c), H_c the reflection taking sqrt(theta_c) to -e_0.

    Rows 1.. of H_c are an orthonormal basis of sqrt(theta_c)^perp, so
    G[c,k] . G[c,l] = [k = l] / (theta_ck P_c) - 1 / P_c  (Theorem 1, same parent configuration).
    """
    s = np.sqrt(theta_rows)  # (c, r)
    v = s.copy()
    v[:, 0] += 1.0  # v = s + e_0, |v|^2 = 2 + 2 s_0
    H = np.eye(s.shape[1])[None] - 2.0 * v[:, :, None] * v[:, None, :] / (2.0 + 2.0 * s[:, 0])[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 / np.sqrt(theta_rows * P[:, None])  # (c, r); inf for zero-probability states
    scale[~np.isfinite(scale)] = 0.0  # ... which no row takes (checked before)
    return np.transpose(H[:, 1:, :], (0, 2, 1)) * scale[:, :, None]  # (c, r, r-1)


# ---------------------------------------------------------------------- Gram
def gram(
    model,
    data,
    other=None,
    kind: str = FISHER,
    normalize: bool = False,
    max_bytes: float | None = DEFAULT_MAX_BYTES,
    marginals=None,
    options: dict | None = None,
) -> np.ndarray:
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
    options : dict or None
        Options of the kernel's ``fit`` (e.g. ``{"alpha": 0.25}`` for ``"fisher-normalized"``); not for
        ``"fisher"``.

    Returns
    -------
    numpy.ndarray
        The (N, M) Gram matrix, M = N without ``other``.  Rows with missing cells get the marginalised
        kernel E[phi(x) | x_obs] . E[phi(y) | y_obs].

    Raises
    ------
    KernelError
        An unknown ``kind``, a row the model gives probability zero, or a matrix over ``max_bytes``.

    References
    ----------
    The bnfk paper, Theorem 1 (eq. 2); thesis §3.3 (the Fisher and scaled-Hamming kernels).
    """
    spec = KERNELS[kind]
    KERNELS.validate(kind, options or {})
    if spec.gram is not None:  # read straight off the network (the Fisher kernel: Theorem 1)
        if model is None:
            raise KernelError(f"The {spec.label} kernel needs a model; learn or load a structure first.")
        return spec.gram(model, data, other, normalize=normalize, max_bytes=max_bytes, marginals=marginals)
    if marginals is not None:
        raise KernelError(
            f"Parent marginals are an option of a kernel read straight off its network, not of the "
            f"{spec.label} kernel."
        )
    data, other = as_data(data, model=model), as_data(other, model=model)
    train = data if model is None else data.select(list(model.variables))
    net = {"model": model} if spec.uses_network and model is not None else {}
    fitted = spec.fit(train, **net, **(options or {}))
    return fitted.gram(data, other, normalize=normalize, max_bytes=max_bytes)


def network_gram(
    model,
    data,
    other=None,
    *,
    normalize: bool = False,
    max_bytes: float | None = DEFAULT_MAX_BYTES,
    marginals=None,
) -> np.ndarray:
    """The Fisher kernel matrix of ``model`` between the rows of ``data`` and of ``other`` (default:
    ``data``), Theorem 1 of the paper: the Fisher kernel's ``gram``
    (:attr:`bnfk_core.registry.KernelSpec.gram`) that :func:`gram` calls.

    Parameters
    ----------
    model : BayesNet
        The network whose Fisher kernel is computed.
    data, other : CategoricalData
        The rows of the matrix and of its columns (``other`` None: ``data`` again, a symmetric matrix).
    normalize : bool
        Cosine-normalise: K(x, y) / sqrt(K(x, x) K(y, y)).
    max_bytes : float or None
        The memory the matrix and its work space may take (None: no limit).
    marginals : ParentMarginals, optional
        The model's exact parent-configuration marginals P(pa_i = j), computed when not given.

    Returns
    -------
    numpy.ndarray
        The ``len(data) x len(other)`` matrix.
    """
    X = row_codes(model, data)
    sym = other is None
    Y = X if sym else row_codes(model, other)
    pm = parent_marginals(model) if marginals is None else marginals
    if len(pm.probs) != model.n_vars or any(
        len(p) != model.n_parent_configs(i) for i, p in enumerate(pm.probs)
    ):
        raise KernelError("The given parent marginals do not match the model's parent configurations.")
    if normalize:  # the normalisation's block temporaries come after the product's work space
        guard_gram(X.shape[0], Y.shape[0], normalize_bytes(X.shape[0], Y.shape[0]), max_bytes)
    K = _fisher_gram(model, X, Y, sym, max_bytes, pm)
    if normalize:
        dx = np.diag(K).copy() if sym else _self_kernel(model, X, pm)
        dy = dx if sym else _self_kernel(model, Y, pm)
        normalize_rows(K, dx, dy, (X < 0).all(axis=1), (Y < 0).all(axis=1))
    return K


NORMALIZE_BLOCK_CELLS = 1 << 20  # cells of one block of the in-place cosine normalisation (8 MiB temporaries)


def normalize_bytes(n: int, m: int) -> int:
    """Bytes of :func:`normalize_rows`' two block temporaries for an ``n`` x ``m`` matrix.

    Parameters
    ----------
    n, m : int
        The matrix's rows and columns.

    Returns
    -------
    int
        16 bytes per cell of one block (at most :data:`NORMALIZE_BLOCK_CELLS` cells).
    """
    return 16 * min(NORMALIZE_BLOCK_CELLS, int(n) * int(m))


def normalize_rows(K: np.ndarray, dx: np.ndarray, dy: np.ndarray, empty_x=None, empty_y=None) -> None:
    """K /= sqrt(outer(max(dx, tiny), max(dy, tiny))) in place, a block of rows at a time: the same
    numbers as the one-line form without its two N x M temporaries (the work space stays the matrix itself).

    A row with no observed cell has the expected score E[s] = 0 (its Fisher score marginalised over every
    cell), so its kernel row is zero up to rounding and 0 / 0 is taken as 0: its normalised row and column
    are set to 0 exactly (the diagonal included), never rounding noise divided by rounding noise.

    Parameters
    ----------
    K : ndarray of float, shape (N, M)
        Changed in place.
    dx : ndarray, shape (N,)
        K(x, x) of the rows.
    dy : ndarray, shape (M,)
        K(y, y) of the columns.
    empty_x, empty_y : ndarray of bool, optional
        The rows (columns) with no observed cell, set to 0.
    """
    dx, dy = np.maximum(dx, 1e-300), np.maximum(dy, 1e-300)
    if empty_x is not None:
        dx = np.where(empty_x, 1.0, dx)
    if empty_y is not None:
        dy = np.where(empty_y, 1.0, dy)
    step = max(1, NORMALIZE_BLOCK_CELLS // max(K.shape[1], 1))
    for a in range(0, K.shape[0], step):
        K[a : a + step] /= np.sqrt(np.outer(dx[a : a + step], dy))
    if empty_x is not None:
        K[np.asarray(empty_x, dtype=bool)] = 0.0
    if empty_y is not None:
        K[:, np.asarray(empty_y, dtype=bool)] = 0.0


def _self_kernel(model, codes, pm) -> np.ndarray:
    """K(x, x) of every row (squared feature norms), a block of rows at a time."""
    out = np.empty(codes.shape[0])
    for a, P in iter_features(model, codes, marginals=pm):
        out[a : a + P.shape[0]] = np.asarray(P.multiply(P).sum(axis=1)).ravel()
    return out


def _fisher_gram(model, X, Y, sym, max_bytes, pm):
    N, M = X.shape[0], Y.shape[0]
    guard_gram(N, M, 0, max_bytes)
    plans, missing = [], []
    miss_extra = 0
    for i in range(model.n_vars):
        r = model.cpts[i].shape[1]
        if r < 2:
            continue  # a one-state variable contributes nothing
        vx = _Var(model, pm, i, X)
        vy = vx if sym else _Var(model, pm, i, Y)
        if not (vx.ok.all() and vy.ok.all()):
            missing.append(i)
            # _add_missing's products: a sparse (12 B a cell at worst) and a dense block of N x |ey| or |ex| x
            # M
            miss_extra = max(miss_extra, 20 * max(N * int((~vy.ok).sum()), int((~vx.ok).sum()) * M))
        q = model.cpts[i].shape[0]
        nx = np.bincount(vx.p[vx.ok], minlength=q)
        ny = nx if sym else np.bincount(vy.p[vy.ok], minlength=q)
        used = np.flatnonzero((nx > 0) | (ny > 0))
        dense_cost = N * M * len(used) * (r - 1) * (0.5 if sym else 1.0) * _T_FLOP
        shared = np.flatnonzero((nx > 0) & (ny > 0))
        const = len(used) == 1 and vx.ok.all() and vy.ok.all()  # one configuration, every family complete
        if const:  # −1/P reaches every pair (a constant); only equal states are pairs to visit
            kx = np.bincount(vx.x, minlength=r)
            ky = kx if sym else np.bincount(vy.x, minlength=r)
            pair_cost = float(np.dot(kx, ky)) * _T_PAIR + r * _T_GROUP
        else:
            pair_cost = float(np.dot(nx[shared], ny[shared])) * _T_PAIR + len(shared) * _T_GROUP
        if sym:  # the pair path visits one triangle
            pair_cost *= 0.5
        plans.append(_Plan(i, vx, vy, used, dense_cost, pair_cost, dense_cost < pair_cost, const))
    # the dense product also pays once per output element; if that outweighs its gain, use pairs only
    dense = [p for p in plans if p.dense]
    if dense and N * M * _T_OUT + sum(p.dense_cost for p in dense) > sum(p.pair_cost for p in dense):
        for p in dense:
            p.dense = False
        dense = []
    width = sum(len(p.used) * (model.cpts[p.var].shape[1] - 1) for p in dense)
    guard_gram(
        N, M, max((N + (0 if sym else M)) * width * 8, miss_extra), max_bytes
    )  # A is freed before the missing rows
    if dense:
        blocks = []
        for p in dense:
            G = _householder_table(model.cpts[p.var][p.used], pm.probs[p.var][p.used])  # (c, r, r-1)
            pos = np.full(model.cpts[p.var].shape[0], -1, np.int64)
            pos[p.used] = np.arange(len(p.used))
            blocks.append((p.vx, p.vy, pos, G))
        A = _dense_features([(vx, pos, G) for vx, _, pos, G in blocks], N, width)
        K = A @ A.T if sym else A @ _dense_features([(vy, pos, G) for _, vy, pos, G in blocks], M, width).T
        del A
    pairs = [p for p in plans if not p.dense]
    c0 = -sum(1.0 / float(pm.probs[p.var][p.used[0]]) for p in pairs if p.const)
    if sym and pairs:  # one triangle: the constant and each pair once, then the mirror
        init = not dense
        if init:
            K = np.empty((N, M))
        _scatter_add(K, model, pm, pairs, upper=(c0, init))
        _mirror_upper(K)
    else:
        if not dense:
            K = np.full((N, M), c0) if c0 else np.zeros((N, M))
        elif c0:
            K += c0
        if pairs:
            _scatter_add(K, model, pm, pairs)
    with one_blas_thread():  # one small product per variable: threads cost more than they save
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


def pair_tables(V: int, N: int, M: int, cmax: int, rmax: int) -> tuple:
    """The zeroed inputs of :func:`add_pair_terms` for ``V`` variables, ``N`` x ``M`` pairs, at most
    ``cmax`` parent configurations and ``rmax`` states.

    Parameters
    ----------
    V : int
        Variables whose terms are added.
    N, M : int
        Rows and columns of K.
    cmax, rmax : int
        The most parent configurations and states among the ``V`` variables.

    Returns
    -------
    tuple of 9 ndarrays
        pX (N per variable, -1: skip), xX, xo, order, starts, W, B, r, c, in the order
        :func:`add_pair_terms` reads them.

    Raises
    ------
    KernelError
        When the tables would exceed the memory limit (:func:`~bnfk_core.data.limits.guard_tables`).
    """
    guard_tables(V, cmax, rmax)
    return (
        np.full((V, N), -1, np.int64),
        np.zeros((V, N), np.int64),
        np.zeros((V, M), np.int64),
        np.zeros((V, M), np.int64),
        np.zeros((V, cmax + 1), np.int64),
        np.zeros((V, cmax * rmax)),
        np.zeros((V, cmax)),
        np.zeros(V, np.int64),
        np.zeros(V, np.int64),
    )


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


#: :func:`_pair_kernel` in one thread, for small updates (waking threads costs more than the work); cached
#: under its own name (see :mod:`bnfk_core.compiled`)
_pair_kernel_serial = one_thread_twin(_pair_kernel, "_pair_kernel_serial")


@numba.njit(inline="always")
def _upper_row(K, a, pX, xX, xo, order, starts, W, B, r, at, c0, init):  # pragma: no cover - compiled
    """Row ``a`` of :func:`_pair_kernel_upper` (its columns b >= a)."""
    N = K.shape[1]
    if init:
        for b in range(a, N):
            K[a, b] = c0
    elif c0 != 0.0:
        for b in range(a, N):
            K[a, b] += c0
    for v in range(pX.shape[0]):
        j = pX[v, a]
        if j < 0:
            continue
        xa = xX[v, a]
        w = W[v, j * r[v] + xa]
        bb = B[v, j]
        for t in range(at[v, a], starts[v, j + 1]):  # the group's rows from a on (ascending within a group)
            b = order[v, t]
            if xo[v, t] == xa:
                K[a, b] += w - bb
            else:
                K[a, b] -= bb


@numba.njit(parallel=True, cache=True)
def _pair_kernel_upper(K, pX, xX, xo, order, starts, W, B, r, at, c0, init):  # pragma: no cover - compiled
    """The upper triangle (b >= a) of a symmetric K: K[a, b] = c0 (``init``) or K[a, b] += c0, then the
    pair terms of :func:`_pair_kernel`, each pair once; ``at[v, a]`` is row a's position in ``order[v]``.
    Rows s and N - 1 - s go to one thread together, so the threads get equal shares of the triangle."""
    N = K.shape[0]
    for s in numba.prange((N + 1) // 2):
        _upper_row(K, s, pX, xX, xo, order, starts, W, B, r, at, c0, init)
        if N - 1 - s != s:
            _upper_row(K, N - 1 - s, pX, xX, xo, order, starts, W, B, r, at, c0, init)


_MIRROR_TILE = 64


@numba.njit(inline="always")
def _mirror_tile_row(K, tb, T):  # pragma: no cover - compiled
    """Rows of tile row ``tb`` left of the diagonal, copied from the upper triangle."""
    N = K.shape[0]
    b0, b1 = tb * T, min(tb * T + T, N)
    for a0 in range(0, b1, T):
        for b in range(b0, b1):
            for a in range(a0, min(a0 + T, b)):
                K[b, a] = K[a, b]


@numba.njit(parallel=True, cache=True)
def _mirror_upper(K):  # pragma: no cover - compiled
    """K[b, a] = K[a, b] for every b > a (the lower triangle from the upper), in tiles of
    :data:`_MIRROR_TILE` squared; tile rows s and nt - 1 - s go to one thread together."""
    T = _MIRROR_TILE
    nt = (K.shape[0] + T - 1) // T
    for s in numba.prange((nt + 1) // 2):
        _mirror_tile_row(K, s, T)
        if nt - 1 - s != s:
            _mirror_tile_row(K, nt - 1 - s, T)


def add_pair_terms(K, tables: tuple, *, parallel: bool = True) -> None:
    """K[a, b] += the pair-path terms described by ``tables`` (:func:`pair_tables`, filled), in place:
    for every variable i whose parent configuration j rows a and b share, 1/(theta_ijk P_ij) - 1/P_ij when
    their states agree (k) and -1/P_ij when they do not (paper, Theorem 1); compiled, over the rows of K in
    parallel threads or (``parallel=False``, small updates) in one.

    Parameters
    ----------
    K : ndarray of float, shape (N, M)
        Changed in place.
    tables : tuple
        :func:`pair_tables`' arrays, filled.
    parallel : bool
    """
    (_pair_kernel if parallel else _pair_kernel_serial)(K, *tables)


def warm_up() -> tuple:
    """Load the compiled pair sums (both of :func:`add_pair_terms`, and the symmetric matrix's triangle and
    mirror; numba's on-disk cache, about 0.3 s) on an update that adds nothing, so that the first Gram matrix
    does not wait for them.

    Returns
    -------
    tuple of int
        How many compiled signatures the parallel and the serial pair sum hold (at least one each).
    """
    tables = pair_tables(1, 2, 2, 1, 3)  # every row skipped (pX = -1): nothing is added
    for parallel in (True, False):
        add_pair_terms(np.zeros((2, 2)), tables, parallel=parallel)
    K = np.zeros((2, 2))  # and the symmetric matrix's triangle and mirror
    pX, xX, xo, order, starts, W, B, r, _ = tables
    _pair_kernel_upper(K, pX, xX, xo, order, starts, W, B, r, np.zeros_like(pX), 0.0, False)
    _mirror_upper(K)
    return len(_pair_kernel.signatures), len(_pair_kernel_serial.signatures)


def _scatter_add(K, model, pm, scatter, upper=None):
    """Add the terms of the pair-path variables (see :func:`_pair_kernel`).

    ``upper`` ``(c0, init)``: K is symmetric (Y = X) and only its upper triangle is made
    (:func:`_pair_kernel_upper`: set to, or raised by, the constant ``c0`` first); the caller mirrors it.

    ``scatter`` holds their :class:`_Plan`.  A ``const`` variable has one parent configuration j0
    and a complete family in every row (a root, typically): its −1/P(j0) reaches every pair and was
    added to K as a constant beforehand, so here only pairs with equal states remain, grouped by state
    (Σ_k N_k M_k pairs instead of N M).
    """
    N, M = K.shape
    V = len(scatter)
    cmax = max(int(len(p.used)) if not p.const else int(model.cpts[p.var].shape[1]) for p in scatter)
    rmax = max(int(model.cpts[p.var].shape[1]) for p in scatter)
    tables = pair_tables(V, N, M, cmax, rmax)
    pX, xX, xo, order, starts, W, B, r, c = tables
    at = np.zeros((V, N), np.int64) if upper is not None else None
    for v, plan in enumerate(scatter):
        i, vx, vy, used, const = plan.var, plan.vx, plan.vy, plan.used, plan.const
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
                W[v, : len(used) * ri] = np.where(th > 0, 1.0 / (th * P[:, None]), 0.0).ravel()
                B[v, : len(used)] = np.where(P > 0, 1.0 / P, 0.0)
        o = np.argsort(py, kind="stable")
        order[v, : len(o)] = rows_y[o]
        xo[v, : len(o)] = vy.x[rows_y[o]]
        starts[v, 1 : groups + 1] = np.cumsum(np.bincount(py, minlength=groups))
        starts[v, groups + 1 :] = starts[v, groups]
        r[v], c[v] = ri, groups
        if upper is not None:
            at[v, order[v, : len(o)]] = np.arange(len(o))
    if upper is None:
        add_pair_terms(K, tables)
    else:
        _pair_kernel_upper(K, pX, xX, xo, order, starts, W, B, r, at, float(upper[0]), bool(upper[1]))


def _add_missing(K, model, pm, i, X, Y, sym):
    """Add block i's terms involving rows whose family i has a missing cell (expected features).

    K[:, ey] += F_x F_y[ey]^T and K[ex, :] += F_x[ex] F_y^T, less the doubly counted K[ex, ey]; the blocks
    are dense over their used columns where they fit (:func:`bnfk_core.kernels.features.used_blocks`)."""
    ex = np.flatnonzero(~((model.parent_config(i, X) >= 0) & (X[:, i] >= 0)))
    ey = ex if sym else np.flatnonzero(~((model.parent_config(i, Y) >= 0) & (Y[:, i] >= 0)))
    blocks, dense = used_blocks(model, pm, i, X) if sym else used_blocks(model, pm, i, X, Y)
    Fx = blocks[0]
    Fy = Fx if sym else blocks[1]
    out = (lambda A: A) if dense else (lambda A: A.toarray())  # noqa: E731 - a sparse product's result
    if len(ey):
        K[:, ey] += out(Fx @ Fy[ey].T)
    if len(ex):
        K[ex, :] += out(Fx[ex] @ Fy.T)
        if len(ey):
            K[np.ix_(ex, ey)] -= out(Fx[ex] @ Fy[ey].T)


# ---------------------------------------------------------------------- fitted kernels (the registry's
# currency)
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

    def gram(
        self, X, Y=None, *, normalize: bool = False, max_bytes: float | None = DEFAULT_MAX_BYTES
    ) -> np.ndarray:
        """The (N, M) kernel matrix between the rows of ``X`` and of ``Y`` (default ``X``); ``normalize``:
        cosine normalisation; a matrix over ``max_bytes`` is refused with a
        :class:`~bnfk_core.errors.KernelError`.

        Parameters
        ----------
        X, Y : CategoricalData, pandas.DataFrame or codes
        normalize : bool
        max_bytes : float or None

        Returns
        -------
        ndarray, shape (N, M)
        """
        raise NotImplementedError

    def contributions(self, x, y) -> np.ndarray:
        """Per-variable terms of K(x, y) for single rows ``x`` and ``y``; they sum to K(x, y)
        (for a network kernel, Theorem 1's K = sum_i K_i).

        Parameters
        ----------
        x, y : one row each (CategoricalData, pandas.DataFrame or codes)

        Returns
        -------
        ndarray, shape (len(variables),)
            One term per variable of :attr:`variables`.
        """
        raise NotImplementedError


class NetworkKernel(FittedKernel):
    """The Fisher kernel of a fitted network (Theorem 1); the scaled-Hamming kernel is the one of the
    empty network with marginal frequencies."""

    def __init__(self, name: str, model, *, structure=None, params=None, notes=()):
        self.name, self.model = name, model
        self.variables = tuple(model.variables)
        self.structure, self.params, self.n_arcs = structure, params, model.dag.n_arcs
        self.notes = tuple(notes)
        self.recipe = None  # the Recipe the network was learned or fitted by (set by fit_fisher)

    def gram(self, X, Y=None, *, normalize=False, max_bytes=DEFAULT_MAX_BYTES):
        return network_gram(self.model, X, Y, normalize=normalize, max_bytes=max_bytes)

    def contributions(self, x, y):
        return contributions(self.model, x, y)


def fit_fisher(
    train,
    *,
    model=None,
    dag=None,
    recipe=None,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    seed: int | None = None,
    progress=None,
    runner=None,
    **context,
) -> NetworkKernel:
    """The Fisher kernel for ``train`` (no label column).

    Parameters
    ----------
    train : CategoricalData
        The rows the network is fitted on.
    model : BayesNet, optional
        Use this network as it is.
    dag : DAG, optional
        Else fit the CPTs of this structure on ``train`` with the recipe's estimator.
    recipe : Recipe, optional
        Else learn the network of this recipe (default :data:`bnfk_core.learning.recipe.DEFAULT_RECIPE`) on
        ``train``; ``structure``, ``score``, ``params`` and ``seed`` given by name replace its fields.
    runner : optional
        Where the learning's counting and E-step passes run (:func:`bnfk_core.learning.recipe.learn_recipe`).
    **context
        The other options the faces hand every kernel (:data:`bnfk_core.registry.KERNEL_CONTEXT`); any other
        name is refused.

    Returns
    -------
    NetworkKernel
        Its ``recipe`` attribute is the recipe followed (``None`` for a given ``model``).
    """
    from ..learning.recipe import learn_recipe, recipe_of

    KERNELS.validate(
        FISHER, {"seed": seed, "structure": structure, "score": score, "params": params, **context}
    )

    if model is not None:
        info = getattr(model, "fit_info", None) or {}
        return NetworkKernel(FISHER, model, structure="given", params=info.get("method"))
    r = recipe_of(recipe, structure=structure, score=score, params=params, seed=seed)
    if dag is not None:
        out = NetworkKernel(
            FISHER,
            fit(dag, train, method=r.params, pseudo_count=r.pseudo_count),
            structure="given structure",
            params=r.params,
        )
        out.recipe = r
        return out
    if LEARNERS[r.structure].needs_class:
        raise KernelError(
            f"Structure method '{r.structure}' needs the class as a node; the label column is never "
            f"a feature here, so use one of {', '.join(feature_learners())}."
        )
    learned = learn_recipe(train, r, progress=progress, runner=runner)
    out = NetworkKernel(
        FISHER,
        learned.model,
        structure=f"{r.structure}/{r.score}",
        params=r.params,
        notes=learned.result.notes,
    )
    out.recipe = r
    return out


# ---------------------------------------------------------------------- explanations and sets
def contributions(model, x, y) -> np.ndarray:
    """The per-variable terms K_i(x, y) of Theorem 1 (they sum to K(x, y)).

    Parameters
    ----------
    model : BayesNet
    x, y : numpy.ndarray or CategoricalData
        Single rows: 1-D code vectors aligned to the model, or one-row data.

    Returns
    -------
    numpy.ndarray
        Shape (n_vars,): K_i(x, y) = [pi_i(x) = pi_i(y)] / P(pi_i(x)) * ([x_i = y_i] / theta_{i pi_i(x) x_i} -
        1).

    References
    ----------
    The bnfk paper, Theorem 1, eq. (2).
    """
    cx, cy = row_codes(model, x), row_codes(model, y)
    Phi = features(model, np.vstack([cx, cy]))
    off = feature_offsets(model)
    prod = Phi[0].multiply(Phi[1]).tocsr()
    out = np.zeros(model.n_vars)
    np.add.at(out, np.searchsorted(off, prod.indices, side="right") - 1, prod.data)
    return out


def mean_features(model, data, chunk_rows: int = FEATURE_CHUNK_ROWS) -> np.ndarray:
    """mean_x phi(x) as a dense vector -- all that set kernels and MMD need (counts / N).

    Linear time, and memory for one block of ``chunk_rows`` rows of features: no N x M matrix and no
    N-row feature matrix (one block when N <= ``chunk_rows``).

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData or numpy.ndarray
    chunk_rows : int

    Returns
    -------
    numpy.ndarray
        Shape (sum_i q_i r_i,).

    References
    ----------
    The bnfk paper, "The multivariate set kernel": the set kernel needs only the counts N_ijk / N.
    """
    codes = row_codes(model, data)
    N = codes.shape[0]
    total = np.zeros(int(feature_offsets(model)[-1]))
    for _, P in iter_features(model, codes, chunk_rows):
        total += np.asarray(P.sum(axis=0)).ravel()
    return total / N


def set_kernel(model, X, Y) -> float:
    """The paper's set kernel K(X, Y) = (1/NM) sum_{l,m} K(x_l, y_m) = mean phi(X) . mean phi(Y).

    Parameters
    ----------
    model : BayesNet
    X, Y : CategoricalData or numpy.ndarray
        Two sets of rows (codes aligned to the model).

    Returns
    -------
    float

    References
    ----------
    The bnfk paper, "Comparing sets of observations: the multivariate set kernel".
    """
    return float(mean_features(model, X) @ mean_features(model, Y))


def mmd(model, X, Y) -> float:
    """Squared maximum mean discrepancy, paper eq. (10): |mean phi(X) - mean phi(Y)|^2.

    Linear time via the mean embeddings (:func:`mean_features`, computed a block of rows at a time); the
    N x M Gram matrix of the pairwise form (1/N^2 sum K(x,x') + 1/M^2 sum K(y,y') - 2/NM sum K(x,y)) is
    never built.

    Parameters
    ----------
    model : BayesNet
    X, Y : CategoricalData or numpy.ndarray
        Two non-empty sets of rows (codes aligned to the model).

    Returns
    -------
    float
        d(X, Y) >= 0 of eq. (10).

    References
    ----------
    The bnfk paper, "Maximum mean discrepancy", eq. (10); Gretton et al. (2012).
    """
    d = mean_features(model, X) - mean_features(model, Y)
    return float(d @ d)
