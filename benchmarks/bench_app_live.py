"""Live-demo timings of the app (issue "Live structure"), measured with Streamlit's AppTest (the script runs
in-process; a browser adds its rendering on top, see benchmarks/results/browser_live.json).

    python benchmarks/bench_app_live.py        # writes benchmarks/results/app_live.json

- Segments lab on house_votes_84 (300 sampled rows): first render (cold caches, modules already imported), the
  same page again
  (nothing changed), a segment change (single arc -> V-structure), a variable change, and the gallery of
  all five segments.
- Structure page: one arc edit (Edit arcs tab -> Add arc) -> settled page with the live heatmap, scores and
  contributions, on house_votes_84 (435 rows) and car (1,728 rows), and an Undo.

Targets (README): Segments lab first render <= 2 s, a segment or variable change <= 1 s, gallery <= 3 s;
Structure page arc edit <= 1 s at N <= 2,000.  Each number is the median of ``--repeats`` fresh sessions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _clean(at) -> None:
    if at.exception or at.error:
        raise SystemExit(f"page failed: {[e.value for e in at.exception]} {[e.value for e in at.error]}")


def segments_lab() -> dict:
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).switch_page("pages/segments.py")
    at.session_state["seg_rows"] = 300
    out = {"first render": _timed(at.run)}
    _clean(at)
    out["rerun, nothing changed"] = _timed(at.run)
    out["segment change (V-structure)"] = _timed(lambda: at.selectbox(key="w_seg_kind").set_value("v").run())
    _clean(at)
    options = at.multiselect(key="w_seg_vars").options
    current = list(at.session_state["seg_vars"])
    other = next(o for o in options if o not in current)
    out["variable change"] = _timed(
        lambda: at.multiselect(key="w_seg_vars").set_value(current[:2] + [other]).run()
    )
    _clean(at)
    out["gallery (all five)"] = _timed(lambda: at.button(key="seg_gallery_run").click().run())
    _clean(at)
    return out


def structure_edit(dataset: str | None) -> dict:
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).switch_page("pages/structure.py")
    if dataset:
        cat = json.loads((ROOT / "sample_data" / "catalog.json").read_text())[dataset]
        at.session_state["dataset"] = dataset
        at.session_state["class_column"] = cat["class_column"]
        at.session_state["missing_policy"] = cat.get("missing_policy", "missing")
    out = {"first render": _timed(at.run)}
    _clean(at)
    empty = [b for b in at.button if b.label == "Start empty"][0]
    out["start empty"] = _timed(empty.click().run)
    nodes = at.selectbox(key="w_add_from").options
    at.selectbox(key="w_add_from").set_value(nodes[0]).run()
    at.selectbox(key="w_add_to").set_value(at.selectbox(key="w_add_to").options[1]).run()
    add = [b for b in at.button if b.label == "Add arc"][0]
    out["arc edit -> settled"] = _timed(add.click().run)
    _clean(at)
    info = at.session_state["_live"][1].last_update
    out["live update (core)"] = info.get("seconds")
    undo = [b for b in at.button if b.label == "Undo"][0]
    out["undo -> settled"] = _timed(undo.click().run)
    _clean(at)
    out["rows"] = int(at.session_state["_live"][2].shape[0])
    return out


def warm_up() -> None:
    """Import everything once (a running server has done so before its first visitor opens a page)."""
    for page in ("segments.py", "structure.py"):
        AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).switch_page(f"pages/{page}").run()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    warm_up()
    runs = {
        "segments lab (house_votes_84, 300 rows)": [segments_lab() for _ in range(args.repeats)],
        "structure page (house_votes_84)": [structure_edit(None) for _ in range(args.repeats)],
        "structure page (car)": [structure_edit("car") for _ in range(args.repeats)],
    }
    med = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    load = os.getloadavg()
    report = {"median_seconds": med, "repeats": args.repeats, "load_average": load, "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "app_live.json").write_text(json.dumps(report, indent=1))
    for name, m in med.items():
        print(name)
        for k, v in m.items():
            print(f"  {k:32s} {v:8.3f}" if isinstance(v, float) else f"  {k:32s} {v}")
    print(f"load average {load[0]:.1f}")


if __name__ == "__main__":
    main()
