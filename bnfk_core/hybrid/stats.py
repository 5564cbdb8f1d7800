"""Sufficient statistics of a Gaussian family: per configuration j of the discrete parents, the
cross-product matrix S_j = sum_n z_n z_n^T of z = [1, numeric parents, child] over the rows where the family
is observed -- and the maximum-likelihood regression read from it by one small solve.

With S_j = [[A, b], [b^T, yy]] (A the (p+1)x(p+1) block of [1, parents]): beta = A^+ b (least squares; the
pseudo-inverse gives the minimum-norm solution when A is singular), RSS = yy - 2 beta.b + beta^T A beta,
variance RSS / n_j.  So a search scores a family by a solve of size p + 1 per configuration, never by
refitting the rows.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "family_stats",
    "all_numeric_stats",
    "sub_stats",
    "regress",
    "variance_floor",
    "VARIANCE_FLOOR",
]

#: the variance of a regression is at least this fraction of its child column's variance (1e-12 absolute for
#: a constant column): a child that its parents determine gets a density instead of an infinite one
VARIANCE_FLOOR = 1e-6

_LOG_2PI = math.log(2.0 * math.pi)


def _configs(codes: np.ndarray, cards, dparents) -> np.ndarray:
    if not dparents:
        return np.zeros(codes.shape[0], dtype=np.int64)
    sub = codes[:, list(dparents)].astype(np.int64)
    miss = (sub < 0).any(axis=1)
    idx = np.ravel_multi_index(
        tuple(np.where(miss, 0, sub[:, k]) for k in range(len(dparents))),
        tuple(int(cards[p]) for p in dparents),
    )
    return np.where(miss, -1, idx)


def _cross(z: np.ndarray, j: np.ndarray, q: int) -> np.ndarray:
    """sum_n z_n z_n^T per configuration: (q, k, k) from rows z (N, k) and their configuration j (N,)."""
    k = z.shape[1]
    S = np.empty((q, k, k))
    for a in range(k):
        for b in range(a, k):
            S[:, a, b] = S[:, b, a] = np.bincount(j, weights=z[:, a] * z[:, b], minlength=q)
    return S


def family_stats(codes, values, cards, child: int, dparents, cparents) -> np.ndarray:
    """S_j of one Gaussian family over its available cases (rows where child, discrete and numeric parents are
    all observed).

    Parameters
    ----------
    codes, values : ndarray, shape (N, n)
        As :class:`~bnfk_core.hybrid.table.MixedData` holds them.
    cards : sequence of int
        r_i of every column (only the discrete parents' are read).
    child : int
    dparents, cparents : sequence of int
        Discrete and numeric parents, in node order.

    Returns
    -------
    ndarray, shape (q, p + 2, p + 2)
        ``S[j, 0, 0]`` is n_j, the rows of configuration j.
    """
    q = int(np.prod([int(cards[p]) for p in dparents])) if dparents else 1
    j = _configs(codes, cards, dparents)
    cols = list(cparents) + [child]
    z = np.column_stack([np.ones(codes.shape[0]), values[:, cols]])
    ok = (j >= 0) & ~np.isnan(z).any(axis=1)
    return _cross(z[ok], j[ok], q)


def all_numeric_stats(codes, values, cards, dparents, numeric) -> np.ndarray:
    """S_j of z = [1, every numeric column] per configuration of ``dparents``, over the rows where those and
    every numeric column are observed: any family with these discrete parents is a sub-block
    (:func:`sub_stats`).

    Parameters
    ----------
    codes, values, cards
        As :func:`family_stats`.
    dparents : sequence of int
    numeric : sequence of int
        The numeric columns, in order.

    Returns
    -------
    ndarray, shape (q, m + 1, m + 1)
    """
    return family_stats(codes, values, cards, numeric[-1], dparents, list(numeric[:-1]))


def sub_stats(S: np.ndarray, numeric, child: int, cparents) -> np.ndarray:
    """The block of [1, cparents, child] of an :func:`all_numeric_stats` matrix."""
    pos = {c: 1 + k for k, c in enumerate(numeric)}
    idx = [0] + [pos[c] for c in cparents] + [pos[child]]
    return S[:, idx][:, :, idx]


def regress(S: np.ndarray, floor: float, fallback: tuple[float, float] | None = None):
    """Maximum-likelihood regressions from cross-product matrices.

    Parameters
    ----------
    S : ndarray, shape (q, p + 2, p + 2)
    floor : float
        The least variance (see :data:`VARIANCE_FLOOR`).
    fallback : (mean, variance), optional
        The regression of a configuration without rows: intercept ``mean``, zero weights, ``variance``
        (default: the pooled mean and variance of the child over all configurations).

    Returns
    -------
    coef : ndarray, shape (q, p + 1)
        Intercept, then the weights.
    variance : ndarray, shape (q,)
        RSS_j / n_j, at least ``floor``.  A configuration with no more rows than coefficients (n_j <= p + 1,
        where least squares interpolates its rows and RSS_j is 0 whatever the data) takes the regression
        pooled over all configurations, its coefficients and its variance RSS / N.
    loglik : ndarray, shape (q,)
        sum over the rows of configuration j of log N(y; x beta_j, variance_j); 0 without rows.
    n : ndarray, shape (q,)
    """
    q, k, _ = S.shape
    p1 = k - 1
    A, b, yy = S[:, :p1, :p1], S[:, :p1, p1], S[:, p1, p1]
    n = S[:, 0, 0]
    beta = np.einsum("qij,qj->qi", np.linalg.pinv(A, rcond=1e-12, hermitian=True), b)
    tot = S.sum(axis=0)
    N = tot[0, 0]
    # a configuration with no more rows than coefficients fits them exactly whatever the data (RSS 0, weights
    # through its few points): it takes the regression pooled over all configurations instead
    few = (n > 0) & (n <= p1 + 1e-9)
    if few.any() and N > p1:
        beta[few] = np.linalg.pinv(tot[:p1, :p1], rcond=1e-12, hermitian=True) @ tot[:p1, p1]
    rss = yy - 2.0 * np.einsum("qi,qi->q", beta, b) + np.einsum("qi,qij,qj->q", beta, A, beta)
    rss = np.maximum(rss, 0.0)
    if fallback is None:
        mean = tot[0, p1] / N if N > 0 else 0.0
        var = tot[p1, p1] / N - mean * mean if N > 0 else 1.0
        fallback = (mean, max(var, floor))
    empty = n <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(empty, fallback[1], np.maximum(rss / np.where(empty, 1.0, n), floor))
    if few.any() and N > p1:
        pooled = tot[p1, p1] - tot[:p1, p1] @ beta[few][0]  # the pooled regression's RSS over all rows
        variance[few] = max(pooled / N, floor)
    beta[empty] = 0.0
    beta[empty, 0] = fallback[0]
    loglik = np.where(empty, 0.0, -0.5 * n * (_LOG_2PI + np.log(variance)) - rss / (2.0 * variance))
    return beta, variance, loglik, n


def variance_floor(column: np.ndarray, relative: float = VARIANCE_FLOOR) -> float:
    """``relative`` times the variance of the observed values of ``column`` (1e-12 when it is constant)."""
    v = column[~np.isnan(column)]
    var = float(v.var()) if v.size else 0.0
    return relative * var if var > 0 else 1e-12
