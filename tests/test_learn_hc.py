"""Hill climbing with cached gains: the same DAG as pgmpy's HillClimbSearch driven by
the same tie-breaking, on the bundled datasets for every registered score, without a graph search per
candidate move; a heartbeat per step."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from bnfk_core.cli import main
from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.learning.hill_climb import hill_climb
from bnfk_core.learning.scores import LocalScorer, scorer_for
from bnfk_core.learning.structure import learn_structure
from bnfk_core.registry import SCORES

ROOT = Path(__file__).resolve().parents[1]
CATALOG = json.loads((ROOT / "sample_data" / "catalog.json").read_text(encoding="utf-8"))


def _data(name):
    e = CATALOG[name]
    return load_csv(
        ROOT / "sample_data" / e["file"],
        class_column=e.get("class_column"),
        missing_policy=e.get("missing_policy", "missing"),
    )


def _both(data, score, **kw):
    scorer = scorer_for(data.codes, data.cardinalities, score)
    ours = hill_climb(scorer, data.variables, engine="bnfk", **kw)
    ref = hill_climb(scorer, data.variables, engine="pgmpy", **kw)
    return ours, ref


@pytest.mark.parametrize("score", list(SCORES))
@pytest.mark.parametrize("name", ["zoo", "hayes_roth", "breast_cancer", "spect", "house_votes_84"])
def test_same_dag_as_pgmpy_on_bundled_data(name, score):
    ours, ref = _both(_data(name), score)
    assert ours == ref and sum(map(len, ours)) > 0


@pytest.mark.parametrize(
    "kw",
    [
        dict(max_parents=1, seed=5),
        dict(max_parents=2, seed=3),
        dict(tabu=0, seed=2),
        dict(tabu=3, seed=1),
        dict(epsilon=5.0, seed=4),
        dict(max_iter=7, seed=6),
    ],
)
def test_same_dag_as_pgmpy_with_options(kw):
    ours, ref = _both(_data("lymphography"), "bic", **kw)
    assert ours == ref


def test_same_dag_as_pgmpy_on_random_wide_data():
    """40 loosely related columns (many equal gains) for the first 12 steps, one seed each."""
    rng = np.random.default_rng(11)
    n, d = 60, 40
    codes = np.zeros((n, d), dtype=np.int32)
    codes[:, 0] = rng.integers(0, 3, n)
    for j in range(1, d):
        src = codes[:, rng.integers(0, j)]
        codes[:, j] = np.where(rng.random(n) < 0.4, rng.integers(0, 3, n), src)
    data = from_codes(codes, [f"v{j}" for j in range(d)], [("a", "b", "c")] * d)
    for seed in (0, 1):
        ours, ref = _both(data, "qnml", max_iter=12, seed=seed)
        assert ours == ref and sum(map(len, ours)) == 12


def test_no_graph_search_per_candidate(monkeypatch):
    """pgmpy's search calls nx.has_path for every candidate arc and nx.all_simple_paths for every
    reversal (O(d^2) graph searches per step); ours tests cycles on a reachability matrix."""
    data = _data("zoo")
    scorer = LocalScorer(data.codes, data.cardinalities, "bic")
    ref = hill_climb(scorer, data.variables, engine="pgmpy", seed=2)

    def refuse(*a, **k):
        raise AssertionError("graph search per candidate")

    monkeypatch.setattr(nx, "has_path", refuse)
    monkeypatch.setattr(nx, "all_simple_paths", refuse)
    assert hill_climb(scorer, data.variables, seed=2) == ref
    assert learn_structure(data, "hc-greedy", score="bic", restarts=1).dag.n_arcs > 0


def test_heartbeat_every_step_and_result_is_acyclic():
    data = _data("spect")
    steps = []
    res = learn_structure(
        data, "hc-greedy", score="bic", restarts=0, progress=lambda f, m: steps.append((f, m))
    )
    climbs = [m for _, m in steps if "hill climbing: step" in m]
    assert len(climbs) >= res.dag.n_arcs + 1  # one per move, one for the last look
    fr = [f for f, m in steps]
    assert fr == sorted(fr) and fr[-1] == 1.0
    g = nx.DiGraph(list(res.dag.arcs))
    assert nx.is_directed_acyclic_graph(g)


def test_cli_learn_shows_steps_unless_quiet(tmp_path, capsys):
    out = tmp_path / "m.json"
    args = [
        "learn",
        str(ROOT / "sample_data" / "zoo.csv"),
        "--structure",
        "hc-greedy",
        "--class-column",
        "class",
        "-o",
        str(out),
    ]
    assert main(args) == 0
    assert "hill climbing: step" in capsys.readouterr().err
    assert main(args[:3] + ["hc"] + args[4:]) == 0
    assert "tabu search: chain 1 of" in capsys.readouterr().err
    assert main(args + ["--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_unknown_engine_is_refused():
    data = _data("zoo")
    with pytest.raises(Exception, match="engine"):
        hill_climb(LocalScorer(data.codes, data.cardinalities, "bic"), data.variables, engine="fast")


# ---------------------------------------------------------------------- climbing from a start graph
def _random_start(n, seed, arcs=8):
    """The parents of an acyclic graph with about ``arcs`` random arcs (each from an earlier node in a random
    order)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    parents = [set() for _ in range(n)]
    for _ in range(arcs):
        a, b = sorted(rng.choice(n, 2, replace=False))
        parents[order[b]].add(int(order[a]))
    return [tuple(sorted(p)) for p in parents]


