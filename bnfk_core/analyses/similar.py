"""Similar cases for a partial case: the rows of a table most similar, under a network's Fisher kernel, to a
case of which only some variables are known (the evidence).

The partial case x_e (evidence e on some variables, every other cell missing) gets the marginalised Fisher
features of :mod:`bnfk_core.kernels.features`, E[phi(X) | e] under the network, and each row y of the table
its own features phi(y) (E[phi(Y) | y_obs] where y has missing cells), so that

    K(x_e, y) = E[phi(X) | e] . phi(y) = E[ s(X)^T I^-1 s(y) | e ],

the Fisher kernel of the paper (Theorem 1; "Multivariate Fisher kernel", eqs. 8-9) with the partial case's
missing cells marginalised (the paper's conclusion).  The Fisher information of a network is block diagonal
over its families (one block per variable and parent configuration), so the kernel is a sum of one term per
family, K = sum_i K_i: the *contribution* of variable i is the term of its family (X_i given its parents),

    C_i(x_e, y) = E[phi_i(X) | e] . phi_i(y),

which for a complete row y is

    C_i = P(pi_i = j | e) / P(pi_i = j) * ( P(X_i = y_i | pi_i = j, e) / theta_{i j y_i} - 1 ),  j = pi_i(y).

A variable outside the evidence contributes through its family's posterior (it is 0 when e tells nothing
about that family), and an observed variable also acts through its children's terms.  Cosine-normalised
(``normalize=True``) every term is divided by sqrt(K(x_e, x_e) K(y, y)), so the contributions still sum to
the similarity.

One feature row for the partial case against the table's features, a block of rows at a time: linear in the
table's rows, no N x N matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..data.limits import DEFAULT_MAX_BYTES, format_bytes, resolve_limit
from ..data.table import as_data
from ..errors import DataError, KernelError, ModelError
from ..inference.evidence import evidence_codes
from ..inference.queries import log_evidence, parent_marginals
from ..kernels.features import FEATURE_CHUNK_ROWS, feature_offsets, features, iter_features, row_codes

__all__ = ["Similar", "similar", "similar_frame", "check_evidence", "ranking", "TIE_DIGITS"]

#: similarities equal to this many significant digits (of the largest |similarity|) are ties, ordered by row
TIE_DIGITS = 12
#: a partial case whose squared feature norm K(x_e, x_e) is below this carries nothing the kernel sees
_ZERO_NORM = 1e-20


@dataclass(frozen=True)
class Similar:
    """The answer of :func:`similar`.

    Attributes
    ----------
    rows : ndarray of int, shape (k,)
        0-based row indices into the table, most similar first (ties: the lower row first).
    similarity : ndarray of float, shape (k,)
        K(x_e, y) of those rows (cosine-normalised when ``normalize``).
    contributions : ndarray of float, shape (k, n_vars)
        Per row, the term of every variable's family (module docstring); each row sums to its similarity.
    variables : tuple of str
        The network's variables, the columns of ``contributions``.
    values : tuple of tuple
        Per row, its state of every variable (None where the cell is missing).
    labels : tuple or None
        Per row, its state of the table's class column (None where missing), when the table has a class
        column that is no variable of the network; else None.
    class_column : str or None
        That column's name.
    evidence : dict
        The evidence, ``{variable: state}``.
    normalize : bool
        Whether the similarities are cosine-normalised.
    self_similarity : float
        K(x_e, x_e), the partial case's squared feature norm (unnormalised).
    log_evidence : float
        log P(e) under the network.
    n_rows : int
        Rows of the table ranked.
    notes : tuple of str
    """

    rows: np.ndarray
    similarity: np.ndarray
    contributions: np.ndarray
    variables: tuple
    values: tuple
    labels: tuple | None
    class_column: str | None
    evidence: dict
    normalize: bool
    self_similarity: float
    log_evidence: float
    n_rows: int
    notes: tuple = field(default_factory=tuple)

    def to_dict(self) -> dict:
        """The answer as JSON-ready values: ``rows`` (0-based), ``similarity``, ``contributions`` (one
        ``{variable: term}`` per row), ``values`` (one ``{variable: state or None}`` per row) and the rest.

        Returns
        -------
        dict
        """
        return {
            "evidence": dict(self.evidence),
            "rows": [int(r) for r in self.rows],
            "similarity": [float(s) for s in self.similarity],
            "contributions": [
                {v: float(c) for v, c in zip(self.variables, row)} for row in self.contributions
            ],
            "values": [dict(zip(self.variables, vals)) for vals in self.values],
            **({"class_column": self.class_column, "labels": list(self.labels)} if self.labels else {}),
            "normalize": self.normalize,
            "self_similarity": self.self_similarity,
            "log_evidence": self.log_evidence,
            "n_rows": self.n_rows,
            "notes": list(self.notes),
        }


def check_evidence(model, evidence: Mapping[str, str]) -> tuple[dict, np.ndarray, float]:
    """The evidence as text, its row of codes and log P(evidence), refused in one sentence when it cannot be
    a partial case: no evidence at all, an unknown variable or state, or evidence of probability zero.

    Parameters
    ----------
    model : BayesNet
    evidence : mapping of str to str
        ``{variable: state}`` in the model's names.

    Returns
    -------
    evidence : dict
    codes : ndarray of int64, shape (n_vars,)
        The evidence's state codes, -1 elsewhere.
    log_evidence : float

    Raises
    ------
    ModelError
        Empty evidence, an unknown variable or state, or evidence the model gives probability zero.
    """
    evidence = {str(k): str(v) for k, v in (evidence or {}).items()}
    if not evidence:
        raise ModelError(
            "Similar cases need evidence on at least one variable: with none, every row is equally similar."
        )
    codes = evidence_codes(model, evidence)
    log_z = float(log_evidence(model, codes[None, :])[0])
    if not math.isfinite(log_z):
        shown = ", ".join(f"{k}={v}" for k, v in evidence.items())
        raise ModelError(f"The evidence {shown} has probability zero under the model.")
    return evidence, codes, log_z


def _default_network(data):
    """The default recipe's network learned on the table's feature columns."""
    from ..learning.recipe import learn_recipe

    return learn_recipe(as_data(data).without_class()).model


def _block_sums(model, P, phi: np.ndarray) -> np.ndarray:
    """Per row of the sparse features ``P``, the sum over every variable's block of ``P * phi``."""
    off = feature_offsets(model)
    prod = P.multiply(phi[None, :]).tocsr()
    out = np.zeros((P.shape[0], model.n_vars))
    rows = np.repeat(np.arange(P.shape[0]), np.diff(prod.indptr))
    np.add.at(out, (rows, np.searchsorted(off, prod.indices, side="right") - 1), prod.data)
    return out


