"""The Imputation page's cached core calls: the table completed by a network, and the network learned from the
table by the app's recipe (:func:`bnfk_ui.state.structure.recipe`)."""

from __future__ import annotations

import streamlit as st

from bnfk_core.analyses.impute import completion
from bnfk_core.learning.recipe import Recipe, learn_recipe

from .structure import recipe

__all__ = ["imputed_with", "learned_for_imputation"]


@st.cache_resource(show_spinner=False, max_entries=8)
def _impute(_model, model_key: str, _data, fingerprint: str) -> completion.ImputedData:
    return completion.impute_with_model(_model, _data)


def imputed_with(model, data) -> completion.ImputedData:
    """``data`` completed by the exact posteriors of ``model`` (cached per model and data)."""
    return _impute(model, model.key(), data, data.fingerprint())


@st.cache_resource(show_spinner=False, max_entries=4)
def _learned(_feat, fingerprint: str, recipe_key: tuple):
    return learn_recipe(_feat, Recipe(**dict(recipe_key)), with_class=True).model


def learned_for_imputation(feat, seed: int = 0):
    """The network the app's recipe learns from every row of ``feat`` (``impute DATA --structure S --method
    bn-em``:
    the recipe's missing-data method, CPTs by EM)."""
    r = recipe().replace(seed=int(seed))
    return _learned(feat, feat.fingerprint(), tuple(sorted(r.to_dict().items())))
