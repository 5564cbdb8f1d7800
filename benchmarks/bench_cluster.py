"""Clustering and classification benchmark: thesis Table 5.1, C.1, C.2, D.1, D.2 and run times.

    python benchmarks/bench_cluster.py                 # everything; writes benchmarks/results/cluster.json
    python benchmarks/bench_cluster.py --only timing   # just the correlation-clustering timing
    python benchmarks/bench_cluster.py --only clustering --datasets house_votes_84,spect

- Clustering (Table 5.1 / C.1 / C.2): for each of the thesis's seven datasets (all in sample_data/),
  loaded with the catalog's missing policy (original missing values are a category, thesis §3.4),
  the label column excluded from the features; kernels Fisher, Hamming, scaled-Hamming; correlation
  clustering (25 restarts, adaptive shift for H/SH, none for F) and spectral clustering
  (shift-min affinity, scikit-learn defaults); number of clusters = number of labels; mean over
  10 seeded runs (seeds 0..9).  Fisher kernel: exact qNML structure when the features are <= 20
  (the thesis's choice), else hill climbing on qNML; cNML parameters.
- Spectral transforms: SC with shift-min vs cosine vs rbf, mean ARI over the same 10 runs.
- Classification (Table D.1 / D.2): kNN (k=7, uniform) and SVM (C=1) on 10 seeded 80/20 splits,
  the kernel's model estimated on each training split; Lymphography and Primary Tumor skipped as
  in the thesis (classes with 1-2 rows).
- Timing: correlation clustering (25 restarts) of 1,000 rows (kr_vs_kp, scaled-Hamming) and of
  tic-tac-toe (958 rows), compile time of the local search reported separately.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bnfk_core.analyses.cluster import clustering as C  # noqa: E402
from bnfk_core.data.table import load_csv  # noqa: E402
from bnfk_core.kernels.fisher import gram  # noqa: E402

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
TITLES = {
    "breast_cancer": "Breast Cancer",
    "hayes_roth": "Hayes-Roth",
    "house_votes_84": "House Votes-84",
    "lymphography": "Lymphography",
    "primary_tumor": "Primary Tumor",
    "spect": "SPECT",
    "tic_tac_toe": "Tic-Tac-Toe",
}
COMBOS = ["CC-F", "CC-H", "CC-SH", "SC-F", "SC-H", "SC-SH"]
CLF_COMBOS = ["kNN-F", "kNN-H", "kNN-SH", "SVM-F", "SVM-H", "SVM-SH"]

# the thesis's tables (Table 5.1, C.1, C.2, D.1, D.2), columns in COMBOS / CLF_COMBOS order
THESIS = {
    "ari": {
        "breast_cancer": [0.122, -0.003, 0.147, 0.006, 0.004, 0.162],
        "hayes_roth": [0.082, -0.007, 0.082, -0.009, -0.011, -0.009],
        "house_votes_84": [0.077, 0.557, 0.557, 0.006, 0.564, 0.564],
        "lymphography": [0.105, 0.188, 0.242, -0.018, 0.258, 0.259],
        "primary_tumor": [0.035, 0.081, 0.123, 0.076, 0.083, 0.076],
        "spect": [0.004, 0.055, 0.057, 0.048, -0.061, -0.029],
        "tic_tac_toe": [0.005, 0.000, 0.020, 0.007, -0.001, -0.001],
    },
    "ami": {
        "breast_cancer": [0.069, -0.001, 0.079, -0.003, 0.000, 0.078],
        "hayes_roth": [0.066, -0.008, 0.066, -0.002, -0.011, -0.002],
        "house_votes_84": [0.055, 0.485, 0.475, -0.001, 0.467, 0.464],
        "lymphography": [0.089, 0.177, 0.202, 0.007, 0.218, 0.210],
        "primary_tumor": [0.107, 0.116, 0.187, 0.145, 0.175, 0.165],
        "spect": [0.018, 0.103, 0.125, 0.002, 0.108, 0.126],
        "tic_tac_toe": [0.004, 0.006, 0.006, 0.000, -0.001, -0.001],
    },
    "v_measure": {
        "breast_cancer": [0.075, 0.002, 0.084, 0.000, 0.003, 0.081],
        "hayes_roth": [0.078, 0.004, 0.078, 0.010, 0.000, 0.010],
        "house_votes_84": [0.058, 0.495, 0.484, 0.001, 0.476, 0.472],
        "lymphography": [0.138, 0.218, 0.268, 0.039, 0.288, 0.273],
        "primary_tumor": [0.224, 0.195, 0.286, 0.308, 0.336, 0.330],
        "spect": [0.024, 0.122, 0.146, 0.008, 0.121, 0.144],
        "tic_tac_toe": [0.005, 0.007, 0.007, 0.001, 0.000, 0.000],
    },
    "accuracy": {
        "breast_cancer": [0.671, 0.736, 0.705, 0.693, 0.700, 0.693],
        "hayes_roth": [0.647, 0.641, 0.634, 0.791, 0.825, 0.803],
        "house_votes_84": [0.915, 0.924, 0.907, 0.876, 0.952, 0.943],
        "spect": [0.831, 0.785, 0.811, 0.794, 0.813, 0.817],
        "tic_tac_toe": [0.755, 0.947, 0.911, 0.848, 0.981, 0.981],
    },
    "log_loss": {
        "breast_cancer": [0.897, 1.013, 0.951, 0.611, 0.595, 0.616],
        "hayes_roth": [0.705, 0.835, 0.584, 0.453, 0.337, 0.396],
        "house_votes_84": [0.264, 0.329, 0.366, 0.355, 0.134, 0.164],
        "spect": [0.566, 0.576, 0.617, 0.449, 0.381, 0.386],
        "tic_tac_toe": [0.569, 0.247, 0.298, 0.343, 0.107, 0.089],
    },
}
KABBR = {"fisher": "F", "hamming": "H", "scaled-hamming": "SH"}


def load(name):
    c = CATALOG[name]
    return load_csv(SAMPLES / c["file"], class_column=c["class_column"], missing_policy=c["missing_policy"])


def fisher_structure(data):
    return "exact" if data.without_class().n_vars <= 20 else "hc"


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def bench_clustering(names, runs, transforms):
    out = {}
    for name in names:
        data = load(name)
        k = C.default_n_clusters(data)
        res = {
            "rows": data.n_rows,
            "features": data.without_class().n_vars,
            "clusters": k,
            "combos": {},
            "spectral_transforms": {},
        }
        for kern in ("fisher", "hamming", "scaled-hamming"):
            struct = fisher_structure(data)
            setup = C.kernel_setup(data, kern, structure=struct, score="qnml", params="cnml", seed=0)
            if kern == "fisher":
                res["fisher"] = {
                    "structure": setup.structure,
                    "n_arcs": setup.n_arcs,
                    "params": setup.params,
                    "kernel_seconds": setup.seconds,
                    "k_min": float(setup.K.min()),
                    "k_max": float(setup.K.max()),
                }
            if kern == "scaled-hamming":
                res["scaled_hamming_range"] = [float(setup.K.min()), float(setup.K.max())]
            for alg in ("correlation", "spectral"):
                for tr in transforms if alg == "spectral" else ["-"]:
                    vals = []
                    for seed in range(runs):
                        r = C.run_clustering(
                            data,
                            kern,
                            alg,
                            n_clusters=k,
                            setup=setup,
                            seed=seed,
                            transform=tr if alg == "spectral" else "shift-min",
                        )
                        vals.append([r["ari"], r["ami"], r["v_measure"], r["cluster_seconds"], r["n_used"]])
                    v = np.asarray(vals, float)
                    cell = {
                        "ari": v[:, 0].mean(),
                        "ari_std": v[:, 0].std(),
                        "ami": v[:, 1].mean(),
                        "v_measure": v[:, 2].mean(),
                        "seconds": v[:, 3].mean(),
                        "n_used": v[:, 4].mean(),
                        "ari_runs": v[:, 0].tolist(),
                    }
                    combo = ("CC" if alg == "correlation" else "SC") + "-" + KABBR[kern]
                    if alg == "correlation" or tr == "shift-min":
                        res["combos"][combo] = cell
                    if alg == "spectral":
                        res["spectral_transforms"].setdefault(tr, {})[combo] = cell["ari"]
                    log(
                        f"{name:15s} {combo:6s} {tr:9s} ARI {cell['ari']:.3f} (thesis "
                        f"{THESIS['ari'][name][COMBOS.index(combo)]:.3f})  {cell['seconds']:.2f}s/run"
                    )
        out[name] = res
    return out


def bench_classification(names, repeats):
    out = {}
    for name in names:
        if name in ("lymphography", "primary_tumor"):
            continue
        data = load(name)
        res = {}
        for kern in ("fisher", "hamming", "scaled-hamming"):
            t0 = time.perf_counter()
            r = C.classify_many(
                data,
                kern,
                ("knn", "svm"),
                repeats=repeats,
                seed=0,
                structure=fisher_structure(data),
                score="qnml",
                params="cnml",
            )
            sim = C.classify_many(
                data,
                kern,
                ("knn",),
                repeats=repeats,
                seed=0,
                structure=fisher_structure(data),
                score="qnml",
                params="cnml",
                neighbours="similarity",
            )["knn"].to_dict()
            res["kNN-" + KABBR[kern] + " (by similarity)"] = {
                "accuracy": sim["accuracy"],
                "log_loss": sim["log_loss"],
            }
            log(
                f"{name:15s} kNN-{KABBR[kern]} by similarity: acc {sim['accuracy']:.3f}  log loss "
                f"{sim['log_loss']:.3f}"
            )
            for clf, v in r.items():
                d = v.to_dict()
                combo = {"knn": "kNN", "svm": "SVM"}[clf] + "-" + KABBR[kern]
                res[combo] = {
                    "accuracy": d["accuracy"],
                    "accuracy_std": d["accuracy_std"],
                    "log_loss": d["log_loss"],
                    "log_loss_std": d["log_loss_std"],
                }
                log(
                    f"{name:15s} {combo:7s} acc {d['accuracy']:.3f} (thesis "
                    f"{THESIS['accuracy'][name][CLF_COMBOS.index(combo)]:.3f})  log loss {d['log_loss']:.3f} "
                    f"(thesis {THESIS['log_loss'][name][CLF_COMBOS.index(combo)]:.3f})  "
                    f"{time.perf_counter() - t0:.1f}s"
                )
        out[name] = res
    return out


def bench_timing():
    t0 = time.perf_counter()
    C.correlation_clustering(np.eye(5), 2, restarts=1)  # compile (or load the cached machine code)
    warm = time.perf_counter() - t0
    out = {"compile_or_cache_load_seconds": warm}
    kr = load("kr_vs_kp")
    rows = np.random.default_rng(0).choice(kr.n_rows, 1000, replace=False)
    cases = {"kr_vs_kp_1000": kr.subset(np.sort(rows)), "tic_tac_toe_958": load("tic_tac_toe")}
    for label, data in cases.items():
        K = gram(None, data.without_class(), kind="scaled-hamming")
        times = []
        for seed in range(3):
            t0 = time.perf_counter()
            res = C.correlation_clustering(K, 2, restarts=25, seed=seed)
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        C.correlation_clustering(K, 2, restarts=25, seed=0, compiled=False)
        numpy_secs = time.perf_counter() - t0
        out[label] = {
            "rows": data.n_rows,
            "restarts": 25,
            "seconds_best_of_3": min(times),
            "seconds_runs": times,
            "numpy_loop_seconds": numpy_secs,
            "mean_sweeps": float(np.mean(res.sweeps)),
        }
        log(
            f"timing {label}: {min(times):.3f}s compiled (25 restarts), {numpy_secs:.2f}s numpy loop, "
            f"{np.mean(res.sweeps):.1f} sweeps/restart"
        )
    return out


def _fmt(x):
    return "–" if x is None else f"{x:.3f}"


def markdown(results) -> str:
    lines = []
    clus = results.get("clustering", {})
    for metric, title in (
        ("ari", "Adjusted Rand index (Table 5.1)"),
        ("ami", "AMI (Table C.1)"),
        ("v_measure", "V-measure (Table C.2)"),
    ):
        if not clus:
            break
        lines += [
            f"### {title}",
            "",
            "ours / thesis, mean of 10 seeded runs",
            "",
            "| dataset | " + " | ".join(COMBOS) + " |",
            "|---" * (len(COMBOS) + 1) + "|",
        ]
        for name, res in clus.items():
            cells = [
                f"{_fmt(res['combos'][c][metric])} / {_fmt(THESIS[metric][name][i])}"
                for i, c in enumerate(COMBOS)
            ]
            lines.append(f"| {TITLES[name]} | " + " | ".join(cells) + " |")
        lines.append("")
    if clus:
        lines += [
            "### Spectral clustering: affinity transforms (mean ARI)",
            "",
            "| dataset | "
            + " | ".join(
                f"{c} {t}" for c in ("SC-F", "SC-H", "SC-SH") for t in ("shift-min", "cosine", "rbf")
            )
            + " |",
            "|---" * 10 + "|",
        ]
        for name, res in clus.items():
            st = res["spectral_transforms"]
            cells = [
                _fmt(st.get(t, {}).get(c))
                for c in ("SC-F", "SC-H", "SC-SH")
                for t in ("shift-min", "cosine", "rbf")
            ]
            lines.append(f"| {TITLES[name]} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "### Fisher-kernel structures",
            "",
            "| dataset | rows | features | clusters | structure | arcs | "
            "kernel range (F) | kernel range (SH) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, res in clus.items():
            f = res["fisher"]
            sh = res["scaled_hamming_range"]
            lines.append(
                f"| {TITLES[name]} | {res['rows']} | {res['features']} | {res['clusters']} | "
                f"{f['structure']} | {f['n_arcs']} | {f['k_min']:.1f} .. {f['k_max']:.1f} | "
                f"{sh[0]:.1f} .. {sh[1]:.1f} |"
            )
        lines.append("")
    clf = results.get("classification", {})
    for metric, title in (("accuracy", "Accuracy (Table D.1)"), ("log_loss", "Log loss (Table D.2)")):
        if not clf:
            break
        lines += [
            f"### {title}",
            "",
            "ours / thesis, mean of 10 seeded 80/20 splits",
            "",
            "| dataset | " + " | ".join(CLF_COMBOS) + " |",
            "|---" * (len(CLF_COMBOS) + 1) + "|",
        ]
        for name, res in clf.items():
            cells = [
                f"{_fmt(res[c][metric])} / {_fmt(THESIS[metric][name][i])}" for i, c in enumerate(CLF_COMBOS)
            ]
            lines.append(f"| {TITLES[name]} | " + " | ".join(cells) + " |")
        lines += [
            "",
            f"kNN with neighbours by largest kernel value instead of kernel distance ({metric}, ours / "
            "thesis):",
            "",
            "| dataset | kNN-F | kNN-H | kNN-SH |",
            "|---|---|---|---|",
        ]
        for name, res in clf.items():
            cells = [
                f"{_fmt(res.get(f'kNN-{a} (by similarity)', {}).get(metric))} / "
                f"{_fmt(THESIS[metric][name][CLF_COMBOS.index(f'kNN-{a}')])}"
                for a in ("F", "H", "SH")
            ]
            lines.append(f"| {TITLES[name]} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("clustering", "classification", "timing"))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--output", default=str(RESULTS / "cluster.json"))
    args = ap.parse_args(argv)
    names = [n for n in args.datasets.split(",") if n]
    path = Path(args.output)
    results = json.loads(path.read_text()) if path.exists() else {}
    if args.only in (None, "timing"):
        results["timing"] = bench_timing()
    if args.only in (None, "clustering"):
        results.setdefault("clustering", {}).update(
            bench_clustering(names, args.runs, ["shift-min", "cosine", "rbf"])
        )
    if args.only in (None, "classification"):
        results.setdefault("classification", {}).update(bench_classification(names, args.runs))
    results["clustering"] = {
        n: results["clustering"][n] for n in DATASETS if n in results.get("clustering", {})
    }
    results["classification"] = {
        n: results["classification"][n] for n in DATASETS if n in results.get("classification", {})
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
