"""The Fisher kernel of a hybrid (CLG) network, every number against an independent computation: scores by
finite differences of log p(x), the Fisher information by exact Gauss-Hermite quadrature over the model, the
discrete kernel of bnfk_core.kernels, brute-force integration over the missing cells, and the features'
sample moments."""

import itertools
import json

import numpy as np
import pytest
from scipy.special import softmax
from test_hybrid import true_net

from bnfk_core.cli.main import main
from bnfk_core.errors import KernelError, ModelError
from bnfk_core.hybrid import (
    HybridNet,
    LinearGaussian,
    mixed_from_arrays,
    write_hybrid,
)
from bnfk_core.hybrid.table import MixedData
from bnfk_core.kernels import hybrid_feature_offsets, hybrid_fisher_features, hybrid_fisher_gram
from bnfk_core.kernels.features import features as discrete_features
from bnfk_core.kernels.fisher import gram as discrete_gram
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import BayesNet

# ---------------------------------------------------------------------- a small network and its parameters
SMALL_NODES = ["A", "B", "X", "Y"]
SMALL_ARCS = [("A", "B"), ("A", "X"), ("X", "Y"), ("B", "Y")]
SMALL_KINDS = ("discrete", "discrete", "numeric", "numeric")
SMALL_STATES = (("a0", "a1"), ("b0", "b1", "b2"), (), ())


def small_params() -> dict:
    """The free parameters of the small network: CPT rows as softmax logits (first fixed at 0), the
    regressions' coefficients and variances as they are."""
    return {
        "A": np.array([[0.0, 0.4]]),
        "B": np.array([[0.0, -0.5, 0.3], [0.0, 0.8, 1.1]]),
        "X": (np.array([[-1.0], [1.5]]), np.array([0.8, 0.5])),
        "Y": (np.array([[0.5, 1.2], [-1.0, -0.7], [2.0, 0.3]]), np.array([0.6, 0.9, 0.4])),
    }


def small_net(p=None) -> HybridNet:
    p = small_params() if p is None else p
    cpts = (softmax(p["A"], axis=1), softmax(p["B"], axis=1), None, None)
    gs = (None, None, LinearGaussian(*p["X"]), LinearGaussian(*p["Y"]))
    return HybridNet(DAG(SMALL_NODES, SMALL_ARCS), SMALL_KINDS, SMALL_STATES, cpts, gs)


def flat_params(p) -> np.ndarray:
    """The free parameters as one vector (logits without their fixed first entry)."""
    out = []
    for v in SMALL_NODES:
        if isinstance(p[v], tuple):
            out += [p[v][0].ravel(), p[v][1]]
        else:
            out.append(p[v][:, 1:].ravel())
    return np.concatenate(out)


def unflat(vec) -> dict:
    p, at = {}, 0
    for v, ref in small_params().items():
        if isinstance(ref, tuple):
            c = vec[at : at + ref[0].size].reshape(ref[0].shape)
            at += ref[0].size
            s = vec[at : at + ref[1].size]
            at += ref[1].size
            p[v] = (c, s)
        else:
            k = ref[:, 1:].size
            p[v] = np.column_stack([np.zeros(ref.shape[0]), vec[at : at + k].reshape(ref.shape[0], -1)])
            at += k
    return p


def fd_scores(data: MixedData, h: float = 1e-5) -> np.ndarray:
    """d log p(x) / d theta of every complete row by central finite differences of HybridNet.log_density."""
    theta = flat_params(small_params())
    S = np.empty((data.n_rows, theta.size))
    for k in range(theta.size):
        up, dn = theta.copy(), theta.copy()
        up[k] += h
        dn[k] -= h
        S[:, k] = (small_net(unflat(up)).log_density(data) - small_net(unflat(dn)).log_density(data)) / (
            2 * h
        )
    return S


