"""Maximum likelihood of a CLG network with a given DAG from a table with missing cells, by EM.

E-step (:func:`completion_table`): every row's completions d of its missing discrete cells are enumerated
(all rows alike in their missing discrete cells at once, as arrays); given all discrete states the numeric
nodes are jointly Gaussian (:func:`bnfk_core.hybrid.moments.numeric_joint`), so the missing numbers given the
observed ones are Gaussian (mean m = mu_M + S_MO S_OO^-1 (x_O - mu_O), covariance S_MM - S_MO S_OO^-1 S_OM)
and the completion's weight is P(d) N(x_O; mu_O, S_OO), normalised per row.  The Gaussian conditioning is
done once per (missing numeric cells, states of the discrete parents of the numeric nodes) for all the
completions that share them, with no loop over rows.  The expected statistics are then the expected counts
of the discrete families and, per Gaussian family and discrete configuration, the expected cross-products
E[z z^T] = z_hat z_hat^T + Cov(z) (:func:`family_sums`).  M-step: :func:`bnfk_core.hybrid.stats.regress`
and normalised counts.  Each iteration raises the observed-data log-likelihood (Dempster, Laird & Rubin
1977); EM stops when an iteration raises it by less than :data:`EM_TOL` times its size.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import DataError, ModelError
from ..network.dag import DAG
from .fitting import fit_hybrid
from .model import HybridNet, LinearGaussian
from .stats import VARIANCE_FLOOR, regress, variance_floor
from .table import DISCRETE, MixedData

__all__ = [
    "em_hybrid",
    "expected_completions",
    "completion_table",
    "family_sums",
    "Completions",
    "row_groups",
    "check_em_options",
    "MAX_COMPLETIONS",
    "EM_TOL",
    "EM_MAX_ITER",
    "EM_COMPLETIONS",
]

#: most completions of one row's missing discrete cells the E-step enumerates
MAX_COMPLETIONS = 4096
#: EM stops when an iteration raises the observed-data log-likelihood by less than this fraction of its
#: size (relative change; the log-likelihood never falls).  At 1e-6 the imputed cells of the real mixed
#: tables agree with those of a 1e-9 run to the figures docs/HYBRID.md gives
EM_TOL = 1e-6
#: the most EM iterations of one fit
EM_MAX_ITER = 200
#: the most completions of one row that EM and structural EM keep (the most probable under the discrete
#: CPTs, :func:`completion_table`'s beam); rows with fewer are enumerated in full
EM_COMPLETIONS = 64

_LOG_2PI = math.log(2.0 * math.pi)


def check_em_options(tol: float, max_iter: int) -> None:
    """A DataError in one sentence when ``tol`` is not a finite number >= 0 or ``max_iter`` not an integer
    >= 1."""
    try:
        ok = math.isfinite(float(tol)) and float(tol) >= 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DataError(f"The EM tolerance must be a finite number of at least 0, not {tol!r}.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise DataError(f"The most EM iterations must be a whole number of at least 1, not {max_iter!r}.")


def row_groups(data: MixedData):
    """(row indices, missing mask, observed discrete codes) of each group of rows alike in both."""
    miss = data.missing_mask()
    key = np.concatenate([miss.astype(np.int64), data.codes[:, list(data.discrete)].astype(np.int64)], axis=1)
    keys, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(keys) + 1))
    for g in range(len(keys)):
        rows = order[bounds[g] : bounds[g + 1]]
        yield rows, miss[rows[0]], data.codes[rows[0]]


@dataclass
class Completions:
    """The E-step's completions as flat arrays, one entry (an *item*) per (row, completion of its missing
    discrete cells).

    Attributes
    ----------
    rows : ndarray (P,)
        The item's row of the table.
    codes : ndarray (P, n)
        Every discrete state of the completion (numeric columns -1).
    xhat : ndarray (P, m)
        The numeric nodes (``model.numeric`` order): observed, or their conditional mean.
    cov_index : ndarray (P,)
        Into ``covs``: the conditional covariance of the item's numbers.
    covs : ndarray (G, m, m)
        Zero on observed nodes.
    weights : ndarray (P,)
        P(completion | the row's observed cells); they sum to 1 per row.
    loglik : float
        The observed-data log-likelihood of the table (over the completions kept).
    beamed : int
        Rows whose completions were cut to the most probable ones (see :func:`completion_table`).
    """

    rows: np.ndarray
    codes: np.ndarray
    xhat: np.ndarray
    cov_index: np.ndarray
    covs: np.ndarray
    weights: np.ndarray
    loglik: float
    beamed: int = 0


def _configs(codes: np.ndarray, dps, cards_all) -> np.ndarray:
    """The C-order configuration of the discrete parents ``dps`` in every row of ``codes``."""
    if not len(dps):
        return np.zeros(codes.shape[0], dtype=np.int64)
    dps = list(dps)
    cfg = codes[:, dps[0]].astype(np.int64)
    for p in dps[1:]:
        cfg = cfg * int(cards_all[p]) + codes[:, p]
    return cfg


def _joint(model: HybridNet, num, npos, cfg) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the numeric nodes given the configuration ``cfg[k]`` of each one's discrete
    parents (what :func:`~bnfk_core.hybrid.moments.numeric_joint` computes from the states)."""
    m = len(num)
    W, c, var = np.zeros((m, m)), np.zeros(m), np.zeros(m)
    for k, v in enumerate(num):
        g = model.gaussians[v]
        c[k], var[k] = g.coef[cfg[k], 0], g.variance[cfg[k]]
        for j, p in enumerate(model.numeric_parents(v)):
            W[k, npos[p]] = g.coef[cfg[k], 1 + j]
    A = np.linalg.inv(np.eye(m) - W)
    return A @ c, (A * var[None, :]) @ A.T


def _beam(model: HybridNet, logcpts: dict, base: np.ndarray, rows: np.ndarray, width: int):
    """The ``width`` most probable completions of each of ``rows``' missing discrete cells under the
    discrete CPTs: the cells filled one column at a time in node order, after each step every row keeping
    the ``width`` partial completions with the largest product of the CPT entries of its families already
    complete (a beam search, all rows at once; deterministic, ties by enumeration order).

    Returns
    -------
    row_of : ndarray (Q,)
    codes : ndarray (Q, n)
    """
    cards = model.cardinalities
    disc = list(model.discrete)
    children = {v: [i for i in disc if v in model.discrete_parents(i)] for v in disc}
    cand, rid = base[rows].copy(), np.asarray(rows)
    score = np.zeros(len(rid))
    for v in disc:
        grow = cand[:, v] < 0
        if not grow.any():
            continue
        r = int(cards[v])
        stay = ~grow
        new = np.repeat(cand[grow], r, axis=0)
        new[:, v] = np.tile(np.arange(r, dtype=np.int32), int(grow.sum()))
        nscore = np.repeat(score[grow], r)
        for i in [v, *children[v]]:  # the families this cell completes
            fam = [i, *model.discrete_parents(i)]
            done = (new[:, fam] >= 0).all(axis=1)
            if done.any():
                cfg = _configs(np.maximum(new[done], 0), model.discrete_parents(i), cards)
                nscore[done] += logcpts[i][cfg, new[done, i]]
        cand = np.concatenate([cand[stay], new])
        rid = np.concatenate([rid[stay], np.repeat(rid[grow], r)])
        score = np.concatenate([score[stay], nscore])
        if np.bincount(rid).max() <= width:
            continue
        order = np.lexsort((-score, rid))
        cand, rid, score = cand[order], rid[order], score[order]
        first = np.searchsorted(rid, rid, side="left")
        keep = np.arange(len(rid)) - first < width
        cand, rid, score = cand[keep], rid[keep], score[keep]
    return rid, cand


def completion_table(model: HybridNet, data: MixedData, width: int | None = None) -> Completions:
    """Every completion of ``data``'s missing discrete cells under ``model``, its weight and its
    conditional Gaussian (module docstring), as flat arrays.

    Parameters
    ----------
    model : HybridNet
    data : MixedData
        Aligned to ``model``.
    width : int, optional
        The most completions of a row: a row with more keeps the ``width`` most probable under the
        discrete CPTs (a beam over its missing cells in node order, :func:`_beam`), its weights then
        normalised over those (``beamed`` counts such rows).  None: every completion, at most
        :data:`MAX_COMPLETIONS` (else a ModelError).

    Returns
    -------
    Completions

    Raises
    ------
    ModelError
        A row with more than :data:`MAX_COMPLETIONS` completions (``width`` None).
    """
    disc, num = list(model.discrete), list(model.numeric)
    npos = {v: k for k, v in enumerate(num)}
    cards = model.cardinalities
    n, m = model.n_vars, len(num)
    miss = data.missing_mask()
    base = np.where(miss, -1, data.codes).astype(np.int32)
    # rows alike in their missing discrete cells: their completions enumerated at once
    logcpts = {i: np.log(np.maximum(model.cpts[i], 1e-300)) for i in disc}
    beamed = 0
    dmiss = miss[:, disc]
    pats, inv = np.unique(dmiss, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    row_parts, code_parts, wide = [], [], []
    porder = np.argsort(inv, kind="stable")
    pbounds = np.searchsorted(inv[porder], np.arange(len(pats) + 1))
    products: dict = {}
    for g, pat in enumerate(pats):
        rows = porder[pbounds[g] : pbounds[g + 1]]
        mis_d = [disc[k] for k in np.flatnonzero(pat)]
        r = [int(cards[i]) for i in mis_d]
        K = int(np.prod(r)) if r else 1
        if K > MAX_COMPLETIONS and width is None:
            raise ModelError(
                f"Row {int(rows[0]) + 1} leaves {K:,} completions of its missing discrete cells (more than "
                f"{MAX_COMPLETIONS:,})."
            )
        if width is not None and K > width:
            wide.append(rows)
            continue
        c = np.repeat(base[rows], K, axis=0)
        if r:
            comps = products.get(tuple(r))
            if comps is None:
                comps = products[tuple(r)] = np.array(
                    list(itertools.product(*[range(x) for x in r])), dtype=np.int32
                )
            c[:, mis_d] = np.tile(comps, (len(rows), 1))
        row_parts.append(np.repeat(rows, K))
        code_parts.append(c)
    if wide:  # the most probable completions only (a beam)
        wide = np.concatenate(wide)
        beamed = len(wide)
        rid, c = _beam(model, logcpts, base, wide, int(width))
        row_parts.append(rid)
        code_parts.append(c)
    item_rows = np.concatenate(row_parts) if row_parts else np.zeros(0, dtype=np.int64)
    codes = np.concatenate(code_parts) if code_parts else np.zeros((0, n), dtype=np.int32)
    order = np.argsort(item_rows, kind="stable")
    item_rows, codes = item_rows[order], codes[order]
    P = len(item_rows)
    logw = np.zeros(P)
    for i in disc:
        cpt = logcpts[i]
        logw += cpt[_configs(codes, model.discrete_parents(i), cards), codes[:, i]]
    xhat = np.zeros((P, m))
    covs = []
    cov_index = np.zeros(P, dtype=np.int64)
    if m:
        ncfg = np.stack([_configs(codes, model.discrete_parents(v), cards) for v in num], axis=1)
        npat = miss[:, num]
        pid_rows = np.unique(npat, axis=0, return_inverse=True)[1].reshape(-1)
        qs = [model.n_configs(v) for v in num]
        full = np.concatenate([pid_rows[item_rows, None], ncfg], axis=1)
        if math.log2(pid_rows.max() + 1) + sum(math.log2(q) for q in qs) < 62:
            key = full[:, 0].astype(np.int64)
            for k in range(m):  # mixed radix: (numeric missing pattern, each numeric node's configuration)
                key = key * qs[k] + ncfg[:, k]
            ukeys, kinv = np.unique(key, return_inverse=True)
        else:
            ukeys, kinv = np.unique(full, axis=0, return_inverse=True)
        kinv = kinv.reshape(-1)
        first = np.zeros(len(ukeys), dtype=np.int64)
        first[kinv[::-1]] = np.arange(len(kinv))[::-1]
        keys = full[first]
        korder = np.argsort(kinv, kind="stable")
        bounds = np.searchsorted(kinv[korder], np.arange(len(keys) + 1))
        vals = data.values[:, num]
        joints: dict = {}
        sides: dict = {}  # numeric missing pattern -> (observed, missing) positions
        for g in range(len(keys)):
            idx = korder[bounds[g] : bounds[g + 1]]
            cfg = tuple(keys[g, 1:].tolist())
            if cfg not in joints:
                joints[cfg] = _joint(model, num, npos, cfg)
            mu, cov = joints[cfg]
            pid = int(keys[g, 0])
            if pid not in sides:
                mrow = npat[item_rows[idx[0]]]
                sides[pid] = (np.flatnonzero(~mrow), np.flatnonzero(mrow))
            O, M = sides[pid]
            C = np.zeros((m, m))
            xh = np.empty((len(idx), m))
            if len(O):
                xO = vals[item_rows[idx]][:, O]
                covO = cov[O]
                L = np.linalg.cholesky(covO[:, O])
                Linv = np.linalg.inv(L)
                res = xO - mu[O][None, :]
                sol = res @ Linv.T
                logw[idx] += -0.5 * (len(O) * _LOG_2PI + (sol * sol).sum(axis=1)) - np.log(L.diagonal()).sum()
                xh[:, O] = xO
            if len(M):
                covM = cov[M]
                if len(O):
                    Kg = (covM[:, O] @ Linv.T) @ Linv  # S_MO S_OO^-1
                    C[np.ix_(M, M)] = covM[:, M] - Kg @ covO[:, M]
                    xh[:, M] = mu[M][None, :] + res @ Kg.T
                else:
                    C[np.ix_(M, M)] = covM[:, M]
                    xh[:, M] = mu[M][None, :]
            xhat[idx] = xh
            covs.append(C)
            cov_index[idx] = g
    covs = np.stack(covs) if covs else np.zeros((1, m, m))
    # normalise per row (items are sorted by row)
    starts = np.flatnonzero(np.r_[True, item_rows[1:] != item_rows[:-1]]) if P else np.zeros(0, int)
    top = np.maximum.reduceat(logw, starts) if P else np.zeros(0)
    cnt = np.diff(np.r_[starts, P])
    e = np.exp(logw - np.repeat(top, cnt))
    norm = top + np.log(np.add.reduceat(e, starts)) if P else np.zeros(0)
    w = np.exp(logw - np.repeat(norm, cnt))
    return Completions(item_rows, codes, xhat, cov_index, covs, w, float(norm.sum()), beamed)


def family_sums(comp: Completions, kinds, cards, npos, child: int, parents) -> np.ndarray:
    """The expected sufficient statistics of one family from the completions: for a discrete child the
    expected counts (q, r); for a numeric child the expected cross-products S_j = E[sum z z^T] of
    z = [1, numeric parents, child], (q, p + 2, p + 2), per configuration j of the discrete parents.

    Parameters
    ----------
    comp : Completions
    kinds, cards
        Of the table's columns.
    npos : dict
        Column -> its position among the numeric columns.
    child : int
    parents : sequence of int

    Returns
    -------
    ndarray
    """
    dps = [p for p in parents if kinds[p] == DISCRETE]
    cps = [p for p in parents if kinds[p] != DISCRETE]
    q = int(np.prod([int(cards[p]) for p in dps])) if dps else 1
    cfg = _configs(comp.codes, dps, cards)
    w = comp.weights
    if kinds[child] == DISCRETE:
        r = int(cards[child])
        return np.bincount(cfg * r + comp.codes[:, child], weights=w, minlength=q * r).reshape(q, r)
    cols = [npos[p] for p in cps] + [npos[child]]
    k = len(cols) + 1
    z = np.column_stack([np.ones(len(w)), comp.xhat[:, cols]])
    S = np.empty((q, k, k))
    for a in range(k):
        za = z[:, a] * w
        for b in range(a, k):
            S[:, a, b] = S[:, b, a] = np.bincount(cfg, weights=za * z[:, b], minlength=q)
    G = comp.covs.shape[0]
    T = np.bincount(cfg * G + comp.cov_index, weights=w, minlength=q * G).reshape(q, G)
    S[:, 1:, 1:] += np.einsum("qg,gab->qab", T, comp.covs[:, cols][:, :, cols])
    return S


def expected_completions(model: HybridNet, data: MixedData, with_rows: bool = False) -> tuple[list, float]:
    """The E-step's completions of ``data`` under ``model``, one per (row, completion of its missing
    discrete cells), and the observed-data log-likelihood (:func:`completion_table` gives the same as
    arrays, what structural EM and imputation read).

    Parameters
    ----------
    model : HybridNet
    data : MixedData
        Aligned to ``model``.
    with_rows : bool
        Also give each completion the indices of its rows (into ``data``).

    Returns
    -------
    completed : list of (codes, xhat, cov, weights), or of (rows, codes, xhat, cov, weights)
        ``codes`` (n_vars,) the discrete states of the completion; ``xhat`` (B, m) the numeric nodes (in
        ``model.numeric`` order) of its B rows, observed or filled with their conditional mean given the
        row's observed numbers and these states; ``cov`` (m, m) their conditional covariance (zero on
        observed nodes); ``weights`` (B,) P(these states | the row's observed cells).
    loglik : float
    """
    comp = completion_table(model, data)
    out = []
    for p in range(len(comp.rows)):
        c = (comp.codes[p], comp.xhat[p : p + 1], comp.covs[comp.cov_index[p]], comp.weights[p : p + 1])
        out.append((comp.rows[p : p + 1], *c) if with_rows else c)
    return out, comp.loglik


def _mstep(model: HybridNet, comp: Completions, dag: DAG, floors: dict) -> HybridNet:
    """The network of ``dag`` maximising the expected complete-data log-likelihood of ``comp``."""
    kinds, cards = model.kinds, model.cardinalities
    npos = {v: k for k, v in enumerate(model.numeric)}
    parents = dag.parent_indices()
    cpts, gs = [None] * model.n_vars, [None] * model.n_vars
    for i in range(model.n_vars):
        S = family_sums(comp, kinds, cards, npos, i, sorted(parents[i]))
        if kinds[i] == DISCRETE:
            tot = S.sum(axis=1, keepdims=True)
            cpts[i] = np.where(tot > 0, S / np.where(tot > 0, tot, 1.0), 1.0 / S.shape[1])
        else:
            coef, var, _, _ = regress(S, floors[i])
            gs[i] = LinearGaussian(coef, var)
    return HybridNet(dag, model.kinds, model.states, tuple(cpts), tuple(gs), dict(model.fit_info))


def em_hybrid(
    dag: DAG,
    data: MixedData,
    max_iter: int = EM_MAX_ITER,
    tol: float = EM_TOL,
    relative_floor: float = VARIANCE_FLOOR,
    init: HybridNet | None = None,
    width: int | None = EM_COMPLETIONS,
) -> HybridNet:
    """The maximum-likelihood CLG network of ``dag`` on a table with missing cells, by EM (module docstring),
    started from the available-case fit of :func:`~bnfk_core.hybrid.fitting.fit_hybrid`, or from ``init``.

    Parameters
    ----------
    dag : DAG
    data : MixedData
    max_iter : int
        The most iterations (:data:`EM_MAX_ITER`).
    tol : float
        Stop when an iteration raises the observed-data log-likelihood by less than ``tol`` times its size
        (:data:`EM_TOL`; 0 runs ``max_iter`` iterations).
    relative_floor : float
        The least variance of a regression, as a fraction of its child column's observed variance.
    init : HybridNet, optional
        A network over the same columns, of any DAG (structural EM passes the previous round's): the first
        E-step runs under it, so EM starts from where that network left the completions (a warm start).
    width : int or None
        The most completions of a row (:data:`EM_COMPLETIONS`; :func:`completion_table`).

    Returns
    -------
    HybridNet
        ``fit_info`` records ``em_iterations``, ``em_converged`` and the final ``observed_loglik``.
    """
    check_em_options(tol, max_iter)
    model = fit_hybrid(dag, data, method="ml", relative_floor=relative_floor)
    data = model.align(data)
    floors = {i: variance_floor(data.values[:, i], relative_floor) for i in model.numeric}
    if init is not None:
        model = _mstep(model, completion_table(init, init.align(data), width), model.dag, floors)
    prev = -math.inf
    converged = False
    it = 0
    for it in range(1, int(max_iter) + 1):
        comp = completion_table(model, data, width)
        ll = comp.loglik
        if it > 1 and ll - prev < tol * abs(ll):
            converged = True
            break
        prev = ll
        model = _mstep(model, comp, model.dag, floors)
    else:
        comp = completion_table(model, data, width)
        ll = comp.loglik
        converged = ll - prev < tol * abs(ll)
    model.fit_info.update(
        method="em", em_iterations=it, em_converged=converged, observed_loglik=ll, em_beamed_rows=comp.beamed
    )
    return model
