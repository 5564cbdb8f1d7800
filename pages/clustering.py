"""Clustering: kernels × algorithms (thesis Table 5.1 layout), one clustering in detail (heatmap by cluster,
kernel-PCA map by cluster and by label, contingency table), and kernel kNN / SVM classification (App. D)."""
import json

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.analyses import cluster as C
from bnfk_core.dag import DAG
from bnfk_core.embed import sample_rows
from bnfk_core.errors import BnfkError
from bnfk_ui import common, figures, state

KINDS = {"fisher": "Fisher", "scaled-hamming": "Scaled Hamming", "hamming": "Hamming"}
ALGOS = {"correlation": "Correlation clustering", "spectral": "Spectral clustering"}
TRANSFORMS = {"shift-min": "K − min K (thesis)", "cosine": "cosine-normalised, (1 + cos)/2",
              "rbf": "exp(−d² / median d²), kernel distance"}
NETWORKS = {"current": "Current structure (Structure page)", "qnml": "Hill climbing on qNML, cNML parameters (thesis)"}
CLASSIFIERS = {"knn": "kNN (k = 7, uniform)", "svm": "SVM (C = 1, precomputed kernel)"}
DEFAULTS = {"clu_kernel": "scaled-hamming", "clu_algorithm": "correlation", "clu_network": "current",
            "clu_transform": "shift-min", "clu_restarts": 25, "clu_seed": 0, "clu_rows": 1000, "clu_k": 0,
            "clu_runs": 3, "clu_kernels": list(KINDS), "clu_clf_repeats": 5}
MAX_ROWS = 3000


# ---------------------------------------------------------------------- cached core calls
@st.cache_resource(show_spinner=False, max_entries=8)
def _qnml_model(_feat, fingerprint: str):
    return C.feature_model(_feat, structure="hc", score="qnml", params="cnml", seed=0)[0]


def fisher_model(network: str):
    if network == "qnml":
        feat = state.feature_data()
        return _qnml_model(feat, feat.fingerprint())
    return state.model()


@st.cache_resource(show_spinner=False, max_entries=8)
def _setup(_data, key: tuple, kernel: str, _model) -> C.KernelSetup:
    return C.kernel_setup(_data, kernel, model=_model if kernel == "fisher" else None)


