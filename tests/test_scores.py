"""Local scores: counts, the NML normaliser, qNML, and agreement with pgmpy's scorers."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

from bnfk_core.errors import StructureError
from bnfk_core.learning import scores
from bnfk_core.learning.scores import (
    LocalScorer,
    family_counts,
    log_multinomial_normalizer,
    parameter_count,
    qnml,
    score_dag,
)
from bnfk_core.network.dag import DAG


def random_codes(n_rows=300, cards=(2, 3, 4, 2), seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    cards = np.asarray(cards)
    x = np.empty((n_rows, len(cards)), dtype=np.int64)
    x[:, 0] = rng.integers(0, cards[0], n_rows)
    for i in range(1, len(cards)):  # mild dependence on the previous column
        noise = rng.integers(0, cards[i], n_rows)
        keep = rng.random(n_rows) < 0.6
        x[:, i] = np.where(keep, x[:, i - 1] % cards[i], noise)
    if missing:
        x[rng.random(x.shape) < missing] = -1
    return x, cards


def brute_force_normalizer(n, k):
    """C(n, k) as the sum over all count vectors of the multinomial ML probability."""
    total = 0.0
    for h in itertools.product(range(n + 1), repeat=k):
        if sum(h) != n:
            continue
        logp = gammaln(n + 1) - sum(gammaln(x + 1) for x in h) + sum(x * math.log(x / n) for x in h if x)
        total += math.exp(logp)
    return total


# ---------------------------------------------------------------- counts
def test_family_counts_match_crosstab():
    x, cards = random_codes(missing=0.05)
    c = family_counts(x, cards, 2, [0, 1])
    ok = (x[:, [0, 1, 2]] >= 0).all(axis=1)
    df = pd.DataFrame(x[ok][:, [0, 1, 2]], columns=["a", "b", "c"])
    ref = pd.crosstab([df.a, df.b], df.c).reindex(columns=range(cards[2]), fill_value=0).to_numpy()
    np.testing.assert_array_equal(c, ref)
    assert family_counts(x, cards, 1).shape == (1, cards[1])


def test_counts_survive_huge_parent_spaces():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 50, size=(200, 13))  # 50**12 parent configurations overflow int64
    cards = [50] * 13
    c = family_counts(x, cards, 0, list(range(1, 13)))
    assert c.sum() == 200 and c.shape == (200, 50)  # every row its own configuration


# ---------------------------------------------------------------- normaliser
@pytest.mark.parametrize("n, k", [(1, 2), (2, 2), (5, 2), (7, 3), (4, 4), (6, 5), (3, 7), (10, 3)])
def test_normalizer_matches_brute_force(n, k):
    assert log_multinomial_normalizer(n, k) == pytest.approx(
        math.log(brute_force_normalizer(n, k)), abs=1e-10
    )


def test_normalizer_edges_and_asymptotics():
    assert log_multinomial_normalizer(100, 1) == 0.0
    assert log_multinomial_normalizer(0, 5) == 0.0
    # the asymptotic branch continues the exact one smoothly
    k = scores.EXACT_NORMALIZER_MAX_K
    exact = log_multinomial_normalizer(500, k)
    approx = scores._log_normalizer_asymptotic(500, k)
    assert abs(exact - approx) < 2e-5
    assert log_multinomial_normalizer(500, k + 1) > exact


def test_qnml_regret_vs_brute_force():
    """qNML = LL − log C(N, q r) + log C(N, q), with both C's from brute-force enumeration."""
    rng = np.random.default_rng(3)
    n = 6
    x = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 2, n)])
    cards = [2, 2]
    ll = scores.log_likelihood(x, cards, 1, [0])
    expected = ll - math.log(brute_force_normalizer(n, 4)) + math.log(brute_force_normalizer(n, 2))
    assert qnml(x, cards, 1, [0]) == pytest.approx(expected, abs=1e-10)
    # no parents: plain 1-variable NML log P_ML − log C(N, r)
    assert qnml(x, cards, 1) == pytest.approx(
        scores.log_likelihood(x, cards, 1) - math.log(brute_force_normalizer(n, 2))
    )


