"""Prototypes: k rows that represent the data as the network sees it (paper, Algorithm 1), checked the
paper's way -- re-fit the network on them and score the held-out half against random subsets."""

import json

import numpy as np
import streamlit as st

from bnfk_core.analyses.prototypes import selection as pt
from bnfk_core.network.dag import DAG
from bnfk_core.registry import LEARNERS
from bnfk_core.serving import settings
from bnfk_core.views.figures import prototypes as figs
from bnfk_ui import common, jobs
from bnfk_ui.state import choices, structure, tables

SOURCES, CRITERIA = settings.PROTOTYPE_SOURCES, settings.PROTOTYPE_CRITERIA
MAX_MAP_ROWS = figs.MAP_ROWS


@st.cache_resource(show_spinner=False, max_entries=8)
def _experiment(
    _data, fingerprint: str, source: str, dag_key: str, seed: int, params: str = "smoothed"
) -> pt.SummarizationExperiment:
    return pt.prepare_summarization(
        _data, source, dag=DAG.from_dict(json.loads(dag_key)) if dag_key else None, seed=seed, params=params
    )


@st.cache_data(show_spinner=False, max_entries=64)
def _run(_exp: pt.SummarizationExperiment, exp_key: tuple, k: int, draws: int) -> dict:
    return pt.run_summarization(_exp, k, random_draws=draws, return_details=True)


@st.cache_data(show_spinner=False, max_entries=8)
def _embedding(_exp: pt.SummarizationExperiment, exp_key: tuple) -> np.ndarray:
    return pt.feature_embedding(_exp.mmd.Phi, 2)


def page():
    ss = st.session_state
    choices.ensure("proto_ks")
    d = tables.data()
    if ss.proto_source in LEARNERS and LEARNERS[ss.proto_source].needs_class and not d.class_column:
        st.info("TAN and KDB need a class column (Data page); using the current structure instead.")
        ss.proto_source = "current"
    c1, c2, c3 = st.columns([2.2, 1.6, 1.2])
    c1.selectbox(
        "Structure",
        list(SOURCES),
        format_func=SOURCES.get,
        **choices.bind("proto_source"),
        help="Learned (or taken) on the training half of a seeded 50/50 split; CPTs by the app's "
        "estimator for the current structure, smoothed with pseudo-count one (the paper's) otherwise.",
    )
    c2.radio("Criterion", list(CRITERIA), format_func=CRITERIA.get, **choices.bind("proto_criterion"))
    common.seed_input("Split and sampling seed", "proto_seed", c3)
    current = ss.proto_source == "current"
    exp_key = (
        d.fingerprint(),
        ss.proto_source,
        structure.dag_json() if current else "",
        int(ss.proto_seed),
        structure.recipe().params if current else "smoothed",
    )
    if current:
        common.plain_caption(structure.network_line("The prototypes"))
    n_train = d.n_rows - len(pt.split_half(d.n_rows, 0.5, int(ss.proto_seed))[1])
    k1, k2, k3 = st.columns([1, 1, 2.4], vertical_alignment="bottom")
    k1.number_input(
        "Subset size k",
        min_value=1,
        max_value=n_train - 1,
        step=5,
        **choices.bind("proto_k", shown=lambda v: int(min(max(v, 1), n_train - 1))),
    )
    k2.number_input(
        "Random subsets",
        min_value=10,
        max_value=2000,
        step=50,
        help="The baseline distribution; the best of them (by each criterion) starts its greedy search.",
        **choices.bind("proto_draws"),
    )
    k = int(min(max(ss.proto_k, 1), n_train - 1))
    # heavy work waits for a click; once asked for these data, a changed setting re-runs (cached per setting)
    if not common.asked("Find prototypes", "proto_run", d.fingerprint(), k3):
        st.info(
            f"Finding prototypes splits the {d.n_rows:,} rows in half, learns and fits the network on the "
            f"training half, computes its Fisher features and runs the greedy searches against "
            f"{int(ss.proto_draws)} random subsets of k = {k}: click **Find prototypes** to start. The same "
            "on "
            "the command line: `python -m bnfk_core summarize-benchmark DATA.csv`.",
            icon=":material/info:",
        )
        return
    with st.status("Finding prototypes…", expanded=False) as status:
        status.update(label="Splitting the data, learning the structure and computing Fisher features…")
        exp = _experiment(d, *exp_key)
        status.update(label=f"Greedy search for k = {k} and {int(ss.proto_draws)} random subsets…")
        res = _run(exp, exp_key, k, int(ss.proto_draws))
        status.update(label=f"Prototypes: k = {k} of {n_train:,} training rows", state="complete")
    crit = ss.proto_criterion
    st.caption(
        f"{exp.model.dag.n_arcs} arcs over {exp.model.n_vars} variables · training half {n_train:,} rows, "
        f"test half {len(exp.test_rows):,} rows · Fisher features {exp.mmd.Phi.shape[1]:,} columns"
        + ("" if exp.class_column else " · NLL only (no class in the structure)")
    )
    m, rnd = st.columns(3), res["random"]
    for col, label, key, f, df in (
        (m[0], "MMD of the subset", "mmd", ".4g", "+.3g"),
        (m[1], "Held-out NLL", "nll", ".4f", "+.4f"),
    ):
        v = pt.criterion_value(res, crit, key)
        col.metric(
            label, f"{v:{f}}", **common.delta(v - rnd[key + "_mean"], df, " vs random mean", "inverse")
        )
    _spread(m[2], "Random NLL", rnd["nll_mean"], rnd["nll_std"], ".4f")
    m = st.columns(3)
    m[0].metric(
        "All training rows",
        f"{res['full']['nll']:.4f}",
        help="Held-out NLL of the network fitted on all training rows.",
    )
    if crit != "random":
        r, secs = res[crit], res["seconds"][f"greedy_{crit}"]
        m[1].metric(
            "Greedy swaps",
            f"{r['swaps']:,}",
            help=f"{r['passes']:.1f} passes; {secs:.2f} s"
            + ("" if r["converged"] else "; stopped at the pass limit"),
        )
    if exp.class_column:
        e = iter(st.columns(4))
        for name, key in (("Error rate", "error"), ("Log loss", "log_loss")):
            next(e).metric(f"{name} of the subset", f"{pt.criterion_value(res, crit, key):.3f}")
            _spread(next(e), f"Random {key.replace('_', ' ')}", rnd[key + "_mean"], rnd[key + "_std"], ".3f")
    tabs = st.tabs(["Selected rows", "Against random subsets", "Curve over k", "Kernel-PCA map"])
    with tabs[0]:
        table = pt.selected_table(d, pt.selected_rows(res, crit))
        st.dataframe(table, hide_index=True, key="proto_table")
        common.download(
            "Selected rows (CSV)",
            table.to_csv(index=False).encode("utf-8"),
            f"{common.dataset_name()}_prototypes_{crit}_k{k}.csv",
            "text/csv",
            key="dl_proto_rows",
        )
        common.download(
            "Result (JSON)",
            json.dumps(pt.result_summary(res, crit), indent=1).encode("utf-8"),
            f"{common.dataset_name()}_prototypes_k{k}.json",
            "application/json",
            key="dl_proto_json",
        )
    with tabs[1]:
        st.plotly_chart(figs.distribution_figure(res, crit), key="proto_dist", config={"displaylogo": False})
        st.caption(
            f"{pt.share_below(res, crit, 'nll'):.0%} of the random subsets give a lower held-out NLL than "
            f"the {CRITERIA[crit].lower()}. The greedy searches start from the best random subset by their "
            "own criterion."
        )
    with tabs[2]:
        curve_tab(exp, exp_key)
    with tabs[3]:
        with st.spinner("Kernel PCA of the Fisher features…"):
            Y = _embedding(exp, exp_key)
        labels, cls_states = pt.row_labels(d, exp.train_rows)
        js, others = pt.map_sample(exp.train_rows, pt.selected_rows(res, crit), MAX_MAP_ROWS)
        title = figs.map_title(CRITERIA[crit].lower())
        st.plotly_chart(
            figs.map_figure(Y, exp.train_rows, labels, cls_states, js, others, title),
            key="proto_map",
            config={"displaylogo": False},
        )
        st.caption(
            "Kernel PCA without a Gram matrix: truncated SVD of the centred Fisher features "
            + (f"(a sample of {MAX_MAP_ROWS:,} background rows)." if n_train > MAX_MAP_ROWS else ".")
        )


