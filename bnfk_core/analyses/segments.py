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
Σ_{i in segment} K_i(x, y) from :func:`bnfk_core.kernels.contributions` for an actual pair of
data rows in the case (:func:`find_pair`).

Mutual-information ranking (:func:`mi_ranking`) suggests pairs and triples; collapsed-variable
statistics (:func:`collapsed_stats`) give Theil's U and Cramér's V of single variables and of
their collapsed combination against the label (thesis Tables 6.2–6.3).

Supervised arc search (:func:`arc_search`, thesis §6.2 and Tables 6.1/6.4): starting from the
empty network (whose Fisher kernel with ``ml`` parameters *is* the scaled-Hamming kernel), add
greedily the arc whose network gives the highest adjusted Rand index of a seeded clustering of
the Fisher Gram matrix.  Adding u → v changes v's term (new CPT and parents) and, through the
parent marginals P(π_w), only the terms of variables with a parent at or below v -- from the
empty network that is v alone.  The search holds a :class:`bnfk_core.live.LiveKernel`: every
candidate's Gram matrix is ``LiveKernel.preview`` (a copy of K plus the changed terms, added pair
by pair in place), the chosen arc is ``LiveKernel.apply``.  (:func:`variable_term`,
:func:`affected_terms`, :func:`add_arc_gram` are the earlier dense form of the same update, kept
for the API.)  With ``ml`` parameters Markov-equivalent networks give the same Gram matrix
(likelihood equivalence), so one candidate per equivalence class is clustered.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..dag import DAG, SEGMENT_KINDS, apply_segment, covered_arcs, cpdag, equivalent, segment_arcs
from ..errors import BnfkError, KernelError
from ..inference import marginal
from ..kernels import FISHER, contributions, feature_offsets, features, gram, memory_limit
from ..live import LiveKernel
from ..model import BayesNet, cpt_counts, estimate_cpt, fit
from ..registry import ESTIMATORS
from ..stats import collapse, cramers_v, entropy, mutual_information, theils_u
from .cluster import cluster, clustering_metrics, default_n_clusters
from .impute import evaluate, impute_bn, induce_mcar

__all__ = [
    "SegmentError", "SEGMENT_KINDS", "GREEK", "CaseRow", "CaseTable", "case_patterns", "case_labels",
    "segment_model", "check_segment", "greek_values", "case_table", "find_pair", "pair_pattern",
    "mi_ranking", "collapsed_stats",
    "reverse_covered_arc", "variable_term", "affected_terms", "add_arc_gram", "candidate_arcs", "ArcStep", "ArcSearchResult", "arc_search",
    "default_segment_variables", "clustering_aris", "imputation_check", "DagEdit", "equivalence_edits",
    "edited_model", "EditEffect", "edit_effects", "edit_effects_table", "arc_search_tables",
]

Progress = Callable[[float, str], None]
#: candidate arcs the arc search clusters per step at most (wide data; every thesis dataset has fewer)
MAX_CANDIDATES = 2000


class SegmentError(BnfkError):
    """A segment, case table or arc search cannot be computed as asked."""


# ====================================================================== notation and formulas
GREEK = {
    "α": "P(u = u₁)", "β": "P(v = v₁)", "γ": "P(w = w₁)", "δ": "P(u = u₁, v = v₁)",
    "φ": "P(v = v₁ | u = u₁); in the V-structure P(w = w₁ | u = u₁, v = v₁)",
    "θ": "P(w = w₁ | u = u₁)", "ψ": "P(u = u₁ | w = w₁)",
    "Π": "P(X1 = X1(x), ..., Xm = Xm(x)), the collapsed variable's probability (App. E)",
}

_ROLES3 = ("u", "v", "w")

# (formula string, value from the Greek letters) per kind and case; thesis §6.1
_TABLES = {
    "single-arc": {
        "a": ("1/(αφ) − 1", lambda g: 1 / (g["α"] * g["φ"]) - 1),
        "b": ("−1", lambda g: -1.0), "c": ("−1", lambda g: -1.0), "d": ("−1", lambda g: -1.0),
    },
    "v": {
        "a": ("1/α + 1/β − 2 + 1/(δφ) − 1/δ",
              lambda g: 1 / g["α"] + 1 / g["β"] - 2 + 1 / (g["δ"] * g["φ"]) - 1 / g["δ"]),
        "b": ("1/α + 1/β − 2 − 1/δ", lambda g: 1 / g["α"] + 1 / g["β"] - 2 - 1 / g["δ"]),
        "c": ("1/α − 2", lambda g: 1 / g["α"] - 2), "d": ("1/β − 2", lambda g: 1 / g["β"] - 2),
        "e": ("1/α − 2", lambda g: 1 / g["α"] - 2), "f": ("1/β − 2", lambda g: 1 / g["β"] - 2),
        "g": ("−2", lambda g: -2.0), "h": ("−2", lambda g: -2.0),
    },
    "a": {
        "a": ("1/(αφ) + 1/(αθ) − 1/α − 1",
              lambda g: 1 / (g["α"] * g["φ"]) + 1 / (g["α"] * g["θ"]) - 1 / g["α"] - 1),
        "b": ("1/(αφ) − 1/α − 1", lambda g: 1 / (g["α"] * g["φ"]) - 1 / g["α"] - 1),
        "c": ("1/(αθ) − 1/α − 1", lambda g: 1 / (g["α"] * g["θ"]) - 1 / g["α"] - 1),
        "d": ("−1", lambda g: -1.0), "e": ("−1/α − 1", lambda g: -1 / g["α"] - 1),
        "f": ("−1", lambda g: -1.0), "g": ("−1", lambda g: -1.0), "h": ("−1", lambda g: -1.0),
    },
    "chain": {
        "a": ("1/(αφ) + 1/(γψ) − 1/α − 1",
              lambda g: 1 / (g["α"] * g["φ"]) + 1 / (g["γ"] * g["ψ"]) - 1 / g["α"] - 1),
        "b": ("1/(αφ) − 1/α − 1", lambda g: 1 / (g["α"] * g["φ"]) - 1 / g["α"] - 1),
        "c": ("1/(γψ) − 1/α − 1", lambda g: 1 / (g["γ"] * g["ψ"]) - 1 / g["α"] - 1),
        "d": ("−1", lambda g: -1.0), "e": ("−1/α − 1", lambda g: -1 / g["α"] - 1),
        "f": ("−1", lambda g: -1.0), "g": ("−1", lambda g: -1.0), "h": ("−1", lambda g: -1.0),
    },
}

