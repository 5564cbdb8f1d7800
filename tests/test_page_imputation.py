"""AppTest of pages/imputation.py: benchmark tab (small grid) and the 'Impute my data' tab."""

from apptest_helpers import page_app
from streamlit.testing.v1 import AppTest


def _app(**state) -> AppTest:
    return page_app("imputation.py", 120, **state)


def test_benchmark_tab_runs_a_small_grid():
    at = _app(dataset="hayes_roth", class_column="class", missing_policy="missing").run()
    assert not at.exception, at.exception
    at.multiselect(key="imp_test").set_value([0.2, 0.4])
    at.multiselect(key="imp_missing").set_value([0.3])
    at.selectbox(key="imp_structure").set_value("exact")
    at.run()
    at.button(key="imp_run").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    table = at.dataframe[0].value
    assert list(table["method"]) == ["BN", "Mode", "wKNN"] and table["runs"].tolist() == [2, 2, 2]
    assert ((table["accuracy"] >= 0) & (table["accuracy"] <= 1)).all()
    assert len(at.get("plotly_chart")) == 1  # the heatmaps (one subplot per method)
    res = at.session_state["imp_result"][1]
    assert res.matrix("bn").shape == (2, 1) and res.info["variables"] == 4  # class column not imputed


def test_impute_tab_waits_for_its_button():
    """Opening the page learns no network and fills no cell."""
    at = _app(dataset="house_votes_84", class_column="class", missing_policy="missing").run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert not at.metric and not at.get("plotly_chart")
    assert any("392 missing cells" in c.value for c in at.caption)
    assert at.button(key="imp_mine_run").label == "Impute the missing cells"


def _imputed(at):
    at.button(key="imp_mine_run").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    return at


def test_impute_tab_fills_missing_cells():
    at = _imputed(_app(dataset="house_votes_84", class_column="class", missing_policy="missing").run())
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Imputed cells"].replace(",", "")) == 392
    assert len(at.get("plotly_chart")) == 1
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Completed data (CSV)" in labels and "Probabilities (CSV)" in labels
    assert at.radio(key="imp_fill").value == "median"  # what filled cells of discretized columns hold


def test_impute_tab_explains_category_policy():
    at = _app(dataset="house_votes_84", class_column="class", missing_policy="category").run()
    assert not at.exception
    assert any("no missing cells" in i.value for i in at.info)


def test_impute_tab_uses_the_current_network_first_and_learns_by_the_recipe():
    """The current network (the Structure page's) is the first choice; 'learn' is impute --structure tree
    --method bn-em: learn_for_imputation's network under the default recipe."""
    from bnfk_core.analyses.impute.methods import learn_for_imputation
    from bnfk_core.learning.recipe import DEFAULT_RECIPE

    at = _imputed(_app(dataset="house_votes_84", class_column="class", missing_policy="missing").run())
    assert at.radio(key="imp_network").value == "current"
    cap = " ".join(c.value for c in at.caption)
    assert "current network of the Structure page" in cap and "most frequent value" in cap  # + the baseline
    d = _hv_features()
    model = learn_for_imputation(d)[1]
    at.radio(key="imp_network").set_value("learn").run()  # the same session: no second click
    assert not at.exception
    cap = " ".join(c.value for c in at.caption).replace("\\", "")
    assert DEFAULT_RECIPE.describe() in cap and f"{model.dag.n_arcs} arcs" in cap


def test_benchmark_rows_are_a_bounded_setting():
    """imp_rows is in the settings registry, bounded like its widget (from 2 rows); the page clamps a
    session's value to the table's rows."""
    import pytest

    from bnfk_core.serving.settings import REPORT_SETTINGS, check_settings

    assert REPORT_SETTINGS["imp_rows"].default == 500
    with pytest.raises(ValueError):
        REPORT_SETTINGS["imp_rows"].parse(1)
    with pytest.raises(ValueError):
        REPORT_SETTINGS["imp_rows"].parse(10**12)
    assert check_settings({"imp_rows": 10**12})[1]  # refused with a sentence
    at = _app(dataset="hayes_roth", class_column="class", missing_policy="missing", imp_rows=10**6).run()
    assert not at.exception and not at.error, (at.exception, at.error)
    w = at.number_input(key="imp_rows")
    assert w.value == w.max == 160  # hayes_roth has 160 rows


def _hv_features():
    from apptest_helpers import ROOT

    from bnfk_core.data.table import load_csv

    return load_csv(
        ROOT / "sample_data" / "house_votes_84.csv", class_column="class", na_values="default-list"
    ).without_class()


def test_impute_tab_offers_the_cli_default_imputer_and_fills_as_impute_table():
    """The registry's DEFAULT_IMPUTER ('stack', what impute --structure tree runs) is offered, labelled from
    the registry; its filled cells are impute_table's, computed here directly; the downloads are there."""
    import json

    import numpy as np

    from bnfk_core.analyses.impute.methods import DEFAULT_IMPUTER, impute_table
    from bnfk_core.registry import IMPUTERS

    at = _app(dataset="house_votes_84", class_column="class", missing_policy="missing").run()
    radio = at.radio(key="imp_network")
    assert DEFAULT_IMPUTER in radio.options or IMPUTERS[DEFAULT_IMPUTER].label in " ".join(radio.options)
    radio.set_value(DEFAULT_IMPUTER).run()
    at = _imputed(at)
    ref = impute_table(_hv_features(), DEFAULT_IMPUTER, seed=0)
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Imputed cells"].replace(",", "")) == int(ref.imputed.sum()) == 392
    assert any("internal validation" in c.value for c in at.caption)
    trace = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    rows = [int(r) for r in trace["y"]]
    assert rows == ref.filled_rows().tolist()  # every row with a filled cell is shown (fewer than 300)
    names = list(ref.data.variables)
    cols = [names.index(c) for c in trace["x"]]
    expect = ref.data.frame.iloc[rows][names].to_numpy(dtype=object)[:, cols]
    assert [list(map(str, r)) for r in trace["text"]] == [list(map(str, r)) for r in expect]
    filled = ref.imputed[np.ix_(rows, cols)]
    assert filled.sum() == 392 and ref.imputation.method == DEFAULT_IMPUTER
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Completed data (CSV)" in labels and "Probabilities (CSV)" in labels


def test_benchmark_widgets_take_a_preset_value_without_the_session_state_warning(monkeypatch, caplog):
    """A link or session file presets imp_rows (and the other benchmark widgets): the page shows that value
    and Streamlit logs no "created with a default value but also had its value set via the Session State
    API"."""
    import logging

    from streamlit.elements.lib import policies

    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    with caplog.at_level(logging.WARNING):
        at = _app(dataset="hayes_roth", class_column="class", imp_rows=40, imp_repeats=2, imp_seed=3).run()
    assert not at.exception, at.exception
    assert at.number_input(key="imp_rows").value == 40 and at.number_input(key="imp_repeats").value == 2
    assert not [r for r in caplog.records if "Session State API" in r.getMessage()]
