"""Structural EM's E-step is exact: expected family counts against a brute-force sum over every completion of
every row, and the same counts however the rows are cut into blocks (here, a local runner, Dask)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnfk_core.data.runners import LocalRunner
from bnfk_core.data.stream import WeightedData, distinct_rows
from bnfk_core.data.table import from_codes
from bnfk_core.learning.incomplete import (
    ExpectedScorer,
    em_parameters,
    expected_family_counts,
    expected_table,
    observed_score,
    structural_em,
)
from tests.helpers_bruteforce import (
    completions,
    joint_prob,
    parents_of,
    random_dag,
    random_model,
    random_rows,
)

CARDS = [2, 3, 2, 3, 2, 2]


def _setup(seed=1, n=60, missing=0.45):
    model = random_model(random_dag(len(CARDS), seed=seed, max_parents=2), CARDS, seed=seed)
    codes = random_rows(model, n, seed=seed + 10, missing=missing)
    weights = np.random.default_rng(seed).integers(1, 4, size=len(codes)).astype(float)
    return model, codes, weights


_COMPLETED: dict = {}


def _completed(model, codes, weights):
    """Every completion of every row with w_n P(completion | x_obs,n) (brute force: the chain rule, a
    loop)."""
    key = (id(model), codes.tobytes(), weights.tobytes())
    if key not in _COMPLETED:
        rows, mass = [], []
        for row, w in zip(codes, weights):
            C = completions(model, row)
            p = np.array([joint_prob(model, c) for c in C])
            rows.append(C)
            mass.append(w * p / p.sum())
        _COMPLETED.clear()
        _COMPLETED[key] = (np.concatenate(rows), np.concatenate(mass))
    return _COMPLETED[key]


def _brute(model, codes, weights, child, parents):
    """sum_n w_n sum_{completions c of row n} P(c | x_obs,n) [c's family configuration]: a (q, r) array."""
    C, mass = _completed(model, codes, weights)
    r = CARDS[child]
    j = np.zeros(len(C), dtype=np.int64)
    for q in parents:
        j = j * CARDS[q] + C[:, q]
    out = np.zeros((math.prod(CARDS[p] for p in parents), r))
    np.add.at(out, (j, C[:, child]), mass)
    return out


def _families(n, max_parents=3):
    for child in range(n):
        others = [v for v in range(n) if v != child]
        for k in range(max_parents + 1):
            yield from ((child, ps) for ps in itertools.combinations(others, k))


@pytest.mark.parametrize("cap", [math.inf, 4, 1])
def test_expected_counts_of_every_family_equal_brute_force(cap):
    """Every family with up to three parents: enumerated rows (cap inf), and wide rows counted from their
    joint posterior (clique margins and contractions across cliques; cap 1 makes every incomplete row
    wide)."""
    model, codes, weights = _setup()
    table, w, wc, ww = expected_table(model, codes, weights, max_completions=cap)
    if cap == 1:
        assert len(wc) == int((codes < 0).any(axis=1).sum()) > 0
    if cap == math.inf:
        assert len(wc) == 0
    scorer = ExpectedScorer(table, w, CARDS, "bic", model, wc, ww)
    assert scorer.n == round(weights.sum())
    for child, ps in _families(len(CARDS)):
        want = _brute(model, codes, weights, child, list(ps))
        want = want[want.sum(axis=1) > 0]
        np.testing.assert_allclose(scorer.counts(child, ps), want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cap", [math.inf, 1])
def test_batched_expected_counts_equal_one_family_passes(cap):
    """A search's batch (``prefetch``: the members' tables counted on numba's threads and read transposed)
    gives every family the very floats of its own pass, and the brute-force expected counts."""
    model, codes, weights = _setup(seed=5)
    table, w, wc, ww = expected_table(model, codes, weights, max_completions=cap)
    one = ExpectedScorer(table, w, CARDS, "bic", model, wc, ww)
    batched = ExpectedScorer(table, w, CARDS, "bic", model, wc, ww)
    fams = list(_families(len(CARDS)))
    batched.prefetch(fams)
    assert batched.passes == len({tuple(sorted((c, *ps))) for c, ps in fams})  # one pass a member set
    for child, ps in fams:
        got = batched.counts(child, ps)
        np.testing.assert_array_equal(got, one.counts(child, ps))
        want = _brute(model, codes, weights, child, list(ps))
        np.testing.assert_allclose(got, want[want.sum(axis=1) > 0], rtol=1e-9, atol=1e-12)
        assert batched(child, ps) == one(child, ps)


@pytest.mark.parametrize("cap", [math.inf, 1])
def test_em_family_counts_equal_brute_force(cap):
    """The network's own families: enumerated completions (cap inf) and the junction tree's clique beliefs
    (cap 1: every incomplete row goes through the tree)."""
    model, codes, weights = _setup(seed=3)
    got = expected_family_counts(model, codes, weights, max_completions=cap)
    for i in range(len(CARDS)):
        want = _brute(model, codes, weights, i, parents_of(model.dag, i))
        np.testing.assert_allclose(got[i], want, rtol=1e-9, atol=1e-12)


def _dask_runner():
    pytest.importorskip("distributed")
    from distributed import Client

    from bnfk_core.data.dask_runner import DaskRunner

    client = Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None)
    return client, DaskRunner(client)


@pytest.mark.parametrize("blocks", [1, 3, 7, 1000])
def test_counts_do_not_depend_on_the_blocks(blocks):
    model, codes, weights = _setup(seed=2, n=80)
    ref_t, ref_w, ref_c, ref_cw = expected_table(model, codes, weights, max_completions=4, block_rows=10**6)
    ref_f = expected_family_counts(model, codes, weights)
    t, w, c, cw = expected_table(
        model, codes, weights, max_completions=4, block_rows=blocks, runner=LocalRunner()
    )
    np.testing.assert_array_equal(t, ref_t)
    np.testing.assert_allclose(w, ref_w, rtol=1e-9)
    # the wide rows are the same rows (in block order), so every family count agrees too
    a = ExpectedScorer(ref_t, ref_w, CARDS, "bic", model, ref_c, ref_cw)
    b = ExpectedScorer(t, w, CARDS, "bic", model, c, cw)
    for child, ps in _families(len(CARDS), 2):
        np.testing.assert_allclose(b.counts(child, ps), a.counts(child, ps), rtol=1e-9, atol=1e-12)
    for x, y in zip(expected_family_counts(model, codes, weights, block_rows=blocks), ref_f):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)


