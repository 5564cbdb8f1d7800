"""The paper's data-summarization figures (Figs. 1-3, as tables): greedy MMD and chi-square prototypes against
random subsets, held-out NLL / error / log loss
(:func:`bnfk_core.analyses.prototypes.selection.run_summarization`)."""

from __future__ import annotations

import sys
import time

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analyses.prototypes.selection import prepare_summarization, run_summarization, split_half
from ..learning.structure import learn_structure
from . import published as pub
from .common import (
    PAPER_KS,
    Progress,
    Settings,
    load_paper_data,
    map_jobs,
    paper_names,
    resolve_structure,
    say,
    structure_spec,
)
from .output import Writer


def _fig1_dag(data, structure: str, seed: int, exact_max: int):
    """Fig. 1's network for ``structure="thesis"``: exact/qNML on the training half (as prepare_summarization
    splits)."""
    tr, _ = split_half(data.n_rows, 0.5, seed)
    train = data.subset(tr)
    spec = structure_spec("thesis", train.n_vars, exact_max)
    return learn_structure(train, spec["method"], score="qnml", class_column=None, seed=seed).dag, spec[
        "label"
    ]


def _summarization_one(
    stem: str, structures: tuple, ks: tuple, draws: int, seed: int, which: str, exact_max: int
) -> list:
    data = load_paper_data(stem)
    out = []
    for st in structures:
        t0 = time.perf_counter()
        dag, label = (
            None,
            {"hc": "hc/BIC (ours) + smoothed", "tan": "TAN + smoothed", "kdb": "KDB K=3 + smoothed"}[st],
        )
        if st == "hc" and which == "thesis":
            dag, label = _fig1_dag(data, "thesis", seed, exact_max)
            label += " (smoothed parameters)"
        exp = prepare_summarization(
            data,
            "hc-greedy" if st == "hc" else st,
            dag=dag,
            class_column=None if st == "hc" else data.class_column,
            seed=seed,
        )
        for k in ks:
            r = run_summarization(exp, k, random_draws=draws, seed=seed)
            rec = {
                "dataset": stem,
                "structure": st,
                "network": label,
                "k": k,
                "arcs": r["arcs"],
                "train_rows": r["train_rows"],
                "test_rows": r["test_rows"],
            }
            for metric in ("nll", "error", "log_loss"):
                if metric not in r["full"]:
                    continue
                rec[f"{metric} full"] = r["full"][metric]
                rec[f"{metric} mmd"] = r["mmd"][metric]
                rec[f"{metric} chi2"] = r["chi2"][metric]
                rec[f"{metric} random mean"] = r["random"][f"{metric}_mean"]
                rec[f"{metric} random std"] = r["random"][f"{metric}_std"]
            rec["mmd of mmd subset"] = r["mmd"]["mmd"]
            rec["mmd random mean"] = r["random"]["mmd_mean"]
            for key, v in r["seconds"].items():
                rec[f"seconds {key}"] = v
            out.append(rec)
        sys.stderr.write(f"summarization {stem}/{st}: {time.perf_counter() - t0:.1f} s\n")
    return out


def _claims(df: pd.DataFrame, fig_id: str) -> list[dict]:
    f = pub.PAPER_FIGURES[fig_id]
    rows = []
    for cid, text in f.claims:
        if cid == "mmd_beats_chi2_and_random":
            cells = [(r, m) for _, r in df.iterrows() for m in f.metrics]
            ok = [r[f"{m} mmd"] < r[f"{m} chi2"] and r[f"{m} mmd"] < r[f"{m} random mean"] for r, m in cells]
            ours = f"MMD best of the three in {sum(ok)}/{len(ok)} (data set, k, metric) cells"
            holds = sum(ok) >= 0.5 * len(ok)
        elif cid == "tan_smallest_k_close_to_full":
            sub = df[df["dataset"].isin(["nursery", "waveform_5000"])]
            sub = sub[sub["k"] == sub["k"].min()] if len(sub) else sub
            gaps = [(r["dataset"], r["error mmd"] - r["error full"]) for _, r in sub.iterrows()]
            ours = (
                "; ".join(f"{d}: error(MMD, smallest k) - error(full) = {g:+.3f}" for d, g in gaps)
                or "not run"
            )
            holds = bool(gaps) and all(g < 0.02 for _, g in gaps)
        elif cid == "kdb_nursery_small_k_near_random":
            sub = df[df["dataset"] == "nursery"]
            sub = sub[sub["k"] == sub["k"].min()] if len(sub) else sub
            gaps = [r["error mmd"] - r["error random mean"] for _, r in sub.iterrows()]
            ours = (
                "; ".join(f"nursery smallest k: error(MMD) - error(random mean) = {g:+.3f}" for g in gaps)
                or "not run"
            )
            holds = bool(gaps) and all(g > -0.01 for g in gaps)
        else:  # pragma: no cover
            continue
        rows.append(
            {"figure": fig_id, "claim": cid, "published": text, "ours": ours, "holds (ours)": bool(holds)}
        )
    return rows


