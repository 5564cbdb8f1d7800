"""Clustering a file too big to hold as text: its rows read in chunks into state codes.

Every clustering path needs the rows in file order (one label per row) and the kernel's features of each row,
so the rows themselves are kept -- but as one byte a cell (state codes, -1 = missing), not as the in-memory
reader's Python strings, which take about 60 bytes of memory per byte of CSV.  :func:`read_codes` reads the
file in two passes of ``chunksize`` rows, as :func:`bnfk_core.data.stream.read_counts` does: pass 1 counts
every raw cell text per column and derives the states exactly as :func:`bnfk_core.data.table.load_csv` does
(:func:`bnfk_core.data.stream.plan_from_levels`); pass 2 encodes each chunk.  The result is a
:class:`bnfk_core.data.table.CategoricalData` without a text frame whose codes, states and class column equal
``load_csv``'s, so the kernel, its network and the clustering are those of the in-memory path.

Whether ``cluster`` reads this way is decided before reading, from the file size and the memory limit
(the file size times :data:`HOLD_BYTES_PER_FILE_BYTE`, the in-memory path's measured peak per byte of CSV,
against the memory limit, as :func:`bnfk_core.data.stream.too_big_to_hold` decides for the other commands),
and the JSON says which (:func:`reading_note`).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ...data.limits import format_bytes, memory_limit
from ...data.reading import DEFAULT_CHUNKSIZE, file_layout, printable
from ...data.runners import LocalRunner
from ...data.stream import encode_chunk, levels_pass, plan_from_levels
from ...data.table import CategoricalData
from ...errors import DataError

__all__ = ["HOLD_BYTES_PER_FILE_BYTE", "held_bytes", "read_codes", "reads_in_chunks", "reading_note"]

#: peak memory of ``cluster FILE --kernel fisher`` read whole, per byte of its CSV, rounded up: 1,472 MiB on
#: the 9.5 MiB letter-like file of 200,000 rows of benchmarks/bench_stream.py, 155 bytes a byte (the peak is
#: the structural EM of the kernel's network)
HOLD_BYTES_PER_FILE_BYTE = 160


def held_bytes(path) -> int | None:
    """The memory ``cluster`` would take to read ``path`` whole (its size times
    :data:`HOLD_BYTES_PER_FILE_BYTE`), decided before reading it; None if it cannot be sized."""
    try:
        return int(os.path.getsize(path)) * HOLD_BYTES_PER_FILE_BYTE
    except (OSError, TypeError, ValueError):
        return None


def reads_in_chunks(path, max_bytes: float | None = None) -> bool:
    """Whether ``cluster`` reads ``path`` in chunks without being asked: holding it whole would take more than
    ``max_bytes`` (default: the run's memory limit, the CLI's ``--max-memory``; no limit: never), estimated
    from its size before reading (:func:`held_bytes`)."""
    budget = memory_limit() if max_bytes is None else max_bytes
    need = held_bytes(path)
    return need is not None and budget is not None and math.isfinite(budget) and need > budget


def reading_note(path, chunked: bool, max_bytes: float | None = None) -> str:
    """The sentence saying how ``path`` was read and why (the estimate against the memory limit)."""
    budget = memory_limit() if max_bytes is None else max_bytes
    need = held_bytes(path)
    name = printable(os.path.basename(str(path)))
    limit = "no memory limit" if budget is None else f"the memory limit ({format_bytes(budget)})"
    if need is None:
        return f"{name} was read whole (its size is unknown)."
    if chunked:
        return (
            f"{name} would take about {format_bytes(need)} in memory as text, more than {limit}, so it was "
            "read "
            "in chunks into state codes (one byte a cell)."
        )
    return f"{name} would take about {format_bytes(need)} in memory, within {limit}, so it was read whole."


def encode_part(df, row0: int, plan, dtype) -> np.ndarray:
    """Pass 2 on one piece of the file (a chunk here, a partition on Dask): its rows' state codes."""
    return encode_chunk(df, plan, dtype)


def read_codes(
    path,
    *,
    chunksize: int = DEFAULT_CHUNKSIZE,
    class_column=None,
    missing_policy="missing",
    discretize_bins=4,
    max_levels=50,
    drop_columns=(),
    na_values=None,
    fmt: str | None = None,
    progress=None,
    runner=None,
) -> CategoricalData:
    """The rows of a CSV or Parquet file as state codes, read ``chunksize`` rows at a time (module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        A CSV or Parquet file (``fmt`` overrides the extension).
    chunksize : int
        Rows parsed at a time.
    class_column, missing_policy, discretize_bins, max_levels, drop_columns, na_values
        As :func:`bnfk_core.data.table.load_csv`.
    progress : callable, optional
        ``progress(fraction, message)`` after every chunk (pass 1: 0 to 0.5, pass 2: 0.5 to 1).
    runner : optional
        Where both passes run (:mod:`bnfk_core.data.runners`): here in chunks of ``chunksize`` rows (None), or
        on the partitions of a Dask runner, whose codes come back to this process in file order.  The same
        codes.

    Returns
    -------
    CategoricalData
        ``frame`` is None; ``codes`` (int8 when every column has fewer than 127 states), ``variables``,
        ``states``, ``class_column`` and ``notes`` as :func:`bnfk_core.data.table.load_csv` gives them.  The
        raw numbers of discretized columns (``numbers``) are not kept.

    Raises
    ------
    DataError
        The same refusals as :func:`bnfk_core.data.table.load_csv`, decided in pass 1.
    """
    if int(chunksize) < 1:
        raise DataError(f"chunksize must be a positive number of rows, not {chunksize!r}.")
    report = progress or (lambda fraction, message: None)
    layout = file_layout(path, fmt)
    runner = LocalRunner(int(chunksize)) if runner is None else runner
    levels, n_rows = levels_pass(runner, layout, path, report, 0.5)
    plan = plan_from_levels(
        levels,
        layout,
        class_column=class_column,
        missing_policy=missing_policy,
        discretize_bins=discretize_bins,
        max_levels=max_levels,
        drop_columns=drop_columns,
        na_values=na_values,
    )
    r = max((len(st) for st in plan.states), default=1)
    dtype = np.int8 if r < 127 else (np.int16 if r < 2**15 - 1 else np.int32)
    codes = np.empty((n_rows, len(plan.columns)), dtype=dtype)
    row0 = 0
    for _, part, _ in runner.map_frames(encode_part, layout, (plan, dtype)):
        if row0 + len(part) > n_rows:
            row0 += len(part)
            break
        codes[row0 : row0 + len(part)] = part
        row0 += len(part)
        report(
            0.5 + 0.5 * row0 / n_rows,
            f"Reading {printable(layout.path)}: pass 2 of 2, {row0:,} of {n_rows:,} rows",
        )
    if row0 != n_rows:
        raise DataError(f"{printable(str(path))} changed while it was read ({n_rows:,} rows, then {row0:,}).")
    return CategoricalData(
        None,
        codes,
        tuple(plan.columns),
        tuple(plan.states),
        plan.class_column,
        plan.source,
        tuple(plan.notes),
    )