def _spread(col, label: str, mean: float, sd: float, fmt: str) -> None:
    """A metric of the random subsets: the mean as the value, the standard deviation on the line below (a
    value "mean ± sd" is cut on a projector)."""
    col.metric(
        f"{label} (mean)", f"{mean:{fmt}}", delta=f"± {sd:{fmt}} sd", delta_color="off", delta_arrow="off"
    )


def curve_tab(exp: pt.SummarizationExperiment, exp_key: tuple):
    ss, n_train = st.session_state, exp.train.n_rows
    ks_text = st.text_input(
        "Subset sizes (comma-separated)",
        key="w_proto_ks",
        value=ss.proto_ks or ",".join(map(str, pt.default_subset_sizes(n_train))),
    )
    draws = st.number_input(
        "Random subsets per k", min_value=10, max_value=2000, value=100, step=50, key="w_proto_curve_draws"
    )
    if st.button("Run the curve", key="proto_curve_run", icon=":material/show_chart:"):
        ks = []
        with common.shown_errors():
            ks = pt.parse_subset_sizes(ks_text, n_train)
        if ks:
            bar = st.progress(0.0, text="Starting…")
            with jobs.heavy("the curve"):
                ss.proto_ks, ss.proto_curve = (
                    ks_text,
                    (
                        exp_key,
                        pt.summarization_curve(
                            exp,
                            ks,
                            run_one=lambda kk: _run(exp, exp_key, kk, int(draws)),
                            progress=jobs.progress(bar),
                        ),
                    ),
                )
    curve = ss.get("proto_curve", (None, []))
    if curve[0] != exp_key:
        st.caption(
            "Runs the experiment for each k (cached): held-out metrics of the greedy subsets against "
            "random subsets of the same size, as in the paper's Fig. 1 (and Figs. 2–3 for TAN/KDB)."
        )
        return
    metrics = ["nll"] + (["error", "log_loss"] if exp.class_column else [])
    for col, metric in zip(st.columns(len(metrics)), metrics):
        col.plotly_chart(
            figs.curve_figure(curve[1], metric), key=f"proto_curve_{metric}", config={"displaylogo": False}
        )
    flat = pt.curve_table(curve[1], metrics)
    st.dataframe(flat, hide_index=True, key="proto_curve_table")
    common.download(
        "Curve (CSV)",
        flat.to_csv(index=False).encode("utf-8"),
        f"{common.dataset_name()}_prototype_curve.csv",
        "text/csv",
        key="dl_proto_curve",
    )


if common.start("Prototypes"):
    page()
