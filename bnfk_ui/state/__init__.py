"""The app's state: what the visitor chose (``st.session_state``) and the cached core calls built on it, in
modules of one idea --

* :mod:`.choices` -- the visitor's choices: their defaults (one table of every widget key), widget binding,
  the data settings;
* :mod:`.messages` -- user text shown as typed (:func:`.messages.plain`) and messages queued for the next run;
* :mod:`.bigfiles` -- when the data are a large file read in chunks, and its cached sample;
* :mod:`.tables` -- the table the pages work on (all rows, the sample, the feature columns, the file as
  written);
* :mod:`.uploads` -- switching the data (a sample, an upload, a large file, other reading options);
* :mod:`.structure` -- the current structure and its undo / redo stacks;
* :mod:`.truth` -- for rows sampled from a textbook network, that network (its own CPTs) beside the structure;
* :mod:`.knowledge` -- the Learn tab's forbidden and required arcs and its cached bootstrap arc strength;
* :mod:`.caches` -- the fitted model, scores, Gram matrices, fitted kernels and contributions;
* :mod:`.clustering` -- the Clustering page's cached networks, kernel set-ups and clusterings;
* :mod:`.compare` -- structure B of the Compare page and the cached comparison with the current network;
* :mod:`.imputation` -- the table completed by a network, the network learned to complete it;
* :mod:`.pairs` -- the pair of rows the Kernel page explains;
* :mod:`.shared` -- figures (pure results) built once per distinct input for every session of the server, and
  :func:`.front` before the cached core calls;
* :mod:`.charts` -- a figure sent as ``st.plotly_chart`` sends it, its JSON made once per figure.

Pages and sections import the module that holds a name (``from bnfk_ui.state import caches, tables``, then
``caches.model()``); the package itself holds only :func:`init`, which every page calls first
(through :func:`bnfk_ui.common.start`): it fills in the defaults (house_votes_84, class column ``class``,
missing values as a category, a Chow–Liu tree), so each page also works when it is opened directly in a
fresh session.
"""

from __future__ import annotations

import streamlit as st

from .choices import DEFAULTS
from .structure import reset_structure, structure_fingerprint
from .uploads import apply_pending

__all__ = ["init"]


def init() -> None:
    """Fill in defaults and make sure a structure exists for the current data."""
    ss = st.session_state
    if not ss.get("_defaults_set"):  # once per session (again after it was cleared): ~50 look-ups a run saved
        for k, v in DEFAULTS.items():
            if k not in ss:
                ss[k] = list(v) if isinstance(v, list) else v
        ss._defaults_set = True
    apply_pending()
    if "structure" not in ss or ss.structure.get("fingerprint") != structure_fingerprint():
        reset_structure()
