"""The HTML figures of a results folder open offline: ``reproduce`` writes them with ``plotly.min.js`` beside
them (no CDN), ``reproduce figures`` re-renders a folder's pages from their stored JSON without changing a
number, and the committed ``docs/results/`` pages draw in Chromium with the network blocked."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs

from bnfk_core.cli.main import main
from bnfk_core.reproduce import output as E

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
CHROMIUM = "/usr/bin/chromium"


def _plot_args(html: str) -> list:
    """The data, layout and config that the page passes to ``Plotly.newPlot``."""
    i = html.index('"', html.index("Plotly.newPlot(")) + 1
    i = html.index('",', i) + 2
    dec, out = json.JSONDecoder(), []
    for _ in range(3):
        while html[i] in " \n,":
            i += 1
        obj, i = dec.raw_decode(html, i)
        out.append(obj)
    return out


def _scripts(html: str) -> list[str]:
    return re.findall(r"<script[^>]*\bsrc\s*=\s*\"([^\"]+)\"", html)


def test_writer_figure_loads_local_plotly(tmp_path):
    w = E.Writer(tmp_path, "test")
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    w.figure("fig_test", fig)
    html = (tmp_path / "fig_test.html").read_text()
    assert _scripts(html) == [E.PLOTLY_JS]
    assert (tmp_path / E.PLOTLY_JS).read_text(encoding="utf-8") == get_plotlyjs()
    assert E.PLOTLY_JS in w.files
    assert _plot_args(html)[0] == json.loads(fig.to_json())["data"]
    w.figure("sub/fig_nested", fig)  # a stem with a folder: the bundle goes beside it
    assert (tmp_path / "sub" / E.PLOTLY_JS).exists() and "sub/plotly.min.js" in w.files
    assert all((tmp_path / f).exists() for f in w.files)


def test_reproduce_figures_rerenders_without_changing_numbers(tmp_path):
    out = tmp_path / "results"
    shutil.copytree(RESULTS, out)
    for p in out.glob("fig_*.html"):  # pages as they were before this change: plotly from a CDN
        fig = go.Figure(json.loads((out / (p.stem + ".json")).read_text()))
        fig.write_html(p, include_plotlyjs="cdn", full_html=True)
    (out / E.PLOTLY_JS).unlink(missing_ok=True)
    assert main(["reproduce", "figures", "-o", str(out)]) == 0
    pages = sorted(out.glob("fig_*.html"))
    assert len(pages) == len(list(out.glob("fig_*.json"))) >= 8
    for p in pages:
        html = p.read_text()
        assert _scripts(html) == [E.PLOTLY_JS] and "cdn.plot.ly" not in html
        stored = json.loads((out / (p.stem + ".json")).read_text())
        data, layout, _ = _plot_args(html)
        assert data == stored["data"] and layout == stored["layout"]
    assert (out / E.PLOTLY_JS).read_text(encoding="utf-8") == get_plotlyjs()
    # no number changed: every table is the committed one
    for f in RESULTS.glob("*.csv"):
        assert (out / f.name).read_bytes() == f.read_bytes()


def test_reproduce_figures_needs_a_results_folder(tmp_path, capsys):
    assert main(["reproduce", "figures", "-o", str(tmp_path)]) == 2
    assert "no manifest.json" in capsys.readouterr().err


def test_committed_results_are_offline():
    pages = sorted(RESULTS.glob("fig_*.html"))
    assert pages
    for p in pages:
        assert _scripts(p.read_text()) == [E.PLOTLY_JS], p.name
    assert (RESULTS / E.PLOTLY_JS).read_text(encoding="utf-8") == get_plotlyjs()


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium")
def test_committed_results_draw_offline():
    sync_api = pytest.importorskip("playwright.sync_api")
    pages = sorted(RESULTS.glob("fig_*.html"))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"]
        )
        try:
            ctx = browser.new_context(offline=True)
            blocked = []
            ctx.route(
                "**/*",
                lambda r: (
                    r.continue_()
                    if r.request.url.startswith("file:")
                    else (blocked.append(r.request.url), r.abort())
                ),
            )
            page = ctx.new_page()
            for f in pages:
                page.goto(f.resolve().as_uri(), wait_until="load")
                page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
            assert not blocked
        finally:
            browser.close()
