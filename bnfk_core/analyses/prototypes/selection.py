"""Prototype selection: a subset X_S of k rows that represents X (paper, Algorithm 1 and "Experiments").

The data-summarization experiment (below) and reading its results.  The ideas live in their own modules,
re-exported here as the prototypes API: :mod:`.prototype_criteria` (the MMD and chi-square criteria and the
kernel columns of Theorem 1), :mod:`.prototype_search` (Algorithm 1's greedy swaps and one selection),
:mod:`.heldout` (the held-out
evaluation).  The criteria are the members of :data:`bnfk_core.registry.CRITERIA`.

Evaluation (paper, "Data summarization").  Split 50/50, learn the structure on the training half
(``hc`` with BIC treating the class as a feature, ``tan`` or ``kdb`` with K = 3), fit it with
pseudo-count one, select from the training half, re-fit the parameters of the same structure on
the subset (pseudo-count one) and report the per-sample negative log-likelihood of the test half;
for TAN/KDB also the misclassification rate and log loss of the class given the features.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import PrototypeError
from ...inference.queries import parent_marginals
from ...kernels.fisher import mmd as kernel_mmd
from ...learning.recipe import Recipe, learn_recipe
from ...network.model import fit
from ...registry import CRITERIA, LEARNERS
from .criteria import Chi2Criterion, MMDCriterion
from .heldout import HeldOut, class_posterior, split_half
from .members import SUMMARIZATION_STRUCTURES
from .search import (
    GreedyResult,
    PrototypeResult,
    check_subset_size,
    feature_embedding,
    greedy_swap,
    random_subsets,
    select_prototypes,
)

__all__ = [
    "CRITERIA",
    "SUMMARIZATION_STRUCTURES",
    "PrototypeError",
    "MMDCriterion",
    "Chi2Criterion",
    "GreedyResult",
    "greedy_swap",
    "random_subsets",
    "PrototypeResult",
    "select_prototypes",
    "HeldOut",
    "class_posterior",
    "split_half",
    "feature_embedding",
    "SummarizationExperiment",
    "prepare_summarization",
    "run_summarization",
    "summarize_benchmark",
    "selected_rows",
    "criterion_value",
    "share_below",
    "result_summary",
    "selected_table",
    "default_subset_sizes",
    "parse_subset_sizes",
    "curve_table",
    "map_sample",
    "compare_prototypes",
    "row_labels",
    "summarization_curve",
    "check_subset_size",
]


Progress = Callable[[float, str], None]


@dataclass
class SummarizationExperiment:
    """The k-independent part of the data-summarization experiment (see :func:`prepare_summarization`)."""

    structure: str
    class_column: str | None
    train_rows: np.ndarray  # row numbers of the training half in the original data
    test_rows: np.ndarray
    train: object  # CategoricalData aligned to ``model``
    model: object  # BayesNet fitted on the training half (pseudo-count one)
    mmd: MMDCriterion
    chi2: Chi2Criterion
    held: HeldOut
    full: dict  # held-out metrics of the full training half
    seed: int
    seconds: dict


def prepare_summarization(
    data,
    structure: str = "hc",
    *,
    dag=None,
    class_column: str | None = None,
    test_fraction: float = 0.5,
    seed: int = 0,
    kdb_k: int = 3,
    params: str = "smoothed",
    progress: Progress | None = None,
) -> SummarizationExperiment:
    """Split, learn the structure on the training half, fit it, build the criteria and the evaluator.

    ``hc`` treats the class as any other variable (BIC, the paper's Fig. 1) and is evaluated by
    the held-out NLL only; ``tan`` and ``kdb`` (K = ``kdb_k``) need ``class_column`` (default
    ``data.class_column``) and also report the class's error rate and log loss.  ``dag`` (a
    :class:`~bnfk_core.network.dag.DAG` over some of the columns) skips learning: ``structure`` becomes
    ``"given"`` and the class metrics are reported when the DAG contains the class column.  ``params`` is the
    CPT estimator of the training half's network (the paper's smoothed +1 by default; the app passes its
    recipe's for the current structure).

    Parameters
    ----------
    data : CategoricalData
    structure : {"hc", "tan", "kdb"}
    dag : DAG, optional
    class_column : str, optional
    test_fraction : float
    seed : int
        Seed of the split and the structure search.
    kdb_k : int
    params : str
    progress : callable(fraction, message), optional

    Returns
    -------
    SummarizationExperiment

    Raises
    ------
    PrototypeError
        For an unknown class column, structure or DAG column, or ``tan``/``kdb`` without a class column.

    References
    ----------
    Paper, "Data summarization" (Fig. 1: hill climbing with BIC, TAN, KDB).
    """

    cls = class_column if class_column is not None else data.class_column
    if cls is not None and cls not in data.variables:
        raise PrototypeError(f"Class column '{cls}' is not one of the columns of {data.source}.")
    if dag is not None:
        structure = "given"
        missing = [v for v in dag.nodes if v not in data.variables]
        if missing:
            raise PrototypeError(f"Column '{missing[0]}' of the structure is not in {data.source}.")
        classify = cls is not None and cls in dag.nodes
    else:
        structure = str(structure).lower()
        if structure not in SUMMARIZATION_STRUCTURES:
            raise PrototypeError(
                f"Unknown structure '{structure}'; choose one of {', '.join(SUMMARIZATION_STRUCTURES)}."
            )
        classify = LEARNERS[structure].needs_class  # the class is a node (TAN, KDB)
        if classify and cls is None:
            raise PrototypeError(f"Structure '{structure}' needs a class column (--class-column).")
    tr, te = split_half(data.n_rows, test_fraction, seed)
    train, test = data.subset(tr), data.subset(te)
    seconds = {}
    if progress is not None:
        progress(0.0, f"learning {structure} on {train.n_rows} training rows")
    t0 = time.perf_counter()
    if dag is None:
        recipe = Recipe(
            structure=structure, score="bic", params=params, missing_data="complete-rows", k=kdb_k, seed=seed
        )
        dag = learn_recipe(train, recipe, with_class=True).dag
    seconds["learn"] = time.perf_counter() - t0
    model = fit(dag, train, method=params, pseudo_count=1.0)
    train = model.align(train)
    if progress is not None:
        progress(0.5, "Fisher features of the training half")
    t0 = time.perf_counter()
    parent_marginals(model)
    mc = MMDCriterion.from_model(model, train)
    seconds["kernel"] = time.perf_counter() - t0
    cc = Chi2Criterion.from_data(train)
    held = HeldOut(dag, test, class_column=cls if classify else None)
    if progress is not None:
        progress(1.0, "ready")
    return SummarizationExperiment(
        structure,
        cls if classify else None,
        tr,
        te,
        train,
        model,
        mc,
        cc,
        held,
        held.evaluate(train.codes),
        int(seed),
        seconds,
    )


def run_summarization(
    exp: SummarizationExperiment,
    k: int,
    *,
    random_draws: int = 1000,
    criteria: Sequence[str] = CRITERIA,
    seed: int | None = None,
    progress: Progress | None = None,
    return_details: bool = False,
) -> dict:
    """One k of the experiment: R random subsets (baseline and starting points), greedy MMD and chi-square
    (and any other criterion of :data:`bnfk_core.registry.CRITERIA` named in ``criteria``, under its name).

    Returns ``{"full", "mmd", "chi2", "random", "seconds"}`` (see :func:`summarize_benchmark`).
    With ``return_details`` also ``details``: the random subsets' NLL and MMD and the selected rows
    (row numbers of the original data).

    Parameters
    ----------
    exp : SummarizationExperiment
    k : int
        Subset size.
    random_draws : int
    criteria : sequence of str
    seed : int, optional
    progress : callable(fraction, message), optional
    return_details : bool

    Returns
    -------
    dict

    Raises
    ------
    PrototypeError
        For an unknown criterion or ``random_draws`` < 1.

    References
    ----------
    Paper, Algorithm 1 (greedy selection) and "Data summarization".
    """
    criteria = [str(c).strip().lower() for c in criteria]
    for c in criteria:
        if c not in CRITERIA:
            raise PrototypeError(f"Unknown criterion '{c}'; choose from {', '.join(CRITERIA)}.")
    if int(random_draws) < 1:
        raise PrototypeError(f"--random-draws must be at least 1, got {random_draws}.")
    check_subset_size(k, exp.train.n_rows)
    seed = exp.seed if seed is None else int(seed)
    train, mc, cc, held = exp.train, exp.mmd, exp.chi2, exp.held

    def report(f, msg):
        if progress is not None:
            progress(f, msg)

    out = {
        "structure": exp.structure,
        "k": int(k),
        "seed": seed,
        "train_rows": train.n_rows,
        "test_rows": len(exp.test_rows),
        "arcs": exp.model.dag.n_arcs,
        "random_draws": int(random_draws),
        "full": dict(exp.full),
    }
    seconds = dict(exp.seconds)
    report(0.0, f"{random_draws} random subsets")
    t0 = time.perf_counter()
    draws = random_subsets(train.n_rows, k, random_draws, seed)
    d_mmd = mc.values(draws)
    d_chi = cc.values(draws)
    seconds["random_draws"] = time.perf_counter() - t0
    details = {}
    if "random" in criteria:
        evals = held.evaluate_many(train.codes[draws])
        rnd = {}
        for key in evals[0]:
            v = np.array([e[key] for e in evals])
            rnd[f"{key}_mean"], rnd[f"{key}_std"] = (
                float(v.mean()),
                float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            )
        rnd["mmd_mean"], rnd["mmd_std"] = float(d_mmd.mean()), float(d_mmd.std())
        out["random"] = rnd
        details["random_nll"] = [e["nll"] for e in evals]
        details["random_rows"] = [int(r) for r in exp.train_rows[draws[0]]]
        details["random_mmd"] = d_mmd.tolist()
        if "error" in evals[0]:
            details["random_error"] = [e["error"] for e in evals]
            details["random_log_loss"] = [e["log_loss"] for e in evals]
    built = {MMDCriterion.name: (mc, d_mmd), Chi2Criterion.name: (cc, d_chi)}
    greedy = [name for name in CRITERIA if name in criteria and CRITERIA[name].criterion is not None]
    for j, name in enumerate(greedy):  # registry order: mmd, chi2, then any registered later
        if name in built:
            crit, vals = built[name]
        else:  # a criterion registered beside the paper's two
            crit = CRITERIA[name].criterion(exp.model, train)
            vals = crit.values(draws)
        f0, width = 0.2 + 0.8 * j / len(greedy), 0.8 / len(greedy)
        report(f0, f"greedy {name}")
        best = draws[int(np.argmin(vals))]
        sub = None if progress is None else (lambda f, m, f0=f0, width=width: progress(f0 + width * f, m))
        res = greedy_swap(crit, best, progress=sub)
        seconds[f"greedy_{name}"] = res.seconds
        ev = held.evaluate(train.codes[res.indices])
        ev.update(
            {
                "mmd": mc.value(res.indices),
                "chi2": cc.value(res.indices),
                "start_value": res.start_value,
                "value": res.value,
                "swaps": res.swaps,
                "passes": res.passes,
                "converged": res.converged,
            }
        )
        out[name] = ev
        details[f"{name}_rows"] = [int(r) for r in exp.train_rows[res.indices]]
    out["seconds"] = seconds
    report(1.0, "done")
    if return_details:
        out["details"] = details
    return out


def summarize_benchmark(
    data,
    k: int,
    structure: str = "hc",
    *,
    class_column: str | None = None,
    test_fraction: float = 0.5,
    random_draws: int = 1000,
    criteria: Sequence[str] = CRITERIA,
    seed: int = 0,
    kdb_k: int = 3,
    progress: Progress | None = None,
    return_details: bool = False,
) -> dict:
    """The paper's data-summarization experiment for one k (module docstring).

    Returns ``{"full": {...}, "mmd": {..., "mmd"}, "chi2": {...}, "random": {"nll_mean", "nll_std", ...},
    "seconds": {"learn", "kernel", "greedy_mmd", "greedy_chi2", "random_draws"}, ...}``; the metrics are
    ``nll`` and, for TAN/KDB, ``error`` and ``log_loss``.  The greedy searches start from the best
    of the ``random_draws`` random subsets by their criterion (as the paper).

    Parameters
    ----------
    data : CategoricalData
    k : int
    structure, class_column, test_fraction, seed, kdb_k : see :func:`prepare_summarization`
    random_draws, criteria, progress, return_details : see :func:`run_summarization`

    Returns
    -------
    dict

    References
    ----------
    Paper, "Data summarization" and Algorithm 1.
    """
    criteria = [str(c).strip().lower() for c in criteria]
    for c in criteria:
        if c not in CRITERIA:
            raise PrototypeError(f"Unknown criterion '{c}'; choose from {', '.join(CRITERIA)}.")
    if int(random_draws) < 1:
        raise PrototypeError(f"--random-draws must be at least 1, got {random_draws}.")
    sub1 = None if progress is None else (lambda f, m: progress(0.1 * f, m))
    exp = prepare_summarization(
        data,
        structure,
        class_column=class_column,
        test_fraction=test_fraction,
        seed=seed,
        kdb_k=kdb_k,
        progress=sub1,
    )
    check_subset_size(k, exp.train.n_rows)
    sub2 = None if progress is None else (lambda f, m: progress(0.1 + 0.9 * f, m))
    out = {"dataset": data.source}
    out.update(
        run_summarization(
            exp, k, random_draws=random_draws, criteria=criteria, progress=sub2, return_details=return_details
        )
    )
    return out


# ====================================================================== reading a run
def selected_rows(result: dict, criterion: str) -> list[int]:
    """Row numbers (of the original data) that ``criterion`` chose in a :func:`run_summarization` result
    made with ``return_details``; for ``random`` the first of the random subsets.

    Parameters
    ----------
    result : dict
    criterion : str

    Returns
    -------
    list of int
    """
    return result["details"]["random_rows" if criterion == "random" else f"{criterion}_rows"]


def criterion_value(result: dict, criterion: str, metric: str) -> float:
    """``metric`` (``mmd``, ``nll``, ``error``, ``log_loss``) of the subset that ``criterion`` chose in a
    :func:`run_summarization` result with ``return_details`` (``random``: the first random subset).

    Parameters
    ----------
    result : dict
    criterion, metric : str

    Returns
    -------
    float
    """
    if criterion == "random":
        return result["details"][f"random_{metric}"][0]
    return result[criterion][metric]


def share_below(result: dict, criterion: str, metric: str = "nll") -> float:
    """The fraction of the random subsets whose ``metric`` is lower than that of ``criterion``'s subset.

    Parameters
    ----------
    result : dict
    criterion, metric : str

    Returns
    -------
    float
    """
    return float(
        np.mean(np.array(result["details"][f"random_{metric}"]) < criterion_value(result, criterion, metric))
    )


def result_summary(result: dict, criterion: str) -> dict:
    """The JSON-ready part of a :func:`run_summarization` result (no per-draw details) and the selection.

    Parameters
    ----------
    result : dict
    criterion : str

    Returns
    -------
    dict
    """
    out = {
        key: result[key]
        for key in ("k", "structure", "full", "random", "mmd", "chi2", "seconds")
        if key in result
    }
    out["selected"] = {"criterion": criterion, "rows": selected_rows(result, criterion)}
    return out


def selected_table(data, rows: Sequence[int]) -> pd.DataFrame:
    """The chosen rows of ``data`` with their row number first.

    Parameters
    ----------
    data : CategoricalData
    rows : sequence of int

    Returns
    -------
    pandas.DataFrame
    """
    return data.frame.iloc[list(rows)].assign(row=list(rows))[["row"] + list(data.variables)]


def default_subset_sizes(n_train: int) -> list[int]:
    """Five subset sizes for a curve over k: 20 %, 40 %, ..., 100 % of min(1000, half the training rows).

    Parameters
    ----------
    n_train : int

    Returns
    -------
    list of int
    """
    hi = max(2, min(1000, n_train // 2))
    return sorted({max(1, int(round(hi * f))) for f in (0.2, 0.4, 0.6, 0.8, 1.0)})


def parse_subset_sizes(text: str, n_train: int) -> list[int]:
    """Distinct sorted subset sizes from ``"10, 20; 30"``; each must lie in 1 .. n_train - 1.

    Parameters
    ----------
    text : str
    n_train : int

    Returns
    -------
    list of int

    Raises
    ------
    PrototypeError
        For a value that is not a whole number or out of range.
    """
    try:
        ks = sorted({int(x) for x in str(text).replace(";", ",").split(",") if x.strip()})
    except ValueError:
        raise PrototypeError(
            f"Subset sizes must be whole numbers separated by commas, got '{text}'."
        ) from None
    bad = [x for x in ks if not 1 <= x < n_train]
    if bad:
        raise PrototypeError(
            f"Subset size {bad[0]} is outside 1..{n_train - 1} (the training half has {n_train} rows)."
        )
    return ks


def curve_table(curve: Sequence[dict], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per k of a list of :func:`run_summarization` results: the full training half's, the random
    subsets' (mean, sd) and the greedy subsets' ``metrics`` (and MMD), and the greedy MMD search's seconds.

    Parameters
    ----------
    curve : sequence of dict
    metrics : sequence of str

    Returns
    -------
    pandas.DataFrame
    """
    metrics = list(metrics)
    return pd.DataFrame(
        [
            {
                "k": r["k"],
                **{f"full_{m}": r["full"][m] for m in metrics},
                **{f"random_{m}_mean": r["random"][f"{m}_mean"] for m in metrics},
                **{f"random_{m}_std": r["random"][f"{m}_std"] for m in metrics},
                **{f"{c}_{m}": r[c][m] for c in ("mmd", "chi2") for m in metrics + ["mmd"]},
                "seconds_greedy_mmd": r["seconds"]["greedy_mmd"],
            }
            for r in curve
        ]
    )


