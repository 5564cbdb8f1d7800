"""Thesis Tables 5.1, C.1 and C.2: correlation and spectral clustering with the Fisher, scaled-Hamming and
Hamming kernels (thesis ch. 5), ours beside published, and the uniform-parent-marginals ablation."""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_mutual_info_score

from ..analyses.cluster.clustering import KernelSetup, default_n_clusters, kernel_setup, run_clustering
from ..inference.queries import ParentMarginals
from ..kernels.fisher import FISHER, THESIS_KERNELS, gram
from ..registry import CLUSTERERS, kernel_abbr
from . import published as pub
from .common import (
    TABLE_FILES,
    Progress,
    Settings,
    load_thesis_data,
    map_jobs,
    resolve_structure,
    say,
    structure_spec,
    thesis_names,
)
from .output import Writer, bar_figure, comparison_frame


def _uniform_parent_marginals(model):
    """Parent marginals P(pi_i = j) uniform over the parent configurations (an ablation: what an unpropagated
    junction tree gives for chains and A-structures), for ``gram(..., marginals=...)``."""
    probs = tuple(
        np.full(model.n_parent_configs(i), 1.0 / model.n_parent_configs(i)) for i in range(model.n_vars)
    )
    return ParentMarginals(probs, tuple("uniform" for _ in probs))


def _clustering_one(stem: str, runs: int, restarts: int, seed: int, structure: str, exact_max: int) -> dict:
    """:func:`bnfk_core.analyses.cluster.clustering.compare`'s loop (same kernels, seeds and defaults),
    keeping the labels so the adjusted mutual information can also be taken with the thesis's normalisation
    max{H(U), H(V)} (eq. C.4; scikit-learn's default since 0.22 is the arithmetic mean, which gives larger
    values)."""
    t0 = time.perf_counter()
    data = load_thesis_data(stem)
    spec = structure_spec(structure, data.without_class().n_vars, exact_max)
    y = data.labels()
    ok = y >= 0
    k = default_n_clusters(data)
    rows = []
    for kern in THESIS_KERNELS:
        setup = kernel_setup(
            data, kern, structure=spec["method"], score=spec["score"], params=spec["params"], seed=seed
        )
        for alg in ("correlation", "spectral"):
            vals = []
            for r in range(int(runs)):
                o = run_clustering(
                    data, kern, alg, n_clusters=k, setup=setup, restarts=restarts, seed=seed + r
                )
                lab = np.asarray(o["labels"])
                ami_max = adjusted_mutual_info_score(y[ok], lab[ok], average_method="max")
                ami_ari = adjusted_mutual_info_score(y[ok], lab[ok], average_method="arithmetic")
                vals.append((o["ari"], ami_max, o["v_measure"], ami_ari, o["cluster_seconds"]))
            v = np.array(vals, float)
            rows.append(
                {
                    "combination": CLUSTERERS[alg].abbr + "-" + kernel_abbr(kern),
                    "algorithm": alg,
                    "kernel": kern,
                    "ari": v[:, 0].mean(),
                    "ari_std": v[:, 0].std(),
                    "ami": v[:, 1].mean(),
                    "ami_std": v[:, 1].std(),
                    "v_measure": v[:, 2].mean(),
                    "v_measure_std": v[:, 2].std(),
                    "ami_arithmetic": v[:, 3].mean(),
                    "ami_arithmetic_std": v[:, 3].std(),
                    "seconds": v[:, 4].mean(),
                    "structure": setup.structure,
                    "n_arcs": setup.n_arcs,
                }
            )
        if kern == FISHER:
            fisher_model = setup.model
    # ablation (not the thesis's method): the same network with uniform parent-configuration marginals, what
    # an unpropagated junction tree gives for chains and A-structures (see docs/RESULTS.md)
    um = fisher_model
    feats = data.without_class().select(list(um.variables))
    usetup = KernelSetup(
        gram(um, feats, marginals=_uniform_parent_marginals(um)), FISHER, um, feats.variables
    )
    for alg in ("correlation", "spectral"):
        a = [
            run_clustering(data, FISHER, alg, n_clusters=k, setup=usetup, restarts=restarts, seed=seed + r)[
                "ari"
            ]
            for r in range(int(runs))
        ]
        rows.append(
            {
                "combination": CLUSTERERS[alg].abbr + "-F uniform marginals",
                "algorithm": alg,
                "kernel": "fisher (uniform parent marginals)",
                "ari": float(np.mean(a)),
                "ari_std": float(np.std(a)),
                "n_arcs": fisher_model.dag.n_arcs,
            }
        )
    df = pd.DataFrame(rows)
    sys.stderr.write(f"clustering {stem}: {time.perf_counter() - t0:.1f} s\n")
    return {"stem": stem, "frame": df.assign(dataset=stem), "spec": spec, "seconds": time.perf_counter() - t0}


