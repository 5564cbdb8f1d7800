"""The one text reader: a data file's text checked, decoded and parsed into CSV records -- the whole of it
(:func:`read_text` + :func:`parse`, what :func:`bnfk_core.data.table.load_csv` reads), its layout and rows a
chunk at a time (:func:`file_layout`, :func:`iter_chunks`: what the chunked passes of
:mod:`bnfk_core.data.runners` read) or blocks of its bytes cut at record boundaries (:func:`open_text`,
:func:`scan_blocks`, :func:`read_block`:
imputation in blocks).  Every piece's records come from :func:`block_records`."""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError
from .files import NOT_FOUND, not_regular_message, open_regular, regular_file_problem

__all__ = [
    "FileLayout",
    "header_names",
    "file_layout",
    "iter_chunks",
    "chunks_done",
    "MAX_HEADER_BYTES",
    "DEFAULT_CHUNKSIZE",
    "DELIM_NAMES",
    "BINARY_MAGIC",
    "read_input",
    "printable",
    "source_name",
    "read_text",
    "check_file",
    "read_raw_text",
    "refuse_binary",
    "refuse_non_csv_text",
    "sniff_delimiter",
    "records",
    "parse",
    "check_header",
    "TextFile",
    "Block",
    "line_breaks",
    "open_text",
    "scan_blocks",
    "read_block",
    "block_records",
    "is_blank",
    "read_header",
]

#: rows of one chunk when nothing else is said
DEFAULT_CHUNKSIZE = 200_000

_DELIMITERS = (",", ";", "\t")


DELIM_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}


BINARY_MAGIC = {
    b"PK\x03\x04": "a ZIP archive (an .xlsx workbook?)",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"\x1f\x8b": "a gzip archive",
    b"\xd0\xcf\x11\xe0": "an old-style Excel/Office file",
}


def read_input(path_or_buffer, text, what: str):
    """What a reader reads: ``path_or_buffer``, or ``text=`` (a str) as a buffer -- exactly one of them."""
    if text is not None:
        if path_or_buffer is not None:
            raise DataError(f"Give {what} either a path or buffer or text=, not both.")
        if not isinstance(text, str):
            raise DataError(
                f"{what}(text=...) takes a str of CSV text, not a {type(text).__name__}; "
                "give bytes or a buffer as the first argument."
            )
        return io.StringIO(text)
    if path_or_buffer is None:
        raise DataError("No data given: pass a path, a buffer, bytes or text=.")
    return path_or_buffer


def printable(name: str) -> str:
    """``name`` for a one-line message: as is, or quoted with escapes when it holds control characters."""
    return name if name.isprintable() else repr(name)


def source_name(obj) -> str:
    if isinstance(obj, (str, os.PathLike)):
        name = Path(obj).name
        return printable(name or str(obj)) or "data"
    name = getattr(obj, "name", None)
    if isinstance(name, (str, os.PathLike)) and str(name):
        return printable(Path(name).name or str(name))
    return "uploaded data"


def read_text(obj, source: str) -> tuple[str, list]:
    """The text of ``obj`` with line ends normalised to ``\\n``, and notes."""
    text, notes, _ = read_raw_text(obj, source)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    refuse_non_csv_text(text, source)
    return text, notes


def check_file(obj) -> tuple[Path, str]:
    """``(Path, printable name)`` of a path naming an existing regular file, checked by ``stat`` before any
    ``open`` (:func:`bnfk_core.data.files.regular_file_problem`); else a DataError naming it: empty path, not
    found, or not a regular file -- a folder, FIFO, socket or device is refused without being opened, in
    one wording that does not say which of them it is."""
    path, shown = Path(obj), printable(str(obj))
    if str(obj) == "":
        raise DataError("No file given: the path is empty.")
    problem = regular_file_problem(path)
    if problem == NOT_FOUND:
        raise DataError(f"File not found: {shown}.")
    if problem is not None:
        raise DataError(not_regular_message(shown))
    return path, shown


