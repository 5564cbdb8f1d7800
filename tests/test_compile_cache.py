"""numba's on-disk cache: ``python -m bnfk_core warmup`` fills it, and a later process then loads every
compiled function of a latent class fit and of the Fisher Gram matrix instead of compiling it (counted by
numba's own per-signature cache statistics, not by the clock); a parallel loop's one-thread twin has cache
files of its own and computes what the parallel loop computes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: a notebook's first calls: the README's latent class fit (numpy engine), the compiled EM, the Fisher Gram
#: matrix, both compiled pair sums;
#: prints every bnfk_core dispatcher with a signature and its cache hits and misses
FIRST_CALLS = """
import json
import pandas as pd
from bnfk_core import fit_lca, gram, load_csv
from bnfk_core.analyses.warmup import compiled_functions
from bnfk_core.estimators import LatentClassModel
from bnfk_core.kernels import fisher
from bnfk_core.learning.recipe import learn_recipe

votes = pd.read_csv("sample_data/house_votes_84.csv", na_values="?", keep_default_na=False)
LatentClassModel(3, random_state=0).fit(votes.drop(columns="class"))
data = load_csv("sample_data/house_votes_84.csv", class_column="class", missing_policy="category")
features = data.without_class()
fit_lca(features, 3, 2, 0, engine="numba")  # the compiled EM (tables beyond the numpy engine's size)
gram(learn_recipe(data).model, features)
fisher.warm_up()
print(json.dumps({
    f"{d.py_func.__module__}.{d.py_func.__qualname__}": [
        sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()), str(d.stats.cache_path)
    ]
    for d in compiled_functions() if d.signatures
}))
"""


def _run(args, cache: Path, timeout=240):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_after_the_warm_up_a_fresh_process_compiles_nothing(tmp_path):
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    out = tmp_path / "warmup.json"
    _run(["-m", "bnfk_core", "warmup", "--only", "learn,lca,fisher", "-o", str(out)], cache)
    warm = json.loads(out.read_text())
    assert warm["compiled"] > 0 and warm["loaded"] == 0  # the cache started empty: everything compiled
    assert all(str(p).startswith(str(cache)) for p in warm["cache_dirs"])

    stats = json.loads(_run(["-c", FIRST_CALLS], cache).strip().splitlines()[-1])
    missed = {name: s for name, s in stats.items() if s[1]}
    assert not missed, f"compiled again in the second process: {missed}"
    # the latent class EM and both pair sums were loaded; house votes' 435 rows are counted by numpy
    assert "bnfk_core.data.compiled_counts.dense_counts" not in stats
    for name in (
        "bnfk_core.lca.em.run_start",
        "bnfk_core.kernels.fisher._pair_kernel",
        "bnfk_core.kernels.fisher._pair_kernel_serial",
    ):
        assert stats.get(name, [0])[0] >= 1, (name, stats)
    files = {p.name for p in cache.rglob("*.nbi")}
    assert any(f.startswith("fisher._pair_kernel_serial-") for f in files)
    assert any(f.startswith("fisher._pair_kernel-") for f in files)


def test_the_one_thread_twin_is_cached_apart_and_computes_the_same():
    from bnfk_core.analyses.cluster import correlation
    from bnfk_core.kernels import fisher

    for parallel, twin in (
        (fisher._pair_kernel, fisher._pair_kernel_serial),
        (correlation._restart_sums, correlation._restart_sums_serial),
    ):
        assert parallel.targetoptions.get("parallel") and not twin.targetoptions.get("parallel")
        assert twin.py_func.__qualname__ != parallel.py_func.__qualname__
        assert twin.py_func.__code__ is parallel.py_func.__code__
    rng = np.random.default_rng(5)
    A = rng.normal(size=(30, 4))
    X = A @ A.T
    labT = np.ascontiguousarray(rng.integers(0, 3, size=(30, 4)))
    assert np.array_equal(correlation._restart_sums(X, labT, 3), correlation._restart_sums_serial(X, labT, 3))
    # the pure-Python sums, in the same order
    want = np.zeros((4, 3, 30))
    for r in range(4):
        for i in range(30):
            for j in range(30):
                want[r, labT[j, r], i] += X[i, j]
    assert np.array_equal(correlation._restart_sums_serial(X, labT, 3), want)


def test_the_cli_lists_the_warm_up_groups_of_the_core():
    from bnfk_core.analyses.warmup import GROUPS
    from bnfk_core.cli.warmup import GROUP_NAMES

    assert GROUP_NAMES == tuple(GROUPS)


def test_an_unknown_group_is_one_error_line(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "bnfk_core", "warmup", "--only", "lca,nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and "'nope'" in r.stderr
    assert "Traceback" not in r.stderr


def test_warm_up_refuses_an_unknown_group():
    from bnfk_core.analyses.warmup import warm_up

    with pytest.raises(ValueError, match="'nope'"):
        warm_up(["nope"])


def test_listing_the_compiled_functions_is_safe_beside_a_running_page():
    """The app lists the compiled functions on its warm-up thread while a page runs: building a tuple from a
    generator on the page's thread meanwhile never fails (``gc.get_objects()`` there made CPython raise
    ``SystemError: bad argument to internal function`` in the page's own code)."""
    import threading
    import time

    from bnfk_core.analyses.warmup import compiled_functions

    stop, calls = threading.Event(), [0]

    def listing():
        while not stop.is_set() and calls[0] < 40:
            compiled_functions()
            calls[0] += 1

    worker = threading.Thread(target=listing, daemon=True)
    worker.start()
    failures, t0 = 0, time.monotonic()
    try:
        while worker.is_alive() and time.monotonic() - t0 < 30:
            try:
                tuple(i for i in range(200) if i >= 0)
            except SystemError:
                failures += 1
    finally:
        stop.set()
        worker.join(timeout=10)
    assert failures == 0 and calls[0] >= 1
