"""Imputation: the thesis's benchmark (hide cells at random, score BN / Mode / wKNN / ...) and
filling the loaded data's missing cells with the current model."""
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from bnfk_core.analyses import impute as imp
from bnfk_ui import common, state

LABELS = {"bn": "BN", "mode": "Mode", "wknn": "wKNN", "fisher-knn": "Fisher-kNN", "bn-mode": "BN-Mode",
          "bn-wknn": "BN-wKNN"}
SUMMARIZATION_STRUCTURES = {"tree": "Chow–Liu tree (fast)", "hc": "Hill climbing", "exact": "Exact optimum (≤ 20 variables, slow)",
              "auto": "As the thesis: exact up to 20 variables, else hill climbing"}
RATIOS = [0.1, 0.2, 0.3, 0.4, 0.5]   # the thesis grid: pick all five of each for its 25 settings
DEFAULT_RATIOS = [0.1, 0.3, 0.5]     # 9 settings x 1 repeat: a default run of a few seconds
MAX_SHOWN_ROWS = 300


def heatmaps(res: "imp.BenchmarkResult", metric: str) -> go.Figure:
    """One heatmap per method over (test ratio x missing ratio), shared colour scale (thesis Figs 4.1-4.2)."""
    mats = [res.matrix(m, metric) for m in res.methods]
    finite = np.concatenate([M[np.isfinite(M)] for M in mats]) if mats else np.array([0.0])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    fig = make_subplots(rows=1, cols=len(mats), subplot_titles=[LABELS[m] for m in res.methods],
                        horizontal_spacing=0.04, shared_yaxes=True)
    for k, (m, M) in enumerate(zip(res.methods, mats)):
        fig.add_trace(go.Heatmap(
            z=M, x=[f"{r:g}" for r in res.missing_ratios], y=[f"{r:g}" for r in res.test_ratios],
            zmin=lo, zmax=hi, coloraxis="coloraxis", text=np.round(M, 3), texttemplate="%{text}",
            hovertemplate=f"{LABELS[m]}<br>test ratio %{{y}}<br>missing ratio %{{x}}<br>{metric} %{{z:.3f}}<extra></extra>"),
            row=1, col=k + 1)
        fig.update_xaxes(title_text="missing ratio", type="category", row=1, col=k + 1)
    fig.update_yaxes(title_text="test ratio", type="category", row=1, col=1)
    scale = "Viridis" if metric == "accuracy" else "Viridis_r"
    fig.update_layout(coloraxis=dict(colorscale=scale, cmin=lo, cmax=hi, colorbar=dict(title=metric.replace("_", "-"))),
                      height=330, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def summary_table(res: "imp.BenchmarkResult") -> pd.DataFrame:
    s = res.summary()
    return pd.DataFrame([{"method": LABELS[m], "accuracy": s[m]["accuracy"], "accuracy sd": s[m]["accuracy_std"],
                          "cross-entropy": s[m]["cross_entropy"], "cross-entropy sd": s[m]["cross_entropy_std"],
                          "runs": s[m]["runs"], "seconds": s[m]["seconds"]} for m in res.methods])


@st.cache_resource(show_spinner=False, max_entries=8)
def _impute_current(_model, model_key: str, _data, fingerprint: str) -> "imp.ImputedData":
    return imp.impute_with_model(_model, _data)


def cell_figure(res: "imp.ImputedData", rows: np.ndarray) -> go.Figure:
    """Rows x model columns; imputed cells coloured by the probability of the filled value, hover = distribution."""
    d = res.data
    cols = list(d.variables)
    z = np.full((len(rows), len(cols)), np.nan)
    hover = np.empty((len(rows), len(cols)), dtype=object)
    pos = {r: a for a, r in enumerate(rows)}
    for i, (rr, P) in res.imputation.cells.items():
        keep = np.isin(rr, rows)
        for r, p in zip(rr[keep], P[keep]):
            a = pos[int(r)]
            z[a, i] = p.max()
            top = np.argsort(-p)[:6]
            hover[a, i] = "<br>".join(f"{d.states[i][k]}: {p[k]:.3f}" for k in top)
    text = d.frame.iloc[rows][cols].to_numpy(dtype=object)
    obs = ~np.isfinite(z)
    hover[obs] = "observed"
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=[str(r) for r in rows], text=text, texttemplate="%{text}", customdata=hover,
        colorscale="Oranges_r", zmin=0, zmax=1, colorbar=dict(title="P(filled value)"),
        hovertemplate="row %{y} · %{x}: <b>%{text}</b><br>%{customdata}<extra></extra>"))
    fig.update_layout(height=min(120 + 22 * len(rows), 900), margin=dict(l=10, r=10, t=10, b=10),
                      yaxis=dict(autorange="reversed", type="category", title="row"),
                      xaxis=dict(side="top", tickangle=-30))
    return fig


