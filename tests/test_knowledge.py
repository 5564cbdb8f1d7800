"""Learning with knowledge: forbidden and required arcs honoured by every learner that declares them, with a
BIC (computed by pgmpy) at least pgmpy's constrained hill climb's; the exact search is the brute-force optimum
among the DAGs that honour the arcs; bad arcs are refused in one sentence naming the arc; bootstrap arc
strength separates the true arcs of a textbook network from the absent ones and is seeded."""

from __future__ import annotations

import itertools
import json
import warnings

import networkx as nx
import numpy as np
import pytest

from bnfk_core.errors import StructureError
from bnfk_core.learning.bootstrap import arc_strength
from bnfk_core.learning.recipe import Recipe, learn_recipe
from bnfk_core.network.textbook import textbook_network


def _pgmpy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.base import DAG
        from pgmpy.causal_discovery import ExpertKnowledge
        from pgmpy.estimators import HillClimbSearch
        from pgmpy.structure_score import BIC
    return DAG, ExpertKnowledge, HillClimbSearch, BIC


@pytest.fixture(scope="module")
def asia():
    net = textbook_network("asia")
    return net, net.sample(2000, seed=2)


def _knowledge(net):
    """Two true arcs forbidden, one true arc required against its direction (so the constraints bind)."""
    true = net.dag.sorted_arcs()
    return true[:2], [(true[3][1], true[3][0])]


