"""Clustering beside k-modes and StepMix: ARI / AMI against the labels on every bundled labelled data set.

    # all labelled sets, seeds 0..4 -> results/cluster_peers.json
    python benchmarks/bench_cluster_peers.py
    # 3 small sets, seed 0 (< 1 min) -> cluster_peers_quick.json
    python benchmarks/bench_cluster_peers.py --quick
    python benchmarks/bench_cluster_peers.py --datasets zoo,spect --seeds 3
    python benchmarks/bench_cluster_peers.py --datasets ... --methods lca,FN,CC-F --max-rows 2000 --seeds 3

Peers: k-modes (Huang 1998; ``kmodes.KModes``) with ``init='Huang'`` and ``init='Cao'``, ``n_init=10``,
``random_state=seed`` on the integer codes of the feature columns (a missing cell, code -1, is one more
category to k-modes); StepMix (``StepMix(n_components=k, measurement='categorical', n_init=10,
random_state=seed)``, a latent class model fitted by EM; a missing cell is one more category to it too).
Ours: the ``python -m bnfk_core cluster`` command itself (its argument parser and handler, run in this
process): ``lca`` (latent class model, 25 seeded EM starts), the default (``auto`` with the default
scaled-Hamming kernel), correlation (CC) and spectral (SC) clustering with the Fisher (F, the CLI's default
network: hill climbing on qNML, cNML parameters) and scaled-Hamming (SH) kernels, and the normalised Fisher
kernel with all its defaults (FN: ``cluster --kernel fisher-normalized``, whose ``auto`` is Ward's clustering
on K_alpha; KM-FN: k-means on its features, asked for by name; CC-FN: correlation clustering, adaptive shift).
``--methods`` runs a subset of ours (the peers always run).

Same data for everyone: each set is read as the CLI reads it (``sample_data/catalog.json``: class column,
missing policy, NA values), the label column is never a feature, k = number of labels, seeds 0..4.  A set
with more than ``--max-rows`` rows (default 1,000) is replaced by a seeded random sample of that many rows
(seed 0), the same rows for every method, so that the N x N Gram methods stay within a few minutes on a
shared machine; the JSON says which sets were sampled.  The JSON is written after every set (``--resume``
continues a run that was stopped).  Times: our ``seconds`` field (kernel + clustering,
after the CSV is read) and k-modes' ``fit``; BLAS limited to one thread for both.  k-modes is a
benchmark-only peer (benchmarks/requirements-peers.txt); without it the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
import warnings
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLES = ROOT / "sample_data"
RESULTS = ROOT / "benchmarks" / "results"
CATALOG = json.loads((SAMPLES / "catalog.json").read_text())
QUICK = ["soybean_small", "zoo", "hayes_roth"]

#: our methods: name -> extra CLI arguments of ``python -m bnfk_core cluster``
OURS = {
    "lca": ["--algorithm", "lca"],
    "auto-SH": [],  # the CLI's defaults: auto, scaled-hamming
    "CC-F": ["--algorithm", "correlation", "--kernel", "fisher"],
    "SC-F": ["--algorithm", "spectral", "--kernel", "fisher"],
    "CC-SH": ["--algorithm", "correlation", "--kernel", "scaled-hamming"],
    "SC-SH": ["--algorithm", "spectral", "--kernel", "scaled-hamming"],
    "FN": ["--kernel", "fisher-normalized"],  # every default of the normalised Fisher kernel
    "KM-FN": ["--algorithm", "kmeans-features", "--kernel", "fisher-normalized"],
    "CC-FN": ["--algorithm", "correlation", "--kernel", "fisher-normalized"],
}
PEERS = {"kmodes-Huang": "Huang", "kmodes-Cao": "Cao", "stepmix": None}
TIE = 5e-4  # mean scores closer than this are a tie (the JSON keeps 4 decimals of each run)


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def labelled_sets() -> list[str]:
    return [n for n, c in CATALOG.items() if c.get("class_column")]


def data_argv(name: str, path: Path) -> list[str]:
    """The CLI's data options for catalog entry ``name`` read from ``path``."""
    c = CATALOG[name]
    argv = [str(path), "--label-column", c["class_column"], "--missing-policy", c["missing_policy"]]
    if c.get("na_values"):
        argv += ["--na-values", c["na_values"]]
    return argv


