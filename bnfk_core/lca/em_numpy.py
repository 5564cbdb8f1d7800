"""The latent class EM of :mod:`bnfk_core.lca.em` in plain numpy, every start at once: for small tables.

The compiled engine pays numba's start-up (its CPU target, ~0.4 s) the first time a process calls it; on a few
hundred distinct rows the whole fit costs less than that.  This engine runs the same algorithm -- the same
E-step, M-step, SQUAREM S3 acceleration with the same step rules, the same stopping rule, the same E-step
count (module docstring of :mod:`bnfk_core.lca.em`) -- with the S starts stacked along a first axis and
advanced in lockstep (a start that has stopped is frozen by a mask).  Only the order of the floating-point
sums differs (a row's log-joint is one product of its one-hot codes X (N, D) with log theta (D, K)):

    L[s, n, t] = log w[s, t] + sum_d X[n, d] log theta[s, d, t],   ll_s = sum_n w_n logsumexp_t L[s, n, t],

so both engines reach the same maximum (checked against each other in tests/test_lca_em_numpy.py).
"""

from __future__ import annotations

import numpy as np

from ..data.encoding import one_hot, state_offsets
from .em import LOG_FLOOR, unique_rows

__all__ = ["SMALL_CELLS", "DistinctRows", "distinct_rows", "use_numpy", "e_step", "em_runs"]

#: the numpy engine is used when (distinct rows) x (one-hot columns) is at most this (fit_lca's
#: ``engine="auto"``); measured for K = 1..6 x 5 starts: soybean_large (74k) 0.2 s in both engines, mushroom
#: 1000 rows (118k) 0.37 s (numba 0.16 s), letter 1000 rows (280k) 12 s (numba 1.7 s) -- beyond it numba's
#: start-up (~0.4 s) pays
SMALL_CELLS = 100_000
_TINY = 1e-300


class DistinctRows:
    """The distinct rows as one-hot codes ``X`` (N, D; a missing cell is an all-zero block), their summed
    ``weights``, the variables' cardinalities ``cards`` and column offsets ``off``."""

    def __init__(self, X, weights, cards, off):
        self.X, self.weights, self.cards, self.off = X, weights, cards, off
        self.n_distinct = X.shape[0]
        self.r_of_col = np.repeat(cards, cards).astype(float)[:, None]  # (D, 1): r_i of every column

    @property
    def n_total(self) -> float:
        return float(self.weights.sum())


def distinct_rows(
    codes: np.ndarray, weights: np.ndarray, cards, small_only: bool = False
) -> DistinctRows | None:
    """Collapse ``codes`` (N, n; -1 = missing) to distinct rows with summed ``weights``, one-hot coded.

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
    weights : ndarray, shape (N,)
    cards : sequence of int
    small_only : bool
        None instead when the table is not small (:func:`use_numpy`): its one-hot codes are not made.

    Returns
    -------
    DistinctRows or None
    """
    codes = np.asarray(codes, dtype=np.int64)
    cards = np.asarray([int(r) for r in cards], dtype=np.int64)
    u, inv = unique_rows(codes, cards)
    if small_only and not use_numpy(len(u), int(cards.sum())):
        return None
    wts = np.bincount(inv, weights=np.asarray(weights, dtype=float), minlength=len(u))
    return DistinctRows(one_hot(u, cards), wts, cards, state_offsets(cards))


def use_numpy(n_distinct: int, n_columns: int) -> bool:
    """``engine="auto"``: the numpy engine on small tables (:data:`SMALL_CELLS`).

    Parameters
    ----------
    n_distinct, n_columns : int

    Returns
    -------
    bool
    """
    return int(n_distinct) * int(n_columns) <= SMALL_CELLS


def _over_classes(op, A: np.ndarray) -> np.ndarray:
    """op.reduce over the short last axis (the K classes), keepdims, class by class from the first: for K < 8
    the very float of ``A.max(axis=2)`` / ``A.sum(axis=2)`` (numpy adds fewer than 8 terms in order; beyond,
    its pairwise sum may differ in the last bits), at a fraction of their cost on a length-K axis."""
    out = A[..., 0].copy()
    for k in range(1, A.shape[-1]):
        op(out, A[..., k], out=out)
    return out[..., None]


def _estep(rows: DistinctRows, lt: np.ndarray, lw: np.ndarray):
    """(ll (S,), expected counts (S, D, K), class sizes (S, K)) at log parameters lt (S, D, K), lw (S, K)."""
    L = np.matmul(rows.X, lt) + lw[:, None, :]  # (S, N, K)
    m = _over_classes(np.maximum, L)
    P = np.exp(L - m)
    tot = _over_classes(np.add, P)
    ll = (rows.weights * (np.log(tot[:, :, 0]) + m[:, :, 0])).sum(axis=1)
    R = P * (rows.weights[None, :, None] / tot)
    return ll, np.matmul(rows.X.T, R), R.sum(axis=1)


