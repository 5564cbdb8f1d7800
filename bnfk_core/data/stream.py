"""Streaming sufficient statistics: a CSV or Parquet file read in chunks, reduced to its distinct rows.

Every score and estimator of bnfk needs only counts of family configurations, and structure
learning needs counts of *candidate* families, so the sufficient statistic of a whole table is its
**distinct rows with their multiplicities** (rows with missing cells included, ``-1`` kept).
:func:`read_counts` computes it in two passes over the file, a chunk of rows at a time:

1. **States.**  Each chunk gives, per column, the count of every raw cell text; merged over the
   chunks they give each column's levels exactly as :func:`bnfk_core.data.table.load_csv` derives them
   (same trimming, missing tokens, numeric ordering, ``max_levels`` refusals; quantile bins of
   discretised columns from the *global* value counts -- the same edges as ``np.quantile`` on all
   rows), or the states of a given model.
2. **Distinct rows.**  Each chunk is encoded to state codes and reduced to (one mixed-radix int64
   key per distinct row, its count); the chunk results are merged.  Pass 1 already keeps every chunk's
   distinct rows in the chunk's own codes (the positions of its cells' texts among the chunk's levels,
   :func:`chunk_levels_rows`), so pass 2 only encodes each chunk's level texts and gathers
   (:func:`rows_to_distinct`) -- the file is read once; it is read again only when a chunk's own keys would
   not fit in 62 bits (very many columns or levels).

The result, :class:`WeightedData`, is a :class:`~bnfk_core.data.table.CategoricalData` whose ``codes`` are
the distinct rows and ``weights`` their multiplicities; :func:`bnfk_core.learning.structure.learn_structure`
and
:func:`bnfk_core.network.model.fit` count with the weights and give the same DAG, scores and CPTs as on the
rows themselves.  Memory is that of one chunk plus the distinct rows: bounded by the data's distinct
configurations, not by the row count -- a table whose rows are all distinct does not compress.

The chunk functions (:func:`chunk_levels`, :func:`chunk_distinct`) run on a runner
(:mod:`bnfk_core.data.runners`: here, or on a Dask cluster's partitions) and the merges (:func:`merge_levels`,
:func:`merge_distinct`) on the client.

Differences from ``load_csv``, all on unusual files: the file is parsed by pandas (``read_csv``,
C engine, ``dtype=str``) instead of Python's ``csv`` module; text is UTF-8; line numbers in messages
assume one line per record and no blank lines; the trailing-delimiter quirk is not repaired.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import DataError
from .binning import binning_notes, check_columns, check_options, column_states, model_columns
from .limits import format_bytes, memory_limit
from .reading import DEFAULT_CHUNKSIZE, FileLayout, file_layout, iter_chunks, printable
from .runners import ENGINES, LocalRunner, runner_for
from .table import CategoricalData, na_set

__all__ = [
    "WeightedData",
    "read_counts",
    "DEFAULT_CHUNKSIZE",
    "ColumnCodec",
    "Plan",
    "chunk_levels",
    "merge_levels",
    "chunk_distinct",
    "merge_distinct",
    "plan_from_levels",
    "distinct_rows",
    "encode_chunk",
    "CodeChunks",
    "iter_codes",
    "Merger",
    "HOLD_BYTES_PER_FILE_BYTE",
    "held_bytes",
    "too_big_to_hold",
    "chunked_note",
    "levels_pass",
    "levels_part",
    "distinct_part",
    "codes_part",
    "chunk_levels_rows",
    "rows_to_distinct",
    "levels_rows_part",
]
_KEY_LIMIT = 2**62


# ====================================================================== the weighted table
#: a table held as its distinct rows with their multiplicities: the one data type, :class:`CategoricalData`
#: with ``weights`` (``WeightedData(None, codes, variables, states, class_column, source, notes,
#: weights=counts)``)
WeightedData = CategoricalData


def distinct_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a code matrix (in key order) and their counts."""
    codes = np.asarray(codes)
    radix = [int(codes[:, j].max()) + 2 if codes.shape[0] else 1 for j in range(codes.shape[1])]
    keys = _keys(codes, radix)
    u, c = np.unique(keys, return_counts=True, axis=0 if keys.ndim == 2 else None)
    return _decode(u, radix), c.astype(np.int64)


