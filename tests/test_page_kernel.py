"""The Kernel page draws at most PANEL_ROWS rows of its three Gram panels (evenly along the plotted order)
while the kernel, its analysis and the downloads keep every sampled row; the histogram carries counted bins,
not every pair."""

import json

import numpy as np
from apptest_helpers import assert_clean, page_app

from bnfk_core.views.figures import PANEL_ROWS, evenly_drawn


def test_evenly_drawn_keeps_short_orders_and_spreads_long_ones():
    order = np.arange(10)[::-1]
    assert np.array_equal(evenly_drawn(order, 20), order)
    picked = evenly_drawn(order, 4)
    assert list(picked) == [9, 6, 3, 0]  # positions 0, 3, 6, 9 of the order: ends kept, even steps


def test_the_gram_panels_draw_at_most_panel_rows_of_every_sampled_row():
    at = page_app("kernel.py", kernel_rows=435).run()  # house_votes_84: all 435 rows sampled
    assert_clean(at)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    heat = [
        t
        for s in specs
        for t in s["data"]
        if t.get("type") == "heatmap"
        and t.get("yaxis", "y") == "y"
        and len(t.get("y") or ()) > 1
        and len(t.get("x") or ()) > 1
    ]
    assert len(heat) == 3 and all(len(t["y"]) == len(t["x"]) == PANEL_ROWS for t in heat)
    assert any(
        "435 rows, ordered" in c.value and f"{PANEL_ROWS} of them drawn" in c.value for c in at.caption
    )
    hist = [s for s in specs if "share of the group" in json.dumps(s["layout"].get("yaxis", {}))]
    assert len(hist) == 1 and {t["type"] for t in hist[0]["data"]} == {"bar"}
    assert len(json.dumps(hist[0])) < 60_000  # 60 counted bins; every pair's value was 1.3 MB
