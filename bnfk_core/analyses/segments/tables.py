"""Bayesian-network structure segments and the Fisher kernel (thesis chapter 6).

Case tables.  For two rows x = (u1, v1, w1, ...) and y = (u2, v2, w2, ...) the joint
contribution of a segment's variables to K(x, y) depends only on which of them agree and on
the probabilities of x's values (Theorem 1).  The thesis's notation (§6.1), with the
segment's roles ``u, v, w`` (first, second, third variable given) and ``x1 .. xm`` (full):

    α = P(u = u1),  β = P(v = v1),  γ = P(w = w1)            (model marginals)
    single arc u → v          φ = P(v1 | u1)
    V   u → w ← v             δ = P(u1, v1),  φ = P(w1 | u1, v1)
    A   u → v, u → w          φ = P(v1 | u1), θ = P(w1 | u1)
    chain w → u → v           φ = P(v1 | u1), ψ = P(u1 | w1)
    full x1 → x2 → … (all)    Π = P(x1 = x1₁, …, xm = xm₁)   (App. E: one collapsed variable)

Cases are ordered as in the thesis: most agreements first, then u before v before w
(a) all agree, b) u v agree / w differs, c) u w / v, d) v w / u, e) only u, f) only v,
g) only w, h) none).  The extracted thesis text puts the A and chain tables' e)–h) entries in
the wrong columns; we use e) = −1/α − 1, f) = g) = h) = −1, which Theorem 1 gives (see
``tests/test_segments_theory.py``, which re-derives every entry by enumeration).

The formulas hold when no segment variable has a parent outside the segment (children
outside do not matter: K_i depends on the parents of i only); :func:`case_table` checks
that.  ``theory`` is the formula evaluated with the model's exact marginals; ``measured`` is
Σ_{i in segment} K_i(x, y) from :func:`bnfk_core.kernels.fisher.contributions` for an actual pair of
data rows in the case (:func:`find_pair`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...errors import BnfkError
from ...inference.queries import marginal
from ...kernels.fisher import contributions
from ...network.dag import DAG, SEGMENT_KINDS, apply_segment, segment_arcs
from ...network.model import fit

__all__ = [
    "SegmentError",
    "SEGMENT_KINDS",
    "GREEK",
    "MAX_FULL_VARIABLES",
    "CaseRow",
    "CaseTable",
    "case_patterns",
    "case_labels",
    "feature_columns",
    "segment_model",
    "check_segment",
    "greek_values",
    "case_table",
    "find_pair",
    "pair_pattern",
]


class SegmentError(BnfkError):
    """A segment, case table or arc search cannot be computed as asked."""


# ====================================================================== notation and formulas
GREEK = {
    "α": "P(u = u₁)",
    "β": "P(v = v₁)",
    "γ": "P(w = w₁)",
    "δ": "P(u = u₁, v = v₁)",
    "φ": "P(v = v₁ | u = u₁); in the V-structure P(w = w₁ | u = u₁, v = v₁)",
    "θ": "P(w = w₁ | u = u₁)",
    "ψ": "P(u = u₁ | w = w₁)",
    "Π": "P(X1 = X1(x), ..., Xm = Xm(x)), the collapsed variable's probability (App. E)",
}

_ROLES3 = ("u", "v", "w")

# (formula string, value from the Greek letters) per kind and case; thesis §6.1
_TABLES = {
    "single-arc": {
        "a": ("1/(αφ) − 1", lambda g: 1 / (g["α"] * g["φ"]) - 1),
        "b": ("−1", lambda g: -1.0),
        "c": ("−1", lambda g: -1.0),
        "d": ("−1", lambda g: -1.0),
    },
    "v": {
        "a": (
            "1/α + 1/β − 2 + 1/(δφ) − 1/δ",
            lambda g: 1 / g["α"] + 1 / g["β"] - 2 + 1 / (g["δ"] * g["φ"]) - 1 / g["δ"],
        ),
        "b": ("1/α + 1/β − 2 − 1/δ", lambda g: 1 / g["α"] + 1 / g["β"] - 2 - 1 / g["δ"]),
        "c": ("1/α − 2", lambda g: 1 / g["α"] - 2),
        "d": ("1/β − 2", lambda g: 1 / g["β"] - 2),
        "e": ("1/α − 2", lambda g: 1 / g["α"] - 2),
        "f": ("1/β − 2", lambda g: 1 / g["β"] - 2),
        "g": ("−2", lambda g: -2.0),
        "h": ("−2", lambda g: -2.0),
    },
    "a": {
        "a": (
            "1/(αφ) + 1/(αθ) − 1/α − 1",
            lambda g: 1 / (g["α"] * g["φ"]) + 1 / (g["α"] * g["θ"]) - 1 / g["α"] - 1,
        ),
        "b": ("1/(αφ) − 1/α − 1", lambda g: 1 / (g["α"] * g["φ"]) - 1 / g["α"] - 1),
        "c": ("1/(αθ) − 1/α − 1", lambda g: 1 / (g["α"] * g["θ"]) - 1 / g["α"] - 1),
        "d": ("−1", lambda g: -1.0),
        "e": ("−1/α − 1", lambda g: -1 / g["α"] - 1),
        "f": ("−1", lambda g: -1.0),
        "g": ("−1", lambda g: -1.0),
        "h": ("−1", lambda g: -1.0),
    },
    "chain": {
        "a": (
            "1/(αφ) + 1/(γψ) − 1/α − 1",
            lambda g: 1 / (g["α"] * g["φ"]) + 1 / (g["γ"] * g["ψ"]) - 1 / g["α"] - 1,
        ),
        "b": ("1/(αφ) − 1/α − 1", lambda g: 1 / (g["α"] * g["φ"]) - 1 / g["α"] - 1),
        "c": ("1/(γψ) − 1/α − 1", lambda g: 1 / (g["γ"] * g["ψ"]) - 1 / g["α"] - 1),
        "d": ("−1", lambda g: -1.0),
        "e": ("−1/α − 1", lambda g: -1 / g["α"] - 1),
        "f": ("−1", lambda g: -1.0),
        "g": ("−1", lambda g: -1.0),
        "h": ("−1", lambda g: -1.0),
    },
}

_DEFINITIONS = {
    "single-arc": ("α", "β", "φ"),
    "v": ("α", "β", "γ", "δ", "φ"),
    "a": ("α", "β", "γ", "φ", "θ"),
    "chain": ("α", "β", "γ", "φ", "ψ"),
}

MAX_FULL_VARIABLES = 8  # 2^8 = 256 cases


def case_patterns(m: int) -> list[tuple[bool, ...]]:
    """Agreement patterns of m variables in the thesis's order (most agreements first, then
    earlier variables agreeing first): m = 3 gives a) TTT b) TTF c) TFT d) FTT e) TFF ... h) FFF.

    Parameters
    ----------
    m : int

    Returns
    -------
    list of tuple of bool
        2^m patterns, True = the variable agrees.

    References
    ----------
    Thesis §6.1 (the case order of its tables).
    """
    pats = list(itertools.product((True, False), repeat=m))
    return sorted(pats, key=lambda p: (-sum(p), tuple(not b for b in p)))


def case_labels(n: int) -> list[str]:
    """a, b, ..., z, aa, ab, ... (n labels).

    Parameters
    ----------
    n : int

    Returns
    -------
    list of str
    """
    out = []
    for k in range(n):
        s, k1 = "", k + 1
        while k1:
            k1, r = divmod(k1 - 1, 26)
            s = chr(97 + r) + s
        out.append(s)
    return out


def _roles(kind: str, m: int) -> tuple[str, ...]:
    return _ROLES3[:m] if kind != "full" else tuple(f"X{k + 1}" for k in range(m))


def _empty_formula(terms: Sequence[str], m: int) -> str:
    """The empty network's (scaled-Hamming) contribution: Σ_agreeing 1/P − m."""
    return (" + ".join(f"1/{t}" for t in terms) + f" − {m}") if terms else f"−{m}"


