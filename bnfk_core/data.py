"""Categorical data: the :class:`CategoricalData` container and :func:`load_csv`.

Every column is nominal.  ``codes[n, i]`` is the index of row n's value in
``states[i]``, or ``-1`` when the cell is missing.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import DataError
from .files import NOT_FOUND, not_regular_message, open_regular, regular_file_problem

__all__ = ["CategoricalData", "load_csv", "from_codes", "read_table", "RawTable", "MISSING_TOKENS", "MISSING_CATEGORY",
           "DEFAULT_NA_VALUES", "na_set", "interval_label", "parse_interval", "check_file"]

#: the strings that were always read as missing before ``na_values`` existed; now the opt-in
#: ``na_values="default-list"`` (the bundled samples that need them declare them in catalog.json)
MISSING_TOKENS = ("", "NA", "N/A", "?", "nan")
#: what a cell holds to be missing when nothing else is said: the empty field only
DEFAULT_NA_VALUES = ("",)


@dataclass(frozen=True, eq=False)
class CategoricalData:
    """A table of nominal variables.

    Attributes
    ----------
    frame : DataFrame
        String values (object dtype) with ``None`` for missing cells; columns = ``variables``.
    codes : ndarray of int, shape (N, n)
        State indices, -1 = missing.
    variables : tuple of str
        Column names, in order.
    states : tuple of tuple of str
        The ordered states of each variable.
    class_column : str or None
        The column holding class labels (still one of ``variables``).
    source : str
        Where the data came from (file name), for messages.
    notes : tuple of str
        Warnings produced while loading (encoding fallback, discretized columns, ...).
    numbers : dict str -> float array (N,)
        The raw values (NaN = missing) of the numeric columns :func:`load_csv` cut into quantile bins,
        for scores that search numbers as numbers (:mod:`bnfk_core.kgv`); the codes hold the bins.
    """

    frame: pd.DataFrame
    codes: np.ndarray
    variables: tuple
    states: tuple
    class_column: str | None = None
    source: str = "data"
    notes: tuple = field(default_factory=tuple)
    numbers: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ shape
    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_vars(self) -> int:
        return len(self.variables)

    @property
    def cardinalities(self) -> np.ndarray:
        return np.array([len(s) for s in self.states], dtype=np.int64)

    def index(self, column: str) -> int:
        try:
            return self.variables.index(column)
        except ValueError:
            raise DataError(f"Column '{column}' is not in {self.source}.") from None

    def missing_mask(self) -> np.ndarray:
        return self.codes < 0

    def complete_rows(self) -> np.ndarray:
        """Boolean mask of rows without missing cells."""
        return ~(self.codes < 0).any(axis=1)

    @property
    def has_missing(self) -> bool:
        return bool((self.codes < 0).any())

    def labels(self) -> np.ndarray:
        """Codes of the class column (error if there is none)."""
        if self.class_column is None:
            raise DataError(f"{self.source} has no class column; choose one.")
        return self.codes[:, self.index(self.class_column)]

    # ------------------------------------------------------------------ subsets
    def subset(self, rows) -> "CategoricalData":
        """Rows by integer index or boolean mask; states are kept (codes stay comparable)."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return CategoricalData(self.frame.iloc[rows].reset_index(drop=True), self.codes[rows],
                               self.variables, self.states, self.class_column, self.source, self.notes,
                               {k: v[rows] for k, v in self.numbers.items()})

    def select(self, columns: Sequence[str]) -> "CategoricalData":
        """Only ``columns``, in that order."""
        idx = [self.index(c) for c in columns]
        cls = self.class_column if self.class_column in columns else None
        return CategoricalData(self.frame[list(columns)], self.codes[:, idx], tuple(columns),
                               tuple(self.states[i] for i in idx), cls, self.source, self.notes,
                               {c: self.numbers[c] for c in columns if c in self.numbers})

    def drop(self, columns: Iterable[str]) -> "CategoricalData":
        columns = list(columns)
        for c in columns:
            self.index(c)
        return self.select([v for v in self.variables if v not in columns])

    def without_class(self) -> "CategoricalData":
        """The feature columns only (the class column is never a kernel feature)."""
        return self.drop([self.class_column]) if self.class_column else self

    def with_class(self, class_column: str | None) -> "CategoricalData":
        if class_column is not None:
            self.index(class_column)
        return CategoricalData(self.frame, self.codes, self.variables, self.states, class_column,
                               self.source, self.notes, self.numbers)

    def with_codes(self, codes: np.ndarray) -> "CategoricalData":
        """Same variables and states, new code matrix (frame rebuilt)."""
        codes = np.asarray(codes, dtype=self.codes.dtype)
        return from_codes(codes, self.variables, self.states, self.class_column, self.source)

    def fingerprint(self) -> str:
        """A content hash (codes, variables, states) for caching."""
        h = hashlib.sha1()
        h.update(np.ascontiguousarray(self.codes).tobytes())
        h.update(repr((self.variables, self.states, self.class_column)).encode())
        return h.hexdigest()

    def __repr__(self) -> str:
        return f"CategoricalData({self.source}: {self.n_rows} rows x {self.n_vars} variables, class={self.class_column!r})"


