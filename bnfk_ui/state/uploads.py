"""Switching the data: a bundled sample, an upload (columns the loader refuses dropped and named), a large
file read in chunks, or other reading options -- each leaves the current data in place when it cannot be
read."""

from __future__ import annotations

import csv
import os
import re

import streamlit as st

from bnfk_core.data.table import load_csv
from bnfk_core.errors import BnfkError, DataError
from bnfk_core.kernels.features import guard_table_features
from bnfk_core.learning.structure import guard_width

from .. import bigdata, jobs
from .bigfiles import streamed, upload_info
from .choices import TEXTBOOK_PREFIX, UPLOAD_MISSING_POLICY, catalog, data_settings, read_options
from .messages import flash
from .structure import reset_structure, structure_fingerprint
from .tables import full_data, io_bytes, load

__all__ = [
    "MAX_PAGE_VARIABLES",
    "guard_page_width",
    "apply_pending",
    "change_data",
    "use_file",
    "use_upload",
    "use_sample",
    "use_textbook",
    "header_width",
]

#: the first bytes of an upload read for its header (a 50,000-column header is about 300 kB)
HEADER_BYTES = 4 * 2**20


def header_width(content: bytes) -> int:
    """The number of columns of an uploaded CSV, from its first line alone (quoted names may hold commas)."""
    head = bytes(content[:HEADER_BYTES]).split(b"\n", 1)[0].decode("utf-8", errors="replace").lstrip("\ufeff")
    try:
        return len(next(csv.reader([head.rstrip("\r")]), []))
    except csv.Error:
        return head.count(",") + 1


#: the most variables the pages analyse: every page draws, fits and compares all of them, and the work grows
#: with the square of their number (on 2 cores, 20 rows: Home took 1.7 s at 500 columns, 5.8 s at 1,000,
#: 19 s at 2,000 and minutes at 10,000)
MAX_PAGE_VARIABLES = 1000


def guard_page_width(n_columns: int, source: str) -> None:
    """Refuse, from the header alone, a table wider than the pages analyse (:data:`MAX_PAGE_VARIABLES`) or
    whose Chow–Liu tables exceed the memory limit (:func:`bnfk_core.learning.structure.guard_width`)."""
    guard_width("tree", n_columns, source=source)
    if n_columns > MAX_PAGE_VARIABLES:
        raise DataError(
            f"{source} has {n_columns:,} columns, more than the {MAX_PAGE_VARIABLES:,} variables the app's "
            "pages analyse; drop columns before uploading it, or use the command line (python -m bnfk_core), "
            "which has no such limit."
        )


def apply_pending() -> None:
    """Data options chosen for a large file (in a widget callback, where no progress bar can be drawn) are
    applied here, at the start of the page run: the file is read under a progress bar, then the options are
    taken; options it cannot be read with are named in an error and the old ones kept."""
    changes = st.session_state.pop("pending_data", None)
    if changes:
        try:
            full_data(data_settings(**changes))
        except BnfkError as exc:
            flash("error", str(exc))
            return
        change_data(**changes)


def change_data(**changes) -> bool:
    """Apply data settings if they load; otherwise keep the old ones and flash the error."""
    new = data_settings(**changes)
    ss = st.session_state
    try:
        if new["dataset"] == "upload" and ss.get(
            "upload"
        ):  # a session's or a link's upload: its header first
            guard_page_width(header_width(ss.upload[1]) - len(new["drop_columns"]), source=ss.upload[0])
        big = streamed(new)
        if big is not None and bigdata.cached(big[0], read_options(new)) is None:
            ss.pending_data = changes  # read under a progress bar at the start of the next run
            return True
        full_data(new) if big is not None else load(new)
    except BnfkError as exc:
        flash("error", str(exc))
        return False
    if new["dataset"] != ss.get("dataset"):  # the number / category switches were made for the old table
        ss.pop("number_kinds", None)
    for k, v in changes.items():
        ss[k] = list(v) if k == "drop_columns" else v
    if ss.get("structure", {}).get("fingerprint") != structure_fingerprint():
        reset_structure()
    return True


_CULPRIT = re.compile(r"Column '([^']+)'")


