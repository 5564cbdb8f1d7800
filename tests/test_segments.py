"""bnfk_core.analyses.segments: case tables, pair finding, MI ranking, collapsed-variable statistics, arc
search.

Independent references: brute-force s(x)^T I^-1 s(y) per variable (helpers_bruteforce), scikit-learn's
mutual_info_score, scipy's Cramér's V, enumeration of all row pairs, and a full Gram recomputation.
"""

import itertools
import json

import helpers_bruteforce as bf
import numpy as np
import pandas as pd
import pytest
from scipy.stats.contingency import association
from sklearn.metrics import adjusted_rand_score, mutual_info_score

from bnfk_core.analyses.segments import equivalence as markov_equivalence
from bnfk_core.analyses.segments import information as segment_information
from bnfk_core.analyses.segments import network_checks
from bnfk_core.analyses.segments import search as arcs
from bnfk_core.analyses.segments import tables as segment_tables
from bnfk_core.cli import main
from bnfk_core.data import stats
from bnfk_core.data.table import load_csv
from bnfk_core.kernels import fisher as kernels
from bnfk_core.network.dag import DAG, apply_segment, segment_arcs
from bnfk_core.network.model import fit

KINDS3 = ("v", "a", "chain")


def _hv():
    return load_csv(_path("house_votes_84"), class_column="class", missing_policy="category")


def _path(name):
    from conftest import _sample

    return str(_sample(name))


def _random_segment_model(kind, variables, seed, cards=None, extra=True):
    """Random positive CPTs on the segment plus outside variables that are children (allowed)."""
    nodes = list(variables) + (["z", "t"] if extra else [])
    arcs = segment_arcs(kind, variables)
    if extra:
        arcs += [(variables[-1], "z"), (variables[0], "t"), ("z", "t")]
    rng = np.random.default_rng(seed)
    cards = cards or list(rng.integers(2, 4, len(nodes)))
    return bf.random_model(DAG(nodes, arcs), cards, seed=seed)


# ====================================================================== case tables
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "kind,m", [("single-arc", 2), ("v", 3), ("a", 3), ("chain", 3), ("full", 2), ("full", 3), ("full", 4)]
)
def test_case_table_theory_equals_measured_on_random_models(kind, m, seed):
    variables = ["u", "v", "w", "y"][:m]
    model = _random_segment_model(kind, variables, seed)
    data = model.sample(600, seed=seed)
    table = segment_tables.case_table(model, data, kind, variables)
    assert len(table.rows) == 2**m
    assert [r.case for r in table.rows][:4] == ["a", "b", "c", "d"]
    for r in table.rows:
        assert r.pair is not None, f"no pair for case {r.case}"
        assert r.measured == pytest.approx(r.theory, abs=1e-9, rel=1e-9)
        # the pair really falls in the case
        assert segment_tables.pair_pattern(data.codes, range(m), *r.pair) == r.pattern
    assert table.max_difference < 1e-9


@pytest.mark.parametrize("kind", ["single-arc", *KINDS3, "full"])
def test_measured_equals_bruteforce_fisher_terms(kind):
    """The measured sum equals s_i(x)^T I_ii^-1 s_i(y) summed over the segment, by enumeration."""
    variables = ["u", "v"] if kind == "single-arc" else ["u", "v", "w"]
    model = _random_segment_model(kind, variables, 5, cards=[2, 3, 2, 2, 2][: len(variables) + 2])
    data = model.sample(300, seed=3)
    table = segment_tables.case_table(model, data, kind, variables)
    brute = bf.BruteFisher(model)
    for r in table.rows[:4]:
        x, y = data.codes[r.pair[0]], data.codes[r.pair[1]]
        want = brute.contributions(x, y)[: len(variables)].sum()
        assert r.measured == pytest.approx(want, abs=1e-8)
        assert r.theory == pytest.approx(want, abs=1e-8)


