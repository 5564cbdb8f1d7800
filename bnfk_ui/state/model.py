"""The session's model -- the current structure with its CPTs, the visitor's CPT edits applied -- and the
evidence entered on it, with the cached exact inference the Model page draws.

* :func:`session_model` -- the one place that says which model the Model page shows;
* the CPT edits (``model_edits``): one table per variable, kept while the variable keeps its parents and
  states (an edit whose family changed is dropped with a note, :func:`dropped_notes`);
* the evidence (``model_evidence``), ``{variable: state}``;
* :func:`answer` and :func:`explanation` -- :func:`bnfk_core.inference.evidence.query` and
  :func:`~bnfk_core.inference.evidence.mpe`, cached per model and evidence for every session.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import numpy as np
import streamlit as st

from bnfk_core.errors import ModelError
from bnfk_core.inference.evidence import Explanation, Query, mpe, query
from bnfk_core.network.cpt import with_cpt
from bnfk_core.network.model import BayesNet

from . import caches, truth
from .shared import front
from .structure import dag

__all__ = [
    "session_model",
    "fitted_model",
    "edits",
    "set_edit",
    "drop_edit",
    "drop_all_edits",
    "dropped_notes",
    "family",
    "evidence",
    "set_evidence",
    "clear_evidence",
    "answer",
    "explanation",
    "check_table",
]

EDITS, EVIDENCE, DROPPED = "model_edits", "model_evidence", "model_dropped"


def fitted_model() -> BayesNet:
    """The current structure with its CPTs: on rows sampled from a textbook network whose structure is the
    current one, that network's own CPTs (:func:`bnfk_ui.state.truth.truth`); else the CPTs fitted to the
    current table by the app's recipe (cached per table and structure: :func:`bnfk_ui.state.caches.model`)."""
    d = dag()
    true_dag = truth.truth_dag()
    if true_dag is not None and d == true_dag:
        return truth.truth()
    return caches.model(d)


def session_model() -> BayesNet:
    """The model the Model page shows and queries: :func:`fitted_model` with the visitor's CPT edits
    applied (:func:`edits`); an edit whose variable no longer has the parents and states it was made for is
    dropped, with a note for :func:`dropped_notes`.  Cached per model and edits (one object, so its content
    key is hashed once)."""
    base = fitted_model()
    kept = edits()
    if not kept:
        return base
    usable, gone = {}, []
    for v, e in kept.items():
        if v in base.variables and e["family"] == family(base, v):
            usable[v] = e
        else:
            gone.append(v)
    if gone:
        st.session_state[EDITS] = usable
        st.session_state.setdefault(DROPPED, []).extend(
            f"The CPT edit of '{v}' was dropped: its parents or states changed." for v in gone
        )
    if not usable:
        return base
    return _edited(base, usable)


_EDITED: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def _edited(base: BayesNet, usable: dict) -> BayesNet:
    key = (base.key(), json.dumps({v: e["cpt"] for v, e in sorted(usable.items())}))
    with _LOCK:
        hit = _EDITED.get(key)
        if hit is not None:
            _EDITED.move_to_end(key)
            return hit
    out = base
    for v, e in usable.items():
        out = with_cpt(out, v, np.asarray(e["cpt"], dtype=float))
    with _LOCK:
        _EDITED[key] = out
        while len(_EDITED) > 32:
            _EDITED.popitem(last=False)
    return out


def family(model: BayesNet, v: str) -> list:
    """What an edit of ``v``'s CPT is made for: its parents (in CPT order) and the states of it and of each
    parent, as JSON-like lists."""
    i = model.variables.index(v)
    ps = list(model.parents[i])
    return [[model.variables[p] for p in ps], [list(model.states[i])] + [list(model.states[p]) for p in ps]]


def edits() -> dict:
    """The visitor's CPT edits, ``{variable: {"family": ..., "cpt": rows}}``."""
    return dict(st.session_state.get(EDITS) or {})


