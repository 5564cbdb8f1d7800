"""The Imputation page's parts: the benchmark's results (macro averages, heatmaps, downloads), and "Impute my
data" -- the imputers offered (the CLI's default first), the missing cells filled, shown and downloaded, and
the panel for a large file (the completed file of all its rows, imputed in blocks)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import streamlit as st

from bnfk_core.analyses.impute import completion
from bnfk_core.analyses.impute import methods as impute_methods
from bnfk_core.data.reading import file_layout
from bnfk_core.errors import BnfkError
from bnfk_core.registry import IMPUTERS
from bnfk_core.views.figures import imputation as fig_imp

from .. import bigdata, bigimpute, common, jobs, router
from ..state import bigfiles, choices, imputation, messages, structure, tables
from ..state import model as model_state

__all__ = [
    "benchmark_results",
    "IMPUTERS_OFFERED",
    "ORDER_NOTE",
    "imputed_by",
    "fill_missing_cells",
    "filled_cells_view",
    "small_file_panel",
    "big_file_panel",
]

#: the "Impute my data" choices: the current network (the Structure page's, the first choice: an arc edit
#: shows here), one network learned from the table by the default recipe (``impute DATA --structure tree
#: --method bn-em``) and the CLI's default imputer (``impute DATA --structure tree``, the registry's
#: DEFAULT_IMPUTER).  The stacked default took ~3.5 times the CPU time of learning one network and imputing
#: with it on the 2,000 x 37 ALARM sample with 5 % blanks (13.7 vs 4.0 CPU-s; docs/IMPUTATION.md), so it comes
#: last.
IMPUTERS_OFFERED = {
    "current": "The current network (Structure page)",
    "learn": "A network learned from this table by the default recipe "
    "(as `impute --structure tree --method bn-em`: structural EM on every row)",
    impute_methods.DEFAULT_IMPUTER: f"{IMPUTERS[impute_methods.DEFAULT_IMPUTER].label}: the CLI's default "
    f"(`impute --structure tree`), more accurate, slower",
}
#: why the CLI's default is not the page's first choice (shown under the choice)
ORDER_NOTE = (
    f"{IMPUTERS[impute_methods.DEFAULT_IMPUTER].label} (the CLI's default) is more accurate on most bundled "
    "tables (docs/IMPUTATION_PEERS.md) but fits its three models twice (a validation run on 5 % more hidden "
    "cells, then the final run): about 3.5 times the time of one learned network on a 2,000 x 37 table, so "
    "the page offers the networks first."
)
MAX_SHOWN_ROWS = 300
FILL_LABELS = {"median": "the median of the observed values in the bin", "label": "the bin's label"}


def benchmark_results(res) -> None:
    """The benchmark's result ``res`` (a :class:`~bnfk_core.analyses.impute.benchmark.BenchmarkResult`): the
    macro averages, the heatmaps of the chosen metric and the downloads (results, every run, the figure)."""
    st.subheader("Macro averages")
    st.dataframe(
        res.table(),
        hide_index=True,
        column_config={
            c: st.column_config.NumberColumn(format="%.3f")
            for c in ("accuracy", "accuracy sd", "cross-entropy", "cross-entropy sd")
        }
        | {"seconds": st.column_config.NumberColumn(format="%.1f")},
    )
    st.caption(
        f"{res.info['structure']} structures · {res.repeats} repeat(s) per setting · "
        f"{res.seconds:.1f} s in all."
    )
    metric = st.radio(
        "Heatmap metric",
        ["accuracy", "cross_entropy"],
        horizontal=True,
        format_func=lambda m: m.replace("_", "-"),
        key="imp_metric",
    )
    fig = fig_imp.benchmark_heatmaps(res, metric)
    st.plotly_chart(fig, key="imp_heatmaps", config={"displaylogo": False})
    base = f"{common.dataset_name()}_imputation"
    d1, d2, d3 = st.columns(3)
    with d1:
        common.download(
            "Results (JSON)",
            json.dumps(res.to_dict(), indent=1, default=float).encode("utf-8"),
            f"{base}.json",
            "application/json",
        )
    with d2:
        common.download(
            "Every run (CSV)",
            res.runs.to_csv(index=False).encode("utf-8"),
            f"{base}_runs.csv",
            "text/csv",
        )
    with d3:
        common.download_figure(fig, f"{base}_{metric}")


@st.cache_resource(show_spinner=False, max_entries=4)
def imputed_by(_feat, fingerprint: str, method: str, seed: int) -> completion.ImputedData:
    """``impute_table(feat, method, seed=seed)`` with the default recipe (what ``impute DATA --structure tree
    --method M`` does), kept per data fingerprint, method and seed."""
    return impute_methods.impute_table(_feat, method, seed=seed)


def fill_missing_cells(feat, d, which: str, seed: int, big: bool) -> None:
    """Fill the missing cells of the loaded table with the imputer ``which`` (a registry imputer, the
    network learned by the recipe, or the current network), say how, show the filled cells and offer the
    completed file (:func:`small_file_panel`, or :func:`big_file_panel` for a file read in chunks)."""
    if which in IMPUTERS:  # the registry's imputer, as impute DATA --structure hc does
        with (
            st.spinner(f"{IMPUTERS[which].label}: learning from every row…"),
            jobs.heavy(f"imputing with {which}"),
        ):
            res = imputed_by(feat, feat.fingerprint(), which, seed)
        st.caption(
            f"Every missing cell of the feature columns is filled with its most probable value "
            f"under {IMPUTERS[which].label} ({IMPUTERS[which].description}): "
            + "; ".join(res.imputation.notes[:1])
            + "."
        )
    else:
        if which == "learn" and (feat.codes < 0).any():
            with (
                st.spinner("Learning the network from every row…"),
                jobs.heavy("learning the network"),
            ):
                m = imputation.learned_for_imputation(feat, seed)
            common.plain_caption(
                f"The network learned from this table by the recipe "
                f"{structure.recipe().describe()}: {m.dag.n_arcs} arcs."
            )
        else:
            m = model_state.session_model()
            common.plain_caption(structure.network_line("The imputation"))
        st.caption(
            "Every missing cell of the feature columns is filled with its most probable value: "
            "the "
            "exact posterior given the row's observed values. Baseline: the empty network fills "
            "each cell with its column's most frequent value (Mode in the benchmark)."
        )
        with st.spinner("Computing the posteriors…"):
            res = imputation.imputed_with(m, d)
    fill = filled_cells_view(res, big)
    if big:
        big_file_panel(m, fill)
    else:
        small_file_panel(res, fill)


def filled_cells_view(res, big: bool) -> str:
    """The metrics, the first rows with filled cells as a figure and the choice of what discretized cells
    hold; returns that choice."""
    rows, stats = res.filled_rows(), res.stats()
    c1, c2, c3 = st.columns(3)
    c1.metric("Imputed cells", f"{stats['cells']:,}")
    c2.metric("Rows with imputed cells", f"{stats['rows']:,}")
    c3.metric("Mean probability of the filled value", f"{stats['mean_probability']:.3f}")
    if big:
        st.caption(f"The sample's {stats['cells']:,} imputed cells; the completed file of all rows is below.")
    if len(rows) > MAX_SHOWN_ROWS:
        st.caption(f"Showing the first {MAX_SHOWN_ROWS} of {len(rows):,} rows with imputed cells.")
    shown = rows[:MAX_SHOWN_ROWS]
    P, dist = res.cell_probabilities(shown)
    cells = res.data.frame.iloc[shown][list(res.data.variables)].to_numpy(dtype=object)
    st.plotly_chart(
        fig_imp.imputed_cells_figure(cells, res.data.variables, shown, P, dist),
        key="imp_cells",
        config={"displaylogo": False},
    )
    st.caption("Coloured cells were imputed (darker = less certain); hover for the distribution.")
    return st.radio(
        "Filled cells of discretized numeric columns hold",
        list(completion.FILL_NUMERIC),
        horizontal=True,
        key="imp_fill",
        format_func=FILL_LABELS.get,
    )


def _reader(path: str):
    """The file's bytes, read when the download is clicked (not on every page run)."""
    return lambda: Path(path).read_bytes()


