"""The compiled Gram pass of the categorical similarity measures (:mod:`bnfk_core.kernels.similarity`).

No loop over pairs in Python.  Each measure is reduced to per-attribute r_k x r_k tables (a numerator
table and, for ratios, a denominator table); small attributes are merged into groups of at most
``GROUP_STATES`` joint states (the merged table of a group is the sum of its members' tables), and
one compiled pass computes, per output element, a few table look-ups (one per group) and the final
ratio / renormalisation / exp in the same sweep -- i.e. sum_k A_k S_k A_k^T evaluated by gathering
instead of a one-hot matrix product, with no N x M temporaries.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "MODE_SUM",
    "MODE_RATIO",
    "MODE_LIN",
    "MODE_EXP",
    "GROUP_STATES",
    "GramPlan",
    "finalize",
    "group_attributes",
    "run_plan",
]

# finalisation modes of the compiled pass
MODE_SUM, MODE_RATIO, MODE_LIN, MODE_EXP = 0, 1, 2, 3
GROUP_STATES = 256  # most joint states of a group of merged attributes


class GramPlan:
    """Per-attribute numerator (and denominator) tables, with a missing slot where needed."""

    def __init__(self, num, den, mode):
        self.num, self.den, self.mode = num, den, mode


def finalize(mode, num, den, cx, cy) -> np.ndarray:
    """The numpy twin of the compiled pass's last step, for row pairs.

    Parameters
    ----------
    mode : int
        ``MODE_SUM``, ``MODE_EXP``, ``MODE_RATIO`` or the lin form.
    num, den : ndarray
        Numerator and denominator sums per pair (``den`` None for sums).
    cx, cy : ndarray of int
        The pairs' code rows.

    Returns
    -------
    ndarray
    """
    if mode == MODE_SUM:
        return num
    if mode == MODE_EXP:
        return np.exp(num)
    if mode == MODE_RATIO:
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    out = np.divide(num, den, out=np.zeros_like(num), where=den < 0)
    shared = ((cx >= 0) & (cy >= 0)).any(axis=1)
    return np.where((den == 0) & (num == 0) & shared, 1.0, out)


def group_attributes(sizes) -> list:
    """Attributes merged first-fit-decreasing into groups of at most ``GROUP_STATES`` joint states.

    Parameters
    ----------
    sizes : sequence of int
        States (plus missing slot) per attribute.

    Returns
    -------
    list of list of int
    """
    order = sorted(range(len(sizes)), key=lambda k: -int(sizes[k]))
    groups, prods = [], []
    for k in order:
        s = int(sizes[k])
        for g in range(len(groups)):
            if prods[g] * s <= GROUP_STATES:
                groups[g].append(k)
                prods[g] *= s
                break
        else:
            groups.append([k])
            prods.append(s)
    return groups


def _merge(tables, members, sizes):
    """T[(a_1..a_m), (b_1..b_m)] = sum_i T_i[a_i, b_i] (mixed radix, first member most significant)."""
    T = tables[members[0]]
    for k in members[1:]:
        t = tables[k]
        s, r = T.shape[0], t.shape[0]
        T = (T[:, None, :, None] + t[None, :, None, :]).reshape(s * r, s * r)
    return T


def run_plan(plan, groups, cx, cy, sizes, slots) -> np.ndarray:
    """The (N, M) similarity matrix by the compiled pass over grouped attribute tables.

    Parameters
    ----------
    plan : the measure's table plan (``num``, ``den``, ``mode``)
    groups : list of list of int
        From :func:`group_attributes`.
    cx, cy : ndarray of int, shapes (N, d), (M, d)
    sizes, slots : ndarray
        States per attribute and whether it has a missing slot.

    Returns
    -------
    ndarray, shape (N, M)
    """
    N, M = cx.shape[0], cy.shape[0]
    G = len(groups)
    full = sizes + slots
    gx = np.zeros((N, G), dtype=np.int64)
    gy = np.zeros((G, M), dtype=np.int64)
    offs = np.zeros(G, dtype=np.int64)
    gsz = np.zeros(G, dtype=np.int64)
    flats = []
    off = 0
    has_den = plan.den is not None
    for g, members in enumerate(groups):
        for k in members:
            ax = np.where(cx[:, k] < 0, sizes[k], cx[:, k])
            ay = np.where(cy[:, k] < 0, sizes[k], cy[:, k])
            gx[:, g] = gx[:, g] * full[k] + ax
            gy[g] = gy[g] * full[k] + ay
        T = _merge(plan.num, members, full)
        if has_den:
            D = _merge(plan.den, members, full)
            flats.append(np.stack([T.ravel(), D.ravel()], axis=1).ravel())
        else:
            flats.append(T.ravel())
        offs[g] = off
        gsz[g] = T.shape[0]
        off += T.size
    tab = np.concatenate(flats) if flats else np.zeros(1)
    K = np.empty((N, M))
    _gram_pass(gx, gy, tab, offs, gsz, has_den, plan.mode, cx.astype(np.int32), cy.astype(np.int32), K)
    return K


@numba.njit(parallel=True, cache=True)
def _gram_pass(gx, gy, tab, offs, gsz, has_den, mode, cx, cy, K):  # pragma: no cover - compiled
    """K[i, j] = finalize(sum_g T_g[gx[i, g], gy[g, j]], sum_g D_g[...]); tables interleaved if has_den."""
    N = gx.shape[0]
    G = gx.shape[1]
    M = gy.shape[1]
    d = cx.shape[1]
    for i in numba.prange(N):
        row = K[i]
        for j in range(M):
            row[j] = 0.0
        den = np.zeros(M if has_den else 1)
        for g in range(G):
            yg = gy[g]
            if has_den:
                base = 2 * (offs[g] + gx[i, g] * gsz[g])
                for j in range(M):
                    c = base + 2 * yg[j]
                    row[j] += tab[c]
                    den[j] += tab[c + 1]
            else:
                base = offs[g] + gx[i, g] * gsz[g]
                for j in range(M):
                    row[j] += tab[base + yg[j]]
        if mode == 1:
            for j in range(M):
                row[j] = row[j] / den[j] if den[j] > 0 else 0.0
        elif mode == 2:
            for j in range(M):
                if den[j] < 0:
                    row[j] = row[j] / den[j]
                else:
                    ok = False
                    if row[j] == 0.0:
                        for k in range(d):
                            if cx[i, k] >= 0 and cy[j, k] >= 0:
                                ok = True
                                break
                    row[j] = 1.0 if ok else 0.0
        elif mode == 3:
            for j in range(M):
                row[j] = math.exp(row[j])
