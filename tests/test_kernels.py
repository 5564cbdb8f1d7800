"""Independent correctness tests of the Fisher kernel (paper, Theorem 1) and its relatives.

Reference values come from the paper (worked example, Lemma 1, eq. (10), the set-kernel
count formula), the thesis (eq. 2.17, eq. 3.2, App. E) or from brute force in
``helpers_bruteforce`` (s(x)^T I^-1 s(y) with the Fisher information enumerated over the
whole joint).  ``gram`` has two exact evaluation paths picked by a cost model; the
``path`` fixture forces each of them (and the default choice).
"""

from __future__ import annotations

import helpers_bruteforce as bf
import numpy as np
import pytest
from helpers_bruteforce import PATHS, forced_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bnfk_core.data.table import from_codes
from bnfk_core.errors import BnfkError, KernelError
from bnfk_core.kernels import features as fisher_features
from bnfk_core.kernels import fisher as kernels
from bnfk_core.network.dag import DAG, segment_arcs
from bnfk_core.network.model import BayesNet, fit


@pytest.fixture(params=PATHS)
def path(request):
    with forced_path(request.param):
        yield request.param


def assert_close(got, want, rtol=1e-9):
    got, want = np.asarray(got, float), np.asarray(want, float)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


def model_from(nodes, arcs, cards, seed):
    return bf.random_model(DAG(nodes, arcs), cards, seed=seed)


SUMMARIZATION_STRUCTURES = {
    "a-structure": (["u", "v", "w"], [("u", "v"), ("u", "w")], [3, 2, 4]),
    "chain": (["u", "v", "w"], [("w", "u"), ("u", "v")], [3, 4, 2]),
    "v-structure": (["u", "v", "w"], [("u", "w"), ("v", "w")], [2, 3, 3]),
    "single-arc+iso": (["a", "b", "c"], [("a", "b")], [4, 3, 2]),
    "reverse-order": (["c", "b", "a", "d"], [("a", "b"), ("b", "c"), ("a", "c"), ("d", "c")], [2, 3, 2, 3]),
    "a+chain-5": (
        ["x0", "x1", "x2", "x3", "x4"],
        [("x0", "x1"), ("x0", "x2"), ("x2", "x3"), ("x1", "x4"), ("x3", "x4")],
        [2, 3, 2, 4, 3],
    ),
    "v+a-4": (["p", "q", "r", "s"], [("p", "r"), ("q", "r"), ("p", "s")], [3, 2, 2, 4]),
}


def structure_models():
    out = []
    for name, (nodes, arcs, cards) in SUMMARIZATION_STRUCTURES.items():
        out.append(pytest.param(model_from(nodes, arcs, cards, seed=len(name)), id=name))
    for seed in range(4):
        dag = bf.random_dag(3 + seed % 3, seed=200 + seed)
        cards = np.random.default_rng(50 + seed).integers(2, 5, len(dag.nodes))
        out.append(pytest.param(bf.random_model(dag, cards, seed=seed), id=f"random-{seed}"))
    return out


MODELS = structure_models()


# ====================================================================== paper's worked example
def _ab_model(with_arc: bool) -> BayesNet:
    if with_arc:
        dag = DAG(["A", "B"], [("A", "B")])
        cpts = (np.array([[0.7, 0.3]]), np.array([[0.4, 0.6], [0.4, 0.6]]))
    else:
        dag = DAG(["A", "B"])
        cpts = (np.array([[0.7, 0.3]]), np.array([[0.4, 0.6]]))
    return BayesNet(dag, (("0", "1"), ("0", "1")), cpts)


@pytest.mark.parametrize("with_arc, want", [(False, 1 + 13 / 14), (True, 2 + 4 / 7)])
def test_paper_worked_example(path, with_arc, want):
    model = _ab_model(with_arc)
    X = np.array([[0, 0]])
    assert_close(kernels.gram(model, X), [[want]], rtol=1e-12)
    # per variable: K_A = (1 - 0.7)/0.7 = 3/7; K_B = 0.6/0.4 = 3/2 (no arc) or (1/0.7) 0.6/0.4 = 15/7
    assert_close(kernels.contributions(model, X[0], X[0]), [3 / 7, 15 / 7 if with_arc else 3 / 2], rtol=1e-12)
    assert_close(kernels.gram(model, X), [[27 / 14 if not with_arc else 18 / 7]], rtol=1e-12)


def test_paper_worked_example_is_brute_force():
    for with_arc in (False, True):
        model = _ab_model(with_arc)
        assert abs(bf.BruteFisher(model).kernel([0, 0], [0, 0]) - (18 / 7 if with_arc else 27 / 14)) < 1e-10


