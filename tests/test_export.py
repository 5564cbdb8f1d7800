"""Figures as files (bnfk_core.views.export): offline HTML, PNG/SVG at slide size, and the message when the
exporter or the browser is missing (also on the page helper ``common.figure_images``)."""

from __future__ import annotations

import re
import struct
import sys
import xml.etree.ElementTree as ET

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from bnfk_core.views import export


def _fig():
    return go.Figure(go.Bar(x=["yes", "no"], y=[3, 5]), layout={"height": 300, "title": "votes"})


@pytest.fixture
def fresh_check():
    export._problem.cache_clear()
    yield
    export._problem.cache_clear()


def test_figure_html_is_offline():
    html = export.figure_html(_fig())
    # (plotly.js mentions cdn.plot.ly only as the default URL of geo maps' topojson)
    assert "cdn.plot.ly/plotly" not in html and not re.search(r"<script[^>]*\bsrc\s*=", html)
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js itself is in the page


needs_exporter = pytest.mark.skipif(
    export.image_export_problem() is not None, reason=str(export.image_export_problem())
)


@needs_exporter
def test_png_at_slide_size():
    fig = _fig()
    png = export.figure_image(fig, "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (w, h) == (export.SLIDE_WIDTH * export.SLIDE_SCALE, export.SLIDE_HEIGHT * export.SLIDE_SCALE)
    assert fig.layout.height == 300  # the shown figure is not resized


@needs_exporter
def test_svg_root_element():
    svg = export.figure_image(_fig(), "svg")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (root.get("width"), root.get("height")) == (str(export.SLIDE_WIDTH), str(export.SLIDE_HEIGHT))


def test_unknown_format_refused():
    with pytest.raises(export.ExportError, match="'gif'"):
        export.figure_image(_fig(), "gif")


def test_missing_kaleido_is_reported(monkeypatch, fresh_check):
    monkeypatch.setitem(sys.modules, "kaleido", None)  # `import kaleido` raises ImportError
    msg = export.image_export_problem()
    assert msg and "kaleido" in msg
    with pytest.raises(export.ExportError, match="kaleido"):
        export.figure_image(_fig(), "png")


def test_missing_browser_is_reported(monkeypatch, fresh_check):
    pytest.importorskip("kaleido")
    from choreographer.browsers.chromium import Chromium

    monkeypatch.setattr(Chromium, "find_browser", classmethod(lambda cls, **kw: None))
    msg = export.image_export_problem()
    assert msg and "Chromium" in msg
    with pytest.raises(export.ExportError, match="Chromium"):
        export.figure_image(_fig(), "svg")


def _buttons_script():
    import plotly.graph_objects as go

    from bnfk_ui import common

    common.figure_images(go.Figure(go.Bar(x=[1], y=[1])), "fig")


def test_page_buttons_disabled_with_reason(monkeypatch):
    monkeypatch.setattr(export, "image_export_problem", lambda: "PNG/SVG export needs the 'kaleido' package.")
    at = AppTest.from_function(_buttons_script, default_timeout=60)
    at.run()
    assert not at.exception
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons] == ["PNG (3200×1800)", "SVG (1600×900)"]
    assert all(b.proto.disabled for b in buttons)
    assert any("needs the 'kaleido' package" in c.value for c in at.caption)


def test_page_buttons_enabled_when_available(monkeypatch):
    monkeypatch.setattr(export, "image_export_problem", lambda: None)
    at = AppTest.from_function(_buttons_script, default_timeout=60)
    at.run()
    assert not at.exception
    assert [b.proto.disabled for b in at.get("download_button")] == [False, False]
    assert not at.caption
