"""Clustering and classification with precomputed kernels (thesis ch. 5 and App. C, D).

The front door of clustering: a kernel's Gram matrix (or feature map) from data, the algorithm (by name, from
:data:`bnfk_core.registry.CLUSTERERS`), the automatic choice, metrics, and the thesis's comparison table.  The
ideas live in their own modules, re-exported here as the clustering API:

* :mod:`.cluster_correlation` -- correlation clustering (thesis eq. 5.2) and the adaptive shift;
* :mod:`.cluster_spectral` -- spectral clustering on an affinity built from the Gram matrix;
* :mod:`.cluster_features` -- kernel k-means in the explicit feature space (beyond the Gram limit);
* :mod:`.cluster_metrics` -- ARI / AMI / V-measure, the kernel silhouette, contingency and views;
* :mod:`.classification` -- kernel kNN and SVM (thesis App. D);
* :mod:`.cluster_common` -- the error, the result type and the checks they share.

The label column is never a feature: every kernel is computed on ``data.without_class()``.
Everything random takes a seed; the same seed gives the same result.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...data.limits import fits, format_bytes, guard_workspace, resolve_limit, workspace_bytes
from ...data.table import as_data
from ...kernels.members import FISHER, HAMMING, SCALED_HAMMING
from ...registry import CLUSTERERS, KERNELS, kernel_abbr
from .classification import (
    CLASSIFIERS,
    ClassificationResult,
    classification_table,
    classifier_label,
    classify,
    classify_many,
    knn_proba,
)
from .common import ClusterError, ClusterResult, Progress, check_model, feature_columns
from .correlation import SHIFTS, adaptive_shift, cc_cost, cc_move_deltas, correlation_clustering
from .members import FEATURE_CLUSTERER
from .metrics import cluster_ordering, clustering_metrics, contingency, embedding, kernel_silhouette
from .spectral import TRANSFORMS, affinity, spectral_clustering

__all__ = [
    "ALGORITHMS",
    "CLUSTER_ALGORITHMS",
    "choose_algorithm",
    "TRANSFORMS",
    "SHIFTS",
    "CLASSIFIERS",
    "ClusterResult",
    "ClassificationResult",
    "KernelSetup",
    "affinity",
    "adaptive_shift",
    "cc_cost",
    "cc_move_deltas",
    "correlation_clustering",
    "spectral_clustering",
    "cluster",
    "clustering_metrics",
    "kernel_silhouette",
    "kernel_setup",
    "feature_network",
    "run_clustering",
    "compare",
    "classify",
    "classify_many",
    "classification_table",
    "classifier_label",
    "contingency",
    "cluster_ordering",
    "embedding",
    "default_n_clusters",
    "MAX_DEFAULT_CLUSTERS",
    "ClusterError",
    "knn_proba",
    "FEATURE_ALGORITHM",
]

#: what ``auto`` runs beyond the Gram limit (kernel k-means on the explicit features; its name is written
#: once, in
#: :mod:`.members`)
FEATURE_ALGORITHM = FEATURE_CLUSTERER.name
#: the Gram-based algorithms (members of :data:`bnfk_core.registry.CLUSTERERS` with a ``gram`` function)
ALGORITHMS = tuple(name for name, spec in CLUSTERERS.items() if spec.gram is not None)
#: what :func:`run_clustering` (and the CLI's ``cluster --algorithm``) accepts: the Gram-based algorithms,
#: kernel k-means in the explicit feature space (:mod:`.cluster_features`), and ``auto`` (correlation
#: clustering when the Gram matrix and its work space fit the memory limit, else the feature-space method)
#: (the kernel-path members of :data:`bnfk_core.registry.CLUSTERERS`; other members, e.g. ``lca``, cluster the
#: rows themselves)
CLUSTER_ALGORITHMS = CLUSTERERS.names(uses_kernel=True)


def cluster(
    K,
    n_clusters: int,
    algorithm: str = "correlation",
    *,
    kernel: str | None = None,
    transform: str = "shift-min",
    shift: str = "auto",
    restarts: int = 25,
    seed: int = 0,
    init_labels=None,
) -> ClusterResult:
    """Cluster the Gram matrix ``K`` by the registered algorithm's ``gram`` function
    (:func:`spectral_clustering`,
    :func:`correlation_clustering`, ...; ``init_labels``: the correlation clustering's warm start; spectral
    clustering has none and ignores it)."""
    spec = CLUSTERERS.get(algorithm) if isinstance(algorithm, str) else None
    if spec is None or spec.gram is None:
        raise ClusterError(
            f"Unknown clustering algorithm '{algorithm}'; choose one of {', '.join(ALGORITHMS)}."
        )
    options = dict(
        kernel=kernel, transform=transform, shift=shift, restarts=restarts, seed=seed, init_labels=init_labels
    )
    return spec.gram(K, n_clusters, **CLUSTERERS.validate(algorithm, options))


@dataclass
class KernelSetup:
    """A Gram matrix over the feature columns and what produced it."""

    K: np.ndarray
    kernel: str
    model: object | None  # the BayesNet behind the Fisher kernel (None otherwise)
    feature_columns: tuple  # the variables the kernel sees (never the label column)
    structure: str | None = None  # e.g. "hc/qnml", "exact/qnml", "given"
    params: str | None = None
    n_arcs: int | None = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)
    recipe: dict | None = None  # the recipe the network was learned by (None: given model, or no network)


def _fit_kernel(
    data,
    kernel: str,
    *,
    model=None,
    recipe=None,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    kernel_options: dict | None = None,
    runner=None,
):
    """(the kernel fitted on the feature columns of ``data``, those columns) -- linear work, no Gram.

    ``kernel_options`` go to the kernel's ``fit`` (e.g. ``{"alpha": 0.5}``; kernels ignore options they do not
    take); ``runner`` (given) too: the Fisher kernel's network is then learned with its passes on it."""
    spec = KERNELS[kernel]
    feats = feature_columns(data)
    if model is not None:
        check_model(model, data)
    more = {} if runner is None else {"runner": runner}
    fitted = spec.fit(
        feats,
        model=model,
        recipe=recipe,
        structure=structure,
        score=score,
        params=params,
        seed=seed,
        progress=progress,
        **(kernel_options or {}),
        **more,
    )
    return fitted, feats


