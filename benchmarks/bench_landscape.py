"""Score landscapes: the five-variable landscape and the panel's redraw.

    python benchmarks/bench_landscape.py [--repeats 5]     # writes benchmarks/results/landscape.json

- ``landscape``: every DAG on five variables (29,281) scored by every registered score from cached family
  scores and grouped into Markov equivalence classes (:func:`bnfk_core.learning.landscape.score_landscape`),
  on house_votes_84 (435 rows) and letter (20,000 rows); the steps separately (enumeration, family tables,
  gather, classes); and, for scale, scoring DAGs one by one from scratch (``score_dag`` on 100 graphs,
  extrapolated to all).
- ``surrogate``: the metagraph-kernel fits of orders 1-4 on the five-variable spaces (fixed order: 1,024
  graphs, 512 observed; all DAGs: 29,281 graphs, 1,000 observed) and their predictions.
- ``panel``: the Structure page's Score landscape tab (AppTest): a move of the observed-graphs slider on four
  and on five variables (fixed order and all DAGs).  The slider lives in an ``st.fragment``: in the app a move
  reruns only that fragment (its time, recorded by the page, is the redraw); AppTest reruns the whole page,
  whose time is reported beside it.

Targets: landscape ≤ 1 s; panel redraw ≤ 1 s.  Medians of ``--repeats`` runs; the load average is recorded.
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

import numpy as np  # noqa: E402

from bnfk_core.analyses.landscape import surrogate_study  # noqa: E402
from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.learning.landscape import (
    dag_scores,
    enumerate_dags,
    equivalence_keys,
    family_table,  # noqa: E402
    landscape_scorer,
    score_landscape,
)
from bnfk_core.learning.scores import score_dag  # noqa: E402
from bnfk_core.network.dag import DAG  # noqa: E402
from bnfk_core.registry import SCORES  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def landscape(repeats: int) -> dict:
    out = {}
    for name, opts, variables in (
        ("house_votes_84", {"missing_policy": "category"}, None),
        ("letter", {}, None),
    ):
        data = load_csv(str(ROOT / "sample_data" / f"{name}.csv"), **opts).without_class()
        vs = list(data.variables[:5]) if variables is None else variables
        land = score_landscape(data, vs, "bdeu")
        cols = [data.variables.index(v) for v in vs]
        codes, cards = data.codes[:, cols], [int(data.cardinalities[c]) for c in cols]
        pm, _ = enumerate_dags(5)
        tables = {s: family_table(landscape_scorer(data, vs, s)) for s in SCORES}
        rng = np.random.default_rng(0)
        sample = rng.choice(land.n_dags, 100, replace=False)
        dags = [DAG(vs, land.arcs(g)) for g in sample]
        scratch = _median(lambda: [score_dag(codes, cards, d, s) for d in dags for s in SCORES], 1)
        total = _median(lambda: score_landscape(data, vs, "bdeu"), repeats)
        out[name] = {
            "rows": int(data.n_rows),
            "variables": vs,
            "dags": land.n_dags,
            "classes": land.n_classes,
            "scores": list(SCORES),
            "seconds": total,
            "steps": {
                "enumerate": _median(lambda: enumerate_dags(5), repeats),
                "family tables (all scores)": _median(
                    lambda: [family_table(landscape_scorer(data, vs, s)) for s in SCORES], repeats
                ),
                "gather (all scores)": _median(lambda: [dag_scores(pm, t) for t in tables.values()], repeats),
                "classes": _median(lambda: np.unique(equivalence_keys(pm), return_inverse=True), repeats),
            },
            "from scratch, extrapolated to all DAGs (s)": scratch * land.n_dags / sample.size,
            "speed-up over scoring from scratch": scratch * land.n_dags / sample.size / total,
        }
    return out


def surrogate(repeats: int) -> dict:
    data = load_csv(
        str(ROOT / "sample_data" / "house_votes_84.csv"), missing_policy="category"
    ).without_class()
    land = score_landscape(data, list(data.variables[:5]), "bdeu")
    out = {}
    for fixed, observe in ((True, 512), (False, 1000)):
        key = "fixed order (1,024 graphs)" if fixed else "all DAGs (29,281 graphs)"
        secs = _median(
            lambda: surrogate_study(land, fixed_order=fixed, observe=observe, orders=[1, 2, 3, 4]), repeats
        )
        st_ = surrogate_study(land, fixed_order=fixed, observe=observe, orders=[1, 2, 3, 4])
        out[key] = {
            "observed": observe,
            "seconds (orders 1-4)": secs,
            "rmse": {str(r): v for r, v in st_["rmse"].items()},
            "baseline_rmse": st_["baseline_rmse"],
        }
    return out


def panel(repeats: int) -> dict:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    out = {}
    for label, k, fixed in (
        ("4 variables, fixed order", 4, True),
        ("5 variables, fixed order", 5, True),
        ("5 variables, all DAGs", 5, False),
    ):
        times, first, panel_s, panel_cpu, tab_s = [], [], [], [], []
        for _ in range(repeats):
            st.cache_data.clear()
            st.cache_resource.clear()
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).switch_page(
                "pages/structure.py"
            )
            at.session_state["land_on"] = True
            at.run()
            names = list(at.multiselect(key="land_vars").options)
            t0 = time.perf_counter()
            at.multiselect(key="land_vars").set_value(names[:k])
            at.toggle(key="land_fixed").set_value(fixed).run()
            first.append(time.perf_counter() - t0)
            at.run()
            tab_s.append(at.session_state["land_tab_seconds"])
            slider = at.slider(key="land_observe")
            t0 = time.perf_counter()
            slider.set_value(max(1, slider.value // 2)).run()
            times.append(time.perf_counter() - t0)
            panel_s.append(at.session_state["land_panel_seconds"])
            panel_cpu.append(at.session_state["land_panel_cpu_seconds"])
            if at.exception or at.error:
                raise SystemExit(
                    f"page failed: {[e.value for e in at.exception]} {[e.value for e in at.error]}"
                )
        out[label] = {
            "slider move: the panel's fragment (s)": statistics.median(panel_s),
            "slider move: the fragment's own CPU time, its thread (s)": statistics.median(panel_cpu),
            "slider move: whole Structure page rerun, as AppTest runs it (s)": statistics.median(times),
            "variables/mode change incl. the landscape (s)": statistics.median(first),
            "the whole tab within a page rerun, nothing changed (s)": statistics.median(tab_s),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("-o", "--output", default=str(RESULTS / "landscape.json"))
    args = ap.parse_args()
    load0 = os.getloadavg()
    res = {
        "landscape": landscape(args.repeats),
        "surrogate": surrogate(args.repeats),
        "panel": panel(args.repeats),
    }
    res["targets"] = {"landscape (s)": 1.0, "panel slider move: the fragment (s)": 1.0}
    res["machine"] = {
        "cpus": os.cpu_count(),
        "load_average_start": load0,
        "load_average_end": os.getloadavg(),
    }
    Path(args.output).write_text(json.dumps(res, indent=1))
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