def read_raw_text(obj, source: str) -> tuple[str, list, bool]:
    """The decoded text of ``obj`` with its own line ends, notes, and whether it began with a BOM."""
    notes: list = []
    if isinstance(obj, (str, os.PathLike)):
        path, shown = check_file(obj)
        try:
            with open_regular(path) as fh:
                data = fh.read()
        except OSError as exc:
            raise DataError(f"Cannot read {shown}: {exc.strerror or exc}.") from exc
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        data = bytes(obj)
    elif hasattr(obj, "getvalue") or hasattr(obj, "read"):
        try:
            data = obj.getvalue() if hasattr(obj, "getvalue") else obj.read()
        except Exception as exc:
            raise DataError(f"Cannot read {source}: {exc}.") from exc
    else:
        raise DataError(
            f"Cannot read data from a {type(obj).__name__}; give a path, a file-like object, bytes or text=."
        )

    bom = False
    if isinstance(data, (bytes, bytearray)):
        bom = bytes(data[:3]) == b"\xef\xbb\xbf"
        text = _decode(bytes(data), source, notes)
    elif isinstance(data, str):
        text = data
    else:
        raise DataError(f"Reading {source} gave a {type(data).__name__}, not bytes or text.")
    if text.startswith("\ufeff"):
        text = text[1:]
        bom = True
    return text, notes, bom


def _decode(data: bytes, source: str, notes: list) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise DataError(f"{source} starts with a UTF-16 mark but is not valid UTF-16.") from None
    refuse_binary(data, source)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = (
            f"{source} is not valid UTF-8 (byte {exc.start}); it was read as latin-1, "
            "so check accented characters."
        )
        notes.append(msg)
        warnings.warn(msg, UserWarning, stacklevel=5)  # -> the caller of load_csv
        return data.decode("latin-1")


def refuse_binary(head: bytes, source: str, what: str = "CSV text", export: str = "CSV") -> None:
    """A DataError naming ``source`` when the first bytes of a file are those of a known binary format
    (:data:`BINARY_MAGIC`) or hold a NUL byte: whole files, chunks and blocks are checked alike."""
    head = head[:8192]
    for magic, kind in BINARY_MAGIC.items():
        if head.startswith(magic):
            raise DataError(f"{source} looks like {kind}, not {what}; export it as {export}.")
    if b"\x00" in head:
        raise DataError(f"{source} looks like a binary file (it contains NUL bytes), not {what}.")


