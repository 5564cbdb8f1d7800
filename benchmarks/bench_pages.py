"""Page settle times on a real-sized table (issue "Live on real data"): every page of the app on a 2,000 × 37
ALARM sample with 5 % blank cells, measured with Streamlit's AppTest (the script runs in-process; a browser adds
its drawing on top, see benchmarks/results/browser_live.json).

    python benchmarks/bench_pages.py                      # the ALARM sample of benchmarks/alarm_sample.py
    python benchmarks/bench_pages.py --csv my_table.csv   # any CSV (no class column)
    python benchmarks/bench_pages.py --pages prototypes,imputation --timeout 60
    python benchmarks/bench_pages.py --browser            # plus Structure, Prototypes, Imputation in Chromium

Each page runs in its own process: the data are loaded first (the home page's run, not timed: "once the data
are loaded"), then the page's first visit (a click in the navigation; the home page: its next run) is timed, then its heavy button where it has one (Prototypes: Find
prototypes; Imputation: the default benchmark; Structure: an arc edit; Clustering: nothing, it draws on
opening).  A page that does not settle within ``--timeout`` seconds is recorded as ``"> T s"`` and its process is
stopped.  Target (README): every page <= 2 s after a click once the data are loaded.  Writes
``benchmarks/results/pages.json`` with the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: page file -> the click timed after the first visit: (what, widget kind, key or label) or None
CLICKS = {
    "home.py": None,
    "data.py": None,
    "structure.py": ("arc edit (Add arc)", "button", "Add arc"),
    "kernel.py": None,
    "clustering.py": None,
    "imputation.py": ("default benchmark (Run the benchmark)", "button", "imp_run"),
    "prototypes.py": ("Find prototypes (k = 20)", "button", "proto_run"),
    "segments.py": None,
    "results.py": None,
    "kernel_zoo.py": None,
}


def _sample_csv(path: Path) -> Path:
    """The ALARM sample of benchmarks/alarm_sample.py (2,000 rows, 5 % blank cells, seed 0) written to ``path``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from alarm_sample import alarm_sample
    except ImportError:
        raise SystemExit("benchmarks/alarm_sample.py is not here yet; pass --csv PATH of a table to time") from None
    alarm_sample(rows=2000, missing=0.05, seed=0).to_csv(path, index=False)
    return path


def _clean(at) -> list[str]:
    return [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]


def _timed_run(out: dict, what: str, run, timeout: float) -> bool:
    """Time ``run()`` into ``out[what]``; a run past ``timeout`` is recorded as such (False)."""
    t0 = time.perf_counter()
    try:
        run()
    except RuntimeError as exc:                      # AppTest: "script run timed out"
        out[what] = f"> {timeout:.0f} s"
        out.setdefault("errors", []).append(str(exc)[:200])
        return False
    out[what] = time.perf_counter() - t0
    return True


def one_page(page: str, csv: str, timeout: float) -> dict:
    """Load the data (home page, not timed), then time ``page``'s first visit and its click (this process)."""
    sys.path.insert(0, str(ROOT))
    from streamlit.testing.v1 import AppTest

    state = {"dataset": "upload", "upload": (Path(csv).name, Path(csv).read_bytes()), "class_column": None,
             "missing_policy": "missing"}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for k, v in state.items():
        at.session_state[k] = v
    t0 = time.perf_counter()
    at.run()
    out = {"load data (home page, not a target)": time.perf_counter() - t0}
    if page != "home.py":
        at.switch_page(f"pages/{page}")              # a click in the navigation, same session
    out["errors"] = []
    if not _timed_run(out, "first visit", at.run, timeout):
        return out
    out["errors"] = _clean(at)
    print(json.dumps(out), flush=True)               # what is known if the click never settles
    click = CLICKS.get(page)
    if click and not out["errors"]:
        what, kind, ref = click
        widget = next((b for b in at.button if b.key == ref or b.label == ref), None)
        if widget is None:
            out["errors"].append(f"no {kind} {ref}")
        else:
            out[what] = f"> {timeout:.0f} s"
            print(json.dumps(out), flush=True)
            if _timed_run(out, what, widget.click().run, timeout):
                out["errors"] += _clean(at)
    return out


#: pages timed in the browser: (navigation link, text shown once the visit is drawn, button to click after the
#: visit or None, text shown once its analysis is drawn)
BROWSER_PAGES = (("Structure", "Fisher kernel, live", None, None),
                 ("Prototypes", "Subset size k", "Find prototypes", "MMD of the subset"),
                 ("Imputation", "runs per method", "Run the benchmark", "Macro averages"))