def sampled_csv(name: str, max_rows: int, tmp: Path) -> tuple[Path, int]:
    """(the CSV to cluster, its full row count): the catalog file, or a seeded sample of ``max_rows`` of its
    rows written verbatim (every cell text kept, so that the CLI's NA handling sees the same cells)."""
    path = SAMPLES / CATALOG[name]["file"]
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    if len(frame) <= max_rows:
        return path, len(frame)
    rows = np.sort(np.random.default_rng(0).choice(len(frame), max_rows, replace=False))
    out = tmp / f"{name}_{max_rows}.csv"
    frame.iloc[rows].to_csv(out, index=False)
    return out, len(frame)


def cli_cluster(argv: list[str]) -> dict:
    """``python -m bnfk_core cluster ARGV`` in this process: the CLI's parser and handler, its JSON as a
    dict."""
    from bnfk_core.cli.main import build_parser

    args = build_parser("cluster").parse_args(["cluster", *argv])
    with redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return args.func(args)


def features_and_labels(argv: list[str]):
    """(feature codes, label codes) exactly as the CLI reads the data (``read_data``)."""
    from bnfk_core.cli.common import read_data
    from bnfk_core.cli.main import build_parser

    args = build_parser("cluster").parse_args(["cluster", *argv])
    with redirect_stderr(io.StringIO()):
        data = read_data(args.data, args)
    return data.without_class().codes, data.labels()


def kmodes_run(X, k: int, init: str, seed: int) -> tuple[np.ndarray, float]:
    from kmodes.kmodes import KModes

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Initialization method is deterministic" (Cao)
        km = KModes(n_clusters=k, init=init, n_init=10, random_state=seed, n_jobs=1).fit(X)
    return np.asarray(km.labels_), time.perf_counter() - t0


def stepmix_run(X, k: int, seed: int) -> tuple[np.ndarray, float]:
    from stepmix.stepmix import StepMix

    Z = np.where(X < 0, X.max(axis=0, keepdims=True) + 1, X).astype(int)  # a missing cell: one more category
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = StepMix(
            n_components=k, measurement="categorical", n_init=10, random_state=seed, progress_bar=0, verbose=0
        ).fit(Z)
    return np.asarray(model.predict(Z)), time.perf_counter() - t0


def peer_run(method: str, X, k: int, seed: int) -> tuple[np.ndarray, float]:
    return stepmix_run(X, k, seed) if method == "stepmix" else kmodes_run(X, k, PEERS[method], seed)


def summary(runs: list[dict]) -> dict:
    a = np.array([r["ari"] for r in runs])
    m = np.array([r["ami"] for r in runs])
    s = np.array([r["seconds"] for r in runs])
    return {
        "ari": float(a.mean()),
        "ari_std": float(a.std()),
        "ami": float(m.mean()),
        "ami_std": float(m.std()),
        "seconds": float(s.mean()),
        "ari_runs": a.round(4).tolist(),
        "runs": len(runs),
    }


def bench_set(name: str, seeds: list[int], max_rows: int, tmp: Path, ours: dict = OURS) -> dict:
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

    path, full_rows = sampled_csv(name, max_rows, tmp)
    base = data_argv(name, path)
    X, y = features_and_labels(base)
    observed = y >= 0
    k = int(len(np.unique(y[observed])))
    res = {
        "rows": int(X.shape[0]),
        "rows_in_file": full_rows,
        "sampled": X.shape[0] < full_rows,
        "features": int(X.shape[1]),
        "clusters": k,
        "methods": {},
    }
    peers = [m for m in PEERS if m != "stepmix" or _has("stepmix")]
    for method in peers:
        runs = []
        for seed in seeds:
            lab, sec = peer_run(method, X, k, seed)
            runs.append(
                {
                    "ari": adjusted_rand_score(y[observed], lab[observed]),
                    "ami": adjusted_mutual_info_score(y[observed], lab[observed], average_method="max"),
                    "seconds": sec,
                }
            )
        res["methods"][method] = summary(runs)
    for method, extra in ours.items():
        runs, chosen = [], None
        for seed in seeds:
            out = cli_cluster([*base, *extra, "--seed", str(seed), "--no-labels-out"])
            runs.append({"ari": out["ari"], "ami": out["ami"], "seconds": out["seconds"]})
            chosen = out.get("algorithm_chosen", chosen)
        res["methods"][method] = summary(runs)
        if chosen:
            res["methods"][method]["algorithm_chosen"] = chosen
    for metric in ("ari", "ami"):
        value = {m: v[metric] for m, v in res["methods"].items()}
        top = max(value.values())
        best = max(ours, key=value.get)
        peer = max(peers, key=value.get)
        res[f"leaders_{metric}"] = [m for m, v in value.items() if v >= top - TIE]  # ties all listed
        res[f"best_ours_{metric}"] = best
        res[f"best_kmodes_{metric}"] = peer  # the best peer (k-modes or StepMix; the key keeps its old name)
        margin = value[best] - value[peer]
        res[f"margin_{metric}"] = 0.0 if abs(margin) < TIE else margin
    for m, v in res["methods"].items():
        log(
            f"  {name:15s} {m:13s} ARI {v['ari']:.3f}+-{v['ari_std']:.3f}  AMI "
            f"{v['ami']:.3f}+-{v['ami_std']:.3f}"
            f"  {v['seconds']:.2f}s/run"
        )
    log(f"  {name}: leading ARI {', '.join(res['leaders_ari'])}; AMI {', '.join(res['leaders_ami'])}")
    return res


