"""Imputation merges the incomplete rows that share a context (missing cells and the observed members of the
families touching them): the same posteriors as the row-by-row junction tree to 1e-12, the same filled cells,
the same file, and a row of probability zero named as before."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from helpers_bruteforce import random_dag, random_model
from test_impute import _brute_posterior

from bnfk_core.analyses.impute import stream as impute_stream
from bnfk_core.analyses.impute.core import _context_keys, merged_posterior, posterior_cells
from bnfk_core.errors import ModelError
from bnfk_core.inference.queries import posterior
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import write_model
from bnfk_core.network.model import BayesNet


def _table(seed=0, n=600, p_miss=0.2):
    dag = random_dag(7, seed=seed, max_parents=2)
    model = random_model(dag, [2, 3, 2, 2, 3, 2, 2], seed=seed)
    full = model.sample(n, seed=seed).codes
    codes = np.concatenate([full, full[:150]])  # exact duplicates as well
    rng = np.random.default_rng(seed)
    codes[rng.random(codes.shape) < p_miss] = -1
    return model, codes


@pytest.mark.parametrize("seed,cap", [(0, 4096), (1, 4096), (2, 4096), (0, 2), (1, 1)])
def test_merged_posterior_equals_row_by_row(seed, cap, monkeypatch):
    """Groups enumerated, or (cap 1, 2) partly or all by the junction tree."""
    from bnfk_core.analyses.impute import core

    monkeypatch.setattr(core, "ENUMERATE_MAX_COMPLETIONS", cap)
    model, codes = _table(seed)
    inc = np.flatnonzero((codes < 0).any(axis=1))
    keys, _ = _context_keys(model, codes[inc])
    n_keys = np.unique(keys, axis=0).shape[0]
    assert (
        n_keys < np.unique(codes[inc], axis=0).shape[0]
    )  # merging by group and context merges distinct rows
    a, b = merged_posterior(model, codes), posterior(model, codes)
    assert sorted(a) == sorted(b)
    for v in b:
        np.testing.assert_array_equal(a[v][0], b[v][0])
        np.testing.assert_allclose(a[v][1], b[v][1], rtol=0, atol=1e-12)
        assert (a[v][1].argmax(axis=1) == b[v][1].argmax(axis=1)).all()
    for r in inc[:25]:  # and both against enumeration
        for v in np.flatnonzero(codes[r] < 0):
            k = int(np.searchsorted(a[v][0], r))
            np.testing.assert_allclose(a[v][1][k], _brute_posterior(model, codes[r], v), rtol=0, atol=1e-12)


def test_posterior_cells_merge_switch():
    model, codes = _table(3)
    a = merged_posterior(model, codes)
    data = model.sample(5, seed=0).with_codes(codes)
    m, u = posterior_cells(model, data), posterior_cells(model, data, merge=False)
    assert sorted(m) == sorted(u) == sorted(a)
    for j in u:
        np.testing.assert_allclose(m[j][1], u[j][1], rtol=0, atol=1e-12)


def _write(path, model, codes):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(model.variables)
        for row in codes:
            w.writerow(["" if c < 0 else model.states[v][c] for v, c in enumerate(row)])


def test_imputed_file_equals_unmerged_cell_for_cell(tmp_path, monkeypatch):
    model, codes = _table(4)
    src, bif = tmp_path / "d.csv", tmp_path / "m.bif"
    _write(src, model, codes)
    write_model(model, bif)
    impute_stream.impute_file(
        model, src, tmp_path / "merged.csv", block_rows=97, probabilities=tmp_path / "merged_p.csv"
    )
    monkeypatch.setattr(impute_stream, "merged_posterior", posterior)
    impute_stream.impute_file(
        model, src, tmp_path / "plain.csv", block_rows=97, probabilities=tmp_path / "plain_p.csv"
    )
    got = list(csv.reader(io.StringIO((tmp_path / "merged.csv").read_text())))
    want = list(csv.reader(io.StringIO((tmp_path / "plain.csv").read_text())))
    assert len(got) == len(want) == codes.shape[0] + 1
    assert got == want
    assert all(c != "" for row in got for c in row)
    pg = list(csv.reader(io.StringIO((tmp_path / "merged_p.csv").read_text())))
    pw = list(csv.reader(io.StringIO((tmp_path / "plain_p.csv").read_text())))
    assert len(pg) == len(pw) > int((codes < 0).sum()) and pg[0] == pw[0]  # a line per cell and state
    for a, b in zip(pg[1:], pw[1:]):  # same cells; probabilities to rounding
        for x, y in zip(a, b):
            try:
                assert abs(float(x) - float(y)) <= 1e-12
            except ValueError:
                assert x == y


def test_zero_probability_row_named_as_before():
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("c", "d")])
    model = random_model(dag, [2, 2, 2, 2], seed=5)
    cpts = [c.copy() for c in model.cpts]
    cpts[3][1] = [1.0, 0.0]  # P(d = s1 | c = s1) = 0
    model = BayesNet(model.dag, model.states, tuple(cpts))
    codes = np.array([[0, -1, 0, 1], [1, -1, 1, 0], [0, -1, 1, 1], [-1, 0, 1, 1]])
    # rows 3 and 4 are impossible through the family of d, which touches no missing cell of row 3
    with pytest.raises(ModelError) as plain:
        posterior(model, codes)
    with pytest.raises(ModelError) as merged:
        merged_posterior(model, codes)
    assert str(merged.value) == str(plain.value) and "Row 3 " in str(plain.value)


def test_a_representative_of_probability_zero_falls_back_to_the_rows():
    """Other cells at their first state can be impossible under a model with zero CPT entries; the rows' own
    posteriors are then computed one by one (the same values)."""
    dag = DAG(["a", "b", "c", "d"], [("a", "b"), ("c", "d")])
    model = random_model(dag, [2, 2, 2, 2], seed=6)
    cpts = [c.copy() for c in model.cpts]
    cpts[3][0] = [0.0, 1.0]  # P(d = s0 | c = s0) = 0
    model = BayesNet(model.dag, model.states, tuple(cpts))
    codes = np.array([[0, -1, 1, 1], [1, -1, 0, 1], [0, -1, 1, 0], [1, 0, -1, 1]])
    a, b = merged_posterior(model, codes), posterior(model, codes)
    assert sorted(a) == sorted(b) == [1, 2]
    for v in b:
        np.testing.assert_array_equal(a[v][0], b[v][0])
        np.testing.assert_allclose(a[v][1], b[v][1], rtol=0, atol=1e-12)
