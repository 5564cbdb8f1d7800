"""Panels of the Data page for large files: a file on the server, the streaming threshold and the row
sample."""

import numpy as np
import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.serving import settings

from .. import bigdata, common, router
from ..state import bigfiles, choices, uploads

__all__ = ["large_file_panel", "level_counts", "missing_cells"]


def large_file_panel() -> None:
    """A file in the operator's data folder (CSV or Parquet, any size; only when the operator turned server
    files on, :mod:`bnfk_core.serving.serve`) read in chunks with a progress bar, and the settings of large
    files: the upload size above which a file is read in chunks, and the seeded sample of rows the pages that
    work on rows use."""
    big = bigfiles.streamed() is not None
    pol = bigdata.policy()
    title = (
        "Large files: a file on the server, the row sample" if pol.reads else "Large files: the row sample"
    )
    with st.expander(title, icon=":material/dataset:", expanded=big):
        if pol.reads:
            _server_file_input(pol)
        else:
            st.caption(
                "Large uploads are read in chunks: the network is learned and fitted on all rows, the pages "
                "that work on rows use a seeded sample of them. (This server reads no files from its own "
                "disk; its operator can allow a data folder, see 'Serving bnfk to others' in the README.)"
            )
        c1, c2, c3 = st.columns(3)
        s = settings.SETTINGS
        c1.number_input(
            "Read uploads in chunks above (rows)",
            min_value=int(s["stream_rows"].lo),
            max_value=int(s["stream_rows"].hi),
            step=10_000,
            help="An upload with more rows is read in chunks like a file on the server.",
            **choices.bind("stream_rows"),
        )
        c2.number_input(
            "Rows in the sample of a large file",
            min_value=int(s["view_rows"].lo),
            max_value=int(s["view_rows"].hi),
            step=500,
            help="The rows the pages that work on rows use.",
            **choices.bind("view_rows"),
        )
        common.seed_input("Seed of the sample", "view_seed", container=c3)


def _server_file_input(pol) -> None:
    """The name of a file in the operator's data folder, and the button that loads it."""
    st.caption(
        "A file larger than the upload limit can be read from the server's data folder. Large files are read "
        "in chunks: the network is learned and fitted on all rows, the pages that work on rows (kernel "
        "heatmaps, clustering, segments, prototypes, imputation) use a seeded sample of them; the Imputation "
        "page also completes the file of all rows."
    )
    names = pol.data_files(limit=12)
    if names:
        st.caption("Files in the data folder: " + ", ".join(names[:11]) + (", …" if len(names) > 11 else ""))
    c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
    path = c1.text_input(
        "Name of a CSV or Parquet file in the server's data folder",
        key="w_server_path_input",
        placeholder=names[0] if names else "big_table.csv",
    )
    if c2.button("Load file", key="server_path_load", icon=":material/upload_file:"):
        try:
            uploads.use_file(path)
        except BnfkError as exc:
            st.error(router.message(exc))
        else:
            st.rerun()


def level_counts(d, i: int) -> tuple[np.ndarray, int]:
    """(rows per level, missing cells) of column ``i``, counting a distinct row of a large file by its
    multiplicity."""
    col = d.codes[:, i]
    w = getattr(d, "weights", None)
    ok = col >= 0
    counts = np.bincount(col[ok], weights=None if w is None else w[ok], minlength=len(d.states[i]))
    missing = int((~ok).sum() if w is None else w[~ok].sum())
    return np.rint(counts).astype(np.int64), missing


def missing_cells(d) -> int:
    """Missing cells of all rows (weighted for a large file)."""
    w = getattr(d, "weights", None)
    per_row = (d.codes < 0).sum(axis=1)
    return int(per_row.sum() if w is None else (per_row * w).sum())


def na_values_widget() -> None:
    """Which cell texts are missing (``na_values``): a bundled sample's catalog list, or for a file of your
    own the empty field only (default), ``default-list`` (empty, NA, N/A, ?, nan) or a comma list such as
    ``NA,?``."""
    ss = st.session_state
    if choices.textbook_of(ss.dataset):
        st.caption("Rows sampled from a network have no missing cells.")
        return
    entry = choices.catalog().get(ss.dataset)
    if entry is not None:
        na = entry.get("na_values")
        st.caption(
            "Missing-value texts of this sample: "
            + ("empty, NA, N/A, ?, nan (as the thesis)" if na == "default-list" else "the empty field only")
        )
        return
    ss["w_na_values"] = ss.get("na_values") or ""
    st.text_input(
        "Texts that mean a missing cell",
        key="w_na_values",
        placeholder="(the empty field only)",
        help="Besides the empty field: 'default-list' for NA, N/A, ?, nan, or a comma list such as 'NA,?'. "
        "Anything not listed, '?' included, is an ordinary value.",
        on_change=lambda: uploads.change_data(na_values=(ss["w_na_values"].strip() or None)),
    )
