"""Latent class models: a naive Bayes network whose class node C is never observed.

    p(x) = sum_t w_t prod_i theta_i[t, x_i]          (Auvray & Wehenkel, slide "Naive Bayesian networks")

Fitted by EM from many seeded random starts (the best log-likelihood is kept; how many starts reached it is
reported), by the compiled engine of :mod:`bnfk_core.lca.em`: the rows are collapsed to distinct rows with
summed weights and read through their codes (no one-hot matrix); a missing cell drops out of the sums, which
is exactly the marginal likelihood of the observed cells, and its variable's profile is estimated from the
rows that observe it (the EM of poLCA; the expected values of missing cells are not needed because x_i is
independent of the other cells given C).  Row weights (multiplicities of distinct rows,
:mod:`bnfk_core.data.stream`)
multiply the posteriors.  EM is accelerated by SQUAREM with a monotone fallback (the log-likelihood of the
accepted points never decreases); optionally, many short runs screen the starts and only the best continue.

Free parameters: (K - 1) + K * sum_i (r_i - 1);  BIC = -2 LL + p log N;  AIC = -2 LL + 2 p.

Starts: start s draws its profiles from Dirichlet(1, ..., 1) and uniform class weights with
``numpy.random.default_rng([seed, s])`` -- the same start whatever the number of starts.  A start stops when
one plain EM step gains less than ``tol`` in mean log-likelihood per row (or after ``max_iter`` E-steps).
Classes are returned largest first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from ..data.encoding import one_hot  # re-exported: the one-hot codes EM works on
from ..errors import BnfkError, DataError
from ..network.dag import DAG
from . import em_numpy
from .em import LOG_FLOOR, e_step, em_runs, prepare_rows

__all__ = [
    "LatentClassModel",
    "fit_lca",
    "fit_lca_range",
    "best_by_bic",
    "parse_classes",
    "initial_parameters",
    "one_hot",
    "free_parameters",
    "HIDDEN_NAME",
    "LcaError",
]

#: the name of the hidden root in exported networks (a suffix is added if a column already has it)
HIDDEN_NAME = "latent_class"
MAX_STARTS = 10_000
MAX_CLASSES = 50


class LcaError(BnfkError):
    """A latent class model cannot be fitted or used as asked."""


def free_parameters(k: int, cards) -> int:
    """(K - 1) + K * sum_i (r_i - 1): the class weights and every class profile, minus their sum-to-one.

    Parameters
    ----------
    k : int
        Number of classes K.
    cards : sequence of int
        r_i of every variable.

    Returns
    -------
    int
    """
    return int(k - 1 + k * int(sum(int(r) - 1 for r in cards)))


def initial_parameters(cards, k: int, starts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(theta (S, D, K), w (S, K)) of the seeded random starts (module docstring).

    Parameters
    ----------
    cards : sequence of int
    k : int
    starts : int
        Number of random starts S.
    seed : int
        Start s draws from ``default_rng([seed, s])``.

    Returns
    -------
    theta : ndarray, shape (S, D, K)
        Dirichlet(1) class profiles stacked over the variables (D = sum_i r_i).
    w : ndarray, shape (S, K)
        Uniform class weights.
    """
    D = int(sum(cards))
    theta = np.empty((starts, D, k))
    for s in range(starts):
        rng = np.random.default_rng([int(seed), s])
        theta[s] = np.concatenate([rng.dirichlet(np.ones(int(r)), size=k).T for r in cards], axis=0)
    return theta, np.full((starts, k), 1.0 / k)


