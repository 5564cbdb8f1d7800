"""The Compare page's state: structure B (edited beside the current network A) and the cached comparison.

Each network's outcome (its CPTs, kernel, clustering, imputation run and prototypes on the sampled rows) is cached
on its own, keyed by its structure, the recipe, the kernel and the sample: when only B changes, A's and the empty
network's outcomes -- and A's row order and kernel-PCA map -- are taken from the cache and only B is computed."""
from __future__ import annotations

import json

import numpy as np
import streamlit as st

from bnfk_core.analyses.segments.compare import (ComparisonRows, NetworkOutcome, StructureComparison, combine,
                                                 comparison_rows, network_outcome)
from bnfk_core.data.table import CategoricalData
from bnfk_core.kernels.embed import class_order, cluster_order, kernel_pca
from bnfk_core.kernels.fisher import FISHER
from bnfk_core.learning.recipe import Recipe
from bnfk_core.network.dag import DAG

from .structure import dag, dag_json, recipe
from .tables import data, feature_data

__all__ = ["compare_b", "set_compare_b", "comparison", "a_view"]


def compare_b() -> DAG:
    """Structure B: the one last set on the Compare page for these features, else a copy of the current network."""
    stored = st.session_state.get("compare_b")
    feat = feature_data()
    if stored and stored[0] == feat.fingerprint():
        return DAG.from_dict(stored[1])
    return dag()


def set_compare_b(d: DAG) -> None:
    st.session_state.compare_b = (feature_data().fingerprint(), d.to_dict())


@st.cache_resource(show_spinner=False, max_entries=8)
def _rows(_data: CategoricalData, fingerprint: str, rows: int, seed: int) -> ComparisonRows:
    return comparison_rows(_data, rows, seed)


@st.cache_resource(show_spinner=False, max_entries=48)
def _outcome(_data: CategoricalData, fingerprint: str, dag_key: str, recipe_key: tuple, kernel: str, alpha,
             rows: int, seed: int) -> NetworkOutcome:
    return network_outcome(DAG.from_dict(json.loads(dag_key)), _rows(_data, fingerprint, rows, seed),
                           recipe=Recipe(**dict(recipe_key)), kernel=kernel, alpha=alpha, seed=seed)


def _key(rows: int, seed: int, kernel: str, alpha) -> tuple:
    d = data()
    return d, d.fingerprint(), tuple(sorted(recipe().to_dict().items())), kernel, \
        None if alpha is None else float(alpha), int(rows), int(seed)


def comparison(a: DAG, b: DAG, rows: int, seed: int, kernel: str = FISHER, alpha=None) -> StructureComparison:
    """:func:`~bnfk_core.analyses.segments.compare.compare_structures` of the current data by the app's recipe, each
    network's outcome cached on its own (module docstring)."""
    d, fp, rk, kernel, alpha, rows, seed = _key(rows, seed, kernel, alpha)
    outs = [_outcome(d, fp, dag_json(g), rk, kernel, alpha, rows, seed) for g in (a, b, DAG(feature_data().variables))]
    return combine(_rows(d, fp, rows, seed), *outs, recipe().params, kernel=kernel, alpha=alpha)


@st.cache_resource(show_spinner=False, max_entries=16)
def _a_view(_a: NetworkOutcome, _labels, fingerprint: str, dag_key: str, recipe_key: tuple, kernel: str, alpha,
            rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = class_order(_labels, _a.K) if _labels is not None else cluster_order(_a.K)
    return order, kernel_pca(_a.K, 2)


def a_view(cmp: StructureComparison, labels, rows: int, seed: int, kernel: str = FISHER, alpha=None):
    """A's row order for the heatmaps (by class, else by A's clusters) and A's kernel-PCA plane, cached with A."""
    _, fp, rk, kernel, alpha, rows, seed = _key(rows, seed, kernel, alpha)
    return _a_view(cmp.a, labels, fp, dag_json(cmp.a.dag), rk, kernel, alpha, rows, seed)
