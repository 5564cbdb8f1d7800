"""Categorical data: the :class:`CategoricalData` container and :func:`load_csv`.

Every column is nominal.  ``codes[n, i]`` is the index of row n's value in
``states[i]``, or ``-1`` when the cell is missing.  The text is read by :mod:`bnfk_core.data.reading`, a
column's states derived by :mod:`bnfk_core.data.binning`; a file's records as written are
:mod:`bnfk_core.data.raw_table`'s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import DataError
from .binning import (
    MISSING_CATEGORY,
    as_numbers,
    binning_notes,
    check_columns,
    check_options,
    column_states,
    interval_label,
    model_columns,
    parse_interval,
    show_value,
    text_levels,
)
from .raw_table import RawTable, read_table
from .reading import check_file, check_header, parse, printable, read_input, read_text, source_name

__all__ = [
    "CategoricalData",
    "load_csv",
    "from_frame",
    "as_data",
    "cell_texts",
    "from_codes",
    "sample_rows",
    "read_table",
    "RawTable",
    "MISSING_TOKENS",
    "MISSING_CATEGORY",
    "DEFAULT_NA_VALUES",
    "na_set",
    "interval_label",
    "parse_interval",
    "check_file",
]

#: the strings ``na_values="default-list"`` reads as missing (the bundled samples that need them declare it
#: in catalog.json)
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
        for scores that search numbers as numbers (:mod:`bnfk_core.learning.kgv`); the codes hold the bins.
    weights : int64 array (N,) or None
        ``None``: every row of ``codes`` is one row of the table.  Else the table is held as its **distinct
        rows** (``codes``) with their multiplicities (the streaming reader,
        :func:`bnfk_core.data.stream.read_counts`):
        ``frame`` is ``None``, ``n_rows`` is the sum of the weights and ``n_distinct`` the rows held; every
        count (``learn``, ``fit``, the scores) takes the weights, :meth:`expand` gives the plain rows.
    """

    frame: pd.DataFrame
    codes: np.ndarray
    variables: tuple
    states: tuple
    class_column: str | None = None
    source: str = "data"
    notes: tuple = field(default_factory=tuple)
    numbers: dict = field(default_factory=dict)
    weights: np.ndarray | None = None

    @classmethod
    def from_frame(cls, frame, **options) -> CategoricalData:
        """A table from a pandas DataFrame, read as :func:`load_csv` reads a file (see :func:`from_frame`)."""
        return from_frame(frame, **options)

    # ------------------------------------------------------------------ shape
    @property
    def n_rows(self) -> int:
        """Rows of the table (the sum of the weights of a weighted one)."""
        return int(self.codes.shape[0]) if self.weights is None else int(self.weights.sum())

    @property
    def n_distinct(self) -> int:
        """Rows held in ``codes`` (the distinct rows of a weighted table)."""
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
    def subset(self, rows) -> CategoricalData:
        """Rows by integer index or boolean mask; states are kept (codes stay comparable).  Of a weighted
        table: distinct rows, with their weights."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        if self.weights is not None:
            return replace(self, codes=self.codes[rows], weights=self.weights[rows])
        frame = (
            None if self.frame is None else self.frame.iloc[rows].reset_index(drop=True)
        )  # codes only: no text
        return CategoricalData(
            frame,
            self.codes[rows],
            self.variables,
            self.states,
            self.class_column,
            self.source,
            self.notes,
            {k: v[rows] for k, v in self.numbers.items()},
        )

    def select(self, columns: Sequence[str]) -> CategoricalData:
        """Only ``columns``, in that order."""
        idx = [self.index(c) for c in columns]
        cls = self.class_column if self.class_column in columns else None
        if self.weights is not None:
            return replace(
                self,
                codes=self.codes[:, idx],
                variables=tuple(columns),
                states=tuple(self.states[i] for i in idx),
                class_column=cls,
            )
        frame = None if self.frame is None else self.frame[list(columns)]  # codes only: no text
        return CategoricalData(
            frame,
            self.codes[:, idx],
            tuple(columns),
            tuple(self.states[i] for i in idx),
            cls,
            self.source,
            self.notes,
            {c: self.numbers[c] for c in columns if c in self.numbers},
        )

    def drop(self, columns: Iterable[str]) -> CategoricalData:
        columns = list(columns)
        for c in columns:
            self.index(c)
        return self.select([v for v in self.variables if v not in columns])

    def without_class(self) -> CategoricalData:
        """The feature columns only (the class column is never a kernel feature)."""
        return self.drop([self.class_column]) if self.class_column else self

    def with_class(self, class_column: str | None) -> CategoricalData:
        if class_column is not None:
            self.index(class_column)
        if self.weights is not None:
            return replace(self, class_column=class_column)
        return CategoricalData(
            self.frame,
            self.codes,
            self.variables,
            self.states,
            class_column,
            self.source,
            self.notes,
            self.numbers,
        )

    def with_codes(self, codes: np.ndarray) -> CategoricalData:
        """Same variables and states, new code matrix (frame rebuilt)."""
        if self.weights is not None:
            raise DataError("WeightedData holds distinct rows; expand() it before replacing its codes.")
        codes = np.asarray(codes, dtype=self.codes.dtype)
        return from_codes(codes, self.variables, self.states, self.class_column, self.source)

    # ------------------------------------------------------------------ weighted tables
    def expand(self) -> CategoricalData:
        """The plain table: every distinct row repeated by its weight (in key order); a plain table as is."""
        if self.weights is None:
            return self
        codes = np.repeat(self.codes.astype(np.int32), self.weights, axis=0)
        return replace(
            from_codes(codes, self.variables, self.states, self.class_column, self.source), notes=self.notes
        )

    def sample_rows(self, n: int, seed: int = 0) -> CategoricalData:
        """A seeded uniform sample of ``min(n, n_rows)`` of the table's *rows* (not of its distinct rows),
        drawn without replacement, as a plain table: a distinct row of weight ``w`` is drawn with probability
        proportional to ``w`` and can appear up to ``w`` times.

        It is :func:`sample_rows` applied to the rows of :meth:`expand` (the same rows for the same seed)
        without expanding them: the drawn positions among the ``n_rows`` rows are mapped to distinct rows
        through the cumulative weights.  Memory is O(n + distinct rows).
        """
        pos = sample_rows(self.n_rows, n, seed)
        idx = pos if self.weights is None else np.searchsorted(np.cumsum(self.weights), pos, side="right")
        shown = f"A seeded sample of {len(idx):,} of the {self.n_rows:,} rows (seed {int(seed)})."
        return replace(
            from_codes(
                self.codes[idx].astype(np.int32), self.variables, self.states, self.class_column, self.source
            ),
            notes=self.notes + (shown,),
        )

    def fingerprint(self) -> str:
        """A content hash (codes, variables, states; the weights of a weighted table) for caching -- of a
        weighted table computed once (it is immutable and can stand for millions of rows), of another table
        once
        :meth:`keep_fingerprint` was called."""
        if self.weights is None and "_fingerprint" not in self.__dict__:
            h = hashlib.sha1()
            h.update(np.ascontiguousarray(self.codes).tobytes())
            h.update(repr((self.variables, self.states, self.class_column)).encode())
            return h.hexdigest()
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            h = hashlib.sha1()
            h.update(np.ascontiguousarray(self.codes).tobytes())
            h.update(np.ascontiguousarray(self.weights).tobytes())
            h.update(repr((self.variables, self.states, self.class_column)).encode())
            cached = h.hexdigest()
            object.__setattr__(self, "_fingerprint", cached)
        return cached

    def keep_fingerprint(self) -> CategoricalData:
        """Compute :meth:`fingerprint` once and keep it (its holder promises never to change the table: a
        server hands the same table to every session and asks for its fingerprint many times a page run);
        ``self``."""
        if "_fingerprint" not in self.__dict__:
            object.__setattr__(self, "_fingerprint", self.fingerprint())
        return self

    def __repr__(self) -> str:
        if self.weights is not None:
            return (
                f"WeightedData({self.source}: {self.n_rows} rows as {self.n_distinct} distinct x "
                f"{self.n_vars} variables, class={self.class_column!r})"
            )
        return (
            f"CategoricalData({self.source}: {self.n_rows} rows x {self.n_vars} variables, "
            f"class={self.class_column!r})"
        )


def sample_rows(n_total: int, n: int, seed: int = 0) -> np.ndarray:
    """A seeded uniform sample of row positions, drawn without replacement.

    Parameters
    ----------
    n_total : int
        The number of rows to draw from.
    n : int
        How many to draw (all rows when ``n >= n_total``).
    seed : int
        Seed of ``numpy.random.default_rng``: the same seed draws the same rows.

    Returns
    -------
    ndarray of int
        The sorted positions of ``min(n, n_total)`` rows.
    """
    n_total, n = int(n_total), int(n)
    if n >= n_total:
        return np.arange(n_total)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_total, size=max(n, 0), replace=False))


def from_codes(
    codes: np.ndarray,
    variables: Sequence[str],
    states: Sequence[Sequence[str]],
    class_column: str | None = None,
    source: str = "data",
) -> CategoricalData:
    """Build :class:`CategoricalData` from a code matrix (-1 = missing).

    Parameters
    ----------
    codes : numpy.ndarray
        (N, n) int codes; column j holds indices into ``states[j]``.
    variables : sequence of str
    states : sequence of sequence of str
    class_column : str, optional
    source : str
        The name used in messages.

    Returns
    -------
    CategoricalData
    """
    codes = np.asarray(codes)
    codes = codes.astype(np.int32 if codes.dtype.kind in "iu" else np.int32)
    states = tuple(tuple(str(s) for s in st) for st in states)
    cols = {}
    for i, v in enumerate(variables):
        lookup = np.array(list(states[i]) + [None], dtype=object)
        cols[v] = lookup[codes[:, i]]  # -1 -> None
    frame = pd.DataFrame(cols, columns=list(variables))
    return CategoricalData(frame, codes, tuple(variables), states, class_column, source)


_MISSING_SET = frozenset(MISSING_TOKENS)


# ====================================================================== load_csv
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
        raise DataError(
            f"na_values must be 'default-list', a comma-separated string or a list of strings, "
            f"not {show_value(repr(na_values))}."
        ) from None
    return frozenset(vals | {""})


def load_csv(
    path_or_buffer=None,
    *,
    text=None,
    source=None,
    class_column=None,
    missing_policy="missing",
    discretize_bins=4,
    max_levels=50,
    drop_columns=(),
    model=None,
    na_values=None,
) -> CategoricalData:
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
    obj = read_input(path_or_buffer, text, "load_csv")
    source = printable(str(source)) if source is not None else source_name(obj)
    try:
        return _load(
            obj,
            source,
            class_column,
            missing_policy,
            discretize_bins,
            max_levels,
            drop_columns,
            model,
            na_set(na_values, missing_policy),
        )
    except DataError:
        raise
    except Exception as exc:  # the safety net: bad input never ends in a traceback
        raise DataError(f"Could not read {source}: {type(exc).__name__}: {exc}.") from exc


def _load(
    obj,
    source,
    class_column,
    missing_policy,
    discretize_bins,
    max_levels,
    drop_columns,
    model,
    na=frozenset(DEFAULT_NA_VALUES),
):
    options = check_options(missing_policy, discretize_bins, max_levels, drop_columns, class_column)
    text, notes = read_text(obj, source)
    header, cells, lines, parse_notes = parse(text, source)
    return _build(header, cells, lines, notes + parse_notes, source, missing_policy, *options, model, na)


def _build(
    header,
    cells,
    lines,
    notes,
    source,
    missing_policy,
    bins,
    max_levels,
    drop_columns,
    class_column,
    model,
    na,
    declared=None,
):
    """The table of a header and its cell texts (a file's, or a DataFrame's written as text): the one path
    from cells to codes that :func:`load_csv` and :func:`from_frame` share.  ``declared``: ``{column:
    states}`` of columns whose states are given in order (pandas categoricals); ``lines[row]`` says where a
    row is."""
    check_columns(header, drop_columns, class_column, source, notes)
    keep = [j for j, h in enumerate(header) if h not in drop_columns]

    mvars = mstates = None
    if model is not None:
        mvars, mstates, class_column = model_columns(
            model, [header[j] for j in keep], class_column, source, notes
        )
        order = [header.index(v) for v in mvars]
    else:
        order = keep
        if not order:
            raise DataError(f"No columns of {source} are left after drop_columns; keep at least two.")
        if len(order) == 1:
            raise DataError(
                f"Only column '{header[order[0]]}' of {source} is left after drop_columns; keep at least two."
            )

    variables, states = [], []
    codes = np.empty((cells.shape[0], len(order)), dtype=np.int32)
    discretized, fewer, numbers = [], [], {}
    for out_j, j in enumerate(order):
        name = header[j]
        inv, lev = text_levels(cells[:, j])
        miss_lev = np.fromiter((v in na for v in lev), dtype=bool, count=len(lev))
        if name == class_column and miss_lev[inv].all():
            raise DataError(f"Class column '{name}' of {source} is empty (every value is missing).")
        given = None if mvars is None else mstates[out_j]
        if given is None and declared and name in declared:  # a categorical's categories, in their order
            given = tuple(declared[name])
            if missing_policy == "category" and miss_lev[inv].any() and MISSING_CATEGORY not in given:
                given += (MISSING_CATEGORY,)
        level_code, st = column_states(
            name,
            lev,
            miss_lev,
            inv,
            given,
            missing_policy,
            bins,
            max_levels,
            source,
            name == class_column,
            lines,
            notes,
            discretized,
            fewer,
        )
        codes[:, out_j] = level_code[inv]
        variables.append(name)
        states.append(st)
        if discretized and discretized[-1] == name:  # keep the numbers behind the bins
            level_value = np.full(len(lev), np.nan)
            level_value[~miss_lev] = as_numbers([v for v, m in zip(lev, miss_lev) if not m])
            numbers[name] = level_value[inv]

    binning_notes(discretized, fewer, bins, max_levels, notes)
    data = from_codes(codes, variables, states, class_column, source)
    return replace(data, notes=tuple(notes), numbers=numbers)


# ====================================================================== DataFrames
class _RowNames:
    """``lines`` of a DataFrame's table for messages: row k is ``row k+1`` (as :meth:`BayesNet.align`
    says)."""

    def __getitem__(self, k) -> str:
        return f"row {int(k) + 1}"


def cell_texts(values) -> np.ndarray:
    """The cell texts of one column of a DataFrame (or any 1-d sequence), as a CSV file would hold them.

    Missing cells (``None``, ``NaN``, ``pd.NA``, ``NaT``) become the empty field, which is always missing.
    A float column whose values are all whole numbers is written without the ``.0`` (a column of integers
    with a missing cell is a float column in pandas), so ``[1, 2, NaN]`` has the states ``1`` and ``2``, as
    the same column read from a file; dates are written as pandas writes the column.  Every other value is
    ``str(value)``.  A categorical column is written through its categories (one text per category).
    """
    series = (
        values
        if isinstance(values, pd.Series)
        else pd.Series(values, dtype=object if not hasattr(values, "dtype") else None)
    )
    if isinstance(series.dtype, pd.CategoricalDtype):
        texts = np.append(cell_texts(pd.Series(series.cat.categories)), "").astype(object)
        return texts[series.cat.codes.to_numpy()]  # code -1 (missing) -> the empty field
    missing = series.isna().to_numpy()
    out = np.full(len(series), "", dtype=object)
    present = series[~missing]
    if not len(present):
        return out
    if pd.api.types.is_float_dtype(present.dtype) or (
        present.dtype == object and all(isinstance(v, (float, np.floating)) for v in present)
    ):
        x = present.to_numpy(dtype=float)
        whole = np.isfinite(x).all() and (x == np.round(x)).all() and (np.abs(x) < 2**53).all()
        out[~missing] = (x.astype(np.int64) if whole else x).astype(str).astype(object)
    elif pd.api.types.is_datetime64_any_dtype(present.dtype) or pd.api.types.is_timedelta64_dtype(
        present.dtype
    ):
        out[~missing] = present.astype(str).to_numpy(dtype=object)  # pandas' column format (no 00:00:00)
    elif present.dtype == object:
        out[~missing] = [v if isinstance(v, str) else str(v) for v in present.to_numpy()]
    else:
        out[~missing] = present.astype(str).to_numpy(dtype=object)
    return out


def _frame_options(options: dict, caller: str) -> dict:
    allowed = {
        "class_column",
        "missing_policy",
        "discretize_bins",
        "max_levels",
        "drop_columns",
        "model",
        "na_values",
    }
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise DataError(
            f"{caller} got an unknown option '{unknown[0]}'; options are {', '.join(sorted(allowed))}."
        )
    return options


def from_frame(
    frame,
    *,
    source: str | None = None,
    class_column=None,
    missing_policy="missing",
    discretize_bins=4,
    max_levels=50,
    drop_columns=(),
    model=None,
    na_values=None,
) -> CategoricalData:
    """A :class:`CategoricalData` from a pandas DataFrame, read exactly as :func:`load_csv` reads a file.

    The DataFrame is written as cell texts (:func:`cell_texts`) and goes through the one path from cells to
    codes that files take, so the options, the validation and the one-sentence errors are those of
    :func:`load_csv` (a message names the column and ``row N``, the N-th row of the frame).

    Parameters
    ----------
    frame : pandas.DataFrame
        Column names become the variables (as text, trimmed; they must be unique and non-empty).
        ``None``, ``NaN``, ``pd.NA`` and ``NaT`` are missing cells (as is an empty or blank string).
        A column of pandas ``category`` dtype keeps its categories, in their order, as its states (unused
        categories included; they are never discretized).  Other columns get their states as a file's do:
        numbers in numeric order, text in alphabetical order, numeric columns with more than ``max_levels``
        distinct values cut into ``discretize_bins`` quantile bins.
    source : str, optional
        The name used in messages (default ``"DataFrame"``).
    class_column, missing_policy, discretize_bins, max_levels, drop_columns, model, na_values
        As for :func:`load_csv`.

    Returns
    -------
    CategoricalData

    Raises
    ------
    DataError
        For any frame that cannot be used, in one sentence naming the column, row or value at fault.
    """
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"from_frame needs a pandas DataFrame, not {type(frame).__name__}.")
    source = "DataFrame" if source is None else printable(str(source))
    try:
        options = check_options(missing_policy, discretize_bins, max_levels, drop_columns, class_column)
        if frame.shape[1] == 0:
            raise DataError(f"{source} has no columns; bnfk needs at least two.")
        header = [str(c).strip() for c in frame.columns]
        check_header(header, source, hint=" columns")
        if frame.shape[0] == 0:
            raise DataError(f"{source} has columns but no rows.")
        cells = np.empty(frame.shape, dtype=object)
        declared = {}
        for j, name in enumerate(header):
            column = frame.iloc[:, j]
            cells[:, j] = cell_texts(column)
            if isinstance(column.dtype, pd.CategoricalDtype):
                declared[name] = tuple(t.strip() for t in cell_texts(pd.Series(column.cat.categories)))
        return _build(
            header,
            cells,
            _RowNames(),
            [],
            source,
            missing_policy,
            *options,
            model,
            na_set(na_values, missing_policy),
            declared,
        )
    except DataError:
        raise
    except Exception as exc:  # the safety net: bad input never ends in a traceback
        raise DataError(f"Could not read {source}: {type(exc).__name__}: {exc}.") from exc


def as_data(X, *, model=None, **options):
    """The table behind ``X`` at a public entry point: a :class:`CategoricalData` as it is, a DataFrame
    through
    :func:`from_frame` (with ``options``); anything else (a code matrix) is returned for the caller's checks.

    With ``model``, a DataFrame is read in the model's variables and states (numbers fall into the model's
    intervals) and columns the model does not have are ignored, as :meth:`BayesNet.align
    <bnfk_core.network.model.BayesNet.align>` ignores them.
    """
    if isinstance(X, CategoricalData) or not isinstance(X, pd.DataFrame):
        return X
    if model is not None:
        names = {str(v) for v in model.variables}
        keep = [c for c in X.columns if str(c).strip() in names]
        if options.get("class_column") is not None and options["class_column"] not in names:
            options = {**options, "class_column": None}
        X = X.loc[:, keep]
    return from_frame(X, model=model, **_frame_options(options, "as_data"))
