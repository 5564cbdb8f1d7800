"""Stacked imputation: a weighted average of several imputers' per-cell posteriors (issue #26).

Every registered imputer returns a distribution per missing cell.  For components c = 1..C with
distributions P_c(x_i | row) the stacked distribution is

    P(x_i | row) = sum_c w_c P_c(x_i | row),   w_c >= 0,  sum_c w_c = 1,

and the imputed state is its arg-max.  Two ways to pick w:

* :func:`impute_average` -- fixed equal weights (the posterior ensemble of the network and the latent
  class model, ``bn-lca``);
* :func:`impute_stacked` -- weights by **internal validation** (``stack``): a further ``share`` of the
  *observed* cells is hidden at random (seeded; :func:`bnfk_core.analyses.impute.induce_mcar`), every
  component imputes that table, and the weight vector on the simplex grid of step ``step`` with the best
  accuracy on those validation cells (ties: the lower capped cross-entropy, then the earlier grid point)
  is kept.  The components are then fitted on the table as given and averaged with those weights.  Only
  the observed cells are ever looked at: the masked truth of a benchmark never enters.

Stacking of this kind is Wolpert's (1992) "stacked generalization" with a single held-out split and
weights restricted to the simplex (Breiman 1996, "Stacked regressions": non-negative weights).
"""
from __future__ import annotations

import itertools
import time

import numpy as np

from .impute import Imputation, capped_cross_entropy, induce_mcar

__all__ = ["STACK_COMPONENTS", "AVERAGE_COMPONENTS", "VALIDATION_SHARE", "WEIGHT_STEP", "average_cells",
           "weight_grid", "grid_scores", "choose_weights", "impute_average", "impute_stacked"]

#: the imputers ``stack`` weighs (registered names in :data:`bnfk_core.registry.IMPUTERS`)
STACK_COMPONENTS = ("bn-em", "lca", "knn-onehot")
#: the imputers ``bn-lca`` averages with equal weights
AVERAGE_COMPONENTS = ("bn-em", "lca")
#: share of the observed cells hidden for the internal validation
VALIDATION_SHARE = 0.05
#: step of the weight grid on the simplex (0.25: 15 weight vectors for three components)
WEIGHT_STEP = 0.25
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
                raise ValueError(f"imputation '{imp.method}' fills other cells of variable {i} than '{imputations[0].method}'.")
            P += wk * Pk
        out[i] = (rows, P)
    return out


def weight_grid(n: int, step: float = WEIGHT_STEP) -> np.ndarray:
    """All weight vectors of length ``n`` with entries in {0, step, 2 step, ..., 1} that sum to 1, shape (m, n)."""
    k = int(round(1.0 / step))
    pts = [c for c in itertools.product(range(k + 1), repeat=n) if sum(c) == k]
    return np.asarray(pts, float) / k


def grid_scores(imputations, grid: np.ndarray, truth: np.ndarray, scored: np.ndarray):
    """(accuracy, cross-entropy) of the average under every weight vector of ``grid`` on the ``scored`` cells.

    Vectorised over the grid: per variable, the components' distributions on the scored cells are stacked
    (C, rows, r) and mixed by one tensor product (m, rows, r)."""
    m = grid.shape[0]
    hits, ce, n = np.zeros(m), np.zeros(m), 0
    for i, (rows, _) in imputations[0].cells.items():
        keep = scored[rows, i]
        if not keep.any():
            continue
        r = rows[keep]
        t = truth[r, i]
        S = np.stack([imp.cells[i][1][keep] for imp in imputations])          # (C, rows, r_i)
        mix = np.tensordot(grid, S, axes=(1, 0))                              # (m, rows, r_i)
        hits += (mix.argmax(axis=2) == t).sum(axis=1)
        ce += capped_cross_entropy(mix[:, np.arange(r.size), t]).sum(axis=1)
        n += r.size
    if n == 0:
        return np.full(m, np.nan), np.full(m, np.nan)
    return hits / n, ce / n


def choose_weights(grid: np.ndarray, accuracy: np.ndarray, cross_entropy: np.ndarray) -> int:
    """Index of the best grid point: highest accuracy, then lowest cross-entropy, then the first."""
    order = np.lexsort((np.arange(grid.shape[0]), cross_entropy, -accuracy))
    return int(order[0])


def _components(data, names, seed, cache, learn):
    from ..registry import IMPUTERS

    return [IMPUTERS[c].impute(data, seed=seed, cache=cache, **learn) for c in names]


def impute_average(data, *, seed: int = 0, cache=None, components=AVERAGE_COMPONENTS, name: str = "bn-lca",
                   **learn) -> Imputation:
    """Equal-weight posterior average of ``components`` (default: structural-EM network and latent class model)."""
    t0 = time.perf_counter()
    imps = _components(data, components, seed, cache, learn)
    w = np.full(len(imps), 1.0 / len(imps))
    notes = [f"equal-weight average of {', '.join(components)}"] + [n for imp in imps for n in imp.notes]
    return Imputation(name, average_cells(imps, w), model=imps[0].model, seconds=time.perf_counter() - t0,
                      notes=notes)


def validation_weights(data, *, seed: int = 0, components=STACK_COMPONENTS, share: float = VALIDATION_SHARE,
                       step: float = WEIGHT_STEP, **learn):
    """(grid, accuracy, cross_entropy, chosen index): the components' average scored on a further ``share``
    of the observed cells of ``data``, hidden with seed ``seed + 7919``."""
    split = induce_mcar(data, 1, share, seed=seed + _VALIDATION_SEED)
    imps = _components(split.data, components, seed, {}, learn)
    grid = weight_grid(len(components), step)
    acc, ce = grid_scores(imps, grid, split.truth, split.hidden)
    return grid, acc, ce, choose_weights(grid, acc, ce)


def impute_stacked(data, *, seed: int = 0, cache=None, components=STACK_COMPONENTS,
                   share: float = VALIDATION_SHARE, step: float = WEIGHT_STEP, name: str = "stack",
                   **learn) -> Imputation:
    """The components' posterior average with weights chosen by internal validation (module docstring)."""
    t0 = time.perf_counter()
    if not (data.codes < 0).any():
        return Imputation(name, {}, seconds=0.0, notes=["no missing cell"])
    grid, acc, ce, best = validation_weights(data, seed=seed, components=components, share=share, step=step,
                                             **learn)
    w = grid[best]
    imps = _components(data, components, seed, cache, learn)
    used = ", ".join(f"{c} {x:.2f}" for c, x in zip(components, w))
    notes = [f"weights by internal validation on {share:.0%} of the observed cells: {used} "
             f"(validation accuracy {acc[best]:.3f})"] + [n for imp in imps for n in imp.notes]
    return Imputation(name, average_cells(imps, w), model=imps[0].model, seconds=time.perf_counter() - t0,
                      notes=notes)
