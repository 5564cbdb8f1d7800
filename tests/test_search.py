"""The default structure search (iterated tabu search) and the score ``learn`` reports.

Independent checks: every single-arc neighbour of the result is rebuilt and rescored whole (networkx decides
acyclicity), the exact dynamic-programming optimum on at most 5 variables, and pgmpy's BIC / BDeu / K2 / AIC
scorers of the returned DAG on the same rows.
"""

from __future__ import annotations

import json
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from bnfk_core.cli import main
from bnfk_core.data.table import from_codes
from bnfk_core.learning.exact import exact_search
from bnfk_core.learning.incomplete import OBSERVED_SCORE, learn_network, observed_score
from bnfk_core.learning.scores import LocalScorer
from bnfk_core.learning.structure import learn_structure
from bnfk_core.learning.tabu import tabu_search
from bnfk_core.network.dag import DAG


def _sample(name: str, n_rows: int, seed: int):
    """``n_rows`` rows pgmpy samples from its bundled network ``name`` (every column's observed states
    only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.utils import get_example_model

        frame = get_example_model(name).simulate(n_rows, seed=seed, show_progress=False)
    frame = frame[sorted(frame.columns)].astype(str)
    codes, states = [], []
    for c in frame.columns:
        cat = pd.Categorical(frame[c])
        codes.append(cat.codes.astype(np.int32))
        states.append([str(s) for s in cat.categories])
    return from_codes(np.column_stack(codes), list(frame.columns), states, source=name), frame


def _random_data(n_rows: int, n_vars: int, seed: int):
    """Columns that copy, or combine, earlier columns with noise: dependent enough to give a rugged
    landscape."""
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 4, n_vars)
    x = np.empty((n_rows, n_vars), dtype=np.int32)
    x[:, 0] = rng.integers(0, cards[0], n_rows)
    for i in range(1, n_vars):
        a, b = x[:, rng.integers(0, i)], x[:, rng.integers(0, i)]
        x[:, i] = np.where(rng.random(n_rows) < 0.75, (a + b) % cards[i], rng.integers(0, cards[i], n_rows))
    return x, [int(c) for c in cards]


def _neighbour_gains(scorer, parents, max_parents=None):
    """The score change of every legal single-arc move, each neighbour rebuilt and scored whole."""
    n, base, out = len(parents), scorer.total(parents), []
    for x in range(n):
        for y in range(n):
            if x == y:
                continue
            options = []
            if x in parents[y]:
                rem = [set(p) for p in parents]
                rem[y].discard(x)
                rev = [set(p) for p in rem]
                rev[x].add(y)
                options = [rem, rev]
            elif y not in parents[x]:
                add = [set(p) for p in parents]
                add[y].add(x)
                options = [add]
            for c in options:
                g = nx.DiGraph([(p, v) for v in range(n) for p in c[v]])
                g.add_nodes_from(range(n))
                if nx.is_directed_acyclic_graph(g) and (
                    max_parents is None or max(map(len, c)) <= max_parents
                ):
                    out.append(scorer.total([tuple(sorted(p)) for p in c]) - base)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("score", ["bic", "bdeu", "qnml"])
def test_small_networks_reach_a_local_optimum_and_the_exact_optimum(seed, score):
    codes, cards = _random_data(300, 5, seed)
    scorer = LocalScorer(codes, cards, score)
    names = [f"X{i}" for i in range(5)]
    found = tabu_search(scorer, names, seed=seed)
    assert max(_neighbour_gains(scorer, found)) < 1e-4
    exact, _ = exact_search(LocalScorer(codes, cards, score))
    assert scorer.total(found) == pytest.approx(scorer.total(exact), abs=1e-6)


def test_in_degree_bound_local_optimum_and_determinism():
    codes, cards = _random_data(400, 5, 11)
    scorer = LocalScorer(codes, cards, "bic")
    names = [f"X{i}" for i in range(5)]
    found = tabu_search(scorer, names, seed=3, max_parents=1)
    assert max(map(len, found)) <= 1
    assert max(_neighbour_gains(scorer, found, max_parents=1)) < 1e-4
    exact, _ = exact_search(LocalScorer(codes, cards, "bic"), max_parents=1)
    assert scorer.total(found) == pytest.approx(scorer.total(exact), abs=1e-6)
    assert tabu_search(LocalScorer(codes, cards, "bic"), names, seed=3, max_parents=1) == found


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_no_arc_whose_removal_costs_nothing(seed):
    # two columns with one observed state: every family they join scores the same, so a tabu walk's flat steps
    # can leave arcs to or from them that add nothing; each removal is rescored whole here
    codes, cards = _random_data(300, 7, seed)
    codes = np.column_stack([codes, np.zeros((len(codes), 2), dtype=np.int32)])
    scorer = LocalScorer(codes, cards + [1, 1], "bic")
    found = tabu_search(scorer, [f"X{i}" for i in range(9)], seed=seed)
    base = scorer.total(found)
    for y, ps in enumerate(found):
        for x in ps:
            without = [tuple(q for q in qs if (v, q) != (y, x)) for v, qs in enumerate(found)]
            assert scorer.total(without) < base - 1e-9, (x, y)
    assert not found[7] and not found[8] and all(7 not in ps and 8 not in ps for ps in found)
    assert max(_neighbour_gains(scorer, found)) < 1e-4


def test_kicks_draw_the_kind_of_move_first():
    # a DAG of 12 nodes and 3 arcs has 60+ legal additions against 3 removals and 3 reversals: drawn uniformly
    # among the moves, a kick would nearly always add an arc; drawn kind first, each kind comes a third of the
    # time
    from bnfk_core.learning.tabu import _Moves

    codes, cards = _random_data(200, 12, 0)
    state = _Moves(LocalScorer(codes, cards, "bic"), 12, np.inf, np.arange(3 * 12 * 12))
    start = [()] * 12
    start[3], start[5], start[9] = (0,), (1,), (2,)
    rng, kinds = np.random.default_rng(0), []
    for _ in range(600):
        state.load(start)
        before = state.adj.copy()
        assert state.kick(rng)
        added, gone = state.adj & ~before, before & ~state.adj
        kinds.append("reverse" if added.any() and gone.any() else "add" if added.any() else "remove")
        if kinds[-1] == "reverse":
            ((x, y),) = zip(*np.nonzero(gone))
            assert added[y, x]
    share = {k: kinds.count(k) / len(kinds) for k in ("add", "remove", "reverse")}
    assert all(abs(v - 1 / 3) < 0.06 for v in share.values()), share


def test_tabu_search_beats_or_matches_the_greedy_climbs_on_alarm():
    data, _ = _sample("alarm", 2000, 0)
    tabu = learn_structure(data, "hc", score="bic", seed=0)
    greedy = learn_structure(data, "hc-greedy", score="bic", seed=0)
    assert tabu.score >= greedy.score - 1e-6
    scorer = LocalScorer(data.codes, data.cardinalities, "bic")
    assert tabu.score == pytest.approx(scorer.total(tabu.dag.parent_indices()), abs=1e-6)
    again = learn_structure(data, "hc", score="bic", seed=0)
    assert again.dag == tabu.dag


def _pgmpy_score(frame: pd.DataFrame, dag: DAG, score: str, ess: float = 1.0) -> float:
    from pgmpy.structure_score import AIC, BIC, K2, BDeu

    scorer = {
        "bic": lambda: BIC(frame),
        "k2": lambda: K2(frame),
        "aic": lambda: AIC(frame),
        "bdeu": lambda: BDeu(frame, equivalent_sample_size=ess),
    }[score]()
    parents = dag.parent_indices()
    cols = list(frame.columns)
    return float(sum(scorer.local_score(v, tuple(cols[p] for p in parents[i])) for i, v in enumerate(cols)))


@pytest.mark.parametrize("score", ["bic", "bdeu", "k2", "aic"])
def test_reported_score_equals_pgmpys_scorer(score):
    data, frame = _sample("asia", 3000, 1)
    for missing in ("em", "complete-rows", "available-case"):
        res, _ = learn_network(data, "hc", missing_data=missing, score=score, ess=2.0, seed=0)
        assert res.score_name == score
        assert res.score == pytest.approx(_pgmpy_score(frame, res.dag, score, ess=2.0), rel=1e-6), missing


def test_cli_learn_prints_pgmpys_bic_of_the_dag(tmp_path, capsys):
    data, frame = _sample("asia", 5000, 0)
    csv = tmp_path / "asia.csv"
    frame.to_csv(csv, index=False)
    for method in ("hc", "hc-greedy", "tree"):
        assert (
            main(["learn", str(csv), "--structure", method, "--quiet", "-o", str(tmp_path / "m.json")]) == 0
        )
        out = json.loads(capsys.readouterr().out)
        dag = DAG(list(frame.columns), [tuple(a) for a in out["arcs"]])
        assert out["score_name"] == "bic"
        assert out["score"] == pytest.approx(_pgmpy_score(frame, dag, "bic"), rel=1e-6), method


def test_structural_em_reports_the_observed_data_score_under_its_own_name():
    data, _ = _sample("asia", 1500, 2)
    codes = data.codes.copy()
    codes[np.random.default_rng(0).random(codes.shape) < 0.05] = -1
    holed = from_codes(codes, list(data.variables), [list(s) for s in data.states], source="asia with holes")
    res, model = learn_network(holed, "hc", missing_data="em", score="bic", seed=0)
    assert res.score_name == OBSERVED_SCORE != "bic"
    assert res.score == pytest.approx(observed_score(model, holed), rel=1e-9)
