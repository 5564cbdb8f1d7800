"""Correlation clustering with a fixed (maximum) number of clusters (thesis §5.1.1, eq. 5.2) and the adaptive
shift (thesis §5.2).

Minimise the cost of thesis eq. (5.2)

      cost(C) = 1/2 Σ_p Σ_{i,j ∈ C_p} (|X_ij| - X_ij) + 1/2 Σ_p Σ_{p'≠p} Σ_{i∈C_p, j∈C_p'} (|X_ij| + X_ij)

  over ordered pairs (the diagonal i = j included, where it only adds a constant) by local
  search with restarts (Chehreghani, "Clustering by shift", ICDM 2017; thesis §5.1.1).
  For symmetric X the cost is ``1/2 Σ_ij (|X_ij| + X_ij) - Σ_p Σ_{i,j∈C_p} X_ij``, so moving
  object i from cluster a to cluster b changes it by

      Δ(i → b) = -2 (S_ib - S_ia + X_ii),      S_ic = Σ_{j ∈ C_c} X_ij,

  and after a move only two columns of S change (O(N)).  One restart starts from a uniformly
  random assignment and visits the objects in a random order, moving each to the cluster of
  least cost given the others (strict improvement only; ties keep the object where it is),
  until a full pass moves nothing.  The best of ``restarts`` (default 25) is kept.
  Clusters may become empty, so ``n_clusters`` is an upper bound (the result reports how
  many are used).

  Warm start (``init_labels=``, for live structure editing): the previous structure's partition
  replaces the first restart's random starting assignment; everything else (the random numbers
  drawn, the other restarts, the visiting orders) is the thesis protocol above, which stays the
  default.  What it changes: the result is the best of the default random restarts 2..R and one
  local search from the old partition, so a small kernel change tends to keep the partition (and
  with ``restarts=1`` it costs one local search instead of 25).  It can differ from the default
  result; ARIs reported as the thesis's must use the default.

  Shift (thesis §5.2): the *adaptive shift* for the Hamming and scaled-Hamming kernels,
  none for the Fisher kernel.  We implement the adaptive shift as double centering,

      X'_ij = X_ij - (1/N) Σ_k X_ik - (1/N) Σ_k X_kj + (1/N²) Σ_kl X_kl,

  which makes every row (and column) of X' sum to zero -- the property the thesis states
"""

from __future__ import annotations

import time

import numba
import numpy as np

from ...compiled import one_thread_twin
from ...data.limits import guard_workspace
from ...registry import KERNELS
from .common import ClusterError, ClusterResult, check_k, renumber, square_matrix
from .members import SHIFTS

__all__ = [
    "SHIFTS",
    "adaptive_shift",
    "shift_for",
    "cc_cost",
    "cc_move_deltas",
    "correlation_clustering",
    "cluster_gram",
    "PARALLEL_RESTART_WORK",
]


def adaptive_shift(X) -> np.ndarray:
    """Double centering X' = J X J (J = I - 11ᵀ/N): every row and column of X' sums to zero."""
    X = square_matrix(X, "similarity matrix")
    r = X.mean(axis=1, keepdims=True)
    c = X.mean(axis=0, keepdims=True)
    return X - r - c + X.mean()


def shift_for(kernel: str | None, shift: str) -> str:
    """The shift ``shift`` means for ``kernel`` (``auto``: the kernel's registered shift; none without a
    kernel)."""
    if shift not in SHIFTS:
        raise ClusterError(f"Unknown shift '{shift}'; choose one of {', '.join(SHIFTS)}.")
    if shift == "auto":
        return "none" if kernel is None else KERNELS[kernel].shift
    return shift


# ====================================================================== correlation clustering
def cc_cost(X, labels) -> float:
    """Correlation-clustering cost of thesis eq. (5.2) (ordered pairs, diagonal included)."""
    X = square_matrix(X, "similarity matrix")
    labels = np.asarray(labels)
    same = labels[:, None] == labels[None, :]
    return float(0.5 * ((np.abs(X) - X)[same].sum() + (np.abs(X) + X)[~same].sum()))


