"""AppTest of the Imputation page on a large file (read in chunks): the completed file of ALL rows, imputed in
blocks with the app's model, is the file ``impute_file`` writes and the in-memory path writes, byte for byte;
it is kept (a re-run does not impute again); a bad server path to write it to is one error sentence naming
it."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import assert_clean, page_app
from streamlit.runtime.media_file_manager import MediaFileManager

from bnfk_core.analyses.impute import stream as impute_stream
from bnfk_core.analyses.impute.completion import complete_file, impute_with_model
from bnfk_core.data.table import load_csv, read_table

N_ROWS = 30_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    """30,000 rows: an identifier (dropped on loading), a class, dependent features, a numeric column
    (discretized, its filled cells get the bin's median) and missing cells in every feature."""
    rng = np.random.default_rng(1)
    cls = rng.integers(0, 3, N_ROWS)
    a = (cls + rng.integers(0, 2, N_ROWS)) % 3
    b = (a + rng.integers(0, 2, N_ROWS)) % 4
    num = np.round(a * 10 + rng.normal(0, 3, N_ROWS), 1)
    z = rng.integers(0, 3, N_ROWS)
    lines = ["id,class,a,b,num,z"]
    gone = rng.random((N_ROWS, 4)) < 0.03
    for i in range(N_ROWS):
        cells = [f"a{a[i]}", f"b{b[i]}", f"{num[i]}", f"z{z[i]}"]
        cells = ["" if gone[i, j] else c for j, c in enumerate(cells)]
        lines.append(",".join([f"r{i}", f"c{cls[i]}", *cells]))
    path = tmp_path_factory.mktemp("bigimp") / "big_table.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module", autouse=True)
def output_dir(tmp_path_factory):
    """The completed files go to a temporary folder of the tests (not the server's $TMPDIR/bnfk_imputed)."""
    from bnfk_ui import bigimpute

    old, bigimpute.OUTPUT_DIR = bigimpute.OUTPUT_DIR, tmp_path_factory.mktemp("imputed")
    bigimpute.clear()
    yield bigimpute.OUTPUT_DIR
    bigimpute.clear()
    bigimpute.OUTPUT_DIR = old


