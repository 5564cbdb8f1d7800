"""The app in a real browser: `streamlit run app.py` driven by Playwright + Debian's chromium.

Every page is opened by its URL path, its main chart must render, no traceback or exception
text may appear, and a full-page screenshot goes to ``test-artifacts/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import streamlit_server

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium"),
]

# url path -> (what must be drawn, a text that must appear)
PAGES = {
    "": (".js-plotly-plot", "Bayesian-network Fisher kernels"),
    "data": (".js-plotly-plot", "Loading options"),
    "structure": (".js-plotly-plot", "Equivalence class"),
    "model": (".js-plotly-plot", "Most probable explanation"),
    "kernel": (".js-plotly-plot", "Why are two rows similar?"),
    # analysis pages: some wait for a button before drawing, so their title is the anchor
    "clustering": ("h1", "Clustering"),
    "imputation": ("h1", "Imputation"),
    "prototypes": ("h1", "Prototypes"),
    "segments": ("h1", "Segments lab"),
    "results": ("h1", "Results"),
    "kernel-zoo": ("h1", "Kernel zoo"),
}


@pytest.fixture(scope="module")
def server(request):
    """The app server of one test module (the modules importing this fixture each start their own); its log is
    ``test-artifacts/streamlit_<module>.log``, so a failing module's log is not overwritten by the next
    one's."""
    pytest.importorskip("playwright.sync_api")
    log = f"streamlit_{request.module.__name__.rpartition('.')[2]}.log"
    try:
        with streamlit_server(log) as (url, _proc):
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _check_page(page, selector: str, text: str, shot: str) -> None:
    page.wait_for_selector(selector, timeout=90_000)
    page.get_by_text(text, exact=False).first.wait_for(timeout=60_000)
    # wait until the script has finished (no running indicator) and plots are drawn
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=90_000
    )
    page.wait_for_timeout(1500)
    body = page.inner_text("body")
    for bad in ("Traceback", "Exception", "Something went wrong"):
        assert bad not in body, f"'{bad}' shown on {shot}"
    assert not page.query_selector('[data-testid="stException"]')
    errors = page.query_selector_all('[data-testid="stAlertContentError"]')
    assert not errors, f"st.error on {shot}: {[e.inner_text() for e in errors]}"
    page.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)


@pytest.mark.parametrize("path", list(PAGES))
def test_page_renders(server, browser, path):
    ctx = browser.new_context(viewport={"width": 1500, "height": 2400})
    page = ctx.new_page()
    try:
        page.goto(f"{server}/{path}", wait_until="domcontentloaded")
        selector, text = PAGES[path]
        _check_page(page, selector, text, f"page_{path or 'home'}")
    finally:
        ctx.close()


def test_navigation_keeps_choices(server, browser):
    """Pick a segment on the Structure page, then go to the Kernel page through the sidebar."""
    ctx = browser.new_context(viewport={"width": 1500, "height": 2400})
    page = ctx.new_page()
    try:
        page.goto(f"{server}/structure", wait_until="domcontentloaded")
        page.wait_for_selector(".js-plotly-plot", timeout=90_000)
        page.get_by_role("button", name="Start empty").click()
        page.get_by_text("Empty network").first.wait_for(timeout=30_000)
        page.get_by_role("link", name="Kernel").first.click()
        page.get_by_text("Why are two rows similar?").wait_for(timeout=90_000)
        page.wait_for_selector(".js-plotly-plot", timeout=90_000)
        assert "Empty network" in page.inner_text("body")
        _check_page(page, ".js-plotly-plot", "current structure (0 arcs)", "kernel_after_empty")
    finally:
        ctx.close()
