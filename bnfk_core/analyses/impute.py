"""Imputation of missing categorical cells and the thesis's imputation benchmark (chapter 4).

Every imputer returns an :class:`Imputation`: one probability distribution per missing cell,
stored per variable as ``{variable index: (row indices, probabilities (rows, r_i))}`` -- the
layout of :func:`bnfk_core.inference.posterior`.

Methods (:data:`METHODS`)
-------------------------
``bn``
    Exact posterior P(x_i | x_observed) under a Bayesian network whose structure is learned on
    the complete rows and whose parameters are fitted on all rows (available cases per family).
    One batched junction tree for all rows (:func:`bnfk_core.inference.posterior`); no per-cell calls.
``mode``
    The relative frequencies of the column's observed values (thesis 4.1.1).
``wknn``
    Weighted k-nearest neighbours (thesis 4.1.2, 4.2): the k = 3 rows closest in Hamming distance
    that observe the variable vote for their value with weight 1 / (relative frequency of that
    value in the column); the votes are normalised to a distribution.  The distance counts the
    variables observed in the row being imputed on which the neighbour differs (a neighbour's
    missing cell counts as a difference), i.e. neighbours maximise the number of matching
    co-observed cells.  Ties are broken by a seeded random order.
``fisher-knn``
    The same vote with neighbours by the marginalized Fisher kernel's feature-space distance
    d(x, y)^2 = K(x,x) + K(y,y) - 2 K(x,y) under the ``bn`` model.
``bn-mode``, ``bn-wknn``
    Augmented models (thesis 4.2.2): fill every missing cell with the arg-max of the naive
    imputer, learn the network (structure and parameters) on the completed data, then impute
    the original missing cells with the exact posterior given each row's observed values.

Protocol (thesis 4.2.1, :func:`induce_mcar`)
--------------------------------------------
A uniform train/test split with exactly ``round(test_ratio N)`` test rows, then exactly
``round(missing_ratio * cells)`` of the test part's observed cells hidden, every cell equally
likely (MCAR).  The class column is not part of the imputation task: the thesis lists its
datasets by their attributes (Table 3.1) and uses class labels only for evaluation, and the
closed-form Mode accuracy (mean column mode frequency) matches Table 4.1 without the class
column (e.g. Tic-Tac-Toe 0.422 vs 0.423; with the class 0.446).  ``include_class=True`` hides
class cells as well.

Metrics (thesis 4.2.3)
----------------------
Accuracy of the arg-max and cross-entropy -log max(p_true, 1e-5) (capped at -log 1e-5), each
averaged over the hidden cells of one run; the macro average over a grid of settings is the
mean of the per-setting means (every setting weighs the same), its standard deviation is taken
over all runs (thesis App. B.1: "computed over 250 runs").
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..data import MISSING_CATEGORY, CategoricalData, RawTable, parse_interval
from ..errors import BnfkError, DataError
from ..files import atomic_path
from ..inference import posterior
from ..kernels import FISHER, gram
from ..learn import learn_structure
from ..learn_exact import EXACT_MAX_VARIABLES
from ..missing import learn_network
from ..model import fit
from ..registry import IMPUTERS, LEARNERS

__all__ = ["METHODS", "CE_FLOOR", "CE_CAP", "MCARSplit", "Imputation", "ImputedData", "BenchmarkResult",
           "ImputeError", "induce_mcar", "learn_model", "impute", "impute_bn", "impute_mode", "impute_wknn",
           "impute_fisher_knn", "impute_augmented", "knn_vote", "category_weights", "capped_cross_entropy",
           "evaluate", "macro_average", "benchmark", "impute_with_model", "DEFAULT_RATIOS", "METHOD_LABELS",
           "FILL_NUMERIC", "CompletedFile", "complete_file", "cell_frame", "filled_column", "check_methods"]

#: the thesis's methods; every registered method (peers included) is in :data:`bnfk_core.registry.IMPUTERS`
METHODS = ("bn", "mode", "wknn", "fisher-knn", "bn-mode", "bn-wknn")
#: the methods' names in tables and figures (thesis spelling)
METHOD_LABELS = {"bn": "BN", "mode": "Mode", "wknn": "wKNN", "fisher-knn": "Fisher-kNN", "bn-mode": "BN-Mode",
                 "bn-wknn": "BN-wKNN"}
#: the probability floor of the cross-entropy (thesis 4.2.3): L <= -log 1e-5
CE_FLOOR = 1e-5
CE_CAP = -math.log(CE_FLOOR)
#: the thesis grid: test ratio 0.1-0.5 x missing ratio 0.1-0.5
DEFAULT_RATIOS = (0.1, 0.2, 0.3, 0.4, 0.5)

Progress = Callable[[float, str], None]
Cells = dict  # {variable index: (rows, probs)}


class ImputeError(BnfkError):
    """An imputation or benchmark request cannot be carried out as asked."""


# ====================================================================== missingness
@dataclass(frozen=True, eq=False)
class MCARSplit:
    """The outcome of :func:`induce_mcar`.

    Attributes
    ----------
    data : CategoricalData with the hidden cells set to -1 (states unchanged).
    truth : ndarray (N, n) -- the original codes.
    hidden : ndarray of bool (N, n) -- the cells that were hidden.
    test_rows : ndarray of int -- the rows of the test part (sorted).
    """

    data: CategoricalData
    truth: np.ndarray
    hidden: np.ndarray
    test_rows: np.ndarray

    @property
    def n_hidden(self) -> int:
        return int(self.hidden.sum())


def _check_ratio(name: str, r: float) -> float:
    try:
        r = float(r)
    except (TypeError, ValueError):
        raise ImputeError(f"The {name} must be a number between 0 and 1, got {r!r}.") from None
    if not 0.0 < r < 1.0:
        raise ImputeError(f"The {name} must be strictly between 0 and 1, got {r}.")
    return r


def induce_mcar(data: CategoricalData, test_ratio: float, missing_ratio: float, seed: int = 0, *,
                include_class: bool = False) -> MCARSplit:
    """Hide cells completely at random in a random test part (thesis 4.2.1).

    Parameters
    ----------
    data : CategoricalData
    test_ratio : float in (0, 1]
        Exactly ``round(test_ratio * N)`` rows (at least one) are drawn uniformly as the test part
        (1: every row, cells hidden anywhere in the table).
    missing_ratio : float in (0, 1)
        Exactly ``round(missing_ratio * C)`` (at least one) of the C observed test cells are hidden,
        each with the same probability.
    seed : int
    include_class : bool
        Whether cells of ``data.class_column`` may be hidden (default False: the thesis imputes
        attributes only; drop the class column before imputing, see the module docstring).

    Returns
    -------
    MCARSplit
    """
    test_ratio = 1.0 if test_ratio == 1 else _check_ratio("test ratio", test_ratio)
    missing_ratio = _check_ratio("missing ratio", missing_ratio)
    N, n = data.codes.shape
    if N < 2 or n < 1:
        raise ImputeError(f"{data.source} needs at least two rows and one column to induce missingness.")
    rng = np.random.default_rng(seed)
    n_test = min(max(int(round(test_ratio * N)), 1), N)
    test_rows = np.sort(rng.choice(N, size=n_test, replace=False))
    eligible = np.zeros((N, n), bool)
    eligible[test_rows] = data.codes[test_rows] >= 0
    if data.class_column is not None and not include_class:
        eligible[:, data.index(data.class_column)] = False
    flat = np.flatnonzero(eligible.ravel())
    if flat.size == 0:
        raise ImputeError(f"The test part of {data.source} has no observed cell to hide.")
    n_hide = min(max(int(round(missing_ratio * flat.size)), 1), flat.size)
    chosen = rng.choice(flat, size=n_hide, replace=False)
    hidden = np.zeros(N * n, bool)
    hidden[chosen] = True
    hidden = hidden.reshape(N, n)
    codes = data.codes.copy()
    codes[hidden] = -1
    return MCARSplit(data.with_codes(codes), data.codes.copy(), hidden, test_rows)


# ====================================================================== results
@dataclass(eq=False)
class Imputation:
    """Distributions of the missing cells of one data set.

    Attributes
    ----------
    method : str
    cells : dict
        ``{variable index: (row indices (sorted), probabilities of shape (rows, r_i))}``.
    model : BayesNet or None -- the network behind ``bn``-type methods.
    seconds : float
    notes : list of str
    """

    method: str
    cells: Cells
    model: object = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def n_cells(self) -> int:
        return int(sum(len(r) for r, _ in self.cells.values()))

    def argmax_codes(self, codes: np.ndarray) -> np.ndarray:
        """``codes`` with every imputed cell set to its most probable state."""
        out = np.array(codes, copy=True)
        for i, (rows, p) in self.cells.items():
            out[rows, i] = np.argmax(p, axis=1)
        return out

    def completed(self, data: CategoricalData) -> CategoricalData:
        """``data`` with every imputed cell filled by its most probable state."""
        return data.with_codes(self.argmax_codes(data.codes))

    def frame(self, data: CategoricalData) -> pd.DataFrame:
        """Tidy per-cell probabilities: one line per (row, column, state) (:func:`cell_frame`)."""
        return cell_frame(self.cells, data.variables, data.states)


def cell_frame(cells: Cells, variables: Sequence[str], states: Sequence[Sequence[str]], row_offset: int = 0):
    """Tidy per-cell probabilities of ``cells`` (``{variable index: (rows, probabilities)}``).

    One line per (row, column, state), ordered by row, then column, then state; columns ``row``
    (0-based data row, plus ``row_offset``), ``column``, ``imputed`` (the arg-max state), ``state``,
    ``probability``.
    """
    parts = []
    for i in sorted(cells):
        rows, p = cells[i]
        st = np.asarray(states[i], dtype=object)
        r = len(st)
        parts.append(pd.DataFrame({
            "row": np.repeat(np.asarray(rows, dtype=np.int64) + int(row_offset), r),
            "column": variables[i],
            "imputed": np.repeat(st[np.argmax(p, axis=1)], r),
            "state": np.tile(st, len(rows)),
            "probability": p.reshape(-1),
        }))
    if not parts:
        return pd.DataFrame({"row": pd.Series(dtype=np.int64), "column": pd.Series(dtype=object),
                             "imputed": pd.Series(dtype=object), "state": pd.Series(dtype=object),
                             "probability": pd.Series(dtype=float)})
    out = pd.concat(parts, ignore_index=True)
    index = {v: k for k, v in enumerate(variables)}
    order = np.lexsort((np.arange(len(out)), [index[c] for c in out["column"]], out["row"]))
    return out.iloc[order].reset_index(drop=True)


# ====================================================================== models
def learn_model(data: CategoricalData, *, structure: str = "auto", score: str = "qnml", params: str = "cnml",
                pseudo_count: float = 1.0, seed: int = 0, max_parents: int | None = None,
                missing_data: str | None = None):
    """The network used for imputation.

    ``missing_data=None`` is the thesis's protocol: structure on the complete rows, parameters on all
    rows (available cases per family).  A name of :data:`bnfk_core.registry.MISSING_DATA`
    (``complete-rows``, ``available-case``, ``em``) learns the structure that way and fits the CPTs by
    EM over the missing cells (:func:`bnfk_core.missing.learn_network`).
    ``structure="auto"`` is exact search when there are at most 20 variables, else hill climbing.
    """
    method = str(structure).lower()
    if method == "auto":
        method = "exact" if data.n_vars <= EXACT_MAX_VARIABLES else "hc"
    if missing_data is not None:
        _, model = learn_network(data, method, missing_data=missing_data, score=score, params=params,
                                 pseudo_count=pseudo_count, seed=seed, max_parents=max_parents)
    else:
        if not data.complete_rows().any() and getattr(LEARNERS.get(method), "needs_rows", True):
            raise ImputeError(f"No row of {data.source} is complete; a structure needs complete rows "
                              "(use 'bn-mode' or 'bn-wknn', which complete the data first, or a missing-data "
                              "method such as available-case).")
        res = learn_structure(data, method, score=score, seed=seed, max_parents=max_parents)
        model = fit(res.dag, data, method=params, pseudo_count=pseudo_count)
    model.fit_info["structure"] = method
    model.fit_info["score"] = score
    return model


# ====================================================================== imputers
def _missing_vars(codes: np.ndarray):
    miss = codes < 0
    return [int(i) for i in np.flatnonzero(miss.any(axis=0))], miss


def impute_mode(data: CategoricalData) -> Imputation:
    """Relative frequencies of each column's observed values (uniform for an all-missing column)."""
    t0 = time.perf_counter()
    codes = data.codes
    vars_, miss = _missing_vars(codes)
    cells = {}
    cards = data.cardinalities
    for i in vars_:
        obs = codes[~miss[:, i], i]
        cnt = np.bincount(obs, minlength=cards[i]).astype(float)
        p = cnt / cnt.sum() if cnt.sum() > 0 else np.full(cards[i], 1.0 / cards[i])
        rows = np.flatnonzero(miss[:, i])
        cells[i] = (rows, np.tile(p, (len(rows), 1)))
    return Imputation("mode", cells, seconds=time.perf_counter() - t0)


