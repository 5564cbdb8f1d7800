"""Prototype selection: a subset X_S of k rows that represents X (paper, Algorithm 1 and "Experiments").

Criteria (smaller is better for both):

* ``mmd`` -- the Fisher-kernel distance of paper eq. (10), d(X_S, X) = |mean phi(X_S) - mean phi(X)|^2;
* ``chi2`` -- the paper's chi-square heuristic, -sum_i log p_i, where p_i is the p value of a
  chi-square goodness-of-fit test of variable i's frequencies in X_S against the expected
  frequencies k * N_ic / N of X (degrees of freedom: the categories observed in X, minus one;
  a missing cell counts as one more category);
* ``random`` -- a uniformly random subset (the baseline).

Greedy swaps (Algorithm 1).  Start from a given subset or from the best of R random ones; visit
the k members in turn and replace each by the non-member that lowers the criterion most (if it
lowers it at all); stop once k members in a row were visited without a change -- then every
member has been checked against the current subset, which is therefore a local optimum: no
single swap improves it.

Why it is fast.  With s = sum_{l in S} phi(x_l), mu = mean phi(X) and w = (s - phi(o))/k - mu,
swapping member o for candidate c gives

    d_new(c) = |w + phi(c)/k|^2 = |w|^2 + (2/k) phi(c).w + |phi(c)|^2 / k^2,

so *one sparse matrix-vector product* Phi w scores every candidate of one swap; no N x N Gram
matrix is built.  The chi-square statistic of a variable is sum_c O_c^2 / E_c - k; removing o
and adding c changes two counts, so the statistic after every possible swap is a table lookup
per variable and the p values are computed once per (variable, category), not per candidate.

Evaluation (paper, "Data summarization").  Split 50/50, learn the structure on the training half
(``hc`` with BIC treating the class as a feature, ``tan`` or ``kdb`` with K = 3), fit it with
pseudo-count one, select from the training half, re-fit the parameters of the same structure on
the subset (pseudo-count one) and report the per-sample negative log-likelihood of the test half;
for TAN/KDB also the misclassification rate and log loss of the class given the features.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, svds
from scipy.special import gammaincc, gammaln

from ..errors import PrototypeError
from ..inference import parent_marginals
from ..fisher_features import features
from ..kernels import mmd as kernel_mmd
from ..limits import guard_tables
from ..learn import learn_structure
from ..model import fit
from .heldout import HeldOut, class_posterior, split_half

__all__ = ["CRITERIA", "SUMMARIZATION_STRUCTURES", "PrototypeError", "MMDCriterion", "Chi2Criterion", "GreedyResult",
           "greedy_swap", "random_subsets", "PrototypeResult", "select_prototypes", "HeldOut",
           "class_posterior", "split_half", "feature_embedding", "SummarizationExperiment", "prepare_summarization", "run_summarization",
           "summarize_benchmark", "selected_rows", "criterion_value", "share_below", "result_summary",
           "selected_table", "default_subset_sizes", "parse_subset_sizes", "curve_table", "map_sample",
           "compare_prototypes", "row_labels", "summarization_curve"]

CRITERIA = ("mmd", "chi2", "random")
SUMMARIZATION_STRUCTURES = ("hc", "tan", "kdb")

Progress = Callable[[float, str], None]


# ====================================================================== criteria
class MMDCriterion:
    """d(X_S, X) = |s/k - mu|^2 on explicit features ``Phi`` (rows = the pool X).

    ``mean``: the objective's mu when it is not the mean of ``Phi``'s rows (candidates drawn from a larger
    set, e.g. the complete rows of a file whose mean embedding counts every row; :mod:`bnfk_core.rowwise`).

    Columns no row uses are dropped (they are zero in every phi(x) and in mu).  The greedy
    interface keeps g = Phi (s/k - mu) up to date, so that scoring the removal of member o needs
    only the kernel column K(., o) = Phi phi(o): Phi w = g - K(., o)/k.  ``columns`` (a
    :class:`_KernelColumns`) computes K(., o) from Theorem 1 in O(rows sharing o's parent
    configurations); without it K(., o) is one sparse matrix-vector product.
    """

    name = "mmd"
    refresh_every = 64           # recompute g exactly after this many swaps (no drift)

    def __init__(self, Phi, columns: "_KernelColumns | None" = None, mean: np.ndarray | None = None):
        Phi = sp.csr_matrix(Phi, dtype=np.float64)
        used = np.unique(Phi.indices)
        if mean is not None:            # the objective's mean embedding of a larger set (candidates = Phi's rows)
            mean = np.asarray(mean, dtype=np.float64).ravel()
            if mean.shape[0] != Phi.shape[1]:
                raise PrototypeError(f"The mean embedding has {mean.shape[0]} entries but the features have "
                                     f"{Phi.shape[1]} columns.")
            used = np.union1d(used, np.flatnonzero(mean))
        self.Phi = Phi[:, used].tocsr()
        self.Phi.sort_indices()
        self.N = self.Phi.shape[0]
        self.mu = np.asarray(self.Phi.mean(axis=0)).ravel() if mean is None else mean[used]
        self.sq = np.asarray(self.Phi.multiply(self.Phi).sum(axis=1)).ravel()   # K(x, x)
        self._Phi_mu = self.Phi @ self.mu                                        # K-bar(x, X)
        self.columns = columns
        self._s = None

    @classmethod
    def from_model(cls, model, data) -> "MMDCriterion":
        data = model.align(data)
        cols = _KernelColumns(model, data.codes) if not data.has_missing else None
        return cls(features(model, data), cols)

    # -- whole subsets
    def _sums(self, idx: np.ndarray) -> np.ndarray:
        return np.asarray(self.Phi[idx].sum(axis=0)).ravel()

    def value(self, idx) -> float:
        idx = np.asarray(idx, dtype=np.int64)
        d = self._sums(idx) / len(idx) - self.mu
        return float(d @ d)

    def values(self, subsets: np.ndarray, chunk: int = 64) -> np.ndarray:
        """d for every row of ``subsets`` (R, k), in chunks of sparse indicator products."""
        subsets = np.atleast_2d(np.asarray(subsets, dtype=np.int64))
        R, k = subsets.shape
        mu2 = float(self.mu @ self.mu)
        out = np.empty(R)
        for a in range(0, R, chunk):
            b = min(R, a + chunk)
            rows = np.repeat(np.arange(b - a), k)
            M = sp.csr_matrix((np.ones(rows.size), (rows, subsets[a:b].ravel())), shape=(b - a, self.N))
            Ssum = (M @ self.Phi).tocsr()
            ss = np.asarray(Ssum.multiply(Ssum).sum(axis=1)).ravel()
            smu = self._Phi_mu[subsets[a:b]].sum(axis=1)
            out[a:b] = ss / k**2 - 2.0 * smu / k + mu2
        return np.maximum(out, 0.0)

    def kernel_column(self, o: int) -> np.ndarray:
        """K(x, x_o) for every row x."""
        if self.columns is not None:
            return self.columns(o)
        return self.Phi @ self._row(o)

    # -- incremental interface used by greedy_swap
    def start(self, idx: np.ndarray) -> float:
        self._k = len(idx)
        self._s = self._sums(idx)
        self._refresh()
        self._col = (None, None)
        return self._d

    def _refresh(self):
        diff = self._s / self._k - self.mu
        self._g = self.Phi @ diff
        self._d = float(diff @ diff)
        self._swaps = 0

    def swap_scores(self, o: int) -> np.ndarray:
        """d after replacing member ``o`` by each row (members are masked by the caller)."""
        k = self._k
        kc = self.kernel_column(o)
        self._col = (o, kc)
        ww = self._d - (2.0 / k) * self._g[o] + self.sq[o] / k**2        # |w|^2, w = (s - phi(o))/k - mu
        return ww + (2.0 / k) * (self._g - kc / k) + self.sq / k**2

    def best_swap(self, o: int, member: np.ndarray) -> tuple[int, float]:
        """(c, d after swapping o for c) of the best non-member c: :meth:`swap_scores` + argmin, fused."""
        k = self._k
        kc = self.kernel_column(o)
        self._col = (o, kc)
        ww = self._d - (2.0 / k) * self._g[o] + self.sq[o] / k**2
        c, val = _fused_argmin(self._g, kc, self.sq, member, ww, float(k))
        return int(c), float(val)

    def swap(self, o: int, c: int) -> float:
        ko = self._col[1] if self._col[0] == o else self.kernel_column(o)
        self._s += self._row(c) - self._row(o)
        self._swaps += 1
        if self._swaps >= self.refresh_every:
            self._refresh()
        else:
            self._g += (self.kernel_column(c) - ko) / self._k
            diff = self._s / self._k - self.mu
            self._d = float(diff @ diff)
        self._col = (None, None)
        return self._d

    def _row(self, i: int) -> np.ndarray:
        out = np.zeros(self.Phi.shape[1])
        a, b = self.Phi.indptr[i], self.Phi.indptr[i + 1]
        out[self.Phi.indices[a:b]] = self.Phi.data[a:b]
        return out


@numba.njit(cache=True)
def _fused_argmin(g, kc, sq, member, ww, k):  # pragma: no cover - compiled
    """argmin over non-members of ww + (2/k)(g - kc/k) + sq/k^2 (first index on ties), and the value."""
    best, arg = np.inf, -1
    a, b = 2.0 / k, 1.0 / (k * k)
    for c in range(g.shape[0]):
        if member[c]:
            continue
        v = ww + a * (g[c] - kc[c] / k) + sq[c] * b
        if v < best:
            best, arg = v, c
    return arg, best


@numba.njit(cache=True)
def _column_kernel(o, PC, X, order, starts, W, B, out):  # pragma: no cover - compiled
    """out[x] = K(x, o) by Theorem 1, visiting only the rows that share o's parent configurations."""
    out[:] = 0.0
    for i in range(PC.shape[1]):
        j = PC[o, i]
        xo = X[o, i]
        w = W[i, j, xo]
        b = B[i, j]
        for t in range(starts[i, j], starts[i, j + 1]):
            r = order[i, t]
            if X[r, i] == xo:
                out[r] += w - b
            else:
                out[r] -= b