def _labels(data, model, rows) -> tuple:
    """(the class states of ``rows``, the class column) of a table whose class column is no node, else
    (None, None)."""
    cls = getattr(data, "class_column", None)
    if cls is None or cls in model.variables or cls not in getattr(data, "variables", ()):
        return None, None
    j = data.variables.index(cls)
    return tuple(data.states[j][c] if c >= 0 else None for c in data.codes[rows, j]), cls


def _guard(model, n: int, k: int, max_bytes) -> None:
    """Refuse before any work when the per-row arrays, the dense feature row of the partial case and the
    ``k`` rows' contributions (with their features) would exceed the memory limit."""
    width = int(feature_offsets(model)[-1])
    need = 8 * (4 * n + width) + k * (8 * model.n_vars + 24 * sum(t.shape[1] for t in model.cpts))
    limit = resolve_limit(max_bytes)
    if limit is not None and need > limit:
        raise KernelError(
            f"The {k:,} most similar rows of {model.n_vars:,} variables need {format_bytes(need)}, over the "
            f"memory limit of {format_bytes(limit)}; ask for fewer rows (k) or raise the memory limit."
        )


def ranking(similarity: np.ndarray) -> np.ndarray:
    """Row indices from the most to the least similar: by ``similarity`` rounded to :data:`TIE_DIGITS`
    significant digits of the largest |similarity| (so that rounding noise does not decide), ties by row.

    Parameters
    ----------
    similarity : ndarray of float, shape (N,)

    Returns
    -------
    ndarray of int, shape (N,)
    """
    s = np.asarray(similarity, dtype=float)
    scale = float(np.max(np.abs(s))) if s.size else 0.0
    key = np.round(s / scale, TIE_DIGITS) if scale > 0 else np.zeros_like(s)
    return np.lexsort((np.arange(s.size), -key))


