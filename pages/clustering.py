"""Clustering: kernels × algorithms (thesis Table 5.1 layout), one clustering in detail (heatmap by cluster,
kernel-PCA map by cluster and by label, contingency table), and kernel kNN / SVM classification (App. D)."""

import numpy as np
import streamlit as st

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.kernels.embed import sample_rows
from bnfk_core.kernels.fisher import SCALED_HAMMING
from bnfk_core.kernels.fisher_normalized import ABOUT
from bnfk_core.registry import KERNELS
from bnfk_core.serving import settings
from bnfk_core.views import figures
from bnfk_core.views.figures import clustering as fig_clu
from bnfk_ui import common
from bnfk_ui.sections import clustering as sections
from bnfk_ui.state import caches, charts, choices, clustering, messages, shared, structure, tables

ALGOS, TRANSFORMS, NETWORKS = settings.ALGORITHMS, settings.TRANSFORMS, settings.CLUSTER_NETWORKS
MAX_ROWS = 3000
CHART = {"displaylogo": False}


def page():
    ss = st.session_state
    d = tables.data()
    has_class = d.class_column is not None
    cls_states = d.states[d.index(d.class_column)] if has_class else ()
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
            st.slider("Power α", 0.02, 1.0, step=0.01, help=ABOUT, **choices.bind("clu_alpha"))
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

    seed, kernel, algo = int(ss.clu_seed), ss.clu_kernel, ss.clu_algorithm
    rows = sample_rows(d.n_rows, int(min(max(ss.clu_rows, 2), max_rows)), seed)
    sub = d.subset(rows)
    k = int(ss.clu_k) or (C.default_n_clusters(sub) if has_class else 2)
    if k > len(rows):
        st.error(f"Cannot make {k} clusters from {len(rows)} rows; lower the number of clusters.")
        return
    with common.working("Preparing the network…"):
        m = (
            clustering.thesis_network(d, d.fingerprint(), seed)
            if ss.clu_network == "qnml"
            else caches.model()
        )
    base_key = (sub.fingerprint(), m.key(), ss.clu_network)

    tab_one, tab_cmp, tab_clf = st.tabs(["One clustering", "Kernels × algorithms", "Classification"])
    with tab_one:
        with common.working(f"{KERNELS[kernel].label} kernel and {ALGOS[algo].lower()}…"):
            options = caches.kernel_options(kernel, ss.clu_alpha)
            setup = clustering.clustering_setup(sub, base_key + options, kernel, m, options)
            res = clustering.cached_clustering(
                setup,
                sub,
                base_key + (kernel,) + options,
                algo,
                k,
                ss.clu_transform,
                int(ss.clu_restarts),
                seed,
            )
        ss.clu_result = {**res, "rows": rows.tolist()}
        labels = np.asarray(res["labels"])
        true = sub.labels() if has_class else np.full(len(rows), -1)
        base = None
        if kernel != SCALED_HAMMING and algo != "lca":  # the empty network beside the chosen kernel
            with common.working("Baseline: the empty network (scaled-Hamming kernel)…"):
                bsetup = clustering.clustering_setup(sub, base_key, SCALED_HAMMING, m)
                base = clustering.cached_clustering(
                    bsetup,
                    sub,
                    base_key + (SCALED_HAMMING,),
                    algo,
                    k,
                    ss.clu_transform,
                    int(ss.clu_restarts),
                    seed,
                )
        mc = st.columns(5)
        for col, (name, key) in zip(
            mc, (("ARI", "ari"), ("AMI", "ami"), ("V-measure", "v_measure"), ("Silhouette", "silhouette"))
        ):
            b = None if base is None or base[key] is None or res[key] is None else res[key] - base[key]
            col.metric(
                name,
                "–" if res[key] is None else f"{res[key]:.3f}",
                delta=None if b is None else f"{b:+.3f} vs empty network",
                delta_color="off",
            )
        mc[4].metric(
            "Clusters used",
            f"{res['n_used']} of {res['n_clusters']}",
            help=f"clustering {res['cluster_seconds']:.2f} s, kernel {res['kernel_seconds']:.2f} s"
            + (f"; eq. (5.2) cost {res['cost']:.4g}" if res["cost"] is not None else ""),
        )
        lines = []  # one caption, a paragraph each: the model, the network, the baseline, the command line
        if algo == "lca":
            lines.append(
                f"The latent class model clusters the rows itself ({k} classes, {int(ss.clu_restarts)} "
                "seeded "
                "EM starts as 'Local-search restarts'); the kernel only draws the heatmap and the maps."
            )
        if KERNELS[kernel].uses_network and ss.clu_network == "current":
            lines += [
                common.literal(structure.network_line(f"The {KERNELS[kernel].label} kernel")),
                ABOUT if options else "",
            ]
        elif KERNELS[kernel].uses_network:
            lines.append(
                f"{KERNELS[kernel].label} kernel of {NETWORKS[ss.clu_network].lower()}: {m.dag.n_arcs} arcs."
                + (f" {ABOUT}" if options else "")
            )
        if base is not None:
            lines.append(
                "Baseline beside it: the empty network (scaled-Hamming kernel, thesis eq. 3.2), same rows "
                "and "
                "settings — "
                + ", ".join(
                    f"{n} {base[k_]:.3f}"
                    for n, k_ in (("ARI", "ari"), ("AMI", "ami"), ("silhouette", "silhouette"))
                    if base[k_] is not None
                )
                + "."
            )
        lines.append(
            "The same result on the command line: "
            + messages.code_span(sections.cli_command(kernel, algo, k))
            + (
                " (the model is the Structure page's 'Model (JSON)')."
                if KERNELS[kernel].uses_network and ss.clu_network == "current"
                else "."
            )
            if len(rows) == d.n_rows
            else f"{len(rows):,} of {d.n_rows:,} rows (seed {seed}); with all rows the command line gives "
            "the "
            "same result (`python -m bnfk_core cluster` clusters every row of its CSV)."
        )
        common.captions(*lines)
        views = clustering.clustering_views(setup.K, base_key + (kernel,) + options, tuple(labels.tolist()))
        order = views["order"]
        drawn = figures.evenly_drawn(order)  # the clustering uses every row
        fg = shared.shared(
            fig_clu.cluster_heatmap,
            setup.K,
            drawn,
            rows,
            labels,
            res["n_used"],
            KERNELS[kernel].label,
            fig_clu.cluster_colors(labels, res["n_used"], true, cls_states),
        )
        charts.plotly_chart(fg, key="clu_heat", config=CHART)
        if len(drawn) < len(order):
            st.caption(
                f"{len(drawn):,} of the {len(order):,} rows drawn, evenly spaced along the cluster order "
                "(every row is clustered and in the downloads)."
            )
        for col, fig, key in zip(
            st.columns(2),
            shared.shared(fig_clu.cluster_maps, views["pca"], rows, labels, res["n_used"], true, cls_states),
            ("clu_pca_cluster", "clu_pca_label"),
        ):
            charts.plotly_chart(fig, key=key, config=CHART, where=col)
        if has_class:
            st.markdown("**Clusters × labels**")
            tab = shared.shared(C.contingency, true, labels, tuple(cls_states))  # once per clustering
            st.dataframe(tab, key="clu_contingency")
        sections.downloads(
            d,
            rows,
            labels,
            res,
            tab if has_class else None,
            fg,
            f"{common.dataset_name()}_{kernel}_{algo}_k{k}_seed{seed}",
        )

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