def test_dask_gives_the_same_counts_and_network():
    model, codes, weights = _setup(seed=4, n=80)
    client, runner = _dask_runner()
    try:
        ref = expected_family_counts(model, codes, weights)
        got = expected_family_counts(model, codes, weights, runner=runner, block_rows=9)
        for x, y in zip(got, ref):
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
        t0, w0, _, _ = expected_table(model, codes, weights)
        t1, w1, _, _ = expected_table(model, codes, weights, runner=runner, block_rows=9)
        np.testing.assert_array_equal(t0, t1)
        np.testing.assert_allclose(w0, w1, rtol=1e-9)
        data = _weighted(codes, weights)
        r0, m0, h0 = structural_em(data, "hc", max_rounds=3)
        r1, m1, h1 = structural_em(data, "hc", max_rounds=3, runner=runner)
        assert r0.dag.sorted_arcs() == r1.dag.sorted_arcs()
        assert r1.score == pytest.approx(r0.score, rel=1e-9)
    finally:
        client.close()


def _weighted(codes, weights):
    names = [f"x{i}" for i in range(len(CARDS))]
    states = [[f"s{k}" for k in range(c)] for c in CARDS]
    return WeightedData(
        None,
        np.asarray(codes, dtype=np.int32),
        tuple(names),
        tuple(tuple(s) for s in states),
        None,
        "t",
        (),
        weights=np.asarray(weights, dtype=np.int64),
    )


def test_structural_em_is_the_same_on_rows_and_on_distinct_rows_in_any_blocks(monkeypatch):
    """The network and its observed-data score from the plain rows, and from their distinct rows with counts
    in blocks of 5 rows (the E-step in 5-row blocks): the same to 1e-9."""
    from bnfk_core.learning import estep

    model = random_model(random_dag(len(CARDS), seed=7, max_parents=2), CARDS, seed=7)
    codes = random_rows(model, 300, seed=8, missing=0.2)
    names = [f"x{i}" for i in range(len(CARDS))]
    plain = from_codes(codes, names, [[f"s{k}" for k in range(c)] for c in CARDS])
    r0, m0, _ = structural_em(plain, "hc", max_rounds=4)
    uniq, counts = distinct_rows(codes)
    monkeypatch.setattr(estep, "EM_BLOCK_ROWS", 5)
    monkeypatch.setattr(estep, "TABLE_BLOCK_ROWS", 5)
    r1, m1, _ = structural_em(_weighted(uniq, counts), "hc", max_rounds=4, runner=LocalRunner())
    assert r0.dag.sorted_arcs() == r1.dag.sorted_arcs()
    assert r1.score == pytest.approx(r0.score, rel=1e-9)
    for a, b in zip(m0.cpts, m1.cpts):
        np.testing.assert_allclose(a, b, rtol=1e-7)
    assert observed_score(m1, plain) == pytest.approx(r0.score, rel=1e-9)


