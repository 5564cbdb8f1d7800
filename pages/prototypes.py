"""Prototypes: k rows that represent the data as the network sees it (paper, Algorithm 1), checked the
paper's way -- re-fit the network on them and score the held-out half against random subsets."""
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from bnfk_core.analyses import prototypes as pt
from bnfk_core.dag import DAG
from bnfk_core.errors import BnfkError
from bnfk_ui import common, figures, state

SOURCES = {"current": "Current structure (Structure page; the class is not a feature)",
           "hc": "Hill climbing, BIC, class as a feature (paper Fig. 1)",
           "tan": "TAN (paper Fig. 2)", "kdb": "KDB, K = 3 (paper Fig. 3)"}
CRITERIA = {"mmd": "Greedy MMD (Fisher kernel)", "chi2": "Greedy χ² heuristic", "random": "Random subset"}
COLORS = {"mmd": "#d62728", "chi2": "#2ca02c", "random": "#7f7f7f", "full": "#1f77b4"}
METRICS = {"nll": "held-out NLL per row", "error": "misclassification rate", "log_loss": "log loss per row"}
DEFAULTS = {"proto_source": "current", "proto_criterion": "mmd", "proto_k": 20, "proto_draws": 200,
            "proto_seed": 0, "proto_ks": ""}
MAX_MAP_ROWS = 2000


@st.cache_resource(show_spinner=False, max_entries=8)
def _experiment(_data, fingerprint: str, source: str, dag_key: str, seed: int) -> pt.SummarizationExperiment:
    dag = DAG.from_dict(json.loads(dag_key)) if source == "current" else None
    return pt.prepare_summarization(_data, "hc" if source == "current" else source, dag=dag, seed=seed)


@st.cache_data(show_spinner=False, max_entries=64)
def _run(_exp: pt.SummarizationExperiment, exp_key: tuple, k: int, draws: int) -> dict:
    return pt.run_summarization(_exp, k, random_draws=draws, return_details=True)


@st.cache_data(show_spinner=False, max_entries=8)
def _embedding(_exp: pt.SummarizationExperiment, exp_key: tuple) -> np.ndarray:
    return pt.feature_embedding(_exp.mmd.Phi, 2)


def selected_rows(res: dict, criterion: str) -> list:
    return res["details"]["random_rows" if criterion == "random" else f"{criterion}_rows"]


def value_of(res: dict, criterion: str, metric: str) -> float:
    if criterion == "random":
        return res["details"][f"random_{metric}"][0]
    return res[criterion][metric]


def distribution_figure(res: dict, criterion: str) -> go.Figure:
    """Random subsets' MMD and held-out NLL, with the greedy subsets (and the full data) marked."""
    d = res["details"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("MMD to the training half (eq. 10)", METRICS["nll"]))
    for col, (vals, metric) in enumerate(((d["random_mmd"], "mmd"), (d["random_nll"], "nll")), start=1):
        fig.add_trace(go.Histogram(x=vals, name=f"{len(vals)} random subsets", marker_color=COLORS["random"],
                                   opacity=0.6, showlegend=col == 1), row=1, col=col)
        marks = [(c, value_of(res, c, metric)) for c in ("mmd", "chi2")]
        if metric == "nll":
            marks.append(("full", res["full"]["nll"]))
        for name, x in marks:
            label = {"mmd": "greedy MMD", "chi2": "greedy χ²", "full": "all training rows"}[name]
            width = 4 if name == criterion else 2
            fig.add_vline(x=x, line=dict(color=COLORS[name], width=width, dash="solid" if name != "full" else "dot"),
                          row=1, col=col)
            fig.add_trace(go.Scatter(x=[x], y=[0], mode="markers", marker=dict(color=COLORS[name], size=10,
                                     symbol="triangle-up"), name=label, showlegend=col == 2 or name != "full",
                                     legendgroup=name, hovertemplate=f"{label}: %{{x:.4g}}<extra></extra>"),
                          row=1, col=col)
        if criterion == "random":
            x = value_of(res, "random", metric)
            fig.add_vline(x=x, line=dict(color="black", width=3, dash="dash"), row=1, col=col)
    fig.update_yaxes(title_text="subsets", row=1, col=1)
    fig.update_layout(barmode="overlay", height=380, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=-0.3))
    return fig


