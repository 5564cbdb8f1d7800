"""Structure search beside pgmpy and pyAgrum on samples of the repository networks, one scorer for every DAG.

    # the full grid -> learn_peers_repository.json
    python benchmarks/bench_learn_peers.py
    python benchmarks/bench_learn_peers.py --rows 5000 --seeds 0,1  # the grid of the docs table
    python benchmarks/bench_learn_peers.py --nets asia,alarm --rows 1000 --seeds 0
    python benchmarks/bench_learn_peers.py --markdown               # print the docs table of the JSON

The grid (default): every discrete repository network pgmpy bundles with at most 100 variables
(``pgmpy.utils.get_example_model``: asia, cancer, earthquake, sachs, survey, alarm, child, insurance, water,
mildew, barley, hailfinder, hepar2, win95pts) x N = 1,000 / 5,000 / 20,000 rows x seeds 0-4.  Each sample is
drawn by pgmpy (``DiscreteBayesianNetwork.simulate(N, seed=seed)``); every column is re-coded to the states
the sample shows, so every learner sees identical domains.  Learners, each on that table:

- bnfk ``hc``: ``learn_structure(data, "hc", score="bic", seed=seed)`` -- what ``python -m bnfk_core learn
  --structure hc`` runs (iterated tabu search); and bnfk ``hc-greedy`` (best of 5 greedy climbs, the former
  default);
- pgmpy: ``HillClimbSearch(scoring_method="bic-d")`` (pgmpy 1.x's BIC; its tabu list of 100 moves);
- pyAgrum: ``BNLearner`` with ``useScoreBIC`` and ``useGreedyHillClimbing``, and with
  ``useLocalSearchWithTabuList`` (its tabu search), one thread.

Every DAG is scored by ONE independent scorer, pgmpy's ``BIC`` (``pgmpy.structure_score.BIC``, natural log) on
the sample; SHD is the structural Hamming distance between the learned DAG's CPDAG and the true network's
(``bnfk_core.network.dag.structural_hamming_distance``); CPU seconds are ``time.process_time()`` around the
learner's call (bnfk's includes counting its table; pyAgrum's includes building its learner from the frame).

``--tables`` runs the earlier comparison on the bundled UCI tables and a 2,000-row ALARM sample (ours, pyAgrum
greedy / tabu / MIIC, pgmpy) -> learn_peers.json; ``--cli`` and ``--spread N`` belong to that mode.
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

from bnfk_core.data.table import from_codes, load_csv  # noqa: E402
from bnfk_core.learning.scores import score_dag  # noqa: E402
from bnfk_core.learning.structure import learn_structure  # noqa: E402
from bnfk_core.network.dag import DAG, structural_hamming_distance  # noqa: E402

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
    d = load_csv(
        SAMPLES / c["file"],
        class_column=None,
        missing_policy=c["missing_policy"],
        na_values=c.get("na_values"),
    )
    return complete_table(d.codes, d.variables, c["file"]), None


def frame_of(data) -> pd.DataFrame:
    return pd.DataFrame(
        {v: np.asarray(data.states[i], dtype=object)[data.codes[:, i]] for i, v in enumerate(data.variables)}
    )


def timed(fn, repeats: int, budget: float):
    """(median seconds, runs, last result): ``fn()`` up to ``repeats`` times, not again once ``budget`` is
    spent."""
    secs, out = [], None
    while len(secs) < repeats and (not secs or sum(secs) < budget):
        t0 = time.perf_counter()
        out = fn()
        secs.append(time.perf_counter() - t0)
    return statistics.median(secs), len(secs), out


# ---------------------------------------------------------------------- the learners
def ours(data, restarts: int | None, method: str = "hc-greedy"):
    def run():
        return learn_structure(data, method, score="bic", restarts=restarts).dag

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
    out = {
        "ours (hc, CLI default: iterated tabu search)": ours(data, None, "hc"),
        "ours (hc-greedy: best of 5 climbs)": ours(data, 4),
        "ours (hc-greedy, one climb)": ours(data, 0),
    }
    if have("pyagrum"):
        out.update(
            {
                "pyAgrum greedy HC": pyagrum(frame, "greedy"),
                "pyAgrum tabu search": pyagrum(frame, "tabu"),
                "pyAgrum MIIC": pyagrum(frame, "miic"),
            }
        )
    if have("pgmpy"):
        out["pgmpy HillClimbSearch"] = pgmpy(frame)
    return out


def bench_table(name: str, repeats: int, budget: float) -> dict:
    data, truth = load_table(name)
    frame = frame_of(data)
    res = {"rows": data.n_rows, "variables": data.n_vars, "learners": {}}
    if truth is not None:
        truth = DAG(list(data.variables), truth.sorted_arcs())
        res["true_network"] = {
            "arcs": truth.n_arcs,
            "bic_ours": score_dag(data.codes, data.cardinalities, truth),
        }
        if have("pyagrum"):
            res["true_network"]["bic_pyagrum"] = pyagrum_bic(frame, truth)
    for label, fn in learners(data, frame).items():
        median, runs, dag = timed(fn, repeats, budget)
        row = {
            "seconds": median,
            "runs": runs,
            "arcs": dag.n_arcs,
            "bic_ours": score_dag(data.codes, data.cardinalities, dag),
        }
        if getattr(fn, "learn_seconds", None):
            row["learn_dag_seconds"] = statistics.median(fn.learn_seconds)
        if have("pyagrum"):
            row["bic_pyagrum"] = pyagrum_bic(frame, dag)
        if truth is not None:
            row["shd_to_true"] = structural_hamming_distance(dag, truth)
        res["learners"][label] = row
        log(
            f"  {name:15s} {label:42s} {median:8.2f} s (x{runs})  BIC {row['bic_ours']:12.2f}  "
            f"{row['arcs']:3d} arcs" + (f"  SHD {row['shd_to_true']}" if truth is not None else "")
        )
    best = max(res["learners"].values(), key=lambda r: r["bic_ours"])["bic_ours"]
    res["best_bic"] = [k for k, r in res["learners"].items() if r["bic_ours"] >= best - 1e-6]
    res["fastest"] = min(res["learners"], key=lambda k: res["learners"][k]["seconds"])
    if "bic_pyagrum" in next(iter(res["learners"].values())):
        res["max_bic_disagreement"] = max(
            abs(r["bic_ours"] - r["bic_pyagrum"]) for r in res["learners"].values()
        )
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
    ours_cmd = [
        py,
        "-m",
        "bnfk_core",
        "learn",
        str(csv),
        "--structure",
        "hc",
        "--score",
        "bic",
        "-o",
        str(tmp / "m.json"),
        "--quiet",
    ]
    peer_cmd = [
        py,
        "-c",
        f"import pyagrum as g; L=g.BNLearner({str(csv)!r}); L.setNumberOfThreads(1); "
        "L.useScoreBIC(); L.useGreedyHillClimbing(); L.learnDAG()",
    ]

    def timed(cmd) -> tuple[float, float]:
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)
        wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

    pairs = [(timed(ours_cmd), timed(peer_cmd)) for _ in range(runs + 1)][1:]
    med = statistics.median
    return {
        "data": name,
        "runs": runs,
        "ours": "python -m bnfk_core learn DATA.csv --structure hc --score bic",
        "peer": "python -c 'pyagrum BNLearner, BIC, greedy hill climbing, 1 thread, learnDAG'",
        "wall_median": {"ours": med(a[0] for a, _ in pairs), "peer": med(b[0] for _, b in pairs)},
        "cpu_median": {"ours": med(a[1] for a, _ in pairs), "peer": med(b[1] for _, b in pairs)},
        "ratio_wall_median": med(a[0] / b[0] for a, b in pairs),
        "ratio_cpu_median": med(a[1] / b[1] for a, b in pairs),
    }


SHORT = {
    "ours (hc, CLI default: iterated tabu search)": "ours hc (tabu)",
    "ours (hc-greedy: best of 5 climbs)": "ours hc-greedy (5 climbs)",
    "ours (hc-greedy, one climb)": "ours hc-greedy (1 climb)",
    "pyAgrum greedy HC": "pyAgrum greedy",
    "pyAgrum tabu search": "pyAgrum tabu",
    "pyAgrum MIIC": "pyAgrum MIIC",
    "pgmpy HillClimbSearch": "pgmpy HC",
}


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
            f"; true network {true['bic_ours']:,.1f}, {true['arcs']} arcs" if true else ""
        )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def alarm_spread(seeds: int, hash_seeds: list[int]) -> dict:
    """How path dependent hill climbing is on ALARM: our single climbs with seeds 0..``seeds``-1, and pgmpy's
    climb under each ``PYTHONHASHSEED`` in ``hash_seeds`` (its ties follow the order of a Python set; one
    process each)."""
    data, truth = load_table("alarm_2000")
    truth = DAG(list(data.variables), truth.sorted_arcs())
    out = {"ours_single_climbs": [], "pgmpy_by_hash_seed": {}}
    for seed in range(seeds):
        dag = learn_structure(data, "hc-greedy", score="bic", restarts=0, seed=seed).dag
        out["ours_single_climbs"].append(
            {
                "seed": seed,
                "bic_ours": score_dag(data.codes, data.cardinalities, dag),
                "arcs": dag.n_arcs,
                "shd_to_true": structural_hamming_distance(dag, truth),
            }
        )
        log(f"  ours seed {seed}: BIC {out['ours_single_climbs'][-1]['bic_ours']:.2f}")
    code = (
        "import sys, json; sys.path.insert(0, 'benchmarks'); import bench_learn_peers as b; "
        "d, t = b.load_table('alarm_2000'); g = b.pgmpy(b.frame_of(d))(); "
        "t = b.DAG(list(d.variables), t.sorted_arcs()); "
        "print(json.dumps({'bic_ours': b.score_dag(d.codes, d.cardinalities, g), 'arcs': g.n_arcs, "
        "'shd_to_true': b.structural_hamming_distance(g, t)}))"
    )
    for h in hash_seeds:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(h)},
        )
        out["pgmpy_by_hash_seed"][str(h)] = json.loads(done.stdout.strip().splitlines()[-1])
        log(f"  pgmpy PYTHONHASHSEED={h}: {out['pgmpy_by_hash_seed'][str(h)]}")
    return out


# ====================================================================== the repository grid (default mode)
#: every discrete network pgmpy bundles with at most 100 variables (``pgmpy.utils.get_example_model``)
REPOSITORY = (
    "asia",
    "cancer",
    "earthquake",
    "sachs",
    "survey",
    "alarm",
    "child",
    "insurance",
    "water",
    "mildew",
    "barley",
    "hailfinder",
    "hepar2",
    "win95pts",
)
ROWS, SEEDS = (1000, 5000, 20000), (0, 1, 2, 3, 4)
REPO_LEARNERS = ("bnfk hc", "bnfk hc-greedy", "pgmpy HC", "pyAgrum greedy", "pyAgrum tabu")
_MODELS: dict = {}


def repository_model(name: str):
    if name not in _MODELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pgmpy.utils import get_example_model

            _MODELS[name] = get_example_model(name)
    return _MODELS[name]


def repository_sample(name: str, rows: int, seed: int):
    """(table, true DAG, pandas frame): ``rows`` rows pgmpy samples from network ``name`` with ``seed``."""
    model = repository_model(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = model.simulate(int(rows), seed=int(seed), show_progress=False)
    cols = sorted(df.columns)
    codes = np.column_stack([pd.Categorical(df[c].astype(str)).codes for c in cols]).astype(np.int32)
    data = complete_table(codes, cols, f"{name}, {rows} rows (seed {seed})")
    truth = DAG(cols, [(u, v) for u, v in model.edges()])
    return data, truth, frame_of(data)


def pgmpy_bic(frame: pd.DataFrame, dag: DAG) -> float:
    """pgmpy's BIC (``pgmpy.structure_score.BIC``, natural log) of ``dag`` on ``frame``: the one scorer."""
    from pgmpy.structure_score import BIC

    scorer = BIC(frame)
    cols = list(frame.columns)
    parents = dag.parent_indices()
    return float(sum(scorer.local_score(v, tuple(cols[p] for p in parents[i])) for i, v in enumerate(cols)))