@pytest.fixture(autouse=True)
def folders(big_csv, tmp_path, monkeypatch):
    """The operator turned server files on: the big file's folder is read, a test folder written."""
    monkeypatch.setenv("BNFK_DATA_DIR", os.path.dirname(big_csv))
    monkeypatch.setenv("BNFK_OUTPUT_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def served(monkeypatch):
    """The bytes each download button serves, by file name (its deferred callable, called as a click
    would)."""
    got = {}
    real = MediaFileManager.add_deferred

    def spy(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        got[file_name] = data_callable
        return real(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    return got


def _model_of(at):
    from bnfk_core.learning.recipe import DEFAULT_RECIPE
    from bnfk_ui.state import caches as state

    ss = at.session_state
    recipe = DEFAULT_RECIPE.replace(params=ss["param_method"] or DEFAULT_RECIPE.params)  # the app's recipe
    return state._fit(
        None,
        ss["structure"]["fingerprint"],
        json.dumps(ss["structure"]["dag"], sort_keys=True),
        tuple(sorted(recipe.to_dict().items())),
    )


def _loaded(big_csv):
    """The Data page loading the file through the server-path input, then the Imputation page with its
    choices."""
    at = page_app("data.py", 180).run()
    at.text_input(key="w_server_path_input").input(big_csv)
    at.button(key="server_path_load").click().run()
    assert not at.exception and [e.value for e in at.error if "'id'" not in e.value] == []
    assert at.session_state["dataset"] == "path" and at.session_state["drop_columns"] == ["id"]
    keep = ("dataset", "server_path", "class_column", "missing_policy", "bins", "drop_columns", "structure")
    page = page_app("imputation.py", 180, **{k: at.session_state[k] for k in keep}).run()
    assert_clean(page)
    return _asked(page)


def _asked(page):
    """'Impute the missing cells' clicked (opening the page imputes nothing)."""
    assert not page.metric
    page.button(key="imp_mine_run").click().run()
    assert_clean(page)
    return page


def test_the_completed_file_of_all_rows_is_the_in_memory_file(
    big_csv, served, tmp_path, monkeypatch, output_dir
):
    from bnfk_ui import bigimpute

    bigimpute.clear()
    calls = []
    real = impute_stream.impute_file
    monkeypatch.setattr(bigimpute, "impute_file", lambda *a, **k: (calls.append((a, k)), real(*a, **k))[1])
    at = _loaded(big_csv)
    assert not [b for b in at.get("download_button") if b.key == "dl_imp_big"]  # not before the click
    at.button(key="imp_big_run").click().run()
    assert_clean(at)
    model = _model_of(at)  # fitted on all rows (its fingerprint is that of all rows)
    assert len(calls) == 1 and calls[0][0][0].key() == model.key() and calls[0][1]["progress"] is not None
    got = served["big_table_imputed.csv"]()
    got_p = served["big_table_imputed_probabilities.csv"]()
    assert sorted(p.read_bytes() for p in output_dir.iterdir()) == sorted(
        [got, got_p]
    )  # the app's temp files
    # impute_file run directly with the options the file was read with
    out, probs = tmp_path / "direct.csv", tmp_path / "direct_p.csv"
    direct = real(
        model, big_csv, str(out), probabilities=str(probs), class_column="class", drop_columns=["id"]
    )
    assert got == out.read_bytes() and got_p == probs.read_bytes()
    # the in-memory path with the same model
    data = load_csv(big_csv, model=model, class_column="class", drop_columns=["id"])
    imputed = impute_with_model(model, data)
    done = complete_file(imputed, read_table(big_csv), fill_numeric="median")
    assert got == done.to_bytes() and got_p == done.probabilities_csv()
    # the summary is that of all rows, not of the sample
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rows of the file"] == f"{N_ROWS:,}"
    n_missing = int((data.without_class().codes < 0).sum())
    assert (
        n_missing > 3000
        and metrics["Imputed cells (all rows)"] == f"{direct['imputed_cells']:,}" == f"{n_missing:,}"
    )
    assert metrics["Mean probability (all rows)"] == f"{direct['mean_probability']:.3f}"
    table = next(d.value for d in at.dataframe if "imputed cells" in d.value.columns)
    assert dict(zip(table["column"], table["imputed cells"])) == direct["imputed_per_column"]
    assert set(direct["imputed_per_column"]) == {"a", "b", "num", "z"}
    # kept: a re-run (and a fresh page run of the same session) shows it without imputing again
    at.run()
    assert_clean(at)
    assert len(calls) == 1 and [b for b in at.get("download_button") if b.key == "dl_imp_big"]
    # another fill rule is another file
    at.radio(key="imp_fill").set_value("label").run()
    assert_clean(at)
    assert not [b for b in at.get("download_button") if b.key == "dl_imp_big"] and len(calls) == 1


def _run_big(big_csv):
    """The Imputation page with the completed file (imputed now, or already held by the server)."""
    at = _loaded(big_csv)
    if [b for b in at.button if b.key == "imp_big_run"]:
        at.button(key="imp_big_run").click().run()
        assert_clean(at)
    return at


@pytest.mark.parametrize(
    "kind", ["directory", "no folder", "outside", "etc", "the input", "exists", "replace", "good"]
)
def test_writing_the_completed_file_to_the_output_folder(big_csv, served, tmp_path, kind, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "old.csv").write_text("keep me\n")
    target = {
        "directory": "sub",
        "no folder": "nope/out.csv",
        "outside": os.path.join(os.path.dirname(big_csv), "x.csv"),
        "etc": "/etc/passwd",
        "the input": os.path.basename(big_csv),
        "exists": "old.csv",
        "replace": "old.csv",
        "good": "out.csv",
    }[kind]
    if kind == "the input":  # an operator who made one folder both the data and output folder
        monkeypatch.setenv("BNFK_OUTPUT_DIR", os.path.dirname(big_csv))
    before = Path(big_csv).read_bytes()
    at = _run_big(big_csv)
    at.text_input(key="imp_big_target").input(target)
    if kind in ("replace", "the input"):
        at.checkbox(key="imp_big_replace").check()
    at.button(key="imp_big_save").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    if kind in ("good", "replace"):
        assert not errors and any(f"'{target}' in the output folder" in s.value for s in at.success)
        assert (tmp_path / target).read_bytes() == served["big_table_imputed.csv"]()
        return
    assert len(errors) == 1, errors
    msg = errors[0]
    assert msg.count(". ") == 0 and msg.endswith("."), msg  # one sentence
    if kind in ("outside", "etc"):
        assert (
            msg == "That path is not in the server's output folder; give a file name inside it."
        )  # names nothing
    else:
        assert target in msg, msg
    assert Path(big_csv).read_bytes() == before and not os.path.exists(tmp_path / "nope")
    assert (tmp_path / "old.csv").read_text() == "keep me\n" and not os.path.exists(
        os.path.join(os.path.dirname(big_csv), "x.csv")
    )


def test_no_write_panel_unless_the_operator_names_an_output_folder(big_csv, served, monkeypatch):
    monkeypatch.delenv("BNFK_OUTPUT_DIR")
    at = _run_big(big_csv)
    assert not [t for t in at.text_input if t.key == "imp_big_target"]
    assert not [b for b in at.button if b.key == "imp_big_save"]


def test_a_big_upload_is_completed_too_but_not_written_on_the_server(big_csv, served):
    content = Path(big_csv).read_bytes()
    at = page_app(
        "imputation.py",
        180,
        dataset="upload",
        upload=("big_table.csv", content),
        class_column="class",
        missing_policy="missing",
        drop_columns=["id"],
        stream_rows=10_000,
    ).run()
    assert_clean(at)
    assert any("seeded sample of 2,000 rows" in i.value for i in at.info)
    _asked(at).button(key="imp_big_run").click().run()
    assert_clean(at)
    assert not [t for t in at.text_input if t.key == "imp_big_target"]
    data = load_csv(big_csv, model=_model_of(at), class_column="class", drop_columns=["id"])
    done = complete_file(impute_with_model(_model_of(at), data), read_table(big_csv))
    assert served["big_table_imputed.csv"]() == done.to_bytes()


def test_a_parquet_file_says_it_is_not_completed(big_csv, tmp_path, monkeypatch):
    import pandas as pd

    monkeypatch.setenv("BNFK_DATA_DIR", str(tmp_path))
    pq = tmp_path / "big_table.parquet"
    pd.read_csv(big_csv, dtype=str, keep_default_na=False).drop(columns="id").to_parquet(pq)
    at = page_app(
        "imputation.py",
        180,
        dataset="path",
        server_path=str(pq),
        class_column="class",
        missing_policy="missing",
    ).run()
    assert_clean(at)
    _asked(at)
    assert not [b for b in at.button if b.key == "imp_big_run"]
    assert any(
        "big_table.parquet is a Parquet file" in i.value and "export it as CSV" in i.value for i in at.info
    )
