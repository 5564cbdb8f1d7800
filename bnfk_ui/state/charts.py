"""A plotly figure sent as Streamlit's ``st.plotly_chart`` sends it, its JSON made once per figure.

``st.plotly_chart`` copies the whole figure (``Figure.to_dict``) and encodes it to JSON (plotly's encoder
encodes, decodes and encodes again) on every run of every session: for the lecture's heatmaps that was two
fifths of a class's server time.  The figures the pages draw are built once per distinct input and never
changed afterwards (:mod:`.shared`), so their JSON is the same on every run: :func:`plotly_chart` keeps it on
the figure and builds the very element ``st.plotly_chart`` builds (same specification, same element id, same
selection widget) around it.  ``tests/test_charts.py`` checks the element against ``st.plotly_chart``'s for
figures with and without selections.

The element's id is Streamlit's hash of the chart's arguments, the JSON among them (a megabyte for a heatmap):
it is computed once per figure and context (key, configuration, page, form, container) and kept on the figure
too, then registered as Streamlit registers it (so a duplicate key still fails the same way).
"""
from __future__ import annotations

import json
import threading

import streamlit as st

__all__ = ["plotly_chart", "figure_json"]

_LOCK = threading.Lock()


def figure_json(fig) -> str:
    """The figure's JSON as ``st.plotly_chart`` makes it (``plotly.io.to_json`` of ``fig.to_dict()``), made once
    per figure object and kept on it (a figure handed to this function must not be changed afterwards)."""
    spec = getattr(fig, "_bnfk_json", None)
    if spec is None:
        import plotly.io
        import plotly.tools
        spec = plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True),
                                 validate=False)
        with _LOCK:
            fig._bnfk_json = spec
    return spec


def _size(fig) -> tuple:
    """The figure's layout (width, height), read once per figure and kept on it (plotly's property access costs
    more than the rest of a chart's element)."""
    size = getattr(fig, "_bnfk_size", None)
    if size is None:
        size = (fig.layout.width, fig.layout.height)
        with _LOCK:
            fig._bnfk_size = size
    return size


def _element_id(fig, ctx, dg, key, spec: str, **kwargs) -> str:
    """``compute_and_register_element_id("plotly_chart", ...)`` for this figure, its hash of the JSON ``spec``
    made once per figure and context and kept on the figure; the id is registered on every call as Streamlit
    registers it."""
    from streamlit.elements.lib.form_utils import current_form_id
    from streamlit.elements.lib.utils import _register_element_id, compute_and_register_element_id
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    context = (key, tuple(sorted((k, repr(v)) for k, v in kwargs.items())),
               ThreadState.get().active_script_hash if ctx else None, current_form_id(dg),
               dg._active_dg._root_container)
    ids = getattr(fig, "_bnfk_ids", None)
    if ids is None:
        with _LOCK:
            ids = fig.__dict__.setdefault("_bnfk_ids", {})
    element_id = ids.get(context)
    if element_id is None:
        element_id = compute_and_register_element_id("plotly_chart", user_key=key, key_as_main_identity=False,
                                                     dg=dg, plotly_spec=spec, **kwargs)
        with _LOCK:
            ids[context] = element_id
    elif ctx:
        _register_element_id(ctx, "plotly_chart", element_id)
    return element_id


def _height(fig, height):
    if height != "content":
        return height
    h = _size(fig)[1]
    return int(h) if isinstance(h, (int, float)) and h > 0 else 450


def _width(fig, width):
    if width != "content":
        return width
    w = _size(fig)[0]
    return int(w) if isinstance(w, (int, float)) and w > 0 else 700


def plotly_chart(fig, *, key=None, on_select="ignore", selection_mode=("points", "box", "lasso"), config=None,
                 width="stretch", height="content", theme="streamlit", where=None):
    """``(where or st).plotly_chart(fig, ...)`` with the figure's JSON made once (:func:`figure_json`).

    Takes the arguments of ``st.plotly_chart`` that the app uses; ``where`` is the container (a column) to
    draw in, else the current one.  Returns what ``st.plotly_chart`` returns (the selection state when
    ``on_select`` is not ``"ignore"``)."""
    try:
        from streamlit.delta_generator_singletons import get_dg_singleton_instance
        from streamlit.elements.lib import agent_spec
        from streamlit.elements.lib.form_utils import current_form_id
        from streamlit.elements.lib.layout_utils import LayoutConfig, validate_height, validate_width
        from streamlit.elements.lib.policies import check_widget_policies
        from streamlit.elements.lib.utils import to_key
        from streamlit.elements.plotly_chart import (_SELECTION_MODE_FROM_PROTO, PlotlyChartSelectionSerde,
                                                     _plotly_data, parse_selection_mode)
        from streamlit.proto.PlotlyChart_pb2 import PlotlyChart as PlotlyChartProto
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
        from streamlit.runtime.state import register_widget, validate_on_change_mode
    except ImportError:          # another Streamlit: its own function (the same element, made the slow way)
        return (where or st).plotly_chart(fig, key=key, on_select=on_select, selection_mode=selection_mode,
                                          config=config, width=width, height=height, theme=theme)
    dg = where if where is not None else get_dg_singleton_instance().main_dg
    validate_width(width, allow_content=True)
    validate_height(height, allow_content=True)
    callback = validate_on_change_mode(on_select, supported_modes=("rerun", "ignore"), none_supported=False,
                                       param_name="on_select")
    key = to_key(key)
    selecting = on_select != "ignore"
    if selecting:
        check_widget_policies(dg, key, on_change=callback, default_value=None, writes_allowed=False,
                              enable_check_callback_rules=callback is not None)
    proto = PlotlyChartProto()
    proto.theme = theme or ""
    proto.form_id = current_form_id(dg)
    proto.spec = figure_json(fig)
    proto.config = json.dumps(config or {})
    ctx = get_script_run_ctx()
    proto.id = _element_id(fig, ctx, dg, key, proto.spec, plotly_config=proto.config, selection_mode=selection_mode,
                           is_selection_activated=selecting, theme=theme, width=width, height=height, alt=None)
    layout = LayoutConfig(width=_width(fig, width), height=_height(fig, height))
    if not selecting:
        return dg._enqueue("plotly_chart", proto, layout_config=layout,
                           agent_props=agent_spec.element("plotly_chart", key=key,
                                                          data_builder=lambda: _plotly_data(proto.spec), alt=None))
    proto.selection_mode.extend(parse_selection_mode(selection_mode))
    serde = PlotlyChartSelectionSerde()
    state = register_widget(proto.id, on_change_handler=callback, deserializer=serde.deserialize,
                            serializer=serde.serialize, ctx=ctx, value_type="string_value")
    dg._enqueue("plotly_chart", proto, layout_config=layout,
                agent_props=agent_spec.element(
                    "plotly_chart", key=proto.id, data_builder=lambda: _plotly_data(proto.spec),
                    support="action_unsupported",
                    selection_mode=sorted(_SELECTION_MODE_FROM_PROTO[m] for m in proto.selection_mode) or None,
                    on_select="rerun", alt=None))
    return state.value

