"""The Structure page's live view: click-driven edits (the graph's on_select callback), undo/redo, and the
live Gram matrix equal to a from-scratch Fisher Gram of the edited network after every edit."""

from unittest import mock

import numpy as np
import streamlit as st
from apptest_helpers import assert_clean, page_app

from bnfk_core.kernels import fisher as kernels
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit


def _live_matches_scratch(at):
    key, lk, rows = at.session_state["_live"]
    dag = DAG.from_dict(at.session_state["structure"]["dag"])
    assert lk.dag == dag
    feats = lk.data
    K = kernels.gram(fit(dag, feats, method=at.session_state["param_method"]), feats)
    assert np.max(np.abs(lk.gram() - K)) <= 1e-9 * max(1.0, np.abs(K).max())


def _click(at, customdata):
    """Run the graph's on_select callback as a click on the point carrying ``customdata`` would."""
    from bnfk_ui import live

    class Proxy(dict):
        __getattr__ = dict.__getitem__

        def __setattr__(self, k, v):
            self[k] = v

    ss = Proxy({k: at.session_state[k] for k in at.session_state})
    ss["dag_chart"] = {"selection": {"points": [{"customdata": customdata}]}}
    with mock.patch.object(st, "session_state", ss):
        live.graph_clicked("dag_chart")()
    for k in ("structure", "live_pick", "live_arc", "msg_live"):
        if k in ss:
            at.session_state[k] = ss[k]


def test_click_two_variables_adds_the_arc_and_the_live_kernel_follows():
    at = page_app("structure.py").run()
    assert_clean(at)
    _live_matches_scratch(at)
    dag = DAG.from_dict(at.session_state["structure"]["dag"])
    u, v = "crime", "immigration"
    assert not dag.has_arc(u, v) and not dag.has_arc(v, u)
    _click(at, u)
    assert at.session_state["live_pick"] == u
    _click(at, v)
    at.run()
    assert_clean(at)
    assert DAG.from_dict(at.session_state["structure"]["dag"]).has_arc(u, v)
    assert any(f"Added {u} → {v}" in s.value for s in at.success)
    assert any("term(s) rebuilt" in c.value for c in at.caption)
    _live_matches_scratch(at)
    # click the new arc's dot: Reverse, then Undo twice and Redo once
    _click(at, f"{u}\t{v}")
    at.run()
    at.button(key="live_reverse").click().run()
    assert_clean(at)
    assert DAG.from_dict(at.session_state["structure"]["dag"]).has_arc(v, u)
    _live_matches_scratch(at)
    [b for b in at.button if b.label == "Undo"][0].click().run()
    [b for b in at.button if b.label == "Undo"][0].click().run()
    assert DAG.from_dict(at.session_state["structure"]["dag"]) == dag
    _live_matches_scratch(at)
    [b for b in at.button if b.label == "Redo"][0].click().run()
    assert DAG.from_dict(at.session_state["structure"]["dag"]).has_arc(u, v)
    _live_matches_scratch(at)


def test_a_click_that_makes_a_cycle_is_one_message():
    at = page_app("structure.py").run()
    dag = DAG.from_dict(at.session_state["structure"]["dag"])
    u, v = dag.sorted_arcs()[0]
    _click(at, v)
    _click(at, u)  # v -> u next to u -> v: refused
    at.run()
    assert not at.exception
    assert any(u in e.value and v in e.value for e in at.error)
    assert DAG.from_dict(at.session_state["structure"]["dag"]) == dag


def test_the_live_heatmap_draws_at_most_draw_rows_while_the_kernel_keeps_every_row():
    import json

    from bnfk_core.views.figures import DRAW_ROWS

    at = page_app("structure.py").run()
    assert_clean(at)
    _, lk, rows = at.session_state["_live"]
    assert len(rows) == 435 > DRAW_ROWS and lk.gram().shape == (435, 435)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    heat = [
        t
        for spec in charts
        for t in spec["data"]
        if t.get("type") == "heatmap"
        and t.get("yaxis", "y") == "y"
        and isinstance(t.get("y"), list)
        and len(t["y"]) > 1
    ]
    assert heat and all(len(t["y"]) == DRAW_ROWS for t in heat)
    assert any(f"{DRAW_ROWS} of them drawn" in c.value for c in at.caption)


def test_the_equivalence_class_is_drawn_only_while_its_tab_is_open():
    """the CPDAG figure is not built on the first visit (the Learn tab is open), only when its tab is."""
    at = page_app("structure.py").run()
    assert_clean(at)
    assert not [c for c in at.get("plotly_chart") if c.key == "cpdag_chart"]
    at.session_state["structure_tab"] = "Equivalence class"
    at.run()
    assert_clean(at)
    assert [c for c in at.get("plotly_chart") if c.key == "cpdag_chart"]
    assert any(m.label == "Compelled arcs" for m in at.metric)


def test_only_the_open_tab_is_built():
    """the Structure page builds the open tab only, and a tab's widgets come back with it (that their
    values survive a closed spell is checked in tests/test_browser_live.py: AppTest keeps them either way)."""
    at = page_app("structure.py", structure_tab="Score landscape").run()
    assert_clean(at)
    at.toggle(key="land_on").set_value(True).run()
    at.number_input(key="land_seed").set_value(7).run()
    assert_clean(at)
    assert not [b for b in at.button if b.label == "Learn structure"]  # the Learn tab is closed
    at.session_state["structure_tab"] = "Learn"
    at.run()
    assert_clean(at)
    assert [b for b in at.button if b.label == "Learn structure"]
    assert not [t for t in at.toggle if t.key == "land_on"]  # not drawn while closed
    at.session_state["structure_tab"] = "Score landscape"
    at.run()
    assert_clean(at)
    assert at.toggle(key="land_on").value is True and at.number_input(key="land_seed").value == 7
    assert not at.warning or all("default value" not in w.value for w in at.warning)
