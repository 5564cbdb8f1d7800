"""``cluster --engine dask``: the row-wise passes on a Dask cluster's workers (reading, the Fisher kernel's
network, kmeans-features' k-means++ and Lloyd passes) give what one process gives -- the same codes, network,
score, labels, cost and metrics -- and the blocked k-means itself is scikit-learn's (the same k-means++ rows,
the same labels)."""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from bnfk_core.analyses.cluster import lloyd as L
from bnfk_core.analyses.cluster.clustering import _fit_kernel, run_clustering
from bnfk_core.analyses.cluster.features import feature_map, kernel_kmeans_features, kernel_kmeans_rows
from bnfk_core.analyses.cluster.stream import read_codes
from bnfk_core.cli import main
from bnfk_core.learning.recipe import learn_recipe

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")


@pytest.fixture(scope="module")
def hv_codes():
    return read_codes(HV, chunksize=100, class_column="class")


@pytest.fixture(scope="module")
def hv_fisher(hv_codes):
    return _fit_kernel(hv_codes, "fisher")


# ====================================================================== the blocked k-means is scikit-learn's
@pytest.mark.parametrize("block_rows", [None, 50])
def test_kmeans_plusplus_picks_scikit_learns_rows(hv_fisher, block_rows):
    fitted, feats = hv_fisher
    Phi = feature_map(fitted, feats)
    X = Phi.toarray()
    groups = L.HERE.keep(L.dense_part, L.groups_from_phi(Phi, L.HERE, block_rows))
    for seed in range(4):
        C, rows, _ = L.kmeans_plusplus(
            groups, X.shape[0], 6, np.random.RandomState(seed), block_rows=block_rows
        )
        with threadpool_limits(limits=1):
            C2, rows2 = kmeans_plusplus(X, 6, random_state=np.random.RandomState(seed))
        assert np.array_equal(rows, rows2) and np.array_equal(C, X[rows])


@pytest.mark.parametrize("block_rows", [None, 64])
def test_kmeans_features_equals_scikit_learns_kmeans(hv_fisher, block_rows):
    fitted, feats = hv_fisher
    Phi = feature_map(fitted, feats)
    for seed in range(3):
        res = kernel_kmeans_features(Phi, 4, seed=seed, n_init=3, dense=True, block_rows=block_rows)
        with threadpool_limits(limits=1):
            km = KMeans(4, init="k-means++", n_init=3, random_state=seed, algorithm="lloyd").fit(
                Phi.toarray()
            )
        assert adjusted_rand_score(res.labels, km.labels_) == 1.0
        assert res.cost == pytest.approx(km.inertia_, rel=1e-9)
        # the cost is the kernel k-means objective of the labels, summed independently
        X = Phi.toarray()
        cost = sum(((X[res.labels == c] - X[res.labels == c].mean(axis=0)) ** 2).sum() for c in range(4))
        assert res.cost == pytest.approx(cost, rel=1e-9)


@pytest.mark.filterwarnings("ignore")
def test_more_clusters_than_distinct_rows_give_scikit_learns_partition():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.random((5, 7))[rng.integers(0, 5, 300)]  # 5 distinct rows: empty clusters are relocated
    res = kernel_kmeans_features(sp.csr_matrix(X), 6, seed=0, dense=True, block_rows=64)
    with threadpool_limits(limits=1):
        km = KMeans(6, init="k-means++", n_init=3, random_state=0, algorithm="lloyd").fit(X)
    assert adjusted_rand_score(res.labels, km.labels_) == 1.0 and res.n_used == len(set(km.labels_)) == 5
    assert res.cost == pytest.approx(0.0, abs=1e-9)


def test_features_made_per_group_equal_the_features_of_the_whole(hv_fisher):
    fitted, feats = hv_fisher
    whole = kernel_kmeans_features(feature_map(fitted, feats), 5, seed=2, block_rows=40)
    rows = kernel_kmeans_rows(fitted, feats, 5, seed=2, block_rows=40)
    assert np.array_equal(whole.labels, rows.labels) and whole.cost == rows.cost


# ====================================================================== one process against a LocalCluster
@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    import sys
    import types

    main_module = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")  # spawn-safe (see conftest.spawn_safe_main)
    try:
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client
    finally:
        sys.modules["__main__"] = main_module


def test_read_codes_on_dask_partitions_equals_chunks(dask_client, hv_codes):
    from bnfk_core.data.dask_runner import DaskRunner

    runner = DaskRunner(dask_client, blocksize=4_000)
    got = read_codes(HV, class_column="class", runner=runner)
    assert np.array_equal(got.codes, hv_codes.codes) and got.codes.dtype == hv_codes.codes.dtype
    assert got.states == hv_codes.states and got.variables == hv_codes.variables
    assert got.class_column == hv_codes.class_column == "class"