# ====================================================================== pass 1: levels
def chunk_levels(df: pd.DataFrame, columns: Sequence[str], row0: int = 0) -> dict:
    """Per column, the count and first row (``row0`` + position) of every raw cell text of a chunk,
    as a frame indexed by the text."""
    return {c: _column_levels(df[c], row0)[0] for c in columns}


def _column_levels(values, row0: int) -> tuple:
    """(the level frame of :func:`chunk_levels`, the cells' codes into it) of one column of a chunk."""
    codes, uniq = pd.factorize(values.to_numpy(dtype=object, na_value=""))
    codes = np.asarray(codes, dtype=np.int64)
    counts = np.bincount(codes, minlength=len(uniq)).astype(np.int64)
    # codes are numbered in order of first appearance: a new one exceeds every earlier code
    prev = np.maximum.accumulate(np.concatenate([[-1], codes[:-1]])) if codes.size else codes
    first = np.flatnonzero(codes > prev).astype(np.int64) + int(row0)
    frame = pd.DataFrame({"count": counts, "first": first}, index=pd.Index(np.asarray(uniq, dtype=object)))
    return frame, codes


def chunk_levels_rows(df: pd.DataFrame, columns: Sequence[str], row0: int = 0) -> tuple:
    """Pass 1 that also keeps the chunk's rows: ``(levels, rows)``, ``levels`` as :func:`chunk_levels` and
    ``rows`` the chunk's distinct rows in its own codes -- ``(sorted keys, counts)``, a row's key the
    mixed-radix number of its cells' positions in the levels' texts (columns in ``columns`` order) -- or None
    when those keys would not fit
    in 62 bits.  Once the states are fixed, :func:`rows_to_distinct` turns ``rows`` into the chunk's
    :func:`chunk_distinct` without reading it again."""
    levels, key, size = {}, np.zeros(len(df), dtype=np.int64), 1
    for c in columns:
        frame, codes = _column_levels(df[c], row0)
        levels[c] = frame
        r = max(len(frame), 1)
        size *= r
        if size < _KEY_LIMIT:
            key *= r
            key += codes
    if size >= _KEY_LIMIT:
        return levels, None
    keys, counts = np.unique(key, return_counts=True)
    return levels, (keys, counts.astype(np.int64))


def rows_to_distinct(levels: dict, rows: tuple, columns: Sequence[str], plan: Plan) -> tuple:
    """A chunk's distinct rows of :func:`chunk_levels_rows` (``levels`` the chunk's own, ``columns`` their
    order) as
    :func:`chunk_distinct` gives them under ``plan``: every level's text encoded once, the rows' codes
    gathered."""
    keys, counts = rows
    radix = [max(len(levels[c]), 1) for c in columns]
    local = {}
    k = keys.copy()
    for c, r in zip(reversed(columns), reversed(radix)):
        local[c] = k % r
        k //= r
    codes = np.empty((keys.shape[0], len(plan.columns)), dtype=np.int32)
    for j, (name, codec) in enumerate(zip(plan.columns, plan.codecs)):
        lut = codec.encode(np.asarray(levels[name].index, dtype=object), name, plan.source)
        codes[:, j] = lut[local[name]] if len(lut) else -1
    gk = _keys(codes, plan.radix)
    u, inv = np.unique(gk, return_inverse=True, axis=0 if gk.ndim == 2 else None)
    return u, np.bincount(inv.ravel(), weights=counts, minlength=u.shape[0]).round().astype(np.int64)


def merge_levels(parts: Iterable[dict]) -> dict:
    """Merge :func:`chunk_levels` results: counts add up, the first row is the smallest."""
    acc: dict = {}
    for part in parts:
        for c, fr in part.items():
            if c not in acc:
                acc[c] = fr
            else:
                both = pd.concat([acc[c], fr])
                acc[c] = both.groupby(level=0, sort=False).agg({"count": "sum", "first": "min"})
    return acc


