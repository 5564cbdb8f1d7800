"""Maximum likelihood of a CLG network with a given DAG from a table with missing cells, by EM.

E-step: rows are grouped by their missing cells and their observed discrete states; for each group and each
completion d of its missing discrete cells, the numeric nodes given all discrete states are jointly Gaussian
(:func:`bnfk_core.hybrid.moments.numeric_joint`), so the missing numbers given the observed ones are Gaussian
(mean m = mu_M + S_MO S_OO^-1 (x_O - mu_O), covariance S_MM - S_MO S_OO^-1 S_OM) and the completion's weight
is P(d) N(x_O; mu_O, S_OO), normalised per row.  The expected statistics are then the expected counts of the
discrete families and, per Gaussian family and discrete configuration, the expected cross-products
E[z z^T] = z_hat z_hat^T + Cov(z).  M-step: :func:`bnfk_core.hybrid.stats.regress` and normalised counts.
Each iteration raises the observed-data log-likelihood (Dempster, Laird & Rubin 1977); it stops when the gain
is below ``tol`` times its size.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import ModelError
from ..network.dag import DAG
from .fitting import fit_hybrid
from .model import HybridNet, LinearGaussian
from .moments import numeric_joint
from .stats import VARIANCE_FLOOR, regress, variance_floor
from .table import MixedData

__all__ = ["em_hybrid", "expected_completions", "row_groups", "MAX_COMPLETIONS"]

#: most completions of one row's missing discrete cells the E-step enumerates
MAX_COMPLETIONS = 4096

_LOG_2PI = math.log(2.0 * math.pi)


def row_groups(data: MixedData):
    """(row indices, missing mask, observed discrete codes) of each group of rows alike in both: the rows one
    E-step (or one expected score) treats together."""
    miss = data.missing_mask()
    key = np.concatenate([miss.astype(np.int64), data.codes[:, list(data.discrete)].astype(np.int64)], axis=1)
    keys, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(keys) + 1))
    for g in range(len(keys)):
        rows = order[bounds[g] : bounds[g + 1]]
        yield rows, miss[rows[0]], data.codes[rows[0]]


def _estep(model: HybridNet, data: MixedData, stats: bool = True):
    """Expected counts and cross-products under ``model`` (skipped when ``stats`` is False), the
    observed-data log-likelihood, the completions themselves: (all discrete codes, numbers filled by their
    conditional means, the conditional covariance of the numbers, the completion's weight per row) of every
    group of rows, and the indices of each completion's rows."""
    disc, num = list(model.discrete), list(model.numeric)
    npos = {v: k for k, v in enumerate(num)}
    counts = {i: np.zeros_like(model.cpts[i]) for i in disc}
    fam = {}
    for i in num:
        cols = [npos[p] for p in model.numeric_parents(i)] + [npos[i]]
        fam[i] = (cols, np.zeros((model.n_configs(i), len(cols) + 1, len(cols) + 1)))
    # the discrete-parent configuration of every node as a dot product of the codes with C-order strides
    # (what HybridNet.config computes row-wise), taken once per completion
    strides = {}
    for i in range(model.n_vars):
        dps = list(model.discrete_parents(i))
        cards_p = [len(model.states[p]) for p in dps]
        strides[i] = (dps, [int(np.prod(cards_p[k + 1 :])) for k in range(len(dps))])

    def config(i: int, codes) -> int:
        dps, st = strides[i]
        return sum(int(codes[p]) * s for p, s in zip(dps, st))

    joints: dict = {}
    conds: dict = {}
    completed, where = [], []
    total_ll = 0.0
    values = data.values
    for rows, miss, obs_codes in row_groups(data):
        mis_d = [i for i in disc if miss[i]]
        cards = [len(model.states[i]) for i in mis_d]
        if int(np.prod(cards)) > MAX_COMPLETIONS:
            raise ModelError(
                f"Row {int(rows[0]) + 1} leaves {int(np.prod(cards)):,} completions of its missing discrete "
                f"cells (more than {MAX_COMPLETIONS:,})."
            )
        O = [npos[v] for v in num if not miss[v]]
        M = [npos[v] for v in num if miss[v]]
        pattern = tuple(M)
        xO = values[np.ix_(rows, [num[k] for k in O])]
        B = len(rows)
        logw, parts = [], []
        for comp in itertools.product(*[range(c) for c in cards]):
            codes = obs_codes.astype(np.int64).copy()
            codes[mis_d] = comp
            lp = 0.0
            for i in disc:
                lp += math.log(max(model.cpts[i][config(i, codes), codes[i]], 1e-300))
            key = tuple(int(codes[i]) for i in disc)
            if key not in joints:
                joints[key] = numeric_joint(model, {model.variables[i]: int(codes[i]) for i in disc})
            mu, cov = joints[key]
            if (key, pattern) not in conds:  # the Gaussian conditioning of this state and missing pattern
                C = np.zeros((len(num), len(num)))
                L = Linv = K = None
                if O:
                    L = np.linalg.cholesky(cov[np.ix_(O, O)])
                    Linv = np.linalg.inv(L)
                if M and O:
                    K = np.linalg.solve(cov[np.ix_(O, O)], cov[np.ix_(O, M)]).T  # S_MO S_OO^-1
                    C[np.ix_(M, M)] = cov[np.ix_(M, M)] - K @ cov[np.ix_(O, M)]
                elif M:
                    C[np.ix_(M, M)] = cov[np.ix_(M, M)]
                conds[(key, pattern)] = (Linv, K, C, np.log(np.diag(L)).sum() if O else 0.0)
            Linv, K, C, logdet = conds[(key, pattern)]
            xhat = np.empty((B, len(num)))
            ll = np.full(B, lp)
            if O:
                r = xO - mu[O][None, :]
                sol = Linv @ r.T
                ll += -0.5 * (len(O) * _LOG_2PI + (sol * sol).sum(axis=0)) - logdet
                xhat[:, O] = xO
            if M:
                xhat[:, M] = mu[M][None, :] + (r @ K.T if O else 0.0)
            logw.append(ll)
            parts.append((codes, xhat, C))
        logw = np.array(logw)  # (completions, B)
        top = logw.max(axis=0)
        norm = top + np.log(np.exp(logw - top[None, :]).sum(axis=0))
        total_ll += float(norm.sum())
        w = np.exp(logw - norm[None, :])
        for (codes, xhat, C), wc in zip(parts, w):
            completed.append((codes, xhat, C, wc))
            where.append(rows)
    if stats and completed:
        _accumulate(completed, disc, num, strides, counts, fam)
    return counts, fam, total_ll, completed, where


def _accumulate(completed, disc, num, strides, counts, fam) -> None:
    """Add every completion's expected counts and cross-products to ``counts`` and ``fam`` at once: per
    discrete node, its weight at (configuration, state); per Gaussian family and configuration j of its
    discrete parents, sum w z z^T over the completed rows with that configuration plus the weight times the
    conditional covariance of z."""
    codes_all = np.stack([c[0] for c in completed])  # (completions, n)
    tots = np.array([float(c[3].sum()) for c in completed])
    sizes = np.array([len(c[3]) for c in completed])
    X = np.concatenate([c[1] for c in completed])  # (rows of all completions, m)
    W = np.concatenate([c[3] for c in completed])
    Cs = np.stack([c[2] for c in completed])  # (completions, m, m)
    comp_of_row = np.repeat(np.arange(len(completed)), sizes)

    def configs(i: int) -> np.ndarray:
        dps, st = strides[i]
        if not dps:
            return np.zeros(len(completed), dtype=np.int64)
        return codes_all[:, dps] @ np.asarray(st, dtype=np.int64)

    for i in disc:
        np.add.at(counts[i], (configs(i), codes_all[:, i]), tots)
    for i in num:
        cols, S = fam[i]
        cfg = configs(i)
        cfg_rows = cfg[comp_of_row]
        Z = np.column_stack([np.ones(len(W)), X[:, cols]])
        Csub = Cs[:, cols][:, :, cols]
        for j in np.unique(cfg):
            r = cfg_rows == j
            Zr = Z[r]
            S[j] += (Zr * W[r, None]).T @ Zr
            c = cfg == j
            S[j, 1:, 1:] += np.einsum("c,cab->ab", tots[c], Csub[c])


def expected_completions(model: HybridNet, data: MixedData, with_rows: bool = False) -> tuple[list, float]:
    """The E-step's completions of ``data`` under ``model`` (see :func:`_estep`) and the observed-data
    log-likelihood: what the expected scores of structural EM and the conditional means of
    :func:`bnfk_core.hybrid.impute.hybrid_imputation` are computed from.

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
    _, _, ll, completed, where = _estep(model, data, stats=False)
    if with_rows:
        completed = [(rows, *c) for rows, c in zip(where, completed)]
    return completed, ll


def em_hybrid(
    dag: DAG,
    data: MixedData,
    max_iter: int = 200,
    tol: float = 1e-9,
    relative_floor: float = VARIANCE_FLOOR,
) -> HybridNet:
    """The maximum-likelihood CLG network of ``dag`` on a table with missing cells, by EM (module docstring),
    started from the available-case fit of :func:`~bnfk_core.hybrid.fitting.fit_hybrid`.

    Parameters
    ----------
    dag : DAG
    data : MixedData
    max_iter : int
    tol : float
        Stop when an iteration raises the observed-data log-likelihood by less than ``tol`` times its size.
    relative_floor : float
        The least variance of a regression, as a fraction of its child column's observed variance.

    Returns
    -------
    HybridNet
        ``fit_info`` records ``em_iterations`` and the final ``observed_loglik``.
    """
    model = fit_hybrid(dag, data, method="ml", relative_floor=relative_floor)
    data = model.align(data)
    floors = {i: variance_floor(data.values[:, i], relative_floor) for i in model.numeric}
    prev = -math.inf
    it = 0
    for it in range(1, int(max_iter) + 1):
        counts, fam, ll, _, _ = _estep(model, data)
        if ll - prev < tol * abs(ll) and it > 1:
            break
        prev = ll
        cpts = list(model.cpts)
        for i, c in counts.items():
            tot = c.sum(axis=1, keepdims=True)
            cpts[i] = np.where(tot > 0, c / np.where(tot > 0, tot, 1.0), 1.0 / c.shape[1])
        gs = list(model.gaussians)
        for i, (_, S) in fam.items():
            coef, var, _, _ = regress(S, floors[i])
            gs[i] = LinearGaussian(coef, var)
        model = HybridNet(model.dag, model.kinds, model.states, tuple(cpts), tuple(gs), dict(model.fit_info))
    model.fit_info.update(method="em", em_iterations=it, observed_loglik=ll)
    return model
