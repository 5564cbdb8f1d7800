"""pgmpy and networkx both ways (bnfk_core.to_pgmpy / from_pgmpy): every CPD entry read through pgmpy's own
``get_value`` by state names, round trips to 1e-12, and pgmpy's variable elimination equal to bnfk's marginals
and posteriors to 1e-9."""

import itertools
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import bnfk_core
from bnfk_core import from_pgmpy, load_csv, to_pgmpy
from bnfk_core.errors import ModelError, StructureError
from bnfk_core.inference import marginal, posterior
from bnfk_core.learning.recipe import Recipe, learn_recipe
from bnfk_core.network import DAG, from_networkx, to_networkx

pgmpy = pytest.importorskip("pgmpy")
from pgmpy.factors.discrete import TabularCPD  # noqa: E402
from pgmpy.inference import VariableElimination  # noqa: E402
from pgmpy.models import DiscreteBayesianNetwork  # noqa: E402


@pytest.fixture(scope="module")
def learned(sample_path):
    """A network with families of two and more parents over states in numeric (not text) order."""
    data = load_csv(sample_path("car"))  # the class is a node: it has several parents
    model = learn_recipe(data, Recipe(structure="hc", score="bic")).model
    assert max(len(p) for p in model.parents) >= 2
    return model


def quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


def test_every_cpd_entry_is_the_same_by_state_names(learned):
    net = to_pgmpy(learned)
    assert isinstance(net, DiscreteBayesianNetwork)
    assert set(net.edges()) == set(learned.dag.sorted_arcs())
    cards = learned.cardinalities
    for i, v in enumerate(learned.variables):
        cpd = net.get_cpds(v)
        ps = learned.parents[i]
        for combo in itertools.product(*(range(int(cards[p])) for p in ps)):
            j = int(np.ravel_multi_index(combo, [int(cards[p]) for p in ps])) if ps else 0
            for k, s in enumerate(learned.states[i]):
                names = {v: s, **{learned.variables[p]: learned.states[p][c] for p, c in zip(ps, combo)}}
                assert cpd.get_value(**names) == pytest.approx(learned.cpts[i][j, k], abs=1e-15)


def test_round_trip_keeps_every_cpd(learned):
    back = from_pgmpy(to_pgmpy(learned), nodes=learned.variables)
    assert back.dag.sorted_arcs() == learned.dag.sorted_arcs() and back.states == learned.states
    for a, b in zip(back.cpts, learned.cpts):
        assert np.abs(a - b).max() <= 1e-12


def test_a_pgmpy_model_comes_in_with_its_evidence_and_state_orders():
    # evidence listed against node order, states in no sorted order: both are re-indexed, by name
    net = DiscreteBayesianNetwork([("A", "C"), ("B", "C")])
    a = TabularCPD("A", 2, [[0.3], [0.7]], state_names={"A": ["yes", "no"]})
    b = TabularCPD("B", 3, [[0.2], [0.5], [0.3]], state_names={"B": ["z", "x", "y"]})
    values = np.random.default_rng(0).dirichlet(np.ones(2), size=6).T  # (2 states, 3 x 2 configurations)
    c = TabularCPD(
        "C",
        2,
        values,
        evidence=["B", "A"],
        evidence_card=[3, 2],
        state_names={"C": ["hi", "lo"], "B": ["z", "x", "y"], "A": ["yes", "no"]},
    )
    net.add_cpds(a, b, c)
    net.check_model()
    ours = from_pgmpy(net, nodes=["A", "B", "C"])
    k = ours.variables.index("C")
    for sa, sb, sc in itertools.product(["yes", "no"], ["z", "x", "y"], ["hi", "lo"]):
        j = ours.states[0].index(sa) * 3 + ours.states[1].index(sb)  # A slowest (node order)
        assert ours.cpts[k][j, ours.states[2].index(sc)] == pytest.approx(
            c.get_value(A=sa, B=sb, C=sc), abs=1e-15
        )
    back = to_pgmpy(ours)
    for cpd in net.get_cpds():
        other = back.get_cpds(cpd.variable)
        for combo in itertools.product(*(cpd.state_names[x] for x in cpd.variables)):
            names = dict(zip(cpd.variables, combo))
            assert abs(other.get_value(**names) - cpd.get_value(**names)) <= 1e-12


