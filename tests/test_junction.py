"""Batched junction-tree inference (bnfk_core.inference.junction via bnfk_core.inference.queries) against
three independent computations: brute-force enumeration (small models), the per-missingness-pattern variable
elimination that answered before (bnfk_core.inference.elimination) and pgmpy's VariableElimination, on every
network bundled with pgmpy's small/medium/large sets with random evidence."""

import gzip
import importlib.util
import io
import warnings
from pathlib import Path

import helpers_bruteforce as bf
import numpy as np
import pytest

from bnfk_core.inference import elimination, junction
from bnfk_core.inference import queries as inference
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import read_model
from bnfk_core.network.model import BayesNet

BUNDLED = (
    "asia",
    "cancer",
    "earthquake",
    "sachs",
    "survey",
    "alarm",
    "child",
    "insurance",
    "water",
    "mildew",
    "barley",
    "hailfinder",
    "hepar2",
    "win95pts",
)
#: cliques beyond junction.MAX_TREE_CELLS per row: inferred per missingness pattern (elimination), so only
#: the comparison with pgmpy says something about them
TOO_LARGE = ("mildew", "barley")
WITH_TREE = tuple(n for n in BUNDLED if n not in TOO_LARGE)
ROWS = {"water": 6, "mildew": 6, "barley": 6, "hailfinder": 15, "hepar2": 15, "win95pts": 15}


def bundled(name: str, normalise: bool = True) -> BayesNet:
    """A network from pgmpy's bundled BIF files, read with our own reader.  Some of these files have CPT rows
    summing to 1 +- 3e-7; ``normalise`` rescales them so that pruning barren variables (pgmpy and the
    per-pattern log-evidence do) is exact, and the comparisons can be to 1e-12."""
    base = Path(importlib.util.find_spec("pgmpy").submodule_search_locations[0]) / "utils" / "example_models"
    m = read_model(io.BytesIO(gzip.decompress((base / f"{name}.bif.gz").read_bytes())), source=name)
    if normalise:
        m = BayesNet(m.dag, m.states, tuple(t / t.sum(axis=1, keepdims=True) for t in m.cpts))
    return m


def evidence_rows(model, n: int, seed: int, missing: float = 0.3) -> np.ndarray:
    """Forward samples (so P(x_observed) > 0) with cells blanked at random, a fully missing first row."""
    codes = model.sample(n, seed).codes.astype(np.int64)
    codes[np.random.default_rng(seed + 1).random(codes.shape) < missing] = -1
    codes[0] = -1
    return codes


def _same_posteriors(a, b, atol=1e-12):
    assert a.keys() == b.keys()
    for v in a:
        np.testing.assert_array_equal(a[v][0], b[v][0])
        np.testing.assert_allclose(a[v][1], b[v][1], rtol=0, atol=atol)


def test_too_large_trees_are_not_built():
    for name in BUNDLED:
        assert (junction.junction_tree(bundled(name)) is None) == (name in TOO_LARGE)


@pytest.mark.parametrize("name", WITH_TREE)
def test_bundled_network_posteriors_equal_per_pattern_elimination(name):
    model = bundled(name, normalise=False)
    X = evidence_rows(model, ROWS.get(name, 40), seed=3)
    got = inference.posterior(model, X)
    _same_posteriors(got, elimination.posterior_by_pattern(model, X))
    for v, (rows, p) in got.items():
        assert list(rows) == list(np.flatnonzero(X[:, v] < 0))
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)


