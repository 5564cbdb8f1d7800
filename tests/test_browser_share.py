"""A shared link in a real browser: configure a non-default view (an upload, an arc edit, settings on three
pages), copy the link from the sidebar, open it in a fresh browser context and get the identical view."""

from __future__ import annotations

import numpy as np
from browser_helpers import act, count_runs, settle
from test_browser import ARTIFACTS, _check_page, browser, pytestmark, server  # noqa: F401 (fixtures)


def _csv(path) -> str:
    rng = np.random.default_rng(3)
    n = 120
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 3
    c = rng.integers(0, 2, n)
    label = (b > 0).astype(int) ^ (rng.random(n) < 0.1)
    lines = ["colour,shape,size,label"] + [f"c{x},s{y},z{w},L{v}" for x, y, w, v in zip(a, b, c, label)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _open(ctx, url: str):
    """A page of ``ctx`` at ``url``, its first script run over (:func:`browser_helpers.settle`)."""
    page = ctx.new_page()
    count_runs(page)
    page.goto(url, wait_until="domcontentloaded")
    settle(page)
    return page


def _select(page, label: str, option: str):
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    box.click()
    page.keyboard.type(option[:12])  # a long list draws only the options in view: filter it first
    act(page, page.get_by_role("option", name=option, exact=True).first.click)


def _number(page, label: str, value: int):
    field = page.get_by_label(label, exact=True).first
    field.fill(str(value))
    act(page, lambda: field.press("Enter"))


def _go(page, name: str):
    act(page, page.get_by_role("link", name=name, exact=True).first.click)
    page.get_by_role("heading", name=name).first.wait_for(timeout=90_000)


def _copied_link(page) -> str:
    page.get_by_text("Share this view").first.click()
    code = page.locator('[data-testid="stSidebar"] [data-testid="stCode"] code').first
    code.wait_for(timeout=30_000)
    return code.inner_text().strip()


def _view(page) -> dict:
    """What must be identical: the data and the number of arcs in the sidebar (the structure's label says
    where it came from, so it differs), and the Clustering page's metrics."""
    side = page.locator('[data-testid="stSidebar"]').inner_text()
    _go(page, "Clustering")
    # the heading draws before the clustering finishes: read the metrics once the last of them is there
    page.get_by_test_id("stMetric").filter(has_text="Clusters used").first.wait_for(timeout=90_000)
    metrics = [m.inner_text() for m in page.locator('[data-testid="stMetric"]').all()]
    lines = side.splitlines()
    return {
        "data": [ln for ln in lines if ln.startswith("Data:")],
        "arcs": [ln.rsplit("·", 1)[-1].strip() for ln in lines if ln.startswith("Structure:")],
        "metrics": metrics,
    }


def test_a_copied_link_opens_the_same_view(server, browser, tmp_path):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1500, "height": 2200})
    try:
        page = _open(ctx, server)
        page.wait_for_selector(".js-plotly-plot", timeout=90_000)
        _select(page, "Bundled sample or your own file", "Upload your own CSV…")
        uploader = page.locator(
            '[data-testid="stMainBlockContainer"] [data-testid="stFileUploader"] input[type="file"]'
        )
        act(page, lambda: uploader.set_input_files(_csv(tmp_path / "mine.csv")))
        page.get_by_text("Loaded mine.csv").first.wait_for(timeout=60_000)
        _go(page, "Structure")
        act(page, page.get_by_role("button", name="Start empty").click)
        page.get_by_text("Empty network").first.wait_for(timeout=30_000)
        _select(page, "Add an arc from", "size")  # the arc edits sit beside the graph
        _select(page, "Add an arc to", "colour")
        act(page, page.get_by_role("button", name="Add arc").click)
        try:
            page.get_by_text("Added size → colour").first.wait_for(timeout=30_000)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "share_failed_edit.png"), full_page=True)
            raise
        _go(page, "Kernel")
        _number(page, "Sampling seed", 9)
        _go(page, "Clustering")
        _number(page, "Seed", 11)
        _number(page, "Local-search restarts", 6)
        _go(page, "Prototypes")
        _number(page, "Split and sampling seed", 4)
        link = _copied_link(page)
        assert "upload=" in link and "arcs=" in link and "clu_seed=11" in link and "proto_seed=4" in link
        assert "kernel_seed=9" in link
        first = _view(page)
        page.screenshot(path=str(ARTIFACTS / "share_configured.png"), full_page=True)
    finally:
        ctx.close()

    ctx2 = browser.new_context(viewport={"width": 1500, "height": 2200})
    try:
        page2 = _open(ctx2, link)
        page2.get_by_role("heading", name="Prototypes").first.wait_for(timeout=90_000)
        body = page2.inner_text("body")
        assert "could not be used" not in body, body[:2000]
        assert _copied_link(page2) == link
        second = _view(page2)
        _check_page(page2, "h1", "Clustering", "share_opened_link")
        assert second == first
    finally:
        ctx2.close()


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def _compare_metrics(page) -> dict:
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=90_000)
    return {k: _metric(page, k) for k in ("max |ΔK|", "Equivalent", "Shared protos")}


def test_link_and_session_download_restore_compare_b(server, browser, tmp_path):  # noqa: F811
    """Compare with B = a V-structure: the copied link opens the same comparison (B included), and the
    Session (JSON) button delivers a file that, opened in a fresh browser, restores it too."""
    import json

    ctx = browser.new_context(viewport={"width": 1500, "height": 1400}, accept_downloads=True)
    try:
        page = _open(ctx, f"{server.rstrip('/')}/compare?data=hayes_roth&class=class")
        page.get_by_role("heading", name="Compare structures").first.wait_for(timeout=90_000)
        _compare_metrics(page)
        act(page, page.get_by_role("button", name="V-structure", exact=True).click)
        first = _compare_metrics(page)
        link = _copied_link(page)
        assert "cmpb=" in link
        with page.expect_download(timeout=60_000) as dl:
            page.get_by_role("button", name="Session (JSON)").click()
        path = tmp_path / "session.json"
        dl.value.save_as(path)
        doc = json.loads(path.read_text())
        assert doc["schema"] == "bnfk-session" and len(doc["networks"]["compare_b"]["arcs"]) == 2
    finally:
        ctx.close()
    ctx2 = browser.new_context(viewport={"width": 1500, "height": 1400})
    try:
        page2 = _open(ctx2, link)
        page2.get_by_role("heading", name="Compare structures").first.wait_for(timeout=90_000)
        assert _compare_metrics(page2) == first
    finally:
        ctx2.close()
    ctx3 = browser.new_context(viewport={"width": 1500, "height": 1400})
    try:
        page3 = _open(ctx3, server)
        page3.wait_for_selector(".js-plotly-plot", timeout=90_000)
        page3.get_by_text("Share this view").first.click()  # an expander: no run
        session = page3.locator('[data-testid="stSidebar"] [data-testid="stFileUploader"] input[type="file"]')
        act(page3, lambda: session.set_input_files(str(path)))
        _go(page3, "Compare structures")
        assert _compare_metrics(page3) == first
    finally:
        ctx3.close()
