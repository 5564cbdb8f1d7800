"""Descriptive statistics of categorical columns used across the package.

* entropy and mutual information of code columns (nats, complete rows only);
* association with a label: Theil's uncertainty coefficient U, Cramér's V, and Bergsma's
  (2013) bias-corrected V (with Yates's correction for 2 × 2 tables, the variant that
  reproduces thesis Table 6.3);
* the collapsed variable u∩v∩… of thesis App. E;
* a per-column summary of a table (levels, counts, missing cells).

Codes follow :class:`bnfk_core.data.table.CategoricalData`: ``-1`` is a missing cell.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import chi2_contingency

__all__ = [
    "BINCOUNT_CONFIGS",
    "entropy",
    "entropy_of_counts",
    "mutual_information",
    "theils_u",
    "cramers_v",
    "cramers_v_corrected",
    "collapse",
    "contingency_counts",
    "column_summary",
]


#: joint configurations counted with a bincount (no sort) up to this many possible configurations
BINCOUNT_CONFIGS = 1 << 20


def _complete_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    codes = np.atleast_2d(np.asarray(codes))
    if codes.ndim == 1:
        codes = codes[:, None]
    ok = (codes >= 0).all(axis=1)
    return codes[ok].astype(np.int64), ok


def _mixed_radix(sub: np.ndarray) -> tuple[np.ndarray | None, float]:
    """One integer per row, first column most significant (lexicographic order), and the number of possible
    configurations; ``None`` when that number reaches 2**62."""
    radix = sub.max(axis=0) + 1
    size = float(np.prod(radix.astype(float)))
    if size >= 2.0**62:
        return None, size
    key = np.zeros(len(sub), np.int64)
    for j in range(sub.shape[1]):
        key = key * radix[j] + sub[:, j]
    return key, size


def _joint_index(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of each complete row's joint configuration, mask of complete rows).

    Configurations are numbered in lexicographic order of the rows (as ``np.unique(axis=0)`` numbers them),
    through one mixed-radix integer per row, which is much faster than sorting rows.
    """
    sub, ok = _complete_rows(codes)
    if sub.shape[1] == 0:
        return np.zeros(int(ok.sum()), np.int64), ok
    if len(sub) == 0:
        return np.zeros(0, np.int64), ok
    key, _ = _mixed_radix(sub)
    if key is not None:
        _, inv = np.unique(key, return_inverse=True)
    else:
        _, inv = np.unique(sub, axis=0, return_inverse=True)
    return inv.reshape(-1), ok


def _joint_counts(codes: np.ndarray) -> np.ndarray:
    """Counts of the observed joint configurations of the complete rows, in lexicographic order (zeros where a
    bincount over every possible configuration was cheaper than sorting)."""
    sub, ok = _complete_rows(codes)
    if len(sub) == 0:
        return np.zeros(0, np.int64)
    if sub.shape[1] == 0:
        return np.array([len(sub)])
    key, size = _mixed_radix(sub)
    if key is not None and size <= max(BINCOUNT_CONFIGS, 4 * len(sub)):
        return np.bincount(key, minlength=int(size))
    return np.bincount(_joint_index(codes)[0])


def entropy(codes: np.ndarray) -> float:
    """Empirical joint entropy (nats) of the columns of ``codes`` over its complete rows.

    Parameters
    ----------
    codes : numpy.ndarray
        (N,) or (N, m) codes, -1 = missing.

    Returns
    -------
    float
    """
    return entropy_of_counts(_joint_counts(codes))


def entropy_of_counts(counts: np.ndarray) -> float:
    """-sum p log p of a table of counts (any shape, read in C order; zero cells skipped), p = counts / total.

    The same number, bit for bit, as :func:`entropy` of the rows counted, when the table holds their
    configurations in lexicographic order (e.g. a margin of a joint count table of complete rows)."""
    counts = np.asarray(counts).ravel()
    n = counts.sum()
    if n == 0:
        return 0.0
    p = counts / n
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def mutual_information(a: np.ndarray, b: np.ndarray) -> float:
    """Empirical mutual information (nats) between code columns (or column groups) a and b, over the rows
    where both are observed:  I = H(a) + H(b) − H(a, b).

    Parameters
    ----------
    a, b : numpy.ndarray
        Code columns or (N, m) column groups, -1 = missing.

    Returns
    -------
    float

    References
    ----------
    Cover & Thomas (2006), *Elements of Information Theory*, ch. 2.
    """
    a = np.asarray(a).reshape(len(a), -1)
    b = np.asarray(b).reshape(len(b), -1)
    ok = (a >= 0).all(axis=1) & (b >= 0).all(axis=1)
    a, b = a[ok], b[ok]
    return max(entropy(a) + entropy(b) - entropy(np.hstack([a, b])), 0.0)


