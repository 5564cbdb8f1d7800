"""Error types raised by bnfk_core.

Every error carries one sentence that names the culprit (file, line, column,
variable, arc or parameter).  The app shows it with ``st.error``; the CLI prints
``error: <message>`` and exits with code 2.

User values echoed in a message are cut here, in one place (:func:`bounded`, applied by the
constructor of every :class:`BnfkError` and by the CLI's error line): a run of more than
:data:`LONG_WORD` characters without a space keeps its first and last characters (~80 in all),
and a whole message keeps at most :data:`MAX_MESSAGE` characters -- a 100 MB string given as a
path or an address never becomes a 100 MB line.
"""

from __future__ import annotations

import re

__all__ = [
    "BnfkError",
    "DataError",
    "StructureError",
    "ModelError",
    "KernelError",
    "shorten",
    "bounded",
    "ECHO_CHARS",
    "LONG_WORD",
    "MAX_MESSAGE",
]

#: characters of a user value a message echoes
ECHO_CHARS = 80
#: a run of non-space characters longer than this is cut to ECHO_CHARS
LONG_WORD = 120
#: the longest message
MAX_MESSAGE = 1000

_LONG_RUN = re.compile(r"\S{%d,}" % (LONG_WORD + 1))


def shorten(value, limit: int = ECHO_CHARS) -> str:
    """``value`` as text of at most about ``limit`` characters: the start and the end with ``…`` between."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    tail = max(limit // 4, 1)
    return f"{text[: limit - tail - 1]}…{text[-tail:]}"


def bounded(message) -> str:
    """``message`` with every over-long run of characters cut (:func:`shorten`) and at most MAX_MESSAGE
    long."""
    text = message if isinstance(message, str) else str(message)
    if len(text) > 4 * MAX_MESSAGE:  # cut first, so that the regex never scans a huge string
        text = text[: 2 * MAX_MESSAGE] + " … " + text[-MAX_MESSAGE:]
    text = _LONG_RUN.sub(lambda m: shorten(m.group(0)), text)
    return shorten(text, MAX_MESSAGE)


class BnfkError(ValueError):
    """Base class of every user-facing error in bnfk_core (its message is :func:`bounded`)."""

    def __init__(self, message="", *args):
        super().__init__(bounded(message), *args)


class DataError(BnfkError):
    """A CSV file, a column or a value cannot be used."""


class StructureError(BnfkError):
    """A DAG edit or a structure-learning request is invalid (cycle, unknown node, ...)."""


class ModelError(BnfkError):
    """A Bayesian network cannot be built, fitted, read or used as asked."""


class KernelError(BnfkError):
    """A kernel cannot be computed as asked (memory guard, zero probability, ...)."""


class PrototypeError(BnfkError):
    """A prototype selection or benchmark cannot be run as asked."""