def check_table(v: str, table) -> np.ndarray:
    """``table`` (rows = parent configurations, columns = states of ``v``) as a CPT: every entry a number
    that is not negative, every row with a positive sum, rows renormalised to sum to one.

    Raises
    ------
    ModelError
        One sentence naming the first bad entry or row.
    """
    a = np.asarray(table, dtype=object)
    out = np.empty(a.shape, dtype=float)
    for (r, c), x in np.ndenumerate(a):
        try:
            out[r, c] = float(x)
        except (TypeError, ValueError):
            out[r, c] = np.nan
        if not np.isfinite(out[r, c]):
            raise ModelError(
                f"The CPT of '{v}' has an entry that is not a number (row {r + 1}, column {c + 1})."
            )
        if out[r, c] < 0:
            raise ModelError(
                f"The CPT of '{v}' has a negative entry, {out[r, c]:g} (row {r + 1}, column {c + 1})."
            )
    zero = np.flatnonzero(out.sum(axis=1) <= 0)
    if zero.size:
        raise ModelError(
            f"Row {int(zero[0]) + 1} of the CPT of '{v}' is all zeros: it needs a positive entry."
        )
    return out / out.sum(axis=1, keepdims=True)


def set_edit(v: str, table) -> np.ndarray:
    """Keep ``table`` (checked and renormalised by :func:`check_table`) as ``v``'s CPT; returns the kept
    rows."""
    base = fitted_model()
    i = base.variables.index(v)
    rows = check_table(v, table)
    if rows.shape != base.cpts[i].shape:
        raise ModelError(
            f"The CPT of '{v}' needs {base.cpts[i].shape[0]} rows of {base.cpts[i].shape[1]} entries."
        )
    e = edits()
    e[v] = {"family": family(base, v), "cpt": rows.tolist()}
    st.session_state[EDITS] = e
    return rows


def drop_edit(v: str) -> None:
    """Back to the fitted CPT of ``v``."""
    e = edits()
    e.pop(v, None)
    st.session_state[EDITS] = e


def drop_all_edits() -> None:
    st.session_state[EDITS] = {}


def dropped_notes() -> list[str]:
    """The notes of edits dropped since the last call (each shown once)."""
    return list(st.session_state.pop(DROPPED, []) or [])


def evidence(model: BayesNet | None = None) -> dict:
    """The evidence, ``{variable: state}``, in model order; entries the model no longer has are left out."""
    m = model or session_model()
    ev = st.session_state.get(EVIDENCE) or {}
    return {v: ev[v] for i, v in enumerate(m.variables) if v in ev and str(ev[v]) in m.states[i]}


def set_evidence(v: str, state: str) -> None:
    ev = dict(st.session_state.get(EVIDENCE) or {})
    ev[str(v)] = str(state)
    st.session_state[EVIDENCE] = ev


def clear_evidence(v: str | None = None) -> None:
    """Clear the evidence on ``v`` (all of it when ``v`` is None)."""
    ev = dict(st.session_state.get(EVIDENCE) or {})
    if v is None:
        ev = {}
    else:
        ev.pop(str(v), None)
    st.session_state[EVIDENCE] = ev


@front
@st.cache_resource(show_spinner=False, max_entries=256)
def _query(_model: BayesNet, model_key: str, ev: tuple) -> Query:
    return query(_model, dict(ev))


@front
@st.cache_resource(show_spinner=False, max_entries=256)
def _mpe(_model: BayesNet, model_key: str, ev: tuple) -> Explanation:
    return mpe(_model, dict(ev))


def answer(model: BayesNet, ev: dict) -> Query:
    """Every variable's posterior given ``ev`` and log P(ev) (exact; cached per model and evidence).

    Raises
    ------
    ModelError
        Evidence of probability zero (one sentence naming it).
    """
    return _query(model, model.key(), tuple(ev.items()))


def explanation(model: BayesNet, ev: dict) -> Explanation:
    """The most probable explanation of ``ev`` (exact; cached per model and evidence)."""
    return _mpe(model, model.key(), tuple(ev.items()))