if common.start("Imputation"):
    ss = st.session_state
    feat = state.feature_data()
    t_bench, t_mine = st.tabs(["Benchmark", "Impute my data"])

    with t_bench:
        st.caption("The thesis's experiment (ch. 4): a random test part of the rows gets a fraction of its cells hidden "
                   "completely at random; every method predicts a distribution for each hidden cell, scored by the "
                   "accuracy of its most probable value and the cross-entropy (capped at −log 10⁻⁵). The class column "
                   "is never imputed. Averages give every setting the same weight; the spread is over all runs.")
        c1, c2, c3 = st.columns([2, 2, 1.3])
        with c1:
            methods = st.multiselect("Methods", list(imp.METHODS), default=["bn", "mode", "wknn"],
                                     format_func=LABELS.get, key="imp_methods")
            structure = st.selectbox("Structure of the BN methods (qNML score, cNML parameters)", list(SUMMARIZATION_STRUCTURES),
                                     format_func=SUMMARIZATION_STRUCTURES.get, key="imp_structure")
        with c2:
            trs = st.multiselect("Test ratios", RATIOS, default=DEFAULT_RATIOS, key="imp_test",
                                 help="Fraction of the rows that form the test part (thesis: 0.1–0.5).")
            mrs = st.multiselect("Missing ratios", RATIOS, default=DEFAULT_RATIOS, key="imp_missing",
                                 help="Fraction of the test part's cells hidden (thesis: 0.1–0.5).")
        with c3:
            repeats = st.number_input("Repeats per setting", 1, 20, 1, key="imp_repeats")
            seed = st.number_input("Seed", 0, 10**6, 0, key="imp_seed")
        n_runs = len(trs) * len(mrs) * int(repeats)
        st.caption(f"{feat.n_rows:,} rows × {feat.n_vars} variables · {n_runs} runs per method.")
        if st.button("Run the benchmark", type="primary", disabled=not (methods and trs and mrs), key="imp_run"):
            bar = st.progress(0.0, text="hiding cells")
            with common.shown_errors():
                res = imp.benchmark(feat, methods, test_ratios=sorted(trs), missing_ratios=sorted(mrs),
                                    repeats=int(repeats), seed=int(seed), structure=structure, score="qnml",
                                    params="cnml", progress=lambda f, msg: bar.progress(min(max(f, 0.0), 1.0), text=msg))
                ss.imp_result = (feat.fingerprint(), res)
            bar.empty()
        stored = ss.get("imp_result")
        if stored and stored[0] == feat.fingerprint():
            res = stored[1]
            st.subheader("Macro averages")
            st.dataframe(summary_table(res), hide_index=True,
                         column_config={c: st.column_config.NumberColumn(format="%.3f") for c in
                                        ("accuracy", "accuracy sd", "cross-entropy", "cross-entropy sd")}
                         | {"seconds": st.column_config.NumberColumn(format="%.1f")})
            st.caption(f"{res.info['structure']} structures · {res.repeats} repeat(s) per setting · "
                       f"{res.seconds:.1f} s in all.")
            metric = st.radio("Heatmap metric", ["accuracy", "cross_entropy"], horizontal=True,
                              format_func=lambda m: m.replace("_", "-"), key="imp_metric")
            fig = heatmaps(res, metric)
            st.plotly_chart(fig, key="imp_heatmaps", config={"displaylogo": False})
            base = f"{common.dataset_name()}_imputation"
            d1, d2, d3 = st.columns(3)
            with d1:
                common.download("Results (JSON)", json.dumps(res.to_dict(), indent=1, default=float).encode("utf-8"),
                                f"{base}.json", "application/json")
            with d2:
                common.download("Every run (CSV)", res.runs.to_csv(index=False).encode("utf-8"), f"{base}_runs.csv",
                                "text/csv")
            with d3:
                common.download_figure(fig, f"{base}_{metric}")

    with t_mine:
        d = state.data()
        m = state.model()
        st.caption(f"Every missing cell of the feature columns is filled with its most probable value under the "
                   f"current network ({state.structure_label()}, {m.dag.n_arcs} arcs): the exact posterior given the "
                   "row's observed values.")
        n_missing = int((feat.codes < 0).sum())
        if n_missing == 0:
            msg = "The loaded feature columns have no missing cells."
            if ss.missing_policy == "category":
                msg += (" Missing tokens are read as the category '?' under the current loading options; choose "
                        "'are missing values' on the Data page to impute them.")
            st.info(msg)
        else:
            with common.shown_errors():
                with st.spinner("Computing the posteriors…"):
                    res = _impute_current(m, m.key(), d, d.fingerprint())
                rows = np.flatnonzero(res.imputed.any(axis=1))
                c1, c2, c3 = st.columns(3)
                c1.metric("Imputed cells", f"{int(res.imputed.sum()):,}")
                c2.metric("Rows with imputed cells", f"{len(rows):,}")
                pmax = res.probabilities.groupby(["row", "column"]).probability.max()
                c3.metric("Mean probability of the filled value", f"{pmax.mean():.3f}")
                if len(rows) > MAX_SHOWN_ROWS:
                    st.caption(f"Showing the first {MAX_SHOWN_ROWS} of {len(rows):,} rows with imputed cells.")
                st.plotly_chart(cell_figure(res, rows[:MAX_SHOWN_ROWS]), key="imp_cells",
                                config={"displaylogo": False})
                st.caption("Coloured cells were imputed (darker = less certain); hover for the distribution.")
                base = f"{common.dataset_name()}_imputed"
                d1, d2 = st.columns(2)
                with d1:
                    common.download("Completed data (CSV)", lambda: res.frame.to_csv(index=False).encode("utf-8"),
                                    f"{base}.csv", "text/csv")
                with d2:
                    common.download("Probabilities (CSV)",
                                    lambda: res.probabilities.to_csv(index=False).encode("utf-8"),
                                    f"{base}_probabilities.csv", "text/csv")