def _setup_from(fitted, kernel: str, K, seconds: float) -> KernelSetup:
    net = KERNELS[kernel].uses_network
    return KernelSetup(
        K,
        kernel,
        fitted.model if net else None,
        tuple(fitted.variables),
        fitted.structure if net else None,
        fitted.params if net else None,
        fitted.n_arcs if net else None,
        seconds,
        list(fitted.notes),
        _recipe_dict(fitted) if net else None,
    )


def _recipe_dict(fitted):
    r = getattr(fitted, "recipe", None)
    return None if r is None else r.to_dict()


def kernel_setup(
    data,
    kernel: str,
    *,
    model=None,
    recipe=None,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    kernel_options: dict | None = None,
) -> KernelSetup:
    """The Gram matrix of ``kernel`` (a name of :data:`bnfk_core.registry.KERNELS`) over the feature
    columns of ``data`` (label column excluded), the kernel fitted on those same rows.

    The Fisher kernel uses ``model`` when given, else the network of ``recipe`` (default
    :data:`bnfk_core.learning.recipe.DEFAULT_RECIPE`; ``structure``/``score``/``params`` given by name replace
    its fields) learned on the features.  scaled-Hamming uses the marginal
    frequencies of the features (thesis eq. 3.2); Hamming the fraction of equal values.
    ``kernel_options`` go to the kernel's ``fit`` (e.g. ``alpha``).
    """
    t0 = time.perf_counter()
    data = as_data(data)
    fitted, feats = _fit_kernel(
        data,
        kernel,
        model=model,
        recipe=recipe,
        structure=structure,
        score=score,
        params=params,
        seed=seed,
        progress=progress,
        kernel_options=kernel_options,
    )
    K = fitted.gram(feats)
    return _setup_from(fitted, kernel, K, time.perf_counter() - t0)