def _onehot_sums(X: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """S[i, c] = Σ_{j in cluster c} X_ij."""
    H = np.zeros((len(labels), k))
    H[np.arange(len(labels)), labels] = 1.0
    return X @ H


def cc_move_deltas(X, labels, n_clusters: int | None = None) -> np.ndarray:
    """Δcost of moving each object to each cluster, all others fixed: array (N, K), 0 where it is.

    Vectorised form of Δ(i → b) = -2 (S_ib - S_ia + X_ii) for symmetric X.
    """
    X = square_matrix(X, "similarity matrix")
    labels = np.asarray(labels, dtype=np.int64)
    k = int(n_clusters if n_clusters is not None else labels.max() + 1)
    S = _onehot_sums(X, labels, k)
    own = S[np.arange(len(labels)), labels]
    D = -2.0 * (S - own[:, None] + np.diag(X)[:, None])
    D[np.arange(len(labels)), labels] = 0.0
    return D


def _local_search_py(X, labels, k, order, tol, max_sweeps):
    """Reference implementation in numpy (used when numba is unavailable and in tests)."""
    S = _onehot_sums(X, labels, k).T.copy()  # (k, N)
    diag = np.diag(X)
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        moved = False
        for i in order:
            a = labels[i]
            gain = S[:, i] - S[a, i] + diag[i]
            gain[a] = 0.0
            b = int(np.argmax(gain))
            if gain[b] > tol:
                S[a] -= X[i]
                S[b] += X[i]
                labels[i] = b
                moved = True
        if not moved:
            break
    return sweeps


@numba.njit(cache=True)
def _ls_sweeps(X, labels, k, order, tol, max_sweeps, S):  # pragma: no cover - compiled
    """The sweeps of the local search from ``labels`` (changed in place) given the cluster sums
    S[c, i] = Σ_{j in cluster c} X[i, j]; returns (sweeps, Σ_i S[labels_i, i]), the same-cluster sum of
    the result read off the maintained sums (cc_cost = ½ Σ(|X| + X) − it)."""
    N = X.shape[0]
    sweeps = 0
    for s in range(max_sweeps):
        sweeps = s + 1
        moved = False
        for t in range(N):
            i = order[t]
            a = labels[i]
            base = S[a, i] - X[i, i]
            best = 0.0
            b = a
            for c in range(k):
                if c != a:
                    g = S[c, i] - base
                    if g > best + tol:
                        best = g
                        b = c
            if b != a:
                for j in range(N):
                    v = X[i, j]
                    S[a, j] -= v
                    S[b, j] += v
                labels[i] = b
                moved = True
        if not moved:
            break
    same = 0.0
    for i in range(N):
        same += S[labels[i], i]
    return sweeps, same


@numba.njit(parallel=True, cache=True)
def _restart_sums(X, labT, k):  # pragma: no cover - compiled
    """S[r, c, i] = Σ_j [labT[j, r] = c] X[i, j] for every restart r at once, summed in ascending j exactly
    as one restart's row-by-row sum would be (so bit-identical), but with the R restarts' sums interleaved: R
    independent addition chains instead of one latency-bound chain per restart."""
    N = X.shape[0]
    R = labT.shape[1]
    S = np.empty((R, k, N))
    for i in numba.prange(N):
        acc = np.zeros((R, k))
        for j in range(N):
            x = X[i, j]
            for r in range(R):
                acc[r, labT[j, r]] += x
        for r in range(R):
            for c in range(k):
                S[r, c, i] = acc[r, c]
    return S


#: :func:`_restart_sums` in one thread, cached under its own name (see :mod:`bnfk_core.compiled`)
_restart_sums_serial = one_thread_twin(_restart_sums, "_restart_sums_serial")


@numba.njit(parallel=True, cache=True)
def _ls_restarts(X, labels, k, orders, tol, max_sweeps, S):  # pragma: no cover - compiled
    """:func:`_ls_sweeps` for every restart (rows of ``labels``/``orders``, sums ``S[r]``) in parallel
    threads, each exactly the sequential computation; (sweeps, same-cluster sums)."""
    R = labels.shape[0]
    sweeps = np.zeros(R, np.int64)
    same = np.zeros(R)
    for r in numba.prange(R):
        sw, sm = _ls_sweeps(X, labels[r], k, orders[r], tol, max_sweeps, S[r])
        sweeps[r] = sw
        same[r] = sm
    return sweeps, same


@numba.njit(cache=True)
def _ls_restarts_serial(X, labels, k, orders, tol, max_sweeps, S):  # pragma: no cover - compiled
    """:func:`_ls_restarts` in one thread (small problems: waking threads costs more than it saves,
    and much more on a loaded machine)."""
    R = labels.shape[0]
    sweeps = np.zeros(R, np.int64)
    same = np.zeros(R)
    for r in range(R):
        sw, sm = _ls_sweeps(X, labels[r], k, orders[r], tol, max_sweeps, S[r])
        sweeps[r] = sw
        same[r] = sm
    return sweeps, same


PARALLEL_RESTART_WORK = 2e7  # restarts x N^2 above which the restarts run in parallel


def correlation_clustering(
    X,
    n_clusters: int,
    *,
    restarts: int = 25,
    seed: int = 0,
    shift: str = "adaptive",
    kernel: str | None = None,
    max_sweeps: int = 1000,
    compiled: bool = True,
    init_labels=None,
) -> ClusterResult:
    """Correlation clustering of a similarity matrix by local search with restarts (module docstring).

    Parameters
    ----------
    X : (N, N) symmetric similarities (a Gram matrix).
    n_clusters : maximum number of clusters.
    restarts : independent random starts (thesis: 25); the lowest cost wins (first on ties).
    seed : seeds the starts and the visiting orders.
    shift : "adaptive" (double centering), "none", or "auto" (none for ``kernel == "fisher"``,
        adaptive otherwise -- the thesis's choice).
    init_labels : optional warm start, e.g. the partition found for the previous structure.  It
        replaces the *first* restart's random starting assignment (that restart keeps its random
        visiting order; the random numbers drawn are the same, so restarts 2.. are exactly the
        default protocol's).  The result is the best of the warm-started local search and the other
        random restarts, so it is never worse (in cost) than the warm start itself; with
        ``restarts=1`` it is a single local search from ``init_labels`` -- fast, but it stays in the
        previous partition's basin.  None (default) is the thesis protocol.  Labels must be
        integers in 0 .. n_clusters-1, one per row.
    """
    t0 = time.perf_counter()
    X = square_matrix(X, "similarity matrix")
    n = X.shape[0]
    guard_workspace("correlation", n)
    X = 0.5 * (X + X.T)
    k = check_k(n, n_clusters)
    if int(restarts) < 1:
        raise ClusterError(f"restarts must be at least 1, got {restarts}.")
    shift = shift_for(kernel, shift)
    Xs = adaptive_shift(X) if shift == "adaptive" else X
    del X  # the symmetrised copy is not needed once shifted
    Xs = np.ascontiguousarray(Xs)
    absX = np.abs(Xs)
    tol = 1e-12 * max(float(absX.max(initial=0.0)), 1e-300) * max(n, 1)
    rng = np.random.default_rng(seed)
    best, best_cost, costs, sweeps = None, np.inf, [], []
    warm = None
    if init_labels is not None:
        warm = np.asarray(init_labels)
        if warm.shape != (n,) or warm.dtype.kind not in "iu" or (n and (warm.min() < 0 or warm.max() >= k)):
            raise ClusterError(f"The starting labels must be {n} integers between 0 and {k - 1}.")
        warm = warm.astype(np.int64)
    R = int(restarts)
    labs = np.empty((R, n), np.int64)
    orders = np.empty((R, n), np.int64)
    for r in range(R):  # the random numbers in the order of the sequential protocol
        labs[r] = rng.integers(0, k, size=n)
        orders[r] = rng.permutation(n)
    if warm is not None:
        labs[0] = warm
    if compiled:
        big = R * n * n >= PARALLEL_RESTART_WORK
        S0 = (_restart_sums if big else _restart_sums_serial)(Xs, np.ascontiguousarray(labs.T), k)
        run = _ls_restarts if big else _ls_restarts_serial
        sws, same = run(Xs, labs, k, orders, tol, int(max_sweeps), S0)
        half_abs = 0.5 * (float(absX.sum()) + float(Xs.sum()))
    for r in range(R):
        lab = labs[r]
        if compiled:
            sw, c = sws[r], float(half_abs - same[r])
        else:
            sw = _local_search_py(Xs, lab, k, orders[r], tol, int(max_sweeps))
            c = cc_cost(Xs, lab)
        costs.append(c)
        sweeps.append(int(sw))
        if best is None or c < best_cost - 1e-9 * max(abs(best_cost), 1.0):
            best, best_cost = lab.copy(), c
    labels = renumber(best)
    return ClusterResult(
        labels,
        "correlation",
        k,
        int(labels.max() + 1) if n else 0,
        shift,
        int(seed),
        cost=float(best_cost),
        restart_costs=costs,
        sweeps=sweeps,
        seconds=time.perf_counter() - t0,
    )


def cluster_gram(
    K,
    n_clusters: int,
    *,
    kernel: str | None = None,
    shift: str = "auto",
    restarts: int = 25,
    seed: int = 0,
    init_labels=None,
    **_,
) -> ClusterResult:
    """The ``correlation`` member of :data:`bnfk_core.registry.CLUSTERERS`: :func:`correlation_clustering` of
    a Gram matrix (options it does not use, e.g. the spectral ``transform``, are ignored)."""
    return correlation_clustering(
        K, n_clusters, restarts=restarts, seed=seed, shift=shift, kernel=kernel, init_labels=init_labels
    )
