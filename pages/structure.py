"""Structure: learn or edit the DAG over the feature variables, see its equivalence class, import / export."""
import json

import pandas as pd
import streamlit as st

from bnfk_core.dag import (
    DAG,
    SEGMENT_KINDS,
    covered_arcs,
    cpdag,
    segment_arcs,
    v_structures,
)
from bnfk_core.errors import BnfkError, StructureError
from bnfk_core.model import model_to_bif, read_model
from bnfk_core.registry import ESTIMATORS, LEARNERS, SCORES
from bnfk_ui import common, figures, state

SEGMENT_HELP = {
    "single-arc": ("Single arc", 2, "u → v"),
    "v": ("V-structure", 3, "u → w ← v"),
    "a": ("A-structure (common parent)", 3, "v ← u → w"),
    "chain": ("Chain", 3, "w → u → v"),
    "full": ("Fully connected", None, "x₁ → x₂ → … with every earlier variable a parent of every later one"),
}


def message(slot: str):
    """Show (once) the outcome of the last action of a control group."""
    msg = st.session_state.pop(f"msg_{slot}", None)
    if msg:
        getattr(st, msg[0])(msg[1])


def act(slot: str, fn, *args, ok: str | None = None):
    """Run a structure edit in a callback; a StructureError becomes a message next to the control."""
    def cb():
        try:
            fn(*args)
            if ok:
                st.session_state[f"msg_{slot}"] = ("success", ok if isinstance(ok, str) else ok())
        except BnfkError as exc:
            st.session_state[f"msg_{slot}"] = ("error", str(exc))
    return cb


