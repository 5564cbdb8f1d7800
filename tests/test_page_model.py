"""The Model page as a visitor uses it: evidence set and cleared (posteriors, P(evidence) and the MPE against
pgmpy's variable elimination on the model the page downloads), a click on the graph, explaining away on a
V-structure, "is X ⊥ Y given Z?" against networkx, and a CPT edited (rows renormalised, zero entries flagged,
bad entries refused) with every posterior following it."""

import io
import json
import math
from unittest import mock

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import streamlit as st
from apptest_helpers import assert_clean, page_app

from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import read_model
from bnfk_core.network.model import BayesNet

pytest.importorskip("pgmpy")
from pgmpy.inference import VariableElimination  # noqa: E402


@pytest.fixture
def downloads():
    """Every download the page offers in its last run: label -> content."""
    from bnfk_ui import common

    got = {}
    real = common.download

    def record(label, data, file_name, mime, key=None):
        got[label] = data
        real(label, data, file_name, mime, key)

    with mock.patch.object(common, "download", record):
        yield got


def _model(downloads) -> BayesNet:
    return BayesNet.from_json_dict(json.loads(downloads["Model (JSON)"]))


def _page_posteriors(downloads) -> dict:
    f = pd.read_csv(io.StringIO(downloads["Posteriors (CSV)"]), dtype={"state": str})
    out = {}
    for v, s, p in f.itertuples(index=False):
        out.setdefault(v, {})[s] = p
    return out


def _pgmpy(model: BayesNet, ev: dict) -> tuple[dict, float]:
    """Every posterior and P(evidence) by pgmpy's variable elimination."""
    net = model.to_pgmpy()
    ve = VariableElimination(net)
    post = {}
    for v in model.variables:
        if v in ev:
            continue
        f = ve.query([v], evidence=ev, show_progress=False)
        post[v] = {s: float(f.get_value(**{v: s})) for s in model.states[model.variables.index(v)]}
    p_ev = 1.0
    if ev:
        f = ve.query(list(ev), joint=True, show_progress=False)
        p_ev = float(f.get_value(**ev))
    return post, p_ev


def _assert_matches(page: dict, model: BayesNet, ev: dict) -> None:
    want, _ = _pgmpy(model, ev)
    for v, dist in want.items():
        for s, p in dist.items():
            assert abs(page[v][s] - p) <= 1e-9, (v, s, page[v][s], p)
    for v, s in ev.items():
        assert page[v][s] == 1.0


def _observe(at, v, s):
    m_vars = list(at.selectbox(key="model_node").options)
    at.selectbox(key="model_node").set_value(v)
    at.run()
    at.selectbox(key=f"model_state_{m_vars.index(v)}").set_value(s)
    at.run()
    next(b for b in at.button if b.label == "Observe").click()
    return at.run()


def _metric(at, label) -> float:
    return float(next(m.value for m in at.metric if m.label == label))


def _click(at, chart, customdata):
    """Run the graph's on_select callback as a click on the point carrying ``customdata`` would."""
    from bnfk_ui.sections import model as sections

    class Proxy(dict):
        __getattr__ = dict.__getitem__

        def __setattr__(self, k, v):
            self[k] = v

    ss = Proxy({k: at.session_state[k] for k in at.session_state})
    ss[chart] = {"selection": {"points": [{"customdata": customdata}]}}
    with mock.patch.object(st, "session_state", ss):
        sections.graph_clicked(chart, "model_node")()
    at.session_state["model_node"] = ss["model_node"]


