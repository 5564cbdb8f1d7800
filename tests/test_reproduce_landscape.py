"""``reproduce landscape``: the paper's set-ups (random ordered network, random ALARM-sized DAGs) and the
curves."""

import networkx as nx
import numpy as np
import pytest

from bnfk_core.learning.scores import LocalScorer, score_dag
from bnfk_core.network.dag import DAG
from bnfk_core.reproduce import experiments as rep
from bnfk_core.reproduce.landscape import bits_scores, fig1_curves, random_dag_bits, random_ordered_network


def test_random_networks_respect_their_order():
    for seed in range(5):
        net = random_ordered_network(seed)
        assert all(int(u[1:]) < int(v[1:]) for u, v in net.dag.arcs)


def test_random_dag_bits_are_dags_and_score_like_score_dag():
    rng = np.random.default_rng(0)
    k = 6
    bits = random_dag_bits(40, k, 0.4, rng)
    codes = rng.integers(0, 3, size=(300, k))
    scorer = LocalScorer(codes, [3] * k, "bdeu")
    names = [f"v{i}" for i in range(k)]
    scores = bits_scores(bits, scorer, k)
    offdiag = [(u, v) for u in range(k) for v in range(k) if u != v]
    for b, s in zip(bits, scores):
        arcs = [(names[u], names[v]) for (u, v), x in zip(offdiag, b) if x]
        g = nx.DiGraph(arcs)
        assert nx.is_directed_acyclic_graph(g)
        assert s == pytest.approx(score_dag(codes, [3] * k, DAG(names, arcs), "bdeu"), rel=1e-12)


def test_fig1_curves_follow_the_paper():
    f1, info = fig1_curves(0, 5, [5, 30, 55])
    by = f1.set_index("observed")
    assert by.loc[5, "order 1"] < min(by.loc[5, "order 2"], by.loc[5, "order 3"])
    assert by.loc[55, "order 3"] < 1e-3 < by.loc[55, "order 2"]  # exact from enough observations
    assert sum(info["walsh energy by degree (share of variance)"][3:]) < 1e-20


def test_experiment_is_registered():
    assert "landscape" in rep.EXPERIMENTS