def from_codes(codes: np.ndarray, variables: Sequence[str], states: Sequence[Sequence[str]],
               class_column: str | None = None, source: str = "data") -> CategoricalData:
    """Build :class:`CategoricalData` from a code matrix (-1 = missing)."""
    codes = np.asarray(codes)
    codes = codes.astype(np.int32 if codes.dtype.kind in "iu" else np.int32)
    states = tuple(tuple(str(s) for s in st) for st in states)
    cols = {}
    for i, v in enumerate(variables):
        lookup = np.array(list(states[i]) + [None], dtype=object)
        cols[v] = lookup[codes[:, i]]  # -1 -> None
    frame = pd.DataFrame(cols, columns=list(variables))
    return CategoricalData(frame, codes, tuple(variables), states, class_column, source)


# ====================================================================== load_csv
#: Under ``missing_policy="category"`` every missing token of a column becomes this one state.
MISSING_CATEGORY = "?"
MISSING_POLICIES = ("missing", "category")
_MISSING_SET = frozenset(MISSING_TOKENS)


def na_set(na_values=None, missing_policy: str = "missing") -> frozenset:
    """The (trimmed) cell texts read as missing.

    ``None`` -> the empty field only (:data:`DEFAULT_NA_VALUES`) under ``missing_policy="missing"``,
    and :data:`MISSING_TOKENS` under ``"category"`` (where they all become the one state ``?``, as
    always: a literal ``?`` and a blank are then the same category anyway); ``"default-list"`` ->
    :data:`MISSING_TOKENS`; otherwise a comma-separated string or a sequence of strings, to which the
    empty field is always added (an empty cell is never a category of its own).  So ``na_values="NA"``
    keeps ``?`` as a category while blanks and ``NA`` are missing."""
    if na_values is None:
        return _MISSING_SET if missing_policy == "category" else frozenset(DEFAULT_NA_VALUES)
    if isinstance(na_values, str):
        if na_values.strip().lower() == "default-list":
            return _MISSING_SET
        na_values = na_values.split(",")
    try:
        vals = {str(v).strip() for v in na_values}
    except TypeError:
        raise DataError(f"na_values must be 'default-list', a comma-separated string or a list of strings, "
                        f"not {_show(repr(na_values))}.") from None
    return frozenset(vals | {""})
_DELIMITERS = (",", ";", "\t")
_DELIM_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}
_INTERVAL_RE = re.compile(r"^([\[(])\s*([^,\s]+)\s*,\s*([^,\s\])]+)\s*([\])])$")
_BINARY_MAGIC = {
    b"PK\x03\x04": "a ZIP archive (an .xlsx workbook?)",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"\x1f\x8b": "a gzip archive",
    b"\xd0\xcf\x11\xe0": "an old-style Excel/Office file",
}