def _brute_best_move(scorer, parents, max_parents=None):
    """The largest score gain of one legal move (add, remove, reverse an arc; acyclic; in-degree bound), by
    rebuilding every neighbouring graph with networkx and rescoring it whole."""
    n = len(parents)
    base = scorer.total(parents)
    best = -np.inf
    for x in range(n):
        for y in range(n):
            if x == y:
                continue
            cand = [set(p) for p in parents]
            if x in cand[y]:
                for flip in (False, True):
                    c = [set(p) for p in cand]
                    c[y].discard(x)
                    if flip:
                        c[x].add(y)
                    g = nx.DiGraph([(p, v) for v in range(n) for p in c[v]])
                    g.add_nodes_from(range(n))
                    if nx.is_directed_acyclic_graph(g) and (max_parents is None or len(c[x]) <= max_parents):
                        best = max(best, scorer.total([tuple(sorted(p)) for p in c]) - base)
            elif y not in cand[x]:
                cand[y].add(x)
                g = nx.DiGraph([(p, v) for v in range(n) for p in cand[v]])
                g.add_nodes_from(range(n))
                if nx.is_directed_acyclic_graph(g) and (max_parents is None or len(cand[y]) <= max_parents):
                    best = max(best, scorer.total([tuple(sorted(p)) for p in cand]) - base)
    return best


@pytest.mark.parametrize(
    "name,score,seed",
    [
        ("lymphography", "bic", 0),
        ("zoo", "qnml", 1),
        ("breast_cancer", "bdeu", 2),
        ("house_votes_84", "qnml", 3),
    ],
)
def test_climb_from_a_start_graph_is_pgmpys_and_a_local_optimum(name, score, seed):
    """From a random acyclic start: the same DAG as pgmpy's HillClimbSearch(start_dag=...) with the same
    tie-breaking, a score no lower than the start's, and no single legal move (rescored whole by brute force)
    gains epsilon."""
    data = _data(name)
    start = _random_start(len(data.variables), seed)
    ours, ref = _both(data, score, start=start, seed=seed)
    assert ours == ref
    scorer = scorer_for(data.codes, data.cardinalities, score)
    assert scorer.total(ours) >= scorer.total(start) and ours != start
    assert _brute_best_move(scorer, ours) < 1e-4


def test_climb_from_a_local_optimum_stays_there_and_bad_starts_are_refused():
    data = _data("zoo")
    scorer = scorer_for(data.codes, data.cardinalities, "bic")
    top = hill_climb(scorer, data.variables, seed=0)
    assert hill_climb(scorer, data.variables, seed=4, start=top) == top
    assert (
        list(
            learn_structure(
                data, "hc-greedy", score="bic", restarts=0, seed=4, start=top
            ).dag.parent_indices()
        )
        == top
    )
    tabu = learn_structure(data, "hc", score="bic", seed=4, start=top).dag.parent_indices()
    assert scorer.total(tabu) >= scorer.total(top) - 1e-9
    n = len(data.variables)
    cyc = [()] * n
    cyc[0], cyc[1] = (1,), (0,)
    with pytest.raises(Exception, match="cycle"):
        hill_climb(scorer, data.variables, start=cyc)
    with pytest.raises(Exception, match="parents of each"):
        hill_climb(scorer, data.variables, start=[()] * (n - 1))
    with pytest.raises(Exception, match="start graph"):
        learn_structure(data, "tree", start=top)