def refuse_non_csv_text(text: str, source: str) -> None:
    head = text[:4096]
    low = head.lstrip().lower()
    if low.startswith(("<!doctype", "<html", "<?xml")) or (low.startswith("<") and "<body" in low):
        raise DataError(
            f"{source} looks like an HTML/XML page, not CSV text; download the raw CSV file instead."
        )
    if head:
        ctrl = sum(1 for ch in head if ord(ch) < 32 and ch not in "\t\n")
        if ctrl > max(2, len(head) // 100):
            raise DataError(
                f"{source} looks like a binary file (it contains control characters), not CSV text."
            )


def sniff_delimiter(text: str) -> str | None:
    """The delimiter giving the most consistent field counts over the first records.

    Records are parsed as CSV (quotes respected), so a delimiter or line break inside a quoted
    header name or value does not mislead the choice.
    """
    head = text[:65536]
    best, best_key = None, None
    for d in _DELIMITERS:
        counts = []
        for rec in csv.reader(io.StringIO(head, newline=""), delimiter=d):
            if rec and not (len(rec) == 1 and not rec[0].strip()):
                counts.append(len(rec) - 1)
                if len(counts) > 50:
                    break
        else:
            if len(head) < len(text) and len(counts) > 1:
                counts.pop()  # the last record may be cut off
        if not counts or counts[0] == 0:
            continue
        consistent = sum(c == counts[0] for c in counts) / len(counts)
        key = (consistent, counts[0])
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best


def records(text: str, delim: str, source: str) -> list:
    """Every CSV record of ``text`` in order: ``(fields, first line, kind)``; blank lines included.

    ``kind`` is ``"blank"`` (no fields, or one blank field), ``"header"`` (the first other record)
    or ``"row"``; the loader's rows are the ``"row"`` records in order.  The records are
    :func:`block_records`' of the whole text (a block starting on line 1).
    """
    recs, starts, _ = block_records(text, delim, 1, source)
    out, seen_header = [], False
    for rec, start in zip(recs, starts):
        if is_blank(rec):
            kind = "blank"
        elif not seen_header:
            kind, seen_header = "header", True
        else:
            kind = "row"
        out.append((rec, start, kind))
    return out


def parse(text: str, source: str):
    """Header, cell matrix (object array of raw strings), file line of each row, notes."""
    if not text.strip():
        raise DataError(f"{source} is empty.")
    delim = sniff_delimiter(text)
    notes: list = []
    if delim is None:
        first = next(ln for ln in text.split("\n") if ln.strip()).strip()
        shown = first if len(first) <= 40 else first[:37] + "..."
        raise DataError(
            f"{source} has only one column ('{shown}'); bnfk needs at least two "
            "columns separated by commas, semicolons or tabs."
        )
    header, rows, lines, blanks = None, [], [], []
    for rec, start, _ in records(text, delim, source):
        if not rec or (len(rec) == 1 and not rec[0].strip()):
            if header is not None:
                blanks.append(start)
            continue
        if header is None:
            header = rec
            continue
        rows.append(rec)
        lines.append(start)
    if header is None:
        raise DataError(f"{source} is empty.")
    header = header_names(header)
    if not rows:
        raise DataError(f"{source} has a header but no data rows.")
    lines = np.asarray(lines, dtype=np.int64)
    interior = [b for b in blanks if b < lines[-1]]
    if interior:
        notes.append(f"{len(interior)} blank line(s) of {source} were skipped (first: line {interior[0]}).")

    n = len(header)
    lens = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    # A trailing delimiter on every line (header included) is a common export quirk.
    if n > 1 and header[-1] == "" and (lens == n).all() and all(not r[-1].strip() for r in rows):
        header = header[:-1]
        rows = [r[:-1] for r in rows]
        lens = lens - 1
        n -= 1
        notes.append(
            f"Every line of {source} ends with a {DELIM_NAMES[delim]}; the empty last column was ignored."
        )
    bad = np.flatnonzero(lens != n)
    if bad.size:
        k = int(bad[0])
        fields = "1 field" if lens[k] == 1 else f"{lens[k]} fields"
        raise DataError(
            f"Line {lines[k]} of {source} has {fields} but the header has {n}"
            f" ({DELIM_NAMES[delim]}-separated); fix or remove that line."
        )
    check_header(header, source)
    cells = np.empty((len(rows), n), dtype=object)
    cells[:] = rows
    if delim != ",":
        notes.append(f"{source} is {DELIM_NAMES[delim]}-separated.")
    return header, cells, lines, notes


# ====================================================================== chunks of rows
#: the longest header line read (a file of millions of columns is refused rather than read)
MAX_HEADER_BYTES = 64 * 2**20
#: the name the chunked readers give a trailing empty column before they drop it
TRAILING = "\x00trailing"


@dataclass(frozen=True)
class FileLayout:
    """How to read a file in chunks: format, delimiter and the (trimmed) header."""

    path: str
    fmt: str
    header: tuple
    delimiter: str = ","
    encoding: str = "utf-8"
    #: the header ends with the delimiter (an empty last name): every row's last field must then be blank,
    #: and that column is dropped, as :func:`parse` drops it
    trailing: bool = False
    #: the file holds a carriage return somewhere (a quoted one is read as ``\n``, as the whole-file
    #: reader reads it); True unless a scan of the bytes found none
    carriage_returns: bool = True
    #: the name messages give the file: its base name, as the whole-file reader names it (or the name given)
    source: str = ""
    #: the file holds a record of one blank quoted field (``"  "``), which the whole-file reader skips as a
    #: blank line but pandas' parser reads as a row: its chunks are then parsed by the whole-file reader's
    #: own record parser (:func:`block_records`)
    quoted_blanks: bool = False

    @property
    def shown(self) -> str:
        """The file's name in messages."""
        return self.source or source_name(self.path)

    @property
    def fields(self) -> list[str]:
        """The names the CSV parser reads the fields by: the header, and a stand-in for a trailing empty
        column."""
        return list(self.header) + ([TRAILING] if self.trailing else [])


def file_layout(path, fmt: str | None = None, source: str | None = None, *, scan: bool = True) -> FileLayout:
    """Format (``csv`` or ``parquet``, from the name unless given), delimiter and header of ``path``.

    Messages about the file's content name it as the whole-file reader does: ``source`` when given, else
    its base name (a missing file is named by its path, as every reader names it).  ``scan=False`` reads the
    head of the file alone, for a check that needs only the header: a CSV's records are not scanned
    (:func:`check_records`, the carriage returns), so ``has_cr`` and ``quoted_blanks`` are not known (False),
    and the layout must not be read by."""
    check_file(path)
    p = Path(path)
    shown = printable(str(source)) if source is not None else source_name(path)
    if fmt is None:
        fmt = "parquet" if p.suffix.lower() in (".parquet", ".pq") else "csv"
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            with open_regular(p) as fh:
                header = tuple(str(n).strip() for n in pq.ParquetFile(fh).schema_arrow.names)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(f"{shown} is not a readable Parquet file ({str(exc).strip()}).") from None
        check_header(list(header), shown, "")
        return FileLayout(str(p), "parquet", header, source=shown)
    if fmt != "csv":
        raise DataError(f"Unknown file format '{fmt}'; choose csv or parquet.")
    try:
        with open_regular(p) as fh:
            head = fh.read(1 << 16)
            while (
                b"\n" not in head and b"\r" not in head and len(head) < MAX_HEADER_BYTES
            ):  # a very wide header
                more = fh.read(1 << 20)
                if not more:
                    break
                head += more
    except OSError as exc:
        raise DataError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
    if len(head) >= MAX_HEADER_BYTES and b"\n" not in head and b"\r" not in head:
        raise DataError(
            f"The first line of {shown} is longer than {MAX_HEADER_BYTES // 2**20} MiB; bnfk reads "
            "files with a header line of fewer columns."
        )
    if head.startswith(b"PAR1"):
        return file_layout(path, "parquet", source, scan=scan)
    refuse_binary(head, shown, "a CSV file", "CSV (or Parquet)")
    encoding = "utf-8-sig" if head.startswith(b"\xef\xbb\xbf") else "utf-8"
    text = head.decode(encoding, errors="ignore")
    if not text.strip():
        raise DataError(f"{shown} is empty.")
    cut = text.rfind("\n")
    text = text[: cut + 1] if cut > 0 and len(head) >= 1 << 16 else text
    delim = sniff_delimiter(text.replace("\r\n", "\n"))
    if delim is None:
        raise DataError(
            f"{shown} has only one column; bnfk needs at least two columns separated by "
            "commas, semicolons or tabs."
        )
    header = None
    for rec in csv.reader(io.StringIO(text, newline=""), delimiter=delim):
        if rec and not (len(rec) == 1 and not rec[0].strip()):
            header = header_names(rec)
            break
    if header is None:
        raise DataError(f"{shown} is empty.")
    trailing = len(header) > 2 and header[-1] == ""  # a trailing delimiter: checked row by row
    check_header(header[:-1] if trailing else header, shown, "")
    layout = FileLayout(
        str(p),
        "csv",
        tuple(header[:-1] if trailing else header),
        delim,
        encoding,
        trailing,
        _has_cr(p) if scan else False,
        shown,
    )
    if scan and check_records(layout):
        layout = dataclasses.replace(layout, quoted_blanks=True)
    return layout


def _has_cr(path) -> bool:
    """Whether the file holds a carriage return (a scan of its bytes, 16 MiB at a time)."""
    with open_regular(path) as fh:
        while True:
            block = fh.read(1 << 24)
            if not block:
                return False
            if b"\r" in block:
                return True


def check_records(layout: FileLayout) -> bool:
    """Refuse, before any chunk is read, a CSV file that :func:`parse` refuses for its records: one whose
    record has more or fewer fields than the header.  The chunked parsers are lenient (pandas pads a short
    record and makes an extra field the index), so a strict pass of Arrow's CSV parser counts the fields of
    every record first (one column converted, about a tenth of a chunked read); the first bad record is then
    found again by :func:`block_records`, so that the sentence is the whole-file reader's, line included.

    Returns whether the file holds a record of one blank quoted field (skipped by :func:`parse` as a blank
    line, read as a row by pandas: :attr:`FileLayout.quoted_blanks`)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = layout.fields
    bad: list = []
    blanks: list = []

    def invalid(row):
        if not row.text.strip():  # a line of blanks is skipped, as parse skips it (and so does pandas)
            return "skip"
        fields = next(csv.reader([row.text], delimiter=layout.delimiter), [])
        (blanks if is_blank(fields) else bad).append(row)
        return "skip"

    try:
        reader = pacsv.open_csv(
            layout.path,
            read_options=pacsv.ReadOptions(
                use_threads=False,
                block_size=1 << 22,
                encoding="utf8" if layout.encoding.startswith("utf-8") else layout.encoding,
                column_names=names,
                skip_rows=1,
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=layout.delimiter, newlines_in_values=True, invalid_row_handler=invalid
            ),
            convert_options=pacsv.ConvertOptions(
                include_columns=[names[0]], column_types={names[0]: pa.string()}
            ),
        )
        for _ in reader:
            if bad:
                break
    except (pa.ArrowInvalid, UnicodeDecodeError, OSError):  # left to the chunked reader's own messages
        return False
    if bad:
        _refuse_record(layout)
    return bool(blanks)


def _refuse_record(layout: FileLayout) -> None:
    """The whole-file reader's sentence about the first record of ``layout`` whose field count is not the
    header's (found by :func:`block_records`, block by block); nothing if there is none."""
    shown = layout.shown
    tf = open_text(layout.path, shown)
    n = len(layout.fields)
    seen_header = False
    for block in scan_blocks(tf, 1 << 22):
        text = read_block(tf, block)
        if isinstance(text, int):
            text = read_block(tf.with_encoding("latin-1"), block)
        recs, starts, _ = block_records(text, tf.delimiter, block.first_line, shown)
        for rec, start in zip(recs, starts):
            if is_blank(rec):
                continue
            if not seen_header:
                seen_header = True
                continue
            if len(rec) != n:
                fields = "1 field" if len(rec) == 1 else f"{len(rec)} fields"
                raise DataError(
                    f"Line {start} of {shown} has {fields} but the header has {len(layout.header)}"
                    f" ({DELIM_NAMES[layout.delimiter]}-separated); fix or remove that line."
                )


def header_names(fields) -> list[str]:
    """Header fields as column names: trimmed, and without the single quotes some exports wrap every name in
    (statsmodels' tab-separated ``anes96.csv``: ``'popul'<TAB>'TVnews'``) -- only when every name has them, so
    a name such as ``'s`` keeps its quote.  Double quotes are CSV quoting and are already gone."""
    names = [str(h).strip() for h in fields]
    if names and all(len(h) >= 2 and h[0] == h[-1] == "'" for h in names):
        names = [h[1:-1].strip() for h in names]
    return names


def check_header(header, source: str, hint: str = " columns separated by commas, semicolons or tabs") -> None:
    """A header bnfk reads: at least two columns (``hint`` says what the file needs), every name non-empty and
    unique; else a DataError naming the culprit."""
    if len(header) < 2:
        raise DataError(
            f"{source} has only one column ('{header[0] if header else ''}'); bnfk needs at least two{hint}."
        )
    for j, h in enumerate(header):
        if not h:
            raise DataError(
                f"Column {j + 1} of {source} has an empty name in the header; give every column a name."
            )
    seen = set()
    for h in header:
        if h in seen:
            raise DataError(f"Column name '{h}' appears more than once in the header of {source}.")
        seen.add(h)


def iter_chunks(layout: FileLayout, chunksize: int = DEFAULT_CHUNKSIZE) -> Iterator[pd.DataFrame]:
    """The file's rows as frames of raw cell text (untrimmed; a missing Parquet value is ``""``),
    ``chunksize`` rows at a time, columns named by the trimmed header."""
    for chunk, _ in chunks_done(layout, chunksize):
        yield chunk


def chunks_done(layout: FileLayout, chunksize: int) -> Iterator[tuple[pd.DataFrame, float]]:
    """:func:`iter_chunks` with the fraction of the file read after each chunk (bytes of a CSV as the
    parser has consumed them, rows of a Parquet file), for progress reports."""
    shown = layout.shown
    if layout.fmt == "csv" and layout.quoted_blanks:
        yield from _record_chunks(layout, chunksize)
        return
    if layout.fmt == "parquet":
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        with open_regular(layout.path) as fh:
            pf = pq.ParquetFile(fh)
            total, done = max(int(pf.metadata.num_rows), 1), 0
            for batch in pf.iter_batches(batch_size=int(chunksize)):
                cols = [
                    pc.fill_null(pc.cast(batch.column(j), pa.string()), "") for j in range(batch.num_columns)
                ]
                done += batch.num_rows
                yield (
                    pd.DataFrame({h: c.to_numpy(zero_copy_only=False) for h, c in zip(layout.header, cols)}),
                    done / total,
                )
        return
    size = max(os.path.getsize(layout.path), 1)
    with open_regular(layout.path) as fh:
        # object columns: the parser's own strings (``dtype=str`` would copy them into Arrow and back)
        reader = pd.read_csv(
            fh,
            sep=layout.delimiter,
            dtype=object,
            keep_default_na=False,
            na_filter=False,
            header=0,
            names=layout.fields,
            chunksize=int(chunksize),
            encoding=layout.encoding,
            skip_blank_lines=True,
            engine="c",
        )
        start = 0
        try:
            for chunk in reader:
                if chunk.isna().any().any():
                    r = int(np.flatnonzero(chunk.isna().any(axis=1).to_numpy())[0])
                    raise DataError(
                        f"Line {start + r + 2} of {shown} has fewer fields than the header has "
                        "columns; fix or remove that line."
                    )
                start += len(chunk)
                yield as_whole_file(chunk, layout), min(fh.tell() / size, 1.0)
        except pd.errors.ParserError as exc:
            raise DataError(
                f"{shown} cannot be parsed ({str(exc).strip()}); fix or remove that line."
            ) from None
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{shown} is not valid UTF-8 (byte {exc.start} of a chunk); the streaming reader "
                "needs UTF-8 text."
            ) from None


