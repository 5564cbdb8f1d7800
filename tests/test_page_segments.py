"""AppTest of pages/segments.py: default render, kinds, base, theory/equivalence panels, arc search +
apply."""

import numpy as np
from apptest_helpers import assert_clean, page_app
from streamlit.testing.v1 import AppTest


def _app(**state) -> AppTest:
    return page_app("segments.py", 180, **state)


_clean = assert_clean


def test_default_page_renders_every_panel():
    at = _app(seg_rows=150, seg_restarts=5, seg_protos=5).run()
    _clean(at)
    assert at.session_state["seg_base"] == "current"  # the current network drives the lab by default
    assert any("current network of the Structure page" in c.value for c in at.caption)
    at.radio(key="w_seg_base").set_value("empty").run()  # the thesis's case tables need the empty base
    _clean(at)
    assert "Overlap of the two sets" not in [m.label for m in at.metric]  # heavy tabs wait for their button
    at.button(key="seg_impute_run").click().run()
    at.button(key="seg_equiv_run").click().run()
    _clean(at)
    # the top MI pair of house votes whose arc the current (learned) network lacks is used: ΔK not blank
    u, v = at.session_state["seg_vars"]
    assert [u, v] != ["el-salvador-aid", "aid-to-nicaraguan-contras"]
    assert [u, v] not in at.session_state["structure"]["dag"]["arcs"]
    assert any(o.startswith(f"{u}, {v}") for o in at.selectbox(key="w_seg_pick").options)
    labels = [m.label for m in at.metric]
    assert "Correlation clustering ARI · base" in labels and "Overlap of the two sets" in labels
    assert len(at.get("plotly_chart")) == 4  # three heatmaps + the equivalence difference
    tables = [d.value for d in at.dataframe]
    case = next(t.value for t in at.table if "formula" in t.value.columns)  # a static table: formulas wrap
    assert len(case) == 4 and np.allclose(case["theory"], case["measured"], atol=1e-9)
    equiv = next(v for v in tables if "Markov equivalent" in getattr(v, "columns", []))
    cov = equiv[equiv["edit"].str.startswith("reverse covered")]
    assert len(cov) == 1 and (cov["max |ΔK|"] < 1e-8).all()
    other = equiv[~equiv["Markov equivalent"]]
    assert len(other) >= 1 and (other["max |ΔK|"] > 1e-3).all()
    coll = next(v for v in tables if "theils_u" in getattr(v, "columns", []))
    assert len(coll) == 3


def test_kinds_base_and_suggestion():
    at = _app(seg_rows=100, seg_restarts=3, seg_protos=4).run()
    at.selectbox(key="w_seg_kind").set_value("v").run()
    _clean(at)
    assert len(at.session_state["seg_vars"]) == 3
    at.selectbox(key="w_seg_kind").set_value("full").run()
    _clean(at)
    at.selectbox(key="w_seg_kind").set_value("chain").run()
    at.radio(key="w_seg_base").set_value("current").run()
    assert not at.exception
    # the current structure (Chow-Liu tree) gives the chain's variables outside parents: an explanation, no
    # error
    assert not at.error
    opts = at.selectbox(key="w_seg_pick").options
    at.selectbox(key="w_seg_pick").set_value(opts[2]).run()
    _clean(at)
    assert len(at.session_state["seg_vars"]) == 3


def test_arc_search_and_apply():
    at = _app(
        seg_rows=100,
        seg_restarts=2,
        seg_protos=4,
        seg_arcs=1,
        dataset="hayes_roth",
        class_column="class",
        missing_policy="missing",
    ).run()
    _clean(at)
    at.button(key="seg_search_run").click().run()
    _clean(at)
    key, out, dag = at.session_state["seg_search"]
    assert len(out["steps"]) == 1 and len(dag["arcs"]) == 1
    at.button(key="seg_search_apply").click().run()
    _clean(at)
    assert at.session_state["structure"]["dag"]["arcs"] == dag["arcs"]
    assert at.session_state["structure"]["label"].startswith("arc search")


def test_gallery_shows_all_five_segments_against_the_same_base():
    from bnfk_core.analyses.segments import gallery as G
    from bnfk_core.kernels.embed import sample_rows
    from bnfk_core.network.dag import DAG

    at = _app(seg_rows=100, seg_restarts=3, seg_protos=5, seg_kind="v", seg_base="empty").run()
    _clean(at)
    at.button(key="seg_gallery_run").click().run()
    _clean(at)
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert sum("seg_gallery_" in k for k in keys) == 5
    table = next(df.value for df in at.dataframe if "ΔARI (CC)" in getattr(df.value, "columns", []))
    g = at.session_state["seg_gallery"][1]
    assert list(table["segment"]) == list(g.table()["segment"]) and len(table) == 5
    d = at.session_state["seg_vars"]
    from conftest import _sample

    from bnfk_core.data.table import load_csv

    data = load_csv(_sample("house_votes_84"), class_column="class", missing_policy="category")
    ref = G.segment_gallery(
        data,
        DAG(data.without_class().variables),
        d,
        rows=sample_rows(data.n_rows, 100, 0),
        restarts=3,
        seed=0,
        k_prototypes=5,
        params="bdeu",
    )  # the app's default estimator
    assert np.allclose(ref.table()["ΔARI (CC)"], table["ΔARI (CC)"]) and np.allclose(ref.base.K, g.base.K)


def test_npz_download_round_trips_the_arrays():
    import io

    import numpy as np

    from bnfk_ui.common import npz_bytes

    K1, rows = np.arange(6.0).reshape(2, 3), np.array([4, 9])
    back = np.load(io.BytesIO(npz_bytes(base=K1, rows=rows)))
    assert sorted(back.files) == ["base", "rows"]
    assert np.array_equal(back["base"], K1) and np.array_equal(back["rows"], rows)


def test_the_suggestions_table_is_built_when_opened():
    at = _app(seg_rows=60, seg_restarts=2).run()
    _clean(at)

    def suggestions():
        return [
            d.value for d in at.dataframe if {"variables", "score"} <= set(getattr(d.value, "columns", []))
        ]

    assert suggestions() == []
    at.session_state["seg_sug_open"] = True  # the visitor opens the expander (it reruns the page)
    at.run()
    _clean(at)
    (table,) = suggestions()
    # the variables used are one of the suggestions (the best one the current network lacks)
    assert len(table) >= 1 and at.session_state["seg_vars"] in [
        [v.strip() for v in o.split(",")] for o in table["variables"]
    ]
