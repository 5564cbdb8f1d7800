"""One user cannot stall the others: a long computation stops when its browser tab closes.

A real server (`streamlit run app.py`) and Chromium: start a long arc search in the Segments lab, close the
tab, and the server process must go quiet (its CPU time stops growing) within a few seconds instead of
running the search to its end for nobody."""

from __future__ import annotations

import os
import time

import pytest
from browser_helpers import streamlit_server
from test_browser import ARGS, ARTIFACTS, CHROMIUM, pytestmark  # noqa: F401

TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


@pytest.fixture()
def server_proc():
    pytest.importorskip("playwright.sync_api")
    with streamlit_server("streamlit_cancel.log") as running:
        yield running


def test_closing_the_tab_stops_a_long_arc_search(server_proc):
    from playwright.sync_api import sync_playwright

    url, proc = server_proc
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
        page = ctx.new_page()
        page.goto(f"{url}/segments?seg_arcs=5&seg_restarts=100", wait_until="domcontentloaded")
        page.get_by_role("heading", name="Segments lab").first.wait_for(timeout=90_000)
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=90_000
        )
        page.get_by_role("tab", name="Arc search").click()
        page.get_by_role("button", name="Run arc search").click()
        page.get_by_text("arc", exact=False).first.wait_for(timeout=30_000)
        time.sleep(3.0)  # the search is under way
        busy0 = _cpu_seconds(proc.pid)
        time.sleep(1.0)
        busy = _cpu_seconds(proc.pid) - busy0  # CPU seconds per second while searching
        ctx.close()
        browser.close()
    time.sleep(3.0)  # the next progress step sees the session gone
    quiet0 = _cpu_seconds(proc.pid)
    time.sleep(4.0)
    quiet = (_cpu_seconds(proc.pid) - quiet0) / 4.0
    (ARTIFACTS / "cancel_cpu.txt").write_text(
        f"searching: {busy:.2f} CPU s/s; after closing: {quiet:.2f} CPU s/s\n"
    )
    assert busy > 0.2, f"the search did not seem to run ({busy:.2f} CPU s/s)"
    assert quiet < min(0.25, busy / 3), (
        f"the server kept computing after the tab closed ({quiet:.2f} CPU s/s)"
    )
