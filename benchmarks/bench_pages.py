"""Page settle times on a real-sized table (issue "Live on real data"): every page of the app on a 2,000 × 37
ALARM sample with 5 % blank cells, measured with Streamlit's AppTest (the script runs in-process; a browser
adds its drawing on top, see benchmarks/results/browser_live.json).

    python benchmarks/bench_pages.py                      # the ALARM sample of benchmarks/alarm_sample.py
    python benchmarks/bench_pages.py --csv my_table.csv   # any CSV (no class column)
    python benchmarks/bench_pages.py --pages prototypes,imputation --timeout 60
    # plus Structure, Clustering, Prototypes, Imputation in Chromium
    python benchmarks/bench_pages.py --browser
    # the clicks of BROWSER_CLICKS on an upload in Chromium (first visits, learning, KGV, imputing, report)
    python benchmarks/bench_pages.py --pages '' --browser --clicks --csv upload.csv --baseline /tmp/before
    # medians of 3, and another checkout timed in turn
    python benchmarks/bench_pages.py --repeats 3 --baseline /tmp/before \
        --pages imputation,clustering,structure

Each page runs in its own process: the data are loaded first (the home page's run, not timed: "once the data
are loaded"), then the page's first visit (a click in the navigation; the home page: its next run) is timed,
then its heavy button where it has one (Prototypes: Find prototypes; Imputation: the default benchmark, then
'Impute the missing cells'; Structure: an arc edit;
Clustering: nothing, it draws on opening).  With ``--repeats R`` every page (and the browser run) is timed R
times, each in a fresh process (a fresh server), and the median is reported with every run; ``--baseline DIR``
times another checkout of the app (e.g. ``git archive`` of an older commit) the same way, A B A B ..., so that
the before/after ratios come from one run on the same machine load.  A page that does not settle within
``--timeout`` seconds is recorded as ``"> T s"`` and its process is
stopped.  Target (README): every page <= 2 s after a click once the data are loaded.  Writes
``benchmarks/results/pages.json`` with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: page file -> the clicks timed after the first visit, in turn: (what, widget kind, key or label)
CLICKS = {
    "home.py": (),
    "data.py": (),
    "structure.py": (("arc edit (Add arc)", "button", "Add arc"),),
    "kernel.py": (),
    "clustering.py": (),
    "imputation.py": (
        ("default benchmark (Run the benchmark)", "button", "imp_run"),
        ("Impute my data (Impute the missing cells)", "button", "imp_mine_run"),
    ),
    "prototypes.py": (("Find prototypes (k = 20)", "button", "proto_run"),),
    "segments.py": (),
    "latent_classes.py": (),
    "results.py": (),
    "kernel_zoo.py": (),
}


def _sample_csv(path: Path) -> Path:
    """The ALARM sample of benchmarks/alarm_sample.py (2,000 rows, 5 % blank cells, seed 0) written to
    ``path``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from alarm_sample import alarm_sample
    except ImportError:
        raise SystemExit(
            "benchmarks/alarm_sample.py is not here yet; pass --csv PATH of a table to time"
        ) from None
    alarm_sample(rows=2000, missing=0.05, seed=0).to_csv(path, index=False)
    return path


def _clean(at) -> list[str]:
    return [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]


def _timed_run(out: dict, what: str, run, timeout: float) -> bool:
    """Time ``run()`` into ``out[what]``; a run past ``timeout`` is recorded as such (False)."""
    t0 = time.perf_counter()
    try:
        run()
    except RuntimeError as exc:  # AppTest: "script run timed out"
        out[what] = f"> {timeout:.0f} s"
        out.setdefault("errors", []).append(str(exc)[:200])
        return False
    out[what] = time.perf_counter() - t0
    return True


def one_page(page: str, csv: str, timeout: float, root: Path = ROOT) -> dict:
    """Load the data (home page, not timed), then time ``page``'s first visit and its clicks (this process),
    of the app in the checkout ``root``."""
    sys.path.insert(0, str(root))
    os.chdir(root)
    from streamlit.testing.v1 import AppTest

    state = {
        "dataset": "upload",
        "upload": (Path(csv).name, Path(csv).read_bytes()),
        "class_column": None,
        "missing_policy": "missing",
    }
    at = AppTest.from_file(str(root / "app.py"), default_timeout=timeout)
    for k, v in state.items():
        at.session_state[k] = v
    t0 = time.perf_counter()
    at.run()
    out = {"load data (home page, not a target)": time.perf_counter() - t0}
    if page != "home.py":
        at.switch_page(f"pages/{page}")  # a click in the navigation, same session
    out["errors"] = []
    if not _timed_run(out, "first visit", at.run, timeout):
        return out
    out["errors"] = _clean(at)
    print(json.dumps(out), flush=True)  # what is known if the click never settles
    for what, kind, ref in CLICKS.get(page, ()):
        if out["errors"]:
            break
        widget = next((b for b in at.button if b.key == ref or b.label == ref), None)
        if widget is None:
            out["errors"].append(f"no {kind} {ref}")
            break
        out[what] = f"> {timeout:.0f} s"
        print(json.dumps(out), flush=True)
        if not _timed_run(out, what, widget.click().run, timeout):
            break
        out["errors"] += _clean(at)
    return out


