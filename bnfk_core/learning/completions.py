"""The compiled kernels of the E-step: a model's families as flat arrays, and one pass over a job's rows that
completes its missing cells.

A *job* is a set of rows that share the same missing cells (a group that shares no family with the row's other
missing cells, :mod:`bnfk_core.learning.estep`).  For every row, every completion of those cells is scored by
the product of the families touching them (their log CPT entries added), and its posterior weight is added to
those families' expected counts -- the exact E-step of EM (Dempster, Laird & Rubin 1977; for Bayesian networks
Lauritzen 1995), without a table of completions.  :func:`complete_cells` decodes each completion's digits;
:func:`complete_offsets` reads each completion's position in every touching CPT from a table made once per
group of cells (:func:`completion_offsets`); both add in the same order, so they give the same floats.
"""

from __future__ import annotations

import numba
import numpy as np

from ..network.model import BayesNet

__all__ = ["Families", "complete_cells", "complete_offsets", "completion_offsets", "observed_loglik"]


class Families:
    """The families of a model as the compiled E-step reads them: every family's members (parents in the CPT's
    order, the child last) with their strides into its flat CPT, and the offset of that CPT in the
    concatenation of all (the log-CPTs and the counts share it)."""

    def __init__(self, model: BayesNet):
        cards = [int(c) for c in model.cardinalities]
        n = model.n_vars
        width = 1 + max((len(model.parents[i]) for i in range(n)), default=0)
        self.members = np.zeros((n, width), dtype=np.int64)
        self.strides = np.zeros((n, width), dtype=np.int64)
        self.length = np.zeros(n, dtype=np.int64)
        self.offset = np.zeros(n + 1, dtype=np.int64)
        for i in range(n):
            fam = list(model.parents[i]) + [i]
            stride = 1
            for q in range(len(fam) - 1, -1, -1):
                self.members[i, q], self.strides[i, q] = fam[q], stride
                stride *= cards[fam[q]]
            self.length[i] = len(fam)
            self.offset[i + 1] = self.offset[i] + stride
        self.sizes = [c.size for c in model.cpts]
        self.shapes = [c.shape for c in model.cpts]

    def logs(self, model: BayesNet) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(np.concatenate([c.ravel() for c in model.cpts]).astype(np.float64))

    def split(self, flat: np.ndarray) -> list:
        return [
            flat[self.offset[i] : self.offset[i + 1]].reshape(self.shapes[i]) for i in range(len(self.sizes))
        ]


@numba.njit(cache=True, nogil=True)
def _observed_part(codes, g, touch, mpos, members, strides, length, offset, base):  # pragma: no cover
    """``base[t]``: the observed members' part of touching family ``touch[t]``'s flat index in row ``g``."""
    for t in range(touch.shape[0]):
        f = touch[t]
        idx = offset[f]
        for q in range(length[f]):
            if mpos[t, q] < 0:
                idx += codes[g, members[f, q]] * strides[f, q]
        base[t] = idx


@numba.njit(cache=True, nogil=True)
def _exp_shifted(lp, top):  # pragma: no cover
    """``lp[k] <- exp(lp[k] - top)`` in place; their sum (in order k)."""
    tot = 0.0
    for k in range(lp.shape[0]):
        lp[k] = np.exp(lp[k] - top)
        tot += lp[k]
    return tot


