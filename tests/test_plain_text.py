"""Nothing a link can smuggle in: every user-supplied text the app shows in an alert or caption is plain text.

Streamlit's alerts and captions are Markdown; a link value, a file name or a column name shown there is
escaped (``bnfk_ui.state.messages.plain``) so that it shows as typed -- no link, no image, no HTML, no
emphasis. The checks read the Markdown the app sends: after CommonMark's backslash escapes are taken out it
must be the text as typed, and no character that starts markup may be left unescaped.
"""

from __future__ import annotations

import re
import string

import pytest
from apptest_helpers import ROOT
from streamlit.testing.v1 import AppTest

from bnfk_ui.state.messages import WORD_JOINER, plain

APP = str(ROOT / "app.py")
EVIL = "http://evil.example"
HOSTILE = [
    f"[click]({EVIL}/x)",
    f"![i]({EVIL}/i.png)",
    f"<img src={EVIL}/i.png>",
    f"<{EVIL}>",
    "www.evil.example/x",
    "mail@evil.example",
    "**bold** _it_ `code` ~~s~~ clu_seed a_b_",
    "$x^2$",
    ":red[red] :smile:",
    "# heading",
    "- item",
    "1. first",
    "> quote",
    "a | b",
    "&lt;img&gt;",
    "back\\slash [x]\\(y)",
]
SPECIAL = set("\\`*_~[]<>$#|&@{}")  # an underscore inside a word (``clu_seed``) is no emphasis in CommonMark
PUNCT = set(string.punctuation)


#: what GitHub-flavoured Markdown makes a link in the text after its escapes are read (no escape stops it)
BARE_ADDRESS = re.compile(r"(?i)(https?://|ftp://|www\.|[-.\w+]@[-\w]+\.)")


def unescape(md: str, joiner: bool = False) -> str:
    """CommonMark's backslash escapes taken out: the text Markdown's link finder reads (``joiner``: keeping
    the invisible word joiners), or, without them, what the reader sees."""
    out, i = [], 0
    while i < len(md):
        if md[i] == "\\" and i + 1 < len(md) and md[i + 1] in PUNCT:
            out.append(md[i + 1])
            i += 2
        else:
            out.append(md[i])
            i += 1
    text = "".join(out)
    return text if joiner else text.replace(WORD_JOINER, "")


def live_markup(md: str, allowed: str = "") -> list[str]:
    """The pieces of ``md`` that Markdown would read as markup: unescaped special characters, bare addresses
    (``scheme:``, ``www.``) and ``:`` codes.  ``allowed``: characters the app itself writes (e.g. ``*`` of
    bold)."""
    found, i = [], 0
    while i < len(md):
        c = md[i]
        if c == "\\" and i + 1 < len(md) and md[i + 1] in PUNCT:
            i += 2
            continue
        inside_word = c == "_" and 0 < i < len(md) - 1 and md[i - 1].isalnum() and md[i + 1].isalnum()
        if c in SPECIAL and c not in allowed and not inside_word:
            found.append(c)
        if c == ":" and i + 1 < len(md) and not md[i + 1].isspace():
            found.append(md[max(0, i - 5) : i + 3])
        i += 1
    return found + BARE_ADDRESS.findall(unescape(md, joiner=True))


@pytest.mark.parametrize("text", HOSTILE)
def test_plain_shows_the_text_as_typed_and_leaves_no_markup(text):
    md = plain(text)
    assert unescape(md) == text
    assert live_markup(md) == [], md


def test_plain_cuts_and_replaces_unprintable_characters():
    assert unescape(plain("a\nb\u202ec")) == "a?b?c"
    assert unescape(plain("x" * 50, 10)) == "x" * 9 + "…"


def test_live_markup_finds_what_plain_removes():
    """The checker itself: the raw hostile texts are markup."""
    for text in HOSTILE[:6]:
        assert live_markup(text), text


def _fresh(query: dict | None = None, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def _messages(at) -> list[str]:
    return [e.value for kind in ("error", "warning", "info", "success") for e in at.get(kind)]


def _assert_plain(at, hostile: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    shown = _messages(at)
    assert shown, "the hostile value is refused in a message"
    assert any(hostile[:9] in unescape(m) for m in shown), shown  # named as typed (cut, normalised)
    for m in shown:
        assert live_markup(m, allowed="*") == [], m
    for c in at.caption:
        assert live_markup(c.value, allowed="*") == [], c.value


@pytest.mark.parametrize("key", ["data", "class", "clu_kernels", "path", "params"])
@pytest.mark.parametrize("hostile", [f"[click]({EVIL}/x)", f"![i]({EVIL}/i.png)"])
def test_hostile_link_values_show_as_plain_text(key, hostile, monkeypatch, tmp_path):
    monkeypatch.setenv("BNFK_DATA_DIR", str(tmp_path))  # a path is then named in its refusal
    at = _fresh({key: hostile})
    if key == "class":  # a class column that is not in the data: the data options are refused
        assert not at.exception
        for m in _messages(at) + [c.value for c in at.caption]:
            assert live_markup(m, allowed="*") == [], m
        assert any(hostile[:30] in unescape(m) for m in _messages(at)), _messages(at)
    else:
        _assert_plain(at, hostile)


def test_queued_messages_naming_a_file_show_as_plain_text():
    """An upload's or a session file's name reaches the page through the queued messages (uploads, session
    opens): shown as plain text."""
    name = f"![i]({EVIL}/i.png).csv"
    at = _fresh(flash=[("success", f"Loaded {name}: 3 rows"), ("error", f"Opened [x]({EVIL}) {name}")])
    _assert_plain(at, name)


@pytest.mark.parametrize(
    "text", ["python -m bnfk_core cluster DATA.csv", "a ` b", "x `` y ```[i](http://e)", "`q"]
)
def test_code_span_holds_any_text(text):
    from bnfk_ui.state.messages import code_span

    span = code_span(text)
    fence = re.match(r"`+", span).group(0)
    inner = span[len(fence) : -len(fence)]
    shown = (
        inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") and inner.strip() else inner
    )  # CommonMark
    assert span.endswith(fence) and shown == text
    assert fence not in re.findall(r"`+", inner)  # no run of the fence's length inside: not closed early
