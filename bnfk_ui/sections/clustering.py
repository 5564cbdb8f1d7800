"""Tabs of the Clustering page: one clustering in detail (metrics against the empty network, heatmap by
cluster, kernel-PCA maps, contingency table, downloads), every selected kernel × both algorithms over several
seeds (the thesis's Table 5.1 layout) and kernel kNN / SVM classification (thesis App. D)."""

import json

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.kernels.fisher import SCALED_HAMMING
from bnfk_core.kernels.fisher_normalized import ABOUT
from bnfk_core.registry import CLUSTERERS, KERNELS
from bnfk_core.serving import settings
from bnfk_core.views import figures
from bnfk_core.views.figures import clustering as fig_clu

from .. import common
from ..state import caches, charts, choices, clustering, hybrid, messages, shared, structure

__all__ = ["one_clustering_tab", "cli_command", "downloads", "comparison_tab", "classification_tab"]

ALGOS, NETWORKS = settings.ALGORITHMS, settings.CLUSTER_NETWORKS
CHART = {"displaylogo": False}


def one_clustering_tab(d, sub, rows, m, base_key: tuple, k: int) -> None:
    """The chosen kernel and algorithm on the sampled rows ``sub`` (``rows`` of ``d``) with the network ``m``:
    the scores beside the empty network's, what was computed and how (the command line), the heatmap by
    cluster, the kernel-PCA maps by cluster and by label, the contingency table and the downloads."""
    ss = st.session_state
    seed, kernel, algo = int(ss.clu_seed), ss.clu_kernel, ss.clu_algorithm
    has_class = d.class_column is not None
    cls_states = d.states[d.index(d.class_column)] if has_class else ()
    hybrid_kernel = (  # numbers kept: the Fisher kernel of the hybrid network (a Gram matrix given)
        hybrid.kernel_covered(kernel)
        and ss.clu_network == "current"
        and CLUSTERERS[algo].uses_kernel
        and CLUSTERERS[algo].features is None
    )
    with common.working(f"{KERNELS[kernel].label} kernel and {ALGOS[algo].lower()}…"):
        options = caches.kernel_options(kernel, ss.clu_alpha)
        if hybrid_kernel:
            hm = hybrid.fitted(structure.dag())
            setup = hybrid.kernel_setup(hm, rows, [v for v in sub.variables if v != sub.class_column], kernel)
            base_key = base_key + ("hybrid", hm.key())
        else:
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
    # the empty network's kernel beside the chosen kernel (lca clusters the rows itself: no kernel to compare)
    if kernel != SCALED_HAMMING and CLUSTERERS[algo].uses_kernel:
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
    if not CLUSTERERS[algo].uses_kernel:
        lines.append(
            f"The latent class model clusters the rows itself ({k} classes, {int(ss.clu_restarts)} "
            "seeded "
            "EM starts as 'Local-search restarts'); the kernel only draws the heatmap and the maps."
        )
    if hybrid_kernel:
        lines.append(
            f"The Fisher kernel of the hybrid network of the Structure page ({m.dag.n_arcs} arcs): numbers "
            "as numbers (the scores of its CPTs, means, regression weights and variances)."
        )
    elif KERNELS[kernel].uses_network and ss.clu_network == "current":
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
        + messages.code_span(cli_command(kernel, algo, k))
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
    downloads(
        d,
        rows,
        labels,
        res,
        tab if has_class else None,
        fg,
        f"{common.dataset_name()}_{kernel}_{algo}_k{k}_seed{seed}",
    )


def cli_command(kernel: str, algo: str, k: int) -> str:
    """The command line that computes this clustering (same rows, network, seed and settings)."""
    ss = st.session_state
    args = [
        "python -m bnfk_core cluster",
        *choices.cli_data_args(),
        "--kernel",
        kernel,
        "--algorithm",
        algo,
        "--clusters",
        str(k),
        "--seed",
        str(int(ss.clu_seed)),
    ]
    args += (
        ["--restarts", str(int(ss.clu_restarts))]
        if CLUSTERERS[algo].takes("restarts", "starts")  # lca: its EM starts
        else ["--transform", ss.clu_transform]
    )
    for name, value in caches.kernel_options(kernel, ss.clu_alpha):
        args += [f"--{name}", f"{value:g}"]
    if KERNELS[kernel].uses_network and CLUSTERERS[algo].uses_kernel:  # lca clusters the rows itself
        args += (
            [f"--{k}={v}" for k, v in settings.THESIS_RECIPE.items()]
            if ss.clu_network == settings.THESIS_NETWORK
            else ["--model", f"{common.dataset_name()}_model.json"]
        )
    return " ".join(args)


