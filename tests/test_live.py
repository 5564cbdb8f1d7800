"""LiveKernel: incremental Fisher Gram matrix under arc edits, against from-scratch computations."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_bruteforce import random_dag, random_model

from bnfk_core.data.table import from_codes
from bnfk_core.errors import StructureError
from bnfk_core.inference import queries as inference
from bnfk_core.kernels.features import features
from bnfk_core.kernels.fisher import contributions, gram
from bnfk_core.kernels.live import LiveKernel
from bnfk_core.kernels.live_cache import clear_live_cache, live_kernel
from bnfk_core.kernels.live_terms import changed_terms
from bnfk_core.learning.scores import score_dag
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit

TOL = 1e-9


def _problem(seed, n_rows=80, missing=0.0, n_min=3, n_max=7):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(n_min, n_max))
    dag = random_dag(n, seed, max_parents=2)
    cards = rng.integers(2, 5, size=n)
    model = random_model(dag, cards, seed)
    d = model.sample(n_rows, seed)
    codes = d.codes.copy()
    if missing:
        codes[rng.random(codes.shape) < missing] = -1
    return dag, from_codes(codes, d.variables, d.states), rng


def _random_edit(lk, rng, valid=False):
    """A random arc edit of the live structure (``valid``: one that closes no cycle)."""
    from bnfk_core.kernels.live_terms import Edit

    nodes = lk.dag.nodes
    for _ in range(200):
        a, b = rng.choice(len(nodes), 2, replace=False)
        u, v = nodes[a], nodes[b]
        if lk.dag.has_arc(u, v):
            e = ("remove" if rng.random() < 0.5 else "reverse"), u, v
        elif not lk.dag.has_arc(v, u):
            e = "add", u, v
        else:
            continue
        if valid:
            try:
                Edit(*e).apply(lk.dag)
            except StructureError:
                continue
        return e
    raise AssertionError("no edit found")


def _scratch(dag, data, params):
    return gram(fit(dag, data, method=params), data)


@pytest.mark.parametrize("seed", range(12))
def test_edits_match_from_scratch_gram(seed):
    params = ("smoothed", "cnml", "bdeu")[seed % 3]
    missing = 0.1 if seed % 4 == 3 else 0.0
    dag, data, rng = _problem(seed, missing=missing)
    lk = LiveKernel(dag, data, params)
    assert np.abs(lk.gram() - _scratch(dag, data, params)).max() < TOL
    done = set()
    for _ in range(8):
        op, u, v = _random_edit(lk, rng)
        try:
            lk.apply(op, u, v)
        except StructureError:
            continue
        done.add(op)
        assert np.abs(lk.gram() - _scratch(lk.dag, data, params)).max() < TOL
    assert done, "no edit was applied"


def test_every_op_on_a_chain_with_descendants_to_rescale():
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("b", "c")])
    model = random_model(dag, [3, 2, 3, 2], seed=1)
    data = model.sample(150, 2)
    lk = LiveKernel(dag, data)
    for op, u, v in [
        ("add", "d", "b"),
        ("reverse", "a", "b"),
        ("remove", "b", "a"),
        ("add", "c", "a"),
        ("reverse", "b", "c"),
    ]:
        info = lk.apply(op, u, v)
        assert np.abs(lk.gram() - _scratch(lk.dag, data, "smoothed")).max() < TOL, (op, u, v)
    # reversing b -> c in d -> b -> c -> a: b and c rebuilt, a (child of c) rescaled
    assert sorted(info["rebuilt"]) == ["b", "c"] and info["rescaled"] == ["a"]


def _term(model, codes, w):
    from bnfk_core.analyses.segments.search import variable_term

    return variable_term(model, codes, w)


@pytest.mark.parametrize("seed", range(6))
def test_changed_terms_are_exactly_the_terms_that_change(seed):
    dag, data, rng = _problem(100 + seed, n_rows=60)
    lk = LiveKernel(dag, data)
    for _ in range(5):
        op, u, v = _random_edit(lk, rng)
        old = lk.model
        try:
            lk.apply(op, u, v)
        except StructureError:
            continue
        new = lk.model
        rebuilt, rescaled = changed_terms(old.dag, new.dag)
        for w in range(new.n_vars):
            diff = np.abs(_term(old, lk.codes, w) - _term(new, lk.codes, w)).max()
            if w not in rebuilt and w not in rescaled:
                assert diff < 1e-10, (op, u, v, new.variables[w])  # untouched terms really are unchanged
        for w in rebuilt:
            assert old.parents[w] != new.parents[w]
        # a rescaled term has the old pair-match pattern and theta: only P(parents) moved
        for w in rescaled:
            assert old.parents[w] == new.parents[w] and old.cpts[w] is new.cpts[w]


def test_undo_redo_restore_structure_cpts_and_gram():
    dag, data, rng = _problem(7, n_rows=90, missing=0.05)
    lk = LiveKernel(dag, data)
    states = [(lk.dag, lk.model.cpts, lk.gram(copy=True))]
    while len(states) < 5:
        op, u, v = _random_edit(lk, rng)
        try:
            lk.apply(op, u, v)
        except StructureError:
            continue
        states.append((lk.dag, lk.model.cpts, lk.gram(copy=True)))
    assert len(lk.history) == 4
    for dag_k, cpts_k, K_k in reversed(states[:-1]):
        lk.undo()
        assert lk.dag == dag_k
        assert all(np.array_equal(a, b) for a, b in zip(lk.model.cpts, cpts_k))
        assert np.abs(lk.gram() - K_k).max() < TOL
    with pytest.raises(StructureError):
        lk.undo()
    for dag_k, _, K_k in states[1:]:
        lk.redo()
        assert lk.dag == dag_k and np.abs(lk.gram() - K_k).max() < TOL
    with pytest.raises(StructureError):
        lk.redo()


def test_cycles_and_bad_edits_raise_and_change_nothing():
    dag = DAG(["a", "b", "c"], [("a", "b"), ("b", "c")])
    data = random_model(dag, [2, 3, 2], seed=0).sample(50, 0)
    lk = LiveKernel(dag, data)
    K = lk.gram(copy=True)
    for op, u, v in [
        ("add", "c", "a"),
        ("reverse", "a", "c"),
        ("remove", "a", "c"),
        ("add", "a", "b"),
        ("flip", "a", "b"),
        ("add", "a", "zz"),
    ]:
        with pytest.raises(StructureError):
            lk.apply(op, u, v)
    assert lk.dag == dag and not lk.history and np.array_equal(lk.gram(), K)


def test_ml_parameters_with_zero_cells_match_from_scratch():
    """ml CPTs fitted on the rows themselves have zeros only in cells no row takes (the kernel stays
    defined there); the update must skip them as the from-scratch Gram does."""
    codes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 0, 0], [2, 1, 0]])
    data = from_codes(codes, ["a", "b", "c"], [("0", "1", "2"), ("0", "1"), ("0", "1")])
    lk = LiveKernel(DAG(["a", "b", "c"]), data, params="ml")
    for op, u, v in [("add", "a", "b"), ("add", "b", "c"), ("reverse", "a", "b"), ("add", "a", "c")]:
        lk.apply(op, u, v)
        assert np.abs(lk.gram() - _scratch(lk.dag, data, "ml")).max() < TOL


def test_gram_view_is_read_only_and_copy_is_a_snapshot():
    dag, data, _ = _problem(3)
    lk = LiveKernel(dag, data)
    with pytest.raises(ValueError):
        lk.gram()[0, 0] = 1.0
    snap = lk.gram(copy=True)
    nodes = lk.dag.nodes
    lk.goto(DAG(nodes))
    assert np.abs(lk.gram() - _scratch(DAG(nodes), data, "smoothed")).max() < TOL
    assert np.abs(snap - _scratch(dag, data, "smoothed")).max() < TOL


def test_preview_equals_apply_and_leaves_state():
    dag, data, rng = _problem(11, n_rows=70)
    lk = LiveKernel(dag, data)
    K = lk.gram(copy=True)
    for _ in range(6):
        op, u, v = _random_edit(lk, rng)
        try:
            P = lk.preview(op, u, v)
        except StructureError:
            continue
        assert lk.dag == dag and np.array_equal(lk.gram(), K)
        assert np.abs(P - _scratch(Edit_apply(dag, op, u, v), data, "smoothed")).max() < TOL


def Edit_apply(dag, op, u, v):
    from bnfk_core.kernels.live_terms import Edit

    return Edit(op, u, v).apply(dag)


@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_derived_quantities_follow_the_edits(missing):
    dag, data, rng = _problem(21, n_rows=70, missing=missing)
    lk = LiveKernel(dag, data)
    for _ in range(4):
        op, u, v = _random_edit(lk, rng)
        try:
            lk.apply(op, u, v)
        except StructureError:
            continue
        model = fit(lk.dag, data, method=lk.params)
        K = lk.gram()
        for a, b in [(0, 1), (2, 2), (5, 9)]:
            c = lk.contributions(a, b)
            assert c.sum() == pytest.approx(K[a, b], abs=1e-9)
            assert np.allclose(c, contributions(model, data.codes[a], data.codes[b]), atol=1e-9)
        assert np.allclose(lk.log_likelihood(), inference.log_likelihood(model, data), atol=1e-9)
        Phi = lk.features()
        assert abs(Phi - features(model, data)).max() < 1e-12
        for s in ("bic", "qnml"):
            assert lk.score(s) == pytest.approx(
                score_dag(data.codes, data.cardinalities, lk.dag, s), abs=1e-8
            )


def test_score_delta_is_the_score_difference():
    dag, data, rng = _problem(31, n_rows=100)
    lk = LiveKernel(dag, data)
    for _ in range(6):
        op, u, v = _random_edit(lk, rng)
        try:
            new = Edit_apply(lk.dag, op, u, v)
        except StructureError:
            continue
        for s in ("bic", "bdeu", "k2"):
            want = score_dag(data.codes, data.cardinalities, new, s) - score_dag(
                data.codes, data.cardinalities, lk.dag, s
            )
            assert lk.score_delta(op, u, v, s) == pytest.approx(want, abs=1e-8)


def test_scaled_hamming_base_is_structure_independent():
    dag, data, _ = _problem(41)
    lk = LiveKernel(dag, data)
    want = gram(None, data, kind="scaled-hamming")
    assert np.allclose(lk.scaled_hamming(), want, atol=1e-12)
    lk.goto(DAG(lk.dag.nodes))
    assert np.allclose(lk.scaled_hamming(), want, atol=1e-12)


def test_posterior_reinfers_only_rows_touching_changed_families():
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("b", "c")])
    model = random_model(dag, [2, 3, 2, 3], seed=4)
    codes = model.sample(200, 5).codes.copy()
    rng = np.random.default_rng(0)
    codes[rng.random(codes.shape) < 0.15] = -1
    data = from_codes(codes, model.variables, model.states)
    lk = LiveKernel(dag, data)
    lk.posterior()
    lk.apply("add", "d", "c")  # changes c's family {b, c, d}: rows missing only a are reused
    post = lk.posterior()
    want = inference.posterior(fit(lk.dag, data, method=lk.params), data)
    assert set(post) == set(want)
    for m in want:
        assert np.array_equal(post[m][0], want[m][0])
        assert np.allclose(post[m][1], want[m][1], atol=1e-12)
    st = lk.posterior_stats
    assert 0 < st["reinferred"] < st["rows"]
    assert st["rows"] - st["reinferred"] == int(((codes[:, 0] < 0) & (codes[:, 1:] >= 0).all(axis=1)).sum())


def test_goto_and_live_kernel_cache():
    clear_live_cache()
    dag, data, _ = _problem(51, n_rows=60)
    lk = live_kernel(dag, data)
    target = random_dag(len(dag.nodes), 999, max_parents=2)
    target = DAG(dag.nodes, target.arcs)
    lk2 = live_kernel(target, data, max_edits=100)
    assert lk2 is lk and lk.dag == target
    assert np.abs(lk.gram() - _scratch(target, data, "smoothed")).max() < TOL
    assert lk.cache_key()[3] == tuple(target.sorted_arcs())
    clear_live_cache()


def test_letter_like_root_placement_edits():
    """A 26-state variable high in the network: edits near it rescale many descendants."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from letter_like import letter_like_model

    m = letter_like_model(0)
    data = m.sample(300, 1)
    lk = LiveKernel(m.dag, data)
    for op, u, v in [("reverse", "class", "x1"), ("add", "x3", "x16"), ("remove", "x15", "x16")]:
        lk.apply(op, u, v)
        assert np.abs(lk.gram() - _scratch(lk.dag, data, "smoothed")).max() < 1e-8


