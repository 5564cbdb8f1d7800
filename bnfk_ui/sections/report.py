"""The Home page's HTML report: built after a click, under a progress bar, once per data, model and settings
for the whole server (a second click, or another session asking for the same report, gets the file at once),
then offered as a download.  Widgets -> :func:`bnfk_core.views.report.build_report`."""

from __future__ import annotations

import hashlib
import json

import streamlit as st

from bnfk_core.views import report

from .. import common, jobs
from ..state import shared

__all__ = ["report_panel", "report_key"]


def report_key(data, model, settings: dict, note: str) -> str:
    """A key of everything the report of ``model`` on ``data`` depends on: the table's fingerprint, the
    structure, every CPT (an edited table changes it), the settings and the structure's note."""
    h = hashlib.sha1(data.fingerprint().encode())
    h.update(json.dumps(model.dag.to_dict(), sort_keys=True).encode())
    for cpt in model.cpts:
        h.update(memoryview(cpt).cast("B") if cpt.flags.c_contiguous else cpt.tobytes())
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    h.update(note.encode())
    return h.hexdigest()


#: the reports built, kept for every session by :func:`report_key`
_BUILT = shared.Kept(8)


def _built(key: str, data, model, settings: dict, note: str, progress) -> bytes:
    return _BUILT.get(
        key,
        lambda: report.build_report(
            data, model, settings=settings, structure_note=note, progress=progress
        ).encode("utf-8"),
    )


def report_panel(data, model, settings: dict, note: str, file_name: str) -> None:
    """*Build the report* (a progress bar names each section while it is computed), then its download; a
    report already built for the same key (by any session) is offered without a click."""
    key = report_key(data, model, settings, note)
    ss = st.session_state
    if ss.get("_report_key") != key and key not in _BUILT:
        if not st.button("Build the report (HTML)", key="report_build", icon=":material/description:"):
            return
        bar = st.progress(0.0, text="Starting…")
        with jobs.heavy("the report"):
            _built(key, data, model, settings, note, jobs.progress(bar))
        bar.empty()
        ss["_report_key"] = key
    common.download(
        "Report (HTML)",
        lambda: _built(key, data, model, settings, note, None),
        file_name,
        "text/html",
        key="dl_report",
    )
