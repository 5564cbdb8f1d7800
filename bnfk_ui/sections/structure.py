"""Tabs of the Structure page: learn, edit arcs, segment presets, the equivalence class, import / export.

Each function draws one tab; a structure change goes through :mod:`bnfk_ui.state` (``edit``, ``segment``,
``set_dag``), which keeps the undo history, and its outcome is shown next to the control that caused it."""

import json

import numpy as np
import pyarrow as pa
import streamlit as st

from bnfk_core.errors import BnfkError, StructureError
from bnfk_core.kernels.embed import class_order, cluster_order
from bnfk_core.network.dag import (
    DAG,
    SEGMENT_KINDS,
    SEGMENT_LABELS,
    SEGMENT_PATTERNS,
    SEGMENT_READING,
    SEGMENT_SIZES,
    apply_segment,
    cpdag,
    segment_arcs,
    segment_pattern,
    segment_roles,
    v_structures,
)
from bnfk_core.network.dsep import segment_independencies
from bnfk_core.network.formats import MODEL_EXTENSIONS, read_structure
from bnfk_core.network.layout import layered_layout
from bnfk_core.network.model import model_to_bif
from bnfk_core.registry import LEARNERS, MISSING_DATA, SCORES
from bnfk_core.views import figures
from bnfk_core.views.figures import kernel as fig_kernel

from .. import common, jobs, live, router
from ..state import bigfiles, caches, charts, choices, hybrid, messages, pairs, shared, structure, tables
from ..state import model as model_state
from . import hybrid as hybrid_section
from . import knowledge as knowledge_section

#: the role names of each segment, in role order (:func:`bnfk_core.network.dag.segment_arcs`)
_ROLES = {"single-arc": ["u", "v"], "v": ["u", "v", "w"], "a": ["u", "v", "w"], "chain": ["u", "v", "w"]}

__all__ = [
    "message",
    "act",
    "learn_tab",
    "edit_panel",
    "scores_panel",
    "presets_tab",
    "equivalence_tab",
    "io_tab",
    "arc_actions",
    "live_panel",
]


def message(slot: str) -> None:
    """Show (once) the outcome of the last action of a control group."""
    msg = st.session_state.pop(f"msg_{slot}", None)
    if msg:
        getattr(st, msg[0])(messages.plain(msg[1], router.MAX_MESSAGE))


def act(slot: str, fn, *args, ok: str | None = None):
    """A button callback running a structure edit; a BnfkError becomes a message next to the control."""

    def cb():
        try:
            fn(*args)
            if ok:
                st.session_state[f"msg_{slot}"] = ("success", ok)
        except BnfkError as exc:
            st.session_state[f"msg_{slot}"] = ("error", str(exc))

    return cb


def _short(method: str) -> str:
    return LEARNERS[method].label.split(" (")[0]


def _method_label(method: str, score: str) -> str:
    name = _short(method)
    return f"{name} ({SCORES[score].label})" if LEARNERS[method].uses_score else name


