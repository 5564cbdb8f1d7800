"""The Structure page's "Score landscape" tab: every DAG on 2-5 chosen variables ranked by a score with its
Markov equivalence class, the hypercube with the hill-climb path, and the metagraph-kernel surrogate.
Thin: widgets -> :mod:`bnfk_core.learning.landscape` / :mod:`bnfk_core.analyses.landscape` ->
:mod:`bnfk_core.views.figures.landscape`."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.analyses.landscape import MAX_OBSERVED, default_observed, landscape_summary, surrogate_study
from bnfk_core.learning.landscape import MAX_LANDSCAPE_VARIABLES, climb_path, place_dag, score_landscape
from bnfk_core.registry import SCORES
from bnfk_core.views.figures import landscape as figs

from .. import common
from ..state import structure, tables

__all__ = ["landscape_tab"]


@st.cache_resource(show_spinner=False, max_entries=16)
def _landscape(_data, fingerprint: str, variables: tuple, score: str, seed: int):
    land = score_landscape(_data, variables, score)
    return land, climb_path(land, _data, seed=seed)


def _observe_slider(n: int) -> int:
    """The number of observed graphs, kept inside 1..n-1 when the space changes."""
    ss = st.session_state
    top = min(n - 1, MAX_OBSERVED)
    if not 1 <= int(ss.get("land_observe", 0)) <= top:
        ss["land_observe"] = default_observed(n)
    return st.slider(
        "Observed graphs",
        1,
        top,
        key="land_observe",
        help="Graphs whose exact score the surrogate sees (drawn with the seed); it predicts the rest "
        f"(at most {MAX_OBSERVED:,}: one linear system of that size per order).",
    )


def landscape_tab(feat) -> None:
    t0 = time.perf_counter()
    try:
        _landscape_tab(feat)
    finally:
        st.session_state["land_tab_seconds"] = time.perf_counter() - t0


def _landscape_tab(feat) -> None:
    ss = st.session_state
    names = list(feat.variables)
    if len(names) < 2:
        st.info("The score landscape needs at least two feature variables.")
        return
    st.caption(
        "Every DAG on a few variables, scored by every registered score and grouped into Markov "
        "equivalence classes; hill climbing placed among them; and the metagraph kernel (Yackley et al.) "
        "learning the score surface from a few scored graphs. See docs/LANDSCAPE.md."
    )
    if not st.toggle(
        "Show the score landscape",
        key="land_on",
        help="Off by default so that edits elsewhere on this page stay fast; your choice is kept.",
    ):
        return
    c1, c2, c3, c4 = st.columns([2.8, 1, 1.2, 1])
    if "land_vars" not in ss or not set(ss["land_vars"]) <= set(names):
        ss["land_vars"] = names[: min(4, len(names))]
    chosen = c1.multiselect(
        f"Variables (2 to {MAX_LANDSCAPE_VARIABLES}; their order is the node order)",
        names,
        max_selections=MAX_LANDSCAPE_VARIABLES,
        key="land_vars",
    )
    keys = list(SCORES)
    score = c2.selectbox(
        "Score",
        keys,
        index=keys.index("bdeu") if "bdeu" in keys else 0,
        format_func=SCORES.labels().get,
        key="land_score",
    )
    fixed = c3.toggle(
        "Fixed order",
        value=True,
        key="land_fixed",
        help="On: the 2^C(k,2) graphs respecting the variables' order (the paper's hypercube). "
        "Off: all DAGs as k(k-1) directed-arc bits.",
    )
    seed = int(
        c4.number_input(
            "Seed",
            min_value=0,
            max_value=common.MAX_SEED,
            value=0,
            step=1,
            key="land_seed",
            help="Hill-climbing ties and the draw of observed graphs.",
        )
    )
    if len(chosen) < 2:
        st.info("Choose two to five variables.")
        return
    data = tables.model_features()
    with common.shown_errors():
        land, path = _landscape(data, data.fingerprint(), tuple(chosen), score, seed)
        label = SCORES[score].label
        ranks = land.ranks()
        best = int(land.ranking()[0])
        end = int(path["graphs"][-1])
        mine = place_dag(land, structure.dag())
        m = st.columns(5)
        m[0].metric("DAGs", f"{land.n_dags:,}")
        m[1].metric("Equivalence classes", f"{land.n_classes:,}")
        m[2].metric(f"Best {label}", f"{land.values[best]:.2f}")
        m[3].metric(
            "Hill climb's rank",
            f"{ranks[end]:,}",
            help=f"Where hill climbing ends: {len(path['moves'])} moves "
            "from the empty graph; rank 1 is the global optimum (with its equivalent graphs tied).",
        )
        m[4].metric(
            "Your structure ranks",
            f"{ranks[mine]:,}",
            help="The page's current DAG restricted to these "
            f"variables: {', '.join(f'{u}→{v}' for u, v in land.arcs(mine)) or 'no arcs'}.",
        )
        left, right = st.columns(2)
        with left:
            fig_rank = figs.ranked_figure(land.values, ranks, land.class_id, path["graphs"], label, mine=mine)
            st.plotly_chart(fig_rank, key="land_rank_chart")
        with right:
            if fixed:
                idx, bits = land.fixed_order()
                path_bits = land.skeleton_bits()[path["graphs"]]
                title = f"Fixed-order hypercube Q_{bits.shape[1]}"
            else:
                idx, bits = np.arange(land.n_dags), land.arc_bits()
                path_bits = bits[path["graphs"]]
                title = f"All DAGs: the cube Q_{bits.shape[1]}"
            fig_cube = figs.hypercube_figure(bits, land.values[idx], path_bits, title, edges=fixed)
            st.plotly_chart(fig_cube, key="land_cube_chart")
        st.caption(
            "Left: colours are Markov equivalence classes. Right: each vertex a graph, the hill-climb path "
            + (
                "drawn by its skeleton (fixed order: one bit per pair of variables)."
                if fixed
                else "over one bit per directed arc."
            )
        )
        order = land.ranking()[:15]
        st.dataframe(
            pd.DataFrame(
                {
                    "rank": ranks[order],
                    label: land.values[order],
                    "class": land.class_id[order] + 1,
                    "class size": [int((land.class_id == land.class_id[g]).sum()) for g in order],
                    "arcs": [", ".join(f"{u}→{v}" for u, v in land.arcs(g)) or "(none)" for g in order],
                }
            ),
            hide_index=True,
            width="stretch",
            column_config={label: st.column_config.NumberColumn(format="%.2f")},
        )
        _surrogate_panel(land, path, fixed, seed, label)


@st.fragment
def _surrogate_panel(land, path, fixed: bool, seed: int, label: str) -> None:
    """The metagraph kernel's part: a fragment, so moving the slider reruns only this (its time is kept in
    ``st.session_state["land_panel_seconds"]`` for the benchmark)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    st.markdown("**The metagraph kernel: learning the score surface**")
    s1, s2 = st.columns([3, 2])
    with s1:
        n_space = 1 << (land.k * (land.k - 1) // 2) if fixed else land.n_dags
        observe = _observe_slider(n_space)
    d = land.k * (land.k - 1) // (2 if fixed else 1)
    orders = s2.multiselect(
        "Kernel orders",
        list(range(1, min(d, 6) + 1)),
        default=list(range(1, min(d, 4) + 1)),
        key="land_orders",
    )
    with common.shown_errors():
        study = surrogate_study(land, fixed_order=fixed, observe=observe, orders=orders or [1], seed=seed)
        a, b, c = st.columns(3)
        a.plotly_chart(
            figs.surrogate_figure(study["exact"][study["unobserved"]], study["predicted"], label),
            key="land_scatter_chart",
        )
        b.plotly_chart(figs.rmse_figure(study["rmse"], study["baseline_rmse"]), key="land_rmse_chart")
        c.plotly_chart(figs.walsh_figure(study["walsh_energy"]), key="land_walsh_chart")
        st.caption(
            f"{study['encoding'].capitalize()}. {observe} of {study['graphs'].size:,} graphs observed; "
            "a decomposable score over a fixed order is a polynomial of the arc bits of degree at most the "
            "largest in-degree, so the Walsh energy vanishes above it and a fit of that order becomes exact "
            "once enough graphs are observed."
        )
        summary = landscape_summary(
            land, study, path, learned={"current_structure": place_dag(land, structure.dag())}
        )
        common.download(
            "Landscape (JSON)",
            json.dumps(summary, indent=1),
            "score_landscape.json",
            "application/json",
            key="dl_landscape",
        )
    st.session_state["land_panel_seconds"] = time.perf_counter() - t0
    st.session_state["land_panel_cpu_seconds"] = time.thread_time() - c0
