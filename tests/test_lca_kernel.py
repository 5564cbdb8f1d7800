"""The latent-class Fisher kernel (bnfk_core.kernels.latent_fisher) against a brute-force
sum_t sum_u p(t|x) p(u|y) s(x,t)^T I^-1 s(y,u) with complex-step differentiated complete-data scores and the
exact complete-data information; latent-class clustering through the CLUSTERERS registry."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bnfk_core.analyses.cluster.clustering import run_clustering
from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.kernels.latent_fisher import LCA_FISHER, LatentClassKernel, fit_lca_fisher
from bnfk_core.lca import LatentClassModel
from bnfk_core.registry import CLUSTERERS, KERNELS


def _model(rng, k, cards):
    w = rng.dirichlet(np.ones(k) * 2)
    profiles = tuple(rng.dirichlet(np.ones(r) * 2, size=k) for r in cards)
    names = tuple(f"x{i}" for i in range(len(cards)))
    states = tuple(tuple(str(s) for s in range(r)) for r in cards)
    return LatentClassModel(names, states, w, profiles, 0.0, 1.0)


def _free(m):
    """Free parameters: w_1..w_{K-1}, then per variable and class theta[t, 0..r-2]."""
    z = [m.weights[:-1]] + [p[t, :-1] for p in m.profiles for t in range(m.n_classes)]
    return np.concatenate(z).astype(complex)


def _log_complete(z, x, t, m):
    K = m.n_classes
    w = np.concatenate([z[: K - 1], [1 - z[: K - 1].sum()]])
    at, out = K - 1, np.log(w[t])
    for i, p in enumerate(m.profiles):
        r = p.shape[1]
        for s in range(K):
            row = z[at : at + r - 1]
            if s == t:
                th = np.concatenate([row, [1 - row.sum()]])
                out = out + np.log(th[x[i]])
            at += r - 1
    return out


def _score(m, x, t, h=1e-30):
    z = _free(m)
    g = np.empty(len(z))
    for j in range(len(z)):
        e = z.copy()
        e[j] += 1j * h
        g[j] = _log_complete(e, x, t, m).imag / h  # complex step: exact to rounding
    return g


def _brute_gram(m, rows):
    K, cards = m.n_classes, [p.shape[1] for p in m.profiles]
    configs = list(itertools.product(*[range(r) for r in cards]))
    info = 0
    for x in configs:
        for t in range(K):
            s = _score(m, x, t)
            info = info + m.weights[t] * np.prod([m.profiles[i][t, x[i]] for i in range(len(x))]) * np.outer(
                s, s
            )
    Iinv = np.linalg.inv(info)

    def expected_score(row):  # sum over the class and the missing cells of p(t, x_mis | x_obs) s(x, t)
        acc, tot = 0, 0.0
        for x in configs:
            if any(row[i] >= 0 and row[i] != x[i] for i in range(len(x))):
                continue
            for t in range(K):
                p = m.weights[t] * np.prod([m.profiles[i][t, x[i]] for i in range(len(x))])
                acc = acc + p * _score(m, x, t)
                tot += p
        return acc / tot

    S = np.array([expected_score(r) for r in rows])
    return S @ Iinv @ S.T


@pytest.mark.parametrize("seed,k,cards", [(0, 2, [2, 3, 2]), (1, 3, [3, 2, 2]), (2, 2, [2, 2, 2, 3])])
def test_kernel_equals_brute_force_scores(seed, k, cards):
    rng = np.random.default_rng(seed)
    m = _model(rng, k, cards)
    codes = np.column_stack([rng.integers(0, r, 8) for r in cards]).astype(np.int32)
    codes[rng.random(codes.shape) < 0.2] = -1
    data = from_codes(codes, m.variables, m.states, None, "t")
    fitted = fit_lca_fisher(data, model=m.to_bayesnet())
    assert isinstance(fitted, LatentClassKernel) and fitted.variables == m.variables
    G = fitted.gram(data)
    np.testing.assert_allclose(G, _brute_gram(m, codes), atol=1e-8, rtol=1e-8)
    np.testing.assert_allclose(G, G.T, atol=1e-12)
    assert np.linalg.eigvalsh(G).min() > -1e-9
    np.testing.assert_allclose(
        fitted.contributions(data.subset([0]), data.subset([1])).sum(), G[0, 1], atol=1e-10
    )


def test_registered_kernel_fits_its_own_model(sample_path):
    d = load_csv(sample_path("soybean_small"), class_column="class").without_class()
    spec = KERNELS[LCA_FISHER]
    assert spec.uses_network and spec.psd
    fitted = spec.fit(d, classes=4, seed=0)
    G = fitted.gram(d)
    assert G.shape == (47, 47) and np.linalg.eigvalsh(G).min() > -1e-8
    assert fitted.lca.n_classes == 4 and "4 latent classes" in fitted.notes[0]


def test_kernel_clusterings_and_lca_clusterer(sample_path):
    d = load_csv(sample_path("soybean_small"), class_column="class")
    assert "lca" in CLUSTERERS and not CLUSTERERS["lca"].uses_kernel
    out = run_clustering(d, None, "lca", seed=0, restarts=10)
    assert out["ari"] == pytest.approx(1.0) and out["algorithm"] == "lca" and len(out["labels"]) == 47
    k = run_clustering(d, LCA_FISHER, "correlation", seed=0, restarts=5)
    assert k["kernel"] == LCA_FISHER
    # the reported ARI is the ARI of the reported labels against the class (scikit-learn, independently)
    from sklearn.metrics import adjusted_rand_score

    assert k["ari"] == pytest.approx(adjusted_rand_score(d.labels(), k["labels"]), abs=1e-12)
    assert k["ari"] > 0.3  # soybean_small's four diseases are found far better than chance (LCA itself: 1.0)
