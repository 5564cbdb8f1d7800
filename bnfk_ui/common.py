"""Page scaffolding: start-up, the sidebar summary, section-level error messages and download buttons (the
page's error boundary is the router's, :func:`bnfk_ui.router.run`)."""

from __future__ import annotations

import contextlib
import io
import os
import re

import numpy as np
import streamlit as st

from bnfk_core.errors import BnfkError
from bnfk_core.registry import ESTIMATORS
from bnfk_core.serving import settings
from bnfk_core.serving.serve import echo
from bnfk_core.views import export

from . import jobs, router, share, state
from .state import choices, hybrid, messages, shared, structure, tables


def option_slider(where, label: str, key: str, **kwargs):
    """A slider for the setting ``key`` over the range, step and default its registry option declares
    (:class:`bnfk_core.registry.Option`: ``ui_range``), bound to the session's choice."""
    low, high, step = settings.SETTINGS[key].option.ui_range
    return where.slider(label, low, high, step=step, **kwargs, **choices.bind(key))


def start(title: str, icon: str = "") -> bool:
    """Title, defaults, sidebar summary and queued messages.  False if the data cannot be loaded.

    Every page runs inside the router (:func:`bnfk_ui.router.frame`) and its one error boundary."""
    router.frame()
    st.title(f"{icon} {title}".strip())
    try:
        state.init()
        params = share.sync()  # a link's view, once per session; then the address bar follows the view
    except BnfkError as exc:
        st.error(router.message(exc))
        if st.button("Go back to the default dataset"):
            for k in list(st.session_state.keys()):
                del st.session_state[k]
            st.rerun()
        return False
    messages.show_flash()
    sidebar_summary(params)
    note = tables.sample_note() if title in SAMPLED_PAGES else None
    if note:
        st.info(note, icon=":material/filter_alt:")
    return True


#: pages that work on rows (N × N views, per-row analyses): on a large file they use the seeded sample and say
#: so
SAMPLED_PAGES = ("Kernel", "Clustering", "Imputation", "Prototypes", "Segments lab")


def sidebar_summary(params: dict | None = None) -> None:
    d = tables.data()
    ss = st.session_state
    with st.sidebar:
        st.markdown("**Current state**")
        src = (
            "uploaded " + ss.upload[0]
            if ss.dataset == "upload" and ss.upload
            else choices.server_name()
            if ss.dataset == "path"
            else f"{choices.textbook_of(ss.dataset)} (rows sampled from the textbook network, seed "
            f"{int(ss.textbook_seed)})"
            if choices.textbook_of(ss.dataset)
            else ss.dataset
        )
        n_all = tables.full_data().n_rows
        dg = structure.dag()
        st.caption(
            # one element, three lines
            f"Data: **{messages.plain(src)}** · {n_all:,} rows × {d.n_vars} variables"
            + (f" · class **{messages.plain(d.class_column)}**" if d.class_column else " · no class column")
            + (f" · rows used by the row views: a seeded sample of {d.n_rows:,}" if d.n_rows < n_all else "")
            + f"  \nStructure: **{messages.plain(structure.structure_label())}** · {dg.n_arcs} arcs"
            + (
                f"  \nNumbers kept: {messages.plain(', '.join(nums))} (a hybrid network; the discrete "
                "pages bin them)"
                if (nums := hybrid.numeric_columns())
                else f"  \nParameters: {ESTIMATORS[ss.param_method].label.split(' (')[0].lower()} · first "
                f"network by the recipe {structure.recipe().describe()}"
            )
        )
        share_panel(params)
        box = st.expander("Settings", icon=":material/settings:", key="sidebar_settings", on_change="rerun")
        if box.open:  # built when opened (a rerun, as the tabs and figure menus do), not on every run
            lo, hi = choices.MEMORY_GIB_RANGE
            box.number_input(
                "Memory limit (GiB)",
                min_value=lo,
                max_value=hi,
                step=0.5,
                format="%.2f",
                help="The largest N × N work (Gram matrices and their work space) any page may "
                "start; a larger one is refused with a hint to sample fewer rows.",
                **choices.bind("memory_gib", shown=lambda v: min(max(float(v), lo), hi)),
            )


def share_panel(params: dict | None = None) -> None:
    """The sidebar's "Share" box: the link of this view (copy button; ``params``: its query parameters when
    this run already made them), the session file, opening one.  Its contents are built when it is opened (the
    expander reruns the page then), not on every run."""
    box = st.expander("Share this view", icon=":material/share:", key="sidebar_share", on_change="rerun")
    if not box.open:
        return
    with box:
        st.caption("Copy link — opens this page with the same data, structure and settings:")
        st.code(share.link(params), language=None, wrap_lines=True)
        if st.session_state.dataset == "path":
            st.caption(
                "A session file holds the data itself; a file on the server is shared by the link above."
            )
        else:
            download(
                "Session (JSON)",
                share.session_maker(),  # its values read in this run: the file is made on another thread
                f"{dataset_name()}_session.json",
                "application/json",
                key="dl_session",
            )
        up = st.file_uploader("Open a session file", type=["json"], key="w_session_file")
        if up is not None and st.session_state.get("_session_opened") != up.file_id:
            st.session_state._session_opened = up.file_id
            try:
                share.open_session(up.name, up.getvalue())
            except BnfkError as exc:
                st.error(router.message(exc))
            else:
                messages.flash("success", f"Opened {echo(up.name, 60)}: its data, structure and settings.")
                st.rerun()


