"""Bach & Jordan's §5 from the KGV: the conditional independence test (linear kernel = N times the Gaussian
conditional mutual information of the partial correlation, computed here from least-squares residuals), its
decisions with the Gaussian kernel, the Markov-blanket graph against the tests given all other variables, the
pruned search (same or better score, fewer local scores computed) and the ``kgv-test`` face."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from bnfk_core.cli import main
from bnfk_core.data.table import from_codes
from bnfk_core.learning.hill_climb import hill_climb
from bnfk_core.learning.kgv import KGVScorer, KGVStatistics, kgv_independence_test
from bnfk_core.learning.kgv_ci import ci_decision, markov_blanket_graph


def _numeric_data(X: np.ndarray, names):
    """A CategoricalData of numbers only (one dummy state each; the raw values in ``numbers``)."""
    n, d = X.shape
    data = from_codes(np.zeros((n, d), dtype=np.int32), list(names), [("v",)] * d)
    return replace(data, numbers={v: X[:, j] for j, v in enumerate(names)})


def _partial_correlation(x, y, Z):
    """ρ_{xy·Z}: the correlation of the residuals of x and y regressed (least squares) on [1, Z]."""
    A = np.column_stack([np.ones(len(x)), *([] if Z is None else [Z])])
    rx = x - A @ np.linalg.lstsq(A, x, rcond=None)[0]
    ry = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
    return float(rx @ ry / math.sqrt((rx @ rx) * (ry @ ry)))


@pytest.mark.parametrize("given", [(), (2,), (2, 3)])
def test_linear_kernel_statistic_is_n_times_the_gaussian_conditional_mi(given):
    rng = np.random.default_rng(11)
    n = 600
    Z = rng.normal(size=(n, 2))
    x = Z @ [0.8, -0.5] + rng.normal(size=n)
    y = 1.0 * x + Z @ [0.3, 0.9] + rng.normal(size=n)
    X = np.column_stack([x, y, Z])
    data = _numeric_data(X, ["x", "y", "z1", "z2"])
    names = {2: "z1", 3: "z2"}
    res = kgv_independence_test(data, "x", "y", [names[g] for g in given], kernel="linear", kappa=1e-12)
    rho = _partial_correlation(x, y, X[:, list(given)] if given else None)
    expected = -0.5 * n * math.log(1 - rho**2)
    assert res["statistic"] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert res["d_x"] == pytest.approx(1.0, abs=1e-9) and res["d_y"] == pytest.approx(1.0, abs=1e-9)
    assert res["threshold"] == pytest.approx(0.5 * math.log(n), rel=1e-9)
    assert res["independent"] is False and res["n_rows_used"] == n


def test_linear_kernel_independence_given_the_common_cause():
    """x and y both driven by z: dependent marginally, independent given z (partial correlation ≈ 0)."""
    rng = np.random.default_rng(12)
    n = 500
    z = rng.normal(size=n)
    x, y = z + 0.5 * rng.normal(size=n), z + 0.5 * rng.normal(size=n)
    data = _numeric_data(np.column_stack([x, y, z]), ["x", "y", "z"])
    marginal = kgv_independence_test(data, "x", "y", kernel="linear", kappa=1e-12)
    cond = kgv_independence_test(data, "x", "y", ["z"], kernel="linear", kappa=1e-12)
    rho = _partial_correlation(x, y, z[:, None])
    assert cond["statistic"] == pytest.approx(-0.5 * n * math.log(1 - rho**2), rel=1e-9, abs=1e-9)
    assert marginal["independent"] is False and cond["independent"] is True


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gaussian_kernel_decisions(seed):
    """Independent data is judged independent; y = x² + noise (uncorrelated with x, strongly dependent) is
    not."""
    rng = np.random.default_rng(seed)
    n = 400
    x = rng.normal(size=n)
    free = rng.normal(size=n)
    sq = x**2 + 0.2 * rng.normal(size=n)
    assert abs(np.corrcoef(x, sq)[0, 1]) < 0.2  # invisible to a correlation
    data = _numeric_data(np.column_stack([x, free, sq]), ["x", "free", "sq"])
    assert kgv_independence_test(data, "x", "free")["independent"] is True
    dep = kgv_independence_test(data, "x", "sq")
    assert dep["independent"] is False and dep["statistic"] > 5 * dep["threshold"]
    assert kgv_independence_test(data, "x", "free", ["sq"])["independent"] is True


def _chain_data(n=500, d=6, seed=3):
    rng = np.random.default_rng(seed)
    X = 0.6 * rng.normal(size=(n, d))
    X[:, 1] += 1.5 * X[:, 0]
    for j in range(2, d):
        X[:, j] += 2 * np.tanh(1.2 * X[:, j - 1])  # a non-linear chain
    X[:, 5] += X[:, 2]  # a v-structure at 5 (parents 4 and 2)
    return X


def test_markov_blanket_graph_is_the_tests_given_all_other_variables():
    X = _chain_data(n=300)
    stats = KGVStatistics([X[:, j] for j in range(X.shape[1])])
    A = markov_blanket_graph(stats)
    d = X.shape[1]
    for i in range(d):
        for j in range(i + 1, d):
            rest = [k for k in range(d) if k not in (i, j)]
            assert A[i, j] == (not ci_decision(stats, i, j, rest)["independent"])
    assert A[0, 1] and A[1, 2] and A[2, 5] and not A[0, 4] and not A[0, 5]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_markov_blanket_pruning_scores_fewer_families_and_does_not_lose(seed):
    """A Gaussian chain of 8 numbers (Gaussian kernel): the pruned climb computes a fraction of the local
    scores and returns a network scoring at least as high on the unpruned scorer.  (Where the tests miss an
    edge of the true moral graph, e.g. a weak spouse of a v-structure, the pruned space can lose.)"""
    rng = np.random.default_rng(seed)
    n, d = 800, 8
    X = rng.normal(size=(n, d))
    for j in range(1, d):
        X[:, j] += 0.9 * X[:, j - 1]
    codes = np.zeros((n, d), dtype=np.int32)
    numbers = {j: X[:, j] for j in range(d)}
    names = [f"x{j}" for j in range(d)]
    full = KGVScorer(codes, [1] * d, numbers=numbers)
    pruned = KGVScorer(codes, [1] * d, numbers=numbers, markov_blanket=True)
    pf, pp = hill_climb(full, names), hill_climb(pruned, names)
    assert pruned.pruned > 0 and 2 * pruned.evaluations < full.evaluations
    # the pruned network's score on the unpruned scorer (the same statistics): at least the unpruned one's
    assert full.total(pp) >= full.total(pf) - 1e-9
    assert pruned.total(pp) == pytest.approx(full.total(pp), abs=1e-9)
    # the Markov-blanket graph of a chain is the chain
    assert {(i, j) for i, j in zip(*np.nonzero(np.triu(pruned.blanket)))} == {
        (j, j + 1) for j in range(d - 1)
    }


def test_markov_blanket_option_through_learn(tmp_path, capsys):
    """``learn --kgv-markov-blanket``: every family of the network is a clique of the Markov-blanket graph of
    the same data (so the option reached the scorer); without it the v-structure's arcs may be anywhere."""
    from bnfk_core.data.table import load_csv
    from bnfk_core.learning.kgv import kgv_statistics, raw_numbers

    X = _chain_data(n=300)
    names = [f"x{j}" for j in range(X.shape[1])]
    path = tmp_path / "chain.csv"
    pd.DataFrame(np.round(X, 4), columns=names).to_csv(path, index=False)
    argv = ["learn", str(path), "--structure", "hc-greedy", "--score", "kgv", "--quiet"]
    assert main([*argv, "--kgv-markov-blanket", "-o", str(tmp_path / "a.json")]) == 0
    arcs = json.loads(capsys.readouterr().out)["arcs"]
    data = load_csv(path)
    stats, _ = kgv_statistics(data.codes, data.cardinalities, numbers=raw_numbers(data))
    A = markov_blanket_graph(stats)
    assert arcs and all(A[names.index(u), names.index(v)] for u, v in arcs)
    parents = {v: [u for u, w in arcs if w == v] for v in names}
    assert all(A[names.index(a), names.index(b)] for ps in parents.values() for a in ps for b in ps if a != b)


