"""``reproduce kernel-zoo``: the Fisher kernel among the categorical similarity measures.

Every Boriah et al. (2008) measure of :mod:`bnfk_core.kernels.similarity`, the Fisher kernel of four networks
(empty, Chow-Liu tree, hill climbing with BIC, exact qNML), the normalised Fisher kernel with its defaults
(:mod:`bnfk_core.kernels.fisher_normalized`) and the latent-class rows on the 16 bundled data sets, scored by

* clustering against the class label: correlation clustering (adaptive shift for the measures, none
  for the Fisher kernel, as the thesis; each kernel's registered shift, so adaptive for the normalised
  Fisher kernel) and spectral clustering (min-shifted affinity), ARI and AMI
  (AMI normalised by max{H(U), H(V)}, thesis eq. C.4);
* kNN classification (k = 7, uniform votes) on one 80/20 split per seed, neighbours by kernel distance
  (the project's default) and, as a second column, by the largest similarity.

Protocol, per data set and seed s (seeds ``seed .. seed + repeats - 1``):

1. at most ``n_max`` rows drawn without replacement with seed s (all rows when fewer); the same rows
   for every kernel;
2. the four networks are learned on the features of those rows (label never a node); CPTs by cNML for
   all four (the thesis's estimator, so only the structure differs).  "exact-qnml" is the exact
   qNML-optimal DAG when the data set has at most ``exact_max_vars`` features, else hill climbing with
   qNML (recorded per data set);
3. clustering: every kernel fitted and evaluated on all drawn rows (the label is not used);
4. kNN: the split of ``train_test_split(random_state=s)``; measures fitted on the training rows,
   Fisher kernels keep the step-2 structure (it saw the test rows' features, never their labels) with
   CPTs re-fitted on the training rows.

Outputs (in ``<out>/kernel_zoo/``): ``kernel_zoo_runs.csv`` (one row per data set x seed x kernel),
``kernel_zoo.csv`` (mean and std over seeds), ``kernel_zoo_ranks.csv`` (average rank over data sets per
metric, Friedman test, Nemenyi critical difference), ``kernel_zoo.md`` (tables and the reading),
``fig_kernel_zoo_ranks.html/.json`` (plotly) and ``fig_kernel_zoo_ranks.svg`` /
``fig_kernel_zoo_knn_by_dataset.svg`` (self-contained, viewable offline).
"""

from __future__ import annotations

import html
import sys
import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from scipy import stats as sps
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

from ..analyses.cluster.clustering import classify_many, cluster, default_n_clusters
from ..kernels.fisher import FISHER, NetworkKernel
from ..kernels.fisher_normalized import DEFAULT_NETWORK as FN_NETWORK
from ..kernels.fisher_normalized import FISHER_NORMALIZED
from ..kernels.similarity import BORIAH_MEASURES
from ..lca import fit_lca
from ..lca.members import LCA_FISHER
from ..learning.structure import learn_structure
from ..network.dag import DAG
from ..network.model import fit
from ..registry import KERNELS
from . import common as ex
from .output import markdown_table

__all__ = [
    "METRICS",
    "NETWORKS",
    "N_MAX",
    "N_MAX_QUICK",
    "QUICK_ZOO",
    "ZOO_DIR",
    "rank_table",
    "run_zoo",
    "zoo_datasets",
    "zoo_kernels",
]

ZOO_DIR = "kernel_zoo"
#: network key -> (label, learning method, score)
NETWORKS = {
    "empty": ("Fisher, empty network", "empty", "qnml"),
    "chow-liu": ("Fisher, Chow-Liu tree", "tree", "qnml"),
    "hc-bic": ("Fisher, hc/BIC", "hc-greedy", "bic"),
    "exact-qnml": ("Fisher, exact qNML", "exact", "qnml"),
}
QUICK_ZOO = ("hayes_roth", "zoo")
N_MAX, N_MAX_QUICK = 300, 120
EXACT_MAX_VARS = 16
LCA_CLUSTERING = "lca-clustering"
LCA_STARTS = 10
PARAMS = "cnml"
#: metric column -> label (higher is better for all)
METRICS = {
    "ari_cc": "ARI, correlation clustering",
    "ami_cc": "AMI, correlation clustering",
    "ari_sc": "ARI, spectral clustering",
    "ami_sc": "AMI, spectral clustering",
    "knn": "kNN accuracy (kernel distance)",
    "knn_sim": "kNN accuracy (largest similarity)",
}