def downloads(d, rows, labels, res: dict, contingency, heatmap, base: str) -> None:
    """Download buttons of one clustering: assignments, contingency table (if any), result JSON, heatmap (each
    file written when its button is clicked, not on every page run)."""

    def assignments() -> bytes:
        assign = d.frame.iloc[rows].assign(row=rows, cluster=labels)[["row", "cluster"] + list(d.variables)]
        return assign.to_csv(index=False).encode("utf-8")

    def summary() -> bytes:
        out = {k: v for k, v in res.items() if k != "labels"} | {"rows": rows.tolist()}
        return json.dumps(out, indent=1, default=float).encode("utf-8")

    dl = st.columns(4)
    with dl[0]:
        common.download("Assignments (CSV)", assignments, f"{base}.csv", "text/csv", key="dl_clu_assign")
    if contingency is not None:
        with dl[1]:
            common.download(
                "Contingency (CSV)",
                lambda: contingency.to_csv().encode("utf-8"),
                f"{base}_contingency.csv",
                "text/csv",
                key="dl_clu_cont",
            )
    with dl[2]:
        common.download("Result (JSON)", summary, f"{base}.json", "application/json", key="dl_clu_json")
    with dl[3]:
        common.download_figure(heatmap, f"{base}_heatmap", "Heatmap (HTML)")


def comparison_tab(sub, model, base_key: tuple, k: int, seed: int) -> None:
    """Kernels × algorithms on the sampled rows ``sub``, mean ARI / AMI / V-measure over runs."""
    ss = st.session_state
    a1, a2 = st.columns([2, 1])
    a1.multiselect("Kernels", list(KERNELS), format_func=KERNELS.labels().get, **choices.bind("clu_kernels"))
    a2.number_input(
        "Runs (seeds seed, seed+1, …)",
        min_value=1,
        max_value=20,
        step=1,
        help="The thesis averages 10 runs.",
        **choices.bind("clu_runs"),
    )
    kernels, runs = tuple(ss.clu_kernels), int(ss.clu_runs)
    key = base_key + (kernels, runs, k, ss.clu_transform, int(ss.clu_restarts), seed)
    table = common.stored_run(
        "Run the comparison",
        "clu_cmp_run",
        "clu_cmp",
        key,
        icon=":material/table_view:",
        disabled=not kernels,
        fn=lambda progress: C.compare(
            sub,
            kernels=kernels,
            runs=runs,
            seed=seed,
            n_clusters=k,
            transform=ss.clu_transform,
            restarts=int(ss.clu_restarts),
            model=model,
            progress=progress,
        ),
    )
    if table is None:
        st.caption(
            "Runs every selected kernel with both algorithms over several seeds (the kernel is computed once "
            "per kernel)."
        )
        return
    flat = pd.DataFrame(
        {
            metric.upper().replace("V_MEASURE", "V-measure"): table.set_index("combination")[metric]
            for metric in ("ari", "ami", "v_measure")
        }
    ).T
    st.dataframe(flat.style.format("{:.3f}"), key="clu_cmp_table")
    abbrs = "; ".join(f"{KERNELS[n].abbr}: {KERNELS[n].label}" for n in dict.fromkeys(table["kernel"]))
    st.caption(
        f"Mean over {runs} runs on {sub.n_rows:,} rows, {k} clusters (CC: correlation, SC: spectral; "
        f"{abbrs}) — the layout of the thesis's Table 5.1 (ARI) and C.1/C.2 (AMI, V-measure)."
    )
    common.download(
        "Comparison (CSV)",
        lambda: table.to_csv(index=False).encode("utf-8"),
        f"{common.dataset_name()}_clustering_comparison.csv",
        "text/csv",
        key="dl_clu_cmp",
    )


def classification_tab(sub, model, base_key: tuple, seed: int) -> None:
    """kNN and SVM on each selected kernel over seeded 80/20 splits of ``sub``."""
    ss = st.session_state
    b1, b2 = st.columns([2, 1])
    b1.caption(
        "Seeded 80/20 splits of the sampled rows; the kernel's model (the network's CPTs, or the "
        "scaled-Hamming frequencies) is estimated on each training split only."
    )
    b2.number_input("Splits", min_value=1, max_value=20, step=1, **choices.bind("clu_clf_repeats"))
    kernels, repeats = list(ss.clu_kernels), int(ss.clu_clf_repeats)
    table = common.stored_run(
        "Run the classifiers",
        "clu_clf_run",
        "clu_clf",
        base_key + (repeats, seed, tuple(kernels)),
        icon=":material/model_training:",
        disabled=not kernels,
        fn=lambda progress: C.classification_table(
            sub, kernels, C.CLASSIFIERS, repeats=repeats, seed=seed, model=model, progress=progress
        ),
    )
    if table is None:
        st.caption("kNN and SVM on each selected kernel (thesis App. D: accuracy and log loss).")
        return
    st.dataframe(
        table.style.format({c: "{:.3f}" for c in ("accuracy", "accuracy_std", "log_loss", "log_loss_std")}),
        hide_index=True,
        key="clu_clf_table",
    )
    common.download(
        "Classification (CSV)",
        lambda: table.to_csv(index=False).encode("utf-8"),
        f"{common.dataset_name()}_classification.csv",
        "text/csv",
        key="dl_clu_clf",
    )
