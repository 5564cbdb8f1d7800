"""Fitting a conditional linear Gaussian network to a mixed table, given its DAG.

Discrete nodes: their CPTs by a registered estimator (:func:`bnfk_core.network.model.fit` on the discrete
sub-network, available-case per family).  Numeric nodes: per configuration of their discrete parents, least
squares on their numeric parents and variance RSS / n (maximum likelihood, :func:`bnfk_core.hybrid.stats.
regress`), over the rows where the family is observed; the variance is floored
(:data:`~bnfk_core.hybrid.stats.VARIANCE_FLOOR`) and a configuration without rows gets the child's pooled
mean and variance.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..network.dag import DAG
from ..network.model import fit
from .model import HybridNet, LinearGaussian, family_check
from .stats import VARIANCE_FLOOR, family_stats, regress, variance_floor
from .table import DISCRETE, MixedData

__all__ = ["fit_hybrid"]


def fit_hybrid(
    dag: DAG,
    data: MixedData,
    method: str = "ml",
    pseudo_count: float = 1.0,
    relative_floor: float = VARIANCE_FLOOR,
) -> HybridNet:
    """The CLG network of ``dag`` fitted to ``data`` (columns matched by name).

    Parameters
    ----------
    dag : DAG
        Its nodes name columns of ``data``; no arc may go from a numeric node into a discrete one.
    data : MixedData
    method : str
        The CPT estimator of the discrete nodes (:data:`bnfk_core.registry.ESTIMATORS`); ``ml`` (the
        default) makes the whole network the maximum-likelihood one, whose BIC the searches score.
    pseudo_count : float
        ``a`` of ``smoothed`` and ``bdeu``.
    relative_floor : float
        The least variance of a regression, as a fraction of its child column's variance.

    Returns
    -------
    HybridNet
        ``fit_info`` records the method, the rows and the configurations whose variance was floored.

    Raises
    ------
    DataError
        A node missing from ``data``, or a numeric column without an observed value.
    StructureError
        An arc from a numeric node into a discrete one.
    """
    missing = [v for v in dag.nodes if v not in data.variables]
    if missing:
        raise DataError(f"Column '{missing[0]}' of the structure is missing from {data.source}.")
    data = data.select(list(dag.nodes))
    family_check(dag, data.kinds)
    cards = data.cardinalities
    parents = dag.parent_indices()
    disc = [dag.nodes[i] for i in data.discrete]
    cpts = [None] * len(dag.nodes)
    if disc:
        net = fit(
            dag.subgraph(disc), data.select(disc).to_categorical(), method=method, pseudo_count=pseudo_count
        )
        for k, i in enumerate(data.discrete):
            cpts[i] = net.cpts[k]
    gaussians = [None] * len(dag.nodes)
    floored = 0
    for i in data.numeric:
        col = data.values[:, i]
        if np.isnan(col).all():
            raise DataError(f"Column '{dag.nodes[i]}' of {data.source} has no observed values.")
        dps = [p for p in parents[i] if data.kinds[p] == DISCRETE]
        cps = [p for p in parents[i] if data.kinds[p] != DISCRETE]
        floor = variance_floor(col, relative_floor)
        S = family_stats(data.codes, data.values, cards, i, dps, cps)
        coef, var, _, n = regress(S, floor)
        floored += int(((var <= floor) & (n > 0)).sum())
        gaussians[i] = LinearGaussian(coef, var)
    info = {
        "method": method,
        "pseudo_count": pseudo_count,
        "n_rows": data.n_rows,
        "complete_rows": int(data.complete_rows().sum()),
        "variance_floor": relative_floor,
        "floored_variances": floored,
    }
    return HybridNet(dag, data.kinds, data.states, tuple(cpts), tuple(gaussians), info)