# ====================================================================== Lemma 1
@pytest.mark.parametrize(
    "theta", [[0.7, 0.3], [0.1, 0.2, 0.7], [0.25, 0.25, 0.4, 0.1], [0.05, 0.3, 0.15, 0.2, 0.3]]
)
def test_lemma1_univariate(path, theta):
    theta = np.array(theta)
    model = BayesNet(DAG(["D"]), (tuple(str(k) for k in range(len(theta))),), (theta[None, :],))
    X = np.arange(len(theta))[:, None]
    want = np.array([[bf.lemma1(theta, x, y) for y in range(len(theta))] for x in range(len(theta))])
    assert_close(kernels.gram(model, X), want, rtol=1e-12)
    # Lemma 1 is itself s^T I^-1 s of the univariate model (sanity of the brute force)
    assert_close(bf.BruteFisher(model).gram(X), want, rtol=1e-9)


# ====================================================================== brute force s^T I^-1 s
@pytest.mark.parametrize("model", MODELS)
def test_gram_matches_brute_force_all_configurations(path, model):
    """Every pair of joint configurations (or 60 random rows for larger joints)."""
    D = bf.all_configs(model)
    if len(D) > 60:
        D = bf.random_rows(model, 60, seed=1)
    brute = bf.BruteFisher(model)
    want = brute.gram(D)
    got = kernels.gram(model, D)
    assert_close(got, want)
    # CategoricalData input gives the same
    assert_close(kernels.gram(model, from_codes(D, model.variables, model.states)), want)


@pytest.mark.parametrize("model", MODELS)
def test_cross_gram_matches_brute_force(path, model):
    X = bf.random_rows(model, 23, seed=2)
    Y = bf.random_rows(model, 17, seed=3)
    Y[:5] = X[:5]  # some identical rows across the sets
    brute = bf.BruteFisher(model)
    got = kernels.gram(model, X, other=Y)
    assert got.shape == (23, 17)
    assert_close(got, brute.gram(X, Y))
    assert_close(kernels.gram(model, Y, other=X), brute.gram(Y, X))


@pytest.mark.parametrize("model", MODELS)
def test_contributions_match_brute_force_per_variable(model):
    brute = bf.BruteFisher(model)
    X = bf.random_rows(model, 12, seed=4)
    for a in range(0, 12, 2):
        x, y = X[a], X[a + 1] if a % 4 else X[a]
        got = kernels.contributions(model, x, y)
        assert_close(got, brute.contributions(x, y))
        assert_close(got.sum(), brute.kernel(x, y))


def test_forced_paths_are_really_taken(monkeypatch):
    """The cost-model overrides used by the ``path`` fixture route the variables as intended."""
    model = MODELS[0].values[0]
    X = bf.random_rows(model, 30, seed=5)
    calls = {"scatter": 0, "dense": 0}
    real_scatter, real_dense = kernels._scatter_add, kernels._dense_features

    def spy_scatter(*a, **k):
        calls["scatter"] += 1
        return real_scatter(*a, **k)

    def spy_dense(*a, **k):
        calls["dense"] += 1
        return real_dense(*a, **k)

    monkeypatch.setattr(kernels, "_scatter_add", spy_scatter)
    monkeypatch.setattr(kernels, "_dense_features", spy_dense)
    with forced_path("dense"):
        kernels.gram(model, X)
    assert calls["scatter"] == 0 and calls["dense"] > 0
    calls.update(scatter=0, dense=0)
    with forced_path("scatter"):
        kernels.gram(model, X)
    assert calls["scatter"] > 0 and calls["dense"] == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_scatter_path_many_rows(seed):
    """Many rows per parent configuration (long pair lists) on the pair path, square and cross."""
    model = MODELS[1 + seed].values[0]
    X = bf.random_rows(model, 150, seed=6 + seed)
    Y = bf.random_rows(model, 41, seed=7 + seed)
    brute = bf.BruteFisher(model)
    with forced_path("scatter"):
        assert_close(kernels.gram(model, X), brute.gram(X))
        assert_close(kernels.gram(model, X, other=Y), brute.gram(X, Y))
        assert_close(kernels.gram(model, Y, other=X), brute.gram(Y, X))


@pytest.mark.parametrize("missing", [0.0, 0.1])
@pytest.mark.parametrize("n", [131, 64, 65])
def test_symmetric_gram_from_one_triangle(monkeypatch, missing, n):
    """A symmetric Gram matrix is made in one triangle (the pair terms, after a dense product of the other
    variables) and mirrored: the brute force's s(x)^T I^-1 s(y) across the mirror's 64-row tiles, with
    and without missing cells; exactly symmetric when every row is complete (the missing cells' expected
    features are added afterwards by products of their own)."""
    dag = DAG(["r", "a", "b", "c"], [("r", "b"), ("a", "b"), ("b", "c"), ("a", "c")])
    model = bf.random_model(dag, [3, 2, 4, 3], seed=1)
    X = bf.random_rows(model, n, seed=3, missing=missing)
    calls = []
    for name in ("_dense_features", "_pair_kernel_upper", "_mirror_upper"):
        real = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, _f=real, _n=name: calls.append(_n) or _f(*a))
    monkeypatch.setattr(kernels, "_T_OUT", 0.0)  # the dense product for the narrow variables: both paths
    K = kernels.gram(model, X)
    assert set(calls) == {"_dense_features", "_pair_kernel_upper", "_mirror_upper"}
    assert_close(K, bf.BruteFisher(model).gram(X))
    if not missing:
        assert np.array_equal(K, K.T)


