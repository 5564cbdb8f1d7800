"""Latent classes: latent class models (a naive Bayes network whose class is hidden) fitted by EM for a range
of K, with BIC/AIC, class profiles, sizes, posteriors, identifiability and the rank diagnostic (the fibers
seed), ARI against a chosen column, and the model handed to the Kernel page (the latent-class Fisher
kernel)."""

import numpy as np
import streamlit as st

from bnfk_core.lca import report as lca_report
from bnfk_core.views.figures import latent_classes as figs
from bnfk_ui import common
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import latent_classes as sections
from bnfk_ui.state import tables


def page():
    hybrid_section.binned_notice()  # numbers kept: the one sentence naming the columns this page bins
    feat = tables.feature_data()
    d = tables.data()
    c1, c2, c3, c4 = st.columns(4)
    kmin = c1.number_input("Classes from", min_value=1, max_value=20, value=1, key="w_lca_kmin")
    kmax = c2.number_input("to", min_value=1, max_value=20, value=4, key="w_lca_kmax")
    starts = c3.number_input(
        "EM starts",
        min_value=1,
        max_value=500,
        value=10,
        key="w_lca_starts",
        help="Seeded random starts per K; the best log-likelihood is kept.",
    )
    seed = c4.number_input("Seed", min_value=0, max_value=common.MAX_SEED, value=0, key="w_lca_seed")
    if kmax < kmin:
        st.error("The last number of classes must be at least the first.")
        return
    ks = list(range(int(kmin), int(kmax) + 1))
    if not common.asked("Fit the latent class models", "lca_run", feat.fingerprint()):  # EM waits for a click
        st.info(
            f"EM for K = {ks[0]}..{ks[-1]} classes with {int(starts)} seeded starts each, on {feat.n_rows:,} "
            "rows "
            "(seconds to minutes): click the button to start; a changed setting then re-runs (cached).",
            icon=":material/info:",
        )
        return
    fits = sections.fits(feat, ks, int(starts), int(seed))
    table = lca_report.criteria_table(fits)
    left, right = st.columns([3, 2])
    left.plotly_chart(
        figs.criteria_figure(ks, table["BIC"].tolist(), table["AIC"].tolist()),
        key="lca_criteria",
        config={"displaylogo": False},
    )
    right.dataframe(
        table,
        hide_index=True,
        key="lca_table",
        column_config={
            c: st.column_config.NumberColumn(format="%.2f") for c in ("log-likelihood", "BIC", "AIC")
        },
    )
    best = int(np.argmin(table["BIC"]))
    k_pick = st.selectbox(
        "Model to inspect",
        ks,
        index=best,
        key="w_lca_pick",
        format_func=lambda k: f"{k} classes" + (" (least BIC)" if k == ks[best] else ""),
    )
    m = fits[ks.index(k_pick)]
    post = m.posterior(feat)
    modal = post.argmax(axis=1)
    counts = np.bincount(modal, minlength=m.n_classes)
    a, b = st.columns([3, 2])
    with a:
        st.subheader("Class profiles P(value | class)")
        st.plotly_chart(
            figs.profile_figure(m.variables, m.states, m.profiles, m.weights),
            key="lca_profiles",
            config={"displaylogo": False},
        )
    with b:
        st.subheader("Class sizes")
        st.plotly_chart(
            figs.sizes_figure(m.weights, counts.tolist()), key="lca_sizes", config={"displaylogo": False}
        )
        sections.identifiability_panel(m, feat)
    st.subheader("Posterior class probabilities")
    pt = lca_report.posterior_table(post)
    st.dataframe(
        pt.head(500),
        hide_index=True,
        key="lca_posteriors",  # 3 decimals: every column fits
        column_config={
            c: st.column_config.NumberColumn(format="%.3f", width="small")
            for c in pt.columns
            if c.startswith("P(")
        },
    )
    common.download(
        "Posteriors (CSV)",
        pt.to_csv(index=False).encode("utf-8"),
        f"{common.dataset_name()}_lca{m.n_classes}_posteriors.csv",
        "text/csv",
        key="dl_lca_post",
    )
    sections.agreement(d, modal)
    sections.hand_over(m, feat)


if common.start("Latent classes"):
    page()
