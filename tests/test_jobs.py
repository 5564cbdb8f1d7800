"""bnfk_ui.jobs: a computation stops at its next progress step when its session is gone, and waiting for a
heavy-work slot stops too (cooperative cancellation; 'one user cannot stall the others')."""

import threading

import pytest

from bnfk_core.analyses.segments import search as arcs
from bnfk_core.data.table import load_csv
from bnfk_ui import jobs


class _Bar:
    def __init__(self):
        self.updates = []

    def progress(self, fraction, text=""):
        self.updates.append((fraction, text))


def test_a_core_computation_stops_at_the_next_progress_step(monkeypatch):
    from conftest import _sample

    d = load_csv(_sample("house_votes_84"), class_column="class", missing_policy="category").subset(
        range(120)
    )
    bar, calls = _Bar(), {"n": 0}

    def gone():
        calls["n"] += 1
        return calls["n"] > 3  # the browser tab closes after the third progress step

    monkeypatch.setattr(jobs, "session_gone", gone)
    with pytest.raises(jobs.Cancelled):
        arcs.arc_search(d, n_arcs=2, restarts=2, seed=0, progress=jobs.progress(bar))
    assert len(bar.updates) == 3  # nothing after the session ended
    # with the session alive the same search runs to the end
    monkeypatch.setattr(jobs, "session_gone", lambda: False)
    bar2 = _Bar()
    arcs.arc_search(d, n_arcs=2, restarts=2, seed=0, progress=jobs.progress(bar2))
    assert len(bar2.updates) > 3 and bar2.updates[-1][0] == 1.0


def test_cancelled_is_streamlits_stop_signal_not_an_error():
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    assert issubclass(jobs.Cancelled, StopException) and not issubclass(jobs.Cancelled, Exception)


def test_waiting_for_a_heavy_slot_stops_when_the_session_is_gone(monkeypatch):
    monkeypatch.setattr(jobs, "_SLOTS", threading.BoundedSemaphore(1))
    monkeypatch.setattr(jobs, "session_gone", lambda: True)
    monkeypatch.setattr(
        jobs.st, "empty", lambda: type("E", (), {"info": lambda *a: None, "empty": lambda *a: None})()
    )
    with jobs.heavy("a"):  # the one slot is free: runs
        with pytest.raises(jobs.Cancelled):  # a second heavy job waits, then sees the session gone
            with jobs.heavy("b"):
                pytest.fail("ran without a slot")
    with jobs.heavy("c"):  # the slot was released
        pass