def test_one_state_variable_contributes_nothing(path):
    dag = DAG(["a", "b", "c"], [("a", "b"), ("c", "b")])
    model = BayesNet(
        dag,
        (("0", "1"), ("0", "1", "2"), ("only",)),
        (np.array([[0.3, 0.7]]), np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]), np.array([[1.0]])),
    )
    D = bf.all_configs(model)
    assert_close(kernels.gram(model, D), bf.BruteFisher(model).gram(D))


# ====================================================================== fully connected = collapsed
@pytest.mark.parametrize("cards, seed", [([2, 3, 2], 0), ([3, 2, 4], 1), ([2, 2, 2, 3], 2)])
def test_fully_connected_equals_collapsed_variable(path, cards, seed):
    """Thesis App. E: a complete DAG acts as one variable with the joint distribution (Lemma 1)."""
    nodes = ["u", "v", "w", "t"][: len(cards)]
    # a random topological order, so the complete DAG is not just node order
    order = list(np.random.default_rng(seed).permutation(nodes))
    model = model_from(nodes, segment_arcs("full", order), cards, seed)
    D, P = bf.joint_table(model)
    want = np.array([[(1 - P[a]) / P[a] if a == b else -1.0 for b in range(len(D))] for a in range(len(D))])
    assert_close(kernels.gram(model, D), want)


def test_fully_connected_segment_plus_independent_variable(path):
    """A complete segment is collapsed; the variables outside it keep their own Lemma-1 term."""
    nodes = ["u", "v", "w", "z"]
    model = model_from(nodes, segment_arcs("full", ["v", "w", "u"]), [2, 3, 2, 3], seed=9)
    D, P = bf.joint_table(model)
    th_z = model.cpts[3][0]

    def want(x, y):
        seg = [0, 1, 2]
        Pseg = bf.marginal_prob(model, {v: int(x[v]) for v in seg}, (D, P))
        k = (1 - Pseg) / Pseg if all(x[v] == y[v] for v in seg) else -1.0
        return k + bf.lemma1(th_z, x[3], y[3])

    W = np.array([[want(x, y) for y in D] for x in D])
    assert_close(kernels.gram(model, D), W)


# ====================================================================== covered-arc reversal
def _reverse_covered(model: BayesNet, u: str, v: str) -> BayesNet:
    """The model on the DAG with covered arc u -> v reversed, CPTs of u and v re-derived from the joint."""
    dag2 = model.dag.reverse_arc(u, v)
    D, P = bf.joint_table(model)
    cards = bf.cards_of(model)
    cpts = list(model.cpts)
    for name in (u, v):
        i = dag2.index(name)
        ps = bf.parents_of(dag2, i)
        q = int(np.prod([cards[p] for p in ps])) if ps else 1
        num = np.zeros((q, cards[i]))
        for d, p in zip(D, P):
            j = 0
            for par in ps:
                j = j * cards[par] + int(d[par])
            num[j, d[i]] += p
        cpts[i] = num / num.sum(axis=1, keepdims=True)  # P(X_i | pa_2(i)) by Bayes' rule
    return BayesNet(dag2, model.states, tuple(cpts))


COVERED = [
    # (nodes, arcs, cards, covered arc)
    (["z", "u", "v", "t"], [("z", "u"), ("z", "v"), ("u", "v"), ("v", "t")], [2, 3, 2, 2], ("u", "v")),
    (["u", "v", "w"], [("w", "u"), ("u", "v")], [3, 2, 4], ("w", "u")),  # chain -> A-structure
    (["a", "b"], [("a", "b")], [3, 4], ("a", "b")),
    (
        ["p", "q", "r", "s"],
        [("p", "q"), ("p", "r"), ("q", "r"), ("r", "s"), ("p", "s")],
        [2, 2, 3, 2],
        ("q", "r"),
    ),
]


@pytest.mark.parametrize("case", range(len(COVERED)))
def test_invariance_under_covered_arc_reversal(path, case):
    nodes, arcs, cards, (u, v) = COVERED[case]
    m1 = model_from(nodes, arcs, cards, seed=case)
    m2 = _reverse_covered(m1, u, v)
    assert m2.dag.has_arc(v, u) and not m2.dag.has_arc(u, v)
    # same distribution
    np.testing.assert_allclose(bf.joint_table(m1)[1], bf.joint_table(m2)[1], rtol=1e-12)
    D = bf.all_configs(m1)
    assert_close(kernels.gram(m2, D), kernels.gram(m1, D))
    # also for the marginalized kernel of incomplete rows, and a cross-gram
    X = bf.random_rows(m1, 15, seed=case, missing=0.3)
    assert_close(kernels.gram(m2, X), kernels.gram(m1, X))
    assert_close(kernels.gram(m2, X, other=D), kernels.gram(m1, X, other=D))


