"""What a network is good for downstream, in one seeded run each: the adjusted Rand index of clustering its
Fisher Gram matrix against the label (:func:`clustering_aris`) and the accuracy of MCAR imputation with it
(:func:`imputation_check`).  Used by the Segments lab and the segment gallery.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...kernels.fisher import FISHER
from ...network.dag import DAG
from ...network.model import fit
from ..cluster.clustering import cluster, clustering_metrics
from ..impute.benchmark import evaluate, induce_mcar
from ..impute.core import impute_bn

__all__ = ["clustering_aris", "imputation_check"]


def clustering_aris(
    K: np.ndarray,
    labels: np.ndarray,
    n_clusters: int,
    *,
    restarts: int = 25,
    seed: int = 0,
    algorithms: Sequence[str] = ("correlation", "spectral"),
) -> dict:
    """Adjusted Rand index against ``labels`` of a seeded clustering of the Fisher Gram matrix ``K`` by each
    algorithm (as :func:`arc_search` scores a network, but with each algorithm's default transform).

    Parameters
    ----------
    K : ndarray, shape (N, N)
    labels : ndarray of int, shape (N,)
    n_clusters : int
    restarts, seed : int
    algorithms : sequence of str

    Returns
    -------
    dict
        algorithm -> ARI.
    """
    out = {}
    for algo in algorithms:
        res = cluster(K, n_clusters, algo, kernel=FISHER, restarts=restarts, seed=seed)
        out[algo] = clustering_metrics(labels, res.labels)["ari"]
    return out


def imputation_check(
    data,
    dag: DAG,
    *,
    params: str = "smoothed",
    missing: float = 0.2,
    test_fraction: float = 0.3,
    seed: int = 0,
) -> dict:
    """One seeded MCAR imputation run of a network: hide ``missing`` of the cells of a random
    ``test_fraction`` of the rows (:func:`~bnfk_core.analyses.impute.benchmark.induce_mcar`), fit ``dag`` on
    what remains, give every hidden cell its exact posterior and score it
    (:func:`~bnfk_core.analyses.impute.benchmark.evaluate`: arg-max
    ``accuracy``, capped ``cross_entropy``, ``cells``).

    Parameters
    ----------
    data : CategoricalData
    dag : DAG
    params : str
    missing, test_fraction : float
    seed : int

    Returns
    -------
    dict
    """
    split = induce_mcar(data, test_fraction, missing, seed=seed)
    model = fit(dag, split.data, method=params)
    return evaluate(impute_bn(split.data, model=model), split.truth, split.hidden)