def quadrature(model: HybridNet, n_points: int = 6):
    """Rows and weights that integrate exactly every polynomial of degree < 2 n_points in the numbers under
    the model: every discrete state with its probability, and the Gaussian nodes in topological order by
    Gauss-Hermite nodes of their regression given the parents already placed (no joint moments used)."""
    t, w = np.polynomial.hermite_e.hermegauss(n_points)
    w = w / w.sum()
    disc, num = list(model.discrete), [i for i in model.dag.topological_order() if i in model.numeric]
    rows_c, rows_v, weights = [], [], []
    for st in itertools.product(*[range(len(model.states[i])) for i in disc]):
        codes = np.full((1, model.n_vars), -1, np.int32)
        codes[0, disc] = st
        pd = np.prod([model.cpts[i][model.config(i, codes)[0], codes[0, i]] for i in disc])
        for nodes in itertools.product(range(n_points), repeat=len(num)):
            vals = np.full((1, model.n_vars), np.nan)
            for i, q in zip(num, nodes):
                sd = np.sqrt(model.gaussians[i].variance[model.config(i, codes)[0]])
                vals[0, i] = model.node_mean(i, codes, vals)[0] + sd * t[q]
            rows_c.append(codes[0].copy())
            rows_v.append(vals[0].copy())
            weights.append(pd * np.prod(w[list(nodes)]))
    data = MixedData(model.variables, model.kinds, model.states, np.array(rows_c), np.array(rows_v), "quad")
    return data, np.array(weights)


@pytest.fixture(scope="module")
def quad():
    return quadrature(small_net())


# ---------------------------------------------------------------------- the kernel is s^T I^-1 s
def test_kernel_equals_score_inverse_information_score(quad):
    """K(x, y) = s(x)^T I^-1 s(y), s by finite differences of log p(x) in a minimal parameterisation (softmax
    logits, coefficients, variances) and I = E[s s^T] by exact quadrature: the features' whitening is the
    inverse of the true Fisher information, whatever the parameterisation."""
    data, w = quad
    S = fd_scores(data)
    info = (S * w[:, None]).T @ S
    rows = np.random.default_rng(0).choice(data.n_rows, 40, replace=False)
    sub = MixedData(data.variables, data.kinds, data.states, data.codes[rows], data.values[rows])
    ref = S[rows] @ np.linalg.solve(info, S[rows].T)
    K = hybrid_fisher_gram(small_net(), sub)
    assert np.abs(K - ref).max() < 1e-6 * np.abs(ref).max()
    fresh = small_net().sample(30, seed=3)
    Sf = fd_scores(fresh)
    ref2 = Sf @ np.linalg.solve(info, S[rows].T)
    assert np.allclose(hybrid_fisher_gram(small_net(), fresh, sub), ref2, atol=1e-6 * np.abs(ref2).max())


def test_numeric_features_are_whitened_scores(quad):
    """A numeric block's features are the finite-difference scores of its parameters times an inverse square
    root of their information block: phi_block phi_block^T = s I_block^-1 s^T."""
    data, w = quad
    S = fd_scores(data)
    off = hybrid_feature_offsets(small_net())
    Phi = hybrid_fisher_features(small_net(), data)
    sizes = [1, 2 * 2, 2 * 1 + 2, 3 * 2 + 3]  # free parameters per node in fd_scores' order (coef, variance)
    at = np.concatenate([[0], np.cumsum(sizes)])
    for i in (2, 3):
        s = S[:, at[i] : at[i + 1]]
        I_i = (s * w[:, None]).T @ s
        F = Phi[:, off[i] : off[i + 1]]
        ref = s @ np.linalg.solve(I_i, s.T)
        assert np.abs(F @ F.T - ref).max() < 1e-7 * np.abs(ref).max()


def test_features_exact_moments(quad):
    """Under the model, E[phi] = 0 and E[phi phi^T] is a projection (idempotent) of rank the number of free
    parameters, by exact quadrature."""
    data, w = quad
    Phi = hybrid_fisher_features(small_net(), data)
    assert np.abs(w @ Phi).max() < 1e-10
    C = (Phi * w[:, None]).T @ Phi
    assert np.abs(C @ C - C).max() < 1e-9
    assert np.isclose(np.trace(C), small_net().parameter_count(), atol=1e-9)