@contextlib.contextmanager
def working(text: str):
    """``st.spinner(text)`` around the block, started only when a cached core call in it has a result to
    compute (:func:`bnfk_ui.state.shared.on_miss`): a run that finds every result made sends no spinner and
    starts no timer thread (Streamlit's spinner starts one each time)."""
    from .state.shared import _ON_MISS

    stack, started = contextlib.ExitStack(), []

    def start():
        if not started:
            started.append(True)
            stack.enter_context(st.spinner(text))

    token = shared.on_miss(start)
    try:
        yield
    finally:
        _ON_MISS.reset(token)
        stack.close()


class LazyProgress:
    """A progress bar over steps of cached core calls, drawn only once one of them has a result to compute (a
    front's miss, :func:`bnfk_ui.state.shared.on_miss`), at the step it is on: a run that finds every result
    made sends no bar.  Use as ``with LazyProgress() as bar: bar.step(0.3, "…"); …``."""

    def __init__(self):
        self.bar, self.at, self._token = None, (0.0, ""), None

    def step(self, fraction: float, text: str) -> None:
        self.at = (fraction, text)
        if self.bar is not None:
            self.bar.progress(fraction, text=text)

    def _start(self) -> None:
        if self.bar is None:
            self.bar = st.progress(self.at[0], text=self.at[1])

    def __enter__(self) -> LazyProgress:
        self._token = shared.on_miss(self._start)
        return self

    def __exit__(self, *exc) -> None:
        from .state.shared import _ON_MISS

        _ON_MISS.reset(self._token)
        if self.bar is not None:
            self.bar.progress(1.0, text="Done")
            self.bar.empty()


@contextlib.contextmanager
def shown_errors(prefix: str = ""):
    """Turn a BnfkError raised inside the block into an ``st.error`` sentence (the page goes on)."""
    try:
        yield
    except BnfkError as exc:
        st.error(f"{messages.plain(prefix)}{router.message(exc)}")


def complete_rows_notice(what: str = "Log scores", caption: bool = True) -> bool:
    """Say on how many rows ``what`` (the scores, structure learning) are computed: a caption while most rows
    are complete (none if not ``caption``), a prominent warning when most rows have a missing cell.  True when
    the warning was shown."""
    n_ok, n_all = tables.complete_rows(), tables.full_data().n_rows
    if 2 * n_ok >= n_all:
        if caption:
            st.caption(f"{messages.plain(what)} on the {n_ok:,} complete rows; higher is better.")
        return False
    st.warning(
        f"Most rows are incomplete: {messages.plain(what.lower())} and structure learning use only the "
        f"{n_ok:,} of the {n_all:,} rows without a missing cell ({n_ok / max(n_all, 1):.0%}). "
        "The Fisher kernel, imputation and prototypes use every row (missing cells are marginalised).",
        icon=":material/warning:",
    )
    return True


def delta(value: float, fmt: str, suffix: str = "", color: str = "normal") -> dict:
    """``st.metric`` keyword arguments for a change ``value`` shown with ``fmt`` (a float format such as
    "+.3f"):
    a change that rounds to zero is neutral -- grey, no arrow -- instead of a green "↑ +0.000"."""
    text = f"{value:{fmt}}"
    if float(text) == 0:
        return {"delta": text.lstrip("+-") + suffix, "delta_color": "off", "delta_arrow": "off"}
    return {"delta": text + suffix, "delta_color": color}


def built_when_open(tab, build, kept: tuple[str, ...] = ()) -> None:
    """Build a tab's contents only while it is open (``st.tabs(..., on_change="rerun")``: ``tab.open`` is
    False for the others), so a page sends and draws one tab, not all.  A closed tab's widgets are not drawn,
    and Streamlit drops an undrawn widget's value: those whose keys start with ``kept`` are stored again, so
    they are as the user left them when the tab opens again."""
    if tab.open is not False:
        with tab:
            build()
        return
    ss = st.session_state
    for k in [k for k in ss if str(k).startswith(kept)] if kept else ():
        ss[k] = ss[k]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "bnfk"


def download(label: str, data, file_name: str, mime: str, key: str | None = None) -> None:
    st.download_button(
        label,
        data=data,
        file_name=file_name,
        mime=mime,
        key=key or f"dl_{file_name}",
        on_click="ignore",
        icon=":material/download:",
    )