def learn_tab(feat) -> None:
    ss = st.session_state
    if hybrid.on():  # numbers kept: the hybrid learner first
        hybrid_section.learn_panel()
    c1, c2, c3 = st.columns([2, 1, 1])
    method = c1.selectbox(
        "Method", list(LEARNERS), format_func=LEARNERS.labels().get, **choices.bind("learn_method")
    )
    spec = LEARNERS[method]  # the learner's own facts: which options it reads, how many variables it handles
    c2.selectbox(
        "Score",
        list(SCORES),
        format_func=SCORES.labels().get,
        help=f"Optimised by {', '.join(map(_short, LEARNERS.names(uses_score=True)))}; reported for the "
        "other methods.",
        **choices.bind("learn_score"),
    )
    common.seed_input(
        "Seed (ties)",
        "learn_seed",
        c2,
        help=f"Breaks ties in {', '.join(_short(m) for m in LEARNERS if LEARNERS[m].applies('seed'))}.",
    )
    c3.number_input(
        "Max parents (0 = no bound)",
        min_value=0,
        max_value=10,
        step=1,
        disabled=not spec.applies("max_parents"),
        **choices.bind("learn_max_parents"),
    )
    c3.number_input(
        "k (KDB feature parents)",
        min_value=0,
        max_value=5,
        step=1,
        disabled=not spec.applies("k"),
        **choices.bind("learn_k"),
    )
    too_wide = spec.too_wide(feat.n_vars)
    if too_wide:
        st.warning(too_wide)
    arcs = knowledge_section.arcs_inputs(feat, method)  # forbidden / required arcs (None: they cannot hold)
    if st.button("Learn structure", type="primary", icon=":material/play_arrow:", disabled=arcs is None):
        label = _method_label(method, ss.learn_score)
        with st.status(f"Learning ({label})…", expanded=True) as status:
            bar = st.progress(0.0, text="counting")
            try:
                with jobs.heavy("learning"):
                    learned = structure.learn(
                        method,
                        ss.learn_score,
                        ss.learn_k,
                        ss.learn_max_parents or None,
                        ss.learn_seed,
                        progress=jobs.progress(bar),
                        **arcs,
                    )
            except BnfkError as exc:
                status.update(label="Learning failed", state="error")
                st.error(router.message(exc))
            else:
                try:  # with numbers kept, a discrete learner's arc from a number into a category is refused
                    structure.set_dag(learned.dag, label, learned=True, notes=learned.notes)
                except StructureError as exc:
                    status.update(label="The learned network breaks the hybrid family", state="error")
                    st.error(router.message(exc))
                    return
                status.update(
                    label=f"Learned {label}: {learned.dag.n_arcs} arcs in {learned.result.seconds:.1f} s",
                    state="complete",
                )
                st.rerun()
    notes = ss.structure.get("notes") or []
    if notes:
        st.caption(
            f"Last learned: **{messages.plain(ss.structure['learned_label'])}** — "
            + "; ".join(messages.plain(n) for n in notes)
            + "."
        )
    knowledge_section.bootstrap_panel(feat, method, arcs)


def edit_panel(dg: DAG) -> None:
    """The arc edits beside the graph: Remove / Reverse for the arc picked by a click on its dot, then adding
    an arc and changing an existing one from lists; each outcome is shown under its control."""
    st.markdown("**Edit arcs**")
    arc_actions()
    message("live")
    nodes = list(dg.nodes)
    u = st.selectbox("Add an arc from", nodes, key="w_add_from")
    v = st.selectbox("Add an arc to", [x for x in nodes if x != u], key="w_add_to")
    st.button(
        "Add arc",
        icon=":material/add:",
        width="stretch",
        on_click=act("edit", structure.edit, "add", u, v, ok=f"Added {u} → {v}."),
    )
    arcs = dg.sorted_arcs()
    if arcs:
        arc = st.selectbox(
            "Change an existing arc", arcs, format_func=lambda a: f"{a[0]} → {a[1]}", key="w_arc"
        )
        e1, e2 = st.columns(2)
        e1.button(
            "Remove",
            icon=":material/remove:",
            width="stretch",
            on_click=act("edit", structure.edit, "remove", *arc, ok=f"Removed {arc[0]} → {arc[1]}."),
        )
        e2.button(
            "Reverse",
            icon=":material/swap_vert:",
            width="stretch",
            on_click=act("edit", structure.edit, "reverse", *arc, ok=f"Reversed {arc[0]} → {arc[1]}."),
        )
    else:
        st.caption("The structure has no arcs yet.")
    message("edit")


def _score_table(labels: tuple, values: tuple, deltas: tuple) -> pa.Table:
    """The scores beside the graph as an Arrow table (made once per structure and shared: a table Streamlit
    sends as it is, without converting a pandas frame on every run)."""
    return pa.table({"score": list(labels), "value": list(values), "Δ vs learned": list(deltas)})


