"""A figure sent with its JSON made once (``bnfk_ui.state.charts.plotly_chart``) is the very element
``st.plotly_chart`` sends: same specification, configuration, element id, size and selection widget."""

from __future__ import annotations

import numpy as np
import plotly.io
import pytest
from streamlit.testing.v1 import AppTest

SCRIPT = """
import numpy as np
import streamlit as st

from bnfk_core.views import figures
from bnfk_ui.state import charts

K = np.arange(16.0).reshape(4, 4) / 7
fig = figures.gram_figure(K, np.arange(4), np.arange(4), np.array([0, 1, 0, -1]), ("a<b>", "c"), title="t",
                          height=300)
dag = figures.dag_figure(["x", "y", "z"], [("x", "y")], clickable=True)
USE_OURS, CASE = st.session_state.use_ours, st.session_state.case
if USE_OURS:
    draw = charts.plotly_chart
else:
    def draw(f, where=None, **kw):
        return (where or st).plotly_chart(f, **kw)
if CASE == "plain":
    draw(fig, key="heat", config={"displaylogo": False})
elif CASE == "select":
    st.session_state.out = draw(dag, key="dag", on_select="rerun", selection_mode="points",
                                config={"displaylogo": False, "scrollZoom": True})
elif CASE == "callback":
    draw(dag, key="dag2", on_select=lambda: None, selection_mode=("points", "box", "lasso"))
elif CASE == "twice":          # the same figure in two places, then again under a key already used
    draw(fig, key="one")
    draw(fig, key="two")
    if st.session_state.get("dup"):
        from streamlit.errors import StreamlitDuplicateElementKey
        try:
            draw(fig, key="one")
        except StreamlitDuplicateElementKey as exc:
            st.session_state.refused = str(exc)
elif CASE == "column":
    c1, c2 = st.columns(2)
    draw(fig, key="in_col", where=c2, width="content", height="content")
    with c1:
        draw(dag)
"""


def _charts(use_ours: bool, case: str, runs: int = 1):
    at = AppTest.from_string(SCRIPT, default_timeout=60)  # one script (its hash is part of an element's id)
    at.session_state.use_ours, at.session_state.case = use_ours, case
    for _ in range(runs):
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at, at.get("plotly_chart")


@pytest.mark.parametrize(
    "case,runs",
    [
        ("plain", 1),
        ("select", 1),
        ("callback", 1),
        ("column", 1),
        ("twice", 1),
        ("plain", 3),
        ("select", 2),
        ("twice", 3),
    ],
)
def test_the_element_is_st_plotly_charts(case, runs):
    """On the first run (the element id computed) and on reruns (the id kept on the figure) alike."""
    at_theirs, theirs = _charts(False, case, runs)
    at_ours, ours = _charts(True, case, runs)
    assert len(ours) == len(theirs) >= 1
    for a, b in zip(ours, theirs):
        assert a.proto.spec == b.proto.spec and a.proto.id == b.proto.id
        assert a.proto.SerializeToString(deterministic=True) == b.proto.SerializeToString(deterministic=True)
    # the same place in the page (columns) and the same width / height the delta carries
    assert [str(e) for e in at_ours.main] == [str(e) for e in at_theirs.main]
    if case == "select":  # a selection widget: its state is returned the same way
        assert at_ours.session_state.out == at_theirs.session_state.out


def test_a_kept_element_id_still_refuses_a_duplicate_key():
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    at.session_state.use_ours, at.session_state.case = True, "twice"
    at.run()
    assert not at.exception
    at.session_state.dup = True  # the figure's id under key "one" is kept: a second use must still fail
    at.run()
    assert "key='one'" in at.session_state.refused


def test_the_json_is_made_once_per_figure():
    from bnfk_core.views import figures
    from bnfk_ui.state.charts import figure_json

    fig = figures.gram_figure(np.eye(3), np.arange(3), np.arange(3), title="t")
    first = figure_json(fig)
    assert figure_json(fig) is first
    assert first == plotly.io.to_json(fig.to_dict(), validate=False)


def _chart_message(spec: str, element_id: str, height: int = 430, fragment: str = ""):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    el = msg.delta.new_element
    el.plotly_chart.spec, el.plotly_chart.id, el.plotly_chart.config = spec, element_id, "{}"
    el.height_config.pixel_height = height
    if fragment:
        msg.delta.fragment_id = fragment
    msg.metadata.delta_path[:] = [0, 3, 1]
    return msg


def test_a_chart_messages_hash_is_streamlits_and_made_once(monkeypatch):
    from streamlit.runtime import forward_msg_cache
    from streamlit.runtime.scriptrunner_utils import script_run_context as src

    from bnfk_ui import streamlit_adapter

    assert streamlit_adapter.install_message_hashes()
    ours = src.populate_hash_if_needed
    theirs = ours.original
    assert theirs is forward_msg_cache.populate_hash_if_needed
    monkeypatch.setattr(streamlit_adapter, "_HASHES", type(streamlit_adapter._HASHES)())
    spec = plotly.io.to_json(
        {"data": [{"type": "heatmap", "z": np.arange(40000.0).reshape(200, 200).tolist()}]}
    )
    calls = []
    real = forward_msg_cache.util.calc_hash

    def counting(b):
        calls.append(len(b))
        return real(b)

    monkeypatch.setattr(forward_msg_cache.util, "calc_hash", counting)
    for case in [(spec, "id-a"), (spec, "id-a", 300), (spec, "id-a", 430, "frag"), (spec + " ", "id-b")]:
        first, again, ref = _chart_message(*case), _chart_message(*case), _chart_message(*case)
        ours(first)
        n = len(calls)
        ours(again)
        assert len(calls) == n  # the second message of the same chart: not hashed again
        theirs(ref)
        assert first.hash == again.hash == ref.hash and ref.hash
        assert first.metadata.cacheable == again.metadata.cacheable == ref.metadata.cacheable
        assert list(again.metadata.delta_path) == [0, 3, 1]
    hashes = {}
    for case in [(spec, "id-a"), (spec, "id-a", 300), (spec, "id-a", 430, "frag"), (spec + " ", "id-b")]:
        m = _chart_message(*case)
        ours(m)
        hashes[case] = m.hash
    assert len(set(hashes.values())) == 4  # a change of layout, fragment or content: another hash
    other = _chart_message(spec, "")  # no element id: hashed as Streamlit hashes it
    n = len(calls)
    ours(other)
    assert len(calls) == n + 1