def test_em_parameters_reach_the_same_fixed_point_in_blocks(monkeypatch):
    from bnfk_core.learning import estep

    model, codes, weights = _setup(seed=5, n=60, missing=0.3)
    data = _weighted(codes, weights)
    a = em_parameters(model.dag, data, tol=1e-9, max_iter=100)
    monkeypatch.setattr(estep, "EM_BLOCK_ROWS", 7)
    b = em_parameters(model.dag, data, tol=1e-9, max_iter=100, runner=LocalRunner())
    assert a.fit_info["em_iterations"] == b.fit_info["em_iterations"] > 1
    for x, y in zip(a.cpts, b.cpts):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)


def test_an_expected_table_too_big_for_the_memory_limit_skips_the_rounds_and_says_so():
    from bnfk_core.data.limits import memory_limit_set

    model, codes, weights = _setup(seed=6, n=80)
    data = _weighted(codes, weights)
    with memory_limit_set(4096):
        res, m, history = structural_em(data, "hc", max_rounds=3)
    assert len(history) == 1 and any("more than a quarter of the memory limit" in n for n in res.notes)
    assert m.fit_info["em_iterations"] > 0
    # the completed rows it names: each incomplete distinct row's joint states, capped, a row at a time
    from bnfk_core.learning.estep import MAX_COMPLETIONS

    want = sum(
        min(math.prod(CARDS[j] for j in np.flatnonzero(row < 0)), MAX_COMPLETIONS)
        for row in codes
        if (row < 0).any()
    )
    assert any(f"would hold {want:,} completed rows" in n for n in res.notes)
    res2, _, _ = structural_em(data, "hc", max_rounds=3)
    assert not any("memory limit" in n for n in res2.notes)


@pytest.mark.parametrize("by_pattern", [True, False])
def test_completed_rows_by_pattern_and_row_by_row_equal_the_brute_force_count(by_pattern, monkeypatch):
    """structural EM's expected-table rows: each incomplete row's joint missing states, capped; by
    missingness pattern (narrow tables) and row by row (wide ones), a column of one state included."""
    from bnfk_core.learning import incomplete
    from bnfk_core.learning.estep import MAX_COMPLETIONS

    rng = np.random.default_rng(3)
    cards = [1, 2, 5, 3, 9, 4, 7, 2]
    codes = np.stack([rng.integers(0, c, 500) for c in cards], axis=1)
    codes[rng.random(codes.shape) < 0.3] = -1
    codes[:3] = -1  # blank rows: 1 * 2 * 5 * ... joint states, beyond the cap
    want = sum(
        min(math.prod(cards[j] for j in np.flatnonzero(row < 0)), MAX_COMPLETIONS)
        for row in codes
        if (row < 0).any()
    )
    assert math.prod(cards) > MAX_COMPLETIONS
    monkeypatch.setattr(incomplete, "PATTERN_COUNT_COLUMNS", 20 if by_pattern else 0)
    assert incomplete._completed_rows(codes.astype(np.int8), cards) == want


@pytest.mark.parametrize("cap", [math.inf, 1])
def test_observed_loglik_equals_brute_force(cap, monkeypatch):
    """sum_n w_n log P(x_obs,n): log-sum-exp over enumerated completions, or the junction tree (cap 1)."""
    from bnfk_core.learning import estep
    from bnfk_core.learning.estep import loglik_part

    model, codes, weights = _setup(seed=9)
    monkeypatch.setattr(estep, "EM_MAX_COMPLETIONS", cap)
    want = sum(
        w * math.log(sum(joint_prob(model, c) for c in completions(model, row)))
        for row, w in zip(codes, weights)
    )
    assert loglik_part((codes, weights), model) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("cap", [math.inf, 4, 1])
