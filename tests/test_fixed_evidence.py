"""log P(x_observed) of fixed incomplete rows under many CPT sets (bnfk_core.inference.fixed_evidence) and the
held-out evaluation built on it, against brute-force sums of the joint and the previous evaluation
(junction-tree inference per re-fit)."""

from __future__ import annotations

import helpers_bruteforce as bf
import numpy as np
import pytest

from bnfk_core.analyses.prototypes.selection import HeldOut
from bnfk_core.data.table import from_codes
from bnfk_core.inference import fixed_evidence
from bnfk_core.inference.fixed_evidence import FixedEvidence
from bnfk_core.inference.queries import log_likelihood


def _problem(seed, n_rows, missing, n_vars=6):
    dag = bf.random_dag(n_vars, seed, max_parents=2, p_arc=0.7)
    cards = np.random.default_rng(seed).integers(2, 4, n_vars)
    model = bf.random_model(dag, cards, seed=seed)
    codes = bf.random_rows(model, n_rows, seed=seed + 1, missing=missing)
    return model, codes


def _flat_logs(model):
    return np.concatenate([np.log(t).ravel() for t in model.cpts])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_row_equals_brute_force_marginal(seed):
    model, codes = _problem(seed, 30, 0.35)
    table = bf.joint_table(model)
    L = _flat_logs(model)
    seen_group_of_two = False
    for row in codes[(codes < 0).any(axis=1)]:
        fe = FixedEvidence(row[None], model.parents, model.cardinalities)
        got = float(fe.observed_counts @ L + fe.group_log_sum(L))
        want = np.log(bf.marginal_prob(model, {v: int(c) for v, c in enumerate(row) if c >= 0}, table))
        assert got == pytest.approx(want, abs=1e-12)
        seen_group_of_two |= len(fe.grp_starts) < (row < 0).sum()
    assert seen_group_of_two  # some rows have connected missing cells (a joint group)


def test_many_cpt_sets_equal_one_at_a_time_and_inference():
    model, codes = _problem(3, 80, 0.25)
    inc = codes[(codes < 0).any(axis=1)]
    fe = FixedEvidence(inc, model.parents, model.cardinalities)
    models = [bf.random_model(model.dag, model.cardinalities, seed=s) for s in range(5)]
    Ls = np.stack([_flat_logs(m) for m in models])
    many = Ls @ fe.observed_counts + fe.group_log_sum(Ls)
    for m, L, got in zip(models, Ls, many):
        assert got == pytest.approx(fe.observed_counts @ L + fe.group_log_sum(L), abs=1e-12)
        data = from_codes(inc, m.variables, m.states)
        assert got == pytest.approx(log_likelihood(m, data).sum(), abs=1e-11)


def _previous_nll(held, codes):
    """The held-out NLL as computed before: complete-row counts + junction-tree log P(x_observed) per
    re-fit."""
    cpts = held.fit(codes)
    logs = [np.log(t) for t in cpts]
    total = float(sum(held.test_counts[i] @ logs[i] for i in range(len(logs))))
    if held.incomplete is not None:
        total += float(log_likelihood(held.model(cpts), held.incomplete).sum())
    return -total / held.M


@pytest.mark.parametrize("max_configs", [None, 2, 1], ids=["enumerated", "some-fallback", "all-fallback"])
def test_heldout_equals_previous_evaluation(monkeypatch, max_configs):
    if max_configs is not None:
        monkeypatch.setattr(fixed_evidence, "MAX_GROUP_CONFIGS", max_configs)
    model, codes = _problem(4, 160, 0.2, n_vars=7)
    data = from_codes(codes, model.variables, model.states)
    train, test = data.subset(np.arange(80)), data.subset(np.arange(80, 160))
    held = HeldOut(model.dag, test.with_class(model.variables[0]), class_column=model.variables[0])
    assert held.incomplete is not None
    if max_configs == 1:
        assert held.fixed.fallback.size == held.incomplete.n_rows
    rng = np.random.default_rng(0)
    subsets = np.stack([np.sort(rng.choice(80, 15, replace=False)) for _ in range(7)])
    many = held.evaluate_many(train.codes[subsets], chunk=3)
    for S, got in zip(subsets, many):
        one = held.evaluate(train.codes[S])
        assert got["nll"] == pytest.approx(_previous_nll(held, train.codes[S]), abs=1e-12)
        for key in ("nll", "error", "log_loss"):
            assert got[key] == pytest.approx(one[key], abs=1e-12)
        cpts = held.fit(train.codes[S])
        for a, b in zip(
            held.fit_many(train.codes[S][None])[0].reshape(-1), np.concatenate([t.ravel() for t in cpts])
        ):
            assert a == pytest.approx(b, abs=1e-15)