_DEFINITIONS = {
    "single-arc": ("α", "β", "φ"),
    "v": ("α", "β", "γ", "δ", "φ"),
    "a": ("α", "β", "γ", "φ", "θ"),
    "chain": ("α", "β", "γ", "φ", "ψ"),
}

MAX_FULL_VARIABLES = 8      # 2^8 = 256 cases


def case_patterns(m: int) -> list[tuple[bool, ...]]:
    """Agreement patterns of m variables in the thesis's order (most agreements first, then
    earlier variables agreeing first): m = 3 gives a) TTT b) TTF c) TFT d) FTT e) TFF ... h) FFF."""
    pats = list(itertools.product((True, False), repeat=m))
    return sorted(pats, key=lambda p: (-sum(p), tuple(not b for b in p)))


def case_labels(n: int) -> list[str]:
    """a, b, ..., z, aa, ab, ... (n labels)."""
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
def _feature_columns(data):
    return data.without_class() if data.class_column else data


def segment_model(data, kind: str, variables: Sequence[str], base: DAG | None = None, *,
                  method: str = "smoothed", pseudo_count: float = 1.0):
    """The network ``base`` (default: the empty network over the feature columns) with the segment
    applied (:func:`bnfk_core.dag.apply_segment`), CPTs fitted to ``data`` (pseudo-count 1)."""
    feats = _feature_columns(data)
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
    exactly the segment's parents (the case-table formulas assume no other parents)."""
    variables = [str(v) for v in variables]
    arcs = segment_arcs(kind, variables)
    if kind == "full" and len(variables) > MAX_FULL_VARIABLES:
        raise SegmentError(f"A full segment case table enumerates 2^m cases; use at most {MAX_FULL_VARIABLES} "
                           f"variables, got {len(variables)}.")
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
                raise SegmentError(f"Variable '{v}' has parent '{extra[0]}' in the network besides the '{kind}' "
                                   f"segment's arcs; the case table assumes the segment's variables have no "
                                   "other parents.")
            raise SegmentError(f"The network lacks the arc {sorted(want - have)[0]} -> {v} of the '{kind}' segment.")
    return idx


def greek_values(model, kind: str, idx: Sequence[int], x: Sequence[int]) -> dict:
    """The thesis's Greek letters for first-row values ``x`` (codes of the segment variables), from the
    model's exact joint marginal of the segment."""
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
    """Which of the variables ``idx`` agree between rows i and j."""
    return tuple(bool(a) for a in (codes[i, list(idx)] == codes[j, list(idx)]))


