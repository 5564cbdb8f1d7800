"""Parts of the Kernel page below the Gram panels: the downloads, the value distribution beside the
kernel-PCA map, and why two picked rows are similar (the per-variable terms of Theorem 1)."""

import pandas as pd
import streamlit as st

from bnfk_core.views import figures
from bnfk_core.views import kernel as kernel_view
from bnfk_core.views.figures import kernel as fig_kernel

from .. import common
from ..state import caches, charts, messages, pairs, shared

__all__ = ["downloads", "distribution_and_map", "pair_panel"]

CHART = {"displaylogo": False}


def downloads(d, kind: str, K, K2, rows, heatmap) -> None:
    """The page's files: the Gram matrix (CSV, NPY), the comparison's, the rows used and the heatmap (each
    made when its button is clicked)."""
    ss = st.session_state
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
        common.download_figure(heatmap, f"{base}_heatmap", "Heatmap (HTML)")


def distribution_and_map(d, an: dict, rows, labels, cls_states, spec) -> None:
    """The kernel values within and between classes beside the kernel-PCA map, on which a click picks a
    row of the pair below."""
    ss = st.session_state
    st.subheader("Distribution and map")
    h1, h2 = st.columns(2, gap="medium")
    pair_values = an["pairs"]
    with h1:
        fh = shared.shared(
            figures.histogram_figure, pair_values, cls_states, title=kernel_view.histogram_title(spec)
        )
        charts.plotly_chart(fh, key="hist", config=CHART)
        if d.class_column and len(pair_values["between"]):
            within, between = kernel_view.class_means(pair_values)
            st.caption(
                (
                    f"Mean within a class {within:.3g}, "
                    if within is not None
                    else "No two sampled rows share a class; mean "
                )
                + f"between classes {between:.3g}."
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


def pair_panel(d, m, K, rows, labels, cls_states, spec) -> None:
    """Why two rows are similar: the pair (picked here or on the map), its kernel values, the per-variable
    terms K_i as a chart, the variables that pull the rows together and apart, and the downloads."""
    ss = st.session_state
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
        agree, disagree = kernel_view.strongest_terms(variables, contrib)
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