def map_sample(
    train_rows: np.ndarray, chosen: Sequence[int], max_rows: int = 2000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (into ``train_rows``) of the ``chosen`` row numbers, and of at most ``max_rows`` of the
    other rows (a seeded uniform sample, sorted; all of them when there are few enough).

    Parameters
    ----------
    train_rows : ndarray of int
    chosen : sequence of int
    max_rows : int
    seed : int

    Returns
    -------
    chosen_positions, other_positions : ndarray of int64
    """
    pos = {int(r): j for j, r in enumerate(train_rows)}
    js = np.array([pos[int(r)] for r in chosen], dtype=np.int64)
    others = np.setdiff1d(np.arange(len(train_rows)), js)
    if len(others) > max_rows:
        others = np.sort(np.random.default_rng(seed).choice(others, max_rows, replace=False))
    return js, others


def compare_prototypes(models: Sequence, data, k: int, *, seed: int = 0) -> dict:
    """Greedy-MMD prototypes of ``data`` under each model's Fisher kernel, and each set's MMD² under each
    kernel.

    Returns ``{"sets": [sorted row indices per model], "mmd": M}`` with ``M[a][b]`` the squared MMD
    (:func:`bnfk_core.kernels.fisher.mmd`) of set ``a`` to ``data`` under model ``b``'s kernel.

    Parameters
    ----------
    models : sequence of BayesNet
    data : CategoricalData
    k : int
    seed : int

    Returns
    -------
    dict

    References
    ----------
    Paper, Algorithm 1 and eq. (10).
    """
    sets = [np.sort(select_prototypes(m, data, k, "mmd", seed=seed).indices) for m in models]
    mmd = [[kernel_mmd(m, data.subset(s), data) for m in models] for s in sets]
    return {"sets": [s.tolist() for s in sets], "mmd": mmd}


def row_labels(data, rows) -> tuple[np.ndarray, tuple]:
    """Class codes of ``rows`` of ``data`` (−1 for a missing class; all −1 without a class column) and the
    class states (empty without a class column).

    Parameters
    ----------
    data : CategoricalData
    rows : sequence of int

    Returns
    -------
    codes : ndarray of int
    states : tuple of str
    """
    rows = np.asarray(rows, dtype=np.int64)
    if data.class_column is None:
        return np.full(len(rows), -1), ()
    ci = data.index(data.class_column)
    return data.codes[rows, ci], tuple(data.states[ci])


def summarization_curve(
    exp: SummarizationExperiment,
    ks: Sequence[int],
    *,
    random_draws: int = 1000,
    progress: Progress | None = None,
    run_one: Callable[[int], dict] | None = None,
) -> list[dict]:
    """The experiment for every subset size in ``ks`` (the paper's Fig. 1 over k): a list of
    :func:`run_summarization` results with details, in the order of ``ks``.

    ``run_one(k)`` replaces the default ``run_summarization(exp, k, random_draws=random_draws,
    return_details=True)`` (e.g. a cached version of it); ``progress(fraction, message)`` is told
    before each k and at the end.

    Parameters
    ----------
    exp : SummarizationExperiment
    ks : sequence of int
    random_draws : int
    progress : callable(fraction, message), optional
    run_one : callable(int) -> dict, optional

    Returns
    -------
    list of dict
    """
    if run_one is None:

        def run_one(k):
            return run_summarization(exp, int(k), random_draws=random_draws, return_details=True)

    out = []
    for j, k in enumerate(ks):
        if progress is not None:
            progress(j / len(ks), f"k = {k} ({j + 1} of {len(ks)})")
        out.append(run_one(k))
    if progress is not None:
        progress(1.0, "Done")
    return out