def repo_learner(label: str, data, frame, seed: int):
    if label == "bnfk hc":
        return lambda: learn_structure(data, "hc", score="bic", seed=seed).dag
    if label == "bnfk hc-greedy":
        return lambda: learn_structure(data, "hc-greedy", score="bic", seed=seed).dag
    if label == "pgmpy HC":
        return pgmpy(frame)
    return pyagrum(frame, label.split()[-1])


def available(label: str) -> bool:
    return (
        have("pgmpy")
        if label.startswith("pgmpy")
        else have("pyagrum")
        if label.startswith("pyAgrum")
        else True
    )


def bench_repository(name: str, rows: int, seed: int, learners) -> dict:
    data, truth, frame = repository_sample(name, rows, seed)
    out = {
        "net": name,
        "rows": rows,
        "seed": seed,
        "variables": data.n_vars,
        "true_bic": pgmpy_bic(frame, truth),
        "true_arcs": truth.n_arcs,
        "learners": {},
    }
    for label in learners:
        fn = repo_learner(label, data, frame, seed)
        t0 = time.process_time()
        dag = fn()
        cpu = time.process_time() - t0
        row = {
            "cpu_seconds": cpu,
            "bic": pgmpy_bic(frame, dag),
            "arcs": dag.n_arcs,
            "shd": structural_hamming_distance(dag, truth),
        }
        out["learners"][label] = row
        log(
            f"  {name:11s} N={rows:<6d} seed {seed}  {label:15s} BIC {row['bic']:14.2f}  SHD {row['shd']:3d} "
            " "
            f"{row['arcs']:3d} arcs  {cpu:7.2f} CPU-s"
        )
    peers = [r["bic"] for k, r in out["learners"].items() if not k.startswith("bnfk")]
    if peers and "bnfk hc" in out["learners"]:
        out["hc_minus_best_peer"] = out["learners"]["bnfk hc"]["bic"] - max(peers)
    return out


