"""Compile every numba kernel once, so that numba's on-disk cache holds them before a user's first call.

After ``pip install`` the cache is empty: the first latent class fit of a process would compile its EM (many
seconds), the first Gram matrix its pair sums, and so on.  :func:`warm_up` runs each group of kernels on a
small table (the same argument types as a real call: the cache is keyed by signature), so that later
processes load them from the cache instead.  ``python -m bnfk_core warmup`` runs it; so do ``run-app.sh`` and
``run-tests.sh`` after installing, and the app's background warm-up (the groups its first pages use).

Where the cache lives is numba's choice (:mod:`bnfk_core.compiled`); the result names it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable

import numpy as np

__all__ = ["GROUPS", "warm_up", "compiled_functions"]


def _table(rows: int = 60):
    """A four-variable table with blank cells (codes in three states, a dependent chain)."""
    from ..data.table import from_codes

    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, rows)
    b = (a + (rng.random(rows) < 0.3)) % 3
    c = (b + (rng.random(rows) < 0.3)) % 3
    d = rng.integers(0, 2, rows)
    codes = np.stack([a, b, c, d], axis=1)
    codes[::7, 1] = -1
    codes[3::11, 2] = -1
    names = ("a", "b", "c", "d")
    return from_codes(codes, names, [("0", "1", "2")] * 3 + [("0", "1")])


def _network(data):
    """The chain a - b - c - d fitted to ``data`` (no search: the kernels' warm-ups need only a network)."""
    from ..network.dag import DAG
    from ..network.model import fit

    return fit(DAG(("a", "b", "c", "d"), [("a", "b"), ("b", "c"), ("c", "d")]), data)


def _learn() -> None:
    """Counting, scores and structural EM over blank cells (the default recipe), and the exact log-likelihood
    of incomplete rows."""
    from ..data import compiled_counts
    from ..learning.estep import log_likelihood_total
    from ..learning.recipe import learn_recipe

    data = _table()
    log_likelihood_total(learn_recipe(data).model, data.codes)
    compiled_counts.warm_up()  # the compiled counting of batches over many rows (the table above is numpy's)


def _lca() -> None:
    """The compiled EM of latent class models (the engine of tables beyond the numpy engine's size)."""
    from ..lca import fit_lca

    fit_lca(_table(), 3, starts=2, seed=0, engine="numba")


def _fisher() -> None:
    """The Fisher kernel's Gram matrix and both compiled pair sums (parallel and one-thread)."""
    from ..kernels import fisher

    data = _table()
    fisher.gram(_network(data), data)
    fisher.warm_up()


def _similarity() -> None:
    """The similarity measures' compiled Gram pass."""
    from ..kernels.fisher import gram

    data = _table()
    gram(None, data, kind="overlap")


def _correlation() -> None:
    """Correlation clustering's local search, serial and parallel."""
    from .cluster.correlation import PARALLEL_RESTART_WORK, correlation_clustering

    rng = np.random.default_rng(0)
    for n, restarts in ((12, 2), (100, int(PARALLEL_RESTART_WORK // 100**2) + 1)):  # serial, then parallel
        A = rng.normal(size=(n, 3))
        correlation_clustering(A @ A.T, 2, restarts=restarts, seed=0, max_sweeps=1)


def _prototypes() -> None:
    """The greedy MMD and chi-square prototype searches."""
    from .prototypes import select_prototypes

    data = _table()
    model = _network(data)
    for criterion in ("mmd", "chi2"):
        select_prototypes(model, data, 3, criterion, n_init=2, seed=0, max_passes=2)


def _kmeans() -> None:
    """Kernel k-means on the explicit Fisher features (its compiled dense Lloyd pass)."""
    from ..kernels.features import features
    from .cluster.features import kernel_kmeans_features

    data = _table()
    kernel_kmeans_features(features(_network(data), data), 2, seed=0, n_init=1, max_iter=2, dense=True)


def _files() -> None:
    """The passes over a file read in chunks: mean embeddings and MMD, prototypes of a big file."""
    import tempfile
    from pathlib import Path

    from .prototypes.rowwise import chunked_prototypes
    from .rowwise import stream_mmd

    data = _table()
    model = _network(data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "table.csv")
        rows = ["a,b,c,d"] + [
            ",".join("" if x < 0 else str(x) for x in row)
            for row in data.codes  # a blank cell: missing
        ]
        path.write_text("\n".join(rows) + "\n")
        stream_mmd(model, path, path, chunksize=25)
        chunked_prototypes(model, path, 3, chunksize=25, n_init=2, seed=0, max_passes=2)


#: the groups of kernels :func:`warm_up` compiles, by name, each with what runs them
GROUPS: dict[str, Callable[[], None]] = {
    "learn": _learn,
    "lca": _lca,
    "fisher": _fisher,
    "similarity": _similarity,
    "correlation": _correlation,
    "prototypes": _prototypes,
    "kmeans": _kmeans,
    "files": _files,
}


def compiled_functions() -> list:
    """Every numba dispatcher defined at the top level of a module of bnfk_core imported in this process.

    The modules' namespaces are read, not the garbage collector's list of objects: ``gc.get_objects()`` on
    the app's warm-up thread handed out a tuple another thread was still building (CPython then raised
    ``SystemError: bad argument to internal function`` in the page's own code)."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("bnfk_core.") or module is None:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, CPUDispatcher) and value.py_func.__module__.startswith("bnfk_core."):
                found[id(value)] = value
    return sorted(found.values(), key=lambda d: (d.py_func.__module__, d.py_func.__qualname__))


def warm_up(groups: Iterable[str] | None = None) -> dict:
    """Run the named groups of :data:`GROUPS` (default: all) once; what was compiled and what loaded.

    Parameters
    ----------
    groups : iterable of str, optional
        Names of :data:`GROUPS`.

    Returns
    -------
    dict
        ``seconds`` per group, ``compiled`` and ``loaded`` (dispatcher signatures compiled in this process /
        loaded from the cache), ``cache_dirs`` (where numba keeps them).

    Raises
    ------
    ValueError
        When a name is not one of :data:`GROUPS`.
    """
    names = list(GROUPS) if groups is None else list(groups)
    unknown = [n for n in names if n not in GROUPS]
    if unknown:
        raise ValueError(f"unknown warm-up group {unknown[0]!r}; choose among {', '.join(GROUPS)}.")
    seconds = {}
    for name in names:
        t0 = time.perf_counter()
        GROUPS[name]()
        seconds[name] = round(time.perf_counter() - t0, 3)
    compiled = loaded = 0
    dirs = set()
    for d in compiled_functions():
        if not d.signatures:
            continue
        stats = d.stats
        compiled += sum(stats.cache_misses.values())
        loaded += sum(stats.cache_hits.values())
        dirs.add(str(stats.cache_path))
    return {"seconds": seconds, "compiled": compiled, "loaded": loaded, "cache_dirs": sorted(dirs)}
