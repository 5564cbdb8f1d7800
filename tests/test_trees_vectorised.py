"""The Chow–Liu tree's pairwise mutual information without a Python loop over the pairs: the very numbers of
the pair-by-pair computation (so the same tree, ties included), checked against scikit-learn's mutual
information and networkx's maximum spanning tree."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from sklearn.metrics import mutual_info_score

from bnfk_core.learning import trees
from bnfk_core.learning.scores import LocalScorer


def _pairwise(sc: LocalScorer) -> np.ndarray:
    """The pair-by-pair computation the tree used before (one ``scorer_mutual_information`` call per pair)."""
    n = sc.n_vars
    out = np.zeros((n, n))
    for a in range(n):
        for b in range(a + 1, n):
            out[a, b] = out[b, a] = trees.scorer_mutual_information(sc, a, b)
    return out


def _old_tree(sc: LocalScorer, root: int):
    return trees.parents_from_arcs(
        sc.n_vars,
        trees._max_spanning_tree(
            range(sc.n_vars), lambda a, b: trees.scorer_mutual_information(sc, a, b), root
        ),
    )


def _data(seed: int, rows: int, cols: int, levels: int, missing: float = 0.0):
    rng = np.random.default_rng(seed)
    cards = rng.integers(1, levels + 1, cols)
    codes = (rng.random((rows, cols)) * cards).astype(int)
    codes[:, -1] = codes[:, 0]  # a copy of a column: exact ties
    cards[-1] = cards[0]
    if cols > 3:
        codes[:, -2] = (cards[1] - 1) - codes[:, 1]  # a column with its states renamed
        cards[-2] = cards[1]
    codes[rng.random((rows, cols)) < missing] = -1
    return codes, cards


@pytest.mark.parametrize(
    "seed,rows,cols,levels,weights,block",
    [
        (0, 200, 9, 4, None, 2**22),
        (1, 200, 9, 4, None, 5),
        (2, 37, 12, 6, "int", 2**22),
        (3, 37, 12, 6, "int", 3),
        (4, 80, 8, 5, "float", 2**22),
        (5, 80, 8, 5, "float", 7),
        (6, 6, 10, 60, None, 2**22),
        (7, 6, 10, 60, "int", 4),
        (8, 6, 10, 60, "float", 4),  # tables > max(4N, 1024)
        (9, 1, 4, 3, None, 2**22),
        (10, 300, 2, 2, None, 1),
    ],
)
def test_the_matrix_is_the_pair_by_pair_numbers(seed, rows, cols, levels, weights, block, monkeypatch):
    codes, cards = _data(seed, rows, cols, levels, missing=0.05)
    rng = np.random.default_rng(seed + 100)
    w = None if weights is None else rng.integers(0, 4, rows) if weights == "int" else rng.random(rows) * 2
    sc = LocalScorer(codes, cards, weights=w)
    monkeypatch.setattr(trees, "PAIR_BLOCK", block)
    mi = trees.mutual_information_matrix(sc)
    assert np.array_equal(mi, _pairwise(sc))  # the very same floats
    for root in (0, cols - 1):
        assert trees.chow_liu(sc, root) == _old_tree(sc, root)


def test_against_scikit_learn_and_networkx():
    codes, cards = _data(11, 150, 10, 5, missing=0.1)
    sc = LocalScorer(codes, cards)
    mi = trees.mutual_information_matrix(sc)
    ok = ~(codes < 0).any(axis=1)
    for a in range(10):
        for b in range(a + 1, 10):
            assert mi[a, b] == pytest.approx(mutual_info_score(codes[ok, a], codes[ok, b]), abs=1e-9)
    parents = trees.chow_liu(sc, 0)
    arcs = [(p, c) for c, ps in enumerate(parents) for p in ps]
    assert len(arcs) == 9 and nx.is_tree(nx.Graph(arcs))
    g = nx.Graph()
    g.add_weighted_edges_from((a, b, mi[a, b]) for a in range(10) for b in range(a + 1, 10))
    best = sum(d["weight"] for *_, d in nx.maximum_spanning_tree(g).edges(data=True))
    assert sum(mi[p, c] for p, c in arcs) == pytest.approx(best, abs=1e-9)


def test_weighted_rows_give_the_expanded_tables_numbers():
    codes, cards = _data(12, 60, 7, 4)
    rng = np.random.default_rng(0)
    w = rng.integers(1, 5, 60)
    weighted = trees.mutual_information_matrix(LocalScorer(codes, cards, weights=w))
    expanded = trees.mutual_information_matrix(LocalScorer(np.repeat(codes, w, axis=0), cards))
    assert np.allclose(weighted, expanded, rtol=0, atol=1e-12)


def test_a_wide_table_of_few_rows_is_quick():
    import time

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 12, (20, 600))
    cards = [int(c.max()) + 1 for c in codes.T]
    sc = LocalScorer(codes, cards)
    t0 = time.perf_counter()
    parents = trees.chow_liu(sc, 0)
    assert time.perf_counter() - t0 < 20  # 179,700 pairs; the loop took about 13 s
    assert sum(map(len, parents)) == 599