def find_pair(codes: np.ndarray, idx: Sequence[int], pattern: Sequence[bool], seed: int | None = None):
    """Two row indices (i, j) whose values of the variables ``idx`` agree exactly where ``pattern`` is
    True (both rows observed on those variables), or None.

    Deterministic: the first row (in row order, or a seeded random order) that has a partner, and
    its first partner.  Rows are grouped by their values on the agreeing variables, so only rows
    that can pair are compared.
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
        members = order[bounds[g]:bounds[g + 1]]       # positions, ascending (stable)
        if len(members) < 2:
            continue
        if not D:
            return int(rows[members[0]]), int(rows[members[1]])
        sub = S[members][:, D]
        for t in range(len(members) - 1):
            ok = (sub[t + 1:] != sub[t]).all(axis=1)
            if ok.any():
                return int(rows[members[t]]), int(rows[members[t + 1 + int(np.argmax(ok))]])
    return None


# ====================================================================== case table
@dataclass
class CaseRow:
    """One case of a segment's case table (see :func:`case_table`)."""

    case: str
    pattern: tuple
    condition: str                  # e.g. "u1 = u2 ∧ v1 ≠ v2"
    description: str                # e.g. "agree on crime; differ on budget"
    formula: str
    theory: float | None
    measured: float | None
    pair: tuple | None              # (row of x, row of y) in the data, or None
    values: dict                    # the Greek letters at x
    reference: dict                 # x's values of the segment variables
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
    roles: dict                     # role (u, v, w / x1..xm) -> variable name
    arcs: list                      # the segment's arcs (variable names)
    definitions: dict               # Greek letter -> its meaning with the variable names
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def max_difference(self) -> float | None:
        d = [r.difference for r in self.rows if r.difference is not None]
        return max(d) if d else None

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{
            "case": r.case, "condition": r.condition, "description": r.description, "formula": r.formula,
            "theory": r.theory, "measured": r.measured,
            "pair": None if r.pair is None else f"{r.pair[0]}, {r.pair[1]}",
            "empty network": r.empty_formula, "empty theory": r.empty_theory,
        } for r in self.rows])

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "variables": list(self.variables), "roles": self.roles,
            "arcs": [list(a) for a in self.arcs], "definitions": self.definitions,
            "cases": [{
                "case": r.case, "agree": {self.variables[k]: bool(p) for k, p in enumerate(r.pattern)},
                "condition": r.condition, "description": r.description, "formula": r.formula,
                "theory": r.theory, "measured": r.measured, "difference": r.difference,
                "pair": None if r.pair is None else list(r.pair), "values": r.values, "reference": r.reference,
                "empty_formula": r.empty_formula, "empty_theory": r.empty_theory,
            } for r in self.rows],
            "max_difference": self.max_difference, "notes": list(self.notes),
        }


def _definitions(kind: str, roles: dict) -> dict:
    """The Greek letters used by ``kind`` in the thesis's notation (x = (u₁, v₁, w₁) is the first row);
    ``roles`` says which variable each of u, v, w (or X1..Xm) is."""
    if kind == "full":
        return {"Π": "P(" + ", ".join(f"{r} = {r}(x)" for r in roles) + ")  (the collapsed variable)"}
    defs = {"α": "P(u = u₁)", "β": "P(v = v₁)", "γ": "P(w = w₁)", "δ": "P(u = u₁, v = v₁)",
            "θ": "P(w = w₁ | u = u₁)", "ψ": "P(u = u₁ | w = w₁)",
            "φ": "P(w = w₁ | u = u₁, v = v₁)" if kind == "v" else "P(v = v₁ | u = u₁)"}
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
        desc = "; ".join(s for s in ((f"agree on {', '.join(agree)}" if agree else ""),
                                     (f"differ on {', '.join(differ)}" if differ else "")) if s)
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
        rows.append(CaseRow(label, tuple(pat), cond, desc, formula, theory, measured, pair,
                            {k: float(v) for k, v in values.items()}, ref, empty_f, empty_v))
    notes = []
    if any(r.pair is None and r.theory is not None for r in rows):
        notes.append("Cases without a pair of rows show the theory at the most frequent configuration of the "
                     "segment's variables.")
    return CaseTable(kind, variables, roles, arcs, _definitions(kind, roles), rows, notes)


# ====================================================================== information measures
def mi_ranking(data, kind: str = "single-arc", *, top: int = 10, exclude: Sequence[str] = ()) -> pd.DataFrame:
    """Pairs (``single-arc``) or triples (``v``, ``a``, ``chain``, ``full``) of feature columns with the
    highest empirical mutual information, the label column excluded.

    Scores (nats), with the variables listed in the segment's role order so that they can be passed to
    :func:`case_table` / :func:`bnfk_core.dag.apply_segment` as they are:

    * pairs: I(u; v);
    * ``a`` / ``chain`` (u is the hub, equivalent structures): max over the hub of I(u; v) + I(u; w);
    * ``v`` (w is the child): max over the child of I(w; (u, v));
    * ``full``: the total correlation H(u) + H(v) + H(w) − H(u, v, w).

    Columns ``variables``, ``score``, ``mi_uv``, ``mi_uw``, ``mi_vw`` (pairwise, over the rows observed
    on the three), best first; ties keep column order.
    """
    if kind not in SEGMENT_KINDS:
        raise SegmentError(f"Unknown segment kind '{kind}'; choose one of {', '.join(SEGMENT_KINDS)}.")
    feats = _feature_columns(data)
    names = [v for v in feats.variables if v not in set(exclude)]
    C = feats.select(names).codes if names else np.zeros((feats.n_rows, 0), np.int64)
    n = len(names)
    if n < (2 if kind == "single-arc" else 3):
        raise SegmentError(f"{data.source} has {n} feature columns; the '{kind}' suggestion needs "
                           f"{2 if kind == 'single-arc' else 3}.")
    out = []
    if kind == "single-arc":
        for i, j in itertools.combinations(range(n), 2):
            mi = mutual_information(C[:, i], C[:, j])
            out.append({"variables": (names[i], names[j]), "score": mi, "mi_uv": mi})
    else:
        full = ~(C < 0).any(axis=0)            # columns without a missing cell: every row is observed on them
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
            else:
                T = T[(T >= 0).all(axis=1)]
                h1 = [entropy(T[:, [a]]) for a in range(3)]
                h2 = {(a, b): entropy(T[:, [a, b]]) for a, b in itertools.combinations(range(3), 2)}
            h3 = entropy(T)
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
            out.append({"variables": tuple(names[trip[o]] for o in order), "score": score,
                        "mi_uv": I(order[0], order[1]), "mi_uw": I(order[0], order[2]),
                        "mi_vw": I(order[1], order[2])})
    df = pd.DataFrame(out)
    df = df.sort_values("score", ascending=False, kind="stable").head(int(top)).reset_index(drop=True)
    return df