# ====================================================================== model and checks
def feature_columns(data):
    """``data`` without its label column (``data`` itself when it has none).

    Parameters
    ----------
    data : CategoricalData

    Returns
    -------
    CategoricalData
    """
    return data.without_class() if data.class_column else data


def segment_model(
    data,
    kind: str,
    variables: Sequence[str],
    base: DAG | None = None,
    *,
    method: str = "smoothed",
    pseudo_count: float = 1.0,
):
    """The network ``base`` (default: the empty network over the feature columns) with the segment
    applied (:func:`bnfk_core.network.dag.apply_segment`), CPTs fitted to ``data`` (pseudo-count 1).

    Parameters
    ----------
    data : CategoricalData
    kind : str
        One of ``SEGMENT_KINDS``.
    variables : sequence of str
        Feature columns, in the segment's role order.
    base : DAG, optional
    method : str
        CPT estimator.
    pseudo_count : float

    Returns
    -------
    BayesNet

    Raises
    ------
    SegmentError
        When a variable is the label or not a column, or ``base`` has other variables.
    """
    feats = feature_columns(data)
    variables = [str(v) for v in variables]
    for v in variables:
        if data.class_column is not None and v == data.class_column:
            raise SegmentError(f"'{v}' is the label column; a segment uses feature columns only.")
        if v not in feats.variables:
            raise SegmentError(f"The '{kind}' segment names '{v}', which is not a column of {data.source}.")
    if base is None:
        base = DAG(feats.variables)
    elif set(base.nodes) != set(feats.variables):
        extra = sorted(set(base.nodes) ^ set(feats.variables))
        raise SegmentError(f"The base structure and {data.source} differ in variable '{extra[0]}'.")
    dag = apply_segment(base, kind, variables)
    return fit(dag, feats.select(list(dag.nodes)), method=method, pseudo_count=pseudo_count)


