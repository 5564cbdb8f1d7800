"""Independent brute-force reference computations for the Fisher-kernel tests.

Nothing here calls bnfk_core's inference or kernel code: the joint distribution is
enumerated configuration by configuration from the CPT arrays, the score is the
analytic gradient of log P(d; theta) in the free parametrisation (theta_ijk for
k < r_i, theta_ijr = 1 - sum_k theta_ijk), the Fisher information is
sum_d P(d) s(d) s(d)^T over *all* joint configurations d, and
K(x, y) = s(x)^T I^-1 s(y) (Jaakkola & Haussler; paper, eq. (1)).

The only things taken from bnfk_core are the containers (DAG, BayesNet) and the
documented CPT layout: ``cpts[i]`` has shape (q_i, r_i) and the row index is the
C-order ravel of the parent codes with parents in DAG node order.  The ravel is
re-implemented here (``pconf``) rather than calling ``BayesNet.parent_config``.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest

from bnfk_core.network.dag import DAG
from bnfk_core.network.model import BayesNet


# ---------------------------------------------------------------------- model construction
def parents_of(dag: DAG, i: int) -> list[int]:
    """Parent indices of node i in node order (from the arc set, not dag.parent_indices)."""
    v = dag.nodes[i]
    return sorted(dag.nodes.index(u) for u, w in dag.arcs if w == v)


def random_model(dag: DAG, cards, seed: int = 0, conc: float = 1.5, floor: float = 0.03) -> BayesNet:
    """A BayesNet on ``dag`` with random, strictly positive CPTs (Dirichlet rows, floored)."""
    rng = np.random.default_rng(seed)
    cards = [int(c) for c in cards]
    cpts = []
    for i in range(len(dag.nodes)):
        ps = parents_of(dag, i)
        q = int(np.prod([cards[p] for p in ps])) if ps else 1
        t = rng.dirichlet(np.full(cards[i], conc), size=q) + floor
        cpts.append(t / t.sum(axis=1, keepdims=True))
    states = tuple(tuple(f"s{k}" for k in range(c)) for c in cards)
    return BayesNet(dag, states, tuple(cpts))


def random_dag(n: int, seed: int, max_parents: int = 2, p_arc: float = 0.6) -> DAG:
    """A random DAG over x0..x{n-1} (random topological order, at most ``max_parents``)."""
    rng = np.random.default_rng(seed)
    nodes = [f"x{k}" for k in range(n)]
    order = rng.permutation(n)
    arcs = []
    for pos in range(1, n):
        child = order[pos]
        cands = [order[a] for a in range(pos) if rng.random() < p_arc]
        rng.shuffle(cands)
        for par in cands[:max_parents]:
            arcs.append((nodes[par], nodes[child]))
    return DAG(nodes, arcs)


def cards_of(model) -> list[int]:
    return [len(s) for s in model.states]


def pconf(model, i: int, d) -> int:
    """Parent-configuration index of variable i in the full configuration d (C order, node order)."""
    cards = cards_of(model)
    j = 0
    for p in parents_of(model.dag, i):
        j = j * cards[p] + int(d[p])
    return j


# ---------------------------------------------------------------------- enumeration
def all_configs(model) -> np.ndarray:
    """Every joint configuration, as an (prod r_i, n) integer array (C order)."""
    return np.array(list(itertools.product(*[range(c) for c in cards_of(model)])), dtype=np.int64)


def joint_prob(model, d) -> float:
    p = 1.0
    for i in range(model.n_vars):
        p *= float(model.cpts[i][pconf(model, i, d), int(d[i])])
    return p


def joint_table(model):
    """(configs, probabilities) of the full joint, by the chain rule of the network."""
    D = all_configs(model)
    P = np.array([joint_prob(model, d) for d in D])
    return D, P


def marginal_prob(model, assignment: dict, table=None) -> float:
    """P(X_v = c for v, c in assignment) by summing the joint."""
    D, P = table if table is not None else joint_table(model)
    mask = np.ones(len(D), bool)
    for v, c in assignment.items():
        mask &= D[:, v] == c
    return float(P[mask].sum())


def parent_marginal_vector(model, i: int, table=None) -> np.ndarray:
    """P(pi_i = j) for j = 0..q_i-1 by enumeration."""
    D, P = table if table is not None else joint_table(model)
    q = model.cpts[i].shape[0]
    out = np.zeros(q)
    for d, p in zip(D, P):
        out[pconf(model, i, d)] += p
    return out


def completions(model, row):
    """All full configurations agreeing with ``row`` on its observed (>= 0) cells."""
    row = np.asarray(row)
    ranges = [range(c) if row[v] < 0 else [int(row[v])] for v, c in enumerate(cards_of(model))]
    return np.array(list(itertools.product(*ranges)), dtype=np.int64)


def completion_weights(model, row):
    """(completions, P(completion | observed part of row))."""
    C = completions(model, row)
    w = np.array([joint_prob(model, c) for c in C])
    return C, w / w.sum()


# ---------------------------------------------------------------------- Fisher score and information
def param_index(model):
    """Index of each free parameter (i, j, k), k < r_i - 1, and per-variable slices."""
    idx, slices, start = {}, [], 0
    for i, t in enumerate(model.cpts):
        q, r = t.shape
        for j in range(q):
            for k in range(r - 1):
                idx[(i, j, k)] = len(idx)
        slices.append(slice(start, len(idx)))
        start = len(idx)
    return idx, slices


def score(model, d, idx=None) -> np.ndarray:
    """Analytic d/d theta log P(d) in the free parametrisation.

    log P(d) = sum_i log theta_{i, pi_i(d), d_i}; with theta_ijr = 1 - sum_{k<r} theta_ijk,
    d/d theta_ijk = [pi_i(d) = j] ([d_i = k] / theta_ijk - [d_i = r] / theta_ijr).
    """
    if idx is None:
        idx, _ = param_index(model)
    s = np.zeros(len(idx))
    for i, t in enumerate(model.cpts):
        r = t.shape[1]
        j = pconf(model, i, d)
        di = int(d[i])
        for k in range(r - 1):
            val = 0.0
            if di == k:
                val += 1.0 / t[j, k]
            if di == r - 1:
                val -= 1.0 / t[j, r - 1]
            s[idx[(i, j, k)]] = val
    return s


class BruteFisher:
    """s(x)^T I^-1 s(y) with I enumerated over the whole joint."""

    def __init__(self, model):
        self.model = model
        self.idx, self.slices = param_index(model)
        self.D, self.P = joint_table(model)
        S = np.array([score(model, d, self.idx) for d in self.D])
        self.info = S.T @ (self.P[:, None] * S)
        self.info_inv = np.linalg.pinv(self.info, rcond=1e-13) if len(self.idx) else np.zeros((0, 0))

    def expected_score(self, row) -> np.ndarray:
        """s(row) for a complete row, E[s | observed] for a row with missing cells (-1)."""
        C, w = completion_weights(self.model, row)
        return sum(wk * score(self.model, c, self.idx) for c, wk in zip(C, w))

    def kernel(self, x, y) -> float:
        sx, sy = self.expected_score(x), self.expected_score(y)
        return float(sx @ np.linalg.solve(self.info, sy)) if len(sx) else 0.0

    def contributions(self, x, y) -> np.ndarray:
        """Per-variable s_i(x)^T (I^-1)_ii s_i(y) (the Fisher information is block-diagonal)."""
        sx, sy = self.expected_score(x), self.expected_score(y)
        return np.array([sx[sl] @ self.info_inv[sl, sl] @ sy[sl] for sl in self.slices])

    def gram(self, X, Y=None) -> np.ndarray:
        X = np.atleast_2d(X)
        Y = X if Y is None else np.atleast_2d(Y)
        SX = np.array([self.expected_score(x) for x in X])
        SY = SX if Y is X else np.array([self.expected_score(y) for y in Y])
        return SX @ np.linalg.solve(self.info, SY.T)


# ---------------------------------------------------------------------- simple reference kernels
def lemma1(theta, x, y) -> float:
    """Univariate Fisher kernel, paper Lemma 1."""
    return (1.0 - theta[x]) / theta[x] if x == y else -1.0


def hamming_gram(X, Y=None) -> np.ndarray:
    """Fraction of variables on which both rows are observed and equal (thesis eq. 2.17)."""
    X = np.asarray(X)
    Y = X if Y is None else np.asarray(Y)
    n = X.shape[1]
    K = np.zeros((len(X), len(Y)))
    for a in range(len(X)):
        for b in range(len(Y)):
            K[a, b] = sum(1 for v in range(n) if X[a, v] >= 0 and X[a, v] == Y[b, v]) / n
    return K


def scaled_hamming_gram(freqs, X, Y=None) -> np.ndarray:
    """Thesis eq. 3.2 summed over variables: (1 - P(x_i))/P(x_i) on a match, -1 otherwise (complete rows)."""
    X = np.asarray(X)
    Y = X if Y is None else np.asarray(Y)
    K = np.zeros((len(X), len(Y)))
    for a in range(len(X)):
        for b in range(len(Y)):
            K[a, b] = sum(lemma1(freqs[v], X[a, v], Y[b, v]) for v in range(X.shape[1]))
    return K


def random_rows(model, n: int, seed: int, missing: float = 0.0) -> np.ndarray:
    """Uniformly random codes (every configuration is possible under positive CPTs)."""
    rng = np.random.default_rng(seed)
    cards = cards_of(model)
    X = np.column_stack([rng.integers(0, c, n) for c in cards]).astype(np.int64)
    if missing:
        X[rng.random(X.shape) < missing] = -1
    return X


def theorem1_kernel(model, x, y, table=None) -> float:
    """Paper Theorem 1 / thesis eq. 3.1 for complete rows, P(pi_i) by enumeration.

    Only the cells the two rows use enter, so this stays defined for models with
    zero-probability cells elsewhere (where s^T I^-1 s cannot be enumerated).
    """
    table = table if table is not None else joint_table(model)
    total = 0.0
    for i, t in enumerate(model.cpts):
        jx, jy = pconf(model, i, x), pconf(model, i, y)
        if jx != jy:
            continue
        P = parent_marginal_vector(model, i, table)[jx]
        total += ((1.0 / t[jx, x[i]] if x[i] == y[i] else 0.0) - 1.0) / P
    return total


# ---------------------------------------------------------------------- gram evaluation paths
PATHS = ("auto", "dense", "scatter")


@contextlib.contextmanager
def forced_path(name: str):
    """Force gram's dense or scatter (pair) evaluation through the cost-model constants."""
    from bnfk_core.kernels import fisher as kernels

    with pytest.MonkeyPatch.context() as mp:
        if name == "dense":
            mp.setattr(kernels, "_T_FLOP", 1e-10)
            mp.setattr(kernels, "_T_PAIR", 1.0)
            mp.setattr(kernels, "_T_GROUP", 1.0)
        elif name == "scatter":
            mp.setattr(kernels, "_T_FLOP", 1.0)
            mp.setattr(kernels, "_T_PAIR", 1e-12)
            mp.setattr(kernels, "_T_GROUP", 0.0)
        elif name != "auto":
            raise ValueError(name)
        yield
