"""The Compare page's state: structure B (edited beside the current network A) and the cached comparison."""
from __future__ import annotations

import json

import streamlit as st

from bnfk_core.analyses.segments.compare import StructureComparison, compare_structures
from bnfk_core.data.table import CategoricalData
from bnfk_core.network.dag import DAG

from .structure import dag, dag_json, recipe
from .tables import data, feature_data

__all__ = ["compare_b", "set_compare_b", "comparison"]


def compare_b() -> DAG:
    """Structure B: the one last set on the Compare page for these features, else a copy of the current network."""
    stored = st.session_state.get("compare_b")
    feat = feature_data()
    if stored and stored[0] == feat.fingerprint():
        return DAG.from_dict(stored[1])
    return dag()


def set_compare_b(d: DAG) -> None:
    st.session_state.compare_b = (feature_data().fingerprint(), d.to_dict())


@st.cache_resource(show_spinner=False, max_entries=16)
def _compare(_data: CategoricalData, fingerprint: str, a_key: str, b_key: str, params: str, rows: int,
             seed: int) -> StructureComparison:
    a, b = (DAG.from_dict(json.loads(k)) for k in (a_key, b_key))
    return compare_structures(_data, a, b, params=params, rows=rows, seed=seed)


def comparison(a: DAG, b: DAG, rows: int, seed: int) -> StructureComparison:
    """:func:`~bnfk_core.analyses.segments.compare.compare_structures` of the current data (the app's CPT estimator),
    cached per structures, rows and seed."""
    d = data()
    return _compare(d, d.fingerprint(), dag_json(a), dag_json(b), recipe().params, int(rows), int(seed))
