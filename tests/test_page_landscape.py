"""AppTest of the Structure page's Score landscape tab: the panel draws, and moving the observed-graphs slider
redraws the surrogate with the core's numbers."""

import json
import time

import numpy as np
from apptest_helpers import ROOT, assert_clean, page_app

from bnfk_core.analyses.landscape import surrogate_study
from bnfk_core.data.table import load_csv
from bnfk_core.learning.landscape import score_landscape


def test_landscape_tab_draws_and_the_slider_redraws():
    at = page_app("structure.py", structure_tab="Score landscape").run()
    assert_clean(at)
    assert "land_observe" not in at.session_state  # off until asked for: the page stays fast
    at.toggle(key="land_on").set_value(True).run()
    assert_clean(at)
    chosen = list(at.multiselect(key="land_vars").value)
    assert len(chosen) == 4
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["DAGs"] == "543" and metrics["Equivalence classes"] == "185"
    assert 1 <= int(metrics["Your structure ranks"].replace(",", "")) <= 543
    slider = at.slider(key="land_observe")
    assert slider.value == 32 and slider.max == 63
    rmse_before = [c for c in at.get("plotly_chart") if "RMSE by kernel order" in c.proto.spec]
    assert len(rmse_before) == 1
    t0 = time.perf_counter()
    slider.set_value(50).run()
    seconds = time.perf_counter() - t0
    assert_clean(at)
    after = [c for c in at.get("plotly_chart") if "RMSE by kernel order" in c.proto.spec]
    assert after[0].proto.spec != rmse_before[0].proto.spec
    assert seconds < 30  # generous here: the benchmark holds the 1 s target
    # the redrawn RMSE bars are the core's numbers for 50 observed graphs on the page's data
    ss = at.session_state
    entry = json.loads((ROOT / "sample_data" / "catalog.json").read_text())[ss["dataset"]]
    data = load_csv(
        str(ROOT / "sample_data" / entry["file"]),
        class_column=ss["class_column"],
        missing_policy=ss["missing_policy"],
        discretize_bins=int(ss["bins"]) or None,
        drop_columns=tuple(ss["drop_columns"]),
    ).without_class()
    land = score_landscape(data, chosen, at.selectbox(key="land_score").value)
    want = surrogate_study(land, fixed_order=True, observe=50, orders=[1, 2, 3, 4], seed=0)
    bars = json.loads(after[0].proto.spec)["data"][0]["y"]
    np.testing.assert_allclose(bars, [want["rmse"][r] for r in (1, 2, 3, 4)], rtol=1e-9)


def test_landscape_tab_all_dags_mode():
    at = page_app("structure.py", land_on=True, structure_tab="Score landscape").run()
    at.toggle(key="land_fixed").set_value(False).run()
    assert_clean(at)
    assert at.slider(key="land_observe").max == 542
    assert any("All DAGs: the cube Q_12" in c.proto.spec for c in at.get("plotly_chart"))
    assert any("over one bit per directed arc" in c.value for c in at.caption)
