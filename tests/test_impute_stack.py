"""Stacked imputation (``stack``, ``bn-lca``): averages checked against the components computed separately,
the validation grid against a loop over :func:`evaluate`, and that the masked truth never enters."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import bnfk_core.analyses  # noqa: F401 - registers the imputation methods
from bnfk_core.analyses.impute import stack as st
from bnfk_core.analyses.impute.benchmark import evaluate, induce_mcar
from bnfk_core.analyses.impute.methods import DEFAULT_IMPUTER, impute_table
from bnfk_core.cli import main
from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.registry import IMPUTERS

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
LEARN = {"structure": "tree", "score": "qnml", "params": "cnml"}


def _data(codes, cards):
    return from_codes(
        np.asarray(codes), [f"v{i}" for i in range(len(cards))], [[f"s{k}" for k in range(c)] for c in cards]
    )


def _chain(n=150, seed=0):
    """A chain v0 -> v1 -> ... with noise: something for the network, the classes and the neighbours to
    find."""
    rng = np.random.default_rng(seed)
    cards = [3, 3, 2, 3, 2, 3]
    cols = [rng.integers(0, 3, n)]
    for c in cards[1:]:
        prev = cols[-1] % c
        cols.append(np.where(rng.random(n) < 0.8, prev, rng.integers(0, c, n)))
    return np.column_stack(cols), cards


@pytest.fixture(scope="module")
def masked():
    codes, cards = _chain()
    return induce_mcar(_data(codes, cards), 1, 0.15, seed=3)


def _objective(P, w, floor=1e-5):
    return float(np.log(np.maximum(P, floor) @ w).sum())


def test_stacking_weights_maximise_the_mixture_log_score_as_scipy_does():
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    P = rng.dirichlet([1.0, 1.0], size=(400, 3))[:, :, 0]  # three components' P(true state) on 400 cells
    P[:, 2] *= 0.3  # a weak component
    P[rng.random(400) < 0.1, 0] = 0.0  # and zeros (kNN-like), floored at 1e-5
    w = st.stacking_weights(P)
    assert w.min() >= 0 and w.sum() == pytest.approx(1.0)
    # independent: scipy on the softmax parametrisation of the simplex
    res = minimize(
        lambda z: -_objective(P, np.exp(z) / np.exp(z).sum()),
        np.zeros(3),
        method="Nelder-Mead",
        options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 20000},
    )
    ref = np.exp(res.x) / np.exp(res.x).sum()
    assert _objective(P, w) >= _objective(P, ref) - 1e-6
    np.testing.assert_allclose(w, ref, atol=2e-3)
    # and no point of a fine grid on the simplex does better
    for a in np.linspace(0, 1, 41):
        for b in np.linspace(0, 1 - a, max(int(round((1 - a) * 40)) + 1, 1)):
            assert _objective(P, np.array([a, b, 1 - a - b])) <= _objective(P, w) + 1e-9
    np.testing.assert_allclose(st.stacking_weights(np.zeros((0, 3))), 1 / 3)


def test_true_state_probs_reads_the_scored_cells(masked):
    imps = [IMPUTERS[c].impute(masked.data, seed=0, cache={}, **LEARN) for c in ("mode", "knn")]
    P = st.true_state_probs(imps, masked.truth, masked.hidden)
    assert P.shape == (masked.n_hidden, 2)
    ref = []
    for i, (rows, Pm) in imps[0].cells.items():
        for j, r in enumerate(rows):
            ref.append([Pm[j, masked.truth[r, i]], imps[1].cells[i][1][j, masked.truth[r, i]]])
    np.testing.assert_allclose(P, np.array(ref))


def test_bn_lca_is_the_average_of_the_two_posteriors_computed_separately(masked):
    both = IMPUTERS["bn-lca"].impute(masked.data, seed=0, cache={}, **LEARN)
    bn = IMPUTERS["bn-em"].impute(masked.data, seed=0, cache={}, **LEARN)
    lca = IMPUTERS["lca"].impute(masked.data, seed=0, cache={}, **LEARN)
    assert set(both.cells) == set(bn.cells) == set(lca.cells)
    for i, (rows, P) in both.cells.items():
        np.testing.assert_array_equal(rows, bn.cells[i][0])
        np.testing.assert_allclose(P, 0.5 * bn.cells[i][1] + 0.5 * lca.cells[i][1], atol=1e-12)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-9)


def test_stack_uses_the_weights_its_validation_chose(masked):
    w, score, n = st.validation_weights(masked.data, seed=4, **LEARN)
    stacked = IMPUTERS["stack"].impute(masked.data, seed=4, cache={}, **LEARN)
    imps = [IMPUTERS[c].impute(masked.data, seed=4, cache={}, **LEARN) for c in st.STACK_COMPONENTS]
    ref = st.average_cells(imps, w)
    for i, (rows, P) in stacked.cells.items():
        np.testing.assert_allclose(P, ref[i][1], atol=1e-12)
    assert f"{st.STACK_COMPONENTS[0]} {w[0]:.2f}" in stacked.notes[0]
    # the validation hides only cells the table observes, a share of them, and its weights are its EM's
    split = induce_mcar(masked.data, 1, st.VALIDATION_SHARE, seed=4 + 7919)
    assert (masked.data.codes[split.hidden] >= 0).all()
    assert n == split.n_hidden == round(st.VALIDATION_SHARE * (masked.data.codes >= 0).sum())
    vimps = [IMPUTERS[c].impute(split.data, seed=4, cache={}, **LEARN) for c in st.STACK_COMPONENTS]
    P = st.true_state_probs(vimps, split.truth, split.hidden)
    np.testing.assert_allclose(w, st.stacking_weights(P), atol=1e-12)
    assert score == pytest.approx(_objective(P, w) / n)


def test_stack_never_sees_the_masked_truth():
    """Two tables that differ only in cells the protocol then hides give the same imputation."""
    codes, cards = _chain(seed=1)
    a = induce_mcar(_data(codes, cards), 1, 0.2, seed=5)
    other = codes.copy()
    other[a.hidden] = (other[a.hidden] + 1) % np.asarray(cards)[np.nonzero(a.hidden)[1]]
    b = induce_mcar(_data(other, cards), 1, 0.2, seed=5)
    assert np.array_equal(a.hidden, b.hidden) and not np.array_equal(a.truth, b.truth)
    ia = IMPUTERS["stack"].impute(a.data, seed=0, cache={}, **LEARN)
    ib = IMPUTERS["stack"].impute(b.data, seed=0, cache={}, **LEARN)
    assert ia.notes[0] == ib.notes[0]
    for i in ia.cells:
        np.testing.assert_array_equal(ia.cells[i][1], ib.cells[i][1])
    # ... while the accuracy, which does read the truth, differs
    assert evaluate(ia, a.truth, a.hidden)["accuracy"] != evaluate(ib, b.truth, b.hidden)["accuracy"]


def test_one_component_stack_is_that_component(masked):
    one = st.impute_stacked(masked.data, seed=0, components=("bn-em",), **LEARN)
    bn = IMPUTERS["bn-em"].impute(masked.data, seed=0, cache={}, **LEARN)
    for i in bn.cells:
        np.testing.assert_allclose(one.cells[i][1], bn.cells[i][1], atol=1e-12)


def test_registered_and_default():
    assert DEFAULT_IMPUTER == "stack" and "bn-lca" in IMPUTERS and not IMPUTERS["stack"].peer
    assert IMPUTERS["stack"].needs == ""  # its kNN is numpy (bnfk_core.analyses.impute.knn_onehot)


def test_impute_table_fills_every_missing_cell_with_the_arg_max(masked):
    res = impute_table(masked.data, "stack", "tree", seed=0)
    imp = IMPUTERS["stack"].impute(masked.data, seed=0, cache={}, **LEARN)
    np.testing.assert_array_equal(res.data.codes, imp.argmax_codes(masked.data.codes))
    assert res.imputed.sum() == masked.n_hidden and (res.data.codes >= 0).all()


def _rows(path):
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return list(csv.reader(fh))


def test_cli_impute_method_stack(tmp_path, capsys):
    out = tmp_path / "done.csv"
    na = ["--na-values", "default-list"]
    assert (
        main(["impute", HV, "--structure", "tree", "--method", "stack", "-o", str(out), "--quiet", *na]) == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert res["learned"]["method"] == "stack" and res["imputed_cells"] == 392
    assert "internal validation" in res["learned"]["notes"][0]
    data = load_csv(HV, na_values="default-list")
    ref = impute_table(data, "stack", "tree", seed=0)
    done, src = _rows(out), _rows(HV)
    col = {v: k for k, v in enumerate(src[0])}
    for i, v in enumerate(data.variables):
        for r in np.flatnonzero(data.codes[:, i] < 0):
            assert done[r + 1][col[v]] == data.states[i][ref.data.codes[r, i]]
    # the default is the stack too
    assert main(["impute", HV, "--structure", "tree", "-o", str(tmp_path / "d.csv"), "--quiet", *na]) == 0
    assert json.loads(capsys.readouterr().out)["learned"]["method"] == "stack"
    assert _rows(tmp_path / "d.csv") == done


@pytest.mark.parametrize(
    "extra, culprit",
    [
        (["--structure", "hc", "--method", "nope"], "nope"),
        (["--model", "m.bif", "--method", "stack"], "--method"),
        (["--structure", "hc", "--method", "stack", "--missing-data", "available-case"], "--missing-data"),
    ],
)
def test_cli_bad_method_is_one_error_line(tmp_path, capsys, extra, culprit):
    assert main(["impute", HV, *extra, "-o", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and culprit in err and "Traceback" not in err


def test_numpy_knn_equals_scikit_learn_where_the_kth_neighbour_is_not_tied():
    """knn_onehot_cells against KNNImputer on one-hot codes; on a tie at the k-th distance scikit-learn picks
    some donors, ours share the votes left: there both give the same nearer donors' votes."""
    from bnfk_core.analyses.impute.knn_onehot import knn_onehot_cells
    from bnfk_core.analyses.impute.methods import impute_knn_onehot

    rng = np.random.default_rng(2)
    cards = [3, 2, 4, 3, 2, 3, 5]
    codes = np.column_stack([rng.integers(0, c, 120) for c in cards])
    codes[rng.random(codes.shape) < 0.25] = -1
    mine = knn_onehot_cells(codes, cards, 5)
    theirs = impute_knn_onehot(_data(codes, cards), k=5).cells
    blocked = knn_onehot_cells(codes, cards, 5, block_entries=300)  # a few rows per block: same result
    obs = codes >= 0
    total = sum(cards)
    compared = tied = 0
    for i, (rows, P) in theirs.items():
        np.testing.assert_array_equal(mine[i][0], rows)
        np.testing.assert_allclose(blocked[i][1], mine[i][1], atol=1e-12)
        np.testing.assert_allclose(mine[i][1].sum(axis=1), 1.0, atol=1e-12)
        donors = np.flatnonzero(obs[:, i])
        for a, p, q in zip(rows, P, mine[i][1]):
            both = obs[donors] & obs[a]
            cols = (both * np.asarray(cards)).sum(axis=1)
            diff = (both & (codes[donors] != codes[a])).sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                d = np.where(cols > 0, total / cols * 2.0 * diff, np.inf)
            s = np.sort(d)
            if s[4] == s[5] or not np.isfinite(s[4]):
                tied += 1
                near = d < s[4]  # the donors nearer than the tie: both count them fully
                assert np.all(q * 5 >= np.bincount(codes[donors[near], i], minlength=cards[i]) - 1e-9)
                continue
            np.testing.assert_allclose(q, p, atol=1e-12)
            compared += 1
    assert compared >= 20 and tied >= 5