def test_a_bundled_pgmpy_network_round_trips():
    from pgmpy.utils import get_example_model

    net = quiet(get_example_model, "asia")
    ours = from_pgmpy(net)
    back = to_pgmpy(ours)
    for cpd in net.get_cpds():
        other = back.get_cpds(cpd.variable)
        for combo in itertools.product(*(cpd.state_names[x] for x in cpd.variables)):
            names = dict(zip(cpd.variables, combo))
            assert abs(other.get_value(**names) - cpd.get_value(**names)) <= 1e-12


def test_pgmpy_variable_elimination_equals_bnfk_marginals(learned):
    ve = quiet(VariableElimination, to_pgmpy(learned))
    names = learned.variables
    for i, v in enumerate(names):
        f = quiet(ve.query, [v], show_progress=False)
        want = np.array([f.values[f.state_names[v].index(s)] for s in learned.states[i]])
        np.testing.assert_allclose(marginal(learned, [i]), want, atol=1e-9, rtol=0)
    for i, j in [(0, 1), (2, 5), (4, 3)]:
        f = quiet(ve.query, [names[i], names[j]], joint=True, show_progress=False)
        ours = marginal(learned, [i, j])
        for a, b in itertools.product(range(ours.shape[0]), range(ours.shape[1])):
            got = f.get_value(**{names[i]: learned.states[i][a], names[j]: learned.states[j][b]})
            assert abs(got - ours[a, b]) <= 1e-9
    # posteriors of missing cells given the observed ones
    codes = learned.sample(30, seed=4).codes.copy()
    rng = np.random.default_rng(5)
    codes[rng.random(codes.shape) < 0.4] = -1
    post = posterior(learned, codes)
    for v, (rows, probs) in post.items():
        for r, p in list(zip(rows, probs))[:4]:
            ev = {names[u]: learned.states[u][codes[r, u]] for u in range(learned.n_vars) if codes[r, u] >= 0}
            f = quiet(ve.query, [names[v]], evidence=ev, show_progress=False)
            want = [f.values[f.state_names[names[v]].index(s)] for s in learned.states[v]]
            np.testing.assert_allclose(p, want, atol=1e-9, rtol=0)


def test_estimators_and_latent_class_models_go_across(sample_path):
    from bnfk_core.estimators import FisherKernel, LatentClassModel

    frame = pd.read_csv(sample_path("carcinoma"))
    fk = FisherKernel().fit(frame)
    assert set(to_pgmpy(fk).edges()) == set(fk.network_.dag.sorted_arcs())
    lcm = LatentClassModel(2, n_init=3).fit(frame)
    net = to_pgmpy(lcm)
    hidden = lcm.model_.to_bayesnet().fit_info["hidden"]
    assert set(net.successors(hidden)) == set(frame.columns)
    ve = quiet(VariableElimination, net)
    f = quiet(
        ve.query, [hidden], evidence={c: str(frame[c].iloc[0]) for c in frame.columns}, show_progress=False
    )
    np.testing.assert_allclose(f.values, lcm.predict_proba(frame.iloc[:1])[0], atol=1e-9)
    with pytest.raises(ModelError, match="needs a Bayesian network"):
        to_pgmpy("not a network")


def test_networkx_both_ways(learned):
    g = to_networkx(learned)
    assert isinstance(g, nx.DiGraph) and list(g.nodes) == list(learned.variables)
    assert from_networkx(g).sorted_arcs() == learned.dag.sorted_arcs()
    assert to_networkx(learned.dag).edges == g.edges
    assert (
        from_networkx(to_pgmpy(learned), nodes=learned.variables).sorted_arcs() == learned.dag.sorted_arcs()
    )
    with pytest.raises(StructureError, match="cycle"):
        from_networkx(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")]))


def test_on_the_package_face():
    assert bnfk_core.to_pgmpy is to_pgmpy and bnfk_core.from_pgmpy is from_pgmpy
    assert (
        DAG(["a", "b"], [("a", "b")]).sorted_arcs() == from_networkx(nx.DiGraph([("a", "b")])).sorted_arcs()
    )
