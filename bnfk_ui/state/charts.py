"""A plotly figure sent as Streamlit's ``st.plotly_chart`` sends it, its JSON made once per figure.

``st.plotly_chart`` copies the whole figure (``Figure.to_dict``) and encodes it to JSON (plotly's encoder
encodes, decodes and encodes again) on every run of every session: for the lecture's heatmaps that was two
fifths of a class's server time.  The figures the pages draw are built once per distinct input and never
changed afterwards (:mod:`.shared`), so their JSON is the same on every run: :func:`figure_json` keeps it on
the figure, and :func:`plotly_chart` hands it to :func:`bnfk_ui.streamlit_adapter.plotly_chart_element`,
which builds the very element ``st.plotly_chart`` builds around it on the Streamlit it was tested against
(and calls ``st.plotly_chart`` on any other).  ``tests/test_charts.py`` checks the element against
``st.plotly_chart``'s for figures with and without selections.
"""

from __future__ import annotations

import threading

from .. import streamlit_adapter

__all__ = ["plotly_chart", "figure_json"]

_LOCK = threading.Lock()


def figure_json(fig) -> str:
    """The figure's JSON as ``st.plotly_chart`` makes it (``plotly.io.to_json`` of ``fig.to_dict()``), made
    once per figure object and kept on it (a figure handed to this function must not be changed
    afterwards)."""
    spec = getattr(fig, "_bnfk_json", None)
    if spec is None:
        import plotly.io
        import plotly.tools

        spec = plotly.io.to_json(
            plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True), validate=False
        )
        with _LOCK:
            fig._bnfk_json = spec
    return spec


def _size(fig) -> tuple:
    """The figure's layout (width, height), read once per figure and kept on it (plotly's property access
    costs more than the rest of a chart's element)."""
    size = getattr(fig, "_bnfk_size", None)
    if size is None:
        size = (fig.layout.width, fig.layout.height)
        with _LOCK:
            fig._bnfk_size = size
    return size


def plotly_chart(
    fig,
    *,
    key=None,
    on_select="ignore",
    selection_mode=("points", "box", "lasso"),
    config=None,
    width="stretch",
    height="content",
    theme="streamlit",
    where=None,
):
    """``(where or st).plotly_chart(fig, ...)`` with the figure's JSON made once (:func:`figure_json`).

    Takes the arguments of ``st.plotly_chart`` that the app uses; ``where`` is the container (a column) to
    draw in, else the current one.  Returns what ``st.plotly_chart`` returns (the selection state when
    ``on_select`` is not ``"ignore"``)."""
    return streamlit_adapter.plotly_chart_element(
        fig,
        figure_json(fig),
        _size(fig),
        key=key,
        on_select=on_select,
        selection_mode=selection_mode,
        config=config,
        width=width,
        height=height,
        theme=theme,
        where=where,
    )
