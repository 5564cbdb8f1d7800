"""The app's "Similar cases" section (bnfk_ui/sections/similar.py) in a one-function AppTest: the table shows
what :func:`bnfk_core.analyses.similar.similar` answers, user text stays plain, the refusals are one
``st.error`` and no evidence asks for some."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _app(evidence: dict, k: int = 4, normalize: bool = False):
    def script():
        import numpy as np
        import streamlit as st

        from bnfk_core.data.table import from_codes
        from bnfk_core.network.dag import DAG
        from bnfk_core.network.model import BayesNet
        from bnfk_ui.sections.similar import render_similar

        dag = DAG(["*rain*", "wet", "sprinkler"], [("*rain*", "wet"), ("sprinkler", "wet")])
        coin = np.array([[0.3, 0.7]])
        wet = np.array([[0.9, 0.1], [0.2, 0.8], [0.2, 0.8], [0.05, 0.95]])
        model = BayesNet(dag, (("no", "[yes](x)"), ("no", "yes"), ("no", "yes")), (coin, wet, coin))
        codes = model.sample(30, 4).codes
        data = from_codes(codes, model.variables, model.states, source="garden.csv")
        st.session_state["result"] = render_similar(model, data, st.session_state["evidence"])

    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["evidence"] = evidence
    at.session_state["similar_k"] = k
    at.session_state["similar_normalize"] = normalize
    return at.run()


def test_the_table_is_the_core_answer_and_user_text_stays_plain():
    from bnfk_core.analyses.similar import similar_frame

    at = _app({"*rain*": "[yes](x)", "wet": "yes"})
    assert not at.exception and not at.error, [e.value for e in at.exception]
    res = at.session_state["result"]
    assert len(res.rows) == 4 and res.evidence == {"*rain*": "[yes](x)", "wet": "yes"}
    shown = at.dataframe[0].value
    want = similar_frame(res)
    assert shown["row"].tolist() == want["row"].tolist() == res.rows.tolist()
    assert shown["similarity"].tolist() == res.similarity.tolist()
    text = " ".join(c.value for c in at.caption)
    assert r"\*rain\* = \[yes\](x)" in text  # Markdown escaped: shown as typed
    assert at.get("download_button")  # the CSV download is offered


def test_normalised_and_refused_and_empty():
    at = _app({"wet": "yes"}, k=30, normalize=True)
    res = at.session_state["result"]
    assert res.normalize and len(res.rows) == 30 and max(abs(res.similarity)) <= 1 + 1e-12
    at = _app({"wet": "maybe"})
    assert not at.exception and len(at.error) == 1 and "wet=maybe" in at.error[0].value
    assert at.session_state["result"] is None
    at = _app({})
    assert not at.exception and not at.error and at.session_state["result"] is None
    assert "Set evidence" in at.caption[0].value
