"""The KGV structure score: closed forms for the linear and delta kernels,
the incomplete Cholesky against the full Gram, the MDL local score against an independent Gaussian
computation, weights, the search faces, and the waveform_5000 check."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.errors import StructureError
from bnfk_core.learning.kgv import KGVStatistics, default_parameters, incomplete_cholesky, kgv_statistics
from bnfk_core.learning.scores import LocalScorer, score_dag, scorer_for
from bnfk_core.learning.structure import learn_structure, raw_numbers


def _pair_mi(cols, cards=None, **kw):
    return KGVStatistics(cols, cards, **kw).pairwise()[0, 1]


def test_linear_kernel_is_the_gaussian_mutual_information():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = 0.6 * x + rng.normal(size=400)
    rho = np.corrcoef(x, y)[0, 1]
    mi = _pair_mi([x, y], kernel="linear", kappa=1e-12)
    assert mi == pytest.approx(-0.5 * math.log(1 - rho**2), abs=1e-6)


def test_linear_kernel_with_regularisation_scales_the_correlation():
    """κ > 0: each standardised column's one eigenvalue is N, so ρ = N / (N + Nκ/2) and R_12 = ρ² r."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=300)
    y = x + rng.normal(size=300)
    r, kappa = np.corrcoef(x, y)[0, 1], 0.3
    shrink = 1 / (1 + kappa / 2)
    assert _pair_mi([x, y], kernel="linear", kappa=kappa) == pytest.approx(
        -0.5 * math.log(1 - (shrink**2 * r) ** 2), abs=1e-9
    )


def test_two_categories_give_the_canonical_correlations_of_the_contingency_table():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 4, 600)
    b = np.where(rng.random(600) < 0.5, (a + 1) % 3, rng.integers(0, 3, 600))
    P = np.zeros((4, 3))
    np.add.at(P, (a, b), 1.0)
    P /= P.sum()
    pr, pc = P.sum(1), P.sum(0)
    s = np.linalg.svd(P / np.sqrt(np.outer(pr, pc)), compute_uv=False)[1:]  # the first is the trivial 1
    expected = -0.5 * np.log(1 - s**2).sum()
    assert _pair_mi([a, b], [4, 3], kappa=1e-12) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("sigma", [1.0, 0.5])
def test_incomplete_cholesky_against_the_full_gram(sigma):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=250), rng.normal(3, 0.5, size=150)])
    tol = 1e-3 * x.size
    G = incomplete_cholesky(x, sigma, tol)
    K = np.exp(-((x[:, None] - x[None, :]) ** 2) / (2 * sigma**2))
    E = K - G @ G.T
    assert np.trace(E) <= tol
    assert np.abs(E).max() <= tol and np.linalg.eigvalsh(E).min() > -1e-8
    assert G.shape[1] < x.size // 4  # a low rank


def _gauss_mi(C, child, parents):
    fam = [child, *parents]
    return -0.5 * (
        np.linalg.slogdet(C[np.ix_(fam, fam)])[1] - np.linalg.slogdet(C[np.ix_(parents, parents)])[1]
    )


def test_local_score_is_the_mdl_score_of_eq_4():
    """Linear kernel, κ → 0: N·I(x_i, x_π) − (log N / 2)·d_i·Σ_π d_j with Gaussian MI and d = 1."""
    rng = np.random.default_rng(4)
    n = 500
    X = rng.normal(size=(n, 4))
    X[:, 1] += X[:, 0]
    X[:, 2] += 0.5 * X[:, 0] - X[:, 1]
    X[:, 3] += 0.2 * X[:, 2]
    stats = KGVStatistics([X[:, j] for j in range(4)], kernel="linear", kappa=1e-12)
    C = np.corrcoef(X.T)
    for child, parents in [(2, [0]), (2, [0, 1]), (3, [0, 1, 2]), (0, [3])]:
        expected = n * _gauss_mi(C, child, parents) - 0.5 * math.log(n) * len(parents)
        assert stats.local_score(child, parents) == pytest.approx(expected, rel=1e-6, abs=1e-6)
    assert stats.local_score(1, []) == 0.0


def test_effective_dimension_of_a_category_is_its_levels_minus_one_as_kappa_vanishes():
    rng = np.random.default_rng(5)
    stats = KGVStatistics([rng.integers(0, 5, 200), rng.normal(size=200)], [5, 0], kappa=1e-9)
    assert stats.d[0] == pytest.approx(4.0, abs=1e-5)
    assert stats.ranks[1] > 1  # the Gaussian kernel's feature space


def test_row_weights_equal_the_expanded_rows():
    rng = np.random.default_rng(6)
    codes = rng.integers(0, 3, size=(40, 3)).astype(np.int32)
    codes[:, 1] = np.where(rng.random(40) < 0.7, codes[:, 0], codes[:, 1])
    uniq, counts = np.unique(codes, axis=0, return_counts=True)
    full = scorer_for(codes, [3, 3, 3], "kgv")
    weighted = scorer_for(uniq, [3, 3, 3], "kgv", weights=counts)
    for fam in [(1, (0,)), (2, (0, 1)), (0, (2,))]:
        assert weighted(*fam) == pytest.approx(full(*fam), rel=1e-9, abs=1e-9)


