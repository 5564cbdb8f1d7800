"""The memory budget: the limit every quadratic or wide step obeys (the CLI's ``--max-memory``, the app's
memory setting) and the estimates checked against it before anything is allocated.

One value per run, set with :func:`memory_limit_set`; calls that leave ``max_bytes`` at
:data:`DEFAULT_MAX_BYTES`
obey the value set (:func:`resolve_limit`).  :func:`workspace_bytes` estimates the whole work space of each
quadratic path (Gram matrix, correlation / spectral clustering, silhouette, classification),
:func:`guard_workspace`
refuses before allocating, :func:`guard_tables` refuses too-wide per-variable tables.  A module of its own
(below the kernels and structure learning) so that every layer reads the limit without importing the kernels.
:func:`one_blas_thread` is the other limit: BLAS pinned to one thread around many small products."""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from ..errors import KernelError

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "DEFAULT_MAX_BYTES",
    "memory_limit",
    "memory_limit_set",
    "resolve_limit",
    "format_bytes",
    "estimate_gram_bytes",
    "WORKSPACE_MATRICES",
    "workspace_bytes",
    "max_rows",
    "fits",
    "guard_workspace",
    "guard_gram",
    "guard_tables",
    "one_blas_thread",
    "MEMORY_CEILING_ENV",
    "operator_ceiling_bytes",
    "DEFAULT_FEATURE_BYTES",
    "feature_limit",
    "feature_limit_set",
    "resolve_feature_limit",
]

DEFAULT_MAX_BYTES = 4 * 2**30
#: seconds to connect to a Dask scheduler, to get its first answer and to see a worker (:mod:`.dask_runner`)
DEFAULT_TIMEOUT = 30.0
#: the largest Dask timeout that can be set
MAX_TIMEOUT = 3600.0

_MEMORY_LIMIT: contextvars.ContextVar = contextvars.ContextVar("bnfk_memory_limit", default=DEFAULT_MAX_BYTES)

#: the environment variable in which the operator caps every memory limit, in GiB
MEMORY_CEILING_ENV = "BNFK_MAX_MEMORY_GIB"
#: ``max_bytes`` of the feature map left at its default: the run's limit (:func:`feature_limit_set`)
DEFAULT_FEATURE_BYTES = -1.0
#: the feature map's own budget for this run; None here means the operator's ceiling
_FEATURE_LIMIT: contextvars.ContextVar = contextvars.ContextVar("bnfk_feature_limit", default=None)


def memory_limit() -> float | None:
    """The memory limit (bytes) that quadratic work called with the default ``max_bytes`` obeys."""
    return _MEMORY_LIMIT.get()


@contextlib.contextmanager
def memory_limit_set(max_bytes: float | None):
    """Within the block, calls that leave ``max_bytes`` at its default obey ``max_bytes`` instead
    (None: no limit).  The CLI's ``--max-memory`` and the app's memory setting use this."""
    if max_bytes is not None and not (np.isfinite(max_bytes) and max_bytes > 0):
        raise KernelError(f"The memory limit must be a positive number of bytes, got {max_bytes}.")
    token = _MEMORY_LIMIT.set(max_bytes)
    try:
        yield
    finally:
        _MEMORY_LIMIT.reset(token)


def resolve_limit(max_bytes: float | None = DEFAULT_MAX_BYTES) -> float | None:
    """``max_bytes``, or the limit set for this run (:func:`memory_limit_set`) when it is the default."""
    return memory_limit() if max_bytes == DEFAULT_MAX_BYTES else max_bytes


def operator_ceiling_bytes(environ=None) -> float:
    """The most memory any one step may take on this host: ``BNFK_MAX_MEMORY_GIB`` GiB when the operator sets
    it (a positive number), and never more than three quarters of the host's physical memory.

    Parameters
    ----------
    environ : mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    float
        Bytes (``inf`` where the host's memory cannot be read and no ceiling is set).
    """
    import os

    env = os.environ if environ is None else environ
    ceiling = float("inf")
    try:
        ceiling = 0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows)
        pass
    text = str(env.get(MEMORY_CEILING_ENV, "") or "").strip()
    try:
        value = float(text) * 2**30 if text else float("nan")
    except ValueError:
        value = float("nan")
    if value == value and 0 < value < float("inf"):
        ceiling = min(ceiling, value)
    return ceiling


