"""Long computations that cannot stall other users: cooperative cancellation and a server-wide bound.

Core functions report progress through a ``progress(fraction, message)`` callback.  :func:`progress`
builds that callback for a page: before every update it checks that the browser session is still
connected, and the progress bar's own update lets Streamlit stop the script when the user changed an
input (Streamlit raises its rerun signal at the next element update).  So a computation stops at its
next progress step when its session ends or its input changes, instead of running to the end for nobody.

:func:`heavy` bounds the heavy computations running at once on the server (one per core): a session
whose turn has not come shows that it waits, and stops waiting if it is closed.
"""

from __future__ import annotations

import contextlib
import os
import threading

import streamlit as st

from . import streamlit_adapter

__all__ = ["Cancelled", "session_gone", "checkpoint", "progress", "heavy", "MAX_HEAVY"]

#: heavy computations that may run at once on the server
MAX_HEAVY = max(1, os.cpu_count() or 1)
_SLOTS = threading.BoundedSemaphore(MAX_HEAVY)


class Cancelled(streamlit_adapter.StopException):
    """The session that asked for a computation is gone: stop quietly.  Streamlit's own stop signal (a
    BaseException), so no ``except Exception`` in the core swallows it and the script runner ends the run
    without an error."""


def session_gone() -> bool:
    """True when this script run's browser session has disconnected (False outside a running app, and on a
    Streamlit the app was not tested against: :func:`bnfk_ui.streamlit_adapter.session_gone`)."""
    return streamlit_adapter.session_gone()


def checkpoint() -> None:
    """Raise :class:`Cancelled` if the session is gone."""
    if session_gone():
        raise Cancelled()


def progress(bar):
    """A core ``progress(fraction, message)`` callback drawing ``bar`` (an ``st.progress``), with a
    cancellation checkpoint before every update."""

    def update(fraction, message):
        checkpoint()
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=str(message))

    return update


@contextlib.contextmanager
def heavy(what: str):
    """Run the block when one of the server's :data:`MAX_HEAVY` slots is free; while waiting, say so and
    keep checking that the session is still there."""
    note = None
    while not _SLOTS.acquire(timeout=0.5):
        checkpoint()
        if note is None:
            note = st.empty()
            note.info(f"Waiting for another session's computation to finish before starting {what}…")
    if note is not None:
        note.empty()
    try:
        yield
    finally:
        _SLOTS.release()
