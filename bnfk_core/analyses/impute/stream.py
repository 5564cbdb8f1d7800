"""Imputation of a CSV file of any size: read in blocks of records, written block by block.

:func:`impute_file` writes the file that the in-memory path (``load_csv`` + :func:`impute_with_model`
+ :func:`complete_file`, i.e. ``impute`` without ``--chunksize``) writes -- byte for byte, with the same
probabilities file -- while holding one block of records at a time:

1. **Scan** (bytes): the file is cut into blocks of about ``block_bytes`` at line ends outside quoted
   fields (an even number of ``"`` before the cut), and every block's first line number is counted
   (:func:`bnfk_core.data.reading.scan_blocks`, the one text reader's blocks).
2. **Pass 1** (per block): the records are parsed as the in-memory reader parses them (Python's
   ``csv`` module, or ``str.split`` for a block without quotes or carriage returns, which gives the same
   fields), and each model column's raw cell texts are counted.  The client merges the counts, checks the
   file as :func:`bnfk_core.data.table.load_csv` does (header, field counts, the trailing-delimiter quirk) and
   derives the codecs from the model's states (:func:`bnfk_core.data.stream.plan_from_levels`), and the text
   a filled cell of a discretized column gets (the median of the file's observed values in the bin).
3. **Pass 2** (per block): cells are encoded, every missing model cell gets the exact posterior
   (:func:`bnfk_core.analyses.impute.core.merged_posterior`: rows sharing a context calibrated once), and the
   block's records are written with only those cells changed (every record through
   :func:`bnfk_core.data.table.format_record`, as the in-memory writer does).

Blocks are independent given the client's plan, so both passes run on a runner
(:mod:`bnfk_core.data.runners`):
here, or with ``engine="dask"`` on a Dask cluster (the same block functions; the client merges pass 1 and
writes pass 2's blocks in order): the output is identical.  The text must be UTF-8 (with or without a
byte-order mark) or, as the in-memory reader falls back to, latin-1; UTF-16 files are refused with a sentence
saying so.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...data.binning import MISSING_CATEGORY, parse_interval
from ...data.files import atomic_path, open_regular, same_file
from ...data.raw_table import format_record
from ...data.reading import (
    DELIM_NAMES,
    FileLayout,
    TextFile,
    block_records,
    check_header,
    is_blank,
    line_breaks,
    open_text,
    read_block,
    read_header,
    scan_blocks,
)
from ...data.runners import ENGINES, runner_for
from ...data.stream import chunk_levels, merge_levels, plan_from_levels
from ...errors import DataError
from .completion import FILL_NUMERIC, filled_column, number
from .core import ImputeError, cell_frame, merged_posterior

__all__ = ["impute_file", "DEFAULT_BLOCK_ROWS"]

DEFAULT_BLOCK_ROWS = 200_000
PROBABILITY_COLUMNS = ("row", "line", "column", "imputed", "filled", "state", "probability")
Progress = Callable[[float, str], None]


class _Parsed:
    """One block's data rows: their fields by column, file lines, the blank lines after the header, and how
    to write the block back with some cells changed.

    A block without quotes whose line ends are all the same (``\n``, or ``\r\n``) and whose lines all
    have the header's field count is parsed by pandas' C reader (every field is the text between
    delimiters, as the ``csv`` module reads it) and written back line by line: an unchanged line is
    copied, which is what :func:`format_record` gives for fields without specials.  Any other block goes
    through :func:`block_records`."""

    def __init__(self, text: str, tf: TextFile, first_line: int, first: bool):
        self.tf, self.n = tf, len(tf.header)
        self.blanks, self.bad, self.frame, self.recs = [], None, None, None
        if not self._fast(text, first_line, first):
            self._general(text, first_line, first)

    # ---------------------------------------------------------------- the two readers
    def _fast(self, text: str, first_line: int, first: bool) -> bool:
        if '"' in text:
            return False
        if "\r" in text:
            if not (text.count("\r") == text.count("\r\n") == text.count("\n")):
                return False
            nl = "\r\n"
        else:
            nl = "\n"
        lines = text.split(nl)
        if lines and lines[-1] == "":
            lines.pop()
        skip = 1 if first else 0
        if first and (not lines or is_blank(lines[0].split(self.tf.delimiter))):
            return False
        d = self.tf.delimiter
        body = lines[skip:]
        if any(ln.count(d) != self.n - 1 for ln in body):
            return False  # blank lines or a wrong field count: the general reader says which
        self.nl, self.lines, self.skip = nl, lines, skip
        self.row_lines = first_line + skip + np.arange(len(body), dtype=np.int64)
        if body:
            at = len(lines[0]) + len(nl) if first else 0
            self.frame = pd.read_csv(
                io.StringIO(text[at:]),
                sep=d,
                header=None,
                names=list(range(self.n)),
                dtype=str,
                na_filter=False,
                keep_default_na=False,
                quoting=csv.QUOTE_NONE,
                skip_blank_lines=False,
                engine="c",
                lineterminator=None,
            )
        else:
            self.frame = pd.DataFrame({j: pd.Series(dtype=object) for j in range(self.n)})
        return True

    def _general(self, text: str, first_line: int, first: bool) -> None:
        recs, starts, _ = block_records(text, self.tf.delimiter, first_line, self.tf.source)
        rows, seen = [], not first
        for k, rec in enumerate(recs):
            if is_blank(rec):
                if seen:
                    self.blanks.append(starts[k])
            elif not seen:
                seen = True
            else:
                rows.append(k)
        self.recs, self.rows = recs, rows
        self.row_lines = np.asarray([starts[k] for k in rows], dtype=np.int64)
        bad = [k for k in rows if len(recs[k]) != self.n]
        if bad:
            self.bad = (starts[bad[0]], len(recs[bad[0]]))

    # ---------------------------------------------------------------- reading
    @property
    def n_rows(self) -> int:
        return len(self.row_lines)

    def column(self, j: int) -> np.ndarray:
        """The raw texts of field ``j`` of every data row (object array)."""
        if self.frame is not None:
            return self.frame[j].to_numpy(dtype=object)
        return np.array([self.recs[k][j] for k in self.rows], dtype=object)

    # ---------------------------------------------------------------- writing
    def text(self, changes: dict, bom: bool) -> str:
        """The block with ``changes[(row, field)] = text`` applied, as the in-memory writer writes it."""
        nl, d = self.tf.newline, self.tf.delimiter
        if self.frame is not None:
            lines = list(self.lines)
            by_row: dict = {}
            for (r, j), t in changes.items():
                by_row.setdefault(r, {})[j] = t
            quoted: dict = {}  # the other fields need no quotes: only a filled text may
            for r, new in by_row.items():
                fields = lines[self.skip + r].split(d)
                for j, t in new.items():
                    q = quoted.get(t)
                    fields[j] = q if q is not None else quoted.setdefault(t, format_record([t, ""], d)[:-1])
                lines[self.skip + r] = d.join(fields)
            recs_text = lines
        else:
            recs = self.recs
            for (r, j), t in changes.items():
                recs[self.rows[r]][j] = t
            recs_text = [format_record(rec, d) for rec in recs]
        out = nl.join(recs_text) + (nl if recs_text else "")
        return ("\ufeff" if bom else "") + out


# ====================================================================== pass 1
@dataclass
class _Pass1:
    """What pass 1 learns from one block."""

    bad_byte: int | None  # the file offset of the first byte not valid in the encoding
    n_rows: int = 0
    blanks: tuple = ()
    last_row_line: int = 0
    bad: tuple | None = None  # (line, field count) of the first row whose field count differs from the header
    quirk: bool = True  # every row has the header's field count and a blank last field
    levels: dict | None = None


def _pass1_block(item: tuple, tf: TextFile, columns: Sequence[int], names: Sequence[str]) -> _Pass1:
    index, block = item
    text = read_block(tf, block)
    if isinstance(text, int):
        return _Pass1(text)
    pb = _Parsed(text, tf, block.first_line, index == 0)
    lines = pb.row_lines
    out = _Pass1(None, pb.n_rows, tuple(pb.blanks), int(lines[-1]) if len(lines) else 0)
    if pb.bad is not None:
        out.bad, out.quirk = pb.bad, False
        return out
    out.quirk = not pb.n_rows or not any(t.strip() for t in pb.column(len(tf.header) - 1))
    frame = pd.DataFrame({name: pb.column(j) for name, j in zip(names, columns)}, dtype=object)
    lv = chunk_levels(frame, names, 0)
    for fr in lv.values():  # "first" holds the first occurrence's file line - 2 (plan_from_levels adds 2)
        fr["first"] = lines[fr["first"].to_numpy()] - 2 if len(lines) else fr["first"]
    out.levels = lv
    return out


# ====================================================================== pass 2
@dataclass
class _Job:
    """What pass 2 needs besides the block: model, header positions, codecs and fill texts."""

    model: object
    positions: tuple  # field index of every model variable
    codecs: tuple
    fill: tuple  # per variable, the text written for each state
    probabilities: bool


def _pass2_block(item: tuple, tf: TextFile, job: _Job, offsets: np.ndarray) -> dict:
    index, block = item
    first, row_offset = index == 0, int(offsets[index])
    pb = _Parsed(read_block(tf, block), tf, block.first_line, first)
    model = job.model
    codes = np.empty((pb.n_rows, model.n_vars), dtype=np.int64)
    for i, (j, codec) in enumerate(zip(job.positions, job.codecs)):
        codes[:, i] = codec.encode(pb.column(j), model.variables[i], tf.source)
    cells = merged_posterior(model, codes) if (codes < 0).any() else {}
    changes = {}
    for i, (rr, P) in cells.items():
        texts = np.asarray(job.fill[i], dtype=object)[np.argmax(P, axis=1)]
        j = job.positions[i]
        changes.update(((r, j), t) for r, t in zip(rr.tolist(), texts.tolist()))
    data = pb.text(changes, first and tf.bom).encode("utf-8")
    res = {
        "bytes": data,
        "n_rows": pb.n_rows,
        "imputed": {int(i): len(rr) for i, (rr, _) in cells.items()},
        "prob_sum": {int(i): float(P.max(axis=1).sum()) for i, (_, P) in cells.items()},
        "filled_states": {int(i): np.unique(np.argmax(P, axis=1)).tolist() for i, (_, P) in cells.items()},
    }
    if job.probabilities:
        fr = cell_frame(cells, model.variables, model.states, row_offset)
        local = fr["row"].to_numpy(dtype=np.int64) - row_offset
        fr.insert(1, "line", pb.row_lines[local])
        texts = {model.variables[i]: dict(zip(model.states[i], job.fill[i])) for i in cells}
        fr.insert(fr.columns.get_loc("imputed") + 1, "filled", filled_column(fr, texts))
        res["probabilities"] = fr.to_csv(index=False, header=False).encode("utf-8")
    return res


# ====================================================================== the client
def _check_rows(tf: TextFile, parts: list, header: tuple) -> tuple[tuple, list]:
    """The checks of :func:`bnfk_core.data.table._parse` over pass 1's summaries: (header used, notes)."""
    notes = []
    n_rows = sum(p.n_rows for p in parts)
    if not n_rows:
        raise DataError(f"{tf.source} has a header but no data rows.")
    n = len(header)
    last = max(p.last_row_line for p in parts)
    blanks = [b for p in parts for b in p.blanks if b < last]
    if blanks:
        notes.append(f"{len(blanks)} blank line(s) of {tf.source} were skipped (first: line {blanks[0]}).")
    if n > 1 and header[-1] == "" and all(p.quirk for p in parts):
        header = header[:-1]
        notes.append(
            f"Every line of {tf.source} ends with a {DELIM_NAMES[tf.delimiter]}; "
            "the empty last column was ignored."
        )
    else:
        bad = [p.bad for p in parts if p.bad is not None]
        if bad:
            line, k = bad[0]
            fields = "1 field" if k == 1 else f"{k} fields"
            raise DataError(
                f"Line {line} of {tf.source} has {fields} but the header has {n}"
                f" ({DELIM_NAMES[tf.delimiter]}-separated); fix or remove that line."
            )
    check_header(header, tf.source)
    if tf.delimiter != ",":
        notes.append(f"{tf.source} is {DELIM_NAMES[tf.delimiter]}-separated.")
    return header, notes


