"""The per-variable term updates behind :class:`bnfk_core.kernels.live.LiveKernel` (Theorem 1's K = Σ_w K_w).

An arc edit (:class:`~bnfk_core.network.edit.ArcEdit`) re-estimates the CPTs of the *rebuilt* variables and
may move P(π_w) of the *rescaled* ones (:func:`changed_terms`; the derivation is in
:mod:`bnfk_core.kernels.live`).  A term or term change is a :class:`TermEntry`; :func:`run_entries` adds many
of them to K in one compiled pass over the pairs that share a parent configuration (the pair kernel of
:mod:`bnfk_core.kernels.fisher`); :func:`missing_part` and :func:`add_missing_part` handle the rows whose
family has a missing cell (expected features).
"""

from __future__ import annotations

import numpy as np

from ..network.dag import DAG
from ..network.edit import ARC_EDITS, ArcEdit
from .features import used_blocks
from .fisher import add_pair_terms, pair_tables

__all__ = [
    "OPS",
    "Edit",
    "changed_terms",
    "safe_inverse",
    "TermEntry",
    "PARALLEL_PAIRS",
    "run_entries",
    "missing_part",
    "add_missing_part",
]

OPS = ARC_EDITS


#: an arc edit of the live kernel: :class:`bnfk_core.network.edit.ArcEdit` (its ``kind`` in :data:`OPS`)
Edit = ArcEdit


def _ancestors_or_self(dag: DAG, idx) -> set:
    return set(dag.ancestors(list(idx))) | set(idx)


def changed_terms(old: DAG, new: DAG) -> tuple[list[int], list[int]]:
    """(rebuilt, rescaled) variable indices for the move from ``old`` to ``new`` (same nodes).

    Rebuilt: the parent set differs (new CPT, new pair-match indicator).  Rescaled: same parents,
    but a rebuilt variable is among the parents or their ancestors in ``old`` or ``new``, so
    P(π_w) may change (module docstring).

    Parameters
    ----------
    old, new : DAG

    Returns
    -------
    rebuilt, rescaled : list of int
    """
    po, pn = old.parent_indices(), new.parent_indices()
    rebuilt = [i for i in range(len(old.nodes)) if po[i] != pn[i]]
    R = set(rebuilt)
    rescaled = []
    for w in range(len(old.nodes)):
        if w in R or not pn[w]:
            continue
        if R & (_ancestors_or_self(old, po[w]) | _ancestors_or_self(new, pn[w])):
            rescaled.append(w)
    return rebuilt, rescaled


def safe_inverse(P: np.ndarray) -> np.ndarray:
    """1/P with 0 where P = 0 (a configuration no row takes).

    Parameters
    ----------
    P : ndarray

    Returns
    -------
    ndarray
    """
    return np.divide(1.0, P, out=np.zeros_like(P, dtype=float), where=P > 0)


class TermEntry:
    """One variable's term (or term change) for the pair kernel: rows' compact parent configuration
    ``pc`` (-1: family incomplete), state ``x``, and per-configuration weights W[c, k], B[c] such that
    pairs in configuration c add W[c, x] · [x_a = x_b] − B[c]."""

    __slots__ = ("B", "W", "const", "n_conf", "pc", "x")

    def __init__(self, p, x, ok, theta, coef):
        """coef[j]: the factor c_j multiplying ([x=y]/θ − 1) for parent configuration j.

        One configuration and every family complete (a root): −c_0 reaches every pair, so it becomes the
        scalar ``const`` and only equal-state pairs are visited (grouped by state), as in kernels.gram."""
        pu, inv = np.unique(p[ok], return_inverse=True)
        self.x = x
        th = theta[pu]
        c = coef[pu]
        with np.errstate(divide="ignore", invalid="ignore"):
            W = np.where(th > 0, c[:, None] / th, 0.0)
        self.const = 0.0
        if len(pu) == 1 and ok.all():
            r = theta.shape[1]
            self.const = -float(c[0])
            self.pc = x.astype(np.int64)
            self.W = np.diag(W[0])
            self.B = np.zeros(r)
            self.n_conf = r
            return
        self.pc = np.full(len(p), -1, np.int64)
        self.pc[ok] = inv.ravel()
        self.W = W
        self.B = c
        self.n_conf = len(pu)


PARALLEL_PAIRS = 2_000_000  # pairs above which the update runs in parallel threads


def run_entries(K: np.ndarray, entries: list) -> None:
    """K[a, b] += Σ_e [pc_e(a) = pc_e(b) ≥ 0] (W_e[c, x_a] [x_a = x_b] − B_e[c]) in place (one compiled
    pass over the pairs that share a configuration, all entries together; the constants of one-configuration
    entries in one pass over K).

    Parameters
    ----------
    K : ndarray, shape (N, N)
    entries : list
        Per-variable term updates (``pc``, ``x``, ``W``, ``B``, ``const``, ``n_conf``).
    """
    const = sum(e.const for e in entries)
    if const:
        K += const
    entries = [e for e in entries if e.n_conf > 0]
    if not entries:
        return
    N = K.shape[0]
    V = len(entries)
    cmax = max(e.n_conf for e in entries)
    rmax = max(e.W.shape[1] for e in entries)
    tables = pair_tables(V, N, N, cmax, rmax)
    pX, xX, xo, order, starts, W, B, r, c = tables
    for v, e in enumerate(entries):
        pX[v] = e.pc
        xX[v] = e.x
        rows = np.flatnonzero(e.pc >= 0)
        o = np.argsort(e.pc[rows], kind="stable")
        order[v, : len(rows)] = rows[o]
        xo[v, : len(rows)] = e.x[rows[o]]
        cnt = np.bincount(e.pc[rows], minlength=e.n_conf)
        starts[v, 1 : e.n_conf + 1] = np.cumsum(cnt)
        starts[v, e.n_conf + 1 :] = starts[v, e.n_conf]
        ri = e.W.shape[1]
        W[v, : e.n_conf * ri] = e.W.ravel()
        B[v, : e.n_conf] = e.B
        r[v], c[v] = ri, e.n_conf
    pairs = sum(float(np.dot(n, n)) for n in (np.diff(starts[v, : c[v] + 1]) for v in range(V)))
    add_pair_terms(K, tables, parallel=pairs >= PARALLEL_PAIRS)


def missing_part(model, pm, i, codes):
    """(rows with family i incomplete, F @ F[ex].T): the part of K_i involving those rows.

    Parameters
    ----------
    model : BayesNet
    pm : parent marginals of ``model``
    i : int
    codes : ndarray of int, shape (N, n_vars)

    Returns
    -------
    ex : ndarray of int
    M : ndarray, shape (N, len(ex)), or None when ``ex`` is empty
    """
    fam = list(model.parents[i]) + [i]
    ex = np.flatnonzero((codes[:, fam] < 0).any(axis=1))
    if not len(ex):
        return ex, None
    (F,), dense = used_blocks(model, pm, i, codes)
    M = F @ F[ex].T
    return ex, (M if dense else M.toarray())


def add_missing_part(K, ex, M, sign):
    """K += sign · (pairs involving a row of ``ex``) given M = F @ F[ex].T (same layout as
    kernels._add_missing for the symmetric case).

    Parameters
    ----------
    K : ndarray, shape (N, N)
    ex : ndarray of int
    M : ndarray or None
    sign : float
        +1 adds, -1 removes.
    """
    if M is None:
        return
    K[:, ex] += sign * M
    K[ex, :] += sign * M.T
    K[np.ix_(ex, ex)] -= sign * M[ex]
