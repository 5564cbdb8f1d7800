"""Structure edits and the Fisher kernel: which changes of a network keep it (thesis chapter 6).

Reversing a covered arc keeps the Markov equivalence class; with the same joint distribution
(:func:`reverse_covered_arc`) the Fisher kernel does not change.  :func:`equivalence_edits` lists a few
edits of each sort and :func:`edit_effects` measures what each does to the Gram matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import BnfkError
from ...kernels.fisher import gram
from ...network.dag import DAG, covered_arcs, equivalent
from ...network.edit import ArcEdit
from ...network.model import BayesNet, fit
from .tables import SegmentError

__all__ = [
    "reverse_covered_arc",
    "DagEdit",
    "equivalence_edits",
    "edited_model",
    "EditEffect",
    "edit_effects",
    "edit_effects_table",
]


def reverse_covered_arc(model, u: str, v: str):
    """The model on the DAG with the covered arc u -> v reversed and the *same joint distribution*:
    with Z = π(u) (so π(v) = Z ∪ {u}), P(v | Z) = Σ_u P(u | Z) P(v | Z, u) and
    P(u | Z, v) = P(u | Z) P(v | Z, u) / P(v | Z) (uniform where P(v | Z) = 0).  The Fisher kernel is
    invariant under this reversal (Markov-equivalent structure, same distribution).

    Parameters
    ----------
    model : BayesNet
    u, v : str

    Returns
    -------
    BayesNet

    Raises
    ------
    SegmentError
        When u -> v is not covered, or the model has more than 52 variables.

    References
    ----------
    Paper, Theorem 4; Chickering (1995) (covered arcs).
    """
    dag = model.dag
    if (u, v) not in covered_arcs(dag):
        raise SegmentError(
            f"The arc {u} -> {v} is not a covered arc of the network (covered: pa({v}) = pa({u}) + {u})."
        )
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
    spec = (
        "".join(letters[k] for k in au)
        + ","
        + "".join(letters[k] for k in av)
        + "->"
        + "".join(letters[k] for k in out)
    )
    J = np.einsum(spec, Tu, Tv)  # P(u, v | Z), axes Z + [u, v]
    Pv = J.sum(axis=len(Z))  # axes Z + [v]
    with np.errstate(invalid="ignore", divide="ignore"):
        Pu = np.where(Pv[..., None, :] > 0, J / Pv[..., None, :], 1.0 / cards[iu])  # axes Z + [u, v]
    new_pa_u = sorted(Z + [iv])
    Pu = np.transpose(Pu, [out.index(k) for k in new_pa_u] + [len(Z)])
    cpts = list(model.cpts)
    cpts[iv] = Pv.reshape(-1, cards[iv])
    cpts[iu] = Pu.reshape(-1, cards[iu])
    info = dict(model.fit_info)
    info["derived"] = f"covered arc {u} -> {v} reversed (same joint)"
    return BayesNet(new_dag, model.states, tuple(cpts), info)


@dataclass(frozen=True)
class DagEdit:
    """One structure edit of :func:`equivalence_edits`: ``how`` is ``covered`` (reverse the covered arc
    u -> v), ``reverse`` (reverse the non-covered arc u -> v) or ``add`` (add the arc u -> v)."""

    how: str
    u: str
    v: str
    label: str

    @property
    def arc_edit(self) -> ArcEdit:
        """The arc edit made: add u -> v for ``add``, reverse u -> v otherwise."""
        return ArcEdit("add" if self.how == "add" else "reverse", self.u, self.v)

    def apply(self, dag: DAG) -> DAG:
        """The edited DAG (:meth:`ArcEdit.apply <bnfk_core.network.edit.ArcEdit.apply>` of :attr:`arc_edit`).

        Parameters
        ----------
        dag : DAG

        Returns
        -------
        DAG
        """
        return self.arc_edit.apply(dag)


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

        * ``covered``: the first ``max_covered`` arcs of :func:`~bnfk_core.network.dag.covered_arcs`;
        * ``reverse``: the first arc in :meth:`~bnfk_core.network.dag.DAG.sorted_arcs` order that is not
          covered and whose reversal closes no cycle (none if there is no such arc);
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
            ArcEdit("reverse", u, v).apply(dag)
        except BnfkError:
            continue
        out.append(DagEdit("reverse", u, v, f"reverse non-covered arc {u} → {v}"))
        break
    for w in dag.nodes:
        ps = dag.parents(w)
        if not ps:
            continue
        for x in dag.nodes:
            if (
                x == w
                or x in ps
                or dag.has_arc(w, x)
                or any(dag.has_arc(x, p) or dag.has_arc(p, x) for p in ps)
            ):
                continue
            try:
                ArcEdit("add", x, w).apply(dag)
            except BnfkError:
                continue
            out.append(DagEdit("add", x, w, f"add {x} → {w} (v-structure {ps[0]} → {w} ← {x})"))
            return out
    return out


def edited_model(model, edit: DagEdit, data, *, params: str = "smoothed"):
    """The network after ``edit``: for a covered arc the same joint distribution
    (:func:`reverse_covered_arc`), otherwise the edited DAG fitted to ``data`` with the ``params`` estimator.

    Parameters
    ----------
    model : BayesNet
    edit : DagEdit
    data : CategoricalData
    params : str

    Returns
    -------
    BayesNet
    """
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


def edit_effects(
    model, data, edits: Sequence[DagEdit], *, params: str = "smoothed", rows=None, K: np.ndarray | None = None
) -> list[EditEffect]:
    """:func:`edited_model` for every edit and its Fisher Gram matrix on ``rows`` of ``data`` (default all),
    compared with ``model``'s (``K`` if already computed on those rows).

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData
    edits : sequence of DagEdit
    params : str
    rows : sequence of int, optional
    K : ndarray, optional

    Returns
    -------
    list of EditEffect
    """
    sub = data if rows is None else data.subset(np.asarray(rows))
    K = gram(model, sub) if K is None else K
    out = []
    for e in edits:
        m = edited_model(model, e, data, params=params)
        Ke = gram(m, sub)
        out.append(EditEffect(e, equivalent(m.dag, model.dag), float(np.abs(Ke - K).max()), Ke))
    return out


def edit_effects_table(effects: Sequence[EditEffect]) -> pd.DataFrame:
    """One row per edit: ``edit`` (its label), ``Markov equivalent``, ``max |ΔK|``.

    Parameters
    ----------
    effects : sequence of EditEffect

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame(
        [
            {"edit": e.edit.label, "Markov equivalent": e.equivalent, "max |ΔK|": e.max_abs_change}
            for e in effects
        ]
    )
