"""Textbook networks in the pages: rows sampled from one (Home and Data), and the true network beside the
current one (its distance on the Structure page, the true network as A or B on the Compare page).

Every name shown is plain text; the networks' names and descriptions are the app's own
(:data:`bnfk_core.network.textbook.TEXTBOOK_NETWORKS`)."""

from __future__ import annotations

import streamlit as st

from bnfk_core.network.bif import model_to_bif
from bnfk_core.network.dag import DAG, structural_hamming_distance
from bnfk_core.network.textbook import TEXTBOOK_NETWORKS
from bnfk_core.serving import settings

from .. import common
from ..state import caches, choices, compare, structure, truth, uploads

__all__ = ["option_label", "sample_inputs", "data_panel", "truth_panel", "compare_buttons", "compare_line"]

SAMPLE_HELP = (
    "The rows every page analyses are drawn from the network by seeded forward sampling (each variable from "
    "its CPT given its parents); the network itself stays beside the learned one as the true network."
)


def option_label(name: str) -> str:
    """The dataset list's entry of the textbook network ``name``."""
    return f"Textbook network {name} ({TEXTBOOK_NETWORKS[name]}), rows sampled from it"


def sample_inputs() -> None:
    """The rows sampled from the current textbook network and their seed (a change samples again, and the
    structure starts again as the true network)."""
    ss = st.session_state
    spec = settings.SETTINGS["textbook_rows"]
    c1, c2 = st.columns(2)
    ss.w_textbook_rows = int(min(max(int(ss.textbook_rows), spec.lo), spec.hi))
    c1.number_input(
        "Rows sampled",
        min_value=int(spec.lo),
        max_value=int(spec.hi),
        step=500,
        key="w_textbook_rows",
        help=SAMPLE_HELP,
        on_change=lambda: uploads.change_data(textbook_rows=int(ss.w_textbook_rows)),
    )
    ss.w_textbook_seed = int(ss.textbook_seed)
    c2.number_input(
        "Seed of the sample",
        min_value=0,
        max_value=settings.MAX_SEED,
        step=1,
        key="w_textbook_seed",
        on_change=lambda: uploads.change_data(textbook_seed=int(ss.w_textbook_seed)),
    )


def data_panel() -> None:
    """The Data page's textbook networks: pick one, and the rows sampled from it (rows, seed) become the
    table every page analyses."""
    ss = st.session_state
    current = choices.textbook_of(ss.dataset)
    with st.expander(
        "Textbook networks: sample a table from a network with its own CPTs",
        icon=":material/school:",
        expanded=current is not None,
    ):
        names = list(TEXTBOOK_NETWORKS)
        if ss.get("w_textbook_pick") not in names:
            ss.w_textbook_pick = current or names[0]
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        name = c1.selectbox(
            "Network",
            names,
            format_func=lambda n: f"{n}: {TEXTBOOK_NETWORKS[n]}",
            key="w_textbook_pick",
        )
        if current == name:
            sample_inputs()
            src = truth.source()
            st.caption(f"The table is {src[1]:,} rows sampled from {name} with seed {src[2]}. {SAMPLE_HELP}")
            net = truth.truth()  # read here: the file is written when clicked, outside this run
            common.download(
                "True network with its CPTs (BIF)",
                lambda: model_to_bif(net).encode("utf-8"),
                f"{name}_true_network.bif",
                "text/plain",
                key="dl_truth_bif",
            )
        elif c2.button("Sample rows", key="textbook_open", icon=":material/casino:", width="stretch"):
            if uploads.use_textbook(name):
                st.rerun()


def truth_panel(dg: DAG) -> None:
    """Beside the graph of the Structure page: the structural Hamming distance of the current structure to
    the true network, and the button that makes the true network the current structure."""
    if truth.truth() is None:
        return
    why = truth.why_none()
    if why:
        common.plain_caption(why)
        return
    d = truth.shd(dg)
    c1, c2 = st.columns([1, 1.3], vertical_alignment="center")
    c1.metric(
        "SHD to the truth",
        d,
        help=f"Structural Hamming distance to {truth.truth_label()}, the network the rows were sampled from: "
        "node pairs whose edge differs between the two equivalence classes (missing, extra or differently "
        "oriented); 0 = Markov equivalent.",
    )
    c2.button(
        "Use the true network",
        icon=":material/verified:",
        width="stretch",
        disabled=dg == truth.truth_dag(),
        key="use_truth",
        on_click=lambda: structure.set_dag(truth.truth_dag(), truth.truth_label()),
    )


def compare_buttons() -> None:
    """On the Compare page: B, or A (the current network of every page), becomes the true network."""
    t = truth.truth_dag()
    if t is None:
        return
    c1, c2 = st.columns(2)
    if c1.button("B: the true network", key="cmp_truth_b", icon=":material/verified:", width="stretch"):
        compare.set_compare_b(t)
    if c2.button(
        "A: the true network",
        key="cmp_truth_a",
        icon=":material/verified:",
        width="stretch",
        help="The current network of every page becomes the true network (Undo on the Structure page).",
    ):
        structure.set_dag(t, truth.truth_label())
        st.rerun()


def compare_line(a: DAG, b: DAG) -> None:
    """On the Compare page: the structural Hamming distance of A to B (and of each to the true network, when
    there is one) and their BIC and BDeu scores on all rows."""
    sa, sb = caches.scores(a), caches.scores(b)
    t = truth.truth_dag()
    parts = [f"SHD between A and B: {structural_hamming_distance(a, b)}"]
    if t is not None:
        which = [n for g, n in ((a, "A"), (b, "B")) if g == t]
        if which:
            parts.append(f"the true network is {' and '.join(which)}")
        parts.append(f"SHD to the true network: A {truth.shd(a)}, B {truth.shd(b)}")
    for key, label in (("bic", "BIC"), ("bdeu", "BDeu")):
        parts.append(f"{label} A {sa[key]:,.1f}, B {sb[key]:,.1f} (B − A {sb[key] - sa[key]:+,.1f})")
    common.plain_caption(" · ".join(parts) + ".")
