"""Prototype-selection criteria (paper, Algorithm 1 and "Experiments"; smaller is better for both):

* ``mmd`` -- the Fisher-kernel distance of paper eq. (10), d(X_S, X) = |mean phi(X_S) - mean phi(X)|^2;
* ``chi2`` -- the paper's chi-square heuristic, -sum_i log p_i, where p_i is the p value of a
  chi-square goodness-of-fit test of variable i's frequencies in X_S against the expected
  frequencies k * N_ic / N of X (degrees of freedom: the categories observed in X, minus one;
  a missing cell counts as one more category);
* ``random`` -- a uniformly random subset (the baseline).

Why it is fast.  With s = sum_{l in S} phi(x_l), mu = mean phi(X) and w = (s - phi(o))/k - mu,
swapping member o for candidate c gives

    d_new(c) = |w + phi(c)/k|^2 = |w|^2 + (2/k) phi(c).w + |phi(c)|^2 / k^2,

so *one sparse matrix-vector product* Phi w scores every candidate of one swap; no N x N Gram
matrix is built.  The chi-square statistic of a variable is sum_c O_c^2 / E_c - k; removing o
and adding c changes two counts, so the statistic after every possible swap is a table lookup
per variable and the p values are computed once per (variable, category), not per candidate.

Each criterion offers the greedy interface of :func:`bnfk_core.analyses.prototypes.search.greedy_swap`: ``N``,
``name``, ``value(idx)``, ``values(subsets)``, ``start(idx)``, ``swap_scores(o)`` (or the fused ``best_swap(o,
member)``) and ``swap(o, c)``.  They are registered in :data:`bnfk_core.registry.CRITERIA` (with ``random``,
the baseline) by :func:`mmd_criterion` and :func:`chi2_criterion`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np
import scipy.sparse as sp
from scipy.special import gammaincc, gammaln

from ...data.limits import guard_tables
from ...errors import PrototypeError
from ...inference.queries import parent_marginals
from ...kernels.features import features

__all__ = ["MMDCriterion", "Chi2Criterion", "KernelColumns", "log_chi2_sf", "mmd_criterion", "chi2_criterion"]


class MMDCriterion:
    """d(X_S, X) = |s/k - mu|^2 on explicit features ``Phi`` (rows = the pool X).

    ``mean``: the objective's mu when it is not the mean of ``Phi``'s rows (candidates drawn from a larger
    set, e.g. the complete rows of a file whose mean embedding counts every row;
    :mod:`bnfk_core.analyses.rowwise`).

    Columns no row uses are dropped (they are zero in every phi(x) and in mu).  The greedy
    interface keeps g = Phi (s/k - mu) up to date, so that scoring the removal of member o needs
    only the kernel column K(., o) = Phi phi(o): Phi w = g - K(., o)/k.  ``columns`` (a
    :class:`KernelColumns`) computes K(., o) from Theorem 1 in O(rows sharing o's parent
    configurations); without it K(., o) is one sparse matrix-vector product.
    """

    name = "mmd"
    refresh_every = 64  # recompute g exactly after this many swaps (no drift)

    def __init__(self, Phi, columns: KernelColumns | None = None, mean: np.ndarray | None = None):
        Phi = sp.csr_matrix(Phi, dtype=np.float64)
        used = np.unique(Phi.indices)
        if mean is not None:  # the objective's mean embedding of a larger set (candidates = Phi's rows)
            mean = np.asarray(mean, dtype=np.float64).ravel()
            if mean.shape[0] != Phi.shape[1]:
                raise PrototypeError(
                    f"The mean embedding has {mean.shape[0]} entries but the features have "
                    f"{Phi.shape[1]} columns."
                )
            used = np.union1d(used, np.flatnonzero(mean))
        self.Phi = Phi[:, used].tocsr()
        self.Phi.sort_indices()
        self.N = self.Phi.shape[0]
        self.mu = np.asarray(self.Phi.mean(axis=0)).ravel() if mean is None else mean[used]
        self.sq = np.asarray(self.Phi.multiply(self.Phi).sum(axis=1)).ravel()  # K(x, x)
        self._Phi_mu = self.Phi @ self.mu  # K-bar(x, X)
        self.columns = columns
        self._s = None

    @classmethod
    def from_model(cls, model, data) -> MMDCriterion:
        """The criterion on the Fisher features of ``data`` under ``model`` (paper, Theorem 1).

        Parameters
        ----------
        model : BayesNet
        data : CategoricalData

        Returns
        -------
        MMDCriterion
        """
        data = model.align(data)
        cols = KernelColumns(model, data.codes) if not data.has_missing else None
        return cls(features(model, data), cols)

    # -- whole subsets
    def _sums(self, idx: np.ndarray) -> np.ndarray:
        return np.asarray(self.Phi[idx].sum(axis=0)).ravel()

    def value(self, idx) -> float:
        """d(X_S, X) of one subset (paper, eq. (10)).

        Parameters
        ----------
        idx : sequence of int
            Row indices of X_S.

        Returns
        -------
        float
        """
        idx = np.asarray(idx, dtype=np.int64)
        d = self._sums(idx) / len(idx) - self.mu
        return float(d @ d)

    def values(self, subsets: np.ndarray, chunk: int = 64) -> np.ndarray:
        """d for every row of ``subsets`` (R, k), in chunks of sparse indicator products.

        Parameters
        ----------
        subsets : ndarray of int, shape (R, k)
        chunk : int
            Subsets per sparse product.

        Returns
        -------
        ndarray, shape (R,)
        """
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
        """K(x, x_o) for every row x.

        Parameters
        ----------
        o : int
            Row index.

        Returns
        -------
        ndarray, shape (N,)
        """
        if self.columns is not None:
            return self.columns(o)
        return self.Phi @ self._row(o)

    # -- incremental interface used by greedy_swap
    def start(self, idx: np.ndarray) -> float:
        """Begin a greedy search at the subset ``idx``.

        Parameters
        ----------
        idx : ndarray of int

        Returns
        -------
        float
            d of ``idx``.
        """
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
        """d after replacing member ``o`` by each row (members are masked by the caller).

        Parameters
        ----------
        o : int
            Current member.

        Returns
        -------
        ndarray, shape (N,)
        """
        k = self._k
        kc = self.kernel_column(o)
        self._col = (o, kc)
        ww = self._d - (2.0 / k) * self._g[o] + self.sq[o] / k**2  # |w|^2, w = (s - phi(o))/k - mu
        return ww + (2.0 / k) * (self._g - kc / k) + self.sq / k**2

    def best_swap(self, o: int, member: np.ndarray) -> tuple[int, float]:
        """(c, d after swapping o for c) of the best non-member c: :meth:`swap_scores` + argmin, fused.

        Parameters
        ----------
        o : int
            Current member.
        member : ndarray of bool, shape (N,)
            The current subset.

        Returns
        -------
        c : int
        d : float
        """
        k = self._k
        kc = self.kernel_column(o)
        self._col = (o, kc)
        ww = self._d - (2.0 / k) * self._g[o] + self.sq[o] / k**2
        c, val = _fused_argmin(self._g, kc, self.sq, member, ww, float(k))
        return int(c), float(val)

    def swap(self, o: int, c: int) -> float:
        """Replace member ``o`` by row ``c`` (after :meth:`start`).

        Parameters
        ----------
        o, c : int

        Returns
        -------
        float
            d of the new subset.
        """
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


class KernelColumns:
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
            starts[a, 1 : len(used) + 1] = np.cumsum(np.bincount(PC[:, a], minlength=len(used)))
            starts[a, len(used) + 1 :] = N
            P = pm.probs[i][used]
            theta = model.cpts[i][used]
            with np.errstate(divide="ignore"):
                W[a, : len(used), : theta.shape[1]] = 1.0 / (theta * P[:, None])
                B[a, : len(used)] = 1.0 / P
        self.args = (PC, np.ascontiguousarray(codes[:, keep]), order, starts, W, B)
        self.N = N

    def __call__(self, o: int) -> np.ndarray:
        out = np.empty(self.N)
        _column_kernel(int(o), *self.args, out)
        return out


def log_chi2_sf(x, dof) -> np.ndarray:
    """log P(chi2_dof > x) = log Q(dof/2, x/2), finite for every x.

    Q is the regularised upper incomplete gamma function; where it underflows (p < 1e-250) the
    asymptotic series log Q(a, z) = (a-1) log z - z - lgamma(a) + log(1 + (a-1)/z + (a-1)(a-2)/z^2)
    is used (relative error below 1e-6 there, z > 500).

    Parameters
    ----------
    x : array-like
        Statistics.
    dof : array-like
        Degrees of freedom (broadcast to ``x``).

    Returns
    -------
    ndarray
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
        out[tiny] = (
            (at - 1.0) * np.log(zt)
            - zt
            - gammaln(at)
            + np.log1p((at - 1.0) / zt + (at - 1.0) * (at - 2.0) / zt**2)
        )
    return out