def npz_bytes(**arrays) -> bytes:
    """``arrays`` as one compressed NumPy ``.npz`` file's bytes (a download's content)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def stored_run(
    label: str, key: str, store: str, cache_key, fn, *, icon: str | None = None, disabled: bool = False
):
    """A button that runs ``fn(progress)`` under a progress bar and keeps ``(cache_key, result)`` in
    ``st.session_state[store]``; returns the stored result while ``cache_key`` is unchanged, else None."""
    ss = st.session_state
    if st.button(label, key=key, icon=icon, disabled=disabled):
        bar = st.progress(0.0, text="Starting…")
        with jobs.heavy(label.lower()):  # a bounded slot; the progress callback stops it if the session ends
            ss[store] = (cache_key, fn(jobs.progress(bar)))
        bar.progress(1.0, text="Done")
    saved = ss.get(store)
    return saved[1] if saved and saved[0] == cache_key else None


def asked(label: str, key: str, scope: str, container=st, *, icon: str = ":material/play_arrow:") -> bool:
    """A button that starts a heavy analysis: False until it is clicked; after that True for the same
    ``scope`` (e.g. the data's fingerprint) for the rest of the session, so a changed setting re-runs the
    analysis (its steps are cached) without another click, while opening the page never starts it."""
    ss = st.session_state
    if container.button(label, key=key, type="primary", icon=icon):
        ss[f"_asked_{key}"] = scope
    return ss.get(f"_asked_{key}") == scope


MAX_SEED = settings.MAX_SEED


def seed_input(label: str, key: str, container=st, help: str | None = None) -> int:
    """A number input for the seed stored in ``st.session_state[key]``, bounded to [0, 2**32 - 1]."""
    container.number_input(
        label,
        min_value=0,
        max_value=MAX_SEED,
        step=1,
        help=help,
        **choices.bind(key, shown=lambda v: int(min(max(int(v), 0), MAX_SEED))),
    )
    return int(st.session_state[key])


def download_figure(fig, name: str, label: str = "Figure (HTML)") -> None:
    """One "Figure" menu per figure: interactive HTML (plotly.js embedded, works offline) and PNG / SVG at
    slide size (bnfk_core.views.export; computed only when clicked).  Without the exporter or a browser the
    PNG/SVG buttons are disabled and a caption says what is missing."""
    pop = st.popover(
        label.replace(" (HTML)", ""), icon=":material/download:", key=f"pop_fig_{name}", on_change="rerun"
    )
    if (
        pop.open is False
    ):  # closed: its buttons are made when it opens (a rerun), not on every run of the page
        return
    with pop:
        download(
            "HTML (interactive, offline)",
            lambda: export.figure_html(fig),
            f"{slug(name)}.html",
            "text/html",
            key=f"dl_fig_{name}",
        )
        figure_images(fig, name)


def figure_images(fig, name: str) -> None:
    """PNG and SVG download buttons of ``fig`` at presentation size, or disabled ones with the reason."""
    problem = export.image_export_problem()
    w, h, s = export.SLIDE_WIDTH, export.SLIDE_HEIGHT, export.SLIDE_SCALE
    for fmt, label in (("png", f"PNG ({w * s}×{h * s})"), ("svg", f"SVG ({w}×{h})")):
        data = b"" if problem else (lambda fmt=fmt: export.figure_image(fig, fmt))
        st.download_button(
            label,
            data=data,
            file_name=f"{slug(name)}.{fmt}",
            mime=export.IMAGE_FORMATS[fmt],
            key=f"dl_fig_{name}_{fmt}",
            on_click="ignore",
            icon=":material/image:",
            disabled=bool(problem),
            help=problem,
        )
    if problem:
        st.caption(problem)


def npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def dataset_name() -> str:
    ss = st.session_state
    if ss.dataset == "upload" and ss.upload:
        return slug(ss.upload[0].rsplit(".", 1)[0])
    if ss.dataset == "path" and ss.server_path:
        return slug(os.path.basename(ss.server_path).rsplit(".", 1)[0])
    return slug(ss.dataset)


def literal(text: str) -> str:
    """``text`` with every Markdown character escaped, for a caption that shows it literally (names from the
    data stay text): :func:`bnfk_ui.state.messages.plain`."""
    return messages.plain(text)


def plain_caption(text: str, container=st) -> None:
    """``text`` as a caption shown literally (every Markdown character escaped: names from the data stay
    text)."""
    container.caption(literal(text))


def captions(*lines: str, container=st) -> None:
    """Consecutive captions as one element, a paragraph each (empty ones left out): the same text for the
    reader, one message instead of several on every run."""
    shown = [ln for ln in lines if ln]
    if shown:
        container.caption("\n\n".join(shown))
