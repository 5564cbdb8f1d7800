"""Closed sessions are shut down and dropped when their time to reconnect is over, not when the next session
closes (bnfk_ui.session_reaper): a second class does not find the first one's sessions still held."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.session_manager import SessionInfo
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from bnfk_ui import session_reaper


class _Session:
    def __init__(self, sid):
        self.id, self.shut = sid, False

    def shutdown(self):
        self.shut = True


def test_expired_sessions_are_shut_down_and_dropped(monkeypatch):
    storage = MemorySessionStorage(maxsize=64, ttl_seconds=0.3)
    mgr = WebsocketSessionManager(
        storage, uploaded_file_manager=None, script_cache=None, message_enqueued_callback=None
    )
    # the reaper reads the manager Streamlit's runtime holds; here the one just made -- seen from this thread
    # only: an app test earlier in the run may have started the reaper's thread, which must not reap these
    runtime = SimpleNamespace(_session_mgr=mgr)
    here = threading.current_thread()
    import streamlit.runtime as rt

    monkeypatch.setattr(rt.Runtime, "exists", classmethod(lambda cls: threading.current_thread() is here))
    monkeypatch.setattr(rt.Runtime, "instance", classmethod(lambda cls: runtime))
    old = [_Session(f"a{i}") for i in range(5)]
    for s in old:
        storage.save(SessionInfo(client=None, session=s))
    assert session_reaper.reap() == 0 and not any(s.shut for s in old)  # still in their time to reconnect
    time.sleep(0.4)
    young = _Session("b")
    assert len(storage._cache._data) == 5  # Streamlit alone keeps them
    assert session_reaper.reap() == 5
    assert all(s.shut for s in old) and len(storage._cache._data) == 0
    storage.save(SessionInfo(client=None, session=young))
    assert session_reaper.reap() == 0 and not young.shut


def test_without_a_server_nothing_is_reaped():
    assert session_reaper.reap() == 0
