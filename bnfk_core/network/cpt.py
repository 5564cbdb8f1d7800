"""One CPT as a table to look at and to edit: :func:`cpt_frame` gives P(X | parents) of a variable as a pandas
DataFrame (one row per parent configuration, one column per state), :func:`frame_to_cpt` reads such a table
back, :func:`with_cpt` puts an edited table into a new network (every row renormalised; zero entries allowed)
and :func:`zero_entries` lists a network's zero cells, which an edit may have made.

Rows follow the CPT layout of :mod:`bnfk_core.network.model`: parent configuration j is the C-order ravel of
the parents' state codes, parents in node order (the first varies slowest).  A row's label in the frame is a
:class:`pandas.MultiIndex` entry (one level per parent, named after it) and, as text,
:func:`parent_labels` gives ``"A=a, B=b"``; a root variable has one row, labelled ``"(no parents)"``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ModelError

__all__ = ["NO_PARENTS", "cpt_frame", "frame_to_cpt", "parent_labels", "with_cpt", "zero_entries"]

#: the label of the single row of a variable without parents
NO_PARENTS = "(no parents)"


def _index(model, variable: str) -> int:
    if variable not in model.variables:
        shown = ", ".join(model.variables[:12]) + (", ..." if model.n_vars > 12 else "")
        raise ModelError(f"'{variable}' is no variable of the model ({shown}).")
    return model.variables.index(variable)


def _configurations(model, i: int) -> list[tuple]:
    ps = model.parents[i]
    return list(np.ndindex(*[len(model.states[p]) for p in ps])) if ps else [()]


def parent_labels(model, variable: str) -> list[str]:
    """The readable label of every row of ``variable``'s CPT: ``"A=a, B=b"`` (parents in node order), or
    :data:`NO_PARENTS` for a root.

    Parameters
    ----------
    model : BayesNet
    variable : str

    Returns
    -------
    list of str
        One label per parent configuration, in CPT row order.
    """
    i = _index(model, variable)
    ps = model.parents[i]
    if not ps:
        return [NO_PARENTS]
    return [
        ", ".join(f"{model.variables[p]}={model.states[p][c]}" for p, c in zip(ps, cfg))
        for cfg in _configurations(model, i)
    ]


def cpt_frame(model, variable: str):
    """P(``variable`` | its parents) as a DataFrame.

    Parameters
    ----------
    model : BayesNet
    variable : str

    Returns
    -------
    pandas.DataFrame
        Shape (q, r): one row per parent configuration, indexed by a MultiIndex of the parents' states
        (levels named after the parents, in node order; a root has the single row :data:`NO_PARENTS`), one
        column per state (in the model's state order), entries theta_ijk.

    References
    ----------
    The bnfk paper, eq. (1): theta_ijk = P(X_i = k | pi_i = j).
    """
    import pandas as pd

    i = _index(model, variable)
    ps = model.parents[i]
    if ps:
        index = pd.MultiIndex.from_tuples(
            [tuple(model.states[p][c] for p, c in zip(ps, cfg)) for cfg in _configurations(model, i)],
            names=[model.variables[p] for p in ps],
        )
    else:
        index = pd.Index([NO_PARENTS], name="parents")
    return pd.DataFrame(np.array(model.cpts[i], dtype=float), index=index, columns=list(model.states[i]))


def frame_to_cpt(model, variable: str, frame) -> np.ndarray:
    """The (q, r) array of an edited :func:`cpt_frame` table, rows and columns matched by their labels when
    they carry the model's (a reordered frame gives the same array), else taken in order.

    Parameters
    ----------
    model : BayesNet
    variable : str
    frame : pandas.DataFrame or array-like
        q rows (one per parent configuration) and r columns (one per state).

    Returns
    -------
    ndarray of float, shape (q, r)
        Not yet checked nor renormalised (:func:`with_cpt` does both).

    Raises
    ------
    ModelError
        A table of the wrong shape, or an entry that is not a number.
    """
    i = _index(model, variable)
    want = model.cpts[i].shape
    if hasattr(frame, "columns") and hasattr(frame, "index"):
        ref = cpt_frame(model, variable)
        cols = [str(c) for c in frame.columns]
        if sorted(cols) == sorted(ref.columns) and len(cols) == want[1]:
            frame = frame.set_axis(cols, axis=1)[list(ref.columns)]
        if len(frame.index) == want[0] and set(frame.index) == set(ref.index):
            frame = frame.loc[ref.index]
        frame = frame.to_numpy()
    try:
        table = np.array(frame, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"The edited CPT of '{variable}' holds an entry that is not a number.") from None
    if table.shape != want:
        raise ModelError(
            f"The edited CPT of '{variable}' has shape {table.shape}, expected {want} "
            f"({want[0]} parent configurations x {want[1]} states)."
        )
    return table


def with_cpt(model, variable: str, table):
    """A new network equal to ``model`` but for ``variable``'s CPT, set to ``table`` with every row
    renormalised to sum to one.  Zero entries are allowed (:func:`zero_entries` lists them).

    Parameters
    ----------
    model : BayesNet
    variable : str
    table : pandas.DataFrame or array-like
        q x r, as :func:`cpt_frame` gives it (read by :func:`frame_to_cpt`); rows need not sum to one.

    Returns
    -------
    BayesNet
        With ``fit_info["edited"]`` listing the variables whose CPTs were edited (``model`` is unchanged).

    Raises
    ------
    ModelError
        One sentence naming the variable and the parent configuration of the first row holding a negative
        or non-finite entry or only zeros; a table of the wrong shape.
    """
    i = _index(model, variable)
    t = frame_to_cpt(model, variable, table)
    labels = None
    for j, row in enumerate(t):
        problem = (
            "an entry that is not a finite number"
            if not np.isfinite(row).all()
            else "a negative entry"
            if (row < 0).any()
            else "only zeros"
            if not row.sum() > 0
            else None
        )
        if problem:
            labels = labels or parent_labels(model, variable)
            raise ModelError(f"The edited CPT of '{variable}' has {problem} in row {labels[j]}.")
    t = t / t.sum(axis=1, keepdims=True)
    cpts = list(model.cpts)
    cpts[i] = np.ascontiguousarray(t)
    info = dict(model.fit_info)
    info["edited"] = sorted(set(info.get("edited", [])) | {variable}, key=model.variables.index)
    return replace(model, cpts=tuple(cpts), fit_info=info, _cache={})


def zero_entries(model, variable: str | None = None) -> list[tuple[str, str, str]]:
    """The zero cells of a network's CPTs (or of one variable's): each a ``(variable, parent configuration
    label, state)`` with P(state | configuration) = 0.

    Parameters
    ----------
    model : BayesNet
    variable : str, optional
        Only this variable's CPT.

    Returns
    -------
    list of tuple of str
        In model order, rows in CPT order (labels of :func:`parent_labels`).
    """
    wanted = range(model.n_vars) if variable is None else [_index(model, variable)]
    out = []
    for i in wanted:
        rows, cols = np.nonzero(model.cpts[i] == 0)
        if rows.size:
            labels = parent_labels(model, model.variables[i])
            v = model.variables[i]
            out += [(v, labels[j], model.states[i][k]) for j, k in zip(rows.tolist(), cols.tolist())]
    return out