def test_case_formulas_follow_the_thesis_notation():
    t = segment_tables._TABLES
    assert t["single-arc"]["a"][0] == "1/(αφ) − 1"
    assert t["v"]["b"][0] == "1/α + 1/β − 2 − 1/δ"
    assert t["a"]["e"][0] == "−1/α − 1" and t["chain"]["c"][0] == "1/(γψ) − 1/α − 1"
    assert segment_tables.case_patterns(3) == [
        (1, 1, 1),
        (1, 1, 0),
        (1, 0, 1),
        (0, 1, 1),
        (1, 0, 0),
        (0, 1, 0),
        (0, 0, 1),
        (0, 0, 0),
    ]
    assert segment_tables.case_labels(28)[-3:] == ["z", "aa", "ab"]


@pytest.mark.parametrize(
    "kind,variables",
    [
        ("single-arc", ["physician-fee-freeze", "el-salvador-aid"]),
        ("v", ["crime", "mx-missile", "immigration"]),
        ("a", ["el-salvador-aid", "aid-to-nicaraguan-contras", "mx-missile"]),
        ("chain", ["el-salvador-aid", "aid-to-nicaraguan-contras", "mx-missile"]),
        ("full", ["crime", "mx-missile", "immigration", "synfuels-corporation-cutback"]),
    ],
)
def test_case_table_on_real_data(kind, variables):
    data = _hv()
    model = segment_tables.segment_model(data, kind, variables)
    assert "class" not in model.variables
    assert sorted(model.dag.arcs) == sorted(segment_arcs(kind, variables))
    table = segment_tables.case_table(model, data, kind, variables)
    assert all(r.pair is not None for r in table.rows)
    assert table.max_difference < 1e-9
    d = table.to_dict()
    json.dumps(d)
    assert set(d["definitions"]) <= set(segment_tables.GREEK)
    assert d["roles"][("u" if kind != "full" else "X1")] == variables[0]
    # the empty-network comparison: with no segment arc, the same pair's contribution is Σ 1/P - m
    if kind != "full":
        row = table.rows[-1]
        assert row.empty_theory == pytest.approx(-len(variables))


def test_case_table_on_a_learned_base_keeps_other_arcs():
    data = _hv()
    base = DAG(
        data.without_class().variables,
        [("crime", "religious-groups-in-schools"), ("crime", "el-salvador-aid")],
    )
    model = segment_tables.segment_model(
        data, "v", ["handicapped-infants", "water-project-cost-sharing", "crime"], base
    )
    assert ("crime", "el-salvador-aid") in model.dag.arcs  # a child of the segment is fine
    table = segment_tables.case_table(
        model, data, "v", ["handicapped-infants", "water-project-cost-sharing", "crime"]
    )
    assert table.max_difference < 1e-9


def test_case_table_refuses_outside_parents_and_bad_input():
    data = _hv()
    feats = data.without_class().variables
    base = DAG(feats, [("crime", "mx-missile")])
    model = segment_tables.segment_model(data, "single-arc", ["mx-missile", "immigration"], base)
    with pytest.raises(segment_tables.SegmentError, match="'mx-missile' has parent 'crime'"):
        segment_tables.case_table(model, data, "single-arc", ["mx-missile", "immigration"])
    with pytest.raises(segment_tables.SegmentError, match="label column"):
        segment_tables.segment_model(data, "single-arc", ["class", "crime"])
    with pytest.raises(segment_tables.SegmentError, match="'nope'"):
        segment_tables.segment_model(data, "single-arc", ["nope", "crime"])
    with pytest.raises(segment_tables.SegmentError, match="lacks the arc"):
        segment_tables.case_table(
            fit(DAG(feats), data.without_class()), data, "single-arc", ["crime", "mx-missile"]
        )


def test_impossible_case_has_no_theory():
    """A one-state variable cannot differ: those cases have neither pair nor theory."""
    model = bf.random_model(DAG(["u", "v"], [("u", "v")]), [2, 1], seed=0)
    data = model.sample(50, seed=0)
    table = segment_tables.case_table(model, data, "single-arc", ["u", "v"])
    by = {r.case: r for r in table.rows}
    assert by["b"].pair is None and by["b"].theory is None
    assert by["a"].measured == pytest.approx(by["a"].theory, abs=1e-12)


# ====================================================================== pair finding
def _all_patterns(codes, idx):
    pats = {}
    for i, j in itertools.combinations(range(len(codes)), 2):
        if (codes[[i, j]][:, idx] >= 0).all():
            pats.setdefault(segment_tables.pair_pattern(codes, idx, i, j), (i, j))
    return pats


