"""The Structure page's live view: click-driven arc edits and a Fisher Gram matrix, scores and contributions
that follow every edit through :class:`bnfk_core.kernels.live.LiveKernel` (only the changed kernel terms are
recomputed).  One LiveKernel per browser session, kept in ``st.session_state`` (never shared between
sessions: it is updated in place)."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.kernels.embed import sample_rows
from bnfk_core.kernels.live import LiveKernel

from .state import messages, structure, tables

__all__ = ["LIVE_ROWS", "live_kernel", "building", "graph_clicked", "click_message"]

#: rows of the live Gram matrix: every row up to this many, else a sample (seed 0) that the page names (the
#: Kernel page's default is 500 rows; 1,000 keep the first visit of the Structure page within seconds on a
#: 2,000 x 37 table, where all 2,000 took 1.5-12 s to build)
LIVE_ROWS = 1000


def _key(feat) -> tuple:
    """(data, estimator, rows) of the live kernel for ``feat``."""
    return feat.fingerprint(), st.session_state.param_method, min(feat.n_rows, LIVE_ROWS)


def building() -> bool:
    """True when :func:`live_kernel` has a kernel to build or copy (the session has none for these data and
    estimator yet), rather than an edit to follow (milliseconds)."""
    saved = st.session_state.get("_live")
    return saved is None or saved[0] != _key(tables.feature_data())


def live_kernel() -> tuple[LiveKernel, np.ndarray]:
    """The session's LiveKernel moved to the current structure, and the data rows it holds.

    The CPTs are fitted on those rows with the Structure page's estimator, so for data up to
    :data:`LIVE_ROWS` rows it is exactly the Kernel page's Fisher kernel of all rows.
    """
    ss = st.session_state
    feat = tables.feature_data()
    rows = sample_rows(feat.n_rows, min(feat.n_rows, LIVE_ROWS), 0)
    key = _key(feat)
    dag = structure.dag()
    saved = ss.get("_live")
    if saved is None or saved[0] != key:
        ss._live = (key, _first_build(key, dag, feat, rows, ss.param_method).copy(), rows)
    lk = ss._live[1]
    if lk.dag != dag:
        lk.goto(dag, max_edits=8)
    return lk, rows


#: the first live kernel of each (data, estimator, rows, structure), built once per process and copied for
#: every session that opens the Structure page on it (a session then edits its own copy); the last few are
#: kept
_BUILT: OrderedDict = OrderedDict()
_BUILT_SIZE = 4
_LOCK = threading.Lock()


def _first_build(key, dag, feat, rows, params: str) -> LiveKernel:
    """The shared, never edited live kernel of ``key`` and ``dag`` (copy it before use)."""
    full = (key, tuple(dag.nodes), tuple(dag.sorted_arcs()))
    with _LOCK:
        lk = _BUILT.get(full)
        if lk is None:
            sub = feat if len(rows) == feat.n_rows else feat.subset(rows)
            lk = _BUILT[full] = LiveKernel(dag, sub, params)
            while len(_BUILT) > _BUILT_SIZE:
                _BUILT.popitem(last=False)
        _BUILT.move_to_end(full)
    return lk


def graph_clicked(chart_key: str):
    """An ``on_select`` callback for the clickable DAG figure: a variable, then another, adds the arc between
    them; an arc's dot selects that arc for Remove / Reverse; clicking the picked variable again drops it."""

    def cb():
        ss = st.session_state
        sel = ss.get(chart_key) or {}
        points = (
            sel.get("selection", {}).get("points", []) if isinstance(sel, dict) or hasattr(sel, "get") else []
        )
        data = [p.get("customdata") for p in points if p.get("customdata") is not None]
        if not data:
            return
        c = data[0][0] if isinstance(data[0], (list, tuple)) else data[0]
        if "\t" in str(c):
            ss.live_arc, ss.live_pick = tuple(str(c).split("\t", 1)), None
            return
        pick = ss.get("live_pick")
        if pick is None or pick not in structure.dag().nodes:
            ss.live_pick, ss.live_arc = c, None
        elif pick == c:
            ss.live_pick = None
        else:
            ss.live_pick = None
            try:
                structure.edit("add", pick, c)
                ss.msg_live = ("success", f"Added {pick} → {c}.")
            except BnfkError as exc:
                ss.msg_live = ("error", str(exc))

    return cb


def click_message() -> str:
    """What the next click does, for the caption under the graph."""
    ss = st.session_state
    if ss.get("live_pick"):
        pick = messages.plain(ss.live_pick)
        return f"**{pick}** picked: click another variable to add {pick} → it (click it again to drop)."
    return "Click a variable, then another: adds an arc. Click an arc's dot to remove or reverse it."