def test_non_equivalent_structures_differ_on_same_data():
    """Adding a v-structure changes the family: the kernels of the fitted models differ."""
    nodes, cards = ["u", "v", "w"], [3, 2, 3]
    truth = model_from(nodes, [("u", "w"), ("v", "w")], cards, seed=3)
    data = truth.sample(400, seed=1)
    empty = fit(DAG(nodes), data)
    vee = fit(DAG(nodes, [("u", "w"), ("v", "w")]), data)
    X = bf.all_configs(truth)
    Ke, Kv = kernels.gram(empty, X), kernels.gram(vee, X)
    assert np.abs(Ke - Kv).max() > 0.1
    # each is right for its own model
    assert_close(Ke, bf.BruteFisher(empty).gram(X))
    assert_close(Kv, bf.BruteFisher(vee).gram(X))


def test_v_structure_vs_a_structure_same_distribution_differ():
    """u -> w <- v and u <- w -> v are not equivalent: even for one distribution both can
    represent (all independent), the kernels differ (cf. the paper's A/B example)."""
    cards = [2, 3, 2]
    rng = np.random.default_rng(0)
    margs = [rng.dirichlet(np.ones(c)) + 0.05 for c in cards]
    margs = [m / m.sum() for m in margs]
    states = tuple(tuple(str(k) for k in range(c)) for c in cards)
    vee = BayesNet(
        DAG(["u", "v", "w"], [("u", "w"), ("v", "w")]),
        states,
        (margs[0][None], margs[1][None], np.tile(margs[2], (6, 1))),
    )
    ay = BayesNet(
        DAG(["u", "v", "w"], [("w", "u"), ("w", "v")]),
        states,
        (np.tile(margs[0], (2, 1)), np.tile(margs[1], (2, 1)), margs[2][None]),
    )
    np.testing.assert_allclose(bf.joint_table(vee)[1], bf.joint_table(ay)[1], rtol=1e-12)
    D = bf.all_configs(vee)
    K1, K2 = kernels.gram(vee, D), kernels.gram(ay, D)
    assert_close(K1, bf.BruteFisher(vee).gram(D))
    assert_close(K2, bf.BruteFisher(ay).gram(D))
    assert np.abs(K1 - K2).max() > 0.1


# ====================================================================== empty network, Hamming
def _random_data(cards, n, seed, missing=0.0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, c, n) for c in cards])
    X[:, 1] = np.where(rng.random(n) < 0.5, X[:, 0] % cards[1], X[:, 1])  # some dependence
    if missing:
        X[rng.random(X.shape) < missing] = -1
    names = [f"v{k}" for k in range(len(cards))]
    return from_codes(X, names, [[f"s{k}" for k in range(c)] for c in cards])


def test_empty_network_ml_equals_scaled_hamming(path):
    data = _random_data([3, 2, 4, 3], 80, seed=1)
    K_fit = kernels.gram(fit(DAG(data.variables), data, "ml"), data)
    K_sh = kernels.gram(None, data, kind="scaled-hamming")
    freqs = [
        np.bincount(data.codes[:, v], minlength=len(data.states[v])) / data.n_rows for v in range(data.n_vars)
    ]
    want = bf.scaled_hamming_gram(freqs, data.codes)
    assert_close(K_fit, want)
    assert_close(K_sh, want)


def test_scaled_hamming_cross_and_model_selects_variables(path):
    data = _random_data([3, 2, 4], 40, seed=2)
    other = _random_data([3, 2, 4], 15, seed=3)
    freqs = [np.bincount(data.codes[:, v], minlength=len(data.states[v])) / data.n_rows for v in range(3)]
    assert_close(
        kernels.gram(None, data, other, kind="scaled-hamming"),
        bf.scaled_hamming_gram(freqs, data.codes, other.codes),
    )
    sub = fit(DAG(["v2", "v0"]), data)  # the model only selects (and orders) the variables
    want = bf.scaled_hamming_gram([freqs[2], freqs[0]], data.codes[:, [2, 0]])
    assert_close(kernels.gram(sub, data, kind="scaled-hamming"), want)


@pytest.mark.parametrize("missing", [0.0, 0.25])
def test_hamming_is_fraction_of_matches(missing):
    data = _random_data([3, 2, 4, 2, 5], 30, seed=4, missing=missing)
    other = _random_data([3, 2, 4, 2, 5], 11, seed=5, missing=missing)
    assert_close(kernels.gram(None, data, kind="hamming"), bf.hamming_gram(data.codes), rtol=1e-12)
    assert_close(
        kernels.gram(None, data, other, kind="hamming"), bf.hamming_gram(data.codes, other.codes), rtol=1e-12
    )


def test_unknown_kind_is_a_kernel_error():
    data = _random_data([2, 2], 5, seed=0)
    with pytest.raises(KernelError):
        kernels.gram(None, data, kind="gaussian")
    with pytest.raises(KernelError):
        kernels.gram(None, data)  # Fisher needs a model


