"""Every page in a real browser, on an upload whose file, column and level names are Markdown and HTML (an
image, a link, a tag pointing at another address): no request leaves for another address, and no link, image
or tag made from a name appears in the page."""

from __future__ import annotations

import urllib.parse

from browser_helpers import act, count_runs, settle
from test_browser import ARTIFACTS, browser, pytestmark, server  # noqa: F401 (fixtures)
from test_browser_share import _select

from bnfk_ui.router import PAGES

EVIL = "evil.example"
NAMES = [f"![i](http://{EVIL}/i.png)", f"<img src=http://{EVIL}/t.png>", f"[l](http://{EVIL}/l)"]


def _csv(path) -> str:
    header = ",".join(["class", *NAMES, "plain"])
    rows = [
        ",".join(
            [
                f"c{i % 2}",
                [f"<img src=http://{EVIL}/v.png>", "y"][i % 2],
                f"v{(i // 3) % 2}",
                f"w{i % 3}",
                f"p{i % 4}",
            ]
        )
        for i in range(90)
    ]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return str(path)


def test_no_page_makes_a_name_into_markup_or_a_request(server, browser, tmp_path):  # noqa: F811
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
    count_runs(page)
    seen = []
    try:
        page.goto(server, wait_until="domcontentloaded")
        page.wait_for_selector(".js-plotly-plot", timeout=90_000)
        settle(page)
        _select(page, "Bundled sample or your own file", "Upload your own CSV…")
        uploader = page.locator(
            '[data-testid="stMainBlockContainer"] [data-testid="stFileUploader"] input[type="file"]'
        )
        act(page, lambda: uploader.set_input_files(_csv(tmp_path / f"![f](http:__{EVIL}_f.png).csv")))
        page.get_by_text("Loaded").first.wait_for(timeout=60_000)
        for _, _, title, _, url in PAGES:
            act(page, page.get_by_role("link", name=title, exact=True).first.click)
            page.wait_for_function(
                "u => location.pathname.endsWith('/' + u) || (u === 'home' && location.pathname === '/')",
                arg=url,
                timeout=60_000,
            )
            seen.append(title)
            links = page.eval_on_selector_all(
                "a[href], img[src], [srcset], image", "els => els.map(e => e.href || e.src || e.srcset || '')"
            )
            where = page.eval_on_selector_all(  # the element that made it, for the message
                f"img[src*='{EVIL}'], a[href*='{EVIL}']",
                "els => els.map(e => e.closest('[data-testid]')?.outerHTML.slice(0, 300))",
            )
            assert not [u for u in links if EVIL in str(u)], (title, where)
    finally:
        page.screenshot(path=str(ARTIFACTS / "plain_text_sweep.png"), full_page=True)
        ctx.close()
    assert seen == [title for _, _, title, _, _ in PAGES]
    assert not foreign, foreign
