"""Conditional independence tests and Markov blankets from the KGV (Bach & Jordan 2002, §5).

The variables are Gaussian in feature space (:mod:`bnfk_core.learning.kgv`), so the likelihood ratio criterion
of "x ⫫ y | z" is a power of the KGV mutual informations:

- statistic (§5, likelihood ratio criterion): N·Î(x; y | z) = N·[Î(x, (y, z)) − Î(x, z)]
  = −(N/2)·[log det R_xyz + log det R_z − log det R_xz − log det R_yz] (nats);
- threshold (§5): the value of the MDL/BIC criterion, (log N / 2)·d_x·d_y with d the effective dimensions of
  the two Gaussians -- adding y to the parents {z} of x raises the local score of eq. (4) by exactly
  N·Î(x; y | z) − (log N / 2)·d_x·d_y, so the test and the score make the same decision (§5, after Cowell);
- independent: statistic ≤ threshold.

Markov blankets (§5): for jointly Gaussian vectors x_i and x_j are independent given all the others iff the
block (i, j) of the inverse covariance is zero; in the sample the edge i – j of the undirected graph is kept
when the test of x_i ⫫ x_j | the rest rejects.  With P = R⁻¹,
Î(x_i; x_j | rest) = −½ log det(I − P_jj⁻¹ P_ji P_ii⁻¹ P_ij).  A directed search is then pruned to the graphs
whose moral graph the undirected graph covers: every family (child and parents) a clique of it
(``markov_blanket`` option of the ``kgv`` score).  The pruning is exact only where the tests find every edge
of the true moral graph: a missed edge (a weak spouse of a v-structure, or a non-linear dependence the finite
feature space blurs) removes graphs from the search, and the pruned optimum can then score lower.

With the linear kernel (κ → 0) the statistic is N times the Gaussian conditional mutual information
−½ log(1 − ρ²_{xy·z}) of the partial correlation (tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..data.limits import one_blas_thread

__all__ = [
    "conditional_kgv_mi",
    "ci_decision",
    "markov_blanket_graph",
    "family_is_covered",
]


def conditional_kgv_mi(stats, x: int, y: int, given: Sequence[int] = ()) -> float:
    """Î(x; y | z) = −½ [log det R_xyz + log det R_z − log det R_xz − log det R_yz] (nats, ≥ 0).

    Parameters
    ----------
    stats : KGVStatistics
        The regularised correlation blocks of the variables.
    x, y : int
        The two variables.
    given : sequence of int
        The conditioning set z (may be empty: the KGV mutual information of eq. 3).

    Returns
    -------
    float

    References
    ----------
    Bach & Jordan (2002), §5 (likelihood ratio criterion) and §3.6, eq. (3).
    """
    z = [int(v) for v in given]
    val = -0.5 * (stats.logdet([x, y, *z]) + stats.logdet(z) - stats.logdet([x, *z]) - stats.logdet([y, *z]))
    return max(float(val), 0.0)


def ci_decision(stats, x: int, y: int, given: Sequence[int] = ()) -> dict:
    """The §5 test of x ⫫ y | z on the statistics: statistic, threshold and decision.

    Parameters
    ----------
    stats : KGVStatistics
    x, y : int
    given : sequence of int

    Returns
    -------
    dict
        ``statistic`` (N·Î(x; y | z), nats), ``threshold`` ((log N / 2)·d_x·d_y), ``independent``
        (statistic ≤ threshold), ``mutual_information`` (Î(x; y | z)), ``d_x``, ``d_y``, ``n``.

    References
    ----------
    Bach & Jordan (2002), §5: the threshold of the MDL/BIC criterion.
    """
    mi = conditional_kgv_mi(stats, x, y, given)
    n = float(stats.n)
    stat = n * mi
    thr = 0.5 * math.log(n) * float(stats.d[x]) * float(stats.d[y])
    return {
        "statistic": stat,
        "threshold": thr,
        "independent": bool(stat <= thr),
        "mutual_information": mi,
        "d_x": float(stats.d[x]),
        "d_y": float(stats.d[y]),
        "n": n,
    }


def markov_blanket_graph(stats) -> np.ndarray:
    """The undirected graph of the §5 tests of x_i ⫫ x_j | all other variables, read from R⁻¹.

    Parameters
    ----------
    stats : KGVStatistics

    Returns
    -------
    numpy.ndarray
        Symmetric boolean adjacency: ``A[i, j]`` when N·Î(x_i; x_j | rest) > (log N / 2)·d_i·d_j.

    References
    ----------
    Bach & Jordan (2002), §5 (Markov blankets): the zero blocks of the inverse covariance.
    """
    n_vars = stats.n_vars
    A = np.zeros((n_vars, n_vars), dtype=bool)
    if n_vars < 2:
        return A
    with one_blas_thread():
        R = stats.blocks
        P = np.linalg.inv(R + 1e-12 * np.eye(len(R)))
        off = stats.offsets
        half_log_n = 0.5 * math.log(stats.n)
        for i in range(n_vars):
            a = slice(off[i], off[i + 1])
            if off[i + 1] == off[i]:
                continue
            Pii_inv = np.linalg.inv(P[a, a])
            for j in range(i + 1, n_vars):
                b = slice(off[j], off[j + 1])
                if off[j + 1] == off[j]:
                    continue
                M = np.linalg.solve(P[b, b], P[b, a] @ Pii_inv @ P[a, b])
                sign, logdet = np.linalg.slogdet(np.eye(M.shape[0]) - M)
                mi = max(-0.5 * logdet, 0.0) if sign > 0 else math.inf
                A[i, j] = A[j, i] = stats.n * mi > half_log_n * stats.d[i] * stats.d[j]
    return A


def family_is_covered(adjacency: np.ndarray, child: int, parents: Sequence[int]) -> bool:
    """The moral graph of the family lies in the undirected graph: child and parents are a clique of it.

    Parameters
    ----------
    adjacency : numpy.ndarray
        Boolean symmetric adjacency (:func:`markov_blanket_graph`).
    child : int
    parents : sequence of int

    Returns
    -------
    bool

    References
    ----------
    Bach & Jordan (2002), §5: "only considering directed models whose moral graph is covered by the
    undirected graph".
    """
    fam = [int(child), *(int(p) for p in parents)]
    if len(fam) < 2:
        return True
    sub = adjacency[np.ix_(fam, fam)]
    return bool(sub[~np.eye(len(fam), dtype=bool)].all())