# ====================================================================== missing values
@pytest.mark.parametrize("model", MODELS)
def test_marginalized_kernel_matches_posterior_average(path, model):
    """K(x, y) = E[phi(x) | x_obs] . E[phi(y) | y_obs], by brute force over completions."""
    brute = bf.BruteFisher(model)
    X = bf.random_rows(model, 20, seed=8, missing=0.3)
    X[0] = -1  # fully missing row
    X[1, :] = bf.random_rows(model, 1, seed=9)[0]
    X[1, 0] = -1  # exactly one missing cell
    Y = bf.random_rows(model, 9, seed=10, missing=0.2)
    assert_close(kernels.gram(model, X), brute.gram(X))
    assert_close(kernels.gram(model, X, other=Y), brute.gram(X, Y))
    assert_close(kernels.gram(model, Y, other=X), brute.gram(Y, X))
    # one side complete, the other incomplete
    Z = bf.random_rows(model, 6, seed=11)
    assert_close(kernels.gram(model, Z, other=X), brute.gram(Z, X))
    assert_close(kernels.gram(model, X, other=Z), brute.gram(X, Z))


@pytest.mark.parametrize("model", MODELS)
def test_marginalized_kernel_sparse_products_match_the_brute_force_too(path, model, monkeypatch):
    """The incomplete rows' terms by sparse products (blocks too big for dense copies) equal the brute
    force."""
    monkeypatch.setattr(fisher_features, "DENSE_BLOCK_BYTES", 0)
    brute = bf.BruteFisher(model)
    X = bf.random_rows(model, 20, seed=8, missing=0.3)
    Y = bf.random_rows(model, 9, seed=10, missing=0.2)
    assert_close(kernels.gram(model, X), brute.gram(X))
    assert_close(kernels.gram(model, X, other=Y), brute.gram(X, Y))


def test_marginalized_kernel_explicit_average_over_completions(path):
    """The posterior-weighted double sum over completions, spelled out (no expected score)."""
    model = model_from(*SUMMARIZATION_STRUCTURES["chain"], seed=4)
    brute = bf.BruteFisher(model)
    x = np.array([-1, 2, -1])
    y = np.array([1, -1, 0])
    Cx, wx = bf.completion_weights(model, x)
    Cy, wy = bf.completion_weights(model, y)
    want = sum(a * b * brute.kernel(cx, cy) for cx, a in zip(Cx, wx) for cy, b in zip(Cy, wy))
    got = kernels.gram(model, np.vstack([x, y]))
    assert_close(got[0, 1], want)
    assert_close(kernels.gram(model, x[None], other=y[None])[0, 0], want)
    assert_close(kernels.contributions(model, x, y).sum(), want)


def test_all_rows_missing_never_crash(path):
    model = model_from(*SUMMARIZATION_STRUCTURES["v+a-4"], seed=5)
    X = np.full((4, 4), -1)
    K = kernels.gram(model, X)
    # E[phi] = 0 under the model (the score has mean zero), so the kernel vanishes
    assert_close(K, np.zeros((4, 4)))
    assert_close(kernels.gram(model, X, other=bf.random_rows(model, 3, seed=1)), np.zeros((4, 3)))


# ====================================================================== zero probabilities, guards
def _ml_model():
    # a in {0,1,2}, b in {0,1}: (a=1, b=1) never seen; a=2 never seen at all
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 0], [0, 1], [0, 0]])
    data = from_codes(X, ["a", "b"], [["0", "1", "2"], ["0", "1"]])
    return fit(DAG(["a", "b"], [("a", "b")]), data, "ml"), X


def test_zero_probability_value_is_a_kernel_error_naming_variable(path):
    model, X = _ml_model()
    K = kernels.gram(model, X)  # all seen: finite
    assert np.all(np.isfinite(K))
    with pytest.raises(KernelError, match="'b'"):
        kernels.gram(model, np.array([[1, 1]]))
    with pytest.raises(KernelError, match="'b'"):
        kernels.gram(model, X, other=np.array([[0, 0], [1, 1]]))
    with pytest.raises(KernelError, match="'a'"):
        kernels.gram(model, np.array([[2, 0]]))  # unseen parent value: P(a=2) = 0
    with pytest.raises(KernelError, match="'b'"):
        kernels.features(model, np.array([[1, 1]]))
    with pytest.raises(KernelError):
        kernels.contributions(model, np.array([1, 1]), np.array([0, 0]))


def _theorem1_gram(model, X, Y=None):
    Y = X if Y is None else Y
    table = bf.joint_table(model)
    return np.array([[bf.theorem1_kernel(model, x, y, table) for y in Y] for x in X])


