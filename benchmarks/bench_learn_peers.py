"""Structure learning beside pyAgrum and pgmpy: hill climbing on BIC, same complete table for all.

    python benchmarks/bench_learn_peers.py           # 6 tables -> benchmarks/results/learn_peers.json
    python benchmarks/bench_learn_peers.py --quick   # car and tic_tac_toe -> learn_peers_quick.json
    python benchmarks/bench_learn_peers.py --datasets car,alarm_2000 --repeats 3

Learners (each on the same table: the rows without a missing cell, every column a node, the class too,
every state re-coded to the states observed in those rows, so all three see identical domains):

- ours: ``learn_structure(data, "hc", score="bic")`` -- what ``python -m bnfk_core learn --structure hc
  --score bic`` runs (tabu hill climbing, best of 5 seeded climbs); also ``restarts=0`` (one climb).
- pyAgrum: ``BNLearner`` with ``useScoreBIC`` and ``useGreedyHillClimbing`` (plain greedy climb), with
  ``useLocalSearchWithTabuList`` (its tabu search), and MIIC (its default, constraint based; its DAG is scored
  on BIC too, although it does not optimise it).  One thread (``setNumberOfThreads(1)``).
- pgmpy: ``HillClimbSearch(scoring_method="bic-d")`` (pgmpy 1.x's name of ``BicScore``).

Reported per learner: wall time (median of ``--repeats``, default 3; a peer whose runs exceed ``--budget``
seconds is not repeated, the JSON gives the count), the BIC of its DAG under OUR scorer
(``bnfk_core.learning.scores.score_dag``, natural log) and under pyAgrum's (``BNLearner.score`` summed over the families,
log base 2, times ln 2: the two must agree), the number of arcs and, on the ALARM sample, the structural Hamming
distance (between equivalence classes, ``bnfk_core.network.dag.structural_hamming_distance``) to the true network.
ALARM: 2,000 complete rows sampled from pgmpy's bundled network (``benchmarks/alarm_sample.py``, seed 0).
pyAgrum's timings include building its learner from the table (it reads a CSV it writes); ``learn_dag`` alone is
recorded as well.  ``--cli`` adds whole-process figures of the two command lines on nursery (run in turn); ``--spread N`` adds
how path dependent the climbs are on ALARM (our seeds, pgmpy's ``PYTHONHASHSEED``) to an existing JSON.
pyAgrum and pgmpy are benchmark peers (benchmarks/requirements-peers.txt); a missing one is skipped politely.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bnfk_core.network.dag import DAG, structural_hamming_distance  # noqa: E402
from bnfk_core.data.table import from_codes, load_csv  # noqa: E402
from bnfk_core.learning.structure import learn_structure  # noqa: E402
from bnfk_core.learning.scores import score_dag  # noqa: E402

SAMPLES = ROOT / "sample_data"
RESULTS = ROOT / "benchmarks" / "results"
CATALOG = json.loads((SAMPLES / "catalog.json").read_text())
DATASETS = ["house_votes_84", "car", "tic_tac_toe", "nursery", "mushroom", "alarm_2000"]
QUICK = ["car", "tic_tac_toe"]


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def have(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def complete_table(codes: np.ndarray, variables, source: str):
    """The rows without a missing cell, each column re-coded to its observed states ``s0, s1, ...``."""
    codes = codes[(codes >= 0).all(axis=1)]
    cols, states = [], []
    for j in range(codes.shape[1]):
        _, inv = np.unique(codes[:, j], return_inverse=True)
        cols.append(inv.astype(np.int32))
        states.append([f"s{i}" for i in range(int(inv.max()) + 1)])
    return from_codes(np.column_stack(cols), list(variables), states, None, source)


def load_table(name: str):
    """(data, true DAG or None) for a catalog name or ``alarm_2000``."""
    if name == "alarm_2000":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from alarm_sample import alarm_model
        model = alarm_model()
        sample = model.sample(2000, 0)
        return complete_table(sample.codes, model.variables, "ALARM, 2,000 rows (seed 0)"), model.dag
    c = CATALOG[name]
    d = load_csv(SAMPLES / c["file"], class_column=None, missing_policy=c["missing_policy"],
                 na_values=c.get("na_values"))
    return complete_table(d.codes, d.variables, c["file"]), None


def frame_of(data) -> pd.DataFrame:
    return pd.DataFrame({v: np.asarray(data.states[i], dtype=object)[data.codes[:, i]]
                         for i, v in enumerate(data.variables)})


def timed(fn, repeats: int, budget: float):
    """(median seconds, runs, last result): ``fn()`` up to ``repeats`` times, not again once ``budget`` is spent."""
    secs, out = [], None
    while len(secs) < repeats and (not secs or sum(secs) < budget):
        t0 = time.perf_counter()
        out = fn()
        secs.append(time.perf_counter() - t0)
    return statistics.median(secs), len(secs), out


# ---------------------------------------------------------------------- the learners
def ours(data, restarts: int):
    def run():
        return learn_structure(data, "hc", score="bic", restarts=restarts).dag
    return run


def pyagrum_learner(frame: pd.DataFrame):
    import pyagrum as gum
    learner = gum.BNLearner(frame)
    learner.setNumberOfThreads(1)
    return learner


def pyagrum(frame: pd.DataFrame, algorithm: str):
    def run():
        learner = pyagrum_learner(frame)
        learner.useScoreBIC()
        if algorithm == "greedy":
            learner.useGreedyHillClimbing()
        elif algorithm == "tabu":
            learner.useLocalSearchWithTabuList()
        else:
            learner.useMIIC()
        t0 = time.perf_counter()
        dag = learner.learnDAG()
        run.learn_seconds.append(time.perf_counter() - t0)
        names = learner.names()
        return DAG(list(frame.columns), [(names[a], names[b]) for a, b in dag.arcs()])
    run.learn_seconds = []
    return run


def pgmpy(frame: pd.DataFrame):
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pgmpy.causal_discovery import HillClimbSearch
            hc = HillClimbSearch(scoring_method="bic-d", return_type="dag", show_progress=False)
            hc.fit(frame)
        return DAG(list(frame.columns), [tuple(e) for e in hc.causal_graph_.edges()])
    return run


def pyagrum_bic(frame: pd.DataFrame, dag: DAG) -> float:
    """pyAgrum's BIC of ``dag`` (sum of its local scores, base 2) in nats."""
    learner = pyagrum_learner(frame)
    learner.useScoreBIC()
    parents = dag.parent_indices()
    cols = list(frame.columns)
    return math.log(2) * sum(learner.score(v, [cols[p] for p in parents[i]]) for i, v in enumerate(cols))