def zoo_kernels() -> list[tuple[str, str, str]]:
    """(key, label, family) of every row of the comparison: the 14 measures, the four Fisher kernels, the
    normalised Fisher kernel with its defaults (its own network and CPTs, learned on the drawn rows), the
    latent-class Fisher kernel (K = the number of classes) and latent-class clustering (no kernel: its two
    clustering columns both hold the modal classes of a K-class model; no kNN).

    Returns
    -------
    list of (str, str, str)
    """
    out = [(m, KERNELS[m].label, "measure") for m in BORIAH_MEASURES]
    out += [(f"fisher-{k}", lab, "fisher") for k, (lab, _, _) in NETWORKS.items()]
    out += [(FISHER_NORMALIZED, KERNELS[FISHER_NORMALIZED].label, "normalized")]
    out += [
        (LCA_FISHER, KERNELS[LCA_FISHER].label, "latent"),
        (LCA_CLUSTERING, "Latent class clustering", "latent"),
    ]
    return out


def zoo_datasets() -> tuple:
    """The bundled data sets with a label column (sample_data/catalog.json), sorted.

    Returns
    -------
    tuple of str
    """
    return tuple(sorted(k for k, e in ex.catalog().items() if e.get("class_column")))


def _load(stem: str):
    return ex.load_paper_data(stem) if stem in ex.PAPER_LOAD else ex.load_thesis_data(stem)


def _names(settings) -> list[str]:
    allowed = zoo_datasets()
    stems = settings.datasets or (QUICK_ZOO if settings.quick else allowed)
    for s in stems:
        if s not in allowed:
            raise ex.ReproduceError(f"'{s}' is not a bundled data set; choose from {', '.join(allowed)}.")
    return list(stems)


def _network(feats, key: str, seed: int, exact_max: int):
    _, method, score = NETWORKS[key]
    if method == "exact" and feats.n_vars > exact_max:
        method = "hc-greedy"
    if method == "empty":
        return DAG(list(feats.variables)), "empty", 0.0
    t0 = time.perf_counter()
    dag = learn_structure(feats, method, score=score, seed=seed, class_column=None).dag
    # the published tables label the greedy climb "hc"
    return dag, f"{'hc' if method == 'hc-greedy' else method}/{score}", time.perf_counter() - t0


