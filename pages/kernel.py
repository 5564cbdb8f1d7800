"""Kernel: Gram matrices of the current structure and a second one, their difference, value
distribution, a kernel-PCA map, and the per-variable contributions for two picked rows."""

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.kernels.fisher_normalized import ABOUT
from bnfk_core.registry import KERNELS
from bnfk_core.serving import settings
from bnfk_core.views import figures
from bnfk_core.views import kernel as kernel_view
from bnfk_core.views.figures import kernel as fig_kernel
from bnfk_ui import common
from bnfk_ui.state import caches, charts, choices, messages, pairs, shared, structure, tables

ORDERS = settings.KERNEL_ORDERS
CHART = {"displaylogo": False}


def page():
    ss = st.session_state
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
            st.slider("Power α", 0.02, 1.0, step=0.01, help=ABOUT, **choices.bind("kernel_alpha"))
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
        m = caches.model()
        G = caches.gram_matrix(m)
        K2, title2, _ = caches.comparison_gram(ss.kernel_compare)
    K, rows, labels = G.K, G.rows, G.labels
    an = caches.kernel_analysis(K, labels, ss.kernel_order, bool(d.class_column))
    title1 = kernel_view.main_title(spec, structure.dag().n_arcs)
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
        if spec.uses_network and kind != "lca-fisher"
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

    base = f"{common.dataset_name()}_{kind}_{len(rows)}rows"
    ids = lambda: [f"row{int(r)}" for r in rows]  # noqa: E731 - the downloads' row names, made when clicked
    row = st.container(horizontal=True)  # buttons as wide as their labels, wrapping on a narrow screen
    dl = [row] * 5
    with dl[0]:
        common.download(
            "Gram matrix (CSV)",
            lambda: pd.DataFrame(K, index=ids(), columns=ids()).to_csv(),
            f"{base}.csv",
            "text/csv",
        )
    with dl[1]:
        common.download(
            "Gram matrix (NPY)", lambda: common.npy_bytes(K), f"{base}.npy", "application/octet-stream"
        )
    with dl[2]:
        common.download(
            "Comparison Gram (CSV)",
            lambda: pd.DataFrame(K2, index=ids(), columns=ids()).to_csv(),
            f"{base}_compare_{ss.kernel_compare}.csv",
            "text/csv",
        )
    with dl[3]:
        common.download(
            "Rows used (CSV)",
            lambda: d.frame.iloc[rows].assign(row=rows).to_csv(index=False),
            f"{base}_rows.csv",
            "text/csv",
        )
    with dl[4]:
        common.download_figure(f1, f"{base}_heatmap", "Heatmap (HTML)")

    st.subheader("Distribution and map")
    h1, h2 = st.columns(2, gap="medium")
    pair_values = an["pairs"]
    with h1:
        fh = shared.shared(
            figures.histogram_figure, pair_values, cls_states, title=kernel_view.histogram_title(spec)
        )
        charts.plotly_chart(fh, key="hist", config=CHART)
        if d.class_column and len(pair_values["between"]):
            within = np.concatenate([v for v in pair_values["within"].values()] or [np.zeros(0)])
            st.caption(
                (
                    f"Mean within a class {within.mean():.3g}, "
                    if len(within)
                    else "No two sampled rows share a class; mean "
                )
                + f"between classes {pair_values['between'].mean():.3g}."
            )
    with h2:
        pair = ss.pair if ss.pair and all(int(r) in set(rows.tolist()) for r in ss.pair) else None
        fm = shared.shared(
            figures.embedding_figure,
            an["pca"],
            rows,
            labels,
            cls_states,
            selected=pair or (),
            title="Kernel PCA map — click a point to pick it",
        )
        charts.plotly_chart(
            fm,
            key="pca_chart",
            on_select=pairs.pick_pair("pca_chart"),
            selection_mode=("points", "box", "lasso"),
            config=CHART,
        )

    st.subheader("Why are two rows similar?")
    row_list = [int(r) for r in rows]
    ss.w_pair_a, ss.w_pair_b = pairs.default_pair(K, row_list)
    pos = {r: k for k, r in enumerate(row_list)}
    shown = shared.shared(kernel_view.row_labels, rows, labels, cls_states if d.class_column else ())

    def set_pair():
        ss.pair = (ss.w_pair_a, ss.w_pair_b)

    p1, p2, p3 = st.columns([1, 1, 2])
    a = p1.selectbox("Row A", row_list, format_func=shown.__getitem__, key="w_pair_a", on_change=set_pair)
    b = p2.selectbox("Row B", row_list, format_func=shown.__getitem__, key="w_pair_b", on_change=set_pair)
    with p3:
        st.caption(
            "Row B starts as the row most similar to row A (cosine). Pick rows here or click points on the "
            "map "
            "(a click makes that row A and the previous A becomes B; a box around two points picks both)."
        )

    ka, kb = pos[a], pos[b]
    with common.shown_errors():
        variables, contrib = caches.contributions(m, a, b)
        table_key = shared.keyed(d, d.fingerprint())  # the rows' values, read once per table and row
        xa_vals, xb_vals = (
            shared.shared(kernel_view.shown_values, table_key, r, tuple(variables)) for r in (a, b)
        )
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("K(A, B)", f"{K[ka, kb]:.4g}")
        m2.metric("K(A, A)", f"{K[ka, ka]:.4g}")
        m3.metric("K(B, B)", f"{K[kb, kb]:.4g}")
        m4.metric(
            "Σ K_i (unnormalised)",
            f"{contrib.sum():.4g}",
            help="The per-variable terms of Theorem 1 sum to the unnormalised kernel value.",
        )
        fc = shared.shared(fig_kernel.pair_figure, variables, contrib, xa_vals, xb_vals, a, b, spec.label)
        charts.plotly_chart(fc, key="contrib_chart", config=CHART)
        top = np.argsort(contrib)[::-1]
        agree = [variables[i] for i in top[:3] if contrib[i] > 0]
        disagree = [variables[i] for i in top[::-1][:3] if contrib[i] < 0]
        st.caption(
            (
                "Most similarity comes from agreeing on " + messages.plain(", ".join(agree)) + ". "
                if agree
                else ""
            )
            + (
                "Disagreement (or common values) on "
                + messages.plain(", ".join(disagree))
                + " pulls them apart."
                if disagree
                else ""
            )
        )
        c1, c2, _ = st.columns([1, 1, 3])
        with c1:  # the table is made when the button is clicked
            common.download(
                "Contributions (CSV)",
                lambda: (
                    kernel_view.contributions_table(variables, xa_vals, xb_vals, contrib)
                    .to_csv(index=False)
                    .encode("utf-8")
                ),
                f"{common.dataset_name()}_contributions_{a}_{b}.csv",
                "text/csv",
            )
        with c2:
            common.download_figure(fc, f"{common.dataset_name()}_contributions_{a}_{b}", "Bar chart (HTML)")


if common.start("Kernel"):
    page()
