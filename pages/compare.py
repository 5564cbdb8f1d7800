"""Compare structures: the current network (A) beside a structure B you edit -- the two Fisher kernels and ΔK,
clustering, one imputation run and the prototypes of each, on one screen, with the empty network as the
baseline. The lecture's steps (chain, V-structure, A-structure) are one click each."""

import json

import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.kernels.fisher import FISHER, FISHER_NORMALIZED
from bnfk_core.network.dag import DAG, apply_segment, segment_roles
from bnfk_core.registry import KERNELS
from bnfk_core.views.figures import segments as figs
from bnfk_ui import common
from bnfk_ui.sections import compare as sections
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import textbook
from bnfk_ui.state import choices, compare, messages, shared, structure, tables

CHART = {"displaylogo": False}
MAX_ROWS = 1000
#: the kernels a comparison can use: the paper's, and the power- and L2-normalised one (its power alpha)
KERNEL_LABELS = {FISHER: "Fisher (paper)", FISHER_NORMALIZED: "Normalised Fisher"}
NORMALIZED_NOTE = (
    "Normalised Fisher kernel: each Fisher feature z becomes sign(z)|z|^α and each row is then scaled "
    "to unit length (Perronnin, Sánchez & Mensink 2010, 'Improving the Fisher kernel for large-scale "
    "image classification'). For α < 1 it is not invariant under equivalent structures: Markov-"
    "equivalent A and B can get different kernels (Theorem 4 holds for the paper's kernel and α = 1)."
)


def page():
    hybrid_section.binned_notice()  # numbers kept: the one sentence naming the columns this page bins
    ss = st.session_state
    d, feat = tables.data(), tables.feature_data()
    if feat.n_vars < 3:
        st.info("Comparing segments needs at least three feature variables.")
        return
    choices.ensure("cmp_vars", "cmp_rows", "cmp_seed", "cmp_kernel", "cmp_alpha")
    if not ss.cmp_vars or any(v not in feat.variables for v in ss.cmp_vars):
        ss.cmp_vars = list(feat.variables[:3])
    lo, hi = min(20, d.n_rows), max(min(20, d.n_rows), min(MAX_ROWS, d.n_rows))
    ss.cmp_rows = int(min(max(ss.cmp_rows, lo), hi))  # within this table's rows
    c1, c2, c3, c4, c5 = st.columns([2.8, 0.85, 0.65, 1.4, 0.75])  # the three variables whole at 1280 px
    triple = c1.multiselect(
        "Segment variables (in the order the pattern reads: chain A → B → C)",
        list(feat.variables),
        max_selections=3,
        key="cmp_vars",
    )
    c2.number_input("Rows (sampled)", lo, hi, step=50, key="cmp_rows")
    c3.number_input("Seed", 0, 2**32 - 1, key="cmp_seed")
    kernel = c4.selectbox(
        "Kernel",
        list(KERNEL_LABELS),
        format_func=KERNEL_LABELS.get,
        key="cmp_kernel",
        help="The paper's Fisher kernel, or its power- and L2-normalised version.",
    )
    alpha = None
    if KERNELS[kernel].takes("alpha"):
        low, high, _step = KERNELS[kernel].option("alpha").ui_range
        alpha = float(
            c5.number_input(
                "Power α",
                low,
                high,
                step=0.05,
                key="cmp_alpha",
                help="sign(z)|z|^α on every Fisher feature; α = 1: L2 normalisation only.",
            )
        )
    sections.presets(feat, triple)
    textbook.compare_buttons()  # the true network as B or A, for rows sampled from a textbook network
    a, b = structure.dag(), compare.compare_b()
    sections.edit_b(feat, compare.compare_b())
    b = compare.compare_b()
    common.plain_caption(
        structure.network_line("A") + f" B: {b.n_arcs} arcs "
        f"({', '.join(f'{x} → {y}' for x, y in b.sorted_arcs()) or 'none'})."
    )
    with st.spinner("Fitting A, B and the empty network; kernels, clusterings, imputation, prototypes…"):
        try:
            cmp = compare.comparison(a, b, min(int(ss.cmp_rows), d.n_rows), int(ss.cmp_seed), kernel, alpha)
        except BnfkError as exc:
            st.error(messages.plain(str(exc), messages.MAX_MESSAGE))
            return
    has_class = d.class_column is not None
    rows = cmp.rows
    labels = d.labels()[rows] if has_class else None
    cls_states = d.states[d.index(d.class_column)] if has_class else ()
    order, plane = compare.a_view(
        cmp, labels, min(int(ss.cmp_rows), d.n_rows), int(ss.cmp_seed), kernel, alpha
    )
    sections.outcome_metrics(cmp, has_class)
    textbook.compare_line(a, b)  # SHD of A to B (and to the true network), their scores
    panels, zmax = shared.shared(
        figs.comparison_panels, cmp.a.K, cmp.b.K, order, rows, labels, cls_states, height=280
    )
    values = {"imputation": {"empty": cmp.baseline.accuracy, "A": cmp.a.accuracy, "B": cmp.b.accuracy}}
    if has_class:
        values = {"ARI": {"empty": cmp.baseline.ari, "A": cmp.a.ari, "B": cmp.b.ari}, **values}
    cols = st.columns([1, 1, 1, 1.1], gap="small")
    for col, fig, key in zip(cols, panels, ("cmp_ka", "cmp_kb", "cmp_dk")):
        col.plotly_chart(fig, key=key, config=CHART)
    cols[3].plotly_chart(
        shared.shared(figs.outcome_figure, values, height=280), key="cmp_outcomes", config=CHART
    )
    st.plotly_chart(
        shared.shared(figs.prototype_map, plane, rows, cmp.a.prototypes, cmp.b.prototypes),
        key="cmp_protos",
        config=CHART,
    )
    if KERNELS[kernel].takes("alpha"):
        st.caption(NORMALIZED_NOTE)
    st.caption(
        f"{len(rows):,} of {d.n_rows:,} rows (seed {int(ss.cmp_seed)}); CPTs {cmp.params} fitted on every "
        "row; "
        f"{KERNEL_LABELS[kernel].lower()} kernel"
        + (f" (α = {alpha:g})" if alpha is not None else "")
        + f", colours of A and B clipped at ±{zmax:.3g}. Clustering: correlation clustering of each kernel "
        "(10 restarts) against the class. Imputation: one seeded run hiding 20 % of the cells of 30 % of "
        "the "
        f"rows, each network refitted on what remains (available cases, so even equivalent structures can "
        f"differ here). Prototypes: greedy MMD under the Fisher kernel, {len(cmp.a.prototypes)} each; "
        f"{cmp.prototype_overlap} "
        f"shared. Grey bars: the empty network (scaled-Hamming kernel), the baseline."
        + (" " + " ".join(cmp.notes) if cmp.notes else "")
    )
    if (
        len(triple) == 3
    ):  # the presets' outcomes computed while the page is looked at: their clicks find them ready
        empty = DAG(feat.variables)
        compare.prefetch(
            [apply_segment(empty, kind, segment_roles(kind, triple)) for kind in sections.SEGMENT_PRESETS],
            min(int(ss.cmp_rows), d.n_rows),
            int(ss.cmp_seed),
            kernel,
            alpha,
        )
    common.download(
        "Comparison (JSON)",
        lambda: json.dumps(cmp.summary(), indent=1, default=float).encode("utf-8"),
        f"{common.dataset_name()}_compare.json",
        "application/json",
        key="dl_cmp",
    )


if common.start("Compare structures"):
    page()
