"""Tests of bnfk_core.kernels.similarity: the Boriah, Chandola & Kumar (2008) measures and the
Aitchison-Aitken kernel.

The reference below (``bf_similarity``) is written from Table 2 of Boriah et al. (2008) alone, pair by pair
in plain Python with the ``math`` module (no numpy tables, nothing from bnfk_core but the error type).  The
conventions for what the table leaves open are the ones documented in the module docstring:

* frequencies f_k, N_k, n_k = |A_k| come from the observed fit cells; p = f/N_k, p2 = f(f-1)/(N_k(N_k-1));
* a pair's sum runs over O = the attributes observed in both rows; 1/d becomes 1/|O|, 1/sum n_k becomes
  1/sum_{k in O} n_k (``missing="renormalize"``), or both stay fixed (``missing="zero"``); O empty -> 0;
* a value never seen at fit time gets f = 1 (not a member of A_k; a member of lin1's Q when p qualifies);
* burnaby with a single fitted value: mismatch 0; lin/lin1 with a zero denominator: 1 if O is non-empty.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from bnfk_core.errors import KernelError
from bnfk_core.kernels import similarity
from bnfk_core.registry import KERNELS

BORIAH = (
    "overlap",
    "eskin",
    "iof",
    "of",
    "lin",
    "lin1",
    "goodall1",
    "goodall2",
    "goodall3",
    "goodall4",
    "smirnov",
    "gambaryan",
    "burnaby",
    "anderberg",
)
ALL = BORIAH + ("aitchison-aitken",)
ONE_OVER_D = ("overlap", "eskin", "iof", "of", "goodall1", "goodall2", "goodall3", "goodall4", "burnaby")
ONE_OVER_SUM_N = ("smirnov", "gambaryan")


# ====================================================================== the brute-force reference
class Col:
    """Fit statistics of one attribute (observed cells only)."""

    def __init__(self, values, n_states):
        obs = [int(v) for v in values if v >= 0]
        self.N = len(obs)
        self.f = Counter(obs)
        self.A = sorted(self.f)
        self.n = len(self.A)
        self.n_states = n_states

    def freq(self, v):
        return self.f[v] if self.f.get(v, 0) > 0 else 1  # frequency floor for unseen values

    def p(self, v):
        return self.freq(v) / self.N

    def p2(self, v):
        f = self.freq(v)
        return f * (f - 1) / (self.N * (self.N - 1)) if self.N >= 2 else 0.0


def term(name, c: Col, a, b):
    """(numerator, denominator) of attribute k for values a, b (Table 2)."""
    log = math.log
    N = c.N
    if name == "overlap":
        return (1.0 if a == b else 0.0), 1.0
    if name == "eskin":
        return (1.0 if a == b else c.n**2 / (c.n**2 + 2)), 1.0
    if name == "iof":
        return (1.0 if a == b else 1 / (1 + log(c.freq(a)) * log(c.freq(b)))), 1.0
    if name == "of":
        return (1.0 if a == b else 1 / (1 + log(N / c.freq(a)) * log(N / c.freq(b)))), 1.0
    if name in ("goodall1", "goodall2"):
        if a != b:
            return 0.0, 1.0
        pa = c.p(a)
        Q = [q for q in set(c.A) | {a} if (c.p(q) <= pa if name == "goodall1" else c.p(q) >= pa)]
        return 1 - sum(c.p2(q) for q in Q), 1.0
    if name == "goodall3":
        return (1 - c.p2(a) if a == b else 0.0), 1.0
    if name == "goodall4":
        return (c.p2(a) if a == b else 0.0), 1.0
    if name == "smirnov":

        def g(q):
            return c.f[q] / max(N - c.f[q], 1)

        if a == b:
            return 2 + (N - c.freq(a)) / c.freq(a) + sum(g(q) for q in c.A if q != a), float(c.n)
        return sum(g(q) for q in c.A if q not in (a, b)), float(c.n)
    if name == "gambaryan":
        if a != b:
            return 0.0, float(c.n)
        p = c.p(a)
        h = -sum(t * math.log2(t) for t in (p, 1 - p) if t > 0)
        return h, float(c.n)
    if name == "burnaby":
        if a == b:
            return 1.0, 1.0
        if c.n <= 1:
            return 0.0, 1.0
        C = sum(2 * log(1 - c.p(q)) for q in c.A)
        pa, pb = c.p(a), c.p(b)
        return C / (log(pa * pb / ((1 - pa) * (1 - pb))) + C), 1.0
    if name == "lin":
        if a == b:
            return 2 * log(c.p(a)), log(c.p(a)) + log(c.p(b))
        return 2 * log(c.p(a) + c.p(b)), log(c.p(a)) + log(c.p(b))
    if name == "lin1":
        lo, hi = sorted((c.p(a), c.p(b)))
        Q = [q for q in set(c.A) | {a, b} if lo <= c.p(q) <= hi]
        D = sum(log(c.p(q)) for q in Q)
        if a == b:
            return D, D
        return 2 * log(sum(c.p(q) for q in Q)), D
    if name == "anderberg":
        w = 2 / (c.n * (c.n + 1))
        if a == b:
            t = (1 / c.p(a)) ** 2 * w
            return t, t
        return 0.0, 1 / (2 * c.p(a) * c.p(b)) * w
    raise AssertionError(name)


def bf_similarity(name, cols, x, y, missing="renormalize", bandwidth=0.1):
    """S(x, y) from Table 2, one pair at a time."""
    O = [k for k in range(len(cols)) if x[k] >= 0 and y[k] >= 0]
    if name == "aitchison-aitken":
        out = 1.0
        for k in O:
            cs = cols[k].n_states
            lam = min(bandwidth, (cs - 1) / cs) if cs > 1 else 0.0
            out *= (1 - lam) if x[k] == y[k] else lam / (cs - 1)
        return out
    if not O:
        return 0.0
    nums, dens = zip(*[term(name, cols[k], int(x[k]), int(y[k])) for k in O])
    num, den = sum(nums), sum(dens)
    if name in ONE_OVER_D + ONE_OVER_SUM_N:
        if missing == "zero":
            den = float(len(cols)) if name in ONE_OVER_D else float(sum(c.n for c in cols))
        return num / den
    if name in ("lin", "lin1"):
        return num / den if den < 0 else 1.0
    return num / den if den > 0 else 0.0  # anderberg


def bf_gram(name, train, X, Y, **kw):
    cols = [Col(train[:, k], int(train[:, k].max()) + 1) for k in range(train.shape[1])]
    return np.array([[bf_similarity(name, cols, x, y, **kw) for y in Y] for x in X])


# ====================================================================== test data
def random_codes(seed, n=14, with_missing=True):
    """Small random data with ties, a single-state column, skewed and uniform columns and missing cells."""
    rng = np.random.default_rng(seed)
    cols = [
        rng.integers(0, 3, n),  # a few values
        np.repeat(np.arange(n // 2), 2)[rng.permutation(n)],  # all frequencies tied (2 each)
        np.zeros(n, dtype=int),  # a single state
        rng.choice(5, n, p=[0.6, 0.2, 0.1, 0.05, 0.05]),  # skewed, some values seen once
        rng.integers(0, 2, n),  # binary
    ]
    X = np.stack(cols, axis=1).astype(np.int64)
    if with_missing:
        X[rng.random(X.shape) < 0.12] = -1
        X[0, 1] = 0  # keep every column observed somewhere
        X[0, 2] = 0
    return X


def other_rows(train, seed, m=6):
    """Rows to compare with: fitted codes, missing cells and codes the fit rows never show (f = 0)."""
    rng = np.random.default_rng(seed + 1000)
    top = train.max(axis=0)
    Y = np.stack([rng.integers(-1, top[k] + 1, m) for k in range(train.shape[1])], axis=1)
    return Y.astype(np.int64)


# ====================================================================== Gram against the brute force
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gram_matches_bruteforce(name, seed):
    X = random_codes(seed)
    m = similarity.fit_measure(name, X)
    np.testing.assert_allclose(m.gram(X), bf_gram(name, X, X, X), rtol=1e-10, atol=1e-12)
    Y = other_rows(X, seed)
    np.testing.assert_allclose(m.gram(X, Y), bf_gram(name, X, X, Y), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.gram(Y, X), m.gram(X, Y).T, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ONE_OVER_D + ONE_OVER_SUM_N)
def test_missing_zero_rule_keeps_fixed_weights(name):
    X = random_codes(5)
    m = similarity.fit_measure(name, X, missing="zero")
    np.testing.assert_allclose(m.gram(X), bf_gram(name, X, X, X, missing="zero"), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", BORIAH)
def test_complete_data_is_the_plain_table_2_sum(name):
    """Without missing cells the renormalised weights are Table 2's: 1/d, 1/sum n_k, or the pair's own."""
    X = random_codes(3, n=10, with_missing=False)
    m = similarity.fit_measure(name, X)
    cols = [Col(X[:, k], int(X[:, k].max()) + 1) for k in range(X.shape[1])]
    d, sum_n = X.shape[1], sum(c.n for c in cols)
    K = m.gram(X)
    for i, j in [(0, 1), (2, 7), (4, 4), (9, 3)]:
        num = sum(term(name, cols[k], X[i, k], X[j, k])[0] for k in range(d))
        if name in ONE_OVER_D:
            assert K[i, j] == pytest.approx(num / d, rel=1e-12, abs=1e-14)
        elif name in ONE_OVER_SUM_N:
            assert K[i, j] == pytest.approx(num / sum_n, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize(
    "name", ["eskin", "lin", "lin1", "smirnov", "anderberg", "aitchison-aitken", "goodall1"]
)
def test_large_data_on_sampled_pairs(name):
    """Many attributes (merged into groups) and one attribute with more than 256 states (its own group)."""
    rng = np.random.default_rng(11)
    n = 400
    X = np.stack([rng.integers(0, r, n) for r in (2, 3, 2, 5, 4, 2, 3, 7, 2, 2, 300, 3)], axis=1)
    X[rng.random(X.shape) < 0.05] = -1
    m = similarity.fit_measure(name, X)
    K = m.gram(X)
    cols = [Col(X[:, k], int(X[:, k].max()) + 1) for k in range(X.shape[1])]
    pairs = rng.integers(0, n, (150, 2))
    got = K[pairs[:, 0], pairs[:, 1]]
    want = [bf_similarity(name, cols, X[i], X[j]) for i, j in pairs]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ALL)
def test_contributions_sum_to_the_gram_entry(name):
    X = random_codes(7)
    m = similarity.fit_measure(name, X)
    K = m.gram(X)
    for i, j in [(0, 1), (3, 3), (5, 11), (2, 9)]:
        c = m.contributions(X[i], X[j])
        assert c.shape == (X.shape[1],)
        assert c.sum() == pytest.approx(K[i, j], rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("name", ALL)
def test_normalize_is_cosine(name):
    X = random_codes(9)
    Y = other_rows(X, 9)
    m = similarity.fit_measure(name, X)
    K = bf_gram(name, X, X, Y)
    dx = np.array([bf_gram(name, X, [x], [x])[0, 0] for x in X])
    dy = np.array([bf_gram(name, X, [y], [y])[0, 0] for y in Y])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(np.outer(dx, dy) > 0, K / np.sqrt(np.outer(dx, dy)), 0.0)
    np.testing.assert_allclose(m.gram(X, Y, normalize=True), want, rtol=1e-10, atol=1e-12)


def test_missing_rule_overlap_counts_only_attributes_observed_in_both():
    X = np.array([[0, -1, 1], [0, 1, 0], [-1, -1, -1], [0, 1, 1]])
    K = similarity.fit_measure("overlap", X).gram(X)
    assert K[0, 1] == pytest.approx(1 / 2)  # O = {0, 2}: one match of two
    assert K[0, 3] == pytest.approx(1.0)  # O = {0, 2}: both match
    assert K[2, 0] == 0.0 and K[2, 2] == 0.0  # nothing observed in both
    Kz = similarity.fit_measure("overlap", X, missing="zero").gram(X)
    assert Kz[0, 1] == pytest.approx(1 / 3) and Kz[0, 3] == pytest.approx(2 / 3)


# ====================================================================== a worked example (by hand)
def test_worked_example_by_hand():
    """Four rows (a,x) (a,y) (a,y) (b,y): f(a) = f(y) = 3, f(b) = f(x) = 1, N = 4, n_k = 2.

    Boriah et al. print no numeric examples, so the values below are worked by hand from Table 2:
    rows 0 and 3 mismatch on both attributes, rows 1 and 2 match on both, rows 0 and 1 match on one.
    """
    X = np.array([[0, 0], [0, 1], [0, 1], [1, 1]])
    L = math.log

    def S(name, i, j):
        return similarity.fit_measure(name, X).gram(X)[i, j]

    # mismatch (0, 3)
    assert S("overlap", 0, 3) == 0.0
    assert S("eskin", 0, 3) == pytest.approx(float(Fraction(4, 6)))  # n^2/(n^2+2) = 4/6
    assert S("iof", 0, 3) == pytest.approx(1.0)  # log 1 = 0
    assert S("of", 0, 3) == pytest.approx(1 / (1 + L(4 / 3) * L(4)))
    assert S("lin", 0, 3) == pytest.approx(0.0, abs=1e-15)  # 2 log(3/4 + 1/4) = 0
    assert S("burnaby", 0, 3) == pytest.approx(1.0)  # binary: C / (0 + C)
    assert S("smirnov", 0, 3) == pytest.approx(0.0)  # A_k \ {a, b} is empty
    assert S("anderberg", 0, 3) == 0.0
    # match (1, 2): p(a) = p(y) = 3/4, p2 = 3*2/(4*3) = 1/2
    for g in ("goodall1", "goodall2", "goodall3", "goodall4"):
        assert S(g, 1, 2) == pytest.approx(0.5)
    assert S("lin", 1, 2) == pytest.approx(1.0)
    assert S("smirnov", 1, 2) == pytest.approx(2 * Fraction(8, 3) / 4)  # (2 + 1/3 + 1/3) each, / sum n
    h = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert S("gambaryan", 1, 2) == pytest.approx(2 * h / 4)
    # one match, one mismatch (0, 1)
    assert S("anderberg", 0, 1) == pytest.approx(float(Fraction(2, 5)))  # (16/27) / (16/27 + 8/9)
    assert S("lin1", 0, 1) == pytest.approx(L(3 / 4) / (2 * L(3 / 4) + L(1 / 4)))
    assert S("eskin", 0, 1) == pytest.approx((1 + 4 / 6) / 2)


# ====================================================================== positive semidefiniteness
def _min_eig(K):
    K = 0.5 * (K + K.T)
    return np.linalg.eigvalsh(K).min() / max(np.abs(K).max(), 1e-300)


def _random_complete(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(4, 30)), int(rng.integers(1, 5))
    cols = []
    for _ in range(d):
        r = int(rng.integers(2, 7))
        cols.append(rng.choice(r, n, p=rng.dirichlet(np.full(r, rng.choice([0.3, 1.0, 4.0])))))
    return np.stack(cols, axis=1)


def _distinct_rows(counts_per_col):
    """Fit data with the given value counts per column (columns padded by cycling), and one row per value."""
    n = max(sum(c) for c in counts_per_col)
    cols = []
    for counts in counts_per_col:
        col = np.repeat(np.arange(len(counts)), counts)
        cols.append(np.resize(col, n))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("name", [n for n in ALL if similarity.MEASURES[n].psd])
def test_psd_flagged_measures_have_no_negative_eigenvalue(name):
    for seed in range(40):
        X = _random_complete(seed)
        assert _min_eig(similarity.fit_measure(name, X).gram(X)) > -1e-10, seed


COUNTEREXAMPLES = [
    [1, 5, 5],
    [1, 1, 1, 1, 1, 1, 170],
    [123, 40, 1, 4, 15, 2, 3, 10],
    [40, 1, 1, 1, 1, 1, 1, 1, 1],
]


@pytest.mark.parametrize("name", [n for n in ALL if similarity.MEASURES[n].psd is False])
def test_not_psd_flagged_measures_have_a_counterexample(name):
    found = []
    for counts in COUNTEREXAMPLES:
        X = _distinct_rows([counts])
        rows = np.unique(X, axis=0)
        found.append(_min_eig(similarity.fit_measure(name, X).gram(rows)))
    for seed in range(40):
        X = _random_complete(seed)
        found.append(_min_eig(similarity.fit_measure(name, X).gram(X)))
    assert min(found) < -1e-6


def test_lin_psd_unknown_no_counterexample_found():
    """lin is flagged 'unknown': the search that finds the others' counterexamples finds none for it."""
    assert similarity.MEASURES["lin"].psd is None
    worst = [
        _min_eig(similarity.fit_measure("lin", X).gram(np.unique(X, axis=0)))
        for X in (_distinct_rows([c]) for c in COUNTEREXAMPLES)
    ]
    for seed in range(40):
        X = _random_complete(seed)
        full = np.array(list(itertools.product(*[np.unique(X[:, k]) for k in range(X.shape[1])])))
        worst.append(_min_eig(similarity.fit_measure("lin", X).gram(full)))
    assert min(worst) > -1e-10