@pytest.mark.parametrize("seed", range(6))
def test_find_pair_finds_exactly_the_cases_that_exist(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 12)), 3
    codes = rng.integers(0, 3, (n, m + 1))
    codes[rng.random((n, m + 1)) < 0.1] = -1
    idx = [0, 2, 3]
    exist = _all_patterns(codes, idx)
    for pat in segment_tables.case_patterns(m):
        got = segment_tables.find_pair(codes, idx, pat)
        if pat in exist:
            assert got is not None and segment_tables.pair_pattern(codes, idx, *got) == pat
            assert (codes[list(got)][:, idx] >= 0).all()
        else:
            assert got is None
        got2 = segment_tables.find_pair(codes, idx, pat, seed=1)
        assert (got2 is None) == (pat not in exist)


# ====================================================================== information measures
def test_mi_ranking_matches_sklearn():
    data = _hv()
    feats = data.without_class()
    C = feats.codes
    names = feats.variables
    top = segment_information.mi_ranking(data, "single-arc", top=5)
    allmi = sorted(
        (
            (mutual_info_score(C[:, i], C[:, j]), (names[i], names[j]))
            for i, j in itertools.combinations(range(len(names)), 2)
        ),
        key=lambda t: -t[0],
    )
    for r, (mi, pair) in zip(top.itertuples(), allmi):
        assert r.score == pytest.approx(mi, abs=1e-12)
        assert r.variables == pair
    assert "class" not in {v for vs in top.variables for v in vs}


def _mi(a, b):
    return mutual_info_score(a, b)


def _joint(*cols):
    return np.unique(np.column_stack(cols), axis=0, return_inverse=True)[1].ravel()


def test_mi_ranking_triples_match_independent_scores():
    data = load_csv(_path("hayes_roth"), class_column="class")
    C = data.without_class().codes
    names = list(data.without_class().variables)
    col = {n: C[:, k] for k, n in enumerate(names)}
    for kind in ("a", "chain", "v", "full"):
        df = segment_information.mi_ranking(data, kind, top=50)
        assert len(df) == 4  # C(4, 3)
        for r in df.itertuples():
            u, v, w = (col[n] for n in r.variables)
            if kind in ("a", "chain"):
                want = _mi(u, v) + _mi(u, w)
                alts = [_mi(v, u) + _mi(v, w), _mi(w, u) + _mi(w, v)]
            elif kind == "v":
                want = _mi(w, _joint(u, v))
                alts = [_mi(u, _joint(v, w)), _mi(v, _joint(u, w))]
            else:
                want = _mi(_joint(u, v), w) + _mi(u, v)  # total correlation
                alts = []
            assert r.score == pytest.approx(want, abs=1e-10)
            assert all(want >= a - 1e-12 for a in alts)
            assert r.mi_uv == pytest.approx(_mi(u, v), abs=1e-10)
        assert list(df.score) == sorted(df.score, reverse=True)


@pytest.mark.parametrize("kind", ["a", "v", "full"])
def test_mi_ranking_triples_with_missing_cells_match_scores_on_the_rows_observed_on_the_three(kind):
    """The count-table path (cells missing: every triple on its own complete rows) against scikit-learn."""
    from bnfk_core.data.table import from_codes

    rng = np.random.default_rng(5)
    C = rng.integers(0, 3, size=(300, 5))
    C[:, 1] = (C[:, 0] + (rng.random(300) < 0.2)) % 3  # some dependence to rank
    C[rng.random(C.shape) < 0.15] = -1
    names = [f"x{i}" for i in range(5)]
    data = from_codes(C, names, [("a", "b", "c")] * 5)
    df = segment_information.mi_ranking(data, kind, top=50)
    assert len(df) == 10  # C(5, 3)
    for r in df.itertuples():
        T = C[:, [names.index(n) for n in r.variables]]
        u, v, w = T[(T >= 0).all(axis=1)].T
        want = {
            "a": _mi(u, v) + _mi(u, w),
            "v": _mi(w, _joint(u, v)),
            "full": _mi(_joint(u, v), w) + _mi(u, v),
        }
        assert r.score == pytest.approx(want[kind], abs=1e-10)
        assert r.mi_uv == pytest.approx(_mi(u, v), abs=1e-10) and r.mi_vw == pytest.approx(
            _mi(v, w), abs=1e-10
        )


