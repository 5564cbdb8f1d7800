"""The app served to strangers: what a hostile link, page input or session file can reach.

Every case is bounded in time (AppTest timeouts; FIFOs that would block an open). By default no file of the
server's disk is read; with the operator's folders (BNFK_DATA_DIR / BNFK_OUTPUT_DIR) nothing outside them is,
and the refusal is one sentence that is the same for an existing and a missing path; uploads are reached only
with their 128-bit private id; numbers in links are bounded like their widgets; names are text in figures; a
failed session open changes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time

import numpy as np
import pytest
from apptest_helpers import ROOT, open_sidebar_box, page_app
from streamlit.testing.v1 import AppTest

from bnfk_core.serving import settings as S
from bnfk_core.serving.serve import OUTSIDE_READ
from bnfk_ui.state.messages import plain

APP = str(ROOT / "app.py")
SECRET = "root:x:0:0:hunter2"


def _fresh(query: dict | None = None, page: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120) if page is None else page_app(page, 120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def _texts(at) -> str:
    """Everything the page shows as text (messages, captions, markdown, metrics, code, tables)."""
    out = []
    for kind in ("error", "warning", "info", "success", "caption", "markdown", "code", "text"):
        out += [str(e.value) for e in at.get(kind)]
    out += [f"{m.label} {m.value}" for m in at.metric]
    out += [d.value.to_csv() for d in at.dataframe]
    return "\n".join(out)


def _no_crash(at):
    assert not at.exception, [e.value for e in at.exception]
    text = _texts(at)
    assert "internal error" not in text and "Something went wrong" not in text, text[:500]


@pytest.fixture
def outside(tmp_path):
    """A folder outside the operator's: a 'password file' and a FIFO."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "passwd.csv").write_text(f"user,entry\nroot,{SECRET}\n")
    os.mkfifo(d / "pipe.csv")
    return d


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    d = tmp_path / "data"
    d.mkdir()
    (d / "ok.csv").write_text("class,a,b\n" + "".join(f"c{i % 2},a{i % 3},b{i % 4}\n" for i in range(60)))
    os.mkfifo(d / "fifo.csv")
    monkeypatch.setenv("BNFK_DATA_DIR", str(d))
    return d


# ---------------------------------------------------------------------- server files
@pytest.mark.parametrize("path", ["/etc/passwd", "passwd.csv", "pipe.csv", "/nonexistent/x.csv"])
def test_by_default_a_path_link_reads_nothing(path, outside, monkeypatch):
    monkeypatch.delenv("BNFK_DATA_DIR", raising=False)
    target = str(outside / path) if not path.startswith("/") else path
    t0 = time.monotonic()
    at = _fresh({"path": target})
    assert time.monotonic() - t0 < 60
    _no_crash(at)
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "This server does not read files from its disk" in warnings[0], warnings
    assert at.session_state["dataset"] == "house_votes_84" and SECRET not in _texts(at)
    assert not [t for t in at.text_input if t.key == "w_server_path_input"]


def test_with_a_data_folder_every_path_outside_gets_the_same_sentence(outside, data_dir):
    said = set()
    for p in (
        "/etc/passwd",
        "/etc/shadow",
        "/nonexistent/x.csv",
        str(outside / "passwd.csv"),
        str(outside / "pipe.csv"),
        str(outside / "missing.csv"),
        "../outside/passwd.csv",
        "/proc/self/environ",
        os.path.expanduser("~/.ssh"),
        "/dev/zero",
    ):
        at = _fresh({"path": p})
        _no_crash(at)
        assert at.session_state["dataset"] == "house_votes_84" and SECRET not in _texts(at)
        said.add(tuple(w.value for w in at.warning))
    assert len(said) == 1, said  # identical, whatever exists out there
    assert OUTSIDE_READ.rstrip(".") in next(iter(said))[0]


def test_a_fifo_in_the_data_folder_is_refused_without_blocking(data_dir):
    t0 = time.monotonic()
    at = _fresh({"path": "fifo.csv"})
    _no_crash(at)
    assert time.monotonic() - t0 < 60
    assert any("'fifo.csv' in the server's data folder is not a regular file" in w.value for w in at.warning)
    data = page_app("data.py", 60).run()  # and typed on the Data page
    data.text_input(key="w_server_path_input").input("fifo.csv")
    data.button(key="server_path_load").click().run()
    _no_crash(data)
    assert [e.value for e in data.error] == [
        "'fifo.csv' in the server's data folder is not a regular file; give the "
        "name of a CSV or Parquet file."
    ]


