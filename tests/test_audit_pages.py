"""Pages on degenerate uploads (one row; every column constant) and a wide upload: a sentence or a result,
never an internal error, each bounded in time."""

from __future__ import annotations

import re
import time

import pytest
from apptest_helpers import open_sidebar_box, page_app
from streamlit.testing.v1 import AppTest

ONE = b"class,a,b,c\nx,y,z,w\n"
CONSTANT = b"class,a,b\n" + b"".join(b"k,y,z\n" for _ in range(30))


def _clean(at):
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(e.value for e in at.error)
    assert "Something went wrong" not in shown and "internal error" not in shown, shown


@pytest.mark.parametrize("page", ["latent_classes.py", "imputation.py"])
@pytest.mark.parametrize("name,content", [("one.csv", ONE), ("constant.csv", CONSTANT)])
def test_degenerate_uploads_give_a_sentence_or_a_result(page, name, content):
    at = page_app(
        page, 180, dataset="upload", upload=(name, content), class_column="class", missing_policy="missing"
    ).run()
    _clean(at)
    run = [b for b in at.button if b.key == "imp_run"]
    if run:
        at = run[0].click().run()
        _clean(at)


WIDE = (
    "\n".join(
        [",".join(f"c{j}" for j in range(50_000))]
        + [",".join("ab"[(i + j) % 2] for j in range(50_000)) for i in range(20)]
    )
    + "\n"
)

SCRIPT = """
import os
import streamlit as st
from bnfk_ui import state
from bnfk_ui.state import messages, uploads
state.init()
if not st.session_state.get("tried"):
    st.session_state.tried = True
    with open(os.environ["BNFK_TEST_UPLOAD"], "rb") as fh:
        uploads.use_upload("wide.csv", fh.read())
messages.show_flash()
st.write(st.session_state.dataset)
"""


def test_a_50000_column_upload_is_refused_from_its_header(tmp_path, monkeypatch):
    f = tmp_path / "wide.csv"
    f.write_text(WIDE)
    monkeypatch.setenv("BNFK_TEST_UPLOAD", str(f))
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    t0 = time.monotonic()
    at.run()
    assert time.monotonic() - t0 < 30  # 66-85 s per page run before
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] and "50,000 variables of wide.csv" in at.error[0].value
    assert at.session_state["dataset"] != "upload"  # the current data stay


def test_a_sessions_unusable_settings_are_named_in_one_warning():
    import json

    from bnfk_core.network.dag import DAG
    from bnfk_core.serving.session_files import DataRef, session_dict

    ref = DataRef(
        name="mine.csv",
        content=b"class,a,b\n" + b"".join(f"c{i % 2},a{i % 3},b{i % 2}\n".encode() for i in range(40)),
        class_column="class",
    )
    doc = session_dict(ref, DAG(["a", "b"]), "smoothed")
    doc["settings"] = {"clu_seed": -5, "no_such_setting": 1, "kernel_rows": 7}
    name = "![i](http://evil.example/i.png).json"
    at = AppTest.from_file(str(page_app.__globals__["ROOT"] / "app.py"), default_timeout=120).run()
    open_sidebar_box(at, "share")
    at.file_uploader(key="w_session_file").upload(name, json.dumps(doc).encode(), "application/json").run()
    _clean(at)
    warnings = [w.value for w in at.warning if "settings could not be used" in w.value]
    assert len(warnings) == 1, [w.value for w in at.warning]
    assert "clu\\_seed" in warnings[0] or "clu_seed" in warnings[0]
    assert "no_such_setting" in warnings[0] and "\\[i\\]" in warnings[0]
    assert not re.search(r"(?<!\\)[\[\]]", warnings[0])  # every bracket of the file name escaped
    assert at.session_state["kernel_rows"] == 7 and at.session_state["clu_seed"] != -5


def test_an_upload_wider_than_the_pages_analyse_is_refused_from_its_header(tmp_path, monkeypatch):
    """10,000 columns x 20 rows (459 kB) passed the memory guard and held Home for 257 s: a table wider than
    the pages analyse is one sentence before anything is parsed, and the current data stay."""
    from bnfk_ui.state.uploads import MAX_PAGE_VARIABLES

    n = MAX_PAGE_VARIABLES + 1
    f = tmp_path / "wide.csv"
    f.write_text(",".join(f"c{j}" for j in range(n)) + "\n" + ("a," * n)[:-1] + "\n")
    monkeypatch.setenv("BNFK_TEST_UPLOAD", str(f))
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    t0 = time.monotonic()
    at.run()
    assert time.monotonic() - t0 < 10
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == [
        f"wide.csv has {n:,} columns, more than the {MAX_PAGE_VARIABLES:,} variables the app's pages "
        "analyse; drop columns before uploading it, or use the command line (python -m bnfk_core), "
        "which has no such limit."
    ]
    assert at.session_state["dataset"] != "upload"


@pytest.mark.parametrize("ceiling,refused", [("0.1", True), ("", False)])
def test_an_upload_whose_feature_map_exceeds_its_budget_is_refused_before_any_network(
    tmp_path, monkeypatch, ceiling, refused
):
    """The pages build the Fisher feature map of every row (one entry per state of every column): 2,000 rows x
    20 columns of 40 levels need about 0.2 GiB, refused under an operator ceiling of 0.1 GiB in one sentence
    naming the file and its widest column, the current data staying; under the default budget it loads."""
    cols = [f"c{j}" for j in range(19)] + ["Wide *col*"]
    rows = [",".join(f"v{(i + 7 * j) % 40}" for j in range(20)) for i in range(2000)]
    f = tmp_path / "wide.csv"
    f.write_text(",".join(cols) + "\n" + "\n".join(rows) + "\n")
    monkeypatch.setenv("BNFK_TEST_UPLOAD", str(f))
    monkeypatch.setenv("BNFK_MAX_MEMORY_GIB", ceiling)
    at = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    if refused:
        assert len(errors) == 1 and errors[0].startswith("wide.csv: the Fisher feature map of its 2,000 rows")
        assert "800 states" in errors[0] and "'c0', has 40" in errors[0], errors
        assert at.session_state["dataset"] != "upload"
    else:
        assert not errors and at.session_state["dataset"] == "upload"
