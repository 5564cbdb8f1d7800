"""Imputation of mixed tables under a CLG network: conditional means against quadrature and hand-derived
closed forms (including a missing discrete parent, where the conditional is a mixture), discrete fills against
the argmax of brute-force posteriors."""

import math

import numpy as np
import pytest
from scipy import integrate, stats
from test_hybrid import brute_force_joint, true_net

from bnfk_core.errors import ModelError
from bnfk_core.hybrid import (
    MixedData,
    conditional_normal,
    discrete_posterior,
    hybrid_imputation,
    impute_hybrid,
)


def one_row(net, evidence):
    codes = np.full((1, net.n_vars), -1, dtype=np.int32)
    values = np.full((1, net.n_vars), np.nan)
    for name, v in evidence.items():
        i = net.variables.index(name)
        if net.kinds[i] == "discrete":
            codes[0, i] = net.states[i].index(v)
        else:
            values[0, i] = v
    return MixedData(net.variables, net.kinds, net.states, codes, values, "row")


def test_a_number_whose_discrete_parent_is_missing_gets_the_mixture_mean_of_quadrature():
    """A and X missing; B, C, Y, Z observed: E[X | obs] = sum_a int x p(a, x, obs) dx / p(obs)."""
    net = true_net()
    b, c, y, z = 1, 0, 0.9, 2.2
    gx = net.gaussians[3]

    def dens(x, a):
        return brute_force_joint(net, [a, b, c], [x, y, z])[(a, b, c)]

    mass = [integrate.quad(dens, -30, 30, args=(a,))[0] for a in range(2)]
    m1 = [integrate.quad(lambda x, a=a: x * dens(x, a), -30, 30)[0] for a in range(2)]
    m2 = [integrate.quad(lambda x, a=a: x * x * dens(x, a), -30, 30)[0] for a in range(2)]
    tot = sum(mass)
    want_mean = sum(m1) / tot
    want_var = sum(m2) / tot - want_mean**2
    res = hybrid_imputation(net, one_row(net, {"B": "b1", "C": "c0", "Y": y, "Z": z}))
    rows, mean, var = res.moments[3]
    assert rows.tolist() == [0]
    assert mean[0] == pytest.approx(want_mean, abs=1e-8)
    assert var[0] == pytest.approx(want_var, abs=1e-8)
    assert res.data.values[0, 3] == pytest.approx(want_mean, abs=1e-8)
    # the two components really differ: the mixture's mean is not either component's
    assert abs(gx.coef[0, 0] - gx.coef[1, 0]) > 1
    _, P = res.probabilities[0]
    np.testing.assert_allclose(P[0], np.array(mass) / tot, atol=1e-9)
    assert res.data.codes[0, 0] == int(np.argmax(mass))
    # observed cells are kept as they were
    assert res.data.codes[0, 1:3].tolist() == [b, c]
    assert res.data.values[0, 4:].tolist() == [y, z]


def test_a_missing_number_between_missing_cells_gets_the_closed_form_mixture_mean():
    """C and Z observed; A, B, X, Y missing: per (a, b), (Y, Z) are jointly Gaussian, composed by hand, so
    E[Y | c, z] = sum_{a,b} P(a, b | c, z) (m_y + cov(Y, Z) / var(Z) (z - m_z))."""
    net = true_net()
    c, z = 1, 0.4
    gx, gy, gz = net.gaussians[3:]
    weights, cond = {}, {}
    for a in range(2):
        for b in range(3):
            mx, vx = gx.coef[a, 0], gx.variance[a]
            my, vy = gy.coef[c, 0] + gy.coef[c, 1] * mx, gy.variance[c] + gy.coef[c, 1] ** 2 * vx
            mz, vz = gz.coef[b, 0] + gz.coef[b, 1] * my, gz.variance[b] + gz.coef[b, 1] ** 2 * vy
            cyz = gz.coef[b, 1] * vy
            p = net.cpts[0][0, a] * net.cpts[1][a, b] * net.cpts[2][b, c]
            weights[(a, b)] = p * stats.norm.pdf(z, mz, math.sqrt(vz))
            cond[(a, b)] = (my + cyz / vz * (z - mz), vy - cyz**2 / vz)
    tot = sum(weights.values())
    want = sum(w * cond[k][0] for k, w in weights.items()) / tot
    want2 = sum(w * (cond[k][1] + cond[k][0] ** 2) for k, w in weights.items()) / tot
    res = hybrid_imputation(net, one_row(net, {"C": "c1", "Z": z}))
    assert res.data.values[0, 4] == pytest.approx(want, abs=1e-12)
    assert res.moments[4][2][0] == pytest.approx(want2 - want**2, abs=1e-12)
    pa = np.zeros(2)
    pb = np.zeros(3)
    for (a, b), w in weights.items():
        pa[a] += w / tot
        pb[b] += w / tot
    np.testing.assert_allclose(res.probabilities[0][1][0], pa, atol=1e-12)
    np.testing.assert_allclose(res.probabilities[1][1][0], pb, atol=1e-12)
    assert res.data.codes[0, :2].tolist() == [int(np.argmax(pa)), int(np.argmax(pb))]


