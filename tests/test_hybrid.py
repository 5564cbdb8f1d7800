"""Hybrid (conditional linear Gaussian) networks: every number checked against an independent computation
(numpy least squares, scipy densities, brute-force enumeration over the discrete states, numerical
integration)."""

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from bnfk_core.cli.main import main
from bnfk_core.errors import DataError, ModelError, StructureError
from bnfk_core.hybrid import (
    HybridNet,
    LinearGaussian,
    conditional_normal,
    discrete_part,
    discrete_posterior,
    fit_hybrid,
    hybrid_hill_climb,
    load_mixed,
    marginal_log_density,
    numeric_moments,
    read_hybrid,
    six_node_clg,
    write_hybrid,
)
from bnfk_core.network.dag import DAG

NODES = ["A", "B", "C", "X", "Y", "Z"]
ARCS = [("A", "B"), ("B", "C"), ("A", "X"), ("X", "Y"), ("C", "Y"), ("Y", "Z"), ("B", "Z")]
KINDS = ("discrete", "discrete", "discrete", "numeric", "numeric", "numeric")


def true_net() -> HybridNet:
    """3 discrete + 3 Gaussian nodes: A -> B -> C; A -> X; X, C -> Y; Y, B -> Z (the package's
    :func:`~bnfk_core.hybrid.six_node_clg`, its nodes, arcs and kinds checked against this module's)."""
    net = six_node_clg()
    assert list(net.dag.nodes) == NODES and set(net.dag.arcs) == set(ARCS) and tuple(net.kinds) == KINDS
    return net


@pytest.fixture(scope="module")
def sample4k():
    return true_net().sample(4000, seed=7)


def closed_form_loglik(data, dag) -> tuple[float, int]:
    """ML log-likelihood and parameter count computed from scratch: multinomial counts for the discrete
    families, numpy.linalg.lstsq per discrete configuration with variance RSS/n for the Gaussian ones."""
    names = list(data.variables)
    ll, k = 0.0, 0
    for v in dag.nodes:
        i = names.index(v)
        ps = [names.index(p) for p in dag.parents(v)]
        dps = [p for p in ps if data.kinds[p] == "discrete"]
        cps = [p for p in ps if data.kinds[p] == "numeric"]
        configs = [()]
        for p in dps:
            configs = [c + (s,) for c in configs for s in range(len(data.states[p]))]
        for conf in configs:
            rows = np.ones(data.n_rows, bool)
            for p, s in zip(dps, conf):
                rows &= data.codes[:, p] == s
            if data.kinds[i] == "discrete":
                r = len(data.states[i])
                cnt = np.array([(data.codes[rows, i] == s).sum() for s in range(r)], float)
                nz = cnt[cnt > 0]
                ll += float((nz * np.log(nz / cnt.sum())).sum())
                k += r - 1
            else:
                X = np.column_stack([np.ones(rows.sum())] + [data.values[rows, c] for c in cps])
                y = data.values[rows, i]
                beta, *_ = np.linalg.lstsq(X, y, rcond=None)
                rss = float(((y - X @ beta) ** 2).sum())
                var = rss / len(y)
                ll += float(stats.norm.logpdf(y, X @ beta, math.sqrt(var)).sum())
                k += len(cps) + 2
    return ll, k


def test_a_given_dag_fitted_by_ml_has_the_closed_form_loglik(sample4k):
    dag = DAG(NODES, ARCS + [("A", "Z")])
    model = fit_hybrid(dag, sample4k, method="ml")
    ll, k = closed_form_loglik(sample4k, dag)
    assert model.log_likelihood(sample4k) == pytest.approx(ll, abs=1e-6)
    assert model.parameter_count() == k
    assert model.score(sample4k, "bic") == pytest.approx(ll - 0.5 * k * math.log(4000), abs=1e-6)
    assert model.score(sample4k, "aic") == pytest.approx(ll - k, abs=1e-6)


def test_a_discrete_node_never_gets_a_numeric_parent(sample4k):
    with pytest.raises(StructureError, match="discrete node 'C'"):
        fit_hybrid(DAG(NODES, [("X", "C")]), sample4k)
    found = hybrid_hill_climb(sample4k, "bic")
    kinds = dict(zip(NODES, KINDS))
    assert not [a for a in found.dag.sorted_arcs() if kinds[a[0]] == "numeric" and kinds[a[1]] == "discrete"]


