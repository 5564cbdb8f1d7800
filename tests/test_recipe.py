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
    """Paper Theorem 4: equivalent structures fitted by a likelihood-equivalent estimator (BDeu) give one kernel;
    the smoothed (+1) estimator does not keep it (so it is not the default)."""
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