def test_em_score_from_the_kept_jobs_equals_the_observed_score_and_brute_force(cap, monkeypatch):
    """The observed-data BIC that structural EM computes from the EM's own merged jobs equals a separate pass
    over the rows (observed_score) and sum_n w_n log P(x_obs,n) by enumeration, with rows completed by
    enumeration, by the junction tree (cap 1), or both (cap 4)."""
    from bnfk_core.learning import estep
    from bnfk_core.learning.incomplete import _em_scored

    model, codes, weights = _setup(seed=11, n=80)
    monkeypatch.setattr(estep, "EM_MAX_COMPLETIONS", cap)
    data = _weighted(codes, weights)
    fitted, got = _em_scored(model.dag, data, "bdeu", 1.0)
    ref = em_parameters(model.dag, data, "bdeu", 1.0)
    for a, b in zip(fitted.cpts, ref.cpts):
        np.testing.assert_array_equal(a, b)
    loglik = sum(
        w * math.log(sum(joint_prob(fitted, c) for c in completions(fitted, row)))
        for row, w in zip(codes, weights)
    )
    want = loglik - 0.5 * math.log(weights.sum()) * fitted.parameter_count()
    assert got == pytest.approx(want, rel=1e-12)
    assert got == pytest.approx(observed_score(fitted, data), rel=1e-12)
    assert got != pytest.approx(
        observed_score(model, data), rel=1e-6
    )  # the fitted network's score, not the start's


def test_em_items_hold_equal_work_and_every_row_once():
    """The CPTs' EM cuts its merged rows into items of at most ``work`` completions (a row costs the joint
    states of its missing cells), in the jobs' order, each row exactly once; the expected counts are the same
    as one item's."""
    from bnfk_core.learning.estep import PreparedJobs, job_blocks, touching_groups

    model, codes, weights = _setup(seed=4, n=200, missing=0.3)
    inc = (codes < 0).any(axis=1)
    jobs = touching_groups(model, codes[inc], np.asarray(weights, dtype=float)[inc])
    cards = model.cardinalities
    items = job_blocks(jobs, cards=cards, work=12)
    assert len(items) > 3
    for item in items:
        costs = [p[0].shape[0] * int(np.prod([cards[m] for m in p[2]])) for p in item]
        assert sum(costs) - costs[-1] < 12  # the last piece may pass the budget by less than one row
        assert sum(costs) < 12 + max(int(np.prod([cards[m] for m in p[2]])) for p in item)
    flat = [(p[0], p[1], tuple(p[2])) for item in items for p in item]
    whole = [(j[0], j[1], tuple(j[2])) for j in jobs]
    # the pieces, put back together job by job, are the jobs
    k = 0
    for codes_j, w_j, cells_j in whole:
        got_c, got_w = [], []
        while k < len(flat) and sum(len(x) for x in got_w) < len(w_j):
            assert flat[k][2] == cells_j
            got_c.append(flat[k][0])
            got_w.append(flat[k][1])
            k += 1
        np.testing.assert_array_equal(np.concatenate(got_c), codes_j)
        np.testing.assert_array_equal(np.concatenate(got_w), w_j)
    assert k == len(flat)
    one = job_blocks(jobs)
    assert len(one) == 1
    ref = PreparedJobs(model, one[0]).counts(model)
    parts = [PreparedJobs(model, item).counts(model) for item in items]
    for i, r in enumerate(ref):
        np.testing.assert_allclose(sum(p[i] for p in parts), r, rtol=1e-12, atol=1e-12)


def test_dask_em_adds_the_same_items_in_the_same_order(monkeypatch):
    """With items of little work (many of them), the CPTs' EM and its score on Dask equal one process's
    exactly:
    the items depend on the rows alone, and both add their results in the items' order."""
    from bnfk_core.learning import estep
    from bnfk_core.learning.incomplete import _em_scored

    monkeypatch.setattr(estep, "EM_ITEM_COMPLETIONS", 16)
    model, codes, weights = _setup(seed=6, n=120, missing=0.3)
    data = _weighted(codes, weights)
    client, runner = _dask_runner()
    try:
        m0, s0 = _em_scored(model.dag, data, "bdeu", 1.0)
        m1, s1 = _em_scored(model.dag, data, "bdeu", 1.0, runner=runner)
    finally:
        client.close()
    assert m0.fit_info["em_iterations"] == m1.fit_info["em_iterations"] > 1
    for a, b in zip(m0.cpts, m1.cpts):
        np.testing.assert_array_equal(a, b)
    assert s0 == s1


def _joined(pieces, model):
    return [job for piece in pieces for job in piece]


def _same_jobs(got, ref):
    assert len(got) == len(ref)
    for (c0, w0, m0), (c1, w1, m1) in zip(got, ref):
        np.testing.assert_array_equal(c0, c1)
        np.testing.assert_array_equal(w0, w1)
        assert (m0 is None and m1 is None) or list(m0) == list(m1)


