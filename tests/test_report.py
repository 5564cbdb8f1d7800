"""The HTML report (bnfk_core.views.report, ``python -m bnfk_core report``): every section from the core's
numbers, plotly.js embedded once and no script from the network, hostile names escaped, session files, and the
report opened in headless Chromium with the network blocked (every figure drawn; screenshot in
``test-artifacts/``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.cli.main import main
from bnfk_core.data.table import load_csv
from bnfk_core.kernels.embed import sample_rows
from bnfk_core.learning.scores import score_dag
from bnfk_core.learning.structure import learn_feature_structure
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit
from bnfk_core.serving.session_files import DataRef, session_dict, write_session
from bnfk_core.views import report

ROOT = Path(__file__).resolve().parents[1]
HV = ROOT / "sample_data" / "house_votes_84.csv"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
SECTIONS = ("data", "structure", "kernel", "clustering", "imputation", "prototypes", "settings")
#: the bytes plotly.js starts with (its licence banner)
PLOTLY_BANNER = "* plotly.js v"


def _section(html: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', html, re.DOTALL)
    assert m, f"no section {sid}"
    return m.group(1)


def _figure_count(html: str) -> int:
    return len(re.findall(r'<div id="fig-\d+" class="plotly-graph-div"', html))


@pytest.fixture(scope="module")
def hv_report(tmp_path_factory):
    """The house_votes_84 default analysis of the app (class 'class', missing values as a category, Chow-Liu
    tree with BIC, smoothed CPTs, every page's default settings), written by the CLI."""
    out = tmp_path_factory.mktemp("report") / "house_votes_84_report.html"
    code = main(
        [
            "report",
            str(HV),
            "--class-column",
            "class",
            "--missing-policy",
            "category",
            "--quiet",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    return out, out.read_text(encoding="utf-8")


def test_every_section_and_figure(hv_report):
    _, html = hv_report
    for sid in SECTIONS:
        _section(html, sid)
    assert '<section id="segments">' not in html and "No segment comparison" in html
    n = _figure_count(html)
    assert n >= 12 and f'data-figures="{n}"' in html
    # per section: the figures the pages draw
    assert _figure_count(_section(html, "kernel")) == 6  # 3 Gram panels, histogram, PCA map, contributions
    assert _figure_count(_section(html, "clustering")) == 3
    assert "Clusters × labels" in _section(html, "clustering")
    assert "accuracy" in _section(html, "imputation") and _figure_count(_section(html, "imputation")) == 1
    assert "MMD vs random subsets" in _section(html, "prototypes")
    assert "The selected rows" in _section(html, "prototypes")


def test_offline_and_plotly_once(hv_report):
    _, html = hv_report
    assert html.count(PLOTLY_BANNER) == 1  # plotly.js embedded exactly once
    assert not re.search(r"<script[^>]*\bsrc\s*=", html)  # no script loaded from anywhere
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?https?:", html)
    scripts = re.findall(r"<script\b", html)
    assert len(scripts) == 2 + _figure_count(html)  # config, plotly.js, one per figure


def test_numbers_come_from_the_core(hv_report):
    """The report's scores and clustering metrics equal the core's, computed here independently."""
    _, html = hv_report
    d = load_csv(HV, class_column="class", missing_policy="category")
    feats = d.without_class()
    dag = learn_feature_structure(d, "tree", score="bic").dag
    structure = _section(html, "structure")
    assert f"<td>{score_dag(feats.codes, feats.cardinalities, dag, 'bic'):.4g}</td>" in structure
    assert f"<dd>{dag.n_arcs}</dd>" in structure
    rows = sample_rows(d.n_rows, min(1000, d.n_rows), 0)
    res = C.run_clustering(d.subset(rows), "scaled-hamming", "correlation", restarts=25, seed=0)
    clustering = _section(html, "clustering")
    assert f"<td>{res['ari']:.4g}</td>" in clustering and f"<td>{res['ami']:.4g}</td>" in clustering


def test_settings_seeds_versions(hv_report):
    import numpy
    import pgmpy
    import plotly

    import bnfk_core

    _, html = hv_report
    s = _section(html, "settings")
    for key in ("kernel_seed", "clu_seed", "imp_seed", "proto_seed", "kernel_rows", "proto_k", "imp_methods"):
        assert key in s or key.split("_")[0] in s
    for name, version in (
        ("numpy", numpy.__version__),
        ("pgmpy", pgmpy.__version__),
        ("plotly", plotly.__version__),
        ("bnfk", bnfk_core.__version__),
    ):
        assert f"<dt>{name}</dt><dd>{version}</dd>" in s
    assert "<dt>python</dt>" in s
    assert "rows, sampled with seed 0" in _section(html, "kernel")  # the N x N sample is stated


def test_cli_summary_and_errors(tmp_path, capsys):
    out = tmp_path / "r.txt"
    assert main(["report", str(HV), "-o", str(out)]) == 2
    assert "use a file name ending in .html" in capsys.readouterr().err
    assert main(["report", str(HV), "--set", "nope=1", "-o", str(tmp_path / "r.html")]) == 2
    assert "not a setting of the report" in capsys.readouterr().err
    assert main(["report", str(HV), "--set", "kernel_rows=-3", "-o", str(tmp_path / "r.html")]) == 2
    assert "kernel_rows must be from 2 to 2000" in capsys.readouterr().err
    assert main(["report", str(HV), "--set", "imp_test=0.1,2", "-o", str(tmp_path / "r.html")]) == 2
    assert "imp_test must be from 0.01 to 0.99" in capsys.readouterr().err
    assert main(["report", str(HV), "--segment", "single-arc:crime", "-o", str(tmp_path / "r.html")]) == 2
    assert "--segment" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------------- hostile names, sessions, segments
HOSTILE_COLS = ["<script>alert(1)</script>", '<img src=x onerror="window.__pwned=1">', 'a&b "q"', "plain"]
HOSTILE_STATES = ["<b>yes</b>", "</script><script>window.__pwned=2</script>", "n'o"]


def _hostile_csv(n: int = 80, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(HOSTILE_COLS + ["class"])
    for _ in range(n):
        x = rng.integers(0, 3, size=len(HOSTILE_COLS))
        x[1] = x[0] if rng.random() < 0.7 else x[1]  # some dependence for the structure
        w.writerow([HOSTILE_STATES[v] for v in x] + ["<i>c1</i>" if x[0] == 0 else "c2"])
    return buf.getvalue().encode("utf-8")


#: small settings so that the hostile report builds in seconds
SMALL = {
    "kernel_rows": 60,
    "clu_rows": 80,
    "imp_test": [0.3],
    "imp_missing": [0.3],
    "imp_methods": ["bn", "mode"],
    "proto_k": 5,
    "proto_draws": 20,
    "seg_kind": "single-arc",
    "seg_vars": HOSTILE_COLS[:2],
    "seg_rows": 60,
    "clu_restarts": 3,
    "seg_restarts": 3,
}


@pytest.fixture(scope="module")
def hostile_session(tmp_path_factory):
    content = _hostile_csv()
    ref = DataRef(
        name="<svg onload=alert(3)>.csv", content=content, class_column="class", missing_policy="missing"
    )
    data = ref.load()
    feats = data.without_class()
    dag = DAG(feats.variables).add_arc(HOSTILE_COLS[0], HOSTILE_COLS[2])
    path = tmp_path_factory.mktemp("hostile") / "session.json"
    write_session(path, session_dict(ref, dag, "smoothed", fit(dag, feats), SMALL))
    return path


@pytest.fixture(scope="module")
def hostile_report(hostile_session, tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile_out") / "hostile_report.html"
    assert main(["report", str(hostile_session), "--quiet", "-o", str(out)]) == 0
    return out, out.read_text(encoding="utf-8")


def test_session_report(hostile_report):
    _, html = hostile_report
    assert "from the session session.json" in html
    for sid in SECTIONS + ("segments",):  # the session's settings name a segment
        _section(html, sid)
    assert "Case table (theory vs measured)" in _section(html, "segments")
    s = _section(html, "settings")
    assert "<td>proto_k</td><td>5</td>" in s and "<td>kernel_rows</td><td>60</td>" in s
    assert "60 of 80 rows, sampled with seed 0" in _section(html, "kernel")
    assert '<p class="error">' not in html  # no section failed


def test_hostile_names_are_escaped(hostile_report):
    _, html = hostile_report
    page_scripts = re.findall(r"<script\b", html)
    assert len(page_scripts) == 2 + _figure_count(html)  # nothing injected added a script
    for bad in HOSTILE_COLS[:2] + HOSTILE_STATES[:2] + ["<svg onload=alert(3)>", "<i>c1</i>"]:
        assert bad not in html, bad
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown, as text
    assert "&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;" in html
    assert "&lt;svg onload=alert(3)&gt;.csv" in html
    # the figures show names as text (bnfk_core.views.figures.base.plain: entities plotly decodes only when it
    # draws; inside the figures' JSON plotly writes / as \u002f), never as plotly markup
    assert "&lt;script&gt;alert(1)&lt;\\u002fscript&gt;" in html
    assert "\\u003cscript\\u003ealert(1)" not in html


def test_build_report_refuses_a_foreign_model():
    d = load_csv(HV, class_column="class", missing_policy="category")
    other = fit(DAG(["x", "y"]), load_csv(text="x,y\na,b\nb,a\n"))
    with pytest.raises(Exception, match="not the feature columns"):
        report.build_report(d, other)


def test_bad_session_settings_fall_back_with_a_note():
    s, notes = report._checked({"kernel_rows": "many", "clu_seed": 3, "proto_k": 2.5, "unknown": 1})
    assert s["kernel_rows"] == report.REPORT_DEFAULTS["kernel_rows"] and s["clu_seed"] == 3
    assert s["proto_k"] == report.REPORT_DEFAULTS["proto_k"]
    assert len(notes) == 2 and "kernel_rows" in notes[0]


# ---------------------------------------------------------------------- in a browser, offline
def _open_offline(path: Path, shot: str):
    """Open ``path`` in headless Chromium with every non-file request aborted; returns
    (figures expected, figures drawn, blocked requests, page flags)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    blocked = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"]
        )
        try:
            ctx = browser.new_context(viewport={"width": 1300, "height": 900}, offline=True)

            def route(r):
                if r.request.url.startswith("file:"):
                    r.continue_()
                else:
                    blocked.append(r.request.url)
                    r.abort()

            ctx.route("**/*", route)
            page = ctx.new_page()
            dialogs = []
            page.on("dialog", lambda dlg: (dialogs.append(dlg.message), dlg.dismiss()))
            page.goto(path.resolve().as_uri(), wait_until="load", timeout=120_000)
            expected = int(page.get_attribute("body", "data-figures"))
            page.wait_for_function(
                f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {expected}",
                timeout=120_000,
            )
            drawn = page.evaluate(
                "() => [...document.querySelectorAll('div.plotly-graph-div')]"
                ".filter(d => d.classList.contains('js-plotly-plot') && d.querySelector('svg.main-svg')"
                " && d.getBoundingClientRect().height > 50).length"
            )
            flags = page.evaluate("() => ({pwned: window.__pwned || null, plotly: typeof window.Plotly})")
            page.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)
        finally:
            browser.close()
    return expected, drawn, blocked, flags, dialogs


browser = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium"
)


@pytest.mark.browser
@browser
def test_report_renders_offline(hv_report):
    path, html = hv_report
    expected, drawn, blocked, flags, _ = _open_offline(path, "report_house_votes_84")
    assert expected == _figure_count(html) >= 12
    assert drawn == expected, f"{drawn} of {expected} figures drawn"
    assert flags["plotly"] == "object"
    assert not blocked, blocked


@pytest.mark.browser
@browser
def test_hostile_report_runs_no_injected_code(hostile_report):
    path, _ = hostile_report
    expected, drawn, _, flags, dialogs = _open_offline(path, "report_hostile_names")
    assert drawn == expected
    assert flags["pwned"] is None and not dialogs


def test_home_page_offers_the_report():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception and not at.error
    assert "dl_report" not in [b.key for b in at.get("download_button")]  # opening the page builds nothing
    at.button(key="report_build").click().run()
    assert not at.exception and not at.error
    assert "dl_report" in [b.key for b in at.get("download_button")]
    at.run()  # a rerun of the same data, network and settings: the download stays, no second click
    assert "dl_report" in [b.key for b in at.get("download_button")]
    assert "report_build" not in [b.key for b in at.button]


def test_report_key_follows_the_cpts_and_settings():
    """The app's report is kept per data, structure, CPTs and settings: changing any one changes its key."""
    from dataclasses import replace

    from bnfk_core import load_csv
    from bnfk_core.learning.recipe import learn_recipe
    from bnfk_ui.sections.report import report_key

    d = load_csv(ROOT / "sample_data" / "house_votes_84.csv", class_column="class", missing_policy="category")
    m = learn_recipe(d.without_class()).model
    base = report_key(d, m, {"proto_k": 20}, "tree")
    assert report_key(d, m, {"proto_k": 20}, "tree") == base
    assert report_key(d, m, {"proto_k": 21}, "tree") != base
    assert report_key(d, m, {"proto_k": 20}, "hand-drawn") != base
    cpts = list(m.cpts)
    cpts[0] = cpts[0][:, ::-1].copy()  # another CPT of the same shape
    assert report_key(d, replace(m, cpts=tuple(cpts)), {"proto_k": 20}, "tree") != base


def test_report_export_figures_and_cli_are_streamlit_free():
    """The CLI imports bnfk_core.views.report; it, bnfk_core.views.export and every figure module must not
    pull in Streamlit."""
    import subprocess
    import sys

    code = (
        "import importlib, pkgutil, sys, bnfk_core.cli.main, bnfk_core.views.report, bnfk_core.views.export, "
        "bnfk_core.views.figures\n"
        "for m in pkgutil.iter_modules(bnfk_core.views.figures.__path__): "
        "importlib.import_module('bnfk_core.views.figures.' + m.name)\n"
        "print('streamlit' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@pytest.mark.browser
@browser
def test_app_report_and_png_downloads():
    """One click on Home → Report (HTML) gives the report of the current session; the Kernel page's figure
    menu gives a PNG at slide size (when kaleido and a browser are there, as requirements.txt and CI
    provide)."""
    from browser_helpers import streamlit_server

    sync_api = pytest.importorskip("playwright.sync_api")
    with streamlit_server("streamlit_report.log") as (url, _proc):
        with sync_api.sync_playwright() as p:
            b = p.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"]
            )
            try:
                page = b.new_page(accept_downloads=True, viewport={"width": 1400, "height": 1600})
                page.goto(url, wait_until="domcontentloaded")
                page.get_by_role("button", name="Build the report (HTML)").click(timeout=90_000)
                button = page.get_by_role("button", name="Report (HTML)", exact=True)
                button.wait_for(timeout=240_000)
                with page.expect_download(timeout=240_000) as dl:
                    button.click()
                assert dl.value.suggested_filename == "house_votes_84_report.html"
                html = Path(dl.value.path()).read_text(encoding="utf-8")
                for sid in SECTIONS:
                    _section(html, sid)
                assert "Chow–Liu tree" in html and _figure_count(html) >= 12
                from bnfk_core.views import export

                if export.image_export_problem() is None:
                    page.goto(url + "/kernel", wait_until="domcontentloaded")
                    page.get_by_text("Why are two rows similar?").wait_for(timeout=90_000)
                    page.get_by_role("button", name="Heatmap").first.click()
                    png = page.get_by_role("button", name="PNG (3200×1800)")
                    png.wait_for(timeout=30_000)
                    with page.expect_download(timeout=120_000) as dl:
                        png.click()
                    assert Path(dl.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            finally:
                b.close()


def test_report_imputation_benchmarks_a_sample_of_imp_rows_rows():
    """As the Imputation page, the report's benchmark runs on ``imp_rows`` rows sampled with the seed (all
    rows when ``imp_rows`` is at least the table's), and says so."""
    from bnfk_core.views import report

    d = load_csv(ROOT / "sample_data" / "house_votes_84.csv", class_column="class", missing_policy="category")
    feats = d.without_class()
    s = {**report.REPORT_DEFAULTS, "imp_rows": 120, "imp_methods": ["mode"], "imp_test": [0.3]}
    s["imp_missing"] = [0.3]
    html = report._imputation_section(report.Report("t"), d, feats, s)
    assert "120 of the 435 rows" in html
    full = report._imputation_section(report.Report("t"), d, feats, {**s, "imp_rows": 10**6})
    assert "435 of the 435 rows" in full and full != html