class _KernelColumns:
    """K(., o) of complete rows by Theorem 1: sum_i [pi_i(x) = pi_i(o)] / P_j ([x_i = o_i] / theta - 1)."""

    def __init__(self, model, codes: np.ndarray):
        pm = parent_marginals(model)
        codes = np.asarray(codes, dtype=np.int64)
        N, n = codes.shape
        keep = [i for i in range(n) if model.cpts[i].shape[1] > 1]
        PC = np.zeros((N, len(keep)), np.int64)
        order = np.zeros((len(keep), N), np.int64)
        configs = []
        for a, i in enumerate(keep):
            used, inv = np.unique(model.parent_config(i, codes), return_inverse=True)
            PC[:, a] = inv.ravel()
            order[a] = np.argsort(PC[:, a], kind="stable")
            configs.append(used)
        cmax = max((len(u) for u in configs), default=1)
        rmax = int(max((model.cpts[i].shape[1] for i in keep), default=1))
        guard_tables(len(keep), cmax, rmax)
        starts = np.zeros((len(keep), cmax + 1), np.int64)
        W = np.zeros((len(keep), cmax, rmax))
        B = np.zeros((len(keep), cmax))
        for a, i in enumerate(keep):
            used = configs[a]
            starts[a, 1:len(used) + 1] = np.cumsum(np.bincount(PC[:, a], minlength=len(used)))
            starts[a, len(used) + 1:] = N
            P = pm.probs[i][used]
            theta = model.cpts[i][used]
            with np.errstate(divide="ignore"):
                W[a, :len(used), :theta.shape[1]] = 1.0 / (theta * P[:, None])
                B[a, :len(used)] = 1.0 / P
        self.args = (PC, np.ascontiguousarray(codes[:, keep]), order, starts, W, B)
        self.N = N

    def __call__(self, o: int) -> np.ndarray:
        out = np.empty(self.N)
        _column_kernel(int(o), *self.args, out)
        return out


