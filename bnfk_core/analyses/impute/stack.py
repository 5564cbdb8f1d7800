"""Stacked imputation: a weighted average of several imputers' per-cell posteriors.

Every registered imputer returns a distribution per missing cell.  For components c = 1..C with
distributions P_c(x_i | row) the stacked distribution is

    P(x_i | row) = sum_c w_c P_c(x_i | row),   w_c >= 0,  sum_c w_c = 1,

and the imputed state is its arg-max.  Two ways to pick w:

* :func:`impute_average` -- fixed equal weights (the posterior ensemble of the network and the latent
  class model, ``bn-lca``);
* :func:`impute_stacked` -- weights by **internal validation** (``stack``): a further ``share`` of the
  *observed* cells is hidden at random (seeded; :func:`bnfk_core.analyses.impute.core.induce_mcar`), every
  component imputes that table, and w maximises the log score of the mixture on those validation cells,

      w = argmax_{w in simplex} sum_cells log max(sum_c w_c P_c(true state), 1e-5),

  a concave problem (the objective is concave in w) solved by EM (:func:`stacking_weights`: w_c <- mean over
  cells of the responsibility
  w_c P_c / sum_c' w_c' P_c').  The components are then fitted on the table as given and averaged with w.
  Only the observed cells are ever looked at: the masked truth of a benchmark never enters.

This is "stacking of predictive distributions" with the log score (Yao, Vehtari, Simpson & Gelman 2018,
Bayesian Analysis 13(3)) on one held-out split of cells; the weights are continuous and were less noisy than
picking the best validation accuracy on a grid of weights (docs/IMPUTATION_PEERS.md).
"""

from __future__ import annotations

import time

import numpy as np

from .benchmark import induce_mcar
from .core import Imputation
from .members import AVERAGE_COMPONENTS, STACK_COMPONENTS

__all__ = [
    "STACK_COMPONENTS",
    "AVERAGE_COMPONENTS",
    "VALIDATION_SHARE",
    "average_cells",
    "true_state_probs",
    "stacking_weights",
    "validation_weights",
    "impute_average",
    "impute_stacked",
]

#: share of the observed cells hidden for the internal validation
VALIDATION_SHARE = 0.05
#: offset of the validation mask's seed from the run's seed (a different stream than the benchmark's mask)
_VALIDATION_SEED = 7919


def average_cells(imputations, weights) -> dict:
    """``{variable: (rows, sum_c w_c P_c)}`` over imputations of the same table (same missing cells)."""
    w = np.asarray(weights, float)
    if len(imputations) != w.size or w.size == 0:
        raise ValueError("average_cells needs one weight per imputation.")
    first = imputations[0].cells
    out = {}
    for i, (rows, _) in first.items():
        P = np.zeros_like(first[i][1], dtype=float)
        for wk, imp in zip(w, imputations):
            r, Pk = imp.cells[i]
            if r.shape != rows.shape or not np.array_equal(r, rows):
                raise ValueError(
                    f"imputation '{imp.method}' fills other cells of variable {i} than "
                    f"'{imputations[0].method}'."
                )
            P += wk * Pk
        out[i] = (rows, P)
    return out


def _components(data, names, seed, cache, learn):
    from ...registry import IMPUTERS

    return [IMPUTERS[c].impute(data, seed=seed, cache=cache, **learn) for c in names]


def impute_average(
    data, *, seed: int = 0, cache=None, components=AVERAGE_COMPONENTS, name: str = "bn-lca", **learn
) -> Imputation:
    """Equal-weight posterior average of ``components`` (default: structural-EM network and latent class
    model)."""
    t0 = time.perf_counter()
    imps = _components(data, components, seed, cache, learn)
    w = np.full(len(imps), 1.0 / len(imps))
    notes = [f"equal-weight average of {', '.join(components)}"] + [n for imp in imps for n in imp.notes]
    return Imputation(
        name, average_cells(imps, w), model=imps[0].model, seconds=time.perf_counter() - t0, notes=notes
    )


def true_state_probs(imputations, truth: np.ndarray, scored: np.ndarray) -> np.ndarray:
    """(cells, C): each component's probability of the true state of every ``scored`` cell (variable by
    variable)."""
    out = []
    for i, (rows, _) in imputations[0].cells.items():
        keep = scored[rows, i]
        if keep.any():
            t = truth[rows[keep], i]
            out.append(np.stack([imp.cells[i][1][keep][np.arange(t.size), t] for imp in imputations], axis=1))
    return np.concatenate(out) if out else np.zeros((0, len(imputations)))


def stacking_weights(
    p_true: np.ndarray, floor: float = 1e-5, tol: float = 1e-10, max_iter: int = 1000
) -> np.ndarray:
    """Simplex weights maximising sum_cells log(sum_c w_c max(p_c, floor)) by EM (module docstring); equal
    weights when there is no cell.  Each EM step never lowers the objective (a mixture-weight EM)."""
    P = np.maximum(np.asarray(p_true, float), floor)
    C = P.shape[1]
    w = np.full(C, 1.0 / C)
    if P.shape[0] == 0:
        return w
    for _ in range(int(max_iter)):
        R = P * w
        R /= R.sum(axis=1, keepdims=True)
        new = R.mean(axis=0)
        if np.abs(new - w).max() < tol:
            return new
        w = new
    return w


def validation_weights(
    data, *, seed: int = 0, components=STACK_COMPONENTS, share: float = VALIDATION_SHARE, **learn
):
    """(weights, validation log score per cell, validation cells): :func:`stacking_weights` of the components
    on a further ``share`` of the observed cells of ``data``, hidden with seed ``seed + 7919``."""
    split = induce_mcar(data, 1, share, seed=seed + _VALIDATION_SEED)
    imps = _components(split.data, components, seed, {}, learn)
    P = true_state_probs(imps, split.truth, split.hidden)
    w = stacking_weights(P)
    score = float(np.log(np.maximum(P, 1e-5) @ w).mean()) if P.size else float("nan")
    return w, score, int(P.shape[0])


def impute_stacked(
    data,
    *,
    seed: int = 0,
    cache=None,
    components=STACK_COMPONENTS,
    share: float = VALIDATION_SHARE,
    name: str = "stack",
    **learn,
) -> Imputation:
    """The components' posterior average with weights by internal validation (module docstring)."""
    t0 = time.perf_counter()
    if not (data.codes < 0).any():
        return Imputation(name, {}, seconds=0.0, notes=["no missing cell"])
    w, score, n = validation_weights(data, seed=seed, components=components, share=share, **learn)
    imps = _components(data, components, seed, cache, learn)
    used = ", ".join(f"{c} {x:.2f}" for c, x in zip(components, w))
    notes = [
        f"weights by internal validation (log score on {n} held-out observed cells, {share:.0%}): {used}"
    ] + [n for imp in imps for n in imp.notes]
    return Imputation(
        name, average_cells(imps, w), model=imps[0].model, seconds=time.perf_counter() - t0, notes=notes
    )
