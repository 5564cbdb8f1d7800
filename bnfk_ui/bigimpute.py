"""Completing a large file in the app: every missing cell of all its rows filled, read and written in blocks.

:func:`run` calls :func:`bnfk_core.analyses.impute.stream.impute_file` -- the file the in-memory path
writes, byte for byte, while holding one block of records at a time -- with the app's model (fitted on all
rows) and the options the file was read with, into a file of the server's temporary directory
(``$TMPDIR/bnfk_imputed``, beside the uploads of :mod:`bnfk_ui.bigdata`) named by a hash of the key.

Results are kept server-wide (a few at a time, the most recently used; an evicted result's files are
removed), keyed by the input file's path, size and modification time, the model's content hash, the
loading options and the fill rule: a page re-run, or another session asking for the same file, gets the
result without imputing again; the files kept are capped (OUTPUT_FILES, OUTPUT_BYTES, least recently used
removed) and removed when the server exits cleanly.  :func:`save_as` copies a result into the operator's
output folder (only when the operator allowed one, :mod:`bnfk_core.serving.serve`).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import tempfile
import threading
from pathlib import Path

from bnfk_core.analyses.impute.stream import impute_file
from bnfk_core.data.reading import printable as _printable
from bnfk_core.errors import DataError
from bnfk_core.serving.serve import FileStore

from . import bigdata

__all__ = ["CACHE_ENTRIES", "OUTPUT_DIR", "OUTPUT_FILES", "OUTPUT_BYTES", "cached", "clear", "run", "save_as"]

#: completed files the server keeps at once (each is about the size of its input)
CACHE_ENTRIES = 4
OUTPUT_DIR = Path(tempfile.gettempdir()) / "bnfk_imputed"
#: completed files (and their probabilities) kept on disk at most: count and bytes, least recently used
#: removed
OUTPUT_FILES = 2 * CACHE_ENTRIES
OUTPUT_BYTES = 8 * 2**30
_STORES: dict = {}
_STORES_LOCK = threading.Lock()
_CACHE: collections.OrderedDict = collections.OrderedDict()
_LOCK = threading.Lock()
_RUNNING: dict = {}  # key -> the lock of the imputation in progress (a second session waits for it)


def _key(path: str, model, options: tuple, fill: str) -> tuple:
    return (bigdata.file_key(path), model.key(), tuple(options), str(fill))


def _store() -> FileStore:
    key = (str(OUTPUT_DIR), OUTPUT_FILES, OUTPUT_BYTES)
    with _STORES_LOCK:
        if key not in _STORES:
            _STORES[key] = FileStore(OUTPUT_DIR, OUTPUT_FILES, OUTPUT_BYTES)
        return _STORES[key]


def _alive(res: dict) -> bool:
    return os.path.isfile(res["output"]) and os.path.isfile(res["probabilities"])


def cached(path: str, model, options: tuple, fill: str) -> dict | None:
    """The result for this file (unchanged since), model, options and fill rule if the server holds it."""
    try:
        key = _key(path, model, options, fill)
    except DataError:
        return None
    with _LOCK:
        res = _CACHE.get(key)
        if res is None or not _alive(res):
            return None
        _CACHE.move_to_end(key)
    _store().touch(res["output"], res["probabilities"])  # used now: removed last
    return res


def run(path: str, source: str, model, options: tuple, fill: str = "median", progress=None) -> dict:
    """Impute all rows of the CSV ``path`` (``options`` = (class column, missing policy, bins, drop columns),
    as
    :func:`bnfk_ui.bigdata.read` reads it) with ``model``; the result of ``impute_file`` plus ``output`` and
    ``probabilities``, the files written.  From the cache when the server holds it."""
    key = _key(path, model, options, fill)
    res = cached(path, model, options, fill)
    if res is not None:
        return res
    with _LOCK:
        lock = _RUNNING.setdefault(key, threading.Lock())
    with lock:  # one imputation per key; another session asking for it waits here
        res = cached(path, model, options, fill)
        if res is not None:
            return res
        name = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:32]
        out, probs = OUTPUT_DIR / f"{name}.csv", OUTPUT_DIR / f"{name}_probabilities.csv"
        cls, policy, bins, drop = options
        try:
            OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
            with bigdata.named_as(path, source):
                res = impute_file(
                    model,
                    bigdata.resolve(path),
                    str(out),
                    probabilities=str(probs),
                    fill_numeric=fill,
                    class_column=cls,
                    missing_policy=policy,
                    discretize_bins=bins or None,
                    drop_columns=tuple(drop),
                    source=source,
                    progress=progress,
                )
        except OSError as exc:
            raise DataError(
                f"Cannot write the completed file in the server's temporary folder: "
                f"{_printable(exc.strerror or type(exc).__name__)}."
            ) from None
        finally:
            with _LOCK:
                _RUNNING.pop(key, None)
        res = dict(res, output=str(out), probabilities=str(probs))
        store = _store()
        for f in (out, probs):
            store.put(f.name)  # registered: capped, removed at a clean exit
        store.prune(keep=(out, probs))
        with _LOCK:
            _CACHE[key] = res
            while len(_CACHE) > CACHE_ENTRIES:
                _, old = _CACHE.popitem(last=False)
                if old["output"] != res["output"]:
                    for f in (old["output"], old["probabilities"]):
                        with contextlib.suppress(OSError):
                            os.remove(f)
        return res


def clear() -> None:
    with _LOCK:
        _CACHE.clear()


def save_as(res: dict, text: str, input_path: str, *, replace: bool = False) -> str:
    """Copy the completed file of ``res`` to ``text`` in the operator's output folder
    (:mod:`bnfk_core.serving.serve`:
    inside it only, atomically, an existing file replaced only with ``replace``, never the input); the path
    written, as visitors see it."""
    pol = bigdata.policy()
    written = pol.write_copy(res["output"], text, replace=replace, not_same_as=input_path)
    return pol.relative(written)
