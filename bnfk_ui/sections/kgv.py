"""The KGV tab of the Structure page: the pairwise KGV mutual information of the variables (numbers
unbinned) as a heatmap, which columns were searched as numbers and how they are binned for the CPTs, and the
network learned by the KGV score on the raw numbers beside the one learned on the bins, with their structural
Hamming distance.  Widgets -> core calls (:mod:`bnfk_core.learning.kgv`,
:func:`bnfk_core.learning.recipe.learn_recipe`) -> figures."""

import pandas as pd
import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.learning.kgv import KGV_KERNELS, kgv_mutual_information
from bnfk_core.learning.recipe import Recipe, learn_recipe
from bnfk_core.network.dag import structural_hamming_distance
from bnfk_core.views import figures
from bnfk_core.views.figures import kgv as fig_kgv

from .. import common, jobs, router
from ..state import charts, shared, structure, tables
from .structure import act

__all__ = ["kgv_tab"]


@st.cache_resource(show_spinner=False, max_entries=8)
def _mi(_data, fingerprint: str, kernel: str, kappa):
    return kgv_mutual_information(_data, kernel=kernel, kappa=kappa)


#: the hill climbs with the KGV score, kept for every session per data, kernel, kappa, bound, seed and bins
_LEARNED = shared.Kept(16)


def _learned(data, fingerprint: str, kernel: str, kappa, max_parents, seed: int, bins: bool, progress=None):
    """The hill climb with the KGV score on the raw numbers (or, ``bins``, on their bins)."""

    def learn():
        recipe = Recipe(
            structure="hc", score="kgv", missing_data="complete-rows", max_parents=max_parents, seed=seed
        )
        opts = {"kernel": kernel, "kappa": kappa} | ({"bin_numbers": True} if bins else {})
        return learn_recipe(data, recipe, score_options=opts, progress=progress).result

    return _LEARNED.get((fingerprint, kernel, kappa, max_parents, seed, bins), learn)


#: the tab's three figures, kept for every session per data, kernel, kappa, bound and seed
_FIGURES = shared.Kept(16)


def _figures(key: tuple, mi: dict, raw, binned) -> tuple:
    """The KGV-MI heatmap and the two networks drawn on the raw network's layout, built once per ``key``
    (data fingerprint, kernel, kappa, bound, seed: what ``mi``, ``raw`` and ``binned`` are made from) for
    every session, and never changed afterwards (:mod:`bnfk_ui.state.charts` keeps their JSON): a rerun with
    the tab open draws them without building them again."""

    def build():
        heatmap = fig_kgv.kgv_mi_figure(
            mi["variables"],
            mi["matrix"],
            raw=mi["searched_raw"],
            title="KGV mutual information (nats; # = searched as numbers)",
        )
        # both drawn on the raw network's layout, staggered for half a 1280-pixel screen; the height follows
        # the layers
        pos = figures.shared_layout(raw.dag.nodes, raw.dag.sorted_arcs(), width=440)
        return (
            heatmap,
            figures.dag_figure(raw.dag.nodes, raw.dag.sorted_arcs(), pos=pos, title="KGV, raw numbers"),
            figures.dag_figure(binned.dag.nodes, binned.dag.sorted_arcs(), pos=pos, title="KGV on the bins"),
        )

    return _FIGURES.get(key, build)


def _lazy_bar(place):
    """A core ``progress`` callback that draws a progress bar in ``place`` on its first call (a cached step
    never calls it, so a rerun draws no bar)."""
    bar = []

    def update(fraction, message):
        if not bar:
            bar.append(place.progress(0.0, text="Starting…"))
        jobs.progress(bar[0])(fraction, message)

    return update


