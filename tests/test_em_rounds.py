"""Structural EM's round searches (``round_search``): bounded climbs, one full search, the option checked."""

from __future__ import annotations

import numpy as np
import pytest

from bnfk_core import registry
from bnfk_core.data.table import from_codes
from bnfk_core.errors import StructureError
from bnfk_core.learning import incomplete
from bnfk_core.learning.incomplete import learn_network, observed_score, structural_em
from tests.helpers_bruteforce import random_dag, random_model


def _data(codes, cards):
    names = [f"x{i}" for i in range(len(cards))]
    return from_codes(np.asarray(codes), names, [[f"s{k}" for k in range(c)] for c in cards])


def _sample(seed, n=120, missing=0.25, n_vars=5):
    cards = [2, 3, 2, 2, 3][:n_vars]
    truth = random_model(random_dag(n_vars, seed=seed, max_parents=2), cards, seed=seed)
    codes = truth.sample(n, seed=seed).codes.copy()
    codes[np.random.default_rng(seed + 1).random(codes.shape) < missing] = -1
    return _data(codes, cards)


def _searches(monkeypatch):
    """Record the method of every search structural EM runs."""
    calls = []
    real = incomplete.learn_structure

    def spy(data, method, **kw):
        calls.append((method, kw.get("start") is not None))
        return real(data, method, **kw)

    monkeypatch.setattr(incomplete, "learn_structure", spy)
    return calls


@pytest.mark.parametrize("round_search, most_full", [("climb", 0), ("climb-full", 1)])
@pytest.mark.parametrize("seed", range(3))
def test_climbs_run_at_most_one_full_search(monkeypatch, seed, round_search, most_full):
    calls = _searches(monkeypatch)
    data = _sample(seed)
    res, model, history = structural_em(data, "hc", seed=seed, max_rounds=10, round_search=round_search)
    methods = [m for m, _ in calls]
    assert methods[0] == "hc-greedy"  # the start, on the available-case counts
    assert methods.count("hc") <= most_full
    assert all(started for _, started in calls[1:])  # every round starts from the current network
    assert all(b > a for a, b in zip(history, history[1:]))
    assert observed_score(model, data) == pytest.approx(history[-1], rel=1e-9)
    assert res.method == "hc" and res.score == pytest.approx(history[-1])


@pytest.mark.parametrize("seed", range(3))
def test_full_runs_the_full_search_every_round(monkeypatch, seed):
    calls = _searches(monkeypatch)
    structural_em(_sample(seed), "hc", seed=seed, max_rounds=10, round_search="full")
    assert {m for m, _ in calls} == {"hc"}
    assert not any(started for _, started in calls)


def test_complete_table_ignores_round_search():
    data = _sample(0, missing=0.0)
    a, _, _ = structural_em(data, "hc", seed=0, round_search="climb")
    b, _, _ = structural_em(data, "hc", seed=0, round_search="full")
    assert a.dag.sorted_arcs() == b.dag.sorted_arcs() and a.score == b.score
    assert a.method == "hc"


def test_round_search_is_validated():
    data = _sample(0)
    with pytest.raises(StructureError, match="round_search"):
        learn_network(data, "hc", missing_data="em", round_search="fast")
    with pytest.raises(StructureError, match="round search 'fast' of structural EM"):
        structural_em(data, "hc", round_search="fast")
    spec = registry.MISSING_DATA["em"]
    (opt,) = [o for o in spec.options if o.name == "round_search"]
    assert opt.default == "climb" and opt.allows("climb-full") and opt.allows("full")
    assert not opt.allows("fast") and not opt.allows(None)
