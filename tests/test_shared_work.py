"""Work shared by the sessions of a class: a figure is built once per distinct input (arrays by content), and
the feature table once per table."""
from __future__ import annotations

import numpy as np

from bnfk_core.data.table import load_csv
from importlib import import_module
from bnfk_ui.state.tables import without_class

S = import_module("bnfk_ui.state.shared")      # the module (the package exports its function by that name)
from apptest_helpers import ROOT


def test_a_builder_runs_once_per_distinct_content():
    calls = []

    def build(K, names, title=""):
        calls.append(1)
        return {"sum": float(K.sum()), "names": list(names), "title": title}

    K = np.arange(12.0).reshape(3, 4)
    a = S.shared(build, K, ["x", "y"], title="t")
    b = S.shared(build, K.copy(), ("x", "y") and ["x", "y"], title="t")      # another array, same content
    assert a is b and len(calls) == 1
    K2 = K.copy()
    K2[1, 2] += 1e-12                                                        # content changed: built again
    c = S.shared(build, K2, ["x", "y"], title="t")
    assert c is not a and len(calls) == 2 and c["sum"] == K2.sum()
    S.shared(build, K, ["x", "y"], title="u")                                # another keyword: built again
    S.shared(build, K.astype(np.float32), ["x", "y"], title="t")             # another dtype: built again
    assert len(calls) == 4


def test_keys_tell_apart_lists_tuples_and_values():
    keys = {S.content_key(v) for v in ([1, 2], (1, 2), [1.0, 2], np.array([1, 2]), np.array([1, 2], np.int32),
                                       {"a": 1}, {"a": 2}, None, "1", 1)}
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
