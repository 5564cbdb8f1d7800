"""Learning from incomplete tables (bnfk_core.learning.incomplete) against brute force and scipy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hst
from scipy.optimize import minimize

from bnfk_core import registry
from bnfk_core.data.stream import WeightedData, distinct_rows
from bnfk_core.data.table import from_codes
from bnfk_core.errors import StructureError
from bnfk_core.inference.queries import joint_posteriors, missingness_patterns
from bnfk_core.learning.incomplete import (
    AvailableCaseScorer,
    em_parameters,
    expected_table,
    learn_network,
    observed_score,
    structural_em,
)
from bnfk_core.network.dag import DAG
from tests.helpers_bruteforce import (
    completions,
    joint_prob,
    parents_of,
    random_dag,
    random_model,
    random_rows,
)


def _data(codes, cards):
    names = [f"x{i}" for i in range(len(cards))]  # the names of helpers_bruteforce.random_dag
    return from_codes(np.asarray(codes), names, [[f"s{k}" for k in range(c)] for c in cards])


def _brute_counts(codes, cards, child, parents, weights=None):
    """{(parent values..., child value): count} and the rows used, by a Python loop over rows."""
    out, used = {}, 0
    for n, row in enumerate(codes):
        fam = [row[p] for p in parents] + [row[child]]
        if min(fam) < 0:
            continue
        w = 1 if weights is None else int(weights[n])
        out[tuple(int(x) for x in fam)] = out.get(tuple(int(x) for x in fam), 0) + w
        used += w
    return out, used


# ---------------------------------------------------------------------- available case
@pytest.mark.parametrize("seed", range(6))
def test_available_case_counts_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    cards = [2, 3, 2, 4, 3]
    codes = np.column_stack([rng.integers(0, c, 60) for c in cards])
    codes[rng.random(codes.shape) < 0.25] = -1
    weights = rng.integers(1, 4, 60) if seed % 2 else None
    sc = AvailableCaseScorer(codes, cards, "bic", weights=weights)
    for child in range(5):
        for k in range(3):
            for parents in itertools.combinations([v for v in range(5) if v != child], k):
                brute, used = _brute_counts(codes, cards, child, parents, weights)
                counts = sc.counts(child, parents)
                assert sc.family_n(child, parents) == used
                assert counts.sum() == used
                # every observed parent configuration's row equals the brute counts
                configs = sorted({key[:-1] for key in brute})
                assert counts.shape == (len(configs), cards[child])
                for j, cfg in enumerate(configs):
                    assert [brute.get(cfg + (x,), 0) for x in range(cards[child])] == list(counts[j])
                # the local score: BIC on those rows, scaled to N rows
                ll = sum(
                    c * math.log(c / sum(brute.get(key[:-1] + (x,), 0) for x in range(cards[child])))
                    for key, c in brute.items()
                )
                q = math.prod(cards[p] for p in parents)
                N = len(codes) if weights is None else int(weights.sum())
                want = (ll - 0.5 * math.log(used) * q * (cards[child] - 1)) * N / used
                assert sc(child, parents) == pytest.approx(want, rel=1e-10, abs=1e-9)


@pytest.mark.parametrize("weighted", [False, True])
def test_available_case_counts_are_family_counts_bit_for_bit(weighted):
    """AvailableCaseScorer.counts (the family's columns cut to its rows, the rows' mask shared with family_n)
    is the very array of scores.family_counts on all rows, whether family_n ran first or not, whatever the
    parents' order."""
    from bnfk_core.learning.scores import family_counts

    rng = np.random.default_rng(4)
    cards = [2, 3, 2, 4, 3, 2]
    codes = np.column_stack([rng.integers(0, c, 120) for c in cards])
    codes[rng.random(codes.shape) < 0.3] = -1
    weights = rng.integers(1, 5, 120) if weighted else None
    sc = AvailableCaseScorer(codes, cards, "qnml", weights=weights)
    for child in range(6):
        for k in range(4):
            for parents in itertools.combinations([v for v in range(6) if v != child], k):
                want = family_counts(codes, cards, child, list(parents), weights)
                first = sc.counts(child, parents[::-1])
                sc.family_n(child, parents)
                second = sc.counts(child, parents)
                for got in (first, second):
                    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_available_case_uses_every_row_but_complete_rows_do_not():
    model = random_model(random_dag(6, seed=3), [2, 3, 2, 2, 3, 2], seed=3)
    codes = model.sample(300, seed=1).codes.copy()
    rng = np.random.default_rng(0)
    codes[rng.random(codes.shape) < 0.3] = -1
    data = _data(codes, [2, 3, 2, 2, 3, 2])
    res_cr, _ = learn_network(data, "hc", missing_data="complete-rows")
    res_ac, _ = learn_network(data, "hc", missing_data="available-case")
    assert res_cr.n_rows_used == int(data.complete_rows().sum()) < 300
    assert res_ac.n_rows_used == 300


