"""Model: the current network as a probabilistic model -- evidence and every posterior (P(evidence), the most
probable explanation, explaining away on a V-structure), "is X ⊥ Y given Z?" with the active trails, each
variable's CPT as an editable table, and the rows most similar to the evidence under the Fisher kernel; the
model downloads as BIF and JSON.  On rows sampled from a textbook network, with its structure, the CPTs are
the network's own."""

import streamlit as st

from bnfk_ui import common
from bnfk_ui.sections import hybrid as hybrid_sections
from bnfk_ui.sections import model as sections
from bnfk_ui.sections import similar
from bnfk_ui.state import hybrid, messages, structure, tables
from bnfk_ui.state import model as state


def page():
    if hybrid.on():  # numbers kept: the conditional linear Gaussian network
        hybrid_sections.model_tabs()
        return
    m = state.session_model()
    for note in state.dropped_notes():
        st.info(messages.plain(note), icon=":material/info:")
    edited = sorted(state.edits())
    common.plain_caption(
        structure.network_line("This page")
        + (f" Your CPT edits: {', '.join(edited)}." if edited else " CPTs as fitted (edit them under CPTs).")
    )
    t_ev, t_ind, t_cpt, t_sim = st.tabs(
        ["Evidence", "Independence", "CPTs", "Similar cases"], key="model_tab", on_change="rerun"
    )
    common.built_when_open(t_ev, lambda: sections.evidence_tab(m), kept=("model_node", "model_vs"))
    common.built_when_open(
        t_ind, lambda: sections.independence_tab(m), kept=("model_x", "model_y", "model_z")
    )
    common.built_when_open(t_cpt, lambda: sections.cpt_tab(m), kept=("model_cpt_node",))
    common.built_when_open(
        t_sim,
        lambda: similar.render_similar(m, tables.feature_data(), state.evidence(m), key="model_similar"),
        kept=("model_similar_k", "model_similar_normalize"),
    )
    st.markdown("**Download the model** (its CPTs, your edits included)")
    sections.downloads(m, common.dataset_name() + "_model")
    if edited:
        st.button("Drop all CPT edits", on_click=state.drop_all_edits, key="model_drop_edits")


if common.start("Model"):
    page()