#: pages timed in the browser: (navigation link, text shown once the visit is drawn, button to click after the
#: visit or None, text shown once its analysis is drawn)
BROWSER_PAGES = (
    ("Home", "Where to go next", None, None),
    ("Data", "Preview", None, None),
    ("Structure", "Fisher kernel, live", "Add arc", "Added "),
    ("Clustering", "Clusters used", None, None),
    ("Kernel", "Distribution and map", None, None),
    ("Segments lab", "rows in the same order in all three", None, None),
    ("Prototypes", "Subset size k", "Find prototypes", "MMD of the subset"),
    ("Imputation", "runs per method", "Run the benchmark", "Macro averages"),
    ("Latent classes", "Identifiability", None, None),
    ("Results", "Wall time", None, None),
    ("Kernel zoo", "Average ranks", None, None),
)


#: the clicks a user waits for on an upload, timed in the browser with ``--clicks``, in turn: (step, actions,
#: text shown once it is drawn or None).  Actions: ("link", navigation link[, the page's heading when it is
#: another text]), ("tab", tab name), ("select",
#: the select box's label, option), ("button", name), ("toggle", label).  A first visit waits for the page's
#: heading, then for the page to settle.
BROWSER_CLICKS = (
    ("Structure: first visit", (("link", "Structure"),), None),
    (
        "Structure: Learn structure (hill climbing)",
        (("select", "Method", "Hill climbing"), ("button", "Learn structure")),
        "Last learned",
    ),
    (
        "Structure: KGV tab",
        (("tab", "KGV (mixed data)"), ("toggle", "Compute the KGV dependence")),
        "Structural Hamming distance",
    ),
    ("Kernel: first visit", (("link", "Kernel"),), None),
    ("Compare structures: first visit", (("link", "Compare structures"),), None),
    ("Clustering: first visit", (("link", "Clustering"),), None),
    ("Imputation: first visit", (("link", "Imputation"),), None),
    (
        "Imputation: Impute the missing cells",
        (("tab", "Impute my data"), ("button", "Impute the missing cells")),
        re.compile("cells filled|Imputed cells"),
    ),
    ("Home: first visit", (("link", "Home", "Bayesian-network Fisher kernels"),), None),
    ("Home: Build the report", (("button", "Build the report (HTML)"),), re.compile(r"^Report \(HTML\)$")),
)