@pytest.mark.parametrize("tag", ["hv", "bc"])
def test_stack_output_is_the_stored_one(tag):
    """Speed-ups must not move a cell: the default ``stack`` (hc-greedy -- the greedy climb the copy was made
    with, ``hc`` before it became the tabu search -- qNML, cNML CPTs, seed 0) on house_votes_84 (its own 392
    blanks) and breast_cancer with 10 % of its cells hidden (seed 0) gives the same cells, and the per-cell
    distributions to 1e-10, as the stored copy, made again when structural EM's E-step became exact (no
    sampled completions: 17 of breast_cancer's cells moved, house votes' probabilities by at most 9e-4)
    (tests/data/stack_reference.npz)."""
    ref = np.load(ROOT / "tests" / "data" / "stack_reference.npz")
    data = (
        load_csv(HV, na_values="default-list")
        if tag == "hv"
        else induce_mcar(
            load_csv(str(ROOT / "sample_data" / "breast_cancer.csv"), na_values="default-list"),
            1,
            0.1,
            seed=0,
        ).data
    )
    res = impute_table(data, "stack", "hc-greedy", score="qnml", params="cnml", seed=0)  # the copy's recipe
    np.testing.assert_array_equal(res.data.codes, ref[f"{tag}_codes"])
    assert sorted(res.imputation.cells) == sorted(
        int(k.split("_")[1]) for k in ref.files if k.endswith("_P") and k.startswith(tag)
    )
    for i, (rows, P) in res.imputation.cells.items():
        np.testing.assert_array_equal(rows, ref[f"{tag}_{i}_rows"])
        # to 1e-10, not bit for bit: BLAS kernels differ between processors in the last bits, and EM's
        # iterations carry them on (the copy of e28a3db differed here by 1.1e-16 on one machine, 1.1e-12 on
        # another)
        np.testing.assert_allclose(P, ref[f"{tag}_{i}_P"], rtol=0, atol=1e-10)


def test_an_unknown_method_name_is_echoed_cut():
    """A pasted method name of any length comes back in the error cut to about 80 characters."""
    from bnfk_core.analyses.impute.core import ImputeError, check_methods

    with pytest.raises(ImputeError) as exc:
        check_methods("x" * 5000)
    assert "Unknown imputation method" in str(exc.value) and len(str(exc.value)) < 400