def feature_network(
    data,
    *,
    kernel: str = FISHER,
    recipe=None,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    seed: int = 0,
    progress: Progress | None = None,
):
    """The Bayesian network behind the network kernel ``kernel`` (``KERNELS[kernel].uses_network``), learned
    on the feature columns of ``data`` exactly as :func:`kernel_setup` learns it without a ``model``.

    So ``run_clustering(data, kernel, ..., model=feature_network(data, structure=S, score=C, params=P,
    seed=s), seed=s)`` equals ``run_clustering(data, kernel, ..., structure=S, score=C, params=P, seed=s)`` --
    what the CLI computes from ``--structure S --score C --params P --seed s`` -- while the network can be
    kept and reused.
    """
    spec = KERNELS[kernel]
    if not spec.uses_network:
        raise ClusterError(f"The {spec.label} kernel is not built from a network.")
    data = as_data(data)
    fitted = spec.fit(
        feature_columns(data),
        recipe=recipe,
        structure=structure,
        score=score,
        params=params,
        seed=seed,
        progress=progress,
    )
    return fitted.model


#: the most clusters a default asks for (the Clustering page's widget goes to 200 too)
MAX_DEFAULT_CLUSTERS = 200


def default_n_clusters(data) -> int:
    """Number of distinct (observed) labels of the class column, at most :data:`MAX_DEFAULT_CLUSTERS` (a class
    column of 100,000 levels would otherwise ask correlation clustering for 100,000 clusters)."""
    lab = data.labels()
    return min(int(len(np.unique(lab[lab >= 0]))), MAX_DEFAULT_CLUSTERS)


def choose_algorithm(n_rows: int, algorithm: str = "auto", *, feature_map: bool = True) -> tuple[str, str]:
    """(algorithm, reason): what ``algorithm="auto"`` runs on ``n_rows`` rows under the current memory limit.

    Correlation clustering (the thesis's reference) when the Gram matrix and its whole work space fit
    (:func:`bnfk_core.data.limits.workspace_bytes`), else kernel k-means in the explicit feature space
    (``kmeans-features``) when the kernel has a feature map; otherwise the memory guard's refusal.  Any
    other ``algorithm`` is returned as asked."""
    if algorithm not in CLUSTERERS:
        raise ClusterError(
            f"Unknown clustering algorithm '{algorithm}'; choose one of {', '.join(CLUSTERERS)}."
        )
    if algorithm != "auto":
        return algorithm, "asked for"
    n = int(n_rows)
    need = workspace_bytes("correlation", n)
    limit = resolve_limit()
    within = "no memory limit" if limit is None else f"the {format_bytes(limit)} limit"
    if fits("correlation", n):
        return "correlation", (
            f"the {n:,} x {n:,} Gram matrix and the work space of correlation clustering "
            f"({format_bytes(need)}) fit {within}"
        )
    if not feature_map:
        guard_workspace("correlation", n)  # refuses, with the sampling suggestion
    return FEATURE_ALGORITHM, (
        f"the {n:,} x {n:,} Gram matrix and the work space of correlation clustering "
        f"({format_bytes(need)}) exceed {within}: kernel k-means in the explicit "
        "feature space (linear memory)"
    )