def test_ml_model_with_zero_cells_complete_rows_all_entry_points(path):
    """Rows that only use positive cells have a finite kernel even when other cells are zero.

    The feature of an unused zero cell is the limit ([x=k] - theta_k)/sqrt(theta_k P) -> 0
    (x != k), so features, contributions, set kernel and MMD must be finite as well.
    Reference: Theorem 1 with P(pi_i) by enumeration, e.g. K((1,0),(1,0)) = K_a + K_b =
    (1 - 1/3)/(1/3) + (1/1 - 1)/(1/3) = 2.
    """
    model, X = _ml_model()
    want = _theorem1_gram(model, X)
    assert_close(kernels.gram(model, X), want)
    assert_close(kernels.gram(model, X[:1], other=X), want[:1])
    Phi = kernels.features(model, X)
    assert np.all(np.isfinite(Phi.toarray())), "features() has NaN at unused zero-probability cells"
    assert_close((Phi @ Phi.T).toarray(), want)
    assert_close(kernels.contributions(model, np.array([1, 0]), np.array([1, 0])), [2.0, 0.0])
    assert_close(kernels.set_kernel(model, X, X[:3]), want[:, :3].mean())
    assert_close(kernels.mmd(model, X, X[:3]), want.mean() + want[:3, :3].mean() - 2 * want[:, :3].mean())
    d = np.diag(want)
    assert_close(
        kernels.gram(model, X, other=X[:2], normalize=True), want[:, :2] / np.sqrt(np.outer(d, d[:2]))
    )


@pytest.mark.parametrize(
    "row, equiv",
    [
        ([1, -1], [1, 0]),  # P(b | a=1) = (1, 0)
        ([-1, 1], [0, 1]),
    ],
)  # P(a | b=1) = (1, 0, 0)
def test_zero_probability_completion_gets_zero_weight(path, row, equiv):
    """A missing cell whose posterior is a point mass gives the kernel of that completion, finite."""
    model, X = _ml_model()
    want = _theorem1_gram(model, np.array([equiv]), X)
    K_miss = kernels.gram(model, np.array([row]), other=X)
    assert np.all(np.isfinite(K_miss))
    assert_close(K_miss, want)
    assert_close(kernels.gram(model, np.vstack([row, X]))[0, 1:], want[0])


def test_impossible_observed_part_with_missing_cell_is_an_error(path):
    model, X = _ml_model()
    # a = 2 has probability zero; with b missing the kernel is undefined
    with pytest.raises(BnfkError):
        kernels.gram(model, np.array([[2, -1]]))
    with pytest.raises(BnfkError):
        kernels.gram(model, X, other=np.array([[2, -1]]))


def test_memory_guard_mentions_sampling():
    model = model_from(*SUMMARIZATION_STRUCTURES["a-structure"], seed=0)
    X = bf.random_rows(model, 100, seed=0)
    with pytest.raises(KernelError, match="sampl"):
        kernels.gram(model, X, max_bytes=1000)
    with pytest.raises(KernelError, match="sampl"):
        kernels.gram(None, from_codes(X, model.variables, model.states), kind="hamming", max_bytes=1000)


def test_wrong_width_rows_are_a_kernel_error():
    model = model_from(*SUMMARIZATION_STRUCTURES["a-structure"], seed=0)
    with pytest.raises(KernelError):
        kernels.gram(model, np.zeros((3, 2), int))


# ====================================================================== normalisation
@pytest.mark.parametrize("missing", [0.0, 0.25])
def test_normalize(path, missing):
    model = model_from(*SUMMARIZATION_STRUCTURES["a+chain-5"], seed=6)
    brute = bf.BruteFisher(model)
    X = bf.random_rows(model, 14, seed=12, missing=missing)
    Y = bf.random_rows(model, 5, seed=13, missing=missing)
    Kn = kernels.gram(model, X, normalize=True)
    K = brute.gram(X)
    d = np.diag(K)
    assert_close(np.diag(Kn), np.ones(len(X)), rtol=1e-10)
    assert_close(Kn, K / np.sqrt(np.outer(d, d)))
    dy = np.diag(brute.gram(Y))
    assert_close(kernels.gram(model, X, other=Y, normalize=True), brute.gram(X, Y) / np.sqrt(np.outer(d, dy)))


def test_normalize_gives_zero_for_rows_with_no_observed_cell(path):
    """A row of blanks has E[s] = 0: its normalised kernel row and column are 0 exactly (the diagonal too),
    and every other entry is K / sqrt(diag diag) of the brute-force kernel."""
    model = model_from(*SUMMARIZATION_STRUCTURES["a+chain-5"], seed=6)
    brute = bf.BruteFisher(model)
    X = bf.random_rows(model, 12, seed=21, missing=0.2)
    X[[3, 7]] = -1
    ok = ~(X < 0).all(axis=1)
    K = brute.gram(X)
    d = np.sqrt(np.diag(K)[ok])
    Kn = kernels.gram(model, X, normalize=True)
    assert not Kn[~ok].any() and not Kn[:, ~ok].any()
    assert_close(Kn[np.ix_(ok, ok)], K[np.ix_(ok, ok)] / np.outer(d, d))
    Kxy = kernels.gram(model, X[:5], other=X, normalize=True)
    assert not Kxy[3].any() and not Kxy[:, [3, 7]].any()
    assert_close(Kxy[np.ix_(ok[:5], ok)], Kn[:5][np.ix_(ok[:5], ok)])


