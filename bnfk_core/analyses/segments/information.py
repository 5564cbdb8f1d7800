"""Information measures that suggest a segment's variables (thesis chapter 6).

Mutual-information ranking (:func:`mi_ranking`) suggests pairs and triples of feature columns for a
segment (:func:`default_segment_variables` picks the Segments lab's starting ones); collapsed-variable
statistics (:func:`collapsed_stats`) give Theil's U and Cramér's V of single variables and of their
collapsed combination against the label (thesis Tables 6.2–6.3).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...data.stats import (
    BINCOUNT_CONFIGS,
    collapse,
    cramers_v,
    entropy,
    entropy_of_counts,
    mutual_information,
    theils_u,
)
from ...errors import StructureError
from ...network.dag import SEGMENT_KINDS, apply_segment
from .tables import SegmentError, feature_columns

__all__ = ["mi_ranking", "collapsed_stats", "default_segment_variables", "segment_variables_after"]


def mi_ranking(data, kind: str = "single-arc", *, top: int = 10, exclude: Sequence[str] = ()) -> pd.DataFrame:
    """Pairs (``single-arc``) or triples (``v``, ``a``, ``chain``, ``full``) of feature columns with the
    highest empirical mutual information, the label column excluded.

    Scores (nats), with the variables listed in the segment's role order so that they can be passed to
    :func:`case_table` / :func:`bnfk_core.network.dag.apply_segment` as they are:

    * pairs: I(u; v);
    * ``a`` / ``chain`` (u is the hub, equivalent structures): max over the hub of I(u; v) + I(u; w);
    * ``v`` (w is the child): max over the child of I(w; (u, v));
    * ``full``: the total correlation H(u) + H(v) + H(w) − H(u, v, w).

    Columns ``variables``, ``score``, ``mi_uv``, ``mi_uw``, ``mi_vw`` (pairwise, over the rows observed
    on the three), best first; ties keep column order.

    Parameters
    ----------
    data : CategoricalData
    kind : str
    top : int
    exclude : sequence of str
        Columns left out.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    SegmentError
        For an unknown kind or too few feature columns.
    """
    if kind not in SEGMENT_KINDS:
        raise SegmentError(f"Unknown segment kind '{kind}'; choose one of {', '.join(SEGMENT_KINDS)}.")
    feats = feature_columns(data)
    names = [v for v in feats.variables if v not in set(exclude)]
    C = feats.select(names).codes if names else np.zeros((feats.n_rows, 0), np.int64)
    n = len(names)
    if n < (2 if kind == "single-arc" else 3):
        raise SegmentError(
            f"{data.source} has {n} feature columns; the '{kind}' suggestion needs "
            f"{2 if kind == 'single-arc' else 3}."
        )
    out = []
    if kind == "single-arc":
        for i, j in itertools.combinations(range(n), 2):
            mi = mutual_information(C[:, i], C[:, j])
            out.append({"variables": (names[i], names[j]), "score": mi, "mi_uv": mi})
    else:
        full = ~(C < 0).any(axis=0)  # columns without a missing cell: every row is observed on them
        one = {i: entropy(C[:, [i]]) for i in range(n) if full[i]}
        two: dict = {}

        def pair_h(i, j):
            if (i, j) not in two:
                two[(i, j)] = entropy(C[:, [i, j]])
            return two[(i, j)]

        for i, j, k in itertools.combinations(range(n), 3):
            T = C[:, [i, j, k]]
            if full[i] and full[j] and full[k]:  # the same rows for every entropy: reuse the cached ones
                h1 = [one[i], one[j], one[k]]
                h2 = {(0, 1): pair_h(i, j), (0, 2): pair_h(i, k), (1, 2): pair_h(j, k)}
                h3 = entropy(T)
            else:  # rows observed on the three: one count table, its margins
                h1, h2, h3 = _triple_entropies(T[(T >= 0).all(axis=1)])
            mi = {ab: max(h1[ab[0]] + h1[ab[1]] - h, 0.0) for ab, h in h2.items()}

            def I(a, b):
                return mi[tuple(sorted((a, b)))]

            trip = (i, j, k)
            if kind in ("a", "chain"):
                best = max(range(3), key=lambda hub: (sum(I(hub, o) for o in range(3) if o != hub), -hub))
                others = sorted((o for o in range(3) if o != best), key=lambda o: -I(best, o))
                order, score = [best] + others, sum(I(best, o) for o in others)
            elif kind == "v":

                def child_score(c):
                    pa = [o for o in range(3) if o != c]
                    return h1[c] + h2[tuple(pa)] - h3

                best = max(range(3), key=lambda c: (child_score(c), -c))
                order, score = [o for o in range(3) if o != best] + [best], max(child_score(best), 0.0)
            else:
                order, score = [0, 1, 2], max(sum(h1) - h3, 0.0)
            out.append(
                {
                    "variables": tuple(names[trip[o]] for o in order),
                    "score": score,
                    "mi_uv": I(order[0], order[1]),
                    "mi_uw": I(order[0], order[2]),
                    "mi_vw": I(order[1], order[2]),
                }
            )
    df = pd.DataFrame(out)
    df = df.sort_values("score", ascending=False, kind="stable").head(int(top)).reset_index(drop=True)
    return df


def _triple_entropies(T: np.ndarray) -> tuple[list, dict, float]:
    """Entropies of each column, each pair and all three of the complete rows ``T`` (n x 3), from one count
    table of the three and its margins -- equal, bit for bit, to :func:`bnfk_core.data.stats.entropy` of
    each."""
    if len(T) == 0:
        return [0.0] * 3, {ab: 0.0 for ab in itertools.combinations(range(3), 2)}, 0.0
    r = T.max(axis=0).astype(np.int64) + 1
    if float(np.prod(r.astype(float))) > max(BINCOUNT_CONFIGS, 4 * len(T)):  # many levels: entropy by entropy
        return (
            [entropy(T[:, [a]]) for a in range(3)],
            {(a, b): entropy(T[:, [a, b]]) for a, b in itertools.combinations(range(3), 2)},
            entropy(T),
        )
    key = (T[:, 0].astype(np.int64) * r[1] + T[:, 1]) * r[2] + T[:, 2]
    N = np.bincount(key, minlength=int(np.prod(r))).reshape(r)
    h1 = [
        entropy_of_counts(N.sum(axis=(1, 2))),
        entropy_of_counts(N.sum(axis=(0, 2))),
        entropy_of_counts(N.sum(axis=(0, 1))),
    ]
    h2 = {
        (0, 1): entropy_of_counts(N.sum(axis=2)),
        (0, 2): entropy_of_counts(N.sum(axis=1)),
        (1, 2): entropy_of_counts(N.sum(axis=0)),
    }
    return h1, h2, entropy_of_counts(N)


def collapsed_stats(data, variables: Sequence[str], label_column: str | None = None) -> pd.DataFrame:
    """Theil's U(label | X) and Cramér's V(X, label) (plain and bias-corrected) for each variable X of
    ``variables`` and for the collapsed variable of all of them (thesis Tables 6.2–6.3); one row each,
    the collapsed one last (named "u∩v" with the variable names).

    Parameters
    ----------
    data : CategoricalData
    variables : sequence of str
    label_column : str, optional

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    SegmentError
        Without a label column, or when it is among ``variables``.

    References
    ----------
    Thesis Tables 6.2-6.3 and App. E.
    """
    label_column = label_column or data.class_column
    if label_column is None:
        raise SegmentError("Collapsed-variable statistics need a label column.")
    if label_column in variables:
        raise SegmentError(f"'{label_column}' is the label column; choose feature columns.")
    lab = data.codes[:, data.index(label_column)]
    rows = []
    for v in variables:
        x = data.codes[:, data.index(v)]
        rows.append(
            {
                "variable": v,
                "levels": len(np.unique(x[x >= 0])),
                "theils_u": theils_u(lab, x),
                "cramers_v": cramers_v(x, lab),
                "cramers_v_corrected": cramers_v(x, lab, True),
            }
        )
    c, states = collapse(data, variables)
    rows.append(
        {
            "variable": "∩".join(variables),
            "levels": len(np.unique(c[c >= 0])),
            "theils_u": theils_u(lab, c),
            "cramers_v": cramers_v(c, lab),
            "cramers_v_corrected": cramers_v(c, lab, True),
        }
    )
    return pd.DataFrame(rows)


def default_segment_variables(
    ranking: pd.DataFrame, variables: Sequence[str], m: int, kind: str, base=None
) -> list[str]:
    """The segment's starting variables: the top pair or triple of an :func:`mi_ranking` (for a full segment
    of more than three variables: none), then the other ``variables`` in order, ``m`` in all.

    With a ``base`` network the top pair or triple that changes it is taken (a segment already in the
    base would change nothing: its ΔK would be zero), the top one when none does.

    Parameters
    ----------
    ranking : pandas.DataFrame
    variables : sequence of str
    m : int
    kind : str
    base : DAG, optional
        The network the segment is applied to.

    Returns
    -------
    list of str
    """
    if kind == "full" and m > 3 or not len(ranking):
        first = []
    else:
        first = list(ranking["variables"].iloc[0])
        if base is not None:
            for cand in ranking["variables"]:
                try:
                    if apply_segment(base, kind, list(cand)[:m]).arcs != base.arcs:
                        first = list(cand)
                        break
                except StructureError:
                    continue
    return (first + [v for v in variables if v not in first])[:m]


def segment_variables_after(
    previous, previous_for, variables: Sequence[str], kind: str, m: int, ranking: pd.DataFrame, base=None
) -> tuple[list[str] | None, list[str]]:
    """The segment's variables once its kind or size may have changed: the ones chosen so far when they still
    fit, else the starting ones (:func:`default_segment_variables`).

    A new pattern of the same size keeps the variables still in the table (their roles change); a pattern of
    another size, a first choice, or variables gone from the table take the starting ones; a choice still
    being made for this pattern (fewer variables than it takes) stays as it is.

    Parameters
    ----------
    previous : list of str or None
        The variables chosen so far (None: none yet).
    previous_for : tuple or None
        The ``(kind, m)`` they were chosen for.
    variables : sequence of str
        The table's feature variables.
    kind : str
    m : int
        The number of variables the segment takes.
    ranking : pandas.DataFrame
        The :func:`mi_ranking` for the segment.
    base : DAG, optional
        The network the segment is applied to (see :func:`default_segment_variables`).

    Returns
    -------
    chosen : list of str or None
        The variables to use (None: keep ``previous`` as it is).
    replaced : list of str
        The earlier variables that the starting ones replaced (empty when none was).
    """
    old = [v for v in (previous or []) if v in variables]
    if len(old) == m:
        return old, []
    if previous is None or previous_for != (kind, m) or len(old) != len(previous):
        return default_segment_variables(ranking, variables, m, kind, base), old
    return None, []