def browser_times(csv: Path, timeout: float, root: Path = ROOT, only: str = "", clicks: bool = False) -> dict:
    """A real browser (headless Chromium): upload ``csv`` on the home page (not timed), then for each page of
    :data:`BROWSER_PAGES` the time from the navigation click, and from its button's click, until the
    Running/Stop widget is gone and the charts are drawn (every plotly chart has its SVG); ``only``: a
    comma-separated subset of the navigation links."""
    sys.path.insert(0, str(root / "tests"))  # its streamlit_server serves the app of ``root``
    from browser_helpers import streamlit_server
    from playwright.sync_api import sync_playwright

    idle = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
    drawn_js = (
        "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(c => c.querySelector('.main-svg'))"
    )

    quiet = f"() => ({idle})() && ({drawn_js})()"

    def settle(page, text: str | None = None, hold: float = 0.5) -> float:
        """Until ``text`` is shown, the Running/Stop widget is gone (it appears a moment after a click) and
        every chart is drawn, and this has held for ``hold`` seconds; the moment it began to hold
        (perf_counter)."""
        if text:
            page.get_by_text(text).first.wait_for(timeout=timeout * 1000)
        deadline, since = time.perf_counter() + timeout, None
        while time.perf_counter() < deadline:
            now = time.perf_counter()
            if page.evaluate(quiet):
                since = since or now
                if now - since >= hold:
                    return since
            else:
                since = None
            page.wait_for_timeout(25)
        raise TimeoutError(f"the page did not settle within {timeout:.0f} s")

    out: dict = {}
    with streamlit_server("bench_pages.log") as (url, _proc), sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--headless"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector(".js-plotly-plot", timeout=90_000)
        settle(page)
        page.get_by_test_id("stSelectbox").filter(has_text="Bundled sample or your own file").first.click()
        page.keyboard.type("Upload your")  # a long list draws only the options in view: filter it first
        page.get_by_role("option", name="Upload your own CSV…").first.click()
        settle(page)
        page.locator(
            '[data-testid="stMainBlockContainer"] [data-testid="stFileUploader"] input[type="file"]'
        ).set_input_files(str(csv))
        page.get_by_text(f"Loaded {csv.name}").first.wait_for(timeout=timeout * 1000)
        settle(page)
        wanted = {w.strip() for w in only.split(",") if w.strip()}
        if clicks:
            for step, actions, done in BROWSER_CLICKS:
                if wanted and step.split(":")[0] not in wanted:
                    continue
                try:
                    t0 = _act(page, actions, timeout)
                    out[step] = settle(page, done) - t0
                except Exception as exc:  # noqa: BLE001 - a step past the timeout: recorded, the next goes on
                    out[f"{step}: stopped"] = f"> {timeout:.0f} s ({type(exc).__name__})"
                print(json.dumps(out), flush=True)
            browser.close()
            return out
        for link, drawn, button, done in BROWSER_PAGES:
            if wanted and link not in wanted:
                continue
            t0 = time.perf_counter()
            try:
                page.get_by_role("link", name=link, exact=True).first.click()
                out[f"{link}: first visit"] = settle(page, drawn) - t0
                if button:
                    t0 = time.perf_counter()
                    page.get_by_role("button", name=button).first.click()
                    out[f"{link}: {button}"] = settle(page, done) - t0
            except Exception as exc:  # noqa: BLE001 - a step past the timeout: recorded, the next page goes on
                out[f"{link}: stopped"] = f"> {timeout:.0f} s ({type(exc).__name__})"
                page.goto(url, wait_until="domcontentloaded")
                settle(page)
        browser.close()
    return out


def _act(page, actions, timeout: float) -> float:
    """Do ``actions`` (:data:`BROWSER_CLICKS`) in ``page``; the moment of the last one's click (perf_counter),
    after which the step is timed (a first visit: once its heading is shown)."""
    t0 = time.perf_counter()
    for kind, *what in actions:
        t0 = time.perf_counter()
        if kind == "link":
            page.get_by_role("link", name=what[0], exact=True).first.click()
            page.get_by_role("heading", name=what[-1]).first.wait_for(timeout=timeout * 1000)
        elif kind == "tab":
            page.get_by_role("tab", name=what[0]).first.click()
        elif kind == "select":
            page.get_by_test_id("stSelectbox").filter(has_text=what[0]).first.click()
            page.keyboard.type(what[1][:10])
            page.get_by_role("option", name=what[1]).first.click()
            page.wait_for_timeout(300)
            page.wait_for_function(
                "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout * 1000
            )
        elif kind == "button":
            page.get_by_role("button", name=what[0]).first.click()
        elif kind == "toggle":
            page.get_by_text(what[0]).first.click()
    return t0


def _child(args, csv: Path, root: Path, what: str) -> dict:
    """One fresh process timing ``what`` (a page file, or 'browser') of the app in ``root``; its JSON
    result."""
    cmd = [
        sys.executable,
        __file__,
        "--csv",
        str(csv),
        "--timeout",
        str(args.timeout),
        "--app-root",
        str(root),
    ]
    cmd += ["--browser-only", "--browser-pages", args.browser_pages] if what == "browser" else ["--one", what]
    cmd += ["--clicks"] if what == "browser" and args.clicks else []
    limit = 20 * args.timeout if what == "browser" else 2 * args.timeout + 60
    try:
        stdout = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, cwd=ROOT).stdout
    except subprocess.TimeoutExpired as exc:  # a run that ignores AppTest's timeout: stopped here
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"errors": ["no result (stopped)"]}


def _medians(runs: list[dict]) -> dict:
    """Per timed step: the median over the runs (a step past the timeout in any run: that text), the runs,
    errors."""
    out: dict = {}
    for key in dict.fromkeys(k for r in runs for k in r if k != "errors"):
        vals = [r.get(key) for r in runs]
        out[key] = (
            statistics.median(vals)
            if all(isinstance(v, float) for v in vals)
            else next((v for v in vals if not isinstance(v, float)), None)
        )
    out["runs"] = [{k: v for k, v in r.items() if k != "errors"} for r in runs]
    out["errors"] = sorted({e for r in runs for e in r.get("errors", [])})
    return out