def test_defaults_and_bad_options():
    assert default_parameters(999) == (2e-2, 1.0) and default_parameters(1000) == (2e-3, 0.5)
    codes = np.array([[0, 1], [1, 0], [1, 1]])
    with pytest.raises(StructureError, match="option .kernel. must be one of .gaussian., .linear."):
        scorer_for(codes, [2, 2], "kgv", options={"kernel": "rbf"})
    with pytest.raises(StructureError, match="option .kappa. must be a number > 0"):
        scorer_for(codes, [2, 2], "kgv", options={"kappa": 0.0})
    with pytest.raises(StructureError, match="scorer_for"):
        LocalScorer(codes, [2, 2], "kgv")


def _mixed(n=300, seed=7):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    x = np.sin(a * 2.0) + 0.3 * rng.normal(size=n)  # a number driven by a category
    y = x**2 + 0.2 * rng.normal(size=n)  # a non-linear function of it
    b = (y > np.median(y)).astype(int) ^ (rng.random(n) < 0.1)
    edges = lambda v: np.quantile(v, [0.25, 0.5, 0.75])  # noqa: E731
    codes = np.column_stack([a, np.searchsorted(edges(x), x), np.searchsorted(edges(y), y), b]).astype(
        np.int32
    )
    data = from_codes(
        codes, ["a", "x", "y", "b"], [("0", "1", "2"), tuple("pqrs"), tuple("pqrs"), ("0", "1")]
    )
    from dataclasses import replace

    return replace(data, numbers={"x": x, "y": y})


def test_exact_search_is_the_best_of_all_dags():
    data = _mixed()
    res = learn_structure(data, "exact", score="kgv")
    scorer = scorer_for(data.codes, data.cardinalities, "kgv", numbers=raw_numbers(data))
    best = -np.inf
    n = 4
    pairs = list(itertools.combinations(range(n), 2))
    for states in itertools.product((0, 1, 2), repeat=len(pairs)):  # no arc, i -> j, j -> i
        parents = [[] for _ in range(n)]
        for (i, j), s in zip(pairs, states):
            if s == 1:
                parents[j].append(i)
            elif s == 2:
                parents[i].append(j)
        if _acyclic(parents):
            best = max(best, scorer.total(parents))
    assert res.score == pytest.approx(best, abs=1e-9)
    assert res.searched_raw == ["x", "y"] and res.dag.n_arcs >= 3


def _acyclic(parents) -> bool:
    seen, done = set(), set()

    def visit(v):
        if v in done:
            return True
        if v in seen:
            return False
        seen.add(v)
        ok = all(visit(p) for p in parents[v])
        done.add(v)
        return ok

    return all(visit(v) for v in range(len(parents)))


def test_bin_numbers_option_scores_the_bins():
    data = _mixed()
    raw = learn_structure(data, "hc", score="kgv")
    binned = learn_structure(data, "hc", score="kgv", score_options={"bin_numbers": True})
    assert binned.searched_raw == [] and raw.searched_raw == ["x", "y"]
    assert binned.score == pytest.approx(score_dag(data.codes, data.cardinalities, binned.dag, "kgv"))
    assert raw.score == pytest.approx(
        score_dag(data.codes, data.cardinalities, raw.dag, "kgv", numbers=raw_numbers(data))
    )


def test_waveform_noise_columns_stay_apart_from_the_class(sample_path):
    """Bach & Jordan's score on Breiman's waveforms with the 40 numbers unbinned: the class's strongest KGV
    dependences are wave columns (x7, x15, x16 ≈ 0.25–0.28), the 19 noise columns x22–x40 carry ≤ 0.005
    and no arc joins them to the class."""
    data = load_csv(sample_path("waveform_5000"), class_column="class")
    stats, _ = kgv_statistics(data.codes, data.cardinalities, numbers=raw_numbers(data))
    M = stats.pairwise()
    c = data.index("class")
    noise = [data.index(f"x{k}") for k in range(22, 41)]
    top = [data.variables[j] for j in np.argsort(-M[c])[:3]]
    assert set(top) == {"x7", "x15", "x16"}
    assert 0.24 <= M[c, data.index("x16")] and M[c, data.index("x7")] <= 0.3
    assert M[c, noise].max() < 0.005
    dag = learn_structure(data, "hc", score="kgv").dag
    near = set(dag.parents("class")) | set(dag.children("class"))
    assert near and all(int(v[1:]) <= 21 for v in near)


def test_exact_search_bound_prunes_without_changing_the_optimum():
    """The bound N·I(x_i, x_others) − (log N / 2)·d_i·d_π prunes parent sets; the optimum is the unpruned
    one."""
    from bnfk_core.learning.exact import exact_search

    rng = np.random.default_rng(9)
    n, d = 400, 7
    X = rng.normal(size=(n, d))
    for j in range(1, d):
        X[:, j] += 0.8 * X[:, j - 1]
    codes = np.zeros((n, d), dtype=np.int32)
    scorer = scorer_for(codes, [1] * d, "kgv", numbers={j: X[:, j] for j in range(d)})
    pruned_parents, stats = exact_search(scorer)
    full_parents, full = exact_search(scorer, prune=False)
    assert stats["pruned"] > 0 and stats["scored"] < full["scored"]
    assert stats["optimum"] == pytest.approx(full["optimum"], abs=1e-9)
    assert scorer.total(pruned_parents) == pytest.approx(full["optimum"], abs=1e-9)