# ---------------------------------------------------------------------- downstream reuse
def test_warm_start_with_the_drawn_start_equals_the_default_protocol():
    from bnfk_core.analyses.cluster.clustering import correlation_clustering

    dag, data, _ = _problem(61, n_rows=120)
    K = LiveKernel(dag, data).gram()
    first = np.random.default_rng(4).integers(0, 3, size=len(K))  # what restart 1 draws with seed 4
    a = correlation_clustering(K, 3, restarts=6, seed=4, shift="adaptive")
    b = correlation_clustering(K, 3, restarts=6, seed=4, shift="adaptive", init_labels=first)
    assert np.array_equal(a.labels, b.labels) and a.restart_costs == b.restart_costs
    # from a local optimum a single warm-started restart stays there
    c = correlation_clustering(K, 3, restarts=1, seed=9, shift="adaptive", init_labels=a.labels)
    assert np.array_equal(c.labels, a.labels) and c.sweeps == [1]
    with pytest.raises(Exception, match="starting labels"):
        correlation_clustering(K, 3, init_labels=np.full(len(K), 5))


def test_compiled_restarts_equal_the_reference_local_search():
    from bnfk_core.analyses.cluster.clustering import correlation_clustering

    dag, data, _ = _problem(62, n_rows=150)
    K = LiveKernel(dag, data).gram()
    for k, shift in [(2, "none"), (4, "adaptive")]:
        a = correlation_clustering(K, k, restarts=5, seed=1, shift=shift)
        b = correlation_clustering(K, k, restarts=5, seed=1, shift=shift, compiled=False)
        assert np.array_equal(a.labels, b.labels) and a.sweeps == b.sweeps
        assert np.allclose(a.restart_costs, b.restart_costs, rtol=1e-12)