def _show(tag: str, name: str, res: dict) -> None:
    shown = ", ".join(f"{k} {v:.2f} s" for k, v in res.items() if isinstance(v, float))
    print(f"{tag}{name:12s} {shown} {'; '.join(map(str, res.get('errors', [])))[:200]}", flush=True)


def _write(args, csv: Path, roots: dict, names: list, runs: dict, loads: list) -> None:
    """The report of the runs so far (medians per checkout, this / baseline ratios, the load) to
    ``args.output``."""
    report = {
        "data": str(csv.name),
        "timeout_seconds": args.timeout,
        "repeats": len(runs[("this", names[0])]) if names else 0,
        "pages": {},
    }
    for tag in roots:
        part = {n: _medians(runs[(tag, n)]) for n in names if n != "browser"}
        if tag == "this":
            report["pages"] = part
            if "browser" in names:
                report["browser"] = _medians(runs[(tag, "browser")])
        else:
            report["baseline"] = {"checkout": str(roots[tag]), "pages": part}
            if "browser" in names and runs[(tag, "browser")]:
                report["baseline"]["browser"] = _medians(runs[(tag, "browser")])
    if "baseline" in report:  # this / baseline, per step, of the medians

        def part(which: dict, n: str) -> dict:
            return which.get("browser", {}) if n == "browser" else which["pages"][n]

        report["ratio_this_over_baseline"] = {
            n: {
                k: v / part(report["baseline"], n)[k]
                for k, v in part(report, n).items()
                if isinstance(v, float) and isinstance(part(report["baseline"], n).get(k), float)
            }
            for n in names
        }
    report["load_average"] = {"at_the_start_and_after_each_repeat": loads}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--csv", help="the table to time (default: the ALARM sample, 2,000 × 37, 5 %% blank cells)"
    )
    ap.add_argument(
        "--pages", default=",".join(p[:-3] for p in CLICKS), help="comma-separated page names ('' for none)"
    )
    ap.add_argument("--timeout", type=float, default=120, help="seconds a page may take before it is stopped")
    ap.add_argument("--browser", action="store_true", help="also time a few pages in headless Chromium")
    ap.add_argument(
        "--browser-pages",
        default="",
        help="comma-separated navigation links to time in the browser (default: all of BROWSER_PAGES)",
    )
    ap.add_argument(
        "--clicks",
        action="store_true",
        help="in the browser, time the clicks of BROWSER_CLICKS (first visits, learning, KGV, imputing, the "
        "report) instead of BROWSER_PAGES; --browser-pages then picks steps by their page",
    )
    ap.add_argument(
        "--repeats", type=int, default=3, help="fresh processes per page (the median is reported)"
    )
    ap.add_argument(
        "--baseline", help="another checkout of the app to time the same way, in turn with this one"
    )
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--browser-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--app-root", default=str(ROOT), help=argparse.SUPPRESS)
    ap.add_argument("-o", "--output", default=str(RESULTS / "pages.json"))
    args = ap.parse_args()
    if args.one or args.browser_only:  # a child process: one page (or the browser run), JSON on stdout
        root = Path(args.app_root).resolve()
        res = (
            one_page(args.one, args.csv, args.timeout, root)
            if args.one
            else browser_times(Path(args.csv), args.timeout, root, args.browser_pages, args.clicks)
        )
        print(json.dumps(res), flush=True)
        os._exit(0)  # a timed-out script run's thread would keep the process
    csv = Path(args.csv) if args.csv else _sample_csv(RESULTS / "_alarm_sample.csv")
    roots = {"this": ROOT} | ({"baseline": Path(args.baseline).resolve()} if args.baseline else {})
    names = [n.strip() for n in args.pages.split(",") if n.strip()] + (["browser"] if args.browser else [])
    runs: dict = {(tag, n): [] for tag in roots for n in names}
    loads = [os.getloadavg()]
    for _ in range(max(1, args.repeats)):  # A B A B ...: both checkouts see the same drift of the load
        for name in names:
            for tag, root in roots.items():
                res = _child(args, csv, root, "browser" if name == "browser" else f"{name}.py")
                runs[(tag, name)].append(res)
                _show(f"{tag:9s}", name, res)
        loads.append(os.getloadavg())
        _write(
            args, csv, roots, names, runs, loads
        )  # after every repeat: a stopped run keeps what it measured
    if not args.csv:
        csv.unlink(missing_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f}; wrote {args.output}")


if __name__ == "__main__":
    main()