def category_weights(data: CategoricalData) -> list[np.ndarray]:
    """Per variable: 1 / relative frequency of each state among the observed cells (0 for unseen states)."""
    out = []
    for i, r in enumerate(data.cardinalities):
        col = data.codes[:, i]
        cnt = np.bincount(col[col >= 0], minlength=r).astype(float)
        tot = cnt.sum()
        with np.errstate(divide="ignore"):
            out.append(np.where(cnt > 0, tot / np.where(cnt > 0, cnt, 1.0), 0.0))
    return out


def knn_vote(similarity: np.ndarray, data: CategoricalData, k: int = 3, seed: int = 0,
             weights: Sequence[np.ndarray] | None = None) -> Cells:
    """Weighted k-nearest-neighbour distributions of every missing cell.

    Parameters
    ----------
    similarity : ndarray (N, N)
        Larger = closer (one matrix for all cells).
    data : CategoricalData
    k : number of neighbours (among the rows observing the variable).
    seed : seeds the random order that breaks ties in ``similarity``.
    weights : per variable, the vote weight of each state (default :func:`category_weights`).

    For a missing cell (a, i) the neighbours are the k rows b with x_{b,i} observed and the
    largest similarity[a, b] (ties in random order); state s gets sum of weights[i][s] over
    the neighbours with value s, normalised.  Uniform when no row observes variable i.
    """
    k = int(k)
    if k < 1:
        raise ImputeError(f"k (neighbours) must be at least 1, got {k}.")
    codes = data.codes
    N = codes.shape[0]
    S = np.asarray(similarity, float)
    if S.shape != (N, N):
        raise ImputeError(f"The similarity matrix has shape {S.shape}, expected ({N}, {N}).")
    if weights is None:
        weights = category_weights(data)
    rng = np.random.default_rng(seed)
    tie = rng.permutation(N)  # one random rank per candidate row
    S = np.round(S, 10)  # equal up to float noise = tie
    cards = data.cardinalities
    vars_, miss = _missing_vars(codes)
    cells = {}
    for i in vars_:
        rows = np.flatnonzero(miss[:, i])
        cand = np.flatnonzero(~miss[:, i])
        r = int(cards[i])
        if cand.size == 0:
            cells[i] = (rows, np.full((len(rows), r), 1.0 / r))
            continue
        kk = min(k, cand.size)
        nb = cand[top_k(S[np.ix_(rows, cand)], tie[cand], kk)]  # (rows, kk)
        vals = codes[nb, i]
        w = weights[i][vals]
        P = np.zeros((len(rows), r))
        np.add.at(P, (np.repeat(np.arange(len(rows)), kk), vals.ravel()), w.ravel())
        tot = P.sum(axis=1, keepdims=True)
        P = np.where(tot > 0, P / np.where(tot > 0, tot, 1.0), 1.0 / r)
        cells[i] = (rows, P)
    return cells


