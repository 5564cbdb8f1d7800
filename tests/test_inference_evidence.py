"""Evidence queries and the most probable explanation, checked against pgmpy's variable elimination on its
repository networks and against brute-force enumeration of the joint on small random networks."""

import itertools
import math
import warnings

import helpers_bruteforce as bf
import numpy as np
import pytest

from bnfk_core.errors import ModelError
from bnfk_core.inference.evidence import mpe, query
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import BayesNet

REPOSITORY = ("asia", "cancer", "sachs", "child")


def _pgmpy_network(name):
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return get_example_model(name)


def _random_evidence(model, rng, n_observed):
    picked = rng.choice(model.n_vars, size=n_observed, replace=False)
    return {model.variables[i]: model.states[i][rng.integers(len(model.states[i]))] for i in picked}


def _log_joint(model, assignment):
    row = np.array([[model.states[i].index(str(assignment[v])) for i, v in enumerate(model.variables)]])
    return float(model.complete_log_likelihood(row)[0])


@pytest.fixture(scope="module", params=REPOSITORY)
def repository(request):
    """pgmpy's network with its CPT rows renormalised (some repository CPTs are rounded, so that their rows
    sum to one within 1e-7 only: pgmpy's elimination prunes barren nodes, which then count as summing to one
    where a junction tree sums them out) and the same network here."""
    imported = BayesNet.from_pgmpy(_pgmpy_network(request.param))
    cpts = tuple(t / t.sum(axis=1, keepdims=True) for t in imported.cpts)
    model = BayesNet(imported.dag, imported.states, cpts)
    return model.to_pgmpy(), model


def _possible_evidence(model, rng, n_observed):
    """Random evidence of positive probability (a state drawn from a forward sample)."""
    row = model.sample(1, seed=int(rng.integers(2**31))).codes[0]
    picked = rng.choice(model.n_vars, size=n_observed, replace=False)
    return {model.variables[i]: model.states[i][row[i]] for i in picked}


def test_posteriors_equal_pgmpys_variable_elimination(repository):
    from pgmpy.inference import VariableElimination

    net, model = repository
    ve = VariableElimination(net)
    rng = np.random.default_rng(7)
    for n_observed in (0, 1, 3):
        ev = _possible_evidence(model, rng, n_observed)
        q = query(model, ev)
        assert set(q.posterior) == set(model.variables)
        for v in model.variables:
            if v in ev:
                assert q.posterior[v][ev[v]] == 1.0
                continue
            f = ve.query([v], evidence=ev, show_progress=False)
            for s, p in q.posterior[v].items():
                assert abs(p - f.get_value(**{v: s})) < 1e-9, (v, s, ev)
        if ev:  # P(e) is pgmpy's joint of the evidence variables at the evidence
            joint = ve.query(list(ev), show_progress=False)
            assert abs(math.exp(q.log_evidence) - joint.get_value(**ev)) < 1e-9
        else:
            assert q.log_evidence == pytest.approx(0.0, abs=1e-12)


def test_mpe_reaches_pgmpys_map_assignment(repository):
    from pgmpy.inference import VariableElimination

    net, model = repository
    if model.n_vars > 12:  # pgmpy's map_query over child's 20 nodes takes minutes
        pytest.skip("pgmpy's MAP is too slow on this network")
    ve = VariableElimination(net)
    rng = np.random.default_rng(11)
    for n_observed in (1, 2):
        ev = _possible_evidence(model, rng, n_observed)
        e = mpe(model, ev)
        assert set(e.assignment) == set(model.variables) - set(ev)
        assert e.log_probability == pytest.approx(_log_joint(model, {**e.assignment, **ev}), abs=1e-9)
        theirs = ve.map_query(evidence=ev, show_progress=False)
        assert e.log_probability >= _log_joint(model, {**theirs, **ev}) - 1e-9


def _small_models():
    out = []
    for seed in range(6):
        dag = bf.random_dag(4 + seed % 3, seed=200 + seed)
        cards = np.random.default_rng(seed).integers(2, 4, len(dag.nodes))
        out.append(pytest.param(bf.random_model(dag, cards, seed=seed), id=f"random-{seed}"))
    return out