def test_cluster_live_warm_start_after_an_edit():
    from bnfk_core.analyses.reuse import cluster_live

    dag, data, rng = _problem(63, n_rows=100)
    lk = LiveKernel(dag, data)
    r0 = cluster_live(lk, 3, seed=2)
    op, u, v = _random_edit(lk, rng, valid=True)
    lk.apply(op, u, v)
    cold = cluster_live(lk, 3, seed=2)
    warm = cluster_live(lk, 3, seed=2, previous=r0.labels)
    from bnfk_core.analyses.cluster.clustering import correlation_clustering

    ref = correlation_clustering(_scratch(lk.dag, data, "smoothed"), 3, seed=2, shift="auto", kernel="fisher")
    assert np.array_equal(cold.labels, ref.labels)
    assert warm.cost <= min(cold.restart_costs[1:]) + 1e-9 * abs(warm.cost)


def test_impute_bn_live_equals_impute_bn():
    from bnfk_core.analyses.impute.core import impute_bn
    from bnfk_core.analyses.reuse import impute_bn_live

    dag, data, rng = _problem(64, n_rows=150, missing=0.1)
    lk = LiveKernel(dag, data)
    impute_bn_live(lk)
    for _ in range(3):
        op, u, v = _random_edit(lk, rng)
        try:
            lk.apply(op, u, v)
        except StructureError:
            continue
        got = impute_bn_live(lk)
        want = impute_bn(data, model=fit(lk.dag, data, method=lk.params))
        assert set(got.cells) == set(want.cells)
        for i in want.cells:
            assert np.array_equal(got.cells[i][0], want.cells[i][0])
            assert np.allclose(got.cells[i][1], want.cells[i][1], atol=1e-12)


