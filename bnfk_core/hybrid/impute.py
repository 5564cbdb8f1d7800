"""Imputation of a mixed table under a CLG network: numbers as numbers.

A missing numeric cell is filled with its **conditional mean** E[X_t | the row's observed cells], a missing
discrete cell with its most probable state under P(X_t | the row's observed cells) (numeric evidence
included).  Both come from the completions of the EM E-step (:func:`bnfk_core.hybrid.em.
completion_table`): for every completion d of the row's missing discrete cells, the numeric nodes given
all discrete states are jointly Gaussian, so the missing numbers given the observed ones are Gaussian with
mean m_d and covariance S_d, and d has weight w_d = P(d | observed cells) (its prior times the Gaussian
density of the observed numbers, normalised over the row's completions).  Then, exactly,

    E[X_t | obs]   = sum_d w_d m_d[t],
    Var[X_t | obs] = sum_d w_d (S_d[t, t] + m_d[t]^2) - E[X_t | obs]^2,
    P(X_k = s | obs) = sum_{d : d_k = s} w_d.

Why the mean and not the mode.  The mean minimises the expected squared error E[(X_t - a)^2 | obs] over
every filled value a, which is what RMSE measures.  When a missing discrete parent (or a missing discrete
cell on which a numeric neighbour depends) is unknown, the conditional of X_t is a mixture of Gaussians over
its completions; its mode lies near the heaviest component's mean, not at the mixture's mean, and filling it
costs the squared distance between the two on top of the variance.  (With every discrete cell of the family
observed the conditional is one Gaussian, whose mode is its mean.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .em import MAX_COMPLETIONS, completion_table
from .model import HybridNet
from .table import MixedData

__all__ = ["HybridImputation", "hybrid_imputation", "impute_hybrid", "learn_and_impute"]


@dataclass(eq=False)
class HybridImputation:
    """A mixed table completed by a CLG network.

    Attributes
    ----------
    data : MixedData
        The completed table, aligned to the model (its node order and states): every missing numeric cell
        holds its conditional mean, every missing discrete cell its most probable state.
    imputed : ndarray of bool, shape (N, n)
        Which cells of ``data`` were filled.
    probabilities : dict
        ``{i: (rows, P)}`` for every discrete node i with a missing cell: the rows filled and their
        posteriors P (len(rows), r_i) given the row's observed cells.
    moments : dict
        ``{i: (rows, mean, variance)}`` for every numeric node i with a missing cell: the rows filled, the
        conditional mean filled in and the conditional variance (of the mixture) around it.
    model : HybridNet
    seconds : float
    """

    data: MixedData
    imputed: np.ndarray
    probabilities: dict
    moments: dict
    model: HybridNet
    seconds: float = 0.0
    beamed: int = 0

    def stats(self) -> dict:
        """``{cells, rows, mean_probability}``: cells filled, rows with one, and the mean posterior
        probability of the states filled into discrete cells (NaN without any)."""
        p = [P.max(axis=1) for _, P in self.probabilities.values() if len(P)]
        return {
            "cells": int(self.imputed.sum()),
            "rows": int(self.imputed.any(axis=1).sum()),
            "mean_probability": float(np.concatenate(p).mean()) if p else float("nan"),
        }


def _check_completions(model: HybridNet, data: MixedData, miss: np.ndarray) -> None:
    """A ModelError naming the first row whose missing discrete cells have more completions than
    :data:`~bnfk_core.hybrid.em.MAX_COMPLETIONS` (the E-step enumerates them)."""
    disc = list(model.discrete)
    if not disc:
        return
    logc = miss[:, disc] @ np.log(model.cardinalities[disc].astype(float))
    over = np.flatnonzero(logc > np.log(MAX_COMPLETIONS) + 1e-9)
    if len(over):
        r = int(over[0])
        n = int(round(np.exp(logc[r])))
        raise ModelError(
            f"Row {r + 1} of {data.source} leaves {n:,} completions of its missing discrete cells (more than "
            f"{MAX_COMPLETIONS:,}); impute it with fewer blanks or a network with fewer states."
        )


def hybrid_imputation(model: HybridNet, data: MixedData, width: int | None = None) -> HybridImputation:
    """Every missing cell of ``data`` filled under ``model`` (module docstring): numbers by their exact
    conditional mean (a mixture's mean when discrete cells are missing too), discrete cells by their most
    probable state, both given every observed cell of the row.

    Parameters
    ----------
    model : HybridNet
    data : MixedData
        A table with the model's columns (extra columns are ignored; discrete states re-coded to the
        model's by :meth:`HybridNet.align`).
    width : int, optional
        None (the default): every completion of a row's missing discrete cells, at most
        :data:`~bnfk_core.hybrid.em.MAX_COMPLETIONS` (else a ModelError).  A number: a row with more
        completions keeps the ``width`` most probable under the discrete CPTs
        (:func:`~bnfk_core.hybrid.em.completion_table`; ``beamed`` counts those rows).

    Returns
    -------
    HybridImputation

    Raises
    ------
    ModelError
        A column of the model missing from ``data``, of the other kind, an unknown state, or a row with
        more than :data:`~bnfk_core.hybrid.em.MAX_COMPLETIONS` completions of its missing discrete cells.
    """
    t0 = time.perf_counter()
    aligned = model.align(data)
    miss = aligned.missing_mask()
    todo = np.flatnonzero(miss.any(axis=1))
    if width is None:
        _check_completions(model, aligned, miss[todo])
    num, disc = list(model.numeric), list(model.discrete)
    cards = model.cardinalities
    offsets = np.zeros(model.n_vars, dtype=np.int64)
    offsets[disc] = np.concatenate([[0], np.cumsum(cards[disc])[:-1]]) if disc else []
    B = len(todo)
    mean = np.zeros((B, len(num)))
    second = np.zeros((B, len(num)))
    post = np.zeros((B, int(cards[disc].sum()) if disc else 0))
    if B:
        comp = completion_table(model, aligned.subset(todo), width)
        w = comp.weights[:, None]
        diag = np.diagonal(comp.covs, axis1=1, axis2=2)[comp.cov_index]
        np.add.at(mean, comp.rows, w * comp.xhat)
        np.add.at(second, comp.rows, w * (comp.xhat * comp.xhat + diag))
        if disc:
            cols = offsets[disc][None, :] + comp.codes[:, disc]
            np.add.at(
                post, (np.repeat(comp.rows, len(disc)), cols.reshape(-1)), np.repeat(comp.weights, len(disc))
            )
    codes = aligned.codes.copy()
    values = aligned.values.copy()
    probabilities, moments = {}, {}
    for k, i in enumerate(num):
        m = miss[todo, i]
        if m.any():
            rows = todo[m]
            values[rows, i] = mean[m, k]
            var = np.maximum(second[m, k] - mean[m, k] ** 2, 0.0)
            moments[i] = (rows, mean[m, k].copy(), var)
    for i in disc:
        m = miss[todo, i]
        if m.any():
            rows = todo[m]
            P = post[m, offsets[i] : offsets[i] + cards[i]]
            P = P / P.sum(axis=1, keepdims=True)
            codes[rows, i] = np.argmax(P, axis=1)
            probabilities[i] = (rows, P)
    done = MixedData(
        aligned.variables, aligned.kinds, aligned.states, codes, values, aligned.source, aligned.notes
    )
    beamed = comp.beamed if B else 0
    return HybridImputation(done, miss, probabilities, moments, model, time.perf_counter() - t0, beamed)


def impute_hybrid(model: HybridNet, data: MixedData) -> MixedData:
    """``data`` with every missing cell filled under the CLG network ``model``.

    A missing numeric cell gets its conditional mean E[X_t | the row's observed cells], not its mode: the
    mean minimises the expected squared error of the filled value (what RMSE measures), and when discrete
    cells of the row are missing too the conditional of a number is a mixture of Gaussians over their
    completions, whose mode is not its mean.  The mean is exact: the completions of the missing discrete
    cells are enumerated and each one's Gaussian conditioning is the EM E-step's
    (:func:`bnfk_core.hybrid.em.completion_table`).  A missing discrete cell gets its most probable
    state given the observed cells, numeric evidence included.  :func:`hybrid_imputation` also returns the
    posteriors and conditional variances.

    Parameters
    ----------
    model : HybridNet
    data : MixedData
        The model's columns (extra ones ignored).

    Returns
    -------
    MixedData
        Aligned to ``model`` (its node order and states), no cell missing.
    """
    return hybrid_imputation(model, data).data


def learn_and_impute(
    data: MixedData,
    *,
    score: str = "bic",
    missing_data: str = "em",
    tabu_steps: int = 0,
    max_parents: int | None = None,
    progress=None,
):
    """One call: the CLG network of ``data`` learned from ``data`` itself
    (:func:`~bnfk_core.hybrid.learn.learn_hybrid_network`: hill climbing, by structural EM when cells are
    missing), then every missing cell filled under it (:func:`hybrid_imputation`).

    Parameters
    ----------
    data : MixedData
    score : {"bic", "aic"}
    missing_data : {"em", "available-case", "complete-rows"}
        How the network is learned from the incomplete table (every row is imputed either way).
    tabu_steps, max_parents, progress
        As :func:`~bnfk_core.hybrid.learn.learn_hybrid_network`.

    Returns
    -------
    imputation : HybridImputation
    learned : HybridLearned
    """
    from .learn import learn_hybrid_network

    learned = learn_hybrid_network(
        data,
        score=score,
        missing_data=missing_data,
        tabu_steps=tabu_steps,
        max_parents=max_parents,
        progress=progress,
    )
    return hybrid_imputation(learned.model, data, width=MAX_COMPLETIONS), learned