def test_kernel_network_on_dask_equals_one_process(dask_client, hv_codes):
    from bnfk_core.data.dask_runner import DaskRunner

    feats = hv_codes.without_class()
    one = learn_recipe(feats)
    two = learn_recipe(feats, runner=DaskRunner(dask_client))
    assert one.dag.sorted_arcs() == two.dag.sorted_arcs() and one.dag.n_arcs > 0
    assert two.result.score == pytest.approx(one.result.score, rel=1e-9)
    for a, b in zip(one.model.cpts, two.model.cpts):
        assert np.max(np.abs(a - b)) <= 1e-9


@pytest.mark.parametrize("kernel", ["fisher", "scaled-hamming"])
def test_cluster_on_dask_equals_one_process(dask_client, hv_codes, monkeypatch, kernel):
    from bnfk_core.data.dask_runner import DaskRunner

    monkeypatch.setattr(L, "BLOCK_ROWS", 64)  # 7 blocks in 2 groups, one a worker
    runner = DaskRunner(dask_client, blocksize=4_000)
    data = read_codes(HV, class_column="class", runner=runner)
    one = run_clustering(hv_codes, kernel, "kmeans-features", n_clusters=3, seed=5, n_init=2)
    two = run_clustering(data, kernel, "kmeans-features", n_clusters=3, seed=5, n_init=2, runner=runner)
    assert one["labels"] == two["labels"]
    assert two["cost"] == pytest.approx(one["cost"], rel=1e-9)
    for key in ("ari", "ami", "v_measure", "silhouette"):
        assert two[key] == pytest.approx(one[key], rel=1e-9, abs=1e-12), key
    for key in ("structure", "n_arcs", "params", "recipe", "feature_nnz", "feature_columns_phi", "n_used"):
        assert one[key] == two[key], key


def test_sparse_blocks_on_dask_equal_one_process(dask_client, hv_fisher):
    from bnfk_core.data.dask_runner import DaskRunner

    fitted, feats = hv_fisher
    one = kernel_kmeans_rows(fitted, feats, 4, seed=1, dense=False, block_rows=60)
    two = kernel_kmeans_rows(
        fitted, feats, 4, seed=1, dense=False, block_rows=60, runner=DaskRunner(dask_client)
    )
    assert np.array_equal(one.labels, two.labels) and two.cost == pytest.approx(one.cost, rel=1e-9)
    assert one.info["dense"] is False and one.info["nnz"] == two.info["nnz"] > 0


def test_cli_cluster_engine_dask_equals_one_process(dask_client, capsys):
    args = [
        "cluster",
        HV,
        "--kernel",
        "fisher",
        "--label-column",
        "class",
        "--algorithm",
        "kmeans-features",
        "--clusters",
        "3",
        "--seed",
        "2",
    ]
    assert main(args) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(args + ["--engine", "dask", "--scheduler", dask_client.scheduler.address]) == 0
    two = json.loads(capsys.readouterr().out)
    assert (one["engine"], two["engine"], two["reading"]) == ("local", "dask", "dask")
    assert one["labels"] == two["labels"] and two["cost"] == pytest.approx(one["cost"], rel=1e-9)
    assert two["ari"] == pytest.approx(one["ari"], rel=1e-9) and one["n_arcs"] == two["n_arcs"]


# ====================================================================== the CLI's refusals, as learn's
def _error(capsys, argv) -> str:
    assert main([str(a) for a in argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    return lines[0][len("error: ") :]


def test_cli_refuses_a_bad_scheduler_as_learn_does(capsys):
    base = ["cluster", HV, "--kernel", "fisher", "--label-column", "class"]
    for address in ("http://127.0.0.1:8786", "tcp://127.0.0.1:0", "garbage"):
        msg = _error(capsys, base + ["--engine", "dask", "--scheduler", address])
        learn = _error(capsys, ["learn", HV, "--engine", "dask", "--scheduler", address, "-o", "never.json"])
        assert msg == learn and msg.startswith("The Dask scheduler address") and "tcp://10.0.0.5:8786" in msg
    assert (
        _error(capsys, base + ["--scheduler", "tcp://127.0.0.1:8786"]) == "--scheduler needs --engine dask."
    )
    msg = _error(
        capsys, base + ["--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", "--dask-timeout", "2"]
    )
    assert msg.startswith("Cannot reach the Dask scheduler at tcp://127.0.0.1:1")
    assert "--dask-timeout" in _error(capsys, base + ["--engine", "dask", "--dask-timeout", "0"])
