"""Thesis Tables 4.1-4.4 and B.1-B.2: BN, Mode and weighted-kNN imputation (thesis ch. 4), ours beside
published (:func:`bnfk_core.analyses.impute.benchmark.benchmark`)."""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analyses.impute.benchmark import benchmark
from . import published as pub
from .common import (
    TABLE_FILES,
    Progress,
    Settings,
    load_thesis_data,
    map_jobs,
    resolve_structure,
    say,
    structure_spec,
    thesis_names,
)
from .output import Writer, comparison_frame

_IMP_METHODS = ("bn", "bn-mode", "bn-wknn", "mode", "wknn")
_IMP_COL = {"BN": "bn", "BN-Mode": "bn-mode", "BN-wKNN": "bn-wknn", "Mode": "mode", "wKNN": "wknn"}


def _imputation_one(stem: str, grid: tuple, repeats: int, seed: int, structure: str, exact_max: int) -> dict:
    t0 = time.perf_counter()
    data = load_thesis_data(stem)
    feats = data.without_class()
    spec = structure_spec(structure, feats.n_vars, exact_max)
    res = benchmark(
        feats,
        _IMP_METHODS,
        test_ratios=grid,
        missing_ratios=grid,
        repeats=repeats,
        seed=seed,
        structure=spec["method"],
        score=spec["score"],
        params=spec["params"],
    )
    sys.stderr.write(f"imputation {stem}: {time.perf_counter() - t0:.1f} s\n")
    return {
        "stem": stem,
        "summary": res.summary(),
        "runs": res.runs.assign(dataset=stem),
        "spec": spec,
        "matrices": {m: res.matrix(m).tolist() for m in _IMP_METHODS},
        "seconds": time.perf_counter() - t0,
    }


def run_thesis_imputation(settings: Settings, w: Writer, progress: Progress | None) -> dict:
    """Thesis Tables 4.1-4.4 and B.1-B.2 (BN, Mode and weighted-kNN imputation), ours beside published.

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

    References
    ----------
    Thesis ch. 4, Tables 4.1-4.4.
    """
    structure = resolve_structure(settings, "thesis")
    grid = (0.2, 0.4) if settings.quick else (0.1, 0.2, 0.3, 0.4, 0.5)
    repeats = settings.repeats or (1 if settings.quick else 10)
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else 12
    names = thesis_names(settings)
    say(progress, 0.0, f"imputation on {len(names)} data sets")
    results = map_jobs(
        _imputation_one,
        [(s, grid, repeats, settings.seed, structure, exact_max) for _, s in names],
        settings.jobs,
    )
    by = {r["stem"]: r for r in results}
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    structs = {inv[s]: {"structure": by[s]["spec"]["label"]} for _, s in names}
    setup = (
        f"{len(grid)}x{len(grid)} settings (test ratio x missing ratio {', '.join(map(str, grid))}), "
        f"{repeats} run(s) each, seed {settings.seed}; BN structures: thesis = exact qNML up to {exact_max} "
        f"variables, hc/qNML above; cNML parameters"
        if structure == "thesis"
        else f"{len(grid)}x{len(grid)} settings, {repeats} run(s) each, seed {settings.seed}; BN: hc/BIC, "
        "smoothed"
    )
    for tid, key in (
        ("4.1", "accuracy"),
        ("4.2", "accuracy"),
        ("4.3", "accuracy"),
        ("4.4", "cross_entropy"),
        ("B.1", "accuracy_std"),
        ("B.2", "cross_entropy_std"),
    ):
        t = pub.table(tid)
        ours = {inv[s]: {c: by[s]["summary"][_IMP_COL[c]][key] for c in t.columns} for _, s in names}
        df = comparison_frame(tid, ours, structs)
        w.table(
            TABLE_FILES[tid],
            df,
            title=f"Thesis Table {tid}",
            caption=t.caption,
            measured=t.measured,
            setup=setup,
            compact_columns=t.columns,
        )
    runs = pd.concat([r["runs"] for r in results], ignore_index=True)
    w.frame("thesis_imputation_runs", runs)
    _imputation_figures(w, by, names, grid)
    return {
        "structure": structure,
        "grid": list(grid),
        "repeats": repeats,
        "exact_max_vars": exact_max,
        "methods": list(_IMP_METHODS),
        "structures": {s: by[s]["spec"]["label"] for _, s in names},
        "seconds_per_dataset": {s: by[s]["seconds"] for _, s in names},
    }


def _imputation_figures(w: Writer, by: dict, names, grid) -> None:
    stem = "spect" if "spect" in by else names[0][1]
    labels = [f"{g:g}" for g in grid]
    fig = make_subplots(rows=1, cols=5, subplot_titles=[m for m in _IMP_COL])
    for j, (name, m) in enumerate(_IMP_COL.items()):
        M = np.asarray(by[stem]["matrices"][m], float)
        fig.add_trace(
            go.Heatmap(
                z=M,
                x=labels,
                y=labels,
                zmin=0,
                zmax=1,
                coloraxis="coloraxis",
                text=np.round(M, 3),
                texttemplate="%{text}",
                hovertemplate="test %{y}, missing %{x}: %{z:.3f}<extra>" + name + "</extra>",
            ),
            row=1,
            col=j + 1,
        )
    fig.update_layout(
        title=f"Imputation accuracy per setting, {stem} (thesis Figs. 4.1-4.2 analogue): "
        "rows test ratio, columns ratio of missingness",
        coloraxis={"colorscale": "Viridis"},
        height=380,
    )
    w.figure("fig_thesis_imputation_heatmaps", fig)
    t = pub.table("4.3")
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    fig = go.Figure()
    for c in t.columns:
        xs = [inv[s] for _, s in names]
        fig.add_trace(
            go.Scatter(
                x=[t.value(x, c) for x in xs],
                y=[by[s]["summary"][_IMP_COL[c]]["accuracy"] for _, s in names],
                mode="markers",
                name=c,
                text=xs,
                hovertemplate="%{text}: published %{x:.3f}, ours %{y:.3f}",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dot", "color": "grey"}, name="ours = published"
        )
    )
    fig.update_layout(
        title="Table 4.3: imputation accuracy, ours vs published",
        xaxis_title="published (thesis)",
        yaxis_title="ours",
        height=450,
    )
    w.figure("fig_thesis_4_3", fig)