def test_hill_climb_recovers_the_skeleton_and_its_score_is_the_bic(sample4k):
    found = hybrid_hill_climb(sample4k, "bic")
    assert {frozenset(a) for a in found.dag.sorted_arcs()} == {frozenset(a) for a in ARCS}
    ll, k = closed_form_loglik(sample4k, found.dag)
    assert found.score == pytest.approx(ll - 0.5 * k * math.log(4000), abs=1e-6)
    tabu = hybrid_hill_climb(sample4k, "bic", tabu_steps=5)
    assert tabu.score >= found.score - 1e-9


def brute_force_joint(net, row_codes, row_values, integrate_out=()):
    """p(discrete states, observed numbers) for every joint discrete state, from scipy densities."""
    out = {}
    for a in range(2):
        for b in range(3):
            for c in range(2):
                d = {"A": a, "B": b, "C": c}
                if any(row_codes[k] >= 0 and row_codes[k] != d[v] for k, v in enumerate("ABC")):
                    continue
                p = net.cpts[0][0, a] * net.cpts[1][a, b] * net.cpts[2][b, c]
                x, y, z = row_values
                gx, gy, gz = net.gaussians[3:]
                p *= stats.norm.pdf(x, gx.coef[a, 0], math.sqrt(gx.variance[a]))
                p *= stats.norm.pdf(y, gy.coef[c, 0] + gy.coef[c, 1] * x, math.sqrt(gy.variance[c]))
                if "Z" not in integrate_out:
                    p *= stats.norm.pdf(z, gz.coef[b, 0] + gz.coef[b, 1] * y, math.sqrt(gz.variance[b]))
                out[(a, b, c)] = p
    return out


def test_discrete_posteriors_given_numbers_equal_brute_force():
    net = true_net()
    rows = net.sample(6, seed=3)
    codes = rows.codes.copy()
    codes[:, 0] = -1  # A unknown
    codes[1::2, 1] = -1  # B unknown in some rows
    from bnfk_core.hybrid import MixedData

    ev = MixedData(rows.variables, rows.kinds, rows.states, codes, rows.values, "ev")
    post = discrete_posterior(net, ev)
    dens = marginal_log_density(net, ev)
    for r in range(6):
        joint = brute_force_joint(net, codes[r, :3], rows.values[r, 3:])
        tot = sum(joint.values())
        assert dens[r] == pytest.approx(math.log(tot), abs=1e-9)
        for t, name in enumerate("ABC"):
            want = np.zeros(len(net.states[t]))
            for key, p in joint.items():
                want[key[t]] += p / tot
            np.testing.assert_allclose(post[name][r], want, atol=1e-9, rtol=0)


def test_an_unobserved_numeric_leaf_marginalises_out():
    net = true_net()
    x, y = 1.3, 2.1
    post = discrete_posterior(net, {"X": x, "Y": y})
    joint = brute_force_joint(net, [-1, -1, -1], [x, y, 0.0], integrate_out=("Z",))
    tot = sum(joint.values())
    want_b = np.zeros(3)
    for key, p in joint.items():
        want_b[key[1]] += p / tot
    np.testing.assert_allclose(post["B"][0], want_b, atol=1e-9, rtol=0)
    # the integral of Z really is one: numerically over z for one discrete state
    full = brute_force_joint(net, [0, 1, 0], [x, y, 0.0])
    num, _ = integrate.quad(lambda z: brute_force_joint(net, [0, 1, 0], [x, y, z])[(0, 1, 0)], -40, 40)
    assert num == pytest.approx(
        brute_force_joint(net, [0, 1, 0], [x, y, 0.0], integrate_out=("Z",))[(0, 1, 0)], rel=1e-7
    )
    assert full


def test_a_missing_number_between_observed_ones_is_integrated_out():
    """Y missing between observed X and Z: the posterior and the density against quadrature over y."""
    net = true_net()
    x, z = 1.3, 0.3
    joint = {}
    for key in brute_force_joint(net, [-1, -1, -1], [x, 0.0, z]):
        joint[key] = integrate.quad(
            lambda y, key=key: brute_force_joint(net, list(key), [x, y, z])[key], -40, 40
        )[0]
    tot = sum(joint.values())
    post = discrete_posterior(net, {"X": x, "Z": z})
    for t, name in enumerate("ABC"):
        want = np.zeros(len(net.states[t]))
        for key, p in joint.items():
            want[key[t]] += p / tot
        np.testing.assert_allclose(post[name][0], want, atol=1e-9, rtol=0)
    assert marginal_log_density(net, {"X": x, "Z": z})[0] == pytest.approx(math.log(tot), abs=1e-8)
    # X and Y both missing, Z and C observed: the chain X -> Y -> Z composed by hand, Z ~ N(m, s2) per state
    gx, gy, gz = net.gaussians[3:]
    joint = {}
    for a in range(2):
        for b in range(3):
            c = 1
            mx, vx = gx.coef[a, 0], gx.variance[a]
            my, vy = gy.coef[c, 0] + gy.coef[c, 1] * mx, gy.variance[c] + gy.coef[c, 1] ** 2 * vx
            mz, vz = gz.coef[b, 0] + gz.coef[b, 1] * my, gz.variance[b] + gz.coef[b, 1] ** 2 * vy
            p = net.cpts[0][0, a] * net.cpts[1][a, b] * net.cpts[2][b, c]
            joint[(a, b)] = p * stats.norm.pdf(z, mz, math.sqrt(vz))
    tot = sum(joint.values())
    post = discrete_posterior(net, {"C": "c1", "Z": z})
    want = np.zeros(2)
    for key, p in joint.items():
        want[key[0]] += p / tot
    np.testing.assert_allclose(post["A"][0], want, atol=1e-12, rtol=0)
    assert marginal_log_density(net, {"C": "c1", "Z": z})[0] == pytest.approx(math.log(tot), abs=1e-12)