def top_k(sub: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``sub``, the column indices of its k largest values, ties by the smaller ``keys`` (distinct
    integers per column), in that order: ``np.lexsort((keys, -sub))[:, :k]`` without sorting whole rows
    (a partition finds the k-th largest value, the ties at it are settled by their keys)."""
    n_rows, n = sub.shape
    if k >= n or n_rows == 0:
        return np.lexsort((np.broadcast_to(keys, sub.shape), -sub), axis=-1)[:, :k]
    kth = np.partition(sub, n - k, axis=1)[:, n - k][:, None]
    above = sub > kth
    at = sub == kth
    need = k - above.sum(axis=1)                                      # >= 1 ties taken per row
    tie_keys = np.where(at, keys[None, :].astype(float), np.inf)
    smallest = np.sort(np.partition(tie_keys, k - 1, axis=1)[:, :k], axis=1)
    cut = smallest[np.arange(n_rows), need - 1][:, None]
    chosen = above | (at & (tie_keys <= cut))
    cols = np.nonzero(chosen)[1].reshape(n_rows, k)
    vals = np.take_along_axis(sub, cols, axis=1)
    order = np.lexsort((keys[cols], -vals), axis=-1)
    return np.take_along_axis(cols, order, axis=1)


def hamming_matches(data: CategoricalData) -> np.ndarray:
    """Number of variables on which two rows are both observed and equal (one matrix product)."""
    codes = data.codes
    N = codes.shape[0]
    offs = np.concatenate([[0], np.cumsum(data.cardinalities)])
    obs = codes >= 0
    r_idx, c_idx = np.nonzero(obs)
    X = np.zeros((N, int(offs[-1])), dtype=np.float32)
    X[r_idx, offs[c_idx] + codes[r_idx, c_idx]] = 1.0
    return (X @ X.T).astype(np.float64)


def impute_wknn(data: CategoricalData, k: int = 3, seed: int = 0) -> Imputation:
    """Weighted kNN with Hamming neighbours (thesis 4.1.2; see the module docstring)."""
    t0 = time.perf_counter()
    cells = knn_vote(hamming_matches(data), data, k=k, seed=seed)
    return Imputation("wknn", cells, seconds=time.perf_counter() - t0)


def impute_fisher_knn(data: CategoricalData, model=None, k: int = 3, seed: int = 0, **learn) -> Imputation:
    """Weighted kNN with neighbours by the marginalized Fisher kernel's distance under ``model``."""
    t0 = time.perf_counter()
    if model is None:
        model = learn_model(data, seed=seed, **learn)
    K = gram(model, data, kind=FISHER)
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    cells = knn_vote(-D2, data, k=k, seed=seed)
    return Imputation("fisher-knn", cells, model=model, seconds=time.perf_counter() - t0)


def _posterior_cells(model, data: CategoricalData) -> Cells:
    post = posterior(model, data)
    aligned_vars = list(model.variables)
    out = {}
    for m, (rows, p) in post.items():
        out[data.variables.index(aligned_vars[m])] = (rows, p)
    return out


def impute_bn(data: CategoricalData, model=None, seed: int = 0, **learn) -> Imputation:
    """Exact posterior of every missing cell given its row's observed values (see module docstring)."""
    t0 = time.perf_counter()
    if model is None:
        model = learn_model(data, seed=seed, **learn)
    cells = _posterior_cells(model, data)
    return Imputation("bn", cells, model=model, seconds=time.perf_counter() - t0)


def impute_augmented(data: CategoricalData, naive: str = "mode", k: int = 3, seed: int = 0,
                     naive_imputation: Imputation | None = None, **learn) -> Imputation:
    """BN-Mode / BN-wKNN (thesis 4.2.2): naive fill, learn the network on the completed data, then BN."""
    t0 = time.perf_counter()
    if naive not in ("mode", "wknn"):
        raise ImputeError(f"Unknown naive imputer '{naive}' for an augmented model; choose mode or wknn.")
    if naive_imputation is None:
        naive_imputation = impute_mode(data) if naive == "mode" else impute_wknn(data, k=k, seed=seed)
    filled = naive_imputation.completed(data)
    model = learn_model(filled, seed=seed, **learn)
    cells = _posterior_cells(model, data)
    return Imputation(f"bn-{naive}", cells, model=model, seconds=time.perf_counter() - t0)


def impute(data: CategoricalData, method: str = "bn", *, model=None, k: int = 3, seed: int = 0,
           **learn) -> Imputation:
    """Impute every missing cell of ``data`` with a method of :data:`bnfk_core.registry.IMPUTERS`.

    ``model`` (a BayesNet over ``data``'s variables) is used by ``bn`` and ``fisher-knn`` instead of
    learning one; ``learn`` options (``structure``, ``score``, ``params``, ``max_parents``) go to
    :func:`learn_model`.
    """
    spec = IMPUTERS[check_methods(method)[0]]
    return spec.impute(data, model=model, k=k, seed=seed, cache={}, **learn)


# ====================================================================== metrics
def capped_cross_entropy(p_true: np.ndarray, floor: float = CE_FLOOR) -> np.ndarray:
    """-log max(p, floor): the thesis's cross-entropy of a one-hot truth, capped at -log(floor)."""
    return -np.log(np.maximum(np.asarray(p_true, float), floor))


def evaluate(imputation: Imputation, truth: np.ndarray, hidden: np.ndarray | None = None) -> dict:
    """Accuracy of the arg-max and capped cross-entropy, averaged over the scored cells.

    Only cells in ``hidden`` (default: every imputed cell) are scored; their truth must be observed.
    """
    hits, ces = [], []
    for i, (rows, p) in imputation.cells.items():
        keep = hidden[rows, i] if hidden is not None else np.ones(len(rows), bool)
        rows, p = rows[keep], p[keep]
        t = truth[rows, i]
        if (t < 0).any():
            raise ImputeError("A scored cell has no ground truth (it was missing in the original data).")
        hits.append(np.argmax(p, axis=1) == t)
        ces.append(capped_cross_entropy(p[np.arange(len(rows)), t]))
    if not hits:
        return {"accuracy": float("nan"), "cross_entropy": float("nan"), "cells": 0}
    h, c = np.concatenate(hits), np.concatenate(ces)
    return {"accuracy": float(h.mean()) if h.size else float("nan"),
            "cross_entropy": float(c.mean()) if c.size else float("nan"), "cells": int(h.size)}


def macro_average(values: Sequence[float], settings: Sequence) -> tuple[float, float]:
    """(mean of the per-setting means, standard deviation over all runs).

    Every setting weighs the same whatever its number of runs (thesis 4.3); the spread is the
    population standard deviation of the individual runs (thesis App. B.1).  NaN runs are ignored.
    """
    v = np.asarray(values, float)
    keys = list(settings)
    if len(keys) != v.size:
        raise ImputeError(f"macro_average got {v.size} values but {len(keys)} settings.")
    ok = np.isfinite(v)
    if not ok.any():
        return float("nan"), float("nan")
    groups: dict = {}
    for key, x, good in zip(keys, v, ok):
        if good:
            groups.setdefault(key, []).append(x)
    mean = float(np.mean([np.mean(g) for g in groups.values()]))
    return mean, float(np.std(v[ok]))


# ====================================================================== benchmark
@dataclass(eq=False)
class BenchmarkResult:
    """Per-run scores of an imputation benchmark and their summaries.

    ``runs`` has one line per (test_ratio, missing_ratio, repeat, method) with ``accuracy``,
    ``cross_entropy``, ``cells`` and ``seconds``.
    """

    runs: pd.DataFrame
    methods: tuple
    test_ratios: tuple
    missing_ratios: tuple
    repeats: int
    seconds: float
    info: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """``{method: {accuracy, cross_entropy, accuracy_std, cross_entropy_std, runs, seconds}}`` (macro)."""
        out = {}
        for m in self.methods:
            sub = self.runs[self.runs["method"] == m]
            keys = list(zip(sub["test_ratio"], sub["missing_ratio"]))
            acc, acc_sd = macro_average(sub["accuracy"].to_numpy(), keys)
            ce, ce_sd = macro_average(sub["cross_entropy"].to_numpy(), keys)
            out[m] = {"accuracy": acc, "cross_entropy": ce, "accuracy_std": acc_sd, "cross_entropy_std": ce_sd,
                      "runs": int(len(sub)), "seconds": float(sub["seconds"].sum())}
        return out

    def table(self, labels: dict | None = None) -> pd.DataFrame:
        """:meth:`summary` as a table, one line per method (named by ``labels``, default :data:`METHOD_LABELS`):
        ``method, accuracy, accuracy sd, cross-entropy, cross-entropy sd, runs, seconds``."""
        labels = {**IMPUTERS.labels(), **METHOD_LABELS} if labels is None else labels
        s = self.summary()
        return pd.DataFrame([{"method": labels.get(m, m), "accuracy": s[m]["accuracy"],
                              "accuracy sd": s[m]["accuracy_std"], "cross-entropy": s[m]["cross_entropy"],
                              "cross-entropy sd": s[m]["cross_entropy_std"], "runs": s[m]["runs"],
                              "seconds": s[m]["seconds"]} for m in self.methods],
                            columns=["method", "accuracy", "accuracy sd", "cross-entropy", "cross-entropy sd",
                                     "runs", "seconds"])

    def grid(self) -> list[dict]:
        """Per setting: mean and standard deviation over the repeats of every method."""
        g = self.runs.groupby(["test_ratio", "missing_ratio", "method"], sort=True)
        stats = g.agg(accuracy=("accuracy", "mean"), accuracy_std=("accuracy", lambda x: float(np.std(x))),
                      cross_entropy=("cross_entropy", "mean"),
                      cross_entropy_std=("cross_entropy", lambda x: float(np.std(x))),
                      cells=("cells", "mean"))
        out = []
        for tr in self.test_ratios:
            for mr in self.missing_ratios:
                rec = {"test_ratio": tr, "missing_ratio": mr, "methods": {}}
                for m in self.methods:
                    if (tr, mr, m) in stats.index:
                        s = stats.loc[(tr, mr, m)]
                        rec["cells"] = float(s["cells"])
                        rec["methods"][m] = {c: float(s[c]) for c in
                                             ("accuracy", "cross_entropy", "accuracy_std", "cross_entropy_std")}
                out.append(rec)
        return out

    def matrix(self, method: str, metric: str = "accuracy") -> np.ndarray:
        """(test ratios x missing ratios) matrix of the per-setting mean of ``metric`` (for heatmaps)."""
        sub = self.runs[self.runs["method"] == method]
        tab = sub.groupby(["test_ratio", "missing_ratio"])[metric].mean()
        M = np.full((len(self.test_ratios), len(self.missing_ratios)), np.nan)
        for a, tr in enumerate(self.test_ratios):
            for b, mr in enumerate(self.missing_ratios):
                if (tr, mr) in tab.index:
                    M[a, b] = tab.loc[(tr, mr)]
        return M

    def to_dict(self) -> dict:
        out = dict(self.summary())
        out["grid"] = self.grid()
        out["seconds"] = self.seconds
        out["settings"] = {"test_ratios": list(self.test_ratios), "missing_ratios": list(self.missing_ratios),
                           "repeats": self.repeats, **self.info}
        return out


def check_methods(methods) -> tuple:
    """Registered imputation methods (:data:`bnfk_core.registry.IMPUTERS`) from a list or a comma string."""
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    methods = tuple(str(m).lower() for m in methods)
    if not methods:
        raise ImputeError("Choose at least one imputation method.")
    for m in methods:
        if m not in IMPUTERS:
            raise ImputeError(f"Unknown imputation method '{m}'; choose from {', '.join(IMPUTERS)}.")
    return tuple(dict.fromkeys(methods))


def benchmark(data: CategoricalData, methods: Sequence[str] = METHODS, *,
              test_ratios: Sequence[float] = DEFAULT_RATIOS, missing_ratios: Sequence[float] = DEFAULT_RATIOS,
              repeats: int = 10, seed: int = 0, structure: str = "auto", score: str = "qnml",
              params: str = "cnml", k: int = 3, include_class: bool = False,
              progress: Progress | None = None) -> BenchmarkResult:
    """The thesis's imputation experiment (chapter 4) on ``data``.

    For every (test ratio, missing ratio, repeat) the same MCAR split (:func:`induce_mcar`, seeded
    by ``(seed, setting, repeat)`` only, so every method sees the same hidden cells) is imputed by
    each method (:data:`bnfk_core.registry.IMPUTERS`) and scored with :func:`evaluate`.  The methods
    of one run share a cache: ``bn`` and ``fisher-knn`` one network, ``bn-wknn`` the ``wknn`` imputation.  Unless ``include_class``, the class
    column is dropped first (module docstring).
    """
    t_start = time.perf_counter()
    methods = check_methods(methods)
    trs = tuple(_check_ratio("test ratio", r) for r in test_ratios)
    mrs = tuple(_check_ratio("missing ratio", r) for r in missing_ratios)
    if not trs or not mrs:
        raise ImputeError("Give at least one test ratio and one missing ratio.")
    repeats = int(repeats)
    if repeats < 1:
        raise ImputeError(f"repeats must be at least 1, got {repeats}.")
    if not include_class and data.class_column is not None:
        data = data.without_class()
    if data.n_vars < 2:
        raise ImputeError(f"{data.source} needs at least two columns to impute one from the others.")
    learn = dict(structure=structure, score=score, params=params)
    records = []
    total = len(trs) * len(mrs) * repeats
    done = 0
    for (a, tr), (b, mr) in itertools.product(enumerate(trs), enumerate(mrs)):
        for rep in range(repeats):
            run_seed = int(np.random.SeedSequence([int(seed), a, b, rep]).generate_state(1)[0])
            split = induce_mcar(data, tr, mr, seed=run_seed, include_class=include_class)
            cache: dict = {}
            for m in methods:
                t0 = time.perf_counter()
                imp = IMPUTERS[m].impute(split.data, k=k, seed=run_seed, cache=cache, **learn)
                res = evaluate(imp, split.truth, split.hidden)
                records.append({"test_ratio": tr, "missing_ratio": mr, "repeat": rep, "method": m,
                                "accuracy": res["accuracy"], "cross_entropy": res["cross_entropy"],
                                "cells": res["cells"], "seconds": time.perf_counter() - t0})
            done += 1
            if progress is not None:
                progress(done / total, f"test {tr:g} x missing {mr:g}, repeat {rep + 1}/{repeats}")
    runs = pd.DataFrame.from_records(records, columns=["test_ratio", "missing_ratio", "repeat", "method",
                                                       "accuracy", "cross_entropy", "cells", "seconds"])
    used = structure if structure != "auto" else ("exact" if data.n_vars <= EXACT_MAX_VARIABLES else "hc")
    info = {"rows": data.n_rows, "variables": data.n_vars, "structure": used, "score": score, "params": params,
            "k": k, "seed": int(seed), "include_class": bool(include_class)}
    return BenchmarkResult(runs, methods, trs, mrs, repeats, time.perf_counter() - t_start, info)


# ====================================================================== practical imputation
@dataclass(eq=False)
class ImputedData:
    """A user's table completed by a model.

    Attributes
    ----------
    frame : DataFrame -- the input table (all its columns) with the model's missing cells filled.
    data : CategoricalData -- the completed cells aligned to the model.
    imputed : ndarray of bool (N, n_model) -- which cells of ``data`` were filled.
    probabilities : DataFrame -- tidy per-cell probabilities (:meth:`Imputation.frame`).
    imputation : Imputation
    """

    frame: pd.DataFrame
    data: CategoricalData
    imputed: np.ndarray
    probabilities: pd.DataFrame
    imputation: Imputation

    def filled_rows(self) -> np.ndarray:
        """Indices of the rows with at least one imputed cell (ascending)."""
        return np.flatnonzero(self.imputed.any(axis=1))

    def stats(self) -> dict:
        """``{cells, rows, mean_probability}``: imputed cells, rows with one, and the mean probability of
        the filled (most probable) value over the imputed cells (NaN when none was imputed)."""
        p = [P.max(axis=1) for _, P in self.imputation.cells.values() if len(P)]
        return {"cells": int(self.imputed.sum()), "rows": int(len(self.filled_rows())),
                "mean_probability": float(np.concatenate(p).mean()) if p else float("nan")}

    def cell_probabilities(self, rows, top: int = 6) -> tuple[np.ndarray, np.ndarray]:
        """Per cell of ``rows`` x the model's variables: ``(P, dist)``.

        ``P[a, i]`` is the probability of the value filled into cell (rows[a], i), NaN for an observed
        cell; ``dist[a, i]`` lists the ``top`` most probable ``(state, probability)`` pairs of that cell,
        most probable first (None for an observed cell).
        """
        rows = np.asarray(rows, dtype=np.int64)
        P = np.full((len(rows), self.data.n_vars), np.nan)
        dist = np.full(P.shape, None, dtype=object)
        pos = {int(r): a for a, r in enumerate(rows)}
        for i, (rr, probs) in self.imputation.cells.items():
            for r, p in zip(rr, probs):
                a = pos.get(int(r))
                if a is not None:
                    P[a, i] = p.max()
                    dist[a, i] = [(self.data.states[i][k], float(p[k])) for k in np.argsort(-p)[:top]]
        return P, dist


def impute_with_model(model, data: CategoricalData) -> ImputedData:
    """Fill every missing cell of the model's variables in ``data`` with its most probable state.

    The distributions are the exact posteriors under ``model`` (no learning).  Columns of ``data``
    that the model does not know are kept unchanged in ``frame``.
    """
    t0 = time.perf_counter()
    aligned = model.align(data)
    cells = _posterior_cells(model, aligned)
    imp = Imputation("bn", cells, model=model, seconds=time.perf_counter() - t0)
    completed = imp.completed(aligned)
    frame = data.frame.copy()
    for v in model.variables:
        frame[v] = completed.frame[v].to_numpy()
    imputed = aligned.codes < 0
    probs = imp.frame(aligned)
    return ImputedData(frame, completed, imputed, probs, imp)


# ====================================================================== the completed file
#: What a filled cell of a discretized (interval-state) variable holds: ``median`` -- the median of
#: the file's observed values in the filled bin (the lower of the two middle ones for an even count,
#: so it is always a value of the column, written as the file writes it); ``label`` -- the bin's label
#: such as ``[0.1, 2.3)``.  Other variables are filled with the state's name either way.
FILL_NUMERIC = ("median", "label")


@dataclass(eq=False)
class CompletedFile:
    """A CSV file with the model's missing cells filled and every other cell exactly as written.

    Attributes
    ----------
    table : RawTable -- the file as read (:func:`bnfk_core.data.read_table`).
    changes : dict -- ``{(row, column): text}``, the filled cells (rows 0-based, as in the data).
    probabilities : DataFrame -- one line per (row, column, state): ``row``, ``line`` (the row's
        line in the file), ``column``, ``imputed`` (the most probable state), ``filled`` (the text
        put into the cell), ``state``, ``probability``.
    fill_numeric : str -- see :data:`FILL_NUMERIC`.
    notes : list of str
    """

    table: RawTable
    changes: dict
    probabilities: pd.DataFrame
    fill_numeric: str
    notes: list = field(default_factory=list)

    def text(self) -> str:
        """The completed file's text (the file's delimiter, line end, header, blank lines and order)."""
        return self.table.to_text(self.changes)

    def to_bytes(self) -> bytes:
        """The completed file as UTF-8 (with a byte-order mark when the input had one)."""
        return self.table.to_bytes(self.changes)

    def probabilities_csv(self) -> bytes:
        return self.probabilities.to_csv(index=False).encode("utf-8")

    def write(self, path, probabilities=None) -> None:
        """Write the completed file (and the probabilities) atomically: a failed write leaves no
        partial file."""
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(self.to_bytes())
        if probabilities:
            with atomic_path(probabilities) as tmp:
                with open(tmp, "wb") as fh:
                    fh.write(self.probabilities_csv())


def _number(text: str) -> float | None:
    try:
        x = float(text.strip())
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def filled_column(probs: pd.DataFrame, texts: dict) -> pd.Series:
    """The text put into each probability line's cell: ``texts[column][imputed state]`` (every line of a cell
    names the cell's most probable state, which decides its text), one vectorised map per column."""
    out = np.empty(len(probs), dtype=object)
    column, imputed = probs["column"].to_numpy(dtype=object), probs["imputed"]
    for name, mapping in texts.items():
        m = column == name
        out[m] = imputed[m].map(mapping).to_numpy(dtype=object)
    return pd.Series(out, index=probs.index, dtype=object)


def complete_file(result: ImputedData, table: RawTable, *, fill_numeric: str = "median") -> CompletedFile:
    """Put the filled values of ``result`` into the file ``table`` was read from, changing nothing else.

    Only the cells that were missing in a model variable change; every other cell keeps its text
    (padding and all), and so do the header, the column order (columns the model does not use
    included), the row order and blank lines.  A filled cell holds the most probable state; for a
    discretized variable (interval states) ``fill_numeric`` chooses the bin's label or the median of
    the file's observed values in that bin (:data:`FILL_NUMERIC`).

    Parameters
    ----------
    result : ImputedData from :func:`impute_with_model` on the data read from the same file.
    table : RawTable of that file (:func:`bnfk_core.data.read_table`).
    fill_numeric : ``"median"`` (default) or ``"label"``.
    """
    fill_numeric = str(fill_numeric).lower()
    if fill_numeric not in FILL_NUMERIC:
        raise ImputeError(f"fill_numeric must be one of {', '.join(FILL_NUMERIC)}, not {fill_numeric!r}.")
    data = result.data
    if table.n_rows != data.n_rows:
        raise DataError(f"{table.source} has {table.n_rows} rows but the imputed data {data.n_rows}; "
                        "read both from the same file.")
    changes, notes, texts = {}, [], {}
    for i in sorted(result.imputation.cells):
        rows, P = result.imputation.cells[i]
        if not len(rows):
            continue
        name, states = data.variables[i], data.states[i]
        table.column(name)
        best = np.argmax(P, axis=1)
        text = [states[k] for k in best]
        real = [s for s in states if s != MISSING_CATEGORY]
        if fill_numeric == "median" and real and all(parse_interval(s) is not None for s in real):
            raw = table.cells(name)
            observed = ~result.imputed[:, i]
            codes = data.codes[:, i]
            median, no_value = {}, []
            for k in sorted(set(best.tolist())):
                vals = [(x, r) for r in np.flatnonzero(observed & (codes == k))
                        if (x := _number(raw[r])) is not None]
                if vals:
                    vals.sort()
                    median[k] = raw[vals[(len(vals) - 1) // 2][1]].strip()
                else:
                    no_value.append(states[k])
            text = [median.get(k, states[k]) for k in best]
            if no_value:
                notes.append(f"Column '{name}': no observed value lies in bin(s) {', '.join(no_value)}, "
                             "so those cells hold the bin's label.")
        for r, t in zip(rows, text):
            changes[(int(r), name)] = t
        texts[name] = {states[k]: t for k, t in zip(best.tolist(), text)}
    probs = result.probabilities.copy()
    probs.insert(1, "line", table.lines[probs["row"].to_numpy(dtype=np.int64)])
    probs.insert(probs.columns.get_loc("imputed") + 1, "filled", filled_column(probs, texts))
    return CompletedFile(table, changes, probs, fill_numeric, notes)