def test_evidence_set_and_cleared_moves_every_posterior_as_pgmpy(downloads):
    at = page_app("model.py").run()
    assert_clean(at)
    m = _model(downloads)
    _assert_matches(_page_posteriors(downloads), m, {})
    assert _metric(at, "P(evidence)") == 1.0
    a, b = m.variables[2], m.variables[5]
    _click(at, "model_graph", a)  # a click on the graph picks the variable
    at.run()
    assert at.selectbox(key="model_node").value == a
    _observe(at, a, m.states[2][1])
    assert_clean(at)
    ev = {a: m.states[2][1]}
    _assert_matches(_page_posteriors(downloads), m, ev)
    from bnfk_core.inference.evidence import mpe, query

    q = query(m, ev)
    for v, dist in q.posterior.items():
        for s, p in dist.items():
            assert abs(_page_posteriors(downloads)[v][s] - p) <= 1e-9
    _, p_ev = _pgmpy(m, ev)
    assert math.isclose(_metric(at, "P(evidence)"), p_ev, rel_tol=1e-3)
    _observe(at, b, m.states[5][0])
    ev2 = {a: m.states[2][1], b: m.states[5][0]}
    _assert_matches(_page_posteriors(downloads), m, ev2)
    _, p_ev2 = _pgmpy(m, ev2)
    assert math.isclose(_metric(at, "P(evidence)"), p_ev2, rel_tol=1e-3)
    # the MPE shown is the exact one: its log-probability is at least that of pgmpy's MAP assignment
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["variable", "state"])
    shown = dict(zip(table["variable"], table["state"]))
    assert shown == mpe(m, ev2).assignment
    net = m.to_pgmpy()
    mapped = VariableElimination(net).map_query(
        [v for v in m.variables if v not in ev2], evidence=ev2, show_progress=False
    )
    full = {**mapped, **ev2}
    logp = sum(
        math.log(m.cpts[i][_config(m, i, full), m.states[i].index(str(full[v]))])
        for i, v in enumerate(m.variables)
    )
    assert mpe(m, ev2).log_probability >= logp - 1e-9
    # Clear the picked variable's evidence, then all of it
    at.selectbox(key="model_node").set_value(b)
    at.run()
    at.button(key="model_clear").click()
    at.run()
    _assert_matches(_page_posteriors(downloads), m, {a: m.states[2][1]})
    at.button(key="model_clear").click()  # on b, not observed now: "Clear all"
    at.run()
    assert_clean(at)
    _assert_matches(_page_posteriors(downloads), m, {})


def _config(m: BayesNet, i: int, full: dict) -> int:
    j = 0
    for p in m.parents[i]:
        j = j * len(m.states[p]) + m.states[p].index(str(full[m.variables[p]]))
    return j


def test_d_separation_agrees_with_networkx():
    at = page_app("model.py").run()
    s = dict(at.session_state["structure"])
    d = DAG.from_dict(s["dag"])
    nodes = list(d.nodes)
    rng = np.random.default_rng(7)
    arcs = set(d.arcs)
    for _ in range(6):  # a few extra arcs along the node order (no cycle): trails with colliders
        i, j = sorted(rng.choice(len(nodes), 2, replace=False))
        arcs.add((nodes[i], nodes[j]))
    try:
        g = DAG(nodes, sorted(arcs))
    except Exception:  # noqa: BLE001 - the tree's arcs and the added ones can close a cycle
        g = DAG(nodes, sorted(a for a in arcs if nodes.index(a[0]) < nodes.index(a[1])))
    s["dag"] = g.to_dict()
    at.session_state["structure"] = s
    at.session_state["model_tab"] = "Independence"
    at.run()
    assert_clean(at)
    G = nx.DiGraph(list(g.arcs))
    G.add_nodes_from(nodes)
    # queries whose answer turns on Z's last member: one it blocks, one it opens (a collider), and others
    blocks, opens, plain = [], [], []
    for _ in range(3000):
        x, y, *z = [str(v) for v in rng.choice(nodes, 2 + int(rng.integers(0, 4)), replace=False)]
        now, before = nx.is_d_separator(G, {x}, {y}, set(z)), nx.is_d_separator(G, {x}, {y}, set(z[:-1]))
        kind = plain if not z or now == before else blocks if now else opens
        if len(kind) < 2:
            kind.append((x, y, z, now))
        if len(blocks) == len(opens) == len(plain) == 2:
            break
    assert len(blocks) == len(opens) == 2, "the test graph has no query that Z decides"
    for x, y, z, want in blocks + opens + plain:
        at.session_state["model_x"], at.session_state["model_y"], at.session_state["model_z"] = x, y, z
        at.run()
        assert_clean(at)
        if want:
            assert any(t.value.startswith("Yes") for t in at.success), (x, y, z)
            assert not at.warning
        else:
            assert any("Active trail" in t.value for t in at.warning), (x, y, z)
            assert not at.success


