"""Closed sessions freed on time, so that a second class finds the server's memory as the first one left it.

Streamlit keeps a closed tab's session for ``server.disconnectedSessionTTL`` seconds (``run-class.sh`` sets
60) in case the tab reconnects, in a cache that drops an expired session only when it is next written to --
that is, when another session closes. After a class has left, its thirty sessions (their state, their Gram
matrices' copies) were therefore still held while the next class worked, and were let go only when that class
closed its tabs: the second class needed the first one's memory on top of its own. :func:`start_reaper`
starts, once per server process, a thread that every :data:`REAP_EVERY` seconds asks that cache to drop the
sessions that have expired and shuts them down as Streamlit shuts down a session it closes itself (their
download files and table references are let go: merely dropped, they kept them), then collects the garbage
they leave (the app turns Streamlit's collection after every run off).

It reads Streamlit's session manager, which is not a public interface
(:func:`bnfk_ui.streamlit_adapter.closed_session_cache`): on a Streamlit outside the tested range the reaper
does nothing (the sessions are then freed as before, when the next session closes) --
``tests/test_session_reaper.py`` checks that it finds the cache on the Streamlit the project pins.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time

from . import streamlit_adapter

__all__ = ["REAP_EVERY", "start_reaper", "reap"]

#: seconds between two looks for expired sessions
REAP_EVERY = 10.0

_lock = threading.Lock()
_thread: threading.Thread | None = None


def reap() -> int:
    """Drop the closed sessions whose time to reconnect is over; how many were dropped."""
    cache, lock = streamlit_adapter.closed_session_cache()
    if cache is None:
        return 0
    with lock if lock is not None else contextlib.nullcontext():
        removed = cache.expire()
    for _, info in removed:  # as Streamlit closes a stored session: its files and references go too
        session = getattr(info, "session", None)
        if session is not None:
            with contextlib.suppress(Exception):
                session.shutdown()
    if removed:
        gc.collect()
    return len(removed)


def _run() -> None:
    while True:
        time.sleep(REAP_EVERY)
        try:
            reap()
        except Exception:  # noqa: BLE001 - never stop the server for this
            pass


def start_reaper() -> threading.Thread:
    """Start the reaper thread (once per process); the thread."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_run, name="bnfk-session-reaper", daemon=True)
            _thread.start()
    return _thread