def run_paper_summarization(settings: Settings, w: Writer, progress: Progress | None) -> dict:
    """The paper's data-summarization experiment (Figs. 1-3, as tables) on its data sets.

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
    Paper, "Data summarization" and Algorithm 1.
    """
    which = resolve_structure(settings, "paper")
    ks = tuple(settings.ks) if settings.ks else ((200,) if settings.quick else PAPER_KS)
    draws = settings.random_draws or (50 if settings.quick else 1000)
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else 20
    names = paper_names(settings)
    say(progress, 0.0, f"data summarization on {len(names)} data sets")
    results = map_jobs(
        _summarization_one,
        [(s, ("hc", "tan", "kdb"), ks, draws, settings.seed, which, exact_max) for _, s in names],
        settings.jobs,
    )
    df = pd.DataFrame([r for res in results for r in res])
    claims = []
    for fig_id, st in (("Fig. 1", "hc"), ("Fig. 2", "tan"), ("Fig. 3", "kdb")):
        f = pub.PAPER_FIGURES[fig_id]
        sub = df[df["structure"] == st].reset_index(drop=True)
        stem = "paper_" + fig_id.lower().replace(". ", "_")
        keep = (
            ["dataset", "network", "k", "arcs"]
            + [c for c in sub.columns if c.split(" ")[0] in f.metrics]
            + ["mmd of mmd subset", "mmd random mean"]
            + [c for c in sub.columns if c.startswith("seconds")]
        )
        cl = _claims(sub, fig_id)
        claims += cl
        setup = (
            f"50/50 split (seed {settings.seed}), network {sub['network'].iloc[0]}, k in {list(ks)}, "
            f"{draws} random subsets per k (baseline and greedy starting points), greedy swaps (Algorithm 1)"
        )
        w.table(
            stem,
            sub[keep],
            title=f"Paper {fig_id} (as a table)",
            caption=f.caption,
            measured=", ".join(f.metrics) + " per test sample on the held-out half",
            setup=setup,
            notes=[
                f'Published (text): "{c["published"]}" -- ours: {c["ours"]} '
                f"({'holds' if c['holds (ours)'] else 'does not hold'})."
                for c in cl
            ]
            + [
                "The paper's figures are images without printed numbers; only the claims the text makes "
                "about "
                "them can be compared."
            ],
        )
        _summary_figure(w, sub, fig_id, stem)
    cdf = pd.DataFrame(claims)
    w.table(
        "paper_claims",
        cdf,
        title="Paper Figs. 1-3: the text's claims vs ours",
        caption="(claims in the text)",
        measured="qualitative orderings",
        setup=f"k in {list(ks)}, {draws} random subsets",
    )
    return {
        "structure": which,
        "ks": list(ks),
        "random_draws": draws,
        "datasets": [s for _, s in names],
        "fig1_network": sorted(set(df.loc[df["structure"] == "hc", "network"])),
    }


def _summary_figure(w: Writer, sub: pd.DataFrame, fig_id: str, stem: str) -> None:
    f = pub.PAPER_FIGURES[fig_id]
    dsets = list(dict.fromkeys(sub["dataset"]))
    fig = make_subplots(
        rows=len(f.metrics),
        cols=len(dsets),
        subplot_titles=[f"{d}: {m}" for m in f.metrics for d in dsets],
        shared_xaxes=True,
    )
    colors = {"mmd": "#d62728", "chi2": "#1f77b4", "random mean": "#7f7f7f", "full": "#2ca02c"}
    for i, m in enumerate(f.metrics):
        for j, d in enumerate(dsets):
            s = sub[sub["dataset"] == d].sort_values("k")
            for key, name in (
                ("mmd", "greedy MMD"),
                ("chi2", "greedy χ²"),
                ("random mean", "random mean ± sd"),
                ("full", "full set"),
            ):
                kw = {}
                if key == "random mean":
                    kw["error_y"] = {"type": "data", "array": s[f"{m} random std"]}
                fig.add_trace(
                    go.Scatter(
                        x=s["k"],
                        y=s[f"{m} {key}"],
                        name=name,
                        mode="lines+markers",
                        line={"color": colors[key], "dash": "dash" if key == "full" else None},
                        legendgroup=key,
                        showlegend=(i == 0 and j == 0),
                        **kw,
                    ),
                    row=i + 1,
                    col=j + 1,
                )
    fig.update_layout(title=f"{fig_id} (ours): {f.caption[:90]}...", height=360 * len(f.metrics))
    fig.update_xaxes(title_text="subset size k")
    w.figure("fig_" + stem, fig)