if common.start("Structure"):
    ss = st.session_state
    feat = state.feature_data()
    dg = state.dag()
    seg = ss.structure.get("segment")
    seg_arcs = []
    if seg:
        try:
            seg_arcs = [a for a in segment_arcs(seg[0], list(seg[1])) if dg.has_arc(*a)]
        except StructureError:
            seg_arcs = []
    cov = covered_arcs(dg)

    fig_col, info_col = st.columns([3, 1.25], gap="medium")
    with info_col:
        st.markdown(f"**{state.structure_label()}**")
        with common.shown_errors():
            m = state.model()
            sc = state.scores()
            c1, c2 = st.columns(2)
            c1.metric("Arcs", dg.n_arcs)
            c2.metric("Parameters", f"{m.parameter_count():,}", help="Free parameters Σ q_i (r_i − 1).")
            learned = state.scores(DAG.from_dict(ss.structure["learned"]))
            table = pd.DataFrame({"score": [SCORES[s].label for s in SCORES],
                                  "value": [sc[s] for s in SCORES],
                                  "Δ vs learned": [sc[s] - learned[s] for s in SCORES]})
            st.dataframe(table, hide_index=True, width="stretch",
                         column_config={"value": st.column_config.NumberColumn(format="%.1f"),
                                        "Δ vs learned": st.column_config.NumberColumn(format="%+.1f")})
            st.caption(f"Log scores on the {int(feat.complete_rows().sum()):,} complete rows; higher is better.")
        st.selectbox("Parameters", list(ESTIMATORS), format_func=ESTIMATORS.labels().get,
                     **state.bind("param_method"))
        b1, b2 = st.columns(2)
        b1.button("Undo", icon=":material/undo:", disabled=not ss.structure["undo"], width="stretch",
                  on_click=act("top", state.undo))
        b2.button("Reset", icon=":material/restart_alt:", width="stretch",
                  help=f"Back to the last learned structure ({ss.structure['learned_label']}).",
                  on_click=act("top", lambda: state.set_dag(DAG.from_dict(ss.structure["learned"]),
                                                            ss.structure["learned_label"])))
        st.button("Start empty", icon=":material/crop_free:", width="stretch",
                  on_click=act("top", lambda: state.set_dag(DAG(feat.variables), "Empty network")))
        message("top")
    with fig_col:
        info = {v: f"<b>{v}</b><br>{len(feat.states[i])} levels<br>parents: {', '.join(dg.parents(v)) or '—'}"
                for i, v in enumerate(feat.variables)}
        fig = figures.dag_figure(dg.nodes, dg.sorted_arcs(), highlight=seg_arcs, covered=cov, node_info=info)
        st.plotly_chart(fig, key="dag_chart", config={"displaylogo": False, "scrollZoom": True})
        if seg_arcs:
            st.caption(f"Orange: the arcs of the last edit ({seg[0]} on {', '.join(seg[1])}). "
                       "Green: covered arcs — reversing one keeps the Markov equivalence class and the Fisher kernel.")
        elif cov:
            st.caption("Green: covered arcs — reversing one keeps the Markov equivalence class and the Fisher kernel.")

    t_learn, t_edit, t_seg, t_eq, t_io = st.tabs(["Learn", "Edit arcs", "Segment presets", "Equivalence class",
                                                  "Import / export"])

    # ------------------------------------------------------------------ learn
    with t_learn:
        c1, c2, c3 = st.columns([2, 1, 1])
        with c1:
            method = st.selectbox("Method", list(LEARNERS), format_func=LEARNERS.labels().get,
                                  **state.bind("learn_method"))
        with c2:
            st.selectbox("Score", list(SCORES), format_func=SCORES.labels().get,
                         help="Optimised by hill climbing and exact search; reported for the other methods.",
                         **state.bind("learn_score"))
            st.number_input("Seed (hill-climbing ties)", min_value=0, step=1, **state.bind("learn_seed"))
        with c3:
            st.number_input("Max parents (0 = no bound)", min_value=0, max_value=10, step=1,
                            disabled=method not in ("hc", "exact"), **state.bind("learn_max_parents"))
            st.number_input("k (KDB feature parents)", min_value=0, max_value=5, step=1, disabled=method != "kdb",
                            **state.bind("learn_k"))
        if method == "exact" and feat.n_vars > 20:
            st.warning(f"Exact search handles at most 20 variables; these data have {feat.n_vars}.")
        if st.button("Learn structure", type="primary", icon=":material/play_arrow:"):
            with st.status(f"Learning ({LEARNERS[method].label.split(' (')[0]})…", expanded=True) as status:
                bar = st.progress(0.0, text="counting")
                try:
                    res = state.learn(method, ss.learn_score, ss.learn_k, ss.learn_max_parents or None,
                                      ss.learn_seed,
                                      progress=lambda f, msg: bar.progress(min(max(f, 0.0), 1.0), text=msg))
                except BnfkError as exc:
                    status.update(label="Learning failed", state="error")
                    st.error(str(exc))
                else:
                    label = f"{LEARNERS[method].label.split(' (')[0]}" + (
                        f" ({SCORES[ss.learn_score].label})" if method in ("hc", "exact") else "")
                    state.set_dag(res.dag, label, learned=True, notes=res.notes)
                    status.update(label=f"Learned {label}: {res.dag.n_arcs} arcs in {res.seconds:.1f} s",
                                  state="complete")
                    st.rerun()
        notes = ss.structure.get("notes") or []
        if notes:
            st.caption(f"Last learned: **{ss.structure['learned_label']}** — " + "; ".join(notes) + ".")

    # ------------------------------------------------------------------ edit
    with t_edit:
        nodes = list(dg.nodes)
        c1, c2 = st.columns(2, gap="large")
        with c1:
            st.markdown("**Add an arc**")
            a1, a2 = st.columns(2)
            u = a1.selectbox("From", nodes, key="w_add_from")
            v = a2.selectbox("To", [x for x in nodes if x != u], key="w_add_to")
            st.button("Add arc", icon=":material/add:",
                      on_click=act("edit", state.edit, "add", u, v, ok=f"Added {u} → {v}."))
        with c2:
            st.markdown("**Change an existing arc**")
            arcs = dg.sorted_arcs()
            if arcs:
                arc = st.selectbox("Arc", arcs, format_func=lambda a: f"{a[0]} → {a[1]}", key="w_arc")
                e1, e2 = st.columns(2)
                e1.button("Remove", icon=":material/remove:", width="stretch",
                          on_click=act("edit", state.edit, "remove", *arc, ok=f"Removed {arc[0]} → {arc[1]}."))
                e2.button("Reverse", icon=":material/swap_vert:", width="stretch",
                          on_click=act("edit", state.edit, "reverse", *arc, ok=f"Reversed {arc[0]} → {arc[1]}."))
            else:
                st.caption("The structure has no arcs yet.")
        message("edit")

    # ------------------------------------------------------------------ segments
    with t_seg:
        c1, c2 = st.columns([1, 2], gap="large")
        with c1:
            kind = st.selectbox("Preset", SEGMENT_KINDS, format_func=lambda k: SEGMENT_HELP[k][0], key="w_seg_kind")
            name, need, pattern = SEGMENT_HELP[kind]
            st.caption(f"Pattern: {pattern}")
        with c2:
            chosen = st.multiselect(f"Variables ({'exactly ' + str(need) if need else 'two or more'}, in order: "
                                    f"{'u, v, w' if need == 3 else 'u, v' if need == 2 else 'x₁, x₂, …'})",
                                    list(dg.nodes), max_selections=need, key=f"w_seg_vars_{kind}")
            preview = []
            try:
                preview = segment_arcs(kind, chosen) if chosen else []
            except StructureError:
                pass
            if preview:
                st.caption("Adds " + ", ".join(f"{a} → {b}" for a, b in preview)
                           + " (an opposite arc between two of them is replaced).")
        st.button("Apply preset", type="primary", icon=":material/account_tree:", disabled=not chosen,
                  on_click=act("seg", state.segment, kind, tuple(chosen),
                               ok=f"Applied the {name.lower()} on {', '.join(chosen)}."))
        message("seg")

    # ------------------------------------------------------------------ equivalence
    with t_eq:
        cp = cpdag(dg)
        undirected = [tuple(sorted(e)) for e in cp.undirected]
        pos = None
        from bnfk_core.layout import layered_layout
        pos = layered_layout(dg.nodes, dg.sorted_arcs())
        c1, c2 = st.columns([3, 1.25], gap="medium")
        with c1:
            cfig = figures.dag_figure(dg.nodes, sorted(cp.directed), undirected=undirected, pos=pos,
                                      title="CPDAG (essential graph) of the current structure")
            st.plotly_chart(cfig, key="cpdag_chart", config={"displaylogo": False})
        with c2:
            st.metric("Compelled arcs", len(cp.directed))
            st.metric("Reversible edges", len(cp.undirected))
            st.metric("v-structures", len(v_structures(dg)))
            st.caption("Every DAG with this skeleton and these v-structures is Markov equivalent: same "
                       "likelihood scores (BIC, AIC, qNML) and the same Fisher kernel.")
            if cov:
                st.markdown("**Covered arcs** (reverse one to move within the class): "
                            + ", ".join(f"{a} → {b}" for a, b in cov))
        common.download_figure(cfig, f"{common.dataset_name()}_cpdag", "CPDAG figure (HTML)")

    # ------------------------------------------------------------------ import / export
    with t_io:
        c1, c2 = st.columns(2, gap="large")
        with c1:
            st.markdown("**Export**")
            with common.shown_errors():
                m = state.model()
                base = common.dataset_name()
                common.download("Model (BIF)", model_to_bif(m).encode("utf-8"), f"{base}_model.bif", "text/plain")
                common.download("Model (JSON)", json.dumps(m.to_json_dict(), indent=1).encode("utf-8"),
                                f"{base}_model.json", "application/json")
                common.download("Structure only (JSON)", json.dumps(dg.to_dict(), indent=1).encode("utf-8"),
                                f"{base}_structure.json", "application/json")
                common.download_figure(fig, f"{base}_dag", "DAG figure (HTML)")
        with c2:
            st.markdown("**Import a structure**")
            up = st.file_uploader("A BIF or bnfk JSON model over the same variables", type=["bif", "json"],
                                  key="w_model_upload")
            if up is not None and st.button("Use this structure", icon=":material/upload:"):
                try:
                    raw = up.getvalue()
                    try:
                        d = json.loads(raw)
                        imported = DAG.from_dict(d) if "arcs" in d and "cpts" not in d else None
                    except (ValueError, KeyError, TypeError, BnfkError):
                        imported = None
                    if imported is None:
                        imported = read_model(state.io_bytes(up.name, raw)).dag
                    missing = [x for x in feat.variables if x not in imported.nodes]
                    extra = [x for x in imported.nodes if x not in feat.variables]
                    if missing or extra:
                        raise StructureError(
                            f"{up.name} does not match the data: "
                            + (f"it lacks {', '.join(missing[:5])}" if missing else "")
                            + ("; " if missing and extra else "")
                            + (f"it has unknown variable(s) {', '.join(extra[:5])}" if extra else "") + ".")
                    state.set_dag(imported.subgraph(feat.variables), f"imported from {up.name}")
                    state.flash("success", f"Imported the structure of {up.name}; parameters are re-fitted on the data.")
                    st.rerun()
                except BnfkError as exc:
                    st.error(str(exc))