def test_a_file_in_the_data_folder_opens_from_a_link_by_its_name(data_dir):
    at = _fresh({"path": "ok.csv"})
    _no_crash(at)
    assert not at.warning and not at.error
    assert at.session_state["dataset"] == "path"
    assert at.query_params["path"] in (["ok.csv"], "ok.csv")  # the link names it relative to the folder
    assert str(data_dir) not in _texts(at)


def test_a_file_set_behind_the_ui_outside_the_folder_is_refused(outside, data_dir):
    at = page_app("data.py", 60, dataset="path", server_path=str(outside / "passwd.csv")).run()
    assert not at.exception
    assert [e.value for e in at.error] == [OUTSIDE_READ] and SECRET not in _texts(at)


# ---------------------------------------------------------------------- uploads
CSV = b"class,a,b\n" + b"".join(f"c{i % 2},a{i % 5},b{i % 3}\n".encode() for i in range(80))


def _uploaded() -> AppTest:
    at = _fresh(dataset="upload", upload=("mine.csv", CSV), class_column="class", missing_policy="missing")
    _no_crash(at)
    return at


def test_an_upload_is_reached_only_with_its_private_id():
    at = _uploaded()
    token = at.query_params["upload"]
    token = token[-1] if isinstance(token, list) else token
    assert re.fullmatch(r"[0-9a-f]{32}", token)  # 128 random bits
    digest = hashlib.sha256(CSV).hexdigest()
    assert not digest.startswith(token[:8])
    for guess in (
        digest[:8],
        digest[:16],
        digest,
        token[:8],
        token[:31],
        token.upper(),
        token + "0",
        "0" * 32,
    ):
        other = _fresh({"upload": guess})
        _no_crash(other)
        assert other.session_state["dataset"] == "house_votes_84", guess
        assert any("not on this server" in w.value for w in other.warning)
    friend = _fresh({"upload": token})  # the link itself opens it
    _no_crash(friend)
    assert friend.session_state["dataset"] == "upload" and friend.session_state["upload"][1] == CSV
    again = _uploaded()  # another session: another id
    other_token = again.query_params["upload"]
    assert (other_token[-1] if isinstance(other_token, list) else other_token) != token


def test_the_upload_store_is_capped_by_count_and_bytes(monkeypatch):
    from bnfk_ui import share

    monkeypatch.setattr(share, "MAX_UPLOADS", 3)
    monkeypatch.setattr(share, "MAX_UPLOAD_BYTES", 2500)
    store = share._uploads()
    store.clear()
    tokens = [share.remember_upload(f"f{i}.csv", bytes(500)) for i in range(5)]
    assert list(store) == tokens[2:]  # count: the oldest went
    share._find_upload(tokens[2])  # used again: kept
    big = share.remember_upload("big.csv", bytes(2000))
    assert big in store and tokens[2] in store and sum(len(v[1]) for v in store.values()) <= 2500
    store.clear()


def test_big_upload_files_are_capped_and_removed(tmp_path, monkeypatch):
    from bnfk_ui import bigdata

    monkeypatch.setattr(bigdata, "UPLOAD_DIR", tmp_path / "up")
    monkeypatch.setattr(bigdata, "UPLOAD_FILES", 2)
    paths = [bigdata.upload_file(f"f{i}.csv", f"a\n{i}\n".encode()) for i in range(4)]
    assert sorted(os.listdir(tmp_path / "up")) == sorted(os.path.basename(p) for p in paths[2:])
    bigdata._store().remove_all()  # what atexit runs at a clean exit
    assert os.listdir(tmp_path / "up") == []


# ---------------------------------------------------------------------- numbers in links
HUGE = "9" * 4000


@pytest.mark.parametrize("key", [k for k, s in S.SETTINGS.items() if type(s.default) in (int, float)])
def test_every_numeric_link_setting_is_bounded_like_its_widget(key):
    s = S.SETTINGS[key]
    for bad in (
        HUGE,
        "-" + HUGE,
        "-1e300",
        "1e400",
        "nan",
        "2.5" if isinstance(s.default, int) else "inf",
        "1_000",
        "０",
        "²",
    ):
        with pytest.raises(ValueError):
            v = s.parse(bad)
            assert s.lo <= v <= s.hi  # a value that parses is inside the widget's range
            raise ValueError("parsed in range")