def test_explaining_away_on_a_v_structure(downloads):
    at = page_app("model.py").run()
    s = dict(at.session_state["structure"])
    nodes = list(s["dag"]["nodes"])
    u, v, w = nodes[0], nodes[1], nodes[2]
    s["dag"] = DAG(nodes, [(u, v), (w, v)]).to_dict()
    at.session_state["structure"] = s
    at.run()
    assert_clean(at)
    at.button(key="model_demo").click()
    at.run()
    assert_clean(at)
    ev = at.session_state["model_evidence"]
    assert set(ev) == {v, w}
    m = _model(downloads)
    _assert_matches(_page_posteriors(downloads), m, ev)
    table = next(d.value for d in at.dataframe if d.value.index.name == f"P({u})")
    ve = VariableElimination(m.to_pgmpy())
    for row, evid in zip(table.index, ({}, {v: ev[v]}, ev)):
        f = ve.query([u], evidence=evid, show_progress=False)
        for state in m.states[0]:
            assert abs(table.loc[row, state] - f.get_value(**{u: state})) <= 1e-9
    assert any("explaining away" in c.value for c in at.caption)


def _edit(at, cells: dict):
    """Seed the CPT editor with ``cells`` {row: {column: value}} and press Apply."""
    key = next(d for d in at.data_editor).key
    at.session_state[key] = {"edited_rows": cells, "added_rows": [], "deleted_rows": []}
    at.button(key="model_cpt_apply").click()
    return at.run()


def test_cpt_edit_renormalises_flags_zeros_refuses_bad_entries_and_the_model_follows(downloads):
    at = page_app("model.py").run()
    before = _model(downloads)
    root = next(v for i, v in enumerate(before.variables) if not before.parents[i])
    i = before.variables.index(root)
    s0, s1 = before.states[i][0], before.states[i][1]
    at.session_state["model_tab"] = "CPTs"
    at.session_state["model_cpt_node"] = root
    at.run()
    assert_clean(at)
    assert "This CPT (CSV)" in downloads and "Model (BIF)" in downloads
    shown = pd.read_csv(io.StringIO(downloads["This CPT (CSV)"]), index_col=0)
    assert np.allclose(shown.to_numpy(), before.cpts[i], atol=1e-12)
    # bad entries: one sentence each, the model unchanged
    for cells, word in (
        ({0: {s0: -0.5}}, "negative"),
        ({0: {s0: None}}, "not a number"),
        ({0: {c: 0.0 for c in before.states[i]}}, "all zeros"),
    ):
        _edit(at, cells)
        assert len(at.error) == 1 and word in at.error[0].value, [e.value for e in at.error]
        assert at.error[0].value.count(". ") == 0
        assert np.allclose(_model(downloads).cpts[i], before.cpts[i])
    # a row [3, 1, 0, ...] is renormalised to [3/4, 1/4, 0, ...]; the zero is flagged
    cells = {0: {c: (3.0 if c == s0 else 1.0 if c == s1 else 0.0) for c in before.states[i]}}
    _edit(at, cells)
    assert_clean(at)
    after = _model(downloads)
    want = np.array([[3.0 if c == s0 else 1.0 if c == s1 else 0.0 for c in before.states[i]]]) / 4.0
    assert np.allclose(after.cpts[i], want, atol=1e-15)
    for j, c in enumerate(before.cpts):
        if j != i:
            assert np.array_equal(after.cpts[j], c)
    at.run()  # the editor shows the kept table: a zero entry is flagged when the root has a third state
    if len(before.states[i]) > 2:
        assert any("Zero entries" in w.value for w in at.warning)
    # the posteriors follow the edit: the Evidence tab equals pgmpy on the edited CPT
    at.session_state["model_tab"] = "Evidence"
    at.run()
    assert_clean(at)
    edited = before.to_json_dict()
    edited["variables"][i]["cpt"] = want.tolist()
    truth = BayesNet.from_json_dict(edited)
    _assert_matches(_page_posteriors(downloads), truth, {})
    assert abs(_page_posteriors(downloads)[root][s0] - 0.75) <= 1e-12
    p_before, _ = _pgmpy(before, {})
    page = _page_posteriors(downloads)
    moved = [
        v for v in p_before if v != root and any(abs(page[v][s] - p) > 1e-6 for s, p in p_before[v].items())
    ]
    assert moved, "no other posterior followed the edit"
    # the BIF download reads back as the edited model
    back = read_model(io.StringIO(downloads["Model (BIF)"]), source="model.bif")
    assert np.allclose(back.cpts[i], want)


