"""Latent class models: a naive Bayes network whose class node C is never observed.

    p(x) = sum_t w_t prod_i theta_i[t, x_i]          (Auvray & Wehenkel, slide "Naive Bayesian networks")

Fitted by EM from many seeded random starts at once (the best log-likelihood is kept; how many starts reached
it is reported).  Everything is vectorised over rows AND starts: the rows are one-hot codes X (N, D),
D = sum_i r_i, the parameters of all S starts are one array log theta (S, D, K), so the E-step is one batched
product ``X @ log theta`` (log space: no underflow) and the M-step the transposed product
``X^T @ R`` of the (weighted) posteriors R.  A missing cell is a zero block of its row's one-hot code: it drops
out of the product, which is exactly the marginal likelihood of the observed cells, and its variable's
profile is estimated from the rows that observe it (the EM of poLCA; the expected values of missing cells
are not needed because x_i is independent of the other cells given C).  Row weights (multiplicities of
distinct rows, :mod:`bnfk_core.stream`) multiply the posteriors.

Free parameters: (K - 1) + K * sum_i (r_i - 1);  BIC = -2 LL + p log N;  AIC = -2 LL + 2 p.

Starts: start s draws its profiles from Dirichlet(1, ..., 1) and uniform class weights with
``numpy.random.default_rng([seed, s])`` -- the same start whatever the number of starts.  A start stops when
the mean log-likelihood per row gains less than ``tol`` in one iteration (or after ``max_iter``).  Classes are
returned largest first.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np
from scipy.special import logsumexp
from threadpoolctl import threadpool_limits

from ..dag import DAG
from ..errors import BnfkError, DataError, ModelError

__all__ = ["LatentClassModel", "fit_lca", "fit_lca_range", "parse_classes", "em_runs", "one_hot",
           "free_parameters", "HIDDEN_NAME", "LcaError"]

#: the name of the hidden root in exported networks (a suffix is added if a column already has it)
HIDDEN_NAME = "latent_class"
_LOG_FLOOR = np.log(1e-300)          # log 0 is floored so that 0 * log 0 stays 0 in the products
MAX_STARTS = 10_000
MAX_CLASSES = 50


class LcaError(BnfkError):
    """A latent class model cannot be fitted or used as asked."""


def free_parameters(k: int, cards) -> int:
    """(K - 1) + K * sum_i (r_i - 1): the class weights and every class profile, minus their sum-to-one."""
    return int(k - 1 + k * int(sum(int(r) - 1 for r in cards)))


def one_hot(codes: np.ndarray, cards) -> np.ndarray:
    """Dense one-hot codes (N, sum r_i); a missing cell (code < 0) is an all-zero block."""
    codes = np.asarray(codes)
    off = np.concatenate([[0], np.cumsum(cards)]).astype(np.int64)
    X = np.zeros((codes.shape[0], int(off[-1])))
    rows, cols = np.nonzero(codes >= 0)
    X[rows, off[cols] + codes[rows, cols]] = 1.0
    return X


def _block_normalise(counts: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Each variable's block (last-but-one axis) divided by its sum; an empty block becomes uniform."""
    out = np.empty_like(counts)
    for a, b in zip(off[:-1], off[1:]):
        blk = counts[..., a:b, :]
        tot = blk.sum(axis=-2, keepdims=True)
        out[..., a:b, :] = np.where(tot > 0, blk / np.where(tot > 0, tot, 1.0), 1.0 / (b - a))
    return out