# ---------------------------------------------------------------------- expected counts
def test_expected_table_equals_posterior_counts():
    """E-step counts = sum over rows of the joint posterior of the missing cells, computed by the
    inference module's contraction (an independent path) and by enumeration."""
    cards = [2, 3, 2, 2]
    model = random_model(random_dag(4, seed=1), cards, seed=2)
    codes = random_rows(model, 40, seed=4, missing=0.35)
    table, w, wide, _ = expected_table(model, codes)
    assert len(wide) == 0
    assert w.sum() == pytest.approx(len(codes))
    got = {tuple(r): x for r, x in zip(table.tolist(), w)}
    want: dict = {}
    for row in codes:
        C = completions(model, row)
        p = np.array([joint_prob(model, c) for c in C])
        for c, x in zip(C, p / p.sum()):
            want[tuple(c.tolist())] = want.get(tuple(c.tolist()), 0.0) + x
    assert set(got) == {k for k, v in want.items() if v > 0}
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9)
    for rows, missing in missingness_patterns(codes):  # and the contraction agrees with enumeration
        P = joint_posteriors(model, codes, rows, missing, list(missing))
        C = completions(model, codes[rows[0]])
        p = np.array([joint_prob(model, c) for c in C])
        np.testing.assert_allclose(P[0], p / p.sum(), rtol=1e-9)


def test_wide_rows_are_not_sampled():
    """Rows beyond the enumeration cap are counted exactly (their joint posterior), so EM with a cap of 4
    joint completions reaches the very CPTs of EM that enumerates every row."""
    cards = [2, 3, 2, 2, 3]
    truth = random_model(random_dag(5, seed=4), cards, seed=4)
    codes = truth.sample(150, seed=2).codes.copy()
    codes[np.random.default_rng(3).random(codes.shape) < 0.4] = -1
    data = _data(codes, cards)
    from bnfk_core.learning import incomplete as missing

    _, _, wide, _ = expected_table(truth, codes, max_completions=4)
    assert len(wide) > 0
    res_a, a, _ = structural_em(data, "hc", max_rounds=3)
    cap, missing.MAX_COMPLETIONS = missing.MAX_COMPLETIONS, 4
    try:
        res_b, b, _ = structural_em(data, "hc", max_rounds=3)
    finally:
        missing.MAX_COMPLETIONS = cap
    assert res_a.dag.sorted_arcs() == res_b.dag.sorted_arcs()
    assert res_b.score == pytest.approx(res_a.score, rel=1e-9)
    assert not any("sampl" in note and "no sampled" not in note for note in res_b.notes)


# ---------------------------------------------------------------------- EM parameters
def _observed_ll(cpts_flat, shapes, dag, rows, cards):
    cpts = []
    pos = 0
    for q, r in shapes:
        logits = np.concatenate(
            [cpts_flat[pos : pos + q * (r - 1)].reshape(q, r - 1), np.zeros((q, 1))], axis=1
        )
        pos += q * (r - 1)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        cpts.append(e / e.sum(axis=1, keepdims=True))
    total = 0.0
    for row in rows:
        ranges = [range(c) if row[v] < 0 else [int(row[v])] for v, c in enumerate(cards)]
        s = 0.0
        for d in itertools.product(*ranges):
            p = 1.0
            for i in range(len(cards)):
                j = 0
                for par in parents_of(dag, i):
                    j = j * cards[par] + d[par]
                p *= cpts[i][j, d[i]]
            s += p
        total += math.log(s)
    return total, cpts


