"""Imputation (bnfk_core.analyses.impute.core, thesis ch. 4): MCAR protocol, imputers, metrics, CLI."""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers_bruteforce import random_model

from bnfk_core.analyses.impute.benchmark import (
    CE_CAP,
    benchmark,
    capped_cross_entropy,
    evaluate,
    induce_mcar,
    macro_average,
    structure_choices,
)
from bnfk_core.analyses.impute.completion import impute_with_model
from bnfk_core.analyses.impute.core import (
    ImputeError,
    category_weights,
    impute,
    impute_augmented,
    impute_bn,
    impute_mode,
    impute_wknn,
    knn_vote,
    learn_model,
)
from bnfk_core.cli import main
from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.learning.exact import EXACT_MAX_VARIABLES
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import write_model
from bnfk_core.registry import LEARNERS

ROOT = Path(__file__).resolve().parents[1]
TTT = str(ROOT / "sample_data" / "tic_tac_toe.csv")
HAYES = str(ROOT / "sample_data" / "hayes_roth.csv")
HV = str(ROOT / "sample_data" / "house_votes_84.csv")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def ttt():
    return load_csv(TTT, class_column="class")


# ---------------------------------------------------------------------- induce_mcar
@pytest.mark.parametrize("tr,mr", [(0.1, 0.1), (0.3, 0.5), (0.5, 0.2)])
def test_induce_mcar_counts_and_location(ttt, tr, mr):
    s = induce_mcar(ttt, tr, mr, seed=4)
    N, n = ttt.codes.shape
    cls = ttt.index("class")
    assert len(s.test_rows) == round(tr * N) and len(np.unique(s.test_rows)) == len(s.test_rows)
    eligible = len(s.test_rows) * (n - 1)  # class cells are never hidden by default
    assert s.n_hidden == round(mr * eligible)
    train = np.setdiff1d(np.arange(N), s.test_rows)
    assert not s.hidden[train].any() and not s.hidden[:, cls].any()
    assert (s.data.codes[s.hidden] == -1).all()
    assert (s.data.codes[~s.hidden] == ttt.codes[~s.hidden]).all()
    assert (s.truth == ttt.codes).all() and s.data.states == ttt.states
    assert s.data.complete_rows()[train].all()


def test_induce_mcar_is_seeded_and_class_optional(ttt):
    a, b, c = (induce_mcar(ttt, 0.3, 0.3, seed=s) for s in (1, 1, 2))
    assert (a.hidden == b.hidden).all() and (a.test_rows == b.test_rows).all()
    assert not (a.hidden == c.hidden).all()
    withc = induce_mcar(ttt, 0.5, 0.5, seed=0, include_class=True)
    assert withc.n_hidden == round(0.5 * round(0.5 * ttt.n_rows) * ttt.n_vars)
    assert withc.hidden[:, ttt.index("class")].any()


def test_induce_mcar_only_hides_observed_cells():
    codes = np.array([[0, 1], [-1, 0], [1, -1], [0, 0]])
    d = from_codes(codes, ["a", "b"], [["x", "y"], ["x", "y"]])
    s = induce_mcar(d, 0.99, 0.99, seed=0)  # all rows in the test part, every observed cell hidden
    assert s.n_hidden == 6 and not (s.hidden & (codes < 0)).any()


@pytest.mark.parametrize("tr,mr", [(0, 0.2), (1.5, 0.2), (0.2, 1.5), ("x", 0.2), (0.2, 1)])
def test_induce_mcar_bad_ratios(ttt, tr, mr):
    with pytest.raises(ImputeError, match="ratio"):
        induce_mcar(ttt, tr, mr)


def test_induce_mcar_whole_table(ttt):
    """test ratio 1: every row is in the test part, the cells are hidden anywhere in the table."""
    d = ttt.without_class()
    s = induce_mcar(d, 1, 0.1, seed=3)
    assert len(s.test_rows) == d.n_rows
    assert s.n_hidden == round(0.1 * (d.codes >= 0).sum())


# ---------------------------------------------------------------------- bn = brute force
def _brute_posterior(model, row, i):
    """P(X_i | observed cells of row) by enumerating every joint configuration."""
    cards = [len(s) for s in model.states]
    par = model.parents
    p = np.zeros(cards[i])
    for x in itertools.product(*[range(c) for c in cards]):
        if any(row[v] >= 0 and row[v] != x[v] for v in range(len(cards))):
            continue
        pr = 1.0
        for v in range(len(cards)):
            j = 0
            for u in par[v]:
                j = j * cards[u] + x[u]
            pr *= model.cpts[v][j, x[v]]
        p[x[i]] += pr
    return p / p.sum()