def _zoo_one(
    stem: str, seeds: tuple, n_max: int, restarts: int, exact_max: int, done: frozenset = frozenset()
) -> dict:
    """The rows of one data set; (stem, seed, kernel) triples in ``done`` are already computed and skipped."""
    t_all = time.perf_counter()
    data = _load(stem)
    rows = []
    how = {}
    for s in seeds:
        todo = [kk for kk in zoo_kernels() if (stem, s, kk[0]) not in done]
        if not todo:
            continue
        rng = np.random.default_rng(s)
        idx = (
            np.arange(data.n_rows)
            if data.n_rows <= n_max
            else np.sort(rng.choice(data.n_rows, n_max, replace=False))
        )
        d = data.subset(idx)
        feats = d.without_class()
        y = d.labels()
        ok = y >= 0
        k = default_n_clusters(d)
        nets = {
            key: _network(feats, key, s, exact_max)
            for key in NETWORKS
            if any(kk[0] == f"fisher-{key}" for kk in todo)
        }
        how.update({key: v[1] for key, v in nets.items()})
        for key, label, family in todo:
            t0 = time.perf_counter()
            if key == LCA_CLUSTERING:
                rows.append(_lca_row(stem, s, label, feats, y, ok, k, t0))
                continue
            if key == LCA_FISHER:
                K = KERNELS[key].fit(feats, classes=k, seed=s, starts=LCA_STARTS).gram(feats)
                reg, extra = key, {}
            elif family == "fisher":
                dag = nets[key[len("fisher-") :]][0]
                K = NetworkKernel(FISHER, fit(dag, feats, method=PARAMS)).gram(feats)
                reg, extra = FISHER, {"dag": dag, "params": PARAMS}
            elif (
                family == "normalized"
            ):  # its defaults: alpha and the network it learns on the rows (kNN: per split)
                K = KERNELS[key].fit(feats, seed=s).gram(feats)
                reg, extra = (
                    key,
                    {f: FN_NETWORK[f] for f in ("structure", "score", "params")},
                )  # + its pseudo-count
            else:
                K = KERNELS[key].fit(feats).gram(feats)
                reg, extra = key, {}
            rec = {
                "dataset": stem,
                "seed": s,
                "kernel": key,
                "label": label,
                "family": family,
                "rows": d.n_rows,
                "network": nets[key[len("fisher-") :]][1]
                if family == "fisher"
                else f"{FN_NETWORK['structure']}/{FN_NETWORK['score']}"
                if family == "normalized"
                else "",
                "n_arcs": nets[key[len("fisher-") :]][0].n_arcs if family == "fisher" else np.nan,
                "learn_seconds": nets[key[len("fisher-") :]][2] if family == "fisher" else 0.0,
            }
            for alg, tag in (("correlation", "cc"), ("spectral", "sc")):
                lab = cluster(K, k, alg, kernel=reg, restarts=restarts, seed=s).labels
                rec[f"ari_{tag}"] = float(adjusted_rand_score(y[ok], lab[ok]))
                rec[f"ami_{tag}"] = float(adjusted_mutual_info_score(y[ok], lab[ok], average_method="max"))
            for by, col in (("distance", "knn"), ("similarity", "knn_sim")):
                res = classify_many(d, reg, ("knn",), repeats=1, seed=s, k=7, neighbours=by, **extra)["knn"]
                rec[col] = float(res.accuracy[0])
            rec["seconds"] = time.perf_counter() - t0
            rows.append(rec)
    sys.stderr.write(f"kernel zoo {stem}: {time.perf_counter() - t_all:.1f} s\n")
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
    # the 6 significant digits the runs CSV keeps: ranks of near-ties (ARI 1 vs 0.9999999) then agree with the
    # file
    frame[list(METRICS)] = frame[list(METRICS)].map(lambda v: float(f"{v:.6g}"))
    return {"stem": stem, "frame": frame, "networks": how, "seconds": time.perf_counter() - t_all}


RUN_COLUMNS = [
    "dataset",
    "seed",
    "kernel",
    "label",
    "family",
    "rows",
    "network",
    "n_arcs",
    "learn_seconds",
    *METRICS,
    "seconds",
]


def _earlier_runs(out, names, seeds, n_max, restarts, exact_max) -> pd.DataFrame:
    """The runs already in ``<out>/kernel_zoo/kernel_zoo_runs.csv`` when the folder's manifest records the
    same protocol (seeds, rows, restarts, exact-search bound, CPT estimator) -- the rows of the kernels (and
    data sets) asked for; an empty frame otherwise.  So adding a kernel to the zoo computes only its rows."""
    import json
    from pathlib import Path

    empty = pd.DataFrame(columns=RUN_COLUMNS)
    path, man = Path(out) / ZOO_DIR / "kernel_zoo_runs.csv", Path(out) / "manifest.json"
    if not (path.exists() and man.exists()):
        return empty
    try:
        rec = json.loads(man.read_text())["experiments"]["kernel-zoo"]
    except (KeyError, ValueError):
        return empty
    same = (
        list(rec.get("seeds", [])) == list(seeds)
        and rec.get("n_max") == n_max
        and rec.get("restarts") == restarts
        and rec.get("exact_max_vars") == exact_max
        and rec.get("params") == PARAMS
    )
    if not same:
        return empty
    runs = pd.read_csv(path, keep_default_na=False, na_values=[""])
    keys = {k for k, _, _ in zoo_kernels()}
    runs = runs[runs["dataset"].isin(names) & runs["seed"].isin(seeds) & runs["kernel"].isin(keys)]
    return runs.reindex(columns=RUN_COLUMNS).reset_index(drop=True)


