"""Streamlit AppTest checks: every page renders on the default data, and the main interactions work."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
import streamlit as st
from apptest_helpers import open_sidebar_box, page_app  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGES = ["pages/data.py", "pages/structure.py", "pages/kernel.py"]


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    if page:
        at.switch_page(page).run()
    return at


def _button(at: AppTest, label: str):
    for b in at.button:
        if b.label == label:
            return b
    raise AssertionError(f"no button {label!r}; have {[b.label for b in at.button]}")


# ---------------------------------------------------------------------- every page renders
def test_home_renders_with_default_state():
    at = _app()
    _clean(at)
    assert at.title[0].value == "Bayesian-network Fisher kernels"
    labels = {m.label: m.value for m in at.metric}
    assert labels["Rows × variables"] == "435 × 17"
    assert labels["Class column"] == "class"
    assert int(labels["Structure arcs"]) == 15  # Chow–Liu tree over the 16 votes
    assert at.session_state["dataset"] == "house_votes_84"
    assert len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("page", PAGES)
def test_page_renders(page):
    at = _app(page)
    _clean(at)
    assert at.get("plotly_chart"), f"{page} draws no chart"
    if page == "pages/structure.py":  # its files are on its Import / export tab (built when opened)
        at.session_state["structure_tab"] = "Import / export"
        at.run()
        _clean(at)
    assert at.get("download_button"), f"{page} offers no download"
    # the sidebar's Share box is built when opened: then it offers the session file
    assert not any(d.proto.label == "Session (JSON)" for d in at.get("download_button"))
    open_sidebar_box(at, "share")
    _clean(at)
    assert any(d.proto.label == "Session (JSON)" for d in at.get("download_button"))
    assert at.file_uploader(key="w_session_file") is not None


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_alone(page):
    """Deep link: the page file run on its own in a fresh session (defaults filled in)."""
    at = page_app(page.removeprefix("pages/"), 60).run()
    _clean(at)
    assert at.session_state["class_column"] == "class"
    assert at.get("plotly_chart")


# ---------------------------------------------------------------------- home: datasets
def _pick_upload(at: AppTest) -> None:
    box = at.selectbox(key="w_dataset_pick")
    box.select_index(len(box.options) - 1).run()  # "Upload your own CSV…" is the last option
    assert at.file_uploader(key="uploader")


def test_pick_another_sample_resets_structure():
    at = _app()
    box = at.selectbox(key="w_dataset_pick")
    box.set_value(next(o for o in box.options if o.startswith("Car Evaluation"))).run()
    _clean(at)
    assert at.session_state["dataset"] == "car"
    assert {m.label: m.value for m in at.metric}["Rows × variables"] == "1,728 × 7"
    nodes = at.session_state["structure"]["dag"]["nodes"]
    assert "class" not in nodes and len(nodes) == 6


def test_upload_csv():
    at = _app()
    _pick_upload(at)
    csv = b"colour,size,label\nred,S,a\nblue,M,b\nred,L,a\nblue,S,b\ngreen,M,a\n"
    at.file_uploader(key="uploader").upload("mine.csv", csv, "text/csv").run()
    _clean(at)
    assert at.session_state["dataset"] == "upload"
    assert at.session_state["class_column"] == "label"
    assert any("Loaded mine.csv" in s.value for s in at.success)
    assert at.session_state["structure"]["dag"]["nodes"] == ["colour", "size"]


def test_upload_with_id_column_names_it_and_drops_it():
    at = _app()
    _pick_upload(at)
    rows = "\n".join(f"id{i},{'xy'[i % 2]},{'pq'[i % 3 == 0]},{'ab'[i % 2]}" for i in range(80))
    at.file_uploader(key="uploader").upload(
        "ids.csv", f"key,f1,f2,class\n{rows}\n".encode(), "text/csv"
    ).run()
    assert not at.exception
    assert any("'key'" in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["drop_columns"] == ["key"]
    assert at.session_state["dataset"] == "upload"


def test_unreadable_upload_keeps_current_dataset():
    at = _app()
    _pick_upload(at)
    at.file_uploader(key="uploader").upload(
        "broken.csv", b"\x89PNG\r\n\x1a\n\x00\x00binary", "text/csv"
    ).run()
    assert not at.exception
    assert at.error, "an unreadable file must be reported"
    assert "broken.csv" in at.error[0].value
    assert at.session_state["upload"] is None
    # the app keeps working on the previous data
    at.switch_page("pages/kernel.py").run()
    _clean(at)


# ---------------------------------------------------------------------- data page
def test_change_class_column_and_drop_columns():
    at = _app("pages/data.py")
    at.selectbox(key="w_class_column").set_value("crime").run()
    _clean(at)
    assert at.session_state["class_column"] == "crime"
    assert "crime" not in at.session_state["structure"]["dag"]["nodes"]
    assert "class" in at.session_state["structure"]["dag"]["nodes"]
    at.multiselect(key="w_drop_columns").set_value(["immigration"]).run()
    _clean(at)
    assert "immigration" not in at.session_state["structure"]["dag"]["nodes"]
    at.radio(key="w_missing_policy").set_value("missing").run()
    _clean(at)
    assert at.session_state["missing_policy"] == "missing"
    # choices carry over to the other pages
    at.switch_page("pages/kernel.py").run()
    _clean(at)
    assert at.session_state["class_column"] == "crime"


def test_bad_data_option_is_refused_with_a_sentence():
    at = _app()
    box = at.selectbox(key="w_dataset_pick")
    box.set_value(next(o for o in box.options if o.startswith("Waveform"))).run()
    _clean(at)
    at.switch_page("pages/data.py").run()
    at.number_input(key="w_bins").set_value(0).run()  # numeric columns can no longer be loaded
    assert not at.exception
    assert at.error and "distinct" in at.error[0].value
    assert at.session_state["bins"] == 4  # the old setting stays


# ---------------------------------------------------------------------- structure page
def test_learn_hc_bic():
    at = _app("pages/structure.py")
    at.selectbox(key="w_learn_method").set_value("hc").run()
    at.selectbox(key="w_learn_score").set_value("bic").run()
    _button(at, "Learn structure").click().run()
    _clean(at)
    s = at.session_state["structure"]
    assert s["label"] == "Hill climbing (BIC)"
    assert s["learned_label"] == "Hill climbing (BIC)"
    assert len(s["dag"]["arcs"]) > 0
    assert s["undo"], "learning can be undone"


def test_cyclic_arc_shows_error_and_keeps_dag():
    at = _app("pages/structure.py")
    arcs = at.session_state["structure"]["dag"]["arcs"]
    # a -> b -> c exists in the tree; adding c -> a closes a cycle
    children = {}
    for u, v in arcs:
        children.setdefault(u, []).append(v)
    a, b = next((u, v) for u, v in arcs if v in children)
    c = children[b][0]
    at.selectbox(key="w_add_from").set_value(c).run()
    at.selectbox(key="w_add_to").set_value(a).run()
    _button(at, "Add arc").click().run()
    assert not at.exception
    assert at.error and "cycle" in at.error[0].value.lower()
    assert at.session_state["structure"]["dag"]["arcs"] == arcs


def test_add_remove_reverse_and_undo():
    at = _app("pages/structure.py")
    before = sorted(map(tuple, at.session_state["structure"]["dag"]["arcs"]))
    _button(at, "Start empty").click().run()
    _clean(at)
    assert at.session_state["structure"]["dag"]["arcs"] == []
    at.selectbox(key="w_add_from").set_value("crime").run()
    at.selectbox(key="w_add_to").set_value("immigration").run()
    _button(at, "Add arc").click().run()
    _clean(at)
    assert at.session_state["structure"]["dag"]["arcs"] == [["crime", "immigration"]]
    _button(at, "Reverse").click().run()
    assert at.session_state["structure"]["dag"]["arcs"] == [["immigration", "crime"]]
    _button(at, "Remove").click().run()
    assert at.session_state["structure"]["dag"]["arcs"] == []
    for _ in range(4):
        _button(at, "Undo").click().run()
    _clean(at)
    assert sorted(map(tuple, at.session_state["structure"]["dag"]["arcs"])) == before


def test_apply_v_segment():
    at = _app("pages/structure.py")
    at.session_state["structure_tab"] = "Segment presets"  # only the open tab is built
    _button(at, "Start empty").click().run()
    at.multiselect(key="w_seg_vars").set_value(["crime", "mx-missile", "immigration"]).run()  # reading order
    at.button(key="seg_apply_v").click().run()
    _clean(at)
    s = at.session_state["structure"]
    assert sorted(map(tuple, s["dag"]["arcs"])) == [("crime", "mx-missile"), ("immigration", "mx-missile")]
    assert s["segment"][0] == "v"
    assert any("Applied" in m.value for m in at.success)
    # the v-structure is compelled: the CPDAG has no reversible edge (its tab draws only while open)
    at.session_state["structure_tab"] = "Equivalence class"
    at.run()
    assert {m.label: m.value for m in at.metric}["Reversible edges"] == "0"


def test_parameter_method_changes_model():
    at = _app("pages/structure.py")
    at.selectbox(key="w_param_method").set_value("ml").run()
    _clean(at)
    assert at.session_state["param_method"] == "ml"


# ---------------------------------------------------------------------- kernel page
@pytest.mark.parametrize("kind", ["scaled-hamming", "hamming", "fisher"])
def test_switch_kernel(kind):
    at = _app("pages/kernel.py")
    at.selectbox(key="w_kernel_kind").set_value(kind).run()
    _clean(at)
    assert at.session_state["kernel_kind"] == kind
    assert len(at.get("plotly_chart")) >= 6


def test_kernel_options_and_comparisons():
    at = _app("pages/kernel.py")
    at.number_input(key="w_kernel_rows").set_value(120).run()
    at.selectbox(key="w_kernel_order").set_value("cluster").run()
    at.checkbox(key="w_kernel_normalize").check().run()
    for choice in ("tree", "previous", "scaled-hamming"):
        at.selectbox(key="w_kernel_compare").set_value(choice).run()
        _clean(at)
    assert at.session_state["kernel_rows"] == 120
    a, b = at.session_state["pair"]
    assert a != b


def test_pick_two_rows():
    at = _app("pages/kernel.py")
    at.selectbox(key="w_pair_a").set_value(3).run()
    at.selectbox(key="w_pair_b").set_value(7).run()
    _clean(at)
    assert at.session_state["pair"] == (3, 7)
    m = {x.label: x.value for x in at.metric}
    assert m["K(A, B)"] == m["Σ K_i (unnormalised)"]  # Theorem 1: the terms sum to the kernel
    assert any("contributions" in c.value.lower() or "similarity" in c.value.lower() for c in at.caption)


def _bars(chart) -> np.ndarray:
    """The bar lengths of a plotly bar chart as AppTest sees it (plotly's binary array encoding; a horizontal
    chart's lengths are its x)."""
    trace = json.loads(chart.proto.spec)["data"][0]
    y = trace["x" if trace.get("orientation") == "h" else "y"]
    return (
        np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"])
        if isinstance(y, dict)
        else np.asarray(y)
    )


@pytest.mark.parametrize("kind", ["hamming", "scaled-hamming"])
def test_pair_contributions_equal_counts_of_the_csv(kind):
    """The contributions chart against the formulas on the raw CSV: Hamming [x_i = y_i] / d, scaled Hamming
    [x_i = y_i] / p_i(x_i) - 1 with p_i the column's relative frequencies ('?' a level, all 435 rows
    sampled)."""
    at = _app("pages/kernel.py")
    at.selectbox(key="w_kernel_kind").set_value(kind).run()
    at.selectbox(key="w_pair_a").set_value(3).run()
    at.selectbox(key="w_pair_b").set_value(10).run()
    _clean(at)
    raw = pd.read_csv(ROOT / "sample_data" / "house_votes_84.csv", dtype=str, keep_default_na=False)
    feats = raw.drop(columns="class")
    x, y = feats.iloc[3], feats.iloc[10]
    same = (x == y).to_numpy()
    if kind == "hamming":
        want = same / feats.shape[1]
    else:
        p = np.array([(feats[c] == x[c]).mean() for c in feats.columns])
        want = same / p - 1.0
    got = _bars(at.get("plotly_chart")[-1])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["K(A, B)"] == metrics["Σ K_i (unnormalised)"] == f"{want.sum():.4g}"


def test_kernel_choices_come_from_the_registry():
    """A kernel registered through the registry alone is offered (kind and comparison) and explained."""
    from bnfk_core import registry
    from bnfk_core.kernels.hamming import HammingKernel

    spec = registry.KernelSpec(
        name="toy-overlap", label="Toy overlap", abbr="TO", fit=lambda train, **_: HammingKernel(train)
    )
    registry.KERNELS.register(spec)
    try:
        at = _app("pages/kernel.py")
        assert at.selectbox(key="w_kernel_kind").options[-1] == "Toy overlap"
        assert at.selectbox(key="w_kernel_compare").options[-1] == "Toy overlap kernel"
        at.selectbox(key="w_kernel_kind").set_value("toy-overlap").run()
        at.selectbox(key="w_kernel_compare").set_value("toy-overlap").run()
        _clean(at)
        assert any("toy overlap kernel does not depend on the structure" in i.value for i in at.info)
        m = {x.label: x.value for x in at.metric}
        assert m["K(A, B)"] == m["Σ K_i (unnormalised)"]
    finally:
        registry.KERNELS.unregister("toy-overlap")


def test_too_large_gram_is_an_error_not_a_crash(monkeypatch):
    import bnfk_core.kernels.fisher as kernels
    from bnfk_core.errors import KernelError

    def refuse(*args, **kwargs):
        raise KernelError("The Gram matrix of 333 × 333 rows would need 9 GB; choose fewer rows.")

    monkeypatch.setattr(kernels, "gram", refuse)
    at = _app("pages/kernel.py")
    at.number_input(key="w_kernel_rows").set_value(333).run()  # a new cache key: computed, refused
    assert not at.exception
    assert at.error and "333 × 333" in at.error[0].value
    at.switch_page("pages/structure.py").run()  # the app keeps working
    _clean(at)


ANALYSIS_PAGES = [
    "pages/clustering.py",
    "pages/imputation.py",
    "pages/prototypes.py",
    "pages/segments.py",
    "pages/results.py",
]


@pytest.mark.parametrize("page", ANALYSIS_PAGES)
def test_analysis_pages_are_in_the_navigation(page):
    """The router knows every analysis page and renders it on the default data."""
    at = _app(page)
    _clean(at)
    shown = at.get("plotly_chart") or at.get("dataframe") or at.button or at.info
    assert shown, f"{page} shows nothing"


def test_a_core_error_in_a_page_is_one_sentence(monkeypatch):
    """A BnfkError inside a page ends as one st.error sentence, also when the page runs on its own."""
    from apptest_helpers import page_app

    from bnfk_core.analyses.segments import information as segment_information
    from bnfk_core.analyses.segments.tables import SegmentError

    def refuse(*args, **kwargs):
        raise SegmentError("The variable 'xyz' cannot be ranked.")

    monkeypatch.setattr(segment_information, "mi_ranking", refuse)
    st.cache_data.clear()  # the page caches its ranking; an earlier test may have filled the cache
    at = page_app("segments.py").run()
    assert not at.exception
    assert [e.value for e in at.error] == ["The variable 'xyz' cannot be ranked."]


def test_the_memory_setting_is_the_limit_of_every_page_run(monkeypatch):
    """The sidebar's memory limit reaches the core (limits.memory_limit) and its refusal names the setting."""
    from bnfk_core.analyses.segments import information as segment_information
    from bnfk_core.data import limits
    from bnfk_core.errors import KernelError

    seen = []

    def record(*args, **kwargs):
        seen.append(limits.memory_limit())
        raise KernelError("The Gram matrix needs 9.0 GiB; sample fewer rows (or raise the memory limit).")

    monkeypatch.setattr(segment_information, "mi_ranking", record)
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not [w for w in at.number_input if w.key == "w_memory_gib"]  # built when Settings is opened
    open_sidebar_box(at, "settings")
    at.number_input(key="w_memory_gib").set_value(0.5).run()
    at.switch_page("pages/segments.py").run()
    assert not at.exception
    assert seen and set(seen) == {0.5 * 2**30}
    assert [e.value for e in at.error] == [
        "The Gram matrix needs 9.0 GiB; sample fewer rows (or raise the memory "
        "limit under Settings in the sidebar)."
    ]
    assert limits.memory_limit() == limits.DEFAULT_MAX_BYTES  # nothing leaks out of the page run


def test_choosing_upload_says_the_old_data_stay_until_a_file_comes():
    """After "Upload your own CSV…" and before a file, the captions do not describe the sample as the
    choice."""
    at = _app()
    _pick_upload(at)
    _clean(at)
    captions = [c.value for c in at.caption]
    assert any("until one is uploaded every page keeps using" in c for c in captions)
    assert any(c.startswith("Still ") and "no file uploaded yet" in c for c in captions)
    assert at.session_state["dataset"] == "house_votes_84"
