"""Large files: when the data are read in chunks (:func:`streamed`), the upload's row count, and the cached
sample of rows and feature columns of a weighted table (the reading itself is :mod:`bnfk_ui.bigdata`)."""

from __future__ import annotations

import os

import streamlit as st

from bnfk_core.data.table import CategoricalData
from bnfk_core.errors import DataError

from .. import bigdata, jobs
from .choices import read_options

__all__ = ["upload_info", "streamed", "read_whole", "sampled", "features_of"]


def upload_info(content: bytes, want_file: bool = False) -> tuple:
    """(data rows, file on the server or None) of an upload, computed once per uploaded file."""
    ss = st.session_state
    memo = ss.get("_upload_info")
    if memo is None or memo[0] is not content:
        memo = (content, bigdata.count_lines(content), None)
    if want_file and memo[2] is not None and not bigdata.touch_upload(memo[2]):
        memo = (content, memo[1], None)  # removed by the store's caps meanwhile: written again
    if want_file and memo[2] is None:
        memo = (content, memo[1], bigdata.upload_file(ss.upload[0], content))
    ss._upload_info = memo
    return memo[1], memo[2]


def streamed(settings: dict | None = None) -> tuple[str, str] | None:
    """``(file, source name)`` when the data of ``settings`` are a large file -- a path on the server, or an
    upload with more than ``stream_rows`` rows -- read in chunks and fitted on all rows; else None."""
    ss = st.session_state
    dataset = settings["dataset"] if settings else ss.dataset  # one look-up (a run asks this many times)
    if dataset == "path":
        if not ss.get("server_path"):
            raise DataError("No file on the server has been chosen yet; give its name on the Data page.")
        path = bigdata.server_file(ss.server_path)  # the operator's policy, on every use
        return path, os.path.basename(path)
    up = ss.get("upload")
    if dataset == "upload" and up is not None and upload_info(up[1])[0] > int(ss.stream_rows):
        return upload_info(up[1], want_file=True)[1], up[0]
    return None


def read_whole(big: tuple[str, str], settings: dict, progress=None) -> CategoricalData:
    """All rows of the large file ``big`` (``(file, source name)``) as distinct rows with their multiplicities
    (``WeightedData``): cached on the server, else read in chunks under a progress bar."""
    w = bigdata.cached(big[0], read_options(settings))
    if w is not None:
        return w
    holder: dict = {}

    def report(fraction, message):
        if "bar" not in holder:
            holder["bar"] = st.progress(0.0)
        jobs.progress(holder["bar"])(fraction, message)

    try:
        with jobs.heavy(f"reading {big[1]}"):
            return bigdata.read(big[0], big[1], read_options(settings), progress or report)
    finally:
        if "bar" in holder:
            holder["bar"].empty()


@st.cache_resource(show_spinner=False, max_entries=8)
def sampled(_w, fingerprint: str, n: int, seed: int) -> CategoricalData:
    """The seeded sample of ``n`` rows of a weighted table that the row views use (cached per table)."""
    return _w.sample_rows(n, seed)


@st.cache_resource(show_spinner=False, max_entries=8)
def features_of(_w, fingerprint: str):
    """The feature columns of a weighted table, fingerprinted once (cached per table)."""
    f = _w.without_class()
    f.fingerprint()
    return f