@dataclass
class ColumnCodec:
    """Raw cell text -> state code of one column (``-1`` = missing)."""

    raw: np.ndarray
    code: np.ndarray
    _index: pd.Index | None = field(default=None, repr=False, compare=False)

    def encode(self, values, name: str = "", source: str = "the data") -> np.ndarray:
        if self._index is None:
            self._index = pd.Index(self.raw, dtype=object)
        pos = self._index.get_indexer(pd.Index(np.asarray(values, dtype=object)))
        if (pos < 0).any():
            bad = np.asarray(values, dtype=object)[int(np.flatnonzero(pos < 0)[0])]
            raise DataError(
                f"Value '{bad}' of column '{name}' of {source} was not seen in the first pass "
                "(the file changed while it was read)."
            )
        return self.code[pos]

    def __getstate__(self):
        return {"raw": self.raw, "code": self.code, "_index": None}


@dataclass
class Plan:
    """What pass 2 needs: the columns in output order, their codecs, states and key radices."""

    source: str
    columns: tuple
    states: tuple
    codecs: tuple
    class_column: str | None
    notes: tuple

    @property
    def radix(self) -> list:
        return [len(st) + 1 for st in self.states]


def plan_from_levels(
    levels: dict,
    layout: FileLayout,
    *,
    class_column=None,
    missing_policy="missing",
    discretize_bins=4,
    max_levels=50,
    drop_columns=(),
    model=None,
    source=None,
    na_values=None,
) -> Plan:
    """Each column's states from its merged level counts, as :func:`bnfk_core.data.table.load_csv` derives
    them from the rows (see the module docstring)."""
    na = na_set(na_values, missing_policy)
    source = printable(str(source)) if source is not None else os.path.basename(layout.path)
    bins, max_levels, drop_columns, class_column = check_options(
        missing_policy, discretize_bins, max_levels, drop_columns, class_column
    )
    header = list(layout.header)
    notes: list = []
    check_columns(header, drop_columns, class_column, source, notes)
    keep = [h for h in header if h not in drop_columns]
    mvars = mstates = None
    if model is not None:
        mvars, mstates, class_column = model_columns(model, keep, class_column, source, notes)
        order = list(mvars)
    else:
        order = keep
        if len(order) < 2:
            raise DataError(
                f"Fewer than two columns of {source} are left after drop_columns; keep at least two."
            )
    states, codecs, discretized, fewer = [], [], [], []
    for out_j, name in enumerate(order):
        fr = levels[name]
        raw = fr.index.to_numpy(dtype=object)
        counts = fr["count"].to_numpy(np.int64)
        first = fr["first"].to_numpy(np.int64)
        lcodes, lev = pd.factorize(np.array([str(r).strip() for r in raw], dtype=object))
        lcodes = np.asarray(lcodes, dtype=np.int64)
        lev = [str(x) for x in lev]
        level_counts = np.bincount(lcodes, weights=counts, minlength=len(lev))
        level_counts = np.rint(level_counts).astype(np.int64)
        level_first = np.full(len(lev), np.iinfo(np.int64).max)
        np.minimum.at(level_first, lcodes, first)
        miss_lev = np.fromiter((v in na for v in lev), dtype=bool, count=len(lev))
        inv = np.arange(len(lev))
        if name == class_column and miss_lev.all():
            raise DataError(f"Class column '{name}' of {source} is empty (every value is missing).")
        level_code, st = column_states(
            name,
            lev,
            miss_lev,
            inv,
            None if mvars is None else mstates[out_j],
            missing_policy,
            bins,
            max_levels,
            source,
            name == class_column,
            level_first + 2,  # one line per record, header on line 1
            notes,
            discretized,
            fewer,
            level_counts,
        )
        states.append(tuple(st))
        codecs.append(ColumnCodec(raw, np.asarray(level_code, dtype=np.int64)[lcodes]))
    binning_notes(discretized, fewer, bins, max_levels, notes)
    return Plan(source, tuple(order), tuple(states), tuple(codecs), class_column, tuple(notes))


