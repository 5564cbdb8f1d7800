"""BayesNet: estimators against hand counts, likelihood, sampling, pgmpy bridge, BIF/JSON round trips."""

import io
import warnings

import numpy as np
import pytest

from bnfk_core.data.table import from_codes
from bnfk_core.errors import DataError, ModelError
from bnfk_core.inference import queries as inference
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import read_model, write_model
from bnfk_core.network.model import BayesNet, fit, model_to_bif


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 2
    c = rng.integers(0, 2, n)
    codes = np.stack([a, b, c], axis=1)
    return from_codes(codes, ["a", "b", "c"], [("x", "y", "[0.1, 2.3)"), ("0", "1"), ("p q", "r")])


DAG_AB = DAG(["a", "b", "c"], [("a", "b"), ("c", "b")])


def _counts(d):
    a, b, c = d.codes.T
    N = np.zeros((6, 2))
    for ai, bi, ci in zip(a, b, c):
        N[ai * 2 + ci, bi] += 1  # parents (a, c) in node order, a slowest
    return N


def test_smoothed_is_counts_plus_one():
    d = _data()
    m = fit(DAG_AB, d, method="smoothed")
    N = _counts(d)
    assert np.allclose(m.cpts[1], (N + 1) / (N.sum(1, keepdims=True) + 2))
    assert np.allclose(m.cpts[0][0], (np.bincount(d.codes[:, 0], minlength=3) + 1) / (d.n_rows + 3))


def test_the_default_estimator_is_the_recipes_bdeu():
    from bnfk_core.learning.recipe import DEFAULT_RECIPE

    d = _data()
    assert fit(DAG_AB, d).fit_info["method"] == DEFAULT_RECIPE.params == "bdeu"
    for a, b in zip(fit(DAG_AB, d).cpts, fit(DAG_AB, d, method="bdeu").cpts):
        np.testing.assert_array_equal(a, b)


def test_ml_bdeu_cnml_against_formulas():
    d = _data(1)
    N = _counts(d)
    assert np.allclose(fit(DAG_AB, d, "ml").cpts[1], N / N.sum(1, keepdims=True))
    alpha = 2.0
    bd = fit(DAG_AB, d, "bdeu", pseudo_count=alpha).cpts[1]
    assert np.allclose(bd, (N + alpha / 12) / (N.sum(1, keepdims=True) + alpha / 6))
    e = lambda n: ((n + 1) / n) ** n if n > 0 else 1.0  # noqa: E731  thesis eq. 2.5
    num = np.vectorize(e)(N) * (N + 1)
    assert np.allclose(fit(DAG_AB, d, "cnml").cpts[1], num / num.sum(1, keepdims=True))


def test_unseen_parent_configuration_gets_uniform_row_and_missing_uses_available_cases():
    codes = np.array([[0, 0], [0, 1], [0, -1], [-1, 1]])
    d = from_codes(codes, ["u", "v"], [("a", "b"), ("a", "b")])
    m = fit(DAG(["u", "v"], [("u", "v")]), d, "ml")
    assert np.allclose(m.cpts[1], [[0.5, 0.5], [0.5, 0.5]])
    assert np.allclose(m.cpts[0][0], [1.0, 0.0])  # 3 observed u values, all 'a'


def test_log_likelihood_matches_product_of_cpts_and_marginal_for_missing():
    d = _data(2, 50)
    m = fit(DAG_AB, d)
    ll = m.log_likelihood(d)
    x = d.codes[7]
    ref = np.log(m.cpts[0][0, x[0]] * m.cpts[2][0, x[2]] * m.cpts[1][x[0] * 2 + x[2], x[1]])
    assert np.isclose(ll[7], ref)
    codes = d.codes.copy()
    codes[0, 1] = -1  # b missing -> sum over b = P(a) P(c)
    with pytest.raises(ModelError, match="inference.log_likelihood"):
        m.log_likelihood(d.with_codes(codes))
    ll2 = inference.log_likelihood(m, d.with_codes(codes))
    assert np.isclose(ll2[0], np.log(m.cpts[0][0, codes[0, 0]] * m.cpts[2][0, codes[0, 2]]))


def test_sampling_is_seeded_and_matches_cpts():
    m = fit(DAG_AB, _data())
    s1, s2 = m.sample(20000, seed=5), m.sample(20000, seed=5)
    assert np.array_equal(s1.codes, s2.codes)
    assert not np.array_equal(s1.codes, m.sample(20000, seed=6).codes)
    freq = np.bincount(s1.codes[:, 0], minlength=3) / 20000
    assert np.allclose(freq, m.cpts[0][0], atol=0.02)