def own_algorithm(algorithm: str, n_rows: int, label: str) -> tuple[str, str]:
    """(algorithm, reason) for a kernel with its own measured default ``algorithm`` (a Gram-based one, e.g.
    the normalised Fisher kernel's ``ward``): that algorithm when its work space on ``n_rows`` rows fits the
    memory limit, else kernel k-means on the explicit features (linear memory)."""
    if fits(algorithm, int(n_rows)):
        return algorithm, f"the {label} kernel's own default, chosen by measurement (docs/KERNELS.md)"
    limit = resolve_limit()
    within = "no memory limit" if limit is None else f"the {format_bytes(limit)} limit"
    return FEATURE_ALGORITHM, (
        f"the {label} kernel's own default, {algorithm}, needs "
        f"{format_bytes(workspace_bytes(algorithm, int(n_rows)))} on {int(n_rows):,} rows, over "
        f"{within}: kernel k-means in the explicit feature space (linear memory)"
    )


def run_clustering(
    data,
    kernel: str,
    algorithm: str,
    *,
    n_clusters: int | None = None,
    setup: KernelSetup | None = None,
    transform: str = "shift-min",
    shift: str = "auto",
    restarts: int = 25,
    seed: int = 0,
    model=None,
    recipe=None,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    n_init: int = 3,
    kernel_options: dict | None = None,
    runner=None,
) -> dict:
    """Kernel + clustering + metrics for one dataset: a JSON-ready dict (labels included).

    ``algorithm``: a name of :data:`bnfk_core.registry.CLUSTERERS`; one that does not use a kernel (``lca``)
    runs its own ``run`` and ignores the kernel options.  ``auto`` runs the fitted kernel's own
    ``auto_algorithm`` when it has one (the normalised Fisher kernel: Ward; :func:`own_algorithm`, k-means on
    its features beyond the memory limit), else :func:`choose_algorithm`'s choice (a given ``setup`` already
    holds the Gram matrix, so it means correlation clustering) and reports it as
    ``algorithm_chosen`` with ``algorithm_reason``.  ``kmeans-features`` is kernel k-means on the explicit
    features (:mod:`bnfk_core.analyses.cluster.features`, ``n_init`` seeded starts; its silhouette is on a
    seeded sample of rows).  Every Gram-based path is refused (one line, sampling suggestion) before it
    allocates when its whole work space exceeds the memory limit.

    ``runner`` (:mod:`bnfk_core.data.runners`; None: this process) runs the row-wise passes: the Fisher
    kernel's network learned with its counting and E-step passes there (as ``learn --engine dask``), and
    kmeans-features' feature map, k-means++ and Lloyd passes (:func:`.features.kernel_kmeans_rows`); the
    client merges and searches.  The same network, labels and scores as without it.  The Gram-based algorithms
    (which need the N x N matrix in one place) and the sampled silhouette run here.
    """
    t0 = time.perf_counter()
    data = as_data(data)  # a pandas DataFrame is read as a file is (from_frame)
    requested = algorithm
    if algorithm not in CLUSTERERS:
        raise ClusterError(
            f"Unknown clustering algorithm '{algorithm}'; choose one of {', '.join(CLUSTERERS)}."
        )
    algorithm_options = dict(transform=transform, shift=shift, restarts=restarts, seed=seed, n_init=n_init)
    CLUSTERERS.validate(algorithm, algorithm_options)  # one sentence before the kernel and the Gram matrix
    true = data.labels() if data.class_column is not None else None
    if n_clusters is None:
        if true is None:
            raise ClusterError("Give the number of clusters (there is no label column to count them from).")
        n_clusters = default_n_clusters(data)
    spec = CLUSTERERS[algorithm]
    if not spec.uses_kernel:  # the algorithm clusters the rows itself (e.g. lca): no kernel, no Gram
        res = spec.run(data, n_clusters, seed=seed, starts=restarts)
        labels = np.asarray(res["labels"])
        out = {
            **clustering_metrics(true, labels),
            **{k: v for k, v in res.items() if k not in ("labels", "model")},
            "labels": labels.tolist(),
            "algorithm": algorithm,
            "kernel": None,
            "seed": seed,
            "label_column": data.class_column,
            "seconds": time.perf_counter() - t0,
        }
        return out
    fitted = feats = fit_seconds = None
    if setup is None:  # linear work; ``auto`` asks the fitted kernel for its own default first
        if algorithm in ALGORITHMS:
            guard_workspace(algorithm, data.n_rows)  # before the structure search and the Gram
        t1 = time.perf_counter()
        fitted, feats = _fit_kernel(
            data,
            kernel,
            model=model,
            recipe=recipe,
            structure=structure,
            score=score,
            params=params,
            seed=seed,  # a kernel with a latent class network uses k
            kernel_options={"n_clusters": int(n_clusters), **(kernel_options or {})},
            runner=runner,
        )
        fit_seconds = time.perf_counter() - t1
    reason = None
    if algorithm == "auto":
        if setup is not None:
            algorithm, reason = "correlation", "the Gram matrix was given"
        elif getattr(fitted, "auto_algorithm", None):
            algorithm, reason = own_algorithm(fitted.auto_algorithm, data.n_rows, KERNELS[kernel].label)
        else:
            from .features import has_feature_map

            algorithm, reason = choose_algorithm(
                data.n_rows, feature_map=fitted is None or has_feature_map(fitted)
            )
    if CLUSTERERS[algorithm].features is not None:
        out = _run_feature_clustering(
            data, kernel, algorithm, fitted, feats, fit_seconds, true, n_clusters, seed, n_init, setup, runner
        )
    else:
        if setup is None:
            if fitted is None:
                setup = kernel_setup(
                    data,
                    kernel,
                    model=model,
                    recipe=recipe,
                    structure=structure,
                    score=score,
                    params=params,
                    seed=seed,
                    kernel_options=kernel_options,
                )
            else:
                t1 = time.perf_counter()
                setup = _setup_from(
                    fitted, kernel, fitted.gram(feats), fit_seconds + time.perf_counter() - t1
                )
        res = cluster(
            setup.K,
            n_clusters,
            algorithm,
            kernel=kernel,
            transform=transform,
            shift=shift,
            restarts=restarts,
            seed=seed,
        )
        m = clustering_metrics(true, res.labels, setup.K)
        out = {
            **m,
            "labels": res.labels.tolist(),
            "kernel": kernel,
            "algorithm": algorithm,
            "n_clusters": res.n_clusters,
            "n_used": res.n_used,
            "transform" if algorithm == "spectral" else "shift": res.transform,
            "cost": res.cost,
            "restarts": restarts if algorithm == "correlation" else None,
            "seed": seed,
            "structure": setup.structure,
            "params": setup.params,
            "n_arcs": setup.n_arcs,
            "recipe": setup.recipe,
            "features": list(setup.feature_columns),
            "label_column": data.class_column,
            "kernel_seconds": setup.seconds,
            "cluster_seconds": res.seconds,
        }
    if requested == "auto":
        out.update(algorithm_requested="auto", algorithm_chosen=algorithm, algorithm_reason=reason)
    out["seconds"] = time.perf_counter() - t0
    return out


