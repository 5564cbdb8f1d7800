"""Imputation of mixed tables: the CLG network's conditional means beside scikit-learn's imputers.

    python benchmarks/bench_impute_mixed.py                # -> benchmarks/results/impute_mixed.json
    python benchmarks/bench_impute_mixed.py --quick        # the synthetic tables and auto only

Protocol (:mod:`bnfk_core.analyses.impute.mixed`): ``--ratio`` of the observed cells hidden completely at
random (repeat r: seed ``--seed`` + r), every imputer fills them from the masked table, numbers scored by the
pooled normalised RMSE (RMSE / the column's standard deviation, over every hidden numeric cell) and categories
by accuracy; seconds per imputer (wall, one process, on a shared machine: the JSON records the load).

Tables: (a) drawn from known CLG networks with ``HybridNet.sample`` (the 6-node example network
``bnfk_core.hybrid.six_node_clg``, 3 discrete + 3 Gaussian nodes, and a 10-node one below with stronger
discrete-numeric coupling), where the network's conditional mean is the Bayes-optimal filler; (b) the real
mixed tables of sample_data/hybrid (auto, biopsy, boston, pima, survey, attrition; provenance in its README),
read by ``load_mixed`` (a column of numbers with fewer than 10 distinct values is a category).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bnfk_core.analyses.impute.mixed import MIXED_IMPUTERS, mixed_benchmark  # noqa: E402
from bnfk_core.hybrid import HybridNet, LinearGaussian, load_mixed, six_node_clg  # noqa: E402
from bnfk_core.network.dag import DAG  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
REAL = ("auto", "biopsy", "boston", "pima", "survey", "attrition")


def six_node() -> HybridNet:
    """The six-node example network (the tests' too): A -> B -> C; A -> X; X, C -> Y; Y, B -> Z."""
    return six_node_clg()


def ten_node(seed: int = 11) -> HybridNet:
    """4 discrete (D0 -> D1, D0 -> D2, D2 -> D3) + 6 Gaussian nodes: a chain X0 -> ... -> X5, each X_k with
    one discrete parent D_(k mod 4) shifting its intercept by a few standard deviations; the weights drawn
    from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    d = [f"D{k}" for k in range(4)]
    x = [f"X{k}" for k in range(6)]
    arcs = [("D0", "D1"), ("D0", "D2"), ("D2", "D3")]
    arcs += [(x[k - 1], x[k]) for k in range(1, 6)] + [(d[k % 4], x[k]) for k in range(6)]
    dag = DAG(d + x, arcs)
    cards = [2, 3, 2, 3]
    cpts = [np.array([[0.55, 0.45]])]
    for k, parent in ((1, 0), (2, 0), (3, 2)):
        cpts.append(rng.dirichlet(np.full(cards[k], 0.7), size=cards[parent]))
    gs = []
    for k in range(6):
        q = cards[k % 4]
        intercept = rng.normal(0, 2.5, size=(q, 1))
        w = rng.uniform(0.5, 1.0, size=(q, 1 if k else 0)) * rng.choice([-1, 1], size=(q, 1 if k else 0))
        gs.append(LinearGaussian(np.concatenate([intercept, w], axis=1), rng.uniform(0.3, 1.0, size=q)))
    kinds = ("discrete",) * 4 + ("numeric",) * 6
    states = tuple(tuple(f"s{j}" for j in range(c)) for c in cards) + ((),) * 6
    return HybridNet(dag, kinds, states, tuple(cpts) + (None,) * 6, (None,) * 4 + tuple(gs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ratio", type=float, default=0.2)
    ap.add_argument(
        "--repeats", type=int, default=3, help="repeats of the synthetic tables (real: --real-repeats)"
    )
    ap.add_argument("--real-repeats", type=int, default=1)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--imputers", default=",".join(MIXED_IMPUTERS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tables", default=None, help="comma-separated subset of six,ten," + ",".join(REAL))
    ap.add_argument("-o", "--output", default=str(RESULTS / "impute_mixed.json"))
    a = ap.parse_args()
    imputers = [s.strip() for s in a.imputers.split(",") if s.strip()]
    tables = {
        "six-node CLG": lambda: six_node().sample(a.rows, seed=a.seed + 100),
        "ten-node CLG": lambda: ten_node().sample(a.rows, seed=a.seed + 200),
    }
    for stem in REAL:
        tables[stem] = lambda stem=stem: load_mixed(ROOT / "sample_data" / "hybrid" / f"{stem}.csv")
    if a.tables:
        keep = {s.strip() for s in a.tables.split(",")}
        tables = {k: v for k, v in tables.items() if k.split("-")[0] in keep or k in keep}
    elif a.quick:
        tables = {k: v for k, v in tables.items() if k in ("six-node CLG", "ten-node CLG", "auto")}
    out = {"ratio": a.ratio, "load_before": os.getloadavg(), "imputers": imputers, "tables": []}
    for name, make in tables.items():
        data = make()
        reps = a.repeats if "CLG" in name else a.real_repeats
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn's IterativeImputer convergence warnings
            res = mixed_benchmark(data, imputers, a.ratio, reps, a.seed)
        entry = {
            "table": name,
            "rows": data.n_rows,
            "numeric": len(data.numeric),
            "discrete": len(data.discrete),
            "repeats": reps,
            "summary": res.summary(),
            "runs": res.runs,
        }
        out["tables"].append(entry)
        print(
            f"\n{name}: {data.n_rows} rows, {len(data.numeric)} numeric + {len(data.discrete)} discrete, "
            f"{reps} repeat(s)"
        )
        print(f"  {'imputer':<10} {'NRMSE':>8} {'accuracy':>9} {'seconds':>8}")
        for s in entry["summary"]:
            print(f"  {s['imputer']:<10} {s['nrmse']:8.4f} {s['accuracy']:9.4f} {s['seconds']:8.2f}")
        sys.stdout.flush()
    out["load_after"] = os.getloadavg()
    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    Path(a.output).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"\nwritten {a.output}; load {out['load_before']} -> {out['load_after']}")


if __name__ == "__main__":
    main()
