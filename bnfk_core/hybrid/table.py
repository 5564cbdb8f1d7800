"""Mixed tables: categorical columns as state codes beside numeric columns kept as numbers.

:class:`MixedData` holds both kinds side by side over one column order: ``codes[:, i]`` are the state codes
of a discrete column (``-1`` = missing) and ``values[:, i]`` the floats of a numeric column (NaN = missing);
the entries of the other kind are ``-1`` / NaN.  :func:`load_mixed` reads a CSV into it with the one text
reader of :mod:`bnfk_core.data.reading`; ``numbers="bin"`` reads it as :func:`bnfk_core.data.table.load_csv`
does (numbers cut into quantile bins, every column discrete).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.binning import (
    as_numbers,
    check_columns,
    check_options,
    column_states,
    identifier_name,
    text_levels,
)
from ..data.reading import parse, printable, read_input, read_text, source_name
from ..data.table import CategoricalData, load_csv, na_set
from ..errors import DataError

__all__ = [
    "MixedData",
    "DISCRETE",
    "NUMERIC",
    "NUMBERS_MODES",
    "MIN_NUMERIC_LEVELS",
    "load_mixed",
    "mixed_from_categorical",
    "mixed_from_arrays",
]

DISCRETE = "discrete"
NUMERIC = "numeric"

#: ``keep``: numeric columns stay numbers (Gaussian nodes); ``bin``: they are cut into quantile bins as
#: :func:`bnfk_core.data.table.load_csv` does
NUMBERS_MODES = ("keep", "bin")

#: a column of numbers with at least this many distinct values is read as a number under ``numbers="keep"``;
#: one with fewer (0/1 flags, 1-5 ratings) stays a category unless named in ``numeric_columns``
MIN_NUMERIC_LEVELS = 10

#: rows an all-distinct integer column needs before it is taken for an identifier
_ID_MIN_ROWS = 20


@dataclass(frozen=True, eq=False)
class MixedData:
    """A table of discrete and numeric columns.

    Attributes
    ----------
    variables : tuple of str
        Column names, in order.
    kinds : tuple of str
        ``"discrete"`` or ``"numeric"`` per column.
    states : tuple of tuple of str
        The states of each discrete column; ``()`` for a numeric one.
    codes : ndarray of int32, shape (N, n)
        State codes of the discrete columns, -1 = missing (and everywhere in a numeric column).
    values : ndarray of float, shape (N, n)
        Values of the numeric columns, NaN = missing (and everywhere in a discrete column).
    source : str
        Where the rows came from, for messages.
    notes : tuple of str
        What happened on the way (identifier columns dropped, columns read as categories, ...).
    """

    variables: tuple
    kinds: tuple
    states: tuple
    codes: np.ndarray
    values: np.ndarray
    source: str = "data"
    notes: tuple = field(default_factory=tuple)

    def __post_init__(self):
        n = len(self.variables)
        if len(self.kinds) != n or len(self.states) != n:
            raise DataError("A mixed table needs one kind and one state list per column.")
        if self.codes.shape != self.values.shape or self.codes.shape[1:] != (n,):
            raise DataError("A mixed table's codes and values must both have one column per variable.")
        bad = [k for k in self.kinds if k not in (DISCRETE, NUMERIC)]
        if bad:
            raise DataError(f"Column kind '{bad[0]}' is neither 'discrete' nor 'numeric'.")

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_vars(self) -> int:
        return len(self.variables)

    @property
    def discrete(self) -> tuple:
        """Indices of the discrete columns."""
        return tuple(i for i, k in enumerate(self.kinds) if k == DISCRETE)

    @property
    def numeric(self) -> tuple:
        """Indices of the numeric columns."""
        return tuple(i for i, k in enumerate(self.kinds) if k == NUMERIC)

    @property
    def cardinalities(self) -> np.ndarray:
        """r_i of every discrete column (0 for a numeric one)."""
        return np.array([len(s) for s in self.states], dtype=np.int64)

    def index(self, column: str) -> int:
        """The position of ``column``; a DataError names it when it is not a column."""
        if column not in self.variables:
            raise DataError(f"Column '{column}' is not a column of {self.source}.")
        return self.variables.index(column)

    def missing_mask(self) -> np.ndarray:
        """Boolean (N, n): True where a cell is missing."""
        num = np.array([k == NUMERIC for k in self.kinds], dtype=bool)
        return np.where(num[None, :], np.isnan(self.values), self.codes < 0)

    def complete_rows(self) -> np.ndarray:
        return ~self.missing_mask().any(axis=1)

    def subset(self, rows) -> MixedData:
        """The table of some rows (indices or a boolean mask)."""
        rows = np.asarray(rows)
        return MixedData(
            self.variables,
            self.kinds,
            self.states,
            self.codes[rows],
            self.values[rows],
            self.source,
            self.notes,
        )

    def select(self, columns: Sequence[str]) -> MixedData:
        """The table of some columns, in the order given."""
        idx = [self.index(c) for c in columns]
        return MixedData(
            tuple(self.variables[i] for i in idx),
            tuple(self.kinds[i] for i in idx),
            tuple(self.states[i] for i in idx),
            self.codes[:, idx],
            self.values[:, idx],
            self.source,
            self.notes,
        )

    def to_categorical(self) -> CategoricalData:
        """The discrete columns as a :class:`~bnfk_core.data.table.CategoricalData` (numeric columns left
        out)."""
        from ..data.table import from_codes

        d = list(self.discrete)
        return from_codes(
            self.codes[:, d], [self.variables[i] for i in d], [self.states[i] for i in d], None, self.source
        )

    def __repr__(self) -> str:
        return (
            f"MixedData({self.n_rows} rows, {len(self.discrete)} discrete + {len(self.numeric)} numeric "
            f"columns, source={self.source!r})"
        )


def mixed_from_arrays(
    columns: Mapping[str, np.ndarray], states: Mapping[str, Sequence[str]] | None = None, source: str = "data"
) -> MixedData:
    """A mixed table from named columns: a column named in ``states`` holds state codes (-1 = missing) of
    those states, every other column floats (NaN = missing).

    Parameters
    ----------
    columns : mapping str -> array of shape (N,)
    states : mapping str -> sequence of str, optional
    source : str

    Returns
    -------
    MixedData
    """
    states = dict(states or {})
    names = [str(c) for c in columns]
    if not names:
        raise DataError("A mixed table needs at least one column.")
    n = len(np.asarray(next(iter(columns.values()))))
    codes = np.full((n, len(names)), -1, dtype=np.int32)
    values = np.full((n, len(names)), np.nan)
    kinds, sts = [], []
    for j, (name, col) in enumerate(columns.items()):
        col = np.asarray(col)
        if col.shape != (n,):
            raise DataError(f"Column '{name}' has {col.shape} entries; every column needs {n}.")
        if name in states:
            st = tuple(str(s) for s in states[name])
            c = col.astype(np.int64)
            if ((c < -1) | (c >= len(st))).any():
                raise DataError(f"Column '{name}' holds a code outside its {len(st)} states.")
            codes[:, j] = c
            kinds.append(DISCRETE)
            sts.append(st)
        else:
            values[:, j] = col.astype(float)
            kinds.append(NUMERIC)
            sts.append(())
    return MixedData(tuple(names), tuple(kinds), tuple(sts), codes, values, source)


def mixed_from_categorical(data: CategoricalData) -> MixedData:
    """Every column of a categorical table as a discrete column of a mixed one."""
    codes = np.asarray(data.codes, dtype=np.int32)
    return MixedData(
        tuple(data.variables),
        (DISCRETE,) * data.n_vars,
        tuple(tuple(s) for s in data.states),
        codes,
        np.full(codes.shape, np.nan),
        data.source,
        tuple(data.notes),
    )


def _identifier(name: str, nums: np.ndarray | None, n_levels: int, n_observed: int) -> bool:
    """Every observed value distinct: text, or whole numbers in a column named as an identifier.

    The rule of the binned reader (:func:`bnfk_core.data.binning.identifier_name`): a measurement whose
    values happen to differ (an exact income in whole dollars) stays a number.
    """
    if n_observed < _ID_MIN_ROWS or n_levels != n_observed:
        return False
    return nums is None or (bool(np.all(nums == np.round(nums))) and identifier_name(name))


def load_mixed(
    path_or_buffer=None,
    *,
    text=None,
    source=None,
    numbers="keep",
    numeric_columns=(),
    categorical_columns=(),
    min_numeric_levels=MIN_NUMERIC_LEVELS,
    missing_policy="missing",
    na_values=None,
    max_levels=50,
    discretize_bins=4,
    drop_columns=(),
    drop_identifiers=True,
) -> MixedData:
    """Read a CSV whose numbers stay numbers.

    Under ``numbers="keep"`` a column is numeric when every observed cell is a finite number and it has at
    least ``min_numeric_levels`` distinct values (or it is named in ``numeric_columns``); every other column
    is discrete, its states derived as :func:`bnfk_core.data.table.load_csv` derives them.  A column whose
    observed cells are all distinct -- integers (``id``) or text with more than ``max_levels`` values -- is
    an identifier: dropped with a note (``drop_identifiers=False`` keeps a numeric one as a number).
    Under ``numbers="bin"`` the file is read by :func:`~bnfk_core.data.table.load_csv` (numbers with more
    than ``max_levels`` values cut into ``discretize_bins`` quantile bins) and every column is discrete.

    Parameters
    ----------
    path_or_buffer, text, source
        As :func:`bnfk_core.data.table.load_csv`.
    numbers : {"keep", "bin"}
    numeric_columns, categorical_columns : iterable of str
        Columns forced to one kind (``numeric_columns`` must hold numbers).
    min_numeric_levels : int
        Fewest distinct values a column of numbers needs to be read as a number by default.
    missing_policy, na_values, max_levels, discretize_bins, drop_columns
        As :func:`~bnfk_core.data.table.load_csv` (``missing_policy="category"`` applies to discrete
        columns; a missing number is NaN).
    drop_identifiers : bool

    Returns
    -------
    MixedData

    Raises
    ------
    DataError
        One sentence naming the file and the column at fault.
    """
    if numbers not in NUMBERS_MODES:
        raise DataError(f"numbers must be 'keep' or 'bin', not {numbers!r}.")
    if numbers == "bin":
        return mixed_from_categorical(
            load_csv(
                path_or_buffer,
                text=text,
                source=source,
                missing_policy=missing_policy,
                discretize_bins=discretize_bins,
                max_levels=max_levels,
                drop_columns=drop_columns,
                na_values=na_values,
            )
        )
    if isinstance(min_numeric_levels, bool) or not isinstance(min_numeric_levels, (int, np.integer)):
        raise DataError(f"min_numeric_levels must be an integer, not {min_numeric_levels!r}.")
    obj = read_input(path_or_buffer, text, "load_mixed")
    source = printable(str(source)) if source is not None else source_name(obj)
    _, max_levels, drop_columns, _ = check_options(
        missing_policy, discretize_bins, max_levels, drop_columns, None
    )
    forced_num = tuple(
        str(c).strip() for c in ([numeric_columns] if isinstance(numeric_columns, str) else numeric_columns)
    )
    forced_cat = tuple(
        str(c).strip()
        for c in ([categorical_columns] if isinstance(categorical_columns, str) else categorical_columns)
    )
    both = set(forced_num) & set(forced_cat)
    if both:
        raise DataError(f"Column '{sorted(both)[0]}' is named both numeric and categorical.")
    text_, notes = read_text(obj, source)
    header, cells, lines, parse_notes = parse(text_, source)
    notes = list(notes) + list(parse_notes)
    check_columns(header, drop_columns, None, source, notes)
    for c in forced_num + forced_cat:
        if c not in header:
            raise DataError(f"Column '{c}' named as numeric or categorical is not a column of {source}.")
    na = na_set(na_values, missing_policy)
    n = cells.shape[0]
    variables, kinds, states, code_cols, value_cols, ids, few = [], [], [], [], [], [], []
    for j, name in enumerate(header):
        if name in drop_columns:
            continue
        inv, lev = text_levels(cells[:, j])
        miss_lev = np.fromiter((v in na for v in lev), dtype=bool, count=len(lev))
        real = [v for v, m in zip(lev, miss_lev) if not m]
        nums = as_numbers(real)
        n_obs = int((~miss_lev[inv]).sum())
        if name in forced_num and nums is None:
            bad = next((v for v in real if as_numbers([v]) is None), "")
            raise DataError(
                f"Column '{name}' of {source} is named numeric but holds '{bad[:40]}', which is not a number."
            )
        numeric = name in forced_num or (
            name not in forced_cat and nums is not None and len(real) >= min_numeric_levels
        )
        is_id = (
            name not in forced_num and name not in forced_cat and _identifier(name, nums, len(real), n_obs)
        )
        if is_id and (nums is not None or len(real) > max_levels) and drop_identifiers:
            ids.append(name)
            continue
        if numeric:
            level_value = np.full(len(lev), np.nan)
            level_value[~miss_lev] = nums
            variables.append(name)
            kinds.append(NUMERIC)
            states.append(())
            code_cols.append(np.full(n, -1, dtype=np.int32))
            value_cols.append(level_value[inv])
            continue
        if nums is not None and len(real) > 1 and name not in forced_cat:
            few.append(name)
        level_code, st = column_states(
            name, lev, miss_lev, inv, None, missing_policy, 0, max_levels, source, False, lines, notes, [], []
        )
        variables.append(name)
        kinds.append(DISCRETE)
        states.append(tuple(st))
        code_cols.append(level_code[inv].astype(np.int32))
        value_cols.append(np.full(n, np.nan))
    if ids:
        notes.append(
            f"Dropped identifier column(s) {', '.join(repr(c) for c in ids)}: every value is distinct."
        )
    if few:
        notes.append(
            f"Column(s) {', '.join(repr(c) for c in few[:8])} hold numbers with fewer than "
            f"{min_numeric_levels} distinct values and were read as categories (name them in numeric_columns "
            "to keep them numbers)."
        )
    if len(variables) < 2:
        raise DataError(
            f"{source} has fewer than two usable columns after dropping identifiers and drop_columns."
        )
    codes = np.stack(code_cols, axis=1)
    values = np.stack(value_cols, axis=1)
    return MixedData(tuple(variables), tuple(kinds), tuple(states), codes, values, source, tuple(notes))