def test_estimator_and_streamed_normalisation_give_zero_for_blank_rows(tmp_path):
    import pandas as pd

    from bnfk_core.analyses.rowwise import stream_gram
    from bnfk_core.estimators import FisherKernel

    model = model_from(*SUMMARIZATION_STRUCTURES["a+chain-5"], seed=6)
    X = bf.random_rows(model, 30, seed=22, missing=0.2)
    X[[0, 11]] = -1
    frame = pd.DataFrame(
        {v: [None if c < 0 else model.states[i][c] for c in X[:, i]] for i, v in enumerate(model.variables)}
    )
    ok = ~(X < 0).all(axis=1)
    got = FisherKernel(normalize=True).fit(frame).gram(frame)
    assert not got[~ok].any() and not got[:, ~ok].any()
    assert_close(np.diag(got)[ok], np.ones(ok.sum()), rtol=1e-10)
    csv = tmp_path / "rows.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "K.npy"
    data = from_codes(X, list(model.variables), [list(s) for s in model.states])
    stream_gram(model, csv, data, out, normalize=True, chunksize=7)
    assert_close(np.load(out), kernels.gram(model, X, normalize=True), rtol=1e-9)
    assert not np.load(out)[~ok].any()


def test_normalize_hamming_and_scaled_hamming():
    data = _random_data([3, 2, 4], 20, seed=7)
    for kind in ("hamming", "scaled-hamming"):
        K = kernels.gram(None, data, kind=kind)
        Kn = kernels.gram(None, data, kind=kind, normalize=True)
        d = np.diag(K)
        assert_close(Kn, K / np.sqrt(np.outer(d, d)), rtol=1e-10)
        assert_close(np.diag(Kn), np.ones(20), rtol=1e-10)


# ====================================================================== features, set kernel, MMD
@pytest.mark.parametrize("model", MODELS[:6])
def test_gram_equals_features_inner_products(path, model):
    X = bf.random_rows(model, 25, seed=14, missing=0.15)
    Phi = kernels.features(model, X)
    assert Phi.shape == (25, sum(t.size for t in model.cpts))
    assert_close(kernels.gram(model, X), (Phi @ Phi.T).toarray())
    # complete rows have exactly sum_i r_i non-zeros at most (block i: r_i entries)
    C = bf.random_rows(model, 10, seed=15)
    nnz = np.diff(kernels.features(model, C).indptr)
    assert np.all(nnz <= sum(len(s) for s in model.states))


def _set_kernel_counts(model, X, Y):
    """Paper: (1/NM) sum_i sum_j 1/P(pi_i=j) [sum_k N_ijk M_ijk / theta_ijk - N_ij M_ij]."""
    table = bf.joint_table(model)
    total = 0.0
    for i, t in enumerate(model.cpts):
        q, r = t.shape
        Nc, Mc = np.zeros((q, r)), np.zeros((q, r))
        for x in X:
            Nc[bf.pconf(model, i, x), x[i]] += 1
        for y in Y:
            Mc[bf.pconf(model, i, y), y[i]] += 1
        Pj = bf.parent_marginal_vector(model, i, table)
        for j in range(q):
            total += ((Nc[j] * Mc[j] / t[j]).sum() - Nc[j].sum() * Mc[j].sum()) / Pj[j]
    return total / (len(X) * len(Y))


@pytest.mark.parametrize("model", MODELS[:5])
def test_set_kernel_count_formula_and_gram_mean(model):
    X = bf.random_rows(model, 30, seed=16)
    Y = bf.random_rows(model, 12, seed=17)
    want = _set_kernel_counts(model, X, Y)
    assert_close(want, bf.BruteFisher(model).gram(X, Y).mean())  # two independent references agree
    assert_close(kernels.set_kernel(model, X, Y), want)
    assert_close(kernels.set_kernel(model, X, Y), kernels.gram(model, X, other=Y).mean())


@pytest.mark.parametrize("model", MODELS[:5])
def test_mmd_is_eq10(model):
    X = bf.random_rows(model, 30, seed=18, missing=0.1)
    Y = bf.random_rows(model, 14, seed=19, missing=0.1)
    brute = bf.BruteFisher(model)
    want = brute.gram(X).mean() + brute.gram(Y).mean() - 2 * brute.gram(X, Y).mean()
    assert_close(kernels.mmd(model, X, Y), want)
    assert kernels.mmd(model, X, X) == pytest.approx(0.0, abs=1e-10)
    assert kernels.mmd(model, X, Y) >= 0


# ====================================================================== property tests
@st.composite
def model_and_rows(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    n_vars = draw(st.integers(2, 5))
    rng = np.random.default_rng(seed)
    dag = bf.random_dag(n_vars, seed=seed, max_parents=2, p_arc=draw(st.sampled_from([0.0, 0.4, 0.8])))
    cards = rng.integers(2, 5, n_vars)
    model = bf.random_model(dag, cards, seed=seed, conc=draw(st.sampled_from([0.5, 2.0])), floor=0.01)
    n = draw(st.integers(1, 25))
    X = bf.random_rows(model, n, seed=seed + 1, missing=draw(st.sampled_from([0.0, 0.0, 0.2])))
    return model, X, draw(st.sampled_from(PATHS))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_and_rows())