# ====================================================================== pass 2: distinct rows
def _keys(codes: np.ndarray, radix: Sequence[int]) -> np.ndarray:
    """One int64 mixed-radix key per row (code + 1, so -1 is kept), or the rows themselves (2-D)
    when the radix product would not fit in 62 bits."""
    if math.prod(int(r) for r in radix) >= _KEY_LIMIT:
        return np.ascontiguousarray(codes, dtype=np.int16 if max(radix) < 2**15 else np.int32)
    key = np.zeros(codes.shape[0], dtype=np.int64)
    for j, r in enumerate(radix):
        key *= int(r)
        key += codes[:, j].astype(np.int64) + 1
    return key


def _decode(keys: np.ndarray, radix: Sequence[int]) -> np.ndarray:
    dtype = np.int8 if max(radix) <= 128 else (np.int16 if max(radix) <= 2**15 else np.int32)
    if keys.ndim == 2:
        return keys.astype(dtype)
    out = np.empty((keys.shape[0], len(radix)), dtype=dtype)
    k = keys.copy()
    for j in range(len(radix) - 1, -1, -1):
        r = int(radix[j])
        out[:, j] = k % r - 1
        k //= r
    return out


def encode_chunk(df: pd.DataFrame, plan: Plan, dtype=np.int32) -> np.ndarray:
    """A chunk of raw cell text as state codes (rows, plan.columns), -1 = missing."""
    codes = np.empty((len(df), len(plan.columns)), dtype=dtype)
    for j, (name, codec) in enumerate(zip(plan.columns, plan.codecs)):
        codes[:, j] = codec.encode(df[name].to_numpy(dtype=object, na_value=""), name, plan.source)
    return codes


def chunk_distinct(df: pd.DataFrame, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's distinct rows as (sorted keys, counts)."""
    codes = encode_chunk(df, plan)
    keys = _keys(codes, plan.radix)
    u, c = np.unique(keys, return_counts=True, axis=0 if keys.ndim == 2 else None)
    return u, c.astype(np.int64)


def merge_distinct(parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Merge (keys, counts) pairs: the union of the keys, counts added."""
    parts = [p for p in parts if p[0].shape[0]]
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    keys = np.concatenate([p[0] for p in parts])
    counts = np.concatenate([p[1] for p in parts])
    u, inv = np.unique(keys, return_inverse=True, axis=0 if keys.ndim == 2 else None)
    return u, np.bincount(inv.ravel(), weights=counts, minlength=u.shape[0]).round().astype(np.int64)


class Merger:
    """Merges chunk results as they come, re-merging when the pending parts outgrow the merged one
    (so the total work is O(D log D · log N) for D distinct rows, not O(D · chunks))."""

    def __init__(self):
        self.merged = None
        self.pending: list = []

    def add(self, part) -> None:
        self.pending.append(part)
        size = sum(p[0].shape[0] for p in self.pending)
        if self.merged is None or size >= self.merged[0].shape[0] or len(self.pending) > 64:
            self.merged = merge_distinct(([self.merged] if self.merged is not None else []) + self.pending)
            self.pending = []

    def result(self):
        return merge_distinct(([self.merged] if self.merged is not None else []) + self.pending)


def weighted_from(plan: Plan, keys: np.ndarray, counts: np.ndarray, n_rows: int) -> WeightedData:
    """The table of the distinct rows ``keys`` (:func:`_keys`) with their ``counts``, ``n_rows`` in all."""
    if n_rows == 0:
        raise DataError(f"{plan.source} has a header but no data rows.")
    return _weighted(plan, _decode(keys, plan.radix), counts, n_rows)


def _weighted(plan: Plan, codes: np.ndarray, counts: np.ndarray, n_rows: int) -> WeightedData:
    """:func:`weighted_from` of rows already decoded (state codes, -1 = missing)."""
    notes = plan.notes + (f"Read in chunks: {n_rows:,} rows, {codes.shape[0]:,} distinct.",)
    return WeightedData(
        None,
        codes,
        tuple(plan.columns),
        tuple(plan.states),
        plan.class_column,
        plan.source,
        notes,
        weights=np.asarray(counts, dtype=np.int64),
    )


# ====================================================================== the passes, on a runner
def levels_part(df: pd.DataFrame, row0: int, columns: Sequence[str]) -> dict:
    """Pass 1 on one piece of a file (:meth:`bnfk_core.data.runners.Runner.map_frames`):
    :func:`chunk_levels`."""
    return chunk_levels(df, columns, row0)


def levels_rows_part(df: pd.DataFrame, row0: int, columns: Sequence[str]) -> tuple:
    """Pass 1 of :func:`read_counts` on one piece of a file: :func:`chunk_levels_rows`."""
    return chunk_levels_rows(df, columns, row0)


def distinct_part(df: pd.DataFrame, row0: int, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Pass 2 of :func:`read_counts` on one piece of a file: :func:`chunk_distinct`."""
    return chunk_distinct(df, plan)


def codes_part(df: pd.DataFrame, row0: int, plan: Plan, dtype, fn, args: tuple):
    """``fn(codes, row0, *args)`` of one piece of a file encoded by ``plan`` (a pass of the row-wise
    analyses)."""
    return fn(encode_chunk(df, plan, dtype), row0, *args)


def levels_pass(runner, layout: FileLayout, path, report=None, share: float = 1.0) -> tuple[dict, int]:
    """Pass 1 over the file on ``runner``: the merged raw-text level counts of every column and the row
    count."""
    merged, rows = None, 0
    name = os.path.basename(layout.path)
    for n, part, done in runner.map_frames(levels_part, layout, (layout.header,)):
        merged = part if merged is None else merge_levels([merged, part])
        rows += n
        if report is not None:
            report(share * done, f"Reading {name}: pass 1 of 2 (levels), {rows:,} rows")
    if rows == 0:
        raise DataError(f"{layout.shown} has a header but no data rows.")
    return merged, rows


def _check_chunksize(chunksize) -> int:
    if isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)) or int(chunksize) < 1:
        raise DataError(f"chunksize must be a positive number of rows, not {chunksize!r}.")
    return int(chunksize)