def scores_panel(dg: DAG) -> None:
    """Beside the graph: its arcs and free parameters, and every registered score of the structure with its
    change since the last learned one."""
    ss = st.session_state
    m = model_state.session_model()
    sc = caches.scores()
    c1, c2 = st.columns(2)
    c1.metric("Arcs", dg.n_arcs)
    c2.metric("Parameters", f"{m.parameter_count():,}", help="Free parameters Σ q_i (r_i − 1).")
    learned = caches.scores(DAG.from_dict(ss.structure["learned"]))
    table = shared.shared(
        _score_table,
        tuple(SCORES[s].label for s in SCORES),
        tuple(sc[s] for s in SCORES),
        tuple(sc[s] - learned[s] for s in SCORES),
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={
            "value": st.column_config.NumberColumn(format="%.1f"),
            "Δ vs learned": st.column_config.NumberColumn(format="%+.1f"),
        },
    )
    common.complete_rows_notice("Log scores")


def _independence_text(kind: str, variables: list, picked: list) -> str:
    """The independencies the segment implies, from d-separation on the segment's own graph
    (:func:`bnfk_core.network.dsep.segment_independencies`): "A ⊥ C | B", "A ⊥ C, but not given B"."""
    at = {v: i for i, v in enumerate(picked)}  # each pair written in the order the variables were picked
    rows = sorted(
        (tuple(sorted((x, y), key=at.get)), given, sep)
        for x, y, given, sep in segment_independencies(kind, variables)
    )
    rows = [(x, y, given, sep) for (x, y), given, sep in sorted(rows, key=lambda r: [at[v] for v in r[0]])]
    parts = []
    for x, y in {(x, y): None for x, y, _, _ in rows}:
        sets = [(given, sep) for a, b, given, sep in rows if (a, b) == (x, y)]
        seps = [g for g, sep in sets if sep]
        deps = [g for g, sep in sets if not sep and g]
        for g in seps:
            text = f"{x} ⊥ {y}" + (f" | {', '.join(g)}" if g else "")
            if not g and deps:
                text += ", but not given " + " or ".join(", ".join(d) for d in deps)
            parts.append(text)
    return "; ".join(parts) or "no independence"


def _kernel_text(kind: str, variables: list) -> str:
    """What the segment does to the Fisher kernel, as its terms: each variable's term K(child | parents)
    compares two rows on the variable given its parents (thesis §6.1)."""
    arcs = segment_arcs(kind, variables)
    terms = []
    for v in variables:
        pa_ = [a for a, b in arcs if b == v]
        terms.append(f"K({v} | {', '.join(pa_)})" if pa_ else f"K({v})")
    return " + ".join(terms)


def _keep_seg_vars() -> None:
    st.session_state.seg_preset_vars = list(st.session_state.w_seg_vars)


#: the graph beside the presets stays in view while the page scrolls down their rows
_STICKY = (
    "<style>div[data-testid='stLayoutWrapper']:has(> .st-key-seg_graph)"
    "{position:sticky;top:3.75rem;z-index:2;background:white}"
    "div[data-testid='stColumn']:has(.st-key-seg_graph){align-self:stretch}</style>"
)

#: the short names of the presets on their buttons
_SHORT = {
    "single-arc": "Single arc",
    "v": "V-structure",
    "a": "A-structure",
    "chain": "Chain",
    "full": "Fully connected",
}