def load_csv(path_or_buffer=None, *, text=None, source=None, class_column=None, missing_policy="missing",
             discretize_bins=4, max_levels=50, drop_columns=(), model=None, na_values=None) -> CategoricalData:
    """Read a CSV of categorical data.

    A ``str`` or ``Path`` is always a file name, never CSV text: ``load_csv("a,b\\nx,1\\n")``
    looks for a file of that name.  CSV text goes in as ``load_csv(text="a,b\\nx,1\\n")``
    (or ``io.StringIO(text)``, or ``bytes``).

    Parameters
    ----------
    path_or_buffer : str, Path, bytes, or file-like (bytes or text)
        A path (``str`` or ``os.PathLike``; a missing file is a :class:`DataError` naming it);
        a binary buffer such as Streamlit's ``UploadedFile`` (its ``.name`` becomes the
        source); a text buffer such as ``io.StringIO``; or ``bytes`` holding the file's
        content.  Give either this or ``text``.
    text : str, optional
        CSV text itself (keyword only), instead of ``path_or_buffer``.
    source : str, optional
        The name used in messages and kept as ``.source``; by default the file name, the
        buffer's ``.name``, or ``"uploaded data"``.
    class_column : str, optional
        Column holding the class labels; it stays one of the variables.
    missing_policy : {"missing", "category"}
        The ``na_values`` cells are missing (code -1) under ``"missing"``; under ``"category"``
        they all become one extra state ``"?"`` (listed last).
    discretize_bins : int or None
        Numeric columns with more than ``max_levels`` distinct values are cut into this many
        quantile bins (labels ``[a, b)``, the last one ``[a, b]``).  ``None`` or 0 refuses
        such columns instead.
    max_levels : int
        Most distinct values a nominal column may have.  Non-numeric columns with more are
        refused (identifiers, free text): drop them with ``drop_columns``.
    drop_columns : iterable of str
        Columns to ignore.
    model : object with ``.variables`` and ``.states``, optional
        Align the result to a fitted model: same variables in the model's order, the model's
        state order; values must be model states (interval states ``[a, b)`` take numbers).
    na_values : None, "default-list", "A,B" or a list of strings
        Which cell texts are missing (:func:`na_set`): by default the empty field only, so ``?``
        or ``NA`` are categories like any other; ``"default-list"`` is ``"", NA, N/A, ?, nan``
        (the default under ``missing_policy="category"``, which merges them into the state ``?``).

    The first non-blank record is the header: names are trimmed and must be non-empty and
    unique (quoted names may hold any character, delimiters and line breaks included).
    Values are trimmed strings.

    Returns
    -------
    CategoricalData
        ``notes`` lists what happened on the way (encoding fallback, discretization, ...).

    Raises
    ------
    DataError
        For any input that cannot be used; the one-sentence message names the file and the
        line, column or value at fault.
    """
    obj = _input(path_or_buffer, text, "load_csv")
    source = _printable(str(source)) if source is not None else _source_name(obj)
    try:
        return _load(obj, source, class_column, missing_policy, discretize_bins,
                     max_levels, drop_columns, model, na_set(na_values, missing_policy))
    except DataError:
        raise
    except Exception as exc:  # the safety net: bad input never ends in a traceback
        raise DataError(f"Could not read {source}: {type(exc).__name__}: {exc}.") from exc


# ---------------------------------------------------------------------- reading
def _input(path_or_buffer, text, what: str):
    """What a reader reads: ``path_or_buffer``, or ``text=`` (a str) as a buffer -- exactly one of them."""
    if text is not None:
        if path_or_buffer is not None:
            raise DataError(f"Give {what} either a path or buffer or text=, not both.")
        if not isinstance(text, str):
            raise DataError(f"{what}(text=...) takes a str of CSV text, not a {type(text).__name__}; "
                            "give bytes or a buffer as the first argument.")
        return io.StringIO(text)
    if path_or_buffer is None:
        raise DataError("No data given: pass a path, a buffer, bytes or text=.")
    return path_or_buffer


def _printable(name: str) -> str:
    """``name`` for a one-line message: as is, or quoted with escapes when it holds control characters."""
    return name if name.isprintable() else repr(name)


def _source_name(obj) -> str:
    if isinstance(obj, (str, os.PathLike)):
        name = Path(obj).name
        return _printable(name or str(obj)) or "data"
    name = getattr(obj, "name", None)
    if isinstance(name, (str, os.PathLike)) and str(name):
        return _printable(Path(name).name or str(name))
    return "uploaded data"


def _read_text(obj, source: str) -> tuple[str, list]:
    """The text of ``obj`` with line ends normalised to ``\\n``, and notes."""
    text, notes, _ = _read_raw_text(obj, source)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    _refuse_non_csv_text(text, source)
    return text, notes


def check_file(obj) -> tuple[Path, str]:
    """``(Path, printable name)`` of a path naming an existing regular file, checked by ``stat`` before any
    ``open`` (:func:`bnfk_core.files.regular_file_problem`); else a DataError naming it: empty path, not
    found, or not a regular file -- a folder, FIFO, socket or device is refused without being opened, in
    one wording that does not say which of them it is."""
    path, shown = Path(obj), _printable(str(obj))
    if str(obj) == "":
        raise DataError("No file given: the path is empty.")
    problem = regular_file_problem(path)
    if problem == NOT_FOUND:
        raise DataError(f"File not found: {shown}.")
    if problem is not None:
        raise DataError(not_regular_message(shown))
    return path, shown


def _read_raw_text(obj, source: str) -> tuple[str, list, bool]:
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
        raise DataError(f"Cannot read data from a {type(obj).__name__}; "
                        "give a path, a file-like object, bytes or text=.")

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
    head = data[:8192]
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise DataError(f"{source} looks like {what}, not CSV text; export it as CSV.")
    if b"\x00" in head:
        raise DataError(f"{source} looks like a binary file (it contains NUL bytes), not CSV text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = (f"{source} is not valid UTF-8 (byte {exc.start}); it was read as latin-1, "
               "so check accented characters.")
        notes.append(msg)
        warnings.warn(msg, UserWarning, stacklevel=5)  # -> the caller of load_csv
        return data.decode("latin-1")


