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

Streamlit also hashes every message it sends (serialising it first) so that a browser which holds it already
gets a reference instead: for a chart, a megabyte on every run.  :func:`install_message_hashes` keeps that
hash for a chart's message by its element id (itself a hash of the JSON and of every argument), its fragment,
its size and its layout: the same hash Streamlit computes, computed once.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import streamlit as st

__all__ = ["plotly_chart", "figure_json", "install_message_hashes"]

_LOCK = threading.Lock()
#: a chart message's hash and cacheable flag by (element id, fragment, size, height, width): at most
#: MAX_HASHES
_HASHES: OrderedDict = OrderedDict()
MAX_HASHES = 512


def _chart_key(msg):
    """The key a chart message's hash is kept under, or None for any other message."""
    if msg.hash or msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return None
    el = msg.delta.new_element
    if el.WhichOneof("type") != "plotly_chart" or not el.plotly_chart.id:
        return None
    return (
        el.plotly_chart.id,
        msg.delta.fragment_id,
        msg.delta.ByteSize(),
        el.height_config.SerializeToString(),
        el.width_config.SerializeToString(),
    )


def install_message_hashes() -> bool:
    """Have Streamlit's per-message hash (``populate_hash_if_needed``, called for every message a script run
    enqueues) kept for chart messages (:func:`_chart_key`); every other message is hashed as before.  Once per
    process; False when this Streamlit has no such function (then nothing changes)."""
    try:
        from streamlit.runtime.scriptrunner_utils import script_run_context as src
    except ImportError:
        return False
    original = getattr(src, "populate_hash_if_needed", None)
    if original is None:
        return False
    if getattr(original, "_bnfk_kept", False):
        return True

    def populate_hash_if_needed(msg) -> None:
        key = _chart_key(msg)
        if key is None:
            return original(msg)
        hit = _HASHES.get(key)
        if hit is not None:
            msg.hash = hit[0]
            msg.metadata.cacheable = hit[1]
            return None
        original(msg)
        with _LOCK:
            _HASHES[key] = (msg.hash, msg.metadata.cacheable)
            while len(_HASHES) > MAX_HASHES:
                _HASHES.popitem(last=False)
        return None

    populate_hash_if_needed._bnfk_kept = True
    populate_hash_if_needed.original = original
    src.populate_hash_if_needed = populate_hash_if_needed
    return True


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


def _element_id(fig, ctx, dg, key, spec: str, **kwargs) -> str:
    """``compute_and_register_element_id("plotly_chart", ...)`` for this figure, its hash of the JSON ``spec``
    made once per figure and context and kept on the figure; the id is registered on every call as Streamlit
    registers it."""
    from streamlit.elements.lib.form_utils import current_form_id
    from streamlit.elements.lib.utils import _register_element_id, compute_and_register_element_id
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    context = (
        key,
        tuple(sorted((k, repr(v)) for k, v in kwargs.items())),
        ThreadState.get().active_script_hash if ctx else None,
        current_form_id(dg),
        dg._active_dg._root_container,
    )
    ids = getattr(fig, "_bnfk_ids", None)
    if ids is None:
        with _LOCK:
            ids = fig.__dict__.setdefault("_bnfk_ids", {})
    element_id = ids.get(context)
    if element_id is None:
        element_id = compute_and_register_element_id(
            "plotly_chart", user_key=key, key_as_main_identity=False, dg=dg, plotly_spec=spec, **kwargs
        )
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
    try:
        from streamlit.delta_generator_singletons import get_dg_singleton_instance
        from streamlit.elements.lib import agent_spec
        from streamlit.elements.lib.form_utils import current_form_id
        from streamlit.elements.lib.layout_utils import LayoutConfig, validate_height, validate_width
        from streamlit.elements.lib.policies import check_widget_policies
        from streamlit.elements.lib.utils import to_key
        from streamlit.elements.plotly_chart import (
            _SELECTION_MODE_FROM_PROTO,
            PlotlyChartSelectionSerde,
            _plotly_data,
            parse_selection_mode,
        )
        from streamlit.proto.PlotlyChart_pb2 import PlotlyChart as PlotlyChartProto
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
        from streamlit.runtime.state import register_widget, validate_on_change_mode
    except ImportError:  # another Streamlit: its own function (the same element, made the slow way)
        return (where or st).plotly_chart(
            fig,
            key=key,
            on_select=on_select,
            selection_mode=selection_mode,
            config=config,
            width=width,
            height=height,
            theme=theme,
        )
    dg = where if where is not None else get_dg_singleton_instance().main_dg
    validate_width(width, allow_content=True)
    validate_height(height, allow_content=True)
    callback = validate_on_change_mode(
        on_select, supported_modes=("rerun", "ignore"), none_supported=False, param_name="on_select"
    )
    key = to_key(key)
    selecting = on_select != "ignore"
    if selecting:
        check_widget_policies(
            dg,
            key,
            on_change=callback,
            default_value=None,
            writes_allowed=False,
            enable_check_callback_rules=callback is not None,
        )
    proto = PlotlyChartProto()
    proto.theme = theme or ""
    proto.form_id = current_form_id(dg)
    proto.spec = figure_json(fig)
    proto.config = json.dumps(config or {})
    ctx = get_script_run_ctx()
    proto.id = _element_id(
        fig,
        ctx,
        dg,
        key,
        proto.spec,
        plotly_config=proto.config,
        selection_mode=selection_mode,
        is_selection_activated=selecting,
        theme=theme,
        width=width,
        height=height,
        alt=None,
    )
    layout = LayoutConfig(width=_width(fig, width), height=_height(fig, height))
    if not selecting:
        return dg._enqueue(
            "plotly_chart",
            proto,
            layout_config=layout,
            agent_props=agent_spec.element(
                "plotly_chart", key=key, data_builder=lambda: _plotly_data(proto.spec), alt=None
            ),
        )
    proto.selection_mode.extend(parse_selection_mode(selection_mode))
    serde = PlotlyChartSelectionSerde()
    state = register_widget(
        proto.id,
        on_change_handler=callback,
        deserializer=serde.deserialize,
        serializer=serde.serialize,
        ctx=ctx,
        value_type="string_value",
    )
    dg._enqueue(
        "plotly_chart",
        proto,
        layout_config=layout,
        agent_props=agent_spec.element(
            "plotly_chart",
            key=proto.id,
            data_builder=lambda: _plotly_data(proto.spec),
            support="action_unsupported",
            selection_mode=sorted(_SELECTION_MODE_FROM_PROTO[m] for m in proto.selection_mode) or None,
            on_select="rerun",
            alt=None,
        ),
    )
    return state.value
