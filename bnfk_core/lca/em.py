"""The EM engine of the latent class model: compiled, one start at a time, on the rows' codes (no one-hot
matrix).

Rows.  The rows are first collapsed to their distinct configurations with summed weights.  The variables are
cut into a few consecutive groups (:func:`variable_groups`) and every group's distinct configurations listed
once, each as the list of its observed (variable, state) columns d = off[i] + x_i: a missing cell is simply
not listed, so it drops out of the sums -- the marginal likelihood of the observed cells, as in poLCA.

E-step.  For every configuration c of group g and class t, T[c, t] = sum_{d in c} log theta[d, t] (plus
log w_t for the first group's configurations); a row is one configuration per group, so
log p(x_n, t) = sum_g T[c_g(n), t].  With E = exp(T - max_t T) per configuration the products need no
exponential per row (a product that underflows is redone in log space).  The weighted posteriors
w_n p(t | x_n) are added per configuration (RB), and the expected counts n[d, t] = sum_{c contains d} RB[c,
t]. M-step: theta[d, t] = n[d, t] / sum_{d' in d's variable} n[d', t] (an empty block becomes uniform),
w_t = sum_n w_n p(t | x_n) / sum_n w_n.

Acceleration.  SQUAREM (Varadhan & Roland 2008, scheme S3) on the probabilities: from x0, two EM steps give
x1 = M(x0), x2 = M(x1); r = x1 - x0, v = x2 - x1 - r, alpha = -min(step_max, max(1, |r| / |v|)) (step_max
starts at 1, is multiplied by 4 whenever it is reached and divided by 4 when such a step is rejected, as in
the R package SQUAREM); alpha is halved towards -1 until x' = x0 - 2 alpha r + alpha^2 v stays positive.  x',
renormalised per variable and class, is kept only if its log-likelihood is at least that of x1; otherwise x2
is taken (plain EM).  The accepted points' log-likelihoods
never decrease (the trace records them).  A start stops when one plain EM step from the current point gains
less than ``tol`` per row of mean log-likelihood (the stopping rule of plain EM), or after ``max_iter``
E-steps; ``iterations`` counts E-steps (plain EM: one per iteration).
"""

from __future__ import annotations

import numba
import numpy as np

from ..data.encoding import state_offsets

__all__ = [
    "LOG_FLOOR",
    "PreparedRows",
    "prepare_rows",
    "unique_rows",
    "variable_groups",
    "run_start",
    "e_step",
    "em_runs",
]

LOG_FLOOR = float(np.log(1e-300))  # log 0 is floored so that 0 * log 0 stays 0 in the sums