def repository_markdown(out: dict) -> str:
    """The docs table: per net x rows x seed, every learner's pgmpy BIC (best in bold), SHD and CPU
    seconds."""
    labels = out["learners"]
    lines = [
        "| net (vars), N, seed | " + " | ".join(labels) + " | bnfk hc − best peer |",
        "|---" * (len(labels) + 2) + "|",
    ]
    for r in out["runs"]:
        best = max(v["bic"] for v in r["learners"].values())
        cells = []
        for lab in labels:
            v = r["learners"].get(lab)
            if v is None:
                cells.append("–")
                continue
            bic = f"{v['bic']:,.1f}"
            cells.append(
                f"{'**' + bic + '**' if v['bic'] >= best - 1e-6 else bic}; SHD {v['shd']}; "
                f"{v['cpu_seconds']:.1f} s"
            )
        gap = r.get("hc_minus_best_peer")
        lines.append(
            f"| {r['net']} ({r['variables']}), {r['rows']:,}, {r['seed']} | "
            + " | ".join(cells)
            + f" | {'' if gap is None else f'{gap:+,.1f}'} |"
        )
    return "\n".join(lines)


def repository_summary(out: dict, tol: float = 0.5) -> str:
    """The docs summary: per N, the net x seed pairs, on how many bnfk ``hc``'s BIC is at least the best
    peer's (within ``tol`` nats) and strictly higher, its SHD at most the best peer's, the largest CPU seconds
    of
    bnfk ``hc`` and of each peer, and every miss with its numbers."""
    lines = [
        "| N | seeds | pairs | hc ≥ best peer (0.5 nats) | hc higher | misses | hc SHD ≤ best peer's | "
        "max CPU-s: " + " / ".join(out["learners"]) + " |",
        "|---" * 8 + "|",
    ]
    misses = []
    for rows in sorted({r["rows"] for r in out["runs"]}):
        runs = [r for r in out["runs"] if r["rows"] == rows and "hc_minus_best_peer" in r]
        if not runs:
            continue
        gaps = [r["hc_minus_best_peer"] for r in runs]
        shd = sum(
            r["learners"]["bnfk hc"]["shd"]
            <= min(v["shd"] for k, v in r["learners"].items() if not k.startswith("bnfk"))
            for r in runs
        )
        cpu = " / ".join(
            f"{max(r['learners'][lab]['cpu_seconds'] for r in runs if lab in r['learners']):.1f}"
            if any(lab in r["learners"] for r in runs)
            else "–"
            for lab in out["learners"]
        )
        seeds = sorted({r["seed"] for r in runs})
        lines.append(
            f"| {rows:,} | {', '.join(map(str, seeds))} | {len(runs)} | {sum(g >= -tol for g in gaps)} | "
            f"{sum(g > tol for g in gaps)} | {sum(g < -tol for g in gaps)} | {shd} | {cpu} |"
        )
        for r in runs:
            if r["hc_minus_best_peer"] < -tol:
                peer = max(
                    (k for k in r["learners"] if not k.startswith("bnfk")),
                    key=lambda k: r["learners"][k]["bic"],
                )
                misses.append(
                    f"- {r['net']}, N = {rows:,}, seed {r['seed']}: bnfk hc "
                    f"{r['learners']['bnfk hc']['bic']:,.1f} against {peer} "
                    f"{r['learners'][peer]['bic']:,.1f} ({r['hc_minus_best_peer']:+,.1f} nats)"
                )
    return "\n".join(lines + ([""] + misses if misses else []))


