"""Sections of the Segments lab: its tabs -- the kernels and clustering, imputation and prototypes, the
thesis's case table, the collapsed
variable, Markov equivalence and the supervised arc search.  Each section is a function drawing one tab:
widgets, a cached call into :mod:`bnfk_core.analyses.segments`, a table or a figure."""

import json
import re

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.analyses import segments as S
from bnfk_core.analyses.prototypes import selection as P
from bnfk_core.analyses.segments import gallery as G
from bnfk_core.errors import BnfkError
from bnfk_core.kernels.embed import class_order, cluster_order
from bnfk_core.network.dag import DAG, SEGMENT_LABELS, SEGMENT_PATTERNS
from bnfk_core.views.figures import segments as figs

from .. import common, jobs
from ..state import charts, choices, messages, shared, structure, tables

__all__ = [
    "role_line",
    "kernel_tab",
    "impute_protos_tab",
    "theory_tab",
    "collapsed_tab",
    "equivalence_tab",
    "arc_search_tab",
    "gallery_tab",
]
PLOTLY = {"displaylogo": False}


@st.cache_data(show_spinner=False, max_entries=16)
def _imputation(_feat, fingerprint: str, dag_key: str, params: str, missing: float, seed: int) -> dict:
    return S.imputation_check(
        _feat, DAG.from_dict(json.loads(dag_key)), params=params, missing=missing, seed=seed
    )


@st.cache_data(show_spinner=False, max_entries=16)
def _prototypes(_m1, _m2, keys: tuple, _feat, fingerprint: str, k: int, seed: int) -> dict:
    return P.compare_prototypes([_m1, _m2], _feat, k, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _edits(_m, model_key: str, _feat, fingerprint: str, rows: tuple, params: str, _K: np.ndarray) -> list:
    return S.edit_effects(_m, _feat, S.equivalence_edits(_m.dag), params=params, rows=np.asarray(rows), K=_K)


def role_line(kind: str, variables: list) -> str:
    """Which picked variable plays which role of the segment, and its pattern with the names filled in, e.g.
    "u = **A**, v = **B**, w = **C** · A → C ← B" (markdown; the names, which are column names, shown as plain
    text)."""
    if not variables:
        return ""
    variables = [messages.plain(v) for v in variables]
    if kind == "full":
        roles = [f"x{chr(0x2080 + i + 1) if i < 9 else i + 1}" for i in range(len(variables))]
        return ", ".join(f"{r} = **{v}**" for r, v in zip(roles, variables)) + " · " + " → ".join(variables)
    names = dict(zip("uvw", variables))
    pattern = re.sub(r"\b[uvw]\b", lambda m: names.get(m.group(0), m.group(0)), SEGMENT_PATTERNS[kind])
    return ", ".join(f"{r} = **{v}**" for r, v in names.items()) + (
        f" · {pattern}" if len(names) == len(re.findall(r"\b[uvw]\b", SEGMENT_PATTERNS[kind])) else ""
    )


def kernel_tab(K1, K2, rows, labels, cls_states, has_class, aris):
    """The base network's kernel, the kernel with the segment and their difference, in one row order, and
    the clusterings' ARI against the label of each (``aris``: None without a class column)."""
    order = shared.shared(class_order, labels, K1) if has_class else shared.shared(cluster_order, K1)
    panels, zmax = shared.shared(figs.segment_panels, K1, K2, order, rows, labels, cls_states)
    for col, fig, key in zip(
        st.columns(3, gap="small"), panels, ("seg_gram_base", "seg_gram_seg", "seg_gram_diff")
    ):
        charts.plotly_chart(fig, key=key, config=PLOTLY, where=col)
    dz = panels[2].data[0].zmax  # the difference has its own scale: the caption says both
    st.caption(
        f"{len(rows):,} rows in the same order in all three (by class, clustered within, on the base "
        "kernel); "
        f"colours clipped at ±{zmax:.3g} for the two kernels and at ±{dz:.3g} for their difference (99th "
        f"percentile of |K| and of |ΔK|). Largest |ΔK| = {np.abs(K2 - K1).max():.4g}."
    )
    if aris:
        (a1, a2), c = aris, st.columns(4)
        for j, (algo, name) in enumerate((("correlation", "Correlation"), ("spectral", "Spectral"))):
            c[2 * j].metric(f"{name} clustering ARI · base", f"{a1[algo]:.3f}")
            c[2 * j + 1].metric(
                "… with the segment", f"{a2[algo]:.3f}", **common.delta(a2[algo] - a1[algo], "+.3f")
            )
        st.caption(
            f"Against the label, on the sampled rows; correlation clustering with "
            f"{st.session_state.seg_restarts} restarts, no shift (thesis); spectral on K − min K."
        )
    else:
        st.info("Choose a class column on the Data page to score clusterings against it.")
    common.download(
        "Gram matrices (NPZ: base, segment, rows)",
        lambda: common.npz_bytes(base=K1, segment=K2, rows=rows),
        f"{common.dataset_name()}_segment_grams.npz",
        "application/octet-stream",
        key="dl_seg_grams",
    )


def impute_protos_tab(feat, rows, base, seg_dag, m1, m2):
    """One imputation run and greedy-MMD prototypes with and without the segment, on the ``rows`` of ``feat``
    (the lab's sampled rows, so the cost is bounded whatever the size of the data; taken once asked)."""
    ss = st.session_state
    if not common.asked(
        "Run imputation and prototypes", "seg_impute_run", tables.feature_data().fingerprint()
    ):
        st.caption(
            f"One seeded imputation run and greedy-MMD prototypes on the {len(rows):,} sampled rows, with "
            "and without the segment."
        )
        return
    feat = feat.subset(rows)
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**Imputation (one seeded MCAR run)**")
        st.slider("Hidden fraction of the test cells", 0.05, 0.5, step=0.05, **choices.bind("seg_missing"))
        with common.shown_errors():
            with st.spinner("Imputing…"):
                r = [
                    _imputation(
                        feat,
                        feat.fingerprint(),
                        structure.dag_json(g),
                        ss.param_method,
                        float(ss.seg_missing),
                        int(ss.seg_seed),
                    )
                    for g in (base, seg_dag)
                ]
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "network": n,
                            "accuracy": x["accuracy"],
                            "cross-entropy": x["cross_entropy"],
                            "cells": x["cells"],
                        }
                        for n, x in zip(("base", "base + segment"), r)
                    ]
                ),
                hide_index=True,
                key="seg_impute_table",
            )
            st.caption(
                f"On the {feat.n_rows:,} sampled rows: 30 % of them form the test part; the chosen fraction "
                "of their cells is hidden "
                "completely at random (seeded), the network is fitted on what remains and every hidden "
                "cell gets its exact posterior (arg-max accuracy, capped cross-entropy)."
            )
    with c2:
        st.markdown("**Prototypes (greedy MMD)**")
        st.number_input("Prototypes k", 2, max(2, min(200, feat.n_rows - 1)), **choices.bind("seg_protos"))
        with common.shown_errors():
            with st.spinner("Selecting prototypes…"):
                p = _prototypes(
                    m1,
                    m2,
                    (m1.key(), m2.key()),
                    feat,
                    feat.fingerprint(),
                    int(ss.seg_protos),
                    int(ss.seg_seed),
                )
            s1, s2 = (set(s) for s in p["sets"])
            st.metric("Overlap of the two sets", f"{len(s1 & s2)} / {len(s1)}")
            st.dataframe(
                pd.DataFrame(
                    {
                        "prototypes chosen with": ["base", "base + segment"],
                        "MMD² under base kernel": [p["mmd"][0][0], p["mmd"][1][0]],
                        "MMD² under segment kernel": [p["mmd"][0][1], p["mmd"][1][1]],
                        "rows": [", ".join(map(str, s)) for s in p["sets"]],
                    }
                ),
                hide_index=True,
                key="seg_proto_table",
            )


