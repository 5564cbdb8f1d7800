"""Page settle times on a real-sized table (issue "Live on real data"): every page of the app on a 2,000 × 37
ALARM sample with 5 % blank cells, measured with Streamlit's AppTest (the script runs in-process; a browser adds
its drawing on top, see benchmarks/results/browser_live.json).

    python benchmarks/bench_pages.py                      # the ALARM sample of benchmarks/alarm_sample.py
    python benchmarks/bench_pages.py --csv my_table.csv   # any CSV (no class column)
    python benchmarks/bench_pages.py --pages prototypes,imputation --timeout 60

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", help="the table to time (default: the ALARM sample, 2,000 × 37, 5 %% blank cells)")
    ap.add_argument("--pages", default=",".join(p[:-3] for p in CLICKS), help="comma-separated page names")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a page may take before it is stopped")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("-o", "--output", default=str(RESULTS / "pages.json"))
    args = ap.parse_args()
    if args.one:                                     # the child process: one page, JSON on stdout
        print(json.dumps(one_page(args.one, args.csv, args.timeout)), flush=True)
        os._exit(0)                                  # a timed-out script run's thread would keep the process
    csv = Path(args.csv) if args.csv else _sample_csv(RESULTS / "_alarm_sample.csv")
    report = {"data": str(csv.name), "timeout_seconds": args.timeout, "pages": {}}
    for name in args.pages.split(","):
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
    report["load_average"] = os.getloadavg()
    if not args.csv:
        csv.unlink(missing_ok=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=1))
    print(f"load average {report['load_average'][0]:.1f}; wrote {args.output}")


if __name__ == "__main__":
    main()
