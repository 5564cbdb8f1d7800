"""The network-as-a-model subcommands (query, dsep, sample) on a model learned from a bundled sample and on a
hand-built V-structure, compared with the library functions they front."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from bnfk_core.cli.main import main
from bnfk_core.inference.evidence import mpe, query
from bnfk_core.network.dag import DAG
from bnfk_core.network.dsep import d_separated
from bnfk_core.network.formats import read_model, write_model
from bnfk_core.network.model import BayesNet

ROOT = Path(__file__).resolve().parents[1]
HAYES = str(ROOT / "sample_data" / "hayes_roth.csv")


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def hayes(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("model") / "hayes.json"
    assert main(["learn", HAYES, "--class-column", "class", "--quiet", "-o", str(path)]) == 0
    return str(path)


@pytest.fixture(scope="module")
def v_model(tmp_path_factory) -> str:
    """u -> v <- w, v = "u or w" without noise (so that v = yes with u = w = no is impossible), as BIF."""
    dag = DAG(["u", "v", "w"], [("u", "v"), ("w", "v")])
    coin = np.array([[0.5, 0.5]])
    v_is_or = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    path = tmp_path_factory.mktemp("v") / "v.bif"
    write_model(BayesNet(dag, (("no", "yes"),) * 3, (coin, v_is_or, coin)), path)
    return str(path)


def test_query_equals_the_library(hayes, capsys):
    code, out, err = _run(capsys, "query", hayes, "--evidence", "age=1,hobby=2", "--mpe")
    assert code == 0, err
    got = json.loads(out)
    model = read_model(hayes)
    want = query(model, {"age": "1", "hobby": "2"})
    assert got["posterior"] == want.posterior and got["log_evidence"] == want.log_evidence
    e = mpe(model, {"age": "1", "hobby": "2"})
    assert got["mpe"] == {"assignment": e.assignment, "log_probability": e.log_probability}
    assert set(got["mpe"]["assignment"]) == {"educational-level", "marital-status"}


def test_query_targets_and_no_mpe_unless_asked(hayes, capsys):
    code, out, err = _run(capsys, "query", hayes, "--evidence", "age=1", "--target", "hobby")
    assert code == 0, err
    got = json.loads(out)
    assert list(got["posterior"]) == ["hobby"] and "mpe" not in got


def test_query_shows_explaining_away(v_model, capsys):
    def p_u(evidence):
        code, out, err = _run(capsys, "query", v_model, "--evidence", evidence, "--target", "u")
        assert code == 0, err
        return json.loads(out)["posterior"]["u"]["yes"]

    assert p_u("v=yes") == pytest.approx(2 / 3) and p_u("v=yes,w=yes") == pytest.approx(0.5)


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (["--evidence", "u=no,w=no,v=yes"], "u=no, w=no, v=yes has probability zero"),
        (["--evidence", "u=no,w=no,v=yes", "--mpe"], "probability zero"),
        (["--evidence", "x=no"], "'x'"),
        (["--evidence", "u=perhaps"], "u=perhaps"),
        (["--evidence", "u"], "'u' is not VARIABLE=STATE"),
        (["--evidence", "u=no,u=yes"], "'u' twice"),
        (["--target", "q"], "'q'"),
    ],
)
def test_query_errors_are_one_line_naming_the_culprit(argv, culprit, v_model, capsys):
    code, out, err = _run(capsys, "query", v_model, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and culprit in err, err


def test_a_missing_model_file_is_named(tmp_path, capsys):
    code, out, err = _run(capsys, "query", tmp_path / "none.bif", "--evidence", "u=no")
    assert code == 2 and "none.bif" in err and err.count("\n") == 1


@pytest.mark.parametrize("given", [None, "marital-status", "age"])
def test_dsep_equals_the_library(given, hayes, capsys):
    extra = ["--given", given] if given else []
    code, out, err = _run(capsys, "dsep", hayes, "hobby", "educational-level", *extra)
    assert code == 0, err
    got = json.loads(out)
    separated, trails = d_separated(
        read_model(hayes).dag, ["hobby"], ["educational-level"], [given] if given else []
    )
    assert got["separated"] == separated and got["active_trails"] == trails


def test_dsep_on_the_v_structure(v_model, capsys):
    code, out, _ = _run(capsys, "dsep", v_model, "u", "w")
    assert json.loads(out)["separated"] is True
    code, out, _ = _run(capsys, "dsep", v_model, "u", "w", "--given", "v")
    assert json.loads(out) == {
        "x": ["u"],
        "y": ["w"],
        "given": ["v"],
        "separated": False,
        "active_trails": [["u", "v", "w"]],
    }
    code, out, err = _run(capsys, "dsep", v_model, "u", "nope")
    assert code == 2 and "'nope'" in err and err.count("\n") == 1


def test_sample_is_seeded_and_equals_the_library(hayes, tmp_path, capsys):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    for path, seed in ((a, 5), (b, 5), (c, 6)):
        code, out, err = _run(capsys, "sample", hayes, "-n", 200, "--seed", seed, "-o", path)
        assert code == 0, err
        assert json.loads(out) == {"output": str(path), "rows": 200, "seed": seed}
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    rows = list(csv.reader(a.open(encoding="utf-8")))
    model = read_model(hayes)
    drawn = model.sample(200, 5)
    assert rows[0] == list(model.variables)
    assert rows[1:] == [[model.states[j][x] for j, x in enumerate(r)] for r in drawn.codes]
    code, out, err = _run(capsys, "sample", hayes, "-n", 200, "--seed", 5)
    assert code == 0 and out == a.read_text(encoding="utf-8")


def test_sample_refuses_a_bad_output_before_work(hayes, tmp_path, capsys):
    code, out, err = _run(capsys, "sample", hayes, "-n", 5, "-o", tmp_path / "s.json")
    assert code == 2 and ".csv" in err and list(tmp_path.iterdir()) == []
    code, out, err = _run(capsys, "sample", hayes, "-n", 0)
    assert code == 2 and err.count("\n") == 1
    code, out, err = _run(
        capsys, "sample", hayes, "-n", 10**6, "--max-memory", "10MB", "-o", tmp_path / "s.csv"
    )
    assert code == 2 and "--max-memory" in err and "1,000,000 rows" in err and list(tmp_path.iterdir()) == []


def test_query_and_dsep_write_dash_o(v_model, tmp_path, capsys):
    for argv in (["query", v_model, "--evidence", "v=yes"], ["dsep", v_model, "u", "w"]):
        code, printed, err = _run(capsys, *argv)
        out = tmp_path / "r.json"
        code, stdout, err = _run(capsys, *argv, "-o", out)
        assert code == 0, err
        assert json.loads(stdout) == {"output": str(out)}
        assert json.loads(out.read_text(encoding="utf-8")) == json.loads(printed)