def similar(
    model,
    data,
    evidence: Mapping[str, str],
    k: int = 10,
    *,
    normalize: bool = False,
    chunk_rows: int = FEATURE_CHUNK_ROWS,
    max_bytes: float | None = DEFAULT_MAX_BYTES,
) -> Similar:
    """The ``k`` rows of ``data`` most similar to the partial case ``evidence`` under the network's Fisher
    kernel, the partial case's missing cells marginalised (module docstring), with every variable's
    contribution.

    Parameters
    ----------
    model : BayesNet or None
        The network (a model file's, a textbook network, one learned or fitted on the data); None: the
        default recipe's network learned on ``data``'s feature columns
        (:func:`bnfk_core.learning.recipe.learn_recipe`).
    data : CategoricalData or pandas.DataFrame
        The table whose rows are ranked; it must hold the model's variables (other columns are ignored).
    evidence : mapping of str to str
        The partial case, ``{variable: state}``; every other variable is missing.
    k : int
        How many rows (at least 1; all rows when the table has fewer).
    normalize : bool
        Cosine-normalise: K(x_e, y) / sqrt(K(x_e, x_e) K(y, y)) (a row whose features are zero gets 0).
    chunk_rows : int
        Rows of the table whose features are built at once.
    max_bytes : float or None
        Refuse (KernelError) when the similarities, the partial case's dense feature row and the ``k`` rows'
        contributions would exceed this many bytes (default: the limit set for this run).

    Returns
    -------
    Similar
        ``rows`` (0-based), ``similarity`` and ``contributions`` (the family terms C_i, summing to the
        similarity).

    Raises
    ------
    ModelError
        No evidence, an unknown variable or state, or evidence of probability zero.
    DataError
        A table without rows, or without one of the model's variables.
    KernelError
        ``k`` below 1, a row the model gives probability zero, evidence the kernel cannot see
        (E[phi | e] = 0), or more memory than ``max_bytes``.

    References
    ----------
    The bnfk paper, Theorem 1 (eq. 2), "Multivariate Fisher kernel" (eqs. 8-9) and its conclusion (the
    marginalised kernel of rows with missing values).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise KernelError(f"The number of similar cases k must be a whole number of at least 1, not {k!r}.")
    if model is None:
        model = _default_network(data)
    evidence, x, log_z = check_evidence(model, evidence)
    codes = row_codes(model, data)
    n = codes.shape[0]
    if n == 0:
        raise DataError(f"{getattr(data, 'source', 'The table')} has no rows to compare with.")
    _guard(model, n, min(int(k), n), max_bytes)
    pm = parent_marginals(model)
    phi = features(model, x[None, :], marginals=pm).toarray().ravel()
    kxx = float(phi @ phi)
    if kxx < _ZERO_NORM:
        raise KernelError(
            "The evidence "
            + ", ".join(f"{a}={b}" for a, b in evidence.items())
            + " tells the Fisher kernel nothing (its expected features are zero): every row is equally "
            "similar."
        )
    sim = np.empty(n)
    kyy = np.empty(n) if normalize else None
    for start, P in iter_features(model, codes, chunk_rows, marginals=pm):
        sim[start : start + P.shape[0]] = P @ phi
        if normalize:
            kyy[start : start + P.shape[0]] = np.asarray(P.multiply(P).sum(axis=1)).ravel()
    scale = np.ones(n)
    if normalize:
        scale = np.divide(1.0, np.sqrt(kxx * kyy), out=np.zeros(n), where=kyy > 0)
        sim = sim * scale
    top = ranking(sim)[: min(int(k), n)]
    contrib = _block_sums(model, features(model, codes[top], marginals=pm), phi) * scale[top, None]
    values = tuple(
        tuple(model.states[i][c] if c >= 0 else None for i, c in enumerate(row)) for row in codes[top]
    )
    labels, cls = _labels(data, model, top)
    notes = () if k <= n else (f"the table has {n} rows, fewer than k = {k}: all of them are ranked",)
    if getattr(data, "weights", None) is not None:
        notes += (
            "the table holds distinct rows with their counts: the row indices are those of the distinct rows",
        )
    return Similar(
        rows=top.astype(np.int64),
        similarity=sim[top],
        contributions=contrib,
        variables=tuple(model.variables),
        values=values,
        labels=labels,
        class_column=cls,
        evidence=evidence,
        normalize=bool(normalize),
        self_similarity=kxx,
        log_evidence=log_z,
        n_rows=n,
        notes=notes,
    )


def similar_frame(result: Similar):
    """:func:`similar`'s answer as one table: a row per similar case with its ``row`` (0-based),
    ``similarity``, its values and (columns ``contribution: V``) every variable's contribution.

    Parameters
    ----------
    result : Similar

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    frame = pd.DataFrame(
        {"rank": np.arange(1, len(result.rows) + 1), "row": result.rows, "similarity": result.similarity}
    )
    taken = set(frame.columns)

    def name(v: str) -> str:  # a value column named like another column is called "value: v"
        out = v if v not in taken and not v.startswith("contribution: ") else f"value: {v}"
        taken.add(out)
        return out

    if result.labels is not None:
        frame[name(result.class_column)] = list(result.labels)
    for j, v in enumerate(result.variables):
        frame[name(v)] = [vals[j] for vals in result.values]
    for j, v in enumerate(result.variables):
        frame[f"contribution: {v}"] = result.contributions[:, j]
    return frame
