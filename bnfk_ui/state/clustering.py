"""The Clustering page's cached core calls: the thesis's network, kernel set-ups, clusterings and their
views."""

from __future__ import annotations

import numpy as np
import streamlit as st

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.registry import KERNELS
from bnfk_core.serving.settings import THESIS_RECIPE

from .shared import front

__all__ = ["thesis_network", "clustering_setup", "cached_clustering", "clustering_views"]


@front
@st.cache_resource(show_spinner=False, max_entries=8)
def thesis_network(_data, fingerprint: str, seed: int):
    """The thesis's network for the kernels (hill climbing with qNML, cNML CPTs) on the feature columns."""
    return C.feature_network(_data, **THESIS_RECIPE, seed=seed)


@front
@st.cache_resource(show_spinner=False, max_entries=8)
def clustering_setup(_data, key: tuple, kernel: str, _model, options: tuple = ()) -> C.KernelSetup:
    """The kernel's Gram matrix on ``_data`` (``_model`` for the network kernels; ``options`` its options)."""
    setup = C.kernel_setup(
        _data, kernel, model=_model if KERNELS[kernel].uses_network else None, kernel_options=dict(options)
    )
    setup.K.setflags(write=False)  # shared by every session: read-only (and hashed once, shared.shared)
    return setup


@front
@st.cache_data(show_spinner=False, max_entries=32)
def cached_clustering(
    _setup_obj, _data, key: tuple, algorithm: str, k: int, transform: str, restarts: int, seed: int
) -> dict:
    return C.run_clustering(
        _data,
        _setup_obj.kernel,
        algorithm,
        n_clusters=k,
        setup=_setup_obj,
        transform=transform,
        restarts=restarts,
        seed=seed,
    )


@front
@st.cache_data(show_spinner=False, max_entries=16)
def clustering_views(_K: np.ndarray, key: tuple, labels: tuple) -> dict:
    """The rows' order by cluster and a 2-D kernel-PCA map."""
    return {"order": C.cluster_ordering(np.asarray(labels), _K), "pca": C.embedding(_K, 2)}
