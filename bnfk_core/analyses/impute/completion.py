"""A user's table completed by a model: every missing cell filled with its most probable state under the exact
posterior (:func:`impute_with_model`), and the file it was read from written back with only those cells
changed (:func:`complete_file`; discretized columns get the median of the observed values in the filled
bin)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...data.files import atomic_path
from ...data.table import MISSING_CATEGORY, CategoricalData, RawTable, parse_interval
from ...errors import DataError
from .core import Imputation, ImputeError, posterior_cells
from .members import FILL_NUMERIC

__all__ = [
    "ImputedData",
    "impute_with_model",
    "FILL_NUMERIC",
    "CompletedFile",
    "number",
    "filled_column",
    "complete_file",
]


# ====================================================================== practical imputation
@dataclass(eq=False)
class ImputedData:
    """A user's table completed by a model.

    Attributes
    ----------
    frame : DataFrame -- the input table (all its columns) with the model's missing cells filled.
    data : CategoricalData -- the completed cells aligned to the model.
    imputed : ndarray of bool (N, n_model) -- which cells of ``data`` were filled.
    probabilities : DataFrame -- tidy per-cell probabilities (:meth:`Imputation.frame`).
    imputation : Imputation
    """

    frame: pd.DataFrame
    data: CategoricalData
    imputed: np.ndarray
    probabilities: pd.DataFrame
    imputation: Imputation

    def filled_rows(self) -> np.ndarray:
        """Indices of the rows with at least one imputed cell (ascending)."""
        return np.flatnonzero(self.imputed.any(axis=1))

    def stats(self) -> dict:
        """``{cells, rows, mean_probability}``: imputed cells, rows with one, and the mean probability of
        the filled (most probable) value over the imputed cells (NaN when none was imputed)."""
        p = [P.max(axis=1) for _, P in self.imputation.cells.values() if len(P)]
        return {
            "cells": int(self.imputed.sum()),
            "rows": int(len(self.filled_rows())),
            "mean_probability": float(np.concatenate(p).mean()) if p else float("nan"),
        }

    def cell_probabilities(self, rows, top: int = 6) -> tuple[np.ndarray, np.ndarray]:
        """Per cell of ``rows`` x the model's variables: ``(P, dist)``.

        ``P[a, i]`` is the probability of the value filled into cell (rows[a], i), NaN for an observed
        cell; ``dist[a, i]`` lists the ``top`` most probable ``(state, probability)`` pairs of that cell,
        most probable first (None for an observed cell).
        """
        rows = np.asarray(rows, dtype=np.int64)
        P = np.full((len(rows), self.data.n_vars), np.nan)
        dist = np.full(P.shape, None, dtype=object)
        pos = {int(r): a for a, r in enumerate(rows)}
        for i, (rr, probs) in self.imputation.cells.items():
            for r, p in zip(rr, probs):
                a = pos.get(int(r))
                if a is not None:
                    P[a, i] = p.max()
                    dist[a, i] = [(self.data.states[i][k], float(p[k])) for k in np.argsort(-p)[:top]]
        return P, dist


def impute_with_model(model, data: CategoricalData) -> ImputedData:
    """Fill every missing cell of the model's variables in ``data`` with its most probable state.

    The distributions are the exact posteriors under ``model`` (no learning).  Columns of ``data``
    that the model does not know are kept unchanged in ``frame``.
    """
    t0 = time.perf_counter()
    aligned = model.align(data)
    cells = posterior_cells(model, aligned)
    imp = Imputation("bn", cells, model=model, seconds=time.perf_counter() - t0)
    completed = imp.completed(aligned)
    frame = data.frame.copy()
    for v in model.variables:
        frame[v] = completed.frame[v].to_numpy()
    imputed = aligned.codes < 0
    probs = imp.frame(aligned)
    return ImputedData(frame, completed, imputed, probs, imp)


# ====================================================================== the completed file
# What a filled cell of a discretized variable holds: one of FILL_NUMERIC (:mod:`.members`).


@dataclass(eq=False)
class CompletedFile:
    """A CSV file with the model's missing cells filled and every other cell exactly as written.

    Attributes
    ----------
    table : RawTable -- the file as read (:func:`bnfk_core.data.table.read_table`).
    changes : dict -- ``{(row, column): text}``, the filled cells (rows 0-based, as in the data).
    probabilities : DataFrame -- one line per (row, column, state): ``row``, ``line`` (the row's
        line in the file), ``column``, ``imputed`` (the most probable state), ``filled`` (the text
        put into the cell), ``state``, ``probability``.
    fill_numeric : str -- see :data:`FILL_NUMERIC`.
    notes : list of str
    """

    table: RawTable
    changes: dict
    probabilities: pd.DataFrame
    fill_numeric: str
    notes: list = field(default_factory=list)

    def text(self) -> str:
        """The completed file's text (the file's delimiter, line end, header, blank lines and order)."""
        return self.table.to_text(self.changes)

    def to_bytes(self) -> bytes:
        """The completed file as UTF-8 (with a byte-order mark when the input had one)."""
        return self.table.to_bytes(self.changes)

    def probabilities_csv(self) -> bytes:
        return self.probabilities.to_csv(index=False).encode("utf-8")

    def write(self, path, probabilities=None) -> None:
        """Write the completed file (and the probabilities) atomically: a failed write leaves no
        partial file."""
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(self.to_bytes())
        if probabilities:
            with atomic_path(probabilities) as tmp:
                with open(tmp, "wb") as fh:
                    fh.write(self.probabilities_csv())


def number(text: str) -> float | None:
    """The finite number a cell's text holds (surrounding blanks allowed), else None."""
    try:
        x = float(text.strip())
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def filled_column(probs: pd.DataFrame, texts: dict) -> pd.Series:
    """The text put into each probability line's cell: ``texts[column][imputed state]`` (every line of a cell
    names the cell's most probable state, which decides its text), one vectorised map per column."""
    out = np.empty(len(probs), dtype=object)
    column, imputed = probs["column"].to_numpy(dtype=object), probs["imputed"]
    for name, mapping in texts.items():
        m = column == name
        out[m] = imputed[m].map(mapping).to_numpy(dtype=object)
    return pd.Series(out, index=probs.index, dtype=object)


