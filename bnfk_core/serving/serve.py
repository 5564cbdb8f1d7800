"""What a visitor of a served app may touch on the server's disk: the operator's folders, nothing else.

By default the app reads only uploads and the bundled samples; files on the server are *opt-in*.  The
operator names one folder to read data from and one folder to write completed files to, in the
environment (``BNFK_DATA_DIR``, ``BNFK_OUTPUT_DIR``) or in a TOML file (``BNFK_SERVE_CONFIG``, default
``bnfk_serve.toml`` in the working directory; section ``[serve]``, keys ``data_dir`` / ``output_dir``;
the environment wins).  :class:`ServePolicy` then checks every path a visitor gives:

* it is resolved (``~`` not expanded, symlinks and ``..`` resolved) and must stay inside the folder;
* only regular files are read: ``os.stat`` before anything opens it, so a FIFO, a device or a directory is
  refused without being opened;
* writes go only into the output folder, through a temporary file renamed into place (atomic), and never
  replace an existing file unless ``replace=True`` (the user ticked "replace" in the app);
* a refusal of a path outside the folder is one sentence that is the same whether the path exists or not
  (:data:`OUTSIDE`), so it tells nothing about the rest of the disk.

:class:`FileStore` is the capped folder of the server's own temporary files (big uploads, completed
files): count and byte caps with least-recently-used removal, and removal at a clean exit.  No Streamlit
here (tested without a running app).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import shutil
import tempfile
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..data.files import NOT_FOUND, NOT_READABLE, NOT_REGULAR, regular_file_problem, same_file
from ..errors import DataError

__all__ = [
    "DATA_ENV",
    "OUTPUT_ENV",
    "CONFIG_ENV",
    "CONFIG_FILE",
    "OUTSIDE_READ",
    "OUTSIDE_WRITE",
    "ServeError",
    "ServePolicy",
    "FileStore",
    "echo",
    "policy",
]

DATA_ENV = "BNFK_DATA_DIR"
OUTPUT_ENV = "BNFK_OUTPUT_DIR"
CONFIG_ENV = "BNFK_SERVE_CONFIG"
CONFIG_FILE = "bnfk_serve.toml"
ECHO_CHARS = 80
#: the one refusal of a path the visitor may not read (same for a missing file, a directory, /etc/shadow, ...)
OUTSIDE_READ = (
    "That path is not a file in the server's data folder; give the name of a CSV or Parquet file inside it."
)
#: the one refusal of a path the visitor may not write
OUTSIDE_WRITE = "That path is not in the server's output folder; give a file name inside it."


class ServeError(DataError):
    """A path a visitor gave is not one the operator allows (one sentence, nothing about the disk beyond)."""


def echo(value, limit: int = ECHO_CHARS) -> str:
    """A user value as a message may show it: printable, at most ``limit`` characters (``…`` when cut)."""
    text = "".join(c if c.isprintable() else "?" for c in str(value)[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _folder(value) -> Path | None:
    """An operator's folder: resolved, and an existing directory; else None (the feature stays off)."""
    if not value:
        return None
    p = Path(os.path.realpath(os.path.expanduser(str(value))))
    return p if p.is_dir() else None


def _inside(path: str, folder: Path) -> bool:
    try:
        return os.path.commonpath([path, str(folder)]) == str(folder)
    except ValueError:
        return False


