"""A learner is one registration: a toy method registered through ``LEARNERS`` alone is learned by
``learn_structure``, offered and run by the CLI, and offered and run by the Structure page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bnfk_core import registry
from bnfk_core.cli import build_parser, main
from bnfk_core.data.table import load_csv
from bnfk_core.learning.scores import score_dag
from bnfk_core.learning.structure import learn_structure
from bnfk_core.network.dag import DAG

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
TOY = "toy-chain"


def _chain(scorer, task):
    """Every column's parent is the column before it (a chain in column order)."""
    task.notes.append("toy chain in column order")
    return [()] + [(i - 1,) for i in range(1, len(task.variables))]


@pytest.fixture
def toy_learner():
    registry.LEARNERS.register(
        registry.LearnerSpec(
            TOY, "Toy chain (column order)", learn=_chain, description="for the registry test"
        )
    )
    yield TOY
    registry.LEARNERS.unregister(TOY)


def _feats():
    return (
        load_csv(HV, class_column="class", missing_policy="category")
        .without_class()
        .select(
            [
                "handicapped-infants",
                "water-project-cost-sharing",
                "adoption-of-the-budget-resolution",
                "physician-fee-freeze",
            ]
        )
    )


def test_registered_learner_is_learned_and_scored(toy_learner):
    feats = _feats()
    res = learn_structure(feats, toy_learner, score="bic")
    v = list(feats.variables)
    want = DAG(v, [(v[i - 1], v[i]) for i in range(1, len(v))])
    assert sorted(res.dag.arcs) == sorted(want.arcs)
    assert res.method == toy_learner and "toy chain in column order" in res.notes
    # the reported score is the BIC of that DAG computed on its own
    assert res.score == pytest.approx(score_dag(feats.codes, feats.cardinalities, want, "bic"), rel=1e-12)
    registry.LEARNERS.unregister(toy_learner)
    with pytest.raises(Exception, match="Unknown structure-learning method 'toy-chain'"):
        learn_structure(feats, toy_learner)


def test_registered_learner_reaches_the_cli(toy_learner, tmp_path, capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    learn = sub.choices["learn"]
    assert toy_learner in next(a for a in learn._actions if a.dest == "structure").choices
    cols = (
        "handicapped-infants,water-project-cost-sharing,adoption-of-the-budget-resolution,"
        "physician-fee-freeze"
    )
    out = tmp_path / "m.json"
    drop = [c for c in load_csv(HV).variables if c not in cols.split(",")]
    code = main(
        [
            "learn",
            HV,
            "--structure",
            toy_learner,
            "--missing-policy",
            "category",
            "--drop-columns",
            ",".join(drop),
            "-o",
            str(out),
        ]
    )
    stdout, err = capsys.readouterr()
    assert code == 0, err
    got = json.loads(stdout)
    v = cols.split(",")
    assert sorted(map(tuple, got["arcs"])) == sorted((v[i - 1], v[i]) for i in range(1, len(v)))


def test_registered_learner_reaches_the_structure_page(toy_learner):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/structure.py").run()
    box = at.selectbox(key="w_learn_method")
    assert box.options[-1] == "Toy chain (column order)"
    box.set_value(toy_learner).run()
    next(b for b in at.button if b.label == "Learn structure").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    s = at.session_state["structure"]
    v = s["dag"]["nodes"]
    assert s["learned_label"] == "Toy chain"
    assert sorted(map(tuple, s["dag"]["arcs"])) == sorted((v[i - 1], v[i]) for i in range(1, len(v)))