def check_segment(model, kind: str, variables: Sequence[str]) -> list[int]:
    """Indices of the segment's variables in ``model``; SegmentError unless the segment variables have
    exactly the segment's parents (the case-table formulas assume no other parents).

    Parameters
    ----------
    model : BayesNet
    kind : str
    variables : sequence of str

    Returns
    -------
    list of int

    References
    ----------
    Thesis §6.1.
    """
    variables = [str(v) for v in variables]
    arcs = segment_arcs(kind, variables)
    if kind == "full" and len(variables) > MAX_FULL_VARIABLES:
        raise SegmentError(
            f"A full segment case table enumerates 2^m cases; use at most {MAX_FULL_VARIABLES} "
            f"variables, got {len(variables)}."
        )
    idx = []
    for v in variables:
        if v not in model.variables:
            raise SegmentError(f"The '{kind}' segment names '{v}', which is not a variable of the model.")
        idx.append(model.variables.index(v))
    for v in variables:
        want = {a for a, b in arcs if b == v}
        have = set(model.dag.parents(v))
        if have != want:
            extra = sorted(have - want)
            if extra:
                raise SegmentError(
                    f"Variable '{v}' has parent '{extra[0]}' in the network besides the '{kind}' "
                    f"segment's arcs; the case table assumes the segment's variables have no "
                    "other parents."
                )
            raise SegmentError(
                f"The network lacks the arc {sorted(want - have)[0]} -> {v} of the '{kind}' segment."
            )
    return idx


