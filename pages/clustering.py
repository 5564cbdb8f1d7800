"""Clustering: kernels × algorithms (thesis Table 5.1 layout), one clustering in detail (heatmap by cluster,
kernel-PCA map by cluster and by label, contingency table), and kernel kNN / SVM classification (App. D)."""

import streamlit as st

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.kernels.embed import sample_rows
from bnfk_core.kernels.fisher_normalized import ABOUT
from bnfk_core.registry import KERNELS
from bnfk_core.serving import settings
from bnfk_ui import common
from bnfk_ui.sections import clustering as sections
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.state import caches, choices, clustering, tables
from bnfk_ui.state import model as model_state

ALGOS, TRANSFORMS, NETWORKS = settings.ALGORITHMS, settings.TRANSFORMS, settings.CLUSTER_NETWORKS
MAX_ROWS = 3000


def page():
    hybrid_section.binned_notice(  # numbers kept: the one sentence naming the columns this page bins
        "The other kernels, the feature-space algorithms, the comparison and the classification tabs",
        plural=True,
    )
    ss = st.session_state
    d = tables.data()
    has_class = d.class_column is not None
    st.caption(
        "The kernel is computed on the feature columns only; the class column "
        + (f"**{d.class_column}** " if has_class else "")
        + "is never a feature and serves to score the clusters (ARI, AMI, V-measure)."
        + ("" if has_class else " Without a class column only the kernel-distance silhouette is shown.")
    )

    c1, c2, c3, c4 = st.columns([1.3, 1.3, 1, 1])
    with c1:
        st.selectbox("Kernel", list(KERNELS), format_func=KERNELS.labels().get, **choices.bind("clu_kernel"))
        if caches.kernel_options(ss.clu_kernel, 1.0):  # a kernel with a power (the normalised Fisher kernel)
            common.option_slider(st, "Power α", "clu_alpha", help=ABOUT)
        st.selectbox(
            "Network behind the network kernels",
            list(NETWORKS),
            format_func=NETWORKS.get,
            **choices.bind("clu_network"),
            help="The thesis used an exact qNML structure with cNML parameters; "
            "hill climbing on qNML (learned on all rows with the seed below, as the CLI's `--seed`) is the "
            "fast stand-in (exact search: `python -m bnfk_core cluster --structure exact`).",
        )
    with c2:
        st.radio(
            "Algorithm", list(ALGOS), format_func=ALGOS.get, horizontal=True, **choices.bind("clu_algorithm")
        )
        st.selectbox(
            "Spectral affinity",
            list(TRANSFORMS),
            format_func=TRANSFORMS.get,
            **choices.bind("clu_transform"),
            help="Spectral clustering needs non-negative affinities. Correlation clustering uses the kernel "
            "itself, shifted as each kernel registers (thesis: adaptive for (scaled-)Hamming, none for "
            "Fisher).",
        )
    with c3:
        max_rows = max(2, min(d.n_rows, MAX_ROWS))
        st.number_input(
            "Rows (sampled)",
            min_value=2,
            max_value=max_rows,
            step=100,
            help=f"At most {MAX_ROWS:,} of the {d.n_rows:,} rows, drawn without replacement.",
            **choices.bind("clu_rows", shown=lambda v: int(min(max(v, 2), max_rows))),
        )
        st.number_input(
            "Clusters (0 = number of labels)" if has_class else "Clusters (0 = 2: no class column)",
            min_value=0,
            max_value=200,
            step=1,
            **choices.bind("clu_k"),
        )
    with c4:
        common.seed_input("Seed", "clu_seed")
        st.number_input(
            "Local-search restarts", min_value=1, max_value=200, step=5, **choices.bind("clu_restarts")
        )

    seed = int(ss.clu_seed)
    rows = sample_rows(d.n_rows, int(min(max(ss.clu_rows, 2), max_rows)), seed)
    sub = d.subset(rows)
    k = int(ss.clu_k) or (C.default_n_clusters(sub) if has_class else 2)
    if k > len(rows):
        st.error(f"Cannot make {k} clusters from {len(rows)} rows; lower the number of clusters.")
        return
    with common.working("Preparing the network…"):
        m = (
            clustering.thesis_network(d, d.fingerprint(), seed)
            if ss.clu_network == settings.THESIS_NETWORK
            else model_state.session_model()
        )
    base_key = (sub.fingerprint(), m.key(), ss.clu_network)

    tab_one, tab_cmp, tab_clf = st.tabs(["One clustering", "Kernels × algorithms", "Classification"])
    with tab_one:
        sections.one_clustering_tab(d, sub, rows, m, base_key, k)
    with tab_cmp:
        if has_class:
            sections.comparison_tab(sub, m, base_key, k, seed)
        else:
            st.info(
                "The comparison scores clusterings against labels; choose a class column on the Data page."
            )
    with tab_clf:
        if has_class:
            sections.classification_tab(sub, m, base_key, seed)
        else:
            st.info("Classification needs a class column; choose one on the Data page.")


if common.start("Clustering"):
    page()