def _mstep(rows: DistinctRows, counts: np.ndarray, nk: np.ndarray, n_total: float):
    """log theta, log w from expected counts (an empty block becomes uniform); floored."""
    tot = np.repeat(np.add.reduceat(counts, rows.off[:-1], axis=1), rows.cards, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tot > 0, counts / tot, 1.0 / rows.r_of_col)
        lt = np.where(p > _TINY, np.log(p), LOG_FLOOR)
        pw = nk / n_total
        lw = np.where(pw > _TINY, np.log(pw), LOG_FLOOR)
    return lt, lw


def _renormalise(rows: DistinctRows, lt: np.ndarray, lw: np.ndarray):
    """Log-softmax per variable block and class, and over the classes; floored."""
    m = np.repeat(np.maximum.reduceat(lt, rows.off[:-1], axis=1), rows.cards, axis=1)
    s = np.repeat(np.add.reduceat(np.exp(lt - m), rows.off[:-1], axis=1), rows.cards, axis=1)
    lt = np.maximum(lt - (m + np.log(s)), LOG_FLOOR)
    mw = lw.max(axis=1, keepdims=True)
    lw = np.maximum(lw - (mw + np.log(np.exp(lw - mw).sum(axis=1, keepdims=True))), LOG_FLOOR)
    return lt, lw


def _extrapolated(p0, p1, p2, alpha):
    """q = p0 - 2 alpha r + alpha^2 v (r = p1 - p0, v = p2 - 2 p1 + p0), alpha (S,) broadcast over the
    rest."""
    a = alpha.reshape((-1,) + (1,) * (p0.ndim - 1))
    return p0 + (-2.0 * a) * (p1 - p0) + (a * a) * (p2 - 2.0 * p1 + p0)


def _feasible(P0, P1, P2, W0, W1, W2, alpha):
    """Per start: no coordinate of x' falls to <= 1e-300 where x1 is positive."""
    bad_t = ((_extrapolated(P0, P1, P2, alpha) <= _TINY) & (P1 > _TINY)).any(axis=(1, 2))
    bad_w = ((_extrapolated(W0, W1, W2, alpha) <= _TINY) & (W1 > _TINY)).any(axis=1)
    return ~(bad_t | bad_w)


