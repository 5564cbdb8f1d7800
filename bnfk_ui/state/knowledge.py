"""The Structure page's knowledge: the forbidden and required arcs the Learn tab passes to its search, and
the bootstrap arc strength of its recipe (cached per table, recipe, B and seed)."""

from __future__ import annotations

import streamlit as st

from bnfk_core.data.table import CategoricalData
from bnfk_core.learning.bootstrap import arc_strength
from bnfk_core.learning.recipe import Recipe

from .structure import learn_tab_recipe
from .tables import full_data

__all__ = ["DEFAULTS", "ensure", "bootstrap"]

#: the knowledge controls' keys and defaults (not carried by share links: the arcs are typed per table)
DEFAULTS = {"kn_forbid": "", "kn_require": "", "kn_boot_b": 20, "kn_boot_seed": 0, "kn_threshold": 0.5}


def ensure() -> None:
    """Every knowledge control's default in the session, once."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


@st.cache_resource(show_spinner=False, max_entries=8)
def _bootstrap_cached(
    _data: CategoricalData, fingerprint: str, recipe_key: tuple, b: int, seed: int, _progress
):
    """:func:`~bnfk_core.learning.bootstrap.arc_strength` of the current data, once per recipe, B and seed."""
    return arc_strength(_data, Recipe(**dict(recipe_key)), replicates=b, seed=seed, progress=_progress)


def bootstrap(
    method: str,
    score: str,
    k: int,
    max_parents,
    seed: int,
    forbid,
    require,
    b: int,
    boot_seed: int,
    progress=None,
):
    """The bootstrap arc strength (:class:`~bnfk_core.learning.bootstrap.ArcStrength`) of the Learn tab's
    recipe -- the one :func:`~bnfk_core.state.structure.learn` would learn -- on ``b`` tables resampled from
    the current data with ``boot_seed``."""
    d = full_data()
    key = learn_tab_recipe(method, score, k, max_parents, seed, forbid, require)
    return _bootstrap_cached(d, d.fingerprint(), key, int(b), int(boot_seed), progress)
