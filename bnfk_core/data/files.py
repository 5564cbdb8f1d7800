"""Writing result files so that a failed write never leaves a partial file behind.

Every file the package or the CLI writes goes through :func:`atomic_path`: the content is
written to a temporary file beside the target (same folder, same extension, so writers that
pick a format by extension behave the same) and renamed onto the target only when the write
succeeded (``os.replace`` is atomic on POSIX and Windows).  On any failure the temporary file
is removed and the target keeps its old content (or stays absent); an ``OSError`` names the
target, not the temporary file.

Every file the package reads by path is checked by :func:`regular_file_problem` first (a ``stat``,
links followed, before any ``open``) and opened by :func:`open_regular`: only regular files are read,
so a FIFO, a device, a socket or a folder is refused at once without being opened (opening a FIFO for
reading blocks until a writer appears; reading ``/dev/zero`` never ends).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator

__all__ = [
    "atomic_path",
    "same_file",
    "regular_file_problem",
    "open_regular",
    "not_regular_message",
    "NOT_FOUND",
    "NOT_REGULAR",
    "NOT_READABLE",
]

#: what :func:`regular_file_problem` says is wrong with a path
NOT_FOUND, NOT_REGULAR, NOT_READABLE = "not found", "not a regular file", "not readable"


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


def regular_file_problem(path) -> str | None:
    """None when ``path`` names an existing regular file (links followed), else :data:`NOT_FOUND`,
    :data:`NOT_REGULAR` (a folder, FIFO, socket or device: never opened) or :data:`NOT_READABLE`
    (a name the system refuses: NUL byte, too long, no permission on a folder on the way)."""
    try:
        st = os.stat(os.fspath(path))
    except FileNotFoundError:
        return NOT_FOUND
    except (OSError, ValueError, TypeError):
        return NOT_READABLE
    return None if stat.S_ISREG(st.st_mode) else NOT_REGULAR


def not_regular_message(shown: str) -> str:
    """The one sentence for a path that is not a readable regular file (same for every kind of one)."""
    return (
        f"{shown} cannot be read as a regular file; bnfk reads only regular files "
        "(no folders, pipes or devices)."
    )


def open_regular(path, mode: str = "rb", **kw):
    """``open(path, mode)`` for reading a regular file only: opened without blocking (a FIFO swapped in
    after the check cannot hang the open) and checked again on the open descriptor; an ``OSError``
    (``EINVAL``, "not a regular file") otherwise.  Text modes take ``open``'s ``encoding``/``errors``."""
    if any(c in mode for c in "wax+"):
        raise ValueError("open_regular opens files for reading only")
    name = os.fspath(path)
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    )
    fd = os.open(name, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, name)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return open(fd, mode, **kw)
    except BaseException:
        os.close(fd)
        raise