@pytest.mark.parametrize("n_shards", [2, 3, 7, 50])
def test_pattern_shards_group_into_the_jobs_of_all_rows(n_shards):
    """The incomplete rows cut into pieces of whole missingness patterns: the pieces' jobs, one piece after
    the other, are the jobs of all the rows (the same representative rows, the same summed weights)."""
    from bnfk_core.learning.estep import pattern_shards, touching_groups

    model, codes, weights = _setup(seed=5, n=300, missing=0.3)
    inc = (codes < 0).any(axis=1)
    codes, weights = codes[inc], np.asarray(weights, dtype=float)[inc]
    shards = pattern_shards(codes, weights, n_shards)
    assert 1 < len(shards) <= n_shards
    assert sum(len(c) for c, _ in shards) == len(codes)
    for (a, _), (b, _) in zip(shards[:-1], shards[1:]):  # no pattern is cut between two pieces
        assert not ({tuple(r) for r in a < 0} & {tuple(r) for r in b < 0})
    got = [job for c, w in shards for job in touching_groups(model, c, w)]
    _same_jobs(got, touching_groups(model, codes, weights))


def test_pattern_shards_order_the_rows_by_their_missing_cells_block_by_block(monkeypatch):
    """The rows coded a block at a time (blocks of 7 rows here) come out in missingness_patterns' order: the
    patterns sorted by their missing cells, the first column the most significant, the rows of a pattern in
    row order -- the order missingness_patterns itself lists them in, by the same keys."""
    from bnfk_core.inference import elimination
    from bnfk_core.learning import estep

    monkeypatch.setattr(elimination, "PATTERN_KEY_ROWS", 7)
    _, codes, weights = _setup(seed=5, n=300, missing=0.3)
    inc = (codes < 0).any(axis=1)
    codes, weights = codes[inc], np.asarray(weights, dtype=float)[inc]
    got = np.concatenate([c for c, _ in estep.pattern_shards(codes, weights, 3)])
    bits = [tuple(int(b) for b in row) for row in codes < 0]
    want = sorted(range(len(codes)), key=lambda i: (bits[i], i))  # True > False: a missing first cell last
    np.testing.assert_array_equal(got, codes[want])
    listed = np.concatenate([rows for rows, _ in elimination.missingness_patterns(codes)])
    np.testing.assert_array_equal(listed, want)


def test_em_jobs_grouped_on_the_workers_are_one_process_items(monkeypatch):
    """keep_jobs on a two-worker cluster: the rows grouped into jobs on the workers, items cut here from the
    jobs' shapes, some items made of the pieces of two workers' shards -- the very items job_blocks cuts from
    the jobs of one process, in order."""
    from bnfk_core.learning import estep

    monkeypatch.setattr(estep, "EM_ITEM_COMPLETIONS", 40)
    monkeypatch.setattr(estep, "prepare_joined_part", _joined)  # the item's jobs as they are
    model, codes, weights = _setup(seed=6, n=300, missing=0.3)
    inc = (codes < 0).any(axis=1)
    codes, weights = codes[inc], np.asarray(weights, dtype=float)[inc]
    ref = estep.job_blocks(estep.touching_groups(model, codes, weights), cards=model.cardinalities)
    shards = estep.pattern_shards(codes, weights, 4)
    sizes = np.cumsum([len(c) for c, _ in shards])
    client, runner = _dask_runner()
    try:
        held = estep.keep_jobs(runner, model, codes, weights)
        got = client.gather(held)
    finally:
        client.close()
    assert len(shards) == 4 and len(ref) > 8
    # an item spans two shards when its rows, in pattern order, straddle a shard boundary
    ends = np.cumsum([sum(len(p[0]) for p in item) for item in ref])
    assert any(e not in set(ends) for e in sizes[:-1])
    assert len(got) == len(ref)
    for item, want in zip(got, ref):
        _same_jobs(item, want)


def _piece_and_worker(piece, offset):
    from distributed import get_worker

    return piece + offset, get_worker().address


def test_map_kept_runs_one_task_a_worker_on_its_pieces_in_order(monkeypatch):
    """map_kept: every kept piece's result, in the pieces' order, each computed on the worker holding the
    piece, by one task a worker (the client's cost is per task, the EM's items are many)."""
    client, runner = _dask_runner()
    try:
        kept = runner.send(range(7))
        holders = {k: client.who_has([f])[f.key][0] for k, f in enumerate(kept)}
        submitted = []
        real = client.submit
        monkeypatch.setattr(client, "submit", lambda *a, **k: submitted.append(a[0]) or real(*a, **k))
        got = runner.map_kept(_piece_and_worker, kept, (100,))
    finally:
        client.close()
    assert [value for value, _ in got] == [100 + k for k in range(7)]
    assert [where for _, where in got] == [holders[k] for k in range(7)]
    assert len(submitted) == len(set(holders.values())) == 2
