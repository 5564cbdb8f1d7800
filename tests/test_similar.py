"""Similar cases for a partial case (:mod:`bnfk_core.analyses.similar`): the similarities and each variable's
contribution against s(x)^T I^-1 s(y) with the partial case's expected score enumerated over the joint
(tests/helpers_bruteforce.py), against the existing Gram matrix of the table with the partial row appended,
the ranking and its ties, the refusals, and the ``similar`` subcommand."""

from __future__ import annotations

import json
from pathlib import Path

import helpers_bruteforce as bf
import numpy as np
import pytest

from bnfk_core.analyses.similar import ranking, similar, similar_frame
from bnfk_core.cli.main import main
from bnfk_core.data.table import from_codes
from bnfk_core.errors import DataError, KernelError, ModelError
from bnfk_core.kernels.fisher import network_gram
from bnfk_core.learning.recipe import learn_recipe
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import read_model, write_model
from bnfk_core.network.model import BayesNet

ROOT = Path(__file__).resolve().parents[1]
HAYES = str(ROOT / "sample_data" / "hayes_roth.csv")


def _network(seed: int) -> BayesNet:
    """A random network on four variables with two or three states (strictly positive CPTs)."""
    dag = bf.random_dag(4, seed, max_parents=2, p_arc=0.7)
    cards = np.random.default_rng(seed).integers(2, 4, size=4)
    return bf.random_model(dag, cards, seed=seed)


def _table(model, n: int, seed: int, missing: float = 0.15):
    """``n`` sampled rows with a share of their cells hidden (missing, -1)."""
    codes = model.sample(n, seed).codes.copy()
    codes[np.random.default_rng(seed + 1).random(codes.shape) < missing] = -1
    return from_codes(codes, model.variables, model.states)


def _evidence(model, seed: int, n_observed: int) -> dict:
    rng = np.random.default_rng(seed)
    picked = rng.choice(model.n_vars, size=n_observed, replace=False)
    return {model.variables[i]: model.states[i][rng.integers(len(model.states[i]))] for i in picked}


def _partial_row(model, evidence) -> np.ndarray:
    row = np.full(model.n_vars, -1, np.int64)
    for v, s in evidence.items():
        i = model.variables.index(v)
        row[i] = model.states[i].index(s)
    return row


def _by_row(res):
    """(similarity, contributions) in row order (the answer with k = N is a permutation of the rows)."""
    order = np.argsort(res.rows)
    return res.similarity[order], res.contributions[order]


@pytest.mark.parametrize("seed, n_observed", [(0, 1), (1, 2), (2, 1), (3, 3)])
def test_similarity_and_contributions_equal_the_enumerated_fisher_kernel(seed, n_observed):
    model = _network(seed)
    data = _table(model, 25, seed)
    evidence = _evidence(model, seed + 7, n_observed)
    res = similar(model, data, evidence, k=data.n_rows)
    sim, contrib = _by_row(res)
    brute = bf.BruteFisher(model)
    x = _partial_row(model, evidence)
    want = np.array([brute.kernel(x, y) for y in data.codes])
    want_c = np.array([brute.contributions(x, y) for y in data.codes])
    np.testing.assert_allclose(sim, want, rtol=0, atol=1e-9 * max(1.0, np.abs(want).max()))
    np.testing.assert_allclose(contrib, want_c, rtol=0, atol=1e-9 * max(1.0, np.abs(want_c).max()))
    np.testing.assert_allclose(contrib.sum(axis=1), sim, rtol=0, atol=1e-9 * max(1.0, np.abs(want).max()))
    assert res.self_similarity == pytest.approx(brute.kernel(x, x), rel=1e-9)
    observed = {i: int(c) for i, c in enumerate(x) if c >= 0}
    assert res.log_evidence == pytest.approx(np.log(bf.marginal_prob(model, observed)), rel=1e-12)


@pytest.mark.parametrize("network", ["random", "asia"])
def test_contribution_has_the_closed_form_of_the_family_posterior(network):
    """For a complete row y: C_i = P(pi_i = j | e) / P(pi_i = j) (P(X_i = y_i | pi_i = j, e) / theta - 1), j =
    pi_i(y), every probability summed over the enumerated joint (asia: a textbook network whose 'either' is
    deterministic, CPT entries of zero)."""
    if network == "asia":
        from bnfk_core.network.textbook import textbook_network

        model = textbook_network("asia")
        evidence = {"smoke": "yes", "dysp": "yes"}
    else:
        model = _network(4)
        evidence = _evidence(model, 11, 2)
    data = from_codes(model.sample(12, 5).codes, model.variables, model.states)
    res = similar(model, data, evidence, k=12)
    D, P = bf.joint_table(model)
    x = _partial_row(model, evidence)
    post = P * np.all((x < 0) | (D == x), axis=1)
    post /= post.sum()
    for r, c in zip(res.rows, res.contributions):
        y = data.codes[r]
        for i in range(model.n_vars):
            j = bf.pconf(model, i, y)
            cfg = np.array([bf.pconf(model, i, d) for d in D]) == j
            p_j, p_je = P[cfg].sum(), post[cfg].sum()
            p_xje = post[cfg & (D[:, i] == y[i])].sum()
            want = p_je / p_j * (p_xje / p_je / model.cpts[i][j, y[i]] - 1.0) if p_je > 0 else 0.0
            assert c[i] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("normalize", [False, True])