def test_bn_posterior_equals_enumeration():
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    model = random_model(dag, [2, 3, 2, 3], seed=7)
    full = model.sample(60, seed=1)
    rng = np.random.default_rng(0)
    codes = full.codes.copy()
    codes[rng.random(codes.shape) < 0.35] = -1
    data = full.with_codes(codes)
    imp = impute_bn(data, model=model)
    assert imp.n_cells == int((codes < 0).sum())
    for i, (rows, probs) in imp.cells.items():
        assert (rows == np.flatnonzero(codes[:, i] < 0)).all()
        for r, p in zip(rows, probs):
            np.testing.assert_allclose(p, _brute_posterior(model, codes[r], i), atol=1e-12)


def test_bn_learns_structure_on_complete_rows_and_parameters_on_all(ttt):
    s = induce_mcar(ttt.without_class(), 0.3, 0.3, seed=0)
    model = learn_model(s.data, structure="tree", params="cnml")
    assert model.fit_info["n_rows"] == ttt.n_rows and model.fit_info["method"] == "cnml"
    imp = impute(s.data, "bn", structure="tree")
    assert imp.n_cells == s.n_hidden
    for _, p in imp.cells.values():
        np.testing.assert_allclose(p.sum(axis=1), 1.0)


# ---------------------------------------------------------------------- mode, wknn
def test_mode_is_relative_frequencies():
    codes = np.array([[0, 0], [0, 1], [1, -1], [2, 1], [-1, 1], [0, 0]])
    d = from_codes(codes, ["a", "b"], [["x", "y", "z"], ["u", "v"]])
    imp = impute_mode(d)
    rows, p = imp.cells[0]
    assert rows.tolist() == [4]
    np.testing.assert_allclose(p, [[3 / 5, 1 / 5, 1 / 5]])
    rows, p = imp.cells[1]
    assert rows.tolist() == [2]
    np.testing.assert_allclose(p, [[2 / 5, 3 / 5]])


def test_wknn_hand_made_example():
    # target row 0 misses 'c'; by Hamming over a, b (observed in row 0):
    #   row 1 matches a,b (2), row 2 matches a (1), row 3 matches b (1), row 4 matches none,
    #   row 5 matches a,b but misses c (not a candidate); k = 3 -> rows 1, 2, 3.
    codes = np.array(
        [
            [0, 0, -1],
            [0, 0, 0],
            [0, 1, 1],
            [1, 0, 1],
            [1, 1, 0],
            [0, 0, -1],
            [1, 1, 0],
            [1, 1, 0],
        ]
    )
    d = from_codes(codes, ["a", "b", "c"], [["p", "q"], ["p", "q"], ["p", "q"]])
    # frequencies of c among observed cells: c=0 in rows 1,4,6,7 (4/6), c=1 in rows 2,3 (2/6)
    w0, w1 = 6 / 4, 6 / 2
    want = np.array([w0, 2 * w1]) / (w0 + 2 * w1)  # neighbours vote 0, 1, 1
    imp = impute_wknn(d, k=3, seed=0)
    rows, p = imp.cells[2]
    assert rows.tolist() == [0, 5]
    np.testing.assert_allclose(p[0], want)
    np.testing.assert_allclose(p[1], want)  # row 5 has the same observed values
    np.testing.assert_allclose(category_weights(d)[2], [w0, w1])
    # k = 1: the single nearest row 1 says c = 0 with certainty
    np.testing.assert_allclose(impute_wknn(d, k=1).cells[2][1][0], [1.0, 0.0])


def test_knn_vote_ties_are_seeded_random():
    codes = np.array([[-1, 0]] + [[k % 2, 0] for k in range(20)])
    d = from_codes(codes, ["a", "b"], [["p", "q"], ["p"]])
    S = np.zeros((21, 21))  # every candidate equally close
    outs = [knn_vote(S, d, k=1, seed=s)[0][1][0] for s in range(12)]
    np.testing.assert_allclose(knn_vote(S, d, k=1, seed=0)[0][1][0], outs[0])  # same seed, same neighbour
    assert {int(np.argmax(o)) for o in outs} == {0, 1}


