"""Latent classes with Gaussian indicators: ours (``fit_mixed_lca``) beside StepMix's mixed measurement model
(``categorical_nan`` + ``gaussian_diag_nan``), same data, same number of starts, same tolerance.

    python benchmarks/bench_lca_mixed.py          # -> benchmarks/results/lca_mixed.json

Tables: (a) 2,000 rows drawn from a known 3-class model (4 categorical + 3 Gaussian indicators, 10 % of the
cells blanked at random, seed 0), the true class known; (b) sample_data/hybrid auto (class: ``origin``) and
pima (class: ``type``), the class column left out of the fit.  Reported: log-likelihood at convergence, ARI of
the modal classes against the known class, seconds (wall, one process, shared machine: load recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from sklearn.metrics import adjusted_rand_score  # noqa: E402

from bnfk_core.hybrid import load_mixed, mixed_from_arrays  # noqa: E402
from bnfk_core.lca.mixed import fit_mixed_lca  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def synthetic(n: int = 2000, seed: int = 0):
    """(table, true class) of a 3-class model: 4 categorical indicators (3 states, Dirichlet(1) profiles) and
    3 Gaussian ones (class means 2 sd apart in a random order, class sds 0.5 to 1.5)."""
    rng = np.random.default_rng(seed)
    k = 3
    z = rng.choice(k, size=n, p=[0.5, 0.3, 0.2])
    cols, states = {}, {}
    for j in range(4):
        prof = rng.dirichlet(np.ones(3), size=k)
        u = rng.random(n)[:, None]
        cols[f"c{j}"] = (u > np.cumsum(prof[z], axis=1)).sum(axis=1)
        states[f"c{j}"] = ["s0", "s1", "s2"]
    for j in range(3):
        mu = rng.permutation(k) * 2.0
        sd = rng.uniform(0.5, 1.5, size=k)
        cols[f"x{j}"] = mu[z] + sd[z] * rng.standard_normal(n)
    for name in cols:
        hide = rng.random(n) < 0.1
        cols[name] = np.where(hide, -1 if name in states else np.nan, cols[name])
    return mixed_from_arrays(cols, states, "synthetic 3-class"), z


def stepmix_fit(data, k, starts, seed, tol):
    from stepmix.stepmix import StepMix

    cat, num = list(data.discrete), list(data.numeric)
    X = np.column_stack(
        [np.where(data.codes[:, cat] < 0, np.nan, data.codes[:, cat]).astype(float), data.values[:, num]]
    )
    desc = {}
    if cat:
        desc["cat"] = {"model": "categorical_nan", "n_columns": len(cat)}
    if num:
        desc["num"] = {"model": "gaussian_diag_nan", "n_columns": len(num)}
    sm = StepMix(
        n_components=k,
        measurement=desc,
        n_init=starts,
        random_state=seed,
        abs_tol=tol,
        max_iter=1000,
        verbose=0,
        progress_bar=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm.fit(X)
    return sm.score(X) * data.n_rows, sm.predict(X)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", default=str(RESULTS / "lca_mixed.json"))
    a = ap.parse_args()
    tables = []
    data, z = synthetic(seed=a.seed)
    tables.append(("synthetic 3-class", data, z, 3))
    for stem, label, k in (("auto", "origin", 3), ("pima", "type", 2)):
        d = load_mixed(ROOT / "sample_data" / "hybrid" / f"{stem}.csv")
        j = d.index(label)
        tables.append((stem, d.select([v for v in d.variables if v != label]), d.codes[:, j], k))
    out = {"starts": a.starts, "tol": a.tol, "load_before": os.getloadavg(), "tables": []}
    print(f"{'table':<18} {'K':>2} {'who':<8} {'loglik':>14} {'ARI':>7} {'seconds':>8}")
    for name, d, truth, k in tables:
        t0 = time.perf_counter()
        m = fit_mixed_lca(d, k, starts=a.starts, seed=a.seed, tol=a.tol)
        ours = (m.loglik, adjusted_rand_score(truth, m.modal_classes(d)), time.perf_counter() - t0)
        t0 = time.perf_counter()
        ll, pred = stepmix_fit(d, k, a.starts, a.seed, a.tol)
        peer = (ll, adjusted_rand_score(truth, pred), time.perf_counter() - t0)
        for who, (ll_, ari, sec) in (("bnfk", ours), ("StepMix", peer)):
            print(f"{name:<18} {k:>2} {who:<8} {ll_:14.4f} {ari:7.4f} {sec:8.2f}")
        out["tables"].append(
            {
                "table": name,
                "rows": d.n_rows,
                "classes": k,
                "ours": dict(zip(("loglik", "ari", "seconds"), ours)),
                "stepmix": dict(zip(("loglik", "ari", "seconds"), peer)),
                "ours_starts_at_best": m.starts_at_best,
            }
        )
        sys.stdout.flush()
    out["load_after"] = os.getloadavg()
    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    Path(a.output).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"written {a.output}; load {out['load_before']} -> {out['load_after']}")


if __name__ == "__main__":
    main()