@pytest.mark.parametrize("model", _small_models())
def test_query_and_mpe_equal_enumeration_on_small_networks(model):
    configs = bf.all_configs(model)
    probs = np.array([bf.joint_prob(model, d) for d in configs])
    rng = np.random.default_rng(3)
    for n_observed in (0, 1, 2):
        ev = _random_evidence(model, rng, n_observed)
        codes = {
            model.variables.index(v): model.states[model.variables.index(v)].index(s) for v, s in ev.items()
        }
        keep = (
            np.all([configs[:, i] == c for i, c in codes.items()], axis=0)
            if codes
            else np.ones(len(configs), bool)
        )
        p_e = probs[keep].sum()
        q = query(model, ev)
        assert q.log_evidence == pytest.approx(math.log(p_e), abs=1e-12)
        for i, v in enumerate(model.variables):
            for k, s in enumerate(model.states[i]):
                want = probs[keep & (configs[:, i] == k)].sum() / p_e
                assert q.posterior[v][s] == pytest.approx(want, abs=1e-12)
        e = mpe(model, ev)
        best = int(np.argmax(np.where(keep, probs, -1.0)))
        assert e.log_probability == pytest.approx(math.log(probs[best]), abs=1e-12)
        # the assignment found is one of the maximisers
        assert _log_joint(model, {**e.assignment, **ev}) == pytest.approx(math.log(probs[best]), abs=1e-12)


def _v_structure():
    """u -> v <- w with u, w fair coins and v = "u or w" (noisy)."""
    dag = DAG(["u", "v", "w"], [("u", "v"), ("w", "v")])
    coin = np.array([[0.5, 0.5]])
    v_given = np.array([[0.95, 0.05], [0.1, 0.9], [0.1, 0.9], [0.02, 0.98]])  # rows: (u, w) in C order
    states = (("no", "yes"),) * 3
    return BayesNet(dag, states, (coin, v_given, coin))


def test_explaining_away_on_a_v_structure():
    model = _v_structure()
    prior = query(model, {}, ["u"]).posterior["u"]["yes"]
    given_v = query(model, {"v": "yes"}, ["u"]).posterior["u"]["yes"]
    given_vw = query(model, {"v": "yes", "w": "yes"}, ["u"]).posterior["u"]["yes"]
    assert prior == pytest.approx(0.5)
    assert given_v > prior  # v = yes raises u ...
    assert given_vw < given_v - 0.1  # ... and w = yes explains v away
    # u and w are independent until v is observed
    assert query(model, {"w": "yes"}, ["u"]).posterior["u"]["yes"] == pytest.approx(prior, abs=1e-12)


def test_targets_restrict_the_posteriors():
    model = _v_structure()
    q = query(model, {"v": "yes"}, ["w"])
    assert list(q.posterior) == ["w"] and q.evidence == {"v": "yes"}


@pytest.mark.parametrize(
    "evidence, culprit",
    [
        ({"x": "yes"}, "'x'"),
        ({"u": "maybe"}, "u=maybe"),
        ({"u": "no", "w": "no", "v": "yes"}, "probability zero"),
    ],
)
def test_bad_evidence_is_one_sentence_naming_it(evidence, culprit):
    dag = DAG(["u", "v", "w"], [("u", "v"), ("w", "v")])
    coin = np.array([[0.5, 0.5]])
    v_is_or = np.array(
        [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]
    )  # v = yes is impossible for u = w = no
    model = BayesNet(dag, (("no", "yes"),) * 3, (coin, v_is_or, coin))
    for run in (lambda: query(model, evidence), lambda: mpe(model, evidence)):
        with pytest.raises(ModelError) as info:
            run()
        assert culprit in str(info.value) and str(info.value).count(". ") == 0


def test_an_unknown_target_is_named():
    with pytest.raises(ModelError, match="'nope'"):
        query(_v_structure(), {}, ["nope"])


def test_mpe_without_evidence_is_the_joint_mode():
    model = _v_structure()
    joint = {
        (a, b, c): bf.joint_prob(model, np.array([a, b, c]))
        for a, b, c in itertools.product(range(2), repeat=3)
    }
    best = max(joint, key=joint.get)
    e = mpe(model)
    assert e.assignment == {v: model.states[i][best[i]] for i, v in enumerate(model.variables)}
    assert e.log_probability == pytest.approx(math.log(joint[best]))


@pytest.mark.parametrize("name", ["child", "insurance", "alarm"])
def test_mpe_on_larger_networks_beats_every_one_node_change_and_every_sample(name):
    """Where pgmpy's MAP is too slow: no assignment one node away is more probable, nor any of 5,000 forward
    samples that agree with the evidence."""
    from bnfk_core.network.textbook import textbook_network

    model = textbook_network(name)
    rng = np.random.default_rng(5)
    ev = _possible_evidence(model, rng, 2)
    e = mpe(model, ev)
    best = {**e.assignment, **ev}
    assert e.log_probability == pytest.approx(_log_joint(model, best), abs=1e-9)
    for v in e.assignment:
        i = model.variables.index(v)
        for s in model.states[i]:
            assert _log_joint(model, {**best, v: s}) <= e.log_probability + 1e-12
    codes = model.sample(5000, seed=9).codes
    keep = np.all(
        [
            codes[:, model.variables.index(v)] == model.states[model.variables.index(v)].index(s)
            for v, s in ev.items()
        ],
        axis=0,
    )
    assert keep.sum() >= 10
    assert model.complete_log_likelihood(codes[keep]).max() <= e.log_probability + 1e-12
