"""Numbers as numbers in the app: the Data page's number / category switch, the Structure page's hybrid
learner, and the Model page on a conditional linear Gaussian network (evidence with numbers, each numeric
node's data and fitted density, its conditional densities and regressions)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.hybrid import HYBRID_SCORES, MIN_NUMERIC_LEVELS, HybridNet, numeric_marginal
from bnfk_core.views.figures import evidence as ev_figs
from bnfk_core.views.figures import hybrid as figs

from .. import common, jobs, router
from ..state import charts, messages, shared, structure, tables
from ..state import hybrid as state
from . import model as model_sections

__all__ = [
    "numbers_panel",
    "binned_notice",
    "learn_panel",
    "node_info",
    "marginal",
    "model_tabs",
    "evidence_tab",
    "densities_tab",
    "cpt_tab",
    "downloads",
    "impute_panel",
    "benchmark_panel",
]

CHART = {"displaylogo": False}
plain = messages.plain


def binned_notice(what: str = "This page", plural: bool = False) -> None:
    """The one visible sentence of a page that still needs a discrete network while numbers are kept."""
    text = state.binned_sentence(what, plural)
    if text:
        st.info(plain(text), icon=":material/equalizer:")


def numbers_panel() -> None:
    """The feature columns that hold numbers, each a number (a Gaussian node) or a category: a multiselect
    of the numbers kept and a table of what each column is read as."""
    cands = state.candidates()
    if not cands:
        return
    ss = st.session_state
    st.subheader("Numbers")
    kinds = state.kinds()
    ss.w_numbers = [c for c, k in kinds.items() if k == state.NUMBER]

    def changed():
        state.set_numbers(ss.w_numbers)

    st.multiselect(
        "Numeric columns kept as numbers (Gaussian nodes); the others are categories",
        list(cands),
        key="w_numbers",
        on_change=changed,
        help=f"By default a column of numbers with at least {MIN_NUMERIC_LEVELS} distinct values is a number "
        "and one with fewer (a 0/1 flag, a 1–5 rating) a category. Structure and Model learn a conditional "
        "linear Gaussian network over the numbers kept.",
    )
    rule = {c: state.NUMBER if n >= MIN_NUMERIC_LEVELS else state.CATEGORY for c, n in cands.items()}
    st.dataframe(
        pd.DataFrame(
            {
                "column": list(cands),
                "distinct values": list(cands.values()),
                "read as": [kinds[c] for c in cands],
                "by default": [rule[c] for c in cands],
            }
        ),
        hide_index=True,
        width="stretch",
        key="numbers_table",
    )
    nums = state.numeric_columns()
    common.plain_caption(
        f"Numbers kept: {', '.join(nums)}. Structure and Model work on a hybrid network; "
        "the pages that need a discrete network say which columns they read as categories."
        if nums
        else "Every column is a category: every page works on a discrete network."
    )


def node_info(feat) -> dict:
    """The DAG's hover per node: a numeric node's kind, a discrete one's levels, and the parents."""
    kinds = state.kinds()
    dg = structure.dag()
    return {
        v: ("numeric (Gaussian)" if kinds.get(v) == state.NUMBER else f"{len(feat.states[i])} levels")
        + f"\nparents: {', '.join(dg.parents(v)) or '—'}"
        for i, v in enumerate(feat.variables)
    }


