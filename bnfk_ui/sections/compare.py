"""Parts of the Compare structures page: the presets that set B in one click, the arc edits of B, and the
row of outcomes of A beside B."""

import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.network.dag import DAG, apply_segment, segment_pattern, segment_roles
from bnfk_core.network.edit import ARC_EDITS, ArcEdit

from .. import common
from ..state import compare, messages, structure

__all__ = ["SEGMENT_PRESETS", "presets", "edit_b", "outcome_metrics"]

#: B in one click beside the empty network: the empty network plus one segment on the three variables
SEGMENT_PRESETS = {"chain": "Chain", "v": "V-structure", "a": "A-structure"}


def presets(feat, triple) -> None:
    """One click sets B: the empty network, or the empty network plus a segment on u, v, w; or a copy of A.
    B is set in the buttons' callbacks, before the page runs, so the address bar's link already holds it."""
    cols = st.columns(len(SEGMENT_PRESETS) + 2)
    cols[0].button(
        "Empty",
        key="cmp_empty",
        help="No arcs: the scaled-Hamming kernel.",
        use_container_width=True,
        on_click=lambda: compare.set_compare_b(DAG(feat.variables)),
    )
    for col, (kind, label) in zip(cols[1:], SEGMENT_PRESETS.items()):
        ok = len(triple) == 3
        col.button(
            label,
            key=f"cmp_{kind}",
            help="The empty network plus "
            + (segment_pattern(kind, segment_roles(kind, triple)) if ok else "the segment")
            + " on the three variables (picked in the order the pattern reads).",
            use_container_width=True,
            disabled=not ok,
            on_click=lambda kind=kind: compare.set_compare_b(
                apply_segment(DAG(feat.variables), kind, segment_roles(kind, triple))
            ),
        )
    cols[-1].button(
        "Copy A",
        key="cmp_copy",
        help="B becomes the current network again.",
        use_container_width=True,
        on_click=lambda: compare.set_compare_b(structure.dag()),
    )


def edit_b(feat, b: DAG) -> None:
    """An arc edit applied to B, and the button that makes B the current network of every page."""
    with st.expander("Edit B arc by arc, or make B the current network"):
        c1, c2, c3, c4 = st.columns([1.5, 1.5, 1.2, 1.3], vertical_alignment="bottom")
        u = c1.selectbox("From", list(feat.variables), key="cmp_from")
        v = c2.selectbox("To", list(feat.variables), index=min(1, feat.n_vars - 1), key="cmp_to")
        kind = c3.selectbox("Edit", list(ARC_EDITS), key="cmp_edit")
        if c4.button("Apply to B", key="cmp_apply", use_container_width=True):
            try:
                compare.set_compare_b(ArcEdit(kind, u, v).apply(b))
            except BnfkError as exc:
                st.error(messages.plain(str(exc), messages.MAX_MESSAGE))
        if st.button("Make B the current network (every page follows it)", key="cmp_promote"):
            structure.set_dag(compare.compare_b(), "from the Compare page")
            st.rerun()


def outcome_metrics(cmp, has_class: bool) -> None:
    """A beside B in one row: the largest kernel change, Markov equivalence, the clusterings' ARI (against
    the class, else between A and B), the imputation accuracy and the shared prototypes."""
    m = st.columns(7)
    m[0].metric(
        "max |ΔK|",
        f"{cmp.max_abs_delta:.3g}",
        help="Largest change of a kernel value between A and B on the sampled rows.",
    )
    m[1].metric(
        "Equivalent",
        "yes" if cmp.equivalent else "no",
        help="A and B Markov equivalent: one Fisher kernel under a likelihood-equivalent estimator (BDeu, "
        "the default) -- paper, Theorem 4.",
    )
    if has_class:
        m[2].metric(
            "ARI · A", f"{cmp.a.ari:.3f}", help="Correlation clustering of A's kernel against the class."
        )
        m[3].metric("ARI · B", f"{cmp.b.ari:.3f}", **common.delta(cmp.b.ari - cmp.a.ari, "+.3f"))
    else:
        m[2].metric("A vs B clusters", f"{cmp.agreement:.3f}", help="ARI between A's and B's clusterings.")
    m[4].metric("Imputation · A", f"{cmp.a.accuracy:.3f}")  # no help icon: the label fits (caption says it)
    m[5].metric(
        "Imputation · B", f"{cmp.b.accuracy:.3f}", **common.delta(cmp.b.accuracy - cmp.a.accuracy, "+.3f")
    )
    m[6].metric("Shared protos", f"{cmp.prototype_overlap} / {len(cmp.a.prototypes)}")