def initial_parameters(cards, k: int, starts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(theta (S, D, K), w (S, K)) of the seeded random starts (module docstring)."""
    D = int(sum(cards))
    theta = np.empty((starts, D, k))
    for s in range(starts):
        rng = np.random.default_rng([int(seed), s])
        theta[s] = np.concatenate([rng.dirichlet(np.ones(int(r)), size=k).T for r in cards], axis=0)
    return theta, np.full((starts, k), 1.0 / k)


def em_runs(X: np.ndarray, weights: np.ndarray, cards, theta: np.ndarray, w: np.ndarray, *, tol: float = 1e-8,
            max_iter: int = 1000, trace: bool = False, codes: np.ndarray | None = None) -> dict:
    """EM from every start at once (module docstring); starts that converged leave the active set.

    The active starts' parameters are laid side by side, log theta as (D, S*K), so each E-step is one GEMM
    X @ log theta -> (N, S*K) and each M-step one GEMM X^T @ R -> (D, S*K) (BLAS pinned to one thread:
    on a shared machine these small products run much faster single-threaded).

    Returns ``theta`` (S, D, K), ``w`` (S, K), ``loglik`` (S,) at the returned parameters, ``iterations`` (S,),
    ``converged`` (S,) and, with ``trace``, ``trace`` (S, iterations + 1): the log-likelihood before every
    M-step (NaN after a start stopped) -- EM never lowers it.

    With ``codes`` (the rows' codes) the E-step works on the distinct configurations of groups of variables
    (:func:`variable_groups`, :class:`_GroupedRows`) with a compiled pass over the rows: the same numbers
    without N x S x K temporaries (tests compare both paths).
    """
    X = np.ascontiguousarray(X, dtype=float)
    weights = np.asarray(weights, dtype=float)
    rows = _DenseRows(X) if codes is None else _GroupedRows(codes, cards, variable_groups(codes, cards))
    with threadpool_limits(limits=1):
        return _em_runs(rows, weights, cards, theta, w, tol, max_iter, trace)


def variable_groups(codes: np.ndarray, cards) -> list:
    """Consecutive groups of variables, each with at most max(256, N/8) distinct configurations in ``codes``
    (greedy; a variable with more starts a group of its own)."""
    codes = np.asarray(codes)
    N, n = codes.shape
    limit = max(256, N // 8)
    groups, cur = [], []
    for i in range(n):
        if cur and len(np.unique(codes[:, cur + [i]], axis=0)) > limit:
            groups.append(cur)
            cur = [i]
        else:
            cur = cur + [i]
    return groups + [cur]


class _DenseRows:
    """E-step on the one-hot rows: L = X @ log theta, one GEMM; M-step X^T @ R."""

    def __init__(self, X):
        self.X, self.XT, self.N = X, np.ascontiguousarray(X.T), X.shape[0]

    def step(self, lt, lw, weights):
        """(log-likelihood per start (A,), expected counts (A, D, K), expected class sizes (A, K))."""
        A, D, K = lt.shape
        L = self.X @ lt.transpose(1, 0, 2).reshape(D, A * K)
        L += lw.reshape(1, A * K)
        L = L.reshape(self.N, A, K)
        m = L.max(axis=2, keepdims=True)
        L -= m
        np.exp(L, out=L)
        tot = L.sum(axis=2, keepdims=True)
        ll = (np.log(tot[:, :, 0]) + m[:, :, 0]).T @ weights
        L /= tot
        L *= weights[:, None, None]
        counts = (self.XT @ L.reshape(self.N, A * K)).reshape(D, A, K).transpose(1, 0, 2)
        return ll, counts, L.sum(axis=0)


@numba.njit(cache=True, nogil=True)
def _grouped_pass(T, E, M, inv, weights, RB, ll):  # pragma: no cover - compiled
    """One E-step over the rows, start by start (arrays laid out (start, configuration, class): one start's
    tables stay in cache).  log p(x_n, t) = sum_g T[a, inv[n, g], t]; E = exp(T - M) per configuration (M its max
    over t), so p(x_n, t) = prod_g E[a, inv[n, g], t] * exp(sum_g M[a, inv[n, g]]) needs no exponential per row
    (a product that underflows is redone in log space).  Adds w_n p(t | x_n) to RB[a, inv[n, g]] for every group
    and w_n log p(x_n) to ll[a]."""
    N, G = inv.shape
    A, K = T.shape[0], T.shape[2]
    P = np.empty(K)
    for a in range(A):
        Ea, Ta, Ma, Ra = E[a], T[a], M[a], RB[a]
        acc = 0.0
        for n in range(N):
            wn = weights[n]
            tot = 0.0
            c0 = inv[n, 0]
            for k in range(K):
                v = Ea[c0, k]
                for g in range(1, G):
                    v *= Ea[inv[n, g], k]
                P[k] = v
                tot += v
            lm = 0.0
            for g in range(G):
                lm += Ma[inv[n, g]]
            if tot < 1e-250:
                m = -np.inf
                for k in range(K):
                    v = Ta[c0, k]
                    for g in range(1, G):
                        v += Ta[inv[n, g], k]
                    P[k] = v
                    if v > m:
                        m = v
                tot = 0.0
                for k in range(K):
                    P[k] = np.exp(P[k] - m)
                    tot += P[k]
                lm = m
            acc += wn * (np.log(tot) + lm)
            s = wn / tot
            for g in range(G):
                c = inv[n, g]
                for k in range(K):
                    Ra[c, k] += P[k] * s
        ll[a] = acc


class _GroupedRows:
    """E-step on the distinct configurations of groups of variables: log p(x, t) = sum_g T_g[c_g(x), t] with T_g
    (one small GEMM per group) the group's log-table over its configurations; a compiled pass over the rows adds
    the weighted posteriors per configuration (no N x S x K array), which the groups' one-hot codes turn into
    the expected counts."""

    def __init__(self, codes, cards, groups):
        codes = np.asarray(codes)
        self.N = codes.shape[0]
        off = np.concatenate([[0], np.cumsum(cards)]).astype(np.int64)
        self.parts, invs, start = [], [], 0
        for g in groups:
            cfg, inv = np.unique(codes[:, g], axis=0, return_inverse=True)
            Xg = one_hot(cfg, [cards[i] for i in g])
            cols = np.concatenate([np.arange(off[i], off[i + 1]) for i in g])
            self.parts.append((Xg, np.ascontiguousarray(Xg.T), cols, start, start + len(cfg)))
            invs.append(inv.reshape(-1) + start)
            start += len(cfg)
        self.inv = np.ascontiguousarray(np.stack(invs, axis=1).astype(np.int64))
        self.C, self.D = start, int(off[-1])

    def step(self, lt, lw, weights):
        A, D, K = lt.shape
        T = np.empty((A, self.C, K))
        for Xg, _, cols, a, b in self.parts:       # one GEMM per group: (configurations x D_g) @ (D_g x A*K)
            G = Xg @ lt[:, cols, :].transpose(1, 0, 2).reshape(len(cols), A * K)
            T[:, a:b] = G.reshape(b - a, A, K).transpose(1, 0, 2)
        p0 = self.parts[0]
        T[:, p0[3]:p0[4]] += lw[:, None, :]
        M = T.max(axis=2)
        E = np.exp(T - M[:, :, None])
        RB = np.zeros((A, self.C, K))
        ll = np.zeros(A)
        _grouped_pass(T, E, M, self.inv, weights, RB, ll)
        counts = np.empty((A, D, K))
        for Xg, XgT, cols, a, b in self.parts:
            R = RB[:, a:b].transpose(1, 0, 2).reshape(b - a, A * K)
            counts[:, cols] = (XgT @ R).reshape(len(cols), A, K).transpose(1, 0, 2)
        return ll, counts, RB[:, p0[3]:p0[4]].sum(axis=1)


def _em_runs(rows, weights, cards, theta, w, tol, max_iter, trace):
    cards = [int(r) for r in cards]
    off = np.concatenate([[0], np.cumsum(cards)]).astype(np.int64)
    theta, w = theta.copy(), w.copy()
    S, D, K = theta.shape
    n_total = float(weights.sum())
    loglik = np.full(S, -np.inf)
    iters = np.zeros(S, np.int64)
    converged = np.zeros(S, bool)
    history = [] if trace else None
    active = np.arange(S)
    prev = np.full(S, -np.inf)
    for it in range(max_iter + 1):
        with np.errstate(divide="ignore"):
            lt = np.maximum(np.log(theta[active]), _LOG_FLOOR)                       # (A, D, K)
            lw = np.maximum(np.log(w[active]), _LOG_FLOOR)                           # (A, K)
        ll, counts, nk = rows.step(lt, lw, weights)                                  # E-step and expected counts
        loglik[active] = ll
        if trace:
            step = np.full(S, np.nan)
            step[active] = ll
            history.append(step)
        gain = (ll - prev[active]) / n_total
        done = gain < tol
        converged[active[done]] = True
        if it == max_iter:
            done[:] = True
        prev[active] = ll
        if done.all():
            break
        keep = np.flatnonzero(~done)
        active = active[keep]
        theta[active] = _block_normalise(counts[keep], off)                          # M-step
        w[active] = nk[keep] / n_total
        iters[active] += 1
    out = {"theta": theta, "w": w, "loglik": loglik, "iterations": iters, "converged": converged}
    if trace:
        out["trace"] = np.array(history).T
    return out


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
        """Code rows aligned to the model (``data``: CategoricalData with the model's columns, or codes)."""
        if hasattr(data, "codes"):
            return self.to_bayesnet().align(data).codes[:, 1:]
        codes = np.atleast_2d(np.asarray(data))
        if codes.shape[1] != len(self.variables):
            raise LcaError(f"Rows have {codes.shape[1]} values but the model has {len(self.variables)} variables.")
        return codes

    def log_joint(self, data) -> np.ndarray:
        """log P(x_observed, C = t) of every row, shape (N, K)."""
        codes = self.codes_of(data)
        X = one_hot(codes, self.cardinalities)
        with np.errstate(divide="ignore"):
            lt = np.maximum(np.log(np.concatenate(self.profiles, axis=1).T), _LOG_FLOOR)
            return X @ lt + np.maximum(np.log(self.weights), _LOG_FLOOR)[None, :]

    def log_likelihood(self, data) -> np.ndarray:
        """log P(x_observed) of every row (missing cells marginalised)."""
        return logsumexp(self.log_joint(data), axis=1)

    def posterior(self, data) -> np.ndarray:
        """P(C = t | x_observed), shape (N, K)."""
        L = self.log_joint(data)
        return np.exp(L - logsumexp(L, axis=1, keepdims=True))

    def modal_classes(self, data) -> np.ndarray:
        """The most probable class of every row (0-based)."""
        return np.argmax(self.log_joint(data), axis=1)

    def predict_missing(self, data) -> np.ndarray:
        """The codes with every missing cell filled by argmax_k sum_t P(t | x_obs) theta_i[t, k] (ties: the
        first state); observed cells are kept."""
        codes = self.codes_of(data).copy()
        post = self.posterior(codes)
        for i, prof in enumerate(self.profiles):
            miss = codes[:, i] < 0
            if miss.any():
                codes[miss, i] = np.argmax(post[miss] @ prof, axis=1)
        return codes

    def class_sizes(self, data=None) -> list:
        """Rows per modal class on ``data`` (None: the estimated weights times the rows fitted)."""
        if data is None:
            return [float(x) for x in self.weights * self.n_rows]
        return np.bincount(self.modal_classes(data), minlength=self.n_classes).tolist()

    # ------------------------------------------------------------------ export
    def hidden_name(self) -> str:
        name = HIDDEN_NAME
        while name in self.variables:
            name = "_" + name
        return name

    def to_bayesnet(self, pseudo_count: float = 0.0):
        """The model as a :class:`~bnfk_core.model.BayesNet`: hidden root C -> every x_i (``fit_info["hidden"]``
        names C; aligning data to the network adds C as an all-missing column).  ``pseudo_count`` > 0 smooths
        the expected counts: (n_tk + a) / (n_t + a r_i) and (n_t + a) / (N + a K) (the Fisher kernel needs
        every probability positive)."""
        from ..model import BayesNet
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
        info = {"method": "latent class EM", "hidden": hidden, "classes": K, "loglik": float(self.loglik),
                "bic": self.bic, "aic": self.aic, "starts": self.starts, "starts_at_best": self.starts_at_best,
                "seed": self.seed, "pseudo_count": a, "n_rows": float(self.n_rows)}
        states = (tuple(str(t + 1) for t in range(K)),) + tuple(tuple(s) for s in self.states)
        net = BayesNet(dag, states, (np.asarray(w, float)[None, :],) + tuple(np.asarray(p, float) for p in profs), info)
        cache[key] = net
        return net


def _rows_of(data):
    """(codes, weights, variables, states, source) of a CategoricalData or its streamed distinct rows."""
    if not hasattr(data, "codes") or not hasattr(data, "states"):
        raise LcaError("fit_lca needs a data table (CategoricalData); load a CSV first.")
    weights = getattr(data, "weights", None)
    codes = np.asarray(data.codes)
    weights = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    return codes, weights, tuple(data.variables), tuple(tuple(s) for s in data.states), getattr(data, "source", "data")


def _check(k, starts, codes, variables, source):
    if not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= MAX_CLASSES:
        raise LcaError(f"The number of classes must be an integer from 1 to {MAX_CLASSES}, got {str(k)[:80]}.")
    if not isinstance(starts, (int, np.integer)) or not 1 <= int(starts) <= MAX_STARTS:
        raise LcaError(f"The number of starts must be an integer from 1 to {MAX_STARTS}, got {str(starts)[:80]}.")
    if codes.shape[0] == 0 or codes.shape[1] == 0:
        raise DataError(f"{source} has no rows or no columns to fit a latent class model to.")
    empty = [i for i in range(codes.shape[1]) if not (codes[:, i] >= 0).any()]
    if empty:
        raise DataError(f"Column '{str(variables[empty[0]])[:80]}' of {source} has no observed values.")


def fit_lca(data, k: int, starts: int = 20, seed: int = 0, *, tol: float = 1e-8, max_iter: int = 1000,
            class_column: str | None = None, agree: float | None = None) -> LatentClassModel:
    """Fit a K-class latent class model to ``data`` by EM from ``starts`` seeded random starts.

    ``data``: a :class:`~bnfk_core.data.CategoricalData` (its label column, if set, is not a variable) or the
    streamed distinct rows with ``weights``.  ``agree``: how close (total log-likelihood) a start must end to
    the best to count in ``starts_at_best`` (default max(1e-3, 1e-6 N)).
    """
    if getattr(data, "class_column", None) is not None and hasattr(data, "without_class"):
        data = data.without_class()
    codes, weights, variables, states, source = _rows_of(data)
    _check(k, starts, codes, variables, source)
    k, starts = int(k), int(starts)
    cards = [len(s) for s in states]
    X = one_hot(codes, cards)
    theta0, w0 = initial_parameters(cards, k, starts, seed)
    res = em_runs(X, weights, cards, theta0, w0, tol=tol, max_iter=max_iter, codes=codes)
    ll = res["loglik"]
    if not np.isfinite(ll).any():
        raise LcaError(f"EM found no finite log-likelihood on {source}.")
    best = int(np.nanargmax(ll))
    n = float(weights.sum())
    agree = max(1e-3, 1e-6 * n) if agree is None else float(agree)
    at_best = int(np.sum(ll >= ll[best] - agree))
    theta, w = res["theta"][best], res["w"][best]
    order = np.lexsort((np.arange(k), -w))                            # largest class first
    off = np.concatenate([[0], np.cumsum(cards)]).astype(np.int64)
    post = np.exp(_log_joint(X, theta, w) - ll_rows(X, theta, w)[:, None]) * weights[:, None]
    counts = X.T @ post                                               # (D, K)
    profiles = tuple(np.ascontiguousarray(theta[a:b, order].T) for a, b in zip(off[:-1], off[1:]))
    expected = tuple(np.ascontiguousarray(counts[a:b, order].T) for a, b in zip(off[:-1], off[1:]))
    return LatentClassModel(variables, states, w[order].copy(), profiles, float(ll[best]), n, starts, at_best,
                            ll.copy(), int(res["iterations"][best]), bool(res["converged"][best]), int(seed),
                            expected)


def _log_joint(X, theta, w):
    with np.errstate(divide="ignore"):
        return X @ np.maximum(np.log(theta), _LOG_FLOOR) + np.maximum(np.log(w), _LOG_FLOOR)[None, :]


def ll_rows(X, theta, w) -> np.ndarray:
    """log P(x_observed) of the one-hot rows X under (theta (D, K), w (K,))."""
    return logsumexp(_log_joint(X, theta, w), axis=1)


def parse_classes(text) -> list:
    """``"3"`` -> [3]; ``"1-4"`` -> [1, 2, 3, 4] (an LcaError naming the value otherwise)."""
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
    """One :func:`fit_lca` per K in ``classes`` (a list or ``"A-B"``), in order."""
    ks = parse_classes(classes) if isinstance(classes, str) else [int(k) for k in classes]
    out = []
    for j, k in enumerate(ks):
        if progress is not None:
            progress(j / len(ks), f"{k} classes")
        out.append(fit_lca(data, k, starts, seed, **options))
    if progress is not None:
        progress(1.0, "done")
    return out


def check_not_hidden(model) -> None:
    """A ModelError if ``model`` is not a latent class network (hidden root -> every other node)."""
    hidden = (getattr(model, "fit_info", None) or {}).get("hidden")
    if hidden not in getattr(model, "variables", ()):
        raise ModelError("The network has no hidden class node; fit a latent class model first.")