def _pgmpy_bic(frame, arcs) -> float:
    DAG, _, _, BIC = _pgmpy()
    g = DAG()
    g.add_nodes_from(frame.columns)
    g.add_edges_from(arcs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(BIC(frame).score(g))


def _pgmpy_constrained_hc(frame, forbid, require) -> list:
    _, ExpertKnowledge, HillClimbSearch, _ = _pgmpy()
    ek = ExpertKnowledge(forbidden_edges=list(forbid), required_edges=list(require))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = HillClimbSearch(frame).estimate(scoring_method="bic-d", expert_knowledge=ek, show_progress=False)
    return list(g.edges())


@pytest.mark.parametrize("name, rows", [("asia", 2000), ("child", 1000)])
def test_the_tabu_search_honours_the_arcs_with_a_bic_at_least_pgmpys_constrained_hill_climb(name, rows):
    net = textbook_network(name)
    data = net.sample(rows, seed=2)
    forbid, require = _knowledge(net)
    frame = data.frame.astype(str)
    theirs = _pgmpy_constrained_hc(frame, forbid, require)
    assert all(a in theirs for a in require) and not any(a in theirs for a in forbid)
    learned = learn_recipe(data, Recipe(structure="hc", forbid=tuple(forbid), require=tuple(require)))
    arcs = learned.dag.sorted_arcs()
    assert all(a in arcs for a in require) and not any(a in arcs for a in forbid)
    ours = _pgmpy_bic(frame, arcs)
    assert ours >= _pgmpy_bic(frame, theirs) - 1e-6
    assert learned.result.score == pytest.approx(ours, rel=1e-9)  # the score reported is the returned DAG's


def test_greedy_and_exact_honour_the_arcs_and_exact_is_the_best_of_all(asia):
    net, data = asia
    forbid, require = _knowledge(net)
    frame = data.frame.astype(str)
    scores = {}
    for method in ("hc-greedy", "hc", "exact"):
        arcs = learn_recipe(data, Recipe(structure=method, forbid=forbid, require=require)).dag.sorted_arcs()
        assert all(a in arcs for a in require) and not any(a in arcs for a in forbid), method
        scores[method] = _pgmpy_bic(frame, arcs)
    assert scores["exact"] >= max(scores.values()) - 1e-6
    assert scores["exact"] >= _pgmpy_bic(frame, _pgmpy_constrained_hc(frame, forbid, require)) - 1e-6


def test_exact_is_the_brute_force_optimum_among_the_dags_that_honour_the_arcs(asia):
    _, data = asia
    sub = data.select(["smoke", "lung", "bronc", "dysp"])
    frame = sub.frame.astype(str)
    forbid, require = [("smoke", "lung"), ("bronc", "dysp")], [("dysp", "smoke")]
    _, _, _, BIC = _pgmpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scorer = BIC(frame)
        names = list(frame.columns)
        local = {
            (v, ps): scorer.local_score(v, tuple(ps))
            for v in names
            for k in range(len(names))
            for ps in itertools.combinations([u for u in names if u != v], k)
        }
    best = -np.inf
    for choice in itertools.product(*[[ps for (c, ps) in local if c == v] for v in names]):
        arcs = [(p, v) for v, ps in zip(names, choice, strict=True) for p in ps]
        if any(a in arcs for a in forbid) or not all(a in arcs for a in require):
            continue
        if nx.is_directed_acyclic_graph(nx.DiGraph(arcs)):
            best = max(best, sum(local[(v, ps)] for v, ps in zip(names, choice, strict=True)))
    learned = learn_recipe(sub, Recipe(structure="exact", forbid=forbid, require=require))
    assert learned.result.score == pytest.approx(best, rel=1e-9)


def _mst_skeleton(weight, banned=()) -> set:
    g = nx.Graph()
    n = weight.shape[0]
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(
        (a, b, weight[a, b]) for a in range(n) for b in range(a + 1, n) if {a, b} not in map(set, banned)
    )
    return {frozenset(e) for e in nx.maximum_spanning_tree(g).edges()}


def test_the_chow_liu_tree_with_knowledge_is_networkx_maximum_spanning_tree_and_honours_the_arcs(asia):
    from bnfk_core.learning.scores import scorer_for
    from bnfk_core.learning.trees import constrained_forest, mutual_information_matrix

    net, data = asia
    w = mutual_information_matrix(scorer_for(data.codes, data.cardinalities, "bic"))
    skeleton = lambda parents: {frozenset((p, v)) for v, ps in enumerate(parents) for p in ps}  # noqa: E731
    assert skeleton(constrained_forest(w)) == _mst_skeleton(w)
    # both directions of a tree pair forbidden: the maximum spanning tree of the graph without that pair
    (a, b) = sorted(next(iter(_mst_skeleton(w))))
    banned = constrained_forest(w, forbid=[(a, b), (b, a)])
    assert skeleton(banned) == _mst_skeleton(w, banned=[(a, b)])
    names = list(data.variables)
    forbid, require = [("either", "xray"), ("dysp", "bronc")], [("xray", "lung"), ("bronc", "smoke")]
    learned = learn_recipe(data, Recipe(structure="tree", forbid=forbid, require=require))
    arcs = learned.dag.sorted_arcs()
    assert all(r in arcs for r in require) and not any(f in arcs for f in forbid)
    assert all(len(ps) <= 1 for ps in learned.dag.parent_indices()) and len(arcs) <= len(names) - 1


def test_structural_em_on_missing_cells_honours_the_arcs(asia):
    net, data = asia
    codes = data.codes.copy()
    codes[np.random.default_rng(0).random(codes.shape) < 0.05] = -1
    holed = data.with_codes(codes).subset(list(range(600)))
    forbid, require = _knowledge(net)
    for missing in ("em", "available-case"):
        learned = learn_recipe(
            holed, Recipe(structure="hc-greedy", missing_data=missing, forbid=forbid, require=require)
        )
        arcs = learned.dag.sorted_arcs()
        assert all(a in arcs for a in require) and not any(a in arcs for a in forbid), missing
        assert "honoured" in learned.note


@pytest.mark.parametrize(
    "options, named",
    [
        (dict(structure="empty", forbid="asia->tub"), "Empty network ('empty') cannot honour"),
        (
            dict(structure="tree", require="asia->tub, lung->tub"),
            "'tub' has two required parents (asia, lung)",
        ),
        (dict(structure="tan", require="asia->tub"), "('tan') cannot honour"),
        (dict(structure="hc", forbid="asia-tub"), "'asia-tub' is not an arc"),
        (dict(structure="hc", require="asia->nowhere"), "asia->nowhere names 'nowhere'"),
        (dict(structure="hc", require="asia->tub", forbid="asia->tub"), "asia->tub is both required"),
        (dict(structure="hc", require="asia->tub, tub->either, either->asia"), "asia->tub, tub->either"),
        (dict(structure="exact", require="tub->tub"), "tub->tub goes from a variable to itself"),
        (dict(structure="hc", max_parents=1, require="asia->tub, lung->tub"), "'tub' has 2 required parents"),
    ],
)
def test_a_bad_arc_is_one_sentence_naming_it_before_any_search(asia, options, named):
    _, data = asia
    with pytest.raises(StructureError, match=None) as err:
        learn_recipe(data, Recipe(**options))
    text = str(err.value)
    assert named in text and text.count(". ") == 0


def test_a_recipe_with_arcs_round_trips_through_json():
    r = Recipe(structure="hc", forbid="a->b, c->d", require=[["e", "f"]]).check()
    assert r.forbid == (("a", "b"), ("c", "d")) and r.require == (("e", "f"),)
    assert Recipe.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    assert "2 forbidden arc(s), 1 required arc(s)" in r.describe()
    hash(r)  # the app caches by recipe


# ---------------------------------------------------------------------- bootstrap arc strength
@pytest.fixture(scope="module")
def asia_boot():
    net = textbook_network("asia")
    data = net.sample(5000, seed=3)
    return net, data, arc_strength(data, Recipe(structure="hc-greedy"), replicates=20, seed=7)


def test_bootstrap_strength_separates_the_true_arcs_from_the_absent_ones(asia_boot):
    net, data, boot = asia_boot
    true = {frozenset(a) for a in net.dag.sorted_arcs()}
    pairs = [frozenset(p) for p in itertools.combinations(data.variables, 2)]
    strength = {p: boot.strength(*sorted(p)) for p in pairs}
    weakest_true = min(strength[p] for p in true)
    strongest_absent = max(strength[p] for p in pairs if p not in true)
    assert weakest_true > strongest_absent
    assert sum(strength[p] for p in true) / len(true) > 0.8 > 0.1 > strongest_absent


def test_bootstrap_table_is_strength_and_direction_of_the_counts(asia_boot):
    _, _, boot = asia_boot
    t = boot.table
    assert set(t.columns) == {"from", "to", "strength", "direction"}
    assert (np.round(t["strength"] * 20) == t["strength"] * 20).all()  # shares of 20 networks
    back = {(a, b): d for a, b, d in zip(t["from"], t["to"], t["direction"], strict=True)}
    for (a, b), d in back.items():  # the two directions of a pair share its strength and sum to one
        assert d + back[(b, a)] == pytest.approx(1.0)
        assert boot.strength(a, b) == boot.strength(b, a)
    assert list(t["strength"]) == sorted(t["strength"], reverse=True)
    records = boot.to_records()
    assert set(records[0]) == {"from", "to", "strength", "direction"}


def test_bootstrap_is_seeded_and_a_weighted_resample_learns_as_its_rows(asia):
    _, data = asia
    small = data.subset(list(range(400)))
    recipe = Recipe(structure="hc-greedy")
    seen = []
    a = arc_strength(small, recipe, replicates=5, seed=11, progress=lambda f, m: seen.append(f))
    b = arc_strength(small, recipe, replicates=5, seed=11)
    c = arc_strength(small, recipe, replicates=5, seed=12)
    assert a.table.equals(b.table) and (a.counts == b.counts).all()
    assert not (a.counts == c.counts).all()
    assert seen[-1] == 1.0 and len(seen) == 5
    # one replicate by hand: the multinomial multiplicities of the distinct rows, expanded to plain rows
    from bnfk_core.data.stream import distinct_rows

    rows, counts = distinct_rows(small.codes)
    w = np.random.default_rng(11).multinomial(small.n_rows, counts / small.n_rows)
    plain = small.with_codes(np.repeat(rows, w, axis=0))
    one = arc_strength(small, recipe, replicates=1, seed=11)
    expected = learn_recipe(plain, recipe).dag.sorted_arcs()
    got = [
        (u, v)
        for u, v in itertools.permutations(small.variables, 2)
        if one.counts[one.variables.index(u), one.variables.index(v)]
    ]
    assert sorted(got) == sorted(expected)


def test_bootstrap_honours_the_arcs_and_refuses_bad_counts(asia):
    _, data = asia
    small = data.subset(list(range(300)))
    boot = arc_strength(
        small,
        Recipe(structure="hc-greedy", forbid="smoke->lung", require="asia->either"),
        replicates=3,
        seed=0,
    )
    assert boot.direction("asia", "either") == 1.0 and boot.strength("asia", "either") == 1.0
    assert boot.counts[boot.variables.index("smoke"), boot.variables.index("lung")] == 0
    for bad in (0, 2.5, True):
        with pytest.raises(StructureError, match="bootstrap replicates"):
            arc_strength(small, Recipe(structure="hc-greedy"), replicates=bad)


# ---------------------------------------------------------------------- the command line
def test_learn_cli_forbid_require_and_bootstrap(tmp_path, capsys, asia):
    from bnfk_core.cli.main import main

    _, data = asia
    csv = tmp_path / "asia.csv"
    data.subset(list(range(800))).frame.to_csv(csv, index=False)
    out = tmp_path / "m.json"
    argv = [
        "learn",
        str(csv),
        "--structure",
        "hc-greedy",
        "--forbid",
        "smoke->lung, either->xray",
        "--require",
        "asia->either",
        "--bootstrap",
        "4",
        "--quiet",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert ["asia", "either"] in result["arcs"]
    assert ["smoke", "lung"] not in result["arcs"] and ["either", "xray"] not in result["arcs"]
    rows = result["arc_strength"]
    assert rows and set(rows[0]) == {"from", "to", "strength", "direction"}
    assert {"from": "asia", "to": "either", "strength": 1.0, "direction": 1.0} in rows
    assert result["require"] == [["asia", "either"]] and result["bootstrap"]["replicates"] == 4
    for flag, text, culprit in [
        ("--forbid", "smoke=>lung", "--forbid: 'smoke=>lung' is not an arc"),
        ("--require", "asia->zz", "names 'zz'"),
    ]:
        code = main(["learn", str(csv), "--structure", "hc", flag, text, "--quiet", "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("error: ") and culprit in err and err.count("\n") == 1


def test_the_strength_figure_draws_majority_directions_even_when_they_form_a_cycle():
    from bnfk_core.views.figures.knowledge import strength_figure, strong_arcs

    def row(u, v, s, d):
        return {"from": u, "to": v, "strength": s, "direction": d}

    records = [row("a", "b", 0.9, 0.8), row("b", "a", 0.9, 0.2), row("b", "c", 0.6, 0.7)]
    records += [row("c", "b", 0.6, 0.3), row("c", "a", 0.7, 0.6), row("a", "c", 0.7, 0.4)]
    records += [row("a", "d", 0.4, 0.5), row("d", "a", 0.4, 0.5)]
    directed, undirected, strength = strong_arcs(records, 0.5)
    assert sorted(directed) == [("a", "b"), ("b", "c"), ("c", "a")] and undirected == []  # a cycle
    fig = strength_figure(["a", "b", "c", "d"], records, 0.5)
    widths = sorted(a.arrowwidth for a in fig.layout.annotations if a.showarrow)
    assert widths == pytest.approx([1 + 5 * 0.6, 1 + 5 * 0.7, 1 + 5 * 0.9])
    assert {"0.90", "0.60", "0.70"} <= {a.text for a in fig.layout.annotations}
    _, ties, _ = strong_arcs(records, 0.3)
    assert ties == [("a", "d")]
