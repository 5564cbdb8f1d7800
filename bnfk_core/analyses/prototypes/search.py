"""Choosing prototypes: Algorithm 1's greedy swaps, random subsets, one selection, and the kernel-PCA map of
the features (paper, Algorithm 1).

Greedy swaps (Algorithm 1).  Start from a given subset or from the best of R random ones; visit
the k members in turn and replace each by the non-member that lowers the criterion most (if it
lowers it at all); stop once k members in a row were visited without a change -- then every
member has been checked against the current subset, which is therefore a local optimum: no
single swap improves it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, svds

from ...errors import PrototypeError
from ...registry import CRITERIA
from .criteria import Chi2Criterion, MMDCriterion

__all__ = [
    "GreedyResult",
    "greedy_swap",
    "random_subsets",
    "PrototypeResult",
    "check_subset_size",
    "select_prototypes",
    "feature_embedding",
]

Progress = Callable[[float, str], None]


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
    history: list = field(default_factory=list)  # criterion value after each swap


def greedy_swap(
    criterion, init, *, max_passes: int = 50, rtol: float = 1e-12, progress: Progress | None = None
) -> GreedyResult:
    """Algorithm 1: member-by-member best swaps until k visits in a row change nothing.

    ``criterion`` provides ``start(idx)``, ``swap_scores(o)`` (criterion after replacing row ``o``
    by every row) and ``swap(o, c)``, optionally ``best_swap(o, member)`` (the best non-member and
    its value in one fused pass); current members are never candidates.  A swap must lower
    the criterion by more than ``rtol`` times its value (floating-point ties do not cycle).
    ``max_passes`` bounds the visits at ``max_passes * k`` (``converged`` says whether it
    stopped on its own).

    Parameters
    ----------
    criterion : object
        A criterion of :data:`bnfk_core.registry.CRITERIA` built on the pool (smaller is better).
    init : sequence of int
        The starting subset X_S (k row indices).
    max_passes : int
    rtol : float
    progress : callable, optional

    Returns
    -------
    GreedyResult
        The final subset, its criterion value (and the starting one), the swaps and visits made and whether it
        converged.

    Raises
    ------
    PrototypeError
        A starting subset that is not distinct rows, or of a size out of range.

    References
    ----------
    The bnfk paper, "Greedy algorithm for optimizing MMD", Algorithm 1.
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
            progress(
                min(visits / limit, 0.999),
                f"{criterion.name}: pass {visits / k:.1f}, {swaps} swaps, value {cur:.6g}",
            )
    if progress is not None:
        progress(1.0, f"{criterion.name}: {swaps} swaps in {visits / k:.1f} passes")
    return GreedyResult(
        S, float(cur), float(start), swaps, visits, visits / k, quiet >= k, time.perf_counter() - t0, history
    )


def random_subsets(N: int, k: int, R: int, seed=0) -> np.ndarray:
    """R subsets of k distinct rows out of N, shape (R, k) (``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    N, k, R : int
    seed : int

    Returns
    -------
    ndarray of int, shape (R, k)

    Raises
    ------
    PrototypeError
        When k is not in 1 .. N.
    """
    if k < 1 or k > N:
        raise PrototypeError(f"The subset size must be between 1 and {N} (the rows), got {k}.")
    rng = np.random.default_rng(seed)
    return (
        np.stack([rng.choice(N, size=k, replace=False) for _ in range(int(R))])
        if R
        else np.zeros((0, k), np.int64)
    )


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
        """The result as JSON-ready values.

        Returns
        -------
        dict
        """
        return {
            "indices": [int(i) for i in self.indices],
            "criterion": self.criterion,
            "k": len(self.indices),
            "mmd": self.mmd,
            "chi2": self.chi2,
            "value": self.value,
            "start_value": self.start_value,
            "swaps": self.swaps,
            "passes": self.passes,
            "converged": self.converged,
            "seconds": self.seconds,
            "seconds_start": self.seconds_start,
            "n_init": self.n_init,
        }


def check_subset_size(k, N):
    """Refuse a subset size that is not a whole number in 1 .. N - 1.

    Parameters
    ----------
    k : int
    N : int
        Rows of the data.

    Raises
    ------
    PrototypeError
        Naming ``k``.
    """
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise PrototypeError(f"The subset size k must be a whole number, got {k!r}.")
    if k < 1 or k >= N:
        raise PrototypeError(
            f"The subset size k must be between 1 and {N - 1} (the data has {N} rows), got {k}."
        )


