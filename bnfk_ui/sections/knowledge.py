"""The Learn tab's knowledge: forbidden and required arcs for the search, and bootstrap arc strength.

:func:`arcs_inputs` draws the two arc fields (text ``A->B, C->D``) under the Learn tab's options and
returns what the Learn button passes to :func:`bnfk_ui.state.structure.learn`; :func:`bootstrap_panel` learns
the tab's recipe on B resampled tables (:func:`bnfk_core.learning.bootstrap.arc_strength`) and shows every
arc's strength and direction as a table (downloadable as CSV) and drawn on the graph.  Typed arcs are shown
back as plain text."""

from __future__ import annotations

import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.learning.knowledge import check_knowledge, format_arcs
from bnfk_core.registry import LEARNERS
from bnfk_core.views.figures import knowledge as fig_knowledge

from .. import common, jobs, router
from ..state import charts, choices, messages
from ..state import knowledge as kn

__all__ = ["arcs_inputs", "bootstrap_panel"]

#: the most bootstrap replicates the app runs at a click (the CLI's --bootstrap takes more)
APP_MAX_BOOTSTRAP = 500


def _takers() -> list[str]:
    return [n for n, s in LEARNERS.items() if s.applies("forbid")]


def arcs_inputs(feat, method: str) -> dict | None:
    """The forbidden and required arc fields; ``{"forbid": [...], "require": [...]}`` for the Learn button,
    or None (and the reason shown as an error) when an arc cannot hold or ``method`` cannot honour arcs."""
    kn.ensure()
    ss = st.session_state
    honours = LEARNERS[method].applies("forbid")
    takers = ", ".join(LEARNERS[n].label.split(" (")[0] for n in _takers())
    with st.expander("Knowledge: forbidden and required arcs", expanded=bool(ss.kn_forbid or ss.kn_require)):
        c1, c2 = st.columns(2)
        c1.text_input(
            "Forbidden arcs",
            placeholder="A->B, C->D",
            help="Arcs the learned network must not hold (that direction only). Honoured by " + takers + ".",
            **choices.bind("kn_forbid"),
        )
        c2.text_input(
            "Required arcs",
            placeholder="A->B, C->D",
            help="Arcs the learned network must hold (they may not form a cycle). Honoured by "
            + takers
            + ".",
            **choices.bind("kn_require"),
        )
        if not (ss.kn_forbid.strip() or ss.kn_require.strip()):
            return {"forbid": [], "require": []}
        if not honours:
            st.error(
                messages.plain(
                    f"{LEARNERS[method].label.split(' (')[0]} cannot honour forbidden or required arcs; "
                    f"choose {takers}, or clear the arcs.",
                    router.MAX_MESSAGE,
                )
            )
            return None
        try:
            fb, rq = check_knowledge(
                feat.variables, ss.kn_forbid, ss.kn_require, max_parents=ss.learn_max_parents or None
            )
        except BnfkError as exc:
            st.error(messages.plain(str(exc), router.MAX_MESSAGE))
            return None
        names = list(feat.variables)
        forbid = [(names[u], names[v]) for u, v in fb]
        require = [(names[u], names[v]) for u, v in rq]
        st.caption(
            messages.plain(
                f"The search keeps {len(forbid)} forbidden and {len(require)} required arc(s)"
                + (f": required {format_arcs(require)}" if require else "")
                + "."
            )
        )
        return {"forbid": forbid, "require": require}


def bootstrap_panel(feat, method: str, knowledge: dict | None) -> None:
    """B and a seed, the *Bootstrap arc strength* button, and its last result for this table and recipe:
    the strength / direction table with a CSV download and the graph of the arcs at or above a threshold."""
    kn.ensure()
    ss = st.session_state
    with st.expander("Bootstrap arc strength", expanded=ss.get("kn_result") is not None):
        st.caption(
            "Learns the method above on B tables of the same size resampled with replacement; an arc's "
            "strength is the share of the B networks holding it (either direction), its direction the share "
            "of those with this direction (bnlearn's boot.strength)."
        )
        c1, c2, c3 = st.columns(3)
        c1.number_input(
            "B (resampled tables)",
            min_value=1,
            max_value=APP_MAX_BOOTSTRAP,
            step=5,
            **choices.bind("kn_boot_b"),
        )
        common.seed_input("Seed (resampling)", "kn_boot_seed", c2)
        c3.slider("Draw arcs with strength at least", 0.0, 1.0, step=0.05, **choices.bind("kn_threshold"))
        key = (
            feat.fingerprint(),
            method,
            ss.learn_score,
            int(ss.learn_k),
            int(ss.learn_max_parents or 0),
            int(ss.learn_seed),
            repr(knowledge),
            int(ss.kn_boot_b),
            int(ss.kn_boot_seed),
        )
        if st.button("Bootstrap arc strength", icon=":material/bar_chart:", disabled=knowledge is None):
            bar = st.progress(0.0, text="Resampling…")
            try:
                with jobs.heavy("bootstrap"):
                    res = kn.bootstrap(
                        method,
                        ss.learn_score,
                        ss.learn_k,
                        ss.learn_max_parents or None,
                        ss.learn_seed,
                        knowledge["forbid"],
                        knowledge["require"],
                        ss.kn_boot_b,
                        ss.kn_boot_seed,
                        progress=jobs.progress(bar),
                    )
            except BnfkError as exc:
                st.error(router.message(exc))
            else:
                ss.kn_result = (key, res)
            bar.empty()
        saved = ss.get("kn_result")
        if saved is None or saved[0] != key:
            return
        res = saved[1]
        st.caption(
            messages.plain(
                f"{res.replicates} networks, resampling seed {res.seed}, {res.seconds:.2f} s; "
                f"{len(res.table) // 2} pairs joined at least once."
            )
        )
        records = res.to_records()
        fig = fig_knowledge.strength_figure(
            res.variables, records, float(ss.kn_threshold), title="Arcs by bootstrap strength"
        )
        charts.plotly_chart(fig, key="kn_strength_fig")
        st.dataframe(res.table, hide_index=True, width="stretch")
        common.download(
            "Arc strengths (CSV)",
            res.table.to_csv(index=False).encode("utf-8"),
            "arc_strength.csv",
            "text/csv",
            key="dl_arc_strength",
        )
