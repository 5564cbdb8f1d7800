"""Categorical data: the :class:`CategoricalData` container and :func:`load_csv`.

Every column is nominal.  ``codes[n, i]`` is the index of row n's value in
``states[i]``, or ``-1`` when the cell is missing.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import DataError

__all__ = ["CategoricalData", "load_csv", "MISSING_TOKENS"]

MISSING_TOKENS = ("", "NA", "N/A", "?", "nan")


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
    """

    frame: pd.DataFrame
    codes: np.ndarray
    variables: tuple
    states: tuple
    class_column: str | None = None
    source: str = "data"
    notes: tuple = field(default_factory=tuple)

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
                               self.variables, self.states, self.class_column, self.source, self.notes)

    def select(self, columns: Sequence[str]) -> "CategoricalData":
        """Only ``columns``, in that order."""
        idx = [self.index(c) for c in columns]
        cls = self.class_column if self.class_column in columns else None
        return CategoricalData(self.frame[list(columns)], self.codes[:, idx], tuple(columns),
                               tuple(self.states[i] for i in idx), cls, self.source, self.notes)

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
                               self.source, self.notes)

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


def load_csv(path_or_buffer, *, class_column=None, missing_policy="missing", discretize_bins=4,
             max_levels=50, drop_columns=(), model=None) -> CategoricalData:
    """Read a CSV of categorical data (placeholder: replaced by the full reader)."""
    frame = pd.read_csv(path_or_buffer, dtype=str, keep_default_na=False)
    frame = frame.drop(columns=list(drop_columns))
    variables = tuple(frame.columns)
    states, codes = [], np.empty(frame.shape, dtype=np.int32)
    for i, v in enumerate(variables):
        col = frame[v].str.strip()
        miss = col.isin(MISSING_TOKENS) if missing_policy == "missing" else np.zeros(len(col), bool)
        st = tuple(sorted(set(col[~miss])))
        states.append(st)
        lut = {s: k for k, s in enumerate(st)}
        codes[:, i] = [lut.get(x, -1) if not m else -1 for x, m in zip(col, miss)]
    return from_codes(codes, variables, states, class_column, str(path_or_buffer))
