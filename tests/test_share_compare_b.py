"""Links and session files restore every page, the Compare page's B and the last learned network included;
the Session (JSON) download is made from values read in the script run, so the thread that makes it never
reads the session state."""

import json
import threading

from apptest_helpers import ROOT, open_sidebar_box
from streamlit.testing.v1 import AppTest

APP = str(ROOT / "app.py")
HAYES = {"data": "hayes_roth", "class": "class"}


def _fresh(query=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def _clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _query(at) -> dict:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def _maker(at):
    """share.session_maker() run with st.session_state bound to the AppTest's state (as in a script run)."""
    from unittest import mock

    import streamlit as st

    from bnfk_ui import share

    class Proxy(dict):
        __getattr__ = dict.__getitem__

    with mock.patch.object(st, "session_state", Proxy({k: at.session_state[k] for k in at.session_state})):
        return share.session_maker()


def test_link_and_session_file_restore_compare_b():
    at = _fresh(HAYES)
    at.switch_page("pages/compare.py").run()
    at.button(key="cmp_v").click().run()
    _clean(at)
    first = _metrics(at)
    b = at.session_state["compare_b"][1]
    assert float(first["max |ΔK|"]) > 0
    query = _query(at)
    assert "cmpb" in query
    again = _fresh(query)
    _clean(again)
    assert not again.warning, [w.value for w in again.warning]
    again.switch_page("pages/compare.py").run()
    _clean(again)
    assert again.session_state["compare_b"][1] == b
    assert _metrics(again) == first

    # the download's maker reads nothing of the session when it runs (on a thread of its own)
    maker, out = _maker(at), {}
    t = threading.Thread(target=lambda: out.setdefault("blob", maker()))
    t.start()
    t.join(60)
    doc = json.loads(out["blob"])
    assert doc["networks"]["compare_b"] == b
    fresh = open_sidebar_box(_fresh(), "share")
    fresh.file_uploader(key="w_session_file").upload(
        "lecture_session.json", out["blob"], "application/json"
    ).run()
    _clean(fresh)
    fresh.switch_page("pages/compare.py").run()
    _clean(fresh)
    assert fresh.session_state["compare_b"][1] == b
    assert _metrics(fresh) == first


def test_link_keeps_the_learned_network_and_refuses_a_bad_b():
    at = _fresh(HAYES)
    at.switch_page("pages/structure.py").run()
    [x for x in at.button if x.label == "Start empty"][0].click().run()
    _clean(at)
    learned = at.session_state["structure"]["learned"]
    query = _query(at)
    assert query["arcs"] == "" and query["learned"]
    again = _fresh(query)
    _clean(again)
    assert again.session_state["structure"]["learned"] == learned
    assert again.session_state["structure"]["dag"]["arcs"] == []
    bad = _fresh({**HAYES, "cmpb": "0-1.1-0"})
    assert any("Compare page's B" in w.value for w in bad.warning)


def test_session_file_networks_round_trip_and_refusals():
    import pytest

    from bnfk_core.network.dag import DAG
    from bnfk_core.serving.session_files import DataRef, SessionError, parse_session, session_dict

    ref = DataRef(sample="hayes_roth", class_column="class", missing_policy="category")
    nodes = ["hobby", "age", "educational-level", "marital-status"]
    b = DAG(nodes, [("hobby", "age"), ("marital-status", "age")])
    doc = session_dict(ref, DAG(nodes), "smoothed", networks={"compare_b": b})
    got = parse_session(json.dumps(doc), "s.json")
    assert got.networks["compare_b"] == b
    with pytest.raises(SessionError, match="networks"):
        parse_session(json.dumps({**doc, "networks": {"truth": doc["structure"]}}), "s.json")
    cyclic = {"nodes": nodes, "arcs": [["hobby", "age"], ["age", "hobby"]]}
    with pytest.raises(SessionError, match="compare_b"):
        parse_session(json.dumps({**doc, "networks": {"compare_b": cyclic}}), "s.json")


def test_a_link_keeps_the_preset_variables():
    at = _fresh(HAYES)
    at.switch_page("pages/structure.py")
    at.session_state["structure_tab"] = "Segment presets"
    at.run()
    picks = ["marital-status", "hobby", "age"]
    at.multiselect(key="w_seg_vars").set_value(picks).run()
    _clean(at)
    query = _query(at)
    assert query["pvars"] == "3.0.1"  # hobby, age, educational-level, marital-status: the data's order
    again = _fresh(query)
    again.switch_page("pages/structure.py")
    again.session_state["structure_tab"] = "Segment presets"
    again.run()
    _clean(again)
    assert again.multiselect(key="w_seg_vars").value == picks
