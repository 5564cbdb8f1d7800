"""The search budget of ``hc`` (``budget``: the most family scores it computes): refused in one sentence when
bad or given to a learner without one, it bounds the family scores the search computes, one seed and budget
give one DAG, and the result is never below the greedy climb that always runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bnfk_core.cli import main
from bnfk_core.data.table import load_csv
from bnfk_core.errors import StructureError
from bnfk_core.learning.hill_climb import hill_climb
from bnfk_core.learning.recipe import Recipe, learn_recipe
from bnfk_core.learning.scores import LocalScorer
from bnfk_core.learning.structure import learn_structure

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def soybean():
    return load_csv(ROOT / "sample_data" / "soybean_large.csv", class_column="class").without_class()


@pytest.mark.parametrize("bad", [0, -3, 2.5, "many", True])
def test_a_bad_budget_is_refused_naming_the_option(soybean, bad):
    with pytest.raises(StructureError, match="'budget'") as err:
        learn_structure(soybean, "hc", budget=bad)
    assert str(err.value).count(".") <= 2


def test_a_budget_for_a_learner_without_one_is_refused(soybean):
    for call in (
        lambda: learn_structure(soybean, "tree", budget=100),
        lambda: Recipe(structure="hc-greedy", budget=100).check(),
    ):
        with pytest.raises(StructureError, match="budget is an option of hc"):
            call()


def test_the_cli_refuses_a_bad_budget(tmp_path, capsys):
    args = [
        "learn",
        str(ROOT / "sample_data" / "zoo.csv"),
        "--structure",
        "hc",
        "-o",
        str(tmp_path / "m.json"),
    ]
    assert main(args + ["--budget", "0"]) == 2
    assert "--budget" in capsys.readouterr().err
    assert main(args[:3] + ["tree"] + args[4:] + ["--budget", "50", "--quiet"]) == 2
    assert "error: A search budget is an option of hc" in capsys.readouterr().err


def test_the_budget_bounds_the_scores_computed(soybean):
    # one greedy climb from the empty graph, on a scorer of its own: the most a started climb can add beyond
    # the budget (the first greedy climb and the final climb run whole)
    alone = LocalScorer(soybean.codes, soybean.cardinalities, "bic")
    hill_climb(alone, soybean.variables, seed=0)
    climb = len(alone.cache)
    free = LocalScorer(soybean.codes, soybean.cardinalities, "bic")
    learn_structure(soybean, "hc", scorer=free, seed=0)
    budget = 500  # with the two whole climbs, still below what the search computes without one
    assert len(free.cache) > budget + 2 * climb
    bound = LocalScorer(soybean.codes, soybean.cardinalities, "bic")
    res = learn_structure(soybean, "hc", scorer=bound, seed=0, budget=budget)
    assert len(bound.cache) <= budget + 2 * climb
    assert any(f"within the budget of {budget:,}" in n for n in res.notes)


def test_one_seed_and_budget_give_one_dag_never_below_the_first_greedy_climb(soybean):
    runs = [learn_structure(soybean, "hc", seed=3, budget=4000) for _ in range(2)]
    assert runs[0].dag.sorted_arcs() == runs[1].dag.sorted_arcs()
    scorer = LocalScorer(soybean.codes, soybean.cardinalities, "bic")
    greedy = scorer.total(hill_climb(scorer, soybean.variables, seed=3))
    assert runs[0].score >= greedy - 1e-4


def test_the_recipe_carries_the_budget_only_when_set():
    zoo = load_csv(ROOT / "sample_data" / "zoo.csv")  # complete: the recipe's search is hc itself
    assert "budget" not in Recipe(structure="hc").to_dict()
    learned = learn_recipe(zoo, Recipe(structure="hc", budget=300))
    assert learned.recipe.to_dict()["budget"] == 300
    assert json.loads(json.dumps(learned.model.fit_info["recipe"]))["budget"] == 300
    assert any("within the budget of 300" in n for n in learned.notes)
    again = learn_structure(zoo, "hc", budget=300)
    assert learned.dag.sorted_arcs() == again.dag.sorted_arcs()