def combine(parts: list) -> dict:
    """One results JSON from several (e.g. the peers and bnfk run apart): each run's learners merged, the
    later part winning; runs keyed by (net, rows, seed), learners in :data:`REPO_LEARNERS` order."""
    runs: dict = {}
    for part in parts:
        for r in part["runs"]:
            key = (r["net"], r["rows"], r["seed"])
            runs.setdefault(key, {**r, "learners": {}})["learners"].update(r["learners"])
    labels = [lab for lab in REPO_LEARNERS if any(lab in r["learners"] for r in runs.values())]
    order = {n: i for i, n in enumerate(REPOSITORY)}
    out = {
        **parts[-1],
        "learners": labels,
        "parts": [
            {k: p.get(k) for k in ("learners", "load_average_start", "load_average_end", "total_seconds")}
            for p in parts
        ],
        "runs": [],
    }
    for key in sorted(runs, key=lambda k: (order.get(k[0], 99), k[1], k[2])):
        r = runs[key]
        r["learners"] = {lab: r["learners"][lab] for lab in labels if lab in r["learners"]}
        peers = [v["bic"] for k, v in r["learners"].items() if not k.startswith("bnfk")]
        if peers and "bnfk hc" in r["learners"]:
            r["hc_minus_best_peer"] = r["learners"]["bnfk hc"]["bic"] - max(peers)
        out["runs"].append(r)
    out["nets"] = list(dict.fromkeys(k[0] for k in runs))
    out["rows"], out["seeds"] = sorted({k[1] for k in runs}), sorted({k[2] for k in runs})
    return out