def _lca_row(stem, s, label, feats, y, ok, k, t0) -> dict:
    """Latent-class clustering: the modal classes of a k-class model (``LCA_STARTS`` seeded starts)."""
    lab = fit_lca(feats, k, LCA_STARTS, s).modal_classes(feats)
    ari = float(adjusted_rand_score(y[ok], lab[ok]))
    ami = float(adjusted_mutual_info_score(y[ok], lab[ok], average_method="max"))
    return {
        "dataset": stem,
        "seed": s,
        "kernel": LCA_CLUSTERING,
        "label": label,
        "family": "latent",
        "rows": feats.n_rows,
        "network": "latent class",
        "n_arcs": np.nan,
        "learn_seconds": 0.0,
        "ari_cc": ari,
        "ami_cc": ami,
        "ari_sc": ari,
        "ami_sc": ami,
        "knn": np.nan,
        "knn_sim": np.nan,
        "seconds": time.perf_counter() - t0,
    }


# ====================================================================== summaries
def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over seeds per (dataset, kernel).

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per data set, kernel and seed.

    Returns
    -------
    pandas.DataFrame
    """
    g = runs.groupby(["dataset", "kernel"], sort=False)
    out = g[list(METRICS)].mean()
    std = g[list(METRICS)].std(ddof=0).add_suffix("_std")
    first = g[["label", "family", "network", "rows"]].first()
    n = g.size().rename("seeds")
    return pd.concat([first, out, std, n], axis=1).reset_index()


def rank_table(summary: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Average rank (1 = best, ties share the mean rank) of every kernel over the data sets, per metric,
    with the Friedman test and the Nemenyi critical difference at alpha = 0.05 (Demsar 2006).

    Parameters
    ----------
    summary : pandas.DataFrame
        From :func:`summary_table`.

    Returns
    -------
    ranks : pandas.DataFrame
    tests : dict
        Per metric: ``datasets``, ``kernels``, ``friedman_p`` and ``nemenyi_cd``.

    References
    ----------
    Demsar (2006), "Statistical comparisons of classifiers over multiple data sets".
    """
    order = list(dict.fromkeys(summary["kernel"]))
    ranks, tests = {}, {}
    for m in METRICS:
        wide = summary.pivot(index="dataset", columns="kernel", values=m)[order]
        r = wide.rank(axis=1, ascending=False, method="average")  # a missing value (no kNN) gets no rank
        ranks[m] = r.mean(axis=0)
        n_d = wide.shape[0]
        full = [c for c in order if wide[c].notna().all()]  # rows without this metric (no kNN) sit out
        k = len(full)
        q = float(sps.studentized_range.ppf(0.95, k, 1e6) / np.sqrt(2.0)) if k > 1 else float("nan")
        cd = q * np.sqrt(k * (k + 1) / (6.0 * n_d)) if n_d else float("nan")
        try:
            p = (
                float(sps.friedmanchisquare(*[wide[c].to_numpy() for c in full]).pvalue)
                if n_d >= 2
                else float("nan")
            )
        except ValueError:
            p = float("nan")
        tests[m] = {"datasets": int(n_d), "kernels": int(k), "friedman_p": p, "nemenyi_cd": float(cd)}
    df = pd.DataFrame(ranks)
    labels = summary.drop_duplicates("kernel").set_index("kernel")["label"]
    df.insert(0, "label", labels.reindex(df.index))
    df["mean rank"] = df[list(METRICS)].mean(axis=1)
    return df.sort_values("mean rank").reset_index(names="kernel"), tests