def test_entropy_by_counts_equals_entropy_by_sorting_bit_for_bit():
    from bnfk_core.data import stats

    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(500, 3))
    X[rng.random(X.shape) < 0.1] = -1
    for cols in ([0], [1, 2], [0, 1, 2]):
        inv, _ = stats._joint_index(X[:, cols])
        p = np.bincount(inv) / len(inv)
        assert stats.entropy(X[:, cols]) == float(-(p * np.log(p)).sum())


def test_theils_u_and_cramers_v_match_independent_formulas():
    from scipy.stats import entropy

    data = _hv()
    lab = data.labels()
    for a, b in [("physician-fee-freeze", "el-salvador-aid"), ("crime", "immigration")]:
        stats = segment_information.collapsed_stats(data, [a, b])
        assert list(stats.variable) == [a, b, f"{a}∩{b}"]
        cols = [data.codes[:, data.index(a)], data.codes[:, data.index(b)]]
        cols.append(_joint(*cols))
        for k, x in enumerate(cols):
            T = np.zeros((x.max() + 1, lab.max() + 1))
            np.add.at(T, (x, lab), 1)
            T = T[T.sum(axis=1) > 0][:, T.sum(axis=0) > 0]
            assert stats.cramers_v[k] == pytest.approx(association(T.astype(int), method="cramer"), abs=1e-12)
            n, (r, c) = T.sum(), T.shape
            phi2 = max(
                0.0,
                association(T.astype(int), method="cramer") ** 2 * min(r - 1, c - 1)
                - (r - 1) * (c - 1) / (n - 1),
            )
            corr = np.sqrt(phi2 / min(r - (r - 1) ** 2 / (n - 1) - 1, c - (c - 1) ** 2 / (n - 1) - 1))
            assert stats.cramers_v_corrected[k] == pytest.approx(corr, abs=1e-12)
            H = entropy(np.bincount(lab))
            assert stats.theils_u[k] == pytest.approx(mutual_info_score(lab, x) / H, abs=1e-12)
        # the collapsed variable carries at least the information of each part (Theil's U is monotone)
        assert stats.theils_u[2] >= max(stats.theils_u[0], stats.theils_u[1]) - 1e-12


def test_theils_u_and_cramers_v_edge_cases():
    assert stats.theils_u(np.zeros(5, int), np.arange(5)) is None  # constant label
    assert stats.cramers_v(np.zeros(5, int), np.arange(5)) is None
    x = np.array([0, 1, 0, 1, -1])
    assert stats.theils_u(x, x) == pytest.approx(1.0)
    assert stats.cramers_v(x, x) == pytest.approx(1.0)
    c, states = stats.collapse(_hv(), ["crime", "mx-missile"])
    assert len(states) == c.max() + 1 and "|" in states[0]


# ====================================================================== arc search
@pytest.mark.parametrize("params", ["ml", "smoothed"])
def test_cached_gram_update_equals_full_recomputation(params):
    data = load_csv(_path("hayes_roth"), class_column="class")
    feats = data.without_class()
    names = feats.variables
    model = fit(DAG(names, [(names[0], names[1]), (names[1], names[2])]), feats, method=params)
    K = kernels.gram(model, feats)
    assert sum(arcs.variable_term(model, feats.codes, i) for i in range(len(names))) == pytest.approx(
        K, abs=1e-9
    )
    # an arc into the chain's top changes the parent marginals below it
    assert arcs.affected_terms(model.dag, names[0]) == [0, 1, 2]
    assert arcs.affected_terms(model.dag, names[3]) == [3]
    for u, v in [(names[3], names[1]), (names[3], names[0]), (names[1], names[3]), (names[0], names[2])]:
        new, Kc = arcs.add_arc_gram(model, feats.codes, K, u, v, params=params)
        ref = fit(model.dag.add_arc(u, v), feats, method=params)
        assert new.dag == ref.dag
        for a, b in zip(new.cpts, ref.cpts):
            np.testing.assert_allclose(a, b, atol=1e-15)
        np.testing.assert_allclose(Kc, kernels.gram(ref, feats), atol=1e-9)