def small_file_panel(res, fill: str) -> None:
    """For a table held in memory: the loaded file with only its missing cells filled (``res``, an
    :class:`~bnfk_core.analyses.impute.completion.ImputedData`), and the cells' probabilities, as
    downloads."""
    done = completion.complete_file(res, tables.raw_table(), fill_numeric=fill)
    st.caption(
        "The download is the loaded file with only its missing cells filled: every other cell, "
        "the columns (dropped ones too) and the rows stay as written."
    )
    base = f"{common.dataset_name()}_imputed"
    d1, d2 = st.columns(2)
    with d1:
        common.download("Completed data (CSV)", done.to_bytes, f"{base}.csv", "text/csv")
    with d2:
        common.download(
            "Probabilities (CSV)", done.probabilities_csv, f"{base}_probabilities.csv", "text/csv"
        )


def big_file_panel(model, fill: str) -> None:
    """For a file read in chunks: a button that fills the missing cells of all its rows with ``model`` (fitted
    on all rows) under a progress bar in a heavy slot, then the summary, the downloads and, for a file on the
    server, writing the result to a path there.  Every failure is one ``st.error`` sentence."""
    path, name = bigfiles.streamed()
    n_rows = tables.full_data().n_rows
    st.markdown(f"**The completed file: all {n_rows:,} rows**")
    st.caption(
        f"{messages.plain(name)} with the missing cells of all its rows filled by the network fitted on all "
        "rows, read and "
        "written in blocks: the same file as imputing it in memory gives, every other cell as written."
    )
    try:
        if file_layout(path).fmt == "parquet":
            st.info(
                f"{messages.plain(name)} is a Parquet file; the completed file is written for CSV files, so "
                "export it as CSV to "
                "complete all its rows."
            )
            return
        options = choices.read_options()
        res = bigimpute.cached(path, model, options, fill)
        if res is None:
            if not st.button(
                f"Complete all {n_rows:,} rows",
                key="imp_big_run",
                type="primary",
                icon=":material/play_arrow:",
            ):
                return
            bar = st.progress(0.0, text=f"Imputing {name}…")
            try:
                with jobs.heavy(f"imputing {name}"):
                    res = bigimpute.run(path, name, model, options, fill, jobs.progress(bar))
            finally:
                bar.empty()
        _summary(res, name)
        if st.session_state.dataset == "path" and bigdata.policy().writes:
            _save_panel(res, path)
    except BnfkError as exc:
        st.error(router.message(exc))