def test_kgv_test_cli(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 300
    grp = rng.choice(["a", "b"], n)
    z = rng.normal(size=n) + (grp == "b") * 2.0
    x = z + 0.3 * rng.normal(size=n)
    y = z + 0.3 * rng.normal(size=n)
    path = tmp_path / "t.csv"
    pd.DataFrame({"grp": grp, "x": np.round(x, 4), "y": np.round(y, 4), "z": np.round(z, 4)}).to_csv(
        path, index=False
    )
    assert main(["kgv-test", str(path), "x", "y", "--kernel", "linear", "--kappa", "1e-12"]) == 0
    out = json.loads(capsys.readouterr().out)
    xs, ys = pd.read_csv(path)["x"].to_numpy(), pd.read_csv(path)["y"].to_numpy()
    rho = np.corrcoef(xs, ys)[0, 1]
    assert out["statistic"] == pytest.approx(-0.5 * n * math.log(1 - rho**2), rel=1e-9)
    assert out["independent"] is False and out["threshold"] == pytest.approx(0.5 * math.log(n))
    given = ["--given", "z,grp", "--kernel", "linear", "--kappa", "1e-12"]
    assert main(["kgv-test", str(path), "x", "y", *given]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["independent"] is True and out["given"] == ["z", "grp"]
    assert out["searched_raw"] == ["x", "y", "z"] and out["n_rows_used"] == n
    assert main(["kgv-test", str(path), "x", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "nope" in err and err.count("\n") == 1
    assert main(["kgv-test", str(path), "x", "x"]) == 2
    assert "differ" in capsys.readouterr().err


def test_markov_blanket_pruning_keeps_the_exact_and_tabu_optima_of_a_chain():
    """Exact search and the iterated tabu search with the pruned scorer reach the unpruned optimum of a
    Gaussian chain, computing a fraction of the local scores."""
    from bnfk_core.learning.exact import exact_search
    from bnfk_core.learning.tabu import tabu_search

    rng = np.random.default_rng(0)
    n, d = 500, 6
    X = rng.normal(size=(n, d))
    for j in range(1, d):
        X[:, j] += 0.9 * X[:, j - 1]
    codes = np.zeros((n, d), dtype=np.int32)
    numbers = {j: X[:, j] for j in range(d)}
    full = KGVScorer(codes, [1] * d, numbers=numbers)
    pruned = KGVScorer(codes, [1] * d, numbers=numbers, markov_blanket=True)
    best, info = exact_search(full)
    assert full.total(exact_search(pruned)[0]) == pytest.approx(info["optimum"], abs=1e-9)
    names = [f"x{j}" for j in range(d)]
    assert full.total(tabu_search(pruned, names)) == pytest.approx(info["optimum"], abs=1e-9)
    assert 4 * pruned.evaluations < full.evaluations
