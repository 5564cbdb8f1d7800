"""The one recipe: its checks, its default network, and Theorem 4 under its default CPT estimator."""

import numpy as np
import pytest

from bnfk_core import StructureError, gram, load_csv
from bnfk_core.learning.recipe import DEFAULT_RECIPE, Recipe, learn_recipe
from bnfk_core.network.dag import covered_arcs
from bnfk_core.network.model import fit


@pytest.fixture(scope="module")
def hayes():
    return load_csv("sample_data/hayes_roth.csv", class_column="class")


def test_unknown_names_are_refused_in_one_sentence():
    with pytest.raises(StructureError, match="Unknown structure-learning method 'nope'"):
        Recipe(structure="nope").check()
    with pytest.raises(StructureError, match="pseudo-count"):
        Recipe(pseudo_count=0).check()
    with pytest.raises(StructureError, match="Unknown recipe field 'colour'"):
        Recipe.from_dict({"colour": 1})


def test_round_trip_and_replace():
    r = Recipe(structure="HC", score="BDeu").check()
    assert r.structure == "hc" and r.score == "bdeu"
    assert Recipe.from_dict(r.to_dict()) == r
    assert r.replace(seed=3, score=None).seed == 3 and r.replace(score=None).score == "bdeu"
    assert "CPTs bdeu (a=1)" in DEFAULT_RECIPE.describe()


def test_learned_network_is_the_recipe_applied(hayes):
    out = learn_recipe(hayes)
    feats = hayes.without_class()
    assert out.model.variables == feats.variables and "class" not in out.dag.nodes
    assert out.model.fit_info["recipe"] == DEFAULT_RECIPE.to_dict()
    # no missing cell: the CPTs are the estimator's closed form on the counts
    ref = fit(out.dag, feats, method="bdeu", pseudo_count=1.0)
    for a, b in zip(out.model.cpts, ref.cpts):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_class_node_methods_drop_the_class(hayes):
    out = learn_recipe(hayes, Recipe(structure="tan"))
    assert "class" not in out.dag.nodes


def test_covered_arc_reversal_keeps_the_kernel_under_the_default_estimator(hayes):
    """Paper Theorem 4: equivalent structures fitted by a likelihood-equivalent estimator (BDeu) give one
    kernel; the smoothed (+1) estimator does not keep it (so it is not the default)."""
    feats = hayes.without_class()
    tree = learn_recipe(hayes).dag
    v = feats.variables
    chain = tree.with_arcs([]).with_arcs([(v[0], v[1]), (v[1], v[2]), (v[2], v[3])])
    pairs = [(dag, arc) for dag in (tree, chain) for arc in covered_arcs(dag)]
    assert len(pairs) >= 2
    worst = {"bdeu": 0.0, "smoothed": 0.0}
    for dag, (u, v) in pairs:
        other = dag.reverse_arc(u, v)
        for est in worst:
            K1 = gram(fit(dag, feats, method=est), feats)
            K2 = gram(fit(other, feats, method=est), feats)
            worst[est] = max(worst[est], float(np.abs(K1 - K2).max()))
    assert worst["bdeu"] < 1e-9
    assert worst["smoothed"] > 1e-3


def test_fit_recipe_fits_a_fixed_structure_by_em_over_missing_cells():
    """A structure the recipe did not learn (edited by hand) gets its CPTs as the recipe says: EM over the
    missing cells (the core's em_parameters), the available-case counts only under complete-rows, the closed
    form on a complete table."""
    from bnfk_core.learning.incomplete import em_parameters
    from bnfk_core.learning.recipe import fit_recipe
    from bnfk_core.network.dag import DAG

    feats = load_csv(
        "sample_data/house_votes_84.csv",
        class_column="class",
        missing_policy="missing",
        na_values="default-list",
    ).without_class()
    assert feats.has_missing
    v = feats.variables
    dag = DAG(v, [(v[0], v[1]), (v[1], v[2]), (v[3], v[2])])
    em, available = em_parameters(dag, feats, "bdeu", 1.0), fit(dag, feats, method="bdeu", pseudo_count=1.0)
    got = fit_recipe(dag, feats)
    assert got.fit_info["cpts_by"] == "em"
    assert max(np.abs(a - b).max() for a, b in zip(got.cpts, em.cpts)) <= 1e-9
    assert max(np.abs(a - b).max() for a, b in zip(em.cpts, available.cpts)) > 1e-4  # EM is not the counts
    kept = fit_recipe(dag, feats, Recipe(missing_data="complete-rows"))
    assert kept.fit_info["cpts_by"] == "available-case"
    assert max(np.abs(a - b).max() for a, b in zip(kept.cpts, available.cpts)) <= 1e-12


def test_the_apps_hand_edited_network_on_missing_cells_is_the_recipes_em_fit(monkeypatch):
    """The Structure page on house votes read with real missing cells: start empty, add two arcs by hand; the
    network the page uses (caches.model) has the CPTs of the core's EM for that structure, to 1e-9."""
    from apptest_helpers import assert_clean, page_app

    from bnfk_core.learning.incomplete import em_parameters
    from bnfk_core.network.dag import DAG
    from bnfk_ui.state import caches

    seen = []
    real = caches.model

    def spy(d=None):
        m = real(d)
        seen.append(m)
        return m

    monkeypatch.setattr(caches, "model", spy)
    at = page_app(
        "structure.py", 240, dataset="house_votes_84", class_column="class", missing_policy="missing"
    ).run()
    assert_clean(at)
    next(b for b in at.button if b.label == "Start empty").click().run()
    for u, w in (("crime", "immigration"), ("immigration", "mx-missile")):
        at.selectbox(key="w_add_from").set_value(u).run()
        at.selectbox(key="w_add_to").set_value(w).run()
        next(b for b in at.button if b.label == "Add arc").click().run()
        assert_clean(at)
    dag = DAG.from_dict(at.session_state["structure"]["dag"])
    assert sorted(dag.sorted_arcs()) == [("crime", "immigration"), ("immigration", "mx-missile")]
    page_model = seen[-1]
    assert page_model.dag == dag
    feats = load_csv(
        "sample_data/house_votes_84.csv",
        class_column="class",
        missing_policy="missing",
        na_values="default-list",
    ).without_class()
    ref = em_parameters(dag, feats, at.session_state["param_method"], 1.0)
    assert max(np.abs(a - b).max() for a, b in zip(page_model.cpts, ref.cpts)) <= 1e-9