def unique_rows(codes: np.ndarray, cards) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows in lexicographic order, inverse) of ``codes`` (N, n; -1 = missing): np.unique(axis=0),
    but on one int64 key per row (mixed radix r_i + 1, missing first) when the keys cannot overflow -- the
    same order, many times faster.

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
    cards : sequence of int

    Returns
    -------
    rows : ndarray of int
    inverse : ndarray of int, shape (N,)
    """
    codes = np.asarray(codes)
    if codes.shape[1] == 0 or sum(np.log2(int(r) + 1) for r in cards) > 62:
        u, inv = np.unique(codes, axis=0, return_inverse=True)
        return u, inv.reshape(-1)
    key = np.zeros(codes.shape[0], np.int64)
    for i, r in enumerate(cards):
        key = key * (int(r) + 1) + (codes[:, i].astype(np.int64) + 1)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return codes[first], inv.reshape(-1)


def variable_groups(codes: np.ndarray, cards) -> list:
    """Consecutive groups of variables, each with at most max(256, N/8) distinct configurations in ``codes``
    (greedy; a variable with more starts a group of its own).

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
    cards : sequence of int

    Returns
    -------
    list of list of int
    """
    codes = np.asarray(codes)
    N, n = codes.shape
    limit = max(256, N // 8)
    groups, cur = [], []
    ids = np.zeros(N, np.int64)  # each row's configuration in the current group (0 .. distinct - 1)
    for i in range(n):
        col = codes[:, i].astype(np.int64) + 1
        _, both = np.unique(ids * (int(cards[i]) + 1) + col, return_inverse=True)  # the group with i added
        if cur and both.max(initial=-1) + 1 > limit:
            groups.append(cur)
            cur = [i]
            _, ids = np.unique(col, return_inverse=True)
        else:
            cur = cur + [i]
            ids = both
        ids = ids.reshape(-1).astype(np.int64)
    return groups + [cur]


class PreparedRows:
    """The rows as the engine reads them (module docstring): ``ptr``/``cols`` list every configuration's
    observed columns (CSR), the first ``c0`` configurations belong to group 0, ``inv[n, g]`` is row n's
    configuration in group g, ``weights`` the distinct rows' summed weights, ``off`` the variables' column
    offsets."""

    def __init__(self, ptr, cols, c0, inv, weights, off, n_distinct):
        self.ptr, self.cols, self.c0, self.inv, self.weights, self.off = ptr, cols, c0, inv, weights, off
        self.n_distinct = n_distinct

    @property
    def n_total(self) -> float:
        return float(self.weights.sum())


def prepare_rows(codes: np.ndarray, weights: np.ndarray, cards, groups=None) -> PreparedRows:
    """Collapse ``codes`` (N, n; -1 = missing) to distinct rows with summed ``weights`` and list the groups'
    configurations (:class:`PreparedRows`).

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
    weights : ndarray, shape (N,)
    cards : sequence of int
    groups : list of list of int, optional
        Default :func:`variable_groups`.

    Returns
    -------
    PreparedRows
    """
    codes = np.asarray(codes, dtype=np.int64)
    weights = np.asarray(weights, dtype=float)
    u, inv_rows = unique_rows(codes, cards)
    wts = np.bincount(inv_rows, weights=weights, minlength=len(u))
    off = state_offsets(cards)
    groups = variable_groups(u, cards) if groups is None else groups
    ptr, cols, invs, start, c0 = [0], [], [], 0, 0
    for j, g in enumerate(groups):
        cfg, inv = unique_rows(u[:, g], [cards[i] for i in g])
        obs = cfg >= 0
        cols.append((off[np.asarray(g)][None, :] + cfg)[obs])  # row-major: configuration by configuration
        ptr.extend((ptr[-1] + np.cumsum(obs.sum(axis=1))).tolist())
        invs.append(inv.reshape(-1) + start)
        start += len(cfg)
        if j == 0:
            c0 = len(cfg)
    return PreparedRows(
        np.asarray(ptr, np.int64),
        np.concatenate(cols).astype(np.int64),
        c0,
        np.ascontiguousarray(np.stack(invs, axis=1).astype(np.int64)),
        wts,
        off,
        len(u),
    )


@numba.njit(cache=True, nogil=True)
def _estep(lt, lw, ptr, cols, c0, inv, wts, T, E, Mx, RB, counts, nk):  # pragma: no cover - compiled
    """One E-step (module docstring): fills RB, the expected counts and class sizes; returns the
    log-likelihood."""
    C = ptr.shape[0] - 1
    K = lt.shape[1]
    for c in range(C):
        for k in range(K):
            T[c, k] = lw[k] if c < c0 else 0.0
        for j in range(ptr[c], ptr[c + 1]):
            d = cols[j]
            for k in range(K):
                T[c, k] += lt[d, k]
        m = T[c, 0]
        for k in range(1, K):
            if T[c, k] > m:
                m = T[c, k]
        Mx[c] = m
        for k in range(K):
            E[c, k] = np.exp(T[c, k] - m)
            RB[c, k] = 0.0
    N, G = inv.shape
    P = np.empty(K)
    acc = 0.0
    prod = 1.0
    for n in range(N):
        tot = 0.0
        c = inv[n, 0]
        for k in range(K):
            v = E[c, k]
            for g in range(1, G):
                v *= E[inv[n, g], k]
            P[k] = v
            tot += v
        lm = 0.0
        for g in range(G):
            lm += Mx[inv[n, g]]
        if tot < 1e-250:  # the product underflowed: log space
            m = -np.inf
            for k in range(K):
                v = T[c, k]
                for g in range(1, G):
                    v += T[inv[n, g], k]
                P[k] = v
                if v > m:
                    m = v
            tot = 0.0
            for k in range(K):
                P[k] = np.exp(P[k] - m)
                tot += P[k]
            lm = m
        wn = wts[n]
        if wn == 1.0:  # log of a running product: one logarithm per ~10 rows, not per row
            prod *= tot
            acc += lm
            if prod < 1e-30 or prod > 1e30:
                acc += np.log(prod)
                prod = 1.0
        else:
            acc += wn * (np.log(tot) + lm)
        s = wn / tot
        for g in range(G):
            cg = inv[n, g]
            for k in range(K):
                RB[cg, k] += P[k] * s
    acc += np.log(prod)
    counts[:, :] = 0.0
    for c in range(C):
        for j in range(ptr[c], ptr[c + 1]):
            d = cols[j]
            for k in range(K):
                counts[d, k] += RB[c, k]
    for k in range(K):
        nk[k] = 0.0
    for c in range(c0):
        for k in range(K):
            nk[k] += RB[c, k]
    return acc


@numba.njit(cache=True, nogil=True)
def _mstep(counts, nk, off, n_total, lt, lw, floor):  # pragma: no cover - compiled
    """log theta and log w from the expected counts (module docstring)."""
    K = counts.shape[1]
    for i in range(off.shape[0] - 1):
        a, b = off[i], off[i + 1]
        for k in range(K):
            tot = 0.0
            for d in range(a, b):
                tot += counts[d, k]
            for d in range(a, b):
                p = counts[d, k] / tot if tot > 0 else 1.0 / (b - a)
                lt[d, k] = np.log(p) if p > 1e-300 else floor
    for k in range(K):
        p = nk[k] / n_total
        lw[k] = np.log(p) if p > 1e-300 else floor


@numba.njit(cache=True, nogil=True)
def _renormalise(lt, lw, off, floor):  # pragma: no cover - compiled
    """Log-softmax per variable block and class, and over the classes; floored."""
    K = lt.shape[1]
    for i in range(off.shape[0] - 1):
        a, b = off[i], off[i + 1]
        for k in range(K):
            m = lt[a, k]
            for d in range(a + 1, b):
                if lt[d, k] > m:
                    m = lt[d, k]
            s = 0.0
            for d in range(a, b):
                s += np.exp(lt[d, k] - m)
            ls = m + np.log(s)
            for d in range(a, b):
                lt[d, k] = max(lt[d, k] - ls, floor)
    m = lw[0]
    for k in range(1, K):
        if lw[k] > m:
            m = lw[k]
    s = 0.0
    for k in range(K):
        s += np.exp(lw[k] - m)
    ls = m + np.log(s)
    for k in range(K):
        lw[k] = max(lw[k] - ls, floor)


@numba.njit(cache=True, nogil=True)
def _extrapolate(ltp, lt1, lt2, lwp, lw1, lw2, alpha, floor):  # pragma: no cover - compiled
    """x' = x0 - 2 alpha r + alpha^2 v in probability space, written over (ltp, lwp) as logarithms if every
    coordinate stays positive (True); otherwise nothing is written (False)."""
    a1, a2 = -2.0 * alpha, alpha * alpha
    D, K = ltp.shape
    for d in range(D):
        for k in range(K):
            p0, p1 = np.exp(ltp[d, k]), np.exp(lt1[d, k])
            if p0 + a1 * (p1 - p0) + a2 * (np.exp(lt2[d, k]) - 2.0 * p1 + p0) <= 1e-300 and p1 > 1e-300:
                return False
    for k in range(K):
        p0, p1 = np.exp(lwp[k]), np.exp(lw1[k])
        if p0 + a1 * (p1 - p0) + a2 * (np.exp(lw2[k]) - 2.0 * p1 + p0) <= 1e-300 and p1 > 1e-300:
            return False
    for d in range(D):
        for k in range(K):
            p0, p1 = np.exp(ltp[d, k]), np.exp(lt1[d, k])
            q = p0 + a1 * (p1 - p0) + a2 * (np.exp(lt2[d, k]) - 2.0 * p1 + p0)
            ltp[d, k] = np.log(q) if q > 1e-300 else floor
    for k in range(K):
        p0, p1 = np.exp(lwp[k]), np.exp(lw1[k])
        q = p0 + a1 * (p1 - p0) + a2 * (np.exp(lw2[k]) - 2.0 * p1 + p0)
        lwp[k] = np.log(q) if q > 1e-300 else floor
    return True


@numba.njit(cache=True, nogil=True)
def _assign(lt, lw, lt_from, lw_from):  # pragma: no cover - compiled
    """lt, lw = lt_from, lw_from, element by element (an array-to-array slice assignment would compile numba's
    shape-mismatch message, seconds of string formatting on a fresh cache)."""
    D, K = lt.shape
    for d in range(D):
        for k in range(K):
            lt[d, k] = lt_from[d, k]
    for k in range(K):
        lw[k] = lw_from[k]


@numba.njit(cache=True, nogil=True)
def run_start(
    lt, lw, ptr, cols, c0, inv, wts, off, tol, max_iter, accelerate, trace, floor
):  # pragma: no cover
    """EM (SQUAREM-accelerated if ``accelerate``) from one start; ``lt`` (D, K) and ``lw`` (K,) are log
    parameters, overwritten with the final ones.  ``trace`` (>= max_iter + 1 entries, or 0 for none) receives
    the accepted points' log-likelihoods.  Returns (log-likelihood at the returned parameters, E-steps,
    converged, trace entries)."""
    C = ptr.shape[0] - 1
    D, K = lt.shape
    n_total = 0.0
    for n in range(wts.shape[0]):
        n_total += wts[n]
    thr = tol * n_total
    T = np.empty((C, K))
    E = np.empty((C, K))
    Mx = np.empty(C)
    RB = np.empty((C, K))
    counts = np.empty((D, K))
    nk = np.empty(K)
    lt1, lw1 = np.empty((D, K)), np.empty(K)
    lt2, lw2 = np.empty((D, K)), np.empty(K)
    ltp, lwp = np.empty((D, K)), np.empty(K)
    keep = trace.shape[0] > 0
    ntr = 0
    ll0 = _estep(lt, lw, ptr, cols, c0, inv, wts, T, E, Mx, RB, counts, nk)
    steps = 1
    if keep:
        trace[ntr] = ll0
        ntr += 1
    converged = False
    step_max = 1.0
    while steps <= max_iter:
        _assign(ltp, lwp, lt, lw)  # x0
        _mstep(counts, nk, off, n_total, lt1, lw1, floor)  # x1 = M(x0)
        ll1 = _estep(lt1, lw1, ptr, cols, c0, inv, wts, T, E, Mx, RB, counts, nk)
        steps += 1
        _assign(lt, lw, lt1, lw1)
        gain = ll1 - ll0
        ll0 = ll1
        if keep:
            trace[ntr] = ll1
            ntr += 1
        if gain < thr:
            converged = True
            break
        if not accelerate or steps > max_iter:
            continue
        _mstep(counts, nk, off, n_total, lt2, lw2, floor)  # x2 = M(x1)
        sr = 0.0
        sv = 0.0
        for d in range(D):
            for k in range(K):
                p0, p1, p2 = np.exp(ltp[d, k]), np.exp(lt1[d, k]), np.exp(lt2[d, k])
                r = p1 - p0
                v = p2 - 2.0 * p1 + p0
                sr += r * r
                sv += v * v
        for k in range(K):
            p0, p1, p2 = np.exp(lwp[k]), np.exp(lw1[k]), np.exp(lw2[k])
            r = p1 - p0
            v = p2 - 2.0 * p1 + p0
            sr += r * r
            sv += v * v
        alpha = -1.0
        if sv > 0.0 and sr > 0.0:
            alpha = -min(step_max, max(1.0, np.sqrt(sr / sv)))
        if alpha == -step_max:
            step_max *= 4.0
        for _ in range(8):  # shrink the step towards plain EM until x' stays in the simplex
            if alpha >= -1.0 or _extrapolate(ltp, lt1, lt2, lwp, lw1, lw2, alpha, floor):
                break
            alpha = 0.5 * (alpha - 1.0)
        else:
            alpha = -1.0
        if alpha < -1.0:  # x' = x0 - 2 a r + a^2 v
            _renormalise(ltp, lwp, off, floor)
            llp = _estep(ltp, lwp, ptr, cols, c0, inv, wts, T, E, Mx, RB, counts, nk)
            steps += 1
            if llp >= ll1:  # accepted: x0 = x'
                _assign(lt, lw, ltp, lwp)
                ll0 = llp
                if keep:
                    trace[ntr] = llp
                    ntr += 1
                continue
            if -alpha * 4.0 == step_max:
                step_max = max(1.0, step_max / 16.0)
            if steps > max_iter:
                break
        _assign(lt, lw, lt2, lw2)  # otherwise x0 = x2 = M(x1)
        ll0 = _estep(lt, lw, ptr, cols, c0, inv, wts, T, E, Mx, RB, counts, nk)
        steps += 1
        if keep:
            trace[ntr] = ll0
            ntr += 1
    return ll0, steps, converged, ntr


def e_step(rows: PreparedRows, theta: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(log-likelihood, expected counts (D, K), expected class sizes (K,)) at (theta (D, K), w (K,)).

    Parameters
    ----------
    rows : PreparedRows
    theta : ndarray, shape (D, K)
    w : ndarray, shape (K,)

    Returns
    -------
    loglik : float
    counts : ndarray, shape (D, K)
    sizes : ndarray, shape (K,)
    """
    with np.errstate(divide="ignore"):
        lt = np.ascontiguousarray(np.maximum(np.log(theta), LOG_FLOOR))
        lw = np.ascontiguousarray(np.maximum(np.log(w), LOG_FLOOR))
    C, (D, K) = len(rows.ptr) - 1, lt.shape
    counts, nk = np.empty((D, K)), np.empty(K)
    ll = _estep(
        lt,
        lw,
        rows.ptr,
        rows.cols,
        rows.c0,
        rows.inv,
        rows.weights,
        np.empty((C, K)),
        np.empty((C, K)),
        np.empty(C),
        np.empty((C, K)),
        counts,
        nk,
    )
    return float(ll), counts, nk