def learn_panel() -> None:
    """The Learn tab's hybrid learner (hill climbing on BIC or AIC; structural EM over missing cells)."""
    ss = st.session_state
    nums = state.numeric_columns()
    st.markdown("**Hybrid network** (numbers kept as Gaussian nodes: " + plain(", ".join(nums)) + ")")
    c1, c2, c3 = st.columns([1, 1, 1.4], vertical_alignment="bottom")
    score = c1.selectbox("Hybrid score", list(HYBRID_SCORES), format_func=str.upper, key="hyb_score")
    tabu = c2.number_input("Tabu steps", min_value=0, max_value=50, step=5, key="hyb_tabu")
    if c3.button("Learn hybrid network", type="primary", icon=":material/play_arrow:", key="hyb_learn"):
        try:
            with st.spinner("Learning the hybrid network…"), jobs.heavy("learning"):
                res = state.learned(score, int(tabu))
            structure.set_dag(res.dag, structure.hybrid_label(res), learned=True, notes=res.notes)
        except BnfkError as exc:
            st.error(router.message(exc))
        else:
            st.rerun()
    st.caption(
        "Hill climbing from the empty graph (structural EM when cells are missing); a discrete node never "
        "gets a numeric parent. The methods below learn a discrete network on the binned table: an arc they "
        "give from a number into a category is refused."
    )
    ss.setdefault("hyb_score", "bic")


def hybrid_scores(dg) -> None:
    """The BIC and AIC of the hybrid network of ``dg`` (observed-data log-likelihood)."""
    from bnfk_core.hybrid import network_score

    try:
        m = state.fitted(dg)
        data = state.mixed()
        rows = {s.upper(): network_score(m, data, s) for s in HYBRID_SCORES}
    except BnfkError as exc:
        st.error(router.message(exc))
        return
    c1, c2 = st.columns(2)
    c1.metric("Hybrid BIC", f"{rows['BIC']:.1f}")
    c2.metric("Hybrid AIC", f"{rows['AIC']:.1f}", help=f"{m.parameter_count():,} free parameters.")


# ---------------------------------------------------------------------- the Model page
def marginal(m: HybridNet, node: str):
    """The marginal density of numeric ``node`` (:func:`bnfk_core.hybrid.numeric_marginal`), cached."""
    return state._cached((m.key(), "marginal", node), lambda: numeric_marginal(m, node))


def _configs(m: HybridNet, i: int) -> list[str]:
    ps = m.discrete_parents(i)
    if not ps:
        return ["(no discrete parent)"]
    grid = np.indices([len(m.states[p]) for p in ps]).reshape(len(ps), -1).T
    return [", ".join(f"{m.variables[p]}={m.states[p][c]}" for p, c in zip(ps, row)) for row in grid]


def model_tabs() -> None:
    """The Model page on the hybrid network of the current structure."""
    try:
        m = state.fitted(structure.dag())
    except BnfkError as exc:
        st.error(router.message(exc))
        return
    nums = [m.variables[i] for i in m.numeric]
    common.plain_caption(
        f"This page uses the hybrid network of the Structure page: {structure.structure_label()}, "
        f"{m.dag.n_arcs} arcs; numeric nodes {', '.join(nums)} (Gaussian, linear in their numeric parents "
        "per "
        "configuration of their discrete parents), discrete nodes with CPTs (maximum likelihood"
        + (", EM over missing cells)." if "EM" in str(m.fit_info.get("notes", "")) else ").")
    )
    t_ev, t_den, t_cpt, t_ind = st.tabs(
        ["Evidence", "Densities", "CPTs and regressions", "Independence"],
        key="model_hyb_tab",
        on_change="rerun",
    )
    common.built_when_open(t_ev, lambda: evidence_tab(m), kept=("hyb_node",))
    common.built_when_open(  # d-separation reads only the DAG
        t_ind, lambda: model_sections.independence_tab(m), kept=("model_x", "model_y", "model_z")
    )
    common.built_when_open(t_den, lambda: densities_tab(m), kept=("hyb_den_node",))
    common.built_when_open(t_cpt, lambda: cpt_tab(m), kept=("hyb_cpt_node",))
    st.markdown("**Download the model** (bnfk hybrid JSON)")
    downloads(m)