def test_variable_term_with_missing_cells_uses_marginalized_features():
    model = bf.random_model(DAG(["a", "b", "c"], [("a", "b"), ("b", "c")]), [2, 3, 2], seed=1)
    codes = bf.random_rows(model, 12, seed=2, missing=0.2)
    K = kernels.gram(model, codes)
    assert sum(arcs.variable_term(model, codes, i) for i in range(3)) == pytest.approx(K, abs=1e-9)


def test_arc_search_base_is_scaled_hamming_and_is_reproducible():
    from bnfk_core.analyses.cluster.clustering import correlation_clustering

    data = load_csv(_path("hayes_roth"), class_column="class")
    r1 = arcs.arc_search(data, n_arcs=2, restarts=5, seed=3)
    r2 = arcs.arc_search(data, n_arcs=2, restarts=5, seed=3)
    assert [(s.arc, s.ari) for s in r1.steps] == [(s.arc, s.ari) for s in r2.steps]
    assert r1.base_ari == r2.base_ari and r1.dag == r2.dag and r1.dag.n_arcs == 2
    # base = correlation clustering of scaled-Hamming with the adaptive shift (thesis CC-SH)
    Ksh = kernels.gram(None, data.without_class(), kind="scaled-hamming")
    lab = correlation_clustering(Ksh, 3, restarts=5, seed=3, shift="adaptive").labels
    assert r1.base_ari == pytest.approx(adjusted_rand_score(data.labels(), lab), abs=1e-12)
    # each step's ARI is the best candidate's; the first in node order wins ties
    for s in r1.steps:
        assert s.ari == max(a for _, _, a in s.candidates)
        assert s.arc == next((u, v) for u, v, a in s.candidates if a == s.ari)
        assert s.n_evaluated <= s.n_candidates


def test_arc_search_dedupe_and_progress_and_missing_data():
    data = load_csv(_path("hayes_roth"), class_column="class")
    seen = []
    a = arcs.arc_search(data, n_arcs=1, restarts=3, seed=0, progress=lambda f, m: seen.append(f))
    b = arcs.arc_search(data, n_arcs=1, restarts=3, seed=0, dedupe=False)
    assert [(s.arc, s.ari) for s in a.steps] == [(s.arc, s.ari) for s in b.steps]
    assert a.steps[0].n_evaluated < b.steps[0].n_evaluated == b.steps[0].n_candidates == 12
    assert seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen) and seen == sorted(seen)
    # missing cells: full recomputation per candidate, still the same interface
    codes = data.codes.copy()
    codes[np.random.default_rng(0).random(codes.shape) < 0.05] = -1
    codes[:, data.index("class")] = data.labels()
    miss = data.with_codes(codes)
    r = arcs.arc_search(miss, n_arcs=1, restarts=3, seed=0)
    assert not r.cached and r.notes and len(r.steps) == 1


def test_arc_search_errors():
    data = load_csv(_path("hayes_roth"))
    with pytest.raises(segment_tables.SegmentError, match="supervised"):
        arcs.arc_search(data)
    with pytest.raises(segment_tables.SegmentError, match="no network"):
        arcs.arc_search(data, label_column="class", kernel="hamming")
    with pytest.raises(segment_tables.SegmentError, match="algorithm"):
        arcs.arc_search(data, label_column="class", algorithm="kmeans")


def test_candidate_arcs_skip_adjacent_and_cycles():
    dag = DAG(["a", "b", "c"], [("a", "b"), ("b", "c")])
    assert arcs.candidate_arcs(dag) == [("a", "c")]
    assert len(arcs.candidate_arcs(DAG(["a", "b", "c"]))) == 6
    assert apply_segment(DAG(["a", "b", "c"]), "chain", ["a", "b", "c"]).has_arc("c", "a")


