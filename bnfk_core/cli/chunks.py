"""What the row-wise subcommands share: ``--chunksize ROWS`` and reading a file in chunks aligned to a model
(:class:`bnfk_core.data.stream.CodeChunks`, used by ``prototypes``, ``kernel``, ``mmd`` and ``loglik``)."""

from __future__ import annotations

import argparse
import warnings

from ..errors import BnfkError
from .common import int_at_least, split_list, warning_line

__all__ = ["add_chunksize", "read_chunks", "in_chunks"]


def add_chunksize(p: argparse.ArgumentParser, what: str) -> None:
    """``--chunksize ROWS``: read the data file (CSV or Parquet) ROWS rows at a time
    (``bnfk_core.analyses.rowwise``)."""
    p.add_argument(
        "--chunksize",
        type=int_at_least(1),
        default=None,
        metavar="ROWS",
        help=f"read DATA (CSV or .parquet) ROWS rows at a time: {what}",
    )


def in_chunks(args, command: str, path: str | None = None) -> bool:
    """Whether ``command`` reads DATA (or ``path``) in chunks: ``--chunksize`` or ``--engine dask`` given, or
    the file (a CSV or Parquet file, not a session file) too big to hold within ``--max-memory``
    (:func:`bnfk_core.data.stream.too_big_to_hold`, decided from the file size before reading); then
    ``args.chunked_note`` says so (else it is None)."""
    from ..data.stream import chunked_note, too_big_to_hold
    from ..serving.session_files import is_session_file

    args.chunked_note = None
    if getattr(args, "chunksize", None) is not None or getattr(args, "engine", "local") == "dask":
        return True
    path = getattr(args, "data", None) if path is None else path
    if isinstance(path, str) and not is_session_file(path) and too_big_to_hold(path, command):
        args.chunked_note = chunked_note(path, command)
        return True
    return False


def read_chunks(path: str, args, model):
    """``path`` as :class:`~bnfk_core.data.stream.CodeChunks` aligned to ``model`` with the shared data
    options (pass 1 runs here, so bad values and columns are refused before any work)."""
    from ..data.stream import DEFAULT_CHUNKSIZE, CodeChunks
    from ..serving.session_files import is_session_file

    if is_session_file(path):
        raise BnfkError(f"--chunksize reads a CSV or Parquet file, not a session file ({path}).")
    cls = getattr(args, "label_column", None) or getattr(args, "class_column", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chunks = CodeChunks(
            path,
            model,
            chunksize=args.chunksize or DEFAULT_CHUNKSIZE,
            class_column=cls,
            missing_policy=args.missing_policy,
            na_values=args.na_values,
            discretize_bins=args.discretize,
            max_levels=args.max_levels,
            drop_columns=split_list(args.drop_columns),
        )
    for w in caught:
        warning_line(w.message)
    return chunks