def _log_chi2_sf(x, dof) -> np.ndarray:
    """log P(chi2_dof > x) = log Q(dof/2, x/2), finite for every x.

    Q is the regularised upper incomplete gamma function; where it underflows (p < 1e-250) the
    asymptotic series log Q(a, z) = (a-1) log z - z - lgamma(a) + log(1 + (a-1)/z + (a-1)(a-2)/z^2)
    is used (relative error below 1e-6 there, z > 500).
    """
    x = np.asarray(x, dtype=float)
    a = np.broadcast_to(np.asarray(dof, dtype=float) / 2.0, x.shape)
    z = np.maximum(x, 0.0) / 2.0
    q = gammaincc(a, z)
    with np.errstate(divide="ignore"):
        out = np.log(q)
    tiny = q < 1e-250
    if tiny.any():
        at, zt = a[tiny], z[tiny]
        out[tiny] = ((at - 1.0) * np.log(zt) - zt - gammaln(at)
                     + np.log1p((at - 1.0) / zt + (at - 1.0) * (at - 2.0) / zt**2))
    return out


class Chi2Criterion:
    """The paper's chi-square heuristic -sum_i log p_i (module docstring) on a code matrix (the pool X).

    A missing cell (code -1) counts as one more category of its variable.  Variables with a
    single observed category have no test (p = 1) and add nothing.
    """

    name = "chi2"

    def __init__(self, codes: np.ndarray, cardinalities: Sequence[int]):
        codes = np.asarray(codes, dtype=np.int64)
        self.N, self.n = codes.shape
        cards = np.asarray(cardinalities, dtype=np.int64) + 1          # + the missing category
        self.width = int(cards.max()) if self.n else 1
        c = np.where(codes < 0, cards[None, :] - 1, codes)
        self.codes = c
        self.flat = c + (np.arange(self.n) * self.width)[None, :]      # index into (n, width) tables
        self._flatT = np.ascontiguousarray(self.flat.T)                # (n, N): fast gathers and sums
        freq = np.zeros((self.n, self.width))
        for i in range(self.n):
            freq[i, :cards[i]] = np.bincount(c[:, i], minlength=int(cards[i])) / self.N
        self.freq = freq
        self.seen = freq > 0
        self.dof = self.seen.sum(axis=1) - 1
        self.tested = self.dof >= 1
        self._inv_freq = np.where(self.seen, 1.0 / np.where(self.seen, freq, 1.0), 0.0)

    @classmethod
    def from_data(cls, data) -> "Chi2Criterion":
        return cls(data.codes, data.cardinalities)

    def _counts(self, idx) -> np.ndarray:
        return np.bincount(self.flat[np.asarray(idx, dtype=np.int64)].ravel(),
                           minlength=self.n * self.width).reshape(self.n, self.width).astype(float)

    def _objective(self, stat: np.ndarray) -> np.ndarray:
        """-sum_i log p_i from per-variable statistics (..., n)."""
        lp = _log_chi2_sf(stat, np.maximum(self.dof, 1))
        return -np.where(self.tested, lp, 0.0).sum(axis=-1)

    def statistics(self, idx) -> np.ndarray:
        """The chi-square statistic of every variable for subset ``idx``."""
        k = len(idx)
        O = self._counts(idx)
        return (O**2 * self._inv_freq).sum(axis=1) / k - k

    def value(self, idx) -> float:
        return float(self._objective(self.statistics(idx)))

    def values(self, subsets: np.ndarray) -> np.ndarray:
        subsets = np.atleast_2d(np.asarray(subsets, dtype=np.int64))
        R, k = subsets.shape
        out = np.empty(R)
        for a in range(R):
            out[a] = self.value(subsets[a])
        return out

    def start(self, idx: np.ndarray) -> float:
        self._k = len(idx)
        self._O = self._counts(idx)
        return self._current()

    def _current(self) -> float:
        k = self._k
        return float(self._objective((self._O**2 * self._inv_freq).sum(axis=1) / k - k))

    def swap_scores(self, o: int) -> np.ndarray:
        k = self._k
        Om = self._O.copy()
        Om.ravel()[self.flat[o]] -= 1.0
        # with E_v = k f_v:  stat(+v) = (sum_c Om_c^2 / f_c + 2 Om_v / f_v + 1 / f_v) / k - k
        base = (Om**2 * self._inv_freq).sum(axis=1, keepdims=True)
        stat = (base + (2.0 * Om + 1.0) * self._inv_freq) / k - k                # (n, width)
        lp = _log_chi2_sf(stat, np.broadcast_to(np.maximum(self.dof, 1)[:, None], stat.shape))
        table = -np.where(self.tested[:, None] & self.seen, lp, 0.0)
        return table.ravel()[self._flatT].sum(axis=0)

    def swap(self, o: int, c: int) -> float:
        self._O.ravel()[self.flat[o]] -= 1.0
        self._O.ravel()[self.flat[c]] += 1.0
        return self._current()