def reading(summary: pd.DataFrame, ranks: pd.DataFrame, tests: dict) -> list[str]:
    """Data-driven sentences: who ranks where, and on which data sets a network beats the empty one.

    Parameters
    ----------
    summary, ranks : pandas.DataFrame
    tests : dict
        From :func:`rank_table`.

    Returns
    -------
    list of str
    """
    lines = []
    for m, lab in METRICS.items():
        top = ranks.sort_values(m).head(3)
        fis = ranks[ranks["kernel"].str.startswith("fisher-")].sort_values(m)
        pos = {kk: int(i) + 1 for i, kk in enumerate(ranks.sort_values(m)["kernel"])}
        lines.append(
            f"**{lab}** — best average ranks: "
            + ", ".join(f"{r.label} ({r[m]:.1f})" for _, r in top.iterrows())
            + "; Fisher kernels: "
            + ", ".join(f"{r.label} {pos[r.kernel]}. ({r[m]:.1f})" for _, r in fis.iterrows())
            + f" of {len(ranks)}. Friedman p = {tests[m]['friedman_p']:.2g}, Nemenyi CD = "
            f"{tests[m]['nemenyi_cd']:.1f} ranks over {tests[m]['datasets']} data sets."
        )
    lines += latent_reading(summary)
    piv = {m: summary.pivot(index="dataset", columns="kernel", values=m) for m in METRICS}
    sd = {m: summary.pivot(index="dataset", columns="kernel", values=f"{m}_std") for m in METRICS}
    nets = [f"fisher-{k}" for k in NETWORKS if k != "empty"]
    for m in ("ari_cc", "ari_sc", "knn"):
        P, S = piv[m], sd[m]
        best = P[nets].max(axis=1)
        arg = P[nets].idxmax(axis=1)
        gap = best - P["fisher-empty"]
        noise = np.sqrt(S[nets].max(axis=1) ** 2 + S["fisher-empty"] ** 2)
        helps = [f"{ds} (+{g:.3f}, {arg[ds][7:]})" for ds, g in gap.items() if g > max(noise[ds], 0.01)]
        hurts = [
            f"{ds} ({g:.3f})"
            for ds, g in (P[nets].max(axis=1) - P["fisher-empty"]).items()
            if P.loc[ds, nets].max() < P.loc[ds, "fisher-empty"] - max(noise[ds], 0.01)
        ]
        wins = [
            ds
            for ds in P.index
            if P.loc[ds].idxmax().startswith("fisher-") and not P.loc[ds].idxmax().endswith("empty")
        ]
        lines.append(
            f"**{METRICS[m]}**: a network beats the empty network by more than the seed noise on "
            f"{len(helps)} of {len(P)} data sets"
            + (": " + ", ".join(helps) if helps else "")
            + (f"; every network is worse than the empty one on {', '.join(hurts)}" if hurts else "")
            + f". A network Fisher kernel is the best of all {P.shape[1]} kernels on "
            + (", ".join(wins) if wins else "no data set")
            + "."
        )
    return lines


def latent_reading(summary: pd.DataFrame) -> list[str]:
    """How latent-class clustering and the latent-class Fisher kernel compare with the best kernel clustering.

    Parameters
    ----------
    summary : pandas.DataFrame

    Returns
    -------
    list of str
    """
    if LCA_CLUSTERING not in set(summary["kernel"]):
        return []
    P = summary.pivot(index="dataset", columns="kernel", values="ari_cc")
    kern = [c for c in P.columns if c not in (LCA_CLUSTERING, LCA_FISHER)]
    best = P[kern].max(axis=1)
    wins = [
        f"{ds} ({P.loc[ds, LCA_CLUSTERING]:.2f} vs {best[ds]:.2f})"
        for ds in P.index
        if P.loc[ds, LCA_CLUSTERING] > best[ds]
    ]
    out = [
        "**Latent classes**: latent-class clustering (modal classes, K = the number of labels) beats the "
        "best "
        f"correlation clustering of every other kernel on {len(wins)} of {len(P)} data sets"
        + (": " + ", ".join(wins) if wins else "")
        + "."
    ]
    if LCA_FISHER in P.columns:
        lf = P[LCA_FISHER]
        out.append(
            f"The latent-class Fisher kernel's correlation clustering has mean ARI {lf.mean():.3f} against "
            f"{P[LCA_CLUSTERING].mean():.3f} for the latent class model's own modal classes and "
            f"{P[[f'fisher-{n}' for n in NETWORKS if f'fisher-{n}' in P.columns]].mean(axis=1).mean():.3f} "
            "for the network "
            "Fisher kernels: the kernel does not recover the partition the model itself finds."
        )
    return out


# ====================================================================== figures
def rank_figure(ranks: pd.DataFrame) -> go.Figure:
    """Heatmap of average ranks (kernels x metrics), best kernels on top.

    Parameters
    ----------
    ranks : pandas.DataFrame

    Returns
    -------
    plotly.graph_objects.Figure
    """
    z = ranks[list(METRICS)].to_numpy()
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[METRICS[m] for m in METRICS],
            y=list(ranks["label"]),
            colorscale="RdYlGn_r",
            text=np.round(z, 1),
            texttemplate="%{text}",
            colorbar={"title": "avg rank"},
        )
    )
    fig.update_layout(
        title="Kernel zoo: average rank over the data sets (1 = best)",
        height=40 + 28 * len(ranks),
        yaxis={"autorange": "reversed"},
        margin={"l": 220},
    )
    return fig


