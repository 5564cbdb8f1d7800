"""Names are text in every figure family: a column, level or file name holding plotly's HTML subset or MathJax
shows literally (checked in the figure JSON: the markup is never there raw, its escaped form is); a class with
100,000 levels draws a bounded colour scale quickly."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from bnfk_core.views.figures import (
    base,
    clustering,
    imputation,
    kernel,
    kernel_zoo,
    kgv,
    prototypes,
    segments,
)

HOSTILE = [
    "<a href=x>click</a>",
    "$x^2$",
    "<b>bold</b>",
    '<span style="color:red">red</span>',
    "%{meta}",
    "a<br>b",
    "&lt;ok&gt;",
]
RAW = ["<a href", "click</a>", "$x^2$", "<b>bold", '<span style="color', "%{meta}", "a<br>b", "&lt;ok&gt;"]


def strings(obj, path=()):
    """Every (path, string) of a figure's JSON, except customdata that no hover shows (selection ids)."""
    if isinstance(obj, str):
        yield path, obj
    elif isinstance(obj, dict):
        shown = "customdata" in str(obj.get("hovertemplate", ""))
        for k, v in obj.items():
            if k == "customdata" and not shown:
                continue
            yield from strings(v, path + (k,))
    elif isinstance(obj, (list, tuple, np.ndarray)):
        for i, v in enumerate(obj.tolist() if isinstance(obj, np.ndarray) else obj):
            yield from strings(v, path + (i,))


def assert_literal(fig, must_show=("&lt;a href=x&gt;click&lt;/a&gt;", "&#36;x^2&#36;")):
    found = list(strings(fig.to_plotly_json()))
    bad = [(p, s) for p, s in found for r in RAW if r in s]
    assert not bad, bad[:5]
    text = "\n".join(s for _, s in found)
    for m in must_show:
        assert m in text, m


