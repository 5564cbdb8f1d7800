"""Segments lab (thesis ch. 6): add one structure segment to a base network and see what it does to the
Fisher kernel -- heatmaps, clustering, imputation, prototypes, the case table (theory vs measured), the
collapsed variable, Markov equivalence -- and run the supervised arc search."""
import io
import json

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core import kernels
from bnfk_core.analyses import cluster as C
from bnfk_core.analyses import prototypes as P
from bnfk_core.analyses import segments as S
from bnfk_core.dag import DAG, apply_segment
from bnfk_core.embed import class_order, cluster_order, sample_rows
from bnfk_core.errors import BnfkError
from bnfk_core.registry import ESTIMATORS
from bnfk_ui import common, state
from bnfk_ui.figures import segments as figs

KINDS = {"single-arc": "Single arc  u → v", "v": "V-structure  u → w ← v", "a": "A-structure  u → v, u → w",
         "chain": "Chain  w → u → v", "full": "Fully connected (one collapsed variable)"}
BASES = {"empty": "Empty network (scaled-Hamming)", "current": "Current structure (Structure page)"}
SIZES = {"single-arc": 2, "v": 3, "a": 3, "chain": 3}
DEFAULTS = {"seg_kind": "single-arc", "seg_base": "empty", "seg_rows": 300, "seg_seed": 0, "seg_restarts": 25,
            "seg_missing": 0.2, "seg_protos": 20, "seg_arcs": 2, "seg_full_m": 3}
MAX_ROWS = 1500
PLOTLY = {"displaylogo": False}


@st.cache_data(show_spinner=False, max_entries=32)
def _suggest(_data, fingerprint: str, kind: str) -> pd.DataFrame:
    return S.mi_ranking(_data, kind, top=10)


@st.cache_data(show_spinner=False, max_entries=32)
def _gram(_model, model_key: str, _feat, fingerprint: str, rows: tuple) -> np.ndarray:
    return kernels.gram(_model, _feat.subset(np.asarray(rows)))