def test_similarity_equals_the_gram_matrix_with_the_partial_row_appended(normalize):
    model = _network(5)
    data = _table(model, 40, 5, missing=0.25)
    evidence = _evidence(model, 3, 2)
    res = similar(model, data, evidence, k=40, normalize=normalize)
    both = np.vstack([data.codes, _partial_row(model, evidence)[None, :]])
    K = network_gram(model, both, normalize=normalize)
    sim, contrib = _by_row(res)
    np.testing.assert_allclose(sim, K[-1, :-1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(contrib.sum(axis=1), sim, rtol=0, atol=1e-9)
    assert res.normalize is normalize
    if normalize:
        assert np.all(np.abs(sim) <= 1 + 1e-12)


def test_ranking_is_by_similarity_then_row_and_k_takes_its_head():
    model = _network(6)
    base = model.sample(10, 6).codes
    codes = np.vstack([base, base[:4], base[2:3]])  # duplicated rows: equal similarities
    data = from_codes(codes, model.variables, model.states)
    evidence = _evidence(model, 2, 1)
    full = similar(model, data, evidence, k=len(codes))
    assert sorted(full.rows) == list(range(len(codes)))
    assert np.all(np.diff(full.similarity) <= 1e-12)
    for (a, sa), (b, sb) in zip(zip(full.rows, full.similarity), zip(full.rows[1:], full.similarity[1:])):
        if sa == sb:  # equal similarities: the lower row first
            assert a < b
    twins = [r for r in full.rows if (codes[r] == codes[2]).all()]
    assert twins == sorted(twins) and len(twins) == (codes == codes[2]).all(axis=1).sum() >= 3
    head = similar(model, data, evidence, k=5)
    assert list(head.rows) == list(full.rows[:5])
    np.testing.assert_array_equal(head.similarity, full.similarity[:5])
    assert similar(model, data, evidence, k=5, chunk_rows=3).rows.tolist() == head.rows.tolist()
    many = similar(model, data, evidence, k=100)
    assert len(many.rows) == len(codes) and "fewer than k" in many.notes[0]
    assert ranking(np.array([1.0, 3.0, 3.0 + 1e-15, 2.0])).tolist() == [1, 2, 3, 0]


def test_bad_evidence_and_k_are_one_sentence_naming_them():
    model = _network(0)
    data = _table(model, 5, 0)
    v = model.variables[0]
    with pytest.raises(ModelError, match="'nope'"):
        similar(model, data, {"nope": "s0"})
    with pytest.raises(ModelError, match=f"{v}=zz"):
        similar(model, data, {v: "zz"})
    with pytest.raises(ModelError, match="at least one variable"):
        similar(model, data, {})
    with pytest.raises(KernelError, match="k"):
        similar(model, data, {v: "s0"}, k=0)
    with pytest.raises(KernelError, match="memory limit"):
        similar(model, data, {v: "s0"}, k=5, max_bytes=100)
    with pytest.raises(DataError, match="no rows"):
        similar(model, from_codes(np.zeros((0, 4), np.int64), model.variables, model.states), {v: "s0"})
    # v = "u or w" without noise: v = yes with u = w = no is impossible
    dag = DAG(["u", "v", "w"], [("u", "v"), ("w", "v")])
    coin = np.array([[0.5, 0.5]])
    v_is_or = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    vnet = BayesNet(dag, (("no", "yes"),) * 3, (coin, v_is_or, coin))
    vdata = from_codes(vnet.sample(20, 1).codes, vnet.variables, vnet.states)
    with pytest.raises(ModelError, match="u=no, w=no, v=yes has probability zero"):
        similar(vnet, vdata, {"u": "no", "w": "no", "v": "yes"})
    assert len(similar(vnet, vdata, {"u": "no", "w": "no"}, k=3).rows) == 3


def test_without_a_model_the_default_network_is_learned_and_the_frame_shows_the_answer():
    model = _network(1)
    data = _table(model, 60, 1, missing=0.1)
    evidence = _evidence(model, 4, 1)
    res = similar(None, data, evidence, k=4)
    want = similar(learn_recipe(data).model, data, evidence, k=4)
    assert res.rows.tolist() == want.rows.tolist()
    np.testing.assert_allclose(res.similarity, want.similarity, rtol=0, atol=1e-12)
    frame = similar_frame(res)
    assert frame["row"].tolist() == res.rows.tolist() and frame["rank"].tolist() == [1, 2, 3, 4]
    cols = [f"contribution: {v}" for v in model.variables]
    np.testing.assert_allclose(frame[cols].sum(axis=1), frame["similarity"], atol=1e-9)
    for i, v in enumerate(model.variables):
        shown = [model.states[i][c] if c >= 0 else "(missing)" for c in data.codes[res.rows, i]]
        assert frame[v].fillna("(missing)").tolist() == shown


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def hayes(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("model") / "hayes.json"
    assert main(["learn", HAYES, "--class-column", "class", "--quiet", "-o", str(path)]) == 0
    return str(path)


def test_cli_similar_equals_the_library(hayes, capsys, tmp_path):
    from bnfk_core.data.table import load_csv

    argv = ["similar", HAYES, "--class-column", "class", "--model", hayes, "--evidence", "age=1,hobby=2"]
    code, out, err = _run(capsys, *argv, "--k", "4", "--normalize")
    assert code == 0, err
    got = json.loads(out)
    model = read_model(hayes)
    data = load_csv(HAYES, class_column="class", model=model)
    want = similar(model, data, {"age": "1", "hobby": "2"}, 4, normalize=True)
    assert got["rows"] == want.rows.tolist() and got["similarity"] == want.similarity.tolist()
    assert [list(c.values()) for c in got["contributions"]] == want.contributions.tolist()
    assert got["model"] == hayes and "labels" not in got  # the class column is no node: dropped, as noted
    assert any("'class'" in note for note in got["notes"])
    # without --model the default network is learned on the features and the rows keep their class
    code, out, err = _run(
        capsys, "similar", HAYES, "--class-column", "class", "--evidence", "age=1", "--quiet"
    )
    assert code == 0, err
    got = json.loads(out)
    full = load_csv(HAYES, class_column="class")
    want = similar(learn_recipe(full).model, full, {"age": "1"}, 10)
    assert got["rows"] == want.rows.tolist() and got["class_column"] == "class"
    cls = full.variables.index("class")
    assert got["labels"] == [full.states[cls][c] for c in full.codes[want.rows, cls]]
    # a textbook network by name, and the errors: one line, exit 2
    asia = tmp_path / "asia.csv"
    assert main(["sample", "asia", "-n", "200", "--seed", "3", "-o", str(asia)]) == 0
    capsys.readouterr()
    code, out, err = _run(capsys, "similar", asia, "--model", "asia", "--evidence", "smoke=yes", "--k", "2")
    assert code == 0, err
    assert len(json.loads(out)["rows"]) == 2
    for evidence, culprit in [("smoke=maybe", "smoke=maybe"), ("smok=yes", "'smok'"), ("smoke", "smoke")]:
        code, out, err = _run(capsys, "similar", asia, "--model", "asia", "--evidence", evidence)
        assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1, err
        assert culprit in err, err


def test_cli_similar_learns_the_default_network_without_a_model(tmp_path, capsys):
    dag = DAG(["u", "v", "w"], [("u", "v"), ("w", "v")])
    coin = np.array([[0.5, 0.5]])
    noisy_or = np.array([[0.9, 0.1], [0.2, 0.8], [0.2, 0.8], [0.05, 0.95]])
    net = BayesNet(dag, (("no", "yes"),) * 3, (coin, noisy_or, coin))
    write_model(net, tmp_path / "v.bif")
    rows = net.sample(80, 2)
    path = tmp_path / "v.csv"
    path.write_text(
        "u,v,w\n" + "".join(",".join(net.states[i][c] for i, c in enumerate(r)) + "\n" for r in rows.codes),
        encoding="utf-8",
    )
    code, out, err = _run(capsys, "similar", path, "--evidence", "v=yes", "--k", "3", "--quiet")
    assert code == 0, err
    got = json.loads(out)
    from bnfk_core.data.table import load_csv

    data = load_csv(path)
    want = similar(learn_recipe(data).model, data, {"v": "yes"}, 3)
    assert got["rows"] == want.rows.tolist() and got["similarity"] == want.similarity.tolist()
    assert "learned" in got and got["learned"]["recipe"]["structure"]
