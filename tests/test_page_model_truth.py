"""The Model page on rows sampled from a textbook network: with the true structure its CPTs are the
network's own, so its posteriors equal pgmpy's variable elimination on the textbook network itself; the
Similar cases tab ranks the sampled rows for the evidence as the core does."""

import numpy as np
import pytest
from apptest_helpers import assert_clean, page_app
from test_page_model import _assert_matches, _model, _observe, _page_posteriors, downloads  # noqa: F401

from bnfk_core.network.textbook import textbook_network


def _open_asia():
    at = page_app("home.py").run()
    pick = at.selectbox(key="w_dataset_pick")
    pick.set_value(next(o for o in pick.options if o.startswith("Textbook network asia "))).run()
    assert_clean(at)
    return at.switch_page("pages/model.py").run()


def test_the_true_structure_reasons_with_the_textbook_cpts(downloads):  # noqa: F811
    at = _open_asia()
    assert_clean(at)
    truth, shown = textbook_network("asia"), _model(downloads)
    assert shown.variables == truth.variables and shown.dag == truth.dag
    for a, b in zip(shown.cpts, truth.cpts):
        np.testing.assert_allclose(a, b, atol=1e-12)  # the network's own CPTs, not refitted on the rows
    _observe(at, "smoke", "yes")
    _observe(at, "dysp", "yes")
    assert_clean(at)
    _assert_matches(_page_posteriors(downloads), truth, {"smoke": "yes", "dysp": "yes"})


def test_the_similar_cases_tab_ranks_the_rows_for_the_evidence():
    from bnfk_core.analyses.similar import similar

    at = _open_asia()
    _observe(at, "smoke", "yes")
    at.session_state["model_tab"] = "Similar cases"
    at.run()
    assert_clean(at)
    table = next(df.value for df in at.dataframe if "similarity" in df.value.columns)
    truth = textbook_network("asia")
    rows = truth.sample(int(at.session_state["textbook_rows"]), int(at.session_state["textbook_seed"]))
    want = similar(truth, rows, {"smoke": "yes"}, k=len(table))
    assert list(table["similarity"]) == pytest.approx(list(want.similarity), rel=1e-9)
