"""Clustering: kernels × algorithms (thesis Table 5.1 layout), one clustering in detail (heatmap by cluster,
kernel-PCA map by cluster and by label, contingency table), and kernel kNN / SVM classification (App. D)."""
import json

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.analyses import cluster as C
from bnfk_core.embed import sample_rows
from bnfk_core.errors import BnfkError
from bnfk_core.registry import KERNELS
from bnfk_ui import common, state
from bnfk_ui.figures import clustering as fig_clu

ALGOS = {"correlation": "Correlation clustering", "spectral": "Spectral clustering"}
TRANSFORMS = {"shift-min": "K − min K (thesis)", "cosine": "cosine-normalised, (1 + cos)/2",
              "rbf": "exp(−d² / median d²), kernel distance"}
NETWORKS = {"current": "Current structure (Structure page)", "qnml": "Hill climbing on qNML, cNML parameters (thesis)"}
DEFAULTS = {"clu_kernel": "scaled-hamming", "clu_algorithm": "correlation", "clu_network": "current",
            "clu_transform": "shift-min", "clu_restarts": 25, "clu_seed": 0, "clu_rows": 1000, "clu_k": 0,
            "clu_runs": 3, "clu_kernels": [n for n in KERNELS if KERNELS[n].family in ("fisher", "baseline")],
            "clu_clf_repeats": 5}
MAX_ROWS = 3000
CHART = {"displaylogo": False}


@st.cache_resource(show_spinner=False, max_entries=8)
def _thesis_network(_data, fingerprint: str, seed: int):
    return C.feature_network(_data, structure="hc", score="qnml", params="cnml", seed=seed)


@st.cache_resource(show_spinner=False, max_entries=8)
def _setup(_data, key: tuple, kernel: str, _model) -> C.KernelSetup:
    return C.kernel_setup(_data, kernel, model=_model if KERNELS[kernel].uses_network else None)


