"""One call from a mixed table to a fitted CLG network and its score: the structure given or searched, the
missing cells handled by the named method, and the score of the network returned.

Missing-data methods (the names of :data:`bnfk_core.registry.MISSING_DATA`):

* ``em``: structure by structural EM (:func:`bnfk_core.hybrid.structural_em.structural_em_hybrid`; a given
  DAG is kept), parameters by EM, the score from the observed-data log-likelihood (:func:`network_score`);
* ``available-case``: the available-case search and fit, the score the sum of the scaled available-case
  family scores (:class:`bnfk_core.hybrid.scoring.HybridScorer`);
* ``complete-rows``: the rows with a missing cell left out, then as on a complete table.

On a complete table the three agree: the maximum-likelihood network and its BIC or AIC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError, StructureError
from ..network.dag import DAG
from .em import em_hybrid
from .fitting import fit_hybrid
from .model import HybridNet
from .posterior import marginal_log_density
from .scoring import HYBRID_SCORES, HybridScorer
from .search import hybrid_exact, hybrid_hill_climb, hybrid_kgv_climb, kgv_scorer
from .structural_em import structural_em_hybrid
from .table import MixedData

__all__ = ["HybridLearned", "learn_hybrid_network", "network_score", "HYBRID_MISSING", "HYBRID_SEARCHES"]

#: how a hybrid network is learned from a table with missing cells (module docstring)
HYBRID_MISSING = ("em", "available-case", "complete-rows")
#: the structure searches: hill climbing (then ``tabu_steps``), or the exact optimum (complete tables)
HYBRID_SEARCHES = ("hc", "exact")
#: the scores a hybrid structure is learned by: BIC and AIC of the CLG network, or the KGV (the numbers
#: unbinned, Bach & Jordan 2002; the CLG network is then fitted on the DAG it finds)
HYBRID_LEARN_SCORES = (*HYBRID_SCORES, "kgv")


@dataclass
class HybridLearned:
    """A learned hybrid network: DAG, fitted model, its score (the network's own), the search's score when
    one ran, moves or rounds, how it was learned, the rows used and notes."""

    dag: DAG
    model: HybridNet
    score: float
    score_name: str
    search_score: float | None
    moves: int
    method: str
    missing_data: str
    n_rows_used: int
    notes: list = field(default_factory=list)


def network_score(model: HybridNet, data: MixedData, score: str = "bic") -> float:
    """BIC = log L - (k / 2) log N or AIC = log L - k of ``model`` with log L the observed-data
    log-likelihood, sum over rows of log p(x_observed) (:func:`~bnfk_core.hybrid.posterior.
    marginal_log_density`; the plain log-likelihood on a complete table).

    Parameters
    ----------
    model : HybridNet
    data : MixedData
    score : {"bic", "aic"}

    Returns
    -------
    float
    """
    if score not in HYBRID_SCORES:
        raise StructureError(f"Unknown hybrid score '{score}'; choose one of {', '.join(HYBRID_SCORES)}.")
    ll = float(marginal_log_density(model, data).sum())
    k = model.parameter_count()
    return ll - (0.5 * k * math.log(data.n_rows) if score == "bic" else k)


def learn_hybrid_network(
    data: MixedData,
    *,
    dag: DAG | None = None,
    score: str = "bic",
    missing_data: str = "em",
    tabu_steps: int = 0,
    max_parents: int | None = None,
    params: str = "ml",
    pseudo_count: float = 1.0,
    search: str = "hc",
    progress=None,
) -> HybridLearned:
    """The CLG network of ``data``: ``dag`` fitted, or a structure searched by hill climbing (then
    ``tabu_steps`` tabu moves), with missing cells handled by ``missing_data`` (module docstring).

    Parameters
    ----------
    data : MixedData
    dag : DAG, optional
        A given structure (its nodes name columns of ``data``).
    score : {"bic", "aic", "kgv"}
        The search's score; ``kgv`` searches the numbers unbinned (:func:`~bnfk_core.hybrid.search.
        hybrid_kgv_climb`) and returns the KGV of the DAG found, the CLG network fitted on it.
    missing_data : {"em", "available-case", "complete-rows"}
    tabu_steps : int
    max_parents : int, optional
    params : str
        The CPT estimator of the discrete nodes on a complete table or under ``available-case`` (EM fits
        maximum likelihood).
    pseudo_count : float
    search : {"hc", "exact"}
        Hill climbing, or the best DAG of all (:func:`~bnfk_core.hybrid.search.hybrid_exact`; a complete
        table, or ``missing_data="complete-rows"``).
    progress : callable, optional

    Returns
    -------
    HybridLearned
        ``score`` is the BIC or AIC of the network returned (the sum of the scaled available-case family
        scores under ``available-case`` with missing cells).
    """
    if score not in HYBRID_LEARN_SCORES:
        raise StructureError(
            f"Unknown hybrid score '{score}'; choose one of {', '.join(HYBRID_LEARN_SCORES)}."
        )
    if missing_data not in HYBRID_MISSING:
        raise DataError(
            f"Unknown missing-data method '{missing_data}'; choose one of {', '.join(HYBRID_MISSING)}."
        )
    if search not in HYBRID_SEARCHES:
        raise StructureError(f"Unknown hybrid search '{search}'; choose one of {', '.join(HYBRID_SEARCHES)}.")
    if score == "kgv" and search == "exact":
        raise StructureError(
            "The exact hybrid search scores by bic or aic; the KGV searches by hill climbing."
        )
    notes = []
    if dag is not None:
        data = data.select(list(dag.nodes))
    complete = data.complete_rows()
    if not complete.all() and missing_data == "complete-rows":
        notes.append(f"{int((~complete).sum())} row(s) with missing cells were left out (complete-rows).")
        data = data.subset(np.flatnonzero(complete))
        if data.n_rows == 0:
            raise DataError(f"No row of {data.source} is complete; use missing-data em or available-case.")
        complete = np.ones(data.n_rows, bool)
    incomplete = not complete.all()
    if dag is None and incomplete and search == "exact":
        raise StructureError(
            f"Exact search scores every family on all rows and {data.source} has missing cells; learn on its "
            "complete rows (missing data 'complete-rows') or by hill climbing."
        )
    search_score, moves, method, sem = None, 0, "given", None
    if dag is None and score == "kgv":
        found = hybrid_kgv_climb(data, max_parents=max_parents, progress=progress)
        dag, search_score, method = found.dag, found.score, "KGV hill climbing"
        notes += found.notes
    elif dag is None and incomplete and missing_data == "em":
        sem = structural_em_hybrid(data, score, max_parents, tabu_steps, progress=progress)
        dag, moves, method = sem.dag, sem.rounds, "structural EM"
        notes += sem.notes
    elif dag is None and search == "exact":
        found = hybrid_exact(data, score, max_parents=max_parents, progress=progress)
        dag, search_score, method = found.dag, found.score, "exact"
        notes += found.notes
    elif dag is None:
        found = hybrid_hill_climb(
            data, score, max_parents=max_parents, tabu_steps=tabu_steps, progress=progress
        )
        dag, search_score, moves, method = found.dag, found.score, found.moves, "hill climbing"
        notes += found.notes
    fit_score = "bic" if score == "kgv" else score
    if incomplete and missing_data == "em":
        model = sem.model if method == "structural EM" else em_hybrid(dag, data)
        # EM's observed-data log-likelihood of the model it returns: the sum of marginal_log_density
        k = model.parameter_count()
        ll = float(model.fit_info["observed_loglik"])
        value = ll - (0.5 * k * math.log(data.n_rows) if fit_score == "bic" else k)
        notes.append(
            f"{int((~complete).sum())} row(s) have missing cells: parameters by EM "
            f"({model.fit_info['em_iterations']} iterations), the score from the observed-data "
            "log-likelihood."
        )
    elif incomplete:
        model = fit_hybrid(dag, data, method=params, pseudo_count=pseudo_count)
        value = HybridScorer(data, fit_score).total(dag.parent_indices())
        notes.append(
            f"{int((~complete).sum())} row(s) have missing cells: the score is the sum of the families' "
            "available-case scores, each scaled to all rows."
        )
    else:
        model = fit_hybrid(dag, data, method=params, pseudo_count=pseudo_count)
        value = model.score(data, fit_score)
    if score == "kgv":  # the score of the DAG the KGV chose (the CLG parameters do not enter it)
        kgv = kgv_scorer(data)
        value = float(sum(kgv(v, tuple(ps)) for v, ps in enumerate(dag.parent_indices())))
    if model.fit_info.get("floored_variances"):
        notes.append(
            f"{model.fit_info['floored_variances']} regression variance(s) were raised to the floor "
            "(1e-6 of their column's variance): too few rows or a child its parents determine."
        )
    model.fit_info.update(score_name=score, score=value, structure=method)
    how = missing_data if incomplete else "complete-rows"
    return HybridLearned(dag, model, value, score, search_score, moves, method, how, data.n_rows, notes)
