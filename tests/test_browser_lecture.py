"""The lecture in a real browser at 1280 × 800: from the home page, pick Hayes-Roth, open Compare structures
and set B to a chain, a V-structure and an A-structure -- every outcome (K_A, K_B, ΔK, ARI, imputation
accuracy, prototypes) on the screen at each stage.  The clicks are counted (at most 10) and each step's time
from click to settled page (the script run it caused is over, nothing left from the previous run, charts
placed: :func:`browser_helpers.settle`, no fixed sleeps) is written to ``test-artifacts/lecture.json`` with
its CPU seconds, the machine's load and a screenshot per stage; each step of the lecture proper (B = chain,
V, A) must settle within ``STEP_SECONDS`` (:meth:`browser_helpers.Steps.slow`)."""

from __future__ import annotations

import json

from browser_helpers import Steps, act, count_runs, settle
from test_browser import ARTIFACTS, browser, pytestmark, server  # noqa: F401 (fixtures)
from test_browser_projector import CUT

MAX_CLICKS = 10
#: the lecture's steps on a sample settle within this (the issue's target); the wall time is judged while the
#: 1-minute load is at most LOADED times the cores, beyond that the step's CPU seconds over the cores
#: (:meth:`browser_helpers.Steps.slow`: with more runnable work than cores the wall measures the neighbours
#: too -- the suite's other worker in CI)
STEP_SECONDS, LOADED = 2.0, 1.0


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def test_lecture_within_ten_clicks(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    count_runs(page)
    steps, seen = Steps(page), {}

    def click(locator, name: str, reruns: bool = True) -> None:
        steps(name, locator.click, reruns)

    try:
        page.goto(server, wait_until="domcontentloaded")
        page.get_by_role("heading", name="Dataset").first.wait_for(timeout=90_000)
        settle(page)
        click(
            page.get_by_role("combobox", name="Bundled sample or your own file").first,
            "open the sample list",
            reruns=False,
        )
        click(page.get_by_role("option", name="Hayes-Roth", exact=False).first, "pick Hayes-Roth")
        click(page.get_by_role("link", name="Compare structures").first, "open Compare structures")
        page.get_by_role("heading", name="Compare structures").first.wait_for(timeout=90_000)
        assert float(_metric(page, "max |ΔK|")) > 0  # B opens as the empty network beside the learned A
        for name, label in (("chain", "Chain"), ("v", "V-structure"), ("a", "A-structure")):
            click(page.get_by_role("button", name=label, exact=True), f"B = {label}")
            page.wait_for_function(
                "() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=60_000
            )
            seen[name] = {k: _metric(page, k) for k in ("max |ΔK|", "ARI · A", "ARI · B", "Imputation · A")}
            assert float(seen[name]["max |ΔK|"]) > 0
            cut = page.evaluate(
                CUT,
                '[data-testid="stMetricLabel"], [data-testid="stMetricValue"], button, '
                '[data-testid="stMultiSelectTagsContainer"]',
            )  # the three variables whole
            assert not cut, f"text cut at 1280 x 800: {cut}"
            top = page.evaluate("() => document.querySelector('.st-key-cmp_dk').getBoundingClientRect().top")
            assert top < 800, "the kernels start below the fold"
            page.screenshot(path=str(ARTIFACTS / f"lecture_{name}_1280x800.png"))
        assert "Hayes" in page.inner_text("body") or "hayes" in page.inner_text("body")
        assert seen["chain"]["max |ΔK|"] != seen["v"]["max |ΔK|"]
        assert steps.count <= MAX_CLICKS, steps.count
        slow = steps.slow(STEP_SECONDS, LOADED, [k for k in steps.wall if k.startswith("B = ")])
        assert not slow, f"lecture steps over {STEP_SECONDS} s: {slow}"
        # beside the paper's kernel: the normalised one, its source and its condition on the same screen
        page.get_by_role("combobox", name="Kernel").first.click()
        act(page, page.get_by_role("option", name="Normalised Fisher").click)
        body = page.inner_text("body")
        assert (
            "Perronnin, Sánchez & Mensink 2010" in body
            and "not invariant under equivalent structures" in body
        )
        cut = page.evaluate(
            CUT,
            '[data-testid="stMain"] [data-testid="stMetric"], [data-testid="stMain"] label, '
            '[data-testid="stMain"] [data-testid="stSelectbox"], [data-testid="stMain"] button, '
            '[data-testid="stMultiSelectTagsContainer"]',
        )
        assert not cut, f"text cut at 1280 x 800 with the normalised kernel: {cut}"
        assert float(_metric(page, "max |ΔK|")) <= 2.0  # |K_alpha| <= 1
        page.screenshot(path=str(ARTIFACTS / "lecture_normalized_1280x800.png"))
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "lecture.json").write_text(
            json.dumps({"clicks": steps.count, **steps.record(), "outcomes": seen}, indent=1)
        )
        page.close()