@st.cache_data(show_spinner=False, max_entries=32)
def _clustering(_setup_obj, _data, key: tuple, algorithm: str, k: int, transform: str, restarts: int, seed: int) -> dict:
    return C.run_clustering(_data, _setup_obj.kernel, algorithm, n_clusters=k, setup=_setup_obj, transform=transform,
                            restarts=restarts, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _views(_K: np.ndarray, key: tuple, labels: tuple) -> dict:
    return {"order": C.cluster_ordering(np.asarray(labels), _K), "pca": C.embedding(_K, 2)}


def cli_command(kernel: str, algo: str, k: int) -> str:
    """The command line that computes this clustering (same rows, network, seed and settings)."""
    ss = st.session_state
    args = ["python -m bnfk_core cluster", *state.cli_data_args(), "--kernel", kernel, "--algorithm", algo,
            "--clusters", str(k), "--seed", str(int(ss.clu_seed))]
    args += ["--restarts", str(int(ss.clu_restarts))] if algo == "correlation" else ["--transform", ss.clu_transform]
    if KERNELS[kernel].uses_network:
        args += (["--structure", "hc", "--score", "qnml", "--params", "cnml"] if ss.clu_network == "qnml"
                 else ["--model", f"{common.dataset_name()}_model.json"])
    return " ".join(args)


def page():
    ss = st.session_state
    for key, v in DEFAULTS.items():
        ss.setdefault(key, list(v) if isinstance(v, list) else v)
    d = state.data()
    has_class = d.class_column is not None
    cls_states = d.states[d.index(d.class_column)] if has_class else ()
    st.caption("The kernel is computed on the feature columns only; the class column "
               + (f"**{d.class_column}** " if has_class else "")
               + "is never a feature and serves to score the clusters (ARI, AMI, V-measure)."
               + ("" if has_class else " Without a class column only the kernel-distance silhouette is shown."))

    c1, c2, c3, c4 = st.columns([1.3, 1.3, 1, 1])
    with c1:
        st.radio("Kernel", list(KERNELS), format_func=KERNELS.labels().get, horizontal=True, **state.bind("clu_kernel"))
        st.selectbox("Network behind the network kernels", list(NETWORKS), format_func=NETWORKS.get,
                     **state.bind("clu_network"), help="The thesis used an exact qNML structure with cNML parameters; "
                     "hill climbing on qNML (learned on all rows with the seed below, as the CLI's `--seed`) is the "
                     "fast stand-in (exact search: `python -m bnfk_core cluster --structure exact`).")
    with c2:
        st.radio("Algorithm", list(ALGOS), format_func=ALGOS.get, horizontal=True, **state.bind("clu_algorithm"))
        st.selectbox("Spectral affinity", list(TRANSFORMS), format_func=TRANSFORMS.get, **state.bind("clu_transform"),
                     help="Spectral clustering needs non-negative affinities. Correlation clustering uses the kernel "
                          "itself, shifted as each kernel registers (thesis: adaptive for (scaled-)Hamming, none for "
                          "Fisher).")
    with c3:
        max_rows = max(2, min(d.n_rows, MAX_ROWS))
        st.number_input("Rows (sampled)", min_value=2, max_value=max_rows, step=100,
                        help=f"At most {MAX_ROWS:,} of the {d.n_rows:,} rows, drawn without replacement.",
                        **state.bind("clu_rows", shown=lambda v: int(min(max(v, 2), max_rows))))
        st.number_input("Clusters (0 = number of labels)", min_value=0, max_value=200, step=1, **state.bind("clu_k"))
    with c4:
        common.seed_input("Seed", "clu_seed")
        st.number_input("Local-search restarts", min_value=1, max_value=200, step=5, **state.bind("clu_restarts"))

    seed, kernel, algo = int(ss.clu_seed), ss.clu_kernel, ss.clu_algorithm
    rows = sample_rows(d.n_rows, int(min(max(ss.clu_rows, 2), max_rows)), seed)
    sub = d.subset(rows)
    k = int(ss.clu_k) or (C.default_n_clusters(sub) if has_class else 2)
    if k > len(rows):
        st.error(f"Cannot make {k} clusters from {len(rows)} rows; lower the number of clusters.")
        return
    with st.spinner("Preparing the network…"):
        m = _thesis_network(d, d.fingerprint(), seed) if ss.clu_network == "qnml" else state.model()
    base_key = (sub.fingerprint(), m.key(), ss.clu_network)

    tab_one, tab_cmp, tab_clf = st.tabs(["One clustering", "Kernels × algorithms", "Classification"])
    with tab_one:
        with st.spinner(f"{KERNELS[kernel].label} kernel and {ALGOS[algo].lower()}…"):
            setup = _setup(sub, base_key, kernel, m)
            res = _clustering(setup, sub, base_key + (kernel,), algo, k, ss.clu_transform, int(ss.clu_restarts), seed)
        ss.clu_result = {**res, "rows": rows.tolist()}
        labels = np.asarray(res["labels"])
        true = sub.labels() if has_class else np.full(len(rows), -1)
        mc = st.columns(5)
        for col, (name, key) in zip(mc, (("ARI", "ari"), ("AMI", "ami"), ("V-measure", "v_measure"),
                                         ("Silhouette", "silhouette"))):
            col.metric(name, "–" if res[key] is None else f"{res[key]:.3f}")
        mc[4].metric("Clusters used", f"{res['n_used']} of {res['n_clusters']}",
                     help=f"clustering {res['cluster_seconds']:.2f} s, kernel {res['kernel_seconds']:.2f} s"
                     + (f"; eq. (5.2) cost {res['cost']:.4g}" if res["cost"] is not None else ""))
        if KERNELS[kernel].uses_network:
            st.caption(f"{KERNELS[kernel].label} kernel of {NETWORKS[ss.clu_network].lower()}: {m.dag.n_arcs} arcs.")
        st.caption(f"The same result on the command line: `{cli_command(kernel, algo, k)}`"
                   + (" (the model is the Structure page's 'Model (JSON)')." if KERNELS[kernel].uses_network
                      and ss.clu_network == "current" else ".") if len(rows) == d.n_rows else
                   f"{len(rows):,} of {d.n_rows:,} rows (seed {seed}); with all rows the command line gives the "
                   "same result (`python -m bnfk_core cluster` clusters every row of its CSV).")
        views = _views(setup.K, base_key + (kernel,), tuple(labels.tolist()))
        fg = fig_clu.cluster_heatmap(setup.K, views["order"], rows, labels, res["n_used"], KERNELS[kernel].label)
        st.plotly_chart(fg, key="clu_heat", config=CHART)
        for col, fig, key in zip(st.columns(2), fig_clu.cluster_maps(views["pca"], rows, labels, res["n_used"], true,
                                                                     cls_states), ("clu_pca_cluster", "clu_pca_label")):
            col.plotly_chart(fig, key=key, config=CHART)
        if has_class:
            st.markdown("**Clusters × labels**")
            tab = C.contingency(true, labels, cls_states)
            st.dataframe(tab, key="clu_contingency")
        assign = d.frame.iloc[rows].assign(row=rows, cluster=labels)[["row", "cluster"] + list(d.variables)]
        base = f"{common.dataset_name()}_{kernel}_{algo}_k{k}_seed{seed}"
        dl = st.columns(4)
        with dl[0]:
            common.download("Assignments (CSV)", assign.to_csv(index=False).encode("utf-8"), f"{base}.csv",
                            "text/csv", key="dl_clu_assign")
        if has_class:
            with dl[1]:
                common.download("Contingency (CSV)", tab.to_csv().encode("utf-8"), f"{base}_contingency.csv",
                                "text/csv", key="dl_clu_cont")
        with dl[2]:
            summary = {k2: v for k2, v in res.items() if k2 != "labels"} | {"rows": rows.tolist()}
            common.download("Result (JSON)", json.dumps(summary, indent=1, default=float).encode("utf-8"),
                            f"{base}.json", "application/json", key="dl_clu_json")
        with dl[3]:
            common.download_figure(fg, f"{base}_heatmap", "Heatmap (HTML)")

    with tab_cmp:
        if not has_class:
            st.info("The comparison scores clusterings against labels; choose a class column on the Data page.")
        else:
            a1, a2 = st.columns([2, 1])
            a1.multiselect("Kernels", list(KERNELS), format_func=KERNELS.labels().get, **state.bind("clu_kernels"))
            a2.number_input("Runs (seeds seed, seed+1, …)", min_value=1, max_value=20, step=1,
                            help="The thesis averages 10 runs.", **state.bind("clu_runs"))
            cmp_key = base_key + (tuple(ss.clu_kernels), int(ss.clu_runs), k, ss.clu_transform,
                                  int(ss.clu_restarts), seed)
            if st.button("Run the comparison", key="clu_cmp_run", icon=":material/table_view:",
                         disabled=not ss.clu_kernels):
                bar = st.progress(0.0, text="Starting…")
                table = C.compare(sub, kernels=tuple(ss.clu_kernels), runs=int(ss.clu_runs), seed=seed, n_clusters=k,
                                  transform=ss.clu_transform, restarts=int(ss.clu_restarts), model=m,
                                  progress=lambda f, msg: bar.progress(min(f, 1.0), text=msg))
                bar.progress(1.0, text="Done")
                ss.clu_cmp = (cmp_key, table)
            saved = ss.get("clu_cmp")
            if saved and saved[0] == cmp_key:
                table = saved[1]
                flat = pd.DataFrame({metric.upper().replace("V_MEASURE", "V-measure"):
                                     table.set_index("combination")[metric] for metric in ("ari", "ami", "v_measure")}).T
                st.dataframe(flat.style.format("{:.3f}"), key="clu_cmp_table")
                abbrs = "; ".join(f"{KERNELS[n].abbr}: {KERNELS[n].label}" for n in dict.fromkeys(table["kernel"]))
                st.caption(f"Mean over {int(ss.clu_runs)} runs on {len(rows):,} rows, {k} clusters "
                           f"(CC: correlation, SC: spectral; {abbrs}) — the layout of the thesis's Table 5.1 (ARI) "
                           "and C.1/C.2 (AMI, V-measure).")
                common.download("Comparison (CSV)", table.to_csv(index=False).encode("utf-8"),
                                f"{common.dataset_name()}_clustering_comparison.csv", "text/csv", key="dl_clu_cmp")
            else:
                st.caption("Runs every selected kernel with both algorithms over several seeds (the kernel is "
                           "computed once per kernel).")

    with tab_clf:
        if not has_class:
            st.info("Classification needs a class column; choose one on the Data page.")
        else:
            b1, b2 = st.columns([2, 1])
            b1.caption("Seeded 80/20 splits of the sampled rows; the kernel's model (the network's CPTs, or the "
                       "scaled-Hamming frequencies) is estimated on each training split only.")
            b2.number_input("Splits", min_value=1, max_value=20, step=1, **state.bind("clu_clf_repeats"))
            clf_key = base_key + (int(ss.clu_clf_repeats), seed, tuple(ss.clu_kernels))
            if st.button("Run the classifiers", key="clu_clf_run", icon=":material/model_training:",
                         disabled=not ss.clu_kernels):
                bar = st.progress(0.0, text="Starting…")
                ss.clu_clf = (clf_key, C.classification_table(
                    sub, ss.clu_kernels, C.CLASSIFIERS, repeats=int(ss.clu_clf_repeats), seed=seed, model=m,
                    progress=lambda f, msg: bar.progress(f, text=msg)))
                bar.progress(1.0, text="Done")
            saved = ss.get("clu_clf")
            if saved and saved[0] == clf_key:
                st.dataframe(saved[1].style.format({c: "{:.3f}" for c in ("accuracy", "accuracy_std", "log_loss",
                                                                           "log_loss_std")}),
                             hide_index=True, key="clu_clf_table")
                common.download("Classification (CSV)", saved[1].to_csv(index=False).encode("utf-8"),
                                f"{common.dataset_name()}_classification.csv", "text/csv", key="dl_clu_clf")
            else:
                st.caption("kNN and SVM on each selected kernel (thesis App. D: accuracy and log loss).")


if common.start("Clustering"):
    try:
        page()
    except BnfkError as exc:
        st.error(str(exc))