# ====================================================================== greedy
@dataclass
class GreedyResult:
    """Outcome of :func:`greedy_swap`."""

    indices: np.ndarray
    value: float
    start_value: float
    swaps: int
    visits: int
    passes: float
    converged: bool
    seconds: float
    history: list = field(default_factory=list)     # criterion value after each swap


def greedy_swap(criterion, init, *, max_passes: int = 50, rtol: float = 1e-12,
                progress: Progress | None = None) -> GreedyResult:
    """Algorithm 1: member-by-member best swaps until k visits in a row change nothing.

    ``criterion`` provides ``start(idx)``, ``swap_scores(o)`` (criterion after replacing row ``o``
    by every row) and ``swap(o, c)``, optionally ``best_swap(o, member)`` (the best non-member and
    its value in one fused pass); current members are never candidates.  A swap must lower
    the criterion by more than ``rtol`` times its value (floating-point ties do not cycle).
    ``max_passes`` bounds the visits at ``max_passes * k`` (``converged`` says whether it
    stopped on its own).
    """
    t0 = time.perf_counter()
    S = np.array(init, dtype=np.int64).copy()
    k = len(S)
    N = criterion.N
    if k < 1 or k >= N:
        raise PrototypeError(f"The subset size must be between 1 and {N - 1} (the rows minus one), got {k}.")
    if len(np.unique(S)) != k or S.min() < 0 or S.max() >= N:
        raise PrototypeError("The starting subset must hold distinct row indices of the data.")
    member = np.zeros(N, dtype=bool)
    member[S] = True
    cur = start = criterion.start(S)
    history = []
    quiet, visits, swaps, t = 0, 0, 0, 0
    limit = int(max_passes) * k
    while quiet < k and visits < limit:
        o = int(S[t])
        if hasattr(criterion, "best_swap"):
            c, best = criterion.best_swap(o, member)
        else:
            scores = criterion.swap_scores(o)
            scores[member] = np.inf
            c = int(np.argmin(scores))
            best = scores[c]
        if c >= 0 and best < cur - rtol * max(abs(cur), 1e-300):
            cur = criterion.swap(o, c)
            member[o], member[c] = False, True
            S[t] = c
            swaps += 1
            history.append(cur)
            quiet = 0
        else:
            quiet += 1
        visits += 1
        t = (t + 1) % k
        if progress is not None and visits % max(1, k // 20) == 0:
            progress(min(visits / limit, 0.999), f"{criterion.name}: pass {visits / k:.1f}, {swaps} swaps, "
                                                  f"value {cur:.6g}")
    if progress is not None:
        progress(1.0, f"{criterion.name}: {swaps} swaps in {visits / k:.1f} passes")
    return GreedyResult(S, float(cur), float(start), swaps, visits, visits / k, quiet >= k,
                        time.perf_counter() - t0, history)


def random_subsets(N: int, k: int, R: int, seed=0) -> np.ndarray:
    """R subsets of k distinct rows out of N, shape (R, k) (``numpy.random.default_rng(seed)``)."""
    if k < 1 or k > N:
        raise PrototypeError(f"The subset size must be between 1 and {N} (the rows), got {k}.")
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(N, size=k, replace=False) for _ in range(int(R))]) if R else np.zeros((0, k), np.int64)