def test_all_methods_run_and_are_distributions(ttt):
    s = induce_mcar(ttt.without_class(), 0.2, 0.2, seed=3)
    for m in ("bn", "mode", "wknn", "fisher-knn", "bn-mode", "bn-wknn"):
        imp = impute(s.data, m, structure="tree", seed=1)
        assert imp.n_cells == s.n_hidden, m
        for _, p in imp.cells.values():
            assert (p >= 0).all() and np.allclose(p.sum(axis=1), 1.0), m
    with pytest.raises(ImputeError, match="Unknown imputation method 'nope'"):
        impute(s.data, "nope")


def test_augmented_learns_on_completed_data(ttt):
    s = induce_mcar(ttt.without_class(), 0.5, 0.5, seed=0)
    imp = impute_augmented(s.data, "mode", structure="tree")
    assert imp.model.fit_info["complete_rows"] == ttt.n_rows  # the network saw the completed table
    assert imp.n_cells == s.n_hidden


# ---------------------------------------------------------------------- metrics
def test_capped_cross_entropy_and_evaluate():
    np.testing.assert_allclose(
        capped_cross_entropy([1.0, 0.5, 1e-7, 0.0]), [0.0, math.log(2), -math.log(1e-5), -math.log(1e-5)]
    )
    assert CE_CAP == pytest.approx(11.512925465)
    from bnfk_core.analyses.impute.core import Imputation

    truth = np.array([[0, 1], [2, 0], [1, 1]])
    hidden = np.array([[True, False], [True, True], [False, False]])
    imp = Imputation(
        "x",
        {
            0: (np.array([0, 1]), np.array([[0.6, 0.3, 0.1], [0.5, 0.5, 0.0]])),
            1: (np.array([1]), np.array([[0.2, 0.8]])),
        },
    )
    res = evaluate(imp, truth, hidden)
    assert res["cells"] == 3 and res["accuracy"] == pytest.approx(1 / 3)
    assert res["cross_entropy"] == pytest.approx((-math.log(0.6) - math.log(1e-5) - math.log(0.2)) / 3)


def test_macro_average_weighs_settings_equally():
    vals = [1.0, 1.0, 1.0, 0.0]  # setting A has three runs, B one
    mean, sd = macro_average(vals, ["A", "A", "A", "B"])
    assert mean == pytest.approx(0.5) and sd == pytest.approx(np.std(vals))
    assert macro_average([0.2, float("nan"), 0.4], [1, 1, 2]) == (pytest.approx(0.3), pytest.approx(0.1))


def test_benchmark_grid_and_summary():
    d = load_csv(HAYES, class_column="class")
    res = benchmark(
        d,
        ["mode", "wknn", "bn"],
        test_ratios=[0.2, 0.4],
        missing_ratios=[0.3],
        repeats=2,
        seed=5,
        structure="exact",
    )
    assert len(res.runs) == 2 * 1 * 2 * 3 and res.info["variables"] == 4  # class dropped
    summ = res.summary()
    for m in ("mode", "wknn", "bn"):
        sub = res.runs[res.runs.method == m]
        assert summ[m]["accuracy"] == pytest.approx(
            sub.groupby(["test_ratio", "missing_ratio"]).accuracy.mean().mean()
        )
        assert summ[m]["accuracy_std"] == pytest.approx(np.std(sub.accuracy))
    assert res.matrix("bn").shape == (2, 1)
    # same hidden cells for every method of a run: equal cell counts
    assert res.runs.groupby(["test_ratio", "repeat"]).cells.nunique().max() == 1
    again = benchmark(
        d,
        ["mode", "wknn", "bn"],
        test_ratios=[0.2, 0.4],
        missing_ratios=[0.3],
        repeats=2,
        seed=5,
        structure="exact",
    )
    pd.testing.assert_frame_equal(res.runs.drop(columns="seconds"), again.runs.drop(columns="seconds"))