def collapsed_stats(data, variables: Sequence[str], label_column: str | None = None) -> pd.DataFrame:
    """Theil's U(label | X) and Cramér's V(X, label) (plain and bias-corrected) for each variable X of
    ``variables`` and for the collapsed variable of all of them (thesis Tables 6.2–6.3); one row each,
    the collapsed one last (named "u∩v" with the variable names)."""
    label_column = label_column or data.class_column
    if label_column is None:
        raise SegmentError("Collapsed-variable statistics need a label column.")
    if label_column in variables:
        raise SegmentError(f"'{label_column}' is the label column; choose feature columns.")
    lab = data.codes[:, data.index(label_column)]
    rows = []
    for v in variables:
        x = data.codes[:, data.index(v)]
        rows.append({"variable": v, "levels": len(np.unique(x[x >= 0])), "theils_u": theils_u(lab, x),
                     "cramers_v": cramers_v(x, lab), "cramers_v_corrected": cramers_v(x, lab, True)})
    c, states = collapse(data, variables)
    rows.append({"variable": "∩".join(variables), "levels": len(np.unique(c[c >= 0])),
                 "theils_u": theils_u(lab, c), "cramers_v": cramers_v(c, lab),
                 "cramers_v_corrected": cramers_v(c, lab, True)})
    return pd.DataFrame(rows)


# ====================================================================== per-variable Gram terms
def variable_term(model, codes: np.ndarray, i: int) -> np.ndarray:
    """K_i(x, y) of Theorem 1 for all pairs of rows (N × N), i.e. variable i's term of the Fisher Gram:

        K_i(x, y) = [π_i(x) = π_i(y)] / P(π_i(x)) · ( [x_i = y_i] / θ_{i,π_i(x),x_i} − 1 ),

    with P(π_i) the model's exact parent marginal.  Rows whose family of i has a missing cell get the
    marginalized kernel through the explicit feature block (slower, exact).
    """
    codes = np.asarray(codes)
    p = model.parent_config(i, codes)
    x = codes[:, i].astype(np.int64)
    if (p < 0).any() or (x < 0).any():
        off = feature_offsets(model)
        B = features(model, codes)[:, off[i]:off[i + 1]]
        return (B @ B.T).toarray()
    ps = list(model.parents[i])
    P = np.ones(1) if not ps else np.asarray(marginal(model, ps), dtype=float).reshape(-1)
    th = model.cpts[i][p, x]
    Pp = P[p]
    bad = np.flatnonzero(~((th > 0) & (Pp > 0)))
    if bad.size:
        raise KernelError(f"Variable '{model.variables[i]}' has probability zero for a value or parent "
                          "configuration that a row takes; fit the parameters with a pseudo-count.")
    r = model.cpts[i].shape[1]
    f = p * r + x
    same_p = p[:, None] == p[None, :]
    K = np.where(same_p, -1.0 / Pp[:, None], 0.0)
    K += np.where(f[:, None] == f[None, :], (1.0 / (Pp * th))[:, None], 0.0)
    return K


def _with_arc(model, feats_codes, u: str, v: str, params: str, pseudo_count: float):
    """``model`` with u -> v added; only v's CPT is re-estimated (the others do not change)."""
    dag = model.dag.add_arc(u, v)
    iv = dag.index(v)
    cpts = list(model.cpts)
    cpts[iv] = estimate_cpt(cpt_counts(dag, feats_codes, model.cardinalities, iv), params, pseudo_count)
    return BayesNet(dag, model.states, tuple(cpts), dict(model.fit_info))


def affected_terms(dag: DAG, v: str) -> list[int]:
    """Indices of the variables whose Fisher term can change when an arc into ``v`` is added: v itself
    (new CPT and parent set) and every variable with a parent at or below v (its parent marginal
    P(π_w) is a marginal of the network above it).  Adding an arc does not change v's descendants."""
    iv = dag.index(v)
    below = {iv}
    children = [[] for _ in dag.nodes]
    for k, ps in enumerate(dag.parent_indices()):
        for p in ps:
            children[p].append(k)
    stack = [iv]
    while stack:
        for c in children[stack.pop()]:
            if c not in below:
                below.add(c)
                stack.append(c)
    return sorted({iv} | {k for k, ps in enumerate(dag.parent_indices()) if below & set(ps)})


def add_arc_gram(model, codes: np.ndarray, K: np.ndarray, u: str, v: str, *, params: str = "ml",
                 pseudo_count: float = 1.0, K_old: np.ndarray | None = None):
    """The model with u -> v added and its Fisher Gram matrix by the cached update

        K_new = K − Σ_{w ∈ A} K_w(old) + Σ_{w ∈ A} K_w(new),   A = :func:`affected_terms` (usually {v}).

    ``K_old`` is Σ_{w ∈ A} K_w(old) if already known (it depends on v only).  Exact for complete data;
    with missing cells every block's expected features may change, so use a full
    :func:`~bnfk_core.kernels.gram` there.

    Returns (new model, new Gram matrix).
    """
    aff = affected_terms(model.dag, v)
    new = _with_arc(model, codes, u, v, params, pseudo_count)
    if K_old is None:
        K_old = sum(variable_term(model, codes, w) for w in aff)
    return new, K - K_old + sum(variable_term(new, codes, w) for w in aff)