def test_conditional_normal_equals_numerical_integration():
    net = true_net()
    ev = {"A": "a1", "B": "b2", "C": "c0", "X": 0.7, "Z": -1.1}

    def joint(y):
        return brute_force_joint(net, [1, 2, 0], [0.7, y, -1.1])[(1, 2, 0)]

    z, _ = integrate.quad(joint, -30, 30)
    m1, _ = integrate.quad(lambda y: y * joint(y), -30, 30)
    m2, _ = integrate.quad(lambda y: y * y * joint(y), -30, 30)
    mean, var = conditional_normal(net, ev, "Y")
    assert mean[0] == pytest.approx(m1 / z, abs=1e-7)
    assert var[0] == pytest.approx(m2 / z - (m1 / z) ** 2, abs=1e-7)
    with pytest.raises(ModelError, match="mixture"):
        conditional_normal(net, {"X": 0.7, "Z": -1.1}, "Y")


def test_sampling_is_seeded_and_its_moments_are_the_models(sample4k):
    net = true_net()
    again = net.sample(4000, seed=7)
    np.testing.assert_array_equal(again.codes, sample4k.codes)
    np.testing.assert_array_equal(again.values, sample4k.values)
    assert not np.array_equal(net.sample(4000, seed=8).values, sample4k.values)
    big = net.sample(40_000, seed=1)
    # P(A = a1) = 0.6; E[X | A] = intercepts; Var[X | A=a0] = 1
    assert (big.codes[:, 0] == 1).mean() == pytest.approx(0.6, abs=0.01)
    for a, mu in enumerate([-1.0, 2.0]):
        xs = big.values[big.codes[:, 0] == a, 3]
        assert xs.mean() == pytest.approx(mu, abs=0.03)
    assert big.values[big.codes[:, 0] == 0, 3].var() == pytest.approx(1.0, abs=0.05)
    # E[X] = 0.4 * -1 + 0.6 * 2
    assert big.values[:, 3].mean() == pytest.approx(0.8, abs=0.03)
    mean, cov = numeric_moments(net)
    assert mean[0] == pytest.approx(0.8, abs=1e-12)
    np.testing.assert_allclose(big.values[:, 3:].mean(axis=0), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(big.values[:, 3:].T), cov, atol=0.1 * np.abs(cov).max())
    # Var X = E Var + Var E = 0.4 * 1 + 0.6 * 0.5 + 0.4 * 0.6 * 3 ** 2 by hand
    assert cov[0, 0] == pytest.approx(0.4 + 0.3 + 0.24 * 9, abs=1e-12)
    assert discrete_part(net).parameter_count() == 1 + 4 + 3


def test_json_round_trip(tmp_path):
    net = true_net()
    write_hybrid(net, tmp_path / "m.json")
    back = read_hybrid(tmp_path / "m.json")
    rows = net.sample(50, seed=2)
    np.testing.assert_allclose(back.log_density(rows), net.log_density(rows), rtol=0, atol=1e-12)
    with pytest.raises(ModelError, match="not a bnfk hybrid model"):
        (tmp_path / "bad.json").write_text("{}")
        read_hybrid(tmp_path / "bad.json")


