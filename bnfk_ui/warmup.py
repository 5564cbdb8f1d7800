"""Load once per server process, in a background thread, what a page's first visit would otherwise wait for:
the Fisher kernel's compiled pair sums (serial and parallel, about 0.3 s from numba's on-disk cache, paid by
the first Gram matrix: the Structure page's live kernel, the Kernel page), the correlation clustering's
compiled numba functions (serial and parallel: about 0.5 s, paid on the Clustering page's first visit), the
PNG/SVG export check (imports kaleido) and Streamlit's emoji pattern (compiled on import, 0.2-0.4 s, by the
first alert or label with a non-ASCII character, e.g. the Segments lab's first visit).

The compiled kernels are the ``fisher`` and ``correlation`` groups of :mod:`bnfk_core.analyses.warmup` (which
``python -m bnfk_core warmup`` runs in full after installing, so that this thread loads rather than compiles).
Started by the router on the app's first script run (the home page, before any data are loaded); it computes
nothing a page shows, and a failure here only means the page pays the cost itself."""

from __future__ import annotations

import threading

from . import streamlit_adapter

__all__ = ["start"]

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start() -> threading.Thread:
    """Start the warm-up thread (once per process); the thread."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_run, name="bnfk-warmup", daemon=True)
            _thread.start()
    return _thread


def _run() -> None:
    try:
        from bnfk_core.analyses.warmup import warm_up
        from bnfk_core.views.export import image_export_problem

        warm_up(("fisher", "correlation"))  # the Fisher pair sums, correlation clustering serial and parallel
        image_export_problem()
        streamlit_adapter.warm_up()  # compiles Streamlit's emoji pattern once
    except Exception:  # noqa: BLE001 - a warm-up only: the page loads what it needs itself
        pass