def _case_table(model, data, kind: str, variables: tuple):
    """The case table, or the sentence why there is none (made once per network, data and segment: the tab is
    built on every run of the page)."""
    try:
        return S.case_table(model, data, kind, list(variables))
    except BnfkError as exc:
        return str(exc)


def _collapsed_stats(data, variables: tuple):
    """:func:`S.collapsed_stats` as an Arrow table, made once per data and variables (shared, sent as it
    is)."""
    import pyarrow as pa

    return pa.Table.from_pandas(S.collapsed_stats(data, list(variables)), preserve_index=False)


def theory_tab(d, m2, kind, variables):
    table = shared.shared(
        _case_table, shared.keyed(m2, m2.key()), shared.keyed(d, d.fingerprint()), kind, tuple(variables)
    )
    if isinstance(table, str):
        st.info(
            f"{messages.plain(table)} Switch the base to the empty network to see the thesis's case table."
        )
        return
    roles = ", ".join(f"{r} = **{messages.plain(v)}**" for r, v in table.roles.items())
    st.markdown(
        f"Roles: {roles}. Letters: " + "; ".join(f"{g} = {m}" for g, m in table.definitions.items()) + "."
    )
    frame = table.to_frame()  # a static table wraps its text: every formula stays whole on a projector
    # st.table reads Markdown in its cells: the descriptions name the variables, shown as typed
    frame = frame.map(lambda v: messages.plain(v) if isinstance(v, str) else v)
    st.table(
        frame.style.hide(axis="index").format(
            {c: "{:.6f}" for c in ("theory", "measured", "empty theory")}, na_rep=""
        )
    )
    md = table.max_difference
    st.caption(
        "Theory: the thesis's formula with the fitted model's exact probabilities at the pair's first row. "
        "Measured: the sum of the segment variables' Fisher terms K_i for that pair of data rows. "
        + (f"Largest |theory − measured| = {md:.2e}." if md is not None else "")
        + (" " + messages.plain(" ".join(table.notes)) if table.notes else "")
    )
    common.download(
        "Case table (JSON)",
        lambda: json.dumps(table.to_dict(), indent=1).encode("utf-8"),
        f"{common.dataset_name()}_{kind}_case_table.json",
        "application/json",
        key="dl_seg_cases",
    )


