"""The memory limit every quadratic or wide step obeys (the CLI's ``--max-memory``, the app's memory setting):
one value per run, set with :func:`memory_limit_set`; calls that leave ``max_bytes`` at
:data:`DEFAULT_MAX_BYTES` obey the value set (:func:`resolve_limit`).  Re-exported by :mod:`bnfk_core.kernels`;
a module of its own so that structure learning (:mod:`bnfk_core.learn`) reads it without importing the kernels."""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .errors import KernelError

__all__ = ["DEFAULT_MAX_BYTES", "memory_limit", "memory_limit_set", "resolve_limit", "format_bytes"]

DEFAULT_MAX_BYTES = 4 * 2**30

_MEMORY_LIMIT: contextvars.ContextVar = contextvars.ContextVar("bnfk_memory_limit", default=DEFAULT_MAX_BYTES)


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


def format_bytes(nbytes: float) -> str:
    """Bytes as GiB (one decimal), or MiB below a tenth of a GiB."""
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 0.1 * 2**30 else f"{nbytes / 2**20:.1f} MiB"