def test_reverse_covered_arc_keeps_joint_and_kernel():
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")])
    model = bf.random_model(dag, [2, 3, 2, 3], seed=4)
    rows = model.sample(40, seed=1).codes
    K = kernels.gram(model, rows)
    from bnfk_core.network.dag import covered_arcs, equivalent

    for u, v in covered_arcs(dag):
        rev = markov_equivalence.reverse_covered_arc(model, u, v)
        assert equivalent(rev.dag, dag) and rev.dag.has_arc(v, u)
        np.testing.assert_allclose(bf.joint_table(rev)[1], bf.joint_table(model)[1], atol=1e-12)
        np.testing.assert_allclose(kernels.gram(rev, rows), K, atol=1e-9)
    with pytest.raises(segment_tables.SegmentError, match="not a covered arc"):
        markov_equivalence.reverse_covered_arc(model, "c", "d")


# ====================================================================== CLI
def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_segment_table_json(capsys):
    code, out, err = _run(
        capsys,
        "segment-table",
        "chain",
        _path("hayes_roth"),
        "--variables",
        "hobby,age,educational-level",
        "--class-column",
        "class",
    )
    assert code == 0, err
    d = json.loads(out)
    assert {"kind", "variables", "definitions", "cases", "max_difference", "network_arcs", "base"} <= set(d)
    assert len(d["cases"]) == 8 and d["max_difference"] < 1e-9
    c = d["cases"][0]
    assert {"case", "formula", "theory", "measured", "pair", "condition", "values"} <= set(c)
    assert sorted(map(tuple, d["network_arcs"])) == sorted(
        segment_arcs("chain", ["hobby", "age", "educational-level"])
    )


def test_cli_segment_table_with_model_and_structure(tmp_path, capsys):
    hv = _path("house_votes_84")
    opts = ["--class-column", "class", "--missing-policy", "category"]
    path = tmp_path / "m.json"
    assert (
        main(
            [
                "learn",
                hv,
                "--method",
                "empty",
                "--quiet",
                "-o",
                str(path),
                "--drop-columns",
                "class",
                "--missing-policy",
                "category",
            ]
        )
        == 0
    )
    capsys.readouterr()
    code, out, err = _run(
        capsys,
        "segment-table",
        "single-arc",
        hv,
        "--variables",
        "crime,mx-missile",
        "--model",
        path,
        "--drop-columns",
        "class",
        "--missing-policy",
        "category",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["refit"] and d["network_arcs"] == [["crime", "mx-missile"]] and d["max_difference"] < 1e-9
    code, out, err = _run(
        capsys,
        "segment-table",
        "full",
        hv,
        "--variables",
        "crime,mx-missile,immigration",
        "--structure",
        "empty",
        *opts,
    )
    assert code == 0, err
    assert len(json.loads(out)["cases"]) == 8


def test_cli_arc_search_and_suggest_json(capsys):
    code, out, err = _run(
        capsys,
        "arc-search",
        _path("hayes_roth"),
        "--label-column",
        "class",
        "--arcs",
        "1",
        "--restarts",
        "3",
        "--seed",
        "1",
        "--quiet",
    )
    assert code == 0, err
    d = json.loads(out)
    assert {"base_ari", "steps", "seconds", "arcs"} <= set(d)
    assert len(d["steps"]) == 1 and {"arc", "ari"} <= set(d["steps"][0])
    assert len(d["steps"][0]["arc"]) == 2
    code, out, err = _run(
        capsys, "segment-suggest", "v", _path("hayes_roth"), "--class-column", "class", "--top", "2"
    )
    assert code == 0, err
    d = json.loads(out)
    assert len(d["suggestions"]) == 2 and "class" not in d["suggestions"][0]["variables"]


@pytest.mark.parametrize(
    "argv,culprit",
    [
        (["segment-table", "v", "HR", "--variables", "hobby,age"], "exactly 3 variables"),
        (["segment-table", "v", "HR", "--variables", "hobby,age,nope"], "'nope'"),
        (
            ["segment-table", "single-arc", "HR", "--variables", "hobby,class", "--class-column", "class"],
            "label column",
        ),
        (
            [
                "segment-table",
                "single-arc",
                "HR",
                "--variables",
                "hobby,age",
                "--model",
                "m.bif",
                "--structure",
                "hc",
            ],
            "either --model or --structure",
        ),
        (["arc-search", "HR", "--arcs", "1"], "--label-column"),
        (["arc-search", "HR", "--label-column", "nope"], "'nope'"),
        (["arc-search", "HR", "--label-column", "class", "--arcs", "-1"], "--arcs"),
    ],
)
def test_cli_errors_are_one_line_exit_2(capsys, argv, culprit):
    argv = [_path("hayes_roth") if a == "HR" else a for a in argv]
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and culprit in err


# ---------------------------------------------------------------------- the Segments lab's core calls
def _small_data(seed=3, n=120):
    rng = np.random.default_rng(seed)
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("a", "c")])
    model = bf.random_model(dag, [2, 3, 2, 3], seed=seed)
    from bnfk_core.data.table import from_codes

    codes = bf.random_rows(model, n, seed)
    return dag, from_codes(codes, model.variables, model.states), rng