# ====================================================================== one selection
@dataclass
class PrototypeResult:
    """Outcome of :func:`select_prototypes` (``indices`` are rows of the data passed in)."""

    indices: np.ndarray
    criterion: str
    mmd: float
    chi2: float
    start_value: float | None
    value: float
    swaps: int
    passes: float
    converged: bool
    seconds: float
    seconds_start: float
    n_init: int

    def to_dict(self) -> dict:
        return {"indices": [int(i) for i in self.indices], "criterion": self.criterion, "k": len(self.indices),
                "mmd": self.mmd, "chi2": self.chi2, "value": self.value, "start_value": self.start_value,
                "swaps": self.swaps, "passes": self.passes, "converged": self.converged,
                "seconds": self.seconds, "seconds_start": self.seconds_start, "n_init": self.n_init}


def _check_k(k, N):
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise PrototypeError(f"The subset size k must be a whole number, got {k!r}.")
    if k < 1 or k >= N:
        raise PrototypeError(f"The subset size k must be between 1 and {N - 1} (the data has {N} rows), got {k}.")


def select_prototypes(model, data, k: int, criterion: str = "mmd", *, init=None, n_init: int = 100,
                      seed: int = 0, max_passes: int = 50, progress: Progress | None = None,
                      mmd_criterion: MMDCriterion | None = None) -> PrototypeResult:
    """Choose k representative rows of ``data`` under ``model`` (module docstring).

    Parameters
    ----------
    model : BayesNet (its Fisher kernel defines ``mmd``; ``data`` is aligned to it)
    data : CategoricalData, the pool X
    k : subset size, 1 <= k < N
    criterion : ``mmd``, ``chi2`` or ``random``
    init : starting subset (row indices); default: the best of ``n_init`` random subsets by the criterion
    seed : seeds the random subsets
    mmd_criterion : a prebuilt :class:`MMDCriterion` for ``data`` (saves the feature computation)
    """
    criterion = str(criterion).lower()
    if criterion not in CRITERIA:
        raise PrototypeError(f"Unknown criterion '{criterion}'; choose one of {', '.join(CRITERIA)}.")
    data = model.align(data)
    N = data.n_rows
    _check_k(k, N)
    mc = mmd_criterion if mmd_criterion is not None else MMDCriterion.from_model(model, data)
    cc = Chi2Criterion.from_data(data)
    crit = {"mmd": mc, "chi2": cc}.get(criterion)
    t0 = time.perf_counter()
    if init is not None:
        start = np.asarray(init, dtype=np.int64)
        if start.shape != (k,) or len(np.unique(start)) != k or start.min() < 0 or start.max() >= N:
            raise PrototypeError(f"The starting subset must hold {k} distinct row numbers between 0 and {N - 1}.")
        n_used = 0
    else:
        n_used = 1 if criterion == "random" else max(int(n_init), 1)
        cands = random_subsets(N, k, n_used, seed)
        start = cands[int(np.argmin(crit.values(cands)))] if crit is not None else cands[0]
    t_start = time.perf_counter() - t0
    if crit is None:
        res = None
        idx = start
    else:
        res = greedy_swap(crit, start, max_passes=max_passes, progress=progress)
        idx = res.indices
    return PrototypeResult(indices=idx, criterion=criterion, mmd=mc.value(idx), chi2=cc.value(idx),
                           start_value=None if res is None else res.start_value,
                           value=mc.value(idx) if res is None else res.value,
                           swaps=0 if res is None else res.swaps, passes=0.0 if res is None else res.passes,
                           converged=True if res is None else res.converged,
                           seconds=0.0 if res is None else res.seconds, seconds_start=t_start, n_init=n_used)


def feature_embedding(Phi, n_components: int = 2, seed: int = 0) -> np.ndarray:
    """Kernel PCA of the Fisher kernel without a Gram matrix: truncated SVD of the centred features.

    Returns the (N, n_components) scores U_k S_k of (Phi - mean Phi), i.e. the projections of the
    centred rows on the top principal axes of the kernel's feature space (the same as the top
    eigenvectors of the centred Gram matrix scaled by the square roots of their eigenvalues).
    Signs are fixed so that the largest-magnitude score of each axis is positive.
    """
    Phi = sp.csr_matrix(Phi, dtype=np.float64)
    N, D = Phi.shape
    k = int(n_components)
    if N < 2 or D < 1:
        return np.zeros((N, k))
    mu = np.asarray(Phi.mean(axis=0)).ravel()
    if D <= 400 or min(N, D) <= k + 1:
        # small feature space: eigenvectors of the D x D scatter matrix (Phi - mu)^T (Phi - mu)
        C = (Phi.T @ Phi).toarray() - N * np.outer(mu, mu)
        w, V = np.linalg.eigh((C + C.T) / 2)
        V = V[:, ::-1][:, :k]
        Y = Phi @ V - mu @ V
    else:
        ones = np.ones(N)
        op = LinearOperator((N, D), dtype=np.float64,
                            matvec=lambda x: Phi @ np.ravel(x) - ones * (mu @ np.ravel(x)),
                            rmatvec=lambda y: Phi.T @ np.ravel(y) - mu * np.ravel(y).sum())
        v0 = np.random.default_rng(seed).standard_normal(min(N, D))
        U, S, _ = svds(op, k=k, v0=v0)
        order = np.argsort(S)[::-1]
        Y = U[:, order] * S[order]
    if Y.shape[1] < k:
        Y = np.hstack([Y, np.zeros((N, k - Y.shape[1]))])
    flip = np.sign(Y[np.argmax(np.abs(Y), axis=0), np.arange(k)])
    return Y * np.where(flip == 0, 1.0, flip)