def evidence_tab(m: HybridNet) -> None:
    """Evidence on any node (a state, or a number for a numeric node); the discrete posteriors
    (:func:`bnfk_core.hybrid.discrete_posterior`) and each unobserved numeric node's density given it where
    :func:`bnfk_core.hybrid.conditional_normal` covers the case."""
    ss = st.session_state
    ev = state.evidence(m)
    if ss.get("hyb_node") not in m.variables:
        ss.hyb_node = m.variables[0]
    c1, c2, c3, c4 = st.columns([1.6, 1.4, 0.8, 0.8], vertical_alignment="bottom")
    v = c1.selectbox("Variable (or click it on the graph)", list(m.variables), key="hyb_node")
    i = m.variables.index(v)
    if m.kinds[i] == "numeric":
        col = state.mixed().values[:, state.mixed().index(v)]
        default = float(ev[v]) if v in ev else float(np.nanmean(col))
        key = f"hyb_value_{i}"
        if key not in ss:
            ss[key] = round(default, 4)
        value = c2.number_input(f"Value of {plain(v)}", key=key, format="%.4g")
    else:
        states = list(m.states[i])
        key = f"hyb_state_{i}"
        if key in ss and ss[key] not in states:
            del ss[key]
        value = c2.selectbox(
            f"State of {plain(v)}", states, index=states.index(ev[v]) if v in ev else 0, key=key
        )
    c3.button(
        "Observe",
        icon=":material/visibility:",
        width="stretch",
        on_click=state.set_evidence,
        args=(v, value),
        key="hyb_observe",
    )
    c4.button(
        "Clear" if v in ev else "Clear all",
        icon=":material/backspace:",
        width="stretch",
        disabled=not ev,
        on_click=state.clear_evidence,
        args=(v if v in ev else None,),
        key="hyb_clear",
    )
    shown = ", ".join(f"{k} = {x:.4g}" if isinstance(x, float) else f"{k} = {x}" for k, x in ev.items())
    common.plain_caption(f"Evidence: {shown}." if ev else "No evidence: the bars are the model's marginals.")
    nums = [m.variables[j] for j in m.numeric]
    fig = shared.shared(
        ev_figs.model_graph,
        m.variables,
        m.dag.sorted_arcs(),
        observed={k: (f"{x:.4g}" if isinstance(x, float) else x) for k, x in ev.items()},
        picked=ss.get("hyb_node"),
        numeric=tuple(nums),
    )
    g, b = st.columns([1.4, 1.3], gap="medium")
    with g:
        charts.plotly_chart(fig, key="hyb_graph", config=CHART)
    disc = [m.variables[j] for j in m.discrete]
    with b:
        if disc:
            try:
                post = state.posterior(m, ev)
                prior = state.posterior(m, {}) if ev else post
            except BnfkError as exc:
                st.error(router.message(exc))
                st.button("Clear all evidence", on_click=state.clear_evidence, key="hyb_clear_all")
                return
            states = tuple(tuple(m.states[m.variables.index(d)]) for d in disc)
            as_dicts = {d: dict(zip(s, map(float, post[d]))) for d, s in zip(disc, states)}
            before = {d: dict(zip(s, map(float, prior[d]))) for d, s in zip(disc, states)} if ev else None
            chart = shared.shared(
                ev_figs.posterior_grid,
                tuple(disc),
                states,
                as_dicts,
                before,
                [k for k in ev if k in disc],
            )
            charts.plotly_chart(chart, key="hyb_bars", config=CHART)
            rows = [(d, s, p) for d, dist in as_dicts.items() for s, p in dist.items()]
            st.dataframe(
                pd.DataFrame(rows, columns=["variable", "state", "probability"]),
                hide_index=True,
                height=min(36 * (len(rows) + 1) + 2, 260),
                key="hyb_posterior_table",
            )
        else:
            st.caption("The network has no discrete node: no posterior to show.")
    free = [x for x in nums if x not in ev]
    if free:
        st.markdown("**Numeric nodes given the evidence**")
        cols = st.columns(min(len(free), 3))
        for k, x in enumerate(free):
            with cols[k % len(cols)]:
                _numeric_given(m, x, ev)


