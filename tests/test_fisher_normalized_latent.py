"""The normalised Fisher kernel of a latent class network (a hidden root C -> every observed variable).

Jaakkola & Haussler's Fisher kernel of a generative model with a hidden variable: the score of
log p(x) = log sum_c pi_c prod_i theta_{x_i | c}.  References, independent of the code:

* the score by central finite differences of log p(x_observed) in the square-root coordinates
  eta = 2 sqrt(theta), extended off the spheres by theta = eta^2 / |eta|^2 (so the radial derivative is 0 and
  the gradient is the tangent one), whitened by the complete-data information enumerated over the joint of (C,
  x);
* the power map and the L2 normalisation written out by hand;
* the Gram at alpha = 1 against s(x)^T I^+ s(y) / sqrt(...) with the exact (completion-weighted) scores.
"""

from __future__ import annotations

import itertools

import helpers_bruteforce as bf
import numpy as np
import pytest
from test_fisher_normalized import BruteNormalized, eta_score

from bnfk_core.kernels import fisher_normalized as fn
from bnfk_core.kernels.features import features
from bnfk_core.network.dag import DAG

CARDS = {"c": 3, "a": 2, "b": 3, "d": 2}


def latent_model(seed):
    nodes = list(CARDS)
    return bf.random_model(DAG(nodes, [("c", v) for v in nodes[1:]]), list(CARDS.values()), seed=seed)


def latent_rows(model, n, seed, missing=0.0):
    """Rows with the hidden column always missing (-1) and other cells missing with probability
    ``missing``."""
    X = bf.random_rows(model, n, seed=seed, missing=missing)
    X[:, 0] = -1
    return X


def log_p_observed(model, cpts, row) -> float:
    """log p(x_observed) by summing the joint over the missing cells (the hidden class among them)."""
    cards = bf.cards_of(model)
    total = 0.0
    for d in itertools.product(*[range(r) for r in cards]):
        if any(row[i] >= 0 and row[i] != d[i] for i in range(len(d))):
            continue
        p = 1.0
        for i, t in enumerate(cpts):
            p *= t[bf.pconf(model, i, d), d[i]]
        total += p
    return float(np.log(total))


def fd_score(model, row, h=1e-6) -> np.ndarray:
    """d/d eta log p(x_observed) by central differences, eta_ij -> theta_ij = eta_ij^2 / |eta_ij|^2."""
    etas = [2.0 * np.sqrt(t) for t in model.cpts]
    out = []
    for i, e in enumerate(etas):
        g = np.zeros(e.shape)
        for j, k in np.ndindex(*e.shape):
            vals = []
            for step in (h, -h):
                e2 = [x.copy() for x in etas]
                e2[i][j, k] += step
                cpts = [x**2 / (x**2).sum(axis=1, keepdims=True) for x in e2]
                vals.append(log_p_observed(model, cpts, row))
            g[j, k] = (vals[0] - vals[1]) / (2 * h)
        out.append(g.ravel())
    return np.concatenate(out)


def complete_information_root(model) -> np.ndarray:
    """I^{+1/2} (pseudo-inverse square root) of the complete-data information of (C, x) in eta."""
    D, P = bf.joint_table(model)
    S = np.array([eta_score(model, d) for d in D])
    w, V = np.linalg.eigh(S.T @ (P[:, None] * S))
    keep = w > 1e-10 * w.max()
    return (V[:, keep] / np.sqrt(w[keep])) @ V[:, keep].T


@pytest.mark.parametrize("seed", [0, 1])
def test_score_is_the_finite_difference_gradient_of_log_p_observed(seed):
    m = latent_model(seed)
    X = latent_rows(m, 6, seed, missing=0.3)
    root = complete_information_root(m)
    want = np.array([root @ fd_score(m, x) for x in X])
    np.testing.assert_allclose(features(m, X).toarray(), want, rtol=0, atol=1e-6)
    for alpha in (0.5, 0.25):
        u = np.sign(want) * np.abs(want) ** alpha
        u[np.abs(want) < 1e-7] = 0.0  # exact zeros of the score (finite differences give ~1e-10)
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        np.testing.assert_allclose(fn.normalized_features(m, X, alpha).toarray(), u, rtol=0, atol=1e-6)


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.1])
def test_features_and_gram_match_the_brute_force_on_a_latent_class_network(alpha):
    m = latent_model(3)
    B = BruteNormalized(m)
    X = latent_rows(m, 15, 3, missing=0.25)
    psi = np.array([B.psi(x, alpha) for x in X])
    np.testing.assert_allclose(fn.normalized_features(m, X, alpha).toarray(), psi, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fn.normalized_gram(m, X, alpha=alpha), psi @ psi.T, rtol=0, atol=1e-9)


def test_alpha_one_gram_is_the_cosine_normalised_latent_fisher_kernel():
    m = latent_model(4)
    X = latent_rows(m, 10, 4, missing=0.2)
    D, P = bf.joint_table(m)
    S_all = np.array([eta_score(m, d) for d in D])
    info = S_all.T @ (P[:, None] * S_all)
    S = []
    for x in X:  # the observed-data score: the posterior-weighted scores
        C, w = bf.completion_weights(m, x)
        S.append(sum(wk * eta_score(m, c) for c, wk in zip(C, w)))
    S = np.array(S)
    K = S @ np.linalg.pinv(info, rcond=1e-10) @ S.T
    d = np.sqrt(np.diag(K))
    np.testing.assert_allclose(fn.normalized_gram(m, X, alpha=1.0), K / np.outer(d, d), rtol=0, atol=1e-9)
