"""The app's router, its frame: every page of ``pages/`` registered with ``st.navigation`` (one place, no
``exec``).

``app.py`` calls :func:`run`: it sets the page config and the memory limit and runs the chosen page inside the
app's one error boundary; a page file is only its body.  Until ``st.navigation`` has run once in a process,
Streamlit treats an app beside a ``pages/`` folder as a folder of stand-alone scripts and runs a deep-linked
page (``/kernel``) without ``app.py``: :func:`frame`, the first call of every page (through
:func:`bnfk_ui.common.start`), then runs the router, which runs the page in its frame.  Tests open a page as a
visitor does: ``AppTest.from_file("app.py")`` and ``switch_page`` (tests/apptest_helpers.py).

The sidebar's menu is the app's own (:func:`menu`, page links by section); Streamlit's is switched off in
``.streamlit/config.toml`` (beside a ``pages/`` folder it lists the folder's file names until
``st.navigation`` runs: on a cold first load, for seconds).
"""

from __future__ import annotations

import contextvars
from pathlib import Path

# The library imports numba, networkx and the Fisher kernel only where they are used (a CLI command or a Dask
# client needs none of them).  The app's pages all use them, so the server imports them with its first script
# run, not in a visitor's first click, where the import would stall every session at once.
import networkx  # noqa: F401
import streamlit as st

import bnfk_core.data.compiled_counts  # noqa: F401
import bnfk_core.kernels.fisher  # noqa: F401
import bnfk_core.learning.completions  # noqa: F401
from bnfk_core.data.limits import memory_limit_set
from bnfk_core.errors import BnfkError

from . import session_reaper, streamlit_adapter, warmup
from .state import choices, messages

#: the browser tab's icon: a file served by the app itself (a ``:material/…:`` or emoji icon is fetched by the
#: visitor's browser from another address)
ICON = str(Path(__file__).with_name("icon.png"))

#: (section, file, title, icon, url path); the first page is the default
PAGES = (
    ("Explore", "pages/home.py", "Home", ":material/home:", "home"),
    ("Explore", "pages/data.py", "Data", ":material/table_chart:", "data"),
    ("Explore", "pages/structure.py", "Structure", ":material/account_tree:", "structure"),
    ("Explore", "pages/model.py", "Model", ":material/hub:", "model"),
    ("Explore", "pages/kernel.py", "Kernel", ":material/grid_on:", "kernel"),
    ("Explore", "pages/compare.py", "Compare structures", ":material/compare:", "compare"),
    ("Analyses", "pages/clustering.py", "Clustering", ":material/scatter_plot:", "clustering"),
    ("Analyses", "pages/latent_classes.py", "Latent classes", ":material/category:", "latent-classes"),
    ("Analyses", "pages/imputation.py", "Imputation", ":material/healing:", "imputation"),
    ("Analyses", "pages/prototypes.py", "Prototypes", ":material/stars:", "prototypes"),
    ("Analyses", "pages/segments.py", "Segments lab", ":material/science:", "segments"),
    ("Analyses", "pages/results.py", "Results", ":material/fact_check:", "results"),
    ("Analyses", "pages/kernel_zoo.py", "Kernel zoo", ":material/leaderboard:", "kernel-zoo"),
)


def navigation():
    """The ``st.navigation`` object of every page, grouped by section, and the sidebar's links to them.

    The menu is the app's own (:func:`menu`) and Streamlit's is hidden (``client.showSidebarNavigation =
    false`` in ``.streamlit/config.toml``): beside a ``pages/`` folder Streamlit first lists that folder's
    files as the menu ("app", "kernel zoo", ...) until the script reaches ``st.navigation``, which on a cold
    first load showed the raw file list for seconds."""
    sections = st.session_state.get("_nav_pages")
    if sections is None:  # made once per session (a page object resolves its file): its runs reuse them
        sections = {}
        for i, (section, path, title, icon, url) in enumerate(PAGES):
            sections.setdefault(section, []).append(
                st.Page(path, title=title, icon=icon, url_path=url, default=i == 0)
            )
        st.session_state._nav_pages = sections
    nav = st.navigation(sections, position="hidden")
    menu(sections)
    return nav


def menu(sections: dict) -> None:
    """The sidebar's menu: each section's name, then a link to each of its pages (the open page
    highlighted)."""
    with st.sidebar:
        for section, pages in sections.items():
            st.caption(section)
            for p in pages:
                st.page_link(p, width="stretch")


#: True while this script run's page runs inside :func:`run` (per session thread)
_IN_FRAME = contextvars.ContextVar("bnfk_in_frame", default=False)


def run() -> None:
    """Set the page config, route, and run the chosen page inside the error boundary."""
    st.set_page_config(page_title="bnfk — Fisher kernels of Bayesian networks", page_icon=ICON, layout="wide")
    nav = navigation()
    warmup.start()  # once per process: compiled clustering, export check (bnfk_ui.warmup)
    # once per process: closed sessions freed when their time to reconnect is over
    session_reaper.start_reaper()
    # once per process: a chart message's hash made once (bnfk_ui.streamlit_adapter)
    streamlit_adapter.install_message_hashes()
    token = _IN_FRAME.set(True)
    try:
        with memory_limit_set(choices.memory_limit_bytes()):  # the sidebar's memory setting, for this run
            nav.run()
    except BnfkError as exc:  # the page boundary: one sentence, never a traceback
        st.error(message(exc))
    except Exception as exc:  # noqa: BLE001 - last resort, still no traceback
        st.error(
            messages.plain(
                f"Something went wrong ({type(exc).__name__}: {exc}). Try another setting or reload "
                "the page.",
                MAX_MESSAGE,
            )
        )
    finally:
        _IN_FRAME.reset(token)


def frame() -> None:
    """Make sure the calling page runs inside :func:`run`: when Streamlit ran the page file on its own (a deep
    link before ``st.navigation`` ran in this process), run the router now -- in the same script run, so
    widget events are kept; it runs the page again in its frame -- and stop this outer run."""
    if _IN_FRAME.get():
        return
    run()
    st.stop()


#: the longest message the app shows (a core sentence echoing a huge user value is cut)
MAX_MESSAGE = messages.MAX_MESSAGE


def message(exc: BnfkError | str) -> str:
    """A core error as the app shows it: its sentence (at most MAX_MESSAGE characters), with the core's advice
    put in the app's terms, as plain text (:func:`bnfk_ui.state.messages.plain`: a sentence echoing a link's
    value shows it as typed, never as a link or an image)."""
    text = str(exc).replace("raise the memory limit", "raise the memory limit under Settings in the sidebar")
    return messages.plain(text, MAX_MESSAGE)
