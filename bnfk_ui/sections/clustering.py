"""Tabs of the Clustering page beside the one clustering in detail: every selected kernel × both algorithms
over several seeds (the thesis's Table 5.1 layout) and kernel kNN / SVM classification (thesis App. D)."""

import json

import pandas as pd
import streamlit as st

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.registry import CLUSTERERS, KERNELS

from .. import common
from ..state import caches, choices

__all__ = ["cli_command", "downloads", "comparison_tab", "classification_tab"]


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
            ["--structure", "hc", "--score", "qnml", "--params", "cnml"]
            if ss.clu_network == "qnml"
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
