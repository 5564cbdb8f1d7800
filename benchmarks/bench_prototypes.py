"""Prototype-selection benchmark: the paper's Figs. 1-3 and its run-time paragraph.

    python benchmarks/bench_prototypes.py                       # everything (about 15-30 min on 2 cores)
    python benchmarks/bench_prototypes.py --datasets nursery --structures hc --ks 200,1000 --draws 100

For every dataset (nursery; letter and waveform-5000 with numeric columns cut into 4 quantile
bins) and structure (``hc`` with BIC and the class as a feature = Fig. 1; ``tan`` = Fig. 2;
``kdb`` with K = 3 = Fig. 3): split 50/50 (seeded), learn on the training half, then for each k
draw R random subsets (baseline and starting points), run greedy MMD and greedy chi-square from
the best draw, re-fit the parameters on each subset and evaluate on the test half.

Writes ``benchmarks/results/prototypes.json`` (after every run, so a partial run keeps its rows)
and prints one line per (dataset, structure, k).  Nothing here is tuned: one seed, the defaults
of :mod:`bnfk_core.analyses.prototypes.selection`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bnfk_core.analyses.prototypes.selection import prepare_summarization, run_summarization  # noqa: E402
from bnfk_core.data.table import load_csv  # noqa: E402

SAMPLES = ROOT / "sample_data"
RESULTS = ROOT / "benchmarks" / "results" / "prototypes.json"

#: max_levels below the 16 integer levels of letter's columns so they are cut into 4 bins (as the paper).
DATASETS = {
    "nursery": dict(file="nursery.csv", max_levels=50),
    "letter": dict(file="letter.csv", max_levels=15),
    "waveform_5000": dict(file="waveform_5000.csv", max_levels=50),
}

#: The paper's run-time paragraph (quad-CPU 3.10 GHz desktop, Python), seconds.
PAPER_SECONDS = {
    "kernel": {"waveform_5000": 17, "nursery": 32, "letter": 94},
    "greedy_mmd": {"waveform_5000": (8, 180), "nursery": (12, 300), "letter": (42, 1140)},
    "greedy_chi2": {"waveform_5000": (60, 240), "nursery": (12, 48), "letter": (60, 300)},
    "random_draws": {"waveform_5000": (9, 18), "nursery": (20, 34), "letter": (45, 101)},
}


def load(name: str):
    spec = DATASETS[name]
    return load_csv(
        SAMPLES / spec["file"], class_column="class", discretize_bins=4, max_levels=spec["max_levels"]
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--structures", default="hc,tan,kdb")
    ap.add_argument("--ks", default="200,400,600,800,1000")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--output", default=str(RESULTS))
    ap.add_argument(
        "--speed",
        action="store_true",
        help="only time greedy MMD for k = 1000 on letter's training "
        "half (3 repeats, wall and CPU time) and exit",
    )
    ap.add_argument(
        "--report",
        action="store_true",
        help="print the Markdown tables of docs/PROTOTYPES.md from the results file and exit",
    )
    args = ap.parse_args(argv)
    out_path = Path(args.output)
    if args.report:
        print(report(json.loads(out_path.read_text())))
        return 0
    if args.speed:
        print(json.dumps(speed(args.seed), indent=1))
        return 0
    results = {
        "machine": f"{platform.processor() or platform.machine()}, {platform.system()}",
        "seed": args.seed,
        "draws": args.draws,
        "paper_seconds": PAPER_SECONDS,
        "runs": [],
    }
    if out_path.exists():
        try:
            old = json.loads(out_path.read_text())
            keep = {(d, s) for d in args.datasets.split(",") for s in args.structures.split(",")}
            results["runs"] = [r for r in old.get("runs", []) if (r["dataset"], r["structure"]) not in keep]
        except (ValueError, KeyError):
            pass
    for name in args.datasets.split(","):
        data = load(name)
        for structure in args.structures.split(","):
            t0 = time.perf_counter()
            exp = prepare_summarization(data, structure, seed=args.seed)
            print(
                f"{name} {structure}: {exp.model.dag.n_arcs} arcs, learn {exp.seconds['learn']:.2f} s, "
                f"kernel {exp.seconds['kernel']:.2f} s, features {exp.mmd.Phi.shape}",
                flush=True,
            )
            for k in [int(x) for x in args.ks.split(",")]:
                r = run_summarization(exp, k, random_draws=args.draws)
                r["dataset"] = name
                r["wall_seconds"] = time.perf_counter() - t0
                results["runs"].append(r)
                extra = ""
                if "error" in r["full"]:
                    extra = (
                        f" | err full {r['full']['error']:.3f} rnd {r['random']['error_mean']:.3f} "
                        f"mmd {r['mmd']['error']:.3f} chi2 {r['chi2']['error']:.3f}"
                        f" | logloss full {r['full']['log_loss']:.3f} rnd {r['random']['log_loss_mean']:.3f} "
                        f"mmd {r['mmd']['log_loss']:.3f} chi2 {r['chi2']['log_loss']:.3f}"
                    )
                s = r["seconds"]
                print(
                    f"  k={k:5d} nll full {r['full']['nll']:.3f} rnd {r['random']['nll_mean']:.3f}"
                    f"±{r['random']['nll_std']:.3f} mmd {r['mmd']['nll']:.3f} chi2 "
                    f"{r['chi2']['nll']:.3f}{extra}"
                    f" | s: draws {s['random_draws']:.1f} mmd {s['greedy_mmd']:.2f} chi2 "
                    f"{s['greedy_chi2']:.2f}",
                    flush=True,
                )
                out_path.parent.mkdir(parents=True, exist_ok=True)
                out_path.write_text(json.dumps(results, indent=1))
                t0 = time.perf_counter()
    return 0


def speed(seed: int = 0, k: int = 1000, repeats: int = 3) -> dict:
    """Greedy MMD for k = 1000 on letter's training half (10,000 rows), from the best of 1000 random
    subsets."""
    import numpy as np

    from bnfk_core.analyses.prototypes.selection import MMDCriterion, greedy_swap, random_subsets

    exp = prepare_summarization(load("letter"), "hc", seed=seed)
    draws = random_subsets(exp.train.n_rows, k, 1000, seed)
    start = draws[int(np.argmin(exp.mmd.values(draws)))]
    wall, cpu, res = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        res = greedy_swap(exp.mmd, start)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    generic = MMDCriterion(exp.mmd.Phi)  # kernel columns by sparse products instead of Theorem 1
    t0 = time.perf_counter()
    res_g = greedy_swap(generic, start)
    return {
        "rows": exp.train.n_rows,
        "k": k,
        "swaps": res.swaps,
        "passes": res.passes,
        "mmd": res.value,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "paper_seconds": 19 * 60,
        "speedup_wall_min": 19 * 60 / min(wall),
        "speedup_wall_max": 19 * 60 / max(wall),
        "generic_columns_wall_seconds": time.perf_counter() - t0,
        "generic_same_subset": bool(sorted(res_g.indices.tolist()) == sorted(res.indices.tolist())),
    }


def _fmt_s(x: float) -> str:
    return f"{x:.2f} s" if x < 60 else f"{x / 60:.1f} min"


def report(results: dict) -> str:
    """Markdown tables: Fig. 1 (hc NLL), Figs. 2-3 (TAN/KDB error, log loss, NLL), run times vs the paper."""
    runs = results["runs"]
    names = [n for n in DATASETS if any(r["dataset"] == n for r in runs)]
    out = []
    out.append("### Fig. 1: hill climbing (BIC), held-out NLL per row\n")
    out.append(
        "| dataset | k | all rows | random mean ± sd | greedy MMD | greedy χ² | MMD < random | MMD ≤ χ² |"
    )
    out.append("|---|---:|---:|---:|---:|---:|:-:|:-:|")
    for n in names:
        for r in (r for r in runs if r["dataset"] == n and r["structure"] == "hc"):
            m, c, rnd = r["mmd"]["nll"], r["chi2"]["nll"], r["random"]
            out.append(
                f"| {n} | {r['k']} | {r['full']['nll']:.3f} | {rnd['nll_mean']:.3f} ± {rnd['nll_std']:.3f} | "
                f"{m:.3f} | {c:.3f} | {'yes' if m < rnd['nll_mean'] else '**no**'} | "
                f"{'yes' if m <= c else '**no**'} |"
            )
    for struct, fig in (("tan", "Fig. 2: TAN"), ("kdb", "Fig. 3: KDB (K = 3)")):
        out.append(f"\n### {fig}: misclassification rate, log loss and NLL of the test half\n")
        out.append(
            "| dataset | k | error: all / random / MMD / χ² | log loss: all / random / MMD / χ² | "
            "NLL: random / MMD / χ² |"
        )
        out.append("|---|---:|---|---|---|")
        for n in names:
            for r in (r for r in runs if r["dataset"] == n and r["structure"] == struct):
                rnd = r["random"]

                def trio(key, r=r, rnd=rnd):
                    m, c = r["mmd"][key], r["chi2"][key]
                    best = min(m, c, rnd[f"{key}_mean"])
                    cell = lambda v: f"**{v:.3f}**" if v == best else f"{v:.3f}"  # noqa: E731
                    return f"{cell(rnd[f'{key}_mean'])} / {cell(m)} / {cell(c)}"

                out.append(
                    f"| {n} | {r['k']} | {r['full']['error']:.3f} / {trio('error')} | "
                    f"{r['full']['log_loss']:.3f} / {trio('log_loss')} | {trio('nll')} |"
                )
    out.append("\n### Run times: the paper (quad-CPU 3.10 GHz desktop, Python) and ours (this machine)\n")
    out.append("| dataset | step | paper | ours | speed-up |")
    out.append("|---|---|---:|---:|---:|")
    paper = results.get("paper_seconds", PAPER_SECONDS)
    for n in names:
        hc = sorted((r for r in runs if r["dataset"] == n and r["structure"] == "hc"), key=lambda r: r["k"])
        if not hc:
            continue
        lo, hi = hc[0], hc[-1]
        kern = hc[0]["seconds"]["kernel"]
        p = paper["kernel"][n]
        out.append(
            f"| {n} | parent probabilities + kernel (features) of the training half | {p} s | "
            f"{_fmt_s(kern)} | {p / kern:,.0f}× |"
        )
        for step, label in (("greedy_mmd", "greedy MMD"), ("greedy_chi2", "greedy χ²")):
            pl, ph = paper[step][n]
            ol, oh = lo["seconds"][step], hi["seconds"][step]
            out.append(f"| {n} | {label}, k = {lo['k']} | {_fmt_s(pl)} | {_fmt_s(ol)} | {pl / ol:,.0f}× |")
            out.append(f"| {n} | {label}, k = {hi['k']} | {_fmt_s(ph)} | {_fmt_s(oh)} | {ph / oh:,.0f}× |")
        pl, ph = paper["random_draws"][n]
        dr = [r["seconds"]["random_draws"] for r in hc]
        out.append(
            f"| {n} | {results['draws']} random subsets with MMD and χ² (k = {lo['k']}…{hi['k']}) | "
            f"{pl}–{ph} s | {_fmt_s(min(dr))}–{_fmt_s(max(dr))} | {pl / min(dr):,.0f}–{ph / max(dr):,.0f}× |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
