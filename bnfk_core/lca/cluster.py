"""Latent-class clustering (``lca`` in :data:`bnfk_core.registry.CLUSTERERS`): fit K = the number of clusters
classes and assign every row to its modal class; no Gram matrix."""

from __future__ import annotations

import time

import numpy as np

from ..registry import CLUSTERERS
from .members import LCA_CLUSTERER
from .model import fit_lca

__all__ = ["cluster_lca"]


def cluster_lca(data, n_clusters: int, *, seed: int = 0, starts: int = 20, **context) -> dict:
    """Latent-class clustering: the modal class of every row under a K = ``n_clusters`` model (feature
    columns only).  Returns labels, the model's facts and seconds.

    Parameters
    ----------
    data : CategoricalData
    n_clusters : int
    seed, starts : int
    **context
        The options the clustering analysis hands every clusterer
        (:data:`bnfk_core.registry.CLUSTER_OPTIONS`), checked and ignored; any other name is refused, as is
        a value the declared options do not allow (:data:`bnfk_core.lca.members.CLUSTERERS`).

    Returns
    -------
    dict
    """
    CLUSTERERS.validate(LCA_CLUSTERER, {"seed": seed, "starts": starts, **context})
    t0 = time.perf_counter()
    feats = data.without_class() if getattr(data, "class_column", None) else data
    m = fit_lca(feats, int(n_clusters), int(starts), int(seed))
    labels = m.modal_classes(feats)
    return {
        "labels": labels,
        "n_clusters": int(n_clusters),
        "n_used": int(len(np.unique(labels))),
        "loglik": m.loglik,
        "bic": m.bic,
        "aic": m.aic,
        "parameters": m.parameters,
        "starts": m.starts,
        "starts_at_best": m.starts_at_best,
        "features": list(feats.variables),
        "model": m,
        "cluster_seconds": time.perf_counter() - t0,
        "kernel_seconds": 0.0,
        "cost": None,
    }
