"""Latent classes: latent class models (a naive Bayes network whose class is hidden) fitted by EM for a range
of K, with BIC/AIC, class profiles, sizes, posteriors, identifiability and the rank diagnostic (the fibers
seed), ARI against a chosen column, and the model handed to the Kernel page (the latent-class Fisher
kernel)."""

import json

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.analyses.cluster.clustering import clustering_metrics
from bnfk_core.kernels.latent_fisher import LCA_FISHER, kernel_network
from bnfk_core.lca import fit_lca
from bnfk_core.lca.fibers import Moments, identifiability, rank_diagnostic
from bnfk_core.network.model import model_to_bif
from bnfk_core.views.figures import latent_classes as figs
from bnfk_ui import common
from bnfk_ui.state import messages, tables


@st.cache_resource(show_spinner=False, max_entries=16)
def _fit(_feat, fingerprint: str, k: int, starts: int, seed: int):
    return fit_lca(_feat, k, starts, seed)


def _fits(feat, ks, starts, seed):
    bar = st.progress(0.0, text="Fitting…")
    out = []
    for j, k in enumerate(ks):
        bar.progress(j / len(ks), text=f"EM for {k} classes ({starts} starts)…")
        out.append(_fit(feat, feat.fingerprint(), int(k), int(starts), int(seed)))
    bar.empty()
    return out


def page():
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
    fits = _fits(feat, ks, int(starts), int(seed))
    table = pd.DataFrame(
        [
            {
                "classes": m.n_classes,
                "log-likelihood": m.loglik,
                "parameters": m.parameters,
                "BIC": m.bic,
                "AIC": m.aic,
                "starts at best": f"{m.starts_at_best}/{m.starts}",
            }
            for m in fits
        ]
    )
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
        _identifiability(m, feat)
    st.subheader("Posterior class probabilities")
    pt = pd.DataFrame(post, columns=[f"P(class {t + 1})" for t in range(m.n_classes)])
    pt.insert(0, "modal class", modal + 1)
    pt.insert(0, "row", np.arange(len(pt)))  # data row numbers from 0, as every page and download
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
    _agreement(d, modal)
    _hand_over(m, feat)


def _identifiability(m, feat):
    st.subheader("Identifiability")
    v = identifiability(m)
    verdict = {True: "identifiable", False: "not identifiable", None: "not shown either way"}[
        v["identifiable"]
    ]
    st.metric(
        "Parameter sets with this distribution", str(v["parameter_sets"]), help=messages.plain(v["reason"])
    )
    st.caption(f"**{verdict}** — {messages.plain(v['reason'])}.")
    if v["kruskal"]:
        kr = v["kruskal"]
        st.caption(
            f"Kruskal ranks {kr['ranks']} (sum {kr['sum']}, needs {kr['needed']}) over three groups of "
            f"variables; the seed's condition {'holds' if v['seed_condition']['holds'] else 'fails'}."
        )
    r = rank_diagnostic(Moments.from_codes(feat.codes, feat.cardinalities), n_rows=feat.n_rows)
    st.caption(
        f"Rank diagnostic (data): the cross-moment matrix supports about **{r['classes_supported']}** "
        f"classes (detects at most {r['max_detectable']})."
    )
    st.plotly_chart(
        figs.singular_values_figure(r["singular_values"], r["tol"]),
        key="lca_sv",
        config={"displaylogo": False},
    )


def _agreement(d, modal):
    cols = [c for c in d.variables]
    if not cols:
        return
    default = cols.index(d.class_column) if d.class_column in cols else 0
    col = st.selectbox("Compare the modal classes with the column", cols, index=default, key="w_lca_label")
    lab = d.codes[:, d.index(col)]
    m = clustering_metrics(lab, modal)
    c1, c2, c3 = st.columns(3)
    c1.metric("ARI", f"{m['ari']:.3f}" if m["ari"] is not None else "–")
    c2.metric("AMI", f"{m['ami']:.3f}" if m["ami"] is not None else "–")
    c3.metric("V-measure", f"{m['v_measure']:.3f}" if m["v_measure"] is not None else "–")


def _hand_over(m, feat):
    ss = st.session_state
    net = kernel_network(m)
    c1, c2, c3 = st.columns(3)
    if c1.button(
        "Use in the Kernel page",
        key="lca_use",
        icon=":material/hub:",
        help="The Kernel page's latent-class Fisher kernel then uses this model (hidden class node).",
    ):
        ss.lca_network = (feat.fingerprint(), net)
        st.success(f"The Kernel page's '{LCA_FISHER}' kernel now uses this {m.n_classes}-class model.")
    with c2:
        common.download(
            "Model (BIF)",
            model_to_bif(m.to_bayesnet()).encode("utf-8"),
            f"{common.dataset_name()}_lca{m.n_classes}.bif",
            "text/plain",
            key="dl_lca_bif",
        )
    with c3:
        common.download(
            "Model (JSON)",
            json.dumps(m.to_bayesnet().to_json_dict(), indent=1).encode("utf-8"),
            f"{common.dataset_name()}_lca{m.n_classes}.json",
            "application/json",
            key="dl_lca_json",
        )


if common.start("Latent classes"):
    page()
