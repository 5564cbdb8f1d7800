"""Per-attribute similarity tables S_k(a, b) of the categorical measures (Boriah, Chandola & Kumar, SDM 2008,
Table 2; the Aitchison-Aitken kernel's log-factor table), on an extended domain: the fitted states plus values
not seen at fit time, which get the frequency floor f = 1.  The definitions, the rules for what Table 2 leaves
open and the PSD statements are in :mod:`bnfk_core.kernels.similarity`;
:mod:`bnfk_core.kernels.similarity_gram` sums these tables over the attributes into a Gram matrix.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SUM_UNIFORM", "SUM_CARD", "AttributeStats", "sum_table", "lin1_tables", "measure_tables"]

#: measures that are a 1/d-weighted sum of per-attribute tables
SUM_UNIFORM = ("overlap", "eskin", "iof", "of", "goodall1", "goodall2", "goodall3", "goodall4", "burnaby")
#: measures that are a 1/sum_k n_k-weighted sum of per-attribute tables
SUM_CARD = ("smirnov", "gambaryan")


def _log_or(x: np.ndarray, value: float) -> np.ndarray:
    """log(x) with ``value`` where x == 0."""
    out = np.full(np.shape(x), value, dtype=float)
    np.log(x, out=out, where=x > 0)
    return out


class AttributeStats:
    """Statistics of one fitted attribute on an extended domain (fitted states + foreign values)."""

    def __init__(self, counts: np.ndarray, r_ext: int):
        f = np.zeros(r_ext, dtype=np.int64)
        f[: len(counts)] = counts
        self.seen = f > 0
        self.N = int(f.sum())
        self.n = int(self.seen.sum())
        self.f = np.where(self.seen, f, 1).astype(float)  # frequency floor 1 for unseen values
        self.p = self.f / self.N
        self.p2 = self.f * (self.f - 1) / (self.N * (self.N - 1)) if self.N >= 2 else np.zeros(r_ext)
        self.r = r_ext


def sum_table(name: str, a: AttributeStats) -> np.ndarray:
    """S_k of a 1/d- or 1/sum(n)-weighted measure (Table 2), r x r.

    Parameters
    ----------
    name : str
    a : AttributeStats

    Returns
    -------
    ndarray, shape (r, r)

    References
    ----------
    Boriah, Chandola & Kumar (2008), Table 2.
    """
    r = a.r
    eye = np.eye(r, dtype=bool)
    if name == "overlap":
        return np.eye(r)
    if name == "eskin":
        c = a.n**2 / (a.n**2 + 2.0)
        return np.where(eye, 1.0, c)
    if name == "iof":
        L = np.log(a.f)
        return np.where(eye, 1.0, 1.0 / (1.0 + L[:, None] * L[None, :]))
    if name == "of":
        L = np.log(a.N / a.f)
        return np.where(eye, 1.0, 1.0 / (1.0 + L[:, None] * L[None, :]))
    if name in ("goodall1", "goodall2"):
        ps, p2s = a.p[a.seen], a.p2[a.seen]
        diag = np.empty(r)
        for v in range(r):
            sel = ps <= a.p[v] if name == "goodall1" else ps >= a.p[v]
            extra = 0.0 if a.seen[v] else a.p2[v]  # the compared value itself (0 for f = 1)
            diag[v] = 1.0 - (p2s[sel].sum() + extra)
        return np.diag(diag)
    if name == "goodall3":
        return np.diag(1.0 - a.p2)
    if name == "goodall4":
        return np.diag(a.p2.copy())
    if name == "gambaryan":
        p = a.p
        q = 1.0 - p
        h = -(p * _log_or(p, 0.0) + q * _log_or(q, 0.0)) / math.log(2.0)
        return np.diag(np.maximum(h, 0.0) + 0.0)
    if name == "smirnov":
        g = np.where(a.seen, a.f / np.maximum(a.N - a.f, 1.0), 0.0)
        G = g.sum()
        off = G - g[:, None] - g[None, :]
        diag = 2.0 + (a.N - a.f) / a.f + (G - g)
        T = off.copy()
        T[eye] = diag
        return T
    if name == "burnaby":
        if a.n <= 1:  # constant column: C = -inf, mismatch 0
            return np.eye(r)
        C = 2.0 * np.log1p(-a.p[a.seen]).sum()
        u = np.log(a.p) - np.log1p(-a.p)  # log(p / (1 - p)), every p < 1 here
        return np.where(eye, 1.0, C / (u[:, None] + u[None, :] + C))
    raise AssertionError(name)


def lin1_tables(a: AttributeStats):
    """(numerator S_k, denominator D_k) of lin1, r x r.

    Parameters
    ----------
    a : AttributeStats

    Returns
    -------
    S, D : ndarray, shape (r, r)

    References
    ----------
    Boriah, Chandola & Kumar (2008), Table 2 (lin1).
    """
    ps = np.sort(a.p[a.seen])
    lps = np.log(ps)
    cum = np.concatenate([[0.0], np.cumsum(lps)])
    cump = np.concatenate([[0.0], np.cumsum(ps)])
    lo = np.minimum(a.p[:, None], a.p[None, :])
    hi = np.maximum(a.p[:, None], a.p[None, :])
    i0 = np.searchsorted(ps, lo, side="left")
    i1 = np.searchsorted(ps, hi, side="right")
    D = cum[i1] - cum[i0]  # seen q with lo <= p(q) <= hi
    P = cump[i1] - cump[i0]
    un = ~a.seen  # the compared values when unseen
    lp = np.log(a.p)
    add_log = np.where(un[:, None], lp[:, None], 0.0) + np.where(un[None, :], lp[None, :], 0.0)
    add_p = np.where(un[:, None], a.p[:, None], 0.0) + np.where(un[None, :], a.p[None, :], 0.0)
    eye = np.eye(a.r, dtype=bool)
    add_log[eye] = np.where(un, lp, 0.0)  # a == b is one value
    add_p[eye] = np.where(un, a.p, 0.0)
    D = D + add_log
    P = P + add_p
    S = np.where(eye, D, 2.0 * np.log(P))
    return S, D


def measure_tables(name: str, counts: np.ndarray, r_ext: int, n_states: int, bandwidth: float | None = None):
    """(numerator table S_k, denominator table or None) of measure ``name`` for one attribute with fit counts
    ``counts`` on the extended domain of ``r_ext`` values, unweighted.  ``n_states`` (c_k) and ``bandwidth``
    (lambda_k, already capped) are used by aitchison-aitken only, whose table holds log k_k(a, b).

    Parameters
    ----------
    name : str
        A measure of :data:`bnfk_core.kernels.similarity.MEASURES`.
    counts : numpy.ndarray
        The fit rows' counts of each value.
    r_ext : int
        Values of the extended domain (fitted states plus unseen ones).
    n_states : int
    bandwidth : float, optional

    Returns
    -------
    tuple
        ``(S_k, denominator or None)``, each (r_ext, r_ext).

    References
    ----------
    Boriah, Chandola & Kumar (2008), Table 2; Aitchison & Aitken (1976).
    """
    a = AttributeStats(counts, r_ext)
    if name in SUM_UNIFORM or name in SUM_CARD:
        return sum_table(name, a), None
    eye = np.eye(r_ext, dtype=bool)
    if name == "lin":
        lp = np.log(a.p)
        S = np.where(eye, 2.0 * lp[:, None], 2.0 * np.log(a.p[:, None] + a.p[None, :]))
        return S, lp[:, None] + lp[None, :]
    if name == "lin1":
        return lin1_tables(a)
    if name == "anderberg":
        c = 2.0 / (a.n * (a.n + 1.0))
        u = 1.0 / a.p
        num = np.diag(c * u * u)
        den = np.where(eye, c * u[:, None] * u[:, None], c / (2.0 * a.p[:, None] * a.p[None, :]))
        return num, den
    if name == "aitchison-aitken":
        c = n_states
        lam = float(bandwidth)
        mu = lam / (c - 1) if c > 1 else 0.0
        return np.where(eye, math.log1p(-lam), math.log(mu) if mu > 0 else -np.inf), None
    raise AssertionError(name)