class Chi2Criterion:
    """The paper's chi-square heuristic -sum_i log p_i (module docstring) on a code matrix (the pool X).

    A missing cell (code -1) counts as one more category of its variable.  Variables with a
    single observed category have no test (p = 1) and add nothing.

    References
    ----------
    The bnfk paper, "Data summarization": a chi-square test per variable of X_S's frequencies against X's,
    dof = observed categories - 1; the objective -sum_i log p_i is optimised by Algorithm 1.
    """

    name = "chi2"

    def __init__(self, codes: np.ndarray, cardinalities: Sequence[int]):
        codes = np.asarray(codes, dtype=np.int64)
        self.N, self.n = codes.shape
        cards = np.asarray(cardinalities, dtype=np.int64) + 1  # + the missing category
        self.width = int(cards.max()) if self.n else 1
        c = np.where(codes < 0, cards[None, :] - 1, codes)
        self.codes = c
        self.flat = c + (np.arange(self.n) * self.width)[None, :]  # index into (n, width) tables
        self._flatT = np.ascontiguousarray(self.flat.T)  # (n, N): fast gathers and sums
        freq = np.zeros((self.n, self.width))
        for i in range(self.n):
            freq[i, : cards[i]] = np.bincount(c[:, i], minlength=int(cards[i])) / self.N
        self.freq = freq
        self.seen = freq > 0
        self.dof = self.seen.sum(axis=1) - 1
        self.tested = self.dof >= 1
        self._inv_freq = np.where(self.seen, 1.0 / np.where(self.seen, freq, 1.0), 0.0)

    @classmethod
    def from_data(cls, data) -> Chi2Criterion:
        """The criterion on the pool ``data``.

        Parameters
        ----------
        data : CategoricalData

        Returns
        -------
        Chi2Criterion
        """
        return cls(data.codes, data.cardinalities)

    def _counts(self, idx) -> np.ndarray:
        return (
            np.bincount(self.flat[np.asarray(idx, dtype=np.int64)].ravel(), minlength=self.n * self.width)
            .reshape(self.n, self.width)
            .astype(float)
        )

    def _objective(self, stat: np.ndarray) -> np.ndarray:
        """-sum_i log p_i from per-variable statistics (..., n)."""
        lp = log_chi2_sf(stat, np.maximum(self.dof, 1))
        return -np.where(self.tested, lp, 0.0).sum(axis=-1)

    def statistics(self, idx) -> np.ndarray:
        """The chi-square statistic of every variable for subset ``idx``.

        Parameters
        ----------
        idx : sequence of int

        Returns
        -------
        ndarray, shape (n_vars,)
        """
        k = len(idx)
        O = self._counts(idx)
        return (O**2 * self._inv_freq).sum(axis=1) / k - k

    def value(self, idx) -> float:
        """-sum_i log p_i of one subset.

        Parameters
        ----------
        idx : sequence of int

        Returns
        -------
        float
        """
        return float(self._objective(self.statistics(idx)))

    def values(self, subsets: np.ndarray) -> np.ndarray:
        """Parameters
        ----------
        subsets : ndarray of int, shape (R, k)

        Returns
        -------
        ndarray, shape (R,)
        """
        subsets = np.atleast_2d(np.asarray(subsets, dtype=np.int64))
        R, k = subsets.shape
        out = np.empty(R)
        for a in range(R):
            out[a] = self.value(subsets[a])
        return out

    def start(self, idx: np.ndarray) -> float:
        """Begin a greedy search at the subset ``idx``.

        Parameters
        ----------
        idx : ndarray of int

        Returns
        -------
        float
        """
        self._k = len(idx)
        self._O = self._counts(idx)
        return self._current()

    def _current(self) -> float:
        k = self._k
        return float(self._objective((self._O**2 * self._inv_freq).sum(axis=1) / k - k))

    def swap_scores(self, o: int) -> np.ndarray:
        """The objective after replacing member ``o`` by each row (members are masked by the caller).

        Parameters
        ----------
        o : int

        Returns
        -------
        ndarray, shape (N,)
        """
        k = self._k
        Om = self._O.copy()
        Om.ravel()[self.flat[o]] -= 1.0
        # with E_v = k f_v:  stat(+v) = (sum_c Om_c^2 / f_c + 2 Om_v / f_v + 1 / f_v) / k - k
        base = (Om**2 * self._inv_freq).sum(axis=1, keepdims=True)
        stat = (base + (2.0 * Om + 1.0) * self._inv_freq) / k - k  # (n, width)
        lp = log_chi2_sf(stat, np.broadcast_to(np.maximum(self.dof, 1)[:, None], stat.shape))
        table = -np.where(self.tested[:, None] & self.seen, lp, 0.0)
        return table.ravel()[self._flatT].sum(axis=0)

    def swap(self, o: int, c: int) -> float:
        """Replace member ``o`` by row ``c`` (after :meth:`start`).

        Parameters
        ----------
        o, c : int

        Returns
        -------
        float
        """
        self._O.ravel()[self.flat[o]] -= 1.0
        self._O.ravel()[self.flat[c]] += 1.0
        return self._current()


def mmd_criterion(model, data) -> MMDCriterion:
    """The ``mmd`` member of :data:`bnfk_core.registry.CRITERIA`: :meth:`MMDCriterion.from_model`.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData

    Returns
    -------
    MMDCriterion
    """
    return MMDCriterion.from_model(model, data)


def chi2_criterion(model, data) -> Chi2Criterion:
    """The ``chi2`` member of :data:`bnfk_core.registry.CRITERIA`: :meth:`Chi2Criterion.from_data` (``data``
    aligned to ``model``).

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData

    Returns
    -------
    Chi2Criterion
    """
    return Chi2Criterion.from_data(model.align(data))
