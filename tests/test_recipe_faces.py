"""Every face learns the same network from the same table by default: Python (learn_recipe, feature_network,
fit_fisher), the CLI (learn without flags, cluster --kernel fisher, report) and the app (its first
structure)."""

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from bnfk_core.analyses.cluster.clustering import feature_network
from bnfk_core.cli import main
from bnfk_core.data.table import load_csv
from bnfk_core.kernels.fisher import fit_fisher
from bnfk_core.learning.recipe import DEFAULT_RECIPE, learn_recipe
from bnfk_core.network.formats import read_model

ROOT = Path(__file__).resolve().parents[1]
HAYES = str(ROOT / "sample_data" / "hayes_roth.csv")


@pytest.fixture(scope="module")
def reference():
    """The default recipe's network over Hayes-Roth's features (the class column is not a node)."""
    data = load_csv(HAYES, class_column="class")
    return data, learn_recipe(data)


def _run(capsys, *argv) -> dict:
    assert main([str(a) for a in argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_python_entry_points_share_the_default(reference):
    data, ref = reference
    feats = data.without_class()
    assert feature_network(data).dag.to_dict() == ref.dag.to_dict()
    fk = fit_fisher(feats)
    assert fk.recipe == DEFAULT_RECIPE and fk.model.dag.to_dict() == ref.dag.to_dict()
    for a, b in zip(fk.model.cpts, ref.model.cpts):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_learn_needs_no_flag_and_says_its_recipe(reference, tmp_path, capsys):
    data, ref = reference
    out = _run(capsys, "learn", HAYES, "--drop-columns", "class", "--quiet", "-o", tmp_path / "m.json")
    assert out["recipe"] == DEFAULT_RECIPE.to_dict()
    m = read_model(tmp_path / "m.json")
    assert sorted(map(tuple, out["arcs"])) == sorted(ref.dag.sorted_arcs()) == sorted(m.dag.sorted_arcs())
    for a, b in zip(m.cpts, ref.model.cpts):
        np.testing.assert_allclose(a, b, atol=1e-9)


def test_cluster_fisher_uses_the_default_recipe(reference, capsys):
    _, ref = reference
    out = _run(
        capsys,
        "cluster",
        HAYES,
        "--label-column",
        "class",
        "--kernel",
        "fisher",
        "--no-labels-out",
        "--restarts",
        "2",
    )
    assert out["recipe"] == DEFAULT_RECIPE.to_dict() and out["n_arcs"] == ref.dag.n_arcs


def test_report_learns_the_default_recipe(reference, tmp_path, capsys):
    _, ref = reference
    out = _run(
        capsys,
        "report",
        HAYES,
        "--class-column",
        "class",
        "--quiet",
        "-o",
        tmp_path / "r.html",
        "--set",
        "kernel_rows=40",
        "--set",
        "clu_rows=40",
        "--set",
        "imp_rows=40",
        "--set",
        "imp_repeats=1",
    )
    assert out["arcs"] == ref.dag.n_arcs and DEFAULT_RECIPE.describe() in out["structure"]


def test_the_app_starts_from_the_default_recipes_network(reference):
    _, ref = reference
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["data"] = "hayes_roth"
    at.query_params["class"] = "class"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["param_method"] == DEFAULT_RECIPE.params
    assert sorted(map(tuple, at.session_state["structure"]["dag"]["arcs"])) == sorted(ref.dag.sorted_arcs())