@pytest.mark.parametrize(
    "query",
    [
        {"kernel_rows": HUGE},
        {"kernel_rows": "-7"},
        {"clu_seed": "1.5"},
        {"memory_gib": "1e400"},
        {"bins": HUGE},
        {"bins": "²"},
        {"bins": "-1"},
        {"arcs": "0-" + HUGE},
        {"view_rows": "0x10"},
        {HUGE[:100]: "1"},
        {"data": HUGE},
        {"class": HUGE},
        {"drop": HUGE},
        {"missing": HUGE},
        {"arcs": "0-1.1-2." * 1000 + "2-0"},
        {"upload": HUGE},
        {"path": HUGE},
        {"params": HUGE},
        {"clu_kernels": ",".join(["x"] * 3000)},
        {"kernel_normalize": HUGE},
    ],
)
def test_hostile_numbers_in_links_are_one_warning(query):
    at = _fresh(query)
    _no_crash(at)
    for k, s in S.SETTINGS.items():
        if s.lo is not None:
            assert s.lo <= at.session_state[k] <= s.hi, k
    assert at.session_state["bins"] == 4
    shown = [w.value for w in at.warning] + [e.value for e in at.error]
    assert shown and all(len(m) < 700 for m in shown), shown  # echoed values are cut


# ---------------------------------------------------------------------- names are text
MARKUP = ["<a href=x>click</a>", "$x^2$", "<b>bold</b>"]


def _spec_strings(at) -> str:
    """Every string of the page's plotly figures (their JSON decoded)."""
    from test_figure_names import strings

    return "\n".join(s for c in at.get("plotly_chart") for _, s in strings(json.loads(c.proto.spec)))


@pytest.mark.parametrize("page", ["data.py", "structure.py", "kernel.py"])
def test_markup_names_show_literally_in_the_pages_figures(page):
    header = ",".join(["class"] + MARKUP)
    rows = "".join(
        f"{['$c^1$', '<i>c2</i>'][i % 2]},v{i % 3},<b>w{i % 2}</b>,$y{i % 4}$\n" for i in range(60)
    )
    content = (header + "\n" + rows).encode()
    at = page_app(
        page,
        120,
        dataset="upload",
        upload=("<a href=x>f</a>.csv", content),
        class_column="class",
        missing_policy="missing",
        kernel_rows=40,
    )
    at.run()
    _no_crash(at)
    assert not at.error, [e.value for e in at.error]
    spec = _spec_strings(at)
    assert spec, "no figure"
    for raw in ("<a href=x>", "$x^2$", "<b>bold", "<b>w1", "$c^1$", "<i>c2"):
        assert raw not in spec, raw
    shown = {
        "data.py": "&lt;i&gt;c2&lt;/i&gt;",
        "structure.py": "&lt;a href=x&gt;click&lt;/a&gt;",
        "kernel.py": "&#36;c^1&#36;",
    }[page]
    assert shown in spec, spec[:2000]


# ---------------------------------------------------------------------- session files
def _state_of(at) -> dict:
    keys = (
        "dataset",
        "upload",
        "class_column",
        "missing_policy",
        "bins",
        "drop_columns",
        "param_method",
        "clu_seed",
    )
    out = {k: at.session_state[k] for k in keys}
    out["dag"] = at.session_state["structure"]["dag"]
    return out


def _good_session(at) -> dict:
    from test_share import _session_from

    return json.loads(_session_from(at))


@pytest.mark.parametrize(
    "case",
    ["not json", "deep", "params list", "huge setting", "data do not load", "wrong structure", "empty"],
)
def test_a_failed_session_open_leaves_the_app_as_it_was(case):
    at = _uploaded()
    at.switch_page("pages/structure.py").run()
    before = _state_of(at)
    doc = _good_session(at)
    if case == "not json":
        blob = b"\x00\xff{"
    elif case == "deep":
        blob = b"[" * 2000 + b"]" * 2000
    elif case == "params list":
        doc["params"] = []
        blob = json.dumps(doc).encode()
    elif case == "huge setting":
        doc.setdefault("settings", {})["imp_repeats"] = 10**9
        doc["settings"]["clu_seed"] = int(HUGE)
        blob = json.dumps(doc).encode()
    elif case == "data do not load":
        doc["data"]["options"]["class_column"] = "no such column"
        blob = json.dumps(doc).encode()
    elif case == "wrong structure":
        doc["data"] = {
            "sample": "car",
            "options": {"class_column": None, "missing_policy": "missing", "bins": 4, "drop_columns": []},
        }
        blob = json.dumps(doc).encode()
    else:
        blob = b""
    open_sidebar_box(at, "share")
    t0 = time.monotonic()
    at.file_uploader(key="w_session_file").upload(
        "<b>evil</b>" + "x" * 500 + ".json", blob, "application/json"
    ).run()
    assert time.monotonic() - t0 < 90
    _no_crash(at)
    after = _state_of(at)
    if case == "huge setting" and not at.error:  # the file opens; the settings it cannot use keep defaults
        assert after["clu_seed"] == 0
        return
    assert after == before, case
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and len(errors[0]) < 400, errors