def test_property_symmetric_psd_and_feature_map(args):
    model, X, path_name = args
    with forced_path(path_name):
        K = kernels.gram(model, X)
    assert np.all(np.isfinite(K))
    scale = max(1.0, float(np.abs(K).max()))
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-10 * scale)
    assert np.linalg.eigvalsh((K + K.T) / 2).min() >= -1e-8 * scale
    Phi = kernels.features(model, X)
    np.testing.assert_allclose(K, (Phi @ Phi.T).toarray(), rtol=1e-9, atol=1e-9 * scale)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_and_rows(), st.integers(0, 2**31 - 1))
def test_property_cross_gram_is_block_of_joint_gram(args, seed2):
    model, X, path_name = args
    Y = bf.random_rows(model, 7, seed=seed2, missing=0.2)
    with forced_path(path_name):
        Kxy = kernels.gram(model, X, other=Y)
        Kall = kernels.gram(model, np.vstack([X, Y]))
    scale = max(1.0, float(np.abs(Kall).max()))
    np.testing.assert_allclose(Kxy, Kall[: len(X), len(X) :], rtol=1e-9, atol=1e-9 * scale)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_and_rows())
def test_property_matches_brute_force(args):
    model, X, path_name = args
    if np.prod(bf.cards_of(model)) > 400:
        X = X[:8]
    with forced_path(path_name):
        K = kernels.gram(model, X)
    assert_close(K, bf.BruteFisher(model).gram(X), rtol=1e-8)


def test_scaled_hamming_with_missing_cells(path):
    """Marginalized scaled-Hamming: a missing cell has E[phi_i] = 0, so only variables
    observed in both rows contribute their Lemma-1 term (frequencies over observed cells)."""
    data = _random_data([3, 2, 4, 3], 40, seed=21, missing=0.25)
    X = data.codes
    freqs = []
    for v in range(data.n_vars):
        obs = X[X[:, v] >= 0, v]
        freqs.append(np.bincount(obs, minlength=len(data.states[v])) / len(obs))
    want = np.array(
        [
            [
                sum(bf.lemma1(freqs[v], x[v], y[v]) for v in range(data.n_vars) if x[v] >= 0 and y[v] >= 0)
                for y in X
            ]
            for x in X
        ]
    )
    assert_close(kernels.gram(None, data, kind="scaled-hamming"), want)


def test_categorical_data_is_aligned_to_the_model(path):
    """Columns in another order, an extra column and permuted state lists give the same kernel."""
    model = model_from(*SUMMARIZATION_STRUCTURES["a-structure"], seed=2)
    X = bf.random_rows(model, 20, seed=22, missing=0.1)
    want = bf.BruteFisher(model).gram(X)
    perm = [2, 0, 1]
    states = [list(model.states[v])[::-1] for v in perm]  # reversed state order
    codes = np.column_stack(
        [np.where(X[:, v] >= 0, len(model.states[v]) - 1 - X[:, v], -1) for v in perm]
        + [np.zeros(len(X), int)]
    )
    data = from_codes(codes, [model.variables[v] for v in perm] + ["extra"], states + [["e"]])
    assert_close(kernels.gram(model, data), want)


def test_marginals_override_uses_the_given_parent_probabilities():
    gram = kernels.gram
    """gram(..., marginals=) replaces P(pi_i = j) in Theorem 1 (the uniform-marginal ablation of
    reproduce)."""
    from bnfk_core.errors import KernelError as KE
    from bnfk_core.inference.queries import ParentMarginals, parent_marginals

    rng = np.random.default_rng(11)
    dag = DAG(["u", "v", "w"], [("u", "v"), ("u", "w")])  # an A-structure
    cpts = (rng.dirichlet(np.ones(3), 1), rng.dirichlet(np.ones(2), 3), rng.dirichlet(np.ones(2), 3))
    m = BayesNet(dag, (("a", "b", "c"), ("0", "1"), ("0", "1")), cpts)
    X = m.sample(40, seed=3).codes
    exact = parent_marginals(m)
    assert np.allclose(gram(m, X, marginals=exact), gram(m, X), atol=1e-12)
    uni = ParentMarginals(tuple(np.full(len(p), 1.0 / len(p)) for p in exact.probs), ("u",) * 3)
    K = gram(m, X, marginals=uni)
    ref = np.zeros((40, 40))
    for i, pars in enumerate(m.parents):
        p = m.parent_config(i, X)
        P = uni.probs[i][p]
        th = m.cpts[i][p, X[:, i]]
        same = p[:, None] == p[None, :]
        ref += same * ((X[:, i][:, None] == X[:, i][None, :]) / th[:, None] - 1) / P[:, None]
    assert np.allclose(K, ref, atol=1e-9)
    with pytest.raises(KE):
        gram(m, X, marginals=ParentMarginals((np.ones(1),), ("x",)))