def browser_times(csv: Path, timeout: float) -> dict:
    """A real browser (headless Chromium): upload ``csv`` on the home page (not timed), then for each page of
    :data:`BROWSER_PAGES` the time from the navigation click, and from its button's click, until the
    Running/Stop widget is gone and the charts are drawn."""
    sys.path.insert(0, str(ROOT / "tests"))
    from browser_helpers import streamlit_server
    from playwright.sync_api import sync_playwright

    idle = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"

    def settle(page, text: str | None = None) -> None:
        """Until ``text`` is shown and the Running/Stop widget is gone (it appears a moment after a click)."""
        if text:
            page.get_by_text(text).first.wait_for(timeout=timeout * 1000)
        page.wait_for_timeout(300)
        page.wait_for_function(idle, timeout=timeout * 1000)

    out: dict = {}
    with streamlit_server("bench_pages.log") as (url, _proc), sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--headless"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector(".js-plotly-plot", timeout=90_000)
        settle(page)
        page.get_by_test_id("stSelectbox").filter(has_text="Bundled sample or your own file").first.click()
        page.get_by_role("option", name="Upload your own CSV…").first.click()
        settle(page)
        page.locator('[data-testid="stMainBlockContainer"] [data-testid="stFileUploader"] input[type="file"]') \
            .set_input_files(str(csv))
        page.get_by_text(f"Loaded {csv.name}").first.wait_for(timeout=timeout * 1000)
        settle(page)
        for link, drawn, button, done in BROWSER_PAGES:
            t0 = time.perf_counter()
            try:
                page.get_by_role("link", name=link, exact=True).first.click()
                settle(page, drawn)
                out[f"{link}: first visit"] = time.perf_counter() - t0
                if button:
                    t0 = time.perf_counter()
                    page.get_by_role("button", name=button).first.click()
                    settle(page, done)
                    out[f"{link}: {button}"] = time.perf_counter() - t0
            except Exception as exc:  # noqa: BLE001 - a step past the timeout: recorded, the next page goes on
                out[f"{link}: stopped"] = f"> {timeout:.0f} s ({type(exc).__name__})"
                page.goto(url, wait_until="domcontentloaded")
                settle(page)
        browser.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", help="the table to time (default: the ALARM sample, 2,000 × 37, 5 %% blank cells)")
    ap.add_argument("--pages", default=",".join(p[:-3] for p in CLICKS),
                    help="comma-separated page names ('' for none)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a page may take before it is stopped")
    ap.add_argument("--browser", action="store_true", help="also time a few pages in headless Chromium")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("-o", "--output", default=str(RESULTS / "pages.json"))
    args = ap.parse_args()
    if args.one:                                     # the child process: one page, JSON on stdout
        print(json.dumps(one_page(args.one, args.csv, args.timeout)), flush=True)
        os._exit(0)                                  # a timed-out script run's thread would keep the process
    csv = Path(args.csv) if args.csv else _sample_csv(RESULTS / "_alarm_sample.csv")
    report = {"data": str(csv.name), "timeout_seconds": args.timeout, "pages": {}}
    for name in filter(None, args.pages.split(",")):
        page = f"{name.strip()}.py"
        cmd = [sys.executable, __file__, "--one", page, "--csv", str(csv), "--timeout", str(args.timeout)]
        try:
            stdout = subprocess.run(cmd, capture_output=True, text=True, timeout=2 * args.timeout + 60,
                                    cwd=ROOT).stdout
        except subprocess.TimeoutExpired as exc:     # a run that ignores AppTest's timeout: stopped here
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
        res = json.loads(lines[-1]) if lines else {"errors": ["no result (stopped)"]}
        report["pages"][name] = res
        shown = ", ".join(f"{k} {v:.2f} s" for k, v in res.items() if isinstance(v, float))
        print(f"{name:12s} {shown} {'; '.join(map(str, res.get('errors', [])))[:200]}", flush=True)
    if args.browser:
        report["browser"] = browser_times(csv, args.timeout)
        for k, v in report["browser"].items():
            print(f"browser      {k}: {v:.2f} s" if isinstance(v, float) else f"browser      {k}: {v}", flush=True)
    report["load_average"] = os.getloadavg()
    if not args.csv:
        csv.unlink(missing_ok=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=1))
    print(f"load average {report['load_average'][0]:.1f}; wrote {args.output}")


if __name__ == "__main__":
    main()