def test_benchmark_table_is_the_macro_average_of_the_runs():
    d = load_csv(HAYES, class_column="class")
    res = benchmark(
        d,
        ["bn", "mode"],
        test_ratios=[0.2, 0.4],
        missing_ratios=[0.1, 0.3],
        repeats=2,
        seed=1,
        structure="tree",
    )
    table = res.table()
    assert list(table.columns) == [
        "method",
        "accuracy",
        "accuracy sd",
        "cross-entropy",
        "cross-entropy sd",
        "runs",
        "seconds",
    ]
    assert list(table["method"]) == ["BN", "Mode"]
    runs = res.runs
    for line, m in zip(table.itertuples(index=False), ("bn", "mode")):
        sub = runs[runs["method"] == m]
        per_setting = {}
        for tr, mr, acc, ce in zip(sub.test_ratio, sub.missing_ratio, sub.accuracy, sub.cross_entropy):
            per_setting.setdefault((tr, mr), []).append((acc, ce))
        assert len(per_setting) == 4
        want_acc = sum(np.mean([a for a, _ in v]) for v in per_setting.values()) / 4
        want_ce = sum(np.mean([c for _, c in v]) for v in per_setting.values()) / 4
        assert line[1] == pytest.approx(want_acc) and line[3] == pytest.approx(want_ce)
        assert line[2] == pytest.approx(np.std(sub.accuracy.to_numpy()))
        assert line[4] == pytest.approx(np.std(sub.cross_entropy.to_numpy()))
        assert line[5] == 8 and line[6] == pytest.approx(sub.seconds.sum())
    assert list(res.table({"bn": "network", "mode": "mode"})["method"]) == ["network", "mode"]


def test_structure_choices_are_the_feature_learners_and_the_thesis_rule():
    choices = structure_choices()
    expected = [m for m in LEARNERS if not LEARNERS[m].needs_class]  # the class is never imputed
    assert list(choices) == [*expected, "auto"]
    assert "tan" not in choices and "exact" in choices and "hc" in choices
    assert all(choices[m] == LEARNERS[m].label for m in expected)
    # "auto" says the rule the benchmark applies: exact search up to its variable limit, else hill climbing
    assert f"exact up to {EXACT_MAX_VARIABLES} variables" in choices["auto"]


# ---------------------------------------------------------------------- practical imputation
def test_impute_with_model_round_trip(tmp_path):
    d = load_csv(HV, missing_policy="missing", class_column="class", na_values="default-list")
    model = learn_model(d, structure="tree", params="smoothed")
    res = impute_with_model(model, d)
    assert res.imputed.sum() == (d.codes < 0).sum() > 0
    assert not res.frame.isna().any().any() and not res.data.has_missing
    obs = d.codes >= 0
    assert (res.data.codes[obs] == d.codes[obs]).all()
    pr = res.probabilities
    assert list(pr.columns) == ["row", "column", "imputed", "state", "probability"]
    assert len(pr) == 2 * res.imputed.sum()  # two states per vote column
    np.testing.assert_allclose(pr.groupby(["row", "column"]).probability.sum(), 1.0)
    # the arg-max is what was filled in
    top = pr.loc[pr.groupby(["row", "column"]).probability.idxmax()]
    for r, c, s in zip(top.row, top.column, top.state):
        assert res.frame.loc[r, c] == s
    # CSV round trip: reload the completed file, nothing missing, observed cells unchanged
    path = tmp_path / "done.csv"
    res.frame.to_csv(path, index=False)
    back = load_csv(path, class_column="class", model=model)
    assert not back.has_missing and (back.codes[obs] == d.codes[obs]).all()


def test_imputed_cells_and_stats_equal_enumeration():
    dag = DAG(["a", "b", "c"], [("a", "b"), ("b", "c")])
    model = random_model(dag, [3, 2, 3], seed=3)
    full = model.sample(25, seed=2)
    codes = full.codes.copy()
    codes[np.random.default_rng(5).random(codes.shape) < 0.3] = -1
    codes[0] = -1  # a row with nothing observed: the prior marginals
    codes[1] = full.codes[1]  # a complete row: nothing filled
    data = full.with_codes(codes)
    res = impute_with_model(model, data)
    miss = codes < 0
    rows = np.flatnonzero(miss.any(axis=1))
    assert (res.filled_rows() == rows).all() and 1 not in rows
    brute = {(r, i): _brute_posterior(model, codes[r], i) for r, i in zip(*np.nonzero(miss))}
    stats = res.stats()
    assert stats["cells"] == int(miss.sum()) and stats["rows"] == len(rows)
    assert stats["mean_probability"] == pytest.approx(np.mean([p.max() for p in brute.values()]), abs=1e-12)
    show = np.array([1, 0, rows[-1]])
    P, dist = res.cell_probabilities(show, top=2)
    assert P.shape == dist.shape == (3, 3)
    for a, r in enumerate(show):
        for i in range(3):
            if not miss[r, i]:
                assert np.isnan(P[a, i]) and dist[a, i] is None
                continue
            p = brute[(r, i)]
            assert P[a, i] == pytest.approx(p.max(), abs=1e-12)
            want = sorted(range(len(p)), key=lambda k: -p[k])[:2]
            assert [s for s, _ in dist[a, i]] == [model.states[i][k] for k in want]
            np.testing.assert_allclose([q for _, q in dist[a, i]], p[want], atol=1e-12)


