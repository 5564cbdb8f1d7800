"""Completing a large file in the app: every missing cell of all its rows filled, read and written in blocks.

:func:`run` calls :func:`bnfk_core.analyses.impute_stream.impute_file` -- the file the in-memory path
writes, byte for byte, while holding one block of records at a time -- with the app's model (fitted on all
rows) and the options the file was read with, into a file of the server's temporary directory
(``$TMPDIR/bnfk_imputed``, beside the uploads of :mod:`bnfk_ui.bigdata`) named by a hash of the key.

Results are kept server-wide (a few at a time, the most recently used; an evicted result's files are
removed), keyed by the input file's path, size and modification time, the model's content hash, the
loading options and the fill rule: a page re-run, or another session asking for the same file, gets the
result without imputing again.  :func:`save_as` copies a result to a path on the server the user gave.
"""
from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

from bnfk_core.analyses.impute_stream import impute_file
from bnfk_core.data import _printable
from bnfk_core.errors import DataError
from bnfk_core.files import atomic_path, same_file

from . import bigdata

__all__ = ["CACHE_ENTRIES", "OUTPUT_DIR", "cached", "clear", "run", "save_as", "target_path"]

#: completed files the server keeps at once (each is about the size of its input)
CACHE_ENTRIES = 4
OUTPUT_DIR = Path(tempfile.gettempdir()) / "bnfk_imputed"
_CACHE: collections.OrderedDict = collections.OrderedDict()
_LOCK = threading.Lock()
_RUNNING: dict = {}          # key -> the lock of the imputation in progress (a second session waits for it)


def _key(path: str, model, options: tuple, fill: str) -> tuple:
    return (bigdata.file_key(path), model.key(), tuple(options), str(fill))


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
        if res is not None and _alive(res):
            _CACHE.move_to_end(key)
            return res
        return None


def run(path: str, source: str, model, options: tuple, fill: str = "median", progress=None) -> dict:
    """Impute all rows of the CSV ``path`` (``options`` = (class column, missing policy, bins, drop columns), as
    :func:`bnfk_ui.bigdata.read` reads it) with ``model``; the result of ``impute_file`` plus ``output`` and
    ``probabilities``, the files written.  From the cache when the server holds it."""
    key = _key(path, model, options, fill)
    res = cached(path, model, options, fill)
    if res is not None:
        return res
    with _LOCK:
        lock = _RUNNING.setdefault(key, threading.Lock())
    with lock:                       # one imputation per key; another session asking for it waits here
        res = cached(path, model, options, fill)
        if res is not None:
            return res
        name = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:32]
        out, probs = OUTPUT_DIR / f"{name}.csv", OUTPUT_DIR / f"{name}_probabilities.csv"
        cls, policy, bins, drop = options
        try:
            OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
            res = impute_file(model, bigdata.resolve(path), str(out), probabilities=str(probs), fill_numeric=fill,
                              class_column=cls, missing_policy=policy, discretize_bins=bins or None,
                              drop_columns=tuple(drop), source=source, progress=progress)
        except OSError as exc:
            raise DataError(f"Cannot write the completed file to {_printable(str(exc.filename or OUTPUT_DIR))}: "
                            f"{exc.strerror or exc}.") from None
        finally:
            with _LOCK:
                _RUNNING.pop(key, None)
        res = dict(res, output=str(out), probabilities=str(probs))
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


def target_path(text: str, input_path: str) -> str:
    """The path typed for the completed file, checked: not empty, not a directory, in an existing folder and
    not the input file itself (DataError, one sentence naming the path)."""
    p = str(text or "").strip().strip("'\"").strip()
    if not p:
        raise DataError("No path given: type the path on the server to write the completed file to.")
    p = os.path.expanduser(p)
    shown = _printable(p)
    if os.path.isdir(p):
        raise DataError(f"{shown} is a directory; give the path of a file to write the completed data to.")
    folder = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(folder):
        raise DataError(f"The folder of {shown} does not exist, so the completed file cannot be written there.")
    if os.path.realpath(p) == os.path.realpath(input_path) or same_file(p, input_path):
        raise DataError(f"{shown} is the input file itself; choose another path so the data are not overwritten.")
    return p


def save_as(res: dict, text: str, input_path: str) -> str:
    """Copy the completed file of ``res`` to the checked path ``text`` (atomically); the path written."""
    p = target_path(text, input_path)
    try:
        with atomic_path(p) as tmp:
            shutil.copyfile(res["output"], tmp)
    except OSError as exc:
        raise DataError(f"Cannot write {_printable(p)}: {exc.strerror or exc}.") from None
    return p
