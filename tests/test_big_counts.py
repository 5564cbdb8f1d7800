"""Big tables: the compiled family counters, the single-pass streaming reader and the E-step's merged rows
give the numbers an independent computation gives (small tables only)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnfk_core.data.counts import code_matrix, counts_from_columns, dense_family_counts, family_counts
from bnfk_core.learning.available_case import AvailableCaseScorer
from bnfk_core.learning.scores import LocalScorer, score_from_counts
from tests.helpers_bruteforce import (
    completions,
    joint_prob,
    parents_of,
    random_dag,
    random_model,
    random_rows,
)

CARDS = [5, 3, 2, 4, 3, 2]


def _table(seed=1, n=400, missing=0.1):
    rng = np.random.default_rng(seed)
    codes = (rng.random((n, len(CARDS))) * CARDS).astype(np.int64)
    codes[rng.random(codes.shape) < missing] = -1
    return codes, rng.integers(1, 5, n)


def _families(max_parents=3):
    for child in range(len(CARDS)):
        others = [v for v in range(len(CARDS)) if v != child]
        for k in range(max_parents + 1):
            yield from ((child, ps) for ps in itertools.combinations(others, k))


def _loop_counts(codes, weights, child, parents):
    """A dict {(parent values..., child value): weighted count} over the rows observing the family (a plain
    loop)."""
    out: dict = {}
    for row, w in zip(codes, weights):
        vals = tuple(int(row[p]) for p in parents) + (int(row[child]),)
        if min(vals) >= 0:
            out[vals] = out.get(vals, 0) + w
    return out


def test_dense_counts_equal_a_plain_loop():
    codes, weights = _table()
    cols = code_matrix(codes, CARDS)
    for child, ps in _families():
        got = dense_family_counts(cols, child, list(ps), CARDS, weights.astype(float))
        want = np.zeros(got.shape)
        for vals, c in _loop_counts(codes, weights, child, ps).items():
            j = np.ravel_multi_index(vals[:-1], [CARDS[p] for p in ps]) if ps else 0
            want[j, vals[-1]] = c
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("weighted", [None, "int", "float"])
def test_dense_counts_of_few_rows_by_numpy_are_the_compiled_pass_floats(weighted, monkeypatch):
    """Over at most NUMPY_MAX_ROWS rows a family's dense table is np.bincount's (nothing compiled for a small
    table); the same floats, bit for bit, as the compiled pass (row order, missing cells left out)."""
    from bnfk_core.data import counts

    codes, w = _table(seed=4, n=counts.NUMPY_MAX_ROWS)
    weights = None if weighted is None else (w.astype(float) if weighted == "int" else w / 7.0)
    cols = code_matrix(codes, CARDS)
    fams = list(_families())
    small = [dense_family_counts(cols, c, list(ps), CARDS, weights) for c, ps in fams]
    monkeypatch.setattr(counts, "NUMPY_MAX_ROWS", counts.NUMPY_MAX_ROWS - 1)
    compiled = [dense_family_counts(cols, c, list(ps), CARDS, weights) for c, ps in fams]
    for a, b in zip(small, compiled):
        assert a.dtype == b.dtype == np.float64 and a.shape == b.shape and np.array_equal(a, b)
    assert any(np.any(a % 1) for a in small) == (weighted == "float")


@pytest.mark.parametrize("weighted", [None, "int", "float"])
def test_scorer_counts_and_scores_equal_the_numpy_counter(weighted):
    """LocalScorer (complete rows) and AvailableCaseScorer (every family on its rows) read the compiled
    counter; the counts and scores equal numpy's ``family_counts`` on the same rows (exactly with integer
    weights)."""
    codes, w = _table(seed=2)
    weights = None if weighted is None else (w if weighted == "int" else w * 0.37)
    complete = ~(codes < 0).any(axis=1)
    local = LocalScorer(codes, CARDS, "bdeu", weights=weights)
    avail = AvailableCaseScorer(codes, CARDS, "bic", weights=None if weighted == "float" else weights)
    n_all = len(codes) if weights is None or weighted == "float" else int(w.sum())
    for child, ps in _families():
        wc = None if weights is None else weights[complete]
        sub = codes[complete]
        want = counts_from_columns(
            sub[:, child], CARDS[child], [sub[:, p] for p in ps], [CARDS[p] for p in ps], len(sub), wc
        )  # numpy's bincount (family_counts takes integer weights only)
        got = local.counts(child, ps)
        if weighted == "float":
            np.testing.assert_allclose(got, want, rtol=1e-12)
        else:
            np.testing.assert_array_equal(got, want)
        wa = None if weighted in (None, "float") else w
        rows = ~(codes[:, [child, *ps]] < 0).any(axis=1)
        want_a = family_counts(codes, CARDS, child, ps, weights=wa)
        np.testing.assert_array_equal(avail.counts(child, ps), want_a)
        n_f = int(rows.sum()) if wa is None else int(wa[rows].sum())
        assert avail.family_n(child, ps) == n_f
        q = math.prod(CARDS[p] for p in ps)
        assert avail(child, ps) == pytest.approx(
            score_from_counts(want_a, CARDS[child], q, n_f, "bic", 1.0) * n_all / n_f, rel=1e-12
        )


def test_streaming_reader_in_one_pass_equals_two_passes(tmp_path, monkeypatch):
    """read_counts keeps each chunk's rows in its own codes during the levels pass; forcing the second reading
    (as when those codes would not fit in 62 bits) gives the same distinct rows, counts and states."""
    from bnfk_core.data import stream

    rng = np.random.default_rng(3)
    path = tmp_path / "t.csv"
    rows = ["a,b,c,n"] + [
        f"{rng.choice(['x', 'y', ''])},{rng.choice(['1', '2', ' 3', 'NA'])},"
        f"{rng.choice(['p', 'q'])},{rng.normal():.3f}"
        for _ in range(500)
    ]
    path.write_text("\n".join(rows) + "\n")
    one = stream.read_counts(str(path), chunksize=37, discretize_bins=3)
    monkeypatch.setattr(
        stream,
        "chunk_levels_rows",
        lambda df, columns, row0=0: (stream.chunk_levels(df, columns, row0), None),
    )
    two = stream.read_counts(str(path), chunksize=37, discretize_bins=3)
    assert one.states == two.states and one.variables == two.variables
    np.testing.assert_array_equal(one.codes, two.codes)
    np.testing.assert_array_equal(one.weights, two.weights)
    assert one.n_rows == two.n_rows == 500


def test_missingness_patterns_as_numpy_unique_rows_gives_them():
    from bnfk_core.inference.queries import missingness_patterns

    rng = np.random.default_rng(4)
    for n in (1, 6, 62, 70):
        codes = rng.integers(0, 3, (300, n))
        codes[rng.random(codes.shape) < 0.1] = -1
        miss = codes < 0
        with_ = np.flatnonzero(miss.any(axis=1))
        pats = np.unique(miss[with_], axis=0)
        got = list(missingness_patterns(codes))
        assert len(got) == len(pats)
        for (rows, missing), pat in zip(got, pats):
            np.testing.assert_array_equal(missing, np.flatnonzero(pat))
            np.testing.assert_array_equal(rows, with_[(miss[with_] == pat).all(axis=1)])


def test_one_em_iteration_equals_the_estimator_of_brute_force_expected_counts():
    """em_parameters with max_iter=1 from a given network: theta = BDeu-smoothed E[N_ijk | x_obs, theta0], the
    expectation a brute-force sum over every completion of every row (rows merged by context and missing cells
    in independent groups inside; several missing cells a row here)."""
    from bnfk_core.data.stream import WeightedData
    from bnfk_core.learning.incomplete import em_parameters
    from bnfk_core.network.model import estimate_cpt

    cards = [2, 3, 2, 3, 2, 2, 3]
    model = random_model(random_dag(len(cards), seed=11, max_parents=2), cards, seed=11)
    codes = random_rows(model, 120, seed=12, missing=0.35)
    codes = np.concatenate([codes, codes[:40]])  # repeated rows: merged contexts
    weights = np.random.default_rng(13).integers(1, 4, size=len(codes))
    data = WeightedData(
        None,
        codes.astype(np.int32),
        tuple(f"x{i}" for i in range(len(cards))),
        tuple(tuple(f"s{k}" for k in range(c)) for c in cards),
        None,
        "t",
        (),
        weights=weights,
    )
    got = em_parameters(model.dag, data, "bdeu", 1.0, max_iter=1, init=model)
    for i in range(len(cards)):
        ps = parents_of(model.dag, i)
        want = np.zeros((math.prod(cards[p] for p in ps), cards[i]))
        for row, w in zip(codes, weights):
            C = completions(model, row)
            p = np.array([joint_prob(model, c) for c in C])
            for c, pc in zip(C, w * p / p.sum()):
                j = np.ravel_multi_index([c[q] for q in ps], [cards[q] for q in ps]) if ps else 0
                want[j, c[i]] += pc
        np.testing.assert_allclose(got.cpts[i], estimate_cpt(want, "bdeu", 1.0), rtol=1e-10, atol=1e-13)
