"""The clustering family's built-in members, declared light: the kernel-path clustering algorithms
(:data:`bnfk_core.registry.CLUSTERERS`; latent-class clustering is declared in :mod:`bnfk_core.lca.members`),
the kernel classifiers (:data:`~bnfk_core.registry.CLASSIFIERS`), and the shift and transform choices the
faces show. Behaviour is a :func:`~bnfk_core.registry.lazy` reference to this package's modules, imported when
first run; importing this module loads no numerical library.
"""

from __future__ import annotations

from ...registry import (
    CLASSIFY_OPTIONS,
    CLUSTER_OPTIONS,
    SHIFTS,
    TRANSFORMS,
    ClassifierSpec,
    ClustererSpec,
    Interval,
    Option,
    lazy,
)

__all__ = ["CLUSTERERS", "FEATURE_CLUSTERER", "CLASSIFIERS", "SHIFTS", "TRANSFORMS"]

#: ``SHIFTS`` (correlation clustering's, :mod:`.correlation`; ``auto``: the kernel's registered shift) and
#: ``TRANSFORMS`` (spectral clustering's affinities, :mod:`.spectral`) are declared with the options every
#: clusterer receives (:data:`bnfk_core.registry.CLUSTER_OPTIONS`)
_O = CLUSTER_OPTIONS

#: the clusterer ``auto`` falls back to beyond the Gram limit (kernel k-means on the explicit features; the
#: one place its name is written)
FEATURE_CLUSTERER = ClustererSpec(
    "kmeans-features",
    "Kernel k-means (features)",
    features=lazy("bnfk_core.analyses.cluster.features", "kernel_kmeans_features"),
    description="k-means on the explicit sparse feature map, linear memory",
    options=(
        _O["seed"],
        _O["n_init"],
        Option(
            "max_iter", Interval(int, 1, 1_000_000), 300, "the most Lloyd iterations of one start", none=False
        ),
        Option(
            "tol",
            Interval(float, 0, None),
            1e-4,
            "Lloyd's tolerance, relative to the features' variance",
            none=False,
        ),
        Option("dense", bool, None, "run on a dense copy of the features (None: as the layout decides)"),
        Option(
            "block_rows",
            Interval(int, 1, None),
            None,
            "rows of a block of the passes (None: the fixed default)",
        ),
    ),
)

CLUSTERERS = (
    ClustererSpec(
        "auto",
        "Automatic",
        description="correlation clustering when the Gram matrix and its work space fit "
        "the memory limit, else kmeans-features (a kernel with its own "
        "measured default runs that: ward for fisher-normalized)",
    ),
    ClustererSpec(
        "correlation",
        "Correlation clustering",
        abbr="CC",
        gram=lazy("bnfk_core.analyses.cluster.correlation", "cluster_gram"),
        description="local search with restarts on the (shifted) Gram matrix, thesis eq. 5.2",
        options=(_O["kernel"], _O["shift"], _O["restarts"], _O["seed"], _O["init_labels"]),
    ),
    ClustererSpec(
        "spectral",
        "Spectral clustering",
        abbr="SC",
        gram=lazy("bnfk_core.analyses.cluster.spectral", "cluster_gram"),
        description="scikit-learn on an affinity built from the Gram matrix",
        options=(_O["transform"], _O["seed"]),
    ),
    ClustererSpec(
        "ward",
        "Ward linkage",
        abbr="WL",
        gram=lazy("bnfk_core.analyses.cluster.ward", "cluster_gram"),
        description="Ward's hierarchical clustering on the kernel-induced distances (the k-means objective "
        "in feature space, greedily; deterministic)",
        options=(_O["seed"],),
    ),
    FEATURE_CLUSTERER,
)

_C = "bnfk_core.analyses.cluster.classification"

CLASSIFIERS = (
    ClassifierSpec(
        "knn",
        "k-nearest neighbours",
        lazy(_C, "_knn"),
        "kNN (k = {k}, uniform)",
        description="uniform vote of the k nearest training rows by kernel distance (or largest kernel "
        "value), thesis App. D",
        options=(CLASSIFY_OPTIONS["k"], CLASSIFY_OPTIONS["neighbours"]),
    ),
    ClassifierSpec(
        "svm",
        "Support vector machine",
        lazy(_C, "_svm"),
        "SVM (C = {C:g}, precomputed kernel)",
        description="SVC on the precomputed kernel, sigmoid-calibrated probabilities, thesis App. D",
        options=(CLASSIFY_OPTIONS["C"],),
    ),
)