def feature_limit() -> float | None:
    """The memory (bytes) the Fisher feature map may take in this run: the value set with
    :func:`feature_limit_set`, else :data:`DEFAULT_MAX_BYTES` (4 GiB) or the operator's ceiling
    (:func:`operator_ceiling_bytes`) when that is lower.  Its own budget, apart from :func:`memory_limit` (the
    N x N work): the map holds N x sum_i r_i entries, linear in N."""
    value = _FEATURE_LIMIT.get()
    if value is None:
        return min(float(DEFAULT_MAX_BYTES), operator_ceiling_bytes())
    return None if value == float("inf") else value


@contextlib.contextmanager
def feature_limit_set(max_bytes: float | None):
    """Within the block the feature map obeys ``max_bytes`` (None: the default of :func:`feature_limit`;
    ``inf``: no limit).  The CLI's ``--max-feature-memory`` uses this."""
    if max_bytes is not None and not (
        max_bytes == float("inf") or (np.isfinite(max_bytes) and max_bytes > 0)
    ):
        raise KernelError(
            f"The feature-map memory limit must be a positive number of bytes, got {max_bytes}."
        )
    token = _FEATURE_LIMIT.set(max_bytes)
    try:
        yield
    finally:
        _FEATURE_LIMIT.reset(token)


def resolve_feature_limit(max_bytes: float | None = DEFAULT_FEATURE_BYTES) -> float | None:
    """``max_bytes``, or the feature map's limit for this run (:func:`feature_limit`) when it is the
    default."""
    return feature_limit() if max_bytes == DEFAULT_FEATURE_BYTES else max_bytes


def format_bytes(nbytes: float) -> str:
    """Bytes as GiB (one decimal), or MiB below a tenth of a GiB."""
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 0.1 * 2**30 else f"{nbytes / 2**20:.1f} MiB"


def estimate_gram_bytes(n_rows: int, n_cols: int) -> int:
    """Bytes of an (n_rows, n_cols) float64 Gram matrix."""
    return int(n_rows) * int(n_cols) * 8


#: The peak number of N x M float64 matrices alive at once on each quadratic path, the Gram matrix itself
#: included, measured with tracemalloc at N = 1,200 and 3,000 (tests/test_cluster_features.py checks that
#: the measured peaks stay within these estimates):
#:
#: * ``gram``: the matrix (1.0; ``normalize`` rescales it in place a block of rows at a time); the Fisher
#:   kernel's dense features and missing-row products are added by the caller as ``extra``;
#: * ``correlation``: the Gram, its symmetrised copy (dropped once shifted), the shifted matrix, a temporary
#:   of the shift and |shifted| (eq. 5.2's cost needs sum |X|): 4.0 at the peak;
#: * ``silhouette``: the Gram, the squared kernel distances and their roots: 3.0;
#: * ``spectral``: the Gram, the symmetrised affinity, scikit-learn's Laplacian and the eigensolver's
#:   shift-invert factorisation: 5.0;
#: * ``ward``: the Gram, the condensed distances (0.5) and SciPy's working copy of them (0.5) -- peak resident
#: memory measured 1.13 N^2 beyond the Gram at N = 5,000 -- and then the silhouette of its clusters (3.0):
#: 3.0;
#: * ``classification``: per split 3 train x train, 3 test x train and 1 test x test matrices (the fitted
#:   Grams, kNN's distances, the test Gram whose diagonal is used) -- measured 2.1 N^2 at test size 0.2,
#:   estimated 2.4 N^2.
#:
WORKSPACE_MATRICES = {"gram": 1.0, "correlation": 4.0, "spectral": 5.0, "silhouette": 3.0, "ward": 3.0}
_CLASSIFICATION = (3.0, 3.0, 1.0)  # train x train, test x train, test x test matrices at the peak
_PATH_WORDS = {
    "correlation": "correlation clustering",
    "spectral": "spectral clustering",
    "ward": "Ward clustering",
    "silhouette": "the silhouette",
    "classification": "kernel classification",
}


def workspace_bytes(path: str, n: int, m: int | None = None, *, test_size: float = 0.2) -> int:
    """Bytes of the whole work space of the quadratic ``path`` on ``n`` rows (``m``: the second side of
    a rectangular Gram; ``test_size``: the test fraction of ``classification``).  One estimate for every
    quadratic path, the Gram matrix included; see :data:`WORKSPACE_MATRICES`."""
    n = int(n)
    m = n if m is None else int(m)
    if path == "classification":
        nte = int(np.ceil(float(test_size) * n))
        ntr = n - nte
        a, b, c = _CLASSIFICATION
        cells = a * ntr * ntr + b * nte * ntr + c * nte * nte
    elif path in WORKSPACE_MATRICES:
        cells = WORKSPACE_MATRICES[path] * n * m
    else:
        raise KernelError(f"Unknown quadratic path '{path}'.")
    return int(np.ceil(cells)) * 8


