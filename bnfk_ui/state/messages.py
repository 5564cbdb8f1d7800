"""Text shown as typed and messages queued for the next run.

Streamlit has no plain-text alert, caption or label: :func:`plain` escapes what Markdown would read in a
user's text (file names, column names, link values, core sentences that echo them) and :func:`code_span`
fences it as code; :func:`flash` queues a message for the next run
and :func:`show_flash` shows it, as plain text.
"""

from __future__ import annotations

import re

import streamlit as st

__all__ = ["MAX_MESSAGE", "WORD_JOINER", "plain", "code_span", "flash", "show_flash"]

MAX_MESSAGE = 400  # the longest message shown (a core sentence echoing a huge user value is cut)


#: characters that start Markdown (links, images, emphasis, code, HTML, LaTeX, tables, headings, entities)
#: in Streamlit's alerts, captions and labels: shown as typed when escaped with a backslash
_MARKDOWN = re.compile(r"([\\`*~\[\]<>$#|&@{}])")
#: an underscore that could open or close emphasis: not inside a word (``clu_seed`` stays as it is)
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
#: a colon that could open an emoji or icon code (``:smile:``) or a directive (``:red[...]``)
_COLON = re.compile(r":(?=\S)")
#: bare addresses: GitHub-flavoured Markdown links ``http://…``, ``www.…`` and ``name@host.org`` in the text
#: after the escapes are read, so a backslash does not stop them; an invisible word joiner (U+2060) does
_AUTOLINK = re.compile(r"(?i)(?<=https)(?=://)|(?<=http)(?=://)|(?<=ftp)(?=://)|(?<=www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"
_LEADING = re.compile(r"^(\s*)([-+=>]|\d+(?=[.)]))")


def plain(text, limit: int | None = None) -> str:
    """``text`` as Streamlit's Markdown shows it literally: no link, image, HTML, emphasis, code or LaTeX.

    Every user-supplied text (link values, file names, column names, core messages that echo them) goes
    through this before an ``st.error`` / ``st.warning`` / ``st.caption`` / ``st.markdown``: Streamlit has
    no plain-text alert, so Markdown's special characters are escaped with a backslash (CommonMark shows an
    escaped ASCII punctuation character as itself), and a bare address gets an invisible word joiner so that
    it is not made a link.  Characters that are not printable (line breaks, direction overrides) become
    ``?``; ``limit`` cuts the text to that many characters first (``…``)."""
    s = "".join(c if c.isprintable() else "?" for c in str(text))
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    s = _AUTOLINK.sub(WORD_JOINER, s)
    s = _MARKDOWN.sub(r"\\\1", s)
    s = _UNDERSCORE.sub(r"\\_", s)
    s = _COLON.sub(r"\\:", s)
    m = _LEADING.match(s)
    if m:
        lead = m.group(2)
        s = m.group(1) + (lead + "\\" if lead[0].isdigit() else "\\" + lead) + s[m.end() :]
    return s


def code_span(text) -> str:
    """``text`` as a Markdown code span shown literally whatever it holds: fenced by more backticks than its
    longest run of them (CommonMark), padded with a space on each side when it starts or ends with a backtick
    (CommonMark strips one such space from each side); characters that are not printable become ``?``."""
    s = "".join(c if c.isprintable() else "?" for c in str(text))
    fence = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def flash(kind: str, message: str) -> None:
    """Queue a message for the next run (shown by :func:`show_flash`; cut to ``MAX_MESSAGE`` characters)."""
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    st.session_state.setdefault("flash", []).append((kind, message))


def show_flash() -> None:
    """Show the messages queued by :func:`flash` (once), as plain text (:func:`plain`)."""
    for kind, msg in st.session_state.pop("flash", []):
        getattr(st, kind)(plain(msg))