@st.cache_data(show_spinner=False, max_entries=32)
def _clustering(_setup_obj, _data, key: tuple, algorithm: str, k: int, transform: str, restarts: int, seed: int) -> dict:
    return C.run_clustering(_data, _setup_obj.kernel, algorithm, n_clusters=k, setup=_setup_obj, transform=transform,
                            restarts=restarts, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _views(_K: np.ndarray, key: tuple, labels: tuple) -> dict:
    K, lab = _K, np.asarray(labels)
    return {"order": C.cluster_ordering(lab, K), "pca": C.embedding(K, 2)}


def page():
    ss = st.session_state
    for key, v in DEFAULTS.items():
        ss.setdefault(key, list(v) if isinstance(v, list) else v)
    d = state.data()
    has_class = d.class_column is not None
    cls_states = d.states[d.index(d.class_column)] if has_class else ()
    n_labels = C.default_n_clusters(d) if has_class else 0

    st.caption("The kernel is computed on the feature columns only; the class column "
               + (f"**{d.class_column}** " if has_class else "")
               + "is never a feature and serves to score the clusters (ARI, AMI, V-measure)."
               + ("" if has_class else " Without a class column only the kernel-distance silhouette is shown."))

    c1, c2, c3, c4 = st.columns([1.3, 1.3, 1, 1])
    with c1:
        st.radio("Kernel", list(KINDS), format_func=KINDS.get, horizontal=True, **state.bind("clu_kernel"))
        st.selectbox("Network behind the Fisher kernel", list(NETWORKS), format_func=NETWORKS.get,
                     **state.bind("clu_network"), help="The thesis used an exact qNML structure with cNML parameters; "
                     "hill climbing on qNML is the fast stand-in (exact search: `python -m bnfk_core cluster "
                     "--structure exact`).")
    with c2:
        st.radio("Algorithm", list(ALGOS), format_func=ALGOS.get, horizontal=True, **state.bind("clu_algorithm"))
        st.selectbox("Spectral affinity", list(TRANSFORMS), format_func=TRANSFORMS.get, **state.bind("clu_transform"),
                     help="Spectral clustering needs non-negative affinities. Correlation clustering uses the kernel "
                          "itself: adaptive shift for (scaled-)Hamming, none for Fisher, as the thesis.")
    with c3:
        max_rows = max(2, min(d.n_rows, MAX_ROWS))
        st.number_input("Rows (sampled)", min_value=2, max_value=max_rows, step=100,
                        help=f"At most {MAX_ROWS:,} of the {d.n_rows:,} rows, drawn without replacement.",
                        **state.bind("clu_rows", shown=lambda v: int(min(max(v, 2), max_rows))))
        st.number_input("Clusters (0 = number of labels)", min_value=0, max_value=200, step=1,
                        **state.bind("clu_k"))
    with c4:
        st.number_input("Seed", min_value=0, step=1, **state.bind("clu_seed"))
        st.number_input("Local-search restarts", min_value=1, max_value=200, step=5, **state.bind("clu_restarts"))

    n_rows = int(min(max(ss.clu_rows, 2), max_rows))
    rows = sample_rows(d.n_rows, n_rows, int(ss.clu_seed))
    sub = d.subset(rows)
    k = int(ss.clu_k) or (C.default_n_clusters(sub) if has_class else 2)
    if k > len(rows):
        st.error(f"Cannot make {k} clusters from {len(rows)} rows; lower the number of clusters.")
        return
    with st.spinner("Preparing the Fisher network…"):
        m = fisher_model(ss.clu_network)
    base_key = (sub.fingerprint(), m.key() if hasattr(m, "key") else "", ss.clu_network)

    def setup_for(kernel):
        return _setup(sub, base_key, kernel, m)

    tab_one, tab_cmp, tab_clf = st.tabs(["One clustering", "Kernels × algorithms", "Classification"])
    # ------------------------------------------------------------------ one clustering
    with tab_one:
        kernel, algo = ss.clu_kernel, ss.clu_algorithm
        with st.spinner(f"{KINDS[kernel]} kernel and {ALGOS[algo].lower()}…"):
            setup = setup_for(kernel)
            res = _clustering(setup, sub, base_key + (kernel,), algo, k, ss.clu_transform, int(ss.clu_restarts),
                              int(ss.clu_seed))
        labels = np.asarray(res["labels"])
        true = sub.labels() if has_class else np.full(len(rows), -1)
        mc = st.columns(5)
        for col, (name, key) in zip(mc, (("ARI", "ari"), ("AMI", "ami"), ("V-measure", "v_measure"),
                                         ("Silhouette", "silhouette"))):
            v = res[key]
            col.metric(name, "–" if v is None else f"{v:.3f}")
        mc[4].metric("Clusters used", f"{res['n_used']} of {res['n_clusters']}",
                     help=f"clustering {res['cluster_seconds']:.2f} s, kernel {res['kernel_seconds']:.2f} s"
                     + (f"; eq. (5.2) cost {res['cost']:.4g}" if res["cost"] is not None else ""))
        if kernel == "fisher":
            st.caption(f"Fisher kernel of {NETWORKS[ss.clu_network].lower()}: {m.dag.n_arcs} arcs.")
        views = _views(setup.K, base_key + (kernel,), tuple(labels.tolist()))
        names = [f"cluster {c}" for c in range(res["n_used"])]
        fg = figures.gram_figure(setup.K, views["order"], rows, labels, names,
                                 title=f"{KINDS[kernel]} kernel, rows ordered by cluster (strip: cluster)")
        st.plotly_chart(fg, key="clu_heat", config={"displaylogo": False})
        e1, e2 = st.columns(2)
        with e1:
            f1 = figures.embedding_figure(views["pca"], rows, labels, names, title="Kernel PCA — coloured by cluster")
            st.plotly_chart(f1, key="clu_pca_cluster", config={"displaylogo": False})
        with e2:
            f2 = figures.embedding_figure(views["pca"], rows, true, cls_states,
                                          title="Kernel PCA — coloured by label" if has_class else
                                          "Kernel PCA (no class column)")
            st.plotly_chart(f2, key="clu_pca_label", config={"displaylogo": False})
        if has_class:
            st.markdown("**Clusters × labels**")
            tab = C.contingency(true, labels, cls_states)
            st.dataframe(tab, key="clu_contingency")
        assign = d.frame.iloc[rows].assign(row=rows, cluster=labels)[["row", "cluster"] + list(d.variables)]
        base = f"{common.dataset_name()}_{kernel}_{algo}_k{k}_seed{int(ss.clu_seed)}"
        dl = st.columns(4)
        with dl[0]:
            common.download("Assignments (CSV)", assign.to_csv(index=False).encode("utf-8"), f"{base}.csv",
                            "text/csv", key="dl_clu_assign")
        with dl[1]:
            if has_class:
                common.download("Contingency (CSV)", tab.to_csv().encode("utf-8"), f"{base}_contingency.csv",
                                "text/csv", key="dl_clu_cont")
        with dl[2]:
            summary = {k2: v for k2, v in res.items() if k2 != "labels"} | {"rows": rows.tolist()}
            common.download("Result (JSON)", json.dumps(summary, indent=1, default=float).encode("utf-8"),
                            f"{base}.json", "application/json", key="dl_clu_json")
        with dl[3]:
            common.download_figure(fg, f"{base}_heatmap", "Heatmap (HTML)")

    # ------------------------------------------------------------------ comparison
    with tab_cmp:
        if not has_class:
            st.info("The comparison scores clusterings against labels; choose a class column on the Data page.")
        else:
            a1, a2 = st.columns([2, 1])
            with a1:
                st.multiselect("Kernels", list(KINDS), format_func=KINDS.get, **state.bind("clu_kernels"))
            with a2:
                st.number_input("Runs (seeds seed, seed+1, …)", min_value=1, max_value=20, step=1,
                                help="The thesis averages 10 runs.", **state.bind("clu_runs"))
            cmp_key = base_key + (tuple(ss.clu_kernels), int(ss.clu_runs), k, ss.clu_transform,
                                  int(ss.clu_restarts), int(ss.clu_seed))
            if st.button("Run the comparison", key="clu_cmp_run", icon=":material/table_view:",
                         disabled=not ss.clu_kernels):
                bar = st.progress(0.0, text="Starting…")
                tables = []
                for j, kern in enumerate(ss.clu_kernels):
                    t = C.compare(sub, kernels=(kern,), runs=int(ss.clu_runs), seed=int(ss.clu_seed), n_clusters=k,
                                  transform=ss.clu_transform, restarts=int(ss.clu_restarts),
                                  model=m if kern == "fisher" else None,
                                  progress=lambda f, msg, j=j: bar.progress(
                                      min((j + f) / len(ss.clu_kernels), 1.0), text=msg))
                    tables.append(t)
                bar.progress(1.0, text="Done")
                ss.clu_cmp = (cmp_key, pd.concat(tables, ignore_index=True))
            saved = ss.get("clu_cmp")
            if saved and saved[0] == cmp_key:
                table = saved[1]
                flat = pd.DataFrame({metric.upper().replace("V_MEASURE", "V-measure"):
                                     table.set_index("combination")[metric] for metric in ("ari", "ami", "v_measure")}).T
                st.dataframe(flat.style.format("{:.3f}"), key="clu_cmp_table")
                st.caption(f"Mean over {int(ss.clu_runs)} runs on {len(rows):,} rows, {k} clusters "
                           "(CC: correlation, SC: spectral; F: Fisher, H: Hamming, SH: scaled-Hamming) — the layout "
                           "of the thesis's Table 5.1 (ARI) and C.1/C.2 (AMI, V-measure).")
                common.download("Comparison (CSV)", table.to_csv(index=False).encode("utf-8"),
                                f"{common.dataset_name()}_clustering_comparison.csv", "text/csv", key="dl_clu_cmp")
            else:
                st.caption("Runs every selected kernel with both algorithms over several seeds (the kernel is "
                           "computed once per kernel).")

    # ------------------------------------------------------------------ classification
    with tab_clf:
        if not has_class:
            st.info("Classification needs a class column; choose one on the Data page.")
        else:
            b1, b2 = st.columns([2, 1])
            with b1:
                st.caption("Seeded 80/20 splits of the sampled rows; the kernel's model (Fisher CPTs, or the "
                           "scaled-Hamming frequencies) is estimated on each training split only.")
            with b2:
                st.number_input("Splits", min_value=1, max_value=20, step=1, **state.bind("clu_clf_repeats"))
            clf_key = base_key + (int(ss.clu_clf_repeats), int(ss.clu_seed), tuple(ss.clu_kernels))
            if st.button("Run the classifiers", key="clu_clf_run", icon=":material/model_training:",
                         disabled=not ss.clu_kernels):
                bar = st.progress(0.0, text="Starting…")
                rows_out = []
                kernels = list(ss.clu_kernels)
                for j, kern in enumerate(kernels):
                    dag = DAG.from_dict(m.dag.to_dict()) if kern == "fisher" else None
                    out = C.classify_many(sub, kern, tuple(CLASSIFIERS), repeats=int(ss.clu_clf_repeats),
                                          seed=int(ss.clu_seed), dag=dag,
                                          params=(m.fit_info or {}).get("method", "cnml") if kern == "fisher" else "cnml",
                                          progress=lambda f, msg, j=j: bar.progress(
                                              min((j + f) / len(kernels), 1.0), text=msg))
                    for clf, r in out.items():
                        dct = r.to_dict()
                        rows_out.append({"classifier": CLASSIFIERS[clf], "kernel": KINDS[kern],
                                         "accuracy": dct["accuracy"], "accuracy_std": dct["accuracy_std"],
                                         "log_loss": dct["log_loss"], "log_loss_std": dct["log_loss_std"]})
                bar.progress(1.0, text="Done")
                ss.clu_clf = (clf_key, pd.DataFrame(rows_out))
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
