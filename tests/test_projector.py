"""Readable and honest on a projector, without a browser: the figures' category colours, legends and bars,
neutral zero deltas, the segment roles, the Data page's empty missing cells and the notice when most rows are
incomplete. (tests/test_browser_projector.py checks the drawn pages at 1280 × 800 and 1920 × 1080.)"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import assert_clean, page_app

from bnfk_core.views.figures import base, clustering, prototypes
from bnfk_ui import common
from bnfk_ui.sections.segments import role_line


def _majority_colors(clusters, labels, n_clusters, states):
    """Brute force: every (cluster, label) matching with each label used at most once, the one with the most
    rows in matched pairs; the expected colour of a matched cluster is its label's."""
    import itertools

    table = np.zeros((n_clusters, len(states)), int)
    for c, lab in zip(clusters, labels):
        table[c, lab] += 1
    best, best_score = None, -1
    for perm in itertools.permutations(range(max(n_clusters, len(states))), n_clusters):
        score = sum(table[c, lab] for c, lab in enumerate(perm) if lab < len(states))
        if score > best_score:
            best, best_score = perm, score
    colors = base.class_colors(states)
    return {
        f"cluster {c}": colors[states[lab]]
        for c, lab in enumerate(best)
        if lab < len(states) and table[c, lab]
    }


@pytest.mark.parametrize("seed", range(5))
def test_a_cluster_takes_the_colour_of_the_label_it_holds(seed):
    rng = np.random.default_rng(seed)
    states = ["democrat", "republican", "other"]
    labels = rng.integers(0, 3, 300)
    # clusters: a noisy relabelling of the labels (cluster c mostly holds label perm[c]) plus a fourth cluster
    perm = rng.permutation(3)
    clusters = np.where(rng.random(300) < 0.8, np.argsort(perm)[labels], rng.integers(0, 4, 300))
    got = clustering.cluster_colors(clusters, 4, labels, states)
    want = _majority_colors(clusters, labels, 4, states)
    assert {k: got[k] for k in want} == want
    assert len(set(got.values())) == 4  # every cluster its own colour
    extra = [k for k in got if k not in want]
    assert extra and all(got[k] not in base.class_colors(states).values() for k in extra)


def test_the_two_maps_share_one_colour_map():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 80)
    clusters = 1 - labels  # cluster 0 holds label 1 and vice versa
    Y = rng.normal(size=(80, 2))
    by_cluster, by_label = clustering.cluster_maps(Y, np.arange(80), clusters, 2, labels, ["dem", "rep"])
    col = {t.name: t.marker.color for t in by_cluster.data}
    lab = {t.name: t.marker.color for t in by_label.data}
    assert col["cluster 0"] == lab["rep"] and col["cluster 1"] == lab["dem"]


def test_legends_sit_under_the_plot_and_list_each_method_once():
    pairs = {"all": np.linspace(-1, 1, 50), "within": {0: np.ones(5), 1: np.zeros(5)}, "between": np.ones(3)}
    for fig in (
        base.histogram_figure(pairs, ["a", "b"], title="t"),
        base.embedding_figure(np.zeros((4, 2)), np.arange(4), np.array([0, 1, 0, 1]), ["a", "b"], title="t"),
    ):
        assert (
            fig.layout.legend.yanchor == "top" and fig.layout.legend.y < 0
        )  # below the x axis, off the title
    res = {
        "details": {"random_mmd": [0.5, 0.6, 0.7], "random_nll": [3.0, 3.1, 3.2]},
        "full": {"nll": 2.9},
        "mmd": {"mmd": 0.3, "nll": 3.0},
        "chi2": {"mmd": 0.4, "nll": 3.05},
    }
    fig = prototypes.distribution_figure(res, "mmd")
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert len(names) == len(set(names)) == 4


