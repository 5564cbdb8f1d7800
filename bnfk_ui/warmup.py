"""Load once per server process, in a background thread, what a page's first visit would otherwise wait for:
the Fisher kernel's compiled pair sums (serial and parallel, about 0.3 s from numba's on-disk cache, paid by
the first Gram matrix: the Structure page's live kernel, the Kernel page), the correlation clustering's
compiled numba functions (serial and parallel: about 0.5 s, paid on the Clustering page's first visit), the
PNG/SVG export check (imports kaleido) and Streamlit's emoji pattern (compiled on import, 0.2-0.4 s, by the
first alert or label with a non-ASCII character, e.g. the Segments lab's first visit).

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
        import numpy as np

        from bnfk_core.analyses.cluster.correlation import PARALLEL_RESTART_WORK, correlation_clustering
        from bnfk_core.views.export import image_export_problem

        rng = np.random.default_rng(0)
        _fisher_kernel(rng)
        for n, restarts in (
            (12, 2),
            (100, int(PARALLEL_RESTART_WORK // 100**2) + 1),
        ):  # serial, then parallel
            A = rng.normal(size=(n, 3))
            correlation_clustering(A @ A.T, 2, restarts=restarts, seed=0, max_sweeps=1)
        image_export_problem()
        streamlit_adapter.warm_up()  # compiles Streamlit's emoji pattern once
    except Exception:  # noqa: BLE001 - a warm-up only: the page loads what it needs itself
        pass


def _fisher_kernel(rng) -> None:
    """A Gram matrix of a three-variable chain on 40 rows with blank cells, and both compiled pair sums."""
    from bnfk_core.data.table import from_codes
    from bnfk_core.kernels import fisher as kernels
    from bnfk_core.network.dag import DAG
    from bnfk_core.network.model import fit

    codes = rng.integers(0, 3, size=(40, 3))
    codes[::7, 1] = -1
    data = from_codes(codes, ("a", "b", "c"), [("0", "1", "2")] * 3)
    model = fit(DAG(("a", "b", "c"), [("a", "b"), ("b", "c")]), data)
    kernels.gram(model, data.codes)
    kernels.warm_up()  # both compiled pair sums