# ====================================================================== entry point
def read_counts(
    path,
    *,
    chunksize: int = DEFAULT_CHUNKSIZE,
    class_column=None,
    missing_policy="missing",
    discretize_bins=4,
    max_levels=50,
    drop_columns=(),
    model=None,
    fmt: str | None = None,
    source=None,
    engine: str = "local",
    scheduler: str | None = None,
    client=None,
    blocksize="64MB",
    progress=None,
    na_values=None,
    runner=None,
) -> WeightedData:
    """The distinct rows of a CSV or Parquet file with their multiplicities, read ``chunksize`` rows at
    a time (two passes; see the module docstring).  The options are those of
    :func:`bnfk_core.data.table.load_csv`.

    Both passes run on ``runner`` (:mod:`bnfk_core.data.runners`), else on the runner of ``engine``:
    ``engine="dask"`` runs them on a Dask cluster (``scheduler`` is the scheduler's address, or give a
    ``distributed.Client`` as ``client``; without either, a local cluster of processes is started for the
    call, partitions of ``blocksize`` bytes).  The result is the same.

    ``progress`` (optional) is called as ``progress(fraction, message)`` after every chunk:
    pass 1 covers fractions 0 to 0.5 (by the bytes read), pass 2 0.5 to 1 (by the rows encoded).  It only
    reports -- the result does not depend on it -- and an exception it raises stops the reading.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV or Parquet file (``fmt`` overrides the extension).
    chunksize : int
        Rows read at a time.
    class_column, missing_policy, discretize_bins, max_levels, drop_columns, model, na_values
        As :func:`bnfk_core.data.table.load_csv`.
    engine, scheduler, client, blocksize, runner
        Where the passes run (above).
    progress : callable, optional

    Returns
    -------
    WeightedData
        The distinct rows (``codes``) and their ``weights``; ``n_rows`` is the file's row count.

    Raises
    ------
    DataError
        The same refusals as :func:`bnfk_core.data.table.load_csv`, decided on the chunks.
    """
    if runner is None:
        if engine not in ENGINES:
            raise DataError(f"Unknown engine '{engine}'; choose local or dask.")
        if engine == "local":
            _check_chunksize_loose(chunksize)
        with runner_for(
            engine, chunksize=chunksize, scheduler=scheduler, client=client, blocksize=blocksize
        ) as r:
            return read_counts(
                path,
                class_column=class_column,
                missing_policy=missing_policy,
                discretize_bins=discretize_bins,
                max_levels=max_levels,
                drop_columns=drop_columns,
                model=model,
                fmt=fmt,
                source=source,
                progress=progress,
                na_values=na_values,
                runner=r,
            )
    # on a runner with workers, the file's records are scanned there (:func:`file_layout`)
    layout = getattr(runner, "file_layout", file_layout)(path, fmt, source)
    name = os.path.basename(layout.path)
    report = progress or (lambda fraction, message: None)
    report(0.0, f"Reading {name}: pass 1 of 2 (levels)…")
    options = dict(
        class_column=class_column,
        missing_policy=missing_policy,
        discretize_bins=discretize_bins,
        max_levels=max_levels,
        drop_columns=drop_columns,
        model=model,
        source=source,
        na_values=na_values,
    )
    if getattr(runner, "map_frames_kept", None) is not None and not (
        layout.fmt == "csv" and layout.quoted_blanks
    ):
        return _read_counts_kept(runner, layout, name, report, options)
    levels, row0, kept = None, 0, []
    for n, (part, rows), done in runner.map_frames(levels_rows_part, layout, (layout.header,)):
        levels = part if levels is None else merge_levels([levels, part])
        kept.append((part, rows))
        row0 += n
        report(0.5 * done, f"Reading {name}: pass 1 of 2 (levels), {row0:,} rows")
    if row0 == 0:
        raise DataError(f"{layout.shown} has a header but no data rows.")
    plan = plan_from_levels(levels, layout, **options)
    if all(rows is not None for _, rows in kept):  # the chunks' rows were kept: pass 2 does not read the file
        merger = Merger()
        kept.reverse()
        n = 0
        while kept:
            part, rows = kept.pop()
            merger.add(rows_to_distinct(part, rows, layout.header, plan))
            n += int(rows[1].sum())
            report(
                0.5 + 0.5 * min(n / row0, 1.0),
                f"Reading {name}: pass 2 of 2 (distinct rows), {n:,} of {row0:,} rows",
            )
        keys, counts = merger.result()
        return weighted_from(plan, keys, counts, row0)
    kept.clear()
    keys, counts, n = _distinct_pass(runner, layout, plan, name, row0, report)
    return weighted_from(plan, keys, counts, n)