def test_histogram_bars_are_each_groups_share_of_its_pairs():
    """The pre-counted bars equal a brute-force count: pairs in [lo, hi) of a bin over all the group's
    pairs."""
    rng = np.random.default_rng(3)
    within = {0: rng.normal(1, 1, 400), 1: rng.normal(-1, 0.5, 250)}
    between = rng.normal(0, 2, 900)
    pairs = {"all": np.concatenate([within[0], within[1], between]), "within": within, "between": between}
    fig = base.histogram_figure(pairs, ["a", "b"], title="t")
    assert [t.type for t in fig.data] == ["bar"] * 3 and [t.name for t in fig.data] == [
        "within a",
        "within b",
        "between classes",
    ]
    for trace, values in zip(fig.data, (within[0], within[1], between)):
        x, w = np.asarray(trace.x, float), float(trace.width)
        assert len(x) == 60 and np.allclose(np.diff(x), w)
        brute = [sum(1 for v in values if a - w / 2 <= v < a + w / 2) / len(values) for a in x]
        assert np.allclose(np.asarray(trace.y, float), brute, atol=1e-12)
    lo, hi = np.quantile(pairs["all"], [0.005, 0.995])
    assert fig.layout.xaxis.range[0] < lo and fig.layout.xaxis.range[1] > hi  # the central 99 % is shown
    assert len(fig.to_json()) < 60_000  # 60 numbers a group, not every pair's value


def test_contributions_are_one_line_per_variable():
    names = ["a-long-variable-name", "b", "c"]
    k = np.array([0.5, -0.25, 0.0])
    fig = base.contributions_figure(names, k, ["x", "y", "z"], ["x", "q", "z"])
    bar = fig.data[0]
    assert bar.orientation == "h" and list(bar.x) == list(k)
    assert list(bar.y) == ["a-long-variable-name  =", "b  ≠", "c  ="]
    assert fig.layout.height >= 20 * len(names)


@pytest.mark.parametrize(
    "value,fmt,neutral",
    [
        (0.0, "+.3f", True),
        (4e-5, "+.3f", True),
        (-4e-5, "+.3f", True),
        (0.002, "+.3f", False),
        (-0.5, "+.3g", False),
    ],
)
def test_a_zero_change_is_neutral(value, fmt, neutral):
    kw = common.delta(value, fmt)
    assert (kw.get("delta_color") == "off" and kw.get("delta_arrow") == "off") == neutral
    if neutral:
        assert kw["delta"] == "0.000"


def test_the_segment_roles_are_named():
    assert role_line("v", ["A", "B", "C"]) == "u = **A**, v = **B**, w = **C** · A → C ← B"
    assert role_line("a", ["A", "B", "C"]).endswith("B ← A → C")
    assert role_line("single-arc", ["A", "B"]).endswith("· A → B")
    assert role_line("full", ["A", "B", "C"]).startswith("x₁ = **A**, x₂ = **B**, x₃ = **C**")


def _incomplete_csv(n: int, complete: int) -> bytes:
    """``n`` rows over four columns; the first ``complete`` rows are complete, every other has one blank
    cell."""
    rng = np.random.default_rng(0)
    lines = ["a,b,c,d"]
    for i in range(n):
        cells = [f"v{x}" for x in rng.integers(0, 3, 4)]
        if i >= complete:
            cells[i % 4] = ""
        lines.append(",".join(cells))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("complete,warned", [(20, True), (29, True), (30, False), (50, False)])
def test_a_warning_when_most_rows_are_incomplete(complete, warned):
    state = {
        "dataset": "upload",
        "upload": ("t.csv", _incomplete_csv(60, complete)),
        "class_column": None,
        "missing_policy": "missing",
    }
    for page in ("structure.py", "data.py"):
        at = page_app(page, 120, **state).run()
        assert_clean(at)
        text = " ".join(w.value for w in at.warning)
        assert ("Most rows are incomplete" in text) == warned, (page, text)
        if warned:
            assert f"only the {complete} of the 60 rows" in text


def test_the_preview_shows_missing_cells_empty():
    at = page_app(
        "data.py", 120, dataset="house_votes_84", class_column="class", missing_policy="missing"
    ).run()
    assert_clean(at)
    preview = at.dataframe[-1].value
    assert (preview == "").to_numpy().any()
    assert not preview.isna().to_numpy().any() and not (preview == "None").to_numpy().any()


def test_the_running_indicator_is_shown():
    """client.toolbarMode "minimal" hides the whole toolbar, the Running…/Stop status widget with it."""
    import tomllib

    from apptest_helpers import ROOT

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["toolbarMode"] == "viewer"


def test_the_served_app_neither_watches_sources_nor_forces_a_full_collection_after_each_run():
    """Streamlit's source watcher re-scanned every loaded module on the event loop when a page imported a
    new one, and the forced gc.collect(2) after every run held the GIL for 0.2-0.5 s: both are off."""
    import tomllib

    from apptest_helpers import ROOT

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["fileWatcherType"] == "none"
    assert cfg["runner"]["postScriptGC"] is False