def max_rows(path: str, max_bytes: float | None = DEFAULT_MAX_BYTES, *, test_size: float = 0.2) -> int | None:
    """The most rows whose work space on ``path`` fits the limit (None: no limit)."""
    limit = resolve_limit(max_bytes)
    return None if limit is None else _max_rows(path, limit, test_size=test_size)


def _max_rows(path: str, budget: float, extra_per_row: float = 0.0, test_size: float = 0.2) -> int:
    """The most rows whose work space on ``path`` (plus ``extra_per_row`` bytes a row) fits ``budget``."""
    lo, hi = 0, 1
    while workspace_bytes(path, hi, test_size=test_size) + extra_per_row * hi <= budget:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if workspace_bytes(path, mid, test_size=test_size) + extra_per_row * mid <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def fits(
    path: str,
    n: int,
    m: int | None = None,
    *,
    extra: int = 0,
    test_size: float = 0.2,
    max_bytes: float | None = DEFAULT_MAX_BYTES,
) -> bool:
    """Whether :func:`guard_workspace` would let ``path`` run on ``n`` rows."""
    limit = resolve_limit(max_bytes)
    return limit is None or workspace_bytes(path, n, m, test_size=test_size) + extra <= limit


def guard_workspace(
    path: str,
    n: int,
    m: int | None = None,
    *,
    extra: int = 0,
    test_size: float = 0.2,
    max_bytes: float | None = DEFAULT_MAX_BYTES,
) -> int:
    """Refuse (KernelError, one line ending in a sampling suggestion) when the whole work space of the
    quadratic ``path`` on ``n`` rows -- :func:`workspace_bytes` plus ``extra`` bytes -- exceeds the limit.

    Every quadratic path calls this before it allocates.  ``max_bytes`` left at its default means the
    limit set for this run (the CLI's ``--max-memory``, the app's memory setting).  Returns the bytes."""
    limit = resolve_limit(max_bytes)
    m_ = int(n) if m is None else int(m)
    need = workspace_bytes(path, n, m_, test_size=test_size) + int(extra)
    if limit is None or need <= limit:
        return need
    if path == "gram":
        side = int(np.sqrt(max(limit - extra, 8) / 8))
        raise KernelError(
            f"A {int(n):,} x {m_:,} Gram matrix needs {format_bytes(need)}, over the "
            f"{format_bytes(limit)} limit; sample at most about {side:,} rows "
            "(or raise the memory limit)."
        )
    side = _max_rows(path, limit - extra, test_size=test_size)
    raise KernelError(
        f"A {int(n):,} x {m_:,} Gram matrix with the work space of {_PATH_WORDS[path]} needs "
        f"{format_bytes(need)}, over the {format_bytes(limit)} limit; sample at most about "
        f"{side:,} rows (or raise the memory limit)."
    )


def guard_gram(n: int, m: int, extra: int, max_bytes: float | None):
    """The Gram matrix's own guard (:func:`guard_workspace` on the ``gram`` path)."""
    guard_workspace("gram", n, m, extra=extra, max_bytes=max_bytes)


def guard_tables(n_vars: int, configs: int, states: int, max_bytes: float | None = DEFAULT_MAX_BYTES) -> None:
    """Refuse padded per-variable tables of ``n_vars`` x ``configs`` parent configurations x ``states`` states
    (float64) beyond the memory limit, before they are allocated: the width guard (columns x levels) of the
    kernels' tables -- a column with 100,000 levels as a parent would otherwise ask for tens of GB."""
    need = 8 * int(n_vars) * int(configs) * (int(states) + 1)
    limit = resolve_limit(max_bytes)
    if limit is not None and need > limit:
        raise KernelError(
            f"The kernel's tables need {format_bytes(need)} ({int(n_vars):,} variables x up to "
            f"{int(configs):,} parent configurations x up to {int(states):,} states), more than the "
            f"memory limit of {format_bytes(limit)}; a column with that many levels (an identifier?) "
            "is best dropped, or raise the memory limit."
        )


_THREADS: list = []


def one_blas_thread():
    """A context pinning BLAS to one thread, for work made of many small products (the KGV score's blocks, the
    metagraph kernel's solves): on a shared two-core machine several BLAS threads are much slower (see
    ``benchmarks/bench_kgv.py``).  The thread-pool controller is found once (its library scan costs ~30
    ms)."""
    if not _THREADS:
        from threadpoolctl import ThreadpoolController

        _THREADS.append(ThreadpoolController())
    return _THREADS[0].limit(limits=1, user_api="blas")
