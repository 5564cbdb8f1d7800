"""Kernel: Gram matrices of the current structure and a second one, their difference, value
distribution, a kernel-PCA map, and the per-variable contributions for two picked rows."""
import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core import kernels
from bnfk_core.dag import DAG
from bnfk_core.errors import BnfkError
from bnfk_ui import common, figures, state

KINDS = {"fisher": "Fisher", "scaled-hamming": "Scaled Hamming", "hamming": "Hamming"}
ORDERS = {"class": "by class, clustered inside", "cluster": "by hierarchical clustering", "data": "as in the data"}
COMPARE = {
    "empty": "Fisher kernel of the empty network",
    "tree": "Fisher kernel of a Chow–Liu tree",
    "hc": "Fisher kernel of hill climbing (BIC)",
    "learned": "Fisher kernel of the last learned structure",
    "previous": "Fisher kernel of the structure before the last edit",
    "scaled-hamming": "Scaled-Hamming kernel",
    "hamming": "Hamming kernel",
}

SHORT = {"empty": "Fisher: empty network", "tree": "Fisher: Chow–Liu tree", "hc": "Fisher: hill climbing",
         "learned": "Fisher: last learned", "previous": "Fisher: before last edit",
         "scaled-hamming": "Scaled Hamming", "hamming": "Hamming"}


def second_kernel(choice: str, feat) -> tuple[np.ndarray, str, object]:
    """The comparison Gram matrix, its title and its model (None for the Hamming kernels)."""
    ss = st.session_state
    if choice in ("scaled-hamming", "hamming"):
        m = state.model()
        return state.gram_matrix(m, kind=choice).K, SHORT[choice], None
    if choice == "empty":
        d = DAG(feat.variables)
    elif choice in ("tree", "hc"):
        with st.spinner(f"Learning the {'Chow–Liu tree' if choice == 'tree' else 'hill-climbing'} structure…"):
            d = state.learn(choice, "bic").dag
    elif choice == "learned":
        d = DAG.from_dict(ss.structure["learned"])
    else:
        undo = ss.structure["undo"]
        d = DAG.from_dict(undo[-1][0]) if undo else state.dag()
    m = state.model(d)
    return state.gram_matrix(m, kind="fisher").K, f"{SHORT[choice]} ({d.n_arcs} arcs)", m


def pick_from_map():
    """Plotly selection on the kernel-PCA map -> rows A and B."""
    sel = st.session_state.get("pca_chart")
    points = (sel or {}).get("selection", {}).get("points", []) if sel else []
    rows = []
    for p in points:
        c = p.get("customdata")
        if isinstance(c, (list, tuple)):
            c = c[0] if c else None
        if c is not None and int(c) not in rows:
            rows.append(int(c))
    if not rows:
        return
    old = st.session_state.pair or (None, None)
    a, b = (rows[0], rows[1]) if len(rows) >= 2 else (rows[0], old[0] if old[0] != rows[0] else old[1])
    st.session_state.pair = (a, b if b is not None else a)