def _distinct_pass(runner, layout: FileLayout, plan: Plan, name: str, row0: int, report) -> tuple:
    """Pass 2 that reads the file again (a chunk's own keys would not fit in 62 bits): ``(keys, counts,
    rows)``."""
    merger, n = Merger(), 0
    for rows, part, _ in runner.map_frames(distinct_part, layout, (plan,)):
        merger.add(part)
        n += rows
        report(
            0.5 + 0.5 * min(n / row0, 1.0),
            f"Reading {name}: pass 2 of 2 (distinct rows), {n:,} of {row0:,} rows",
        )
    keys, counts = merger.result()
    return keys, counts, n


def _levels_of(piece: tuple) -> dict:
    """The levels of a piece of pass 1 (:func:`levels_rows_part`)."""
    return piece[0]


def _kept_distinct(piece: tuple, columns: Sequence[str], plan: Plan) -> tuple:
    """Pass 2 of a piece of pass 1 kept where it was read: :func:`rows_to_distinct`, or None when its rows
    were not kept (keys of more than 62 bits)."""
    levels, rows = piece
    return None if rows is None else rows_to_distinct(levels, rows, columns, plan)


def _merged_distinct(parts: list) -> tuple | None:
    """:func:`merge_distinct` of pieces of pass 2 (None when one is None)."""
    return None if any(p is None for p in parts) else merge_distinct(parts)