def test_em_cpts_equal_a_brute_force_maximiser():
    """EM (method ml) reaches the maximiser of the observed-data likelihood found by scipy."""
    dag = DAG(["a", "b", "c"], [("a", "b"), ("b", "c")])
    cards = [2, 2, 2]
    rows = np.array(
        [
            [0, 0, 0],
            [0, 0, 1],
            [0, 1, 1],
            [1, 1, 1],
            [1, 1, 0],
            [1, 0, 0],
            [0, 0, 0],
            [1, 1, 1],
            [0, -1, 1],
            [1, -1, 0],
            [-1, 1, 1],
            [-1, 0, 0],
            [0, 1, -1],
            [1, -1, -1],
            [-1, -1, 1],
            [0, 0, -1],
        ]
    )
    data = from_codes(rows, ["a", "b", "c"], [["0", "1"]] * 3)
    model = em_parameters(dag, data, "ml", max_iter=20_000, tol=1e-12)
    shapes = [(1, 2), (2, 2), (2, 2)]
    best = None
    for start in range(4):
        x0 = np.random.default_rng(start).normal(size=5)
        opt = minimize(
            lambda x: -_observed_ll(x, shapes, dag, rows, cards)[0],
            x0,
            method="BFGS",
            options={"gtol": 1e-9, "maxiter": 10_000},
        )
        if best is None or opt.fun < best.fun:
            best = opt
    ll_opt, cpts_opt = _observed_ll(best.x, shapes, dag, rows, cards)
    flat_em = np.concatenate([np.log(t[:, :-1] / t[:, -1:]).ravel() for t in model.cpts])
    ll_em, _ = _observed_ll(flat_em, shapes, dag, rows, cards)
    assert ll_em == pytest.approx(ll_opt, abs=1e-7)
    for a, b in zip(model.cpts, cpts_opt):
        np.testing.assert_allclose(a, b, atol=1e-4)
    assert model.fit_info["em_iterations"] > 1


def test_em_on_complete_data_is_the_plain_fit():
    cards = [2, 3, 2]
    model = random_model(random_dag(3, seed=2), cards, seed=1)
    data = _data(random_rows(model, 50, seed=3), cards)
    from bnfk_core.network.model import fit

    a, b = em_parameters(model.dag, data), fit(model.dag, data)
    for x, y in zip(a.cpts, b.cpts):
        np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------------- structural EM
def _brute_observed_bic(model, codes):
    ll = sum(math.log(sum(joint_prob(model, c) for c in completions(model, row))) for row in codes)
    seen = int((np.asarray(codes) >= 0).any(axis=1).sum())  # N: the rows that observe a cell
    return ll - 0.5 * math.log(seen) * model.parameter_count()


def _brute_ml_bic(codes, cards, parents):
    """BIC of a DAG on complete rows by counting each family's configurations in a dict: the
    maximum-likelihood log-likelihood minus (log N / 2) times the free parameters (r_i - 1) prod r_pa."""
    n = len(codes)
    total = 0.0
    for i, ps in enumerate(parents):
        fam, par = {}, {}
        for row in codes:
            key = tuple(int(row[p]) for p in ps)
            fam[key + (int(row[i]),)] = fam.get(key + (int(row[i]),), 0) + 1
            par[key] = par.get(key, 0) + 1
        total += sum(c * math.log(c / par[k[:-1]]) for k, c in fam.items())
        total -= 0.5 * math.log(n) * (cards[i] - 1) * math.prod(cards[p] for p in ps)
    return total


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hst.integers(0, 10_000), missing=hst.floats(0.05, 0.4), n=hst.integers(20, 80))
@example(seed=4631, missing=0.05, n=20)  # the mask hits no cell: the complete-data contract
@pytest.mark.parametrize("round_search", ["climb", "full"])
def test_structural_em_score_never_decreases(round_search, seed, missing, n):
    cards = [2, 3, 2, 2]
    truth = random_model(random_dag(4, seed=seed, max_parents=2), cards, seed=seed)
    codes = truth.sample(n, seed=seed).codes.copy()
    codes[np.random.default_rng(seed).random(codes.shape) < missing] = -1
    if not (codes >= 0).any(axis=0).all():
        return
    data = _data(codes, cards)
    res, model, history = structural_em(
        data, "hc", score="bic", seed=seed, max_rounds=6, restarts=1, round_search=round_search
    )
    assert all(b > a for a, b in zip(history, history[1:]))
    if not (codes < 0).any():
        # nothing to complete (the mask hit no cell): the result is the search's, its score the BIC of the DAG
        # at the maximum-likelihood parameters, not the observed-data score of the smoothed EM CPTs
        assert res.score_name == "bic" and len(history) == 1
        assert res.score == pytest.approx(_brute_ml_bic(codes, cards, res.dag.parent_indices()), rel=1e-12)
        return
    assert res.score_name == "observed-data bic"
    assert res.score == pytest.approx(history[-1])
    assert observed_score(model, data) == pytest.approx(history[-1], rel=1e-9)
    assert _brute_observed_bic(model, codes) == pytest.approx(history[-1], rel=1e-9)


