"""The imputation benchmark on mixed tables: cells hidden completely at random, numbers scored by RMSE and
categories by accuracy, the CLG network beside scikit-learn's imputers.

Protocol.  Exactly ``round(ratio * C)`` of the C observed cells of the table are hidden, uniformly with
``numpy.random.default_rng(seed)`` (:func:`hide_mixed`).  Every imputer sees only the masked table (the
network is learned from it: hill climbing by structural EM over the hidden cells, :func:`bnfk_core.hybrid.
impute.learn_and_impute`) and fills every hidden cell.  Scores (:func:`score_mixed`): per numeric column the
RMSE over its hidden cells and the normalised RMSE (RMSE / the column's standard deviation in the full
table); the pooled NRMSE over every hidden numeric cell; the accuracy over every hidden categorical cell.

The imputers (:data:`MIXED_IMPUTERS`):

- ``clg``: ours, the CLG network's conditional mean / most probable state;
- ``mean-mode``: the column's observed mean or most frequent state;
- ``iterative``: scikit-learn's ``IterativeImputer`` (BayesianRidge, 10 rounds) on the standardised numbers
  and the categories one-hot coded less their first state (a missing category blanks its whole block; the
  filled state is the largest of the block's entries and 1 - their sum).  With the full one-hot block, each
  indicator is 1 - the others of its block, so the chained regressions stay at their mean start and every
  category is filled with the mode (measured: the accuracy of mean-mode exactly);
- ``knn``: ``KNNImputer`` (5 neighbours, uniform weights) on the standardised numbers and the full one-hot
  categories (the filled state the largest mean indicator);
- ``forest``: ``IterativeImputer`` with ``RandomForestRegressor`` (50 trees, 5 rounds; missForest's model
  class, but regression on the indicators coded as for ``iterative`` rather than missForest's classifier
  per category).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...errors import DataError
from ...hybrid.table import NUMERIC, MixedData

__all__ = [
    "MIXED_IMPUTERS",
    "hide_mixed",
    "score_mixed",
    "impute_mixed_with",
    "MixedBenchmark",
    "mixed_benchmark",
]


def hide_mixed(data: MixedData, ratio: float, seed: int = 0) -> tuple[MixedData, np.ndarray]:
    """Hide exactly ``round(ratio * C)`` (at least one) of the C observed cells, uniformly at random.

    Parameters
    ----------
    data : MixedData
    ratio : float in (0, 1)
    seed : int

    Returns
    -------
    masked : MixedData
    hidden : ndarray of bool, shape (N, n)
        The cells hidden.
    """
    if not 0 < float(ratio) < 1:
        raise DataError(f"The missing ratio must lie strictly between 0 and 1, not {ratio!r}.")
    obs = np.flatnonzero(~data.missing_mask().reshape(-1))
    k = max(1, int(round(float(ratio) * len(obs))))
    rng = np.random.default_rng(seed)
    pick = rng.choice(obs, size=k, replace=False)
    hidden = np.zeros(data.codes.size, bool)
    hidden[pick] = True
    hidden = hidden.reshape(data.codes.shape)
    codes = np.where(hidden, -1, data.codes).astype(np.int32)
    values = np.where(hidden, np.nan, data.values)
    return MixedData(data.variables, data.kinds, data.states, codes, values, data.source), hidden


def score_mixed(truth: MixedData, filled: MixedData, hidden: np.ndarray) -> dict:
    """RMSE and NRMSE per numeric column, pooled NRMSE, and the accuracy of the hidden categorical cells.

    Parameters
    ----------
    truth, filled : MixedData
        The full table and the completed one, same columns and states.
    hidden : ndarray of bool

    Returns
    -------
    dict
        ``rmse`` / ``nrmse`` ``{column: value}``, ``nrmse_pooled``, ``accuracy``, ``numeric_cells``,
        ``categorical_cells``.
    """
    rmse, nrmse, z2 = {}, {}, []
    for i in truth.numeric:
        h = hidden[:, i]
        if not h.any():
            continue
        err = filled.values[h, i] - truth.values[h, i]
        sd = float(np.nanstd(truth.values[:, i]))
        rmse[truth.variables[i]] = float(np.sqrt(np.mean(err**2)))
        nrmse[truth.variables[i]] = rmse[truth.variables[i]] / sd if sd > 0 else float("nan")
        if sd > 0:
            z2.append((err / sd) ** 2)
    hits, n_cat = 0, 0
    for i in truth.discrete:
        h = hidden[:, i]
        hits += int((filled.codes[h, i] == truth.codes[h, i]).sum())
        n_cat += int(h.sum())
    z2 = np.concatenate(z2) if z2 else np.zeros(0)
    return {
        "rmse": rmse,
        "nrmse": nrmse,
        "nrmse_pooled": float(np.sqrt(z2.mean())) if len(z2) else float("nan"),
        "accuracy": hits / n_cat if n_cat else float("nan"),
        "numeric_cells": int(len(z2)),
        "categorical_cells": n_cat,
    }


# ---------------------------------------------------------------------- the imputers
def _encode(data: MixedData, drop_first: bool = False):
    """(matrix with NaN, decoder): standardised numbers beside one-hot categories (a missing category's
    block all NaN; ``drop_first``: the first state's indicator left out, its value 1 - the others', so that
    no block is an exact linear function of itself, which would freeze a chained regression at its
    start)."""
    blocks, spec = [], []
    for i, kind in enumerate(data.kinds):
        if kind == NUMERIC:
            x = data.values[:, i]
            mu, sd = float(np.nanmean(x)), float(np.nanstd(x)) or 1.0
            blocks.append(((x - mu) / sd)[:, None])
            spec.append((i, mu, sd))
        else:
            c = data.codes[:, i]
            r = len(data.states[i])
            oh = np.zeros((data.n_rows, r))
            oh[np.arange(data.n_rows), np.maximum(c, 0)] = 1.0
            oh[c < 0] = np.nan
            blocks.append(oh[:, 1:] if drop_first else oh)
            spec.append((i, r, None))
    X = np.concatenate(blocks, axis=1)

    def decode(Z: np.ndarray) -> MixedData:
        codes, values = data.codes.copy(), data.values.copy()
        col = 0
        for i, a, b in spec:
            if b is not None:  # numeric
                values[:, i] = np.where(np.isnan(values[:, i]), Z[:, col] * b + a, values[:, i])
                col += 1
            else:
                w = a - 1 if drop_first else a
                block = Z[:, col : col + w]
                if drop_first:
                    block = np.column_stack([1.0 - block.sum(axis=1), block])
                codes[:, i] = np.where(codes[:, i] < 0, np.argmax(block, axis=1), codes[:, i])
                col += w
        return MixedData(data.variables, data.kinds, data.states, codes, values, data.source)

    return X, decode


def _sklearn(make: Callable, drop_first: bool) -> Callable:
    def run(data: MixedData, seed: int) -> MixedData:
        X, decode = _encode(data, drop_first)
        keep = ~np.all(np.isnan(X), axis=0)  # a column with no observed value (sklearn would drop it)
        Z = np.zeros_like(X)
        Z[:, keep] = make(seed).fit_transform(X[:, keep])
        return decode(Z)

    return run


def _iterative(seed):
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer
    from sklearn.linear_model import BayesianRidge

    return IterativeImputer(estimator=BayesianRidge(), max_iter=10, random_state=seed)


def _knn(seed):
    from sklearn.impute import KNNImputer

    return KNNImputer(n_neighbors=5)


def _forest(seed):
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer

    rf = RandomForestRegressor(n_estimators=50, random_state=seed, n_jobs=1)
    return IterativeImputer(estimator=rf, max_iter=5, random_state=seed)


def _mean_mode(data: MixedData, seed: int) -> MixedData:
    codes, values = data.codes.copy(), data.values.copy()
    for i in data.numeric:
        x = values[:, i]
        values[np.isnan(x), i] = np.nanmean(x) if (~np.isnan(x)).any() else 0.0
    for i in data.discrete:
        c = codes[:, i]
        counts = np.bincount(c[c >= 0], minlength=len(data.states[i]))
        codes[c < 0, i] = int(np.argmax(counts))
    return MixedData(data.variables, data.kinds, data.states, codes, values, data.source)


def _clg(data: MixedData, seed: int) -> MixedData:
    from ...hybrid.impute import learn_and_impute

    res, _ = learn_and_impute(data)
    return res.data


#: name -> (function(masked table, seed) -> completed table, a line saying what it is)
MIXED_IMPUTERS = {
    "clg": (_clg, "CLG network (hill climbing, BIC, structural EM), conditional mean / most probable state"),
    "mean-mode": (_mean_mode, "column mean / most frequent state"),
    "iterative": (
        _sklearn(_iterative, True),
        "sklearn IterativeImputer(BayesianRidge), categories one-hot less their first state",
    ),
    "knn": (_sklearn(_knn, False), "sklearn KNNImputer(5), standardised numbers and one-hot categories"),
    "forest": (
        _sklearn(_forest, True),
        "sklearn IterativeImputer(RandomForestRegressor(50 trees), 5 rounds), one-hot less the first state",
    ),
}


def impute_mixed_with(name: str, data: MixedData, seed: int = 0) -> MixedData:
    """The completed table of imputer ``name`` (:data:`MIXED_IMPUTERS`)."""
    if name not in MIXED_IMPUTERS:
        raise DataError(f"Unknown mixed imputer '{name}'; choose from {', '.join(MIXED_IMPUTERS)}.")
    return MIXED_IMPUTERS[name][0](data, seed)


@dataclass
class MixedBenchmark:
    """Per imputer and repeat: the scores of :func:`score_mixed` and the seconds taken."""

    source: str
    ratio: float
    runs: list = field(default_factory=list)

    def summary(self) -> list[dict]:
        """One line per imputer: the means over repeats of pooled NRMSE, accuracy and seconds."""
        out = []
        for name in dict.fromkeys(r["imputer"] for r in self.runs):
            rs = [r for r in self.runs if r["imputer"] == name]
            out.append(
                {
                    "imputer": name,
                    "nrmse": float(np.mean([r["nrmse_pooled"] for r in rs])),
                    "accuracy": float(np.mean([r["accuracy"] for r in rs])),
                    "seconds": float(np.mean([r["seconds"] for r in rs])),
                    "repeats": len(rs),
                }
            )
        return out

    def to_dict(self) -> dict:
        return {
            "data": self.source,
            "missing_ratio": self.ratio,
            "summary": self.summary(),
            "runs": self.runs,
        }


def mixed_benchmark(
    data: MixedData,
    imputers: Sequence[str] = tuple(MIXED_IMPUTERS),
    ratio: float = 0.2,
    repeats: int = 1,
    seed: int = 0,
    progress=None,
) -> MixedBenchmark:
    """Hide ``ratio`` of the observed cells (repeat r with seed ``seed + r``), fill them with every imputer
    and score them (module docstring).

    Parameters
    ----------
    data : MixedData
        The full table (its own missing cells are never scored).
    imputers : sequence of str
    ratio : float
    repeats : int
    seed : int
    progress : callable, optional
        Called with a line per run.

    Returns
    -------
    MixedBenchmark
    """
    for name in imputers:
        if name not in MIXED_IMPUTERS:
            raise DataError(f"Unknown mixed imputer '{name}'; choose from {', '.join(MIXED_IMPUTERS)}.")
    out = MixedBenchmark(data.source, float(ratio))
    for r in range(int(repeats)):
        masked, hidden = hide_mixed(data, ratio, seed + r)
        for name in imputers:
            t0 = time.perf_counter()
            filled = impute_mixed_with(name, masked, seed + r)
            sec = time.perf_counter() - t0
            sc = score_mixed(data, filled, hidden)
            out.runs.append({"imputer": name, "repeat": r, "seconds": sec, **sc})
            if progress is not None:
                progress(f"{name} repeat {r}: NRMSE {sc['nrmse_pooled']:.4f}, accuracy {sc['accuracy']:.4f}")
    return out
