"""The paper's run times: the data-summarization experiment timed (kernel, greedy MMD) beside the published
seconds."""

from __future__ import annotations

import os
import sys
import time

import pandas as pd

from ..analyses.prototypes.selection import prepare_summarization, run_summarization
from ..kernels.fisher import gram
from . import published as pub
from .common import Progress, Settings, load_paper_data, map_jobs, paper_names, say
from .output import Writer, machine


def _speed_one(stem: str, ks: tuple, draws: int, seed: int) -> list:
    data = load_paper_data(stem)
    exp = prepare_summarization(data, "hc-greedy", seed=seed)
    t0 = time.perf_counter()
    gram(exp.model, exp.train)
    gram_s = time.perf_counter() - t0
    rows = [
        {
            "dataset": stem,
            "step": "kernel",
            "k": None,
            "ours": exp.seconds["kernel"],
            "detail": "parent marginals + sparse Fisher features of the training half",
        },
        {
            "dataset": stem,
            "step": "gram",
            "k": None,
            "ours": gram_s,
            "detail": f"full {exp.train.n_rows} x {exp.train.n_rows} Fisher Gram matrix of the training half",
        },
        {
            "dataset": stem,
            "step": "learn",
            "k": None,
            "ours": exp.seconds["learn"],
            "detail": "hill climbing with BIC on the training half (the paper used bnlearn; not timed there)",
        },
    ]
    for k in ks:
        r = run_summarization(exp, k, random_draws=draws, criteria=("mmd", "chi2"), seed=seed)
        for step in ("greedy_mmd", "greedy_chi2", "random_draws"):
            rows.append(
                {
                    "dataset": stem,
                    "step": step,
                    "k": k,
                    "ours": r["seconds"][step],
                    "detail": {
                        "greedy_mmd": "Algorithm 1 with MMD from the best random subset",
                        "greedy_chi2": "Algorithm 1 with the chi-square heuristic",
                        "random_draws": f"{draws} random subsets, MMD and chi-square of each",
                    }[step],
                }
            )
    sys.stderr.write(f"speed {stem} done\n")
    return rows


def run_speed(settings: Settings, w: Writer, progress: Progress | None) -> dict:
    """The paper's run times: the data-summarization steps timed beside the published seconds.

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
    ks = (200,) if settings.quick else (200, 1000)
    draws = settings.random_draws or (200 if settings.quick else 1000)
    names = paper_names(settings)
    say(progress, 0.0, f"timing on {len(names)} data sets")
    rows = [
        r for res in map_jobs(_speed_one, [(s, ks, draws, settings.seed) for _, s in names], 1) for r in res
    ]
    inv = {v: k for k, v in pub.PAPER_DATASETS.items()}
    ps = pub.PAPER_RUNTIMES["seconds"]
    for r in rows:
        paper = ps.get(r["step"], {}).get(inv[r["dataset"]])
        if isinstance(paper, tuple):
            paper = paper[0] if r["k"] == 200 else paper[1] if r["k"] == 1000 else None
        r["published"] = float(paper) if paper is not None else float("nan")
        r["published / ours"] = (
            r["published"] / r["ours"] if paper is not None and r["ours"] > 0 else float("nan")
        )
    df = pd.DataFrame(
        rows, columns=["dataset", "step", "k", "ours", "published", "published / ours", "detail"]
    )
    df = df.rename(columns={"ours": "seconds (ours)", "published": "seconds (published)"})
    load = machine()["load_average"]
    w.table(
        "paper_runtimes",
        df,
        title="Paper run times vs ours",
        caption=pub.PAPER_RUNTIMES["text"],
        measured="wall-clock seconds of each step (ours single process, this machine)",
        setup=f"{os.cpu_count()} CPUs, load average {load} at the end; hc/BIC network, seed {settings.seed}, "
        f"{draws} random subsets, k in {list(ks)}; the paper: {pub.PAPER_RUNTIMES['machine']}",
        notes=[
            "The paper's 'kernel' step is parent probabilities plus kernel evaluations for the training "
            "points; ours 'kernel' is parent marginals plus the explicit sparse features (all the greedy "
            "search needs), 'gram' the full N x N matrix for comparison."
        ],
    )
    return {
        "ks": list(ks),
        "random_draws": draws,
        "datasets": [s for _, s in names],
        "structure": "hc/BIC (ours)",
    }