def _record_chunks(layout: FileLayout, chunksize: int) -> Iterator[tuple[pd.DataFrame, float]]:
    """:func:`chunks_done` by the whole-file reader's record parser (:func:`block_records`, a block of bytes
    at a time): the records :func:`parse` reads, blank records skipped, ``chunksize`` at a time."""
    shown = layout.shown
    tf = open_text(layout.path, shown)
    n, size = len(layout.fields), max(tf.size, 1)
    rows: list = []
    seen_header = False
    for block in scan_blocks(tf, 1 << 22):
        text = read_block(tf, block)
        if isinstance(text, int):
            raise DataError(
                f"{shown} is not valid UTF-8 (byte {text}); the streaming reader needs UTF-8 text."
            )
        recs, starts, _ = block_records(text, tf.delimiter, block.first_line, shown)
        for rec, start in zip(recs, starts):
            if is_blank(rec):
                continue
            if not seen_header:
                seen_header = True
                continue
            if len(rec) != n:
                _refuse_record(layout)
            rows.append(rec)
            if len(rows) == int(chunksize):
                yield (
                    as_whole_file(pd.DataFrame(rows, columns=layout.fields, dtype=object), layout),
                    min(block.end / size, 1.0),
                )
                rows = []
    if rows:
        yield as_whole_file(pd.DataFrame(rows, columns=layout.fields, dtype=object), layout), 1.0


