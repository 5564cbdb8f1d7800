"""Prototypes: k rows that represent the data as the network sees it (paper, Algorithm 1), checked the
paper's way -- re-fit the network on them and score the held-out half against random subsets."""

import streamlit as st

from bnfk_core.analyses.prototypes import selection as pt
from bnfk_core.registry import LEARNERS
from bnfk_core.serving import settings
from bnfk_ui import common
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import prototypes as sections
from bnfk_ui.state import choices, structure, tables

SOURCES, CRITERIA = settings.PROTOTYPE_SOURCES, settings.PROTOTYPE_CRITERIA


def page():
    hybrid_section.binned_notice()  # numbers kept: the one sentence naming the columns this page bins
    ss = st.session_state
    choices.ensure("proto_ks")
    d = tables.data()
    if ss.proto_source in LEARNERS and LEARNERS[ss.proto_source].needs_class and not d.class_column:
        st.info("TAN and KDB need a class column (Data page); using the current structure instead.")
        ss.proto_source = "current"
    c1, c2, c3 = st.columns([2.2, 1.6, 1.2])
    c1.selectbox(
        "Structure",
        list(SOURCES),
        format_func=SOURCES.get,
        **choices.bind("proto_source"),
        help="Learned (or taken) on the training half of a seeded 50/50 split; CPTs by the app's "
        "estimator for the current structure, smoothed with pseudo-count one (the paper's) otherwise.",
    )
    c2.radio("Criterion", list(CRITERIA), format_func=CRITERIA.get, **choices.bind("proto_criterion"))
    common.seed_input("Split and sampling seed", "proto_seed", c3)
    current = ss.proto_source == "current"
    exp_key = (
        d.fingerprint(),
        ss.proto_source,
        structure.dag_json() if current else "",
        int(ss.proto_seed),
        structure.recipe().params if current else "smoothed",
    )
    if current:
        common.plain_caption(structure.network_line("The prototypes"))
    n_train = d.n_rows - len(pt.split_half(d.n_rows, 0.5, int(ss.proto_seed))[1])
    k1, k2, k3 = st.columns([1, 1, 2.4], vertical_alignment="bottom")
    k1.number_input(
        "Subset size k",
        min_value=1,
        max_value=n_train - 1,
        step=5,
        **choices.bind("proto_k", shown=lambda v: int(min(max(v, 1), n_train - 1))),
    )
    k2.number_input(
        "Random subsets",
        min_value=10,
        max_value=2000,
        step=50,
        help="The baseline distribution; the best of them (by each criterion) starts its greedy search.",
        **choices.bind("proto_draws"),
    )
    k = int(min(max(ss.proto_k, 1), n_train - 1))
    # heavy work waits for a click; once asked for these data, a changed setting re-runs (cached per setting)
    if not common.asked("Find prototypes", "proto_run", d.fingerprint(), k3):
        st.info(
            f"Finding prototypes splits the {d.n_rows:,} rows in half, learns and fits the network on the "
            f"training half, computes its Fisher features and runs the greedy searches against "
            f"{int(ss.proto_draws)} random subsets of k = {k}: click **Find prototypes** to start. The same "
            "on "
            "the command line: `python -m bnfk_core summarize-benchmark DATA.csv`.",
            icon=":material/info:",
        )
        return
    with st.status("Finding prototypes…", expanded=False) as status:
        status.update(label="Splitting the data, learning the structure and computing Fisher features…")
        exp = sections.experiment(d, *exp_key)
        status.update(label=f"Greedy search for k = {k} and {int(ss.proto_draws)} random subsets…")
        res = sections.summarization(exp, exp_key, k, int(ss.proto_draws))
        status.update(label=f"Prototypes: k = {k} of {n_train:,} training rows", state="complete")
    crit = ss.proto_criterion
    st.caption(
        f"{exp.model.dag.n_arcs} arcs over {exp.model.n_vars} variables · training half {n_train:,} rows, "
        f"test half {len(exp.test_rows):,} rows · Fisher features {exp.mmd.Phi.shape[1]:,} columns"
        + ("" if exp.class_column else " · NLL only (no class in the structure)")
    )
    sections.result_metrics(exp, res, crit)
    tabs = st.tabs(["Selected rows", "Against random subsets", "Curve over k", "Kernel-PCA map"])
    with tabs[0]:
        sections.selected_rows_tab(d, res, crit, k)
    with tabs[1]:
        sections.random_subsets_tab(res, crit)
    with tabs[2]:
        sections.curve_tab(exp, exp_key)
    with tabs[3]:
        sections.map_tab(d, exp, exp_key, res, crit)


if common.start("Prototypes"):
    page()
