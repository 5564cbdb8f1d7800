"""Large files in the app: a path on the server, or an upload above the row threshold.

Such a file is read by the streaming reader (:func:`bnfk_core.data.stream.read_counts`: two passes in chunks,
a progress bar, the rows never held as text) into its distinct rows with their multiplicities, on which the
structure is learned and the CPTs fitted -- so the model is that of *all* rows.  The pages that work on rows
(the N × N views: kernel heatmaps, clustering, segments, prototypes, imputation, the kernel zoo) get a
seeded uniform sample of the file's rows instead (:meth:`bnfk_core.data.stream.WeightedData.sample_rows`), and
say so (:func:`sample_sentence`).

The tables read are kept server-wide (a few at a time, the most recently used), keyed by the file's path,
size and modification time and the loading options; two sessions asking for the same table read it once.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import tempfile
import threading
from pathlib import Path

from bnfk_core.data.reading import file_layout, printable
from bnfk_core.data.stream import WeightedData, read_counts
from bnfk_core.errors import BnfkError, DataError
from bnfk_core.serving.serve import FileStore, ServePolicy
from bnfk_core.serving.serve import policy as serve_policy

__all__ = [
    "CACHE_ENTRIES",
    "UPLOAD_FILES",
    "UPLOAD_BYTES",
    "cached",
    "clear",
    "count_lines",
    "file_key",
    "header",
    "policy",
    "read",
    "resolve",
    "sample_sentence",
    "server_file",
    "shown_path",
    "touch_upload",
    "upload_file",
]

#: streamed tables the server keeps at once (each holds the distinct rows: ~30 bytes a distinct row)
CACHE_ENTRIES = 4
_CACHE: collections.OrderedDict = collections.OrderedDict()
_LOCK = threading.Lock()
_READING: dict = {}  # key -> the lock of the read in progress (a second session waits for it)
UPLOAD_DIR = Path(tempfile.gettempdir()) / "bnfk_uploads"
#: large uploads written to UPLOAD_DIR for the streaming reader: at most this many files and bytes (least
#: recently used removed first; the ones this server wrote are removed when it exits cleanly)
UPLOAD_FILES = 16
UPLOAD_BYTES = 4 * 2**30
_STORES: dict = {}
_STORES_LOCK = threading.Lock()


def _store() -> FileStore:
    """The capped store of UPLOAD_DIR (one per folder, so a test may point UPLOAD_DIR elsewhere)."""
    key = (str(UPLOAD_DIR), UPLOAD_FILES, UPLOAD_BYTES)
    with _STORES_LOCK:
        if key not in _STORES:
            _STORES[key] = FileStore(UPLOAD_DIR, UPLOAD_FILES, UPLOAD_BYTES)
        return _STORES[key]


def policy() -> ServePolicy:
    """The operator's folders (:mod:`bnfk_core.serving.serve`): off unless BNFK_DATA_DIR / BNFK_OUTPUT_DIR
    name them."""
    return serve_policy()


def server_file(text: str) -> str:
    """The file on the server a visitor named, checked by the operator's policy: a regular file inside the
    data folder (resolved path), else one ServeError sentence that tells nothing about the disk outside it."""
    return policy().data_file(text)


def shown_path(path: str) -> str:
    """A file on the server as visitors see it: its name relative to the data folder."""
    return policy().relative(path)


def resolve(path: str) -> str:
    """The path as typed (surrounding quotes and blanks removed, ``~`` expanded); DataError if empty."""
    p = str(path or "").strip().strip("'\"").strip()
    if not p:
        raise DataError("No path given: type the path of a CSV or Parquet file on the server.")
    return os.path.expanduser(p)


@contextlib.contextmanager
def named_as(path: str, name: str):
    """A core error about the server file ``path`` names it as the visitor knows it (``name``): a visitor
    never sees the server's folders (the data folder's absolute path, the upload store under $TMPDIR)."""
    try:
        yield
    except BnfkError as exc:
        msg = str(exc)
        for p in sorted(
            {
                str(path),
                os.path.abspath(str(path)),
                printable(str(path)),
                printable(os.path.abspath(str(path))),
            },
            key=len,
            reverse=True,
        ):
            msg = msg.replace(p, name)
        exc.args = (msg,) + exc.args[1:]
        raise


def header(path: str, name: str | None = None) -> tuple:
    """The file's column names (checks that it exists and is a CSV or Parquet file; DataError names it as
    ``name``, default its file name)."""
    with named_as(path, name or os.path.basename(str(path))):
        return file_layout(resolve(path), source=name or os.path.basename(str(path))).header


def file_key(path: str) -> tuple:
    """(absolute path, size, modification time): a changed file is read again."""
    p = resolve(path)
    try:
        st = os.stat(p)
    except OSError:
        raise DataError(f"File not found: {printable(p)}.") from None
    return (os.path.abspath(p), st.st_size, st.st_mtime_ns)


def _key(path: str, options: tuple) -> tuple:
    return (file_key(path), tuple(options))


def cached(path: str, options: tuple) -> WeightedData | None:
    """The table if it has been read with these options (and the file has not changed since), else None."""
    try:
        key = _key(path, options)
    except DataError:
        return None
    with _LOCK:
        w = _CACHE.get(key)
        if w is not None:
            _CACHE.move_to_end(key)
        return w


def read(path: str, source: str, options: tuple, progress=None) -> WeightedData:
    """The file's distinct rows and multiplicities for ``options`` = (class column, missing policy, bins,
    drop columns), from the cache or read in chunks with ``progress(fraction, message)`` reports."""
    key = _key(path, options)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        lock = _READING.setdefault(key, threading.Lock())
    with lock:  # one read per table; another session asking for it waits here
        w = cached(path, options)
        if w is not None:
            return w
        cls, policy, bins, drop = options
        try:
            with named_as(path, source):
                w = read_counts(
                    resolve(path),
                    class_column=cls,
                    missing_policy=policy,
                    discretize_bins=bins or None,
                    drop_columns=tuple(drop),
                    source=source,
                    progress=progress,
                )
        finally:
            with _LOCK:
                _READING.pop(key, None)
        w.fingerprint()  # hashed once, here, not on the first page that needs it
        with _LOCK:
            _CACHE[key] = w
            while len(_CACHE) > CACHE_ENTRIES:
                _CACHE.popitem(last=False)
        return w


def clear() -> None:
    with _LOCK:
        _CACHE.clear()


def count_lines(content: bytes) -> int:
    """Data rows of an uploaded CSV, counted cheaply (line breaks, less the header)."""
    n = content.count(b"\n")
    if content and not content.endswith(b"\n"):
        n += 1
    return max(n - 1, 0)


def upload_file(name: str, content: bytes) -> str:
    """An uploaded file written once to the server's temporary directory (named by its sha256, never shown),
    so the streaming reader can read it in chunks; the store keeps to UPLOAD_FILES / UPLOAD_BYTES."""
    suffix = (
        Path(name).suffix.lower()
        if Path(name).suffix.lower() in (".csv", ".tsv", ".txt", ".parquet")
        else ".csv"
    )
    return str(_store().put(f"{hashlib.sha256(content).hexdigest()[:32]}{suffix}", content))


def touch_upload(path: str) -> bool:
    """Mark an upload's file as used now (removed last); False if the store has removed it meanwhile."""
    _store().touch(path)
    return os.path.isfile(path)


def sample_sentence(n_rows: int, n_sample: int, seed: int) -> str:
    """What a page working on rows says about a large file."""
    if n_sample >= n_rows:
        return f"Fitted on all {n_rows:,} rows; this view uses all of them."
    return (
        f"Fitted on all {n_rows:,} rows; this view uses a seeded sample of {n_sample:,} rows (seed {seed})."
    )
