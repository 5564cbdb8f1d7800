"""A column's states from its cell texts: nominal levels in order, quantile bins of numeric columns, or the
states of a given model (values aligned to them, numbers put into interval states) -- what
:func:`bnfk_core.data.table.load_csv` and the streaming reader
(:func:`bnfk_core.data.stream.plan_from_levels`) both derive a column's codes with.

A level is a distinct trimmed cell text; ``inv`` maps rows to levels (or, for the streaming reader, is
``arange(len(levels))`` with ``level_counts`` the rows of each level)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import DataError, shorten

__all__ = [
    "MISSING_CATEGORY",
    "MISSING_POLICIES",
    "text_levels",
    "as_numbers",
    "interval_label",
    "parse_interval",
    "quantile_bins",
    "weighted_quantile_bins",
    "show_value",
    "check_options",
    "check_columns",
    "column_states",
    "binning_notes",
    "model_columns",
]

#: Under ``missing_policy="category"`` every missing token of a column becomes this one state.
MISSING_CATEGORY = "?"


MISSING_POLICIES = ("missing", "category")


_INTERVAL_RE = re.compile(r"^([\[(])\s*([^,\s]+)\s*,\s*([^,\s\])]+)\s*([\])])$")


def text_levels(raw: np.ndarray):
    """Per-row index into the distinct stripped values, and those values (no per-cell loop)."""
    raw_codes, uniq = pd.factorize(raw)
    stripped = np.array([u.strip() for u in uniq], dtype=object)
    lcodes, lev = pd.factorize(stripped)
    return np.asarray(lcodes, dtype=np.int64)[raw_codes], [str(x) for x in lev]


def as_numbers(levels) -> np.ndarray | None:
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


def quantile_bins(row_values: np.ndarray, bins: int):
    """Edges (data values at the quantiles, deduplicated) and bin labels."""
    q = np.quantile(row_values, np.linspace(0.0, 1.0, bins + 1), method="nearest")
    edges = np.unique(q)
    if edges.size < 2:  # cannot happen with > max_levels distinct values, but stay safe
        edges = np.array([edges[0], edges[0]])
    nb = edges.size - 1
    labels = tuple(interval_label(edges[k], edges[k + 1], k == nb - 1) for k in range(nb))
    return edges, labels


def weighted_quantile_bins(values: np.ndarray, counts: np.ndarray, bins: int):
    """:func:`quantile_bins` of the rows holding ``values[k]`` ``counts[k]`` times, without those rows.

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


def show_value(value: str) -> str:
    return "an empty field" if value == "" else f"'{value}'"


def check_options(missing_policy, discretize_bins, max_levels, drop_columns, class_column):
    if missing_policy not in MISSING_POLICIES:
        raise DataError(f"missing_policy must be 'missing' or 'category', not {missing_policy!r}.")
    if discretize_bins is None or discretize_bins is False:
        discretize_bins = 0
    if (
        isinstance(discretize_bins, (bool, np.bool_))
        or not isinstance(discretize_bins, (int, np.integer))
        or discretize_bins < 0
        or discretize_bins == 1
    ):
        raise DataError(
            f"discretize_bins must be None, 0 or an integer of at least 2, not {discretize_bins!r}."
        )
    if (
        isinstance(max_levels, (bool, np.bool_))
        or not isinstance(max_levels, (int, np.integer))
        or max_levels < 2
    ):
        raise DataError(f"max_levels must be an integer of at least 2, not {max_levels!r}.")
    if drop_columns is None:
        drop_columns = ()
    if isinstance(drop_columns, str):
        drop_columns = (drop_columns,)
    drop_columns = tuple(str(c).strip() for c in drop_columns)
    if class_column is not None:
        class_column = str(class_column).strip()
    return int(discretize_bins), int(max_levels), drop_columns, class_column