# ---------------------------------------------------------------------- CLI
def test_cli_impute_benchmark_json(capsys):
    code, out, err = run(
        capsys,
        "impute-benchmark",
        HAYES,
        "--class-column",
        "class",
        "--methods",
        "bn,mode,wknn",
        "--test-ratio",
        "0.2,0.4",
        "--missing-ratio",
        "0.3",
        "--repeats",
        "1",
        "--seed",
        "2",
        "--structure",
        "exact",
        "--score",
        "qnml",
    )
    assert code == 0, err
    res = json.loads(out)
    for m in ("bn", "mode", "wknn"):
        assert set(res[m]) >= {"accuracy", "cross_entropy", "accuracy_std", "cross_entropy_std"}
        assert 0 <= res[m]["accuracy"] <= 1 and 0 <= res[m]["cross_entropy"] <= CE_CAP
    assert len(res["grid"]) == 2 and res["grid"][0]["test_ratio"] == 0.2 and "bn" in res["grid"][0]["methods"]
    assert res["seconds"] > 0 and "%]" in err  # progress on stderr


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["--methods", "bn,magic"], "Unknown imputation method 'magic'"),
        (["--test-ratio", "0.2,abc"], "--test-ratio must be numbers"),
        (["--missing-ratio", "1.2"], "missing ratio must be strictly between 0 and 1"),
        (["--repeats", "0"], "argument --repeats: must be from 1"),
    ],
)
def test_cli_impute_benchmark_errors(capsys, argv, msg):
    code, out, err = run(capsys, "impute-benchmark", HAYES, "--quiet", *argv)
    assert code == 2 and out == "" and err.startswith("error: ") and msg in err and err.count("\n") == 1


def test_cli_impute_writes_files(tmp_path, capsys):
    d = load_csv(HV, class_column="class", na_values="default-list")
    mpath = tmp_path / "m.bif"
    write_model(learn_model(d, structure="tree", params="smoothed"), mpath)
    out_csv, p_csv = tmp_path / "done.csv", tmp_path / "p.csv"
    code, out, err = run(
        capsys,
        "impute",
        HV,
        "--model",
        mpath,
        "-o",
        out_csv,
        "--probabilities",
        p_csv,
        "--na-values",
        "default-list",
    )
    assert code == 0, err
    res = json.loads(out)
    assert res["imputed_cells"] == int((d.codes < 0).sum())
    done = pd.read_csv(out_csv, dtype=str, keep_default_na=False)
    assert (done != "?").all().all() and (done != "").all().all() and len(done) == d.n_rows
    probs = pd.read_csv(p_csv)
    assert len(probs) == 2 * res["imputed_cells"]
    # errors: bad extension, unknown model file
    code, _, err = run(capsys, "impute", HV, "--model", mpath, "-o", tmp_path / "x.txt")
    assert code == 2 and "use a file name ending in .csv" in err
    code, _, err = run(capsys, "impute", HV, "--model", tmp_path / "none.bif", "-o", out_csv)
    assert code == 2 and err.startswith("error: ")


def test_top_k_equals_full_lexsort_with_ties():
    """knn_vote's neighbours: the k largest similarities, ties by the random rank, as a full sort orders
    them."""
    from bnfk_core.analyses.impute.core import top_k

    rng = np.random.default_rng(0)
    for trial in range(200):
        rows, n, k = int(rng.integers(1, 30)), int(rng.integers(1, 60)), int(rng.integers(1, 6))
        sub = rng.integers(0, 4, (rows, n)).astype(float) if trial % 2 else np.round(rng.random((rows, n)), 2)
        keys = rng.permutation(1000)[:n]
        want = np.lexsort((np.broadcast_to(keys, sub.shape), -sub), axis=-1)[:, :k]
        np.testing.assert_array_equal(top_k(sub, keys, k), want)
