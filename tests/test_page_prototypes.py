"""AppTest of pages/prototypes.py: default run, criterion and structure switches, the curve over k."""

from apptest_helpers import assert_clean, page_app
from streamlit.testing.v1 import AppTest

_clean = assert_clean


def _app(**state) -> AppTest:
    return page_app("prototypes.py", 120, **state)


def _run(**state) -> AppTest:
    """Open the page (nothing heavy runs), then click Find prototypes."""
    at = _app(**state).run()
    _clean(at)
    assert not at.dataframe and not at.get("plotly_chart")  # opening the page computes nothing
    at.button(key="proto_run").click().run()
    return at


def test_default_page_selects_k_rows_and_draws_everything():
    at = _run()
    _clean(at)
    table = at.dataframe[0].value
    assert len(table) == 20 and table["row"].is_unique
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["MMD of the subset"]) > 0 and "Held-out NLL" in metrics
    spread = next(m for m in at.metric if m.label == "Random NLL (mean)")
    assert spread.delta.startswith("± ") and "±" not in spread.value  # the spread on its own line
    charts = at.get("plotly_chart")
    assert len(charts) == 2  # distribution + kernel-PCA map (curve not run yet)
    assert len(at.get("download_button")) >= 2


def test_criterion_switch_and_curve_with_progress():
    at = _run(proto_k=15, proto_draws=30)
    _clean(at)
    rows_mmd = at.dataframe[0].value["row"].tolist()
    at.radio(key="w_proto_criterion").set_value("chi2").run()
    _clean(at)
    rows_chi = at.dataframe[0].value["row"].tolist()
    assert len(rows_chi) == 15 and rows_chi != rows_mmd
    at.text_input(key="w_proto_ks").set_value("10,30").run()
    at.number_input(key="w_proto_curve_draws").set_value(20).run()
    at.button(key="proto_curve_run").click().run()
    _clean(at)
    curve = at.session_state["proto_curve"][1]
    assert [r["k"] for r in curve] == [10, 30]
    assert all(r["mmd"]["mmd"] < r["random"]["mmd_mean"] for r in curve)
    assert len(at.get("plotly_chart")) == 3
    at.text_input(key="w_proto_ks").set_value("10,9999").run()
    at.button(key="proto_curve_run").click().run()
    assert any("outside" in e.value for e in at.error)


def test_tan_on_car_reports_class_metrics():
    at = _run(
        dataset="car",
        class_column="class",
        missing_policy="missing",
        proto_source="tan",
        proto_k=40,
        proto_draws=30,
    )
    _clean(at)
    labels = {m.label for m in at.metric}
    assert {"Error rate of the subset", "Random log loss (mean)"} <= labels
    assert len(at.dataframe[0].value) == 40