def _bin_median(values: list):
    """``(text, None)`` or ``(None, (value, rank))`` for one bin's observed values ``[(x, text, count)]``.

    The median is the lower middle value in the order (value, row) -- :func:`complete_file`'s rule; when
    the rows holding that value write it differently (``1.0`` and ``1``), which text it is depends on the
    row order, and ``(value, rank among the rows holding it)`` says which row to look up."""
    vals = sorted(values)
    m, below = (sum(c for _, _, c in vals) - 1) // 2, 0
    for x, group in itertools.groupby(vals, key=lambda v: v[0]):
        group = list(group)
        size = sum(c for _, _, c in group)
        if below + size > m:
            texts = {t for _, t, _ in group}
            return (group[0][1], None) if len(texts) == 1 else (None, (x, m - below))
        below += size
    raise AssertionError("unreachable: the median lies in some group")


def _fill_texts(model, plan, levels: dict, fill_numeric: str) -> tuple[list, list]:
    """Per model variable, the text a filled cell gets for each state (the state's name, or for a
    discretized variable under ``median`` the median of the file's observed values in the bin, from pass
    1's counts of raw texts), and the look-ups ``(variable, state, value, rank)`` the counts cannot settle."""
    fills, ambiguous = [], []
    for i, (name, states) in enumerate(zip(model.variables, model.states)):
        text = list(states)
        real = [s for s in states if s != MISSING_CATEGORY]
        if fill_numeric == "median" and real and all(parse_interval(s) is not None for s in real):
            codec, fr = plan.codecs[i], levels[name]
            code_of = dict(zip(codec.raw.tolist(), codec.code.tolist()))
            by_bin: dict = {}
            for raw, c in zip(fr.index.tolist(), fr["count"].tolist()):
                x = number(raw)
                if code_of[raw] >= 0 and x is not None:
                    by_bin.setdefault(code_of[raw], []).append((x, raw.strip(), int(c)))
            for k, values in by_bin.items():
                median, lookup = _bin_median(values)
                if lookup is None:
                    text[k] = median
                else:
                    ambiguous.append((i, k) + lookup)
            text = [t if t is not None else states[k] for k, t in enumerate(text)]
        fills.append(text)
    return fills, ambiguous


