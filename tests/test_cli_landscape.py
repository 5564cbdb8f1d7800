"""``python -m bnfk_core landscape``: one JSON object, the numbers of the core, one-line errors."""

import json
from pathlib import Path

import numpy as np
import pytest

from bnfk_core.cli import main
from bnfk_core.data.table import load_csv
from bnfk_core.learning.landscape import score_landscape

ROOT = Path(__file__).resolve().parents[1]
ZOO = str(ROOT / "sample_data" / "zoo.csv")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_landscape_json_matches_the_core(capsys):
    code, out, _ = run(
        capsys,
        "landscape",
        ZOO,
        "--variables",
        "hair,milk,eggs,toothed",
        "--fixed-order",
        "--observe",
        "50",
        "--orders",
        "1-3",
        "--score",
        "bic",
        "--seed",
        "1",
    )
    assert code == 0
    res = json.loads(out)
    assert res["dags"] == 543 and res["classes"] == 185 and res["graphs_in_space"] == 64 and res["bits"] == 6
    land = score_landscape(load_csv(ZOO), ["hair", "milk", "eggs", "toothed"], "bic")
    assert res["best"]["score"] == pytest.approx(land.values.max())
    assert set(res["rmse"]) == {"1", "2", "3"} and res["rmse"]["3"] < 1e-3 < res["rmse"]["1"]
    assert sum(res["walsh_energy"].values()) == pytest.approx(1.0)
    assert res["hill_climb"]["ranks"][-1] == res["hill_climb"]["end"]["rank"]
    assert np.all(np.diff(res["hill_climb"]["scores"]) > 0)
    # the learned network (hc, best of 5 climbs) is never worse than the single climb, never better than rank
    # 1
    assert res["hill_climb"]["end"]["score"] <= res["learned"]["score"] + 1e-9 <= res["best"]["score"] + 2e-9


def test_landscape_all_dags_and_output_file(tmp_path, capsys):
    path = tmp_path / "land.json"
    code, out, _ = run(
        capsys,
        "landscape",
        ZOO,
        "--variables",
        "hair,milk,eggs",
        "--observe",
        "10",
        "--orders",
        "1,2",
        "-o",
        path,
    )
    assert code == 0
    short, full = json.loads(out), json.loads(path.read_text())
    assert short["dags"] == full["dags"] == 25 and full["bits"] == 6 and not full["fixed_order"]
    assert "all DAGs" in full["encoding"] and full["observed"] == 10


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--variables", "hair,nope"], "Unknown variable 'nope'"),
        (["--variables", "hair,milk,eggs,toothed,backbone,fins"], "1 to 5"),
        (["--variables", "hair,milk", "--observe", "3"], "Observe between 1 and 2"),
        (["--variables", "hair,milk,eggs", "--orders", "x"], "Orders are a range"),
        (["--variables", "hair"], "one variable"),
    ],
)
def test_landscape_errors_are_one_line(capsys, argv, words):
    code, out, err = run(capsys, "landscape", ZOO, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and words in err and err.count("\n") == 1