def test_load_mixed_keeps_numbers_and_drops_a_numeric_identifier():
    rng = np.random.default_rng(0)
    n = 40
    lines = ["id,site,age,flag"]
    for r in range(n):
        age = "" if r == 3 else f"{rng.normal(50, 10):.2f}"
        lines.append(f"{1000 + r},s{r % 3},{age},{r % 2}")
    data = load_mixed(text="\n".join(lines) + "\n")
    assert data.variables == ("site", "age", "flag")
    assert data.kinds == ("discrete", "numeric", "discrete")
    assert np.isnan(data.values[3, 1]) and not np.isnan(data.values[4, 1])
    assert any("identifier" in note and "'id'" in note for note in data.notes)
    binned = load_mixed(text="\n".join(lines) + "\n", numbers="bin", max_levels=10, drop_columns=["id"])
    assert binned.kinds == ("discrete",) * 3 and len(binned.states[1]) == 4
    kept = load_mixed(text="\n".join(lines) + "\n", numeric_columns=["flag"])
    assert kept.kinds[-1] == "numeric"
    with pytest.raises(DataError, match="'site'.*not a number"):
        load_mixed(text="\n".join(lines) + "\n", numeric_columns=["site"])


def test_load_mixed_keeps_distinct_whole_numbers_not_named_as_an_identifier():
    """The binned reader's rule: all-distinct whole numbers are an identifier only under an identifier's
    name."""
    lines = ["id,income,site"] + [f"{1000 + r},{30000 + 7 * r * r},s{r % 3}" for r in range(40)]
    data = load_mixed(text="\n".join(lines) + "\n")
    assert data.variables == ("income", "site")
    assert data.kinds == ("numeric", "discrete")
    np.testing.assert_array_equal(data.values[:, 0], [30000 + 7 * r * r for r in range(40)])


def _write_csv(data, path):
    from bnfk_core.cli.hybrid import write_mixed_csv

    with open(path, "w", encoding="utf-8", newline="") as fh:
        write_mixed_csv(data, fh)