def _resolve_ambiguous(tf, blocks, model, plan, columns: dict, ambiguous: list, fills: list) -> None:
    """One more pass: the text of the rank-th row (in file order) holding value x in bin k of variable i."""
    todo = {(i, k): [x, rank] for i, k, x, rank in ambiguous}
    for b, block in enumerate(blocks):
        pb = _Parsed(read_block(tf, block), tf, block.first_line, b == 0)
        for (i, k), want in list(todo.items()):
            cells = pb.column(columns[model.variables[i]])
            codes = plan.codecs[i].encode(cells, model.variables[i], tf.source)
            for t in cells[codes == k].tolist():
                if number(t) == want[0]:
                    if want[1] == 0:
                        fills[i][k] = t.strip()
                        del todo[(i, k)]
                        break
                    want[1] -= 1
        if not todo:
            return


class _Null:
    """A stand-in for a file that is not written."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, _data) -> None:
        pass


@contextlib.contextmanager
def _maybe_atomic(path):
    if not path:
        yield None
        return
    with atomic_path(path) as tmp:
        yield tmp


def _on_blocks(runner, fn, tf, blocks, args: tuple, say, lo: float, hi: float):
    """``fn((index, block), tf, *args)`` for every block on ``runner``, in order, reporting progress."""
    n = len(blocks)
    for b, res in enumerate(runner.map(fn, list(enumerate(blocks)), (tf,) + tuple(args))):
        yield res
        say(lo + (hi - lo) * (b + 1) / n, f"block {b + 1} of {n}")


def impute_file(
    model,
    path,
    output,
    *,
    probabilities=None,
    fill_numeric: str = "median",
    block_rows: int = DEFAULT_BLOCK_ROWS,
    class_column=None,
    missing_policy: str = "missing",
    discretize_bins: int = 4,
    max_levels: int = 50,
    drop_columns=(),
    engine: str = "local",
    scheduler: str | None = None,
    client=None,
    progress: Progress | None = None,
    source: str | None = None,
    na_values=None,
) -> dict:
    """Fill the missing model cells of the CSV ``path`` with their most probable states into ``output``,
    reading and writing one block of about ``block_rows`` records at a time (module docstring).

    Returns ``{rows, imputed_cells, imputed_per_column, mean_probability, fill_numeric, blocks, engine,
    notes, seconds}``.  Both files are written atomically.  ``engine="dask"`` runs the blocks on a Dask
    cluster (``client``, else one at the ``scheduler`` address, else a local cluster of two processes).
    """
    t0 = time.perf_counter()
    fill_numeric = str(fill_numeric).lower()
    if fill_numeric not in FILL_NUMERIC:
        raise ImputeError(f"fill_numeric must be one of {', '.join(FILL_NUMERIC)}, not {fill_numeric!r}.")
    if engine not in ENGINES:
        raise ImputeError(f"engine must be 'local' or 'dask', not {engine!r}.")
    if int(block_rows) < 1:
        raise ImputeError(f"block_rows must be at least 1, not {block_rows!r}.")
    tf = open_text(path, source)
    for out in (output, probabilities):
        if out and same_file(out, path):
            raise ImputeError(
                f"Cannot write to {out}: that is the input file, which is never changed; choose another name."
            )
    with open_regular(tf.path) as fh:
        head = fh.read(1 << 16)
    per_line = len(head) / max(1, line_breaks(head))
    blocks = scan_blocks(tf, int(block_rows * per_line))
    if not blocks:
        raise DataError(f"{tf.source} is empty.")
    tf = TextFile(
        tf.path, tf.source, tf.encoding, tf.bom, tf.delimiter, tf.newline, tf.size, read_header(tf, blocks[0])
    )
    options = dict(
        class_column=class_column,
        missing_policy=missing_policy,
        discretize_bins=discretize_bins,
        max_levels=max_levels,
        drop_columns=drop_columns,
        na_values=na_values,
    )
    with runner_for(engine, scheduler=scheduler, client=client, error=ImputeError) as runner:
        return _impute(model, tf, blocks, output, probabilities, fill_numeric, runner, progress, t0, options)


def _impute(model, tf, blocks, output, probabilities, fill_numeric, runner, progress, t0, options) -> dict:
    say = progress or (lambda f, m="": None)
    header = tf.header
    names = [v for v in model.variables if v in header]
    columns = [header.index(v) for v in names]
    notes: list = []
    say(0.0, "pass 1: reading the file")
    parts = list(_on_blocks(runner, _pass1_block, tf, blocks, (columns, names), say, 0.0, 0.4))
    bad = [p.bad_byte for p in parts if p.bad_byte is not None]
    if bad:
        msg = (
            f"{tf.source} is not valid UTF-8 (byte {min(bad)}); it was read as latin-1, "
            "so check accented characters."
        )
        warnings.warn(msg, UserWarning, stacklevel=3)
        notes.append(msg)
        tf = tf.with_encoding("latin-1")
        parts = list(_on_blocks(runner, _pass1_block, tf, blocks, (columns, names), say, 0.0, 0.4))
    used, parse_notes = _check_rows(tf, parts, header)
    notes = parse_notes + notes
    levels = merge_levels(p.levels for p in parts)
    for v in names:
        levels.setdefault(
            v,
            pd.DataFrame(
                {"count": pd.Series(dtype=np.int64), "first": pd.Series(dtype=np.int64)},
                index=pd.Index([], dtype=object),
            ),
        )
    layout = FileLayout(tf.path, "csv", tuple(used), tf.delimiter, tf.encoding)
    plan = plan_from_levels(levels, layout, model=model, source=tf.source, **options)
    notes += list(plan.notes)
    fills, ambiguous = _fill_texts(model, plan, levels, fill_numeric)
    positions = {v: used.index(v) for v in model.variables}
    if ambiguous:
        _resolve_ambiguous(tf, blocks, model, plan, positions, ambiguous, fills)
    job = _Job(
        model, tuple(positions[v] for v in model.variables), plan.codecs, tuple(fills), bool(probabilities)
    )
    offsets = np.concatenate([[0], np.cumsum([p.n_rows for p in parts])]).astype(np.int64)
    imputed = np.zeros(model.n_vars, np.int64)
    filled_states: dict = {}
    prob_sum = 0.0
    say(0.4, "pass 2: imputing")
    with atomic_path(output) as tmp, _maybe_atomic(probabilities) as ptmp:
        with open(tmp, "wb") as out, open(ptmp, "wb") if ptmp else _Null() as pout:
            pout.write((",".join(PROBABILITY_COLUMNS) + "\n").encode("utf-8"))
            for res in _on_blocks(runner, _pass2_block, tf, blocks, (job, offsets), say, 0.4, 1.0):
                out.write(res["bytes"])
                if ptmp:
                    pout.write(res["probabilities"])
                for i, c in res["imputed"].items():
                    imputed[i] += c
                    filled_states.setdefault(i, set()).update(res["filled_states"][i])
                prob_sum += sum(res["prob_sum"].values())
    say(1.0, "done")
    total = int(imputed.sum())
    return {
        "rows": int(offsets[-1]),
        "imputed_cells": total,
        "imputed_per_column": {v: int(imputed[i]) for i, v in enumerate(model.variables) if imputed[i]},
        "mean_probability": prob_sum / total if total else float("nan"),
        "fill_numeric": fill_numeric,
        "blocks": len(blocks),
        "engine": runner.name,
        "notes": notes + _label_notes(model, levels, plan, fills, fill_numeric, filled_states),
        "seconds": time.perf_counter() - t0,
    }


def _label_notes(model, levels, plan, fills, fill_numeric, filled_states) -> list:
    """:func:`complete_file`'s note on filled bins of a discretized column that hold no observed value."""
    notes = []
    if fill_numeric != "median":
        return notes
    for i in sorted(filled_states):
        states = model.states[i]
        real = [s for s in states if s != MISSING_CATEGORY]
        if not (real and all(parse_interval(s) is not None for s in real)):
            continue
        empty = [
            states[k]
            for k in sorted(filled_states[i])
            if fills[i][k] == states[k] and not _has_value(levels[model.variables[i]], plan.codecs[i], k)
        ]
        if empty:
            notes.append(
                f"Column '{model.variables[i]}': no observed value lies in bin(s) {', '.join(empty)}, "
                "so those cells hold the bin's label."
            )
    return notes


def _has_value(fr, codec, k: int) -> bool:
    code_of = dict(zip(codec.raw.tolist(), codec.code.tolist()))
    return any(code_of[raw] == k and number(raw) is not None for raw in fr.index.tolist())