def e_step(rows: DistinctRows, theta: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(log-likelihood, expected counts (D, K), expected class sizes (K,)) at (theta (D, K), w (K,)).

    Parameters
    ----------
    rows : DistinctRows
    theta : ndarray, shape (D, K)
    w : ndarray, shape (K,)

    Returns
    -------
    loglik : float
    counts : ndarray, shape (D, K)
    sizes : ndarray, shape (K,)
    """
    with np.errstate(divide="ignore"):
        lt = np.maximum(np.log(theta), LOG_FLOOR)[None]
        lw = np.maximum(np.log(w), LOG_FLOOR)[None]
    ll, counts, nk = _estep(rows, lt, lw)
    return float(ll[0]), counts[0], nk[0]


def em_runs(
    rows: DistinctRows,
    theta: np.ndarray,
    w: np.ndarray,
    *,
    tol: float = 1e-8,
    max_iter: int = 1000,
    accelerate: bool = True,
    starts: np.ndarray | None = None,
) -> dict:
    """:func:`bnfk_core.lca.em.em_runs` (without ``trace``) on every start at once: ``theta`` (S, D, K), ``w``
    (S, K). Returns ``theta``, ``w``, ``loglik`` (NaN for a start not run), ``iterations`` (E-steps),
    ``converged``.

    Parameters
    ----------
    rows : DistinctRows
    theta : ndarray, shape (S, D, K)
    w : ndarray, shape (S, K)
    tol : float
    max_iter : int
    accelerate : bool
    starts : ndarray of int, optional

    Returns
    -------
    dict
    """
    S = theta.shape[0]
    run = np.zeros(S, bool)
    run[np.arange(S) if starts is None else np.asarray(starts, dtype=np.int64)] = True
    with np.errstate(divide="ignore"):
        lt = np.maximum(np.log(theta), LOG_FLOOR)
        lw = np.maximum(np.log(w), LOG_FLOOR)
    loglik = np.full(S, np.nan)
    iters = np.zeros(S, np.int64)
    conv = np.zeros(S, bool)
    if run.any():
        sub = _run(rows, lt[run], lw[run], float(tol), int(max_iter), bool(accelerate))
        lt[run], lw[run], loglik[run], iters[run], conv[run] = sub
    return {
        "theta": np.where(lt <= LOG_FLOOR, 0.0, np.exp(lt)),
        "w": np.where(lw <= LOG_FLOOR, 0.0, np.exp(lw)),
        "loglik": loglik,
        "iterations": iters,
        "converged": conv,
    }


def _run(rows, lt, lw, tol, max_iter, accelerate):
    """The lockstep loop: each start follows run_start of :mod:`bnfk_core.lca.em` step for step."""
    S = lt.shape[0]
    n_total = rows.n_total
    thr = tol * n_total
    ll0, counts, nk = _estep(rows, lt, lw)
    steps = np.ones(S, np.int64)
    active = np.ones(S, bool)
    converged = np.zeros(S, bool)
    step_max = np.ones(S)
    while True:
        active &= steps <= max_iter
        if not active.any():
            break
        ltp, lwp = lt.copy(), lw.copy()  # x0
        lt1, lw1 = _mstep(rows, counts, nk, n_total)  # x1 = M(x0)
        ll1, c1, k1 = _estep(rows, lt1, lw1)
        a = active
        steps[a] += 1
        lt[a], lw[a], counts[a], nk[a] = lt1[a], lw1[a], c1[a], k1[a]
        gain = ll1 - ll0
        ll0 = np.where(a, ll1, ll0)
        done = a & (gain < thr)
        converged |= done
        active &= ~done
        acc = active & (steps <= max_iter) if accelerate else np.zeros(S, bool)
        if not acc.any():
            continue
        lt2, lw2 = _mstep(rows, counts, nk, n_total)  # x2 = M(x1)
        P0, P1, P2 = np.exp(ltp), np.exp(lt1), np.exp(lt2)
        W0, W1, W2 = np.exp(lwp), np.exp(lw1), np.exp(lw2)
        r, v = P1 - P0, P2 - 2.0 * P1 + P0
        rw, vw = W1 - W0, W2 - 2.0 * W1 + W0
        sr = (r * r).sum(axis=(1, 2)) + (rw * rw).sum(axis=1)
        sv = (v * v).sum(axis=(1, 2)) + (vw * vw).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.where(
                (sv > 0) & (sr > 0), -np.minimum(step_max, np.maximum(1.0, np.sqrt(sr / sv))), -1.0
            )
        step_max = np.where(acc & (alpha == -step_max), step_max * 4.0, step_max)
        searching = acc & (alpha < -1.0)  # shrink towards plain EM
        for _ in range(8):
            if not searching.any():
                break
            ok = _feasible(P0, P1, P2, W0, W1, W2, alpha)
            searching &= ~ok
            alpha = np.where(searching, 0.5 * (alpha - 1.0), alpha)
        alpha = np.where(searching, -1.0, alpha)
        ext = acc & (alpha < -1.0)
        fallback = acc.copy()
        if ext.any():  # x' = x0 - 2 a r + a^2 v
            with np.errstate(divide="ignore", invalid="ignore"):
                q = _extrapolated(P0, P1, P2, alpha)
                qw = _extrapolated(W0, W1, W2, alpha)
                ltx = np.where(q > _TINY, np.log(np.where(q > _TINY, q, 1.0)), LOG_FLOOR)
                lwx = np.where(qw > _TINY, np.log(np.where(qw > _TINY, qw, 1.0)), LOG_FLOOR)
            ltx, lwx = _renormalise(rows, ltx, lwx)
            llp, cp, kp = _estep(rows, ltx, lwx)
            steps[ext] += 1
            accept = ext & (llp >= ll1)
            lt[accept], lw[accept], counts[accept], nk[accept] = (
                ltx[accept],
                lwx[accept],
                cp[accept],
                kp[accept],
            )
            ll0 = np.where(accept, llp, ll0)
            rej = ext & ~accept
            step_max = np.where(rej & (-alpha * 4.0 == step_max), np.maximum(1.0, step_max / 16.0), step_max)
            stop = rej & (steps > max_iter)
            active &= ~stop
            fallback &= ~accept & ~stop
        if fallback.any():  # otherwise x0 = x2 = M(x1)
            f = fallback
            lt[f], lw[f] = lt2[f], lw2[f]
            ll2, c2, k2 = _estep(rows, lt, lw)
            steps[f] += 1
            counts[f], nk[f] = c2[f], k2[f]
            ll0 = np.where(f, ll2, ll0)
    return lt, lw, ll0, steps, converged