def _refuse_non_csv_text(text: str, source: str) -> None:
    head = text[:4096]
    low = head.lstrip().lower()
    if low.startswith(("<!doctype", "<html", "<?xml")) or (low.startswith("<") and "<body" in low):
        raise DataError(f"{source} looks like an HTML/XML page, not CSV text; "
                        "download the raw CSV file instead.")
    if head:
        ctrl = sum(1 for ch in head if ord(ch) < 32 and ch not in "\t\n")
        if ctrl > max(2, len(head) // 100):
            raise DataError(f"{source} looks like a binary file (it contains control characters), "
                            "not CSV text.")


# ---------------------------------------------------------------------- parsing
def _sniff_delimiter(text: str) -> str | None:
    """The delimiter giving the most consistent field counts over the first records.

    Records are parsed as CSV (quotes respected), so a delimiter or line break inside a quoted
    header name or value does not mislead the choice.
    """
    head = text[:65536]
    best, best_key = None, None
    for d in _DELIMITERS:
        counts = []
        for rec in csv.reader(io.StringIO(head), delimiter=d):
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


def _records(text: str, delim: str, source: str) -> list:
    """Every CSV record of ``text`` in order: ``(fields, first line, kind)``; blank lines included.

    ``kind`` is ``"blank"`` (no fields, or one blank field), ``"header"`` (the first other record)
    or ``"row"``; the loader's rows are the ``"row"`` records in order.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    out, prev, seen_header = [], 0, False
    try:
        for rec in reader:
            start, prev = prev + 1, reader.line_num
            if not rec or (len(rec) == 1 and not rec[0].strip()):
                kind = "blank"
            elif not seen_header:
                kind, seen_header = "header", True
            else:
                kind = "row"
            out.append((rec, start, kind))
    except csv.Error as exc:
        raise DataError(f"Line {prev + 1} of {source} cannot be parsed ({exc}); "
                        "check its quotes.") from None
    return out


def _parse(text: str, source: str):
    """Header, cell matrix (object array of raw strings), file line of each row, notes."""
    if not text.strip():
        raise DataError(f"{source} is empty.")
    delim = _sniff_delimiter(text)
    notes: list = []
    if delim is None:
        first = next(ln for ln in text.split("\n") if ln.strip()).strip()
        shown = first if len(first) <= 40 else first[:37] + "..."
        raise DataError(f"{source} has only one column ('{shown}'); bnfk needs at least two "
                        "columns separated by commas, semicolons or tabs.")
    header, rows, lines, blanks = None, [], [], []
    for rec, start, _ in _records(text, delim, source):
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
    header = [h.strip() for h in header]
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
        notes.append(f"Every line of {source} ends with a {_DELIM_NAMES[delim]}; "
                     "the empty last column was ignored.")
    bad = np.flatnonzero(lens != n)
    if bad.size:
        k = int(bad[0])
        fields = "1 field" if lens[k] == 1 else f"{lens[k]} fields"
        raise DataError(f"Line {lines[k]} of {source} has {fields} but the header has {n}"
                        f" ({_DELIM_NAMES[delim]}-separated); fix or remove that line.")
    if n < 2:
        raise DataError(f"{source} has only one column ('{header[0]}'); bnfk needs at least two "
                        "columns separated by commas, semicolons or tabs.")
    for j, h in enumerate(header):
        if not h:
            raise DataError(f"Column {j + 1} of {source} has an empty name in the header; "
                            "give every column a name.")
    seen = set()
    for h in header:
        if h in seen:
            raise DataError(f"Column name '{h}' appears more than once in the header of {source}.")
        seen.add(h)
    cells = np.empty((len(rows), n), dtype=object)
    cells[:] = rows
    if delim != ",":
        notes.append(f"{source} is {_DELIM_NAMES[delim]}-separated.")
    return header, cells, lines, notes


def _levels(raw: np.ndarray):
    """Per-row index into the distinct stripped values, and those values (no per-cell loop)."""
    raw_codes, uniq = pd.factorize(raw)
    stripped = np.array([u.strip() for u in uniq], dtype=object)
    lcodes, lev = pd.factorize(stripped)
    return np.asarray(lcodes, dtype=np.int64)[raw_codes], [str(x) for x in lev]


def _as_numbers(levels) -> np.ndarray | None:
    """Float value of each level, or None unless every level is a finite number."""
    if not levels:
        return None
    vals = pd.to_numeric(pd.Series(list(levels), dtype=object), errors="coerce").to_numpy(float)
    if not np.isfinite(vals).all():
        return None
    return vals


def _fmt_edge(x: float) -> str:
    x = float(x) + 0.0  # -0.0 -> 0.0
    s = repr(x)
    return s[:-2] if s.endswith(".0") else s


def interval_label(lo: float, hi: float, last: bool) -> str:
    """The state label of the quantile bin ``[lo, hi)`` (``[lo, hi]`` when ``last``)."""
    return f"[{_fmt_edge(lo)}, {_fmt_edge(hi)}{']' if last else ')'}"


def parse_interval(label: str):
    """``(lo, hi, lo_closed, hi_closed)`` for a label like ``[0.1, 2.3)``, else None."""
    m = _INTERVAL_RE.match(str(label).strip())
    if not m:
        return None
    try:
        lo, hi = float(m.group(2)), float(m.group(3))
    except ValueError:
        return None
    if np.isnan(lo) or np.isnan(hi) or lo > hi:
        return None
    return lo, hi, m.group(1) == "[", m.group(4) == "]"


def _quantile_bins(row_values: np.ndarray, bins: int):
    """Edges (data values at the quantiles, deduplicated) and bin labels."""
    q = np.quantile(row_values, np.linspace(0.0, 1.0, bins + 1), method="nearest")
    edges = np.unique(q)
    if edges.size < 2:  # cannot happen with > max_levels distinct values, but stay safe
        edges = np.array([edges[0], edges[0]])
    nb = edges.size - 1
    labels = tuple(interval_label(edges[k], edges[k + 1], k == nb - 1) for k in range(nb))
    return edges, labels


def _weighted_quantile_bins(values: np.ndarray, counts: np.ndarray, bins: int):
    """:func:`_quantile_bins` of the rows holding ``values[k]`` ``counts[k]`` times, without those rows.

    ``np.quantile(..., method="nearest")`` takes the sorted rows at positions round((N − 1) q)
    (round half to even); the same positions are looked up in the cumulative counts."""
    order = np.argsort(values, kind="stable")
    sv = np.asarray(values, dtype=float)[order]
    cum = np.cumsum(np.asarray(counts, dtype=np.int64)[order])
    n = int(cum[-1])
    pos = np.around((n - 1) * np.linspace(0.0, 1.0, bins + 1)).astype(np.intp)
    q = sv[np.searchsorted(cum, pos, side="right")]
    edges = np.unique(q)
    if edges.size < 2:
        edges = np.array([edges[0], edges[0]])
    nb = edges.size - 1
    labels = tuple(interval_label(edges[k], edges[k + 1], k == nb - 1) for k in range(nb))
    return edges, labels


def _bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    nb = edges.size - 1
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, nb - 1)


def _show(value: str) -> str:
    return "an empty field" if value == "" else f"'{value}'"


# ---------------------------------------------------------------------- the loader
def _check_options(missing_policy, discretize_bins, max_levels, drop_columns, class_column):
    if missing_policy not in MISSING_POLICIES:
        raise DataError(f"missing_policy must be 'missing' or 'category', not {missing_policy!r}.")
    if discretize_bins is None or discretize_bins is False:
        discretize_bins = 0
    if isinstance(discretize_bins, (bool, np.bool_)) or not isinstance(discretize_bins, (int, np.integer)) \
            or discretize_bins < 0 or discretize_bins == 1:
        raise DataError(f"discretize_bins must be None, 0 or an integer of at least 2, not {discretize_bins!r}.")
    if isinstance(max_levels, (bool, np.bool_)) or not isinstance(max_levels, (int, np.integer)) or max_levels < 2:
        raise DataError(f"max_levels must be an integer of at least 2, not {max_levels!r}.")
    if drop_columns is None:
        drop_columns = ()
    if isinstance(drop_columns, str):
        drop_columns = (drop_columns,)
    drop_columns = tuple(str(c).strip() for c in drop_columns)
    if class_column is not None:
        class_column = str(class_column).strip()
    return int(discretize_bins), int(max_levels), drop_columns, class_column


def _load(obj, source, class_column, missing_policy, discretize_bins, max_levels, drop_columns, model,
          na=frozenset(DEFAULT_NA_VALUES)):
    bins, max_levels, drop_columns, class_column = _check_options(
        missing_policy, discretize_bins, max_levels, drop_columns, class_column)
    text, notes = _read_text(obj, source)
    header, cells, lines, parse_notes = _parse(text, source)
    notes += parse_notes

    _check_columns(header, drop_columns, class_column, source, notes)
    keep = [j for j, h in enumerate(header) if h not in drop_columns]

    mvars = mstates = None
    if model is not None:
        mvars, mstates, class_column = _model_columns(model, [header[j] for j in keep], class_column, source,
                                                      notes)
        order = [header.index(v) for v in mvars]
    else:
        order = keep
        if not order:
            raise DataError(f"No columns of {source} are left after drop_columns; keep at least two.")
        if len(order) == 1:
            raise DataError(f"Only column '{header[order[0]]}' of {source} is left after drop_columns; "
                            "keep at least two.")

    variables, states = [], []
    codes = np.empty((cells.shape[0], len(order)), dtype=np.int32)
    discretized, fewer, numbers = [], [], {}
    for out_j, j in enumerate(order):
        name = header[j]
        inv, lev = _levels(cells[:, j])
        miss_lev = np.fromiter((v in na for v in lev), dtype=bool, count=len(lev))
        if name == class_column and miss_lev[inv].all():
            raise DataError(f"Class column '{name}' of {source} is empty (every value is missing).")
        level_code, st = _column_states(name, lev, miss_lev, inv, None if mvars is None else mstates[out_j],
                                        missing_policy, bins, max_levels, source, name == class_column, lines,
                                        notes, discretized, fewer)
        codes[:, out_j] = level_code[inv]
        variables.append(name)
        states.append(st)
        if discretized and discretized[-1] == name:  # keep the numbers behind the bins
            level_value = np.full(len(lev), np.nan)
            level_value[~miss_lev] = _as_numbers([v for v, m in zip(lev, miss_lev) if not m])
            numbers[name] = level_value[inv]

    _binning_notes(discretized, fewer, bins, max_levels, notes)
    data = from_codes(codes, variables, states, class_column, source)
    return replace(data, notes=tuple(notes), numbers=numbers)


def _check_columns(header, drop_columns, class_column, source: str, notes: list) -> None:
    """``drop_columns`` and ``class_column`` must name columns of ``header`` (and not the same one)."""
    for c in drop_columns:
        if c not in header:
            raise DataError(f"drop_columns names '{c}', which is not a column of {source}.")
    if class_column is not None:
        if class_column not in header:
            raise DataError(f"Class column '{class_column}' is not a column of {source} "
                            f"(columns: {_list(header)}).")
        if class_column in drop_columns:
            raise DataError(f"Class column '{class_column}' is also listed in drop_columns.")
    if drop_columns:
        notes.append(f"Dropped column(s) {_list(drop_columns)}.")


def _column_states(name, lev, miss_lev, inv, model_states, policy, bins, max_levels, source, is_class, lines,
                   notes: list, discretized: list, fewer: list, level_counts=None):
    """(state code of each level, states) of one column: the model's states when given
    (:func:`_align_levels`), else derived from the levels (:func:`_code_levels`; discretized and
    fewer-bins columns are collected for :func:`_binning_notes`)."""
    if model_states is not None:
        return _align_levels(name, lev, miss_lev, inv, model_states, policy, lines, source, notes,
                             level_counts), model_states
    level_code, st, how = _code_levels(name, lev, miss_lev, inv, policy, bins, max_levels, source, is_class,
                                       level_counts=level_counts)
    if how == "many-classes":
        notes.append(f"Class column '{name}' has {len(st)} classes (more than "
                     f"max_levels={max_levels}); it was kept as nominal.")
    if how == "discretized":
        discretized.append(name)
        if len(st) - (MISSING_CATEGORY in st and policy == "category") < bins:
            fewer.append(name)
    return level_code, st


def _binning_notes(discretized: list, fewer: list, bins: int, max_levels: int, notes: list) -> None:
    if discretized:
        notes.append(f"Discretized {len(discretized)} numeric column(s) with more than {max_levels} "
                     f"distinct values into {bins} quantile bins: {_list(discretized)}.")
    if fewer:
        notes.append(f"Tied values gave fewer than {bins} bins in {_list(fewer)}.")


def _list(names, limit: int = 8) -> str:
    names = [f"'{n}'" for n in names]
    if len(names) > limit:
        names = names[:limit] + [f"... ({len(names) - limit} more)"]
    return ", ".join(names)


def _code_levels(name, lev, miss_lev, inv, policy, bins, max_levels, source, is_class=False, level_counts=None):
    """Level -> state code, the ordered states, and 'nominal', 'discretized' or 'many-classes'.

    The class column is never discretized nor refused: the user named it explicitly.
    ``level_counts`` (the streaming reader, :mod:`bnfk_core.stream`): the number of rows of each
    level, given instead of the rows themselves (``inv`` is then ``arange(len(lev))``).
    """
    real = np.flatnonzero(~miss_lev)
    real_levels = [lev[k] for k in real]
    nums = _as_numbers(real_levels)
    level_code = np.full(len(lev), -1, dtype=np.int64)
    how = "nominal"
    if len(real_levels) > max_levels and not is_class:
        if nums is None:
            raise DataError(f"Column '{name}' of {source} has {len(real_levels)} distinct values "
                            f"(more than max_levels={max_levels}); it looks like an identifier or "
                            f"free text, so drop it with drop_columns=['{name}'].")
        if not bins:
            raise DataError(f"Column '{name}' of {source} has {len(real_levels)} distinct numeric "
                            f"values (more than max_levels={max_levels}) and discretization is off; "
                            f"set discretize_bins or drop it with drop_columns=['{name}'].")
        if level_counts is not None:
            edges, st = _weighted_quantile_bins(nums, np.asarray(level_counts)[real], bins)
        else:
            value_of_level = np.full(len(lev), np.nan)
            value_of_level[real] = nums
            row_vals = value_of_level[inv]
            row_vals = row_vals[~np.isnan(row_vals)]
            edges, st = _quantile_bins(row_vals, bins)
        level_code[real] = _bin_index(nums, edges)
        how = "discretized"
    else:
        if nums is not None:
            order = sorted(range(len(real)), key=lambda k: (nums[k], real_levels[k]))
        else:
            order = sorted(range(len(real)), key=lambda k: real_levels[k])
        st = tuple(real_levels[k] for k in order)
        level_code[real[order]] = np.arange(len(order))
        if len(real_levels) > max_levels:  # only the class column gets here
            how = "many-classes"
    st = tuple(st)
    if policy == "category" and miss_lev.any() and miss_lev[inv].any():
        level_code[miss_lev] = len(st)
        st = st + (MISSING_CATEGORY,)
    return level_code, st, how


def _model_columns(model, names, class_column, source: str, notes: list):
    """The model's variables and states checked against a file's kept column ``names``: every model
    variable must be there and every other column refused, except the class column, which is dropped (with
    a note).  Returns (model variables, their states, the class column or None)."""
    mvars, mstates = _model_spec(model)
    absent = [v for v in mvars if v not in names]
    if absent:
        what = "variable" if len(absent) == 1 else "variables"
        raise DataError(f"Model {what} {_list(absent)} missing from {source}.")
    extra = [v for v in names if v not in mvars]
    if class_column in extra:
        extra.remove(class_column)
        notes.append(f"Class column '{class_column}' is not a model variable; it was dropped.")
        class_column = None
    if extra:
        raise DataError(f"Column(s) {_list(extra)} of {source} are not variables of the model; "
                        f"drop them with drop_columns={extra!r}.")
    return mvars, mstates, class_column


def _model_spec(model):
    try:
        mvars = tuple(str(v) for v in model.variables)
        mstates = tuple(tuple(str(s) for s in st) for st in model.states)
    except (AttributeError, TypeError) as exc:
        raise DataError("The model given to load_csv has no usable .variables and .states.") from exc
    if len(mvars) != len(mstates):
        raise DataError(f"The model has {len(mvars)} variables but {len(mstates)} state lists.")
    if len(set(mvars)) != len(mvars):
        dup = next(v for v in mvars if mvars.count(v) > 1)
        raise DataError(f"The model lists variable '{dup}' twice.")
    hidden = (getattr(model, "fit_info", None) or {}).get("hidden")   # a latent class network's class: no column
    if hidden in mvars:
        keep = [i for i, v in enumerate(mvars) if v != hidden]
        mvars, mstates = tuple(mvars[i] for i in keep), tuple(mstates[i] for i in keep)
    return mvars, mstates


def _align_levels(name, lev, miss_lev, inv, states, policy, lines, source, notes, level_counts=None):
    """Level -> index into the model's ``states`` (error on unknown values).

    ``level_counts``: rows per level when ``inv`` is ``arange(len(lev))`` (the streaming reader)."""
    index = {s: k for k, s in enumerate(states)}
    level_code = np.full(len(lev), -1, dtype=np.int64)
    unknown = []
    for k, v in enumerate(lev):
        if miss_lev[k]:
            if policy == "missing":
                continue
            if MISSING_CATEGORY in index:
                level_code[k] = index[MISSING_CATEGORY]
                continue
            unknown.append(k)
        elif v in index:
            level_code[k] = index[v]
        else:
            unknown.append(k)

    intervals = [parse_interval(s) for s in states if s != MISSING_CATEGORY]
    if unknown and intervals and all(iv is not None for iv in intervals):
        unknown = _map_intervals(name, lev, unknown, inv, states, level_code, lines, source, notes, level_counts)
    elif unknown:
        real_states = [s for s in states if s != MISSING_CATEGORY]
        snums = _as_numbers(real_states)
        if snums is not None and len(set(snums.tolist())) == len(snums):
            by_value = {float(x): index[s] for x, s in zip(snums, real_states)}
            still = []
            for k in unknown:
                vals = None if miss_lev[k] else _as_numbers([lev[k]])
                if vals is not None and float(vals[0]) in by_value:
                    level_code[k] = by_value[float(vals[0])]
                else:
                    still.append(k)
            unknown = still
    if unknown:
        rows = np.flatnonzero(np.isin(inv, unknown))
        row = int(rows[0])
        k = int(inv[row])
        shown = ", ".join(states[:10]) + (", ..." if len(states) > 10 else "")
        if miss_lev[k]:
            raise DataError(f"Missing value ({_show(lev[k])}) of variable '{name}' on line {lines[row]} "
                            f"of {source} has no state in the model (states: {shown}); "
                            "use missing_policy='missing'.")
        raise DataError(f"Value {_show(lev[k])} of variable '{name}' on line {lines[row]} of {source} "
                        f"is not a state of the model (states: {shown}).")
    return level_code


def _map_intervals(name, lev, unknown, inv, states, level_code, lines, source, notes, level_counts=None):
    """Put numeric levels into the model's interval states; returns the levels left unknown."""
    ivs = [(k, parse_interval(s)) for k, s in enumerate(states) if s != MISSING_CATEGORY]
    lo = np.array([iv[0] for _, iv in ivs])
    hi = np.array([iv[1] for _, iv in ivs])
    lo_c = np.array([iv[2] for _, iv in ivs])
    hi_c = np.array([iv[3] for _, iv in ivs])
    state_idx = np.array([k for k, _ in ivs])
    still, below, above = [], 0, 0
    counts = np.bincount(inv, minlength=len(lev)) if level_counts is None else np.asarray(level_counts)
    for k in unknown:
        vals = _as_numbers([lev[k]])
        if vals is None:
            still.append(k)
            continue
        v = float(vals[0])
        inside = ((v > lo) | (lo_c & (v == lo))) & ((v < hi) | (hi_c & (v == hi)))
        if inside.any():
            level_code[k] = state_idx[np.flatnonzero(inside)[0]]
        elif v <= lo.min():
            level_code[k] = state_idx[int(np.argmin(lo))]
            below += int(counts[k])
        elif v >= hi.max():
            level_code[k] = state_idx[int(np.argmax(hi))]
            above += int(counts[k])
        else:
            still.append(k)
    if below or above:
        notes.append(f"Variable '{name}': {below} value(s) below and {above} above the model's "
                     "intervals were put in the first/last interval.")
    return still


# ====================================================================== the file as written
def format_record(rec: Sequence[str], delimiter: str) -> str:
    """One CSV record as text: fields joined by ``delimiter``, quoted only where they must be (a
    delimiter, quote, carriage return or line feed inside), and ``""`` for a record of one empty field
    (so that it is not read back as a blank line)."""
    if len(rec) == 1 and rec[0] == "":
        return '""'
    special = (delimiter, '"', "\r", "\n")
    return delimiter.join('"' + f.replace('"', '""') + '"' if any(c in f for c in special) else f for f in rec)


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
        be (a delimiter, quote, carriage return or line feed inside), so parsing the result with the ``csv`` module
        gives every unchanged field exactly as parsing the original does.
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
    obj = _input(path_or_buffer, text, "read_table")
    source = _printable(str(source)) if source is not None else _source_name(obj)
    try:
        raw, _, bom = _read_raw_text(obj, source)
        norm = raw.replace("\r\n", "\n").replace("\r", "\n") if "\r" in raw else raw
        _refuse_non_csv_text(norm, source)
        header, _, lines, _ = _parse(norm, source)   # the loader's checks, header and rows
        records = _records(raw, _sniff_delimiter(norm), source)
    except DataError:
        raise
    except Exception as exc:  # the safety net, as in load_csv
        raise DataError(f"Could not read {source}: {type(exc).__name__}: {exc}.") from exc
    rows = np.array([k for k, (_, _, kind) in enumerate(records) if kind == "row"], dtype=np.int64)
    starts = np.array([records[k][1] for k in rows], dtype=np.int64)
    if len(rows) != len(lines) or not (starts == lines).all():
        raise DataError(f"The records of {source} could not be matched to its rows; "
                        "save it with one kind of line end.")
    m = re.search(r"\r\n|\r|\n", raw)
    newline = m.group(0) if m else "\n"
    return RawTable(tuple(rec for rec, _, _ in records), tuple(header), rows, lines, _sniff_delimiter(norm),
                    newline, bom, source)
