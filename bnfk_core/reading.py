"""A data file's text read in pieces: its layout (format, delimiter, header) and its rows as frames of raw
cell text, a chunk of rows at a time (:func:`iter_chunks`) -- what every chunked pass reads (the streaming
reader :mod:`bnfk_core.stream`, the row-wise analyses, both runners of :mod:`bnfk_core.runners`)."""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pandas as pd

from .data import _BINARY_MAGIC, _printable, _sniff_delimiter, check_file
from .errors import DataError
from .files import open_regular

__all__ = ["FileLayout", "file_layout", "iter_chunks", "chunks_done", "MAX_HEADER_BYTES", "DEFAULT_CHUNKSIZE"]

#: rows of one chunk when nothing else is said
DEFAULT_CHUNKSIZE = 200_000

#: the longest header line read (a file of millions of columns is refused rather than read)
MAX_HEADER_BYTES = 64 * 2**20


@dataclass(frozen=True)
class FileLayout:
    """How to read a file in chunks: format, delimiter and the (trimmed) header."""
    path: str
    fmt: str
    header: tuple
    delimiter: str = ","
    encoding: str = "utf-8"


def file_layout(path, fmt: str | None = None) -> FileLayout:
    """Format (``csv`` or ``parquet``, from the name unless given), delimiter and header of ``path``."""
    p, shown = check_file(path)
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
        _check_header(list(header), shown)
        return FileLayout(str(p), "parquet", header)
    if fmt != "csv":
        raise DataError(f"Unknown file format '{fmt}'; choose csv or parquet.")
    try:
        with open_regular(p) as fh:
            head = fh.read(1 << 16)
            while b"\n" not in head and b"\r" not in head and len(head) < MAX_HEADER_BYTES:  # a very wide header
                more = fh.read(1 << 20)
                if not more:
                    break
                head += more
    except OSError as exc:
        raise DataError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
    if len(head) >= MAX_HEADER_BYTES and b"\n" not in head and b"\r" not in head:
        raise DataError(f"The first line of {shown} is longer than {MAX_HEADER_BYTES // 2**20} MiB; bnfk reads "
                        "files with a header line of fewer columns.")
    if head.startswith(b"PAR1"):
        return file_layout(path, "parquet")
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise DataError(f"{shown} looks like {what}, not a CSV file; export it as CSV (or Parquet).")
    if b"\x00" in head[:8192]:
        raise DataError(f"{shown} looks like a binary file (it contains NUL bytes), not a CSV file.")
    encoding = "utf-8-sig" if head.startswith(b"\xef\xbb\xbf") else "utf-8"
    text = head.decode(encoding, errors="ignore")
    if not text.strip():
        raise DataError(f"{shown} is empty.")
    cut = text.rfind("\n")
    text = text[:cut + 1] if cut > 0 and len(head) >= 1 << 16 else text
    delim = _sniff_delimiter(text.replace("\r\n", "\n"))
    if delim is None:
        raise DataError(f"{shown} has only one column; bnfk needs at least two columns separated by "
                        "commas, semicolons or tabs.")
    header = None
    for rec in csv.reader(io.StringIO(text, newline=""), delimiter=delim):
        if rec and not (len(rec) == 1 and not rec[0].strip()):
            header = [h.strip() for h in rec]
            break
    if header is None:
        raise DataError(f"{shown} is empty.")
    _check_header(header, shown)
    return FileLayout(str(p), "csv", tuple(header), delim, encoding)


def _check_header(header: list, source: str) -> None:
    if len(header) < 2:
        raise DataError(f"{source} has only one column ('{header[0] if header else ''}'); bnfk needs at least two.")
    seen = set()
    for j, h in enumerate(header):
        if not h:
            raise DataError(f"Column {j + 1} of {source} has an empty name in the header; give every column a name.")
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
    shown = _printable(layout.path)
    if layout.fmt == "parquet":
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
        with open_regular(layout.path) as fh:
            pf = pq.ParquetFile(fh)
            total, done = max(int(pf.metadata.num_rows), 1), 0
            for batch in pf.iter_batches(batch_size=int(chunksize)):
                cols = [pc.fill_null(pc.cast(batch.column(j), pa.string()), "") for j in range(batch.num_columns)]
                done += batch.num_rows
                yield pd.DataFrame({h: c.to_numpy(zero_copy_only=False) for h, c in zip(layout.header, cols)}), done / total
        return
    size = max(os.path.getsize(layout.path), 1)
    with open_regular(layout.path) as fh:
        reader = pd.read_csv(fh, sep=layout.delimiter, dtype=str, keep_default_na=False, na_filter=False,
                             header=0, names=list(layout.header), chunksize=int(chunksize), encoding=layout.encoding,
                             skip_blank_lines=True, engine="c")
        start = 0
        try:
            for chunk in reader:
                if chunk.isna().any().any():
                    r = int(np.flatnonzero(chunk.isna().any(axis=1).to_numpy())[0])
                    raise DataError(f"Line {start + r + 2} of {shown} has fewer fields than the header has "
                                    "columns; fix or remove that line.")
                start += len(chunk)
                yield chunk, min(fh.tell() / size, 1.0)
        except pd.errors.ParserError as exc:
            raise DataError(f"{shown} cannot be parsed ({str(exc).strip()}); fix or remove that line.") from None
        except UnicodeDecodeError as exc:
            raise DataError(f"{shown} is not valid UTF-8 (byte {exc.start} of a chunk); the streaming reader "
                            "needs UTF-8 text.") from None
