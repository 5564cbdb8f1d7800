"""Segments lab (thesis ch. 6): add one structure segment to a base network and see what it does to the
Fisher kernel -- heatmaps, clustering, imputation, prototypes, the case table (theory vs measured), the
collapsed variable, Markov equivalence -- and run the supervised arc search."""

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.analyses.segments import information as segment_information
from bnfk_core.analyses.segments import network_checks
from bnfk_core.kernels import fisher as kernels
from bnfk_core.kernels.embed import sample_rows
from bnfk_core.network.dag import SEGMENT_LABELS, SEGMENT_SIZES
from bnfk_core.registry import ESTIMATORS
from bnfk_core.serving import settings
from bnfk_core.views import segments as seg_view
from bnfk_ui import common
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import segments as sections
from bnfk_ui.state import caches, choices, messages, shared, structure, tables

KINDS = seg_view.segment_choices()
BASES = settings.SEGMENT_BASES
MAX_ROWS = 1500


@shared.front
@st.cache_data(show_spinner=False, max_entries=32)
def _suggest(_data, fingerprint: str, kind: str) -> pd.DataFrame:
    return segment_information.mi_ranking(_data, kind, top=10)


@shared.front
@st.cache_data(show_spinner=False, max_entries=32)
def _gram(_model, model_key: str, _feat, fingerprint: str, rows: tuple) -> np.ndarray:
    return kernels.gram(_model, _feat.subset(np.asarray(rows)))


@shared.front
@st.cache_data(show_spinner=False, max_entries=64)
def _aris(K: np.ndarray, labels: np.ndarray, k: int, restarts: int, seed: int) -> dict:
    return network_checks.clustering_aris(K, labels, k, restarts=restarts, seed=seed)


def controls(d, feat):
    ss = st.session_state
    c1, c2, c3 = st.columns([1.2, 2.2, 1])
    kind = c1.selectbox("Segment", list(KINDS), format_func=KINDS.get, **choices.bind("seg_kind"))
    if kind == "full":
        c1.number_input("Variables in the full segment", 2, min(6, feat.n_vars), **choices.bind("seg_full_m"))
    c1.radio("Base network", list(BASES), format_func=BASES.get, **choices.bind("seg_base"))
    need = SEGMENT_SIZES.get(kind, int(ss.seg_full_m))
    sug = _suggest(d, d.fingerprint(), kind if kind != "full" or need == 3 else "single-arc")
    base = structure.dag() if ss.seg_base == "current" else None  # the default segment changes it
    options = [", ".join(v) for v in sug.variables]
    fmt = {o: f"{o}   (score {s:.3f} nats)" for o, s in zip(options, sug.score)}
    chosen, replaced = segment_information.segment_variables_after(
        ss.get("seg_vars"), ss.get("seg_vars_kind"), feat.variables, kind, need, sug, base
    )
    if chosen is not None:
        ss.seg_vars, ss.seg_vars_kind = chosen, (kind, need)
    if replaced:
        common.plain_caption(
            f"The {SEGMENT_LABELS[kind].lower()} segment takes {need} variables: the best "
            f"suggestion replaced {', '.join(replaced)}.",
            c2,
        )

    def use_suggestion():
        ss.seg_vars = [v.strip() for v in ss.w_seg_pick.split(",")][:need] if ss.w_seg_pick else ss.seg_vars

    c2.selectbox(
        "Suggestions (highest mutual information, label excluded)",
        [""] + options,
        key="w_seg_pick",
        format_func=lambda o: fmt.get(o, "— pick a suggestion —"),
        on_change=use_suggestion,
    )
    c2.multiselect(
        f"Variables in role order ({need})",
        list(feat.variables),
        max_selections=need,
        **choices.bind("seg_vars"),
    )
    c2.markdown(sections.role_line(kind, list(ss.seg_vars)))
    c3.number_input(
        "Rows (sampled)",
        20,
        min(MAX_ROWS, d.n_rows),
        step=50,
        **choices.bind("seg_rows", shown=lambda v: int(min(max(v, 20), min(MAX_ROWS, d.n_rows)))),
    )
    common.seed_input("Seed", "seg_seed", c3)
    box = st.expander("Suggestions table", key="seg_sug_open", on_change="rerun")
    if box.open:  # built when opened (a rerun), not on every run of the page
        box.dataframe(sug.assign(variables=options), hide_index=True, key="seg_sug_table")
    return kind, list(ss.seg_vars), need


def page():
    hybrid_section.binned_notice()  # numbers kept: the one sentence naming the columns this page bins
    ss, d, feat = st.session_state, tables.data(), tables.feature_data()
    has_class = d.class_column is not None
    cls_states = d.states[d.index(d.class_column)] if has_class else ()
    kind, variables, need = controls(d, feat)
    if len(variables) != need:
        st.info(f"Choose {need} variables for the {SEGMENT_LABELS[kind].lower()} segment.")
        return
    base, seg_dag = seg_view.segment_networks(ss.seg_base, feat.variables, structure.dag(), kind, variables)
    m1, m2 = caches.model(base), caches.model(seg_dag)
    common.captions(
        common.literal(structure.network_line("The base")) if ss.seg_base == "current" else "",
        f"Base: **{BASES[ss.seg_base]}** ({base.n_arcs} arcs) · with the segment: {seg_dag.n_arcs} arcs "
        f"(added {messages.plain(seg_view.added_arcs(base, seg_dag))}) · "
        f"parameters: {ESTIMATORS[ss.param_method].label.split(' (')[0].lower()}.",
    )
    rows = sample_rows(d.n_rows, int(ss.seg_rows), int(ss.seg_seed))
    labels = d.labels()[rows] if has_class else np.full(len(rows), -1)
    with common.LazyProgress() as bar:  # drawn only when one of the steps has something to compute
        bar.step(0.0, "Gram matrix of the base network…")
        K1 = _gram(m1, m1.key(), feat, feat.fingerprint(), tuple(rows.tolist()))
        bar.step(0.3, "Gram matrix with the segment…")
        K2 = _gram(m2, m2.key(), feat, feat.fingerprint(), tuple(rows.tolist()))
        aris = None
        if has_class:
            k, restarts, seed = C.default_n_clusters(d), int(ss.seg_restarts), int(ss.seg_seed)
            bar.step(0.55, "Clustering the base kernel…")
            a1 = _aris(K1, labels, k, restarts, seed)
            bar.step(0.8, "Clustering the kernel with the segment…")
            aris = (a1, _aris(K2, labels, k, restarts, seed))
    tabs = st.tabs(
        [
            "Kernels & clustering",
            "Gallery (all five)",
            "Imputation & prototypes",
            "Theory (case table)",
            "Collapsed variable",
            "Equivalence",
            "Arc search",
        ]
    )
    with tabs[0]:
        sections.kernel_tab(K1, K2, rows, labels, cls_states, has_class, aris)
    with tabs[1]:
        sections.gallery_tab(d, feat, base, variables, rows, labels, cls_states)
    with tabs[2]:
        sections.impute_protos_tab(feat, rows, base, seg_dag, m1, m2)  # bounded: the sampled rows
    with tabs[3]:
        sections.theory_tab(d, m2, kind, variables)
    with tabs[4]:
        sections.collapsed_tab(d, variables, has_class)
    with tabs[5]:
        sections.equivalence_tab(feat, m2, K2, rows, labels, cls_states)
    with tabs[6]:
        sections.arc_search_tab(d, has_class)


if common.start("Segments lab"):
    page()