def learners(data, frame) -> dict:
    out = {"ours (hc, CLI default: best of 5 climbs)": ours(data, 4), "ours (hc, one climb)": ours(data, 0)}
    if have("pyagrum"):
        out.update({"pyAgrum greedy HC": pyagrum(frame, "greedy"), "pyAgrum tabu search": pyagrum(frame, "tabu"),
                    "pyAgrum MIIC": pyagrum(frame, "miic")})
    if have("pgmpy"):
        out["pgmpy HillClimbSearch"] = pgmpy(frame)
    return out


def bench_table(name: str, repeats: int, budget: float) -> dict:
    data, truth = load_table(name)
    frame = frame_of(data)
    res = {"rows": data.n_rows, "variables": data.n_vars, "learners": {}}
    if truth is not None:
        truth = DAG(list(data.variables), truth.sorted_arcs())
        res["true_network"] = {"arcs": truth.n_arcs, "bic_ours": score_dag(data.codes, data.cardinalities, truth)}
        if have("pyagrum"):
            res["true_network"]["bic_pyagrum"] = pyagrum_bic(frame, truth)
    for label, fn in learners(data, frame).items():
        median, runs, dag = timed(fn, repeats, budget)
        row = {"seconds": median, "runs": runs, "arcs": dag.n_arcs,
               "bic_ours": score_dag(data.codes, data.cardinalities, dag)}
        if getattr(fn, "learn_seconds", None):
            row["learn_dag_seconds"] = statistics.median(fn.learn_seconds)
        if have("pyagrum"):
            row["bic_pyagrum"] = pyagrum_bic(frame, dag)
        if truth is not None:
            row["shd_to_true"] = structural_hamming_distance(dag, truth)
        res["learners"][label] = row
        log(f"  {name:15s} {label:42s} {median:8.2f} s (x{runs})  BIC {row['bic_ours']:12.2f}  "
            f"{row['arcs']:3d} arcs" + (f"  SHD {row['shd_to_true']}" if truth is not None else ""))
    best = max(res["learners"].values(), key=lambda r: r["bic_ours"])["bic_ours"]
    res["best_bic"] = [k for k, r in res["learners"].items() if r["bic_ours"] >= best - 1e-6]
    res["fastest"] = min(res["learners"], key=lambda k: res["learners"][k]["seconds"])
    if "bic_pyagrum" in next(iter(res["learners"].values())):
        res["max_bic_disagreement"] = max(abs(r["bic_ours"] - r["bic_pyagrum"]) for r in res["learners"].values())
    return res