def as_whole_file(chunk: pd.DataFrame, layout: FileLayout) -> pd.DataFrame:
    """A chunk of raw cell text as :func:`parse` reads the same records: a trailing empty column dropped
    (a value in it is the whole-file reader's refusal of the header's empty name), and line breaks inside
    quoted values read as ``\n`` (the whole-file reader reads the text with universal newlines)."""
    if layout.trailing:
        if (chunk[TRAILING].astype(str).str.strip() != "").any():
            check_header(list(layout.header) + [""], layout.shown, "")
        chunk = chunk.drop(columns=[TRAILING])
    if layout.carriage_returns:
        for c in chunk.columns:
            col = chunk[c].astype(str)
            if col.str.contains("\r", regex=False).any():
                chunk[c] = col.str.replace("\r\n", "\n", regex=False).str.replace("\r", "\n", regex=False)
    return chunk


# ====================================================================== blocks of bytes
@dataclass(frozen=True)
class TextFile:
    """How a CSV file's text is read: encoding, byte-order mark, delimiter, line end, header."""

    path: str
    source: str
    encoding: str
    bom: bool
    delimiter: str
    newline: str
    size: int
    header: tuple = ()

    def with_encoding(self, encoding: str) -> TextFile:
        return TextFile(
            self.path, self.source, encoding, self.bom, self.delimiter, self.newline, self.size, self.header
        )


