"""The cached core calls the pages draw: the fitted model and its scores, Gram matrices of the sampled rows,
their order / map / pair values, fitted kernels and per-variable contributions, and the Kernel page's
comparison."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import streamlit as st

from bnfk_core.data.table import CategoricalData
from bnfk_core.kernels import fisher as kernels
from bnfk_core.kernels.embed import class_order, cluster_order, kernel_pca, pair_values, sample_rows
from bnfk_core.learning.kgv import raw_numbers
from bnfk_core.learning.recipe import Recipe, fit_recipe
from bnfk_core.learning.scores import score_dag
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import BayesNet
from bnfk_core.registry import KERNELS, LEARNERS, SCORES

from .shared import front
from .structure import dag, dag_json, learn, recipe
from .tables import data, feature_data, model_features

__all__ = [
    "model",
    "scores",
    "GramResult",
    "kernel_rows",
    "session_network",
    "gram_matrix",
    "kernel_analysis",
    "fitted_kernel",
    "contributions",
    "NETWORKS",
    "comparison_choices",
    "comparison_gram",
    "kernel_options",
]


def kernel_options(kind: str, alpha) -> tuple:
    """The options the page passes to kernel ``kind``'s ``fit``, as a hashable tuple: its power ``alpha`` when
    the kernel declares one (:attr:`bnfk_core.registry.KernelSpec.options`), else none."""
    return (("alpha", float(alpha)),) if KERNELS[kind].takes("alpha") else ()


@front
@st.cache_resource(show_spinner=False, max_entries=64)
def _fit(_feat: CategoricalData, fingerprint: str, dag_key: str, recipe_key: tuple) -> BayesNet:
    return fit_recipe(DAG.from_dict(json.loads(dag_key)), _feat, Recipe(**dict(recipe_key)))


def model(d: DAG | None = None) -> BayesNet:
    """The current structure (or ``d``) fitted to the features (all rows) by the app's recipe
    (:func:`~bnfk_core.learning.recipe.fit_recipe`: the chosen CPT estimator, and EM over missing cells as the
    recipe says, whether the structure was learned or edited by hand), cached per structure."""
    feat = model_features()
    return _fit(feat, feat.fingerprint(), dag_json(d), tuple(sorted(recipe().to_dict().items())))


@front
@st.cache_data(show_spinner=False, max_entries=256)
def _scores(_feat: CategoricalData, fingerprint: str, dag_key: str, names: tuple) -> dict:
    d = DAG.from_dict(json.loads(dag_key))
    w = getattr(_feat, "weights", None)
    raw = raw_numbers(_feat)  # the KGV score searches numbers unbinned
    return {
        s: float(score_dag(_feat.codes, _feat.cardinalities, d, s, weights=w, numbers=raw)) for s in names
    }


def scores(d: DAG | None = None) -> dict:
    """Every registered score of the current structure (or ``d``), keyed by the registry's names, so a score
    registered later is scored too (the server-wide front keeps results across sessions)."""
    feat = model_features()
    return _scores(feat, feat.fingerprint(), dag_json(d), tuple(SCORES))


@dataclass(frozen=True)
class GramResult:
    K: np.ndarray
    rows: np.ndarray  # indices into the data
    labels: np.ndarray  # class codes of those rows (-1 missing / no class)


def kernel_rows() -> np.ndarray:
    ss = st.session_state
    return sample_rows(data().n_rows, int(ss.kernel_rows), int(ss.kernel_seed))


@front
@st.cache_data(show_spinner=False, max_entries=32)
def _gram(
    _model: BayesNet,
    model_key: str,
    _feat: CategoricalData,
    fingerprint: str,
    rows_key: tuple,
    kind: str,
    normalize: bool,
    options: tuple = (),
) -> np.ndarray:
    rows = sample_rows(_feat.n_rows, rows_key[0], rows_key[1])
    return kernels.gram(_model, _feat.subset(rows), kind=kind, normalize=normalize, options=dict(options))


def session_network(m: BayesNet, kind: str) -> tuple[BayesNet, str]:
    """``(network, kind)`` to compute the kernel ``kind`` with: for a kernel built from a latent class model
    (its spec's ``latent_model``) the model the Latent classes page handed over (``lca_network``, for the
    current features), else ``(m, kind)``."""
    lat = st.session_state.get("lca_network")
    if KERNELS[kind].latent_model and lat and lat[0] == feature_data().fingerprint():
        return lat[1], kind
    return m, kind


def gram_matrix(m: BayesNet, kind: str | None = None) -> GramResult:
    """The Gram matrix of the sampled rows for model ``m`` (KernelError when too large)."""
    ss = st.session_state
    feat = feature_data()
    m, kind = session_network(m, kind or ss.kernel_kind)
    if KERNELS[kind].latent_model and (m.fit_info or {}).get("hidden"):
        kind = (
            kernels.FISHER
        )  # a latent class network's Fisher kernel (the class always missing) is the kernel
    K = _gram(
        m,
        m.key(),
        feat,
        feat.fingerprint(),
        (int(ss.kernel_rows), int(ss.kernel_seed)),
        kind,
        bool(ss.kernel_normalize),
        kernel_options(kind, ss.kernel_alpha),
    )
    rows = kernel_rows()
    d = data()
    labels = d.codes[rows, d.index(d.class_column)] if d.class_column else np.full(len(rows), -1)
    return GramResult(K, rows, labels)


@front
@st.cache_data(show_spinner=False, max_entries=32)
def kernel_analysis(K: np.ndarray, labels: np.ndarray, order_kind: str, has_class: bool) -> dict:
    """Row order, kernel-PCA coordinates and pair values of a Gram matrix (cached on its content)."""
    if order_kind == "data":
        order = np.arange(K.shape[0])
    elif order_kind == "class" and has_class:
        order = class_order(labels, K)
    else:
        order = cluster_order(K)
    return {"order": order, "pca": kernel_pca(K, 2), "pairs": pair_values(K, labels if has_class else None)}


@front
@st.cache_resource(show_spinner=False, max_entries=32)
def _fitted(
    _model: BayesNet,
    model_key: str,
    _feat: CategoricalData,
    fingerprint: str,
    rows_key: tuple,
    kind: str,
    options: tuple = (),
):
    return KERNELS[kind].fit(
        _feat.subset(sample_rows(_feat.n_rows, rows_key[0], rows_key[1])), model=_model, **dict(options)
    )


def fitted_kernel(m: BayesNet, kind: str | None = None):
    """The kernel ``kind`` (default: the chosen one) fitted as for :func:`gram_matrix`: on the sampled rows,
    a network kernel on the network ``m``."""
    ss = st.session_state
    feat = feature_data()
    m, kind = session_network(m, kind or ss.kernel_kind)
    return _fitted(
        m,
        m.key(),
        feat,
        feat.fingerprint(),
        (int(ss.kernel_rows), int(ss.kernel_seed)),
        kind,
        kernel_options(kind, ss.kernel_alpha),
    )


@front(size=64)
def _contributions(
    _fk, fitted_key: tuple, _feat: CategoricalData, fingerprint: str, a: int, b: int
) -> np.ndarray:
    return _fk.contributions(_feat.subset([a]), _feat.subset([b]))


def contributions(m: BayesNet, a: int, b: int, kind: str | None = None) -> tuple[tuple, np.ndarray]:
    """``(variables, K_i(a, b))``: the per-variable terms of the (unnormalised) kernel of data rows a and b
    (made once per fitted kernel and pair for every session)."""
    ss = st.session_state
    fk = fitted_kernel(m, kind)
    feat = feature_data()
    net, kind = session_network(m, kind or ss.kernel_kind)
    key = (net.key(), (int(ss.kernel_rows), int(ss.kernel_seed)), kind, kernel_options(kind, ss.kernel_alpha))
    return tuple(fk.variables), _contributions(fk, key, feat, feat.fingerprint(), int(a), int(b))


#: structures the Kernel page compares the Fisher kernel of the current one with: name -> (label, short title)
NETWORKS = {
    "empty": ("the empty network", "empty network"),
    "tree": ("a Chow–Liu tree", "Chow–Liu tree"),
    "hc": ("the tabu search (BIC)", "tabu search"),
    "learned": ("the last learned structure", "last learned"),
    "previous": ("the structure before the last edit", "before last edit"),
}


def comparison_choices() -> dict:
    """``{name: label}`` of the Kernel page's comparison: the Fisher kernel of each of :data:`NETWORKS`, then
    every kernel of the registry that does not depend on the structure."""
    fisher = KERNELS[kernels.FISHER].label
    return {k: f"{fisher} kernel of {v[0]}" for k, v in NETWORKS.items()} | {
        n: f"{KERNELS[n].label} kernel" for n in KERNELS.names(uses_network=False)
    }


def comparison_gram(choice: str) -> tuple[np.ndarray, str, BayesNet | None]:
    """The comparison Gram matrix of ``choice`` (see :func:`comparison_choices`), its title and its
    network."""
    ss = st.session_state
    if choice in KERNELS and not KERNELS[choice].uses_network:
        return gram_matrix(model(), kind=choice).K, KERNELS[choice].label, None
    if choice in LEARNERS and not LEARNERS[choice].needs_rows:  # the empty network: nothing to learn
        d = DAG(feature_data().variables)
    elif choice in LEARNERS:  # the tree, the search: learned as the recipe says
        with st.spinner(f"Learning {NETWORKS[choice][0]}…"):
            d = learn(choice, "bic").dag
    elif choice == "learned":
        d = DAG.from_dict(ss.structure["learned"])
    else:
        undo = ss.structure["undo"]
        d = DAG.from_dict(undo[-1][0]) if undo else dag()
    m = model(d)
    return (
        gram_matrix(m, kind=kernels.FISHER).K,
        f"{KERNELS[kernels.FISHER].label}: {NETWORKS[choice][1]} ({d.n_arcs} arcs)",
        m,
    )
