"""Readable on a projector: the pages at 1280 × 800 and 1920 × 1080 in a real browser, checked by measurable
facts (a label's text fits its element: scrollWidth <= clientWidth; a legend's box does not meet its title's;
the arc edits sit beside the graph; the cluster and label maps give the same category the same colour; the ΔK
colour bar's range is its caption's) with a screenshot of every page at both sizes in ``test-artifacts/``."""

from __future__ import annotations

import re

import pytest
from browser_helpers import act, count_runs, settle
from test_browser import ARTIFACTS, browser, pytestmark, server  # noqa: F401 (fixtures)

from bnfk_core.registry import SCORES

expect = pytest.importorskip("playwright.sync_api").expect

SIZES = {"1280x800": (1280, 800), "1920x1080": (1920, 1080)}

#: elements (or their descendants, e.g. a button's ellipsis container) whose text overflows, i.e. is cut with
#: "…":
#: [(text, scrollWidth, clientWidth)] (a select box shows its choice in an input: its value)
CUT = """(sel) => [...document.querySelectorAll(sel)].flatMap(e => [e, ...e.querySelectorAll('*')])
    .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1 && (e.value || e.innerText))
    .map(e => [e.value || e.innerText, e.scrollWidth, e.clientWidth])"""

#: texts of a chart (title, axis titles, tick labels, legend) that reach outside the chart's own box, where
#: they are clipped: [(text, left, right, top, bottom)] with the negative margins
CHART_TEXT_OUT = """(sel) => [...document.querySelectorAll(sel)].flatMap(p => {
    const r = p.getBoundingClientRect();
    return [...p.querySelectorAll(
            '.gtitle, .g-xtitle text, .g-ytitle text, .legendtext, .xtick text, .ytick text')]
        .map(t => { const b = t.getBoundingClientRect();
                    return [t.textContent, b.left - r.left, r.right - b.right,
                            b.top - r.top, r.bottom - b.bottom]; })
        .filter(x => x.slice(1).some(m => m < -1));
})"""

#: bounding boxes of a chart's title and legend and its y tick labels: {title, legend, ticks}
BOXES = """(key) => {
    const root = document.querySelector(`.st-key-${key} .js-plotly-plot`) || document.querySelector(key);
    const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const title = root.querySelector('.gtitle'), legend = root.querySelector('.legend');
    return {title: title ? box(title) : null, legend: legend ? box(legend) : null,
            ticks: [...root.querySelectorAll('.ytick text')].map(box)};
}"""

#: the traces of a chart (name, colour, points) as plotly drew them (its full data: arrays decoded, defaults
#: set)
TRACES = """(key) => document.querySelector(`.st-key-${key} .js-plotly-plot`)._fullData.map(t => ({
    name: t.name, showlegend: t.showlegend, color: t.marker ? t.marker.color : null,
    points: t.x && t.y && t.type === 'scatter' ? Array.from(t.x, (x, i) => `${x},${t.y[i]}`) : [],
    zmax: t.zmax === undefined ? null : t.zmax}))"""


def _overlap(a, b) -> bool:
    return a is not None and b is not None and a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _open(page, url: str, heading: str) -> None:
    """Open ``url`` and wait for its first script run to be over (no fixed sleeps:
    :func:`browser_helpers.settle`)."""
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_role("heading", name=heading).first.wait_for(timeout=90_000)
    settle(page)


def _not_cut(page, selector: str, where: str) -> None:
    cut = page.evaluate(CUT, selector)
    assert not cut, f"text cut on {where}: {cut}"


def _ticks_apart(page, key: str) -> None:
    ticks = page.evaluate(BOXES, key)["ticks"]
    assert ticks, f"no y tick labels in {key}"
    hits = [
        (i, j) for i in range(len(ticks)) for j in range(i + 1, len(ticks)) if _overlap(ticks[i], ticks[j])
    ]
    assert not hits, f"{len(hits)} colliding variable names in {key}"