@dataclass(frozen=True)
class Block:
    """Bytes ``[start, end)`` of the file, whose first record starts on file line ``first_line``."""

    start: int
    end: int
    first_line: int


def line_breaks(b: bytes) -> int:
    """Line ends in ``b`` as Python's universal newlines count them (``\\r\\n`` is one)."""
    return b.count(b"\n") + b.count(b"\r") - b.count(b"\r\n")


def open_text(path, source: str | None = None) -> TextFile:
    """Check ``path`` as :func:`bnfk_core.data.table.load_csv` checks a file and find its delimiter and line
    end.

    The header is read later, from the first block (:func:`impute_file`)."""
    _, shown = check_file(path)
    p = str(path)
    name = source_name(p) if source is None else printable(str(source))
    try:
        size = os.path.getsize(p)
        with open_regular(p) as fh:
            head = fh.read(1 << 17)
    except OSError as exc:
        raise DataError(f"Cannot read {shown}: {exc.strerror or exc}.") from exc
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(
            f"{name} is UTF-16 text; reading it in blocks needs UTF-8, so save it as UTF-8 "
            "(or impute it without --chunksize)."
        )
    refuse_binary(head, name)
    bom = head.startswith(b"\xef\xbb\xbf")
    body = head[3:] if bom else head
    if len(head) == 1 << 17:  # cut at a line end: no half character at the end
        cut = max(body.rfind(b"\n"), body.rfind(b"\r"))
        body = body[: cut + 1] if cut > 0 else body
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:  # read as UTF-8 all the same: pass 1 finds it out and says so
        text = body.decode("latin-1")
    norm = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    refuse_non_csv_text(norm, name)
    if not norm.strip():
        raise DataError(f"{name} is empty.")
    delim = sniff_delimiter(norm[:65537] if len(head) == 1 << 17 else norm)
    if delim is None:
        first = next(ln for ln in norm.split("\n") if ln.strip()).strip()
        shown_line = first if len(first) <= 40 else first[:37] + "..."
        raise DataError(
            f"{name} has only one column ('{shown_line}'); bnfk needs at least two "
            "columns separated by commas, semicolons or tabs."
        )
    m = re.search(r"\r\n|\r|\n", text)
    return TextFile(p, name, "utf-8", bom, delim, m.group(0) if m else "\n", size)


