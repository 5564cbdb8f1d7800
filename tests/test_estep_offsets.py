"""The CPTs' EM's compiled completions with every completion's family offsets made in advance
(``bnfk_core.learning.completions.complete_offsets``): the same floats as the loop that decodes every
completion's digits (``complete_cells``), and the network's expected counts and log-likelihood against a
brute-force sum over every completion of every row."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bnfk_core.learning import completions as ck
from bnfk_core.learning import estep
from bnfk_core.learning.estep import PreparedJobs, observed_counts, touching_groups
from tests.helpers_bruteforce import (
    completions,
    joint_prob,
    parents_of,
    random_dag,
    random_model,
    random_rows,
)

CARDS = [2, 3, 4, 2, 3, 2, 3]


def _setup(seed, n=80, missing=0.4):
    model = random_model(random_dag(len(CARDS), seed=seed, max_parents=3), CARDS, seed=seed)
    codes = random_rows(model, n, seed=seed + 10, missing=missing)
    weights = np.random.default_rng(seed).integers(1, 5, size=len(codes)).astype(float)
    return model, codes, weights


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_offsets_kernel_gives_the_same_floats_as_the_digit_loop(seed):
    model, codes, weights = _setup(seed)
    inc = (codes < 0).any(axis=1)
    jobs = touching_groups(model, codes[inc], weights[inc])
    assert jobs
    f = ck.Families(model)
    logt = f.logs(model)
    n_multi = 0
    for jc, jw, cells in jobs:
        assert cells is not None
        jc = np.ascontiguousarray(jc, dtype=np.int64)
        cells_a, ccards, touch, mpos = estep._job_arrays(model, f, cells)
        n_multi += len(cells_a) > 1
        delta = ck.completion_offsets(f, ccards, touch, mpos)
        assert delta.shape == (len(touch), math.prod(int(c) for c in ccards))
        want_out, got_out = np.zeros(int(f.offset[-1])), np.zeros(int(f.offset[-1]))
        want_lse, got_lse = np.empty(len(jc)), np.empty(len(jc))
        assert ck.complete_cells(
            jc,
            jw,
            cells_a,
            ccards,
            touch,
            mpos,
            f.members,
            f.strides,
            f.length,
            f.offset,
            logt,
            want_out,
            want_lse,
        )
        assert ck.complete_offsets(
            jc, jw, touch, mpos, delta, f.members, f.strides, f.length, f.offset, logt, got_out, got_lse
        )
        assert np.array_equal(got_out, want_out) and want_out.sum() > 0
        assert np.array_equal(got_lse, want_lse)
    assert n_multi > 0  # some job completes two or more cells at once


@pytest.mark.parametrize("seed", [4, 5])
def test_prepared_jobs_counts_and_loglik_equal_brute_force(seed):
    """sum_n w_n sum_c P(c | x_obs,n) [c's family configuration] and sum_n w_n log P(x_obs,n), every row's
    completions listed and scored by the chain rule."""
    model, codes, weights = _setup(seed, n=50)
    inc = (codes < 0).any(axis=1)
    prepared = PreparedJobs(model, touching_groups(model, codes[inc], weights[inc]), memo={})
    counts = prepared.counts(model)
    # every row's families that it observes whole, counted once (complete rows and incomplete ones alike)
    base = observed_counts(model, codes, weights)
    loglik = prepared.loglik(model)
    with np.errstate(divide="ignore"):
        loglik += sum(float((b * np.log(c)).sum()) for b, c in zip(base, model.cpts))
    want_ll = 0.0
    want = [np.zeros(c.shape) for c in model.cpts]
    for row, w in zip(codes, weights):
        C = completions(model, row)
        p = np.array([joint_prob(model, c) for c in C])
        want_ll += w * math.log(p.sum())
        for c, pc in zip(C, p / p.sum()):
            for i in range(len(CARDS)):
                j = 0
                for q in parents_of(model.dag, i):
                    j = j * CARDS[q] + int(c[q])
                want[i][j, int(c[i])] += w * pc
    for i in range(len(CARDS)):
        np.testing.assert_allclose(counts[i] + base[i], want[i], rtol=1e-12, atol=1e-12)
    assert abs(loglik - want_ll) <= 1e-9 * abs(want_ll)


def test_groups_beyond_the_offsets_limit_take_the_digit_loop_with_the_same_floats(monkeypatch):
    model, codes, weights = _setup(6)
    inc = (codes < 0).any(axis=1)
    jobs = touching_groups(model, codes[inc], weights[inc])
    want = PreparedJobs(model, jobs, memo={})
    assert all(job[4] is not None for job in want.jobs)
    monkeypatch.setattr(estep, "OFFSETS_MAX_CELLS", 0)
    got = PreparedJobs(model, jobs, memo={})
    assert all(job[4] is None for job in got.jobs)
    for a, b in zip(got.counts(model), want.counts(model)):
        assert np.array_equal(a, b)
    assert got.loglik(model) == want.loglik(model)


@pytest.mark.parametrize("weighted", [False, True])
def test_em_starts_from_the_same_available_case_fit(weighted, monkeypatch):
    """em_parameters' first network, counted by the compiled pass over the rows that observe each family
    whole, is fit's, CPT for CPT and float for float (max_iter=0: the start itself), and EM from it reaches
    the same CPTs as EM started from fit's network."""
    from bnfk_core.data.stream import WeightedData, distinct_rows
    from bnfk_core.data.table import from_codes
    from bnfk_core.learning import incomplete
    from bnfk_core.learning.available_case import AvailableCaseScorer
    from bnfk_core.learning.incomplete import em_parameters
    from bnfk_core.network.model import fit

    model, codes, weights = _setup(7, n=120)
    names, states = [f"x{i}" for i in range(len(CARDS))], [[str(s) for s in range(c)] for c in CARDS]
    data = from_codes(codes, names, states)
    if weighted:  # distinct rows with their counts, as a streamed file gives them (1-byte codes)
        uniq, counts = distinct_rows(codes)
        data = WeightedData(
            None,
            np.asarray(uniq, dtype=np.int8),
            tuple(names),
            tuple(tuple(s) for s in states),
            None,
            "t",
            (),
            weights=np.asarray(counts, dtype=np.int64),
        )
    dag = model.dag
    # the available-case scorer of a search: its kept tables give the same counts (none counted again)
    searched = AvailableCaseScorer(data.codes, data.cardinalities, weights=getattr(data, "weights", None))
    searched.prefetch([(i, tuple(ps)) for i, ps in enumerate(dag.parent_indices())])
    for method in ("bdeu", "ml", "smoothed"):
        want = fit(dag, data, method=method, pseudo_count=1.0)
        for counted in (None, searched):
            if counted is not None:  # every family from the scorer's tables: no pass over the rows
                monkeypatch.setattr(incomplete, "dense_family_counts", None)
            got = em_parameters(dag, data, method, 1.0, max_iter=0, counted=counted)
            monkeypatch.undo()
            assert all(np.array_equal(a, b) for a, b in zip(got.cpts, want.cpts))
            assert {k: got.fit_info[k] for k in want.fit_info} == want.fit_info
        if method == "ml":  # zeros in the CPTs: EM from them stops on a row of probability zero
            continue
        a = em_parameters(dag, data, method, 1.0, max_iter=3)
        b = em_parameters(dag, data, method, 1.0, max_iter=3, init=want)
        assert all(np.array_equal(x, y) for x, y in zip(a.cpts, b.cpts))


def test_the_offsets_memo_keeps_the_groups_with_most_rows_within_its_limit(monkeypatch):
    model, codes, weights = _setup(8, n=200)
    inc = (codes < 0).any(axis=1)
    items = estep.job_blocks(touching_groups(model, codes[inc], weights[inc]), rows=40)
    want = [PreparedJobs(model, item, memo={}) for item in items]
    rows, size = {}, {}
    for item in items:
        for jc, _, cells in item:
            key = tuple(int(c) for c in cells)
            rows[key] = rows.get(key, 0) + len(jc)
            size[key] = len(estep._shape(model).touching(key)) * math.prod(CARDS[c] for c in key)
    order = sorted(rows, key=lambda k: (-rows[k], k))
    limit = size[order[0]] + size[order[1]]
    monkeypatch.setattr(estep, "OFFSETS_TOTAL_CELLS", limit)
    memo = estep.offsets_memo(model, items)
    assert {order[0], order[1]} <= memo["_chosen"] and sum(size[k] for k in memo["_chosen"]) <= limit
    assert len(memo["_chosen"]) < len(rows)
    got = [PreparedJobs(model, item, memo=memo) for item in items]
    for g, w in zip(got, want):
        for a, b in zip(g.counts(model), w.counts(model)):
            assert np.array_equal(a, b)
        assert g.loglik(model) == w.loglik(model)
