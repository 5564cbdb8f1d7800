"""``reproduce imputation-peers``: bnfk's imputation beside the imputers analysts use instead.

Protocol (the thesis's MCAR protocol, chapter 4.2.1, on the whole table): per bundled data set (its
attributes; the class column is dropped, as the thesis; the original missing values are a category of
their own, thesis 3.4), per masked ratio m in 10 / 20 / 30 % and seed s:

1. at most ``n_max`` rows drawn with seed s (all rows when fewer; the same rows for every method);
2. exactly round(m x observed cells) cells hidden uniformly at random
   (:func:`bnfk_core.analyses.impute.benchmark.induce_mcar` with test ratio 1, seed s);
3. every method imputes the hidden cells from the rest; accuracy of the arg-max and capped cross-entropy
   on the hidden cells (:func:`~bnfk_core.analyses.impute.benchmark.evaluate`).

Methods: bnfk's default (:data:`~bnfk_core.analyses.impute.methods.DEFAULT_IMPUTER`, the stacked imputer of
:mod:`bnfk_core.analyses.impute.stack`), its parts and cousins (the BN + LCA average, the structural-EM
network, the numpy kNN; free once the stack ran, its components are cached), and every registered peer
(``peer=True`` in
:data:`bnfk_core.registry.IMPUTERS`: the most frequent value, scikit-learn's kNN on one-hot codes, the latent
class model).  ``--quick`` adds the other network variants (available case, BN-Mode, complete rows).  The
networks use hill climbing with :data:`LEARN`.  Rows: at most :data:`N_MAX` per seed (letter, waveform_5000,
mushroom, nursery, kr_vs_kp, car are capped; the table says "1000 of N").

Outputs (in ``<out>/imputation_peers/``): ``imputation_peers_runs.csv`` (one row per data set x ratio x
seed x method), ``imputation_peers.csv`` (mean and std over seeds) and ``imputation_peers.md`` (the table,
mean ± std, the best per line in bold, and where bnfk's default does not lead).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..analyses.impute.benchmark import evaluate, induce_mcar
from ..analyses.impute.methods import DEFAULT_IMPUTER, IMPUTE_LEARN
from ..registry import IMPUTERS
from . import common as ex
from .output import markdown_table

__all__ = [
    "PEERS_DIR",
    "RATIOS",
    "LEARN",
    "QUICK_PEERS",
    "peer_methods",
    "run_dataset",
    "run_peers",
    "summary",
    "lead_table",
    "lead_notes",
    "lead_markdown",
]

PEERS_DIR = "imputation_peers"
RATIOS = (0.1, 0.2, 0.3)
#: the networks' learning options (those of ``impute --structure hc-greedy``: the greedy climb these tables
#: are made with, not ``hc``'s iterated tabu search)
LEARN = {"structure": "hc-greedy", **IMPUTE_LEARN}
#: variants shown beside the default: the stack's equal-weight cousin and its network alone (both free once
#: the stack ran: the components are cached), then the other network variants (thesis BN-Mode, available case,
#: complete rows) -- those only with ``--repeats``-sized runs that can afford them (:data:`FULL_VARIANTS`)
VARIANTS = ("stack", "bn-lca", "bn-em", "bn-ac", "bn-mode", "bn")
#: the variants of the full run (every bundled data set x 3 ratios x 5 seeds; the costly ones left out)
FULL_VARIANTS = ("stack", "bn-lca", "bn-em", "knn")
QUICK_PEERS = ("house_votes_84", "breast_cancer")
N_MAX, N_MAX_QUICK = 1000, 300
SEEDS, SEEDS_QUICK = 5, 2


def peer_methods(variants=VARIANTS) -> list[str]:
    """bnfk's default, its variants, then every registered peer (registration order).

    Parameters
    ----------
    variants : sequence of str

    Returns
    -------
    list of str
    """
    out = [DEFAULT_IMPUTER] + [v for v in variants if v != DEFAULT_IMPUTER]
    return out + [n for n in IMPUTERS.names(peer=True) if n not in out]


def _available(name: str) -> bool:
    needs = IMPUTERS[name].needs
    if not needs:
        return True
    import importlib.util

    module = {"scikit-learn": "sklearn"}.get(needs, needs)
    return importlib.util.find_spec(module) is not None


def _load(stem: str):
    data = ex.load_paper_data(stem) if stem in ex.PAPER_LOAD else ex.load_thesis_data(stem)
    return data.without_class()


def run_dataset(stem: str, seeds: tuple, ratios: tuple, methods: tuple, n_max: int) -> pd.DataFrame:
    """One bundled data set's runs (module docstring, steps 1-3): one row per seed x ratio x method.

    Parameters
    ----------
    stem : str
    seeds : tuple of int
    ratios : tuple of float
        Shares of cells masked.
    methods : tuple of str
    n_max : int
        Rows drawn (per seed) from a larger data set.

    Returns
    -------
    pandas.DataFrame
    """
    data = _load(stem)
    rows = []
    for seed in seeds:
        d = data
        if data.n_rows > n_max:
            d = data.subset(np.sort(np.random.default_rng(seed).choice(data.n_rows, n_max, replace=False)))
        for ratio in ratios:
            split = induce_mcar(d, 1, ratio, seed=seed)
            cache: dict = {}
            for m in methods:
                t0 = time.perf_counter()
                try:
                    imp = IMPUTERS[m].impute(split.data, k=3, seed=seed, cache=cache, **LEARN)
                    res = evaluate(imp, split.truth, split.hidden)
                    note = ""
                except Exception as exc:  # a method that cannot run here (e.g. no complete row) is a gap
                    res = {"accuracy": np.nan, "cross_entropy": np.nan, "cells": split.n_hidden}
                    note = f"{type(exc).__name__}: {str(exc)[:120]}"
                rows.append(
                    {
                        "dataset": stem,
                        "rows": d.n_rows,
                        "of_rows": data.n_rows,
                        "masked": ratio,
                        "seed": seed,
                        "method": m,
                        "accuracy": res["accuracy"],
                        "cross_entropy": res["cross_entropy"],
                        "cells": res["cells"],
                        "seconds": time.perf_counter() - t0,
                        "note": note,
                    }
                )
    return pd.DataFrame(rows)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and (population) std over seeds per data set, ratio and method.

    Parameters
    ----------
    runs : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
    """
    g = runs.groupby(["dataset", "masked", "method"], sort=False)
    out = g.agg(
        rows=("rows", "max"),
        of_rows=("of_rows", "max"),
        accuracy=("accuracy", "mean"),
        accuracy_std=("accuracy", lambda x: float(np.std(x))),
        cross_entropy=("cross_entropy", "mean"),
        seconds=("seconds", "mean"),
        runs=("seed", "size"),
    )
    return out.reset_index()