def _cut(buf: bytes, nl: bytes, lo: int = 0) -> int:
    """The length of the longest prefix of ``buf`` ending in a line end outside quoted fields (0: none),
    looking only at line ends after ``lo`` (those before it are known to be inside quotes).  One pass over the
    bytes after ``lo``: a quote that is never closed makes the rest of the file one record, found in linear
    time."""
    quotes = buf.count(b'"')
    after, end = 0, len(buf)  # quotes from the candidate cut to the end of the buffer
    cut = buf.rfind(nl) + 1
    while cut > lo:
        after += buf.count(b'"', cut, end)
        end = cut
        if (quotes - after) % 2 == 0:
            return cut
        cut = buf.rfind(nl, 0, cut - 1) + 1
    return 0


def scan_blocks(tf: TextFile, block_bytes: int) -> list:
    """The file cut into :class:`Block` s of about ``block_bytes`` at record boundaries (module docstring)."""
    nl = b"\r" if tf.newline == "\r" else b"\n"
    step = max(64, int(block_bytes))
    blocks, pos, line = [], 3 if tf.bom else 0, 1
    carry = b""
    with open_regular(tf.path) as fh:
        fh.seek(pos)
        while True:
            chunk = fh.read(step)
            buf = carry + chunk
            if not chunk:
                if buf:
                    blocks.append(Block(pos, pos + len(buf), line))
                return blocks
            cut = _cut(buf, nl, max(0, len(carry) - len(nl)))  # the carry's line ends are all inside quotes
            if cut == 0:
                carry = buf
                continue
            blocks.append(Block(pos, pos + cut, line))
            line += line_breaks(buf[:cut])
            pos += cut
            carry = buf[cut:]