def test_zero_entry_is_flagged_and_impossible_evidence_refused(downloads):
    at = page_app("model.py").run()
    m = _model(downloads)
    root = next(v for i, v in enumerate(m.variables) if not m.parents[i])
    i = m.variables.index(root)
    s0 = m.states[i][0]
    at.session_state["model_tab"] = "CPTs"
    at.session_state["model_cpt_node"] = root
    at.run()
    _edit(at, {0: {s0: 0.0}})
    assert_clean(at)
    assert any("Zero entries (1)" in w.value for w in at.warning)
    at.session_state["model_tab"] = "Evidence"
    at.run()
    _observe(at, root, s0)
    assert len(at.error) == 1 and "probability zero" in at.error[0].value
    at.button(key="model_clear_all").click()
    at.run()
    assert_clean(at)


def test_an_edit_is_dropped_with_a_note_when_its_variable_gets_other_parents(downloads):
    at = page_app("model.py").run()
    before = _model(downloads)
    roots = [v for i, v in enumerate(before.variables) if not before.parents[i]]
    leaf = next(v for i, v in enumerate(before.variables) if before.parents[i])
    i, j = before.variables.index(roots[0]), before.variables.index(leaf)
    at.session_state["model_tab"] = "CPTs"
    for v in (roots[0], leaf):
        at.session_state["model_cpt_node"] = v
        at.run()
        k = before.variables.index(v)
        _edit(at, {0: {before.states[k][0]: 5.0}})
        assert_clean(at)
    assert sorted(at.session_state["model_edits"]) == sorted([roots[0], leaf])
    # the leaf gets one more parent (an arc from a variable after it in no order: none of its descendants)
    s = dict(at.session_state["structure"])
    d = DAG.from_dict(s["dag"])
    desc = {leaf}
    changed = True
    while changed:
        changed = False
        for a, b in d.arcs:
            if a in desc and b not in desc:
                desc.add(b)
                changed = True
    extra = next(v for v in before.variables if v not in desc and v not in d.parents(leaf))
    s["dag"] = d.add_arc(extra, leaf).to_dict()
    at.session_state["structure"] = s
    at.run()
    assert_clean(at)
    assert any(f"The CPT edit of '{leaf}' was dropped" in x.value for x in at.info)
    assert list(at.session_state["model_edits"]) == [roots[0]]
    after = _model(downloads)
    assert after.cpts[j].shape[0] == before.cpts[j].shape[0] * len(
        before.states[before.variables.index(extra)]
    )
    want = np.array(before.cpts[i][0], dtype=float)
    want[0] = 5.0
    assert np.allclose(after.cpts[i][0], want / want.sum())  # the root's edit is kept


MARKUP = ["<a href=x>click</a>", "$x^2$", "<b>bold</b>"]
RAW = ("<a href=x>", "$x^2$", "<b>bold", "<i>s", "**t")


def test_markup_names_and_states_show_literally_on_every_tab():
    from test_figure_names import strings

    header = ",".join(["class"] + MARKUP)
    rows = "".join(f"c{i % 2},<i>s{i % 3}</i>,**t{(i // 2) % 2}**,y{(i // 3) % 2}\n" for i in range(80))
    at = page_app(
        "model.py",
        dataset="upload",
        upload=("names.csv", (header + "\n" + rows).encode()),
        class_column="class",
        missing_policy="missing",
    )
    at.run()
    s = dict(at.session_state["structure"])
    s["dag"] = DAG(MARKUP, [(MARKUP[0], MARKUP[1]), (MARKUP[2], MARKUP[1])]).to_dict()
    at.session_state["structure"] = s
    at.session_state["model_evidence"] = {MARKUP[0]: "<i>s1</i>"}
    at.run()
    at.button(key="model_demo").click()
    at.run()
    texts, specs = [], []
    for tab in ("Evidence", "Independence", "CPTs"):
        at.session_state["model_tab"] = tab
        if tab == "Independence":
            at.session_state["model_z"] = [MARKUP[1]]
        at.run()
        assert_clean(at)
        for kind in ("markdown", "caption", "info", "warning", "error", "success"):
            texts += [str(e.value) for e in at.get(kind)]
        texts += [w.label for w in at.selectbox] + [w.label for w in at.multiselect]
        specs += [x for c in at.get("plotly_chart") for _, x in strings(json.loads(c.proto.spec))]
    from bnfk_ui.state.messages import plain

    assert any(plain(MARKUP[0]) in t for t in texts)  # the names are shown ...
    for t in texts:
        for raw in RAW:
            assert raw not in t, t  # ... and never as Markdown or HTML
    for t in specs:
        for raw in RAW[:-1]:  # plotly reads HTML and LaTeX, not Markdown
            assert raw not in t, t
    assert any("&lt;b&gt;bold" in x for x in specs)
