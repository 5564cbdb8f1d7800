"""The Model page's parts: evidence with every posterior, P(evidence) and the MPE; explaining away on a
V-structure; "is X ⊥ Y given Z?" with the active trails; a variable's CPT as an editable table; the model's
downloads."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.network.bif import model_to_bif
from bnfk_core.network.cpt import parent_labels
from bnfk_core.network.dag import v_structures
from bnfk_core.network.dsep import d_separated
from bnfk_core.network.model import BayesNet
from bnfk_core.views.figures import evidence as figs
from bnfk_ui import common, router
from bnfk_ui.state import charts, messages, shared
from bnfk_ui.state import model as state

__all__ = [
    "evidence_tab",
    "explaining_away",
    "explaining_away_table",
    "explaining_away_note",
    "demo_states",
    "independence_tab",
    "cpt_tab",
    "cpt_frame",
    "downloads",
    "posterior_text",
]

CHART = {"displaylogo": False, "scrollZoom": True}
#: the most parent configurations a CPT may have to be edited in the table
MAX_EDIT_ROWS = 1000
plain = messages.plain


def graph_clicked(chart_key: str, target: str):
    """An ``on_select`` callback: a click on a variable of the graph picks it in the selector ``target``."""

    def cb():
        sel = st.session_state.get(chart_key) or {}
        points = sel.get("selection", {}).get("points", []) if hasattr(sel, "get") else []
        data = [p.get("customdata") for p in points if p.get("customdata") is not None]
        if data:
            c = data[0][0] if isinstance(data[0], (list, tuple)) else data[0]
            if "\t" not in str(c):
                st.session_state[target] = str(c)

    return cb


def posterior_text(q) -> dict:
    """Each variable's posterior as hover lines, ``state: p``."""
    return {v: "\n".join(f"{s}: {p:.3f}" for s, p in dist.items()) for v, dist in q.posterior.items()}


def _graph(m: BayesNet, key: str, target: str, *, observed=None, trails=(), info=None, label="observed"):
    fig = shared.shared(
        figs.model_graph,
        m.variables,
        m.dag.sorted_arcs(),
        observed=dict(observed or {}),
        trails=[list(t) for t in trails],
        node_info=info or {},
        picked=st.session_state.get(target),
        observed_label=label,
    )
    charts.plotly_chart(
        fig, key=key, on_select=graph_clicked(key, target), selection_mode="points", config=CHART
    )


def evidence_tab(m: BayesNet) -> None:
    """Set and clear observed states; the graph and every posterior beside it, P(evidence) and the MPE."""
    ss = st.session_state
    ev = state.evidence(m)
    if ss.get("model_node") not in m.variables:
        ss.model_node = m.variables[0]
    c1, c2, c3, c4 = st.columns([1.6, 1.4, 0.8, 0.8], vertical_alignment="bottom")
    v = c1.selectbox("Variable (or click it on the graph)", list(m.variables), key="model_node")
    states = list(m.states[m.variables.index(v)])
    key = f"model_state_{m.variables.index(v)}"
    if key in ss and ss[key] not in states:  # a choice made on other data
        del ss[key]
    s = c2.selectbox(f"State of {plain(v)}", states, index=states.index(ev[v]) if v in ev else 0, key=key)
    c3.button(
        "Observe", icon=":material/visibility:", width="stretch", on_click=state.set_evidence, args=(v, s)
    )
    c4.button(
        "Clear" if v in ev else "Clear all",
        icon=":material/backspace:",
        width="stretch",
        disabled=not ev,
        on_click=state.clear_evidence,
        args=(v if v in ev else None,),
        key="model_clear",
    )
    try:
        q = state.answer(m, ev)
        prior = state.answer(m, {}) if ev else q
    except BnfkError as exc:
        st.error(router.message(exc))
        st.button("Clear all evidence", on_click=state.clear_evidence, key="model_clear_all")
        _graph(m, "model_graph", "model_node", observed=ev)
        return
    shown = ", ".join(f"{k} = {x}" for k, x in ev.items())
    common.plain_caption(f"Evidence: {shown}." if ev else "No evidence: the bars are the model's marginals.")
    g, b = st.columns([1.5, 1.2], gap="medium")
    with g:
        _graph(m, "model_graph", "model_node", observed=ev, info=posterior_text(q))
        m1, m2 = st.columns(2)
        m1.metric(
            "P(evidence)", f"{math.exp(q.log_evidence):.4g}", help="The probability of the observed states."
        )
        m2.metric("log P(evidence)", f"{q.log_evidence:.4f}")
        with common.shown_errors():
            x = state.explanation(m, ev)
            st.markdown("**Most probable explanation** of the unobserved variables (MPE)")
            st.dataframe(
                pd.DataFrame({"variable": list(x.assignment), "state": list(x.assignment.values())}),
                hide_index=True,
                height=min(36 * (len(x.assignment) + 1) + 2, 300),
                key="model_mpe",
            )
            st.caption(f"log P(MPE, evidence) = {x.log_probability:.4f}")
    with b:
        fig = shared.shared(
            figs.posterior_grid, m.variables, m.states, q.posterior, prior.posterior if ev else None, list(ev)
        )
        charts.plotly_chart(fig, key="model_bars", config={"displaylogo": False})
        rows = [(k, sname, p) for k, dist in q.posterior.items() for sname, p in dist.items()]
        common.download(
            "Posteriors (CSV)",
            pd.DataFrame(rows, columns=["variable", "state", "probability"]).to_csv(index=False),
            "posteriors.csv",
            "text/csv",
        )
    explaining_away(m)


