"""The true network beside the learned one: when the current table was sampled from a textbook network
(dataset ``textbook:<name>``, :func:`bnfk_ui.state.choices.textbook_of`), that network with its own CPTs.

* :func:`source` -- ``(network, rows, seed)`` of the current table, else None;
* :func:`truth` -- the textbook network the current table was sampled from (its own CPTs), else None;
* :func:`truth_dag` -- its DAG when it ranges over the current feature variables (no class column chosen,
  nothing dropped: what the structure is over), else None; :func:`why_none` says why there is none;
* :func:`truth_label` -- its name as the pages show it ("True network (asia)");
* :func:`shd` -- the structural Hamming distance of a structure to it.
"""

from __future__ import annotations

import streamlit as st

from bnfk_core.network.dag import DAG, structural_hamming_distance
from bnfk_core.network.model import BayesNet

from .choices import textbook_of
from .tables import feature_data, network_of

__all__ = ["source", "truth", "truth_dag", "truth_label", "why_none", "shd"]


def source() -> tuple[str, int, int] | None:
    """``(network name, rows, seed)`` when the current table was sampled from a textbook network, else
    None."""
    ss = st.session_state
    name = textbook_of(ss.dataset)
    if name is None:
        return None
    return name, int(ss.textbook_rows), int(ss.textbook_seed)


def truth() -> BayesNet | None:
    """The textbook network the current table was sampled from, with its own CPTs (over all its variables,
    in the table's column order and with its states), else None.  Shared by every session: never change it."""
    src = source()
    return None if src is None else network_of(src[0])


def truth_dag() -> DAG | None:
    """The true network's DAG when its nodes are the current feature variables (no class column chosen and
    no column dropped), else None."""
    net = truth()
    if net is None or tuple(net.variables) != tuple(feature_data().variables):
        return None
    return net.dag


def truth_label() -> str:
    """How the pages name the true network: "True network (asia)"; empty without one."""
    src = source()
    return "" if src is None else f"True network ({src[0]})"


def why_none() -> str | None:
    """Why a textbook table has no true network to compare with (a class column or dropped columns), else
    None."""
    if truth() is None or truth_dag() is not None:
        return None
    return (
        f"The true network of {source()[0]} ranges over all its variables; with a class column or dropped "
        "columns the structure does not, so there is no distance to it (choose no class column and drop "
        "nothing on the Data page)."
    )


def shd(d: DAG) -> int | None:
    """Structural Hamming distance of the structure ``d`` to the true network
    (:func:`bnfk_core.network.dag.structural_hamming_distance`: their equivalence classes compared), else
    None without a true network."""
    t = truth_dag()
    return None if t is None else structural_hamming_distance(d, t)