#: the Structure-page part of the lecture (learned network at load → three variables of one's own instead
#: of the suggested ones → chain → V → A → Compare) within this
LECTURE_FLOW_CLICKS = 11
#: A, B, C in reading order: three variables below the learned tree's root, so every preset on them is a DAG
PICKS = ["educational-level", "age", "marital-status"]


def test_lecture_flow_structure_presets_to_compare(server, browser):  # noqa: F811
    """Hayes-Roth opened on the Structure page (its learned Chow–Liu network at load): three variables picked
    once, then chain, V and A one click each -- the graph beside the presets in view after every Apply, the
    sidebar naming the segment built -- then Compare, which opens on B = the learned network beside the edited
    A (a comparison that shows something).  The actions (clicks and one Escape) are counted."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    count_runs(page)
    do, boxes = Steps(page), {}

    A, B, C = PICKS
    try:
        box = page.get_by_test_id("stMultiSelect").filter(has_text="Variables A, B, C").first
        url = f"{server.rstrip('/')}/structure?data=hayes_roth&class=class"
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_role("heading", name="Structure").first.wait_for(timeout=90_000)
        settle(page)
        do("open Segment presets", page.get_by_role("tab", name="Segment presets").click)
        clear = box.get_by_role("button", name="Clear all")  # the presets start from a suggested triple
        if clear.count():
            do("clear the suggested variables", clear.first.click)
        do("open the variable list", box.click, reruns=False)
        for v in PICKS:
            option = page.get_by_role("option", name=v, exact=True).first
            if not option.is_visible():
                do("reopen the variable list", box.click, reruns=False)
            do(f"pick {v}", option.click)
        do("close the list", lambda: page.keyboard.press("Escape"), reruns=False)
        want = {"chain": f"{A} → {B} → {C}", "v": f"{A} → {B} ← {C}", "a": f"{A} ← {B} → {C}"}
        for kind in ("chain", "v", "a"):
            do(f"apply {kind}", page.locator(f".st-key-seg_apply_{kind} button:visible").click)
            page.mouse.move(5, 5)  # the button's tooltip off the next one
            label = {"chain": "chain", "v": "v-structure", "a": "a-structure"}[kind]
            try:
                page.get_by_text(f"Applied the {label}", exact=False).first.wait_for(timeout=30_000)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / f"lecture_flow_failed_{kind}.png"))
                raise
            side = page.locator('[data-testid="stSidebar"]').inner_text()
            body = page.inner_text('[data-testid="stMain"]')
            assert want[kind] in side or want[kind] in body, (kind, side[:400])
            graph = page.locator(".st-key-dag_chart_presets").bounding_box()
            boxes[kind] = graph
            assert graph and graph["y"] >= 0 and graph["y"] < 800 and graph["y"] + graph["height"] > 0, (
                f"graph off-screen: {graph}"
            )
            page.screenshot(path=str(ARTIFACTS / f"lecture_flow_{kind}_1280x800.png"))
        do("open Compare structures", page.get_by_role("link", name="Compare structures").first.click)
        page.get_by_role("heading", name="Compare structures").first.wait_for(timeout=90_000)
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=60_000
        )
        assert float(_metric(page, "max |ΔK|")) > 0  # B = the learned network beside the edited A
        page.screenshot(path=str(ARTIFACTS / "lecture_flow_compare_1280x800.png"))
        assert do.count <= LECTURE_FLOW_CLICKS, (do.count, list(do.wall))
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "lecture_flow.json").write_text(
            json.dumps({"actions": do.count, **do.record(), "graph": boxes}, indent=1)
        )
        page.close()


#: the whole lecture of the issue, in clicks
LECTURE_CLICKS = 12


def test_the_whole_lecture_within_twelve_clicks(server, browser):  # noqa: F811
    """textbook network → sample → learn → chain → V with evidence (explaining away) → A → compare with
    the truth, at 1280 × 800, every step counted and timed: pick asia on Home (its rows sampled, seeded),
    learn on the Structure page, the presets on their suggested triple (a V the learned tree lacks),
    explaining away on the Model page in one click, the A-structure, then Compare, which opens on B = the true
    network."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    count_runs(page)
    steps = Steps(page)

    def click(locator, name: str, reruns: bool = True) -> None:
        steps(name, locator.click, reruns)

    try:
        page.goto(server, wait_until="domcontentloaded")
        page.get_by_role("heading", name="Dataset").first.wait_for(timeout=90_000)
        settle(page)
        click(
            page.get_by_role("combobox", name="Bundled sample or your own file").first, "open", reruns=False
        )
        page.keyboard.type("Textbook network asia")
        click(page.get_by_role("option", name="Textbook network asia", exact=False).first, "pick asia")
        click(page.get_by_role("link", name="Structure", exact=True).first, "Structure")
        click(page.get_by_role("button", name="Learn structure"), "learn")
        page.get_by_text("SHD to the truth").first.wait_for(timeout=30_000)
        click(page.get_by_role("tab", name="Segment presets"), "presets")
        tags = page.get_by_test_id("stMultiSelect").filter(has_text="Variables A, B, C").first
        tags.wait_for(timeout=30_000)
        picked = tags.locator("[data-tag]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
        assert len(picked) == 3, picked  # a suggested triple: no picking
        a, b, c = picked
        for kind, label in (("chain", f"{a} → {b} → {c}"), ("v", f"{a} → {b} ← {c}")):
            click(page.locator(f".st-key-seg_apply_{kind} button:visible"), kind)
            page.mouse.move(5, 5)
            assert label in page.locator('[data-testid="stSidebar"]').inner_text(), label
        click(page.get_by_role("link", name="Model", exact=True).first, "Model")
        click(page.get_by_role("button", name="Show explaining away"), "explaining away")
        page.get_by_text("(explaining away)", exact=False).first.wait_for(timeout=30_000)  # table and note
        assert f"{b} ←" in page.inner_text('[data-testid="stMain"]')  # the V just built
        page.screenshot(path=str(ARTIFACTS / "lecture_whole_explaining_away.png"))
        click(page.get_by_role("link", name="Structure", exact=True).first, "Structure again")
        click(page.locator(".st-key-seg_apply_a button:visible"), "a")
        side = page.locator('[data-testid="stSidebar"]')
        side.get_by_text(f"{a} ← {b} → {c}", exact=False).first.wait_for(timeout=30_000)
        click(page.get_by_role("link", name="Compare structures").first, "Compare")
        page.get_by_role("heading", name="Compare structures").first.wait_for(timeout=90_000)
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=60_000
        )
        body = page.inner_text('[data-testid="stMain"]')
        assert "true network" in body.lower() and float(_metric(page, "max |ΔK|")) > 0, body[:600]
        page.screenshot(path=str(ARTIFACTS / "lecture_whole_compare.png"))
        assert steps.count <= LECTURE_CLICKS, (steps.count, list(steps.wall))
        slow = steps.slow(STEP_SECONDS, LOADED)
        assert not slow, f"lecture steps over {STEP_SECONDS} s: {slow}"
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "lecture_whole_last.png"))
        (ARTIFACTS / "lecture_whole.json").write_text(
            json.dumps({"clicks": steps.count, **steps.record()}, indent=1)
        )
        page.close()
