"""Figures as files: offline HTML and PNG/SVG for slides.  Streamlit-free (the pages, the report and the CLI
share it).

* :func:`figure_html` -- a self-contained HTML page with plotly.js embedded (opens without a network);
* :func:`figure_image` -- PNG or SVG at presentation size through plotly's static export (kaleido v1, which
  drives a locally installed Chromium/Chrome);
* :func:`image_export_problem` -- ``None`` when that export can run, else the sentence saying what is missing.
"""

from __future__ import annotations

import functools

from bnfk_core.errors import BnfkError

__all__ = [
    "IMAGE_FORMATS",
    "SLIDE_HEIGHT",
    "SLIDE_SCALE",
    "SLIDE_WIDTH",
    "ExportError",
    "figure_html",
    "figure_image",
    "image_export_problem",
]

#: presentation size: a 16:9 slide, rendered at twice the pixels (PNG 3200 x 1800)
SLIDE_WIDTH, SLIDE_HEIGHT, SLIDE_SCALE = 1600, 900, 2
IMAGE_FORMATS = {"png": "image/png", "svg": "image/svg+xml"}


class ExportError(BnfkError):
    """A figure could not be exported as an image (exporter or browser missing, export failed)."""


def figure_html(fig) -> str:
    """``fig`` as one self-contained HTML page: plotly.js embedded, no CDN, readable offline.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure

    Returns
    -------
    str
    """
    return fig.to_html(include_plotlyjs=True, full_html=True)


@functools.lru_cache(maxsize=1)
def _problem() -> str | None:
    try:
        import kaleido  # noqa: F401
        from choreographer.browsers.chromium import Chromium
    except ImportError:
        return (
            "PNG/SVG export needs the 'kaleido' package, which is not installed "
            "(pip install -r requirements.txt)."
        )
    try:
        found = Chromium.find_browser(skip_local=False)
    except Exception:  # noqa: BLE001 - an odd platform: report it as missing
        found = None
    if not found:
        return (
            "PNG/SVG export needs Chromium or Chrome, and none was found "
            "(Debian: apt-get install chromium; or set BROWSER_PATH)."
        )
    return None


def image_export_problem() -> str | None:
    """``None`` when PNG/SVG export can run here; otherwise one sentence naming what is missing (checked
    once).

    Returns
    -------
    str or None
    """
    return _problem()


def figure_image(
    fig, fmt: str = "png", *, width: int = SLIDE_WIDTH, height: int = SLIDE_HEIGHT, scale: float = SLIDE_SCALE
) -> bytes:
    """``fig`` as PNG or SVG bytes at ``width`` x ``height`` (PNG pixels times ``scale``); a copy of the
    figure is resized, so the one shown on the page keeps its own height.  :class:`ExportError` when the
    exporter or the browser is missing or the export fails.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    fmt : {"png", "svg"}
    width, height : int
    scale : float

    Returns
    -------
    bytes
    """
    fmt = str(fmt).lower()
    if fmt not in IMAGE_FORMATS:
        raise ExportError(f"Cannot export a figure as '{fmt}'; choose {' or '.join(IMAGE_FORMATS)}.")
    problem = image_export_problem()
    if problem:
        raise ExportError(problem)
    import plotly.graph_objects as go

    sized = go.Figure(fig)
    sized.update_layout(width=width, height=height)
    try:
        return sized.to_image(format=fmt, width=width, height=height, scale=scale if fmt == "png" else 1)
    except Exception as exc:  # noqa: BLE001 - the exporter's own errors, as one sentence
        raise ExportError(f"The {fmt.upper()} export failed ({type(exc).__name__}: {exc}).") from None
