"""Parts of the Prototypes page: the experiment and its runs kept per setting, the metrics of a run against
the random subsets, and the result tabs (the selected rows, the random subsets, the curve over k, the
kernel-PCA map)."""

import json

import numpy as np
import streamlit as st

from bnfk_core import registry
from bnfk_core.analyses.prototypes import selection as pt
from bnfk_core.network.dag import DAG
from bnfk_core.serving import settings
from bnfk_core.views.figures import prototypes as figs

from .. import common, jobs

__all__ = [
    "experiment",
    "summarization",
    "embedding",
    "result_metrics",
    "selected_rows_tab",
    "random_subsets_tab",
    "curve_tab",
    "map_tab",
]

CRITERIA = settings.PROTOTYPE_CRITERIA
MAX_MAP_ROWS = figs.MAP_ROWS


@st.cache_resource(show_spinner=False, max_entries=8)
def experiment(
    _data, fingerprint: str, source: str, dag_key: str, seed: int, params: str = "smoothed"
) -> pt.SummarizationExperiment:
    """The split, the network and its Fisher features (:func:`~bnfk_core.analyses.prototypes.selection.
    prepare_summarization`), kept per data fingerprint, structure source, DAG, seed and estimator."""
    return pt.prepare_summarization(
        _data, source, dag=DAG.from_dict(json.loads(dag_key)) if dag_key else None, seed=seed, params=params
    )


@st.cache_data(show_spinner=False, max_entries=64)
def summarization(_exp: pt.SummarizationExperiment, exp_key: tuple, k: int, draws: int) -> dict:
    """The greedy searches for ``k`` rows against ``draws`` random subsets, kept per experiment, k and
    draws."""
    return pt.run_summarization(_exp, k, random_draws=draws, return_details=True)


@st.cache_data(show_spinner=False, max_entries=8)
def embedding(_exp: pt.SummarizationExperiment, exp_key: tuple) -> np.ndarray:
    """The training rows' kernel-PCA coordinates (two), kept per experiment."""
    return pt.feature_embedding(_exp.mmd.Phi, 2)


def result_metrics(exp: pt.SummarizationExperiment, res: dict, crit: str) -> None:
    """The subset of the criterion ``crit`` against the random subsets: MMD and held-out NLL (and, with a
    class in the structure, error rate and log loss), the full training set's NLL and the greedy search's
    swaps."""
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
    if registry.CRITERIA[crit].greedy:
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


def _spread(col, label: str, mean: float, sd: float, fmt: str) -> None:
    """A metric of the random subsets: the mean as the value, the standard deviation on the line below (a
    value "mean ± sd" is cut on a projector)."""
    col.metric(
        f"{label} (mean)", f"{mean:{fmt}}", delta=f"± {sd:{fmt}} sd", delta_color="off", delta_arrow="off"
    )


def selected_rows_tab(d, res: dict, crit: str, k: int) -> None:
    """The rows the criterion ``crit`` selected, and the downloads (the rows, the result)."""
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


def random_subsets_tab(res: dict, crit: str) -> None:
    """The held-out metrics of the random subsets with the selected subset's, and its share below them."""
    st.plotly_chart(figs.distribution_figure(res, crit), key="proto_dist", config={"displaylogo": False})
    st.caption(
        f"{pt.share_below(res, crit, 'nll'):.0%} of the random subsets give a lower held-out NLL than "
        f"the {CRITERIA[crit].lower()}. The greedy searches start from the best random subset by their "
        "own criterion."
    )


def map_tab(d, exp: pt.SummarizationExperiment, exp_key: tuple, res: dict, crit: str) -> None:
    """The training rows on the kernel-PCA map of their Fisher features, the selected ones marked."""
    n_train = len(exp.train_rows)
    with st.spinner("Kernel PCA of the Fisher features…"):
        Y = embedding(exp, exp_key)
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


def curve_tab(exp: pt.SummarizationExperiment, exp_key: tuple):
    """The experiment for each k of a list: held-out metrics of the greedy subsets against random ones."""
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
                            run_one=lambda kk: summarization(exp, exp_key, kk, int(draws)),
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