def read_block(tf: TextFile, block: Block) -> str | int:
    """The block's text, or the file offset of its first byte that is not valid in ``tf.encoding``."""
    with open_regular(tf.path) as fh:
        fh.seek(block.start)
        raw = fh.read(block.end - block.start)
    try:
        return raw.decode(tf.encoding)
    except UnicodeDecodeError as exc:
        return block.start + exc.start


def block_records(text: str, delimiter: str, first_line: int, source: str) -> tuple[list, list, bool]:
    """``(records, start lines, plain)``: the CSV records of a block as :func:`records`
    parses them, and whether the block had no quote or carriage return (then every record is one line
    and ``delimiter.join(record)`` is that line)."""
    if '"' not in text and "\r" not in text:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return (
            [ln.split(delimiter) if ln else [] for ln in lines],
            list(range(first_line, first_line + len(lines))),
            True,
        )
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    recs, starts, prev = [], [], first_line - 1
    try:
        for rec in reader:
            starts.append(prev + 1)
            prev = first_line - 1 + reader.line_num
            recs.append(rec)
    except csv.Error as exc:
        raise DataError(f"Line {prev + 1} of {source} cannot be parsed ({exc}); check its quotes.") from None
    return recs, starts, False


def is_blank(rec: list) -> bool:
    return not rec or (len(rec) == 1 and not rec[0].strip())


def read_header(tf: TextFile, block: Block) -> tuple:
    """The header of ``tf`` (the first non-blank record of the first block), trimmed."""
    text = read_block(tf, block)
    if isinstance(text, int):
        text = read_block(tf.with_encoding("latin-1"), block)
    recs, _, _ = block_records(text, tf.delimiter, 1, tf.source)
    for rec in recs:
        if not is_blank(rec):
            return tuple(h.strip() for h in rec)
    raise DataError(f"{tf.source} is empty.")