def _run_feature_clustering(
    data, kernel, algorithm, fitted, feats, fit_seconds, true, n_clusters, seed, n_init, setup, runner=None
) -> dict:
    """run_clustering's feature-space branch (``kmeans-features``): kernel k-means on the features made block
    by block where its passes run (:func:`.features.kernel_kmeans_rows`: here, or on ``runner``'s workers),
    metrics (the silhouette on the features of a seeded sample of rows, made here)."""
    from .features import feature_map, kernel_kmeans_rows, silhouette_rows
    from .metrics import kernel_silhouette

    if fitted is None:
        raise ClusterError(f"{algorithm} clusters the explicit features; it cannot use a given Gram matrix.")
    D = feature_map(fitted, feats.subset(np.arange(min(1, feats.n_rows)))).shape[1]  # no feature map: refused
    res = kernel_kmeans_rows(fitted, feats, n_clusters, seed=seed, n_init=n_init, runner=runner)
    m = clustering_metrics(true, res.labels)
    rows = silhouette_rows(feats.n_rows, seed=seed)
    if rows is None:
        m["silhouette"], sil_rows = None, 0
    else:
        P = feature_map(fitted, feats.subset(rows))
        m["silhouette"], sil_rows = kernel_silhouette((P @ P.T).toarray(), res.labels[rows]), len(rows)
    info = _setup_from(fitted, kernel, None, 0.0)
    return {
        **m,
        "silhouette_rows": sil_rows,
        "labels": res.labels.tolist(),
        "kernel": kernel,
        "algorithm": res.algorithm,
        "n_clusters": res.n_clusters,
        "n_used": res.n_used,
        "transform": res.transform,
        "cost": res.cost,
        "n_init": int(n_init),
        "seed": seed,
        "structure": info.structure,
        "params": info.params,
        "n_arcs": info.n_arcs,
        "recipe": info.recipe,
        "features": list(info.feature_columns),
        "feature_columns_phi": int(D),
        "feature_nnz": int(res.info["nnz"]),
        "label_column": data.class_column,
        "kernel_seconds": fit_seconds,
        "cluster_seconds": res.seconds,
    }