def _decoded(merged: tuple | None, radix: Sequence[int]) -> tuple | None:
    """Merged distinct rows ``(keys, counts)`` as ``(state codes, counts)`` (on the worker holding them: the
    client receives the codes it reads and decodes nothing)."""
    return None if merged is None else (_decode(merged[0], radix), merged[1])


def _read_counts_kept(runner, layout: FileLayout, name: str, report, options: dict) -> WeightedData:
    """:func:`read_counts` on a runner that keeps pieces on its workers (Dask): pass 1 runs where each
    partition is read and only its levels come here; pass 2 and the merges of the distinct rows run there
    too (integer counts: the same rows and counts in any order), and the merged rows come here once."""
    levels, row0 = None, 0
    kept = []
    for n, piece, part, done in runner.map_frames_kept(
        levels_rows_part, layout, (layout.header,), _levels_of
    ):
        levels = part if levels is None else merge_levels([levels, part])
        kept.append(piece)
        row0 += n
        report(0.5 * done, f"Reading {name}: pass 1 of 2 (levels), {row0:,} rows")
    if row0 == 0:
        raise DataError(f"{layout.shown} has a header but no data rows.")
    plan = plan_from_levels(levels, layout, **options)
    report(0.5, f"Reading {name}: pass 2 of 2 (distinct rows) on the workers…")
    merged = runner.reduce_kept(
        _merged_distinct,
        runner.keep(_kept_distinct, kept, (layout.header, plan)),
        functools.partial(_decoded, radix=plan.radix),
    )
    del kept
    if merged is None:  # a piece's own keys did not fit in 62 bits: pass 2 reads the file again
        keys, counts, _ = _distinct_pass(runner, layout, plan, name, row0, report)
        merged = _decode(keys, plan.radix), counts
    report(1.0, f"Reading {name}: pass 2 of 2 (distinct rows), {row0:,} of {row0:,} rows")
    return _weighted(plan, merged[0], merged[1], row0)


def _check_chunksize_loose(chunksize) -> None:
    if int(chunksize) < 1:
        raise DataError(f"chunksize must be a positive number of rows, not {chunksize!r}.")


# ====================================================================== rows in chunks, aligned to a model
class CodeChunks:
    """A CSV or Parquet file's rows as state codes aligned to ``model``, ``chunksize`` rows at a time.

    Construction runs pass 1 (every raw cell text per column, :func:`chunk_levels` / :func:`merge_levels`,
    on ``runner``: here unless given) and derives the model's codecs with :func:`plan_from_levels` -- the same
    checks and the same codes as ``load_csv(path, model=model)``; iterating runs pass 2 here and yields
    ``(first row, codes)`` with ``codes`` an (rows, n_vars) int array in the model's variable order (-1 =
    missing); :meth:`map` runs a function of a chunk's codes on the runner.  It can be iterated any number
    of times (each iteration reads the file again).  ``n_rows`` and ``plan`` (states, notes) are known after
    construction.  The options are those of :func:`bnfk_core.data.table.load_csv`.
    """

    def __init__(
        self,
        path,
        model,
        *,
        chunksize: int = DEFAULT_CHUNKSIZE,
        class_column=None,
        missing_policy="missing",
        discretize_bins=4,
        max_levels=50,
        drop_columns=(),
        fmt=None,
        source=None,
        na_values=None,
        runner=None,
    ):
        self.chunksize = _check_chunksize(chunksize)
        self.runner = LocalRunner(self.chunksize) if runner is None else runner
        self.layout = file_layout(path, fmt, source)
        merged, self.n_rows = levels_pass(self.runner, self.layout, path)
        self.plan = plan_from_levels(
            merged,
            self.layout,
            class_column=class_column,
            missing_policy=missing_policy,
            discretize_bins=discretize_bins,
            max_levels=max_levels,
            drop_columns=drop_columns,
            model=model,
            source=source,
            na_values=na_values,
        )
        self.variables = tuple(self.plan.columns)
        self.states = tuple(self.plan.states)
        self.source = self.plan.source
        r = max((len(st) for st in self.states), default=1)
        self.dtype = np.int8 if r < 127 else (np.int16 if r < 2**15 - 1 else np.int32)

    def encode(self, chunk: pd.DataFrame) -> np.ndarray:
        return encode_chunk(chunk, self.plan, self.dtype)

    def map(self, fn, args: tuple = ()):
        """``fn(codes, row0, *args)`` for every chunk of the file, on the runner, in file order: yields
        ``(rows, result, fraction of the file done)`` (``row0`` is 0 for a Dask partition)."""
        return self.runner.map_frames(codes_part, self.layout, (self.plan, self.dtype, fn, args))

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        row0 = 0
        for chunk in iter_chunks(self.layout, self.chunksize):
            codes = self.encode(chunk)
            yield row0, codes
            row0 += codes.shape[0]

    def data(self, codes: np.ndarray) -> CategoricalData:
        """A chunk's codes as :class:`CategoricalData` (no text frame; aligned to the model as is)."""
        return CategoricalData(
            None,
            np.asarray(codes, dtype=np.int32),
            self.variables,
            self.states,
            None,
            self.source,
            self.plan.notes,
        )

    def rows(self, indices) -> pd.DataFrame:
        """The raw text rows (as in the file, every column) with the given 0-based data-row numbers, in the
        order given (one more pass)."""
        indices = np.asarray(indices, dtype=np.int64)
        order = np.argsort(indices, kind="stable")
        want = indices[order]
        parts, row0 = [], 0
        for chunk in iter_chunks(self.layout, self.chunksize):
            a, b = np.searchsorted(want, [row0, row0 + len(chunk)])
            if b > a:
                parts.append(chunk.iloc[want[a:b] - row0])
            row0 += len(chunk)
        got = pd.concat(parts) if parts else pd.DataFrame(columns=list(self.layout.header))
        out = got.iloc[np.argsort(order, kind="stable")]
        return out.reset_index(drop=True)


