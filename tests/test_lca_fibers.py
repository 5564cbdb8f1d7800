"""Fibers and identifiability of latent class models (bnfk_core.lca.fibers): the closed-form K = 2 inversion
on exact distributions, the rank diagnostic, Kruskal ranks and the identifiability verdicts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bnfk_core.data.table import load_csv
from bnfk_core.lca import LatentClassModel, LcaError, fit_lca
from bnfk_core.lca.fibers import (
    Moments,
    exact_joint,
    identifiability,
    invert_two_classes,
    kruskal_rank,
    rank_diagnostic,
)
from bnfk_core.lca.report import summary


def _random_model(rng, k, cards):
    w = rng.dirichlet(np.ones(k) * 3)
    profiles = [rng.dirichlet(np.ones(r), size=k) for r in cards]
    return w, profiles


def _lcm(w, profiles):
    names = [f"x{i}" for i in range(len(profiles))]
    states = [tuple(str(s) for s in range(p.shape[1])) for p in profiles]
    return LatentClassModel(tuple(names), tuple(states), np.asarray(w), tuple(profiles), 0.0, 100.0)


@pytest.mark.parametrize(
    "seed,cards", [(0, [2, 2, 2]), (1, [3, 2, 4, 2]), (2, [2, 3, 3, 2, 2]), (3, [4, 4, 3])]
)
def test_two_class_inversion_recovers_the_parameters_up_to_label_swap(seed, cards):
    rng = np.random.default_rng(seed)
    w, profiles = _random_model(rng, 2, cards)
    wh, ph = invert_two_classes(exact_joint(w, profiles))
    best = min(
        max(
            np.abs(wh[list(perm)] - w).max(), *(np.abs(P[list(perm)] - Q).max() for P, Q in zip(ph, profiles))
        )
        for perm in itertools.permutations(range(2))
    )
    assert best < 1e-9


def test_centred_moments_are_sums_over_classes():
    rng = np.random.default_rng(4)
    w, profiles = _random_model(rng, 3, [2, 3, 2])
    mo = Moments.from_joint(exact_joint(w, profiles))
    A = [P - mo.p(i)[None, :] for i, P in enumerate(profiles)]
    np.testing.assert_allclose(mo.q2(0, 1), np.einsum("t,ta,tb->ab", w, A[0], A[1]), atol=1e-14)
    np.testing.assert_allclose(mo.q3(0, 2, 1), np.einsum("t,ta,tb,tc->abc", w, A[0], A[2], A[1]), atol=1e-14)
    np.testing.assert_allclose(w @ A[1], 0, atol=1e-14)
    exact = Moments.from_model(_lcm(w, profiles))
    np.testing.assert_allclose(exact.q3(2, 0, 1), mo.q3(2, 0, 1), atol=1e-14)


def test_inversion_refuses_two_variables_and_one_class():
    rng = np.random.default_rng(0)
    w, profiles = _random_model(rng, 2, [2, 3])
    with pytest.raises(LcaError, match="three variables"):
        invert_two_classes(exact_joint(w, profiles))
    with pytest.raises(LcaError, match="one class"):
        invert_two_classes(exact_joint([1.0], [p[:1] for p in _random_model(rng, 2, [2, 2, 2])[1]]))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_rank_diagnostic_counts_the_classes_of_an_exact_distribution(k):
    rng = np.random.default_rng(10 + k)
    w, profiles = _random_model(rng, k, [3, 3, 3, 3, 3, 3])
    r = rank_diagnostic(exact_joint(w, profiles))
    assert r["classes_supported"] == k and r["max_detectable"] >= k
    assert rank_diagnostic(_lcm(w, profiles))["classes_supported"] == k


def test_rank_diagnostic_on_data_sees_two_classes_in_carcinoma(sample_path):
    d = load_csv(sample_path("carcinoma"))
    r = rank_diagnostic(Moments.from_codes(d.codes, d.cardinalities), n_rows=d.n_rows)
    assert r["classes_supported"] >= 2 and r["singular_values"][0] > r["tol"]


def test_kruskal_rank_by_definition():
    assert kruskal_rank(np.eye(3)) == 3
    rows = np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 0]])  # every 2 independent, the 3 are not
    assert kruskal_rank(rows @ rows.T) == 2
    rows = np.array([[1.0, 0], [2, 0], [0, 1]])  # two rows are parallel
    assert kruskal_rank(rows @ rows.T) == 1


def test_identifiability_verdicts():
    rng = np.random.default_rng(7)
    w, profiles = _random_model(rng, 3, [3, 3, 3, 3, 3])
    v = identifiability(_lcm(w, profiles))
    assert v["identifiable"] is True and v["parameter_sets"] == 6 and v["kruskal"]["holds"]
    w2, p2 = _random_model(rng, 2, [3, 3])
    v = identifiability(_lcm(w2, p2))
    assert v["identifiable"] is False and v["parameter_sets"] == "continuum"
    same = [np.vstack([p[0], p[0]]) for p in p2 + p2]
    assert identifiability(_lcm([0.5, 0.5], same))["identifiable"] is False
    w3, p3 = _random_model(rng, 4, [2, 2, 2])  # 3 + 4*3 = 15 > 7 cells
    assert identifiability(_lcm(w3, p3))["parameter_sets"] == "continuum"
    assert identifiability(_lcm([1.0], [p[:1] for p in p3]))["parameter_sets"] == 1


def test_fitted_carcinoma_models(sample_path):
    d = load_csv(sample_path("carcinoma"))
    v2 = identifiability(fit_lca(d, 2, 10))
    assert v2["identifiable"] is True and v2["parameter_sets"] == 2
    m3 = fit_lca(d, 3, 10)
    s = summary(m3, d)
    assert s["classes"] == 3 and sum(s["class_sizes"]) == 118
    # the seed's conditions on the fitted 3-class model, recomputed here: each of the three blocks of
    # variables {A, B}, {C, D}, {E, F, G} has a 3 x prod(r) matrix of class profiles (row t: the outer product
    # of the block's profiles of class t) of full row rank 3, so its Kruskal rank is 3, 3 + 3 + 3 = 9 >= 2K +
    # 2 = 8: Kruskal's condition holds and the parameters are identified up to the 3! = 6 label swaps.
    names = list(m3.variables)
    v = s["identifiability"]
    assert v["kruskal"]["groups"] == [["A", "B"], ["C", "D"], ["E", "F", "G"]]
    for block in v["kruskal"]["groups"]:
        rows = []
        for t in range(3):
            outer = np.ones(1)
            for name in block:
                outer = np.outer(outer, m3.profiles[names.index(name)][t]).ravel()
            rows.append(outer)
        sv = np.linalg.svd(np.array(rows), compute_uv=False)
        assert sv[-1] > 1e-3 * sv[0]  # full row rank, far from singular
    assert v["kruskal"]["ranks"] == [3, 3, 3] and v["kruskal"]["holds"]
    assert s["identifiable"] is True and v["parameter_sets"] == 6
