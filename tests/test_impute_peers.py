"""Imputation methods as a registry, the kNN peer against brute force, and the one-call ``impute
--structure``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

import bnfk_core.analyses  # noqa: F401 - registers the imputation methods
from bnfk_core.analyses.impute.benchmark import benchmark, induce_mcar
from bnfk_core.analyses.impute.methods import DEFAULT_IMPUTER, impute_knn_onehot, one_hot
from bnfk_core.cli import main
from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.registry import IMPUTERS

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")


def _data(codes, cards):
    return from_codes(
        np.asarray(codes), [f"v{i}" for i in range(len(cards))], [[f"s{k}" for k in range(c)] for c in cards]
    )


def test_knn_onehot_equals_brute_force_nan_euclidean_votes():
    rng = np.random.default_rng(0)
    cards = [3, 2, 4, 3, 2, 3]
    codes = np.column_stack([rng.integers(0, c, 80) for c in cards])
    codes[rng.random(codes.shape) < 0.2] = -1
    data = _data(codes, cards)
    imp = impute_knn_onehot(data, k=5)
    X, offs = one_hot(data)
    checked = 0
    for i, (rows, P) in imp.cells.items():
        donors = np.flatnonzero(codes[:, i] >= 0)
        for a, p in zip(rows, P):
            # scikit-learn's nan_euclidean: sqrt(total coords / present coords * squared distance on present
            # ones)
            both = ~np.isnan(X[a]) & ~np.isnan(X[donors])
            diff = np.where(both, X[donors] - X[a], 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                d = np.sqrt(X.shape[1] / both.sum(axis=1) * (diff**2).sum(axis=1))
            if np.isnan(d).any():
                continue  # a donor sharing no observed variable: scikit-learn's handling is its own
            order = np.argsort(d, kind="stable")
            if d[order[4]] == d[order[5]]:
                continue  # a tie at the fifth neighbour: either donor is right
            votes = np.bincount(codes[donors[order[:5]], i], minlength=cards[i]) / 5.0
            np.testing.assert_allclose(p, votes, atol=1e-12)
            checked += 1
    assert checked >= 10


def test_every_registered_method_gives_distributions():
    rng = np.random.default_rng(1)
    cards = [2, 3, 2, 2]
    codes = np.column_stack([rng.integers(0, c, 60) for c in cards])
    data = _data(codes, cards)
    split = induce_mcar(data, 1, 0.15, seed=2)
    for name in IMPUTERS:
        imp = IMPUTERS[name].impute(
            split.data, k=3, seed=0, cache={}, structure="tree", score="qnml", params="cnml"
        )
        assert sum(len(r) for r, _ in imp.cells.values()) == split.n_hidden, name
        for _, P in imp.cells.values():
            np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-9)
    assert DEFAULT_IMPUTER in IMPUTERS and IMPUTERS["knn-onehot"].peer and IMPUTERS["mode"].peer


def test_benchmark_runs_the_peers_beside_the_networks():
    d = load_csv(str(ROOT / "sample_data" / "hayes_roth.csv"), class_column="class")
    res = benchmark(
        d,
        ["bn-ac", "knn-onehot", "mode"],
        test_ratios=[0.5],
        missing_ratios=[0.2],
        repeats=1,
        structure="tree",
    )
    table = res.table()
    assert list(table["method"]) == ["BN (all rows)", "kNN (one-hot, k=5)", "Mode"]
    assert table["accuracy"].between(0, 1).all()


def _rows(path):
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return list(csv.reader(fh))


def test_impute_structure_is_learn_then_impute(tmp_path, capsys):
    """One call with the network alone (--method bn-em, the fast option) equals the two: learn then impute
    --model (both by the default recipe's score and CPT estimator)."""
    one, two, model = tmp_path / "one.csv", tmp_path / "two.csv", tmp_path / "m.json"
    na = ["--na-values", "default-list"]
    assert main(["impute", HV, "--structure", "hc", "--method", "bn-em", "-o", str(one), "--quiet", *na]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["learned"]["missing_data"] == "em" and out["imputed_cells"] == 392
    assert (
        main(["learn", HV, "--structure", "hc", "--missing-data", "em", "-o", str(model), "--quiet", *na])
        == 0
    )
    learned = json.loads(capsys.readouterr().out)
    assert learned["n_rows_used"] == 435 and learned["em_iterations"] > 0
    assert main(["impute", HV, "--model", str(model), "-o", str(two), "--quiet", *na]) == 0
    a, b, src = _rows(one), _rows(two), _rows(HV)
    assert a == b
    changed = [(r, c) for r in range(len(src)) for c in range(len(src[0])) if a[r][c] != src[r][c]]
    assert len(changed) == 392 and all(src[r][c] == "?" for r, c in changed)


def test_impute_without_a_network_in_chunks_says_to_give_one(tmp_path, capsys):
    assert main(["impute", HV, "--chunksize", "50", "-o", str(tmp_path / "x.csv")]) == 2
    assert "--model" in capsys.readouterr().err


def test_na_values_keep_question_mark_as_a_category(tmp_path, capsys):
    path = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    lines = ["a,b,c"]
    for n in range(60):
        a = rng.choice(["x", "y", "?"])
        b = "p" if a == "x" else rng.choice(["q", "?"])
        c = rng.choice(["u", "w"])
        if n % 7 == 3:
            b = ""
        lines.append(f"{a},{b},{c}")
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o.csv"
    assert main(["impute", str(path), "--structure", "tree", "-o", str(out), "--quiet"]) == 0
    res = json.loads(capsys.readouterr().out)
    src, done = _rows(path), _rows(out)
    assert res["imputed_cells"] == sum(r[1] == "" for r in src[1:])
    for s, d in zip(src[1:], done[1:]):
        assert (s[1] == "" and d[1] in ("p", "q", "?")) or s == d  # '?' stays a value, blanks are filled
    assert (
        main(
            [
                "learn",
                str(path),
                "--structure",
                "tree",
                "--na-values",
                "default-list",
                "-o",
                str(tmp_path / "m.bif"),
                "--quiet",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["rows"] == 60