def iter_codes(
    path, model, chunksize: int = DEFAULT_CHUNKSIZE, **options
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first row, codes)`` for the rows of ``path`` aligned to ``model``, ``chunksize`` rows at a
    time: together the codes ``load_csv(path, model=model, **options)`` gives (:class:`CodeChunks`)."""
    yield from CodeChunks(path, model, chunksize=chunksize, **options)


# ====================================================================== too big to hold
#: peak memory of a command's in-memory path per byte of its CSV file, rounded up: ``learn``, ``impute`` and
#: ``prototypes`` on the letter-like 2 M-row CSV of benchmarks/bench_stream.py (95 MB) took 4.1, 5.8 and 9.6
#: GB
HOLD_BYTES_PER_FILE_BYTE = {
    "learn": 48,
    "impute": 64,
    "prototypes": 104,
    # not measured on their own: they hold the file as ``learn`` does (a table and codes)
    "loglik": 48,
    "mmd": 48,
}


def held_bytes(path, command: str = "learn") -> int | None:
    """The memory ``command`` would take to hold the file ``path`` whole (its size times
    :data:`HOLD_BYTES_PER_FILE_BYTE`), decided before reading it; None if it cannot be sized."""
    try:
        return int(os.path.getsize(path)) * HOLD_BYTES_PER_FILE_BYTE[command]
    except (OSError, TypeError, ValueError):
        return None


def too_big_to_hold(path, command: str = "learn", max_bytes: float | None = None) -> bool:
    """Whether ``command`` reads ``path`` in chunks without being asked: holding it whole would take more than
    ``max_bytes`` (default: the run's memory limit, :func:`bnfk_core.data.limits.memory_limit` -- the CLI's
    ``--max-memory``; no limit: never)."""
    budget = memory_limit() if max_bytes is None else max_bytes
    need = held_bytes(path, command)
    return need is not None and budget is not None and math.isfinite(budget) and need > budget


def chunked_note(path, command: str = "learn", max_bytes: float | None = None) -> str:
    """The sentence saying why ``path`` was read in chunks without being asked."""
    budget = memory_limit() if max_bytes is None else max_bytes
    return (
        f"{printable(os.path.basename(str(path)))} would take about "
        f"{format_bytes(held_bytes(path, command))} "
        f"in memory, more than the memory limit ({format_bytes(budget)}), so it was read in chunks."
    )
