"""The Structure page's segment presets as a lecture uses them: chain, V, A on the same three variables
picked once, each building exactly its segment (no triangle), its roles and independencies shown, the graph
drawn beside the presets."""

import networkx as nx
from apptest_helpers import assert_clean, page_app

PICKS = ["crime", "immigration", "mx-missile"]  # A, B, C in reading order


def _button(at, label):
    return next(b for b in at.button if b.label == label)


def _among(at):
    arcs = {tuple(a) for a in at.session_state["structure"]["dag"]["arcs"]}
    return {(u, v) for u, v in arcs if u in PICKS and v in PICKS}, arcs


def test_chain_v_a_in_a_row():
    at = page_app("structure.py", timeout=60, structure_tab="Segment presets")
    at.run()
    assert_clean(at)
    A, B, C = PICKS
    at.multiselect(key="w_seg_vars").set_value(PICKS).run()
    before = _among(at)[1]
    outside = {a for a in before if not (a[0] in PICKS and a[1] in PICKS)}
    want = {"chain": {(A, B), (B, C)}, "v": {(A, B), (C, B)}, "a": {(B, A), (B, C)}}
    for kind in ("chain", "v", "a"):
        at.selectbox(key="w_seg_kind").set_value(kind).run()
        assert at.multiselect(key="w_seg_vars").value == PICKS  # kept: no picking again
        text = " ".join(m.value for m in at.markdown)
        assert "Roles:" in text and "Implies:" in text
        _button(at, "Apply preset").click().run()
        assert_clean(at)
        among, arcs = _among(at)
        assert among == want[kind], kind
        # the arcs to the other variables stay unless one would close a cycle through the picks
        assert nx.is_directed_acyclic_graph(nx.DiGraph(sorted(arcs)))
        assert len(outside - arcs) <= 2
        assert at.session_state["structure"]["segment"][0] == kind
    # the independencies shown are the textbook ones of the V-structure and chain
    at.selectbox(key="w_seg_kind").set_value("v").run()
    text = " ".join(m.value for m in at.markdown)
    assert f"{A} ⊥ {C}, but not given {B}" in text
    at.selectbox(key="w_seg_kind").set_value("chain").run()
    text = " ".join(m.value for m in at.markdown).replace("\\|", "|")  # shown as plain text: | escaped
    assert f"{A} ⊥ {C} | {B}" in text
    at.selectbox(key="w_seg_kind").set_value("full").run()
    assert "none" in " ".join(m.value for m in at.markdown)
    # the graph is drawn beside the presets too
    assert sum(1 for c in at.get("plotly_chart")) >= 2