@dataclass
class SummarizationExperiment:
    """The k-independent part of the data-summarization experiment (see :func:`prepare_summarization`)."""

    structure: str
    class_column: str | None
    train_rows: np.ndarray          # row numbers of the training half in the original data
    test_rows: np.ndarray
    train: object                   # CategoricalData aligned to ``model``
    model: object                   # BayesNet fitted on the training half (pseudo-count one)
    mmd: MMDCriterion
    chi2: Chi2Criterion
    held: HeldOut
    full: dict                      # held-out metrics of the full training half
    seed: int
    seconds: dict


def prepare_summarization(data, structure: str = "hc", *, dag=None, class_column: str | None = None,
                       test_fraction: float = 0.5, seed: int = 0, kdb_k: int = 3,
                       progress: Progress | None = None) -> SummarizationExperiment:
    """Split, learn the structure on the training half, fit it, build the criteria and the evaluator.

    ``hc`` treats the class as any other variable (BIC, the paper's Fig. 1) and is evaluated by
    the held-out NLL only; ``tan`` and ``kdb`` (K = ``kdb_k``) need ``class_column`` (default
    ``data.class_column``) and also report the class's error rate and log loss.  ``dag`` (a
    :class:`~bnfk_core.dag.DAG` over some of the columns) skips learning: ``structure`` becomes
    ``"given"`` and the class metrics are reported when the DAG contains the class column.
    """

    cls = class_column if class_column is not None else data.class_column
    if cls is not None and cls not in data.variables:
        raise PrototypeError(f"Class column '{cls}' is not one of the columns of {data.source}.")
    if dag is not None:
        structure = "given"
        missing = [v for v in dag.nodes if v not in data.variables]
        if missing:
            raise PrototypeError(f"Column '{missing[0]}' of the structure is not in {data.source}.")
        classify = cls is not None and cls in dag.nodes
    else:
        structure = str(structure).lower()
        if structure not in SUMMARIZATION_STRUCTURES:
            raise PrototypeError(f"Unknown structure '{structure}'; choose one of {', '.join(SUMMARIZATION_STRUCTURES)}.")
        if structure in ("tan", "kdb") and cls is None:
            raise PrototypeError(f"Structure '{structure}' needs a class column (--class-column).")
        classify = structure != "hc"
    tr, te = split_half(data.n_rows, test_fraction, seed)
    train, test = data.subset(tr), data.subset(te)
    seconds = {}
    if progress is not None:
        progress(0.0, f"learning {structure} on {train.n_rows} training rows")
    t0 = time.perf_counter()
    if dag is None:
        dag = learn_structure(train, structure, score="bic", class_column=cls if classify else None,
                              k=kdb_k, seed=seed).dag
    seconds["learn"] = time.perf_counter() - t0
    model = fit(dag, train, method="smoothed", pseudo_count=1.0)
    train = model.align(train)
    if progress is not None:
        progress(0.5, "Fisher features of the training half")
    t0 = time.perf_counter()
    parent_marginals(model)
    mc = MMDCriterion.from_model(model, train)
    seconds["kernel"] = time.perf_counter() - t0
    cc = Chi2Criterion.from_data(train)
    held = HeldOut(dag, test, class_column=cls if classify else None)
    if progress is not None:
        progress(1.0, "ready")
    return SummarizationExperiment(structure, cls if classify else None, tr, te, train, model, mc, cc, held,
                      held.evaluate(train.codes), int(seed), seconds)


