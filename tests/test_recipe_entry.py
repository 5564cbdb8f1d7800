"""The one entry point of learning, :func:`bnfk_core.learning.recipe.learn_recipe`, on a table with missing
cells: every missing-data method gives the DAG and the score of the search it stands for (computed here by an
independent call of that search), the numbers the separate learning functions gave before they became
wrappers over it (recorded from them), and a note that says which rows were used."""

import numpy as np
import pytest

from bnfk_core import load_csv
from bnfk_core.analyses.impute.core import learn_model
from bnfk_core.analyses.impute.methods import learn_for_imputation
from bnfk_core.learning.available_case import AvailableCaseScorer
from bnfk_core.learning.incomplete import em_parameters, structural_em
from bnfk_core.learning.recipe import Recipe, learn_recipe
from bnfk_core.learning.structure import learn_structure
from bnfk_core.network.model import fit

#: (structure, missing-data method) -> (arcs, score) that learn_network gave on the table below (bic, bdeu
#: CPTs, seed 0), recorded from it before the learning entry points became one
RECORDED = {
    ("tree", "complete-rows"): (17, -1052.5624743665433),
    ("tree", "available-case"): (17, -2497.4782137394936),
    ("tree", "em"): (17, -2310.3742853387166),
    ("hc", "complete-rows"): (8, -802.2848290426607),
    ("hc", "available-case"): (18, -2143.8355392669423),
    ("hc", "em"): (16, -2054.544934617845),  # structural EM's default round search, greedy climbs
}
#: structural EM with a full hc search in every round (round_search "full", the rounds' former search)
RECORDED_FULL_ROUNDS = (17, -2054.253908634225)


@pytest.fixture(scope="module")
def holed():
    """Lymphography (148 rows, 18 features) with 5 % of its feature cells blanked by a seeded mask: 52
    complete rows."""
    d = load_csv("sample_data/lymphography.csv", class_column="class")
    codes = d.codes.copy()
    feats = [i for i, v in enumerate(d.variables) if v != d.class_column]
    mask = np.random.default_rng(0).random((codes.shape[0], len(feats))) < 0.05
    part = codes[:, feats]
    part[mask] = -1
    codes[:, feats] = part
    return d.with_codes(codes)


def _search(feats, method: str, missing_data: str):
    """The search the missing-data method stands for, called directly: (LearnResult, model or None)."""
    if missing_data == "complete-rows":
        return learn_structure(feats, method, score="bic", k=2, seed=0), None
    if missing_data == "available-case":
        scorer = AvailableCaseScorer(feats.codes, feats.cardinalities, "bic")
        return learn_structure(feats, method, score="bic", k=2, seed=0, scorer=scorer), None
    res, model, _ = structural_em(feats, method, score="bic", params="bdeu", pseudo_count=1.0, k=2, seed=0)
    return res, model


@pytest.mark.parametrize("method,missing_data", sorted(RECORDED))
def test_each_missing_data_method_learns_its_search(holed, method, missing_data):
    learned = learn_recipe(holed, Recipe(structure=method, missing_data=missing_data))
    feats = holed.without_class()
    ref, ref_model = _search(feats, method, missing_data)
    assert learned.dag == ref.dag and learned.result.score == pytest.approx(ref.score, rel=1e-12)
    n_arcs, score = RECORDED[method, missing_data]
    assert learned.dag.n_arcs == n_arcs and learned.result.score == pytest.approx(score, rel=1e-9)
    # the CPTs: available-case counts for complete-rows, EM over the missing cells otherwise
    expected = (
        fit(ref.dag, feats, method="bdeu", pseudo_count=1.0)
        if missing_data == "complete-rows"
        else ref_model
        if ref_model is not None
        else em_parameters(ref.dag, feats, "bdeu", 1.0)
    )
    for a, b in zip(learned.model.cpts, expected.cpts):
        np.testing.assert_allclose(a, b, atol=1e-10)
    assert learned.model.fit_info["recipe"] == learned.recipe.to_dict()


def test_the_note_says_which_rows_were_used(holed):
    em = learn_recipe(holed, Recipe(missing_data="em"))
    assert em.note.startswith("structural EM on all 148 rows")
    rows = learn_recipe(holed, Recipe(missing_data="complete-rows"))
    assert rows.note.startswith("structure learned on 52 complete rows of 148")
    assert int(holed.without_class().complete_rows().sum()) == 52


def test_the_imputers_network_is_the_entry_points_over_every_column(holed):
    """learn_model (the thesis's protocol: structure on the complete rows, CPTs by available-case counts)
    and learn_for_imputation are wrappers: the network over every column, the class a node."""
    model = learn_model(holed, structure="tree")
    ref = learn_structure(holed, "tree", score="qnml", seed=0)
    assert model.dag == ref.dag and "class" in model.dag.nodes
    for a, b in zip(model.cpts, fit(ref.dag, holed, method="cnml").cpts):
        np.testing.assert_allclose(a, b, atol=1e-12)
    # recorded from learn_model before it became a wrapper
    assert sum(float(np.log(c).sum()) for c in model.cpts) == pytest.approx(-658.7908700087041, rel=1e-9)
    res, net = learn_for_imputation(holed, "tree", missing_data="em")
    learned = learn_recipe(holed, Recipe(structure="tree", missing_data="em"), with_class=True)
    assert net.dag == learned.dag and res.score == pytest.approx(-2384.942392286576, rel=1e-9)


def test_full_round_searches_keep_the_former_network(holed):
    """round_search "full" runs hc's whole search in every round, as structural EM did before its rounds
    were bounded: the same network and score as then."""
    res, _, _ = structural_em(
        holed.without_class(),
        "hc",
        score="bic",
        params="bdeu",
        pseudo_count=1.0,
        k=2,
        seed=0,
        round_search="full",
    )
    n_arcs, score = RECORDED_FULL_ROUNDS
    assert res.dag.n_arcs == n_arcs and res.score == pytest.approx(score, rel=1e-9)