def check_columns(header, drop_columns, class_column, source: str, notes: list) -> None:
    """``drop_columns`` and ``class_column`` must name columns of ``header`` (and not the same one)."""
    for c in drop_columns:
        if c not in header:
            raise DataError(f"drop_columns names '{c}', which is not a column of {source}.")
    if class_column is not None:
        if class_column not in header:
            raise DataError(
                f"Class column '{class_column}' is not a column of {source} (columns: {_list(header)})."
            )
        if class_column in drop_columns:
            raise DataError(f"Class column '{class_column}' is also listed in drop_columns.")
    if drop_columns:
        notes.append(f"Dropped column(s) {_list(drop_columns)}.")


def column_states(
    name,
    lev,
    miss_lev,
    inv,
    model_states,
    policy,
    bins,
    max_levels,
    source,
    is_class,
    lines,
    notes: list,
    discretized: list,
    fewer: list,
    level_counts=None,
):
    """(state code of each level, states) of one column: the model's states when given
    (:func:`_align_levels`), else derived from the levels (:func:`_code_levels`; discretized and
    fewer-bins columns are collected for :func:`binning_notes`)."""
    if model_states is not None:
        return _align_levels(
            name, lev, miss_lev, inv, model_states, policy, lines, source, notes, level_counts
        ), model_states
    level_code, st, how = _code_levels(
        name, lev, miss_lev, inv, policy, bins, max_levels, source, is_class, level_counts=level_counts
    )
    if how == "many-classes":
        notes.append(
            f"Class column '{name}' has {len(st)} classes (more than "
            f"max_levels={max_levels}); it was kept as nominal."
        )
    if how == "discretized":
        discretized.append(name)
        if len(st) - (MISSING_CATEGORY in st and policy == "category") < bins:
            fewer.append(name)
    return level_code, st


def binning_notes(discretized: list, fewer: list, bins: int, max_levels: int, notes: list) -> None:
    if discretized:
        notes.append(
            f"Discretized {len(discretized)} numeric column(s) with more than {max_levels} "
            f"distinct values into {bins} quantile bins: {_list(discretized)}."
        )
    if fewer:
        notes.append(f"Tied values gave fewer than {bins} bins in {_list(fewer)}.")


def _list(names, limit: int = 8) -> str:
    names = [f"'{n}'" for n in names]
    if len(names) > limit:
        names = names[:limit] + [f"... ({len(names) - limit} more)"]
    return ", ".join(names)


_ID_SUFFIX = re.compile(r"(?i)(^|[\s_.-])(id|ids|key|idx|index|no|nr|num|number)$")
_ID_CAMEL = re.compile(r"[a-z](ID|Id|Key|No|Nr|Num|Number|Index)$")
_ID_WORD = re.compile(r"(?i)(row|record|case|patient|subject|sample|respondent|obs)s?")


def identifier_name(name: str) -> bool:
    """Whether a column's name says it numbers the rows (``id``, ``patient_id``, ``EmployeeNumber``,
    ``record``, ...): with a different whole number in every row, such a column is an identifier, refused like
    a text identifier; a measurement whose values happen to differ (an exact income) keeps its bins."""
    n = str(name).strip()
    return bool(_ID_SUFFIX.search(n) or _ID_CAMEL.search(n) or _ID_WORD.fullmatch(n))