def _holes(net, n, frac, seed):
    full = net.sample(n, seed=seed)
    rng = np.random.default_rng(seed + 1)
    hide = rng.random(full.codes.shape) < frac
    codes = np.where(hide, -1, full.codes).astype(np.int32)
    num = np.array([k == "numeric" for k in full.kinds])
    codes[:, num] = -1
    values = np.where(hide, np.nan, full.values)
    values[:, ~num] = np.nan
    return full, MixedData(full.variables, full.kinds, full.states, codes, values, "holes")


def test_discrete_fills_are_the_argmax_of_brute_force_posteriors():
    net = true_net()
    full, data = _holes(net, 40, 0.3, 5)
    res = hybrid_imputation(net, data)
    ref = discrete_posterior(net, data)  # variable elimination with numbers integrated out: another path
    for i, name in enumerate("ABC"):
        rows, P = res.probabilities[i]
        np.testing.assert_allclose(P, ref[name][rows], atol=1e-9)
    # brute force where every number is observed (the scipy densities of test_hybrid)
    for r in np.flatnonzero(~np.isnan(data.values[:, 3:]).any(axis=1) & (data.codes[:, :3] < 0).any(axis=1)):
        joint = brute_force_joint(net, data.codes[r, :3], data.values[r, 3:])
        tot = sum(joint.values())
        for t in np.flatnonzero(data.codes[r, :3] < 0):
            want = np.zeros(len(net.states[t]))
            for key, p in joint.items():
                want[key[t]] += p / tot
            assert res.data.codes[r, t] == int(np.argmax(want))
            k = res.probabilities[t][0].tolist().index(r)
            np.testing.assert_allclose(res.probabilities[t][1][k], want, atol=1e-9)
    assert not res.data.missing_mask().any()
    obs = ~data.missing_mask()
    assert (res.data.codes[obs] == data.codes[obs]).all()
    np.testing.assert_array_equal(
        res.data.values[obs & ~np.isnan(data.values)], data.values[~np.isnan(data.values)]
    )


def test_a_number_with_its_family_observed_is_conditional_normals_mean():
    """Every other cell observed: the one Gaussian of conditional_normal (its precision formula)."""
    net = true_net()
    full = net.sample(12, seed=9)
    for t in (3, 4, 5):
        values = full.values.copy()
        values[:, t] = np.nan
        data = MixedData(full.variables, full.kinds, full.states, full.codes, values, "one")
        mean, var = conditional_normal(net, data, net.variables[t])
        res = hybrid_imputation(net, data)
        np.testing.assert_allclose(res.data.values[:, t], mean, atol=1e-10)
        np.testing.assert_allclose(res.moments[t][2], var, atol=1e-10)


def test_impute_hybrid_returns_the_completed_table_and_refuses_too_many_completions():
    net = true_net()
    _, data = _holes(net, 30, 0.2, 2)
    out = impute_hybrid(net, data)
    assert isinstance(out, MixedData) and not out.missing_mask().any()
    np.testing.assert_array_equal(out.values, hybrid_imputation(net, data).data.values)
    import bnfk_core.hybrid.impute as mod

    old = mod.MAX_COMPLETIONS
    try:
        mod.MAX_COMPLETIONS = 5
        with pytest.raises(ModelError, match="Row 1 of row leaves 6 completions"):
            hybrid_imputation(net, one_row(net, {"C": "c1"}))
    finally:
        mod.MAX_COMPLETIONS = old


# ---------------------------------------------------------------------- the command line
def _csv(data, path):
    from bnfk_core.cli.hybrid import write_mixed_csv

    with open(path, "w", encoding="utf-8", newline="") as fh:
        write_mixed_csv(data, fh)