def test_default_segment_variables_top_pair_first():
    d = _hv()
    feat = d.without_class()
    rank = segment_information.mi_ranking(d, "single-arc", top=5)
    got = segment_information.default_segment_variables(rank, feat.variables, 2, "single-arc")
    assert got == list(rank["variables"].iloc[0])
    # a full segment of four variables starts from the variable order, not from a pair
    assert segment_information.default_segment_variables(rank, feat.variables, 4, "full") == list(
        feat.variables[:4]
    )


def test_segment_choices_name_each_kind_with_its_pattern():
    from bnfk_core.network.dag import SEGMENT_KINDS, SEGMENT_LABELS, SEGMENT_PATTERNS
    from bnfk_core.views.segments import segment_choices

    got = segment_choices()
    assert list(got) == list(SEGMENT_KINDS)
    assert got["v"] == f"{SEGMENT_LABELS['v']}  {SEGMENT_PATTERNS['v']}" and "←" in got["v"]
    assert got["full"] == f"{SEGMENT_LABELS['full']}  (one collapsed variable)"


def test_segment_variables_after_a_change_of_pattern():
    after = segment_information.segment_variables_after
    variables = ["a", "b", "c", "d", "e"]
    rank = pd.DataFrame({"variables": [("c", "e", "a"), ("b", "d", "a")], "score": [0.9, 0.5]})
    # a first choice and a choice of another size take the top suggestion
    assert after(None, None, variables, "v", 3, rank) == (["c", "e", "a"], [])
    assert after(["a", "b"], ("single-arc", 2), variables, "v", 3, rank) == (["c", "e", "a"], ["a", "b"])
    # a new pattern of the same size keeps the variables (their roles change), dropping none
    assert after(["d", "b", "a"], ("v", 3), variables, "chain", 3, rank) == (["d", "b", "a"], [])
    # a choice still being made for this pattern stays as it is
    assert after(["d"], ("v", 3), variables, "v", 3, rank) == (None, [])
    # a variable gone from the table: the others are named as replaced by the top suggestion
    assert after(["d", "x", "a"], ("v", 3), variables, "v", 3, rank) == (["c", "e", "a"], ["d", "a"])
    # a full segment of four starts from the variable order
    assert after(None, None, variables, "full", 4, rank) == (["a", "b", "c", "d"], [])


def test_clustering_aris_equal_sklearn_on_the_same_seeded_clustering():
    from bnfk_core.analyses.cluster.clustering import cluster

    d = _hv().subset(np.arange(80))
    feat = d.without_class()
    K = kernels.gram(fit(DAG(feat.variables), feat), feat)
    y = d.labels()
    got = network_checks.clustering_aris(K, y, 2, restarts=3, seed=5)
    for algo in ("correlation", "spectral"):
        labels = cluster(K, 2, algo, kernel="fisher", restarts=3, seed=5).labels
        assert got[algo] == pytest.approx(adjusted_rand_score(y, labels), abs=1e-12)


def test_imputation_check_against_enumerated_posteriors():
    from bnfk_core.analyses.impute.benchmark import induce_mcar

    dag, data, _ = _small_data()
    got = network_checks.imputation_check(
        data, dag, params="smoothed", missing=0.3, test_fraction=0.5, seed=7
    )
    split = induce_mcar(data, 0.5, 0.3, seed=7)
    model = fit(dag, split.data, method="smoothed")
    hits, ces = [], []
    for r in np.flatnonzero(split.hidden.any(axis=1)):
        C, w = bf.completion_weights(model, split.data.codes[r])
        for i in np.flatnonzero(split.hidden[r]):
            p = np.array([w[C[:, i] == s].sum() for s in range(len(data.states[i]))])
            hits.append(np.argmax(p) == split.truth[r, i])
            ces.append(-np.log(max(p[split.truth[r, i]], 1e-9)))  # no cell near the cap in this model
    assert got["cells"] == split.n_hidden == len(hits)
    assert got["accuracy"] == pytest.approx(np.mean(hits), abs=1e-12)
    assert got["cross_entropy"] == pytest.approx(np.mean(ces), abs=1e-9)