def collapse(data, variables: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """The collapsed variable u∩v∩…: one state per observed combination (codes, state names "a|b|…");
    −1 where any of the variables is missing.

    Parameters
    ----------
    data : CategoricalData
    variables : sequence of str

    Returns
    -------
    codes : numpy.ndarray
        (N,) codes of the collapsed variable.
    states : tuple of str

    References
    ----------
    Thesis §6.1.1 (two variables seen as one collapsed variable) and Tables 6.2–6.3.
    """
    idx = [data.index(v) for v in variables]
    S = data.codes[:, idx]
    ok = (S >= 0).all(axis=1)
    codes = np.full(data.n_rows, -1, np.int64)
    if not ok.any():
        return codes, ()
    combos, inv = np.unique(S[ok], axis=0, return_inverse=True)
    codes[ok] = inv.reshape(-1)
    states = tuple("|".join(data.states[i][c] for i, c in zip(idx, combo)) for combo in combos)
    return codes, states


def contingency_counts(a, b) -> np.ndarray:
    """Counts of the observed (a, b) level pairs, levels renumbered over the rows where both are observed."""
    a, b = np.asarray(a), np.asarray(b)
    ok = (a >= 0) & (b >= 0)
    _, ia = np.unique(a[ok], return_inverse=True)
    _, ib = np.unique(b[ok], return_inverse=True)
    T = np.zeros((ia.max() + 1 if len(ia) else 0, ib.max() + 1 if len(ib) else 0))
    np.add.at(T, (ia, ib), 1.0)
    return T


def theils_u(label, x) -> float | None:
    """Uncertainty coefficient U(label | x) = (H(label) − H(label | x)) / H(label) = I(label; x) / H(label),
    over the rows where both are observed (None when the label is constant there).

    Parameters
    ----------
    label, x : numpy.ndarray
        Code columns (or column groups), -1 = missing.

    Returns
    -------
    float or None

    References
    ----------
    Thesis §6.3, Table 6.2 (Theil's U of the class given each variable and the collapsed variable).
    """
    T = contingency_counts(label, x)
    n = T.sum()
    if n == 0:
        return None
    P = T / n
    pl, px = P.sum(axis=1), P.sum(axis=0)
    H = float(-(pl[pl > 0] * np.log(pl[pl > 0])).sum())
    if H <= 0:
        return None
    nz = P > 0
    mi = float((P[nz] * np.log(P[nz] / np.outer(pl, px)[nz])).sum())
    return max(min(mi / H, 1.0), 0.0)


def cramers_v(a, b, bias_correction: bool = False, yates: bool = False) -> float | None:
    """Cramér's V = sqrt(φ² / min(r − 1, c − 1)), φ² = χ² / n, of the contingency table of a and b
    (observed levels only); None when one of them is constant.

    ``bias_correction``: Bergsma's (2013) corrected V, φ̃² = max(0, φ² − (r−1)(c−1)/(n−1)),
    r̃ = r − (r−1)²/(n−1), c̃ likewise, V = sqrt(φ̃² / min(r̃ − 1, c̃ − 1)) -- what the thesis's
    Table 6.3 reports (its values match this to the third decimal where our arcs agree).
    ``yates``: Yates's continuity correction of χ² for 2 × 2 tables (scipy's ``chi2_contingency``
    default), which with ``bias_correction`` reproduces Table 6.3 on binary variables too.
    """
    T = contingency_counts(a, b)
    n = T.sum()
    k = min(T.shape) - 1 if T.size else 0
    if n == 0 or k < 1:
        return None
    if yates and T.shape == (2, 2):
        phi2 = float(chi2_contingency(T, correction=True)[0]) / n
    else:
        E = np.outer(T.sum(axis=1), T.sum(axis=0)) / n
        phi2 = float(((T - E) ** 2 / E).sum()) / n
    if not bias_correction:
        return float(np.sqrt(phi2 / k))
    if n <= 1:
        return None
    r, c = T.shape
    phi2 = max(0.0, phi2 - (r - 1) * (c - 1) / (n - 1))
    rc = r - (r - 1) ** 2 / (n - 1)
    cc = c - (c - 1) ** 2 / (n - 1)
    return float(np.sqrt(phi2 / min(rc - 1, cc - 1)))


def cramers_v_corrected(a, b) -> float:
    """Bias-corrected Cramér's V (Bergsma 2013) with Yates's correction for 2 × 2 tables -- the variant that
    reproduces the thesis's Table 6.3 (:func:`cramers_v` with both corrections); NaN when undefined."""
    v = cramers_v(a, b, bias_correction=True, yates=True)
    return float("nan") if v is None else v


def column_summary(data, max_states: int = 8) -> list[dict]:
    """One row per variable of a CategoricalData: levels, counts, missing cells, most frequent level.

    A table of distinct rows with multiplicities (``data.weights``,
    :class:`bnfk_core.data.stream.WeightedData`) counts every distinct row as many times as it occurs."""
    out = []
    weights = getattr(data, "weights", None)
    n_rows = int(data.codes.shape[0] if weights is None else np.asarray(weights).sum())
    for i, v in enumerate(data.variables):
        col = data.codes[:, i]
        st = data.states[i]
        ok = col >= 0
        w = None if weights is None else np.asarray(weights)[ok]
        counts = np.rint(np.bincount(col[ok], weights=w, minlength=len(st))).astype(np.int64)
        top = int(counts.argmax()) if counts.sum() else -1
        shown = ", ".join(f"{s} ({c})" for s, c in zip(st[:max_states], counts[:max_states]))
        if len(st) > max_states:
            shown += f", … {len(st) - max_states} more"
        out.append(
            {
                "variable": v,
                "role": "class" if v == data.class_column else "feature",
                "levels": len(st),
                "counts": shown,
                "missing": n_rows - int(counts.sum()),
                "most frequent": f"{st[top]} ({100.0 * counts[top] / max(n_rows, 1):.0f}%)"
                if top >= 0
                else "—",
            }
        )
    return out