def candidate_arcs(dag: DAG) -> list[tuple[str, str]]:
    """Arcs u -> v that can be added to ``dag`` (u, v not adjacent, no cycle), in node order."""
    out = []
    for u, v in itertools.permutations(dag.nodes, 2):
        if dag.has_arc(u, v) or dag.has_arc(v, u):
            continue
        if dag.index(v) in dag.ancestors([dag.index(u)]):
            continue                                     # v is an ancestor of u: u -> v closes a cycle
        out.append((u, v))
    order = {n: k for k, n in enumerate(dag.nodes)}
    return sorted(out, key=lambda a: (order[a[0]], order[a[1]]))


# ====================================================================== equivalence
def reverse_covered_arc(model, u: str, v: str):
    """The model on the DAG with the covered arc u -> v reversed and the *same joint distribution*:
    with Z = π(u) (so π(v) = Z ∪ {u}), P(v | Z) = Σ_u P(u | Z) P(v | Z, u) and
    P(u | Z, v) = P(u | Z) P(v | Z, u) / P(v | Z) (uniform where P(v | Z) = 0).  The Fisher kernel is
    invariant under this reversal (Markov-equivalent structure, same distribution)."""
    dag = model.dag
    if (u, v) not in covered_arcs(dag):
        raise SegmentError(f"The arc {u} -> {v} is not a covered arc of the network (covered: pa({v}) = pa({u}) + {u}).")
    new_dag = dag.reverse_arc(u, v)
    iu, iv = dag.index(u), dag.index(v)
    cards = [int(c) for c in model.cardinalities]
    letters = {k: chr(97 + k) if k < 26 else chr(65 + k - 26) for k in range(len(cards))}
    if len(cards) > 52:
        raise SegmentError("Covered-arc reversal supports at most 52 variables.")

    def tensor(i):
        ps = list(dag.parent_indices()[i])
        return model.cpts[i].reshape([cards[p] for p in ps] + [cards[i]]), ps + [i]

    Tu, au = tensor(iu)
    Tv, av = tensor(iv)
    Z = list(dag.parent_indices()[iu])
    out = Z + [iu, iv]
    spec = "".join(letters[k] for k in au) + "," + "".join(letters[k] for k in av) + "->" + \
        "".join(letters[k] for k in out)
    J = np.einsum(spec, Tu, Tv)                                   # P(u, v | Z), axes Z + [u, v]
    Pv = J.sum(axis=len(Z))                                       # axes Z + [v]
    with np.errstate(invalid="ignore", divide="ignore"):
        Pu = np.where(Pv[..., None, :] > 0, J / Pv[..., None, :], 1.0 / cards[iu])   # axes Z + [u, v]
    new_pa_u = sorted(Z + [iv])
    Pu = np.transpose(Pu, [out.index(k) for k in new_pa_u] + [len(Z)])
    cpts = list(model.cpts)
    cpts[iv] = Pv.reshape(-1, cards[iv])
    cpts[iu] = Pu.reshape(-1, cards[iu])
    info = dict(model.fit_info)
    info["derived"] = f"covered arc {u} -> {v} reversed (same joint)"
    return BayesNet(new_dag, model.states, tuple(cpts), info)


# ====================================================================== supervised arc search
def adjusted_rand(labels_true, labels_pred) -> float:
    """Adjusted Rand index, bit-identical to ``clustering_metrics(...)["ari"]`` (scikit-learn's
    ``adjusted_rand_score`` on the rows with a non-negative label: the same integer pair counts and the
    same final division) without its input validation, which dominated the arc search's scoring."""
    t = np.asarray(labels_true)
    p = np.asarray(labels_pred)
    if t.dtype.kind in "iu":
        keep = t >= 0
        t, p = t[keep], p[keep]
    _, ti = np.unique(t, return_inverse=True)
    _, pi = np.unique(p, return_inverse=True)
    ti, pi = ti.ravel().astype(np.int64), pi.ravel().astype(np.int64)
    kp = int(pi.max()) + 1 if pi.size else 1
    C = np.bincount(ti * kp + pi, minlength=(int(ti.max()) + 1 if ti.size else 1) * kp).reshape(-1, kp)
    n = np.int64(len(ti))
    n_c, n_k = C.sum(axis=1), C.sum(axis=0)
    ss = (C[C > 0] ** 2).sum()
    fp = int((C @ n_k).sum() - ss)
    fn = int((C.T @ n_c).sum() - ss)
    tp = int(ss - n)
    tn = int(n * n - fp - fn - ss)
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


@dataclass
class ArcStep:
    arc: tuple
    ari: float
    n_candidates: int
    n_evaluated: int                 # clusterings run (one per equivalence class with ml parameters)
    seconds: float
    candidates: list = field(default_factory=list)    # (u, v, ari) for every candidate, in search order


