"""Kernel: Gram matrices of the current structure and a second one, their difference, value
distribution, a kernel-PCA map, and the per-variable contributions for two picked rows."""

import streamlit as st

from bnfk_core.kernels.fisher_normalized import ABOUT
from bnfk_core.registry import KERNELS
from bnfk_core.serving import settings
from bnfk_core.views import figures
from bnfk_core.views import kernel as kernel_view
from bnfk_core.views.figures import kernel as fig_kernel
from bnfk_ui import common
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import kernel as sections
from bnfk_ui.state import caches, charts, choices, hybrid, shared, structure, tables
from bnfk_ui.state import model as model_state

ORDERS = settings.KERNEL_ORDERS
CHART = {"displaylogo": False}


def page():
    ss = st.session_state
    hybrid_fisher = hybrid.kernel_covered(ss.kernel_kind)  # the Fisher kernel of the hybrid network
    hybrid_section.binned_notice(  # numbers kept: the one sentence naming the columns this page bins
        "The comparison kernel, the pair's per-variable terms and the other kernels"
        if hybrid_fisher
        else "This page",
        plural=hybrid_fisher,
    )
    d = tables.data()
    cls_states = d.states[d.index(d.class_column)] if d.class_column else ()

    c1, c2, c3, c4 = st.columns([1.4, 1, 1, 1.2])
    with c1:
        kind = st.selectbox(
            "Kernel",
            list(KERNELS),
            format_func=KERNELS.labels().get,
            help="The Fisher kernel of the current structure, the thesis baselines and every "
            "registered similarity measure (Boriah et al. 2008).",
            **choices.bind("kernel_kind"),
        )
        st.checkbox(
            "Normalise (cosine)", help="K(x,y) / √(K(x,x) K(y,y))", **choices.bind("kernel_normalize")
        )
        if caches.kernel_options(kind, 1.0):  # a kernel with a power (the normalised Fisher kernel)
            common.option_slider(st, "Power α", "kernel_alpha", help=ABOUT)
    with c2:
        max_rows = max(2, min(d.n_rows, 2000))
        st.number_input(
            "Rows (sampled)",
            min_value=2,
            max_value=max_rows,
            step=50,
            help=f"At most 2,000 of the {d.n_rows:,} rows, drawn without replacement.",
            **choices.bind("kernel_rows", shown=lambda v: int(min(max(v, 2), max_rows))),
        )
    with c3:
        common.seed_input("Sampling seed", "kernel_seed")
    with c4:
        st.selectbox("Order rows", list(ORDERS), format_func=ORDERS.get, **choices.bind("kernel_order"))
    compare = caches.comparison_choices()
    st.selectbox("Compare with", list(compare), format_func=compare.get, **choices.bind("kernel_compare"))

    spec = KERNELS[kind]
    with common.working(
        "Computing Gram matrices…"
    ):  # a refusal (memory) stops the page at the router's boundary
        m = model_state.session_model()  # the CPTs of the Model page (edits, a textbook truth)
        G = caches.gram_matrix(m)
        K2, title2, _ = caches.comparison_gram(ss.kernel_compare)
    K, rows, labels = G.K, G.rows, G.labels
    title1 = kernel_view.main_title(spec, structure.dag().n_arcs)
    if hybrid_fisher:
        with common.working("Fisher kernel of the hybrid network…"):
            K = hybrid.gram(hybrid.fitted(structure.dag()), rows, bool(ss.kernel_normalize))
        title1 = f"Fisher: hybrid network ({structure.dag().n_arcs} arcs)"
        common.plain_caption(
            "The Fisher kernel here is the hybrid network's: the scores of its CPTs, means, regression "
            "weights and variances, whitened by the exact Fisher information (docs/HYBRID.md)."
        )
    an = caches.kernel_analysis(K, labels, ss.kernel_order, bool(d.class_column))
    drawn = figures.evenly_drawn(an["order"], figures.PANEL_ROWS)
    (f1, f2, f3), zmax = shared.shared(
        fig_kernel.gram_panels, K, K2, drawn, rows, labels, cls_states, titles=(title1, title2)
    )
    for col, fig, key in zip(
        st.columns(3, gap="small"), (f1, f2, f3), ("gram_main", "gram_second", "gram_diff")
    ):
        with col:
            charts.plotly_chart(fig, key=key, config=CHART)
    ordered = (
        ORDERS[ss.kernel_order]
        if ss.kernel_order != "class" or d.class_column
        else f"{ORDERS['cluster']} (no class column to order by)"
    )
    common.captions(  # one element: the network, the rows drawn and the colours, the kernel's power
        common.literal(structure.network_line("This kernel"))
        if spec.uses_network and not spec.latent_model
        else "",  # the latent-class kernel has its own network
        f"{len(rows):,} rows, ordered {ordered}"
        + (
            f" ({len(drawn):,} of them drawn, evenly spaced along that order; every row is in the analysis "
            "and "
            "the downloads)"
            if len(drawn) < len(rows)
            else ""
        )
        + "; colours are centred at 0 and clipped at "
        f"±{zmax:.3g} (99th percentile of |K|, shared by both kernels) so the diagonal does not swamp them; "
        f"the difference at ±{f3.data[0].zmax:.3g} (99th percentile of its |ΔK|). "
        + ("The strips show the class of each row." if d.class_column else ""),
        ABOUT if caches.kernel_options(kind, 1.0) else "",
    )
    if not spec.uses_network:
        st.info(
            f"The {spec.label.lower()} kernel does not depend on the structure; pick a network kernel "
            f"({', '.join(KERNELS[n].label for n in KERNELS.names(uses_network=True))}) to see its effect."
        )

    sections.downloads(d, kind, K, K2, rows, f1)
    sections.distribution_and_map(d, an, rows, labels, cls_states, spec)
    sections.pair_panel(d, m, G.K, rows, labels, cls_states, spec)  # the discrete terms sum to the discrete K


if common.start("Kernel"):
    page()