def page():
    ss = st.session_state
    d = state.data()
    feat = state.feature_data()
    cls_states = d.states[d.index(d.class_column)] if d.class_column else ()

    c1, c2, c3, c4 = st.columns([1.4, 1, 1, 1.2])
    with c1:
        kind = st.radio("Kernel", list(KINDS), format_func=KINDS.get, horizontal=True, **state.bind("kernel_kind"))
        st.checkbox("Normalise (cosine)", help="K(x,y) / √(K(x,x) K(y,y))", **state.bind("kernel_normalize"))
    with c2:
        max_rows = max(2, min(d.n_rows, 2000))
        st.number_input("Rows (sampled)", min_value=2, max_value=max_rows, step=50,
                        help=f"At most 2,000 of the {d.n_rows:,} rows, drawn without replacement.",
                        **state.bind("kernel_rows", shown=lambda v: int(min(max(v, 2), max_rows))))
    with c3:
        st.number_input("Sampling seed", min_value=0, step=1, **state.bind("kernel_seed"))
    with c4:
        st.selectbox("Order rows", list(ORDERS), format_func=ORDERS.get,
                     **state.bind("kernel_order"))
    st.selectbox("Compare with", list(COMPARE), format_func=COMPARE.get, **state.bind("kernel_compare"))

    try:
        with st.spinner("Computing Gram matrices…"):
            m = state.model()
            G = state.gram_matrix(m)
            K2, title2, m2 = second_kernel(ss.kernel_compare, feat)
    except BnfkError as exc:
        st.error(str(exc))
        return
    K, rows, labels = G.K, G.rows, G.labels
    an = state.kernel_analysis(K, labels, ss.kernel_order, bool(d.class_column))
    order = an["order"]
    title1 = (f"{KINDS[kind]}: current structure ({state.dag().n_arcs} arcs)" if kind == "fisher"
              else f"{KINDS[kind]} kernel")
    zmax = figures.kernel_range(K, K2)
    D = K - K2
    f1 = figures.gram_figure(K, order, rows, labels, cls_states, title=title1, zmax=zmax)
    f2 = figures.gram_figure(K2, order, rows, labels, cls_states, title=title2, zmax=zmax)
    f3 = figures.gram_figure(D, order, rows, labels, cls_states, title="Difference (left − right)",
                             colorbar_title="ΔK")
    cols = st.columns(3, gap="small")
    for col, fig, key in zip(cols, (f1, f2, f3), ("gram_main", "gram_second", "gram_diff")):
        with col:
            st.plotly_chart(fig, key=key, config={"displaylogo": False})
    st.caption(f"{len(rows):,} rows, ordered {ORDERS[ss.kernel_order]}; colours are centred at 0 and clipped at "
               f"±{zmax:.3g} (99th percentile of |K|, shared by both kernels) so the diagonal does not swamp them. "
               + ("The strips show the class of each row." if d.class_column else ""))
    if kind != "fisher":
        st.info(f"The {KINDS[kind].lower()} kernel does not depend on the structure; pick 'Fisher' to see its effect.")

    base = f"{common.dataset_name()}_{kind}_{len(rows)}rows"
    ids = [f"row{int(r)}" for r in rows]
    dl = st.columns(5)
    with dl[0]:
        common.download("Gram matrix (CSV)", lambda: pd.DataFrame(K, index=ids, columns=ids).to_csv(),
                        f"{base}.csv", "text/csv")
    with dl[1]:
        common.download("Gram matrix (NPY)", lambda: common.npy_bytes(K), f"{base}.npy", "application/octet-stream")
    with dl[2]:
        common.download("Comparison Gram (CSV)", lambda: pd.DataFrame(K2, index=ids, columns=ids).to_csv(),
                        f"{base}_compare_{ss.kernel_compare}.csv", "text/csv")
    with dl[3]:
        common.download("Rows used (CSV)", lambda: d.frame.iloc[rows].assign(row=rows).to_csv(index=False),
                        f"{base}_rows.csv", "text/csv")
    with dl[4]:
        common.download_figure(f1, f"{base}_heatmap", "Heatmap (HTML)")

    st.subheader("Distribution and map")
    h1, h2 = st.columns(2, gap="medium")
    pairs = an["pairs"]
    with h1:
        fh = figures.histogram_figure(pairs, cls_states, title=f"{KINDS[kind]} kernel values of distinct pairs")
        st.plotly_chart(fh, key="hist", config={"displaylogo": False})
        if d.class_column and len(pairs["between"]):
            within = np.concatenate([v for v in pairs["within"].values()] or [np.zeros(0)])
            st.caption(f"Mean within a class {within.mean():.3g}, between classes {pairs['between'].mean():.3g}.")
    with h2:
        Y = an["pca"]
        pair = ss.pair if ss.pair and all(int(r) in set(rows.tolist()) for r in ss.pair) else None
        fm = figures.embedding_figure(Y, rows, labels, cls_states, selected=pair or (),
                                      title="Kernel PCA map — click a point to pick it")
        st.plotly_chart(fm, key="pca_chart", on_select=pick_from_map, selection_mode=("points", "box", "lasso"),
                        config={"displaylogo": False})

    st.subheader("Why are two rows similar?")
    row_list = [int(r) for r in rows]
    if not (ss.pair and ss.pair[0] in row_list and ss.pair[1] in row_list):
        dg_ = np.sqrt(np.maximum(np.diag(K), 1e-300))
        cos = K[0] / (dg_[0] * dg_)
        cos[0] = -np.inf
        ss.pair = (row_list[0], row_list[int(np.argmax(cos))] if len(row_list) > 1 else row_list[0])
    pos = {r: k for k, r in enumerate(row_list)}
    lab_name = (lambda r: f" · {cls_states[labels[pos[r]]]}" if d.class_column and labels[pos[r]] >= 0 else "")

    def set_pair():
        ss.pair = (ss.w_pair_a, ss.w_pair_b)

    ss.w_pair_a, ss.w_pair_b = ss.pair
    p1, p2, p3 = st.columns([1, 1, 2])
    a = p1.selectbox("Row A", row_list, format_func=lambda r: f"#{r}{lab_name(r)}", key="w_pair_a", on_change=set_pair)
    b = p2.selectbox("Row B", row_list, format_func=lambda r: f"#{r}{lab_name(r)}", key="w_pair_b", on_change=set_pair)
    with p3:
        st.caption("Row B starts as the row most similar to row A (cosine). Pick rows here or click points on the map "
                   "(a click makes that row A and the previous A becomes B; a box around two points picks both).")

    ka, kb = pos[a], pos[b]
    with common.shown_errors():
        if kind == "hamming":
            xa, xb = feat.codes[a], feat.codes[b]
            contrib = ((xa == xb) & (xa >= 0)).astype(float) / feat.n_vars
            variables = feat.variables
        else:
            cm = m if kind == "fisher" else kernels.scaled_hamming_model(feat.subset(rows))
            aligned = cm.align(feat)
            contrib = kernels.contributions(cm, aligned.codes[a], aligned.codes[b])
            variables = cm.variables
        xa_vals = [d.frame.at[a, v] if d.frame.at[a, v] is not None else "(missing)" for v in variables]
        xb_vals = [d.frame.at[b, v] if d.frame.at[b, v] is not None else "(missing)" for v in variables]
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("K(A, B)", f"{K[ka, kb]:.4g}")
        m2.metric("K(A, A)", f"{K[ka, ka]:.4g}")
        m3.metric("K(B, B)", f"{K[kb, kb]:.4g}")
        m4.metric("Σ K_i (unnormalised)", f"{contrib.sum():.4g}",
                  help="The per-variable terms of Theorem 1 sum to the unnormalised kernel value.")
        fc = figures.contributions_figure(variables, contrib, xa_vals, xb_vals,
                                          title=f"Per-variable contributions K_i(#{a}, #{b}) — {KINDS[kind]} kernel")
        st.plotly_chart(fc, key="contrib_chart", config={"displaylogo": False})
        top = np.argsort(contrib)[::-1]
        agree = [variables[i] for i in top[:3] if contrib[i] > 0]
        disagree = [variables[i] for i in top[::-1][:3] if contrib[i] < 0]
        st.caption(("Most similarity comes from agreeing on " + ", ".join(agree) + ". " if agree else "")
                   + ("Disagreement (or common values) on " + ", ".join(disagree) + " pulls them apart."
                      if disagree else ""))
        table = pd.DataFrame({"variable": variables, "row A": xa_vals, "row B": xb_vals, "K_i": contrib})
        c1, c2, _ = st.columns([1, 1, 3])
        with c1:
            common.download("Contributions (CSV)", table.to_csv(index=False).encode("utf-8"),
                            f"{common.dataset_name()}_contributions_{a}_{b}.csv", "text/csv")
        with c2:
            common.download_figure(fc, f"{common.dataset_name()}_contributions_{a}_{b}", "Bar chart (HTML)")


if common.start("Kernel"):
    page()
