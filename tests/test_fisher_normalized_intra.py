"""Intra-normalisation of the normalised Fisher kernel (Arandjelovic & Zisserman 2013, "All about VLAD",
section 3).

Reference: the brute-force psi of tests/test_fisher_normalized.py (the score enumerated over the joint,
whitened by the enumerated information), then the power map, the per-block and the row normalisation written
out by hand, with the blocks read off the documented column layout (variable i, parent configuration j, state
v).
"""

from __future__ import annotations

import helpers_bruteforce as bf
import numpy as np
import pytest
from test_fisher_normalized import MODELS, BruteNormalized, _sample, model_from

from bnfk_core.errors import KernelError
from bnfk_core.kernels import fisher_normalized as fn
from bnfk_core.kernels.normalized_options import INTRA
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit


def brute_blocks(model, intra):
    """(variable, configuration) labels of every column, in the layout offset_i + j r_i + v, as block ids."""
    labels = []
    for i, t in enumerate(model.cpts):
        q, r = t.shape
        for j in range(q):
            for _ in range(r):
                labels.append(0 if intra == "none" else i if intra == "variable" else (i, j))
    ids = {lab: n for n, lab in enumerate(dict.fromkeys(labels))}
    return np.array([ids[lab] for lab in labels])


def brute_intra(B, row, alpha, intra):
    u = np.array([np.sign(z) * abs(z) ** alpha for z in B.phi(row)])
    blocks = brute_blocks(B.model, intra)
    for b in np.unique(blocks):
        n = np.sqrt(np.sum(u[blocks == b] ** 2))
        if n > 0:
            u[blocks == b] /= n
    n = np.sqrt(np.sum(u * u))
    return u / n if n > 0 else u


@pytest.mark.parametrize("case", range(len(MODELS)))
@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.25])
@pytest.mark.parametrize("intra", ["variable", "class-variable"])
def test_intra_features_match_brute_force(case, alpha, intra):
    m = model_from(*MODELS[case], seed=case)
    B = BruteNormalized(m)
    X = np.vstack([bf.all_configs(m), bf.random_rows(m, 12, seed=case, missing=0.35)])
    got = fn.normalized_features(m, X, alpha, intra=intra).toarray()
    want = np.array([brute_intra(B, x, alpha, intra) for x in X])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    # intra-normalisation changes the features where a row has two or more non-zero blocks of unequal norm
    if intra == "variable" and alpha != 1.0:
        assert np.abs(got - fn.normalized_features(m, X, alpha).toarray()).max() > 1e-3


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("intra", INTRA)
def test_intra_psd_unit_diagonal_gram_and_contributions(seed, intra):
    rng = np.random.default_rng(seed)
    m = bf.random_model(bf.random_dag(5, seed), list(rng.integers(2, 4, 5)), seed=seed)
    X = np.vstack([bf.random_rows(m, 30, seed=seed), bf.random_rows(m, 30, seed=seed + 1, missing=0.3)])
    K = fn.normalized_gram(m, X, alpha=0.3, intra=intra)
    P = fn.normalized_features(m, X, 0.3, intra=intra)
    np.testing.assert_allclose(K, (P @ P.T).toarray(), atol=1e-12)
    assert np.array_equal(K, K.T) and np.linalg.eigvalsh(K).min() > -1e-10 and np.abs(K).max() <= 1 + 1e-12
    np.testing.assert_allclose(np.diag(K)[:30], 1.0, atol=1e-12)  # complete rows
    d = np.diag(K)[30:]  # incomplete: 1, or 0 if phi = 0
    assert np.all((np.abs(d - 1) < 1e-12) | (d == 0))
    fk = fn.NormalizedFisherKernel(m, 0.3, intra=intra)
    np.testing.assert_allclose(fk.gram(X), K, atol=1e-12)
    for a, b in [(0, 1), (3, 40), (45, 45)]:
        assert fk.contributions(X[a], X[b]).sum() == pytest.approx(K[a, b], abs=1e-12)


def test_a_zero_block_stays_zero():
    """On the empty network a missing cell's block of E[phi | observed] is exactly 0 (E[[x_i = v]] = theta):
    it stays
    0 (no division by zero, no NaN), the other blocks have equal length and the row has unit length."""
    m = model_from(["a", "b", "c"], [], [3, 2, 4], seed=3)
    X = np.array([[0, -1, 2], [-1, -1, 1], [2, 1, 0], [-1, -1, -1]])
    P = fn.normalized_features(m, X, 0.5, intra="variable").toarray()
    assert np.isfinite(P).all()
    off = [0, 3, 5, 9]
    for r, row in enumerate(X):
        live = [i for i in range(3) if row[i] >= 0]
        for i in range(3):
            n = np.linalg.norm(P[r, off[i] : off[i + 1]])
            assert n == (pytest.approx(1 / np.sqrt(len(live)), abs=1e-12) if i in live else 0.0)
    assert not P[3].any()  # a row of blanks: psi = 0, K(x, x) = 0


def test_latent_class_network_blank_blocks_are_zero_and_class_variable_blocks_unit():
    from bnfk_core.lca.model import fit_lca

    d = fn.blanks_as_missing(_sample().without_class())
    net = fit_lca(d, 3, 5, 0).to_bayesnet(pseudo_count=1.0)
    codes = np.array(d.codes)[:6].copy()
    codes[0, 2] = -1  # a blank in variable 2
    from bnfk_core.data.table import from_codes

    rows = from_codes(codes, d.variables, d.states)
    P = fn.normalized_features(net, rows, 0.25, intra="class-variable").toarray()
    blocks = fn.intra_blocks(net, "class-variable")
    np.testing.assert_array_equal(blocks, brute_blocks(net, "class-variable"))
    vi = list(net.variables).index(d.variables[2])
    cols = fn.intra_blocks(net, "variable") == vi
    assert not P[0, cols].any() and P[1, cols].any()
    for r in range(6):
        norms = [np.linalg.norm(P[r, blocks == b]) for b in np.unique(blocks)]
        live = [n for n in norms if n > 0]
        np.testing.assert_allclose(live, 1 / np.sqrt(len(live)), atol=1e-12)


def test_class_variable_is_variable_on_the_empty_network_and_bad_intra_is_refused():
    m = model_from(["a", "b"], [], [3, 4], seed=1)
    np.testing.assert_array_equal(fn.intra_blocks(m, "class-variable"), fn.intra_blocks(m, "variable"))
    with pytest.raises(KernelError, match="intra must be one of"):
        fn.normalized_features(m, np.array([[0, 1]]), 0.5, intra="per-class")
    with pytest.raises(KernelError, match="'per-class'"):
        fn.NormalizedFisherKernel(m, 0.5, intra="per-class")


def test_the_default_intra_normalises_the_empty_network_part():
    d = _sample().without_class()
    fk = fn.fit_fisher_normalized(d, n_clusters=3)
    assert fk.intra == "none" and fk.beside.intra == fn.DEFAULT_NETWORK["empty_intra"] == "variable"
    empty = fit(DAG(tuple(d.variables)), d, method="bdeu", pseudo_count=5.0)
    B = fn.normalized_features(empty, d, 0.02, intra="variable").toarray()
    np.testing.assert_allclose(fk.beside.features(d).toarray(), B, atol=1e-12)
    w = fn.DEFAULT_NETWORK["empty_weight"]
    K = (1 - w) * fn.normalized_gram(fk.model, fn.blanks_as_missing(d), alpha=0.25) + w * B @ B.T
    np.testing.assert_allclose(fk.gram(d), K, atol=1e-12)