@pytest.mark.parametrize("ext", [".bif", ".json"])
def test_round_trip_keeps_structure_states_and_cpts(tmp_path, ext):
    m = fit(DAG_AB, _data())
    path = tmp_path / f"m{ext}"
    write_model(m, path)
    m2 = read_model(path)
    assert m2.dag == m.dag and m2.states == m.states
    for a, b in zip(m.cpts, m2.cpts):
        assert np.allclose(a, b, atol=1e-15)


def test_bif_from_pgmpy_and_to_pgmpy():
    warnings.simplefilter("ignore")
    from pgmpy.readwrite import BIFWriter
    from pgmpy.utils import get_example_model

    net = get_example_model("alarm")
    m = read_model(io.StringIO(str(BIFWriter(net))))
    ref = BayesNet.from_pgmpy(net, nodes=m.variables)
    assert m.dag == ref.dag and m.states == ref.states
    assert max(np.abs(a - b).max() for a, b in zip(m.cpts, ref.cpts)) == 0
    back = BayesNet.from_pgmpy(m.to_pgmpy(), nodes=m.variables)
    assert max(np.abs(a - b).max() for a, b in zip(m.cpts, back.cpts)) == 0
    assert "bnfk_states" not in model_to_bif(m)  # plain tokens need no property


def test_bad_inputs_name_the_culprit(tmp_path):
    d = _data()
    with pytest.raises(ModelError, match="'median'"):
        fit(DAG_AB, d, "median")
    with pytest.raises(DataError, match="'zz'"):
        fit(DAG(["a", "zz"]), d)
    with pytest.raises(ModelError, match="does not exist"):
        read_model(tmp_path / "nope.bif")
    bad = tmp_path / "bad.bif"
    bad.write_text("variable a { type discrete [ 2 ] { x, y }; }\nprobability ( a ) { table 0.5; }\n")
    with pytest.raises(ModelError, match="'a'"):
        read_model(bad)
    with pytest.raises(ModelError, match=r"\.txt"):
        write_model(fit(DAG_AB, d), tmp_path / "m.txt")
    with pytest.raises(ModelError, match="not a bnfk model"):
        read_model(io.StringIO('{"hello": 1}'))


def test_align_reorders_columns_and_states_and_rejects_unknown_values():
    d = _data()
    m = fit(DAG_AB, d)
    shuffled = from_codes(d.codes[:, [2, 0, 1]], ["c", "a", "b"], [d.states[2], d.states[0], d.states[1]])
    assert np.array_equal(m.align(shuffled).codes, d.codes)
    other = from_codes(np.array([[0, 0, 0]]), ["a", "b", "c"], [("w",), ("0",), ("r",)])
    with pytest.raises(DataError, match="'w'"):
        m.align(other)


# ---------------------------------------------------------------------- structure files
def test_read_structure_from_model_files_and_structure_json(tmp_path):
    import json as _json

    from bnfk_core.errors import ModelError, StructureError
    from bnfk_core.network.formats import read_structure
    from bnfk_core.network.model import model_to_bif

    dag = DAG(["a", "b c", "d"], [("a", "b c"), ("d", "b c")])
    model = fit(
        dag,
        from_codes(
            np.array([[0, 1, 0], [1, 0, 1], [1, 1, 0]]), dag.nodes, [("x", "y"), ("p", "q"), ("u", "v")]
        ),
    )
    assert read_structure(model_to_bif(model).encode()) == dag
    assert read_structure(_json.dumps(model.to_json_dict()).encode()) == dag
    assert read_structure(_json.dumps(dag.to_dict()).encode()) == dag
    with pytest.raises(ModelError, match="broken.json"):
        read_structure(b'{"nodes": ["a"], "arcs": [["a", "zz"]]}', "broken.json")
    with pytest.raises(ModelError, match="notes.txt"):
        read_structure(b"hello", "notes.txt")
    # over: exactly the data's variables, in the data's order; otherwise the culprits are named
    assert dag.over(["d", "b c", "a"]).nodes == ("d", "b c", "a")
    with pytest.raises(
        StructureError, match=r"m.bif does not match the data: it lacks e; it has unknown variable\(s\) d"
    ):
        dag.over(["a", "b c", "e"], "m.bif")