def _summary(res: dict, name: str) -> None:
    c1, c2, c3 = st.columns(3)
    c1.metric("Rows of the file", f"{res['rows']:,}")
    c2.metric("Imputed cells (all rows)", f"{res['imputed_cells']:,}")
    mean = res["mean_probability"]
    c3.metric("Mean probability (all rows)", "–" if math.isnan(mean) else f"{mean:.3f}")
    per = res["imputed_per_column"]
    if per:
        st.dataframe(
            pd.DataFrame({"column": list(per), "imputed cells": list(per.values())}), hide_index=True
        )
    for note in res["notes"]:
        st.caption(messages.plain(note))
    st.caption(f"Imputed in {res['blocks']:,} block(s) in {res['seconds']:.1f} s.")
    base = f"{common.dataset_name()}_imputed"
    d1, d2 = st.columns(2)
    with d1:
        common.download(
            "Completed data, all rows (CSV)",
            _reader(res["output"]),
            f"{base}.csv",
            "text/csv",
            key="dl_imp_big",
        )
    with d2:
        common.download(
            "Probabilities, all rows (CSV)",
            _reader(res["probabilities"]),
            f"{base}_probabilities.csv",
            "text/csv",
            key="dl_imp_big_probabilities",
        )


def _save_panel(res: dict, input_path: str) -> None:
    """Write the completed file into the operator's output folder (only there; replacing a file only when
    ticked)."""
    c1, c2, c3 = st.columns([4, 1.4, 1], vertical_alignment="bottom")
    target = c1.text_input(
        "Or write the completed file to the server's output folder (file name)",
        key="imp_big_target",
        placeholder=f"{common.dataset_name()}_imputed.csv",
    )
    replace = c2.checkbox("Replace an existing file", key="imp_big_replace")
    if c3.button("Write file", key="imp_big_save", icon=":material/save:"):
        written = bigimpute.save_as(res, target, input_path, replace=replace)
        st.success(
            f"Wrote the completed file of {res['rows']:,} rows to '{messages.plain(written)}' in the output "
            "folder."
        )
