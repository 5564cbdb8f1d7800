"""Links and session files in the app (bnfk_ui.share, bnfk_core.serving.settings): a configured view
survives a link and a session file exactly; hostile query strings and files give one warning or error, never a
traceback."""

import math

import pytest
from apptest_helpers import ROOT, open_sidebar_box
from streamlit.testing.v1 import AppTest

from bnfk_core.serving import settings as S
from bnfk_ui.share import decode_arcs, encode_arcs

APP = str(ROOT / "app.py")
FROM, TO = "crime", "immigration"  # not adjacent in the default Chow–Liu tree


def _fresh(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def _clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


# ---------------------------------------------------------------------- the settings registry
def test_settings_parse_and_refuse():
    assert S.SETTINGS["clu_seed"].parse("7") == 7 and S.SETTINGS["clu_seed"].parse(2**32 - 1) == 2**32 - 1
    assert S.SETTINGS["seg_missing"].parse("0.35") == pytest.approx(0.35)
    assert S.SETTINGS["kernel_normalize"].parse("true") is True
    assert S.SETTINGS["clu_kernels"].parse("fisher,hamming") == ["fisher", "hamming"]
    for key, bad, why in (
        ("clu_seed", "-1", "from 0 to"),
        ("clu_seed", "1e99", "from 0 to"),
        ("clu_seed", "2.5", "integer"),
        ("clu_seed", "nan", "integer"),
        ("clu_algorithm", "<script>", "one of"),
        ("clu_kernels", "fisher,zzz", "zzz"),
        ("kernel_normalize", "maybe", "true or false"),
        ("memory_gib", "inf", "finite"),
    ):
        with pytest.raises(ValueError, match=why):
            S.SETTINGS[key].parse(bad)
    for s in S.SETTINGS.values():  # every default is a valid value of its own setting
        assert s.parse(s.default) == s.default and s.parse(s.encode(s.default)) == s.default


def test_arcs_encoding_round_trips_and_refuses():
    from bnfk_core.errors import StructureError
    from bnfk_core.network.dag import DAG

    vs = ("a", "b c", "d")
    dag = DAG(vs, [("a", "d"), ("b c", "d")])
    assert encode_arcs(dag, vs) == "0-2.1-2" and decode_arcs("0-2.1-2", vs) == dag
    assert decode_arcs("", vs) == DAG(vs)
    with pytest.raises(StructureError):
        decode_arcs("0-1.1-0", vs)
    for bad in ("0-9", "a-b", "0_1", "1-" + "9" * 40):
        with pytest.raises(ValueError):
            decode_arcs(bad, vs)


# ---------------------------------------------------------------------- links
def test_a_link_restores_the_view_exactly():
    at = _fresh()
    at.switch_page("pages/structure.py").run()
    at.selectbox(key="w_add_from").set_value(FROM).run()
    at.selectbox(key="w_add_to").set_value(TO).run()
    [b for b in at.button if b.label == "Add arc"][0].click().run()
    _clean(at)
    at.switch_page("pages/clustering.py").run()
    at.selectbox(key="w_clu_kernel").set_value("fisher").run()
    at.number_input(key="w_clu_seed").set_value(11).run()
    at.number_input(key="w_clu_restarts").set_value(7).run()
    at.switch_page("pages/kernel.py").run()
    at.number_input(key="w_kernel_rows").set_value(120).run()
    at.switch_page("pages/clustering.py").run()
    _clean(at)
    first = _metrics(at)
    query = {k: v for k, v in at.query_params.items()}
    assert query["clu_seed"] == ["11"] or query["clu_seed"] == "11"
    assert "kernel_rows" in query and "arcs" in query
    again = _fresh({k: (v[-1] if isinstance(v, list) else v) for k, v in query.items()})
    _clean(again)
    assert not again.warning, [w.value for w in again.warning]
    again.switch_page("pages/clustering.py").run()
    _clean(again)
    assert _metrics(again) == first
    for key in ("clu_kernel", "clu_seed", "clu_restarts", "kernel_rows", "structure"):
        a, b = at.session_state[key], again.session_state[key]
        assert (a["dag"] == b["dag"]) if key == "structure" else a == b, key


@pytest.mark.parametrize(
    "query, says",
    [
        ({"clu_seed": "-5"}, "clu_seed must be from 0 to"),
        ({"clu_seed": "99999999999999999999999"}, "clu_seed must be from 0 to"),
        ({"arcs": "0-1.1-0"}, "its structure cannot be used"),
        ({"arcs": "0-999"}, "beyond the data"),
        ({"data": "<script>alert(1)</script>"}, "is not a bundled dataset"),
        ({"upload": "0123456789abcdef"}, "not on this server"),
        ({"no_such_thing": "1"}, "'no_such_thing' is not a setting"),
        ({"clu_kernel": "zzz"}, "clu_kernel must be one of"),
        ({"params": "magic"}, "params 'magic' is not an estimator"),
    ],
)
def test_hostile_links_give_one_warning_and_defaults(query, says):
    at = _fresh(query)
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and says in warnings[0], warnings
    assert at.session_state["clu_seed"] == 0 and at.session_state["dataset"] == "house_votes_84"


def test_a_link_with_a_class_column_that_is_not_there_is_one_message():
    at = _fresh({"class": "<b>nope</b>"})
    assert not at.exception
    assert any("nope" in e.value for e in at.error) or any("nope" in w.value for w in at.warning)
    assert at.session_state["class_column"] == "class"


# ---------------------------------------------------------------------- session files
def test_session_file_round_trip_in_the_app():
    import json

    at = _fresh({"clu_seed": "5", "arcs": "0-3.3-2", "clu_kernel": "fisher"})
    _clean(at)
    at.switch_page("pages/clustering.py").run()
    first = _metrics(at)
    assert not any(d.proto.label == "Session (JSON)" for d in at.get("download_button"))  # built when opened
    open_sidebar_box(at, "share")
    dl = next(d for d in at.get("download_button") if d.proto.label == "Session (JSON)")
    assert dl is not None
    blob = _session_from(at)
    doc = json.loads(blob)
    assert doc["schema"] == "bnfk-session" and doc["settings"]["clu_seed"] == 5
    fresh = open_sidebar_box(_fresh(), "share")
    fresh.file_uploader(key="w_session_file").upload("mine_session.json", blob, "application/json").run()
    _clean(fresh)
    fresh.switch_page("pages/clustering.py").run()
    assert _metrics(fresh) == first
    assert fresh.session_state["structure"]["dag"] == at.session_state["structure"]["dag"]
    bad = open_sidebar_box(_fresh(), "share")
    bad.file_uploader(key="w_session_file").upload(
        "bad.json", b'{"schema": "bnfk-session", "version": 7}', "application/json"
    ).run()
    assert not bad.exception and any("bad.json has session version 7" in e.value for e in bad.error)


def _session_from(at) -> bytes:
    """The bytes the "Session (JSON)" button would download now: share.session_bytes with st.session_state
    bound to the AppTest's session state."""
    from unittest import mock

    import streamlit as st

    from bnfk_ui import share

    class Proxy(dict):
        __getattr__ = dict.__getitem__

    with mock.patch.object(st, "session_state", Proxy({k: at.session_state[k] for k in at.session_state})):
        return share.session_bytes()


def test_every_default_is_in_the_app_state():
    at = _fresh()
    for k, s in S.SETTINGS.items():
        v = at.session_state[k]
        assert v == s.default or (isinstance(v, float) and math.isclose(v, s.default)), k


def test_a_link_keeps_the_segments_lab_variables():
    """The Segments lab's variables (in role order) travel in the link and come back in that order."""
    at = _fresh({"data": "hayes_roth", "class": "class"})
    at.switch_page("pages/segments.py").run()
    _clean(at)
    picked = ["marital-status", "hobby"]  # not the default suggestion, roles swapped
    at.session_state["seg_vars"] = picked
    at.run()
    _clean(at)
    query = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert query["segvars"] == "3.0"
    again = _fresh(query)
    _clean(again)
    again.switch_page("pages/segments.py").run()
    _clean(again)
    assert again.session_state["seg_vars"] == picked
    assert not again.warning, [w.value for w in again.warning]
    bad = _fresh({"data": "hayes_roth", "class": "class", "segvars": "0.99"})
    assert any("segvars" in w.value for w in bad.warning)


# ---------------------------------------------------------------------- limits from links
def test_a_link_lowers_the_memory_limit_but_never_raises_it():
    at = _fresh({"memory_gib": "64"})
    assert at.session_state["memory_gib"] == S.SETTINGS["memory_gib"].default
    assert any("memory_gib from a link can only lower the limit" in w.value for w in at.warning)
    at = _fresh({"memory_gib": "1.5"})
    assert at.session_state["memory_gib"] == pytest.approx(1.5)
    assert not [w for w in at.warning if "memory_gib" in w.value]


def test_the_operator_ceiling_bounds_the_visitors_memory_limit():
    import os

    host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    assert S.memory_ceiling_gib({}) == pytest.approx(min(64.0, 0.75 * host))
    assert S.memory_ceiling_gib({"BNFK_MAX_MEMORY_GIB": "2"}) == 2.0
    assert S.memory_ceiling_gib({"BNFK_MAX_MEMORY_GIB": "0.01"}) == S.SETTINGS["memory_gib"].lo
    assert S.memory_ceiling_gib({"BNFK_MAX_MEMORY_GIB": "lots"}) == S.memory_ceiling_gib({})
    assert S.memory_ceiling_gib({"BNFK_MAX_MEMORY_GIB": "1e400"}) == S.memory_ceiling_gib({})
