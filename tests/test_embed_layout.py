"""Tests for bnfk_core.network.layout, bnfk_core.kernels.embed and the column summary: the numbers behind the
app's figures."""

import numpy as np
import pytest

from bnfk_core.data.stats import column_summary
from bnfk_core.kernels.embed import (
    class_order,
    cluster_order,
    kernel_distance,
    kernel_pca,
    pair_values,
    sample_rows,
)
from bnfk_core.network.layout import arrow_segment, layered_layout


def test_layout_parents_above_children():
    nodes = list("abcdef")
    arcs = [("a", "b"), ("b", "c"), ("a", "c"), ("d", "c")]
    pos = layered_layout(nodes, arcs)
    assert set(pos) == set(nodes)
    for u, v in arcs:
        assert pos[u][1] > pos[v][1]
    # longest path: c sits two layers below a
    assert pos["a"][1] - pos["c"][1] == pytest.approx(2.0)
    # unconnected nodes go below everything else
    assert pos["e"][1] < min(pos[v][1] for v in "abcd")
    assert len({pos[v] for v in nodes}) == len(nodes)  # no two nodes on one spot


def test_layout_empty_and_wide_rows_wrap():
    nodes = [f"v{i}" for i in range(16)]
    pos = layered_layout(nodes, [], max_per_row=5)
    assert len({p for p in pos.values()}) == 16
    assert len({y for _, y in pos.values()}) == 4  # 16 nodes, 5 a row
    assert max(abs(x) for x, _ in pos.values()) <= 3.0


def test_layout_barycenter_uncrosses_simple_case():
    # a->d, b->c: the children should be ordered like their parents (no crossing)
    pos = layered_layout(["a", "b", "c", "d"], [("a", "d"), ("b", "c")])
    assert (pos["a"][0] < pos["b"][0]) == (pos["d"][0] < pos["c"][0])


def test_layout_rejects_cycle():
    with pytest.raises(ValueError):
        layered_layout(["a", "b"], [("a", "b"), ("b", "a")])


def test_arrow_segment_shortened():
    x0, y0, x1, y1 = arrow_segment((0, 0), (0, 2), 0.5)
    assert (x0, y0, x1, y1) == pytest.approx((0, 0.5, 0, 1.5))
    assert arrow_segment((0, 0), (0, 0.5), 0.5) == (0, 0, 0, 0.5)


def test_sample_rows():
    assert list(sample_rows(5, 10)) == [0, 1, 2, 3, 4]
    a = sample_rows(1000, 50, seed=3)
    assert len(a) == 50 and len(set(a)) == 50 and np.all(np.diff(a) > 0)
    assert np.array_equal(a, sample_rows(1000, 50, seed=3))
    assert not np.array_equal(a, sample_rows(1000, 50, seed=4))


def _blocks():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.1, (5, 3)) + [3, 0, 0], rng.normal(0, 0.1, (4, 3)) + [0, 3, 0]])
    perm = rng.permutation(9)
    return X[perm] @ X[perm].T, (perm >= 5).astype(int)


def test_kernel_distance_matches_euclidean():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 4))
    D = kernel_distance(X @ X.T)
    ref = np.linalg.norm(X[:, None] - X[None], axis=-1)
    assert np.allclose(D, ref, atol=1e-7)
    assert np.allclose(np.diag(D), 0)


def test_cluster_order_groups_blocks():
    K, group = _blocks()
    order = cluster_order(K)
    assert sorted(order) == list(range(9))
    g = group[order]
    assert np.count_nonzero(np.diff(g)) == 1  # the two blocks are contiguous
    assert list(cluster_order(np.eye(2))) == [0, 1]


def test_class_order_groups_and_missing_last():
    labels = np.array([1, 0, -1, 1, 0, 2])
    order = class_order(labels)
    assert list(labels[order]) == [0, 0, 1, 1, 2, -1]
    K, group = _blocks()
    order = class_order(group, K)
    assert sorted(order) == list(range(9)) and list(group[order]) == sorted(group)


def test_kernel_pca_reproduces_centred_kernel():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 2))
    Y = kernel_pca(X @ X.T, 2)
    Xc = X - X.mean(0)
    assert np.allclose(Y @ Y.T, Xc @ Xc.T, atol=1e-8)
    assert kernel_pca(np.zeros((0, 0))).shape == (0, 2)


def test_kernel_pca_by_lanczos_equals_the_full_eigendecomposition():
    """From LANCZOS_ROWS rows on the top axes come from ARPACK: the same embedding as numpy's full eigh of J K
    J."""
    from bnfk_core.kernels.embed import LANCZOS_ROWS

    rng = np.random.default_rng(5)
    n = LANCZOS_ROWS + 100
    X = rng.integers(0, 3, size=(n, 8)).astype(float)
    K = X @ X.T + rng.normal(size=(n, n)) * 1e-3  # not exactly PSD, not symmetric to the last bit
    J = np.eye(n) - 1.0 / n
    Kc = J @ K @ J
    w, V = np.linalg.eigh(0.5 * (Kc + Kc.T))
    ref = V[:, ::-1][:, :3] * np.sqrt(w[::-1][:3])
    ref *= np.sign(ref[np.abs(ref).argmax(axis=0), np.arange(3)])
    assert np.allclose(kernel_pca(K, 3), ref, atol=1e-8)
    assert np.array_equal(kernel_pca(K, 3), kernel_pca(K, 3))  # seeded start: the same run twice


def test_pair_values():
    K = np.array([[1.0, 2, 3], [2, 1, 4], [3, 4, 1]])
    out = pair_values(K, [0, 0, 1])
    assert sorted(out["all"]) == [2, 3, 4]
    assert list(out["within"][0]) == [2.0] and len(out["within"][1]) == 0
    assert sorted(out["between"]) == [3, 4]


def test_column_summary():
    from bnfk_core.data.table import from_codes

    d = from_codes(
        np.array([[0, 1], [1, -1], [0, 0]]), ["a", "c"], [["x", "y"], ["p", "q"]], class_column="c"
    )
    rows = column_summary(d)
    assert rows[0] == {
        "variable": "a",
        "role": "feature",
        "levels": 2,
        "counts": "x (2), y (1)",
        "missing": 0,
        "most frequent": "x (67%)",
    }
    assert rows[1]["role"] == "class" and rows[1]["missing"] == 1
