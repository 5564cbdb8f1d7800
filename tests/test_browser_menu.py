"""The sidebar menu on a cold first load, in a real browser: a fresh server's first visitor sees only the
app's own menu (the pages' titles, by section) -- never Streamlit's list of the ``pages/`` folder's file names
("app", "kernel zoo", ...), which it shows beside a ``pages/`` folder until the script reaches
``st.navigation`` (seconds on a cold start) unless ``client.showSidebarNavigation`` is off."""

from __future__ import annotations

import time

import pytest
from browser_helpers import streamlit_server
from test_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401

from bnfk_ui.router import PAGES

#: the texts of every link in the sidebar (a menu item's icon name is its first line)
LINKS = """() => [...document.querySelectorAll('[data-testid="stSidebar"] a')]
    .map(a => a.innerText.trim().split('\\n').pop())"""


def test_a_cold_first_load_shows_only_the_apps_menu():
    pytest.importorskip("playwright.sync_api")
    from playwright.sync_api import sync_playwright

    titles = [title for _, _, title, _, _ in PAGES]
    seen: list = []
    with streamlit_server("streamlit_menu.log") as (url, _proc), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url, wait_until="commit")
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # every state of the menu from the first paint on
                links = page.evaluate(LINKS)
                if links and (not seen or seen[-1] != links):
                    seen.append(links)
                if links == titles:
                    break
                page.wait_for_timeout(30)
        finally:
            browser.close()
    assert seen and seen[-1] == titles, seen
    assert all(link in titles for links in seen for link in links), f"a menu other than the app's: {seen}"