def _numeric_given(m: HybridNet, x: str, ev: dict) -> None:
    mix = marginal(m, x)
    got = state.conditional(m, ev, x) if ev else None
    given = got if isinstance(got, tuple) else None
    fig = figs.evidence_density_figure(x, (mix.weights, mix.means, mix.variances), given, title=x)
    charts.plotly_chart(fig, key=f"hyb_given_{m.variables.index(x)}", config=CHART)
    if given is not None:
        common.plain_caption(f"{x} given the evidence: N(mean {given[0]:.4g}, sd {math.sqrt(given[1]):.4g}).")
    elif isinstance(got, str):
        why = got.split(": ", 1)[1] if got.startswith("Row 1: ") else got
        common.plain_caption(f"Not covered: {why}")


def densities_tab(m: HybridNet) -> None:
    """A numeric node's data as a histogram with its fitted marginal density (a mixture over the discrete
    nodes it depends on) drawn over it."""
    ss = st.session_state
    nums = [m.variables[i] for i in m.numeric]
    if ss.get("hyb_den_node") not in nums:
        ss.hyb_den_node = nums[0]
    v = st.selectbox("Numeric node", nums, key="hyb_den_node")
    data = state.mixed()
    mix = marginal(m, v)
    fig = figs.density_figure(
        v, data.values[:, data.index(v)], mix.weights, mix.means, mix.variances, title=f"{v}: data and fit"
    )
    charts.plotly_chart(fig, key="hyb_density", config=CHART)
    over = ", ".join(mix.over) if mix.over else "no discrete node"
    common.plain_caption(
        f"The fitted density of {v} is a mixture of {len(mix.weights)} Gaussian(s), one per configuration of "
        f"{over} (the discrete parents of {v} and of its numeric ancestors), weighted by their probabilities"
        + (
            " (exact)."
            if mix.exact
            else " (estimated from 20,000 rows sampled with seed 0: the discrete nodes have too many states)."
        )
        + ("" if mix.coverage == 1.0 else f" The heaviest components, {mix.coverage:.1%} of the weight.")
    )


def cpt_tab(m: HybridNet) -> None:
    """A node's parameters: a discrete node's CPT; a numeric node's conditional densities, one Gaussian per
    configuration of its discrete parents, as a figure and as a table of regressions
    μ = b0 + Σ w·parent, σ."""
    ss = st.session_state
    if ss.get("hyb_cpt_node") not in m.variables:
        ss.hyb_cpt_node = m.variables[0]
    v = st.selectbox("Variable", list(m.variables), key="hyb_cpt_node")
    i = m.variables.index(v)
    if m.kinds[i] == "discrete":
        common.plain_caption(
            f"P({v} | {', '.join(m.variables[p] for p in m.discrete_parents(i)) or 'no parents'}): fitted "
            "(maximum likelihood)."
        )
        frame = model_sections.cpt_frame(_discrete_view(m), v)
        st.dataframe(frame.style.format("{:.4f}"), key="hyb_cpt_view")
        common.download(
            "This CPT (CSV)", frame.to_csv(), f"cpt_{common.slug(v)}.csv", "text/csv", key="hyb_dl_cpt"
        )
        return
    g = m.gaussians[i]
    nps = [m.variables[p] for p in m.numeric_parents(i)]
    data = state.mixed()
    at = [float(np.nanmean(data.values[:, data.index(p)])) for p in nps]
    configs = _configs(m, i)
    table = figs.conditional_table(configs, g.coef, g.variance, nps, at)
    means = g.coef[:, 0] + (g.coef[:, 1:] @ np.asarray(at) if nps else 0.0)
    fig = figs.conditional_figure(v, configs, means, g.variance, title=f"{v} given its parents")
    charts.plotly_chart(fig, key="hyb_cond_fig", config=CHART)
    common.plain_caption(
        f"{v} | {', '.join(m.variables[p] for p in m.dag.parent_indices()[i]) or 'no parents'}: "
        "one Gaussian per "
        "configuration of the discrete parents, N(μ, σ²)"
        + (f", drawn at the sample means of its numeric parents {', '.join(nps)}." if nps else ".")
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        key="hyb_cond_table",
        column_config={"σ": st.column_config.NumberColumn(format="%.4g")},
    )
    common.download(
        "These regressions (CSV)",
        table.to_csv(index=False),
        f"regressions_{common.slug(v)}.csv",
        "text/csv",
        key="hyb_dl_reg",
    )


