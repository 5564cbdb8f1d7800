"""AppTest of large files in the app: a file in the operator's data folder (BNFK_DATA_DIR, set here; and an
upload above the streaming threshold) is read in chunks and fitted on all rows; the pages that work on rows
use a seeded sample and say how large it is; a bad name is one error sentence that names it."""

import json
import os

import numpy as np
import pytest
from apptest_helpers import ROOT, assert_clean, page_app
from streamlit.testing.v1 import AppTest

from bnfk_core.data.stream import read_counts
from bnfk_core.data.table import load_csv
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit

N_ROWS = 30_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    """30,000 rows: a class and five features that depend on it and on each other, some cells missing."""
    rng = np.random.default_rng(0)
    cls = rng.integers(0, 4, N_ROWS)
    a = (cls + rng.integers(0, 2, N_ROWS)) % 4
    b = (a + rng.integers(0, 2, N_ROWS)) % 3
    rest = rng.integers(0, 3, (N_ROWS, 3))
    cells = np.column_stack([cls, a, b, rest]).astype(object)
    cells = np.array([[f"v{v}" for v in row] for row in cells], dtype=object)
    cells[rng.random(cells.shape) < 0.02] = ""
    cells[:, 0] = [f"c{c}" for c in cls]
    path = tmp_path_factory.mktemp("big") / "big_table.csv"
    path.write_text("class,a,b,x,y,z\n" + "\n".join(",".join(r) for r in cells) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(autouse=True)
def data_dir(big_csv, monkeypatch):
    """The operator turned server files on: the folder of the big file is the data folder."""
    monkeypatch.setenv("BNFK_DATA_DIR", os.path.dirname(big_csv))
    return os.path.dirname(big_csv)


def _sentence(n=2000, seed=0):
    return f"Fitted on all {N_ROWS:,} rows; this view uses a seeded sample of {n:,} rows (seed {seed})."


def _model_of(at):
    """The BayesNet the app's pages use (bnfk_ui.state's server-wide model cache, as the pages ask for it)."""
    from bnfk_core.learning.recipe import DEFAULT_RECIPE
    from bnfk_ui.state import caches as state

    ss = at.session_state
    dag_key = json.dumps(ss["structure"]["dag"], sort_keys=True)
    recipe = DEFAULT_RECIPE.replace(params=ss["param_method"] or DEFAULT_RECIPE.params)  # the app's recipe
    return state._fit(None, ss["structure"]["fingerprint"], dag_key, tuple(sorted(recipe.to_dict().items())))


def test_a_file_on_the_server_is_fitted_on_all_rows_and_the_page_states_the_sample(big_csv):
    at = page_app("data.py", 120).run()
    assert_clean(at)
    at.text_input(key="w_server_path_input").input(big_csv)
    at.button(key="server_path_load").click().run()
    assert_clean(at)
    assert at.session_state["dataset"] == "path" and at.session_state["server_path"] == os.path.realpath(
        big_csv
    )
    assert _sentence() in [i.value for i in at.info]
    assert any("Loaded big_table.csv: 30,000 rows" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    full = load_csv(big_csv, class_column="class")
    assert metrics["Rows"] == "30,000"
    assert metrics["Missing cells"] == f"{int((full.codes < 0).sum()):,}"
    # the preview holds the sample
    assert len(at.dataframe[1].value) == 500
    assert "of the seeded sample of the 30,000" in " ".join(c.value for c in at.caption)
    # the model (learned structure and fitted CPTs) is that of all rows, not of the sample
    ss = at.session_state
    assert (
        ss["structure"]["fingerprint"]
        == read_counts(big_csv, class_column="class").without_class().fingerprint()
    )
    dag = DAG.from_dict(ss["structure"]["dag"])
    assert dag.n_arcs == len(dag.nodes) - 1  # the Chow–Liu tree, learned on all rows
    page = page_app(
        "structure.py",
        120,
        **{k: ss[k] for k in ("dataset", "server_path", "class_column", "missing_policy", "structure")},
    ).run()  # uses the model
    assert_clean(page)
    complete = int(full.without_class().complete_rows().sum())
    assert f"Log scores on the {complete:,} complete rows" in " ".join(c.value for c in page.caption)
    assert "live kernel is fitted on a seeded sample (seed 0) of its 30,000 rows" in " ".join(
        c.value for c in page.caption
    )
    m = _model_of(page)
    from bnfk_core.learning.recipe import DEFAULT_RECIPE, fit_recipe  # the recipe's EM over the missing cells

    want = fit_recipe(
        dag, full.without_class(), DEFAULT_RECIPE.replace(params=ss["param_method"] or DEFAULT_RECIPE.params)
    )
    for got, exp in zip(m.cpts, want.cpts):
        np.testing.assert_allclose(got, exp, rtol=0, atol=1e-12)
    sample = full.subset(np.arange(2000))  # a fit on 2,000 rows is visibly different
    assert max(np.abs(g - s).max() for g, s in zip(m.cpts, fit(dag, sample.without_class()).cpts)) > 1e-3


@pytest.mark.parametrize(
    "page, extra", [("kernel.py", {}), ("clustering.py", {"clu_rows": 300, "clu_restarts": 3})]
)
def test_row_pages_use_the_seeded_sample_and_say_so(big_csv, page, extra):
    at = page_app(
        page,
        180,
        dataset="path",
        server_path=big_csv,
        class_column="class",
        missing_policy="missing",
        view_rows=1500,
        view_seed=7,
        **extra,
    ).run()
    assert_clean(at)
    assert _sentence(1500, 7) in [i.value for i in at.info]
    if page == "clustering.py":
        assert int(at.dataframe[0].value.values.sum()) == 300  # 300 of the 1,500 sampled rows
    else:
        assert len(at.get("plotly_chart")) >= 1


def test_home_shows_all_rows_and_no_sample_note(big_csv):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for k, v in {
        "dataset": "path",
        "server_path": big_csv,
        "class_column": "class",
        "missing_policy": "missing",
    }.items():
        at.session_state[k] = v
    at.run()
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["Rows × variables"] == "30,000 × 6"
    assert not any("seeded sample" in i.value for i in at.info)  # Home does not work on rows


@pytest.mark.parametrize("kind", ["missing", "directory", "not csv", "empty"])
def test_a_bad_path_is_one_error_naming_it(big_csv, tmp_path, kind, monkeypatch):
    monkeypatch.setenv("BNFK_DATA_DIR", str(tmp_path))
    (tmp_path / "folder").mkdir()
    bad = {"missing": "nope.csv", "directory": "folder", "not csv": "book.xlsx", "empty": "   "}[kind]
    if kind == "not csv":
        (tmp_path / "book.xlsx").write_bytes(b"PK\x03\x04" + bytes(range(256)) * 8)
    at = page_app("data.py", 120).run()
    at.text_input(key="w_server_path_input").input(bad)
    at.button(key="server_path_load").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    msg = errors[0]
    assert msg.count(". ") == 0 and msg.endswith("."), msg  # one sentence
    assert (bad in msg) if kind != "empty" else ("No file name given" in msg)
    assert at.session_state["dataset"] == "house_votes_84"  # the current data stay


def test_server_files_are_off_unless_the_operator_turns_them_on(big_csv, monkeypatch):
    monkeypatch.delenv("BNFK_DATA_DIR")
    at = page_app("data.py", 120).run()
    assert_clean(at)
    assert not [t for t in at.text_input if t.key == "w_server_path_input"]  # the input does not exist
    at = page_app("data.py", 120, dataset="path", server_path=big_csv).run()  # nor does a path set behind it
    assert not at.exception
    assert [e.value for e in at.error] == [
        "This server does not read files from its disk; upload the file instead."
    ]


def test_an_upload_above_the_threshold_is_streamed(big_csv):
    with open(big_csv, "rb") as fh:
        content = fh.read()
    state = {
        "dataset": "upload",
        "upload": ("big_table.csv", content),
        "class_column": "class",
        "missing_policy": "missing",
    }
    small = page_app("data.py", 120, stream_rows=100_000, **state).run()  # under the threshold: in memory
    assert_clean(small)
    assert not any("seeded sample" in i.value for i in small.info)
    assert {m.label: m.value for m in small.metric}["Rows"] == "30,000"
    big = page_app("data.py", 120, stream_rows=10_000, **state).run()  # above it: read in chunks
    assert_clean(big)
    assert _sentence() in [i.value for i in big.info]
    assert any("Read in chunks: 30,000 rows" in i.value for i in big.info)
    assert (
        big.session_state["structure"]["fingerprint"]
        == read_counts(big_csv, class_column="class").without_class().fingerprint()
    )