def run_summarization(exp: SummarizationExperiment, k: int, *, random_draws: int = 1000, criteria: Sequence[str] = CRITERIA,
                   seed: int | None = None, progress: Progress | None = None,
                   return_details: bool = False) -> dict:
    """One k of the experiment: R random subsets (baseline and starting points), greedy MMD and chi-square.

    Returns ``{"full", "mmd", "chi2", "random", "seconds"}`` (see :func:`summarize_benchmark`).
    With ``return_details`` also ``details``: the random subsets' NLL and MMD and the selected rows
    (row numbers of the original data).
    """
    criteria = [str(c).strip().lower() for c in criteria]
    for c in criteria:
        if c not in CRITERIA:
            raise PrototypeError(f"Unknown criterion '{c}'; choose from {', '.join(CRITERIA)}.")
    if int(random_draws) < 1:
        raise PrototypeError(f"--random-draws must be at least 1, got {random_draws}.")
    _check_k(k, exp.train.n_rows)
    seed = exp.seed if seed is None else int(seed)
    train, mc, cc, held = exp.train, exp.mmd, exp.chi2, exp.held

    def report(f, msg):
        if progress is not None:
            progress(f, msg)

    out = {"structure": exp.structure, "k": int(k), "seed": seed, "train_rows": train.n_rows,
           "test_rows": len(exp.test_rows), "arcs": exp.model.dag.n_arcs, "random_draws": int(random_draws),
           "full": dict(exp.full)}
    seconds = dict(exp.seconds)
    report(0.0, f"{random_draws} random subsets")
    t0 = time.perf_counter()
    draws = random_subsets(train.n_rows, k, random_draws, seed)
    d_mmd = mc.values(draws)
    d_chi = cc.values(draws)
    seconds["random_draws"] = time.perf_counter() - t0
    details = {}
    if "random" in criteria:
        evals = held.evaluate_many(train.codes[draws])
        rnd = {}
        for key in evals[0]:
            v = np.array([e[key] for e in evals])
            rnd[f"{key}_mean"], rnd[f"{key}_std"] = float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0
        rnd["mmd_mean"], rnd["mmd_std"] = float(d_mmd.mean()), float(d_mmd.std())
        out["random"] = rnd
        details["random_nll"] = [e["nll"] for e in evals]
        details["random_rows"] = [int(r) for r in exp.train_rows[draws[0]]]
        details["random_mmd"] = d_mmd.tolist()
        if "error" in evals[0]:
            details["random_error"] = [e["error"] for e in evals]
            details["random_log_loss"] = [e["log_loss"] for e in evals]
    for name, crit, vals, f0 in (("mmd", mc, d_mmd, 0.2), ("chi2", cc, d_chi, 0.6)):
        if name not in criteria:
            continue
        report(f0, f"greedy {name}")
        best = draws[int(np.argmin(vals))]
        sub = None if progress is None else (lambda f, m, f0=f0: progress(f0 + 0.4 * f, m))
        res = greedy_swap(crit, best, progress=sub)
        seconds[f"greedy_{name}"] = res.seconds
        ev = held.evaluate(train.codes[res.indices])
        ev.update({"mmd": mc.value(res.indices), "chi2": cc.value(res.indices), "start_value": res.start_value,
                   "value": res.value, "swaps": res.swaps, "passes": res.passes, "converged": res.converged})
        out[name] = ev
        details[f"{name}_rows"] = [int(r) for r in exp.train_rows[res.indices]]
    out["seconds"] = seconds
    report(1.0, "done")
    if return_details:
        out["details"] = details
    return out


def summarize_benchmark(data, k: int, structure: str = "hc", *, class_column: str | None = None,
                        test_fraction: float = 0.5, random_draws: int = 1000,
                        criteria: Sequence[str] = CRITERIA, seed: int = 0, kdb_k: int = 3,
                        progress: Progress | None = None, return_details: bool = False) -> dict:
    """The paper's data-summarization experiment for one k (module docstring).

    Returns ``{"full": {...}, "mmd": {..., "mmd"}, "chi2": {...}, "random": {"nll_mean", "nll_std", ...},
    "seconds": {"learn", "kernel", "greedy_mmd", "greedy_chi2", "random_draws"}, ...}``; the metrics are
    ``nll`` and, for TAN/KDB, ``error`` and ``log_loss``.  The greedy searches start from the best
    of the ``random_draws`` random subsets by their criterion (as the paper).
    """
    criteria = [str(c).strip().lower() for c in criteria]
    for c in criteria:
        if c not in CRITERIA:
            raise PrototypeError(f"Unknown criterion '{c}'; choose from {', '.join(CRITERIA)}.")
    if int(random_draws) < 1:
        raise PrototypeError(f"--random-draws must be at least 1, got {random_draws}.")
    sub1 = None if progress is None else (lambda f, m: progress(0.1 * f, m))
    exp = prepare_summarization(data, structure, class_column=class_column, test_fraction=test_fraction,
                             seed=seed, kdb_k=kdb_k, progress=sub1)
    _check_k(k, exp.train.n_rows)
    sub2 = None if progress is None else (lambda f, m: progress(0.1 + 0.9 * f, m))
    out = {"dataset": data.source}
    out.update(run_summarization(exp, k, random_draws=random_draws, criteria=criteria, progress=sub2,
                              return_details=return_details))
    return out


# ====================================================================== reading a run
def selected_rows(result: dict, criterion: str) -> list[int]:
    """Row numbers (of the original data) that ``criterion`` chose in a :func:`run_summarization` result
    made with ``return_details``; for ``random`` the first of the random subsets."""
    return result["details"]["random_rows" if criterion == "random" else f"{criterion}_rows"]


def criterion_value(result: dict, criterion: str, metric: str) -> float:
    """``metric`` (``mmd``, ``nll``, ``error``, ``log_loss``) of the subset that ``criterion`` chose in a
    :func:`run_summarization` result with ``return_details`` (``random``: the first random subset)."""
    if criterion == "random":
        return result["details"][f"random_{metric}"][0]
    return result[criterion][metric]


def share_below(result: dict, criterion: str, metric: str = "nll") -> float:
    """The fraction of the random subsets whose ``metric`` is lower than that of ``criterion``'s subset."""
    return float(np.mean(np.array(result["details"][f"random_{metric}"]) < criterion_value(result, criterion, metric)))


