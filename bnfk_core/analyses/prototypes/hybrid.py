"""Prototypes of a mixed table under the Fisher kernel of a hybrid (CLG) network: Algorithm 1's greedy MMD on
the explicit hybrid features (:func:`bnfk_core.kernels.hybrid_fisher_features`).

The MMD of a subset is |mean phi(X_S) - mean phi(X)|^2, linear in the features, so the discrete code's
:class:`~bnfk_core.analyses.prototypes.criteria.MMDCriterion` and :func:`~.search.greedy_swap` run unchanged
on them.  The chi-square criterion counts discrete states and has no meaning for a number: it is refused.
"""

from __future__ import annotations

import time

import numpy as np

from ...errors import PrototypeError
from .criteria import MMDCriterion
from .search import PrototypeResult, check_subset_size, greedy_swap, random_subsets

__all__ = ["HYBRID_CRITERIA", "select_hybrid_prototypes"]

#: the criteria a hybrid network's prototypes are chosen by
HYBRID_CRITERIA = ("mmd", "random")


def select_hybrid_prototypes(
    model,
    data,
    k: int,
    criterion: str = "mmd",
    *,
    n_init: int = 100,
    seed: int = 0,
    max_passes: int = 50,
    progress=None,
) -> PrototypeResult:
    """Choose k representative rows of a mixed table under a hybrid network's Fisher kernel.

    Parameters
    ----------
    model : HybridNet
    data : MixedData
    k : int
        1 <= k < N.
    criterion : {"mmd", "random"}
    n_init : int
        Random subsets (``numpy.random.default_rng(seed)``) the start is the best of (by MMD).
    seed : int
    max_passes : int
    progress : callable, optional

    Returns
    -------
    PrototypeResult
        ``chi2`` is None (no chi-square objective over numbers).

    References
    ----------
    The bnfk paper, Algorithm 1 and eq. 10 (MMD from mean features).
    """
    from ...kernels import hybrid_fisher_features

    if criterion not in HYBRID_CRITERIA:
        raise PrototypeError(
            f"Criterion '{criterion}' counts discrete states; a hybrid network's prototypes are chosen by "
            f"{' or '.join(HYBRID_CRITERIA)}."
        )
    data = model.align(data)
    check_subset_size(k, data.n_rows)
    crit = MMDCriterion(hybrid_fisher_features(model, data))
    t0 = time.perf_counter()
    n_used = int(n_init) if criterion == "mmd" else 1
    cands = random_subsets(data.n_rows, k, n_used, seed)
    start = cands[int(np.argmin(crit.values(cands)))]
    t_start = time.perf_counter() - t0
    res = greedy_swap(crit, start, max_passes=max_passes, progress=progress) if criterion == "mmd" else None
    idx = start if res is None else res.indices
    value = crit.value(idx)
    return PrototypeResult(
        indices=idx,
        criterion=criterion,
        mmd=value,
        chi2=None,
        start_value=None if res is None else res.start_value,
        value=value if res is None else res.value,
        swaps=0 if res is None else res.swaps,
        passes=0.0 if res is None else res.passes,
        converged=True if res is None else res.converged,
        seconds=0.0 if res is None else res.seconds,
        seconds_start=t_start,
        n_init=n_used,
    )