def _discrete_view(m: HybridNet):
    """The discrete part as a BayesNet (its CPTs, for the CPT table)."""
    from bnfk_core.hybrid import discrete_part

    return state._cached((m.key(), "discrete"), lambda: discrete_part(m))


def downloads(m: HybridNet) -> None:
    common.download(
        "Model (hybrid JSON)",
        json.dumps(m.to_json_dict(), indent=1),
        f"{common.dataset_name()}_hybrid_model.json",
        "application/json",
        key="hyb_dl_json",
    )


def impute_panel() -> None:
    """Fill every missing cell of the mixed table under the hybrid network of the current structure
    (:func:`bnfk_core.hybrid.hybrid_imputation`): a number by its conditional mean, a category by its most
    probable state; the rows with filled cells (filled cells highlighted) and the completed table."""
    try:
        m = state.fitted(structure.dag())
        data = state.mixed()
    except BnfkError as exc:
        st.error(router.message(exc))
        return
    miss = data.missing_mask()
    if not miss.any():
        st.info("The loaded feature columns have no missing cells.")
        return
    num = np.array([k == "numeric" for k in data.kinds])
    n_num, n_cat = int(miss[:, num].sum()), int(miss[:, ~num].sum())
    scope = repr((state.fingerprint(tables.feature_data().fingerprint()), tuple(data.variables)))
    if not common.asked("Impute the missing cells", "imp_mine_run", scope):  # opening the tab: nothing
        st.caption(
            f"{n_num:,} missing numbers and {n_cat:,} missing categories: each is filled under the hybrid "
            "network of the Structure page, given the row's observed cells."
        )
        return
    with st.spinner("Filling the missing cells under the hybrid network…"), jobs.heavy("imputing"):
        res = state.imputed(m)
    c1, c2, c3 = st.columns(3)
    c1.metric("Numeric cells filled", f"{n_num:,}", help="Each with its conditional mean.")
    c2.metric("Categorical cells filled", f"{n_cat:,}", help="Each with its most probable state.")
    c3.metric("Rows with filled cells", f"{int(miss.any(axis=1).sum()):,}")
    common.plain_caption(
        f"The hybrid network of the Structure page ({structure.structure_label()}, {m.dag.n_arcs} arcs) "
        "fills each missing number with its conditional mean given the row's observed cells (the mean, not "
        "the mode: it minimises the expected squared error, and with missing categories in the row the "
        "conditional is a mixture whose mode is not its mean), each missing category with its most probable "
        "state given them, numbers included."
    )
    order = [res.data.index(v) for v in data.variables]
    done = res.data.select(list(data.variables))
    filled = res.imputed[:, order]
    rows = np.flatnonzero(filled.any(axis=1))[:200]
    frame = figs.completed_frame(done, filled, rows)
    mask = pd.DataFrame(filled[rows], index=frame.index, columns=frame.columns)
    st.dataframe(
        frame.style.apply(lambda _: np.where(mask, "background-color: #fff4e6", ""), axis=None).format(
            {v: "{:.4g}" for v, k in zip(data.variables, data.kinds) if k == "numeric"}
        ),
        key="hyb_imputed_rows",
    )
    st.caption(f"The first {len(rows):,} rows with filled cells (filled cells shaded).")
    common.download(
        "Completed feature columns (CSV)",
        lambda: figs.completed_frame(done, filled).to_csv(index=False),
        f"{common.dataset_name()}_completed.csv",
        "text/csv",
        key="hyb_dl_completed",
    )


