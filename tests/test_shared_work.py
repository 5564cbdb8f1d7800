"""Work shared by the sessions of a class: a figure is built once per distinct input (arrays by content), and
the feature table once per table."""

from __future__ import annotations

import numpy as np
from apptest_helpers import ROOT

from bnfk_core.data.table import load_csv
from bnfk_ui.state import shared as S
from bnfk_ui.state.tables import without_class


def test_a_builder_runs_once_per_distinct_content():
    calls = []

    def build(K, names, title=""):
        calls.append(1)
        return {"sum": float(K.sum()), "names": list(names), "title": title}

    K = np.arange(12.0).reshape(3, 4)
    a = S.shared(build, K, ["x", "y"], title="t")
    b = S.shared(build, K.copy(), ("x", "y") and ["x", "y"], title="t")  # another array, same content
    assert a is b and len(calls) == 1
    K2 = K.copy()
    K2[1, 2] += 1e-12  # content changed: built again
    c = S.shared(build, K2, ["x", "y"], title="t")
    assert c is not a and len(calls) == 2 and c["sum"] == K2.sum()
    S.shared(build, K, ["x", "y"], title="u")  # another keyword: built again
    S.shared(build, K.astype(np.float32), ["x", "y"], title="t")  # another dtype: built again
    assert len(calls) == 4


def test_an_array_that_cannot_change_is_hashed_once_and_keyed_by_content(monkeypatch):
    import hashlib

    hashed = []
    real = hashlib.sha1

    def counting(data=b"", **kw):
        hashed.append(1)
        return real(data, **kw)

    monkeypatch.setattr(S.hashlib, "sha1", counting)
    rng = np.random.default_rng(0)
    K = rng.random((50, 50))
    fixed = K.copy()
    fixed.setflags(write=False)
    key = S.content_key(fixed)
    assert key == S.content_key(K) and len(hashed) == 2  # the same key as a writable copy's
    for _ in range(3):
        assert S.content_key(fixed) == key
    assert len(hashed) == 2  # read-only: its digest is kept
    S.content_key(K)
    S.content_key(K)
    assert len(hashed) == 4  # writable: hashed on every call
    # a read-only view of a writable array can change under it: hashed every time, so a change shows
    view = K.view()
    view.setflags(write=False)
    before = S.content_key(view)
    K[3, 4] += 1.0
    after = S.content_key(view)
    assert before != after and after == S.content_key(K.copy())
    # a kept digest goes with its array
    n = len(S._DIGESTS)
    del fixed
    assert len(S._DIGESTS) == n - 1


def test_a_keyed_value_is_built_once_per_key_and_handed_over_as_itself():
    calls = []

    def build(K, title=""):
        calls.append(K)
        return float(K.sum())

    K = np.arange(6.0).reshape(2, 3)
    assert S.shared(build, S.keyed(K, ("live", 1)), title="x") == K.sum()
    assert calls[0] is K  # the builder gets the array, not the wrapper
    assert (
        S.shared(build, S.keyed(K * 2, ("live", 1)), title="x") == K.sum()
    )  # the key stands for the content
    assert S.shared(build, S.keyed(K * 2, ("live", 2)), title="x") == 2 * K.sum()
    assert len(calls) == 2


def test_keys_tell_apart_lists_tuples_and_values():
    keys = {
        S.content_key(v)
        for v in (
            [1, 2],
            (1, 2),
            [1.0, 2],
            np.array([1, 2]),
            np.array([1, 2], np.int32),
            {"a": 1},
            {"a": 2},
            None,
            "1",
            1,
        )
    }
    assert len(keys) == 10


def test_the_store_is_bounded():
    for i in range(S.MAX_SHARED + 10):
        S.shared(lambda x: x, np.array([i]))
    assert len(S._STORE) <= S.MAX_SHARED


def test_the_feature_table_is_made_once_per_table():
    d = load_csv(str(ROOT / "sample_data" / "house_votes_84.csv"), class_column="class")
    f1, f2 = without_class(d), without_class(d)
    assert f1 is f2
    ref = d.without_class()
    assert f1.variables == ref.variables and np.array_equal(f1.codes, ref.codes)


