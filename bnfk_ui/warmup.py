"""Load once per server process, in a background thread, what a page's first visit would otherwise wait for:
the correlation clustering's compiled numba functions (read from numba's on-disk cache, serial and parallel:
about 0.5 s, paid on the Clustering page's first visit) and the PNG/SVG export check (imports kaleido).

Started by the router on the app's first script run (the home page, before any data are loaded); it computes
nothing a page shows, and a failure here only means the page pays the cost itself."""
from __future__ import annotations

import threading

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

        from bnfk_core.analyses.cluster_correlation import PARALLEL_RESTART_WORK, correlation_clustering
        from bnfk_core.views.export import image_export_problem

        rng = np.random.default_rng(0)
        for n, restarts in ((12, 2), (100, int(PARALLEL_RESTART_WORK // 100 ** 2) + 1)):   # serial, then parallel
            A = rng.normal(size=(n, 3))
            correlation_clustering(A @ A.T, 2, restarts=restarts, seed=0, max_sweeps=1)
        image_export_problem()
    except Exception:  # noqa: BLE001 - a warm-up only: the page loads what it needs itself
        pass