def collapsed_tab(d, variables, has_class):
    if not has_class:
        st.info("Theil's U and Cramér's V need a class column (Data page).")
        return
    st.dataframe(
        shared.shared(_collapsed_stats, shared.keyed(d, d.fingerprint()), tuple(variables)),
        hide_index=True,
        key="seg_collapsed",
        column_config={
            c: st.column_config.NumberColumn(format="%.3f")
            for c in ("theils_u", "cramers_v", "cramers_v_corrected")
        },
    )
    st.caption(
        f"Theil's U(label | X): the share of the label's entropy that X explains; Cramér's V (plain and "
        f"bias-corrected, as the thesis's Table 6.3) between X and the label '{d.class_column}'. The last "
        "row "
        "is the collapsed variable — one state per observed combination — which a fully connected segment "
        "(and a single arc) turns the variables into."
    )


def equivalence_tab(feat, m2, K2, rows, labels, cls_states):
    if not common.asked("Compare the equivalent edits", "seg_equiv_run", feat.fingerprint()):
        st.caption(
            "Reverses every arc and adds a v-structure, one edit at a time, and compares each kernel with "
            "this one: a covered arc's reversal keeps the Markov equivalence class, and the Fisher kernel "
            "when the CPT estimator is likelihood-equivalent (BDeu, the default; paper, Theorem 4)."
        )
        return
    with st.spinner("Refitting the network for every edit…"):
        effects = _edits(
            m2, m2.key(), feat, feat.fingerprint(), tuple(rows.tolist()), st.session_state.param_method, K2
        )
    if not effects:
        st.info("This network has no arc to reverse and no v-structure to add.")
        return
    st.dataframe(
        S.edit_effects_table(effects),
        hide_index=True,
        key="seg_equiv_table",
        column_config={"max |ΔK|": st.column_config.NumberColumn(format="%.3e")},
    )
    pick = st.selectbox("Show the difference for", [e.edit.label for e in effects], key="seg_equiv_pick")
    K = next(e.K for e in effects if e.edit.label == pick)
    order = class_order(labels, K2) if (labels >= 0).any() else cluster_order(K2)
    st.plotly_chart(
        figs.edit_difference_figure(K, K2, order, rows, labels, cls_states, pick),
        key="seg_equiv_diff",
        config=PLOTLY,
    )
    st.caption(
        "Reversing a covered arc keeps the Markov equivalence class; its CPTs are re-derived from the same "
        "joint distribution, so the Fisher kernel does not change (ΔK at rounding level) -- the same holds "
        "for "
        "CPTs refitted by a likelihood-equivalent estimator such as BDeu (paper, Theorem 4), not for the "
        "smoothed (+1) one. Reversing a non-covered arc or adding a v-structure changes the class — and the "
        "kernel (refitted CPTs)."
    )