def curve_figure(curve: list, metric: str) -> go.Figure:
    """Paper Fig. 1 style: the metric against k for greedy MMD, greedy χ², random (mean ± sd) and all rows."""
    ks = [r["k"] for r in curve]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ks, y=[r["random"][f"{metric}_mean"] for r in curve], name="random mean ± sd",
                             mode="lines+markers", line=dict(color=COLORS["random"]),
                             error_y=dict(type="data", array=[r["random"][f"{metric}_std"] for r in curve])))
    for c, label in (("mmd", "greedy MMD"), ("chi2", "greedy χ²")):
        fig.add_trace(go.Scatter(x=ks, y=[r[c][metric] for r in curve], name=label, mode="lines+markers",
                                 line=dict(color=COLORS[c])))
    fig.add_trace(go.Scatter(x=ks, y=[curve[0]["full"][metric]] * len(ks), name="all training rows",
                             mode="lines", line=dict(color=COLORS["full"], dash="dot")))
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=10, b=10), xaxis_title="subset size k",
                      yaxis_title=METRICS[metric], legend=dict(orientation="h", yanchor="bottom", y=1.0))
    return fig


def map_figure(Y, train_rows, labels, cls_states, chosen, title) -> go.Figure:
    """Kernel-PCA map of (a sample of) the training half, prototypes ringed."""
    pos = {int(r): j for j, r in enumerate(train_rows)}
    js = np.array([pos[int(r)] for r in chosen])
    rng = np.random.default_rng(0)
    others = np.setdiff1d(np.arange(len(train_rows)), js)
    if len(others) > MAX_MAP_ROWS:
        others = np.sort(rng.choice(others, MAX_MAP_ROWS, replace=False))
    fig = figures.embedding_figure(Y[others], train_rows[others], labels[others], cls_states, title=title)
    fig.update_traces(marker=dict(size=5, opacity=0.35))
    fig.add_trace(go.Scatter(x=Y[js, 0], y=Y[js, 1], mode="markers", name=f"{len(js)} prototypes",
                             customdata=train_rows[js], hovertemplate="prototype row #%{customdata}<extra></extra>",
                             marker=dict(size=11, color="rgba(0,0,0,0)", line=dict(color="black", width=2))))
    return fig