def test_qnml_is_score_equivalent():
    x, cards = random_codes(500, (3, 2, 4))
    a = score_dag(x, cards, DAG("abc", [("a", "b"), ("b", "c")]), "qnml")
    b = score_dag(x, cards, DAG("abc", [("b", "a"), ("c", "b")]), "qnml")
    c = score_dag(x, cards, DAG("abc", [("b", "a"), ("b", "c")]), "qnml")
    assert a == pytest.approx(b, abs=1e-8) and a == pytest.approx(c, abs=1e-8)
    v = score_dag(x, cards, DAG("abc", [("a", "b"), ("c", "b")]), "qnml")
    assert v != pytest.approx(a)


# ---------------------------------------------------------------- against pgmpy
@pytest.fixture(scope="module")
def pgmpy_scores():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.structure_score import AIC, BIC, K2, BDeu
    return {"bic": BIC, "aic": AIC, "k2": K2, "bdeu": BDeu}


@pytest.mark.parametrize("name", ["bic", "aic", "k2", "bdeu"])
def test_local_scores_match_pgmpy(name, pgmpy_scores):
    x, cards = random_codes(400, (2, 3, 4, 2))
    cols = list("abcd")
    df = pd.DataFrame(x, columns=cols)
    state_names = {c: list(range(r)) for c, r in zip(cols, cards)}
    kw = {"equivalent_sample_size": 4.0} if name == "bdeu" else {}
    ref = pgmpy_scores[name](df, state_names=state_names, **kw)
    ours = LocalScorer(x, cards, name, ess=4.0)
    for child in range(4):
        others = [i for i in range(4) if i != child]
        for k in range(3):
            for ps in itertools.combinations(others, k):
                expected = ref.local_score(cols[child], tuple(cols[p] for p in ps))
                assert ours(child, ps) == pytest.approx(expected, rel=1e-9, abs=1e-8), (child, ps)


def test_bic_and_bdeu_score_equivalent():
    x, cards = random_codes(500, (3, 2, 4))
    for s in ("bic", "bdeu"):
        a = score_dag(
            x, cards, DAG("abc", [("a", "b"), ("b", "c")]), s, **({"ess": 2.0} if s == "bdeu" else {})
        )
        b = score_dag(
            x, cards, DAG("abc", [("c", "b"), ("b", "a")]), s, **({"ess": 2.0} if s == "bdeu" else {})
        )
        assert a == pytest.approx(b, abs=1e-8)


# ---------------------------------------------------------------- misc
def test_complete_rows_only_and_parameter_count():
    x, cards = random_codes(300, missing=0.05)
    scorer = LocalScorer(x, cards, "bic")
    assert scorer.n == int((x >= 0).all(axis=1).sum()) < 300
    dag = DAG("abcd", [("a", "b"), ("a", "c"), ("b", "c")])
    assert parameter_count(cards, dag.parent_indices()) == (2 - 1) + 2 * (3 - 1) + 6 * (4 - 1) + (2 - 1)
    assert score_dag(x, cards, dag, "bic") == pytest.approx(
        sum(scorer(i, ps) for i, ps in enumerate(dag.parent_indices()))
    )


def test_unknown_score():
    x, cards = random_codes(50)
    with pytest.raises(StructureError, match="Unknown score 'foo'.*bic"):
        LocalScorer(x, cards, "foo")


def test_own_logsumexp_is_scipys_bit_for_bit():
    """The normaliser's log-sum-exp (bnfk_core.learning.scores._logsumexp) returns scipy.special.logsumexp's
    very float: on the C(n, 2) terms of n = 1..300 and on random arrays with repeated maxima; and it is log
    sum exp in exact-ish arithmetic (math.fsum of the exponentials)."""
    import math

    from scipy.special import gammaln, logsumexp, xlogy

    from bnfk_core.learning.scores import _logsumexp

    for n in range(1, 301):
        h = np.arange(n + 1, dtype=float)
        t = gammaln(n + 1) - gammaln(h + 1) - gammaln(n - h + 1) + xlogy(h, h / n) + xlogy(n - h, (n - h) / n)
        assert _logsumexp(t) == float(logsumexp(t))
    rng = np.random.default_rng(3)
    for _ in range(500):
        t = rng.normal(size=int(rng.integers(1, 40))) * float(rng.choice([1.0, 10.0, 300.0]))
        t[rng.integers(0, t.size, 2)] = t.max()
        assert _logsumexp(t) == float(logsumexp(t))
        assert _logsumexp(t) == pytest.approx(t.max() + math.log(math.fsum(np.exp(t - t.max()))), rel=1e-14)