def test_features_sample_moments():
    """On 40,000 samples of the 3 + 3 test network: each feature's mean and each entry of the covariance lie
    within 5 of their standard errors (estimated from the same sample) of 0 and of the exact projection
    (identity on each Gaussian block, I - sqrt(theta_j) sqrt(theta_j)^T on each CPT row)."""
    model = true_net()
    Phi = hybrid_fisher_features(model, model.sample(40_000, seed=11))
    n = Phi.shape[0]
    se_mean = Phi.std(axis=0) / np.sqrt(n)
    assert (np.abs(Phi.mean(axis=0)) <= 5 * se_mean + 1e-12).all()
    off = hybrid_feature_offsets(model)
    proj = np.zeros((off[-1], off[-1]))
    for i in range(model.n_vars):
        if model.kinds[i] == "discrete":
            r = len(model.states[i])
            for j, th in enumerate(model.cpts[i]):
                a = off[i] + j * r
                s = np.sqrt(th)
                proj[a : a + r, a : a + r] = np.eye(r) - np.outer(s, s)
        else:
            proj[off[i] : off[i + 1], off[i] : off[i + 1]] = np.eye(off[i + 1] - off[i])
    C = Phi.T @ Phi / n
    sq = Phi * Phi
    se = np.sqrt(np.maximum(sq.T @ sq / n - C * C, 0.0) / n)  # sd of phi_a phi_b over sqrt(n)
    assert (np.abs(C - proj) <= 5 * se + 1e-12).all()
    assert np.abs(proj @ proj - proj).max() < 1e-12
    assert np.isclose(np.trace(proj), model.parameter_count())


