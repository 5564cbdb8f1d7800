"""The thesis's imputation benchmark (chapter 4): the MCAR protocol, the scores and the experiment over a
grid.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...data.table import CategoricalData
from ...learning.exact import EXACT_MAX_VARIABLES
from ...registry import IMPUTERS, LEARNERS, feature_learners
from .core import METHOD_LABELS, METHODS, Imputation, ImputeError, check_methods

__all__ = [
    "CE_FLOOR",
    "CE_CAP",
    "DEFAULT_RATIOS",
    "structure_choices",
    "MCARSplit",
    "induce_mcar",
    "capped_cross_entropy",
    "evaluate",
    "macro_average",
    "BenchmarkResult",
    "benchmark",
]

#: the probability floor of the cross-entropy (thesis 4.2.3): L <= -log 1e-5
CE_FLOOR = 1e-5
CE_CAP = -math.log(CE_FLOOR)
#: the thesis grid: test ratio 0.1-0.5 x missing ratio 0.1-0.5
DEFAULT_RATIOS = (0.1, 0.2, 0.3, 0.4, 0.5)

Progress = Callable[[float, str], None]


def structure_choices() -> dict[str, str]:
    """The structures the BN methods of :func:`benchmark` can learn, read from the registry.

    Returns
    -------
    dict
        name -> label: the learners over features only (the class is never imputed here), then ``auto``,
        the thesis's rule (exact search up to its variable limit, else hill climbing).
    """
    return {
        **{m: LEARNERS[m].label for m in feature_learners()},
        "auto": f"As the thesis: exact up to {LEARNERS['exact'].max_variables} variables, else hill climbing",
    }


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


def induce_mcar(
    data: CategoricalData,
    test_ratio: float,
    missing_ratio: float,
    seed: int = 0,
    *,
    include_class: bool = False,
) -> MCARSplit:
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
    return {
        "accuracy": float(h.mean()) if h.size else float("nan"),
        "cross_entropy": float(c.mean()) if c.size else float("nan"),
        "cells": int(h.size),
    }


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
            out[m] = {
                "accuracy": acc,
                "cross_entropy": ce,
                "accuracy_std": acc_sd,
                "cross_entropy_std": ce_sd,
                "runs": int(len(sub)),
                "seconds": float(sub["seconds"].sum()),
            }
        return out

    def table(self, labels: dict | None = None) -> pd.DataFrame:
        """:meth:`summary` as a table, one line per method (named by ``labels``, default
        :data:`METHOD_LABELS`):
        ``method, accuracy, accuracy sd, cross-entropy, cross-entropy sd, runs, seconds``."""
        labels = {**IMPUTERS.labels(), **METHOD_LABELS} if labels is None else labels
        s = self.summary()
        return pd.DataFrame(
            [
                {
                    "method": labels.get(m, m),
                    "accuracy": s[m]["accuracy"],
                    "accuracy sd": s[m]["accuracy_std"],
                    "cross-entropy": s[m]["cross_entropy"],
                    "cross-entropy sd": s[m]["cross_entropy_std"],
                    "runs": s[m]["runs"],
                    "seconds": s[m]["seconds"],
                }
                for m in self.methods
            ],
            columns=[
                "method",
                "accuracy",
                "accuracy sd",
                "cross-entropy",
                "cross-entropy sd",
                "runs",
                "seconds",
            ],
        )

    def grid(self) -> list[dict]:
        """Per setting: mean and standard deviation over the repeats of every method."""
        g = self.runs.groupby(["test_ratio", "missing_ratio", "method"], sort=True)
        stats = g.agg(
            accuracy=("accuracy", "mean"),
            accuracy_std=("accuracy", lambda x: float(np.std(x))),
            cross_entropy=("cross_entropy", "mean"),
            cross_entropy_std=("cross_entropy", lambda x: float(np.std(x))),
            cells=("cells", "mean"),
        )
        out = []
        for tr in self.test_ratios:
            for mr in self.missing_ratios:
                rec = {"test_ratio": tr, "missing_ratio": mr, "methods": {}}
                for m in self.methods:
                    if (tr, mr, m) in stats.index:
                        s = stats.loc[(tr, mr, m)]
                        rec["cells"] = float(s["cells"])
                        rec["methods"][m] = {
                            c: float(s[c])
                            for c in ("accuracy", "cross_entropy", "accuracy_std", "cross_entropy_std")
                        }
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
        out["settings"] = {
            "test_ratios": list(self.test_ratios),
            "missing_ratios": list(self.missing_ratios),
            "repeats": self.repeats,
            **self.info,
        }
        return out


def benchmark(
    data: CategoricalData,
    methods: Sequence[str] = METHODS,
    *,
    test_ratios: Sequence[float] = DEFAULT_RATIOS,
    missing_ratios: Sequence[float] = DEFAULT_RATIOS,
    repeats: int = 10,
    seed: int = 0,
    structure: str = "auto",
    score: str = "qnml",
    params: str = "cnml",
    k: int = 3,
    include_class: bool = False,
    progress: Progress | None = None,
) -> BenchmarkResult:
    """The thesis's imputation experiment (chapter 4) on ``data``.

    For every (test ratio, missing ratio, repeat) the same MCAR split (:func:`induce_mcar`, seeded
    by ``(seed, setting, repeat)`` only, so every method sees the same hidden cells) is imputed by
    each method (:data:`bnfk_core.registry.IMPUTERS`) and scored with :func:`evaluate`.  The methods
    of one run share a cache: ``bn`` and ``fisher-knn`` one network, ``bn-wknn`` the ``wknn`` imputation.
    Unless ``include_class``, the class column is dropped first (module docstring).
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
    for m in methods:  # a bad option: one sentence naming it before the first split
        IMPUTERS.validate(m, {"k": k, "seed": seed, **learn})
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
                records.append(
                    {
                        "test_ratio": tr,
                        "missing_ratio": mr,
                        "repeat": rep,
                        "method": m,
                        "accuracy": res["accuracy"],
                        "cross_entropy": res["cross_entropy"],
                        "cells": res["cells"],
                        "seconds": time.perf_counter() - t0,
                    }
                )
            done += 1
            if progress is not None:
                progress(done / total, f"test {tr:g} x missing {mr:g}, repeat {rep + 1}/{repeats}")
    runs = pd.DataFrame.from_records(
        records,
        columns=[
            "test_ratio",
            "missing_ratio",
            "repeat",
            "method",
            "accuracy",
            "cross_entropy",
            "cells",
            "seconds",
        ],
    )
    used = structure if structure != "auto" else ("exact" if data.n_vars <= EXACT_MAX_VARIABLES else "hc")
    info = {
        "rows": data.n_rows,
        "variables": data.n_vars,
        "structure": used,
        "score": score,
        "params": params,
        "k": k,
        "seed": int(seed),
        "include_class": bool(include_class),
    }
    return BenchmarkResult(runs, methods, trs, mrs, repeats, time.perf_counter() - t_start, info)