def repository_main(args) -> int:
    path = Path(args.output) if args.output else RESULTS / "learn_peers_repository.json"
    if args.markdown:
        out = json.loads(path.read_text())
        print(repository_summary(out) + "\n\n" + repository_markdown(out))
        return 0
    nets = [n for n in args.nets.split(",") if n] if args.nets else list(REPOSITORY)
    rows = [int(r) for r in args.rows.split(",")] if args.rows else list(ROWS)
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else list(SEEDS)
    labels = [lab for lab in (args.learners.split(",") if args.learners else REPO_LEARNERS)]
    skipped = [lab for lab in labels if not available(lab)]
    for lab in skipped:
        print(
            f"{lab} is not installed: its column is skipped (pip install -r "
            "benchmarks/requirements-peers.txt)."
        )
    labels = [lab for lab in labels if lab not in skipped]
    versions = {m: __import__(m).__version__ for m in ("pyagrum", "pgmpy") if have(m)}
    out = {
        "nets": nets,
        "rows": rows,
        "seeds": seeds,
        "learners": labels,
        "versions": versions,
        "scorer": "pgmpy.structure_score.BIC (natural log)",
        "runs": [],
    }
    if args.combine:
        out = combine([json.loads(Path(p).read_text()) for p in args.combine.split(",")])
        path.write_text(json.dumps(out, indent=1, default=float) + "\n")
        print(f"combined {len(out['runs'])} runs into {path}")
        return 0
    kept = []
    if path.exists() and args.append:
        kept = [
            r
            for r in json.loads(path.read_text())["runs"]
            if (r["net"], r["rows"], r["seed"]) not in {(n, x, s) for n in nets for x in rows for s in seeds}
        ]
    out["runs"] = kept
    load0, t0 = os.getloadavg(), time.perf_counter()
    learn_structure(load_table("car")[0], "hc", score="bic")  # warm-up (imports)
    for name in nets:
        for n_rows in rows:
            for seed in seeds:
                out["runs"].append(bench_repository(name, n_rows, seed, labels))
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(out, indent=1, default=float) + "\n")
    out["total_seconds"] = time.perf_counter() - t0
    out["load_average_start"], out["load_average_end"] = load0, os.getloadavg()
    path.write_text(json.dumps(out, indent=1, default=float) + "\n")
    gaps = [r["hc_minus_best_peer"] for r in out["runs"] if "hc_minus_best_peer" in r]
    print(
        f"{len(out['runs'])} runs in {out['total_seconds']:.0f} s (load {load0[0]:.1f} -> "
        f"{out['load_average_end'][0]:.1f}); bnfk hc within 0.5 nats of the best peer or above on "
        f"{sum(g >= -0.5 for g in gaps)} of {len(gaps)}; wrote {path}"
    )
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--nets", default=None, help=f"comma-separated repository networks (default: {', '.join(REPOSITORY)})"
    )
    ap.add_argument(
        "--rows", "--n", default=None, help="comma-separated sample sizes (default 1000,5000,20000)"
    )
    ap.add_argument("--seeds", default=None, help="comma-separated sampling seeds (default 0,1,2,3,4)")
    ap.add_argument("--learners", default=None, help=f"comma-separated, from {', '.join(REPO_LEARNERS)}")
    ap.add_argument("--append", action="store_true", help="keep the runs of the JSON outside this grid")
    ap.add_argument(
        "--combine",
        default=None,
        metavar="A.json,B.json",
        help="only merge the learners of these results JSONs into -o (e.g. peers and bnfk run apart)",
    )
    ap.add_argument(
        "--tables",
        action="store_true",
        help="the earlier comparison on the bundled tables instead (learn_peers.json)",
    )
    ap.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK)} only")
    ap.add_argument("--datasets", default=None, help=f"comma-separated, from {', '.join(DATASETS)}")
    ap.add_argument(
        "--repeats", type=int, default=3, help="timed runs per learner, median reported (default 3)"
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=30.0,
        help="seconds after which a learner is not run again (default 30)",
    )
    ap.add_argument("--cli", action="store_true", help="also time the two command lines on nursery, in turn")
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument(
        "--markdown", action="store_true", help="print the docs table of the results JSON and stop"
    )
    ap.add_argument(
        "--spread",
        type=int,
        default=0,
        metavar="N",
        help="only add to the results JSON: ALARM by our single climbs with seeds 0..N-1 and by pgmpy "
        "under --hash-seeds",
    )
    ap.add_argument("--hash-seeds", default="1,2", help="PYTHONHASHSEED values of the pgmpy runs of --spread")
    args = ap.parse_args(argv)
    if not (args.tables or args.quick or args.datasets or args.cli or args.spread):
        return repository_main(args)
    path = (
        Path(args.output)
        if args.output
        else RESULTS / ("learn_peers_quick.json" if args.quick else "learn_peers.json")
    )
    if args.markdown:
        print(markdown(json.loads(path.read_text())))
        return 0
    if args.spread:
        out = json.loads(path.read_text())
        hashes = [int(h) for h in args.hash_seeds.split(",") if h.strip()] if have("pgmpy") else []
        load0 = os.getloadavg()
        out["alarm_spread"] = {
            **alarm_spread(args.spread, hashes),
            "load_average": [load0[0], os.getloadavg()[0]],
        }
        path.write_text(json.dumps(out, indent=1, default=float) + "\n")
        print(f"wrote the ALARM spread into {path}")
        return 0
    missing = [m for m in ("pyagrum", "pgmpy") if not have(m)]
    if len(missing) == 2:
        print(
            "pyAgrum and pgmpy are not installed (pip install -r benchmarks/requirements-peers.txt): nothing "
            "to "
            "compare; skipped."
        )
        return 0
    for m in missing:
        print(
            f"{m} is not installed: its rows are skipped (pip install -r benchmarks/requirements-peers.txt)."
        )
    names = args.datasets.split(",") if args.datasets else (QUICK if args.quick else DATASETS)
    load0, t0 = os.getloadavg(), time.perf_counter()
    versions = {m: __import__(m).__version__ for m in ("pyagrum", "pgmpy") if have(m)}
    out = {
        "repeats": args.repeats,
        "budget_seconds": args.budget,
        "versions": versions,
        "skipped_peers": missing,
        "datasets": {},
    }
    learn_structure(load_table("car")[0], "hc", score="bic")  # warm-up (imports, compilation)
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
    print(
        f"{len(names)} tables in {out['total_seconds']:.0f} s (load {load0[0]:.1f} -> "
        f"{out['load_average_end'][0]:.1f}); wrote {path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