# ---------------------------------------------------------------------- all-discrete: Theorem 1's kernel
def _all_discrete():
    dag = DAG(["A", "B", "C", "D"], [("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    rng = np.random.default_rng(5)
    cards = [2, 3, 2, 3]
    parents = [[], [0], [0], [1, 2]]
    cpts = tuple(
        rng.dirichlet(np.ones(cards[i]), size=int(np.prod([cards[p] for p in parents[i]]) or 1))
        for i in range(4)
    )
    states = tuple(tuple(f"s{k}" for k in range(c)) for c in cards)
    bn = BayesNet(dag, states, cpts)
    hy = HybridNet(dag, ("discrete",) * 4, states, cpts, (None,) * 4)
    return bn, hy


def test_all_discrete_equals_discrete_kernel():
    bn, hy = _all_discrete()
    codes = np.asarray(bn.sample(300, seed=2).codes, dtype=np.int32)
    rng = np.random.default_rng(1)
    codes[rng.random(codes.shape) < 0.2] = -1
    codes[7] = -1  # a row without an observed cell
    data = MixedData(hy.variables, hy.kinds, hy.states, codes, np.full(codes.shape, np.nan))
    Phi = hybrid_fisher_features(hy, data)
    assert np.abs(Phi - discrete_features(bn, codes).toarray()).max() < 1e-9
    other = data.codes[:50]
    od = MixedData(hy.variables, hy.kinds, hy.states, other, np.full(other.shape, np.nan))
    for norm in (False, True):
        assert (
            np.abs(
                hybrid_fisher_gram(hy, data, normalize=norm) - discrete_gram(bn, codes, normalize=norm)
            ).max()
            < 1e-9
        )
        assert (
            np.abs(
                hybrid_fisher_gram(hy, data, od, normalize=norm)
                - discrete_gram(bn, codes, other, normalize=norm)
            ).max()
            < 1e-9
        )
    assert (hybrid_fisher_gram(hy, data, normalize=True)[7] == 0).all()


# ---------------------------------------------------------------------- missing cells
def _brute_expected_features(model, codes_row, values_row, grid=np.linspace(-15, 15, 301)):
    """E[phi(x) | x_observed] by brute force: every completion of the missing discrete cells, every missing
    number on a grid of step 0.1 (trapezoid rule, spectrally accurate for these Gaussians times polynomials of
    sd at least 0.63), each complete row weighted by its density p(x) from HybridNet.log_density and
    normalised by their sum."""
    miss_d = [i for i in model.discrete if codes_row[i] < 0]
    miss_n = [i for i in model.numeric if np.isnan(values_row[i])]
    tw = np.full(grid.size, grid[1] - grid[0])
    tw[[0, -1]] *= 0.5  # trapezoid weights
    pts = [g.ravel() for g in np.meshgrid(*([grid] * len(miss_n)), indexing="ij")]
    gw = np.prod(np.meshgrid(*([tw] * len(miss_n)), indexing="ij"), axis=0).ravel() if miss_n else np.ones(1)
    rows_c, rows_v, wts = [], [], []
    for st in itertools.product(*[range(len(model.states[i])) for i in miss_d]):
        c = np.tile(codes_row, (gw.size, 1))
        c[:, miss_d] = st
        v = np.tile(values_row, (gw.size, 1))
        for i, x in zip(miss_n, pts):
            v[:, i] = x
        rows_c.append(c)
        rows_v.append(v)
        wts.append(gw)
    full = MixedData(
        model.variables, model.kinds, model.states, np.concatenate(rows_c), np.concatenate(rows_v)
    )
    p = np.exp(model.log_density(full)) * np.concatenate(wts)
    return (p / p.sum()) @ hybrid_fisher_features(model, full)


@pytest.mark.parametrize(
    "missing",
    [
        ("A",),
        ("B",),
        ("Y",),
        ("X",),
        ("A", "X"),
        ("B", "Y"),
        ("A", "B", "Y"),
        ("X", "Y"),
        ("A", "B", "X", "Y"),
    ],
)
def test_missing_cells_brute_force(missing):
    """The marginalised features of a row with missing cells equal the brute-force expectation over
    completions (discrete) and a fine grid (numeric), weighted by the model's density."""
    model = small_net()
    base = model.sample(5, seed=4)
    codes, values = base.codes.copy(), base.values.copy()
    for v in missing:
        i = model.variables.index(v)
        codes[:, i] = -1
        values[:, i] = np.nan
    data = MixedData(model.variables, model.kinds, model.states, codes, values)
    Phi = hybrid_fisher_features(model, data)
    for r in range(2):
        ref = _brute_expected_features(model, codes[r].copy(), values[r].copy())
        assert np.abs(Phi[r] - ref).max() < 1e-8


def test_missing_cells_fisher_identity(quad):
    """E[s(x) | x_observed] is the gradient of log p(x_observed) (Fisher's identity): the marginalised
    kernel against complete rows equals grad log p(x_obs)^T I^-1 s(y), the gradient by finite differences of
    marginal_log_density (the posterior module's variable elimination)."""
    from bnfk_core.hybrid import marginal_log_density

    data, w = quad
    S = fd_scores(data)
    info = (S * w[:, None]).T @ S
    model = small_net()
    obs = model.sample(6, seed=9)
    codes, values = obs.codes.copy(), obs.values.copy()
    codes[0, 0] = -1
    values[1, 2] = np.nan
    codes[2, 1], values[2, 3] = -1, np.nan
    codes[3, 0], values[3, 2] = -1, np.nan
    values[4, 2:] = np.nan
    codes[5, :2] = -1
    part = MixedData(model.variables, model.kinds, model.states, codes, values)
    theta, h = flat_params(small_params()), 1e-5
    G = np.empty((part.n_rows, theta.size))
    for k in range(theta.size):
        up, dn = theta.copy(), theta.copy()
        up[k] += h
        dn[k] -= h
        G[:, k] = (
            marginal_log_density(small_net(unflat(up)), part)
            - marginal_log_density(small_net(unflat(dn)), part)
        ) / (2 * h)
    rows = np.arange(0, data.n_rows, 7)
    sub = MixedData(data.variables, data.kinds, data.states, data.codes[rows], data.values[rows])
    ref = G @ np.linalg.solve(info, S[rows].T)
    assert np.abs(hybrid_fisher_gram(model, part, sub) - ref).max() < 1e-6 * np.abs(ref).max()


def test_empty_row_and_normalisation():
    model = small_net()
    data = model.sample(20, seed=1)
    codes, values = data.codes.copy(), data.values.copy()
    codes[3], values[3] = -1, np.nan
    d = MixedData(model.variables, model.kinds, model.states, codes, values)
    Phi = hybrid_fisher_features(model, d)
    assert np.abs(Phi[3]).max() < 1e-12
    K = hybrid_fisher_gram(model, d)
    Kn = hybrid_fisher_gram(model, d, normalize=True)
    keep = np.arange(20) != 3
    ref = K / np.sqrt(np.outer(np.diag(K), np.diag(K)))
    assert np.allclose(Kn[np.ix_(keep, keep)], ref[np.ix_(keep, keep)], atol=1e-12)
    assert (Kn[3] == 0).all() and (Kn[:, 3] == 0).all()


def test_zero_probability_and_too_many_completions():
    p = small_params()
    model = small_net(p)
    cpts = list(model.cpts)
    cpts[1] = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    zero = HybridNet(model.dag, model.kinds, model.states, tuple(cpts), model.gaussians)
    data = mixed_from_arrays(
        {"A": np.array([0]), "B": np.array([2]), "X": np.array([0.1]), "Y": np.array([0.3])},
        {"A": ["a0", "a1"], "B": ["b0", "b1", "b2"]},
    )
    with pytest.raises(KernelError, match="'B'"):
        hybrid_fisher_features(zero, data)
    import bnfk_core.kernels.hybrid_fisher as hf

    old = hf.MAX_COMPLETIONS
    try:
        hf.MAX_COMPLETIONS = 2
        data2 = mixed_from_arrays(
            {"A": np.array([-1]), "B": np.array([-1]), "X": np.array([0.1]), "Y": np.array([0.3])},
            {"A": ["a0", "a1"], "B": ["b0", "b1", "b2"]},
        )
        with pytest.raises(ModelError, match="completions"):
            hybrid_fisher_features(model, data2)
    finally:
        hf.MAX_COMPLETIONS = old


# ---------------------------------------------------------------------- command line
def _write(data, path):
    from bnfk_core.cli.hybrid import write_mixed_csv

    with open(path, "w", encoding="utf-8", newline="") as fh:
        write_mixed_csv(data, fh)


@pytest.fixture
def files(tmp_path):
    """A CSV of 150 rows of the 3 + 3 test network (some cells blank) and the network as a model file."""
    model = true_net()
    data = model.sample(150, seed=21)
    codes, values = data.codes.copy(), data.values.copy()
    codes[::7, 1] = -1
    values[::5, 4] = np.nan
    _write(MixedData(data.variables, data.kinds, data.states, codes, values), tmp_path / "d.csv")
    write_hybrid(model, tmp_path / "m.json")
    return model, tmp_path


def _read(model, path):
    from bnfk_core.hybrid import load_mixed

    kinds = dict(zip(model.variables, model.kinds))
    return model.align(
        load_mixed(
            path,
            numeric_columns=[v for v, k in kinds.items() if k == "numeric"],
            categorical_columns=[v for v, k in kinds.items() if k == "discrete"],
        )
    )


def test_cli_kernel_numbers_keep(files, capsys):
    model, d = files
    data = _read(model, d / "d.csv")
    assert main(["kernel", str(d / "d.csv"), "--model", str(d / "m.json"), "-o", str(d / "K.npy")]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["numbers"] == "keep" and res["shape"] == [150, 150]
    assert np.abs(np.load(d / "K.npy") - hybrid_fisher_gram(model, data)).max() < 1e-12
    _write(model.sample(20, seed=2), d / "o.csv")
    argv = ["kernel", str(d / "d.csv"), "--numbers", "keep", "--model", str(d / "m.json"), "--normalize"]
    assert main([*argv, "--other", str(d / "o.csv"), "-o", str(d / "K.csv")]) == 0
    capsys.readouterr()
    ref = hybrid_fisher_gram(model, data, _read(model, d / "o.csv"), normalize=True)
    assert np.abs(np.loadtxt(d / "K.csv", delimiter=",") - ref).max() < 1e-12


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (["kernel", "{d}/d.csv", "--numbers", "keep", "-o", "{d}/K.npy"], "--model"),
        (["kernel", "{d}/d.csv", "--model", "{d}/m.json", "--kind", "hamming", "-o", "{d}/K.npy"], "hamming"),
        (["kernel", "{d}/d.csv", "--model", "{d}/m.json", "--numbers", "bin", "-o", "{d}/K.npy"], "bin"),
        (["kernel", "{d}/d.csv", "--model", "{d}/d.bif", "--numbers", "keep", "-o", "{d}/K.npy"], "hybrid"),
        (["cluster", "{d}/d.csv", "--numbers", "keep", "--kernel", "hamming", "--clusters", "2"], "hamming"),
        (
            [
                "cluster",
                "{d}/d.csv",
                "--numbers",
                "keep",
                "--algorithm",
                "kmeans-features",
                "--clusters",
                "2",
            ],
            "kmeans-features",
        ),
        (
            ["cluster", "{d}/d.csv", "--numbers", "keep", "--chunksize", "50", "--clusters", "2"],
            "--chunksize",
        ),
        (["cluster", "{d}/d.csv", "--numbers", "keep"], "--clusters"),
        (["prototypes", "{d}/d.csv", "--model", "{d}/m.json", "--k", "3", "--criterion", "chi2"], "chi2"),
        (["prototypes", "{d}/d.csv", "--numbers", "keep", "--structure", "tan", "--k", "3"], "tan"),
    ],
)
def test_cli_numbers_keep_refusals(argv, culprit, files, capsys):
    _, d = files
    (d / "d.bif").write_text("network x {}\n")
    assert main([a.format(d=d) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and culprit in err and "Traceback" not in err
    assert not (d / "K.npy").exists()


def test_cli_cluster_numbers_keep(files, capsys):
    """cluster --numbers keep: the network learned on the columns other than the label, its Fisher Gram
    matrix clustered; the labels are those of the same steps taken through the Python API."""
    from bnfk_core.analyses.cluster.clustering import cluster, clustering_metrics
    from bnfk_core.hybrid import learn_hybrid_network, load_mixed

    _, d = files
    argv = ["cluster", str(d / "d.csv"), "--numbers", "keep", "--label-column", "A", "--seed", "3"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    data = load_mixed(d / "d.csv", categorical_columns=["A"])
    true = data.codes[:, data.variables.index("A")]
    feats = data.select([v for v in data.variables if v != "A"])
    learned = learn_hybrid_network(feats, tabu_steps=25)
    K = hybrid_fisher_gram(learned.model, feats)
    ref = cluster(K, 2, "correlation", kernel="fisher", seed=3)
    assert res["labels"] == ref.labels.tolist()
    assert res["ari"] == pytest.approx(clustering_metrics(true, ref.labels, K)["ari"], abs=1e-12)
    assert "A" not in res["features"] and res["numeric_columns"] == ["X", "Y", "Z"]
    assert res["algorithm_chosen"] == "correlation"
    assert main(argv + ["--algorithm", "ward"]) == 0  # every Gram-based algorithm of the registry
    ward = json.loads(capsys.readouterr().out)
    assert ward["labels"] == cluster(K, 2, "ward", kernel="fisher", seed=3).labels.tolist()


def test_cli_prototypes_numbers_keep(files, capsys):
    """prototypes --numbers keep: the reported MMD is |mean phi(S) - mean phi(X)|^2 computed from the Gram
    matrix (mean K_SS - 2 mean K_SX + mean K_XX), and the rows written are the rows chosen."""
    model, d = files
    out = d / "rows.csv"
    argv = ["prototypes", str(d / "d.csv"), "--model", str(d / "m.json"), "--k", "6", "--n-init", "20"]
    assert main([*argv, "--seed", "4", "-o", str(out), "--quiet"]) == 0
    res = json.loads(capsys.readouterr().out)
    idx = np.array(res["indices"])
    K = hybrid_fisher_gram(model, _read(model, d / "d.csv"))
    mmd = K[np.ix_(idx, idx)].mean() - 2 * K[idx].mean() + K.mean()
    assert res["mmd"] == pytest.approx(mmd, rel=1e-9, abs=1e-12) and res["criterion"] == "mmd"
    assert res["chi2"] is None and res["swaps"] >= 0
    rows = _read(model, out)
    full = _read(model, d / "d.csv")
    assert np.array_equal(rows.codes, full.codes[idx])
    assert np.allclose(rows.values, full.values[idx], equal_nan=True)
    # the greedy result is no worse than the best of its random starts
    rng = np.random.default_rng(4)
    starts = [rng.choice(150, size=6, replace=False) for _ in range(20)]
    best = min(K[np.ix_(s, s)].mean() - 2 * K[s].mean() + K.mean() for s in starts)
    assert mmd <= best + 1e-12


def test_equivalent_structures_give_the_same_kernel():
    """Theorem 4 carries over to reversing a numeric arc: A -> X -> Y and A -> Y -> X with A a parent of both
    (Markov equivalent, the same joint given A: X | A and Y | X, A against Y | A and X | Y, A, the latter's
    parameters from the former's bivariate normal per state of A) give the same Fisher kernel."""
    nodes = ["A", "X", "Y"]
    kinds = ("discrete", "numeric", "numeric")
    states = (("a0", "a1"), (), ())
    cpt = np.array([[0.35, 0.65]])
    a, s2 = np.array([-1.0, 2.0]), np.array([0.7, 1.3])
    b, c, t2 = np.array([0.5, -0.4]), np.array([1.5, -0.8]), np.array([0.5, 0.9])
    m1 = HybridNet(
        DAG(nodes, [("A", "X"), ("A", "Y"), ("X", "Y")]),
        kinds,
        states,
        (cpt, None, None),
        (None, LinearGaussian(a[:, None], s2), LinearGaussian(np.column_stack([b, c]), t2)),
    )
    my, vy = b + c * a, t2 + c * c * s2
    d = c * s2 / vy
    m2 = HybridNet(
        DAG(nodes, [("A", "X"), ("A", "Y"), ("Y", "X")]),
        kinds,
        states,
        (cpt, None, None),
        (
            None,
            LinearGaussian(np.column_stack([a - d * my, d]), s2 - c * c * s2 * s2 / vy),
            LinearGaussian(my[:, None], vy),
        ),
    )
    rows = m1.sample(60, seed=8)
    codes, values = rows.codes.copy(), rows.values.copy()
    values[::4, 1] = np.nan
    codes[::5, 0] = -1
    part = MixedData(rows.variables, rows.kinds, rows.states, codes, values)
    assert np.allclose(m1.log_density(rows), m2.log_density(rows), atol=1e-12)
    K1, K2 = hybrid_fisher_gram(m1, part), hybrid_fisher_gram(m2, part)
    assert np.abs(K1 - K2).max() < 1e-9 * np.abs(K1).max()


def test_all_numeric_network():
    """A network without discrete nodes (X -> Y, X -> Z, Y -> Z): E[phi] = 0 and E[phi phi^T] = I by exact
    quadrature, and a row missing X gets the brute-force expectation."""
    dag = DAG(["X", "Y", "Z"], [("X", "Y"), ("X", "Z"), ("Y", "Z")])
    gs = (
        LinearGaussian(np.array([[0.3]]), np.array([1.2])),
        LinearGaussian(np.array([[-0.5, 0.9]]), np.array([0.7])),
        LinearGaussian(np.array([[1.0, -0.6, 0.4]]), np.array([0.5])),
    )
    model = HybridNet(dag, ("numeric",) * 3, ((),) * 3, (None,) * 3, gs)
    data, w = quadrature(model, 5)
    Phi = hybrid_fisher_features(model, data)
    assert Phi.shape[1] == model.parameter_count() == 9
    assert np.abs(w @ Phi).max() < 1e-10
    assert np.abs((Phi * w[:, None]).T @ Phi - np.eye(9)).max() < 1e-9
    row = model.sample(1, seed=2)
    codes, values = row.codes.copy(), row.values.copy()
    values[0, 0] = np.nan
    got = hybrid_fisher_features(model, MixedData(model.variables, model.kinds, model.states, codes, values))
    assert np.abs(got[0] - _brute_expected_features(model, codes[0].copy(), values[0].copy())).max() < 1e-8
