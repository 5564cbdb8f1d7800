"""Every use of Streamlit's internals, in one module, used only on the Streamlit it was tested against.

The app reaches past Streamlit's public API in a few places, each for one measured reason:

* :func:`plotly_chart_element` builds the element ``st.plotly_chart`` builds (same specification, element id
  and selection widget) around a figure's JSON made once (:mod:`bnfk_ui.state.charts`), and
  :func:`install_message_hashes` keeps Streamlit's per-message hash (``populate_hash_if_needed``) for chart
  messages: for the lecture's heatmaps these were two fifths of a class's server time;
* :func:`session_gone` asks the runtime whether this run's browser session is still connected, and
  :data:`StopException` is Streamlit's own stop signal (:mod:`bnfk_ui.jobs` stops a computation nobody waits
  for);
* :func:`closed_session_cache` is the runtime's cache of closed sessions (:mod:`bnfk_ui.session_reaper`);
* :func:`warm_up` compiles Streamlit's emoji pattern before a visitor needs it (:mod:`bnfk_ui.warmup`).

:func:`tested` says whether the installed Streamlit (:data:`INSTALLED`) is in :data:`TESTED_RANGE` (the range
``pip install ".[app]"`` accepts, around the version ``requirements.txt`` pins).  On any other version every
function here falls back to the public API or to doing nothing: ``st.plotly_chart(fig, ...)``, no kept
hashes, no cancellation of a closed session's computation, no early reaping of closed sessions.
``tests/test_streamlit_adapter.py`` forces that path and checks the pages still render.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections import OrderedDict

import streamlit as st

__all__ = [
    "TESTED_RANGE",
    "INSTALLED",
    "tested",
    "StopException",
    "session_gone",
    "closed_session_cache",
    "warm_up",
    "install_message_hashes",
    "plotly_chart_element",
]

#: the Streamlit versions the internals below were tested against (``requirements.txt`` pins 1.67.0; the
#: ``app`` extra of ``pyproject.toml`` accepts this range)
TESTED_RANGE = ">=1.67,<1.68"
_LOWEST, _BEYOND = (1, 67), (1, 68)
#: the installed Streamlit's version
INSTALLED = st.__version__


def tested(version: str | None = None) -> bool:
    """True when ``version`` (default: :data:`INSTALLED`, read at each call) is in :data:`TESTED_RANGE`."""
    parts = tuple(int(p) for p in re.findall(r"\d+", version if version is not None else INSTALLED)[:2])
    return _LOWEST <= parts < _BEYOND


def _stop_exception() -> type:
    """Streamlit's stop signal (a ``BaseException`` its script runner ends a run on without an error); on an
    untested Streamlit a ``BaseException`` of our own (then never raised: :func:`session_gone` is False)."""
    if tested():
        with contextlib.suppress(ImportError):
            from streamlit.runtime.scriptrunner_utils.exceptions import StopException as stop

            return stop
    return type("StopException", (BaseException,), {"__doc__": "A stop signal (untested Streamlit)."})


StopException = _stop_exception()


def session_gone() -> bool:
    """True when this script run's browser session has disconnected (False outside a running app, and on an
    untested Streamlit)."""
    if not tested():
        return False
    try:
        from streamlit.runtime import Runtime
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:
        return False
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not Runtime.exists():
        return False
    try:
        return not Runtime.instance().is_active_session(ctx.session_id)
    except Exception:  # noqa: BLE001 - a runtime without the session registry: nothing to check
        return False


def closed_session_cache():
    """``(the cache of closed sessions, its lock)`` of the running server, else ``(None, None)`` (also on an
    untested Streamlit)."""
    if not tested():
        return None, None
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return None, None
        mgr = Runtime.instance()._session_mgr
        cache = getattr(getattr(mgr, "_session_storage", None), "_cache", None)
        if cache is None or not hasattr(cache, "expire"):
            return None, None
        return cache, getattr(mgr, "_storage_lock", None)
    except Exception:  # noqa: BLE001 - another Streamlit: nothing to reap
        return None, None


def warm_up() -> None:
    """Compile Streamlit's emoji pattern once (its first use costs a visitor a second); nothing on an untested
    Streamlit."""
    if tested():
        with contextlib.suppress(ImportError):
            import streamlit.emojis  # noqa: F401


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
    process; False on a Streamlit outside :data:`TESTED_RANGE` or without that function (nothing changes).
    The kept hash is used only while the installed Streamlit is the tested one (:func:`tested`)."""
    if not tested():
        return False
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
        key = _chart_key(msg) if tested() else None
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


def _height(size, height):
    if height != "content":
        return height
    h = size[1]
    return int(h) if isinstance(h, (int, float)) and h > 0 else 450


def _width(size, width):
    if width != "content":
        return width
    w = size[0]
    return int(w) if isinstance(w, (int, float)) and w > 0 else 700


def plotly_chart_element(
    fig,
    spec: str,
    size: tuple,
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
    """``(where or st).plotly_chart(fig, ...)`` sent with the figure's JSON ``spec`` and layout ``size``
    (width, height) made once; on an untested Streamlit (or one without these internals) exactly that call.

    Takes the arguments of ``st.plotly_chart`` that the app uses; ``where`` is the container (a column) to
    draw in, else the current one.  Returns what ``st.plotly_chart`` returns (the selection state when
    ``on_select`` is not ``"ignore"``)."""
    public = dict(
        key=key,
        on_select=on_select,
        selection_mode=selection_mode,
        config=config,
        width=width,
        height=height,
        theme=theme,
    )
    if not tested():
        return (where or st).plotly_chart(fig, **public)
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
    except ImportError:  # not the internals tested: the public function (the same element, made the slow way)
        return (where or st).plotly_chart(fig, **public)
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
    proto.spec = spec
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
    layout = LayoutConfig(width=_width(size, width), height=_height(size, height))
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