def test_the_front_keys_calls_as_streamlit_does_and_shares_read_only_results():
    import streamlit as st

    calls = []

    @S.front
    @st.cache_data(show_spinner=False, max_entries=3)
    def gram(_model, model_key: str, rows: tuple, scale: float = 1.0):
        calls.append(model_key)
        return {"K": np.eye(len(rows)) * scale, "n": len(rows)}

    a = gram(object(), "m1", (1, 2, 3))
    b = gram(object(), "m1", (1, 2, 3), 1.0)  # another underscore argument, the same key: no call
    assert a is b and calls == ["m1"]
    with np.testing.assert_raises(ValueError):  # shared by every session: read-only
        a["K"][0, 0] = 5
    gram(None, "m1", (1, 2, 3), scale=2.0)  # a keyed argument changed: a call
    gram(None, "m2", (1, 2, 3))
    gram(None, "m1", (1, 2))
    assert calls == ["m1", "m1", "m2", "m1"]
    assert gram(None, "m1", (1, 2))["n"] == 2 and len(calls) == 4
    for i in range(10):  # bounded like the cache behind it (max_entries=3)
        gram(None, f"x{i}", (1,))
    calls.clear()
    gram(None, "m1", (1, 2, 3))
    assert calls == ["m1"]  # dropped from the front (Streamlit's cache may still hold it)


def test_a_spinner_hook_runs_only_when_a_front_has_work_to_do():
    import streamlit as st

    @S.front
    @st.cache_data(show_spinner=False, max_entries=4)
    def square(x: int) -> int:
        return x * x

    missed = []
    token = S.on_miss(lambda: missed.append(1))
    try:
        assert square(3) == 9 and missed == [1]  # computed: the hook ran first
        assert square(3) == 9 and missed == [1]  # held: no hook
        assert square(4) == 16 and missed == [1, 1]
    finally:
        S._ON_MISS.reset(token)
    assert square(5) == 25 and missed == [1, 1]  # no hook set: nothing called


def test_the_table_is_handed_out_once_per_reading_and_upload(monkeypatch):
    from bnfk_ui.state import tables

    loads = []

    def fake_load(name, content, *rest):
        loads.append(name)
        return load_csv(str(ROOT / "sample_data" / "zoo.csv"))

    monkeypatch.setattr(tables, "_load", fake_load)
    monkeypatch.setattr(tables, "_TABLES", {})
    monkeypatch.setattr(tables, "streamed", lambda s: None)
    up = b"a,b\n1,2\n"
    monkeypatch.setattr(tables, "_source", lambda ds: ("x.csv", up if ds == "upload" else None))
    monkeypatch.setattr(tables, "na_values_of", lambda s: None)
    s = {
        "dataset": "upload",
        "class_column": None,
        "missing_policy": "missing",
        "bins": 4,
        "drop_columns": (),
    }
    t1, t2 = tables.load(s), tables.load(dict(s))
    assert t1 is t2 and loads == ["x.csv"]
    assert t1.fingerprint() == load_csv(str(ROOT / "sample_data" / "zoo.csv")).fingerprint()
    up = b"a,b\n1,2\n"[:]  # other bytes (same content, another object): read again
    up = bytes(bytearray(up))
    tables.load(s)
    tables.load({**s, "bins": 5})
    assert len(loads) == 3


LAZY = """
import sys
import types

import streamlit as st
from bnfk_ui import common
from bnfk_ui.state import shared

held = sys.modules.setdefault("lazy_progress_fronts", types.ModuleType("lazy_progress_fronts"))
if not hasattr(held, "slow"):          # one front for every run, as a page module's (imported once) is
    @shared.front
    @st.cache_data(show_spinner=False, max_entries=4)
    def slow(x: int) -> int:
        return x + 1
    held.slow = slow
slow = held.slow

with common.LazyProgress() as bar:
    bar.step(0.2, "first")
    a = slow(st.session_state.x)
    bar.step(0.6, "second")
    b = slow(st.session_state.x + 100)
st.write(a + b)
"""


def test_a_lazy_progress_bar_is_drawn_only_when_a_step_computes():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(LAZY, default_timeout=60)
    at.session_state.x = 7_000_001  # not held by the front yet: the bar is drawn (then emptied)
    at.run()
    assert not at.exception
    drawn = [e.type for e in at.main]
    assert "empty" in drawn or "progress" in drawn, drawn
    at.run()  # every step held: no bar at all
    assert not at.exception
    assert not {"empty", "progress"} & {e.type for e in at.main}, [e.type for e in at.main]
    assert str(7_000_002 + 7_000_102) in at.markdown[0].value