@st.cache_data(show_spinner=False, max_entries=64)
def _aris(K: np.ndarray, labels: np.ndarray, k: int, restarts: int, seed: int) -> dict:
    return S.clustering_aris(K, labels, k, restarts=restarts, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _imputation(_feat, fingerprint: str, dag_key: str, params: str, missing: float, seed: int) -> dict:
    return S.imputation_check(_feat, DAG.from_dict(json.loads(dag_key)), params=params, missing=missing, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _prototypes(_m1, _m2, keys: tuple, _feat, fingerprint: str, k: int, seed: int) -> dict:
    return P.compare_prototypes([_m1, _m2], _feat, k, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _edits(_m, model_key: str, _feat, fingerprint: str, rows: tuple, params: str, _K: np.ndarray) -> list:
    return S.edit_effects(_m, _feat, S.equivalence_edits(_m.dag), params=params, rows=np.asarray(rows), K=_K)


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def controls(d, feat):
    ss = st.session_state
    c1, c2, c3 = st.columns([1.2, 2.2, 1])
    kind = c1.selectbox("Segment", list(KINDS), format_func=KINDS.get, **state.bind("seg_kind"))
    if kind == "full":
        c1.number_input("Variables in the full segment", 2, min(6, feat.n_vars), **state.bind("seg_full_m"))
    c1.radio("Base network", list(BASES), format_func=BASES.get, **state.bind("seg_base"))
    need = SIZES.get(kind, int(ss.seg_full_m))
    sug = _suggest(d, d.fingerprint(), kind if kind != "full" or need == 3 else "single-arc")
    options = [", ".join(v) for v in sug.variables]
    fmt = {o: f"{o}   (score {s:.3f} nats)" for o, s in zip(options, sug.score)}
    if ss.get("seg_vars") is None or ss.get("seg_vars_kind") != (kind, need) \
            or any(v not in feat.variables for v in ss.seg_vars):
        ss.seg_vars, ss.seg_vars_kind = S.default_segment_variables(sug, feat.variables, need, kind), (kind, need)

    def use_suggestion():
        ss.seg_vars = [v.strip() for v in ss.w_seg_pick.split(",")][:need] if ss.w_seg_pick else ss.seg_vars

    c2.selectbox("Suggestions (highest mutual information, label excluded)", [""] + options, key="w_seg_pick",
                 format_func=lambda o: fmt.get(o, "— pick a suggestion —"), on_change=use_suggestion)
    c2.multiselect(f"Variables in role order ({need})", list(feat.variables), max_selections=need,
                   **state.bind("seg_vars"))
    c3.number_input("Rows (sampled)", 20, min(MAX_ROWS, d.n_rows), step=50,
                    **state.bind("seg_rows", shown=lambda v: int(min(max(v, 20), min(MAX_ROWS, d.n_rows)))))
    c3.number_input("Seed", 0, step=1, **state.bind("seg_seed"))
    with st.expander("Suggestions table"):
        st.dataframe(sug.assign(variables=options), hide_index=True, key="seg_sug_table")
    return kind, list(ss.seg_vars), need


def page():
    ss = st.session_state
    for key, v in DEFAULTS.items():
        ss.setdefault(key, v)
    d, feat = state.data(), state.feature_data()
    has_class = d.class_column is not None
    cls_states = d.states[d.index(d.class_column)] if has_class else ()
    kind, variables, need = controls(d, feat)
    if len(variables) != need:
        st.info(f"Choose {need} variables for the {KINDS[kind].split('  ')[0].lower()} segment.")
        return
    base = DAG(feat.variables) if ss.seg_base == "empty" else state.dag()
    seg_dag = apply_segment(base, kind, variables)
    m1, m2 = state.model(base), state.model(seg_dag)
    new_arcs = sorted(seg_dag.arcs - base.arcs)
    st.caption(f"Base: **{BASES[ss.seg_base]}** ({base.n_arcs} arcs) · with the segment: {seg_dag.n_arcs} arcs "
               f"(added {', '.join(f'{u} → {v}' for u, v in new_arcs) or 'nothing — already present'}) · "
               f"parameters: {ESTIMATORS[ss.param_method].label.split(' (')[0].lower()}.")
    rows = sample_rows(d.n_rows, int(ss.seg_rows), int(ss.seg_seed))
    labels = d.labels()[rows] if has_class else np.full(len(rows), -1)
    bar = st.progress(0.0, text="Gram matrix of the base network…")
    K1 = _gram(m1, m1.key(), feat, feat.fingerprint(), tuple(rows.tolist()))
    bar.progress(0.3, text="Gram matrix with the segment…")
    K2 = _gram(m2, m2.key(), feat, feat.fingerprint(), tuple(rows.tolist()))
    aris = None
    if has_class:
        k, restarts, seed = C.default_n_clusters(d), int(ss.seg_restarts), int(ss.seg_seed)
        bar.progress(0.55, text="Clustering the base kernel…")
        a1 = _aris(K1, labels, k, restarts, seed)
        bar.progress(0.8, text="Clustering the kernel with the segment…")
        aris = (a1, _aris(K2, labels, k, restarts, seed))
    bar.progress(1.0, text="Done")
    bar.empty()
    tabs = st.tabs(["Kernels & clustering", "Imputation & prototypes", "Theory (case table)", "Collapsed variable",
                    "Equivalence", "Arc search"])
    with tabs[0]:
        kernel_tab(K1, K2, rows, labels, cls_states, has_class, aris)
    with tabs[1]:
        impute_protos_tab(feat, base, seg_dag, m1, m2)
    with tabs[2]:
        theory_tab(d, m2, kind, variables)
    with tabs[3]:
        collapsed_tab(d, variables, has_class)
    with tabs[4]:
        equivalence_tab(feat, m2, K2, rows, labels, cls_states)
    with tabs[5]:
        arc_search_tab(d, has_class)


def kernel_tab(K1, K2, rows, labels, cls_states, has_class, aris):
    order = class_order(labels, K1) if has_class else cluster_order(K1)
    panels, zmax = figs.segment_panels(K1, K2, order, rows, labels, cls_states)
    for col, fig, key in zip(st.columns(3, gap="small"), panels, ("seg_gram_base", "seg_gram_seg", "seg_gram_diff")):
        col.plotly_chart(fig, key=key, config=PLOTLY)
    st.caption(f"{len(rows):,} rows in the same order in all three (by class, clustered within, on the base kernel); "
               f"colours clipped at ±{zmax:.3g}. Largest |ΔK| = {np.abs(K2 - K1).max():.4g}.")
    if aris:
        (a1, a2), c = aris, st.columns(4)
        for j, (algo, name) in enumerate((("correlation", "Correlation"), ("spectral", "Spectral"))):
            c[2 * j].metric(f"{name} clustering ARI · base", f"{a1[algo]:.3f}")
            c[2 * j + 1].metric("… with the segment", f"{a2[algo]:.3f}", f"{a2[algo] - a1[algo]:+.3f}")
        st.caption(f"Against the label, on the sampled rows; correlation clustering with "
                   f"{st.session_state.seg_restarts} restarts, no shift (thesis); spectral on K − min K.")
    else:
        st.info("Choose a class column on the Data page to score clusterings against it.")
    common.download("Gram matrices (NPZ: base, segment, rows)", lambda: _npz(base=K1, segment=K2, rows=rows),
                    f"{common.dataset_name()}_segment_grams.npz", "application/octet-stream", key="dl_seg_grams")


def impute_protos_tab(feat, base, seg_dag, m1, m2):
    ss = st.session_state
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**Imputation (one seeded MCAR run)**")
        st.slider("Hidden fraction of the test cells", 0.05, 0.5, step=0.05, **state.bind("seg_missing"))
        with common.shown_errors():
            with st.spinner("Imputing…"):
                r = [_imputation(feat, feat.fingerprint(), state.dag_json(g), ss.param_method, float(ss.seg_missing),
                                 int(ss.seg_seed)) for g in (base, seg_dag)]
            st.dataframe(pd.DataFrame([{"network": n, "accuracy": x["accuracy"], "cross-entropy": x["cross_entropy"],
                                        "cells": x["cells"]} for n, x in zip(("base", "base + segment"), r)]),
                         hide_index=True, key="seg_impute_table")
            st.caption("30 % of the rows form the test part; the chosen fraction of their cells is hidden "
                       "completely at random (seeded), the network is fitted on what remains and every hidden "
                       "cell gets its exact posterior (arg-max accuracy, capped cross-entropy).")
    with c2:
        st.markdown("**Prototypes (greedy MMD)**")
        st.number_input("Prototypes k", 2, max(2, min(200, feat.n_rows - 1)), **state.bind("seg_protos"))
        with common.shown_errors():
            with st.spinner("Selecting prototypes…"):
                p = _prototypes(m1, m2, (m1.key(), m2.key()), feat, feat.fingerprint(), int(ss.seg_protos),
                                int(ss.seg_seed))
            s1, s2 = (set(s) for s in p["sets"])
            st.metric("Overlap of the two sets", f"{len(s1 & s2)} / {len(s1)}")
            st.dataframe(pd.DataFrame({"prototypes chosen with": ["base", "base + segment"],
                                       "MMD² under base kernel": [p["mmd"][0][0], p["mmd"][1][0]],
                                       "MMD² under segment kernel": [p["mmd"][0][1], p["mmd"][1][1]],
                                       "rows": [", ".join(map(str, s)) for s in p["sets"]]}),
                         hide_index=True, key="seg_proto_table")


def theory_tab(d, m2, kind, variables):
    try:
        table = S.case_table(m2, d, kind, variables)
    except BnfkError as exc:
        st.info(f"{exc} Switch the base to the empty network to see the thesis's case table.")
        return
    roles = ", ".join(f"{r} = **{v}**" for r, v in table.roles.items())
    st.markdown(f"Roles: {roles}. Letters: " + "; ".join(f"{g} = {m}" for g, m in table.definitions.items()) + ".")
    st.dataframe(table.to_frame(), hide_index=True, key="seg_case_table",
                 column_config={c: st.column_config.NumberColumn(format="%.6f") for c in ("theory", "measured")})
    md = table.max_difference
    st.caption("Theory: the thesis's formula with the fitted model's exact probabilities at the pair's first row. "
               "Measured: the sum of the segment variables' Fisher terms K_i for that pair of data rows. "
               + (f"Largest |theory − measured| = {md:.2e}." if md is not None else "")
               + (" " + " ".join(table.notes) if table.notes else ""))
    common.download("Case table (JSON)", json.dumps(table.to_dict(), indent=1).encode("utf-8"),
                    f"{common.dataset_name()}_{kind}_case_table.json", "application/json", key="dl_seg_cases")


def collapsed_tab(d, variables, has_class):
    if not has_class:
        st.info("Theil's U and Cramér's V need a class column (Data page).")
        return
    st.dataframe(S.collapsed_stats(d, variables), hide_index=True, key="seg_collapsed",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("theils_u", "cramers_v", "cramers_v_corrected")})
    st.caption(f"Theil's U(label | X): the share of the label's entropy that X explains; Cramér's V (plain and "
               f"bias-corrected, as the thesis's Table 6.3) between X and the label '{d.class_column}'. The last row "
               "is the collapsed variable — one state per observed combination — which a fully connected segment "
               "(and a single arc) turns the variables into.")


def equivalence_tab(feat, m2, K2, rows, labels, cls_states):
    effects = _edits(m2, m2.key(), feat, feat.fingerprint(), tuple(rows.tolist()), st.session_state.param_method, K2)
    if not effects:
        st.info("This network has no arc to reverse and no v-structure to add.")
        return
    st.dataframe(S.edit_effects_table(effects), hide_index=True, key="seg_equiv_table",
                 column_config={"max |ΔK|": st.column_config.NumberColumn(format="%.3e")})
    pick = st.selectbox("Show the difference for", [e.edit.label for e in effects], key="seg_equiv_pick")
    K = next(e.K for e in effects if e.edit.label == pick)
    order = class_order(labels, K2) if (labels >= 0).any() else cluster_order(K2)
    st.plotly_chart(figs.edit_difference_figure(K, K2, order, rows, labels, cls_states, pick), key="seg_equiv_diff",
                    config=PLOTLY)
    st.caption("Reversing a covered arc keeps the Markov equivalence class; its CPTs are re-derived from the same "
               "joint distribution, and the Fisher kernel does not change (ΔK at rounding level). Reversing a "
               "non-covered arc or adding a v-structure changes the class — and the kernel (refitted CPTs).")


def arc_search_tab(d, has_class):
    ss = st.session_state
    if not has_class:
        st.info("The arc search is supervised: choose a class column on the Data page.")
        return
    st.caption("Greedy and supervised (thesis §6.2): from the empty network, add the arc whose Fisher kernel gives "
               "the correlation clustering with the highest ARI against the label; each candidate only updates the "
               "changed variable's kernel term. ML parameters (the empty network is then scaled-Hamming). "
               "All rows are used.")
    c1, c2 = st.columns(2)
    c1.number_input("Arcs to add", 1, 5, **state.bind("seg_arcs"))
    c2.number_input("Correlation-clustering restarts", 1, 100, **state.bind("seg_restarts"))
    st.caption(f"Seed {ss.seg_seed} (set at the top).")
    key = (d.fingerprint(), int(ss.seg_arcs), int(ss.seg_restarts), int(ss.seg_seed))
    if st.button("Run arc search", key="seg_search_run", type="primary"):
        bar = st.progress(0.0, text="Starting…")
        with common.shown_errors():
            res = S.arc_search(d, n_arcs=int(ss.seg_arcs), restarts=int(ss.seg_restarts), seed=int(ss.seg_seed),
                               progress=lambda f, m: bar.progress(min(f, 1.0), text=m))
            ss.seg_search = (key, res.to_dict(candidates=True), res.dag.to_dict())
        bar.empty()
    saved = ss.get("seg_search")
    if not saved or saved[0] != key:
        return
    steps, cands = S.arc_search_tables(saved[1])
    st.dataframe(steps, hide_index=True, key="seg_search_steps")
    with st.expander("Every candidate of the last step"):
        st.dataframe(cands, hide_index=True, key="seg_search_cands")
    common.download("Arc search (JSON)", json.dumps(saved[1], indent=1).encode("utf-8"),
                    f"{common.dataset_name()}_arc_search.json", "application/json", key="dl_seg_search")
    if st.button("Apply: make this the current structure", key="seg_search_apply"):
        new = DAG.from_dict(saved[2])
        state.set_dag(new, f"arc search ({new.n_arcs} arcs, ARI {saved[1]['steps'][-1]['ari']:.3f})")
        state.flash("success", f"The current structure is now the arc-search network ({new.n_arcs} arcs).")
        st.rerun()


if common.start("Segments lab"):
    try:
        page()
    except BnfkError as exc:
        st.error(str(exc))