def run_thesis_clustering(settings: Settings, w: Writer, progress: Progress | None) -> dict:
    """Thesis Tables 5.1, C.1 and C.2 (correlation and spectral clustering with the Fisher, scaled-Hamming
    and Hamming kernels), ours beside published.

    Parameters
    ----------
    settings : Settings
    w : Writer
        Writes the experiment's files.
    progress : callable(fraction, message) or None

    Returns
    -------
    dict
        The experiment's part of its manifest record (:func:`~bnfk_core.reproduce.experiments.run_experiment`
        adds the rest).

    References
    ----------
    Thesis ch. 5, Table 5.1.
    """
    structure = resolve_structure(settings, "thesis")
    runs = settings.repeats or (2 if settings.quick else 10)
    restarts = 5 if settings.quick else 25
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else 20
    names = thesis_names(settings)
    say(progress, 0.0, f"clustering on {len(names)} data sets")
    results = map_jobs(
        _clustering_one,
        [(s, runs, restarts, settings.seed, structure, exact_max) for _, s in names],
        settings.jobs,
    )
    by = {r["stem"]: r for r in results}
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    setup = (
        f"{runs} runs (clustering seeds {settings.seed}..{settings.seed + runs - 1}), correlation clustering "
        f"with {restarts} restarts (adaptive shift for H/SH, none for F), spectral clustering on the "
        "min-shifted "
        f"kernel; Fisher network: {'exact' if structure == 'thesis' else 'hc'} ("
        + (
            "qNML, exact up to %d variables, cNML parameters)" % exact_max
            if structure == "thesis"
            else "BIC, smoothed parameters)"
        )
    )
    for tid, key in (("5.1", "ari"), ("C.1", "ami"), ("C.2", "v_measure")):
        t = pub.table(tid)
        ours, extra = {}, {}
        for _, s in names:
            f = by[s]["frame"].set_index("combination")
            ours[inv[s]] = {c: f.loc[c, key] for c in t.columns}
            extra[inv[s]] = {f"{c} std (ours)": f.loc[c, f"{key}_std"] for c in t.columns}
            if key == "ami":
                extra[inv[s]].update(
                    {
                        f"{c} AMI arithmetic-mean normalisation (ours)": f.loc[c, "ami_arithmetic"]
                        for c in t.columns
                    }
                )
            if key == "ari":
                for c in ("CC-F", "SC-F"):
                    extra[inv[s]][f"{c} uniform parent marginals, ablation (ours)"] = f.loc[
                        f"{c} uniform marginals", "ari"
                    ]
            extra[inv[s]]["Fisher structure"] = by[s]["spec"]["label"]
            extra[inv[s]]["Fisher arcs"] = int(f.loc["CC-F", "n_arcs"])
        df = comparison_frame(tid, ours, extra)
        w.table(
            TABLE_FILES[tid],
            df,
            title=f"Thesis Table {tid}",
            caption=t.caption,
            measured=t.measured,
            setup=setup,
            compact_columns=t.columns,
            notes=[
                "AMI (ours) uses the thesis's normalisation max{H(U), H(V)} (eq. C.4); scikit-learn's "
                "default arithmetic-mean normalisation is in the extra columns."
            ]
            if key == "ami"
            else (),
        )
    allf = pd.concat([r["frame"] for r in results], ignore_index=True)
    w.frame("thesis_clustering_runs", allf)
    bar_figure(
        w, "fig_thesis_5_1", "5.1", "Table 5.1: adjusted Rand index, ours (solid) vs published (hatched)"
    )
    return {
        "structure": structure,
        "runs": runs,
        "restarts": restarts,
        "exact_max_vars": exact_max,
        "structures": {s: by[s]["spec"]["label"] for _, s in names},
        "seconds_per_dataset": {s: by[s]["seconds"] for _, s in names},
    }
