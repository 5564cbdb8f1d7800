"""The pair of rows the Kernel page explains: the first row and its most similar one, or the rows picked on
the map (a click, a box, a lasso)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from bnfk_core.views import kernel as kernel_view

__all__ = ["default_pair", "pick_pair"]


def default_pair(K: np.ndarray, rows) -> tuple[int, int]:
    """The picked rows (A, B) if both are among ``rows``, else row A = the first row and B = the row most
    similar to it (cosine); stored in ``st.session_state.pair``."""
    ss = st.session_state
    rows = [int(r) for r in rows]
    if not (ss.pair and ss.pair[0] in rows and ss.pair[1] in rows):
        ia, ib = kernel_view.first_pair(K)
        ss.pair = (rows[ia], rows[ib])
    return ss.pair


def pick_pair(chart_key: str):
    """An ``on_select`` callback for a map whose points carry row ids: a clicked row becomes row A and the
    previous A row B; a box or lasso around two points picks both."""

    def cb():
        sel = st.session_state.get(chart_key)
        points = (sel or {}).get("selection", {}).get("points", []) if sel else []
        picked = []
        for p in points:
            c = p.get("customdata")
            if isinstance(c, (list, tuple)):
                c = c[0] if c else None
            if c is not None and int(c) not in picked:
                picked.append(int(c))
        if not picked:
            return
        old = st.session_state.pair or (None, None)
        a, b = (
            (picked[0], picked[1])
            if len(picked) >= 2
            else (picked[0], old[0] if old[0] != picked[0] else old[1])
        )
        st.session_state.pair = (a, b if b is not None else a)

    return cb