def test_equivalence_edits_covered_keeps_the_kernel_others_change_the_class():
    from bnfk_core.network.dag import covered_arcs, equivalent, v_structures

    _, data, _ = _small_data()
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("d", "c")])  # a -> b covered, b -> c not
    model = fit(dag, data, method="smoothed")
    edits = markov_equivalence.equivalence_edits(dag)
    hows = [e.how for e in edits]
    assert hows.count("covered") == min(4, len(covered_arcs(dag))) and "reverse" in hows and "add" in hows
    effects = markov_equivalence.edit_effects(model, data, edits, params="smoothed")
    for e in effects:
        new = e.edit.apply(dag)
        assert e.equivalent == equivalent(new, dag)
        K_ref = kernels.gram(markov_equivalence.edited_model(model, e.edit, data, params="smoothed"), data)
        assert np.allclose(e.K, K_ref, atol=1e-12)
        if e.edit.how == "covered":
            assert e.equivalent and e.max_abs_change < 1e-9
        else:
            assert not e.equivalent and e.max_abs_change > 1e-6
        if e.edit.how == "add":
            assert set(v_structures(new)) - set(v_structures(dag))  # a new v-structure
    table = markov_equivalence.edit_effects_table(effects)
    assert list(table["Markov equivalent"]) == [e.equivalent for e in effects]
    assert markov_equivalence.equivalence_edits(DAG(["a", "b"])) == []


def test_arc_search_tables_follow_the_result():
    d = _hv().subset(np.arange(120))
    res = arcs.arc_search(d, n_arcs=2, restarts=2, seed=0).to_dict(candidates=True)
    steps, cands = arcs.arc_search_tables(res)
    assert list(steps["step"]) == [0, 1, 2]
    assert steps["ARI"].tolist() == [res["base_ari"]] + [s["ari"] for s in res["steps"]]
    assert len(cands) == len(res["steps"][-1]["candidates"])
    assert cands["ARI"].is_monotonic_decreasing
    assert cands["ARI"].iloc[0] == pytest.approx(max(c["ari"] for c in res["steps"][-1]["candidates"]))


def test_arc_search_bounds_its_candidates_by_mutual_information():
    """max_candidates keeps the candidate arcs with the highest I(u; v) (sklearn's mutual_info_score as the
    independent reference) and picks the best of them; without a bound every candidate is scored."""
    from conftest import _sample

    d = load_csv(_sample("lymphography"), class_column="class").subset(np.arange(100))
    feats = d.without_class()
    full = arcs.arc_search(d, n_arcs=1, restarts=2, seed=0, max_candidates=None)
    assert full.steps[0].n_candidates == feats.n_vars * (feats.n_vars - 1)
    m = 25
    res = arcs.arc_search(d, n_arcs=1, restarts=2, seed=0, max_candidates=m)
    scored = [(u, v) for u, v, _ in res.steps[0].candidates]
    assert len(scored) == m and any("25 of 306 candidate arcs" in n for n in res.notes)

    def mi(u, v):
        a, b = feats.codes[:, feats.index(u)], feats.codes[:, feats.index(v)]
        return mutual_info_score(a, b)

    cands = arcs.candidate_arcs(DAG(feats.variables))
    ranked = sorted(range(len(cands)), key=lambda t: (-round(mi(*cands[t]), 12), t))
    assert set(scored) == {cands[t] for t in ranked[:m]}
    full_ari = {(u, v): a for u, v, a in full.steps[0].candidates}
    assert all(abs(full_ari[(u, v)] - a) < 1e-12 for u, v, a in res.steps[0].candidates)
    assert res.steps[0].arc == max(scored, key=lambda a: (full_ari[a], -scored.index(a)))