@numba.njit(cache=True, nogil=True)
def complete_cells(
    codes, w, missing, mcards, touch, mpos, members, strides, length, offset, logt, out, lse
):  # pragma: no cover
    """For every row of ``codes`` (one missingness pattern; ``missing`` the cells completed here, ``touch``
    the families touching them, ``mpos[t, q]`` the position in ``missing`` of member q of family ``touch[t]``
    or -1):
    log sum over the completions of the product of the touching families' CPT entries (``lse``), and, when
    ``out`` is not empty, every completion's share w * P(completion | x_obs) added to the touching families'
    counts. False when a row has probability zero."""
    G = codes.shape[0]
    M = missing.shape[0]
    T = touch.shape[0]
    K = 1
    for j in range(M):
        K *= mcards[j]
    lp = np.empty(K)
    base = np.empty(T, dtype=np.int64)
    digit = np.empty(M, dtype=np.int64)
    count = out.shape[0] > 0
    for g in range(G):
        _observed_part(codes, g, touch, mpos, members, strides, length, offset, base)
        top = -np.inf
        for k in range(K):
            r = k
            for j in range(M - 1, -1, -1):
                digit[j] = r % mcards[j]
                r //= mcards[j]
            s = 0.0
            for t in range(T):
                f = touch[t]
                idx = base[t]
                for q in range(length[f]):
                    if mpos[t, q] >= 0:
                        idx += digit[mpos[t, q]] * strides[f, q]
                s += logt[idx]
            lp[k] = s
            if s > top:
                top = s
        if top == -np.inf:
            return False
        tot = _exp_shifted(lp, top)
        lse[g] = top + np.log(tot)
        if count:
            for k in range(K):
                r = k
                for j in range(M - 1, -1, -1):
                    digit[j] = r % mcards[j]
                    r //= mcards[j]
                m = w[g] * lp[k] / tot
                for t in range(T):
                    f = touch[t]
                    idx = base[t]
                    for q in range(length[f]):
                        if mpos[t, q] >= 0:
                            idx += digit[mpos[t, q]] * strides[f, q]
                    out[idx] += m
    return True


@numba.njit(cache=True, nogil=True)
def complete_offsets(
    codes, w, touch, mpos, delta, members, strides, length, offset, logt, out, lse
):  # pragma: no cover
    """:func:`complete_cells` with every completion's part of the touching families' indices made in advance:
    ``delta[t, k]`` is the missing members' part of family ``touch[t]``'s index in completion k
    (:func:`completion_offsets`),
    so a completion costs one gather a family.  The same sums in the same order as :func:`complete_cells` (a
    completion's log-product adds the families in the order of ``touch``; a family's counts get the
    completions in order k, row after row): the same floats."""
    G = codes.shape[0]
    T = touch.shape[0]
    K = delta.shape[1]
    lp = np.empty(K)
    base = np.empty(T, dtype=np.int64)
    count = out.shape[0] > 0
    for g in range(G):
        _observed_part(codes, g, touch, mpos, members, strides, length, offset, base)
        for k in range(K):
            lp[k] = 0.0
        for t in range(T):
            b = base[t]
            for k in range(K):
                lp[k] += logt[b + delta[t, k]]
        top = -np.inf
        for k in range(K):
            if lp[k] > top:
                top = lp[k]
        if top == -np.inf:
            return False
        tot = _exp_shifted(lp, top)
        lse[g] = top + np.log(tot)
        if count:
            for k in range(K):
                lp[k] = w[g] * lp[k] / tot
            for t in range(T):
                b = base[t]
                for k in range(K):
                    out[b + delta[t, k]] += lp[k]
    return True


def completion_offsets(fams: Families, ccards: np.ndarray, touch: np.ndarray, mpos: np.ndarray) -> np.ndarray:
    """``delta[t, k]``: the missing members' part of the flat index of family ``touch[t]`` in completion k of
    the job's cells (the completions in C order over the cells, as :func:`complete_cells` enumerates them)."""
    K = int(np.prod(ccards)) if len(ccards) else 1
    digits = (
        np.stack(np.unravel_index(np.arange(K), [int(c) for c in ccards]), axis=0)
        if len(ccards)
        else np.zeros((0, 1), dtype=np.int64)
    )
    delta = np.zeros((len(touch), K), dtype=np.int32 if int(fams.offset[-1]) < 2**31 else np.int64)
    for t, f in enumerate(touch):
        for q in range(int(fams.length[f])):
            if mpos[t, q] >= 0:
                delta[t] += digits[mpos[t, q]] * fams.strides[f, q]
    return delta


@numba.njit(cache=True, nogil=True)
def observed_loglik(codes, w, members, strides, length, offset, logt):  # pragma: no cover
    """sum_n w_n sum over the families row n observes whole of their log CPT entries (rows of weight 0
    skipped)."""
    G, n = codes.shape
    total = 0.0
    for g in range(G):
        if w[g] == 0:
            continue
        s = 0.0
        for t in range(n):
            idx = 0
            for q in range(length[t]):
                c = codes[g, members[t, q]]
                if c < 0:
                    idx = -1
                    break
                idx += c * strides[t, q]
            if idx >= 0:
                s += logt[offset[t] + idx]
        total += w[g] * s
    return total