@dataclass
class ArcSearchResult:
    base_ari: float
    steps: list
    dag: DAG
    base_dag: DAG
    label_column: str
    algorithm: str
    kernel: str
    params: str
    n_clusters: int
    restarts: int
    seed: int
    cached: bool
    seconds: float
    notes: list = field(default_factory=list)

    def to_dict(self, candidates: bool = False) -> dict:
        steps = []
        for s in self.steps:
            d = {"arc": list(s.arc), "ari": s.ari, "n_candidates": s.n_candidates,
                 "n_evaluated": s.n_evaluated, "seconds": s.seconds}
            if candidates:
                d["candidates"] = [{"arc": [u, v], "ari": a} for u, v, a in s.candidates]
            steps.append(d)
        return {"base_ari": self.base_ari, "steps": steps, "arcs": [list(a) for a in self.dag.sorted_arcs()],
                "label_column": self.label_column, "algorithm": self.algorithm, "kernel": self.kernel,
                "params": self.params, "n_clusters": self.n_clusters, "restarts": self.restarts, "seed": self.seed,
                "cached": self.cached, "seconds": self.seconds, "notes": list(self.notes)}


def arc_search(data, *, label_column: str | None = None, n_arcs: int = 2, algorithm: str = "correlation",
               kernel: str = FISHER, n_clusters: int | None = None, restarts: int = 25, seed: int = 0,
               params: str = "ml", pseudo_count: float = 1.0, base: DAG | None = None,
               transform: str = "shift-min", dedupe: bool = True, max_candidates: int | None = MAX_CANDIDATES,
               progress: Progress | None = None) -> ArcSearchResult:
    """Supervised greedy arc search (thesis §6.2): add, ``n_arcs`` times, the arc whose network's Fisher
    kernel gives the clustering with the highest adjusted Rand index against the label.

    Parameters
    ----------
    data : CategoricalData with the label column (``label_column`` or ``data.class_column``); the label
        is never a feature.
    n_arcs : arcs to add (each step adds the best candidate even if the ARI drops, as the thesis).
    algorithm : "correlation" (thesis; shift as the thesis: none for the Fisher kernel) or "spectral".
    kernel : only "fisher" (the search is over the network behind it).
    n_clusters : default the number of labels.
    restarts, seed : of the correlation clustering (same seed for every candidate).
    params : CPT estimator; ``ml`` (default) makes the empty network's kernel exactly scaled-Hamming and
        Markov-equivalent networks give the same Gram matrix.
    base : starting DAG over the feature columns (default: empty).
    dedupe : with ``ml`` and complete data, cluster once per equivalence class of the candidate network.
    max_candidates : at most this many candidate arcs are clustered per step (None: all).  Wide data have
        d (d − 1) candidates, each a clustering of an N × N matrix; beyond the bound the candidates whose
        variables have the highest empirical mutual information I(u; v) are kept (ties in node order)
        and a note says how many were scored.  The default leaves every thesis dataset's search whole.
    progress : optional ``progress(fraction, message)``.

    Ties between candidates keep the first in node order.
    """
    t0 = time.perf_counter()
    if kernel != FISHER:
        raise SegmentError(f"The arc search changes the network behind the Fisher kernel; kernel '{kernel}' "
                           "has no network (use 'fisher').")
    if algorithm not in ("correlation", "spectral"):
        raise SegmentError(f"Unknown clustering algorithm '{algorithm}'; choose correlation or spectral.")
    if params not in ESTIMATORS:
        raise SegmentError(f"Unknown parameter method '{params}'; choose one of {', '.join(ESTIMATORS)}.")
    if int(n_arcs) < 0:
        raise SegmentError(f"The number of arcs must be at least 0, got {n_arcs}.")
    if label_column is not None:
        data = data.with_class(label_column)
    if data.class_column is None:
        raise SegmentError("The arc search is supervised: give the label column.")
    feats = data.without_class()
    if feats.n_vars < 2:
        raise SegmentError(f"{data.source} needs at least two feature columns for an arc.")
    y = data.labels()
    k = int(n_clusters) if n_clusters is not None else default_n_clusters(data)
    N = feats.n_rows
    need = 3 * N * N * 8
    if memory_limit() is not None and need > memory_limit():
        raise KernelError(f"The arc search keeps about three {N:,} x {N:,} matrices ({need / 2**30:.1f} GiB); "
                          "sample fewer rows.")
    complete = not feats.has_missing
    dedupe = bool(dedupe and complete and params == "ml")
    dag = base if base is not None else DAG(feats.variables)
    if set(dag.nodes) != set(feats.variables):
        raise SegmentError("The base structure's variables differ from the feature columns.")
    feats = feats.select(list(dag.nodes))
    lk = LiveKernel(dag, feats, params, pseudo_count)
    notes = []
    if not complete:
        notes.append("The data have missing cells: rows with a missing cell get the marginalized kernel, whose "
                     "expected features depend on the whole network, so their part of every term is recomputed "
                     "for each candidate (the complete rows' terms are updated term by term).")

    def score(Km) -> float:
        res = cluster(Km, k, algorithm, kernel=FISHER, transform=transform, restarts=restarts, seed=seed)
        return adjusted_rand(y, res.labels)

    base_ari = score(lk.gram())
    base_dag = dag
    steps = []
    total = max(int(n_arcs), 1)
    work = np.empty((N, N))
    pair_mi: dict = {}
    for step in range(int(n_arcs)):
        ts = time.perf_counter()
        dag = lk.dag
        cands = candidate_arcs(dag)
        if not cands:
            notes.append(f"No arc can be added after {step} step(s).")
            break
        if max_candidates is not None and len(cands) > int(max_candidates):
            n_all = len(cands)
            cands = _top_mi_candidates(cands, feats, int(max_candidates), pair_mi)
            notes.append(f"Step {step + 1}: {len(cands):,} of {n_all:,} candidate arcs clustered (those whose "
                         "variables have the highest mutual information; max_candidates).")
        results, seen, n_eval = [], {}, 0
        heads = {}
        for u, v in cands:
            heads.setdefault(v, []).append(u)
        done = 0
        for v in dag.nodes:
            if v not in heads:
                continue
            for u in heads[v]:
                key = cpdag(dag.add_arc(u, v)) if dedupe else None
                if key is not None and key in seen:
                    ari = seen[key]
                else:
                    ari = score(lk.preview("add", u, v, out=work))
                    n_eval += 1
                    if key is not None:
                        seen[key] = ari
                results.append((u, v, ari))
                done += 1
                if progress is not None:
                    progress((step + done / len(cands)) / total, f"arc {step + 1}/{n_arcs}: {u} -> {v} ARI {ari:.3f}")
        order = {a: n for n, a in enumerate(cands)}
        results.sort(key=lambda t: order[(t[0], t[1])])
        best = max(results, key=lambda t: (t[2], -order[(t[0], t[1])]))
        u, v = best[0], best[1]
        lk.apply("add", u, v)
        steps.append(ArcStep((u, v), best[2], len(cands), n_eval, time.perf_counter() - ts, results))
    dag = lk.dag
    if progress is not None:
        progress(1.0, "arc search done")
    return ArcSearchResult(base_ari, steps, dag, base_dag, data.class_column, algorithm, kernel, params, k,
                           int(restarts), int(seed), complete, time.perf_counter() - t0, notes)