def paired_cli(name: str, tmp: Path, runs: int) -> dict:
    """``python -m bnfk_core learn`` against a pyAgrum one-liner on the same CSV, whole processes run in turn
    (A B A B ..., one warm-up pair not counted): medians of wall seconds (perf_counter) and CPU seconds (the
    children's user + system time from ``resource.getrusage``), and of the pairwise ratios A/B."""
    import resource
    data, _ = load_table(name)
    csv = tmp / f"{name}.csv"
    frame_of(data).to_csv(csv, index=False)
    py = sys.executable
    ours_cmd = [py, "-m", "bnfk_core", "learn", str(csv), "--structure", "hc", "--score", "bic", "-o",
                str(tmp / "m.json"), "--quiet"]
    peer_cmd = [py, "-c", f"import pyagrum as g; L=g.BNLearner({str(csv)!r}); L.setNumberOfThreads(1); "
                          "L.useScoreBIC(); L.useGreedyHillClimbing(); L.learnDAG()"]

    def timed(cmd) -> tuple[float, float]:
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)
        wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

    pairs = [(timed(ours_cmd), timed(peer_cmd)) for _ in range(runs + 1)][1:]
    med = statistics.median
    return {"data": name, "runs": runs, "ours": "python -m bnfk_core learn DATA.csv --structure hc --score bic",
            "peer": "python -c 'pyagrum BNLearner, BIC, greedy hill climbing, 1 thread, learnDAG'",
            "wall_median": {"ours": med(a[0] for a, _ in pairs), "peer": med(b[0] for _, b in pairs)},
            "cpu_median": {"ours": med(a[1] for a, _ in pairs), "peer": med(b[1] for _, b in pairs)},
            "ratio_wall_median": med(a[0] / b[0] for a, b in pairs),
            "ratio_cpu_median": med(a[1] / b[1] for a, b in pairs)}


SHORT = {"ours (hc, CLI default: best of 5 climbs)": "ours hc (5 climbs)", "ours (hc, one climb)": "ours hc (1 climb)",
         "pyAgrum greedy HC": "pyAgrum greedy", "pyAgrum tabu search": "pyAgrum tabu", "pyAgrum MIIC": "pyAgrum MIIC",
         "pgmpy HillClimbSearch": "pgmpy HC"}


