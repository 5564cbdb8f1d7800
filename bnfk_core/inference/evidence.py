"""Evidence on a network: the posterior of every node given observed states, P(evidence), and the most
probable explanation (MPE).

* :func:`query` -- P(V | e) for every target V and log P(e): one row of evidence through the calibrated
  junction tree of :mod:`bnfk_core.inference.junction` (models too large for a tree go through the
  per-pattern contractions of :mod:`bnfk_core.inference.elimination`, as every posterior here does);
* :func:`mpe` -- argmax over the unobserved nodes of P(x_unobserved, e) and its log-probability, by
  max-product variable elimination in log space (the variable whose factor is smallest first) with a
  traceback of the argmax tables: exact, no enumeration of the joint.

Evidence is ``{variable: state}`` in the model's names; an unknown variable or state, and evidence the model
gives probability zero, are refused with one sentence naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .junction import MAX_TREE_CELLS
from .queries import log_evidence, posterior

__all__ = ["Query", "Explanation", "query", "mpe", "evidence_codes"]


@dataclass(frozen=True)
class Query:
    """The answer of :func:`query`.

    Attributes
    ----------
    posterior : dict
        ``{variable: {state: P(state | evidence)}}`` for every target, in model order (an observed target is
        one at its observed state).
    log_evidence : float
        log P(evidence) (0.0 without evidence).
    evidence : dict
        The evidence asked, ``{variable: state}``.
    """

    posterior: dict
    log_evidence: float
    evidence: dict

    def _repr_html_(self) -> str:
        """The posteriors as an HTML table of bars, for a notebook: one row per target and state (observed
        targets marked), P(evidence) in the caption; every name is HTML-escaped.

        Returns
        -------
        str
        """
        from html import escape

        ev = ", ".join(f"{k}={v}" for k, v in self.evidence.items()) or "none"
        p_e = math.exp(self.log_evidence)
        rows = []
        for v, dist in self.posterior.items():
            seen = v in self.evidence
            for k, (s, p) in enumerate(dist.items()):
                name = (
                    f'<td rowspan="{len(dist)}" style="vertical-align:top;font-weight:bold">'
                    f"{escape(str(v))}{' (observed)' if seen else ''}</td>"
                    if k == 0
                    else ""
                )
                bar = (
                    f'<div style="background:{"#c0504d" if seen else "#4f81bd"};height:0.9em;'
                    f'width:{max(0.0, min(1.0, float(p))) * 160:.1f}px"></div>'
                )
                rows.append(
                    f'<tr>{name}<td>{escape(str(s))}</td><td style="width:170px">{bar}</td>'
                    f'<td style="text-align:right">{float(p):.4f}</td></tr>'
                )
        return (
            '<table class="bnfk-query" style="border-collapse:collapse">'
            f'<caption style="text-align:left">Evidence: {escape(ev)}; P(evidence) = {p_e:.6g}</caption>'
            "<tr><th>variable</th><th>state</th><th></th><th>P(state | evidence)</th></tr>"
            + "".join(rows)
            + "</table>"
        )


@dataclass(frozen=True)
class Explanation:
    """The answer of :func:`mpe`: the most probable ``assignment`` ``{variable: state}`` of the unobserved
    variables (model order) and ``log_probability`` = log P(assignment, evidence)."""

    assignment: dict
    log_probability: float


def _known(model, name, what: str) -> int:
    if name not in model.variables:
        shown = ", ".join(model.variables[:12]) + (", ..." if model.n_vars > 12 else "")
        raise ModelError(f"The {what} names '{name}', which is no variable of the model ({shown}).")
    return model.variables.index(name)


def evidence_codes(model, evidence: Mapping[str, str]) -> np.ndarray:
    """One row of codes aligned to the model: the evidence's state codes, -1 elsewhere.

    Parameters
    ----------
    model : BayesNet
    evidence : mapping of str to str

    Returns
    -------
    ndarray of int64, shape (n_vars,)

    Raises
    ------
    ModelError
        A variable or state the model does not have.
    """
    codes = np.full(model.n_vars, -1, dtype=np.int64)
    for name, state in evidence.items():
        i = _known(model, name, "evidence")
        states = model.states[i]
        if str(state) not in states:
            raise ModelError(
                f"The evidence {name}={state} names no state of '{name}' (its states: {', '.join(states)})."
            )
        codes[i] = states.index(str(state))
    return codes


def _impossible(evidence: Mapping[str, str]) -> ModelError:
    shown = ", ".join(f"{k}={v}" for k, v in evidence.items())
    return ModelError(f"The evidence {shown} has probability zero under the model.")


def query(model, evidence: Mapping[str, str] | None = None, targets: Sequence[str] | None = None) -> Query:
    """The posterior of every target given the evidence, and log P(evidence) (exact).

    Parameters
    ----------
    model : BayesNet
    evidence : mapping of str to str, optional
        Observed states, ``{variable: state}``.
    targets : sequence of str, optional
        The variables whose posteriors to return (default: every variable).

    Returns
    -------
    Query

    Raises
    ------
    ModelError
        An unknown variable or state, or evidence of probability zero.

    References
    ----------
    Thesis §2.1.3 and App. A.3 (exact inference by a junction tree); Koller & Friedman (2009), ch. 10.
    """
    evidence = {str(k): str(v) for k, v in (evidence or {}).items()}
    codes = evidence_codes(model, evidence)
    wanted = (
        list(range(model.n_vars))
        if targets is None
        else sorted({_known(model, t, "target") for t in targets})
    )
    row = codes[None, :]
    log_z = float(log_evidence(model, row)[0])
    if not math.isfinite(log_z):
        raise _impossible(evidence)
    post = posterior(model, row) if (codes < 0).any() else {}
    out = {}
    for i in wanted:
        states = model.states[i]
        if codes[i] >= 0:
            p = np.zeros(len(states))
            p[codes[i]] = 1.0
        else:
            p = post[i][1][0]
        out[model.variables[i]] = {s: float(x) for s, x in zip(states, p)}
    return Query(out, log_z, evidence)


def _aligned(table: np.ndarray, scope: tuple, to: tuple) -> np.ndarray:
    """``table`` over ``scope`` transposed and reshaped to broadcast over the sorted scope ``to``."""
    order = sorted(range(len(scope)), key=lambda a: to.index(scope[a]))
    t = np.transpose(table, order)
    shape, k = [], 0
    present = [scope[a] for a in order]
    for v in to:
        if k < len(present) and present[k] == v:
            shape.append(t.shape[k])
            k += 1
        else:
            shape.append(1)
    return t.reshape(shape)


def mpe(model, evidence: Mapping[str, str] | None = None, max_cells: int = MAX_TREE_CELLS) -> Explanation:
    """The most probable explanation: the assignment of every unobserved variable maximising
    P(assignment, evidence), and its log-probability (exact).

    Max-product variable elimination in log space: every CPT restricted to the evidence, the unobserved
    variables eliminated smallest factor first (each step adds the factors holding the variable and maximises
    it out, keeping the argmax table), then the argmaxes read back in reverse order.  Ties go to the lower
    state.

    Parameters
    ----------
    model : BayesNet
    evidence : mapping of str to str, optional
    max_cells : int
        Largest factor the elimination may build.

    Returns
    -------
    Explanation

    Raises
    ------
    ModelError
        An unknown variable or state, evidence of probability zero, or a factor larger than ``max_cells``.

    References
    ----------
    Dawid (1992), "Applications of a general propagation algorithm for probabilistic expert systems";
    Koller & Friedman (2009), §13.2 (max-product variable elimination).
    """
    evidence = {str(k): str(v) for k, v in (evidence or {}).items()}
    codes = evidence_codes(model, evidence)
    cards = [int(c) for c in model.cardinalities]
    factors = []  # (scope: sorted tuple of unobserved variables, log table)
    base = 0.0  # log-factors whose variables are all observed
    with np.errstate(divide="ignore"):
        for i in range(model.n_vars):
            fam = list(model.parents[i]) + [i]
            t = np.log(model.cpts[i]).reshape([cards[u] for u in fam])
            index = tuple(int(codes[u]) if codes[u] >= 0 else slice(None) for u in fam)
            t = t[index]
            scope = tuple(u for u in fam if codes[u] < 0)
            if scope:
                srt = tuple(sorted(scope))
                factors.append((srt, _aligned(t, scope, srt).reshape([cards[u] for u in srt])))
            else:
                base += float(t)
    hidden = {i for i in range(model.n_vars) if codes[i] < 0}
    trace = []  # (variable, scope of its argmax table, argmax table)
    while hidden:

        def cost(v):
            scope = set().union({v}, *(set(s) for s, _ in factors if v in s))
            return (math.prod(cards[u] for u in scope), v)

        v = min(hidden, key=cost)
        mine = [(s, t) for s, t in factors if v in s]
        factors = [(s, t) for s, t in factors if v not in s]
        scope = tuple(sorted(set().union({v}, *(set(s) for s, _ in mine))))
        size = math.prod(cards[u] for u in scope)
        if size > max_cells:
            raise ModelError(
                f"The most probable explanation needs a table of {size:,} cells (eliminating '"
                f"{model.variables[v]}'), over the limit of {max_cells:,}."
            )
        total = np.zeros([1] * len(scope))
        for s, t in mine:
            total = total + _aligned(t, s, scope)
        total = np.broadcast_to(total, [cards[u] for u in scope])
        axis = scope.index(v)
        rest = tuple(u for u in scope if u != v)
        trace.append((v, rest, np.argmax(total, axis=axis)))
        reduced = np.max(total, axis=axis)
        if rest:
            factors.append((rest, reduced))
        else:
            base += float(reduced)
        hidden.discard(v)
    if not math.isfinite(base):
        raise _impossible(evidence)
    state = {}
    for v, rest, arg in reversed(trace):
        state[v] = int(arg[tuple(state[u] for u in rest)]) if rest else int(arg)
    assignment = {model.variables[v]: model.states[v][state[v]] for v in sorted(state)}
    return Explanation(assignment, base)