def complete_file(result: ImputedData, table: RawTable, *, fill_numeric: str = "median") -> CompletedFile:
    """Put the filled values of ``result`` into the file ``table`` was read from, changing nothing else.

    Only the cells that were missing in a model variable change; every other cell keeps its text
    (padding and all), and so do the header, the column order (columns the model does not use
    included), the row order and blank lines.  A filled cell holds the most probable state; for a
    discretized variable (interval states) ``fill_numeric`` chooses the bin's label or the median of
    the file's observed values in that bin (:data:`FILL_NUMERIC`).

    Parameters
    ----------
    result : ImputedData from :func:`impute_with_model` on the data read from the same file.
    table : RawTable of that file (:func:`bnfk_core.data.table.read_table`).
    fill_numeric : ``"median"`` (default) or ``"label"``.
    """
    fill_numeric = str(fill_numeric).lower()
    if fill_numeric not in FILL_NUMERIC:
        raise ImputeError(f"fill_numeric must be one of {', '.join(FILL_NUMERIC)}, not {fill_numeric!r}.")
    data = result.data
    if table.n_rows != data.n_rows:
        raise DataError(
            f"{table.source} has {table.n_rows} rows but the imputed data {data.n_rows}; "
            "read both from the same file."
        )
    changes, notes, texts = {}, [], {}
    for i in sorted(result.imputation.cells):
        rows, P = result.imputation.cells[i]
        if not len(rows):
            continue
        name, states = data.variables[i], data.states[i]
        table.column(name)
        best = np.argmax(P, axis=1)
        text = [states[k] for k in best]
        real = [s for s in states if s != MISSING_CATEGORY]
        if fill_numeric == "median" and real and all(parse_interval(s) is not None for s in real):
            raw = table.cells(name)
            observed = ~result.imputed[:, i]
            codes = data.codes[:, i]
            median, no_value = {}, []
            for k in sorted(set(best.tolist())):
                vals = [
                    (x, r)
                    for r in np.flatnonzero(observed & (codes == k))
                    if (x := number(raw[r])) is not None
                ]
                if vals:
                    vals.sort()
                    median[k] = raw[vals[(len(vals) - 1) // 2][1]].strip()
                else:
                    no_value.append(states[k])
            text = [median.get(k, states[k]) for k in best]
            if no_value:
                notes.append(
                    f"Column '{name}': no observed value lies in bin(s) {', '.join(no_value)}, "
                    "so those cells hold the bin's label."
                )
        for r, t in zip(rows, text):
            changes[(int(r), name)] = t
        texts[name] = {states[k]: t for k, t in zip(best.tolist(), text)}
    probs = result.probabilities.copy()
    probs.insert(1, "line", table.lines[probs["row"].to_numpy(dtype=np.int64)])
    probs.insert(probs.columns.get_loc("imputed") + 1, "filled", filled_column(probs, texts))
    return CompletedFile(table, changes, probs, fill_numeric, notes)