def _top_mi_candidates(cands, feats, m: int, cache: dict) -> list:
    """The ``m`` candidate arcs with the highest I(u; v) (computed once per pair into ``cache``), in the
    candidates' own order."""
    for u, v in cands:
        key = frozenset((u, v))
        if key not in cache:
            cache[key] = mutual_information(feats.codes[:, feats.index(u)], feats.codes[:, feats.index(v)])
    rank = sorted(range(len(cands)), key=lambda t: (-cache[frozenset(cands[t])], t))[:m]
    return [cands[t] for t in sorted(rank)]


# ====================================================================== the Segments lab
def default_segment_variables(ranking: pd.DataFrame, variables: Sequence[str], m: int, kind: str) -> list[str]:
    """The segment's starting variables: the top pair or triple of an :func:`mi_ranking` (for a full segment
    of more than three variables: none), then the other ``variables`` in order, ``m`` in all."""
    first = list(ranking["variables"].iloc[0]) if kind != "full" or m <= 3 else []
    return (first + [v for v in variables if v not in first])[:m]


def clustering_aris(K: np.ndarray, labels: np.ndarray, n_clusters: int, *, restarts: int = 25, seed: int = 0,
                    algorithms: Sequence[str] = ("correlation", "spectral")) -> dict:
    """Adjusted Rand index against ``labels`` of a seeded clustering of the Fisher Gram matrix ``K`` by each
    algorithm (as :func:`arc_search` scores a network, but with each algorithm's default transform)."""
    out = {}
    for algo in algorithms:
        res = cluster(K, n_clusters, algo, kernel=FISHER, restarts=restarts, seed=seed)
        out[algo] = clustering_metrics(labels, res.labels)["ari"]
    return out


def imputation_check(data, dag: DAG, *, params: str = "smoothed", missing: float = 0.2, test_fraction: float = 0.3,
                     seed: int = 0) -> dict:
    """One seeded MCAR imputation run of a network: hide ``missing`` of the cells of a random ``test_fraction``
    of the rows (:func:`~bnfk_core.analyses.impute.induce_mcar`), fit ``dag`` on what remains, give every
    hidden cell its exact posterior and score it (:func:`~bnfk_core.analyses.impute.evaluate`: arg-max
    ``accuracy``, capped ``cross_entropy``, ``cells``)."""
    split = induce_mcar(data, test_fraction, missing, seed=seed)
    model = fit(dag, split.data, method=params)
    return evaluate(impute_bn(split.data, model=model), split.truth, split.hidden)


@dataclass(frozen=True)
class DagEdit:
    """One structure edit of :func:`equivalence_edits`: ``how`` is ``covered`` (reverse the covered arc
    u -> v), ``reverse`` (reverse the non-covered arc u -> v) or ``add`` (add the arc u -> v)."""

    how: str
    u: str
    v: str
    label: str

    def apply(self, dag: DAG) -> DAG:
        """The edited DAG."""
        return dag.add_arc(self.u, self.v) if self.how == "add" else dag.reverse_arc(self.u, self.v)