def _K(n, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return X @ X.T


def test_plain_escapes_the_subset_and_mathjax():
    assert base.plain("<a href=x>click</a>") == "&lt;a href=x&gt;click&lt;/a&gt;"
    assert base.plain("$x^2$ 50% & more") == "&#36;x^2&#36; 50&#37; &amp; more"
    assert base.plain(3) == "3"


def test_base_figures_show_names_literally():
    names = HOSTILE
    n = len(names)
    K, order, rows = _K(n), np.arange(n), np.arange(n)
    labels = np.arange(n) % 3
    assert_literal(
        base.dag_figure(
            names,
            [(names[0], names[1]), (names[2], names[3])],
            highlight=[(names[0], names[1])],
            node_info={names[0]: "2 levels\nparents: " + names[1]},
            title=names[0],
            clickable=True,
        )
    )
    assert_literal(
        base.gram_figure(
            K, order, rows, labels, names[:3], title=names[0] + names[1], colorbar_title=names[1]
        )
    )
    pairs = {
        "all": np.arange(10.0),
        "within": {0: np.arange(3.0), 1: np.arange(2.0)},
        "between": np.arange(5.0),
    }
    assert_literal(base.histogram_figure(pairs, names[:2], title=names[0] + names[1]))
    assert_literal(
        base.contributions_figure(
            names, np.arange(n, dtype=float), names, names[::-1], title=names[0] + names[1]
        )
    )
    assert_literal(
        base.embedding_figure(
            np.random.default_rng(0).normal(size=(n, 2)),
            rows,
            labels,
            names[:3],
            selected=(0, 1),
            title=names[0] + names[1],
        )
    )
    assert_literal(
        base.levels_figure(names, list(range(1, n + 1)), 2, class_column=True, title=names[0] + names[1])
    )


def test_page_figure_modules_show_names_literally():
    names = HOSTILE
    n = len(names)
    K, order, rows, labels = _K(n), np.arange(n), np.arange(n), np.arange(n) % 3
    for fig in kernel.gram_panels(K, K * 0.5, order, rows, labels, names[:3], titles=(names[0], names[1]))[0]:
        assert_literal(fig, must_show=("&lt;a href=x&gt;click&lt;/a&gt;",))
    assert_literal(kernel.pair_figure(names, np.ones(n), names, names, 0, 1, "fisher"))
    for fig in segments.segment_panels(K, K, order, rows, labels, names[:3])[0]:
        assert_literal(fig, must_show=("&lt;a href=x&gt;click&lt;/a&gt;",))
    assert_literal(
        segments.edit_difference_figure(K, K, order, rows, labels, names[:3], names[1] + " → " + names[0])
    )
    gallery = segments.gallery_panels(K, [K, K], [names[0], names[1]], order, rows, labels, names[:3])[0]
    for fig in gallery:
        assert_literal(fig, must_show=())
    shown = "\n".join(s for fig in gallery for _, s in strings(fig.to_plotly_json()))
    assert all(base.plain(c) in shown for c in names[:3])  # the class names are there, as text
    assert_literal(clustering.cluster_heatmap(K, order, rows, labels, 3, names[0] + names[1]))
    maps = clustering.cluster_maps(np.ones((n, 2)), rows, labels, 3, labels, names[:3])
    for fig in maps:
        assert_literal(fig, must_show=())
    shown = "\n".join(s for fig in maps for _, s in strings(fig.to_plotly_json()))
    assert all(base.plain(c) in shown for c in names[:3])  # the map coloured by label names them, as text
    Y = np.random.default_rng(1).normal(size=(n, 2))
    assert_literal(
        prototypes.map_figure(Y, rows, labels, names[:3], np.array([0, 1]), np.arange(n), names[0] + names[1])
    )
    P = np.full((2, n), np.nan)
    P[0, 0] = 0.7
    dist = np.empty((2, n), dtype=object)
    dist[0, 0] = [(names[0], 0.7), (names[1], 0.3)]
    values = np.array([names, names[::-1]], dtype=object)
    assert_literal(imputation.imputed_cells_figure(values, names, [0, 1], P, dist))
    ranks = pd.DataFrame({"kernel": ["fisher-x", "hamming"], "label": names[:2], "acc": [1.0, 2.0]})
    assert_literal(kernel_zoo.rank_dot_figure(ranks, "acc", "accuracy", 0.5))
    summary = pd.DataFrame(
        {
            "label": names[:2] * 2,
            "dataset": [names[0]] * 2 + [names[1]] * 2,
            "acc": [0.1, 0.2, 0.3, 0.4],
            "acc_std": [0.0] * 4,
        }
    )
    assert_literal(kernel_zoo.dataset_heatmap(summary, "acc", "accuracy", names[:2]))
    assert_literal(kgv.kgv_mi_figure(names, np.eye(n), raw=names[:1], title=names[0] + names[1]))


def test_benchmark_heatmaps_escape_method_labels():
    class Res:
        methods, test_ratios, missing_ratios = ["bn"], [0.1, 0.2], [0.1]

        def matrix(self, m, metric):
            return np.array([[0.5], [0.6]])

    assert_literal(imputation.benchmark_heatmaps(Res(), "accuracy", labels={"bn": HOSTILE[0] + HOSTILE[1]}))


def test_a_class_with_100000_levels_draws_a_bounded_scale_quickly():
    n_levels, n = 100_000, 1500
    states = [f"level{i}" for i in range(n_levels)]
    rng = np.random.default_rng(0)
    labels = np.where(rng.random(n) < 0.5, rng.integers(0, 5, n), rng.integers(0, n_levels, n))
    K = _K(n)
    t0 = time.perf_counter()
    g = base.gram_figure(K, np.arange(n), np.arange(n), labels, states)
    e = base.embedding_figure(rng.normal(size=(n, 2)), np.arange(n), labels, states)
    within = {int(c): np.ones(3) for c in np.unique(labels)}
    h = base.histogram_figure({"all": np.ones(10), "within": within, "between": np.ones(4)}, states)
    lv = base.levels_figure(states, np.ones(n_levels, dtype=int), 0, class_column=True)
    assert time.perf_counter() - t0 < 10
    strip = g.data[1]
    assert len(strip.colorscale) <= 2 * (base.MAX_CLASS_COLORS + 1)
    assert len(e.data) <= base.MAX_CLASS_COLORS + 1 and len(h.data) <= base.MAX_CLASS_COLORS + 2
    assert len(lv.data[0].x) <= base.MAX_BARS
    # the five frequent levels keep their names and colours; the rest are one grey group that counts them
    names = [t.name for t in e.data]
    assert {f"level{i}" for i in range(5)} <= set(names)
    assert any(nm.startswith("other levels (") for nm in names)
    other = next(t for t in e.data if t.name.startswith("other levels"))
    assert other.marker.color == base.OTHER_COLOR
    assert sum(len(t.x) for t in e.data) == n  # every row drawn once


@pytest.mark.parametrize("k", [1, base.MAX_CLASS_COLORS])
def test_few_levels_are_unchanged(k):
    labels = np.arange(50) % k
    lab, names, other = base.bounded_classes(labels, [f"s{i}" for i in range(k)])
    assert not other and names == [f"s{i}" for i in range(k)] and (lab == labels).all()