def kgv_tab() -> None:
    ss = st.session_state
    data = tables.data()
    c1, c2, c3 = st.columns([1, 1, 2])
    kernel = c1.selectbox(
        "Kernel of the numbers",
        KGV_KERNELS,
        key="w_kgv_kernel",
        help="Gaussian on standardised numbers (Bach & Jordan); linear gives the Gaussian mutual "
        "information. Categories always use the delta (one-hot) kernel.",
    )
    kappa = c2.number_input(
        "κ (0 = Bach's default)",
        min_value=0.0,
        max_value=1.0,
        value=0.0,
        step=0.001,
        format="%.4f",
        key="w_kgv_kappa",
        help="Regularisation; default 2e-2 below 1,000 rows, else 2e-3.",
    )
    kappa = float(kappa) or None
    c3.caption(
        "KGV scores mixed data without binning: each variable is a Gaussian in a kernel feature space. "
        "Numeric columns are searched as numbers; their CPTs (and the Fisher kernel) still use the bins."
    )
    if not st.toggle(
        "Compute the KGV dependence and the raw-vs-binned networks",
        key="w_kgv_on",
        help="Pairwise KGV mutual information and two hill climbs with the KGV score.",
    ):
        return
    place = st.empty()
    bar = _lazy_bar(place)
    try:
        with st.spinner("KGV mutual information…"):
            mi = _mi(data, data.fingerprint(), kernel, kappa)
        feat = data.without_class()
        key = (feat.fingerprint(), kernel, kappa, ss.learn_max_parents or None, int(ss.learn_seed))
        raw, binned = (
            _learned(
                feat,
                *key,
                bins,
                lambda f, msg, bins=bins: bar(
                    (f + bins) / 2,
                    f"Hill climbing with the KGV score on the {'bins' if bins else 'raw numbers'}: {msg}",
                ),
            )
            for bins in (False, True)
        )
    except BnfkError as exc:
        place.empty()
        st.error(router.message(exc))
        return
    place.empty()
    heatmap, raw_fig, binned_fig = _figures((data.fingerprint(), *key), mi, raw, binned)
    left, right = st.columns([1.2, 1], gap="medium")
    with left:
        charts.plotly_chart(heatmap, key="kgv_mi_chart", config={"displaylogo": False})
        st.caption(
            f"κ = {mi['kappa']:g}, σ = {mi['sigma']:g}, {mi['kernel']} kernel, {mi['n_rows_used']:,} "
            "complete rows."
        )
        table = pd.DataFrame(mi["matrix"], index=mi["variables"], columns=mi["variables"])
        common.download(
            "KGV-MI matrix (CSV)",
            table.to_csv(index_label="variable").encode("utf-8"),
            f"{common.dataset_name()}_kgv_mi.csv",
            "text/csv",
        )
    with right:
        bins = pd.DataFrame(
            {
                "column": mi["searched_raw"],
                "CPT bins": [", ".join(data.states[data.index(v)]) for v in mi["searched_raw"]],
            }
        )
        if len(bins):
            st.markdown(f"**{len(bins)} column(s) searched as numbers**, binned for the CPTs:")
            st.dataframe(bins, hide_index=True, width="stretch", height=min(300, 38 + 35 * len(bins)))
        else:
            st.info(
                "No column of these data was binned: KGV searches the same categories as the other scores."
            )
        shd = structural_hamming_distance(raw.dag, binned.dag)
        m1, m2 = st.columns(2)  # two across: three cut their labels at 1280 px
        m1.metric("Arcs (raw numbers)", raw.dag.n_arcs)
        m2.metric("Arcs (bins)", binned.dag.n_arcs)
        st.metric(
            "Structural Hamming distance", shd, help="Edges that differ between the two equivalence classes."
        )
    d1, d2 = st.columns(2, gap="medium")
    charts.plotly_chart(raw_fig, key="kgv_raw_dag", config={"displaylogo": False}, where=d1)
    charts.plotly_chart(binned_fig, key="kgv_bin_dag", config={"displaylogo": False}, where=d2)
    st.button(
        "Use the network learned on raw numbers",
        icon=":material/account_tree:",
        key="kgv_use_raw",
        on_click=act(
            "top",
            lambda: structure.set_dag(
                raw.dag, "Hill climbing (KGV, raw numbers)", learned=True, notes=raw.notes
            ),
        ),
    )