def greek_values(model, kind: str, idx: Sequence[int], x: Sequence[int]) -> dict:
    """The thesis's Greek letters for first-row values ``x`` (codes of the segment variables), from the
    model's exact joint marginal of the segment.

    Parameters
    ----------
    model : BayesNet
    kind : str
    idx : sequence of int
        Indices of the segment's variables.
    x : sequence of int

    Returns
    -------
    dict
        Greek letter -> probability.

    References
    ----------
    Thesis §6.1 (notation).
    """
    J = np.asarray(marginal(model, list(idx)), dtype=float)
    x = tuple(int(c) for c in x)
    m = len(idx)

    def P(*keep):
        """P(x_k = x[k] for k in keep) from the joint of the segment."""
        M = J.sum(axis=tuple(k for k in range(m) if k not in keep))
        return float(M[tuple(x[k] for k in sorted(keep))])

    if kind == "full":
        return {"Π": float(J[x])}
    g = {"α": P(0), "β": P(1)}
    if m == 3:
        g["γ"] = P(2)
    if kind == "single-arc":
        g["φ"] = P(0, 1) / g["α"]
    elif kind == "v":
        g["δ"] = P(0, 1)
        g["φ"] = P(0, 1, 2) / g["δ"]
    elif kind == "a":
        g["φ"] = P(0, 1) / g["α"]
        g["θ"] = P(0, 2) / g["α"]
    elif kind == "chain":
        g["φ"] = P(0, 1) / g["α"]
        g["ψ"] = P(0, 2) / g["γ"]
    return g


def _marg(model, i: int, c: int) -> float:
    return float(np.asarray(marginal(model, [i]))[c])


def _theory(kind: str, case: str, pattern, g: dict) -> tuple[str, float]:
    if kind == "full":
        if all(pattern):
            return "1/Π − 1", 1.0 / g["Π"] - 1.0
        return "−1", -1.0
    f, fun = _TABLES[kind][case]
    return f, float(fun(g))


# ====================================================================== pairs
def pair_pattern(codes: np.ndarray, idx: Sequence[int], i: int, j: int) -> tuple[bool, ...]:
    """Which of the variables ``idx`` agree between rows i and j.

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
    idx : sequence of int
    i, j : int
        Row indices.

    Returns
    -------
    tuple of bool
    """
    return tuple(bool(a) for a in (codes[i, list(idx)] == codes[j, list(idx)]))


def find_pair(codes: np.ndarray, idx: Sequence[int], pattern: Sequence[bool], seed: int | None = None):
    """Two row indices (i, j) whose values of the variables ``idx`` agree exactly where ``pattern`` is
    True (both rows observed on those variables), or None.

    Deterministic: the first row (in row order, or a seeded random order) that has a partner, and
    its first partner.  Rows are grouped by their values on the agreeing variables, so only rows
    that can pair are compared.

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
    idx : sequence of int
    pattern : sequence of bool
    seed : int, optional

    Returns
    -------
    (int, int) or None
    """
    codes = np.asarray(codes)
    idx = list(idx)
    pattern = [bool(p) for p in pattern]
    S = codes[:, idx]
    rows = np.flatnonzero((S >= 0).all(axis=1))
    if seed is not None:
        rows = np.random.default_rng(seed).permutation(rows)
    if len(rows) < 2:
        return None
    S = S[rows]
    A = [k for k, p in enumerate(pattern) if p]
    D = [k for k, p in enumerate(pattern) if not p]
    for k in D:
        if len(np.unique(S[:, k])) < 2:
            return None
    if A:
        _, first, inv = np.unique(S[:, A], axis=0, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        group_order = np.argsort(first, kind="stable")
    else:
        inv = np.zeros(len(rows), np.int64)
        group_order = np.array([0])
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(inv.max() + 2))
    for g in group_order:
        members = order[bounds[g] : bounds[g + 1]]  # positions, ascending (stable)
        if len(members) < 2:
            continue
        if not D:
            return int(rows[members[0]]), int(rows[members[1]])
        sub = S[members][:, D]
        for t in range(len(members) - 1):
            ok = (sub[t + 1 :] != sub[t]).all(axis=1)
            if ok.any():
                return int(rows[members[t]]), int(rows[members[t + 1 + int(np.argmax(ok))]])
    return None


