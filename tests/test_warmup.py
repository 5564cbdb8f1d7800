"""bnfk_ui.warmup: one background thread per process that loads the compiled clustering and the export check,
and leaves the clustering's results unchanged."""
import numpy as np

from bnfk_core.analyses.cluster_correlation import correlation_clustering
from bnfk_ui import warmup


def test_one_thread_per_process_and_it_finishes():
    first = warmup.start()
    assert warmup.start() is first
    first.join(120)
    assert not first.is_alive()


def test_results_equal_after_the_warm_up():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(60, 4))
    K = A @ A.T
    cold = correlation_clustering(K, 3, restarts=5, seed=1, compiled=False)
    warmup.start().join(120)
    warm = correlation_clustering(K, 3, restarts=5, seed=1)
    assert np.array_equal(cold.labels, warm.labels)
    assert warm.cost == cold.cost or abs(warm.cost - cold.cost) < 1e-9 * abs(cold.cost)