def test_weighted_table_gives_the_same_network():
    cards = [2, 3, 2, 2]
    truth = random_model(random_dag(4, seed=8), cards, seed=8)
    codes = truth.sample(200, seed=8).codes.copy()
    codes[np.random.default_rng(1).random(codes.shape) < 0.2] = -1
    data = _data(codes, cards)
    u, c = distinct_rows(codes)
    wdata = WeightedData(None, u.astype(np.int32), data.variables, data.states, None, "w", weights=c)
    for md in ("available-case", "em"):
        r1, m1 = learn_network(data, "hc", missing_data=md)
        r2, m2 = learn_network(wdata, "hc", missing_data=md)
        assert r1.dag.sorted_arcs() == r2.dag.sorted_arcs()
        assert r1.score == pytest.approx(r2.score, rel=1e-9)
        for a, b in zip(m1.cpts, m2.cpts):
            np.testing.assert_allclose(a, b, atol=1e-9)


def test_registry_and_errors():
    assert tuple(registry.MISSING_DATA) == ("complete-rows", "available-case", "em")
    data = _data(np.array([[0, 1], [1, -1], [-1, 0]]), [2, 2])
    with pytest.raises(StructureError, match="missing-data method 'nope'"):
        learn_network(data, "hc", missing_data="nope")
    with pytest.raises(StructureError, match="complete"):
        learn_network(data, "hc", missing_data="complete-rows")


@pytest.mark.parametrize("score", ["bic", "qnml", "aic"])
def test_available_case_exact_search_bound_is_valid(score):
    """The penalty bound on all N rows prunes nothing the unpruned exact search would choose."""
    from bnfk_core.learning.exact import exact_search

    cards = [2, 3, 2, 2, 3, 2]
    truth = random_model(random_dag(6, seed=11), cards, seed=11)
    codes = truth.sample(120, seed=5).codes.copy()
    codes[np.random.default_rng(6).random(codes.shape) < 0.3] = -1
    a, sa = exact_search(AvailableCaseScorer(codes, cards, score))
    b, sb = exact_search(AvailableCaseScorer(codes, cards, score), prune=False)
    assert sa["optimum"] == pytest.approx(sb["optimum"]) and a == b
    assert sa["pruned"] > 0 or score == "qnml"  # qNML's bound is weak on 120 rows


def test_rows_with_no_observed_cell_leave_structural_em_unchanged():
    """Rows of blanks carry no observation: the network, its CPTs and its observed-data BIC are those of the
    table without them, and the note says how many were left out."""
    cards = [2, 3, 2, 2, 3]
    truth = random_model(random_dag(5, seed=4, max_parents=2), cards, seed=4)
    codes = truth.sample(150, seed=4).codes.copy()
    codes[np.random.default_rng(4).random(codes.shape) < 0.15] = -1
    codes = codes[(codes >= 0).any(axis=1)]
    padded = np.vstack([codes, np.full((24, len(cards)), -1, dtype=codes.dtype)])
    res, model, history = structural_em(_data(codes, cards), "hc", score="bic", seed=0, max_rounds=4)
    res_p, model_p, history_p = structural_em(_data(padded, cards), "hc", score="bic", seed=0, max_rounds=4)
    assert res_p.dag.arcs == res.dag.arcs
    assert res_p.score == pytest.approx(res.score, rel=1e-12)
    assert observed_score(model_p, _data(padded, cards)) == pytest.approx(res.score, rel=1e-12)
    for a, b in zip(model.cpts, model_p.cpts):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert "24 rows with no observed cell left out" in " ".join(res_p.notes)
