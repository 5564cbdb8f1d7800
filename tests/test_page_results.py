"""AppTest of pages/results.py: the stored results of a run (a quick run written here), switching
experiments and columns, and the empty-folder message."""

import pytest
from apptest_helpers import page_app

from bnfk_core.reproduce import experiments as rep

PAGE = "results.py"


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("results_page")
    s = rep.Settings(quick=True, datasets=("hayes_roth",))
    rep.run_experiment("thesis-segments", out, s)
    rep.run_experiment("speed", out, rep.Settings(quick=True, random_draws=20))
    return out


def _clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_page_shows_tables_figures_and_switches(results_dir, monkeypatch):
    monkeypatch.setenv("BNFK_RESULTS_DIR", str(results_dir))
    at = page_app(PAGE, 120).run()
    _clean(at)
    assert at.radio(key="w_results_experiment").value == "thesis-segments"
    assert len(at.dataframe) == 4  # Tables 6.1-6.4
    df = at.dataframe[0].value
    assert list(df.columns) == [
        "dataset",
        "One arc (ours)",
        "One arc (published)",
        "Best score previously (ours)",
        "Best score previously (published)",
        "Best score previously by (ours)",
        "Best score previously by (published)",
    ]
    assert df["One arc (published)"].iloc[0] == pytest.approx(0.093)
    assert len(at.get("plotly_chart")) == 1
    assert len(at.get("download_button")) >= 9
    at.toggle(key="w_results_full").set_value(True).run()
    _clean(at)
    assert "One arc (diff)" in at.dataframe[0].value.columns
    at.radio(key="w_results_experiment").set_value("speed").run()
    _clean(at)
    assert "seconds (published)" in at.dataframe[0].value.columns
    assert any("Not in this run" in c.value for c in at.caption)


def test_page_without_results_says_how_to_make_them(tmp_path, monkeypatch):
    monkeypatch.setenv("BNFK_RESULTS_DIR", str(tmp_path))
    at = page_app(PAGE, 60).run()
    _clean(at)
    assert any("reproduce all" in i.value for i in at.info)
