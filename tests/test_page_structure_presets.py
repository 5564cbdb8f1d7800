"""The Structure page's segment presets as a lecture uses them: chain, V, A on the same three variables
picked once, each building exactly its segment (no triangle), its roles and independencies shown, the graph
drawn beside the presets."""

import networkx as nx
from apptest_helpers import assert_clean, page_app

PICKS = ["crime", "immigration", "mx-missile"]  # A, B, C in reading order


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
        assert at.multiselect(key="w_seg_vars").value == PICKS  # kept: no picking again
        text = " ".join(m.value for m in at.markdown)
        assert "implies" in text and any(c.value.startswith("roles u = ") for c in at.caption)
        at.button(key=f"seg_apply_{kind}").click().run()
        assert_clean(at)
        among, arcs = _among(at)
        assert among == want[kind], kind
        # the arcs to the other variables stay unless one would close a cycle through the picks
        assert nx.is_directed_acyclic_graph(nx.DiGraph(sorted(arcs)))
        assert len(outside - arcs) <= 2
        assert at.session_state["structure"]["segment"][0] == kind
    # beside each preset, the textbook independencies of its segment (| is escaped: shown as plain text)
    rows = [m.value.replace("\\|", "|") for m in at.markdown if "· implies" in m.value]
    assert len(rows) == 5
    by = {r.split("**")[1]: r for r in rows}
    assert f"{A} ⊥ {C} | {B}" in by[f"{A} → {B} → {C}"]
    assert f"{A} ⊥ {C}, but not given {B}" in by[f"{A} → {B} ← {C}"]
    assert f"{A} ⊥ {C} | {B}" in by[f"{A} ← {B} → {C}"]
    assert "implies no independence" in by[f"{A} → {B}"]
    assert "implies no independence" in [r for k, r in by.items() if k.count("→") == 3][0]
    # the graph is drawn beside the presets too
    assert sum(1 for c in at.get("plotly_chart")) >= 2


def test_a_preset_that_would_close_a_cycle_is_not_offered():
    """Hayes-Roth's learned tree hobby → marital-status → {age, educational-level}: the A-structure on
    hobby, age, educational-level (age → hobby) would close hobby → marital-status → age → hobby."""
    at = page_app("structure.py", timeout=60, dataset="hayes_roth", class_column="class")
    at.session_state["structure_tab"] = "Segment presets"
    at.run()
    arcs = {tuple(a) for a in at.session_state["structure"]["dag"]["arcs"]}
    g = nx.DiGraph(sorted(arcs) + [("age", "hobby"), ("age", "educational-level")])
    assert not nx.is_directed_acyclic_graph(g)  # the premise, checked independently
    at.multiselect(key="w_seg_vars").set_value(["hobby", "age", "educational-level"]).run()
    assert_clean(at)
    assert at.button(key="seg_apply_a").disabled and not at.button(key="seg_apply_chain").disabled
    assert any("not offered" in c.value and "cycle" in c.value for c in at.caption)


def _mi_v(codes, u, v, w) -> float:
    """I(w; (u, v)) in nats from the counts of the three columns (a brute-force entropy sum)."""
    import numpy as np

    def h(*cols):
        _, n = np.unique(codes[:, list(cols)], axis=0, return_counts=True)
        p = n / n.sum()
        return float(-(p * np.log(p)).sum())

    return h(w) + h(u, v) - h(u, v, w)


def test_the_presets_start_on_the_best_v_triple_every_preset_can_build():
    """Without picks of one's own, the presets start on the triple whose V-structure scores the highest
    I(child; both parents) (brute force over every triple and child) among those whose chain, V and A are
    all DAGs and whose V changes the network: each preset is one click, and the picks stay when the page is
    left and opened again."""
    import itertools

    from bnfk_core.errors import StructureError
    from bnfk_core.network.dag import DAG, apply_segment, segment_roles
    from bnfk_core.network.textbook import textbook_network

    at = page_app("home.py").run()
    pick = at.selectbox(key="w_dataset_pick")
    pick.set_value(next(o for o in pick.options if o.startswith("Textbook network asia "))).run()
    at.switch_page("pages/structure.py").run()
    next(b for b in at.button if b.label == "Learn structure").click().run()
    at.session_state["structure_tab"] = "Segment presets"
    at.run()
    assert_clean(at)
    picked = at.multiselect(key="w_seg_vars").value
    dg = DAG.from_dict(at.session_state["structure"]["dag"])
    rows = textbook_network("asia").sample(
        int(at.session_state["textbook_rows"]), int(at.session_state["textbook_seed"])
    )
    names = list(rows.variables)
    best, best_score = None, -1.0
    for trio in itertools.combinations(range(len(names)), 3):
        for child in trio:
            u, v = [names[i] for i in trio if i != child]
            for order in ([u, names[child], v], [v, names[child], u]):
                try:
                    built = {k: apply_segment(dg, k, segment_roles(k, order)) for k in ("chain", "v", "a")}
                except StructureError:
                    continue
                if built["v"].arcs == dg.arcs:
                    continue
                s = _mi_v(rows.codes, names.index(u), names.index(v), child)
                if s > best_score + 1e-12:
                    best, best_score = order, s
    assert picked[1] == best[1] and set(picked) == set(best), (picked, best)
    for kind in ("chain", "v", "a"):
        assert not at.button(key=f"seg_apply_{kind}").disabled
    at.switch_page("pages/kernel.py").run()
    at.switch_page("pages/structure.py").run()
    assert at.multiselect(key="w_seg_vars").value == picked