@pytest.mark.parametrize("size", list(SIZES))
def test_pages_are_readable_on_a_projector(server, browser, size):  # noqa: F811
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    count_runs(page)

    def shot(name: str, at: str) -> None:
        """The viewport (what the audience sees) scrolled to the element ``at``."""
        page.locator(at).first.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        page.screenshot(path=str(ARTIFACTS / f"projector_{name}_{size}.png"))

    try:
        # Structure: whole button labels, the arc edits beside the graph, the live contributions readable
        _open(page, f"{server}/structure", "Structure")
        page.get_by_text("Fisher kernel, live").first.wait_for(timeout=90_000)
        assert page.locator('[data-testid="stToolbar"]').count() == 1  # the Running/Stop widget's toolbar
        for label in ("Undo", "Redo", "Reset", "Start empty", "Add arc", "Remove", "Reverse"):
            expect(page.get_by_role("button", name=label).first).to_be_visible()
        _not_cut(page, '[data-testid="stMain"] button', "Structure")
        graph = page.locator(".st-key-dag_chart").bounding_box()
        add = page.get_by_role("button", name="Add arc").first.bounding_box()
        assert add["x"] >= graph["x"] + graph["width"] - 1, "the arc edits are not beside the graph"
        assert add["y"] < graph["y"] + graph["height"], "the arc edits are below the graph"
        _ticks_apart(page, "live_contrib")
        shot("structure", ".st-key-dag_chart")
        shot("structure_live", ".st-key-live_contrib")

        # Kernel: the histogram's legend off its title, the contribution names apart
        _open(page, f"{server}/kernel", "Kernel")
        page.locator(".st-key-contrib_chart .js-plotly-plot").wait_for(timeout=90_000)
        for key in ("hist", "pca_chart"):
            boxes = page.evaluate(BOXES, key)
            assert boxes["title"] and boxes["legend"], key
            assert not _overlap(boxes["title"], boxes["legend"]), f"{key}: legend on the title"
        _ticks_apart(page, "contrib_chart")
        shot("kernel_histogram", ".st-key-hist")
        shot("kernel_contributions", ".st-key-contrib_chart")

        # Clustering: one category -> colour map for the map by cluster and the map by label (the
        # scaled-Hamming kernel: its clusters follow the parties, so each cluster has a label to share its
        # colour with)
        _open(page, f"{server}/clustering?clu_kernel=scaled-hamming", "Clustering")
        page.locator(".st-key-clu_pca_label .js-plotly-plot").wait_for(timeout=90_000)
        by_cluster, by_label = (page.evaluate(TRACES, k) for k in ("clu_pca_cluster", "clu_pca_label"))
        for tc in by_cluster:
            best = max(by_label, key=lambda tl: len(set(tc["points"]) & set(tl["points"])))
            shared = len(set(tc["points"]) & set(best["points"]))
            assert shared > len(tc["points"]) / 2
            assert tc["color"] == best["color"], (
                f"{tc['name']} ({tc['color']}) vs {best['name']} ({best['color']})"
            )
        shot("clustering_maps", ".st-key-clu_pca_label")

        # Segments lab: the roles of the picked variables, the ΔK colour bar = its caption, the case table
        # whole
        _open(page, f"{server}/segments", "Segments lab")
        body = page.inner_text("body")
        assert re.search(r"u = \S+, v = \S+", body), "the roles u, v are not named"
        page.locator(".st-key-seg_gram_diff .js-plotly-plot").wait_for(timeout=90_000)
        zmax = [t["zmax"] for t in page.evaluate(TRACES, "seg_gram_diff") if t["zmax"] is not None][0]
        said = re.search(r"at ±([0-9.e+-]+) for their difference", body)
        assert said and float(said.group(1)) == pytest.approx(zmax, rel=1e-2), (said, zmax)
        zero = [
            d
            for d in page.locator('[data-testid="stMetricDelta"]').all()
            if re.fullmatch(r"0\.0+", d.inner_text())
        ]
        for d in zero:  # a zero change is grey, no arrow
            assert d.locator("svg").count() == 0
        shot("segments_kernels", ".st-key-seg_gram_diff")
        act(
            page, page.get_by_text("Empty network (scaled Hamming)").first.click
        )  # the thesis's tables: empty base
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=\"stTab\"]')]"
            ".filter(t => t.innerText.includes('Theory (case table)')).length === 1",
            timeout=120_000,
        )  # the rerun's stale tabs are gone
        page.get_by_role("tab", name="Theory (case table)").click()
        page.locator('[data-testid="stTable"]').first.wait_for(timeout=30_000)
        _not_cut(page, '[data-testid="stTable"] td, [data-testid="stTable"] th', "the case table")
        shot("segments_theory", '[data-testid="stTable"]')

        # Prototypes: nothing runs before the click; then whole metrics and each method once in the legend
        _open(page, f"{server}/prototypes", "Prototypes")
        assert page.locator('[data-testid="stMetric"]').count() == 0
        act(page, page.get_by_role("button", name="Find prototypes").click)
        page.get_by_text("MMD of the subset").first.wait_for(timeout=120_000)
        _not_cut(page, '[data-testid="stMetricValue"], [data-testid="stMetricDelta"]', "Prototypes")
        shot("prototypes_metrics", '[data-testid="stMetric"]')
        page.get_by_role("tab", name="Against random subsets").click()
        page.locator(".st-key-proto_dist .js-plotly-plot").wait_for(timeout=30_000)
        names = [t["name"] for t in page.evaluate(TRACES, "proto_dist") if t["showlegend"] is not False]
        assert len(names) == len(set(names)), names
        shot("prototypes_legend", ".st-key-proto_dist")
    finally:
        ctx.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_structure_tabs_are_readable_on_a_projector(server, browser, size):  # noqa: F811
    """The Structure page's Learn tab with the KGV score chosen, the score landscape and the KGV tab switched
    on:
    no label, metric or caption cut, no chart text clipped at the chart's edge."""
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    count_runs(page)
    tabs = '[data-testid="stTabs"]'
    texts = ", ".join(
        f"{tabs} {x}"
        for x in (
            '[data-testid="stSelectbox"]',
            '[data-testid="stMetric"]',
            "label",
            '[data-testid="stCaptionContainer"]',
        )
    )
    try:
        _open(page, f"{server}/structure", "Structure")
        act(page, page.get_by_role("tab", name="Score landscape").click)
        act(page, page.get_by_text("Show the score landscape").first.click)
        page.locator(".st-key-land_cube_chart .js-plotly-plot").wait_for(timeout=120_000)
        _not_cut(page, texts, "the score landscape")
        assert not page.evaluate(CHART_TEXT_OUT, f"{tabs} .js-plotly-plot"), (
            "chart text clipped on the landscape"
        )
        page.locator(".st-key-land_rank_chart").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"projector_landscape_{size}.png"))

        act(page, page.get_by_role("tab", name="KGV (mixed data)").click)
        act(page, page.get_by_text("Compute the KGV dependence").first.click)
        page.locator(".st-key-kgv_raw_dag .js-plotly-plot").wait_for(timeout=120_000)
        _not_cut(page, texts, "the KGV tab")
        assert not page.evaluate(CHART_TEXT_OUT, f"{tabs} .js-plotly-plot"), (
            "chart text clipped on the KGV tab"
        )
        page.locator(".st-key-kgv_mi_chart").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"projector_kgv_{size}.png"))

        act(page, page.get_by_role("tab", name="Learn").click)
        page.get_by_role("combobox", name="Score").first.click()
        act(page, page.get_by_role("option", name=SCORES["kgv"].label).click)
        expect(page.get_by_role("combobox", name="Score").first).to_have_value(SCORES["kgv"].label)
        _not_cut(page, texts, "the Learn tab")
        page.get_by_role("combobox", name="Score").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"projector_learn_kgv_{size}.png"))
    finally:
        ctx.close()