def test_cli_impute_keep_with_a_model_writes_the_conditional_means_as_numbers(tmp_path, capsys):
    import json

    from bnfk_core.cli.main import main
    from bnfk_core.hybrid import load_mixed, write_hybrid

    net = true_net()
    _, data = _holes(net, 60, 0.2, 4)
    src, model, out, probs = (tmp_path / n for n in ("d.csv", "m.json", "o.csv", "p.csv"))
    _csv(data, src)
    write_hybrid(net, model)
    argv = ["impute", str(src), "--model", str(model), "-o", str(out), "--probabilities", str(probs)]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    want = hybrid_imputation(net, load_mixed(src, numeric_columns=["X", "Y", "Z"]))
    assert res["imputed_cells"] == int(data.missing_mask().sum())
    got = load_mixed(out, numeric_columns=["X", "Y", "Z"])
    np.testing.assert_allclose(got.values[:, 3:], want.data.values[:, 3:], rtol=0, atol=1e-12)
    assert [[got.states[i][c] for c in got.codes[:, i]] for i in range(3)] == [
        [want.data.states[i][c] for c in want.data.codes[:, i]] for i in range(3)
    ]
    # the observed cells keep their text
    before = src.read_text().splitlines()
    after = out.read_text().splitlines()
    for b, a in zip(before, after):
        for x, y in zip(b.split(","), a.split(",")):
            assert x == "" or x == y
    import pandas as pd

    p = pd.read_csv(probs)
    assert set(p["column"]) == {"A", "B", "C", "X", "Y", "Z"}
    num = p[p["column"] == "Y"]
    np.testing.assert_allclose(num["variance"].to_numpy(), want.moments[4][2], atol=1e-12)


def test_cli_impute_keep_learns_its_network_and_refuses_in_one_sentence(tmp_path, capsys):
    import json

    from bnfk_core.cli.main import main
    from bnfk_core.hybrid import learn_and_impute, load_mixed

    net = true_net()
    _, data = _holes(net, 300, 0.1, 6)
    src, out = tmp_path / "d.csv", tmp_path / "o.csv"
    _csv(data, src)
    assert main(["impute", str(src), "--numbers", "keep", "--structure", "hc-greedy", "-o", str(out)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["learned"]["method"] == "structural EM" and res["model_kind"] == "hybrid"
    want, learned = learn_and_impute(load_mixed(src))
    got = load_mixed(out)
    np.testing.assert_allclose(got.values[:, 3:], want.data.values[:, 3:], atol=1e-9)
    assert {tuple(a) for a in res["learned"]["arcs"]} == {tuple(a) for a in learned.dag.sorted_arcs()}
    for extra, culprit in (
        (["--structure", "tree"], "hc-greedy or hc"),
        (["--score", "k2"], "bic or aic"),
        (["--method", "mode"], "--method"),
        (["--chunksize", "10"], "--chunksize"),
    ):
        assert main(["impute", str(src), "--numbers", "keep", "-o", str(tmp_path / "x.csv"), *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and culprit in err and not (tmp_path / "x.csv").exists()


def test_cli_impute_benchmark_keep_scores_nrmse_and_accuracy(tmp_path, capsys):
    """mean-mode's scores recomputed by hand from the same seeded hiding (numpy choice of observed cells)."""
    import json

    from bnfk_core.cli.main import main
    from bnfk_core.hybrid import load_mixed

    net = true_net()
    src = tmp_path / "d.csv"
    _csv(net.sample(200, seed=8), src)
    argv = ["impute-benchmark", str(src), "--numbers", "keep", "--missing-ratio", "0.25", "--seed", "3"]
    assert main(argv + ["--methods", "mean-mode,knn", "--quiet"]) == 0
    res = json.loads(capsys.readouterr().out)
    s = {r["imputer"]: r for r in res["results"][0]["summary"]}
    full = load_mixed(src)
    obs = np.flatnonzero(~full.missing_mask().reshape(-1))
    pick = np.random.default_rng(3).choice(obs, size=int(round(0.25 * len(obs))), replace=False)
    hidden = np.zeros(full.codes.size, bool)
    hidden[pick] = True
    hidden = hidden.reshape(full.codes.shape)
    z2, hits, n = [], 0, 0
    for i in range(full.n_vars):
        h = hidden[:, i]
        if full.kinds[i] == "numeric":
            fill = full.values[~h, i].mean()
            z2.append(((fill - full.values[h, i]) / full.values[:, i].std()) ** 2)
        else:
            mode = np.bincount(full.codes[~h, i]).argmax()
            hits += int((full.codes[h, i] == mode).sum())
            n += int(h.sum())
    assert s["mean-mode"]["nrmse"] == pytest.approx(float(np.sqrt(np.concatenate(z2).mean())), abs=1e-12)
    assert s["mean-mode"]["accuracy"] == pytest.approx(hits / n, abs=1e-12)
    assert 0 < s["knn"]["nrmse"] < s["mean-mode"]["nrmse"]
    assert main(argv + ["--methods", "bn"]) == 2
    assert "'bn' is not" in capsys.readouterr().err