def presets_tab(dg: DAG, fig=None) -> None:
    """The segment presets: the variables (kept from preset to preset, picked in the order the patterns
    read), then one row per preset -- its button, the segment it builds with the names and roles, the
    independencies it implies and the kernel's terms -- and the graph beside them, so an Apply is seen where
    it is clicked."""
    ss = st.session_state
    c1, c2 = st.columns([1.4, 1], gap="medium")
    with c1:
        if "w_seg_vars" not in ss:
            kept = [v for v in ss.get("seg_preset_vars", []) if v in dg.nodes]
            ss.w_seg_vars = kept or structure.preset_picks(dg)
        chosen = st.multiselect(
            "Variables A, B, C, in the order the patterns read (kept from preset to preset)",
            list(dg.nodes),
            key="w_seg_vars",
            on_change=_keep_seg_vars,
        )
        ss.seg_preset_vars = list(chosen)  # kept when the page is left (suggested ones included)
        if len(chosen) < 2:
            st.caption("Pick three variables (two for a single arc): each preset below is then one click.")
        for kind in SEGMENT_KINDS:
            need = SEGMENT_SIZES.get(kind)
            used = chosen[:need] if need else chosen
            ok = len(used) == (need or len(used)) and len(used) >= 2
            roles = segment_roles(kind, used) if ok else None
            cycle = None
            if ok:  # said before the click: a preset that would close a directed cycle is not offered
                try:
                    apply_segment(dg, kind, roles)
                except StructureError as exc:
                    cycle = str(exc)
            b, t = st.columns([1, 3.2], vertical_alignment="center")
            b.button(
                _SHORT[kind],
                key=f"seg_apply_{kind}",
                type="primary" if ok and not cycle else "secondary",
                disabled=not ok or cycle is not None,
                width="stretch",
                help=f"{SEGMENT_LABELS[kind]}: {SEGMENT_PATTERNS[kind]} (roles in reading order: "
                + " ".join(SEGMENT_READING.get(kind, ("x₁", "x₂", "…")))
                + "). Replaces the arcs among its variables; arcs to the others stay.",
                on_click=act(
                    "seg",
                    structure.segment,
                    kind,
                    tuple(roles or ()),
                    ok=f"Applied the {SEGMENT_LABELS[kind].lower()} "
                    f"{segment_pattern(kind, roles) if roles else ''}.",
                ),
            )
            if not ok:
                t.caption(f"{SEGMENT_PATTERNS[kind]}: needs {need or 'two or more'} variables.")
                continue
            role_names = _ROLES.get(kind, [f"x{i + 1}" for i in range(len(roles))])
            t.markdown(
                f"**{messages.plain(segment_pattern(kind, roles))}** · implies "
                + messages.plain(_independence_text(kind, roles, used))
            )
            t.caption(
                "roles "
                + ", ".join(f"{r} = {messages.plain(v)}" for r, v in zip(role_names, roles))
                + " · kernel "
                + messages.plain(_kernel_text(kind, roles))
                + (f" · not offered: {messages.plain(cycle)}" if cycle else "")
            )
        message("seg")
        now = sorted(a_ for a_ in dg.arcs if a_[0] in chosen and a_[1] in chosen)
        if chosen:
            st.caption(
                "Now among them: "
                + (", ".join(f"{messages.plain(x)} → {messages.plain(y)}" for x, y in now) or "no arc")
                + ". A preset replaces these with its own arcs (arcs to the other variables stay). Kernel: "
                "a child's term compares two rows on the child given its parents (thesis §6.1)."
            )
    if fig is not None:  # the graph beside the presets, kept in view while the rows scroll: an Apply is seen
        st.html(_STICKY)
        with c2.container(key="seg_graph"):
            charts.plotly_chart(fig, key="dag_chart_presets", config={"displaylogo": False})


def equivalence_tab(dg: DAG, covered: list) -> None:
    cp = cpdag(dg)
    c1, c2 = st.columns([3, 1.25], gap="medium")
    cfig = figures.dag_figure(
        dg.nodes,
        sorted(cp.directed),
        undirected=[tuple(sorted(e)) for e in cp.undirected],
        pos=layered_layout(dg.nodes, dg.sorted_arcs()),
        title="CPDAG (essential graph) of the current structure",
    )
    charts.plotly_chart(cfig, key="cpdag_chart", config={"displaylogo": False}, where=c1)
    with c2:
        st.metric("Compelled arcs", len(cp.directed))
        st.metric("Reversible edges", len(cp.undirected))
        st.metric("v-structures", len(v_structures(dg)))
        st.caption(
            "Every DAG with this skeleton and these v-structures is Markov equivalent: same "
            "likelihood scores (BIC, AIC, qNML) and the same Fisher kernel."
        )
        if covered:
            st.markdown(
                "**Covered arcs** (reverse one to move within the class): "
                + ", ".join(f"{messages.plain(a)} → {messages.plain(b)}" for a, b in covered)
            )
    common.download_figure(cfig, f"{common.dataset_name()}_cpdag", "CPDAG figure (HTML)")