def _color(v: float, lo: float, hi: float) -> str:
    t = 0.0 if hi <= lo else min(max((v - lo) / (hi - lo), 0.0), 1.0)
    r = round(40 + 200 * t)
    g = round(170 - 110 * t)
    b = round(90 - 40 * t)
    return f"#{r:02x}{g:02x}{b:02x}"


def svg_heatmap(values: np.ndarray, rows: list, cols: list, title: str, note: str = "") -> str:
    """A self-contained SVG heatmap (green = small = good rank), numbers in the cells.

    Parameters
    ----------
    values : ndarray, shape (len(rows), len(cols))
    rows, cols : list of str
    title, note : str

    Returns
    -------
    str
    """
    cw, ch, left, top = 62, 22, 230, 150
    W, H = left + cw * len(cols) + 20, top + ch * len(rows) + 50
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
        'font-size="11">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{html.escape(title)}</text>',
    ]
    for j, c in enumerate(cols):
        x = left + cw * j + cw / 2
        out.append(f'<text transform="translate({x:.0f},{top - 6}) rotate(-50)">{html.escape(str(c))}</text>')
    for i, r in enumerate(rows):
        y = top + ch * i
        out.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{html.escape(str(r))}</text>')
        for j in range(len(cols)):
            v = values[i, j]
            fill = "#dddddd" if not np.isfinite(v) else _color(v, lo, hi)
            out.append(
                f'<rect x="{left + cw * j}" y="{y}" width="{cw - 1}" height="{ch - 1}" fill="{fill}"/>'
            )
            if np.isfinite(v):
                out.append(
                    f'<text x="{left + cw * j + cw / 2:.0f}" y="{y + 15}" text-anchor="middle" fill="white">'
                    f"{v:.1f}</text>"
                )
    if note:
        out.append(f'<text x="10" y="{H - 15}">{html.escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# ====================================================================== the experiment
def run_zoo(settings, w, progress) -> dict:
    """The ``kernel-zoo`` experiment (module docstring); files go to ``<out>/kernel_zoo/``.

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
    """
    names = _names(settings)
    repeats = settings.repeats or (1 if settings.quick else 3)
    n_max = N_MAX_QUICK if settings.quick else N_MAX
    restarts = 3 if settings.quick else 10
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else EXACT_MAX_VARS
    seeds = tuple(settings.seed + r for r in range(repeats))
    ex.say(progress, 0.0, f"kernel zoo on {len(names)} data sets")
    kept = _earlier_runs(w.out, names, seeds, n_max, restarts, exact_max)
    done = frozenset(zip(kept["dataset"], kept["seed"], kept["kernel"]))
    results = ex.map_jobs(
        _zoo_one, [(s, seeds, n_max, restarts, exact_max, done) for s in names], settings.jobs
    )
    order = {k: i for i, (k, _, _) in enumerate(zoo_kernels())}
    runs = pd.concat([f for f in [kept] + [r["frame"] for r in results] if len(f)], ignore_index=True)
    runs = runs.astype({c: float for c in [*METRICS, "n_arcs", "learn_seconds", "seconds"]})
    runs = runs.sort_values(
        ["dataset", "seed", "kernel"], key=lambda c: c.map(order) if c.name == "kernel" else c, kind="stable"
    ).reset_index(drop=True)
    summ = summary_table(runs)
    ranks, tests = rank_table(summ)
    text = reading(summ, ranks, tests)
    sub = w.out / ZOO_DIR
    sub.mkdir(parents=True, exist_ok=True)
    w.frame(f"{ZOO_DIR}/kernel_zoo_runs", runs)
    setup = (
        f"{len(names)} data sets, seeds {seeds[0]}..{seeds[-1]}, at most {n_max} rows per seed; correlation "
        f"clustering ({restarts} restarts; adaptive shift for the measures and the normalised Fisher kernel, "
        "none for "
        "the other Fisher kernels) and spectral "
        "clustering (min-shifted affinity) with k = number of classes; kNN k = 7 on one 80/20 split per "
        "seed; "
        f"Fisher networks learned on the drawn rows' features, CPTs by {PARAMS}; exact qNML up to "
        f"{exact_max} features, hill climbing with qNML above"
    )
    w.table(
        f"{ZOO_DIR}/kernel_zoo",
        summ,
        title="Kernel zoo: every measure and the Fisher kernel (mean and std over seeds)",
        caption="(no published counterpart: a new comparison)",
        measured="ARI/AMI of correlation and spectral clustering against the class; kNN accuracy",
        setup=setup,
    )
    rk = ranks.copy()
    w.frame(f"{ZOO_DIR}/kernel_zoo_ranks", rk)
    fig = rank_figure(ranks)
    w.figure(f"{ZOO_DIR}/fig_kernel_zoo_ranks", fig)
    cd = ", ".join(f"{METRICS[m]}: {t['nemenyi_cd']:.1f}" for m, t in tests.items())
    svg = svg_heatmap(
        ranks[list(METRICS)].to_numpy(),
        list(ranks["label"]),
        [METRICS[m] for m in METRICS],
        "Average rank over the data sets (1 = best)",
        f"Nemenyi critical difference (alpha 0.05): {cd}",
    )
    (sub / "fig_kernel_zoo_ranks.svg").write_text(svg)
    w.files.append(f"{ZOO_DIR}/fig_kernel_zoo_ranks.svg")
    piv = summ.pivot(index="kernel", columns="dataset", values="knn")
    per_ds = piv.rank(axis=0, ascending=False).reindex(list(ranks["kernel"]))
    (sub / "fig_kernel_zoo_knn_by_dataset.svg").write_text(
        svg_heatmap(
            per_ds.to_numpy(),
            list(ranks["label"]),
            list(per_ds.columns),
            "kNN accuracy (kernel distance): rank on each data set (1 = best)",
        )
    )
    w.files.append(f"{ZOO_DIR}/fig_kernel_zoo_knn_by_dataset.svg")
    md = (
        [
            "# Kernel zoo: the Fisher kernel among the categorical similarity measures",
            "",
            f"*Setup:* {setup}.",
            "",
        ]
        + (
            [
                f"{len(kept)} of the {len(runs)} runs were kept from the earlier run in this "
                "folder (same data sets, seeds, rows, restarts and networks, as its manifest records); the "
                "others were "
                "computed now.",
                "",
            ]
            if len(kept)
            else []
        )
        + [
            "Generated by `python -m bnfk_core reproduce kernel-zoo -o docs/results`"
            + (" --quick (a smoke run: few data sets and rows, one seed)." if settings.quick else "."),
            "",
            "![average ranks](fig_kernel_zoo_ranks.svg)",
            "",
            "## Average ranks (1 = best; lower is better)",
            "",
            markdown_table(ranks, digits=2),
            "",
            (
                "Friedman test and Nemenyi critical difference (two kernels whose average ranks differ by "
                "less than "
                "the CD are not distinguishable at alpha = 0.05):"
            ),
            "",
            markdown_table(pd.DataFrame([{"metric": METRICS[m], **t} for m, t in tests.items()]), digits=3),
            "",
            "## Reading (computed from the table)",
            "",
        ]
        + [f"- {t}" for t in text]
        + ["", "## Per data set (mean ± std over seeds)", ""]
    )
    for m in ("ari_cc", "ari_sc", "knn"):
        tab = (
            summ.assign(v=[f"{a:.3f} ± {b:.3f}" for a, b in zip(summ[m], summ[f"{m}_std"])])
            .pivot(index="label", columns="dataset", values="v")
            .reindex(list(ranks["label"]))
        )
        md += [f"### {METRICS[m]}", "", markdown_table(tab.reset_index()), ""]
    md += ["![kNN ranks per data set](fig_kernel_zoo_knn_by_dataset.svg)", ""]
    (sub / "kernel_zoo.md").write_text("\n".join(md))
    return {
        "datasets": names,
        "seeds": list(seeds),
        "n_max": n_max,
        "restarts": restarts,
        "exact_max_vars": exact_max,
        "params": PARAMS,
        "networks": {r["stem"]: r["networks"] for r in results},
        "seconds_per_dataset": {r["stem"]: r["seconds"] for r in results},
        "tests": tests,
        "reading": text,
    }
