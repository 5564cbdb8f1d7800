"""What the Kernel page and the report's kernel section show, written once: the Gram panels' titles, the
pair the page starts with, the rows' values, the per-variable contributions table, the mean kernel values
within and between classes and the variables that pull a pair together and apart."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "MISSING_SHOWN",
    "class_means",
    "contributions_table",
    "first_pair",
    "histogram_title",
    "main_title",
    "row_labels",
    "shown_values",
    "strongest_terms",
]

#: how a missing cell is shown beside a row's values
MISSING_SHOWN = "(missing)"


def main_title(spec, n_arcs: int) -> str:
    """The title of the main Gram panel: a network kernel names the current structure's size.

    Parameters
    ----------
    spec : KernelSpec
    n_arcs : int

    Returns
    -------
    str
    """
    return f"{spec.label}: current structure ({n_arcs} arcs)" if spec.uses_network else f"{spec.label} kernel"


def histogram_title(spec) -> str:
    """The title of the pair-value histogram.

    Parameters
    ----------
    spec : KernelSpec

    Returns
    -------
    str
    """
    return f"{spec.label} kernel values of distinct pairs"


def first_pair(K: np.ndarray) -> tuple[int, int]:
    """Positions (A, B) of the pair shown first: A = the first row, B = the row most similar to it (cosine,
    K(a, b) / sqrt(K(a, a) K(b, b))); B = A for a single row.

    Parameters
    ----------
    K : ndarray, shape (N, N)

    Returns
    -------
    (int, int)
    """
    if len(K) < 2:
        return 0, 0
    dg = np.sqrt(np.maximum(np.diag(K), 1e-300))
    cos = K[0] / (dg[0] * dg)
    cos[0] = -np.inf
    return 0, int(np.argmax(cos))


def row_labels(rows, labels, cls_states=()) -> dict:
    """How a picker names each row: ``#row``, with `` · class`` when ``cls_states`` is given and the row's
    class (``labels``, its index into ``cls_states``; negative when missing) is known.

    Parameters
    ----------
    rows : sequence of int
    labels : sequence of int, one per row
    cls_states : sequence of str

    Returns
    -------
    dict
        row -> its label
    """
    return {
        int(r): f"#{int(r)}" + (f" · {cls_states[int(c)]}" if len(cls_states) and c >= 0 else "")
        for r, c in zip(rows, labels)
    }


def shown_values(data, row: int, variables) -> list:
    """The values of ``row`` of ``data`` in ``variables``, a missing cell as :data:`MISSING_SHOWN`.

    Parameters
    ----------
    data : CategoricalData
    row : int
    variables : sequence of str

    Returns
    -------
    list
    """
    at = data.frame.at
    return [MISSING_SHOWN if (x := at[row, v]) is None else x for v in variables]


def contributions_table(variables, xa, xb, contrib) -> pd.DataFrame:
    """The per-variable terms K_i of a pair beside the two rows' values (Theorem 1: they sum to K(A, B)).

    Parameters
    ----------
    variables : sequence of str
    xa, xb : sequence
        The two rows' values.
    contrib : ndarray, shape (n_vars,)

    Returns
    -------
    pandas.DataFrame

    References
    ----------
    Paper, Theorem 1.
    """
    return pd.DataFrame({"variable": list(variables), "row A": xa, "row B": xb, "K_i": contrib})


def class_means(pair_values: dict) -> tuple[float | None, float]:
    """The mean kernel value of the pairs within a class and of the pairs between classes.

    Parameters
    ----------
    pair_values : dict
        ``{"within": {class: ndarray}, "between": ndarray}``, the off-diagonal kernel values of the sampled
        rows by pair kind (the kernel analysis's ``"pairs"``); ``between`` not empty.

    Returns
    -------
    within : float or None
        None when no two rows share a class.
    between : float
    """
    within = np.concatenate([v for v in pair_values["within"].values()] or [np.zeros(0)])
    return (float(within.mean()) if len(within) else None), float(pair_values["between"].mean())


def strongest_terms(variables, contrib, n: int = 3) -> tuple[list, list]:
    """The variables that pull a pair together and apart most.

    Parameters
    ----------
    variables : sequence of str
    contrib : ndarray, shape (n_vars,)
        The per-variable terms K_i of the pair (Theorem 1).
    n : int
        At most this many of each.

    Returns
    -------
    agree : list of str
        The variables of the ``n`` largest terms that are positive, the largest first.
    disagree : list of str
        The variables of the ``n`` smallest terms that are negative, the most negative first.
    """
    top = np.argsort(contrib)[::-1]
    agree = [variables[i] for i in top[:n] if contrib[i] > 0]
    disagree = [variables[i] for i in top[::-1][:n] if contrib[i] < 0]
    return agree, disagree
