"""Score landscapes: DAG counts, scores against scoring from scratch and pgmpy, equivalence classes, the
climb."""

import itertools
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from bnfk_core.data.table import load_csv
from bnfk_core.errors import StructureError
from bnfk_core.learning.exact import exact_search
from bnfk_core.learning.hill_climb import hill_climb
from bnfk_core.learning.landscape import (
    DAG_COUNTS,
    climb_path,
    enumerate_dags,
    equivalence_keys,
    expected_dag_count,
    place_dag,
    score_landscape,
)
from bnfk_core.learning.scores import LocalScorer, score_dag
from bnfk_core.network.dag import DAG, equivalent
from bnfk_core.registry import SCORES

#: Markov equivalence classes of DAGs on k labelled nodes (OEIS A085531)
CLASS_COUNTS = (1, 1, 2, 11, 185, 8782)


@pytest.fixture(scope="module")
def zoo(sample_path):
    return load_csv(sample_path("zoo"))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_dag_and_class_counts(k):
    pm, codes = enumerate_dags(k)
    assert len(codes) == DAG_COUNTS[k] == expected_dag_count(k)
    assert np.all(np.diff(codes) > 0)
    assert len(np.unique(equivalence_keys(pm))) == CLASS_COUNTS[k]


@pytest.mark.parametrize("k", [2, 3])
def test_enumeration_equals_brute_force(k):
    """Every adjacency matrix (2^(k(k-1))) tested for acyclicity by networkx gives the same set of graphs."""
    offdiag = [(u, v) for u in range(k) for v in range(k) if u != v]
    want = set()
    for bits in itertools.product((0, 1), repeat=len(offdiag)):
        arcs = [a for a, b in zip(offdiag, bits) if b]
        g = nx.DiGraph(arcs)
        g.add_nodes_from(range(k))
        if nx.is_directed_acyclic_graph(g):
            want.add(frozenset(arcs))
    pm, _ = enumerate_dags(k)
    got = {frozenset((u, v) for v in range(k) for u in range(k) if row[v] >> u & 1) for row in pm}
    assert got == want


def test_equivalence_keys_agree_with_dag_equivalent():
    pm, _ = enumerate_dags(4)
    keys = equivalence_keys(pm)
    names = list("abcd")
    dags = [
        DAG(names, [(names[u], names[v]) for v in range(4) for u in range(4) if row[v] >> u & 1])
        for row in pm
    ]
    rng = np.random.default_rng(0)
    # random pairs plus pairs drawn within one key (so both answers are tested often)
    pairs_ = [tuple(rng.choice(len(dags), 2, replace=False)) for _ in range(600)]
    for key in rng.choice(np.unique(keys), 60, replace=False):
        members = np.flatnonzero(keys == key)
        if members.size > 1:
            pairs_ += [tuple(rng.choice(members, 2, replace=False))]
    same = 0
    for a, b in pairs_:
        assert (keys[a] == keys[b]) == equivalent(dags[a], dags[b]), (dags[a], dags[b])
        same += keys[a] == keys[b]
    assert same >= 30


@pytest.mark.parametrize("k", [4, 5])
def test_every_score_equals_scoring_from_scratch(zoo, k):
    variables = list(zoo.variables[:k])
    land = score_landscape(zoo, variables, "bic", ess=2.0)
    assert set(land.scores) == set(SCORES)
    cols = [zoo.variables.index(v) for v in variables]
    codes, cards = zoo.codes[:, cols], [int(zoo.cardinalities[c]) for c in cols]
    rng = np.random.default_rng(k)
    for g in rng.choice(land.n_dags, 25, replace=False):
        dag = DAG(variables, land.arcs(g))
        for s in SCORES:
            want = score_dag(codes, cards, dag, s, ess=2.0)
            assert land.scores[s][g] == pytest.approx(want, rel=1e-12, abs=1e-9), (s, dag)


def test_score_equivalent_scores_are_constant_on_classes(zoo):
    land = score_landscape(zoo, list(zoo.variables[:4]), "bic")
    for s in ("bic", "bdeu", "aic"):
        v = land.scores[s]
        spread = pd.Series(v).groupby(land.class_id).agg(lambda x: x.max() - x.min())
        assert spread.max() < 1e-8, s
    # classes are numbered by the rank of their best graph: class 0 holds the best graph
    assert land.class_id[land.ranking()[0]] == 0


@pytest.mark.parametrize("score", ["bic", "k2"])
def test_best_score_equals_pgmpy_exhaustive_search(zoo, score):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.estimators import BIC, K2, ExhaustiveSearch
    variables = ["hair", "milk", "eggs"]
    land = score_landscape(zoo, variables, score)
    cols = [zoo.variables.index(v) for v in variables]
    df = pd.DataFrame(zoo.codes[:, cols], columns=variables).astype("category")
    names = {v: list(range(int(zoo.cardinalities[c]))) for v, c in zip(variables, cols)}
    method = {"bic": BIC, "k2": K2}[score](df, state_names=names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scored = ExhaustiveSearch(df, scoring_method=method).all_scores()
    assert len(scored) == land.n_dags == 25
    assert max(s for s, _ in scored) == pytest.approx(land.values.max(), rel=1e-10)
    assert sorted(s for s, _ in scored) == pytest.approx(np.sort(land.values), rel=1e-10)


def test_climb_path_is_the_hill_climb(zoo):
    variables = ["hair", "feathers", "eggs", "milk", "airborne"]
    land = score_landscape(zoo, variables, "bic")
    path = climb_path(land, zoo, seed=3)
    graphs = path["graphs"]
    assert graphs[0] == land.index_of([()] * 5)
    scorer = LocalScorer(zoo.codes[:, :5], zoo.cardinalities[:5], "bic")
    final = hill_climb(scorer, variables, seed=3)
    assert graphs[-1] == land.index_of(final)
    assert np.all(np.diff(land.values[graphs]) > 0)  # every move gains
    assert len(graphs) == len(path["moves"]) + 1
    # consecutive graphs differ by one arc added, removed or reversed
    bits = land.arc_bits()[graphs].astype(int)
    d = np.abs(np.diff(bits, axis=0)).sum(axis=1)
    assert set(d) <= {1, 2}


@pytest.mark.parametrize("score", ["bic", "bdeu"])
def test_landscape_optimum_equals_exact_search(zoo, score):
    """The best of all 29,281 graphs is the dynamic-programming optimum (an independent search)."""
    variables = ["hair", "feathers", "eggs", "milk", "toothed"]
    land = score_landscape(zoo, variables, score)
    cols = [zoo.variables.index(v) for v in variables]
    parents, stats = exact_search(LocalScorer(zoo.codes[:, cols], zoo.cardinalities[cols], score))
    assert stats["optimum"] == pytest.approx(land.values.max(), rel=1e-12)
    assert land.values[land.index_of(parents)] == pytest.approx(land.values.max(), rel=1e-12)
    assert land.ranks()[place_dag(land, DAG(variables + ["fins"], land.arcs(land.ranking()[0])))] == 1


def test_errors_name_the_culprit(zoo):
    with pytest.raises(StructureError, match="1 to 5"):
        score_landscape(zoo, list(zoo.variables[:6]))
    with pytest.raises(StructureError, match="Unknown variable 'nope'"):
        score_landscape(zoo, ["hair", "nope"])
    with pytest.raises(StructureError, match="once"):
        score_landscape(zoo, ["hair", "hair"])
    with pytest.raises(StructureError, match="Unknown score"):
        score_landscape(zoo, ["hair", "milk"], "nope")
