"""Kernel Ward (``cluster --algorithm ward``): checked against a brute-force Ward and scikit-learn's Ward on
the explicit features; its cost, its memory guard, and ``auto`` with the normalised Fisher kernel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bnfk_core.analyses.cluster.ward import condensed_distances, cut_merges, ward_clustering, ward_cost
from bnfk_core.data.limits import memory_limit_set, workspace_bytes
from bnfk_core.errors import KernelError

ROOT = Path(__file__).resolve().parents[1]


def _brute_ward(X: np.ndarray, k: int) -> list[frozenset]:
    """Ward by its definition: from singletons, merge the two clusters whose union raises the within-cluster
    sum of squares the least (every pair tried, the sum recomputed from the points), until k remain."""
    clusters = [frozenset([i]) for i in range(len(X))]

    def sse(c):
        P = X[list(c)]
        return float(((P - P.mean(axis=0)) ** 2).sum())

    while len(clusters) > k:
        best = None
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                u = clusters[a] | clusters[b]
                rise = sse(u) - sse(clusters[a]) - sse(clusters[b])
                if best is None or rise < best[0]:
                    best = (rise, a, b)
        _, a, b = best
        clusters = [c for i, c in enumerate(clusters) if i not in (a, b)] + [clusters[a] | clusters[b]]
    return sorted(clusters, key=min)


def _partition(labels) -> list[frozenset]:
    labels = np.asarray(labels)
    return sorted((frozenset(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)), key=min)


@pytest.mark.parametrize("seed,k", [(0, 3), (1, 4), (2, 2)])
def test_ward_on_the_gram_matrix_is_brute_force_ward(seed, k):
    X = np.random.default_rng(seed).normal(size=(14, 3))
    res = ward_clustering(X @ X.T, k, seed=seed)
    assert _partition(res.labels) == _brute_ward(X, k)
    # its cost is the within-cluster sum of squares of the points
    want = sum(float(((X[list(c)] - X[list(c)].mean(axis=0)) ** 2).sum()) for c in _brute_ward(X, k))
    assert res.cost == pytest.approx(want, rel=1e-10)
    assert res.algorithm == "ward" and res.n_used == k and res.seed == seed


def test_condensed_distances_are_scipys_pdist_of_the_features():
    from scipy.spatial.distance import pdist

    X = np.random.default_rng(3).normal(size=(9, 4))
    assert np.allclose(condensed_distances(X @ X.T), pdist(X), atol=1e-12)


def test_cut_merges_follows_the_linkage():
    from scipy.cluster.hierarchy import fcluster, linkage

    X = np.random.default_rng(4).normal(size=(30, 2))
    Z = linkage(X, method="ward")
    for k in (1, 2, 5, 30):
        assert _partition(cut_merges(Z, 30, k)) == _partition(fcluster(Z, k, criterion="maxclust"))


def test_ward_on_the_normalised_fisher_features_is_sklearn_ward():
    from sklearn.cluster import AgglomerativeClustering

    from bnfk_core.kernels.fisher_normalized import fit_fisher_normalized
    from bnfk_core.reproduce.common import load_thesis_data

    d = load_thesis_data("zoo")
    X = d.without_class()
    fk = fit_fisher_normalized(X)
    Psi = fk.features(X).toarray()
    want = AgglomerativeClustering(n_clusters=7, linkage="ward").fit_predict(Psi)
    res = ward_clustering(fk.gram(X), 7)
    assert _partition(res.labels) == _partition(want)
    assert res.cost == pytest.approx(ward_cost(Psi @ Psi.T, want), rel=1e-9)


def test_ward_edge_cases_and_memory_guard():
    X = np.random.default_rng(5).normal(size=(6, 2))
    K = X @ X.T
    assert ward_clustering(K, 1).labels.tolist() == [0] * 6
    assert ward_clustering(K, 6).labels.tolist() == list(range(6))
    with pytest.raises(Exception, match="clusters"):
        ward_clustering(K, 7)
    with (
        memory_limit_set(workspace_bytes("ward", 6) - 1),
        pytest.raises(KernelError, match="Ward clustering"),
    ):
        ward_clustering(K, 2)


def _cli(argv):
    from bnfk_core.cli.main import build_parser

    args = build_parser("cluster").parse_args(["cluster", *argv])
    return args.func(args)


def test_cli_ward_and_the_normalised_kernels_auto():
    from bnfk_core.kernels.fisher_normalized import fit_fisher_normalized
    from bnfk_core.reproduce.common import load_thesis_data

    path = str(ROOT / "sample_data" / "soybean_small.csv")
    d = load_thesis_data("soybean_small")
    X = d.without_class()
    want = ward_clustering(fit_fisher_normalized(X).gram(X), 4).labels.tolist()
    out = _cli([path, "--label-column", "class", "--kernel", "fisher-normalized"])
    assert out["algorithm_chosen"] == "ward" and out["labels"] == want
    assert (
        _cli([path, "--label-column", "class", "--kernel", "fisher-normalized", "--algorithm", "ward"])[
            "labels"
        ]
        == want
    )
    # beyond the memory limit, auto falls back to k-means on psi (linear memory) and says why
    with memory_limit_set(workspace_bytes("ward", 47) - 1):  # what --max-memory sets for the command
        small = _cli([path, "--label-column", "class", "--kernel", "fisher-normalized"])
    assert small["algorithm_chosen"] == "kmeans-features" and "ward" in small["algorithm_reason"]
    # any kernel can use Ward
    sh = _cli([path, "--label-column", "class", "--kernel", "scaled-hamming", "--algorithm", "ward"])
    assert sh["algorithm"] == "ward" and len(set(sh["labels"])) == 4
