"""Latent class models with Gaussian indicators: a hidden class C over a mixed table, each categorical column
multinomial and each numeric column Gaussian given C (class-specific mean and variance),

    p(x) = sum_t w_t prod_{i categorical} theta_i[t, x_i] prod_{j numeric} N(x_j; mu_j[t], sigma2_j[t])

(the mixed measurement model of StepMix, ``categorical_nan`` + ``gaussian_diag_nan``; Vermunt & Magidson's
latent class cluster model).  A missing cell drops out of its row's product: the likelihood of the observed
cells, right when cells are missing at random, since the columns are independent given C.

EM (Dempster, Laird & Rubin 1977).  E-step: r_nt = P(C = t | x_n, observed).  M-step, in closed form:
w_t = mean_n r_nt; theta_i[t, k] = sum_n r_nt [x_ni = k] / sum_{n : x_ni observed} r_nt; mu_j[t] and
sigma2_j[t] the r-weighted mean and variance of the observed x_nj (the variance at least ``variance_floor``
times the column's variance: a class that collapses on one value keeps a finite density; the likelihood is
unimodal in sigma2, so the floored update still maximises it and EM stays monotone).  Starts: start s draws
its categorical profiles from Dirichlet(1), its class means from K distinct observed rows of each numeric
column and sets every class variance to the column's, uniform weights, with ``numpy.random.default_rng([seed,
s])``.  A start stops when one EM step gains less than ``tol`` in mean log-likelihood per row (StepMix's
``abs_tol``) or after ``max_iter`` steps; the best start is kept.  Classes are returned largest first.

Free parameters: (K - 1) + K sum_i (r_i - 1) + 2 K m (m numeric columns); BIC = -2 LL + p log N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError
from ..hybrid.table import NUMERIC, MixedData
from .model import MAX_CLASSES, MAX_STARTS, LcaError

__all__ = ["MixedLatentClassModel", "fit_mixed_lca", "mixed_free_parameters", "MIXED_VARIANCE_FLOOR"]

#: the least class variance, as a fraction of the numeric column's variance
MIXED_VARIANCE_FLOOR = 1e-6

_LOG_2PI = math.log(2.0 * math.pi)


def mixed_free_parameters(k: int, kinds, cards) -> int:
    """(K - 1) + K sum_categorical (r_i - 1) + 2 K m: weights, profiles, class means and variances.

    Parameters
    ----------
    k : int
        Number of classes K.
    kinds : sequence of str
        ``"discrete"`` or ``"numeric"`` per column.
    cards : sequence of int
        r_i per column (ignored for numeric ones).

    Returns
    -------
    int
    """
    cat = sum(int(r) - 1 for kind, r in zip(kinds, cards) if kind != NUMERIC)
    m = sum(1 for kind in kinds if kind == NUMERIC)
    return int(k - 1 + k * cat + 2 * k * m)


@dataclass(frozen=True, eq=False)
class MixedLatentClassModel:
    """A fitted latent class model over a mixed table (classes by decreasing weight).

    Attributes
    ----------
    variables, kinds, states : tuple
        As the :class:`~bnfk_core.hybrid.table.MixedData` it was fitted to.
    weights : ndarray (K,)
    profiles : tuple
        (K, r_i) P(x_i = k | C = t) of a categorical column, None for a numeric one.
    means, variances : tuple
        (K,) class means and variances of a numeric column, None for a categorical one.
    loglik : float
        Log-likelihood of the observed cells.
    n_rows : int
    starts, starts_at_best, iterations : int
    start_logliks : ndarray
    converged : bool
    seed : int
    """

    variables: tuple
    kinds: tuple
    states: tuple
    weights: np.ndarray
    profiles: tuple
    means: tuple
    variances: tuple
    loglik: float
    n_rows: int
    starts: int = 1
    starts_at_best: int = 1
    start_logliks: np.ndarray = field(default_factory=lambda: np.zeros(0))
    iterations: int = 0
    converged: bool = True
    seed: int = 0

    @property
    def n_classes(self) -> int:
        return int(len(self.weights))

    @property
    def parameters(self) -> int:
        return mixed_free_parameters(self.n_classes, self.kinds, [len(s) for s in self.states])

    @property
    def bic(self) -> float:
        return -2.0 * self.loglik + self.parameters * math.log(self.n_rows)

    @property
    def aic(self) -> float:
        return -2.0 * self.loglik + 2.0 * self.parameters

    def _params(self):
        return self.weights, self.profiles, self.means, self.variances

    def joint(self, data: MixedData) -> np.ndarray:
        """log p(x_n observed, C = t).

        Parameters
        ----------
        data : MixedData
            The columns the model was fitted to.

        Returns
        -------
        ndarray, shape (N, K)
        """
        return _log_joint(_check(self, data), *self._params())

    def log_likelihood(self, data: MixedData) -> float:
        """Sum over rows of log p(observed cells).

        Parameters
        ----------
        data : MixedData

        Returns
        -------
        float
        """
        lj = self.joint(data)
        return float(_lse(lj).sum())

    def posterior(self, data: MixedData) -> np.ndarray:
        """P(C = t | observed cells of row n).

        Parameters
        ----------
        data : MixedData

        Returns
        -------
        ndarray, shape (N, K)
        """
        lj = self.joint(data)
        return np.exp(lj - _lse(lj)[:, None])

    def modal_classes(self, data: MixedData) -> np.ndarray:
        """The most probable class of every row.

        Parameters
        ----------
        data : MixedData

        Returns
        -------
        ndarray of int, shape (N,)
        """
        return np.argmax(self.posterior(data), axis=1)

    def summary(self) -> dict:
        """The fit as JSON-ready values.

        Returns
        -------
        dict
            classes, loglik, bic, aic, parameters, rows, starts, starts_at_best, iterations, converged,
            weights and the class profiles (states' probabilities; means and standard deviations).
        """
        prof = {}
        for i, v in enumerate(self.variables):
            if self.kinds[i] == NUMERIC:
                prof[v] = {"mean": self.means[i].tolist(), "sd": np.sqrt(self.variances[i]).tolist()}
            else:
                prof[v] = {s: self.profiles[i][:, k].tolist() for k, s in enumerate(self.states[i])}
        return {
            "classes": self.n_classes,
            "loglik": self.loglik,
            "bic": self.bic,
            "aic": self.aic,
            "parameters": self.parameters,
            "rows": self.n_rows,
            "starts": self.starts,
            "starts_at_best": self.starts_at_best,
            "iterations": self.iterations,
            "converged": self.converged,
            "weights": self.weights.tolist(),
            "profiles": prof,
        }


def _check(model: MixedLatentClassModel, data: MixedData) -> MixedData:
    if tuple(data.variables) != tuple(model.variables) or tuple(data.kinds) != tuple(model.kinds):
        raise LcaError("The table's columns are not the ones the latent class model was fitted to.")
    return data


def _lse(a: np.ndarray) -> np.ndarray:
    top = a.max(axis=1)
    return top + np.log(np.exp(a - top[:, None]).sum(axis=1))


def _log_joint(data: MixedData, weights, profiles, means, variances) -> np.ndarray:
    """log w_t + sum of the observed cells' log densities given C = t, shape (N, K)."""
    out = np.tile(np.log(np.maximum(weights, 1e-300)), (data.n_rows, 1))
    for i, kind in enumerate(data.kinds):
        if kind == NUMERIC:
            x = data.values[:, i]
            ok = ~np.isnan(x)
            v = variances[i]
            d = x[ok, None] - means[i][None, :]
            out[ok] += -0.5 * (_LOG_2PI + np.log(v)[None, :] + d * d / v[None, :])
        else:
            c = data.codes[:, i]
            ok = c >= 0
            out[ok] += np.log(np.maximum(profiles[i], 1e-300)).T[c[ok]]
    return out


def _m_step(data: MixedData, R: np.ndarray, floors, prev_means, prev_vars):
    """The closed-form M-step given responsibilities R (N, K) (module docstring)."""
    weights = R.mean(axis=0)
    profiles, means, variances = [], [], []
    for i, kind in enumerate(data.kinds):
        if kind == NUMERIC:
            x = data.values[:, i]
            ok = ~np.isnan(x)
            Ro, xo = R[ok], x[ok]
            sw = Ro.sum(axis=0)
            has = sw > 0
            mu = np.where(has, (Ro * xo[:, None]).sum(axis=0) / np.where(has, sw, 1.0), prev_means[i])
            d = xo[:, None] - mu[None, :]
            var = np.where(has, (Ro * d * d).sum(axis=0) / np.where(has, sw, 1.0), prev_vars[i])
            means.append(mu)
            variances.append(np.maximum(var, floors[i]))
            profiles.append(None)
        else:
            c = data.codes[:, i]
            ok = c >= 0
            r = len(data.states[i])
            counts = np.zeros((R.shape[1], r))
            np.add.at(counts.T, c[ok], R[ok])
            tot = counts.sum(axis=1, keepdims=True)
            profiles.append(np.where(tot > 0, counts / np.where(tot > 0, tot, 1.0), 1.0 / r))
            means.append(None)
            variances.append(None)
    return weights, tuple(profiles), tuple(means), tuple(variances)


def em_mixed(data: MixedData, params, floors, tol: float = 1e-8, max_iter: int = 1000):
    """EM from given parameters (module docstring).

    Parameters
    ----------
    data : MixedData
    params : tuple
        (weights, profiles, means, variances), as :class:`MixedLatentClassModel` holds them.
    floors : list
        The least variance of every numeric column (None for categorical ones).
    tol : float
        Stop when a step gains less than this in mean log-likelihood per row.
    max_iter : int

    Returns
    -------
    params : tuple
    loglik : float
    iterations : int
    converged : bool
    trace : ndarray
        The log-likelihood before every step and at the end.
    """
    trace = []
    N = data.n_rows
    lj = _log_joint(data, *params)
    ll = float(_lse(lj).sum())
    it, converged = 0, False
    for it in range(1, int(max_iter) + 1):
        trace.append(ll)
        R = np.exp(lj - _lse(lj)[:, None])
        params = _m_step(data, R, floors, params[2], params[3])
        lj = _log_joint(data, *params)
        new = float(_lse(lj).sum())
        gain = (new - ll) / N
        ll = new
        if gain < tol:
            converged = True
            break
    trace.append(ll)
    return params, ll, it, converged, np.array(trace)


def _floors(data: MixedData, variance_floor: float) -> list:
    out = []
    for i, kind in enumerate(data.kinds):
        if kind == NUMERIC:
            v = float(np.nanvar(data.values[:, i]))
            out.append(variance_floor * v if v > 0 else 1e-12)
        else:
            out.append(None)
    return out


def _start(data: MixedData, k: int, seed: int, s: int):
    rng = np.random.default_rng([int(seed), int(s)])
    profiles, means, variances = [], [], []
    for i, kind in enumerate(data.kinds):
        if kind == NUMERIC:
            x = data.values[:, i]
            x = x[~np.isnan(x)]
            pick = rng.choice(len(x), size=k, replace=len(x) < k)
            means.append(x[pick].astype(float))
            variances.append(np.full(k, float(np.var(x)) if len(x) > 1 and np.var(x) > 0 else 1.0))
            profiles.append(None)
        else:
            profiles.append(rng.dirichlet(np.ones(len(data.states[i])), size=k))
            means.append(None)
            variances.append(None)
    return np.full(k, 1.0 / k), tuple(profiles), tuple(means), tuple(variances)


def fit_mixed_lca(
    data: MixedData,
    n_classes: int,
    *,
    starts: int = 10,
    seed: int = 0,
    tol: float = 1e-8,
    max_iter: int = 1000,
    variance_floor: float = MIXED_VARIANCE_FLOOR,
    init=None,
) -> MixedLatentClassModel:
    """The latent class model with categorical and Gaussian indicators of ``data`` (module docstring): EM
    from ``starts`` seeded starts, the best log-likelihood kept.

    Parameters
    ----------
    data : MixedData
    n_classes : int
    starts : int
    seed : int
    tol : float
        Stop a start when an EM step gains less than this in mean log-likelihood per row.
    max_iter : int
    variance_floor : float
        Least class variance as a fraction of the column's variance.
    init : tuple, optional
        (weights (K,), profiles, means, variances) per column, as the model's attributes: one start from
        these parameters instead of the random ones.

    Returns
    -------
    MixedLatentClassModel
    """
    k = int(n_classes)
    if not 1 <= k <= MAX_CLASSES:
        raise LcaError(f"The number of classes must be between 1 and {MAX_CLASSES}, not {n_classes}.")
    if not 1 <= int(starts) <= MAX_STARTS:
        raise LcaError(f"The number of starts must be between 1 and {MAX_STARTS}, not {starts}.")
    if data.n_rows < k:
        raise DataError(f"{data.source} has {data.n_rows} rows, fewer than the {k} classes asked for.")
    for i in data.numeric:
        if np.isnan(data.values[:, i]).all():
            raise DataError(f"Numeric column '{data.variables[i]}' of {data.source} has no observed value.")
    floors = _floors(data, float(variance_floor))
    inits = [init] if init is not None else [_start(data, k, seed, s) for s in range(int(starts))]
    best, lls = None, []
    for p0 in inits:
        got = em_mixed(data, p0, floors, tol, max_iter)
        lls.append(got[1])
        if best is None or got[1] > best[1]:
            best = got
    (w, prof, mu, var), ll, it, conv, _ = best
    order = np.argsort(-w, kind="stable")
    lls = np.array(lls)
    return MixedLatentClassModel(
        tuple(data.variables),
        tuple(data.kinds),
        tuple(data.states),
        w[order],
        tuple(None if p is None else p[order] for p in prof),
        tuple(None if m is None else m[order] for m in mu),
        tuple(None if v is None else v[order] for v in var),
        ll,
        data.n_rows,
        len(inits),
        int((lls >= ll - 1e-6 * max(1.0, abs(ll))).sum()),
        lls,
        it,
        conv,
        int(seed),
    )
