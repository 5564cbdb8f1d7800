"""A CSV file's records exactly as written (:class:`RawTable`, :func:`read_table`) and how one record is
written back (:func:`format_record`): what the imputation writers give back with only chosen cells changed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from .reading import (
    parse,
    printable,
    read_input,
    read_raw_text,
    records,
    refuse_non_csv_text,
    sniff_delimiter,
    source_name,
)

__all__ = ["format_record", "RawTable", "read_table"]


def format_record(rec: Sequence[str], delimiter: str) -> str:
    """One CSV record as text: fields joined by ``delimiter``, quoted only where they must be (a
    delimiter, quote, carriage return or line feed inside), and ``""`` for a record of one empty field
    (so that it is not read back as a blank line)."""
    if len(rec) == 1 and rec[0] == "":
        return '""'
    special = (delimiter, '"', "\r", "\n")
    return delimiter.join(
        '"' + f.replace('"', '""') + '"' if any(c in f for c in special) else f for f in rec
    )


@dataclass(frozen=True, eq=False)
class RawTable:
    """A CSV file's records exactly as written: the cells are not trimmed and no token means missing.

    What :func:`load_csv` turns into codes, this keeps as text, so that a writer can give a file back
    with only chosen cells changed (:meth:`to_text`): every other cell keeps its text (padding
    included), and the header, blank lines, column order and row order stay as they were.

    Attributes
    ----------
    records : tuple of list of str
        Every CSV record in file order (the header, blank lines and the data rows).
    header : tuple of str
        The column names as :func:`load_csv` reads them (trimmed; a trailing empty column left out).
    rows : ndarray of int
        For each data row of :func:`load_csv` (same order), its index in ``records``.
    lines : ndarray of int
        The 1-based file line on which each data row starts.
    delimiter, newline : str
        The file's delimiter and line end (``"\\r\\n"``, ``"\\r"`` or ``"\\n"``, the first one used).
    bom : bool
        Whether the file began with a byte-order mark.
    source : str
    """

    records: tuple
    header: tuple
    rows: np.ndarray
    lines: np.ndarray
    delimiter: str
    newline: str
    bom: bool
    source: str

    @property
    def n_rows(self) -> int:
        return int(len(self.rows))

    def column(self, name: str) -> int:
        """The position of column ``name`` in every record."""
        try:
            return self.header.index(name)
        except ValueError:
            raise DataError(f"Column '{name}' is not in {self.source}.") from None

    def cells(self, name: str) -> list:
        """The raw text of column ``name`` in every data row."""
        j = self.column(name)
        return [self.records[r][j] for r in self.rows]

    def to_text(self, changes=None) -> str:
        """The file as text, with ``changes[(row, column name)] = text`` put into those cells.

        Fields are written with the file's delimiter and line end and quoted only where they must
        be (a delimiter, quote, carriage return or line feed inside), so parsing the result with the ``csv``
        module gives every unchanged field exactly as parsing the original does.
        """
        by_record: dict = {}
        for (row, name), value in (changes or {}).items():
            by_record.setdefault(int(self.rows[int(row)]), {})[self.column(name)] = str(value)
        out = []
        for k, rec in enumerate(self.records):
            new = by_record.get(k)
            if new:
                rec = list(rec)
                for j, value in new.items():
                    rec[j] = value
            out.append(format_record(rec, self.delimiter))
            out.append(self.newline)
        return "".join(out)

    def to_bytes(self, changes=None) -> bytes:
        """:meth:`to_text` encoded as UTF-8 (with a byte-order mark when the file had one)."""
        return ("\ufeff" if self.bom else "").encode("utf-8") + self.to_text(changes).encode("utf-8")


def read_table(path_or_buffer=None, *, text=None, source=None) -> RawTable:
    """Read a CSV file's records as written (same inputs and the same errors as :func:`load_csv`).

    The data rows are those :func:`load_csv` reads, in the same order, so ``table.rows[n]`` is the
    record of ``data.codes[n]``.
    """
    obj = read_input(path_or_buffer, text, "read_table")
    source = printable(str(source)) if source is not None else source_name(obj)
    try:
        raw, _, bom = read_raw_text(obj, source)
        norm = raw.replace("\r\n", "\n").replace("\r", "\n") if "\r" in raw else raw
        refuse_non_csv_text(norm, source)
        header, _, lines, _ = parse(norm, source)  # the loader's checks, header and rows
        recs = records(raw, sniff_delimiter(norm), source)
    except DataError:
        raise
    except Exception as exc:  # the safety net, as in load_csv
        raise DataError(f"Could not read {source}: {type(exc).__name__}: {exc}.") from exc
    rows = np.array([k for k, (_, _, kind) in enumerate(recs) if kind == "row"], dtype=np.int64)
    starts = np.array([recs[k][1] for k in rows], dtype=np.int64)
    if len(rows) != len(lines) or not (starts == lines).all():
        raise DataError(
            f"The records of {source} could not be matched to its rows; save it with one kind of line end."
        )
    m = re.search(r"\r\n|\r|\n", raw)
    newline = m.group(0) if m else "\n"
    return RawTable(
        tuple(rec for rec, _, _ in recs),
        tuple(header),
        rows,
        lines,
        sniff_delimiter(norm),
        newline,
        bom,
        source,
    )
