"""Two structures side by side: what changing a network's arcs does to its Fisher kernel and to every analysis
built on it -- the two Gram matrices and their difference, a seeded clustering of each (ARI against the
label), one seeded imputation run of each (arg-max accuracy) and greedy-MMD prototypes of each -- with the
empty network (the scaled-Hamming kernel) as the baseline.

Both structures are fitted to the same table by the same CPT estimator.  With a likelihood-equivalent
estimator (BDeu, the default recipe's) Markov-equivalent structures represent the same distribution and so
give the same Fisher kernel (paper, Theorem 4): every number below is then the same for A and B.

References
----------
.. [1] The bnfk paper, Theorem 1 (the Fisher kernel of a Bayesian network) and Theorem 4 (equivalent
structures).
.. [2] The thesis, ch. 4 (MCAR imputation benchmark), ch. 5 (correlation clustering of a kernel) and the
greedy
   MMD prototypes of the paper's summarisation experiment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import KernelError, StructureError
from ...kernels.embed import sample_rows
from ...kernels.fisher import FISHER, FISHER_NORMALIZED, gram
from ...kernels.fisher_normalized import DEFAULT_ALPHA, check_alpha, normalized_gram
from ...learning.recipe import DEFAULT_RECIPE, Recipe, fit_recipe
from ...network.dag import DAG, equivalent
from ..cluster.clustering import cluster, clustering_metrics
from ..prototypes.search import select_prototypes
from .network_checks import imputation_check

__all__ = [
    "NetworkOutcome",
    "StructureComparison",
    "ComparisonRows",
    "comparison_rows",
    "network_outcome",
    "combine",
    "compare_structures",
]


@dataclass
class NetworkOutcome:
    """What one structure gives on the compared rows."""

    dag: DAG
    model: object
    K: np.ndarray  # Fisher Gram matrix of the sampled rows
    clusters: np.ndarray  # correlation-clustering labels of those rows
    ari: float | None  # against the class column (None without one)
    accuracy: float  # one seeded MCAR imputation run: arg-max accuracy of the hidden cells
    cross_entropy: float
    prototypes: np.ndarray  # rows of the data (not of the sample) chosen by greedy MMD
    mmd: float  # MMD² of the prototypes to the sampled rows under this network's kernel


@dataclass
class StructureComparison:
    """:func:`compare_structures`' result: ``a``, ``b`` and the empty-network ``baseline``, on the same
    rows."""

    rows: np.ndarray
    a: NetworkOutcome
    b: NetworkOutcome
    baseline: NetworkOutcome
    equivalent: bool  # A and B are Markov equivalent
    params: str
    notes: list = field(default_factory=list)

    @property
    def delta_K(self) -> np.ndarray:
        """K_B − K_A on the sampled rows."""
        return self.b.K - self.a.K

    @property
    def max_abs_delta(self) -> float:
        return float(np.abs(self.delta_K).max()) if self.delta_K.size else 0.0

    @property
    def agreement(self) -> float:
        """Adjusted Rand index between A's and B's clusterings (1: the same partition)."""
        return float(clustering_metrics(self.a.clusters, self.b.clusters)["ari"])

    @property
    def prototype_overlap(self) -> int:
        return len(set(self.a.prototypes.tolist()) & set(self.b.prototypes.tolist()))

    def summary(self) -> dict:
        """The numbers, JSON-ready (one entry per network).

        Returns
        -------
        dict
        """

        def one(o: NetworkOutcome) -> dict:
            return {
                "arcs": [list(x) for x in o.dag.sorted_arcs()],
                "ari": o.ari,
                "imputation_accuracy": o.accuracy,
                "imputation_cross_entropy": o.cross_entropy,
                "prototypes": o.prototypes.tolist(),
                "mmd": o.mmd,
            }

        return {
            "rows": len(self.rows),
            "params": self.params,
            "equivalent": self.equivalent,
            "max_abs_delta_K": self.max_abs_delta,
            "clustering_agreement": self.agreement,
            "prototype_overlap": self.prototype_overlap,
            "A": one(self.a),
            "B": one(self.b),
            "empty": one(self.baseline),
            "notes": list(self.notes),
        }


@dataclass
class ComparisonRows:
    """The rows every network of a comparison is judged on: the features, a seeded sample of them, its class
    codes."""

    feats: object  # the feature columns (every row: the CPTs are fitted on them)
    idx: np.ndarray  # the sampled rows' numbers in the data
    sub: object  # the sampled rows
    labels: np.ndarray | None  # their class codes (None without a class column)
    n_clusters: int


def comparison_rows(data, rows: int = 200, seed: int = 0, n_clusters: int | None = None) -> ComparisonRows:
    """The sample of :func:`compare_structures` (``rows`` rows drawn with ``seed``; ``n_clusters`` defaults to
    the number of labels of the class column, else 2).

    Parameters
    ----------
    data : CategoricalData
        The table (its class column, if any, gives the labels).
    rows : int
        Rows to sample (clipped to [3, number of rows]).
    seed : int
        Seed of the sample.
    n_clusters : int, optional
        Number of clusters; the number of class labels (else 2) when None, clipped to [2, rows].

    Returns
    -------
    ComparisonRows
    """
    feats = data.without_class()
    idx = sample_rows(feats.n_rows, int(min(max(rows, 3), feats.n_rows)), int(seed))
    labels = data.labels()[idx] if data.class_column is not None else None
    if n_clusters is None:
        n_clusters = int(len(np.unique(labels[labels >= 0]))) if labels is not None else 2
    return ComparisonRows(feats, idx, feats.subset(idx), labels, int(min(max(n_clusters, 2), len(idx))))


def network_outcome(
    dag: DAG,
    rows: ComparisonRows,
    *,
    recipe: Recipe | None = None,
    kernel: str = FISHER,
    alpha: float | None = None,
    restarts: int = 10,
    k: int = 10,
    missing: float = 0.2,
    seed: int = 0,
) -> NetworkOutcome:
    """One structure's outcomes on ``rows`` (:func:`comparison_rows`): CPTs fitted on every row by ``recipe``
    (:func:`~bnfk_core.learning.recipe.fit_recipe`), ``kernel`` (the paper's Fisher kernel, or the normalised
    one with power ``alpha``) on the sampled rows and its clustering; the imputation run and the prototypes
    (greedy MMD under the Fisher kernel) on the sampled rows too.

    Parameters
    ----------
    dag : DAG
        The structure.
    rows : ComparisonRows
        The rows every network is judged on.
    recipe : Recipe, optional
        How the CPTs are fitted (the default recipe when None).
    kernel : {"fisher", "fisher-normalized"}
        The kernel clustered.
    alpha : float, optional
        The normalised kernel's power (its default when None).
    restarts, k : int
        Clustering restarts; number of prototypes.
    missing : float
        Share of cells hidden by the imputation check.
    seed : int

    Returns
    -------
    NetworkOutcome

    Raises
    ------
    KernelError
        For a kernel other than the two above.
    """
    recipe = recipe or DEFAULT_RECIPE
    model = fit_recipe(dag, rows.feats, recipe)
    if kernel == FISHER_NORMALIZED:
        K = normalized_gram(model, rows.sub, alpha=DEFAULT_ALPHA if alpha is None else check_alpha(alpha))
    elif kernel == FISHER:
        K = gram(model, rows.sub)
    else:
        raise KernelError(f"Structures are compared by '{FISHER}' or '{FISHER_NORMALIZED}', not '{kernel}'.")
    res = cluster(K, rows.n_clusters, "correlation", kernel=kernel, restarts=restarts, seed=seed)
    ari = None if rows.labels is None else float(clustering_metrics(rows.labels, res.labels)["ari"])
    imp = imputation_check(rows.sub, dag, params=recipe.params, missing=missing, seed=seed)
    protos = select_prototypes(model, rows.sub, min(int(k), rows.sub.n_rows - 1), seed=seed)
    return NetworkOutcome(
        dag,
        model,
        K,
        np.asarray(res.labels),
        ari,
        float(imp["accuracy"]),
        float(imp["cross_entropy"]),
        rows.idx[np.asarray(protos.indices)],
        float(protos.mmd),
    )


def combine(
    rows: ComparisonRows,
    a: NetworkOutcome,
    b: NetworkOutcome,
    baseline: NetworkOutcome,
    params: str,
    *,
    kernel: str = FISHER,
    alpha: float | None = None,
) -> StructureComparison:
    """The comparison of two outcomes (and the baseline's) on the same rows, with its notes on Theorem 4.

    Parameters
    ----------
    rows : ComparisonRows
    a, b, baseline : NetworkOutcome
        Structure A's, B's and the empty network's outcomes.
    params : str
        The CPT estimator (Theorem 4 needs a likelihood-equivalent one).
    kernel : str
    alpha : float, optional
        As in :func:`network_outcome`.

    Returns
    -------
    StructureComparison
    """
    eq = equivalent(a.dag, b.dag)
    notes = []
    if eq and params not in ("bdeu", "ml"):
        notes.append(
            f"A and B are Markov equivalent, but the {params} estimator is not likelihood-equivalent: "
            "their kernels may differ (Theorem 4 needs BDeu or maximum likelihood)."
        )
    a_ = DEFAULT_ALPHA if alpha is None else float(alpha)
    if eq and kernel == FISHER_NORMALIZED and a_ < 1:
        notes.append(
            f"A and B are Markov equivalent, but the normalised kernel with α = {a_:g} < 1 is not invariant "
            "under equivalent structures: their kernels may differ."
        )
    return StructureComparison(rows.idx, a, b, baseline, eq, params, notes)


def compare_structures(
    data,
    dag_a: DAG,
    dag_b: DAG,
    *,
    params: str = "bdeu",
    pseudo_count: float = 1.0,
    rows: int = 200,
    seed: int = 0,
    n_clusters: int | None = None,
    restarts: int = 10,
    k: int = 10,
    missing: float = 0.2,
    recipe: Recipe | None = None,
    kernel: str = FISHER,
    alpha: float | None = None,
) -> StructureComparison:
    """Compare the structures ``dag_a`` and ``dag_b`` over the feature columns of ``data``.

    Parameters
    ----------
    data : CategoricalData
        The table; its class column (if any) is never a feature and scores the clusterings.
    dag_a, dag_b : DAG
        Structures over the feature columns.
    params, pseudo_count : str, float
        The CPT estimator of both (default BDeu, the default recipe's); ignored when ``recipe`` is given.
    rows, seed : int
        A seeded sample of ``rows`` rows for the Gram matrices, the clusterings, the imputation run and the
        prototypes (the CPTs use every row).
    n_clusters : int, optional
        Default: the number of labels of the class column, else 2.
    restarts, k, missing : int, int, float
        Correlation-clustering restarts, prototypes per network, hidden fraction of the test cells.
    recipe : Recipe, optional
        How the CPTs of each structure are fitted (:func:`~bnfk_core.learning.recipe.fit_recipe`: its
        estimator, EM over missing cells); default: :data:`~bnfk_core.learning.recipe.DEFAULT_RECIPE` with
        ``params`` and ``pseudo_count``.
    kernel, alpha : str, float
        ``fisher`` (the paper's kernel) or ``fisher-normalized`` with its power ``alpha`` (default its
        ``DEFAULT_ALPHA``); the clusterings use it, the prototypes stay greedy MMD under the Fisher kernel.

    Returns
    -------
    StructureComparison

    Raises
    ------
    StructureError
        When a structure is not over the feature columns of ``data``.
    """
    feats = data.without_class()
    for name, g in (("A", dag_a), ("B", dag_b)):
        if tuple(g.nodes) != tuple(feats.variables):
            raise StructureError(f"Structure {name} is not over the feature columns of {data.source}.")
    recipe = recipe or DEFAULT_RECIPE.replace(params=params, pseudo_count=pseudo_count)
    sample = comparison_rows(data, rows, seed, n_clusters)
    opts = dict(recipe=recipe, kernel=kernel, alpha=alpha, restarts=restarts, k=k, missing=missing, seed=seed)
    out = [network_outcome(g, sample, **opts) for g in (dag_a, dag_b, DAG(feats.variables))]
    return combine(sample, *out, recipe.params, kernel=kernel, alpha=alpha)