def _has(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def warm_up(tmp: Path, ours: dict = OURS) -> None:
    """Compile the numba kernels once (not timed): every method on the smallest set."""
    base = data_argv("soybean_small", SAMPLES / CATALOG["soybean_small"]["file"])
    for extra in ours.values():
        cli_cluster([*base, *extra, "--no-labels-out"])


def markdown(out: dict) -> str:
    """The docs/BENCHMARKS.md table of a results JSON: per set the best k-modes and our best (ARI / AMI)."""
    lines = [
        "| data set (rows, k) | k-modes best: ARI / AMI | ours best: ARI / AMI | leads (ARI; AMI) | "
        "defaults, ARI: ours (auto) / k-modes (Cao) | s/run k-modes Huang, Cao / lca, CC-SH |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in out["datasets"].items():
        m = r["methods"]
        pa, pm, oa, om = r["best_kmodes_ari"], r["best_kmodes_ami"], r["best_ours_ari"], r["best_ours_ami"]

        def who(metric):
            d = r[f"margin_{metric}"]
            return "tie" if d == 0 else ("ours" if d > 0 else "**k-modes**")

        rows = f"{r['rows']:,}" + (f" of {r['rows_in_file']:,}" if r["sampled"] else "")
        lines.append(
            f"| {name} ({rows}, {r['clusters']}) | {m[pa]['ari']:.3f} ± {m[pa]['ari_std']:.3f} "
            f"({pa.replace('kmodes-', '')}) / "
            f"{m[pm]['ami']:.3f} ({pm.replace('kmodes-', '')}) | {m[oa]['ari']:.3f} ± {m[oa]['ari_std']:.3f} "
            f"({oa}) / "
            f"{m[om]['ami']:.3f} ({om}) | {who('ari')}; {who('ami')} | "
            f"{m['auto-SH']['ari']:.3f} / {m['kmodes-Cao']['ari']:.3f} | "
            f"{m['kmodes-Huang']['seconds']:.2f}, {m['kmodes-Cao']['seconds']:.2f} / "
            f"{m['lca']['seconds']:.2f}, {m['CC-SH']['seconds']:.2f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK)}, seed 0 (< 1 minute)")
    ap.add_argument(
        "--datasets", default=None, help="comma-separated catalog names (default: every labelled set)"
    )
    ap.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (default 5; 1 with --quick)")
    ap.add_argument(
        "--max-rows", type=int, default=1000, help="larger sets are a seeded sample of this many rows"
    )
    ap.add_argument(
        "--methods", default=None, help=f"comma-separated subset of ours ({', '.join(OURS)}; default all)"
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="keep the sets already in the output JSON (same seeds and --max-rows), run the others",
    )
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument(
        "--markdown", action="store_true", help="print the docs table of the results JSON and stop"
    )
    args = ap.parse_args(argv)
    if args.markdown:
        path = (
            Path(args.output)
            if args.output
            else RESULTS / ("cluster_peers_quick.json" if args.quick else "cluster_peers.json")
        )
        print(markdown(json.loads(path.read_text())))
        return 0
    try:
        import kmodes
    except ImportError:
        print(
            "k-modes is not installed (pip install -r benchmarks/requirements-peers.txt): nothing to "
            "compare; "
            "skipped."
        )
        return 0
    from threadpoolctl import threadpool_limits

    names = args.datasets.split(",") if args.datasets else (QUICK if args.quick else labelled_sets())
    unknown = [n for n in names if n not in CATALOG or not CATALOG[n].get("class_column")]
    if unknown:
        print(f"error: not a labelled catalog set: {', '.join(unknown)}", file=sys.stderr)
        return 2
    seeds = list(range(args.seeds if args.seeds else (1 if args.quick else 5)))
    ours = OURS if not args.methods else {m: OURS[m] for m in args.methods.split(",") if m in OURS}
    if args.methods and len(ours) != len(args.methods.split(",")):
        print(f"error: unknown method in --methods; ours are {', '.join(OURS)}", file=sys.stderr)
        return 2
    load0, t0 = os.getloadavg(), time.perf_counter()
    out = {
        "seeds": seeds,
        "max_rows": args.max_rows,
        "kmodes_version": kmodes.__version__,
        "methods_ours": {
            m: "python -m bnfk_core cluster " + " ".join(e or ["(defaults)"]) for m, e in ours.items()
        },
        "methods_peer": {
            m: (
                f"kmodes.KModes(init='{i}', n_init=10, random_state=seed)"
                if i
                else "stepmix.StepMix(n_components=k, measurement='categorical', n_init=10, "
                "random_state=seed)"
            )
            for m, i in PEERS.items()
        },
        "datasets": {},
    }
    path = (
        Path(args.output)
        if args.output
        else RESULTS / ("cluster_peers_quick.json" if args.quick else "cluster_peers.json")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    if args.resume and path.exists():
        old = json.loads(path.read_text())
        if old.get("seeds") == seeds and old.get("max_rows") == args.max_rows:
            out["datasets"] = {n: r for n, r in old["datasets"].items() if n in names}
            out["load_average_runs"] = old.get("load_average_runs", [])
            out["earlier_seconds"] = old.get("total_seconds", 0.0)
            log(f"resuming: {', '.join(out['datasets']) or 'nothing'} already done")
    with threadpool_limits(limits=1), tempfile.TemporaryDirectory() as tmp:
        if any(n not in out["datasets"] for n in names):
            warm_up(Path(tmp), ours)
        for name in sorted(names, key=lambda n: min(CATALOG[n]["rows"], args.max_rows)):  # small sets first
            if name in out["datasets"]:
                continue
            log(f"{name} ...")
            out["datasets"][name] = bench_set(name, seeds, args.max_rows, Path(tmp), ours)
            path.write_text(json.dumps(out, indent=1) + "\n")  # a partial run keeps what it did
    out["total_seconds"] = time.perf_counter() - t0 + out.pop("earlier_seconds", 0.0)
    out["load_average_start"], out["load_average_end"] = load0, os.getloadavg()
    out["load_average_runs"] = out.get("load_average_runs", []) + [[load0[0], out["load_average_end"][0]]]
    sets = out["datasets"].values()
    out["count"] = {
        metric: {
            "ours_lead": sum(r[f"margin_{metric}"] > 0 for r in sets),
            "kmodes_lead": sum(r[f"margin_{metric}"] < 0 for r in sets),
            "tie": sum(r[f"margin_{metric}"] == 0 for r in sets),
        }
        for metric in ("ari", "ami")
    }
    # a fixed choice on each side (no picking the best afterwards): our CLI default against k-modes' default
    # init
    diff = [
        r["methods"]["auto-SH"]["ari"] - r["methods"]["kmodes-Cao"]["ari"]
        for r in sets
        if "auto-SH" in r["methods"]
    ]
    out["count"]["defaults_ari"] = {
        "ours_lead": sum(d >= TIE for d in diff),
        "kmodes_lead": sum(d <= -TIE for d in diff),
        "tie": sum(abs(d) < TIE for d in diff),
    }
    every = [m for m in next(iter(sets))["methods"]] if sets else []
    out["mean_ari"] = {
        m: round(float(np.mean([r["methods"][m]["ari"] for r in sets])), 4)
        for m in every
        if all(m in r["methods"] for r in sets)
    }
    path.write_text(json.dumps(out, indent=1) + "\n")
    print("mean ARI over the sets: " + ", ".join(f"{m} {v:.3f}" for m, v in out["mean_ari"].items()))
    print(
        f"{len(out['datasets'])} data sets in {out['total_seconds']:.0f} s (load {load0[0]:.1f} -> "
        f"{out['load_average_end'][0]:.1f}); ours lead on ARI in {out['count']['ari']['ours_lead']}, k-modes "
        "in "
        f"{out['count']['ari']['kmodes_lead']}; wrote {path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
