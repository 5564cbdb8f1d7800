"""One user cannot stall the others: a long computation stops when its browser tab closes.

A real server (`streamlit run app.py`) and Chromium: start a long arc search in the Segments lab, close the
tab, and the server process must go quiet (its CPU time stops growing) within a few seconds instead of
running the search to its end for nobody."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from test_browser import ARGS, ARTIFACTS, CHROMIUM, ROOT, pytestmark  # noqa: F401

TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK      # utime + stime


@pytest.fixture()
def server_proc():
    pytest.importorskip("playwright.sync_api")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "streamlit_cancel.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            pytest.fail("streamlit did not start")
        time.sleep(0.5)
    try:
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_closing_the_tab_stops_a_long_arc_search(server_proc):
    from playwright.sync_api import sync_playwright
    url, proc = server_proc
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
        page = ctx.new_page()
        page.goto(f"{url}/segments?seg_arcs=5&seg_restarts=100", wait_until="domcontentloaded")
        page.get_by_role("heading", name="Segments lab").first.wait_for(timeout=90_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=90_000)
        page.get_by_role("tab", name="Arc search").click()
        page.get_by_role("button", name="Run arc search").click()
        page.get_by_text("arc", exact=False).first.wait_for(timeout=30_000)
        time.sleep(3.0)                                   # the search is under way
        busy0 = _cpu_seconds(proc.pid)
        time.sleep(1.0)
        busy = _cpu_seconds(proc.pid) - busy0             # CPU seconds per second while searching
        ctx.close()
        browser.close()
    time.sleep(3.0)                                       # the next progress step sees the session gone
    quiet0 = _cpu_seconds(proc.pid)
    time.sleep(4.0)
    quiet = (_cpu_seconds(proc.pid) - quiet0) / 4.0
    (ARTIFACTS / "cancel_cpu.txt").write_text(f"searching: {busy:.2f} CPU s/s; after closing: {quiet:.2f} CPU s/s\n")
    assert busy > 0.5, f"the search did not seem to run ({busy:.2f} CPU s/s)"
    assert quiet < 0.25, f"the server kept computing after the tab closed ({quiet:.2f} CPU s/s)"