def test_prototypes_live_restart_equals_select_prototypes_from_the_same_start():
    from bnfk_core.analyses.prototypes.selection import select_prototypes
    from bnfk_core.analyses.reuse import prototypes_live

    dag, data, rng = _problem(65, n_rows=200)
    lk = LiveKernel(dag, data)
    p0 = prototypes_live(lk, 8, seed=1)
    assert np.array_equal(
        p0.indices, select_prototypes(fit(dag, data, method="smoothed"), data, 8, seed=1).indices
    )
    op, u, v = _random_edit(lk, rng, valid=True)
    lk.apply(op, u, v)
    warm = prototypes_live(lk, 8, previous=p0.indices)
    ref = select_prototypes(fit(lk.dag, data, method=lk.params), data, 8, init=p0.indices)
    assert np.array_equal(warm.indices, ref.indices) and warm.value == pytest.approx(ref.value, abs=1e-12)
    assert warm.value <= p0.value + 1e-9 or warm.start_value >= warm.value


def test_adjusted_rand_is_bit_identical_to_scikit_learn():
    from sklearn.metrics import adjusted_rand_score

    from bnfk_core.analyses.segments.search import adjusted_rand

    rng = np.random.default_rng(0)
    for n, a, b in [(50, 2, 3), (300, 5, 2), (7, 1, 1), (40, 3, 40)]:
        t, p = rng.integers(0, a, n), rng.integers(0, b, n)
        assert adjusted_rand(t, p) == adjusted_rand_score(t, p)
    t = np.array([0, 0, 1, -1, 1, 2])
    p = np.array([1, 1, 0, 0, 2, 2])
    assert adjusted_rand(t, p) == adjusted_rand_score(t[t >= 0], p[t >= 0])