def io_tab(feat, dg: DAG, dag_fig) -> None:
    c1, c2 = st.columns(2, gap="large")
    with c1:
        st.markdown("**Export**")
        with common.shown_errors():
            m, base = model_state.session_model(), common.dataset_name()
            # each file is written when its button is clicked, not on every run of the page
            common.download(
                "Model (BIF)", lambda: model_to_bif(m).encode("utf-8"), f"{base}_model.bif", "text/plain"
            )
            common.download(
                "Model (JSON)",
                lambda: json.dumps(m.to_json_dict(), indent=1).encode("utf-8"),
                f"{base}_model.json",
                "application/json",
            )
            common.download(
                "Structure only (JSON)",
                lambda: json.dumps(dg.to_dict(), indent=1).encode("utf-8"),
                f"{base}_structure.json",
                "application/json",
            )
            common.download_figure(dag_fig, f"{base}_dag", "DAG figure (HTML)")
    with c2:
        st.markdown("**Import a structure**")
        up = st.file_uploader(
            "A model over the same variables (BIF, XMLBIF, Hugin NET, XDSL or bnfk JSON)",
            type=[ext.lstrip(".") for ext in MODEL_EXTENSIONS],
            key="w_model_upload",
        )
        if up is not None and st.button("Use this structure", icon=":material/upload:"):
            try:
                imported = read_structure(up.getvalue(), up.name).over(feat.variables, up.name)
            except BnfkError as exc:
                st.error(router.message(exc))
            else:
                structure.set_dag(imported, f"imported from {up.name}")
                messages.flash(
                    "success", f"Imported the structure of {up.name}; parameters are re-fitted on the data."
                )
                st.rerun()


def arc_actions() -> None:
    """Remove / Reverse buttons for the arc picked by a click on its dot in the graph."""
    ss = st.session_state
    arc = ss.get("live_arc")
    if not arc or not structure.dag().has_arc(*arc):
        return
    u, v = arc
    st.info(f"Picked arc **{messages.plain(u)} → {messages.plain(v)}**", icon=":material/arrow_right_alt:")
    c1, c2 = st.columns(2)
    c1.button(
        "Remove",
        icon=":material/remove:",
        key="live_remove",
        width="stretch",
        on_click=act("live", _arc_edit, "remove", u, v, ok=f"Removed {u} → {v}."),
    )
    c2.button(
        "Reverse",
        icon=":material/swap_vert:",
        key="live_reverse",
        width="stretch",
        on_click=act("live", _arc_edit, "reverse", u, v, ok=f"Reversed {u} → {v}."),
    )
    st.button("Cancel", key="live_cancel", width="stretch", on_click=lambda: ss.pop("live_arc", None))


def _arc_edit(kind: str, u: str, v: str) -> None:
    structure.edit(kind, u, v)
    st.session_state.pop("live_arc", None)


def _drawn(lk, labels: np.ndarray) -> np.ndarray:
    """Positions of the live rows drawn, in plotted order: at most ``figures.DRAW_ROWS`` of them, evenly
    spaced through the (seeded, random) sample, ordered among themselves by class (clustered inside) or by
    clustering -- once per data (ordering only the drawn rows: 2,000 rows took seconds, 400 take
    milliseconds)."""
    ss = st.session_state
    key = ss._live[0]
    saved = ss.get("_live_drawn")
    if saved is None or saved[0] != key:  # the order of the structure this session first saw, made once per
        pick = figures.evenly_drawn(np.arange(len(labels)))  # server for it (every student starts alike)
        K = shared.keyed(
            lk.gram()[np.ix_(pick, pick)], (key, tuple(lk.dag.sorted_arcs()), tuple(pick.tolist()))
        )
        ss._live_drawn = (key, pick[shared.shared(_order, K, labels[pick])])
    return ss._live_drawn[1]