def demo_states(m: BayesNet, u: str, v: str, w: str) -> tuple | None:
    """The states (s of v, t of w) whose evidence v = s, then w = t, moves P(u) the most (None if none is
    possible)."""
    best, out = -1.0, None
    for s in m.states[m.variables.index(v)]:
        try:
            pv = state.answer(m, {v: s}).posterior[u]
        except BnfkError:
            continue
        for t in m.states[m.variables.index(w)]:
            try:
                pw = state.answer(m, {v: s, w: t}).posterior[u]
            except BnfkError:
                continue
            shift = max(abs(pv[k] - pw[k]) for k in pv)
            if shift > best:
                best, out = shift, (s, t)
    return out


def _built_v(vs: list) -> int:
    """The index in ``vs`` of the V-structure the last segment preset built (its common child in the
    middle of each ``(u, v, w)``), else 0."""
    seg = (st.session_state.get("structure") or {}).get("segment")
    if seg and seg[0] == "v":
        u, v, w = seg[1]  # the preset's role order: w is the common child
        for i, (a, child, b) in enumerate(vs):
            if child == w and {a, b} == {u, v}:
                return i
    return 0


def explaining_away(m: BayesNet) -> None:
    """One click: the evidence v = s, then w = t on a V-structure u → v ← w, and how P(u) changes."""
    vs = sorted(v_structures(m.dag))
    if not vs:
        st.caption(
            "No V-structure (u → v ← w, u and w not adjacent) in this network: no explaining away to show."
        )
        return
    ss = st.session_state
    st.markdown("**Explaining away**")
    c1, c2 = st.columns([2.4, 1], vertical_alignment="bottom")
    labels = {i: f"{u} → {v} ← {w}" for i, (u, v, w) in enumerate(vs)}
    if ss.get("model_vs") not in labels:  # the V-structure preset just built, else the first
        ss.model_vs = _built_v(vs)
    i = c1.selectbox("V-structure", list(labels), format_func=labels.get, key="model_vs")
    if c2.button("Show explaining away", icon=":material/psychology:", width="stretch", key="model_demo"):
        u, v, w = vs[i]
        pick = demo_states(m, u, v, w)
        if pick is None:
            st.error("No evidence on this V-structure is possible under the model.")
            return
        ss.model_evidence = {v: pick[0], w: pick[1]}
        ss.model_demo_shown = (u, v, w, pick[0], pick[1])
        st.rerun()
    demo = ss.get("model_demo_shown")
    if demo and all(x in m.variables for x in demo[:3]):
        try:
            frame = explaining_away_table(m, *demo)
        except BnfkError:
            return
        st.dataframe(frame.style.format("{:.4f}"), key="model_demo_table")
        common.plain_caption(explaining_away_note(m, *demo))


def explaining_away_table(m: BayesNet, u: str, v: str, w: str, s: str, t: str) -> pd.DataFrame:
    """P(u) with no evidence, given v = s, and given v = s and w = t: one row each, one column per state of u
    (exact, :func:`bnfk_ui.state.model.answer`).

    Raises
    ------
    ModelError
        Evidence of probability zero.
    """
    rows = {
        "no evidence": state.answer(m, {}).posterior[u],
        f"{v} = {s}": state.answer(m, {v: s}).posterior[u],
        f"{v} = {s}, {w} = {t}": state.answer(m, {v: s, w: t}).posterior[u],
    }
    frame = pd.DataFrame(rows).T
    frame.index.name = f"P({u})"
    return frame


def explaining_away_note(m: BayesNet, u: str, v: str, w: str, s: str, t: str) -> str:
    """What the table of :func:`explaining_away_table` shows, in one or two sentences (plain text: it names
    variables)."""
    apart, _ = d_separated(m.dag, u, w)
    head = (
        f"{u} and {w} are independent a priori (d-separated with no evidence)"
        if apart
        else f"{u} and {w} are already dependent through another trail"
    )
    return (
        f"{head}; given their common child {v} the V-structure opens: learning {w} = {t} after {v} = {s} "
        f"changes the belief in {u} (explaining away)."
    )