def use_file(path: str, *, dataset: str = "path", name: str | None = None) -> None:
    """Switch to a large file (a path on the server, or a big upload written to one): read in chunks under a
    progress bar, class column guessed as for an upload, a column the loader refuses dropped (and named);
    then a Chow–Liu tree is learned on all rows.  A DataError (naming the file) leaves the current data."""
    ss = st.session_state
    path = bigdata.server_file(path) if dataset == "path" else bigdata.resolve(path)
    name = name or os.path.basename(path)
    header = bigdata.header(path, name)
    guard_page_width(len(header), source=name)
    cls = next((c for c in header if c.lower() in ("class", "label", "target", "y")), None)
    drop: list[str] = []
    bar = st.progress(0.0, text=f"Reading {name}…")
    try:
        with jobs.heavy(f"reading {name}"):
            for _ in range(10):
                try:
                    w = bigdata.read(
                        path,
                        name,
                        (cls, UPLOAD_MISSING_POLICY, int(ss.bins), tuple(drop)),
                        jobs.progress(bar),
                    )
                    break
                except DataError as exc:
                    m = _CULPRIT.search(str(exc))
                    if m and m.group(1) in header and m.group(1) not in drop and m.group(1) != cls:
                        flash("error", f"{exc} It was dropped so that the rest of {name} loads.")
                        drop.append(m.group(1))
                        continue
                    raise
            else:
                raise DataError(f"{name} has too many unusable columns; drop them and load it again.")
            # the pages build the feature map of their sample: refused before the tree is learned
            guard_table_features(
                min(int(ss.view_rows), w.n_rows), w.variables, [len(s) for s in w.states], source=name
            )
            if dataset == "path":
                ss.server_path = path
            ss.dataset, ss.class_column, ss.drop_columns = dataset, cls, drop
            ss.missing_policy = UPLOAD_MISSING_POLICY
            bar.progress(1.0, text=f"Learning a Chow–Liu tree on all {w.n_rows:,} rows…")
            reset_structure()
    finally:
        bar.empty()
    flash(
        "success",
        f"Loaded {name}: {w.n_rows:,} rows ({w.n_distinct:,} distinct) × {w.n_vars} variables, read "
        "in chunks; the network is fitted on all rows, the pages that work on rows use a seeded sample of "
        f"{min(int(ss.view_rows), w.n_rows):,}."
        + (f" Class column '{cls}'." if cls else " Choose a class column on the Data page if it has one."),
    )


def use_upload(name: str, content: bytes) -> None:
    """Switch to an uploaded CSV.

    A column the loader refuses (an identifier, free text) is named in an error and dropped
    so the rest of the file loads; a file that cannot be read at all leaves the current
    dataset in place.
    """
    ss = st.session_state
    try:
        guard_page_width(header_width(content), source=name)  # from the header, before anything is parsed
    except BnfkError as exc:
        flash("error", str(exc))
        return
    old = ss.get("upload")
    ss.upload = (name, content)
    if bigdata.count_lines(content) > int(ss.stream_rows):  # a large upload: read in chunks
        try:
            use_file(upload_info(content, want_file=True)[1], dataset="upload", name=name)
        except BnfkError as exc:
            flash("error", str(exc))
            ss.upload = old
        return
    cls = None
    try:
        header = load_csv(io_bytes(name, content), discretize_bins=ss.bins or None, max_levels=10**9)
        cls = next((c for c in header.variables if c.lower() in ("class", "label", "target", "y")), None)
    except BnfkError:
        header = None
    drop: list[str] = []
    for _ in range(10):
        try:
            d = load(
                {
                    "dataset": "upload",
                    "class_column": cls,
                    "missing_policy": UPLOAD_MISSING_POLICY,
                    "bins": ss.bins,
                    "drop_columns": tuple(drop),
                }
            )
            break
        except DataError as exc:
            m = _CULPRIT.search(str(exc))
            if (
                header is not None
                and m
                and m.group(1) in header.variables
                and m.group(1) not in drop
                and m.group(1) != cls
            ):
                flash("error", f"{exc} It was dropped so that the rest of {name} loads.")
                drop.append(m.group(1))
                continue
            flash("error", str(exc))
            ss.upload = old
            return
    else:
        flash("error", f"{name} has too many unusable columns; drop them and upload it again.")
        ss.upload = old
        return
    try:  # the pages build the Fisher feature map of every row: refused before any network is learned
        guard_table_features(d.n_rows, d.variables, [len(s) for s in d.states], source=name)
    except BnfkError as exc:
        flash("error", str(exc))
        ss.upload = old
        return
    ss.dataset, ss.class_column, ss.drop_columns = "upload", cls, drop
    ss.missing_policy = UPLOAD_MISSING_POLICY
    ss.pop("number_kinds", None)
    reset_structure()
    flash(
        "success",
        f"Loaded {name}: {d.n_rows:,} rows × {d.n_vars} variables"
        + (f", class column '{cls}'." if cls else "; choose a class column on the Data page if it has one."),
    )


def use_sample(name: str) -> None:
    entry = catalog()[name]
    change_data(
        dataset=name,
        class_column=entry.get("class_column"),
        missing_policy=entry.get("missing_policy", "missing"),
        drop_columns=[],
    )


def use_textbook(name: str, **sample) -> bool:
    """Switch to rows sampled from the textbook network ``name`` (``sample``: ``textbook_rows`` and
    ``textbook_seed`` when they change too): no class column, nothing dropped; the structure starts as the
    true network (:func:`.structure.reset_structure`).  False (and the error flashed) when it does not
    load."""
    return change_data(
        dataset=TEXTBOOK_PREFIX + name,
        class_column=None,
        missing_policy="missing",
        drop_columns=[],
        **sample,
    )