def select_prototypes(
    model,
    data,
    k: int,
    criterion: str = "mmd",
    *,
    init=None,
    n_init: int = 100,
    seed: int = 0,
    max_passes: int = 50,
    progress: Progress | None = None,
    mmd_criterion: MMDCriterion | None = None,
) -> PrototypeResult:
    """Choose k representative rows of ``data`` under ``model`` (module docstring).

    Parameters
    ----------
    model : BayesNet (its Fisher kernel defines ``mmd``; ``data`` is aligned to it)
    data : CategoricalData, the pool X
    k : subset size, 1 <= k < N
    criterion : a name of :data:`bnfk_core.registry.CRITERIA` (``mmd``, ``chi2`` or ``random``)
    init : starting subset (row indices); default: the best of ``n_init`` random subsets by the criterion
    n_init : random subsets the default start is the best of
    seed : seeds the random subsets
    max_passes, progress : of :func:`greedy_swap`
    mmd_criterion : a prebuilt :class:`MMDCriterion` for ``data`` (saves the feature computation)

    Returns
    -------
    PrototypeResult
        The selected rows, the criterion's value, the subset's MMD (eq. 10) and chi-square objective, and how
        the search went (swaps, passes, convergence, seconds).

    Raises
    ------
    PrototypeError
        ``k`` out of range, an unknown criterion or a starting subset that is not k distinct rows.

    References
    ----------
    The bnfk paper, Algorithm 1 and "Data summarization" (greedy MMD, the chi-square heuristic, random
    subsets).
    """
    criterion = str(criterion).lower()
    if criterion not in CRITERIA:
        raise PrototypeError(f"Unknown criterion '{criterion}'; choose one of {', '.join(CRITERIA)}.")
    CRITERIA.validate(criterion, {"n_init": n_init, "seed": seed, "max_passes": max_passes})
    data = model.align(data)
    N = data.n_rows
    check_subset_size(k, N)
    mc = mmd_criterion if mmd_criterion is not None else MMDCriterion.from_model(model, data)
    cc = Chi2Criterion.from_data(data)
    spec = CRITERIA[criterion]
    built = {MMDCriterion.name: mc, Chi2Criterion.name: cc}  # both are reported, whichever chooses
    crit = None if spec.criterion is None else built.get(criterion) or spec.criterion(model, data)
    t0 = time.perf_counter()
    if init is not None:
        start = np.asarray(init, dtype=np.int64)
        if start.shape != (k,) or len(np.unique(start)) != k or start.min() < 0 or start.max() >= N:
            raise PrototypeError(
                f"The starting subset must hold {k} distinct row numbers between 0 and {N - 1}."
            )
        n_used = 0
    else:
        n_used = 1 if crit is None else int(n_init)
        cands = random_subsets(N, k, n_used, seed)
        start = cands[int(np.argmin(crit.values(cands)))] if crit is not None else cands[0]
    t_start = time.perf_counter() - t0
    if crit is None:
        res = None
        idx = start
    else:
        res = greedy_swap(crit, start, max_passes=max_passes, progress=progress)
        idx = res.indices
    return PrototypeResult(
        indices=idx,
        criterion=criterion,
        mmd=mc.value(idx),
        chi2=cc.value(idx),
        start_value=None if res is None else res.start_value,
        value=mc.value(idx) if res is None else res.value,
        swaps=0 if res is None else res.swaps,
        passes=0.0 if res is None else res.passes,
        converged=True if res is None else res.converged,
        seconds=0.0 if res is None else res.seconds,
        seconds_start=t_start,
        n_init=n_used,
    )


def feature_embedding(Phi, n_components: int = 2, seed: int = 0) -> np.ndarray:
    """Kernel PCA of the Fisher kernel without a Gram matrix: truncated SVD of the centred features.

    Returns the (N, n_components) scores U_k S_k of (Phi - mean Phi), i.e. the projections of the
    centred rows on the top principal axes of the kernel's feature space (the same as the top
    eigenvectors of the centred Gram matrix scaled by the square roots of their eigenvalues).
    Signs are fixed so that the largest-magnitude score of each axis is positive.

    Parameters
    ----------
    Phi : sparse or dense matrix, shape (N, D)
    n_components : int
    seed : int

    Returns
    -------
    ndarray, shape (N, n_components)
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
        op = LinearOperator(
            (N, D),
            dtype=np.float64,
            matvec=lambda x: Phi @ np.ravel(x) - ones * (mu @ np.ravel(x)),
            rmatvec=lambda y: Phi.T @ np.ravel(y) - mu * np.ravel(y).sum(),
        )
        v0 = np.random.default_rng(seed).standard_normal(min(N, D))
        U, S, _ = svds(op, k=k, v0=v0)
        order = np.argsort(S)[::-1]
        Y = U[:, order] * S[order]
    if Y.shape[1] < k:
        Y = np.hstack([Y, np.zeros((N, k - Y.shape[1]))])
    flip = np.sign(Y[np.argmax(np.abs(Y), axis=0), np.arange(k)])
    return Y * np.where(flip == 0, 1.0, flip)
