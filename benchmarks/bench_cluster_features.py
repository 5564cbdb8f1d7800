"""Clustering beyond the Gram limit: kernel k-means in the explicit feature space.

    # both parts; writes benchmarks/results/cluster_features.json
    python benchmarks/bench_cluster_features.py
    python benchmarks/bench_cluster_features.py --only large --rows 200000
    python benchmarks/bench_cluster_features.py --only thesis --runs 5

- large: a letter-like CSV (benchmarks/letter_like.py: 16 four-state features, the 26-state variable as the
  label column) of ``--rows`` rows sampled from a random network (seed 0) is written to a temporary folder
  and clustered by the CLI in a fresh process, exactly as a user would:
  ``cluster big.csv --label-column class --kernel K [--structure tree --score bic] --seed 0 --no-labels-out``
  with the default ``--algorithm auto`` and ``--max-memory`` 4G.  The Gram matrix (and correlation
  clustering's work space, 4 N^2 doubles) would not fit, so ``auto`` picks ``kmeans-features``; we record the
  wall time, the process's peak RSS (``getrusage(RUSAGE_CHILDREN)`` in a clean parent), ARI/AMI against the
  label and the choice with its reason.  Kernels: Fisher (Chow-Liu tree learned on the features, BIC, cNML
  parameters) and scaled-Hamming.
- thesis: on the thesis's seven datasets (catalog missing policy, label column excluded), the ARI of
  kernel k-means in feature space beside correlation clustering's (25 restarts, the thesis protocol) for the
  Fisher, Hamming and scaled-Hamming kernels, mean over ``--runs`` seeds (0..runs-1); one network per
  dataset (exact qNML search for <= 20 features, else hill climbing; cNML), shared by both algorithms.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from letter_like import letter_like_model  # noqa: E402

from bnfk_core.analyses.cluster import clustering as C  # noqa: E402
from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.kernels.fisher import FISHER, HAMMING, SCALED_HAMMING  # noqa: E402

SAMPLES = ROOT / "sample_data"
RESULTS = ROOT / "benchmarks" / "results"
CATALOG = json.loads((SAMPLES / "catalog.json").read_text())
DATASETS = [
    "breast_cancer",
    "hayes_roth",
    "house_votes_84",
    "lymphography",
    "primary_tumor",
    "spect",
    "tic_tac_toe",
]
KERNELS = {FISHER: "F", HAMMING: "H", SCALED_HAMMING: "SH"}


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def write_letter_csv(path: Path, rows: int, seed: int = 0) -> None:
    model = letter_like_model(0)
    data = model.sample(rows, seed=seed)
    cols = list(data.variables)
    out = np.empty((rows, len(cols)), dtype=object)
    for j in range(len(cols)):
        out[:, j] = np.asarray(data.states[j], dtype=object)[data.codes[:, j]]
    with path.open("w") as fh:
        fh.write(",".join(cols) + "\n")
        fh.write("\n".join(",".join(r) for r in out) + "\n")


def run_cli(args: list[str]) -> dict:
    """Run ``python -m bnfk_core ARGS`` in a fresh process; its JSON, wall time and peak RSS."""
    probe = (
        "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
        "p = subprocess.run([sys.executable, '-m', 'bnfk_core', *sys.argv[1:]], capture_output=True, "
        "text=True); "
        "print(json.dumps({'code': p.returncode, 'out': p.stdout, 'err': p.stderr[-2000:], "
        "'wall': time.perf_counter() - t, 'rss': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * "
        "1024}))"
    )
    res = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT)
    info = json.loads(res.stdout)
    if info["code"] != 0:
        raise SystemExit(f"cluster failed: {info['err']}")
    return {"json": json.loads(info["out"]), "wall_seconds": info["wall"], "peak_rss_bytes": info["rss"]}


def large(rows: int) -> dict:
    out = {"rows": rows, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "letter_like.csv"
        t0 = time.perf_counter()
        write_letter_csv(csv, rows)
        log(f"wrote {rows:,} rows in {time.perf_counter() - t0:.1f} s")
        for kern, extra in ((FISHER, ["--structure", "tree", "--score", "bic"]), (SCALED_HAMMING, [])):
            r = run_cli(
                [
                    "cluster",
                    str(csv),
                    "--label-column",
                    "class",
                    "--kernel",
                    kern,
                    *extra,
                    "--seed",
                    "0",
                    "--no-labels-out",
                ]
            )
            j = r["json"]
            row = {
                "kernel": kern,
                "algorithm_chosen": j.get("algorithm_chosen"),
                "reason": j.get("algorithm_reason"),
                "ari": j["ari"],
                "ami": j["ami"],
                "v_measure": j["v_measure"],
                "silhouette": j["silhouette"],
                "silhouette_rows": j.get("silhouette_rows"),
                "n_clusters": j["n_clusters"],
                "n_used": j["n_used"],
                "feature_nnz": j.get("feature_nnz"),
                "feature_columns": j.get("feature_columns_phi"),
                "structure": j.get("structure"),
                "kernel_seconds": j["kernel_seconds"],
                "cluster_seconds": j["cluster_seconds"],
                "wall_seconds": r["wall_seconds"],
                "peak_rss_gib": r["peak_rss_bytes"] / 2**30,
            }
            out["runs"].append(row)
            log(
                f"{kern}: {row['algorithm_chosen']} ARI {row['ari']:.3f}, {row['wall_seconds']:.1f} s wall, "
                f"peak RSS {row['peak_rss_gib']:.2f} GiB"
            )
    return out


def thesis(runs: int, restarts: int = 25) -> list[dict]:
    rows = []
    for name in DATASETS:
        c = CATALOG[name]
        data = load_csv(
            SAMPLES / c["file"], class_column=c["class_column"], missing_policy=c["missing_policy"]
        )
        k = C.default_n_clusters(data)
        structure = "exact" if data.without_class().n_vars <= 20 else "hc"
        for kern, abbr in KERNELS.items():
            t0 = time.perf_counter()
            setup = C.kernel_setup(data, kern, structure=structure, score="qnml", params="cnml", seed=0)
            cc, km, t_cc, t_km = [], [], [], []
            for r in range(runs):
                o = C.run_clustering(
                    data, kern, "correlation", n_clusters=k, setup=setup, restarts=restarts, seed=r
                )
                cc.append(o["ari"])
                t_cc.append(o["cluster_seconds"])
                o = C.run_clustering(data, kern, "kmeans-features", n_clusters=k, model=setup.model, seed=r)
                km.append(o["ari"])
                t_km.append(o["cluster_seconds"])
            rows.append(
                {
                    "dataset": name,
                    "rows": data.n_rows,
                    "clusters": k,
                    "kernel": abbr,
                    "ari_cc": float(np.mean(cc)),
                    "ari_cc_std": float(np.std(cc)),
                    "ari_kmeans_features": float(np.mean(km)),
                    "ari_kmeans_features_std": float(np.std(km)),
                    "seconds_cc": float(np.mean(t_cc)),
                    "seconds_kmeans_features": float(np.mean(t_km)),
                    "structure": setup.structure,
                }
            )
            log(
                f"{name} {abbr}: CC {np.mean(cc):.3f} vs kmeans-features {np.mean(km):.3f} "
                f"({time.perf_counter() - t0:.1f} s)"
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("large", "thesis"))
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("-o", "--output", default=str(RESULTS / "cluster_features.json"))
    args = ap.parse_args()
    path = Path(args.output)
    result = json.loads(path.read_text()) if path.exists() else {}
    if args.only in (None, "large"):
        result["large"] = large(args.rows)
    if args.only in (None, "thesis"):
        result["thesis"] = {"runs": args.runs, "restarts": 25, "rows": thesis(args.runs)}
    result["machine"] = {"cores": __import__("os").cpu_count(), "python": sys.version.split()[0]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
