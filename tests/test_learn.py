"""Structure learning: presets, Chow–Liu / TAN / KDB properties, exact search vs brute force,
hill climbing on data sampled from pgmpy's bundled asia and sachs networks."""

import itertools
import warnings

import numpy as np
import pytest

from bnfk_core.data.table import from_codes
from bnfk_core.errors import StructureError
from bnfk_core.learning.exact import exact_search
from bnfk_core.learning.scores import LocalScorer
from bnfk_core.learning.structure import learn_structure
from bnfk_core.network.dag import DAG, structural_hamming_distance
from bnfk_core.registry import LEARNERS as METHODS


# ---------------------------------------------------------------- data helpers
def sample_network(name, n_rows, seed=0):
    """Rows sampled from a network bundled with pgmpy (no network access) and its true DAG."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.utils import get_example_model

        model = get_example_model(name)
        frame = model.simulate(n_rows, seed=seed, show_progress=False)
    variables = sorted(model.nodes())
    states = [list(model.states[v]) for v in variables]
    codes = np.column_stack(
        [
            frame[v].astype(str).map({s: k for k, s in enumerate(states[i])}).to_numpy()
            for i, v in enumerate(variables)
        ]
    ).astype(np.int32)
    data = from_codes(codes, variables, states, source=name)
    return data, DAG(variables, list(model.edges()))


def synthetic(n_rows=600, n_vars=6, seed=0, class_column=True, missing=0.0):
    """A random chain-ish network: column i copies a random earlier column with prob 0.7."""
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 4, n_vars)
    x = np.empty((n_rows, n_vars), dtype=np.int32)
    x[:, 0] = rng.integers(0, cards[0], n_rows)
    for i in range(1, n_vars):
        src = x[:, rng.integers(0, i)]
        x[:, i] = np.where(rng.random(n_rows) < 0.7, src % cards[i], rng.integers(0, cards[i], n_rows))
    if missing:
        x[rng.random(x.shape) < missing] = -1
    names = [f"v{i}" for i in range(n_vars)]
    states = [[str(s) for s in range(r)] for r in cards]
    return from_codes(x, names, states, names[0] if class_column else None, "synthetic")


def all_dags(n):
    pairs = list(itertools.combinations(range(n), 2))
    for st in itertools.product((0, 1, 2), repeat=len(pairs)):
        parents = [[] for _ in range(n)]
        for (u, v), s in zip(pairs, st):
            if s == 1:
                parents[v].append(u)
            elif s == 2:
                parents[u].append(v)
        names = [str(i) for i in range(n)]
        try:
            DAG(names, [(str(p), str(c)) for c, ps in enumerate(parents) for p in ps])
        except StructureError:
            continue
        yield [tuple(sorted(p)) for p in parents]


# ---------------------------------------------------------------- presets and errors
def test_empty_and_naive_bayes():
    d = synthetic()
    r = learn_structure(d, "empty")
    assert r.dag.n_arcs == 0 and r.dag.nodes == d.variables and r.n_rows_used == 600
    nb = learn_structure(d, "naive-bayes")
    assert nb.dag.arcs == {("v0", v) for v in d.variables[1:]}
    assert nb.score > r.score  # the data depend on v0
    assert learn_structure(d, "naive-bayes", class_column="v3").dag.children("v3") == tuple(
        v for v in d.variables if v != "v3"
    )


def test_errors_name_the_culprit():
    d = synthetic(class_column=False)
    with pytest.raises(StructureError, match="Unknown structure-learning method 'magic'.*hc.*exact"):
        learn_structure(d, "magic")
    with pytest.raises(StructureError, match="Unknown score 'mdl'.*qnml"):
        learn_structure(d, "hc", score="mdl")
    with pytest.raises(StructureError, match="'tan' needs a class column"):
        learn_structure(d, "tan")
    with pytest.raises(StructureError, match="'nope'"):
        learn_structure(d, "kdb", class_column="nope")
    wide = from_codes(np.zeros((5, 21), dtype=int), [f"x{i}" for i in range(21)], [["a"]] * 21)
    with pytest.raises(StructureError, match="at most 20 variables"):
        learn_structure(wide, "exact")


def test_complete_rows_note_and_progress():
    d = synthetic(missing=0.03)
    calls = []
    r = learn_structure(d, "hc", progress=lambda f, m: calls.append((f, m)))
    n_complete = int(d.complete_rows().sum())
    assert r.n_rows_used == n_complete < d.n_rows
    assert f"{n_complete} complete rows of {d.n_rows}" in r.notes[0]
    assert calls and calls[-1][0] == 1.0 and all(0 <= f <= 1 for f, _ in calls)
    assert r.score == pytest.approx(
        LocalScorer(d.codes, d.cardinalities, "bic").total(r.dag.parent_indices())
    )


def test_every_method_runs_and_is_deterministic():
    d = synthetic(400, 6, seed=4)
    for m in METHODS:
        a = learn_structure(d, m, score="bic", max_parents=2, seed=7)
        b = learn_structure(d, m, score="bic", max_parents=2, seed=7)
        assert a.dag == b.dag and a.score == b.score, m
        assert a.method == m and a.score_name == "bic" and a.seconds >= 0


def test_hc_restarts_keep_the_best_climb():
    d = synthetic(400, 8, seed=9)
    single = [learn_structure(d, "hc-greedy", seed=s, restarts=0).score for s in range(3)]
    best = learn_structure(d, "hc-greedy", seed=0, restarts=2)
    assert best.score == pytest.approx(max(single)) and "best of 3 climbs" in best.notes[-1]
    assert max(len(p) for p in learn_structure(d, "hc", max_parents=1).dag.parent_indices()) <= 1


# ---------------------------------------------------------------- tree, TAN, KDB
def test_chow_liu_is_a_tree_rooted_at_class_or_first():
    d = synthetic(500, 7, seed=1, class_column=False)
    r = learn_structure(d, "tree")
    assert r.dag.n_arcs == 6 and all(len(p) <= 1 for p in r.dag.parent_indices())
    assert r.dag.parents("v0") == ()
    r2 = learn_structure(d, "tree", class_column="v4")
    assert r2.dag.parents("v4") == () and r2.dag.n_arcs == 6
    # maximum MI tree: at least as good a log-likelihood as naive-Bayes-shaped star at v0
    star = DAG(d.variables, [("v0", v) for v in d.variables[1:]])
    sc = LocalScorer(d.codes, d.cardinalities, "bic")
    ll = LocalScorer(d.codes, d.cardinalities, "loglik")
    assert ll.total(r.dag.parent_indices()) >= ll.total(star.parent_indices()) - 1e-9
    assert sc.total(r.dag.parent_indices()) == pytest.approx(r.score)


def test_tan_structure():
    d = synthetic(500, 7, seed=2)
    g = learn_structure(d, "tan").dag
    feats = d.variables[1:]
    assert g.parents("v0") == ()
    assert all("v0" in g.parents(f) for f in feats)
    feature_parents = [[p for p in g.parents(f) if p != "v0"] for f in feats]
    assert all(len(p) <= 1 for p in feature_parents)
    assert sum(len(p) for p in feature_parents) == len(feats) - 1  # a spanning tree over features
    assert sum(1 for p in feature_parents if not p) == 1  # exactly one root


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_kdb_structure(k):
    d = synthetic(500, 8, seed=3)
    g = learn_structure(d, "kdb", k=k).dag
    assert g.parents("v0") == ()
    for f in d.variables[1:]:
        ps = g.parents(f)
        assert "v0" in ps and len(ps) - 1 <= k
    if k == 0:
        assert g == learn_structure(d, "naive-bayes").dag


# ---------------------------------------------------------------- exact search
@pytest.mark.parametrize("score", ["bic", "k2", "bdeu", "qnml", "aic"])
def test_exact_equals_brute_force_over_all_543_dags(score):
    d = synthetic(300, 4, seed=5, class_column=False)
    sc = LocalScorer(d.codes, d.cardinalities, score, ess=2.0)
    scores = [sc.total(ps) for ps in all_dags(4)]
    assert len(scores) == 543
    r = learn_structure(d, "exact", score=score, ess=2.0)
    assert r.score == pytest.approx(max(scores), abs=1e-9)


def test_exact_respects_max_parents_and_beats_hc():
    d = synthetic(300, 4, seed=6, class_column=False)
    sc = LocalScorer(d.codes, d.cardinalities, "bic")
    best1 = max(sc.total(ps) for ps in all_dags(4) if all(len(p) <= 1 for p in ps))
    r = learn_structure(d, "exact", max_parents=1)
    assert r.score == pytest.approx(best1) and max(len(p) for p in r.dag.parent_indices()) <= 1
    d8 = synthetic(500, 8, seed=7)
    assert learn_structure(d8, "exact").score >= learn_structure(d8, "hc").score - 1e-9


def test_exact_pruning_does_not_change_the_optimum():
    d = synthetic(200, 7, seed=8, class_column=False)
    for score in ("bic", "qnml"):
        sc = LocalScorer(d.codes, d.cardinalities, score)
        parents, stats = exact_search(sc)
        parents_ref, stats_ref = exact_search(sc, prune=False)
        assert stats["pruned"] > 0 and stats_ref["pruned"] == 0
        assert sc.total(parents) == pytest.approx(sc.total(parents_ref), abs=1e-9)


# ---------------------------------------------------------------- hill climbing on known networks
@pytest.mark.parametrize("name, bound", [("asia", 3), ("sachs", 3)])
def test_hc_bic_recovers_known_network(name, bound):
    data, truth = sample_network(name, 10_000, seed=0)
    r = learn_structure(data, "hc", score="bic")
    shd = structural_hamming_distance(r.dag, truth)
    print(
        f"\nHC-BIC on {name} (10,000 rows): SHD between CPDAGs = {shd}, {r.dag.n_arcs} arcs "
        f"(truth {truth.n_arcs}), {r.seconds:.2f} s"
    )
    assert shd <= bound
    sc = LocalScorer(data.codes, data.cardinalities, "bic")
    assert r.score >= sc.total(DAG(data.variables).parent_indices())