def arc_search_tab(d, has_class):
    ss = st.session_state
    if not has_class:
        st.info("The arc search is supervised: choose a class column on the Data page.")
        return
    st.caption(
        "Greedy and supervised (thesis §6.2): from the empty network, add the arc whose Fisher kernel gives "
        "the correlation clustering with the highest ARI against the label; each candidate only updates the "
        "changed variable's kernel term. ML parameters (the empty network is then scaled-Hamming). "
        "All rows are used."
    )
    c1, c2 = st.columns(2)
    c1.number_input("Arcs to add", 1, 5, **choices.bind("seg_arcs"))
    c2.number_input("Correlation-clustering restarts", 1, 100, **choices.bind("seg_restarts"))
    st.caption(f"Seed {ss.seg_seed} (set at the top).")
    key = (d.fingerprint(), int(ss.seg_arcs), int(ss.seg_restarts), int(ss.seg_seed))
    if st.button("Run arc search", key="seg_search_run", type="primary"):
        bar = st.progress(0.0, text="Starting…")
        with common.shown_errors(), jobs.heavy("the arc search"):
            res = S.arc_search(
                d,
                n_arcs=int(ss.seg_arcs),
                restarts=int(ss.seg_restarts),
                seed=int(ss.seg_seed),
                progress=jobs.progress(bar),
            )
            ss.seg_search = (key, res.to_dict(candidates=True), res.dag.to_dict())
        bar.empty()
    saved = ss.get("seg_search")
    if not saved or saved[0] != key:
        return
    steps, cands = S.arc_search_tables(saved[1])
    st.dataframe(steps, hide_index=True, key="seg_search_steps")
    with st.expander("Every candidate of the last step"):
        st.dataframe(cands, hide_index=True, key="seg_search_cands")
    common.download(
        "Arc search (JSON)",
        lambda: json.dumps(saved[1], indent=1).encode("utf-8"),
        f"{common.dataset_name()}_arc_search.json",
        "application/json",
        key="dl_seg_search",
    )
    if st.button("Apply: make this the current structure", key="seg_search_apply"):
        new = DAG.from_dict(saved[2])
        structure.set_dag(new, f"arc search ({new.n_arcs} arcs, ARI {saved[1]['steps'][-1]['ari']:.3f})")
        messages.flash("success", f"The current structure is now the arc-search network ({new.n_arcs} arcs).")
        st.rerun()


def gallery_tab(d, feat, base, variables, rows, labels, cls_states):
    """All five segments on three variables against the same base, side by side
    (bnfk_core.analyses.segments.gallery)."""
    ss = st.session_state
    chosen = list(variables) if len(variables) == 3 else None

    def run(progress):
        triple = chosen or list(S.mi_ranking(d, "v", top=1)["variables"].iloc[0])  # ranked only when needed
        return G.segment_gallery(
            d,
            base,
            triple,
            rows=rows,
            params=ss.param_method,
            restarts=int(ss.seg_restarts),
            seed=int(ss.seg_seed),
            missing=float(ss.seg_missing),
            k_prototypes=int(ss.seg_protos),
            progress=progress,
        )

    key = (
        d.fingerprint(),
        structure.dag_json(base),
        tuple(variables),
        tuple(rows.tolist()),
        ss.param_method,
        int(ss.seg_seed),
        int(ss.seg_restarts),
        float(ss.seg_missing),
        int(ss.seg_protos),
    )
    g = common.stored_run(
        "Run the gallery", "seg_gallery_run", "seg_gallery", key, icon=":material/grid_view:", fn=run
    )
    st.caption(
        "Variables u, v, w = "
        + (
            f"**{messages.plain(', '.join(g.variables if g else chosen))}**"
            if (g or chosen)
            else "the top V-structure triple (highest mutual information, found on run)"
        )
        + " — the segment controls' three when they name three; the same base, rows, seed and restarts as "
        "the other tabs."
    )
    if g is None:
        st.caption(
            "One click computes every segment: ΔK heatmaps, ΔARI, Δ imputation accuracy, Δ prototype NLL and "
            "the case-table check (through one live kernel moved from segment to segment)."
        )
        return
    order = class_order(labels, g.base.K) if (labels >= 0).any() else cluster_order(g.base.K)
    figs_, zmax = figs.gallery_panels(
        g.base.K,
        [e.K for e in g.segments],
        [SEGMENT_LABELS[e.kind] for e in g.segments],
        order,
        rows,
        labels,
        cls_states,
    )
    for col, fig, e in zip(st.columns(len(figs_), gap="small"), figs_, g.segments):
        charts.plotly_chart(fig, key=f"seg_gallery_{e.kind}", config=PLOTLY, where=col)
    st.dataframe(
        g.table(),
        hide_index=True,
        key="seg_gallery_table",
        column_config={
            c: st.column_config.NumberColumn(format="%+.3f")
            for c in ("ΔARI (CC)", "ΔARI (SC)", "Δ imputation accuracy", "Δ prototype NLL")
        }
        | {
            "max |ΔK|": st.column_config.NumberColumn(format="%.3g"),
            "theory − measured (max)": st.column_config.NumberColumn(format="%.1e"),
        },
    )
    st.caption(
        f"ΔK on one colour scale (±{zmax:.3g}); base ARI CC/SC "
        + (f"{g.base.aris['correlation']:.3f}/{g.base.aris['spectral']:.3f}" if g.base.aris else "—")
        + f", imputation accuracy {g.base.imputation['accuracy']:.3f}, prototype NLL "
        f"{g.base.prototype_nll:.3f}; "
        f"computed in {g.seconds:.1f} s. " + " ".join(g.notes)
    )
    common.download(
        "Gallery (CSV)",
        lambda: g.table().to_csv(index=False).encode("utf-8"),
        f"{common.dataset_name()}_segment_gallery.csv",
        "text/csv",
        key="dl_seg_gallery",
    )