def lead_table(summ: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """One line per data set and ratio: every method's mean ± std accuracy, the best peer, and the margin
    of bnfk's default over it (negative: a peer is ahead).

    Parameters
    ----------
    summ : pandas.DataFrame
    methods : list of str

    Returns
    -------
    pandas.DataFrame
    """
    peers = [m for m in methods if IMPUTERS[m].peer]
    lines = []
    for (stem, ratio), sub in summ.groupby(["dataset", "masked"], sort=False):
        acc = dict(zip(sub["method"], sub["accuracy"]))
        sd = dict(zip(sub["method"], sub["accuracy_std"]))
        n, of = int(sub["rows"].max()), int(sub["of_rows"].max())
        line = {
            "dataset": stem,
            "rows": f"{n} of {of}" if n < of else f"{n}",
            "seeds": int(sub["runs"].max()),
            "masked": f"{ratio:.0%}",
        }
        top = np.nanmax([acc.get(m, np.nan) for m in methods])
        for m in methods:
            a = acc.get(m, np.nan)
            cell = "n/a" if not np.isfinite(a) else f"{a:.3f} ± {sd[m]:.3f}"
            line[IMPUTERS[m].label] = f"**{cell}**" if np.isfinite(a) and a >= top - 1e-12 else cell
        best_peer = max(peers, key=lambda m: -np.inf if not np.isfinite(acc.get(m, np.nan)) else acc[m])
        line["best peer"] = IMPUTERS[best_peer].label
        line["default - best peer"] = f"{acc[methods[0]] - acc[best_peer]:+.3f}"
        lines.append(line)
    return pd.DataFrame(lines)


def lead_notes(lead: pd.DataFrame, runs: pd.DataFrame, methods: list[str]) -> list[str]:
    """Where bnfk's default is behind the best peer, and the runs that could not be imputed.

    Parameters
    ----------
    lead, runs : pandas.DataFrame
    methods : list of str

    Returns
    -------
    list of str
    """
    behind = lead[lead["default - best peer"].str.startswith("-")]
    notes = [
        f"bnfk's default ({IMPUTERS[methods[0]].label}) leads or ties the best peer on "
        f"{len(lead) - len(behind)} "
        f"of {len(lead)} lines"
        + (
            "; behind on "
            + "; ".join(
                f"{r['dataset']} {r['masked']} ({r['default - best peer']})" for _, r in behind.iterrows()
            )
            if len(behind)
            else "."
        )
    ]
    gaps = runs[runs["note"].fillna("") != ""]
    if len(gaps):
        notes.append(
            f"{len(gaps)} runs could not be imputed (n/a), e.g. {gaps.iloc[0]['method']} on "
            f"{gaps.iloc[0]['dataset']}: {gaps.iloc[0]['note']}"
        )
    return notes


def lead_markdown(lead: pd.DataFrame, setup: str, notes: list[str], title: str = "# Imputation peers") -> str:
    """The lead table as markdown: title, setup, the table (best per line in bold), notes.

    Parameters
    ----------
    lead : pandas.DataFrame
    setup : str
    notes : list of str
    title : str

    Returns
    -------
    str
    """
    md = (
        ([title, ""] if title else [])
        + [setup + ".", "", markdown_table(lead), ""]
        + [f"- {n}" for n in notes]
    )
    return "\n".join(md) + "\n"


def run_peers(settings, w, progress) -> dict:
    """The ``imputation-peers`` experiment (module docstring); files go to ``<out>/imputation_peers/``.

    Parameters
    ----------
    settings : Settings
    w : Writer
        Writes the experiment's files.
    progress : callable(fraction, message) or None

    Returns
    -------
    dict
        The experiment's part of its manifest record (:func:`~bnfk_core.reproduce.experiments.run_experiment`
        adds the rest).
    """
    allowed = tuple(sorted(ex.catalog()))
    names = list(settings.datasets or (QUICK_PEERS if settings.quick else allowed))
    for s in names:
        if s not in allowed:
            raise ex.ReproduceError(f"'{s}' is not a bundled data set; choose from {', '.join(allowed)}.")
    repeats = settings.repeats or (SEEDS_QUICK if settings.quick else SEEDS)
    seeds = tuple(settings.seed + r for r in range(repeats))
    ratios = (0.1, 0.3) if settings.quick else RATIOS
    n_max = N_MAX_QUICK if settings.quick else N_MAX
    wanted = peer_methods(VARIANTS if settings.quick else FULL_VARIANTS)
    methods = [m for m in wanted if _available(m)]
    skipped = [m for m in wanted if m not in methods]
    ex.say(progress, 0.0, f"imputation peers on {len(names)} data sets")
    runs = pd.concat(
        ex.map_jobs(run_dataset, [(s, seeds, ratios, tuple(methods), n_max) for s in names], settings.jobs),
        ignore_index=True,
    )
    summ = summary(runs)
    lead = lead_table(summ, methods)
    (w.out / PEERS_DIR).mkdir(parents=True, exist_ok=True)
    w.frame(f"{PEERS_DIR}/imputation_peers_runs", runs)
    setup = (
        f"{len(names)} data sets, at most {n_max} rows per seed, seeds {seeds[0]}..{seeds[-1]}, "
        f"{', '.join(f'{r:.0%}' for r in ratios)} of the observed cells hidden at random (MCAR, whole "
        "table); "
        f"networks: hc/{LEARN['score']} + {LEARN['params']}; kNN k = 5 on one-hot codes"
    )
    notes = lead_notes(lead, runs, methods)
    if skipped:
        notes.append(f"skipped (package missing): {', '.join(skipped)}")
    behind = lead[lead["default - best peer"].str.startswith("-")]
    w.table(
        f"{PEERS_DIR}/imputation_peers",
        summ,
        title="Imputation: bnfk beside the peers (accuracy on hidden cells)",
        caption="(no published counterpart: a new comparison)",
        measured="accuracy of the arg-max and capped cross-entropy on the hidden cells, mean and std over "
        "seeds",
        setup=setup,
        notes=notes,
    )
    (w.out / PEERS_DIR / "imputation_peers_lead.md").write_text(lead_markdown(lead, setup, notes))
    w.files.append(f"{PEERS_DIR}/imputation_peers_lead.md")
    return {
        "datasets": names,
        "methods": methods,
        "seeds": list(seeds),
        "ratios": list(ratios),
        "behind": [f"{r['dataset']} {r['masked']}" for _, r in behind.iterrows()],
    }