def test_cli_learn_keep_prints_the_bic_of_the_network_it_writes(sample4k, tmp_path, capsys):
    csv_path = tmp_path / "d.csv"
    _write_csv(sample4k, csv_path)
    out = tmp_path / "m.json"
    assert (
        main(["learn", str(csv_path), "--numbers", "keep", "--structure", "hc-greedy", "-o", str(out)]) == 0
    )
    res = json.loads(capsys.readouterr().out)
    model = read_hybrid(out)
    data = load_mixed(csv_path)
    ll, k = closed_form_loglik(data, model.dag)
    assert res["score"] == pytest.approx(ll - 0.5 * k * math.log(4000), abs=1e-6)
    assert {frozenset(a) for a in res["arcs"]} == {frozenset(a) for a in ARCS}
    # a given DAG, fitted; loglik is the log-density; sample draws numbers
    (tmp_path / "s.json").write_text(json.dumps({"nodes": NODES, "arcs": [list(a) for a in ARCS]}))
    given = tmp_path / "g.json"
    argv = ["learn", str(csv_path), "--numbers", "keep", "--structure-file", str(tmp_path / "s.json")]
    assert main(argv + ["-o", str(given)]) == 0
    res = json.loads(capsys.readouterr().out)
    ll, k = closed_form_loglik(data, DAG(NODES, ARCS))
    assert res["method"] == "given" and res["score"] == pytest.approx(ll - 0.5 * k * math.log(4000), abs=1e-6)
    assert main(["loglik", str(csv_path), "--model", str(given)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["total"] == pytest.approx(ll, abs=1e-6)
    assert main(["sample", str(given), "-n", "5", "--seed", "3"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == ",".join(NODES) and len(text) == 6
    float(text[1].split(",")[3])
    assert main(["learn", str(csv_path), "--numbers", "keep", "-o", str(tmp_path / "m.bif")]) == 2
    assert "json" in capsys.readouterr().err


def test_cli_structure_file_fits_a_discrete_dag(tmp_path, capsys):
    from bnfk_core.learning.scores import bic

    net = true_net()
    rows = net.sample(500, seed=5)
    disc = rows.select(["A", "B", "C"])
    csv_path = tmp_path / "d.csv"
    _write_csv(disc, csv_path)
    (tmp_path / "s.json").write_text(json.dumps({"nodes": ["A", "B", "C"], "arcs": [["A", "B"], ["B", "C"]]}))
    argv = ["learn", str(csv_path), "--structure-file", str(tmp_path / "s.json"), "--params", "ml"]
    assert main(argv + ["-o", str(tmp_path / "m.json")]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["arcs"] == [["A", "B"], ["B", "C"]]
    codes, cards = disc.codes, disc.cardinalities
    want = bic(codes, cards, 0) + bic(codes, cards, 1, (0,)) + bic(codes, cards, 2, (1,))
    assert res["score"] == pytest.approx(want, abs=1e-9)
    ll, k = closed_form_loglik(disc, DAG(["A", "B", "C"], [("A", "B"), ("B", "C")]))
    assert res["score"] == pytest.approx(ll - 0.5 * k * math.log(500), abs=1e-6)


def test_missing_numbers_are_scored_on_each_familys_available_cases(sample4k):
    from bnfk_core.hybrid import HybridScorer, MixedData

    rng = np.random.default_rng(4)
    values = sample4k.values.copy()
    values[rng.random(4000) < 0.1, 3] = np.nan
    values[rng.random(4000) < 0.1, 4] = np.nan
    data = MixedData(sample4k.variables, sample4k.kinds, sample4k.states, sample4k.codes, values, "holes")
    scorer = HybridScorer(data, "bic")
    assert not scorer.complete_numbers
    rows = ~np.isnan(values[:, 3]) & ~np.isnan(values[:, 4])
    ll, n = 0.0, 0
    for c in range(2):
        r = rows & (data.codes[:, 2] == c)
        X = np.column_stack([np.ones(r.sum()), values[r, 3]])
        beta, *_ = np.linalg.lstsq(X, values[r, 4], rcond=None)
        resid = values[r, 4] - X @ beta
        ll += float(stats.norm.logpdf(resid, 0, math.sqrt((resid**2).mean())).sum())
        n += int(r.sum())
    assert scorer(4, (2, 3)) == pytest.approx((ll - 0.5 * 2 * 3 * math.log(n)) * 4000 / n, abs=1e-6)
    model = fit_hybrid(DAG(NODES, ARCS), data)
    r = rows & (data.codes[:, 2] == 1)
    X = np.column_stack([np.ones(r.sum()), values[r, 3]])
    beta, *_ = np.linalg.lstsq(X, values[r, 4], rcond=None)
    np.testing.assert_allclose(model.gaussians[4].coef[1], beta, atol=1e-9)
    found = hybrid_hill_climb(data, "bic")
    assert found.notes and {frozenset(a) for a in found.dag.sorted_arcs()} == {frozenset(a) for a in ARCS}


def test_a_child_its_parent_determines_gets_the_variance_floor():
    from bnfk_core.hybrid import mixed_from_arrays

    x = np.linspace(0, 1, 50)
    data = mixed_from_arrays({"x": x, "y": 2 * x + 1})
    model = fit_hybrid(DAG(["x", "y"], [("x", "y")]), data)
    assert model.gaussians[1].variance[0] == pytest.approx(1e-6 * (2 * x + 1).var(), rel=1e-9)
    assert model.fit_info["floored_variances"] == 1
    assert np.isfinite(model.log_density(data)).all()
    np.testing.assert_allclose(model.gaussians[1].coef[0], [1.0, 2.0], atol=1e-9)


def test_a_configuration_with_no_more_rows_than_coefficients_takes_the_pooled_regression():
    """Two rows and two coefficients (intercept, one weight): least squares would run through both points
    (RSS 0, variance at the floor, any slope); the pooled regression over all rows is taken instead."""
    from bnfk_core.hybrid import mixed_from_arrays

    rng = np.random.default_rng(4)
    x = rng.normal(size=50)
    a = np.array([0] * 48 + [1] * 2)
    y = 2.0 * x + 1.0 + rng.normal(scale=0.3, size=50)
    y[48:] = [40.0, -25.0]  # two far-off points: their own line would have slope ~ -65 / (x48 - x49)
    data = mixed_from_arrays({"A": a, "x": x, "y": y}, states={"A": ["a0", "a1"]})
    model = fit_hybrid(DAG(["A", "x", "y"], [("A", "y"), ("x", "y")]), data)
    X = np.column_stack([np.ones(50), x])
    pooled, rss, *_ = np.linalg.lstsq(X, y, rcond=None)
    own, *_ = np.linalg.lstsq(X[:48], y[:48], rcond=None)
    g = model.gaussians[2]
    np.testing.assert_allclose(g.coef[1], pooled, atol=1e-9)
    assert g.variance[1] == pytest.approx(rss[0] / 50, rel=1e-9)
    np.testing.assert_allclose(g.coef[0], own, atol=1e-9)  # a configuration with rows to spare keeps its own
    assert model.fit_info["floored_variances"] == 0


@pytest.mark.parametrize(
    "extra, culprit",
    [
        (["--score", "k2"], "bic, aic, kgv"),
        (["--structure", "tree"], "hc-greedy or hc"),
        (["--class-column", "A"], "--class-column"),
        (["--forbid", "A->B"], "--forbid"),
        (["--bootstrap", "3"], "--bootstrap"),
        (["--kappa", "0.1"], "--kappa"),
    ],
)
def test_cli_hybrid_refusals_are_one_sentence(extra, culprit, sample4k, tmp_path, capsys):
    csv_path = tmp_path / "d.csv"
    _write_csv(sample4k.subset(np.arange(100)), csv_path)
    assert main(["learn", str(csv_path), "--numbers", "keep", "-o", str(tmp_path / "m.json"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and culprit in err and not (tmp_path / "m.json").exists()


def test_cli_structure_file_refuses_a_numeric_parent_of_a_discrete_node(sample4k, tmp_path, capsys):
    csv_path = tmp_path / "d.csv"
    _write_csv(sample4k.subset(np.arange(100)), csv_path)
    (tmp_path / "s.json").write_text(json.dumps({"nodes": NODES, "arcs": [["X", "A"]]}))
    argv = ["learn", str(csv_path), "--numbers", "keep", "--structure-file", str(tmp_path / "s.json")]
    assert main(argv + ["-o", str(tmp_path / "m.json")]) == 2
    assert "discrete node 'A'" in capsys.readouterr().err
    (tmp_path / "s.json").write_text(json.dumps({"nodes": ["A", "Q"], "arcs": []}))
    assert main(argv + ["-o", str(tmp_path / "m.json")]) == 2
    assert "'Q'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def holes():
    from bnfk_core.hybrid import MixedData

    d = true_net().sample(1500, seed=3)
    rng = np.random.default_rng(1)
    values, codes = d.values.copy(), d.codes.copy()
    values[rng.random(1500) < 0.2, 3] = np.nan
    values[rng.random(1500) < 0.2, 4] = np.nan
    codes[rng.random(1500) < 0.2, 1] = -1
    return MixedData(d.variables, d.kinds, d.states, codes, values, "holes")


def test_em_reaches_a_stationary_point_of_the_observed_likelihood(holes):
    """The EM fit's observed-data log-likelihood (marginal_log_density, tested against brute force above)
    is the one EM reports, it beats the available-case fit, and no parameter moved alone raises it."""
    from bnfk_core.hybrid import em_hybrid

    dag = DAG(NODES, ARCS)
    model = em_hybrid(dag, holes, tol=1e-13, max_iter=500)
    ll = marginal_log_density(model, holes).sum()
    assert model.fit_info["observed_loglik"] == pytest.approx(ll, abs=1e-6)
    assert ll > marginal_log_density(fit_hybrid(dag, holes), holes).sum()
    lls = [em_hybrid(dag, holes, max_iter=k, tol=0).fit_info["observed_loglik"] for k in (1, 2, 3, 4)]
    assert all(b >= a - 1e-9 for a, b in zip(lls, lls[1:]))

    def moved(i, which, idx, eps):
        gs = list(model.gaussians)
        g = gs[i]
        coef, var = g.coef.copy(), g.variance.copy()
        (coef if which == "coef" else var)[idx] += eps
        gs[i] = LinearGaussian(coef, var)
        m = HybridNet(model.dag, model.kinds, model.states, model.cpts, tuple(gs))
        return marginal_log_density(m, holes).sum()

    for i, which, idx in [(3, "coef", (1, 0)), (4, "coef", (0, 1)), (4, "var", (1,)), (5, "coef", (2, 1))]:
        eps = 1e-4
        grad = (moved(i, which, idx, eps) - moved(i, which, idx, -eps)) / (2 * eps)
        assert abs(grad) < 0.01, (i, which, idx, grad)  # the available-case fit: 1.6 to 83


def test_cli_learn_keep_with_missing_cells_prints_the_observed_data_bic(holes, tmp_path, capsys):
    csv_path = tmp_path / "h.csv"
    _write_csv(holes, csv_path)
    out = tmp_path / "m.json"
    assert main(["learn", str(csv_path), "--numbers", "keep", "-o", str(out)]) == 0
    res = json.loads(capsys.readouterr().out)
    model = read_hybrid(out)
    data = load_mixed(csv_path)
    ll = marginal_log_density(model, data).sum()
    card = {"A": 2, "B": 3, "C": 2}
    k = 0
    for v in NODES:  # q (r - 1) per discrete node, q (|numeric parents| + 2) per numeric node
        q = math.prod(card[p] for p in model.dag.parents(v) if p in card)
        k += q * (card[v] - 1) if v in card else q * (sum(p not in card for p in model.dag.parents(v)) + 2)
    assert model.parameter_count() == k
    assert res["missing_data"] == "em" and res["score"] == pytest.approx(
        ll - 0.5 * k * math.log(1500), abs=1e-6
    )
    assert {frozenset(a) for a in res["arcs"]} == {frozenset(a) for a in ARCS}


def test_structural_em_recovers_the_skeleton_and_expected_scores_of_a_full_table_are_its_scores(
    holes, sample4k
):
    from bnfk_core.hybrid import ExpectedScorer, HybridScorer, expected_completions, structural_em_hybrid

    sem = structural_em_hybrid(holes)
    assert {frozenset(a) for a in sem.dag.sorted_arcs()} == {frozenset(a) for a in ARCS}
    assert sem.loglik == pytest.approx(marginal_log_density(sem.model, holes).sum(), abs=1e-6)
    data = sample4k.subset(np.arange(600))
    model = fit_hybrid(DAG(NODES, ARCS), data)
    completed, _ = expected_completions(model, data)
    exp, direct = ExpectedScorer(completed, data), HybridScorer(data)
    for child, parents in [(0, ()), (1, (0,)), (4, (2, 3)), (5, (1, 3, 4)), (3, ())]:
        assert exp(child, parents) == pytest.approx(direct(child, parents), abs=1e-6)


def test_a_fifo_as_structure_file_or_hybrid_model_is_refused_without_opening_it(tmp_path, capsys):
    import os

    csv_path = tmp_path / "d.csv"
    _write_csv(true_net().sample(30, seed=0), csv_path)
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    argv = [
        "learn",
        str(csv_path),
        "--numbers",
        "keep",
        "--structure-file",
        str(fifo),
        "-o",
        str(tmp_path / "m.json"),
    ]
    assert main(argv) == 2
    assert "regular file" in capsys.readouterr().err
    with pytest.raises(ModelError):
        read_hybrid(fifo)
    assert main(["loglik", str(csv_path), "--model", str(fifo)]) == 2
    capsys.readouterr()


def test_cli_numbers_stay_numbers_by_default_unless_an_option_needs_bins(sample4k, tmp_path, capsys):
    """--numbers auto (the default): a table with numbers gives the hybrid network the explicit --numbers keep
    gives; a .bif output, --chunksize or a discrete-only structure asks for bins, and gets the network
    --numbers bin gives; an all-categorical table is the discrete path whatever the option."""
    csv_path = tmp_path / "d.csv"
    _write_csv(sample4k.subset(np.arange(600)), csv_path)
    learn = ["learn", str(csv_path), "--structure", "hc-greedy", "--quiet"]
    assert main([*learn, "-o", str(tmp_path / "auto.json")]) == 0
    auto = json.loads(capsys.readouterr().out)
    assert main([*learn, "--numbers", "keep", "-o", str(tmp_path / "keep.json")]) == 0
    keep = json.loads(capsys.readouterr().out)
    assert read_hybrid(tmp_path / "auto.json").numeric and auto["score"] == keep["score"]
    assert auto["arcs"] == keep["arcs"]
    for extra, out in ((["--structure", "tree"], "t.json"), ([], "m.bif"), (["--chunksize", "100"], "c.bif")):
        argv = ["learn", str(csv_path), "--quiet", *extra]
        assert main([*argv, "-o", str(tmp_path / ("auto_" + out))]) == 0
        binned = json.loads(capsys.readouterr().out)
        assert main([*argv, "--numbers", "bin", "-o", str(tmp_path / ("bin_" + out))]) == 0
        assert json.loads(capsys.readouterr().out)["arcs"] == binned["arcs"]
        text = (tmp_path / ("auto_" + out)).read_text()
        assert text == (tmp_path / ("bin_" + out)).read_text() and "bnfk-hybrid-model" not in text
    cats = tmp_path / "cats.csv"
    cats.write_text("a,b\n" + "".join(f"x{r % 3},y{(r // 2) % 2}\n" for r in range(60)))
    assert main(["learn", str(cats), "--quiet", "-o", str(tmp_path / "c.json")]) == 0
    assert "bnfk-hybrid-model" not in (tmp_path / "c.json").read_text()


def test_numbers_auto_does_not_read_a_file_too_wide_for_a_hybrid_network(tmp_path):
    """A file wider than AUTO_NUMBERS_MAX_COLUMNS is settled to bin from its header line alone (the width
    guards then refuse it without loading it)."""
    import argparse

    from bnfk_core.cli.common import AUTO_NUMBERS_MAX_COLUMNS, resolve_numbers

    path = tmp_path / "wide.csv"
    n = AUTO_NUMBERS_MAX_COLUMNS + 1
    path.write_text(
        ",".join(f"c{j}" for j in range(n)) + "\n" + ",".join(str(j * 0.5) for j in range(n)) + "\n"
    )
    args = argparse.Namespace(numbers="auto", data=str(path), model=None)  # no data options: never read
    assert resolve_numbers(args, {}) == "bin" and args.numbers == "bin"
    narrow = tmp_path / "narrow.csv"
    narrow.write_text("x,g\n" + "".join(f"{r * 0.37:.3f},g{r % 2}\n" for r in range(40)))
    args = argparse.Namespace(
        numbers="auto",
        data=str(narrow),
        model=None,
        missing_policy="missing",
        max_levels=50,
        drop_columns=None,
    )
    assert resolve_numbers(args, {}) == "keep"
    args.numbers = "auto"
    assert resolve_numbers(args, {"--chunksize": True}) == "bin"


def test_exact_search_finds_the_best_clg_dag_of_all(sample4k, tmp_path, capsys):
    """The exact search's DAG has the largest BIC among every acyclic CLG DAG on four columns (enumerated:
    all 4,096 arc subsets), and that BIC is the fitted network's own (from Python and from the CLI)."""
    from bnfk_core.hybrid import HybridScorer, MixedData, hybrid_exact, learn_hybrid_network, network_score

    data = sample4k.subset(np.arange(800)).select(["A", "C", "X", "Y"])
    scorer = HybridScorer(data, "bic")
    pairs = [(u, v) for u in range(4) for v in range(4) if u != v]
    best = -np.inf
    for mask in range(1 << len(pairs)):
        arcs = [pairs[k] for k in range(len(pairs)) if mask >> k & 1]
        if not all(scorer.allowed(u, v) for u, v in arcs):
            continue
        try:
            DAG(list(data.variables), [(data.variables[u], data.variables[v]) for u, v in arcs])
        except Exception:  # a cycle
            continue
        parents = [tuple(u for u, w in arcs if w == v) for v in range(4)]
        best = max(best, scorer.total(parents))
    found = hybrid_exact(data, "bic")
    assert found.score == pytest.approx(best, abs=1e-9)
    learned = learn_hybrid_network(data, search="exact")
    assert learned.method == "exact" and learned.score == pytest.approx(best, abs=1e-6)
    assert learned.score == pytest.approx(network_score(learned.model, data, "bic"), abs=1e-6)
    _write_csv(data, tmp_path / "d.csv")
    assert (
        main(
            [
                "learn",
                str(tmp_path / "d.csv"),
                "--structure",
                "exact",
                "--quiet",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert res["score"] == pytest.approx(best, abs=1e-6) and read_hybrid(tmp_path / "m.json").numeric
    with pytest.raises(StructureError, match="missing cells"):
        holes = data.values.copy()
        holes[0, 2] = np.nan
        learn_hybrid_network(
            MixedData(data.variables, data.kinds, data.states, data.codes, holes), search="exact"
        )


def test_kgv_learns_a_clg_dag_with_the_numbers_unbinned(tmp_path, capsys):
    """learn --score kgv (numbers kept): hill climbing on the KGV with the numbers as numbers finds every arc
    of the network that drew 1,000 rows and no numeric parent of a discrete node; the score printed is the KGV
    of the DAG written, recomputed from the CSV's columns by the KGV module itself."""
    import pandas as pd

    from bnfk_core.learning.kgv import make_kgv_scorer

    data = true_net().sample(1000, seed=7)
    _write_csv(data, tmp_path / "d.csv")
    assert (
        main(["learn", str(tmp_path / "d.csv"), "--score", "kgv", "--quiet", "-o", str(tmp_path / "m.json")])
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    model = read_hybrid(tmp_path / "m.json")
    found = {frozenset(a) for a in model.dag.sorted_arcs()}
    assert {frozenset(a) for a in ARCS} <= found
    assert not any(
        KINDS[NODES.index(v)] == "discrete" and KINDS[NODES.index(u)] == "numeric"
        for u, v in model.dag.sorted_arcs()
    )
    frame = pd.read_csv(tmp_path / "d.csv")
    codes = np.zeros((len(frame), len(NODES)), dtype=np.int64)
    cards, numbers = [], {}
    for j, name in enumerate(NODES):
        if KINDS[j] == "discrete":
            states = sorted(frame[name].unique())
            codes[:, j] = frame[name].map({s: k for k, s in enumerate(states)})
            cards.append(len(states))
        else:
            numbers[j] = frame[name].to_numpy(float)
            cards.append(1)
    kgv = make_kgv_scorer(codes, cards, numbers=numbers)
    idx = {v: i for i, v in enumerate(model.dag.nodes)}
    order = [idx[v] for v in NODES]
    parents = model.dag.parent_indices()
    expected = sum(
        kgv(j, tuple(sorted(order.index(p) for p in parents[order[j]]))) for j in range(len(NODES))
    )
    assert res["score"] == pytest.approx(expected, rel=1e-9)
