"""KGV structure score benchmark: a whole KGV hill climb on waveform_5000 and memory against N.

    python benchmarks/bench_kgv.py            # prints a table, writes benchmarks/results/kgv.json
    python benchmarks/bench_kgv.py --child N  # (internal) one statistics build on N rows; prints its peak RSS

- Speed: ``learn_structure(waveform_5000, "hc", score="kgv")`` from scratch (41 variables, 5,000 rows, the 40
  numbers unbinned: incomplete Cholesky per variable, the regularised correlation blocks, then best of 5
  seeded climbs), target ≤ 10 s.  Run with BLAS pinned to one thread (the default: ``kgv.one_blas_thread``
  around the statistics and the search) and with the pin lifted (OpenBLAS's own thread count), same DAG.
- Memory: the statistics on N = 5,000 and 20,000 rows (waveform rows resampled with a little jitter), each in
  its own process: peak RSS above the process's RSS before the build, and tracemalloc's peak of numpy's
  buffers. Linear in N means the ratio of the increments is about the ratio of the N's (4).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.learning import kgv  # noqa: E402
from bnfk_core.learning.kgv import kgv_statistics, raw_numbers  # noqa: E402
from bnfk_core.learning.structure import learn_structure  # noqa: E402

DATA = ROOT / "sample_data" / "waveform_5000.csv"
RESULTS = ROOT / "benchmarks" / "results"
TARGET_SECONDS = 10.0


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(n: int) -> None:
    data = load_csv(DATA, class_column="class")
    rng = np.random.default_rng(0)
    rows = rng.integers(0, data.n_rows, n)
    codes = data.codes[rows]
    numbers = {i: v[rows] + 1e-3 * rng.normal(size=n) for i, v in raw_numbers(data).items()}
    before = _rss_mb()
    tracemalloc.start()
    t0 = time.perf_counter()
    stats, _ = kgv_statistics(codes, data.cardinalities, numbers=numbers)
    secs = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "n": n,
                "rss_before_mb": before,
                "peak_rss_mb": maxrss,
                "rss_increment_mb": maxrss - before,
                "traced_peak_mb": peak,
                "seconds": secs,
                "total_dims": int(sum(stats.dims)),
                "max_rank": int(max(stats.ranks)),
            }
        )
    )


def climb(pinned: bool) -> dict:
    kgv._STATS.clear()
    data = load_csv(DATA, class_column="class")
    ctx = contextlib.nullcontext
    saved = kgv.one_blas_thread
    if not pinned:
        kgv.one_blas_thread = ctx
    try:
        t0 = time.perf_counter()
        with kgv.one_blas_thread() if pinned else ctx():
            res = learn_structure(data, "hc", score="kgv")
        secs = time.perf_counter() - t0
    finally:
        kgv.one_blas_thread = saved
    cls = set(res.dag.parents("class")) | set(res.dag.children("class"))
    return {
        "pinned_blas": pinned,
        "seconds": secs,
        "arcs": res.dag.n_arcs,
        "score": res.score,
        "class_neighbours": sorted(cls, key=lambda v: int(v[1:])),
        "noise_arcs_to_class": sorted(v for v in cls if int(v[1:]) >= 22),
        "arcs_list": [list(a) for a in res.dag.sorted_arcs()],
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(int(sys.argv[2]))
        return
    load = os.getloadavg()
    runs = [climb(True), climb(False), climb(True), climb(False)]
    pinned = [r for r in runs if r["pinned_blas"]]
    free = [r for r in runs if not r["pinned_blas"]]
    same = all(r["arcs_list"] == runs[0]["arcs_list"] for r in runs)
    mem = []
    for n in (5000, 20000):
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, check=True
        )
        mem.append(json.loads(out.stdout.strip().splitlines()[-1]))
    ratio_rss = mem[1]["rss_increment_mb"] / max(mem[0]["rss_increment_mb"], 1e-9)
    ratio_traced = mem[1]["traced_peak_mb"] / max(mem[0]["traced_peak_mb"], 1e-9)
    result = {
        "what": "KGV hill climb (score kgv, best of 5 seeded climbs) on waveform_5000, numbers unbinned; "
        "memory of the KGV statistics at two N",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "loadavg_at_start": load},
        "climb": {
            "seconds_pinned": [r["seconds"] for r in pinned],
            "seconds_unpinned": [r["seconds"] for r in free],
            "median_pinned": float(np.median([r["seconds"] for r in pinned])),
            "median_unpinned": float(np.median([r["seconds"] for r in free])),
            "target_seconds": TARGET_SECONDS,
            "same_dag_every_run": same,
            "arcs": runs[0]["arcs"],
            "class_neighbours": runs[0]["class_neighbours"],
            "noise_arcs_to_class": runs[0]["noise_arcs_to_class"],
        },
        "memory": {
            "runs": mem,
            "n_ratio": 4.0,
            "rss_increment_ratio": ratio_rss,
            "traced_peak_ratio": ratio_traced,
        },
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "kgv.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    c = result["climb"]
    print(
        f"load {load[0]:.1f}  KGV hill climb on waveform_5000: pinned {c['median_pinned']:.2f} s, "
        f"unpinned {c['median_unpinned']:.2f} s (target {TARGET_SECONDS:.0f} s), {c['arcs']} arcs, "
        f"same DAG: {same}, noise arcs to class: {c['noise_arcs_to_class']}"
    )
    for m in mem:
        print(
            f"N={m['n']:>6}: statistics {m['seconds']:.2f} s, peak RSS +{m['rss_increment_mb']:.0f} MB, "
            f"traced peak {m['traced_peak_mb']:.0f} MB"
        )
    print(f"ratios for 4x rows: RSS increment {ratio_rss:.2f}, traced peak {ratio_traced:.2f}")


if __name__ == "__main__":
    main()
