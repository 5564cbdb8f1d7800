"""The search's batched family counts: tables of several families in one call, on threads, and the
available-case scorer's tables shared by the families with the same members -- against brute-force sums over
the rows."""

import itertools

import numpy as np
import pytest

from bnfk_core.data.counts import code_matrix, family_counts, family_tables, shifted_matrix
from bnfk_core.learning.available_case import AvailableCaseScorer


def _data(seed=0, n=400, cards=(3, 2, 4, 5, 2, 3, 2, 2), p_missing=0.15):
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, c, n) for c in cards], axis=1)
    codes[rng.random(codes.shape) < p_missing] = -1
    return codes, list(cards), rng.integers(1, 5, n)


def _brute(codes, weights, members, cards):
    """Sum of the weights of the rows observing every member, by state of the members (a Python loop)."""
    out = np.zeros([cards[m] for m in members])
    for row, w in zip(codes, weights):
        cells = row[list(members)]
        if (cells >= 0).all():
            out[tuple(cells)] += w
    return out


#: (threads, rows numpy counts): numpy's counting of small batches, and the compiled pass on 1 and 2 threads
WAYS = [(1, None), (1, 0), (2, 0)]


def _counting(monkeypatch, numpy_rows):
    """Count the way ``numpy_rows`` says: None leaves :data:`NUMPY_MAX_ROWS` (the test tables are numpy's), 0
    sends every batch to the compiled pass."""
    from bnfk_core.data import counts

    if numpy_rows is not None:
        monkeypatch.setattr(counts, "NUMPY_MAX_ROWS", numpy_rows)


@pytest.mark.parametrize("threads, numpy_rows", WAYS)
def test_family_tables_equal_brute_force_sums(threads, numpy_rows, monkeypatch):
    _counting(monkeypatch, numpy_rows)
    codes, cards, w = _data()
    sh = shifted_matrix(code_matrix(codes, cards), cards)
    fams = [[0], [1, 0], [2, 0, 3], [3, 1, 2, 0], [4, 5, 6, 7, 0], [7, 6, 5, 4, 3, 2], [0, 1, 2, 3, 4, 5, 6]]
    got = family_tables(sh, fams, cards, w.astype(float), threads=threads)
    for f, t in zip(fams, got):
        assert t.shape == tuple(cards[m] for m in f)
        assert np.array_equal(t, _brute(codes, w, f, cards))
    unit = family_tables(sh, fams[:3], cards, None, threads=threads)
    for f, t in zip(fams[:3], unit):
        assert np.array_equal(t, _brute(codes, np.ones(len(codes)), f, cards))


def test_shifted_matrix_codes_missing_as_the_cardinality():
    codes, cards, _ = _data(n=50)
    sh = shifted_matrix(code_matrix(codes, cards), cards)
    assert sh.dtype == np.uint8
    assert np.array_equal(sh.T, np.where(codes < 0, np.array(cards)[None, :], codes))