def default_ks(n_train: int) -> list:
    hi = max(2, min(1000, n_train // 2))
    return sorted({max(1, int(round(hi * f))) for f in (0.2, 0.4, 0.6, 0.8, 1.0)})


def page():
    ss = st.session_state
    for key, v in DEFAULTS.items():
        ss.setdefault(key, v)
    d = state.data()
    if ss.proto_source in ("tan", "kdb") and not d.class_column:
        st.info("TAN and KDB need a class column (Data page); using the current structure instead.")
        ss.proto_source = "current"

    c1, c2, c3 = st.columns([2.2, 1.6, 1.2])
    with c1:
        st.selectbox("Structure", list(SOURCES), format_func=SOURCES.get, **state.bind("proto_source"),
                     help="Learned (or taken) on the training half of a seeded 50/50 split; parameters are "
                          "smoothed with pseudo-count one.")
    with c2:
        st.radio("Criterion", list(CRITERIA), format_func=CRITERIA.get, **state.bind("proto_criterion"))
    with c3:
        st.number_input("Split and sampling seed", min_value=0, step=1, **state.bind("proto_seed"))

    source = ss.proto_source
    with st.spinner("Splitting the data, learning the structure and computing Fisher features…"):
        exp = _experiment(d, d.fingerprint(), source, state.dag_json() if source == "current" else "",
                          int(ss.proto_seed))
    n_train = exp.train.n_rows
    exp_key = (d.fingerprint(), source, state.dag_json() if source == "current" else "", int(ss.proto_seed))
    k1, k2, _ = st.columns([1, 1, 2.4])
    with k1:
        st.number_input("Subset size k", min_value=1, max_value=n_train - 1, step=5,
                        **state.bind("proto_k", shown=lambda v: int(min(max(v, 1), n_train - 1))))
    with k2:
        st.number_input("Random subsets", min_value=10, max_value=2000, step=50,
                        help="The baseline distribution; the best of them (by each criterion) starts its greedy search.",
                        **state.bind("proto_draws"))
    k = int(min(max(ss.proto_k, 1), n_train - 1))
    with st.spinner(f"Greedy search for k = {k} and {int(ss.proto_draws)} random subsets…"):
        res = _run(exp, exp_key, k, int(ss.proto_draws))

    crit = ss.proto_criterion
    rows = selected_rows(res, crit)
    st.caption(f"{exp.model.dag.n_arcs} arcs over {exp.model.n_vars} variables · training half {n_train:,} rows, "
               f"test half {len(exp.test_rows):,} rows · Fisher features {exp.mmd.Phi.shape[1]:,} columns"
               + ("" if exp.class_column else " · NLL only (no class in the structure)"))
    m = st.columns(5)
    rnd = res["random"]
    m[0].metric("MMD of the subset", f"{value_of(res, crit, 'mmd'):.4g}",
                delta=f"{value_of(res, crit, 'mmd') - rnd['mmd_mean']:+.3g} vs random mean", delta_color="inverse")
    m[1].metric("Held-out NLL", f"{value_of(res, crit, 'nll'):.4f}",
                delta=f"{value_of(res, crit, 'nll') - rnd['nll_mean']:+.4f} vs random mean", delta_color="inverse")
    m[2].metric("Random NLL", f"{rnd['nll_mean']:.4f} ± {rnd['nll_std']:.4f}")
    m[3].metric("All training rows", f"{res['full']['nll']:.4f}")
    if crit != "random":
        r = res[crit]
        m[4].metric("Greedy swaps", f"{r['swaps']:,}", help=f"{r['passes']:.1f} passes; {res['seconds'][f'greedy_{crit}']:.2f} s"
                    + ("" if r["converged"] else "; stopped at the pass limit"))
    if exp.class_column:
        e = st.columns(4)
        e[0].metric("Error rate of the subset", f"{value_of(res, crit, 'error'):.3f}")
        e[1].metric("Random error", f"{rnd['error_mean']:.3f} ± {rnd['error_std']:.3f}")
        e[2].metric("Log loss of the subset", f"{value_of(res, crit, 'log_loss'):.3f}")
        e[3].metric("Random log loss", f"{rnd['log_loss_mean']:.3f} ± {rnd['log_loss_std']:.3f}")

    tab_rows, tab_dist, tab_curve, tab_map = st.tabs(["Selected rows", "Against random subsets",
                                                       "Curve over k", "Kernel-PCA map"])
    table = d.frame.iloc[rows].assign(row=rows)[["row"] + list(d.variables)]
    with tab_rows:
        st.dataframe(table, hide_index=True, key="proto_table")
        common.download("Selected rows (CSV)", table.to_csv(index=False).encode("utf-8"),
                        f"{common.dataset_name()}_prototypes_{crit}_k{k}.csv", "text/csv", key="dl_proto_rows")
        summary = {key: res[key] for key in ("k", "structure", "full", "random", "mmd", "chi2", "seconds") if key in res}
        summary["selected"] = {"criterion": crit, "rows": rows}
        common.download("Result (JSON)", json.dumps(summary, indent=1).encode("utf-8"),
                        f"{common.dataset_name()}_prototypes_k{k}.json", "application/json", key="dl_proto_json")
    with tab_dist:
        fd = distribution_figure(res, crit)
        st.plotly_chart(fd, key="proto_dist", config={"displaylogo": False})
        share = float(np.mean(np.array(res["details"]["random_nll"]) < value_of(res, crit, "nll")))
        st.caption(f"{share:.0%} of the random subsets give a lower held-out NLL than the {CRITERIA[crit].lower()}. "
                   "The greedy searches start from the best random subset by their own criterion.")
    with tab_curve:
        ks_text = st.text_input("Subset sizes (comma-separated)", value=ss.proto_ks or
                                ",".join(str(x) for x in default_ks(n_train)), key="w_proto_ks")
        draws = st.number_input("Random subsets per k", min_value=10, max_value=2000, value=100, step=50,
                                key="w_proto_curve_draws")
        if st.button("Run the curve", key="proto_curve_run", icon=":material/show_chart:"):
            try:
                ks = sorted({int(x) for x in ks_text.replace(";", ",").split(",") if x.strip()})
            except ValueError:
                st.error(f"Subset sizes must be whole numbers separated by commas, got '{ks_text}'.")
                ks = []
            bad = [x for x in ks if not 1 <= x < n_train]
            if bad:
                st.error(f"Subset size {bad[0]} is outside 1..{n_train - 1} (the training half has {n_train} rows).")
            elif ks:
                ss.proto_ks = ks_text
                bar = st.progress(0.0, text="Starting…")
                curve = []
                for j, kk in enumerate(ks):
                    bar.progress(j / len(ks), text=f"k = {kk} ({j + 1} of {len(ks)})")
                    curve.append(_run(exp, exp_key, kk, int(draws)))
                bar.progress(1.0, text="Done")
                ss.proto_curve = (exp_key, curve)
        saved = ss.get("proto_curve")
        if saved and saved[0] == exp_key:
            curve = saved[1]
            metrics = ["nll"] + (["error", "log_loss"] if exp.class_column else [])
            cols = st.columns(len(metrics))
            for col, metric in zip(cols, metrics):
                with col:
                    st.plotly_chart(curve_figure(curve, metric), key=f"proto_curve_{metric}",
                                    config={"displaylogo": False})
            flat = pd.DataFrame([{"k": r["k"], **{f"full_{mm}": r["full"][mm] for mm in metrics},
                                  **{f"random_{mm}_mean": r["random"][f"{mm}_mean"] for mm in metrics},
                                  **{f"random_{mm}_std": r["random"][f"{mm}_std"] for mm in metrics},
                                  **{f"{c}_{mm}": r[c][mm] for c in ("mmd", "chi2") for mm in metrics + ["mmd"]},
                                  "seconds_greedy_mmd": r["seconds"]["greedy_mmd"]} for r in curve])
            st.dataframe(flat, hide_index=True, key="proto_curve_table")
            common.download("Curve (CSV)", flat.to_csv(index=False).encode("utf-8"),
                            f"{common.dataset_name()}_prototype_curve.csv", "text/csv", key="dl_proto_curve")
        else:
            st.caption("Runs the experiment for each k (cached): held-out metrics of the greedy subsets against "
                       "random subsets of the same size, as in the paper's Fig. 1 (and Figs. 2–3 for TAN/KDB).")
    with tab_map:
        with st.spinner("Kernel PCA of the Fisher features…"):
            Y = _embedding(exp, exp_key)
        ci = d.index(d.class_column) if d.class_column else None
        labels = d.codes[exp.train_rows, ci] if ci is not None else np.full(n_train, -1)
        cls_states = d.states[ci] if ci is not None else ()
        fm = map_figure(Y, exp.train_rows, labels, cls_states, rows,
                        f"Training half on the top two kernel principal axes — {CRITERIA[crit].lower()} ringed")
        st.plotly_chart(fm, key="proto_map", config={"displaylogo": False})
        st.caption("Kernel PCA without a Gram matrix: truncated SVD of the centred Fisher features "
                   + (f"(a sample of {MAX_MAP_ROWS:,} background rows)." if n_train > MAX_MAP_ROWS else "."))


if common.start("Prototypes"):
    try:
        page()
    except BnfkError as exc:
        st.error(str(exc))