def test_missing_cells_can_make_renormalised_overlap_indefinite():
    """The documented caveat: with renormalisation a Gram with missing cells need not be PSD."""
    X = np.array([[0, -1], [0, 0], [-1, 0]])
    K = similarity.fit_measure("overlap", X).gram(X)
    np.testing.assert_allclose(K, [[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    assert np.linalg.eigvalsh(K).min() < -0.1
    Kz = similarity.fit_measure("overlap", X, missing="zero").gram(X)
    assert np.linalg.eigvalsh(Kz).min() > -1e-12


# ====================================================================== registry, data, CLI, analyses
def test_registered_with_their_flags():
    for name in BORIAH:
        spec = KERNELS[name]
        assert spec.family == "measure" and spec.shift == "adaptive" and not spec.uses_network
        assert spec.psd == similarity.MEASURES[name].psd
    assert KERNELS["aitchison-aitken"].family == "kernel"
    assert set(similarity.BORIAH_MEASURES) == set(BORIAH)


def test_registry_fit_ignores_network_options_and_drops_the_label(sample_path):
    from bnfk_core.data.table import load_csv

    data = load_csv(sample_path("hayes_roth"), class_column="class")
    fitted = KERNELS["eskin"].fit(data.without_class(), model=None, structure="hc", score="qnml", seed=3)
    assert fitted.variables == tuple(data.without_class().variables)
    direct = similarity.fit_measure("eskin", data)  # the class column is left out by default
    np.testing.assert_allclose(fitted.gram(data), direct.gram(data))
    assert "class" not in direct.variables


def test_categorical_data_recoded_by_state_label(sample_path):
    """Rows of another file are matched by variable name and state label, not by code."""
    from bnfk_core.data.table import load_csv

    data = load_csv(sample_path("hayes_roth"), class_column="class").without_class()
    part = data.subset(np.arange(40))
    m = similarity.fit_measure("lin", data)
    tail = data.subset(np.arange(40, data.n_rows))
    np.testing.assert_allclose(m.gram(part, tail), m.gram(data)[:40, 40:], rtol=1e-12)


def test_errors_are_one_sentence_kernel_errors():
    X = random_codes(0)
    with pytest.raises(KernelError, match="Unknown similarity measure"):
        similarity.fit_measure("jaccardish", X)
    with pytest.raises(KernelError, match="Unknown option"):
        similarity.fit_measure("eskin", X, alpha=1)
    with pytest.raises(KernelError, match="no observed values"):
        similarity.fit_measure("eskin", np.array([[0, -1], [1, -1]]))
    with pytest.raises(KernelError, match="columns"):
        similarity.fit_measure("eskin", X).gram(X[:, :2])
    with pytest.raises(KernelError, match="Gram matrix needs"):
        similarity.fit_measure("eskin", X).gram(X, max_bytes=100)


def test_cli_kernel_eskin_matches_the_api(tmp_path, sample_path):
    from bnfk_core.data.table import load_csv

    out = tmp_path / "K.npy"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "bnfk_core",
            "kernel",
            str(sample_path("hayes_roth")),
            "--class-column",
            "class",
            "--kind",
            "eskin",
            "-o",
            str(out),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    data = load_csv(sample_path("hayes_roth"), class_column="class")
    np.testing.assert_allclose(np.load(out), similarity.fit_measure("eskin", data).gram(data), rtol=1e-12)


@pytest.mark.parametrize("name", ["lin", "goodall3"])
def test_clustering_and_classification_through_the_registry(name, sample_path):
    from bnfk_core.analyses.cluster.clustering import classify, run_clustering
    from bnfk_core.data.table import load_csv

    data = load_csv(sample_path("hayes_roth"), class_column="class")
    out = run_clustering(data, name, "correlation", restarts=3, seed=1)
    assert out["shift"] == "adaptive" and -1 <= out["ari"] <= 1
    again = run_clustering(data, name, "correlation", restarts=3, seed=1)
    assert out["labels"] == again["labels"]
    res = classify(data, name, "knn", repeats=2, seed=0)
    assert len(res.accuracy) == 2 and all(0 <= a <= 1 for a in res.accuracy)