# ====================================================================== case table
@dataclass
class CaseRow:
    """One case of a segment's case table (see :func:`case_table`)."""

    case: str
    pattern: tuple
    condition: str  # e.g. "u1 = u2 ∧ v1 ≠ v2"
    description: str  # e.g. "agree on crime; differ on budget"
    formula: str
    theory: float | None
    measured: float | None
    pair: tuple | None  # (row of x, row of y) in the data, or None
    values: dict  # the Greek letters at x
    reference: dict  # x's values of the segment variables
    empty_formula: str = ""
    empty_theory: float | None = None

    @property
    def difference(self) -> float | None:
        if self.theory is None or self.measured is None:
            return None
        return abs(self.theory - self.measured)


@dataclass
class CaseTable:
    """A segment's case table (thesis §6.1) for one model and dataset."""

    kind: str
    variables: tuple
    roles: dict  # role (u, v, w / x1..xm) -> variable name
    arcs: list  # the segment's arcs (variable names)
    definitions: dict  # Greek letter -> its meaning with the variable names
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def max_difference(self) -> float | None:
        d = [r.difference for r in self.rows if r.difference is not None]
        return max(d) if d else None

    def to_frame(self) -> pd.DataFrame:
        """One row per case: condition, description, formula, theory, measured, pair and the empty network's
        formula.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame(
            [
                {
                    "case": r.case,
                    "condition": r.condition,
                    "description": r.description,
                    "formula": r.formula,
                    "theory": r.theory,
                    "measured": r.measured,
                    "pair": None if r.pair is None else f"{r.pair[0]}, {r.pair[1]}",
                    "empty network": r.empty_formula,
                    "empty theory": r.empty_theory,
                }
                for r in self.rows
            ]
        )

    def to_dict(self) -> dict:
        """The table as JSON-ready values.

        Returns
        -------
        dict
        """
        return {
            "kind": self.kind,
            "variables": list(self.variables),
            "roles": self.roles,
            "arcs": [list(a) for a in self.arcs],
            "definitions": self.definitions,
            "cases": [
                {
                    "case": r.case,
                    "agree": {self.variables[k]: bool(p) for k, p in enumerate(r.pattern)},
                    "condition": r.condition,
                    "description": r.description,
                    "formula": r.formula,
                    "theory": r.theory,
                    "measured": r.measured,
                    "difference": r.difference,
                    "pair": None if r.pair is None else list(r.pair),
                    "values": r.values,
                    "reference": r.reference,
                    "empty_formula": r.empty_formula,
                    "empty_theory": r.empty_theory,
                }
                for r in self.rows
            ],
            "max_difference": self.max_difference,
            "notes": list(self.notes),
        }


def _definitions(kind: str, roles: dict) -> dict:
    """The Greek letters used by ``kind`` in the thesis's notation (x = (u₁, v₁, w₁) is the first row);
    ``roles`` says which variable each of u, v, w (or X1..Xm) is."""
    if kind == "full":
        return {"Π": "P(" + ", ".join(f"{r} = {r}(x)" for r in roles) + ")  (the collapsed variable)"}
    defs = {
        "α": "P(u = u₁)",
        "β": "P(v = v₁)",
        "γ": "P(w = w₁)",
        "δ": "P(u = u₁, v = v₁)",
        "θ": "P(w = w₁ | u = u₁)",
        "ψ": "P(u = u₁ | w = w₁)",
        "φ": "P(w = w₁ | u = u₁, v = v₁)" if kind == "v" else "P(v = v₁ | u = u₁)",
    }
    return {g: defs[g] for g in _DEFINITIONS[kind]}


def case_table(model, data, kind: str, variables: Sequence[str], *, seed: int | None = None) -> CaseTable:
    """The thesis's case table of a segment, with theory and measurement side by side.

    Parameters
    ----------
    model : BayesNet containing the segment (e.g. :func:`segment_model`); its segment variables must
        have no parents outside the segment.
    data : CategoricalData whose rows supply the pairs (aligned to the model; extra columns ignored).
    kind : one of :data:`SEGMENT_KINDS`; ``variables`` in the roles' order (u, v[, w]) or x1..xm.
    seed : None picks the first pair in row order; an integer a seeded random pair.

    Returns
    -------
    CaseTable
        One :class:`CaseRow` per agreement pattern: the formula (thesis notation), its value with the
        model's probabilities at the pair's first row (``theory``), Σ_{segment} K_i of the pair
        (``measured``, None when no pair of rows falls in the case) and the pair's row indices.

    References
    ----------
    Thesis §6.1 (the case tables of the single arc, V-, A- and chain structures and the fully connected DAG)
    and App. E (the fully connected DAG equals one collapsed variable); the bnfk paper, Theorem 1.
    """
    if kind not in SEGMENT_KINDS:
        raise SegmentError(f"Unknown segment kind '{kind}'; choose one of {', '.join(SEGMENT_KINDS)}.")
    variables = tuple(str(v) for v in variables)
    arcs = segment_arcs(kind, variables)
    idx = check_segment(model, kind, variables)
    codes = model.align(data).codes
    m = len(variables)
    roles_t = _roles(kind, m)
    roles = dict(zip(roles_t, variables))
    greek_of_role = dict(zip(roles_t, ("α", "β", "γ"))) if kind != "full" else {}
    # reference row when a case has no pair: the most frequent complete configuration of the segment
    S = codes[:, idx]
    comp = (S >= 0).all(axis=1)
    if not comp.any():
        raise SegmentError(f"No row of {data.source} has all of {', '.join(variables)} observed.")
    confs, counts = np.unique(S[comp], axis=0, return_counts=True)
    modal = confs[int(np.argmax(counts))]
    cards = [int(model.cardinalities[i]) for i in idx]
    rows = []
    pats = case_patterns(m)
    for label, pat in zip(case_labels(len(pats)), pats):
        if kind == "full":
            cond = " ∧ ".join(f"{r}(x) {'=' if a else '≠'} {r}(y)" for r, a in zip(roles_t, pat))
        else:
            cond = " ∧ ".join(f"{r}₁ {'=' if a else '≠'} {r}₂" for r, a in zip(roles_t, pat))
        agree = [v for v, a in zip(variables, pat) if a]
        differ = [v for v, a in zip(variables, pat) if not a]
        desc = "; ".join(
            s
            for s in (
                (f"agree on {', '.join(agree)}" if agree else ""),
                (f"differ on {', '.join(differ)}" if differ else ""),
            )
            if s
        )
        possible = all(a or c >= 2 for a, c in zip(pat, cards))
        pair = find_pair(codes, idx, pat, seed=seed) if possible else None
        x = codes[pair[0], idx] if pair is not None else modal
        values = greek_values(model, kind, idx, x)
        formula, theory = _theory(kind, label, pat, values)
        if not possible:
            theory = None
        measured = None
        if pair is not None:
            c = contributions(model, codes[pair[0]], codes[pair[1]])
            measured = float(c[idx].sum())
        ref = {v: model.states[i][int(x[k])] for k, (v, i) in enumerate(zip(variables, idx))}
        agreeing = [k for k, a in enumerate(pat) if a]
        if kind != "full":
            empty_f = _empty_formula([greek_of_role[roles_t[k]] for k in agreeing], m)
        else:
            empty_f = _empty_formula([f"P({variables[k]})" for k in agreeing], m)
        empty_v = None
        if possible:
            empty_v = sum(1.0 / _marg(model, idx[k], int(x[k])) for k in agreeing) - m
        rows.append(
            CaseRow(
                label,
                tuple(pat),
                cond,
                desc,
                formula,
                theory,
                measured,
                pair,
                {k: float(v) for k, v in values.items()},
                ref,
                empty_f,
                empty_v,
            )
        )
    notes = []
    if any(r.pair is None and r.theory is not None for r in rows):
        notes.append(
            "Cases without a pair of rows show the theory at the most frequent configuration of the "
            "segment's variables."
        )
    return CaseTable(kind, variables, roles, arcs, _definitions(kind, roles), rows, notes)
