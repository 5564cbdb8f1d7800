"""Every page, opened on an upload whose file, column and level names (and a link's values) are Markdown and
HTML, shows them only as plain text: in every alert, caption, Markdown block, heading and widget label
(Streamlit reads Markdown, images included, in all of them), so no name becomes a link, an image that the
browser fetches, or markup."""

import re

import pytest
from apptest_helpers import ROOT
from streamlit.testing.v1 import AppTest

from bnfk_ui.router import PAGES

IMG = "![i](http://127.0.0.1:9/i.png)"
TAG = "<img src=http://127.0.0.1:9/t.png>"
LINK = "[l](http://127.0.0.1:9/l)"
BOLD = "**b**"
#: what must never reach a Markdown body unescaped: a link or image target, an HTML tag, emphasis (a
#: backslash before the character is Markdown's escape: shown as typed)
RAW = re.compile(r"(?<!\\)\]\(http|(?<!\\)<(img|b>)|(?<!\\)\*\*b")
FILE = f"{IMG}.csv"


def _content() -> bytes:
    header = ",".join(["class", IMG, TAG, BOLD, "plain"])
    rows = []
    for i in range(90):
        level = [LINK, "<b>x</b>", "y"][i % 3]
        rows.append(",".join([f"c{i % 2}", level, f"v{(i // 3) % 2}", f"w{(i // 2) % 3}", f"p{i % 4}"]))
    return (header + "\n" + "\n".join(rows) + "\n").encode()


def _bodies(at) -> list[tuple[str, str]]:
    """(kind, text) of every Markdown source and widget label the run drew."""
    out = []
    for kind in (
        "markdown",
        "caption",
        "info",
        "warning",
        "error",
        "success",
        "title",
        "header",
        "subheader",
    ):
        out += [(kind, str(e.value)) for e in at.get(kind)]
    for e in at.get("table"):  # st.table reads Markdown in its cells
        frame = e.value
        out += [("table cell", v) for v in frame.astype(str).to_numpy().ravel()]
    for kind in (
        "selectbox",
        "multiselect",
        "radio",
        "checkbox",
        "toggle",
        "button",
        "number_input",
        "text_input",
        "slider",
        "select_slider",
        "expander",
        "tab",
        "metric",
        "download_button",
    ):
        for e in at.get(kind):
            label = getattr(e, "label", None)
            if label:
                out.append((f"{kind} label", str(label)))
            if kind == "radio":  # radio options are Markdown too
                out += [("radio option", str(o)) for o in e.options]
    return out


@pytest.fixture(scope="module")
def visit():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["dataset"] = "upload"
    at.session_state["upload"] = (FILE, _content())
    at.session_state["class_column"] = "class"
    at.session_state["missing_policy"] = "missing"
    at.session_state["kernel_rows"] = 60
    at.session_state["seg_base"] = "empty"  # the Segments lab's case table (its cells name the variables)
    at.session_state["seg_kind"] = "v-structure"
    at.session_state["seg_vars"] = [IMG, TAG, BOLD]
    at.query_params["data"] = TAG
    at.run()
    return at


def _mixed_content() -> bytes:
    """The same names over a mixed table: two of the columns hold numbers (Gaussian nodes of a hybrid
    network), one of them with few distinct values (a category the Data page offers as a number)."""
    header = ",".join(["class", IMG, TAG, BOLD, "plain"])
    rows = []
    for i in range(90):
        level = [LINK, "<b>x</b>", "y"][i % 3]
        x = (i % 3) * 2.0 + ((i * 37) % 11) / 10.0
        rows.append(",".join([f"c{i % 2}", level, f"{x:.2f}", f"{x * 0.5 + (i % 7) / 5:.3f}", f"p{i % 4}"]))
    return (header + "\n" + "\n".join(rows) + "\n").encode()


@pytest.fixture(scope="module")
def visit_mixed():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["dataset"] = "upload"
    at.session_state["upload"] = (FILE, _mixed_content())
    at.session_state["class_column"] = "class"
    at.session_state["missing_policy"] = "missing"
    at.session_state["kernel_rows"] = 60
    at.run()
    return at


#: the pages that show a hybrid network's parts (its numeric nodes, the sentence naming the binned columns),
#: the Model page with each of its hybrid tabs open
MIXED_VIEWS = [
    (p, "Evidence") for p in ("pages/home.py", "pages/data.py", "pages/structure.py", "pages/kernel.py")
] + [("pages/model.py", t) for t in ("Evidence", "Densities", "CPTs and regressions", "Independence")]


@pytest.mark.parametrize("page, tab", MIXED_VIEWS)
def test_a_mixed_table_shows_user_text_as_plain_text(visit_mixed, page, tab):
    visit_mixed.session_state["model_hyb_tab"] = tab
    visit_mixed.session_state["hyb_cpt_node"] = TAG  # a numeric node: its regressions name its parents
    at = visit_mixed.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    if page == "pages/model.py":  # the hybrid network's page, not the discrete one
        assert any("hybrid network" in c.value for c in at.caption)
    leaks = [(kind, text) for kind, text in _bodies(at) if RAW.search(text)]
    assert not leaks, leaks


@pytest.mark.parametrize("page", [path for _, path, *_ in PAGES])
def test_every_page_shows_user_text_as_plain_text(visit, page):
    at = visit.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    leaks = [(kind, text) for kind, text in _bodies(at) if RAW.search(text)]
    assert not leaks, leaks


def test_the_compare_pages_errors_echo_names_as_plain_text(monkeypatch):
    """A core sentence that echoes a column name is shown escaped on the Compare page."""
    from apptest_helpers import page_app

    from bnfk_core.errors import BnfkError
    from bnfk_ui.state import compare
    from bnfk_ui.state.messages import plain

    def refuse(*args, **kwargs):
        raise BnfkError(f"Column '{IMG}' cannot be compared.")

    monkeypatch.setattr(compare, "comparison", refuse)
    at = page_app("compare.py", 120, dataset="upload", upload=(FILE, _content()), class_column="class")
    at.run()
    assert [e.value for e in at.error] == [plain(f"Column '{IMG}' cannot be compared.")]
