"""Data: preview, per-column levels, the loading options (class, missing values, bins, dropped columns) and
large files (a path on the server, read in chunks; the rows' sample)."""

import pandas as pd
import streamlit as st

from bnfk_core.data.stats import column_summary
from bnfk_core.views import figures
from bnfk_ui import common
from bnfk_ui.sections import data as sections
from bnfk_ui.sections import hybrid as numbers
from bnfk_ui.sections import textbook
from bnfk_ui.state import messages, tables, uploads


def page():
    ss = st.session_state
    d, full = (
        tables.data(),
        tables.full_data(),
    )  # the rows the row views use; all rows (weighted for a large file)
    note = tables.sample_note()
    if note:
        st.info(note, icon=":material/filter_alt:")
    textbook.data_panel()  # rows sampled from a textbook network
    sections.large_file_panel()

    def setting(key: str) -> dict:
        """A widget bound to a data option: a change is applied only if the data still loads."""
        wkey = f"w_{key}"
        ss[wkey] = ss[key]
        return {"key": wkey, "on_change": lambda: uploads.change_data(**{key: ss[wkey]})}

    st.subheader("Loading options")
    all_columns = list(d.variables) + [c for c in ss.drop_columns if c not in d.variables]
    c1, c2, c3 = st.columns([2, 2, 1.4])
    with c1:
        st.selectbox(
            "Class column",
            [None] + list(d.variables),
            format_func=lambda c: "(none)" if c is None else c,
            help="Its labels colour the plots; it is never a kernel feature.",
            **setting("class_column"),
        )
        st.multiselect(
            "Columns to drop",
            [c for c in all_columns if c != ss.class_column],
            help="Identifiers, free text, or anything you want to leave out.",
            **setting("drop_columns"),
        )
    with c2:
        st.radio(
            "Missing cells",
            ["missing", "category"],
            horizontal=True,
            format_func={"missing": "are missing values", "category": "are one more level '?'"}.get,
            help="'missing' marginalises them in the kernel; 'category' treats '?' as an ordinary value.",
            **setting("missing_policy"),
        )
        sections.na_values_widget()
        st.number_input(
            "Discretisation bins for numeric columns",
            min_value=0,
            max_value=20,
            step=1,
            help="Numeric columns with more than 50 distinct values are cut into this many quantile "
            "bins; 0 refuses them instead.",
            **setting("bins"),
        )
    with c3:
        st.metric("Rows", f"{full.n_rows:,}")
        st.metric("Variables", f"{d.n_vars}", help="Including the class column.")
        st.metric("Missing cells", f"{sections.missing_cells(full):,}")
    for line in full.notes:
        st.info(messages.plain(line))  # a note names columns: shown as typed
    numbers.numbers_panel()  # numeric columns: each a number (Gaussian node) or a category
    common.complete_rows_notice("Log scores", caption=False)  # a warning when most rows are incomplete

    st.subheader("Variables")
    summary = pd.DataFrame(column_summary(full))
    st.dataframe(
        summary,
        hide_index=True,
        width="stretch",
        column_config={
            "levels": st.column_config.NumberColumn(width="small"),
            "missing": st.column_config.NumberColumn("missing cells", width="small"),
            "counts": st.column_config.TextColumn("levels (rows)", width="large"),
        },
    )

    left, right = st.columns([1, 2], gap="large")
    with left:
        default = d.class_column or d.variables[0]
        if ss.get("w_levels_col") not in d.variables:
            ss.w_levels_col = default
        col = st.selectbox("Levels of column", list(d.variables), key="w_levels_col")
    with right:
        i = d.index(col)
        counts, missing = sections.level_counts(full, i)
        fig = figures.levels_figure(
            d.states[i],
            counts,
            missing,
            class_column=(col == d.class_column),
            title=f"{col}: {len(d.states[i])} levels",
        )
        st.plotly_chart(fig, key="levels_chart", config={"displaylogo": False})

    st.subheader("Preview")
    st.caption(
        f"The first {min(d.n_rows, 500):,} of {d.n_rows:,} rows after loading"
        + (f" (of the seeded sample of the {full.n_rows:,})" if note else "")
        + " (discretised values shown as intervals, missing cells empty)."
    )
    st.dataframe(d.frame.head(500).astype("string").fillna(""), width="stretch", height=320)  # missing: empty

    c1, c2, _ = st.columns([1, 1, 2])
    with c1:
        common.download(
            "Sample as loaded (CSV)" if note else "Data as loaded (CSV)",
            lambda: d.frame.to_csv(index=False),
            f"{common.dataset_name()}_loaded.csv",
            "text/csv",
        )
    with c2:
        common.download(
            "Variables table (CSV)",
            summary.to_csv(index=False).encode("utf-8"),
            f"{common.dataset_name()}_variables.csv",
            "text/csv",
        )


if common.start("Data"):
    page()
