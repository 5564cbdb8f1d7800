"""A letter-like random network: 17 variables, 16 with 4 states and one with 26, <= 2 parents each."""
import numpy as np

from bnfk_core.dag import DAG
from bnfk_core.model import BayesNet


def letter_like_model(seed: int = 0, max_parents: int = 2) -> BayesNet:
    rng = np.random.default_rng(seed)
    nodes = ["class"] + [f"x{i}" for i in range(1, 17)]
    cards = np.array([26] + [4] * 16)
    arcs = []
    for i in range(1, 17):
        k = min(i, max_parents)
        for p in rng.choice(i, size=k, replace=False):
            arcs.append((nodes[p], nodes[i]))
    dag = DAG(nodes, arcs)
    cpts = []
    for i in range(17):
        ps = dag.parent_indices()[i]
        q = int(np.prod(cards[list(ps)])) if ps else 1
        cpts.append(rng.dirichlet(np.full(cards[i], 0.7), size=q))
    states = tuple(tuple(f"s{k}" for k in range(c)) for c in cards)
    return BayesNet(dag, states, tuple(cpts))