@dataclass(frozen=True)
class ServePolicy:
    """The operator's folders (None: that side is off).  ``data_dir`` is read, ``output_dir`` written."""

    data_dir: Path | None = None
    output_dir: Path | None = None

    @classmethod
    def from_config(cls, environ=None, config_file: str | None = None) -> ServePolicy:
        """The folders from the environment, else from the TOML config file (section ``[serve]``)."""
        env = os.environ if environ is None else environ
        conf: dict = {}
        path = config_file or env.get(CONFIG_ENV) or CONFIG_FILE
        with contextlib.suppress(OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            if os.path.isfile(path):
                with open(path, "rb") as fh:
                    conf = tomllib.load(fh).get("serve", {}) or {}
        if not isinstance(conf, dict):
            conf = {}
        return cls(
            _folder(env.get(DATA_ENV) or conf.get("data_dir")),
            _folder(env.get(OUTPUT_ENV) or conf.get("output_dir")),
        )

    @property
    def reads(self) -> bool:
        """Whether visitors may read files from the server's data folder."""
        return self.data_dir is not None

    @property
    def writes(self) -> bool:
        """Whether visitors may write completed files to the server's output folder."""
        return self.output_dir is not None

    # ------------------------------------------------------------------ reading
    def data_file(self, text) -> str:
        """The resolved path of the regular file ``text`` names inside the data folder (a name relative to it,
        or an absolute path in it); ServeError otherwise -- never opening anything to find out."""
        if not self.reads:
            raise ServeError("This server does not read files from its disk; upload the file instead.")
        p = _typed(
            text,
            "No file name given: type the name of a CSV or Parquet file in the server's data folder.",
            OUTSIDE_READ,
        )
        real = os.path.realpath(os.path.join(self.data_dir, p))
        if not _inside(real, self.data_dir) or real == str(self.data_dir):
            raise ServeError(OUTSIDE_READ)
        problem = regular_file_problem(real)  # stat, never open: a FIFO or device is not touched
        if problem in (NOT_FOUND, NOT_READABLE):
            raise ServeError(f"There is no file '{echo(self.relative(real))}' in the server's data folder.")
        if problem == NOT_REGULAR:
            raise ServeError(
                f"'{echo(self.relative(real))}' in the server's data folder is not a regular file; "
                "give the name of a CSV or Parquet file."
            )
        return real

    def relative(self, path) -> str:
        """``path`` as shown to visitors: relative to the data (or output) folder it is in."""
        for folder in (self.data_dir, self.output_dir):
            if folder is not None and _inside(str(path), folder):
                return os.path.relpath(str(path), folder)
        return os.path.basename(str(path))

    def data_files(self, limit: int = 200, scan: int = 5000) -> list[str]:
        """Names of the CSV / TSV / TXT / Parquet regular files at the top of the data folder, sorted; at most
        ``limit`` of the first ``scan`` entries looked at (bounded time in a folder of any size)."""
        if not self.reads:
            return []
        out: list[str] = []
        with contextlib.suppress(OSError), os.scandir(self.data_dir) as it:
            for k, e in enumerate(it):
                if k >= scan:
                    break
                if e.name.lower().endswith((".csv", ".tsv", ".txt", ".parquet")) and not e.name.startswith(
                    "."
                ):
                    with contextlib.suppress(ServeError):
                        self.data_file(e.name)
                        out.append(e.name)
        return sorted(out)[:limit]

    # ------------------------------------------------------------------ writing
    def output_file(self, text, *, replace: bool = False, not_same_as: str | None = None) -> str:
        """The resolved path of ``text`` inside the output folder, checked for writing: its folder exists in
        the output folder, it is not a directory or special file, not ``not_same_as`` (the input), and it
        exists only if ``replace``.  ServeError otherwise."""
        if not self.writes:
            raise ServeError("This server does not write files to its disk; use the download button instead.")
        p = _typed(
            text,
            "No file name given: type the name of the file to write in the server's output folder.",
            OUTSIDE_WRITE,
        )
        real = os.path.realpath(os.path.join(self.output_dir, p))
        if not _inside(real, self.output_dir) or real == str(self.output_dir):
            raise ServeError(OUTSIDE_WRITE)
        shown = echo(self.relative(real))
        folder = os.path.dirname(real)
        if not os.path.isdir(folder):
            raise ServeError(f"The folder of '{shown}' does not exist in the server's output folder.")
        problem = regular_file_problem(real)
        if problem != NOT_FOUND:
            if problem is not None:
                raise ServeError(
                    f"'{shown}' in the server's output folder is not a regular file; give another name."
                )
            if not_same_as is not None and same_file(real, not_same_as):
                raise ServeError(
                    f"'{shown}' is the input file itself; choose another name so the data are kept."
                )
            if not replace:
                raise ServeError(
                    f"'{shown}' already exists in the server's output folder; tick 'Replace an existing "
                    "file' to replace it, or give another name."
                )
        return real

    def write_copy(self, source: str, text, *, replace: bool = False, not_same_as: str | None = None) -> str:
        """Copy the file ``source`` to ``text`` in the output folder (checked by :meth:`output_file`)
        atomically:
        a temporary file in the same folder, then renamed into place -- with ``replace`` by ``os.replace``,
        without it by ``os.link``, which fails if a file has appeared there meanwhile.  The path written."""
        target = self.output_file(text, replace=replace, not_same_as=not_same_as)
        shown = echo(self.relative(target))
        fd, tmp = tempfile.mkstemp(prefix=".bnfk-", suffix=".part", dir=os.path.dirname(target))
        try:
            _copy_synced(source, fd)
            if replace:
                os.replace(tmp, target)
            else:
                _place_new(tmp, target)
        except FileExistsError:
            raise ServeError(
                f"'{shown}' already exists in the server's output folder; tick 'Replace an existing "
                "file' to replace it, or give another name."
            ) from None
        except OSError as exc:
            raise ServeError(
                f"Cannot write '{shown}' in the server's output folder: "
                f"{echo(exc.strerror or type(exc).__name__)}."
            ) from None
        finally:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        return target


def _copy_synced(source: str, fd: int) -> None:
    """Copy the file ``source`` into the open descriptor ``fd`` (closed afterwards) and sync it to disk."""
    with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
        out.flush()
        os.fsync(out.fileno())


def _place_new(tmp: str, target: str) -> None:
    """Put the finished file ``tmp`` at ``target`` only if nothing is there (FileExistsError otherwise):
    ``os.link`` where the file system has hard links, else an exclusive create (``O_EXCL``) and a copy, so
    a file that appeared meanwhile is never replaced on a file system without hard links either."""
    try:
        os.link(tmp, target)
        return
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (
            errno.EPERM,
            errno.ENOTSUP,
            errno.EOPNOTSUPP,
            errno.EXDEV,
            errno.EMLINK,
            errno.ENOSYS,
        ):
            raise
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
    try:
        _copy_synced(tmp, fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(target)
        raise


def _typed(text, empty: str, outside: str) -> str:
    """The path as typed (surrounding quotes and blanks removed); ``empty`` if none, ``outside`` if
    unusable."""
    p = str(text or "").strip().strip("'\"").strip()
    if not p:
        raise ServeError(empty)
    if "\x00" in p or len(p) > 4096:
        raise ServeError(outside)
    return p


def policy(environ=None) -> ServePolicy:
    """The operator's policy as configured now (environment, then the config file)."""
    return ServePolicy.from_config(environ)


# ---------------------------------------------------------------------- the server's own temporary files
class FileStore:
    """A folder of the server's temporary files, capped at ``max_files`` files and ``max_bytes`` bytes: when a
    file is added beyond a cap the least recently used ones (:meth:`touch` marks a use) are removed.  The
    files this process wrote are removed at a clean exit (``atexit``)."""

    def __init__(self, folder, max_files: int, max_bytes: int):
        self.folder = Path(folder)
        self.max_files, self.max_bytes = int(max_files), int(max_bytes)
        self._lock = threading.Lock()
        self._mine: set[str] = set()
        atexit.register(self.remove_all)

    def path(self, name: str) -> Path:
        return self.folder / os.path.basename(name)

    def put(self, name: str, content: bytes | None = None) -> Path:
        """Write ``content`` as ``name`` (atomically; kept if a file of that size is there already), or with
        ``content`` None register a file written there by someone else; then apply the caps."""
        p = self.path(name)
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            if content is not None and not (p.is_file() and p.stat().st_size == len(content)):
                fd, tmp = tempfile.mkstemp(prefix=".", suffix=".part", dir=self.folder)
                try:
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(content)
                    os.replace(tmp, p)
                finally:
                    with contextlib.suppress(OSError):
                        os.remove(tmp)
            self._mine.add(str(p))
        self.touch(p)
        self.prune(keep=(p,))
        return p

    def touch(self, *paths) -> None:
        """Mark files as just used (their modification time), so they are removed last."""
        for p in paths:
            with contextlib.suppress(OSError):
                os.utime(p)

    def files(self) -> list[tuple[float, int, str]]:
        """(last use, bytes, path) of the store's regular files, oldest first."""
        out = []
        with contextlib.suppress(OSError):
            for e in os.scandir(self.folder):
                with contextlib.suppress(OSError):
                    if e.is_file(follow_symlinks=False) and not e.name.startswith("."):
                        s = e.stat(follow_symlinks=False)
                        out.append((s.st_mtime, s.st_size, e.path))
        return sorted(out)

    def prune(self, keep=()) -> list[str]:
        """Remove the least recently used files until both caps hold (``keep`` is never removed); the
        removed."""
        keep = {str(k) for k in keep}
        removed = []
        with self._lock:
            files = self.files()
            total = sum(f[1] for f in files)
            for _, size, path in files:
                if len(files) - len(removed) <= self.max_files and total <= self.max_bytes:
                    break
                if path in keep:
                    continue
                with contextlib.suppress(OSError):
                    os.remove(path)
                    removed.append(path)
                    total -= size
                    self._mine.discard(path)
        return removed

    def remove_all(self) -> None:
        """Remove the files this process wrote (a clean exit of the server)."""
        with self._lock:
            for p in list(self._mine):
                with contextlib.suppress(OSError):
                    os.remove(p)
            self._mine.clear()
