"""Structure: learn or edit the DAG over the feature variables, see its equivalence class, import / export."""

import contextlib

import streamlit as st

from bnfk_core.errors import StructureError
from bnfk_core.network.dag import DAG, covered_arcs, segment_arcs
from bnfk_core.registry import ESTIMATORS
from bnfk_core.views import figures
from bnfk_ui import common, live
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import kgv as kgv_section
from bnfk_ui.sections import landscape as landscape_section
from bnfk_ui.sections import structure as sections
from bnfk_ui.sections import textbook
from bnfk_ui.sections.structure import act, message
from bnfk_ui.state import charts, choices, hybrid, messages, shared, structure, tables


def page():
    ss = st.session_state
    feat = tables.feature_data()
    dg = structure.dag()
    seg = ss.structure.get("segment")
    seg_arcs = []
    if seg:
        try:
            seg_arcs = [a for a in segment_arcs(seg[0], list(seg[1])) if dg.has_arc(*a)]
        except StructureError:
            seg_arcs = []
    cov = covered_arcs(dg)
    numeric = tuple(hybrid.numeric_columns())  # numbers kept: a hybrid network

    fig_col, info_col = st.columns([2.6, 1.4], gap="medium")
    with info_col:  # beside the graph: what it is, undo, the arc edits, then the scores
        st.markdown(f"**{messages.plain(structure.structure_label())}**")
        b1, b2 = st.columns(2)  # two per row: the labels stay whole in a narrow column on a projector
        b1.button(
            "Undo",
            icon=":material/undo:",
            disabled=not ss.structure["undo"],
            width="stretch",
            on_click=act("top", structure.undo),
        )
        b2.button(
            "Redo",
            icon=":material/redo:",
            disabled=not ss.structure.get("redo"),
            width="stretch",
            on_click=act("top", structure.redo),
        )
        b3, b4 = st.columns(2)
        b3.button(
            "Reset",
            icon=":material/restart_alt:",
            width="stretch",
            help=f"Back to the last learned structure ({ss.structure['learned_label']}).",
            on_click=act(
                "top",
                lambda: structure.set_dag(
                    DAG.from_dict(ss.structure["learned"]), ss.structure["learned_label"]
                ),
            ),
        )
        b4.button(
            "Start empty",
            icon=":material/crop_free:",
            width="stretch",
            on_click=act("top", lambda: structure.set_dag(DAG(feat.variables), "Empty network")),
        )
        message("top")
        textbook.truth_panel(dg)  # rows sampled from a textbook network: the distance to the true network
        sections.edit_panel(dg)  # the picked arc's Remove / Reverse, add or change an arc
        with common.shown_errors():
            if numeric:
                hybrid_section.hybrid_scores(dg)
            sections.scores_panel(dg)
        st.selectbox(
            "Parameters",
            list(ESTIMATORS),
            format_func=ESTIMATORS.labels().get,
            **choices.bind("param_method"),
        )
    with fig_col:
        info = hybrid_section.node_info(feat)
        fig = shared.shared(
            figures.dag_figure,
            dg.nodes,
            dg.sorted_arcs(),
            highlight=seg_arcs,
            covered=cov,
            node_info=info,
            clickable=True,
            picked=ss.get("live_pick"),
            numeric=numeric,
        )
        charts.plotly_chart(
            fig,
            key="dag_chart",
            on_select=live.graph_clicked("dag_chart"),
            selection_mode="points",
            config={"displaylogo": False, "scrollZoom": True},
        )
        green = (
            "Green: covered arcs — reversing one keeps the Markov equivalence class, and the Fisher kernel "
            + (
                "too (BDeu CPTs are likelihood-equivalent: paper, Theorem 4)."
                if ESTIMATORS[ss.param_method].likelihood_equivalent
                else f"only with a likelihood-equivalent estimator such as BDeu (not {ss.param_method})."
            )
        )
        common.captions(
            live.click_message(),  # what a click does, then what the colours mean: one element
            f"Orange: the arcs of the last edit ({seg[0]} on {messages.plain(', '.join(seg[1]))}). " + green
            if seg_arcs
            else green
            if cov
            else "",
        )

    hybrid_section.binned_notice("The scores table, the live kernel and the tabs below", plural=True)
    with (
        common.shown_errors(),
        (
            st.spinner("Fisher kernel of the current structure (live)…", show_time=True)
            if live.building()
            else contextlib.nullcontext()
        ),
    ):  # an edit takes milliseconds
        sections.live_panel(feat)
    # the tabs remember which one is open (a switch re-runs the page, its parts cached): only the open one is
    # built, sent and drawn (the closed ones cost the browser ~0.6 s of work on a first visit)
    if "structure_tab" not in ss and ss.get("structure_tab_kept"):  # the tab open when the page was left
        ss.structure_tab = ss.structure_tab_kept
    t_learn, t_seg, t_eq, t_land, t_kgv, t_io = st.tabs(
        [
            "Learn",
            "Segment presets",
            "Equivalence class",
            "Score landscape",
            "KGV (mixed data)",
            "Import / export",
        ],
        key="structure_tab",
        on_change="rerun",
    )
    ss.structure_tab_kept = ss.get("structure_tab")
    common.built_when_open(t_learn, lambda: sections.learn_tab(feat))
    common.built_when_open(t_seg, lambda: sections.presets_tab(dg, fig), kept=("w_seg_",))
    common.built_when_open(t_eq, lambda: sections.equivalence_tab(dg, cov))
    common.built_when_open(t_land, lambda: landscape_section.landscape_tab(feat), kept=("land_",))
    common.built_when_open(t_kgv, kgv_section.kgv_tab, kept=("w_kgv_",))
    common.built_when_open(t_io, lambda: sections.io_tab(feat, dg, fig))


if common.start("Structure"):
    page()