def equivalence_edits(dag: DAG, *, max_covered: int = 4) -> list[DagEdit]:
    """Structure edits that show which changes of a network keep its Fisher kernel (thesis ch. 6).

    Reversing a covered arc u -> v (pa(v) = pa(u) ∪ {u}) keeps the Markov equivalence class; with CPTs
    that describe the same joint distribution (:func:`reverse_covered_arc`) the Fisher kernel does not
    change.  Reversing a non-covered arc, or adding an arc that creates a v-structure, changes the class.

    Parameters
    ----------
    dag : DAG
        The network to edit (in the Segments lab: the base network with the segment).
    max_covered : int, default 4
        At most this many covered arcs are listed.

    Returns
    -------
    list of DagEdit
        In this order:

        * ``covered``: the first ``max_covered`` arcs of :func:`~bnfk_core.dag.covered_arcs`;
        * ``reverse``: the first arc in :meth:`~bnfk_core.dag.DAG.sorted_arcs` order that is not covered
          and whose reversal closes no cycle (none if there is no such arc);
        * ``add``: the first arc x -> w, for w and then x in node order, where w has parents, x is neither
          w nor adjacent to w or to any parent of w, and the arc closes no cycle -- it makes the new
          v-structure p -> w <- x with p the first parent of w (none if there is no such arc).

        Empty for a network without arcs.
    """
    cov = covered_arcs(dag)
    out = [DagEdit("covered", u, v, f"reverse covered arc {u} → {v}") for u, v in cov[:max_covered]]
    for u, v in dag.sorted_arcs():
        if (u, v) in cov:
            continue
        try:
            dag.reverse_arc(u, v)
        except BnfkError:
            continue
        out.append(DagEdit("reverse", u, v, f"reverse non-covered arc {u} → {v}"))
        break
    for w in dag.nodes:
        ps = dag.parents(w)
        if not ps:
            continue
        for x in dag.nodes:
            if x == w or x in ps or dag.has_arc(w, x) or any(dag.has_arc(x, p) or dag.has_arc(p, x) for p in ps):
                continue
            try:
                dag.add_arc(x, w)
            except BnfkError:
                continue
            out.append(DagEdit("add", x, w, f"add {x} → {w} (v-structure {ps[0]} → {w} ← {x})"))
            return out
    return out


def edited_model(model, edit: DagEdit, data, *, params: str = "smoothed"):
    """The network after ``edit``: for a covered arc the same joint distribution (:func:`reverse_covered_arc`),
    otherwise the edited DAG fitted to ``data`` with the ``params`` estimator."""
    if edit.how == "covered":
        return reverse_covered_arc(model, edit.u, edit.v)
    return fit(edit.apply(model.dag), data, method=params)


@dataclass
class EditEffect:
    """What one :class:`DagEdit` does: whether the edited network is Markov equivalent to the original, the
    largest change of the Gram matrix and the edited network's Gram matrix ``K``."""

    edit: DagEdit
    equivalent: bool
    max_abs_change: float
    K: np.ndarray


def edit_effects(model, data, edits: Sequence[DagEdit], *, params: str = "smoothed", rows=None,
                 K: np.ndarray | None = None) -> list[EditEffect]:
    """:func:`edited_model` for every edit and its Fisher Gram matrix on ``rows`` of ``data`` (default all),
    compared with ``model``'s (``K`` if already computed on those rows)."""
    sub = data if rows is None else data.subset(np.asarray(rows))
    K = gram(model, sub) if K is None else K
    out = []
    for e in edits:
        m = edited_model(model, e, data, params=params)
        Ke = gram(m, sub)
        out.append(EditEffect(e, equivalent(m.dag, model.dag), float(np.abs(Ke - K).max()), Ke))
    return out


def edit_effects_table(effects: Sequence[EditEffect]) -> pd.DataFrame:
    """One row per edit: ``edit`` (its label), ``Markov equivalent``, ``max |ΔK|``."""
    return pd.DataFrame([{"edit": e.edit.label, "Markov equivalent": e.equivalent, "max |ΔK|": e.max_abs_change}
                         for e in effects])


def arc_search_tables(result: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The steps of an :meth:`ArcSearchResult.to_dict` (with candidates) -- step 0 the empty network, then one
    row per added arc with its ARI, candidates, clusterings run and seconds -- and every candidate of the
    last step with its ARI, best first."""
    steps = pd.DataFrame([{"step": 0, "arc": "(empty network)", "ARI": result["base_ari"]}] +
                         [{"step": i + 1, "arc": f"{s['arc'][0]} → {s['arc'][1]}", "ARI": s["ari"],
                           "candidates": s["n_candidates"], "clustered": s["n_evaluated"], "seconds": s["seconds"]}
                          for i, s in enumerate(result["steps"])])
    last = result["steps"][-1]["candidates"] if result["steps"] else []
    cands = pd.DataFrame([{"arc": f"{c['arc'][0]} → {c['arc'][1]}", "ARI": c["ari"]} for c in last],
                         columns=["arc", "ARI"]).sort_values("ARI", ascending=False)
    return steps, cands
