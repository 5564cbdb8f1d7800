"""Writing result files so that a failed write never leaves a partial file behind.

Every file the package or the CLI writes goes through :func:`atomic_path`: the content is
written to a temporary file beside the target (same folder, same extension, so writers that
pick a format by extension behave the same) and renamed onto the target only when the write
succeeded (``os.replace`` is atomic on POSIX and Windows).  On any failure the temporary file
is removed and the target keeps its old content (or stays absent); an ``OSError`` names the
target, not the temporary file.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Iterator

__all__ = ["atomic_path", "same_file"]


@contextlib.contextmanager
def atomic_path(path) -> Iterator[str]:
    """Yield a temporary path to write to; on success it replaces ``path``, on failure it is removed."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path)) or "."
    base = os.path.basename(path)
    ext = os.path.splitext(base)[1]
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=f".part{ext}", dir=folder)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, path) from None
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise OSError(exc.errno, exc.strerror or str(exc), path) from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(tmp)


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name the same existing file (links and spellings resolved)."""
    try:
        return os.path.samefile(os.fspath(a), os.fspath(b))
    except (OSError, TypeError, ValueError):
        return False