def independence_tab(m: BayesNet) -> None:
    """Is X ⊥ Y given Z? The answer by d-separation and the active trails on the graph."""
    nodes = list(m.variables)
    ss = st.session_state
    if len(nodes) < 2:
        st.info("d-separation needs two variables.")
        return
    if ss.get("model_x") not in nodes:
        ss.model_x = nodes[0]
    c1, c2, c3 = st.columns([1, 1, 2])
    x = c1.selectbox("X (or click it on the graph)", nodes, key="model_x")
    others = [v for v in nodes if v != x]
    if ss.get("model_y") not in others:
        ss.model_y = others[-1]
    y = c2.selectbox("Y", others, key="model_y")
    rest = [v for v in others if v != y]
    if any(z not in rest for z in ss.get("model_z", [])):
        ss.model_z = [z for z in ss.model_z if z in rest]
    z = c3.multiselect("given Z", rest, key="model_z")
    sep, trails = d_separated(m.dag, x, y, z)
    given = f" given {', '.join(z)}" if z else ""
    if sep:
        st.success(plain(f"Yes: {x} ⊥ {y}{given}. Every trail between them is blocked (d-separated)."))
    else:
        st.warning(
            plain(
                f"No: {x} and {y} are d-connected{given}. Active trail{'s' if len(trails) > 1 else ''}: "
                + "; ".join(" – ".join(t) for t in trails)
                + "."
            )
        )
    _graph(m, "model_dsep_graph", "model_x", observed={v: "" for v in z}, trails=trails, label="given (Z)")
    st.caption(
        "Orange arcs: the active trails (up to five). A trail is blocked by a non-collider in Z, or by a "
        "collider with neither itself nor a descendant in Z (Koller & Friedman 2009, §3.3)."
    )


def cpt_frame(m: BayesNet, v: str) -> pd.DataFrame:
    """The CPT of ``v``: one row per parent configuration (labelled ``parent=state, ...``, the first parent
    varying slowest as in the CPT), one column per state of ``v``."""
    i = m.variables.index(v)
    index = pd.Index(parent_labels(m, v), name="given")
    return pd.DataFrame(np.asarray(m.cpts[i]), index=index, columns=list(m.states[i]))


def cpt_tab(m: BayesNet) -> None:
    """A variable's CPT as an editable table: Apply renormalises its rows and the model follows."""
    ss = st.session_state
    if ss.get("model_cpt_node") not in m.variables:
        ss.model_cpt_node = m.variables[0]
    v = st.selectbox("Variable", list(m.variables), key="model_cpt_node")
    i = m.variables.index(v)
    frame = cpt_frame(m, v)
    edited = v in state.edits()
    st.caption(
        plain(f"P({v} | {', '.join(m.variables[p] for p in m.parents[i]) or 'no parents'}): ")
        + (
            "**edited** by you."
            if edited
            else plain(f"the textbook network {m.fit_info.get('network')}'s own.")
            if m.fit_info.get("method") == "textbook"
            else f"fitted ({m.fit_info.get('method', 'fitted')})."
        )
        + " Change any entries, then Apply: each row is divided by its sum."
    )
    if len(frame) > MAX_EDIT_ROWS:
        st.info(f"This CPT has {len(frame):,} rows: shown, not editable here (at most {MAX_EDIT_ROWS:,}).")
        st.dataframe(frame, key="model_cpt_view")
        common.download(
            "This CPT (CSV)", frame.to_csv(), f"cpt_{common.slug(v)}.csv", "text/csv", key="model_dl_cpt"
        )
        return
    key = f"model_cpt_{i}_{ss.get('model_cpt_version', 0)}"
    config = {c: st.column_config.NumberColumn(format="%.4f") for c in frame.columns}
    table = st.data_editor(frame, key=key, column_config=config, width="stretch")
    zeros = [(r, c) for r in frame.index for c in frame.columns if frame.loc[r, c] == 0]
    if zeros:
        shown = "; ".join(f"{v}={c} given {r}" for r, c in zeros[:5]) + ("; …" if len(zeros) > 5 else "")
        st.warning(
            plain(
                f"Zero entries ({len(zeros)}): {shown}. Evidence with a zero-probability state is impossible."
            )
        )
    b1, b2, b3 = st.columns(3)
    if b1.button("Apply", icon=":material/check:", width="stretch", key="model_cpt_apply"):
        try:
            state.set_edit(v, table.to_numpy())
        except BnfkError as exc:
            st.error(router.message(exc))
        else:
            ss.model_cpt_version = ss.get("model_cpt_version", 0) + 1
            messages.flash("success", f"The CPT of '{v}' is edited (rows renormalised); every page follows.")
            st.rerun()
    if b2.button("Back to the fitted CPT", disabled=not edited, width="stretch", key="model_cpt_reset"):
        state.drop_edit(v)
        ss.model_cpt_version = ss.get("model_cpt_version", 0) + 1
        st.rerun()
    with b3:
        common.download(
            "This CPT (CSV)", frame.to_csv(), f"cpt_{common.slug(v)}.csv", "text/csv", key="model_dl_cpt"
        )


def downloads(m: BayesNet, name: str) -> None:
    """The whole model (its CPTs, with the edits) as BIF and as bnfk JSON."""
    c1, c2 = st.columns(2)
    with c1, common.shown_errors():
        common.download("Model (BIF)", model_to_bif(m), f"{name}.bif", "text/plain", key="model_dl_bif")
    with c2:
        common.download(
            "Model (JSON)",
            json.dumps(m.to_json_dict(), indent=1),
            f"{name}.json",
            "application/json",
            key="model_dl_json",
        )