#: the mixed benchmark's imputers offered first
BENCH_DEFAULT = ["clg", "mean-mode"]


def benchmark_panel() -> None:
    """The mixed imputation benchmark (:func:`bnfk_core.analyses.impute.mixed.mixed_benchmark`): a share of
    the observed cells hidden at random, filled by each imputer from the masked table, numbers scored by
    RMSE (per column, and the pooled RMSE in units of each column's standard deviation), categories by
    accuracy."""
    from bnfk_core.analyses.impute.mixed import MIXED_IMPUTERS, mixed_benchmark
    from bnfk_core.kernels.embed import sample_rows

    ss = st.session_state
    data = state.mixed()
    st.markdown("**Numbers as numbers: the mixed benchmark**")
    ss.setdefault("hyb_imp_methods", list(BENCH_DEFAULT))
    ss.setdefault("hyb_imp_ratio", 0.2)
    ss.setdefault("hyb_imp_repeats", 1)
    ss.setdefault("hyb_imp_seed", 0)
    ss.setdefault("hyb_imp_rows", min(data.n_rows, 1000))
    c1, c2, c3 = st.columns([2.2, 1, 1])
    methods = c1.multiselect(
        "Imputers",
        list(MIXED_IMPUTERS),
        format_func=lambda n: f"{n}: {MIXED_IMPUTERS[n][1]}",
        key="hyb_imp_methods",
    )
    ratio = c2.number_input("Share of cells hidden", 0.05, 0.5, step=0.05, key="hyb_imp_ratio")
    repeats = c2.number_input("Repeats", 1, 5, key="hyb_imp_repeats")
    seed = c3.number_input("Seed", 0, 10**6, key="hyb_imp_seed")
    n_rows = c3.number_input("Rows (sampled with the seed)", 2, data.n_rows, step=100, key="hyb_imp_rows")
    rows = (
        np.arange(data.n_rows) if n_rows >= data.n_rows else sample_rows(data.n_rows, int(n_rows), int(seed))
    )
    key = (tuple(data.variables), tuple(data.kinds), data.n_rows, tuple(methods), float(ratio), int(repeats))
    key += (int(seed), len(rows))
    if st.button("Run the mixed benchmark", disabled=not methods, key="hyb_imp_run"):
        try:
            with st.spinner("Hiding cells and imputing…"), jobs.heavy("the mixed imputation benchmark"):
                res = mixed_benchmark(
                    data.subset(rows), methods, ratio=float(ratio), repeats=int(repeats), seed=int(seed)
                )
        except BnfkError as exc:
            st.error(router.message(exc))
            return
        ss.hyb_imp_result = (key, res.to_dict())
    stored = ss.get("hyb_imp_result")
    if not stored or stored[0] != key:
        st.caption(
            f"{len(rows):,} rows: {ratio:.0%} of their observed cells hidden completely at random, each "
            "imputer fills them from the masked table (clg learns its own network from it). Numbers: RMSE; "
            "categories: accuracy."
        )
        return
    out = stored[1]
    summary = pd.DataFrame(out["summary"]).rename(
        columns={"nrmse": "pooled RMSE / sd", "accuracy": "accuracy (categories)", "seconds": "seconds"}
    )
    st.dataframe(summary, hide_index=True, key="hyb_imp_summary")
    per = {}
    for r in out["runs"]:
        for col, v in r["rmse"].items():
            per.setdefault(r["imputer"], {}).setdefault(col, []).append(v)
    table = pd.DataFrame({imp: {c: float(np.mean(v)) for c, v in cols.items()} for imp, cols in per.items()})
    table.index.name = "RMSE of column"
    st.dataframe(table, key="hyb_imp_rmse")
    st.caption(
        f"Means over {int(repeats)} repeat(s); the pooled RMSE divides each hidden number's error by its "
        "column's standard deviation; the accuracy counts the hidden categories filled with their true state."
    )
