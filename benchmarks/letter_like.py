"""Letter-like random networks: 17 variables, 16 with 4 states and one with 26.

``letter_like_model``: the 26-state variable is the root (<= 2 parents each); ``letter_leaf_model``: it is a
leaf with two 4-state parents; ``random_letter_model``: random structures (<= 3 parents, the 26-state
variable anywhere)."""

import numpy as np

from bnfk_core.network.dag import DAG
from bnfk_core.network.model import BayesNet


def _dirichlet_net(nodes, cards, arcs, rng) -> BayesNet:
    """The network of ``arcs`` with states s0.. and CPT rows drawn from Dirichlet(0.7) in variable order."""
    dag = DAG(nodes, arcs)
    cpts = []
    for i in range(len(nodes)):
        ps = dag.parent_indices()[i]
        q = int(np.prod(cards[list(ps)])) if ps else 1
        cpts.append(rng.dirichlet(np.full(cards[i], 0.7), size=q))
    states = tuple(tuple(f"s{k}" for k in range(c)) for c in cards)
    return BayesNet(dag, states, tuple(cpts))


def letter_like_model(seed: int = 0, max_parents: int = 2) -> BayesNet:
    rng = np.random.default_rng(seed)
    nodes = ["class"] + [f"x{i}" for i in range(1, 17)]
    cards = np.array([26] + [4] * 16)
    arcs = []
    for i in range(1, 17):
        k = min(i, max_parents)
        for p in rng.choice(i, size=k, replace=False):
            arcs.append((nodes[p], nodes[i]))
    return _dirichlet_net(nodes, cards, arcs, rng)


def letter_leaf_model(seed: int = 0, max_parents: int = 2) -> BayesNet:
    """The letter-like network with the 26-state variable as a *leaf* with two 4-state parents
    (the same 16 four-state variables, <= ``max_parents`` parents each, drawn first)."""
    rng = np.random.default_rng(seed)
    nodes = [f"x{i}" for i in range(1, 17)] + ["class"]
    cards = np.array([4] * 16 + [26])
    arcs = []
    for i in range(1, 16):
        for p in rng.choice(i, size=min(i, max_parents), replace=False):
            arcs.append((nodes[p], nodes[i]))
    for p in rng.choice(16, size=2, replace=False):
        arcs.append((nodes[p], "class"))
    return _dirichlet_net(nodes, cards, arcs, rng)


def random_letter_model(seed: int, n4: int = 16, max_parents: int = 3) -> BayesNet:
    """A random structure over 16 four-state variables and one 26-state variable placed at a random
    position of a random topological order; each variable gets 0..``max_parents`` earlier parents."""
    rng = np.random.default_rng(seed)
    cards = np.array([4] * n4 + [26])
    n = len(cards)
    order = rng.permutation(n)
    nodes = [f"x{i}" for i in range(1, n4 + 1)] + ["class"]
    arcs = []
    for pos in range(1, n):
        k = int(rng.integers(0, min(pos, max_parents) + 1))
        for p in rng.choice(pos, size=k, replace=False):
            arcs.append((nodes[order[p]], nodes[order[pos]]))
    return _dirichlet_net(nodes, cards, arcs, rng)
