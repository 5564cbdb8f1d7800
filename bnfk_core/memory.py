"""The memory limit that quadratic work (Gram matrices, their workspaces) obeys, set per run.

A light module (no numerical library) so that the CLI can set ``--max-memory`` before it knows which
analysis runs; :mod:`bnfk_core.kernels` re-exports these names.
"""
from __future__ import annotations

import contextlib
import contextvars
import math

from .errors import KernelError

__all__ = ["DEFAULT_MAX_BYTES", "memory_limit", "memory_limit_set"]

DEFAULT_MAX_BYTES = 4 * 2**30

_MEMORY_LIMIT: contextvars.ContextVar = contextvars.ContextVar("bnfk_memory_limit", default=DEFAULT_MAX_BYTES)


def memory_limit() -> float | None:
    """The memory limit (bytes) that quadratic work called with the default ``max_bytes`` obeys."""
    return _MEMORY_LIMIT.get()


@contextlib.contextmanager
def memory_limit_set(max_bytes: float | None):
    """Within the block, calls that leave ``max_bytes`` at its default obey ``max_bytes`` instead
    (None: no limit).  The CLI's ``--max-memory`` and the app's memory setting use this."""
    try:
        ok = max_bytes is None or (math.isfinite(float(max_bytes)) and float(max_bytes) > 0)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise KernelError(f"The memory limit must be a positive number of bytes, got {max_bytes}.")
    token = _MEMORY_LIMIT.set(max_bytes)
    try:
        yield
    finally:
        _MEMORY_LIMIT.reset(token)