def em_runs(
    codes: np.ndarray,
    weights: np.ndarray,
    cards,
    theta: np.ndarray,
    w: np.ndarray,
    *,
    tol: float = 1e-8,
    max_iter: int = 1000,
    trace: bool = False,
    accelerate: bool = True,
    rows: PreparedRows | None = None,
    starts: np.ndarray | None = None,
) -> dict:
    """EM from every start (module docstring), ``theta`` (S, D, K) and ``w`` (S, K) the starting parameters.

    Returns ``theta`` (S, D, K), ``w`` (S, K), ``loglik`` (S,) at the returned parameters, ``iterations`` (S,)
    (E-steps), ``converged`` (S,) and, with ``trace``, ``trace`` (S, T): the accepted points' log-likelihoods
    (NaN-padded) -- they never decrease.  ``starts``: run only these starts (the others keep their parameters,
    log-likelihood NaN).

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
    weights : ndarray, shape (N,)
    cards : sequence of int
    theta : ndarray, shape (S, D, K)
    w : ndarray, shape (S, K)
    tol : float
    max_iter : int
    trace : bool
    accelerate : bool
    rows : PreparedRows, optional
    starts : ndarray of int, optional

    Returns
    -------
    dict
    """
    rows = prepare_rows(codes, weights, cards) if rows is None else rows
    S, D, K = theta.shape
    with np.errstate(divide="ignore"):
        lt_all = np.maximum(np.log(theta), LOG_FLOOR)
        lw_all = np.maximum(np.log(w), LOG_FLOOR)
    loglik = np.full(S, np.nan)
    iters = np.zeros(S, np.int64)
    conv = np.zeros(S, bool)
    tr = np.full((S, max_iter + 4), np.nan) if trace else None
    for s in range(S) if starts is None else starts:
        lt, lw = np.ascontiguousarray(lt_all[s]), np.ascontiguousarray(lw_all[s])
        buf = tr[s] if trace else np.empty(0)
        ll, n_e, ok, _ = run_start(
            lt,
            lw,
            rows.ptr,
            rows.cols,
            rows.c0,
            rows.inv,
            rows.weights,
            rows.off,
            float(tol),
            int(max_iter),
            bool(accelerate),
            buf,
            LOG_FLOOR,
        )
        lt_all[s], lw_all[s] = lt, lw
        loglik[s], iters[s], conv[s] = ll, n_e, ok
    out = {
        "theta": np.where(lt_all <= LOG_FLOOR, 0.0, np.exp(lt_all)),
        "w": np.where(lw_all <= LOG_FLOOR, 0.0, np.exp(lw_all)),
        "loglik": loglik,
        "iterations": iters,
        "converged": conv,
    }
    if trace:
        last = int(np.max(np.sum(np.isfinite(tr), axis=1), initial=1))
        out["trace"] = tr[:, :last]
    return out
