"""The Structure page imports a structure from a model file in every format with CPTs (BIF, XMLBIF, Hugin
NET, XDSL, bnfk JSON): the structure becomes the page's, the CPTs are fitted again on the data."""

import pytest
from apptest_helpers import assert_clean, page_app

from bnfk_core.data.table import load_csv
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import model_to_text
from bnfk_core.network.model import fit

HV = "sample_data/house_votes_84.csv"
ARCS = [("crime", "immigration"), ("immigration", "mx-missile"), ("education-spending", "mx-missile")]


@pytest.mark.parametrize("fmt", ["xmlbif", "net", "xdsl", "bif"])
def test_a_model_file_in_any_format_gives_its_structure(fmt):
    data = load_csv(HV, class_column="class", missing_policy="category").without_class()
    dag = DAG(list(data.variables), ARCS)
    text = model_to_text(fit(dag, data), fmt)
    at = page_app("structure.py", 120, structure_tab="Import / export").run()
    assert_clean(at)
    at.file_uploader(key="w_model_upload").upload(f"m.{fmt}", text.encode(), "application/octet-stream").run()
    next(b for b in at.button if b.label == "Use this structure").click().run()
    assert_clean(at)
    got = DAG.from_dict(at.session_state["structure"]["dag"])
    assert set(got.arcs) == set(ARCS)