def test_the_store_is_thread_safe_under_concurrent_uploads():
    from bnfk_ui import share

    out = []
    threads = [
        threading.Thread(target=lambda i=i: out.append(share.remember_upload(f"{i}.csv", b"x")))
        for i in range(50)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 50 and len(share._uploads()) <= share.MAX_UPLOADS


def test_a_class_with_thousands_of_levels_draws_bounded_figures_on_the_kernel_page():
    rng = np.random.default_rng(0)
    n = 5000
    content = (
        "label,a,b,c\n"
        + "".join(
            f"L{i},a{rng.integers(0, 3)},b{rng.integers(0, 3)},c{rng.integers(0, 2)}\n" for i in range(n)
        )
    ).encode()
    t0 = time.monotonic()
    at = page_app(
        "kernel.py",
        120,
        dataset="upload",
        upload=("many.csv", content),
        class_column="label",
        missing_policy="missing",
        kernel_rows=300,
    ).run()
    assert time.monotonic() - t0 < 120
    _no_crash(at)
    assert not at.error, [e.value for e in at.error]
    from bnfk_core.views.figures.base import MAX_CLASS_COLORS

    for chart in at.get("plotly_chart"):
        fig = json.loads(chart.proto.spec)
        assert len(fig["data"]) <= MAX_CLASS_COLORS + 3
        for trace in fig["data"]:
            assert len(trace.get("colorscale") or []) <= 2 * (MAX_CLASS_COLORS + 1)


def test_errors_about_a_big_file_name_it_as_the_visitor_knows_it_not_by_its_server_path(tmp_path):
    """A bad large upload (one column; NUL bytes) is refused naming the upload, never the store's folder."""
    import pytest as _pytest

    from bnfk_core.errors import DataError
    from bnfk_ui import bigdata

    one_col = tmp_path / "store" / "0123abcd.csv"
    one_col.parent.mkdir()
    one_col.write_text("only\n" + "a\n" * 50)
    with _pytest.raises(DataError) as err:
        bigdata.read(str(one_col), "my upload.csv", (None, "missing", 4, ()))
    assert "my upload.csv" in str(err.value) and str(tmp_path) not in str(err.value)
    binary = tmp_path / "store" / "ffff.csv"
    binary.write_bytes(b"a,b\n\x00\x01,2\n")
    with _pytest.raises(DataError) as err:
        bigdata.header(str(binary), "photo.csv")
    assert "photo.csv" in str(err.value) and str(tmp_path) not in str(err.value)


def _texts(at) -> list:
    """Every Markdown source the page wrote (markdown, captions, alerts)."""
    out = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success"):
        out += [str(e.value) for e in at.get(kind)]
    return out


@pytest.mark.parametrize("page", ["segments.py", "structure.py"])
def test_markup_column_names_are_plain_text_in_the_pages_markdown(page):
    """Column names that are Markdown or HTML reach the page's Markdown only escaped: the Segments lab's roles
    line and its caption of added arcs, the Structure page's covered arcs."""
    header = ",".join(["class"] + MARKUP)
    rows = "".join(f"c{i % 2},v{i % 3},w{(i // 2) % 2},y{i % 4}\n" for i in range(80))
    at = page_app(
        page,
        180,
        dataset="upload",
        upload=("names.csv", (header + "\n" + rows).encode()),
        class_column="class",
        missing_policy="missing",
        seg_base="empty",
        seg_kind="v-structure",
        seg_vars=list(MARKUP),
        seg_rows=40,
        seg_restarts=2,
        seg_protos=3,
    )
    if page == "structure.py":
        at.session_state["structure_tab"] = "Equivalence class"  # only the open tab is built
    at.run()
    _no_crash(at)
    assert not at.error, [e.value for e in at.error]
    texts = _texts(at)
    named = [t for t in texts if any(plain(m) in t for m in MARKUP)]
    assert named, texts  # the names are shown ...
    for t in texts:
        for raw in ("<a href=x>", "$x^2$", "<b>bold"):
            assert raw not in t, t  # ... and never as markup