def _order(K: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Rows by class, clustered inside (or clustered, without a class column), of a Gram matrix."""
    return class_order(labels, K) if (labels >= 0).any() else cluster_order(K)


def _live_digest(lk, K: np.ndarray):
    """A key of the live Gram matrix's content: its bytes hashed once per structure the session's live kernel
    moves to (the matrix is edited in place, so it cannot be hashed once for good like a cached one)."""
    ss = st.session_state
    tag = (ss._live[0], id(lk), tuple(lk.dag.sorted_arcs()), K.shape)
    saved = ss.get("_live_digest")
    if saved is None or saved[0] != tag:
        ss._live_digest = saved = (tag, shared.content_key(K))
    return saved[1]


def live_panel(feat) -> None:
    """The Fisher Gram matrix of the current structure and one pair's per-variable terms, updated in place
    after every edit (:class:`bnfk_core.kernels.live.LiveKernel`: only the changed terms are recomputed)."""
    lk, rows = live.live_kernel()
    K = lk.gram()
    d = tables.data()
    labels = d.labels()[rows] if d.class_column else np.full(len(rows), -1)
    cls_states = d.states[d.index(d.class_column)] if d.class_column else ()
    drawn = _drawn(lk, labels)
    c1, c2 = st.columns([1.1, 1], gap="medium")
    charts.plotly_chart(
        shared.shared(
            figures.gram_figure,
            shared.keyed(K, _live_digest(lk, K)),
            drawn,
            rows,
            labels,
            cls_states,
            title="Fisher kernel, live",
            height=430,
        ),
        key="live_gram",
        config={"displaylogo": False},
        where=c1,
    )
    a, b = (
        pairs.default_pair(K, [int(r) for r in rows])
        if not st.session_state.get("pair")
        else st.session_state.pair
    )
    pos = {int(r): k for k, r in enumerate(rows)}
    if a not in pos or b not in pos:
        a, b = pairs.default_pair(K, [int(r) for r in rows])
    contrib = lk.contributions(pos[a], pos[b])
    vals = lambda r: ["(missing)" if (x := d.frame.at[r, v]) is None else x for v in lk.dag.nodes]  # noqa: E731
    charts.plotly_chart(
        shared.shared(fig_kernel.pair_figure, list(lk.dag.nodes), contrib, vals(a), vals(b), a, b, "Fisher"),
        key="live_contrib",
        config={"displaylogo": False},
        where=c2,
    )
    info = lk.last_update
    how = (
        f"last edit: {1000 * info['seconds']:.0f} ms, {len(info.get('rebuilt', ()))} term(s) rebuilt and "
        f"{len(info.get('rescaled', ()))} rescaled"
        if info
        else f"built in {1000 * lk.seconds_build:.0f} ms"
    )
    st.caption(
        f"{len(rows):,} rows"
        + (f" (a seeded sample of {feat.n_rows:,})" if len(rows) < feat.n_rows else "")
        + (
            f", {len(drawn):,} of them drawn (evenly spaced through the sample)"
            if len(drawn) < len(rows)
            else ""
        )
        + f"; {how}. Rows A = #{a} and B = #{b} (pick others on the Kernel page)."
        + (
            f" On this large file the live kernel is fitted on a seeded sample (seed "
            f"{int(st.session_state.view_seed)}) of its {tables.full_data().n_rows:,} rows; the structure "
            "and its scores use all rows."
            if bigfiles.streamed() is not None
            else ""
        )
        + (
            " This table has missing cells: the live kernel counts each family's CPT from the rows where it "
            "is "
            "observed (so one edit rebuilds only its terms), while the network the other pages use fits them "
            "by "
            "EM, as the recipe says."
            if lk.data.has_missing and MISSING_DATA[structure.recipe().missing_data].every_row
            else ""
        )
    )
