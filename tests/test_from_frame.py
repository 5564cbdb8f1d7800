"""Tables from pandas DataFrames: ``CategoricalData.from_frame`` reads a frame as ``load_csv`` reads the same
table written as a file (states, codes, bins, errors), and the public entry points take a DataFrame."""

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bnfk_core import DAG, CategoricalData, fit, fit_lca, gram, load_csv
from bnfk_core.data import as_data, from_frame
from bnfk_core.errors import DataError
from bnfk_core.kernels.features import features

SAMPLES = Path(__file__).resolve().parents[1] / "sample_data"
CATALOG = json.loads((SAMPLES / "catalog.json").read_text())


def same_table(a: CategoricalData, b: CategoricalData):
    assert a.variables == b.variables
    assert a.states == b.states
    np.testing.assert_array_equal(a.codes, b.codes)
    assert a.class_column == b.class_column


@pytest.mark.parametrize("stem", ["carcinoma", "zoo", "breast_cancer", "house_votes_84", "hayes_roth"])
def test_a_sample_read_by_pandas_is_the_same_table(stem):
    entry = CATALOG[stem]
    path = SAMPLES / entry["file"]
    opts = dict(class_column=entry["class_column"], missing_policy=entry["missing_policy"])
    na = entry.get("na_values")
    from_file = load_csv(path, na_values=na, **opts)
    tokens = {"default-list": ["", "NA", "N/A", "?", "nan"]}.get(na, [""])
    # pandas' own parsing (numbers as int/float, missing tokens as NaN) -- the usual notebook read
    frame = pd.read_csv(path, na_values=tokens, keep_default_na=False)
    same_table(from_frame(frame, na_values=na, **opts), from_file)
    # text cells with the missing tokens left in: the same na_values decide
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    same_table(CategoricalData.from_frame(text, na_values=na, **opts), from_file)


def test_missing_cells_none_nan_pd_na_nat():
    df = pd.DataFrame(
        {
            "a": pd.Series(["x", None, "y", "x"], dtype=object),
            "b": [1.0, np.nan, 2.0, 2.0],
            "c": pd.array([1, pd.NA, 3, 1], dtype="Int64"),
            "d": pd.array(["u", "v", pd.NA, "v"], dtype="string"),
            "e": pd.to_datetime(["2020-01-01", None, "2020-01-02", "2020-01-01"]),
            "f": pd.Series([True, False, pd.NA, True], dtype=object),
        }
    )
    d = from_frame(df)
    expect_missing = np.array(
        [[0, 0, 0, 0, 0, 0], [1, 1, 1, 0, 1, 0], [0, 0, 0, 1, 0, 1], [0, 0, 0, 0, 0, 0]], bool
    )
    np.testing.assert_array_equal(d.codes < 0, expect_missing)
    assert d.states[1] == ("1", "2")  # a float column of whole numbers: states as a file writes them
    assert d.states[2] == ("1", "3")
    assert d.states[5] == ("False", "True")
    # the same cells as CSV text: the same table
    csv = "a,b,c,d,e,f\nx,1,1,u,2020-01-01,True\n,,,v,,False\ny,2,3,,2020-01-02,\nx,2,1,v,2020-01-01,True\n"
    same_table(d, load_csv(text=csv))


def test_categoricals_keep_their_category_order():
    cats = ["low", "mid", "high", "unused"]
    df = pd.DataFrame(
        {
            "level": pd.Categorical(["high", "low", None, "mid"], categories=cats, ordered=True),
            "n": pd.Categorical([3, 1, 2, 3], categories=[3, 2, 1]),
            "t": ["b", "a", "b", "a"],
        }
    )
    d = from_frame(df)
    assert d.states == (tuple(cats), ("3", "2", "1"), ("a", "b"))
    np.testing.assert_array_equal(d.codes[:, 0], [2, 0, -1, 1])
    np.testing.assert_array_equal(d.codes[:, 1], [0, 2, 1, 0])
    cat = from_frame(df, missing_policy="category")
    assert cat.states[0] == tuple(cats) + ("?",)
    assert cat.codes[2, 0] == 4


def test_numeric_columns_are_binned_as_in_files():
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=200), 3)
    df = pd.DataFrame({"x": x, "g": rng.choice(["p", "q"], 200)})
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    from_file = load_csv(text=buf.getvalue())
    d = from_frame(df)
    same_table(d, from_file)
    np.testing.assert_allclose(d.numbers["x"], from_file.numbers["x"])
    assert any("Discretized" in n for n in d.notes)