def test_available_case_counts_from_shared_tables_equal_family_counts():
    """Every family of up to three parents: the scorer's counts (batched, a table per member set, transposed)
    equal family_counts on the rows observing the family, and n_f their weighted number, in any order of
    asking."""
    codes, cards, w = _data(seed=3)
    sc = AvailableCaseScorer(codes, cards, "bic", weights=w)
    keys = [
        (c, ps)
        for c in range(len(cards))
        for k in range(4)
        for ps in itertools.combinations([v for v in range(len(cards)) if v != c], k)
    ]
    rng = np.random.default_rng(0)
    sc.prefetch([keys[i] for i in rng.permutation(len(keys))[: len(keys) // 2]])
    for child, ps in keys:
        ref = family_counts(codes, cards, child, ps, weights=w)
        got = sc.counts(child, ps)
        assert got.dtype == np.int64 and np.array_equal(got, ref)
        rows = (codes[:, [child, *ps]] >= 0).all(axis=1)
        assert sc.family_n(child, ps) == int(w[rows].sum())
    # one pass per member set, not per family
    assert sc.passes == len({tuple(sorted((c, *ps))) for c, ps in keys})


def test_available_case_scores_unchanged_by_batching():
    """The same local scores whether the families come one at a time or in batches."""
    codes, cards, w = _data(seed=5)
    one = AvailableCaseScorer(codes, cards, "bic", weights=w)
    many = AvailableCaseScorer(codes, cards, "bic", weights=w)
    keys = [
        (c, ps)
        for c in range(len(cards))
        for ps in itertools.combinations([v for v in range(len(cards)) if v != c], 2)
    ]
    many.prefetch(keys)
    for c, ps in keys:
        assert one(c, ps) == many(c, ps)


def test_dask_counter_on_worker_blocks_equals_one_process(spawn_safe_main):
    """The search's batches counted on row blocks held by two worker processes: the same tables as one
    process, the same available-case scores, and structural EM on that runner (its CPTs' EM jobs kept on the
    workers) the same network, score (1e-9 relative) and CPTs."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from bnfk_core.data.dask_runner import DaskRunner
    from bnfk_core.data.stream import WeightedData
    from bnfk_core.learning.incomplete import structural_em

    codes, cards, w = _data(seed=7, n=600)
    sh = shifted_matrix(code_matrix(codes, cards), cards)
    fams = [[0, 1], [2, 0, 3], [3, 1, 2, 0], [7, 6, 5, 4, 3, 2]]
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        runner = DaskRunner(client)
        count = runner.family_counter(sh, w.astype(float), cards)
        assert len(count.blocks) == 2  # one block of rows a worker
        for f, t in zip(fams, count(fams)):
            assert np.array_equal(t, _brute(codes, w, f, cards))
        local = AvailableCaseScorer(codes, cards, "bic", weights=w)
        dist = AvailableCaseScorer(codes, cards, "bic", weights=w, counter=runner.family_counter)
        keys = [
            (c, ps)
            for c in range(len(cards))
            for ps in itertools.combinations([v for v in range(len(cards)) if v != c], 2)
        ]
        dist.prefetch(keys)
        for c, ps in keys:
            assert np.array_equal(dist.counts(c, ps), local.counts(c, ps)) and dist(c, ps) == local(c, ps)
        names = [f"x{i}" for i in range(len(cards))]
        states = tuple(tuple(f"s{k}" for k in range(c)) for c in cards)
        data = WeightedData(
            None, codes.astype(np.int32), tuple(names), states, None, "t", (), weights=w.astype(np.int64)
        )
        r1, m1, _ = structural_em(data, "hc", max_rounds=2, runner=runner)
        # the CPTs' EM with its jobs kept on the workers: the same CPTs and score as one process
        held = runner.keep(len, [[1, 2], [3]])
        assert runner.map_kept(lambda k, a: k + a, held, (10,)) == [12, 11]
    r0, m0, _ = structural_em(data, "hc", max_rounds=2)
    assert r0.dag.sorted_arcs() == r1.dag.sorted_arcs()
    assert r1.score == pytest.approx(r0.score, rel=1e-9)
    for a, b in zip(m0.cpts, m1.cpts):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("weighted", [False, True])
def test_complete_row_scorer_batches_give_the_same_floats(weighted):
    """The complete-row scorer's batch (``prefetch``: members' tables on numba's threads, read transposed)
    gives every family the very counts and score of its own pass, the brute-force sums over the complete rows,
    and a search with batches finds the network of a search without."""
    from bnfk_core.learning.hill_climb import hill_climb
    from bnfk_core.learning.scores import LocalScorer

    codes, cards, w = _data(seed=3, p_missing=0.05)
    rng = np.random.default_rng(4)
    for a, b in ((0, 5), (2, 3), (3, 7), (1, 6)):  # dependence, so the search has arcs to find
        keep = (codes[:, a] >= 0) & (codes[:, b] >= 0) & (rng.random(len(codes)) < 0.8)
        codes[keep, b] = codes[keep, a] % cards[b]
    weights = w if weighted else None
    one = LocalScorer(codes, cards, "bic", weights=weights)
    batched = LocalScorer(codes, cards, "bic", weights=weights)
    fams = [
        (c, ps)
        for c in range(len(cards))
        for k in range(3)
        for ps in itertools.combinations([v for v in range(len(cards)) if v != c], k)
    ]
    batched.prefetch(fams)
    assert batched.passes == len({tuple(sorted((c, *ps))) for c, ps in fams})
    complete = ~(codes < 0).any(axis=1)
    rows, rw = codes[complete], (w[complete] if weighted else np.ones(int(complete.sum())))
    for c, ps in fams:
        got = batched.counts(c, ps)
        np.testing.assert_array_equal(got, one.counts(c, ps))
        want = _brute(rows, rw, (*ps, c), cards).reshape(-1, cards[c])
        np.testing.assert_array_equal(got, want[want.sum(axis=1) > 0])
        assert batched(c, ps) == one(c, ps)
    plain = LocalScorer(codes, cards, "bic", weights=weights)
    plain.prefetch = None  # a search then counts one family at a time
    names = [f"x{i}" for i in range(len(cards))]
    a = hill_climb(LocalScorer(codes, cards, "bic", weights=weights), names, seed=0)
    b = hill_climb(plain, names, seed=0)
    assert a == b and sum(map(len, a)) > 0


def test_small_batches_run_on_one_thread(monkeypatch):
    """A batch below THREADS_MIN_PASSES row passes runs the one-thread compilation (no parallel region); at or
    above it, the parallel one on numba's threads (the tables are the same either way: the tests above)."""
    import numba

    from bnfk_core.data import compiled_counts, counts

    monkeypatch.setattr(counts, "NUMPY_MAX_ROWS", 0)  # the compiled pass (the 64 rows would be numpy's)
    ran = []
    cc = compiled_counts
    serial, parallel = cc.family_tables_serial, cc.family_tables_parallel
    monkeypatch.setattr(cc, "family_tables_serial", lambda *a: (ran.append("serial"), serial(*a)))
    monkeypatch.setattr(
        cc, "family_tables_parallel", lambda *a: (ran.append(numba.get_num_threads()), parallel(*a))
    )
    codes, cards, _ = _data(seed=1, n=64)
    shifted = shifted_matrix(code_matrix(codes, cards), cards)
    small = family_tables(shifted, [[0, 1], [2, 3]], cards)
    assert ran == ["serial"]
    ran.clear()
    monkeypatch.setattr(counts, "THREADS_MIN_PASSES", 64 * 2)
    threads = min(numba.get_num_threads(), numba.config.NUMBA_NUM_THREADS, 2)
    large = family_tables(shifted, [[0, 1], [2, 3]], cards)
    assert ran == ["serial" if threads == 1 else threads]
    for a, b in zip(small, large):
        np.testing.assert_array_equal(a, b)


def test_batches_of_few_rows_are_counted_by_numpy_to_the_same_floats(monkeypatch):
    """A batch over at most NUMPY_MAX_ROWS rows runs no compiled pass (a fresh process compiles nothing for
    it); its tables are the compiled pass's, bit for bit, with and without weights, also for a family
    counted without the extra states."""
    from bnfk_core.data import compiled_counts, counts

    ran = []
    for name in ("family_tables_serial", "family_tables_parallel"):
        real = getattr(compiled_counts, name)
        monkeypatch.setattr(
            compiled_counts, name, lambda *a, real=real, name=name: (ran.append(name), real(*a))
        )
    codes, cards, w = _data(seed=5, n=counts.NUMPY_MAX_ROWS, cards=(2,) * 14 + (3, 5), p_missing=0.05)
    sh = shifted_matrix(code_matrix(codes, cards), cards)
    fams = [[15], [14, 15], [3, 0, 14], list(range(14)), [15, 14, 0, 1, 2, 3, 4, 5]]
    assert counts.table_cells(cards, fams[3]) > counts.COMPACT_MIN_CELLS
    for weights in (None, w.astype(float) / 3):
        mine = family_tables(sh, fams, cards, weights)
        assert ran == []
        monkeypatch.setattr(counts, "NUMPY_MAX_ROWS", counts.NUMPY_MAX_ROWS - 1)
        compiled = family_tables(sh, fams, cards, weights)
        assert ran == ["family_tables_serial"]
        ran.clear()
        monkeypatch.setattr(counts, "NUMPY_MAX_ROWS", counts.NUMPY_MAX_ROWS + 1)
        for a, b in zip(mine, compiled):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("weights", ["none", "whole", "fractional"])
def test_tables_summed_out_of_a_larger_kept_one_are_the_counted_floats(weights):
    """A member set one complete column smaller than a kept table is summed out of it, not counted: the
    table equals a direct pass bit for bit; a column with missing cells is never summed out (a pass counts
    the rows it leaves blank), and fractional weights always get a pass."""
    from bnfk_core.learning.member_tables import MemberTables

    rng = np.random.default_rng(8)
    n_rows, cards = 600, [3, 2, 4, 2, 3]
    codes = np.column_stack([rng.integers(0, r, n_rows) for r in cards])
    codes[rng.random(n_rows) < 0.2, 1] = -1  # column 1 has missing cells
    w = {
        "none": None,
        "whole": rng.integers(1, 4, n_rows).astype(float),
        "fractional": rng.random(n_rows),
    }[weights]
    colmat = code_matrix(codes, cards)
    kept = MemberTables(colmat, cards, w)
    big = [tuple(sorted(m)) for m in itertools.combinations(range(5), 3)]
    small = [tuple(sorted(m)) for m in itertools.combinations(range(5), 2)]
    kept.prefetch(big)
    kept.prefetch(small)
    shifted = shifted_matrix(colmat, cards)
    for m in big + small:
        (direct,) = family_tables(shifted, [list(m)], cards, w)
        got = kept._tables[m]
        assert got.shape == direct.shape and np.array_equal(got, direct), m
    if weights == "fractional":
        assert kept.summed == 0 and kept.passes == len(big) + len(small)
    else:
        # every pair lies in a kept triple with a complete third column (column 1 alone has blanks)
        assert kept.summed == len(small) and kept.passes == len(big)


@pytest.mark.parametrize("threads, numpy_rows", WAYS)
def test_wide_families_counted_without_the_extra_states_equal_brute_force(threads, numpy_rows, monkeypatch):
    """A family of 13 binary members has 3^13 = 1.6 million cells with one extra (missing) state a member and
    8,192 without: it is counted into the small table, every row tested for a missing member.  The tables of a
    batch mixing both kinds equal the brute-force sums, and the very floats of the one-pass-per-state loop."""
    from bnfk_core.data import counts

    _counting(monkeypatch, numpy_rows)
    codes, cards, w = _data(seed=3, n=600, cards=(2,) * 14 + (3, 4), p_missing=0.03)
    sh = shifted_matrix(code_matrix(codes, cards), cards)
    fams = [
        list(range(13)),
        [14, 15, 0],
        list(range(15, -1, -1)),
        [15, 3, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 2],
    ]
    assert counts.table_cells(cards, fams[0]) > counts.COMPACT_MIN_CELLS
    got = family_tables(sh, fams, cards, w.astype(float), threads=threads)
    for f, t in zip(fams, got):
        assert t.shape == tuple(cards[m] for m in f)
        assert t.flags.c_contiguous
        assert np.array_equal(t, _brute(codes, w, f, cards))
        assert t.sum() > 0
    monkeypatch.setattr(counts, "COMPACT_MIN_CELLS", 1 << 40)  # every family with the extra states
    for a, b in zip(family_tables(sh, fams, cards, w.astype(float), threads=threads), got):
        assert np.array_equal(a, b)


def test_packed_task_arguments_survive_pickling_even_when_empty():
    """A task argument sent packed (a batch of families, an item's job pieces) is the same after pickling --
    an empty list too (pickle skips ``__setstate__`` for a false state)."""
    import pickle

    from bnfk_core.data.dask_runner import _Packed

    for value in ([], [[0, 2], [1]], ()):
        assert pickle.loads(pickle.dumps(_Packed(value))).value == value