def markdown(out: dict) -> str:
    """The docs/BENCHMARKS.md table of a results JSON: seconds, BIC (ours) and arcs per learner and table."""
    names = list(next(iter(out["datasets"].values()))["learners"])
    head = "| table (rows × columns) | " + " | ".join(SHORT.get(n, n) for n in names) + " |"
    lines = [head, "|---" * (len(names) + 1) + "|"]
    for name, r in out["datasets"].items():
        best = max(v["bic_ours"] for v in r["learners"].values())
        cells = []
        for n in names:
            v = r["learners"][n]
            bic = f"{v['bic_ours']:,.1f}"
            bic = f"**{bic}**" if v["bic_ours"] >= best - 1e-6 else bic
            shd = f", SHD {v['shd_to_true']}" if "shd_to_true" in v else ""
            runs = "" if v["runs"] == out["repeats"] else f" ({v['runs']}×)"
            cells.append(f"{v['seconds']:.2f} s{runs}; {bic}; {v['arcs']} arcs{shd}")
        true = r.get("true_network")
        label = f"{name} ({r['rows']:,} × {r['variables']})" + (
            f"; true network {true['bic_ours']:,.1f}, {true['arcs']} arcs" if true else "")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def alarm_spread(seeds: int, hash_seeds: list[int]) -> dict:
    """How path dependent hill climbing is on ALARM: our single climbs with seeds 0..``seeds``-1, and pgmpy's climb
    under each ``PYTHONHASHSEED`` in ``hash_seeds`` (its ties follow the order of a Python set; one process each)."""
    data, truth = load_table("alarm_2000")
    truth = DAG(list(data.variables), truth.sorted_arcs())
    out = {"ours_single_climbs": [], "pgmpy_by_hash_seed": {}}
    for seed in range(seeds):
        dag = learn_structure(data, "hc", score="bic", restarts=0, seed=seed).dag
        out["ours_single_climbs"].append({"seed": seed, "bic_ours": score_dag(data.codes, data.cardinalities, dag),
                                          "arcs": dag.n_arcs, "shd_to_true": structural_hamming_distance(dag, truth)})
        log(f"  ours seed {seed}: BIC {out['ours_single_climbs'][-1]['bic_ours']:.2f}")
    code = ("import sys, json; sys.path.insert(0, 'benchmarks'); import bench_learn_peers as b; "
            "d, t = b.load_table('alarm_2000'); g = b.pgmpy(b.frame_of(d))(); "
            "t = b.DAG(list(d.variables), t.sorted_arcs()); "
            "print(json.dumps({'bic_ours': b.score_dag(d.codes, d.cardinalities, g), 'arcs': g.n_arcs, "
            "'shd_to_true': b.structural_hamming_distance(g, t)}))")
    for h in hash_seeds:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": str(h)})
        out["pgmpy_by_hash_seed"][str(h)] = json.loads(done.stdout.strip().splitlines()[-1])
        log(f"  pgmpy PYTHONHASHSEED={h}: {out['pgmpy_by_hash_seed'][str(h)]}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK)} only")
    ap.add_argument("--datasets", default=None, help=f"comma-separated, from {', '.join(DATASETS)}")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per learner, median reported (default 3)")
    ap.add_argument("--budget", type=float, default=30.0,
                    help="seconds after which a learner is not run again (default 30)")
    ap.add_argument("--cli", action="store_true", help="also time the two command lines on nursery, in turn")
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("--markdown", action="store_true", help="print the docs table of the results JSON and stop")
    ap.add_argument("--spread", type=int, default=0, metavar="N",
                    help="only add to the results JSON: ALARM by our single climbs with seeds 0..N-1 and by pgmpy "
                         "under --hash-seeds")
    ap.add_argument("--hash-seeds", default="1,2", help="PYTHONHASHSEED values of the pgmpy runs of --spread")
    args = ap.parse_args(argv)
    path = Path(args.output) if args.output else RESULTS / ("learn_peers_quick.json" if args.quick else "learn_peers.json")
    if args.markdown:
        print(markdown(json.loads(path.read_text())))
        return 0
    if args.spread:
        out = json.loads(path.read_text())
        hashes = [int(h) for h in args.hash_seeds.split(",") if h.strip()] if have("pgmpy") else []
        load0 = os.getloadavg()
        out["alarm_spread"] = {**alarm_spread(args.spread, hashes), "load_average": [load0[0], os.getloadavg()[0]]}
        path.write_text(json.dumps(out, indent=1, default=float) + "\n")
        print(f"wrote the ALARM spread into {path}")
        return 0
    missing = [m for m in ("pyagrum", "pgmpy") if not have(m)]
    if len(missing) == 2:
        print("pyAgrum and pgmpy are not installed (pip install -r benchmarks/requirements-peers.txt): nothing to "
              "compare; skipped.")
        return 0
    for m in missing:
        print(f"{m} is not installed: its rows are skipped (pip install -r benchmarks/requirements-peers.txt).")
    names = args.datasets.split(",") if args.datasets else (QUICK if args.quick else DATASETS)
    load0, t0 = os.getloadavg(), time.perf_counter()
    versions = {m: __import__(m).__version__ for m in ("pyagrum", "pgmpy") if have(m)}
    out = {"repeats": args.repeats, "budget_seconds": args.budget, "versions": versions, "skipped_peers": missing,
           "datasets": {}}
    learn_structure(load_table("car")[0], "hc", score="bic")          # warm-up (imports, compilation)
    for name in names:
        log(f"{name} ...")
        out["datasets"][name] = bench_table(name, args.repeats, args.budget)
    if args.cli and have("pyagrum"):
        with tempfile.TemporaryDirectory() as tmp:
            out["cli_paired"] = paired_cli("nursery", Path(tmp), 3)
        log(json.dumps(out["cli_paired"]))
    out["total_seconds"] = time.perf_counter() - t0
    out["load_average_start"], out["load_average_end"] = load0, os.getloadavg()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=float) + "\n")
    print(f"{len(names)} tables in {out['total_seconds']:.0f} s (load {load0[0]:.1f} -> "
          f"{out['load_average_end'][0]:.1f}); wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