@pytest.mark.parametrize(
    "csv, frame, options",
    [
        ("a,b\n1,2\n", pd.DataFrame({"a": [1], "b": [2]}), {"class_column": "z"}),
        ("a,b\n1,2\n", pd.DataFrame({"a": [1], "b": [2]}), {"drop_columns": ["z"]}),
        ("a,b\n1,2\n", pd.DataFrame({"a": [1], "b": [2]}), {"drop_columns": ["a"]}),
        ("a,b\n1,2\n", pd.DataFrame({"a": [1], "b": [2]}), {"missing_policy": "drop"}),
        ("a,b\n1,2\n", pd.DataFrame({"a": [1], "b": [2]}), {"max_levels": 1}),
        ("a,b\n,2\n", pd.DataFrame({"a": [None], "b": [2]}), {"class_column": "a"}),
        (
            "id,b\n" + "".join(f"k{i},1\n" for i in range(60)),
            pd.DataFrame({"id": [f"k{i}" for i in range(60)], "b": [1] * 60}),
            {},
        ),
        (
            "x,b\n" + "".join(f"{i}.5,1\n" for i in range(60)),
            pd.DataFrame({"x": [i + 0.5 for i in range(60)], "b": [1] * 60}),
            {"discretize_bins": None},
        ),
    ],
)
def test_the_same_one_sentence_errors_as_files(csv, frame, options):
    with pytest.raises(DataError) as from_file:
        load_csv(text=csv, source="t.csv", **options)
    with pytest.raises(DataError) as from_df:
        from_frame(frame, source="t.csv", **options)
    assert str(from_df.value) == str(from_file.value)


def test_frame_only_errors_are_one_sentence():
    for df, words in [
        (pd.DataFrame({"a": [1, 2]}), "only one column"),
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), "more than once"),
        (pd.DataFrame([[1, 2]], columns=["a", " "]), "empty name"),
        (pd.DataFrame({"a": [], "b": []}), "no rows"),
        (pd.DataFrame(), "no columns"),
    ]:
        with pytest.raises(DataError, match=words) as exc:
            from_frame(df)
        assert str(exc.value).count(". ") == 0 and str(exc.value).endswith(".")
    with pytest.raises(DataError, match="needs a pandas DataFrame"):
        from_frame([[1, 2]])


def test_model_alignment_names_the_row():
    train = load_csv(SAMPLES / "carcinoma.csv")
    model = fit(DAG(train.variables, []), train)
    test = pd.DataFrame({v: [1, 2, 1] for v in train.variables})
    test.loc[2, "C"] = 7
    with pytest.raises(DataError, match=r"Value '7' of variable 'C' on row 3 of DataFrame is not a state"):
        from_frame(test, model=model)
    ok = pd.DataFrame({**{v: [2, 1] for v in train.variables}, "extra": ["q", "r"]})
    aligned = as_data(ok, model=model)  # columns the model lacks are ignored, as align does
    assert aligned.variables == model.variables
    np.testing.assert_array_equal(aligned.codes, [[1] * 7, [0] * 7])


def test_entry_points_take_a_dataframe():
    path = SAMPLES / "hayes_roth.csv"
    data = load_csv(path, class_column="class").without_class()
    df = pd.read_csv(path).drop(columns="class")
    dag = DAG(
        data.variables, [(data.variables[0], data.variables[1]), (data.variables[1], data.variables[2])]
    )
    model = fit(dag, data)
    model_df = fit(dag, df)
    for a, b in zip(model.cpts, model_df.cpts):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(gram(model, df), gram(model, data))
    np.testing.assert_array_equal(
        gram(model, df.iloc[:5], df.iloc[5:9]), gram(model, data.subset(range(5)), data.subset(range(5, 9)))
    )
    assert (features(model, df) != features(model, data)).nnz == 0
    np.testing.assert_array_equal(gram(None, df, kind="hamming"), gram(None, data, kind="hamming"))
    lca = fit_lca(df, 2, starts=3, seed=1, engine="numpy")
    ref = fit_lca(data, 2, starts=3, seed=1, engine="numpy")
    assert lca.loglik == ref.loglik
    np.testing.assert_allclose(lca.posterior(df), ref.posterior(data))
    assert np.isclose(model.log_likelihood(df).sum(), model.log_likelihood(data).sum())


def test_analyses_take_a_dataframe():
    from bnfk_core.analyses.cluster import kernel_setup, run_clustering
    from bnfk_core.analyses.impute import impute, impute_table
    from bnfk_core.kernels.similarity import fit_measure

    path = SAMPLES / "house_votes_84.csv"
    data = load_csv(path, na_values="?", class_column="class")
    df = pd.read_csv(path, na_values="?", keep_default_na=False)
    got = run_clustering(df.drop(columns="class"), "hamming", "spectral", n_clusters=2, seed=0)
    ref = run_clustering(data.without_class(), "hamming", "spectral", n_clusters=2, seed=0)
    assert got["labels"] == ref["labels"]
    np.testing.assert_array_equal(
        kernel_setup(df.drop(columns="class"), "hamming").K, kernel_setup(data.without_class(), "hamming").K
    )
    whole = load_csv(path, na_values="?")  # the class a column like the others, as in df
    a, b = impute(df, "mode"), impute(whole, "mode")
    assert a.cells.keys() == b.cells.keys()
    for i in a.cells:
        np.testing.assert_array_equal(a.cells[i][1], b.cells[i][1])
    assert impute_table(df, "mode").frame.equals(impute_table(whole, "mode").frame)
    m = fit_measure("goodall3", df.drop(columns="class"))
    np.testing.assert_allclose(
        m.gram(data.without_class()), fit_measure("goodall3", data.without_class()).gram(data.without_class())
    )