def _code_levels(
    name, lev, miss_lev, inv, policy, bins, max_levels, source, is_class=False, level_counts=None
):
    """Level -> state code, the ordered states, and 'nominal', 'discretized' or 'many-classes'.

    The class column is never discretized nor refused: the user named it explicitly.
    ``level_counts`` (the streaming reader, :mod:`bnfk_core.data.stream`): the number of rows of each
    level, given instead of the rows themselves (``inv`` is then ``arange(len(lev))``).
    """
    real = np.flatnonzero(~miss_lev)
    real_levels = [lev[k] for k in real]
    nums = as_numbers(real_levels)
    level_code = np.full(len(lev), -1, dtype=np.int64)
    how = "nominal"
    if len(real_levels) > max_levels and not is_class:
        if nums is None:
            vals = pd.to_numeric(pd.Series(real_levels, dtype=object), errors="coerce").to_numpy(float)
            if not np.isnan(vals).any() or (np.isinf(vals).any() and np.isnan(vals).sum() <= 1):
                bad = next(str(v) for v, x in zip(real_levels, vals) if not np.isfinite(x))
                raise DataError(
                    f"Column '{name}' of {source} holds numbers and the value '{shorten(bad, 40)}', "
                    "which is not a finite number, so it cannot be binned; blank or replace those "
                    f"cells, or drop it with drop_columns=['{name}']."
                )
            raise DataError(
                f"Column '{name}' of {source} has {len(real_levels)} distinct values "
                f"(more than max_levels={max_levels}); it looks like an identifier or "
                f"free text, so drop it with drop_columns=['{name}']."
            )
        counts = (
            np.asarray(level_counts)[real]
            if level_counts is not None
            else np.bincount(inv, minlength=len(lev))[real]
        )
        if np.all(counts == 1) and np.all(nums == np.round(nums)) and identifier_name(name):
            raise DataError(
                f"Column '{name}' of {source} holds a different whole number in every row "
                f"({len(real_levels)} of them): it looks like an identifier, not a feature, so drop it "
                f"with drop_columns=['{name}']."
            )
        if not bins:
            raise DataError(
                f"Column '{name}' of {source} has {len(real_levels)} distinct numeric "
                f"values (more than max_levels={max_levels}) and discretization is off; "
                f"set discretize_bins or drop it with drop_columns=['{name}']."
            )
        if level_counts is not None:
            edges, st = weighted_quantile_bins(nums, np.asarray(level_counts)[real], bins)
        else:
            value_of_level = np.full(len(lev), np.nan)
            value_of_level[real] = nums
            row_vals = value_of_level[inv]
            row_vals = row_vals[~np.isnan(row_vals)]
            edges, st = quantile_bins(row_vals, bins)
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


def model_columns(model, names, class_column, source: str, notes: list):
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
        raise DataError(
            f"Column(s) {_list(extra)} of {source} are not variables of the model; "
            f"drop them with drop_columns={extra!r}."
        )
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
    hidden = (getattr(model, "fit_info", None) or {}).get(
        "hidden"
    )  # a latent class network's class: no column
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
        unknown = _map_intervals(
            name, lev, unknown, inv, states, level_code, lines, source, notes, level_counts
        )
    elif unknown:
        real_states = [s for s in states if s != MISSING_CATEGORY]
        snums = as_numbers(real_states)
        if snums is not None and len(set(snums.tolist())) == len(snums):
            by_value = {float(x): index[s] for x, s in zip(snums, real_states)}
            still = []
            for k in unknown:
                vals = None if miss_lev[k] else as_numbers([lev[k]])
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
            raise DataError(
                f"Missing value ({show_value(lev[k])}) of variable '{name}' on {_at(lines, row)} "
                f"of {source} has no state in the model (states: {shown}); "
                "use missing_policy='missing'."
            )
        raise DataError(
            f"Value {show_value(lev[k])} of variable '{name}' on {_at(lines, row)} of {source} "
            f"is not a state of the model (states: {shown})."
        )
    return level_code


def _at(lines, row: int) -> str:
    """Where row ``row`` is, for messages: ``line N`` of a file (``lines`` holds line numbers), or the text
    ``lines[row]`` gives (a table read from a DataFrame says ``row N``)."""
    where = lines[row]
    return where if isinstance(where, str) else f"line {where}"


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
        vals = as_numbers([lev[k]])
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
        notes.append(
            f"Variable '{name}': {below} value(s) below and {above} above the model's "
            "intervals were put in the first/last interval."
        )
    return still