@pytest.mark.parametrize("name", WITH_TREE)
def test_bundled_network_log_evidence_equals_per_pattern_elimination(name):
    model = bundled(name)
    X = evidence_rows(model, ROWS.get(name, 40), seed=5)
    got = inference.log_evidence(model, X)
    np.testing.assert_allclose(got, elimination.log_evidence_by_pattern(model, X), rtol=0, atol=1e-12)
    assert abs(got[0]) < 1e-12  # nothing observed: log 1


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_network_posteriors_equal_pgmpy_variable_elimination(name):
    from pgmpy.inference import VariableElimination

    model = bundled(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ve = VariableElimination(model.to_pgmpy())
    X = evidence_rows(model, 4, seed=7)[1:]
    post = inference.posterior(model, X)
    rng = np.random.default_rng(11)
    names = model.variables
    for row in range(X.shape[0]):
        ev = {names[u]: model.states[u][X[row, u]] for u in range(model.n_vars) if X[row, u] >= 0}
        missing = np.flatnonzero(X[row] < 0)
        for v in rng.choice(missing, size=min(2, missing.size), replace=False):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f = ve.query([names[v]], evidence=ev, show_progress=False)
            want = [f.values[f.state_names[names[v]].index(s)] for s in model.states[v]]
            rows, probs = post[int(v)]
            np.testing.assert_allclose(probs[np.searchsorted(rows, row)], want, rtol=0, atol=1e-12)


def _small_models():
    out = []
    for seed in range(6):
        dag = bf.random_dag(4 + seed % 3, seed=200 + seed)
        cards = np.random.default_rng(seed).integers(2, 5, len(dag.nodes))
        out.append(pytest.param(bf.random_model(dag, cards, seed=seed), id=f"random-{seed}"))
    # two components and a lone variable: the tree joins them with empty separators
    dag = DAG(["a", "b", "c", "d", "e"], [("a", "b"), ("c", "d")])
    out.append(pytest.param(bf.random_model(dag, [2, 3, 2, 3, 4], seed=9), id="forest"))
    return out


@pytest.mark.parametrize("tree", [True, False], ids=["junction-tree", "per-pattern-fallback"])
@pytest.mark.parametrize("model", _small_models())
def test_family_posteriors_match_enumeration(model, tree, monkeypatch):
    if not tree:
        monkeypatch.setattr(junction, "MAX_TREE_CELLS", 0)
    D, P = bf.joint_table(model)
    X = bf.random_rows(model, 30, seed=2, missing=0.4)
    got = inference.family_posteriors(model, X)
    assert (junction.junction_tree(model) is None) != tree
    for i in range(model.n_vars):
        fam = list(model.parents[i]) + [i]
        rows_i = np.flatnonzero((X[:, fam] < 0).any(axis=1))
        if not rows_i.size:
            assert i not in got
            continue
        rows, F = got[i]
        np.testing.assert_array_equal(rows, rows_i)
        for row, f in zip(rows, F):
            ok = np.all((X[row] < 0) | (D == X[row]), axis=1)  # completions of the row
            want = np.zeros(model.cpts[i].size)
            np.add.at(want, model.parent_config(i, D[ok]) * len(model.states[i]) + D[ok][:, i], P[ok])
            np.testing.assert_allclose(f, want / P[ok].sum(), rtol=0, atol=1e-13)


@pytest.mark.parametrize("model", _small_models())
def test_posterior_and_log_evidence_match_enumeration(model):
    table = bf.joint_table(model)
    X = bf.random_rows(model, 30, seed=4, missing=0.4)
    post = inference.posterior(model, X)
    le = inference.log_evidence(model, X)
    for row, x in enumerate(X):
        ev = {u: int(x[u]) for u in range(model.n_vars) if x[u] >= 0}
        pe = bf.marginal_prob(model, ev, table)
        assert le[row] == pytest.approx(np.log(pe), abs=1e-12)
        for v in np.flatnonzero(x < 0):
            rows, probs = post[int(v)]
            want = [
                bf.marginal_prob(model, {**ev, int(v): k}, table) / pe for k in range(len(model.states[v]))
            ]
            np.testing.assert_allclose(probs[np.searchsorted(rows, row)], want, rtol=0, atol=1e-13)


def test_a_row_gets_the_same_bits_in_any_batch(monkeypatch):
    model = bundled("alarm", normalise=False)
    X = evidence_rows(model, 300, seed=13, missing=0.1)
    whole = inference.posterior(model, X)
    whole_le = inference.log_evidence(model, X)
    whole_fam = inference.family_posteriors(model, X)
    monkeypatch.setattr(junction, "BATCH_BYTES", 7 * 8 * 4 * junction.junction_tree(model).total_cells)
    assert junction.batch_rows(junction.junction_tree(model)) == 7
    small = inference.posterior(model, X)
    for v in whole:
        np.testing.assert_array_equal(whole[v][1], small[v][1])
    np.testing.assert_array_equal(whole_le, inference.log_evidence(model, X))
    fam = inference.family_posteriors(model, X)
    for i in whole_fam:
        np.testing.assert_array_equal(whole_fam[i][1], fam[i][1])
    # a block of rows on its own, and single rows, equal the same rows inside the whole table
    for lo, hi in ((100, 160), (5, 6), (201, 202)):
        part = inference.posterior(model, X[lo:hi])
        for v in part:
            rows, p = whole[v]
            sel = (rows >= lo) & (rows < hi)
            np.testing.assert_array_equal(part[v][1], p[sel])
        np.testing.assert_array_equal(inference.log_evidence(model, X[lo:hi]), whole_le[lo:hi])


def test_complete_rows_take_no_part_and_keep_their_likelihood():
    model = bundled("child", normalise=False)
    X = model.sample(50, 1).codes.astype(np.int64)
    assert inference.posterior(model, X) == {}
    assert inference.family_posteriors(model, X) == {}
    from bnfk_core.data.table import from_codes

    ll = inference.log_likelihood(model, from_codes(X, model.variables, model.states))
    np.testing.assert_array_equal(ll, model.complete_log_likelihood(X))


def test_models_whose_tree_is_too_large_fall_back_to_per_pattern(monkeypatch):
    monkeypatch.setattr(junction, "MAX_TREE_CELLS", 0)
    model = bundled("asia")
    assert junction.junction_tree(model) is None
    X = evidence_rows(model, 20, seed=1)
    _same_posteriors(inference.posterior(model, X), elimination.posterior_by_pattern(model, X), atol=0)
    np.testing.assert_array_equal(
        inference.log_evidence(model, X), elimination.log_evidence_by_pattern(model, X)
    )


def test_tree_has_running_intersection_and_homes_every_family():
    for name in ("alarm", "hepar2", "win95pts"):
        model = bundled(name)
        jt = junction.junction_tree(model)
        k = len(jt.cliques)
        assert len(jt.order) == k and sorted(jt.order) == list(range(k))
        for v in range(model.n_vars):
            holding = {c for c in range(k) if v in jt.cliques[c]}
            # the cliques holding v form a connected subtree: exactly one of them has its parent outside
            assert sum(1 for c in holding if jt.parent[c] not in holding) == 1
            assert set(model.parents[v]) | {v} <= set(jt.cliques[jt.family_home[v]])