@dataclass(frozen=True, eq=False)
class LatentClassModel:
    """A fitted latent class model (classes ordered by decreasing weight).

    ``weights[t]`` = P(C = t); ``profiles[i][t, k]`` = P(x_i = k | C = t); ``expected_counts[i][t, k]`` the
    posterior-weighted counts the profiles were estimated from (for smoothed exports)."""

    variables: tuple
    states: tuple
    weights: np.ndarray
    profiles: tuple
    loglik: float
    n_rows: float
    starts: int = 1
    starts_at_best: int = 1
    start_logliks: np.ndarray = field(default_factory=lambda: np.zeros(0))
    iterations: int = 0
    converged: bool = True
    seed: int = 0
    expected_counts: tuple = ()
    runs_completed: int = 0  # starts fit_lca took to convergence (all of them unless screened)

    # ------------------------------------------------------------------ sizes and criteria
    @property
    def n_classes(self) -> int:
        return int(len(self.weights))

    @property
    def cardinalities(self) -> np.ndarray:
        return np.array([len(s) for s in self.states], dtype=np.int64)

    @property
    def parameters(self) -> int:
        return free_parameters(self.n_classes, self.cardinalities)

    @property
    def bic(self) -> float:
        return float(-2.0 * self.loglik + self.parameters * math.log(max(self.n_rows, 1.0)))

    @property
    def aic(self) -> float:
        return float(-2.0 * self.loglik + 2.0 * self.parameters)

    # ------------------------------------------------------------------ rows
    def codes_of(self, data) -> np.ndarray:
        """Code rows aligned to the model (``data``: CategoricalData with the model's columns, or codes).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or ndarray of int

        Returns
        -------
        ndarray of int, shape (N, n)

        Raises
        ------
        LcaError
            When code rows have another number of columns than the model has variables.
        """
        if hasattr(data, "codes") or isinstance(data, pd.DataFrame):
            return self.to_bayesnet().align(data).codes[:, 1:]
        codes = np.atleast_2d(np.asarray(data))
        if codes.shape[1] != len(self.variables):
            raise LcaError(
                f"Rows have {codes.shape[1]} values but the model has {len(self.variables)} variables."
            )
        return codes

    def log_joint(self, data) -> np.ndarray:
        """log P(x_observed, C = t) of every row, shape (N, K): log w_t + sum_i log theta_i[t, x_i] over the
        observed cells, gathered variable by variable (no one-hot matrix).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes

        Returns
        -------
        ndarray, shape (N, K)

        References
        ----------
        Auvray & Wehenkel (2008), slide "Naive Bayesian networks" (the model p(x) = sum_t w_t prod_i
        theta_i[t, x_i]).
        """
        codes = self.codes_of(data)
        with np.errstate(divide="ignore"):
            out = np.tile(np.maximum(np.log(self.weights), LOG_FLOOR), (codes.shape[0], 1))
            for i, prof in enumerate(self.profiles):
                lp = np.maximum(np.log(prof.T), LOG_FLOOR)  # (r_i, K)
                x = codes[:, i]
                obs = x >= 0
                out += np.where(obs[:, None], lp[np.where(obs, x, 0)], 0.0)
        return out

    def log_likelihood(self, data) -> np.ndarray:
        """log P(x_observed) of every row (missing cells marginalised).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes

        Returns
        -------
        ndarray, shape (N,)
        """
        return logsumexp(self.log_joint(data), axis=1)

    def posterior(self, data) -> np.ndarray:
        """P(C = t | x_observed), shape (N, K).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes

        Returns
        -------
        ndarray, shape (N, K)
        """
        L = self.log_joint(data)
        return np.exp(L - logsumexp(L, axis=1, keepdims=True))

    def modal_classes(self, data) -> np.ndarray:
        """The most probable class of every row (0-based).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes

        Returns
        -------
        ndarray of int, shape (N,)
        """
        return np.argmax(self.log_joint(data), axis=1)

    def predict_missing(self, data) -> np.ndarray:
        """The codes with every missing cell filled by argmax_k sum_t P(t | x_obs) theta_i[t, k] (ties: the
        first state); observed cells are kept.

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes

        Returns
        -------
        ndarray of int, shape (N, n)
        """
        codes = self.codes_of(data).copy()
        post = self.posterior(codes)
        for i, prof in enumerate(self.profiles):
            miss = codes[:, i] < 0
            if miss.any():
                codes[miss, i] = np.argmax(post[miss] @ prof, axis=1)
        return codes

    def class_sizes(self, data=None) -> list:
        """Rows per modal class on ``data`` (None: the estimated weights times the rows fitted).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes, optional

        Returns
        -------
        list
            Integers per class on ``data``; floats (expected sizes) without.
        """
        if data is None:
            return [float(x) for x in self.weights * self.n_rows]
        return np.bincount(self.modal_classes(data), minlength=self.n_classes).tolist()

    # ------------------------------------------------------------------ export
    def hidden_name(self) -> str:
        """The name of the hidden class node: ``HIDDEN_NAME``, prefixed with ``_`` until no variable bears it.

        Returns
        -------
        str
        """
        name = HIDDEN_NAME
        while name in self.variables:
            name = "_" + name
        return name

    def to_bayesnet(self, pseudo_count: float = 0.0):
        """The model as a :class:`~bnfk_core.network.model.BayesNet`: hidden root C -> every x_i
        (``fit_info["hidden"]`` names C; aligning data to the network adds C as an all-missing column).
        ``pseudo_count`` > 0 smooths
        the expected counts: (n_tk + a) / (n_t + a r_i) and (n_t + a) / (N + a K) (the Fisher kernel needs
        every probability positive).

        Parameters
        ----------
        pseudo_count : float
            a; 0 keeps the fitted parameters.

        Returns
        -------
        BayesNet
            Cached per ``pseudo_count``.
        """
        from ..network.model import BayesNet

        key = ("bayesnet", float(pseudo_count))
        cache = self.__dict__.setdefault("_nets", {})
        if key in cache:
            return cache[key]
        a, K = float(pseudo_count), self.n_classes
        hidden = self.hidden_name()
        if a > 0 and self.expected_counts:
            nt = self.weights * self.n_rows
            w = (nt + a) / (self.n_rows + a * K)
            profs = [(c + a) / (c.sum(axis=1, keepdims=True) + a * c.shape[1]) for c in self.expected_counts]
        else:
            w, profs = self.weights, list(self.profiles)
        nodes = (hidden,) + tuple(self.variables)
        dag = DAG(nodes, [(hidden, v) for v in self.variables])
        info = {
            "method": "latent class EM",
            "hidden": hidden,
            "classes": K,
            "loglik": float(self.loglik),
            "bic": self.bic,
            "aic": self.aic,
            "starts": self.starts,
            "starts_at_best": self.starts_at_best,
            "seed": self.seed,
            "pseudo_count": a,
            "n_rows": float(self.n_rows),
        }
        states = (tuple(str(t + 1) for t in range(K)),) + tuple(tuple(s) for s in self.states)
        net = BayesNet(
            dag, states, (np.asarray(w, float)[None, :],) + tuple(np.asarray(p, float) for p in profs), info
        )
        cache[key] = net
        return net


