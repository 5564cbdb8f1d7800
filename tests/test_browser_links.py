"""Hostile links in a real browser: a link whose values are Markdown (a link, an image, HTML) opens the app
with a plain-text warning, no clickable link or image in the page, and no request leaving for another address.

Every request the page makes is recorded (and any to another host aborted, so the test never touches the
network); each page load is bounded in time.
"""

from __future__ import annotations

import urllib.parse

import pytest
from browser_helpers import streamlit_server
from test_browser import ARTIFACTS, browser, pytestmark  # noqa: F401 (fixtures)

EVIL = "evil.example"
LINKS = [
    {"data": f"[click](http://{EVIL}/x)"},
    {"class": f"![i](http://{EVIL}/i.png)"},
    {"clu_kernels": f"![i](http://{EVIL}/k.png)"},
    {"path": f"<img src=http://{EVIL}/p.png>"},
    {"params": f"![i](https://www.{EVIL}/q.png)", "data": f"www.{EVIL}"},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("playwright.sync_api")
    folder = tmp_path_factory.mktemp("data")  # the operator's data folder: a path link is named
    try:
        with streamlit_server("streamlit_links.log", env={"BNFK_DATA_DIR": str(folder)}) as (url, _proc):
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.mark.parametrize("query", LINKS, ids=lambda q: ",".join(q))
def test_a_hostile_link_smuggles_nothing(server, browser, query):
    host = urllib.parse.urlsplit(server).netloc
    ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = ctx.new_page()
    foreign: list[str] = []

    def route(r):
        netloc = urllib.parse.urlsplit(r.request.url).netloc
        if r.request.url.startswith(("data:", "blob:")) or netloc == host:
            r.continue_()
        else:
            foreign.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    try:
        page.goto(f"{server}/?{urllib.parse.urlencode(query)}", timeout=60_000)
        alert = page.get_by_test_id("stAlertContentWarning").first
        alert.wait_for(timeout=60_000)
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000
        )
        page.wait_for_timeout(1000)
        assert "could not be used" in alert.inner_text()
        alerts = page.locator('[data-testid^="stAlertContent"]')
        text = "\n".join(alerts.all_inner_texts())
        assert "](" in text or "<img" in text or "www." in text, text  # the value shows as typed
        for tag in ("a", "img", "image", "iframe", "script"):
            bad = page.locator(f'[data-testid^="stAlertContent"] {tag}')
            assert bad.count() == 0, (tag, text)
        links = page.eval_on_selector_all(
            "a[href], img[src], [srcset]", "els => els.map(e => e.href || e.src || e.srcset || '')"
        )
        assert not [u for u in links if EVIL in u], links
        page.screenshot(path=str(ARTIFACTS / f"hostile_link_{'_'.join(query)}.png"))
    finally:
        ctx.close()
    assert not foreign, foreign