@pytest.mark.parametrize("seed", range(4))
def test_a_copy_edits_independently_of_its_original(seed):
    """LiveKernel.copy (one build shared by many sessions): edits of the copy leave the original's Gram
    matrix, structure and history as they were, and each matches the Gram matrix computed from scratch."""
    params = ("smoothed", "bdeu")[seed % 2]
    dag, data, rng = _problem(seed + 40, missing=0.1 if seed == 3 else 0.0)
    lk = LiveKernel(dag, data, params)
    K0 = lk.gram(copy=True)
    twin = lk.copy()
    applied = 0
    for _ in range(6):
        op, u, v = _random_edit(twin, rng, valid=True)
        twin.apply(op, u, v)
        applied += 1
        assert np.abs(twin.gram() - _scratch(twin.dag, data, params)).max() < TOL
    assert applied and twin.dag != dag
    assert lk.dag == dag and not lk.can_undo()
    assert np.array_equal(lk.gram(), K0)
    assert np.abs(lk.gram() - _scratch(dag, data, params)).max() < TOL
    op, u, v = _random_edit(lk, rng, valid=True)  # and the original still edits correctly on its own
    lk.apply(op, u, v)
    assert np.abs(lk.gram() - _scratch(lk.dag, data, params)).max() < TOL
    twin.undo()
    assert np.abs(twin.gram() - _scratch(twin.dag, data, params)).max() < TOL