def _rows_of(data):
    """(codes, weights, variables, states, source) of a CategoricalData (or a pandas DataFrame) or its
    streamed distinct rows."""
    from ..data.table import as_data

    data = as_data(data)
    if not hasattr(data, "codes") or not hasattr(data, "states"):
        raise LcaError("fit_lca needs a data table (CategoricalData); load a CSV first.")
    weights = getattr(data, "weights", None)
    codes = np.asarray(data.codes)
    weights = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    return (
        codes,
        weights,
        tuple(data.variables),
        tuple(tuple(s) for s in data.states),
        getattr(data, "source", "data"),
    )


def _check(k, starts, codes, variables, source):
    if not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= MAX_CLASSES:
        raise LcaError(
            f"The number of classes must be an integer from 1 to {MAX_CLASSES}, got {str(k)[:80]}."
        )
    if not isinstance(starts, (int, np.integer)) or not 1 <= int(starts) <= MAX_STARTS:
        raise LcaError(
            f"The number of starts must be an integer from 1 to {MAX_STARTS}, got {str(starts)[:80]}."
        )
    if codes.shape[0] == 0 or codes.shape[1] == 0:
        raise DataError(f"{source} has no rows or no columns to fit a latent class model to.")
    empty = [i for i in range(codes.shape[1]) if not (codes[:, i] >= 0).any()]
    if empty:
        raise DataError(f"Column '{str(variables[empty[0]])[:80]}' of {source} has no observed values.")