def result_summary(result: dict, criterion: str) -> dict:
    """The JSON-ready part of a :func:`run_summarization` result (no per-draw details) and the selection."""
    out = {key: result[key] for key in ("k", "structure", "full", "random", "mmd", "chi2", "seconds") if key in result}
    out["selected"] = {"criterion": criterion, "rows": selected_rows(result, criterion)}
    return out


def selected_table(data, rows: Sequence[int]) -> pd.DataFrame:
    """The chosen rows of ``data`` with their row number first."""
    return data.frame.iloc[list(rows)].assign(row=list(rows))[["row"] + list(data.variables)]


def default_subset_sizes(n_train: int) -> list[int]:
    """Five subset sizes for a curve over k: 20 %, 40 %, ..., 100 % of min(1000, half the training rows)."""
    hi = max(2, min(1000, n_train // 2))
    return sorted({max(1, int(round(hi * f))) for f in (0.2, 0.4, 0.6, 0.8, 1.0)})


def parse_subset_sizes(text: str, n_train: int) -> list[int]:
    """Distinct sorted subset sizes from ``"10, 20; 30"``; each must lie in 1 .. n_train - 1."""
    try:
        ks = sorted({int(x) for x in str(text).replace(";", ",").split(",") if x.strip()})
    except ValueError:
        raise PrototypeError(f"Subset sizes must be whole numbers separated by commas, got '{text}'.") from None
    bad = [x for x in ks if not 1 <= x < n_train]
    if bad:
        raise PrototypeError(f"Subset size {bad[0]} is outside 1..{n_train - 1} "
                             f"(the training half has {n_train} rows).")
    return ks


def curve_table(curve: Sequence[dict], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per k of a list of :func:`run_summarization` results: the full training half's, the random
    subsets' (mean, sd) and the greedy subsets' ``metrics`` (and MMD), and the greedy MMD search's seconds."""
    metrics = list(metrics)
    return pd.DataFrame([{"k": r["k"], **{f"full_{m}": r["full"][m] for m in metrics},
                          **{f"random_{m}_mean": r["random"][f"{m}_mean"] for m in metrics},
                          **{f"random_{m}_std": r["random"][f"{m}_std"] for m in metrics},
                          **{f"{c}_{m}": r[c][m] for c in ("mmd", "chi2") for m in metrics + ["mmd"]},
                          "seconds_greedy_mmd": r["seconds"]["greedy_mmd"]} for r in curve])


def map_sample(train_rows: np.ndarray, chosen: Sequence[int], max_rows: int = 2000,
               seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Positions (into ``train_rows``) of the ``chosen`` row numbers, and of at most ``max_rows`` of the
    other rows (a seeded uniform sample, sorted; all of them when there are few enough)."""
    pos = {int(r): j for j, r in enumerate(train_rows)}
    js = np.array([pos[int(r)] for r in chosen], dtype=np.int64)
    others = np.setdiff1d(np.arange(len(train_rows)), js)
    if len(others) > max_rows:
        others = np.sort(np.random.default_rng(seed).choice(others, max_rows, replace=False))
    return js, others


def compare_prototypes(models: Sequence, data, k: int, *, seed: int = 0) -> dict:
    """Greedy-MMD prototypes of ``data`` under each model's Fisher kernel, and each set's MMD² under each kernel.

    Returns ``{"sets": [sorted row indices per model], "mmd": M}`` with ``M[a][b]`` the squared MMD
    (:func:`bnfk_core.kernels.mmd`) of set ``a`` to ``data`` under model ``b``'s kernel.
    """
    sets = [np.sort(select_prototypes(m, data, k, "mmd", seed=seed).indices) for m in models]
    mmd = [[kernel_mmd(m, data.subset(s), data) for m in models] for s in sets]
    return {"sets": [s.tolist() for s in sets], "mmd": mmd}


def row_labels(data, rows) -> tuple[np.ndarray, tuple]:
    """Class codes of ``rows`` of ``data`` (−1 for a missing class; all −1 without a class column) and the
    class states (empty without a class column)."""
    rows = np.asarray(rows, dtype=np.int64)
    if data.class_column is None:
        return np.full(len(rows), -1), ()
    ci = data.index(data.class_column)
    return data.codes[rows, ci], tuple(data.states[ci])


def summarization_curve(exp: SummarizationExperiment, ks: Sequence[int], *, random_draws: int = 1000,
                        progress: Progress | None = None,
                        run_one: Callable[[int], dict] | None = None) -> list[dict]:
    """The experiment for every subset size in ``ks`` (the paper's Fig. 1 over k): a list of
    :func:`run_summarization` results with details, in the order of ``ks``.

    ``run_one(k)`` replaces the default ``run_summarization(exp, k, random_draws=random_draws,
    return_details=True)`` (e.g. a cached version of it); ``progress(fraction, message)`` is told
    before each k and at the end.
    """
    if run_one is None:
        def run_one(k):
            return run_summarization(exp, int(k), random_draws=random_draws, return_details=True)
    out = []
    for j, k in enumerate(ks):
        if progress is not None:
            progress(j / len(ks), f"k = {k} ({j + 1} of {len(ks)})")
        out.append(run_one(k))
    if progress is not None:
        progress(1.0, "Done")
    return out
