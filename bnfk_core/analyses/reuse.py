"""Analyses on a :class:`bnfk_core.kernels.live.LiveKernel`: what each reuses after an arc edit.

* :func:`cluster_live` -- correlation clustering of the live Gram matrix, warm-started from the previous
  structure's partition (``init_labels`` of
  :func:`~bnfk_core.analyses.cluster.clustering.correlation_clustering`:
  the first restart starts there, the others are the thesis protocol's; ``previous=None`` is the thesis
  protocol itself, equal to clustering a from-scratch Gram matrix).
* :func:`prototypes_live` -- greedy MMD prototypes (paper Algorithm 1) on the live features (per-family
  blocks reused), restarting the swaps from the previous selection; equal to
  :func:`~bnfk_core.analyses.prototypes.selection.select_prototypes` on the from-scratch model with
  ``init=previous``.
* :func:`impute_bn_live` -- BN imputation; after an edit only the rows with a missing cell in a
  re-estimated family are re-inferred (for the others every changed CPT factor is a constant of the
  row and cancels from its posterior); equal to :func:`~bnfk_core.analyses.impute.core.impute_bn` on the
  from-scratch model.
"""

from __future__ import annotations

import time

import numpy as np

from ..kernels.live import LiveKernel
from .cluster.clustering import correlation_clustering
from .impute.core import Imputation
from .prototypes.criteria import KernelColumns, MMDCriterion
from .prototypes.search import select_prototypes

__all__ = ["cluster_live", "impute_bn_live", "prototypes_live"]


def impute_bn_live(lk: LiveKernel, data=None):
    """BN imputation (:func:`bnfk_core.analyses.impute.core.impute_bn`) with the live network: the exact
    posterior of every missing cell, re-inferring after an edit only the rows whose missing cells lie in a
    re-estimated family (:meth:`LiveKernel.posterior`).  Cell indices refer to ``data``'s columns
    (default: the live kernel's own)."""
    t0 = time.perf_counter()
    post = lk.posterior()
    cols = lk.data.variables if data is None else data.variables
    cells = {cols.index(lk.model.variables[m]): v for m, v in post.items()}
    return Imputation(
        "bn",
        cells,
        model=lk.model,
        seconds=time.perf_counter() - t0,
        notes=[
            (
                f"re-inferred {lk.posterior_stats.get('reinferred', 0)} of "
                f"{lk.posterior_stats.get('rows', 0)} incomplete rows"
            )
        ],
    )


def cluster_live(
    lk: LiveKernel,
    n_clusters: int,
    *,
    previous=None,
    restarts: int = 25,
    seed: int = 0,
    kernel: str = "fisher",
):
    """Correlation clustering of the live Gram matrix, warm-started from ``previous`` labels (the partition of
    the structure before the edit; see :func:`bnfk_core.analyses.cluster.clustering.correlation_clustering`,
    ``init_labels``).  ``previous=None`` is the thesis protocol."""
    init = None
    if previous is not None:
        init = np.asarray(previous, dtype=np.int64)
        if init.max(initial=0) >= n_clusters:  # renumbered labels of a run with more clusters
            init = np.minimum(init, n_clusters - 1)
    return correlation_clustering(
        lk.gram(), n_clusters, restarts=restarts, seed=seed, shift="auto", kernel=kernel, init_labels=init
    )


def prototypes_live(
    lk: LiveKernel,
    k: int,
    *,
    previous=None,
    criterion: str = "mmd",
    n_init: int = 100,
    seed: int = 0,
    max_passes: int = 50,
):
    """Greedy MMD prototypes (:func:`bnfk_core.analyses.prototypes.selection.select_prototypes`, paper
    Algorithm 1) under the live network: features from :meth:`LiveKernel.features` (per-family blocks reused),
    and with ``previous`` (the selection under the structure before the edit) the swaps restart from it
    instead of the best of ``n_init`` random subsets."""
    cols = None if lk.has_missing else KernelColumns(lk.model, lk.codes)
    mc = MMDCriterion(lk.features(), cols)
    return select_prototypes(
        lk.model,
        lk.data,
        k,
        criterion,
        init=previous,
        n_init=n_init,
        seed=seed,
        max_passes=max_passes,
        mmd_criterion=mc,
    )