def fit_lca(
    data,
    k: int,
    starts: int = 20,
    seed: int = 0,
    *,
    tol: float = 1e-8,
    max_iter: int = 1000,
    class_column: str | None = None,
    agree: float | None = None,
    screen: int = 0,
    keep: int | None = None,
    engine: str = "auto",
) -> LatentClassModel:
    """Fit a K-class latent class model to ``data`` by EM from ``starts`` seeded random starts.

    ``data``: a :class:`~bnfk_core.data.table.CategoricalData` (its label column, if set, is not a variable)
    or the streamed distinct rows with ``weights``.  ``agree``: how close (total log-likelihood) a start must
    end to the best to count in ``starts_at_best`` (default max(1e-3, 1e-6 N)).

    ``screen`` > 0: the short-run / long-run strategy (as latent GOLD's and poLCA users' many short runs):
    every start runs ``screen`` E-steps, then only the ``keep`` (default max(5, starts // 5)) best of them
    continue to convergence; ``starts_at_best`` counts among the runs taken to convergence
    (``runs_completed``).

    ``engine``: ``"numba"`` (the compiled engine, :mod:`bnfk_core.lca.em`), ``"numpy"`` (the same EM on
    every start at once, :mod:`bnfk_core.lca.em_numpy`: no numba start-up) or ``"auto"``, the default: numpy
    on small tables (:data:`~bnfk_core.lca.em_numpy.SMALL_CELLS`), where it is as fast and a fresh process
    compiles nothing, numba beyond.  Both engines reach the same maximum (log-likelihoods within 1e-8).

    Parameters
    ----------
    data : CategoricalData
        The rows (missing cells are marginalised out of the likelihood).
    k : int
        The number of latent classes m.
    starts, seed : int
        Random starts and the seed that draws them.
    tol, max_iter : float, int
        Convergence of EM (change of the log-likelihood) and its iteration bound.
    class_column, agree, screen, keep, engine
        As described above.

    Returns
    -------
    LatentClassModel
        The best start's class weights p(C = t) and profiles p(x_i | C = t), classes ordered by size, with
        its log-likelihood, BIC/AIC and how many starts reached it.

    Raises
    ------
    LcaError
        K or the number of starts out of range, an unknown engine, or no finite log-likelihood.
    DataError
        No rows or columns, or a column with no observed value.

    References
    ----------
    Auvray & Wehenkel (2008), "Learning parameters in discrete naive Bayes models by computing fibers of the
    parametrization map": p(x) = sum_t p(C = t) prod_i p(x_i | C = t), the latent class model fitted here.
    """
    if isinstance(data, pd.DataFrame):
        from ..data.table import from_frame

        data = from_frame(data, class_column=class_column)
    if getattr(data, "class_column", None) is not None and hasattr(data, "without_class"):
        data = data.without_class()
    codes, weights, variables, states, source = _rows_of(data)
    _check(k, starts, codes, variables, source)
    if not isinstance(tol, (int, float, np.floating, np.integer)) or not 0 < float(tol) <= 1:
        raise LcaError(f"The EM tolerance must be a number in (0, 1], got {str(tol)[:80]}.")
    k, starts = int(k), int(starts)
    cards = [len(s) for s in states]
    if engine not in ("numba", "numpy", "auto"):
        raise LcaError(f"Unknown EM engine '{str(engine)[:80]}'; choose numba, numpy or auto.")
    if engine != "numba":
        rows = em_numpy.distinct_rows(codes, weights, cards, small_only=engine == "auto")
        if rows is None:
            engine = "numba"
    if engine == "numba":
        rows = prepare_rows(codes, weights, cards)
        runs, last_e_step = (
            (lambda th, ww, **kw: em_runs(codes, weights, cards, th, ww, rows=rows, **kw)),
            e_step,
        )
    else:
        runs, last_e_step = (lambda th, ww, **kw: em_numpy.em_runs(rows, th, ww, **kw)), em_numpy.e_step
    theta0, w0 = initial_parameters(cards, k, starts, seed)
    if screen and int(screen) > 0:
        res = runs(theta0, w0, tol=tol, max_iter=int(screen))
        keep = max(5, starts // 5) if keep is None else max(1, int(keep))
        ll0 = np.where(np.isfinite(res["loglik"]), res["loglik"], -np.inf)
        todo = [s for s in np.argsort(-ll0, kind="stable")[:keep] if not res["converged"][s]]
        more = runs(res["theta"], res["w"], tol=tol, max_iter=max_iter, starts=todo)
        for key in ("theta", "w", "loglik", "converged"):
            res[key][todo] = more[key][todo]
        res["iterations"][todo] += more["iterations"][todo]
        completed = res["converged"].copy()
        completed[todo] = True
    else:
        res = runs(theta0, w0, tol=tol, max_iter=max_iter)
        completed = np.ones(starts, bool)
    ll = res["loglik"]
    if not np.isfinite(ll).any():
        raise LcaError(f"EM found no finite log-likelihood on {source}.")
    best = int(np.nanargmax(ll))
    n = float(weights.sum())
    agree = max(1e-3, 1e-6 * n) if agree is None else float(agree)
    at_best = int(np.sum(completed & (ll >= ll[best] - agree)))
    theta, w = res["theta"][best], res["w"][best]
    order = np.lexsort((np.arange(k), -w))  # largest class first
    off = rows.off
    _, counts, _ = last_e_step(rows, theta, w)  # expected counts (D, K) at the optimum
    profiles = tuple(np.ascontiguousarray(theta[a:b, order].T) for a, b in zip(off[:-1], off[1:]))
    expected = tuple(np.ascontiguousarray(counts[a:b, order].T) for a, b in zip(off[:-1], off[1:]))
    return LatentClassModel(
        variables,
        states,
        w[order].copy(),
        profiles,
        float(ll[best]),
        n,
        starts,
        at_best,
        ll.copy(),
        int(res["iterations"][best]),
        bool(res["converged"][best]),
        int(seed),
        expected,
        int(completed.sum()),
    )


def parse_classes(text) -> list:
    """``"3"`` -> [3]; ``"1-4"`` -> [1, 2, 3, 4] (an LcaError naming the value otherwise).

    Parameters
    ----------
    text : str or int

    Returns
    -------
    list of int

    Raises
    ------
    LcaError
        When ``text`` is not K or A-B with 1 <= A <= B <= ``MAX_CLASSES``.
    """
    s = str(text).strip()
    try:
        if "-" in s:
            a, b = (int(p) for p in s.split("-", 1))
        else:
            a = b = int(s)
    except ValueError:
        raise LcaError(f"--classes takes K or A-B (e.g. 3 or 1-5), got '{s[:80]}'.") from None
    if not 1 <= a <= b <= MAX_CLASSES:
        raise LcaError(f"--classes must lie within 1..{MAX_CLASSES} with A <= B, got '{s[:80]}'.")
    return list(range(a, b + 1))


def fit_lca_range(data, classes, starts: int = 20, seed: int = 0, progress=None, **options) -> list:
    """One :func:`fit_lca` per K in ``classes`` (a list or ``"A-B"``), in order.

    Parameters
    ----------
    data : CategoricalData
    classes : sequence of int or str
    starts, seed : int
        As :func:`fit_lca`.
    progress : callable(fraction, message), optional
    **options
        Passed to :func:`fit_lca`.

    Returns
    -------
    list of LatentClassModel
    """
    ks = parse_classes(classes) if isinstance(classes, str) else [int(k) for k in classes]
    out = []
    for j, k in enumerate(ks):
        if progress is not None:
            progress(j / len(ks), f"{k} classes")
        out.append(fit_lca(data, k, starts, seed, **options))
    if progress is not None:
        progress(1.0, "done")
    return out


def best_by_bic(data, kmax: int = 6, starts: int = 10, seed: int = 0, engine: str = "auto"):
    """The fitted model with the least BIC among K = 1..kmax (each from ``starts`` seeded starts; ``engine``
    of :func:`fit_lca`).

    Parameters
    ----------
    data : CategoricalData
    kmax, starts, seed : int
    engine : str

    Returns
    -------
    LatentClassModel
    """
    best = None
    for k in range(1, int(kmax) + 1):
        m = fit_lca(data, k, starts, seed, engine=engine)
        if best is None or m.bic < best.bic:
            best = m
    return best