def compare(
    data,
    *,
    kernels: Sequence[str] = (FISHER, SCALED_HAMMING, HAMMING),
    algorithms: Sequence[str] = ("correlation", "spectral"),
    runs: int = 10,
    seed: int = 0,
    n_clusters: int | None = None,
    transform: str = "shift-min",
    restarts: int = 25,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    model=None,
    recipe=None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """The thesis's Table 5.1 layout for one dataset: one row per (algorithm, kernel) with mean and std of
    ARI, AMI and V-measure over ``runs`` seeds (``seed``, ``seed+1``, ...).

    The kernel is computed once per kernel (for the Fisher kernel: one structure, seed ``seed``);
    the runs differ in the clustering's random starts, as in the thesis.
    """
    if int(runs) < 1:
        raise ClusterError(f"runs must be at least 1, got {runs}.")
    rows = []
    total = len(kernels) * (1 + len(algorithms) * runs)
    done = 0

    def tick(msg):
        nonlocal done
        done += 1
        if progress is not None:
            progress(done / total, msg)

    if n_clusters is None:
        n_clusters = default_n_clusters(data)
    for alg in algorithms:
        if alg not in ALGORITHMS:
            raise ClusterError(
                f"Unknown clustering algorithm '{alg}'; choose one of {', '.join(ALGORITHMS)}."
            )
        CLUSTERERS.validate(alg, {"transform": transform, "restarts": restarts, "seed": seed})
        guard_workspace(alg, data.n_rows)  # before any structure search or Gram matrix
    for kern in kernels:
        setup = kernel_setup(
            data, kern, model=model, recipe=recipe, structure=structure, score=score, params=params, seed=seed
        )
        tick(f"{kern}: kernel")
        for alg in algorithms:
            vals = []
            for r in range(int(runs)):
                out = run_clustering(
                    data,
                    kern,
                    alg,
                    n_clusters=n_clusters,
                    setup=setup,
                    transform=transform,
                    restarts=restarts,
                    seed=seed + r,
                )
                vals.append((out["ari"], out["ami"], out["v_measure"], out["cluster_seconds"]))
                tick(f"{alg} / {kern}: run {r + 1}/{runs}")
            v = np.array(vals, dtype=float)
            abbrev = CLUSTERERS[alg].abbr + "-" + kernel_abbr(kern)
            rows.append(
                {
                    "combination": abbrev,
                    "algorithm": alg,
                    "kernel": kern,
                    "ari": v[:, 0].mean(),
                    "ari_std": v[:, 0].std(),
                    "ami": v[:, 1].mean(),
                    "ami_std": v[:, 1].std(),
                    "v_measure": v[:, 2].mean(),
                    "v_measure_std": v[:, 2].std(),
                    "seconds": v[:, 3].mean(),
                    "structure": setup.structure,
                    "n_arcs": setup.n_arcs,
                }
            )
    return pd.DataFrame(rows)
