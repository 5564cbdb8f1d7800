"""One source of truth per option family: kernels, structure-learning methods, scores and CPT estimators.

A registry is a read-only mapping ``name -> spec``.  The modules that implement an option register
it where they define it (``scores`` its scores, ``learn`` its methods, ``model`` its estimators,
``kernels`` the Fisher kernel, ``hamming_kernels`` the (scaled-)Hamming kernels, ``similarity`` the
categorical similarity measures), and everything that offers a choice reads the registry: the CLI's ``choices``, the app's
widgets, the clustering and classification loops, the reproduction code and the docs tables.

Adding a kernel is one :func:`KERNELS.register <Registry.register>` call (see
``docs/ARCHITECTURE.md`` for a worked example)::

    registry.KERNELS.register(registry.KernelSpec(
        name="overlap-toy", label="Toy overlap", abbr="OT", fit=my_fit, shift="adaptive", psd=True,
        description="fraction of equal values"))

``my_fit(train, **options)`` receives the training rows (a ``CategoricalData`` without the label
column) and returns an object with ``gram(X, Y=None, *, normalize=False, max_bytes=...)`` and
``contributions(x, y)`` (per-variable terms of one pair that sum to K(x, y)); see
:class:`bnfk_core.kernels.fisher.FittedKernel`.

This module imports nothing from the package but its errors, so every layer may use it.  A registry fills
itself on first use by importing the modules listed in :data:`PROVIDERS` for its family (so that
``import bnfk_core`` stays light and a CLI subcommand imports only what it uses): a new module that
registers options must be added there.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable, Iterator

from .errors import BnfkError, KernelError, ModelError, StructureError

__all__ = ["Registry", "PROVIDERS", "KernelSpec", "LearnerSpec", "ScoreSpec", "EstimatorSpec", "ClustererSpec", "ClassifierSpec", "CriterionSpec",
           "KERNELS", "CLASSIFIERS", "CRITERIA", "FEATURE_CLUSTERER", "lazy", "LabelView",
           "LEARNERS", "SCORES", "ESTIMATORS", "CLUSTERERS", "MissingDataSpec", "MISSING_DATA", "ImputerSpec",
           "IMPUTERS", "feature_learners", "kernel_abbr", "face"]


class Registry(Mapping):
    """An ordered, read-only mapping ``name -> spec`` with one ``register`` door.

    ``registry[name]`` raises a :class:`~bnfk_core.errors.BnfkError` naming the family and the
    valid choices when ``name`` is unknown.
    """

    def __init__(self, family: str, error: type = BnfkError, providers: tuple = ()):
        self.family = family
        self.error = error
        self._registered: dict = {}
        self._providers = tuple(providers)
        self._loaded = not self._providers

    @property
    def _specs(self) -> dict:
        """The registered specs, after importing the modules that register this family (once)."""
        if not self._loaded:
            self._loaded = True
            for module in self._providers:
                importlib.import_module(module)
        return self._registered

    @property
    def loaded(self) -> bool:
        """True once the provider modules were imported (before that only explicit registrations are held)."""
        return self._loaded

    def registered(self) -> tuple:
        """The names registered so far, without importing the providers (for a light ``--help``)."""
        return tuple(self._registered)

    def register(self, spec, *, replace: bool = False):
        """Add ``spec`` under ``spec.name`` (a second registration of a name is refused unless ``replace``)."""
        if spec.name in self._registered and not replace:
            raise BnfkError(f"A {self.family} named '{spec.name}' is already registered.")
        self._registered[spec.name] = spec
        return spec

    def unregister(self, name: str) -> None:
        """Remove ``name`` (for tests and plug-ins that withdraw an option)."""
        self._specs.pop(name, None)   # loads the providers first, so that they cannot re-register it later

    def __getitem__(self, name):
        try:
            return self._specs[name]
        except (KeyError, TypeError):
            raise self.error(f"Unknown {self.family} '{name}'; choose one of {', '.join(self._specs)}.") from None

    def __contains__(self, name) -> bool:
        return name in self._specs

    def get(self, name, default=None):
        return self._specs.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._specs))

    def __len__(self) -> int:
        return len(self._specs)

    def names(self, **where) -> tuple:
        """Names whose spec has every attribute equal to the given values, in registration order."""
        return tuple(n for n, s in self._specs.items() if all(getattr(s, k) == v for k, v in where.items()))

    def labels(self) -> dict:
        """``{name: label}`` for widgets and tables."""
        return {n: s.label for n, s in self._specs.items()}

    def label_view(self, keep: Callable | None = None) -> "LabelView":
        """A live read-only ``{name: label}`` of the members ``keep(spec)`` accepts (all by default): widgets built
        from it offer members registered later too."""
        return LabelView(self, keep)


class LabelView(Mapping):
    """``{name: label}`` of a registry's members (those ``keep(spec)`` accepts), read at each use."""

    def __init__(self, registry: Registry, keep: Callable | None = None):
        self._registry, self._keep = registry, keep

    def _members(self) -> dict:
        return {n: s.label for n, s in self._registry.items() if self._keep is None or self._keep(s)}

    def __getitem__(self, name):
        return self._members()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._members())

    def __len__(self) -> int:
        return len(self._members())

    def __repr__(self) -> str:
        return f"LabelView({self._members()!r})"


@dataclass(frozen=True)
class KernelSpec:
    """A kernel between rows of categorical data.

    Attributes
    ----------
    name : the CLI / URL / JSON name (lower case, ``-`` between words).
    label, abbr : for widgets and tables (``abbr`` as in the thesis: F, SH, H).
    fit : ``fit(train, **options) -> FittedKernel``; ``train`` has no label column.  Options the
        Fisher kernel understands (others ignore them): ``model``, ``dag``, ``structure``, ``score``,
        ``params``, ``seed``, ``progress``.
    shift : the correlation-clustering shift ``auto`` resolves to: ``"adaptive"`` (double
        centering, thesis §5.2) or ``"none"``.
    psd : True when every Gram matrix is positive semidefinite, False when not, None if unknown.
    uses_network : the kernel is built from a Bayesian network (the app then offers structure options).
    family : ``"fisher"`` (network kernels), ``"baseline"`` (thesis baselines), ``"measure"``
        (Boriah et al. similarity measures) or ``"kernel"`` (other categorical kernels).
    """

    name: str
    label: str
    abbr: str
    fit: Callable
    shift: str = "none"
    psd: bool | None = True
    uses_network: bool = False
    family: str = "kernel"
    description: str = ""


@dataclass(frozen=True)
class LearnerSpec:
    """A structure-learning method of :func:`bnfk_core.learning.structure.learn_structure`.

    ``learn(scorer, task) -> parents`` finds the structure: ``scorer`` is the local score over the columns
    (a :class:`bnfk_core.learning.scores.LocalScorer`), ``task`` a :class:`bnfk_core.learning.structure.LearnTask` (the variables,
    the class index, the options, ``progress``; ``task.notes`` takes sentences worth showing the user); it
    returns one tuple of parent indices per column."""

    name: str
    label: str
    needs_class: bool = False      # the class variable is a node (naive Bayes, TAN, KDB)
    uses_score: bool = False       # the search optimises the chosen score
    description: str = ""
    learn: Callable | None = None
    needs_rows: bool = True        # False: learns without a complete row (no counts needed)
    pair_bytes: int = 0            # bytes per pair of variables its n x n tables keep at once (learn.guard_width)


@dataclass(frozen=True)
class ScoreSpec:
    """A decomposable structure score of :mod:`bnfk_core.learning.scores` (log scale, higher is better).

    ``scorer`` builds the local scorer of a score that is not computed from counts
    (``scorer(codes, cards, *, weights, numbers, **options)``, e.g. :mod:`bnfk_core.learning.kgv`); None for the
    count scores of :class:`bnfk_core.learning.scores.LocalScorer`."""

    name: str
    label: str
    description: str = ""
    scorer: Callable | None = None


@dataclass(frozen=True)
class EstimatorSpec:
    """A CPT estimator of :func:`bnfk_core.network.model.fit`."""

    name: str
    label: str
    uses_pseudo_count: bool = False
    description: str = field(default="")


@dataclass(frozen=True)
class MissingDataSpec:
    """How structure learning treats missing cells (:mod:`bnfk_core.learning.incomplete`).

    ``learn(data, method, **options) -> LearnResult`` learns the DAG."""

    name: str
    label: str
    learn: Callable
    description: str = ""


@dataclass(frozen=True)
class ImputerSpec:
    """An imputation method of :mod:`bnfk_core.analyses.impute.core` (and its peers).

    ``impute(data, *, model=None, k=3, seed=0, **learn) -> Imputation``; ``peer`` marks the
    methods analysts use instead of a network (benchmark peers); ``needs`` names an optional
    package (the benchmark skips the method politely without it)."""

    name: str
    label: str
    impute: Callable
    peer: bool = False
    needs: str = ""
    description: str = ""


@dataclass(frozen=True)
class ClustererSpec:
    """A clustering algorithm of ``cluster --algorithm`` (:func:`bnfk_core.analyses.cluster.clustering.run_clustering`).

    ``uses_kernel``: the algorithm clusters a kernel's Gram matrix or feature map.  Its behaviour is one of
    ``gram(K, n_clusters, *, kernel, transform, shift, restarts, seed, init_labels) -> ClusterResult`` (clusters a
    Gram matrix; ``abbr`` names it in tables: CC, SC), ``features(Phi, n_clusters, *, seed, n_init) -> ClusterResult``
    (clusters the explicit feature map, linear memory), or neither (``auto``: the choice between them).  Otherwise
    ``run(data, n_clusters, *, seed, **options)`` clusters the rows itself and returns a dict with at least
    ``labels`` (one int per row) and ``cluster_seconds``."""

    name: str
    label: str
    uses_kernel: bool = True
    run: Callable | None = None
    description: str = ""
    gram: Callable | None = None
    features: Callable | None = None
    abbr: str = ""


@dataclass(frozen=True)
class ClassifierSpec:
    """A kernel classifier of ``classify --classifier`` (:func:`bnfk_core.analyses.cluster.classification.classify_many`).

    ``proba(Ktr, Kte, dte, ytr, classes, *, k, C, neighbours) -> P`` gives the class probabilities of the test rows
    (columns in ``classes`` order) from the train x train and test x train kernel blocks and the test rows'
    self-similarities ``dte``; ``table_label`` names it in tables with its setting (``str.format`` with ``k`` and
    ``C``)."""

    name: str
    label: str
    proba: Callable
    table_label: str = ""
    description: str = ""


@dataclass(frozen=True)
class CriterionSpec:
    """A prototype-selection criterion of :func:`bnfk_core.analyses.prototypes.selection.select_prototypes`.

    ``criterion(model, data, Phi=None) -> object`` builds the criterion on the rows (``value(indices)`` and the
    greedy swap's ``start(init)`` / ``best_swap``; see :class:`bnfk_core.analyses.prototypes.criteria.MMDCriterion`);
    None for the random baseline (the best of the random starts, no greedy search)."""

    name: str
    label: str
    criterion: Callable | None = None
    description: str = ""


def face(package: str, homes: dict) -> tuple:
    """The PEP 562 hooks of a package face: ``homes`` maps each public name to the module of ``package`` that
    defines it, imported on first use (so that importing a package loads none of its numerical modules).

    Returns ``(__getattr__, __dir__)`` for the package's ``__init__``; a name that is not public is tried as a
    submodule, so ``package.module`` works without importing it first."""
    def __getattr__(name: str):
        module = sys.modules[package]
        if name in homes:
            value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module '{package}' has no attribute '{name}'") from None
        setattr(module, name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(homes))
    return __getattr__, __dir__


def lazy(module: str, name: str) -> Callable:
    """``module.name`` as a callable that imports ``module`` on its first call (so that a member registered here
    carries its behaviour while this module imports nothing from the package)."""
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    call.__qualname__ = call.__name__ = f"{module}.{name}"
    return call


#: the modules that register each family's members on import (in registration order)
PROVIDERS = {
    "kernel": ("bnfk_core.kernels.fisher", "bnfk_core.kernels.hamming", "bnfk_core.kernels.similarity", "bnfk_core.lca.kernel"),
    "clustering algorithm": ("bnfk_core.lca.kernel",),
    "structure-learning method": ("bnfk_core.learning.structure",),
    "score": ("bnfk_core.learning.scores", "bnfk_core.learning.structure"),     # learn imports kgv, which registers "kgv"
    "parameter method": ("bnfk_core.network.model",),
    "missing-data method": ("bnfk_core.learning.incomplete",),
    "imputation method": ("bnfk_core.analyses.impute.methods",),
    "classifier": ("bnfk_core.analyses.cluster.classification",),
    "prototype criterion": (),       # registered below (their behaviour imported on first use)
}

KERNELS = Registry("kernel", KernelError, PROVIDERS["kernel"])
LEARNERS = Registry("structure-learning method", StructureError, PROVIDERS["structure-learning method"])
SCORES = Registry("score", StructureError, PROVIDERS["score"])
ESTIMATORS = Registry("parameter method", ModelError, PROVIDERS["parameter method"])
MISSING_DATA = Registry("missing-data method", StructureError, PROVIDERS["missing-data method"])
IMPUTERS = Registry("imputation method", BnfkError, PROVIDERS["imputation method"])
CLUSTERERS = Registry("clustering algorithm", BnfkError, PROVIDERS["clustering algorithm"])
CLASSIFIERS = Registry("classifier", BnfkError, PROVIDERS["classifier"])
CRITERIA = Registry("prototype criterion", BnfkError, PROVIDERS["prototype criterion"])
# the kernel path of analyses.cluster.run_clustering (its behaviour imported on first use); clusterers with their own
# ``run`` register where they are defined
CLUSTERERS.register(ClustererSpec("auto", "Automatic", description="correlation clustering when the Gram matrix and its "
                                                                    "work space fit the memory limit, else kmeans-features"))
CLUSTERERS.register(ClustererSpec("correlation", "Correlation clustering", abbr="CC",
                                  gram=lazy("bnfk_core.analyses.cluster.correlation", "cluster_gram"),
                                  description="local search with restarts on the (shifted) Gram matrix, thesis eq. 5.2"))
CLUSTERERS.register(ClustererSpec("spectral", "Spectral clustering", abbr="SC",
                                  gram=lazy("bnfk_core.analyses.cluster.spectral", "cluster_gram"),
                                  description="scikit-learn on an affinity built from the Gram matrix"))
#: the clusterer ``auto`` falls back to beyond the Gram limit (kernel k-means on the explicit features)
FEATURE_CLUSTERER = CLUSTERERS.register(ClustererSpec(
    "kmeans-features", "Kernel k-means (features)", features=lazy("bnfk_core.analyses.cluster.features", "kernel_kmeans_features"),
    description="k-means on the explicit sparse feature map, linear memory"))
CRITERIA.register(CriterionSpec("mmd", "Greedy MMD (Fisher kernel)",
                                lazy("bnfk_core.analyses.prototypes.criteria", "mmd_criterion"),
                                description="Fisher-kernel distance |mean phi(X_S) - mean phi(X)|^2 (paper eq. 10), "
                                            "greedy swaps (Algorithm 1)"))
CRITERIA.register(CriterionSpec("chi2", "Greedy χ² heuristic", lazy("bnfk_core.analyses.prototypes.criteria", "chi2_criterion"),
                                description="the paper's heuristic -sum_i log p_i of per-variable chi-square tests, "
                                            "greedy swaps"))
CRITERIA.register(CriterionSpec("random", "Random subset", description="a uniformly random subset (the baseline)"))


def feature_learners() -> tuple:
    """Structure-learning methods that do not need the class as a node (networks over features only)."""
    return LEARNERS.names(needs_class=False)


def kernel_abbr(name: str) -> str:
    """The short name of a kernel (``F``, ``SH``, ``H``, ...) for table columns such as ``CC-F``."""
    return KERNELS[name].abbr


def options_markdown() -> str:
    """``docs/OPTIONS.md``: one table per option family, written from the registries (import
    :mod:`bnfk_core` first so that every module has registered its options)."""
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    psd = {True: "yes", False: "no", None: "unknown"}
    out = ["# Options (generated from `bnfk_core.registry`; do not edit)", "",
           "Every name below is accepted wherever its family is: the CLI flags, the app's widgets, the links and",
           "session files, and the Python API. Regenerate with `python -m bnfk_core.registry > docs/OPTIONS.md`.", "",
           "## Kernels (`kernel --kind`, `cluster`/`classify --kernel`)", "",
           "| name | label | abbr | family | PSD | shift for correlation clustering | network | description |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| `{k.name}` | {cell(k.label)} | {cell(k.abbr)} | {k.family} | {psd[k.psd]} | {k.shift} | "
            f"{'yes' if k.uses_network else 'no'} | {cell(k.description)} |" for k in KERNELS.values()]
    out += ["", "## Structure-learning methods (`learn --structure`, `--structure`)", "",
            "| name | label | class as a node | optimises the score | description |", "|---|---|---|---|---|"]
    out += [f"| `{m.name}` | {cell(m.label)} | {'yes' if m.needs_class else 'no'} | "
            f"{'yes' if m.uses_score else 'no'} | {cell(m.description)} |" for m in LEARNERS.values()]
    out += ["", "## Scores (`--score`)", "", "| name | label | description |", "|---|---|---|"]
    out += [f"| `{s.name}` | {cell(s.label)} | {cell(s.description)} |" for s in SCORES.values()]
    out += ["", "## CPT estimators (`--params`)", "", "| name | label | pseudo-count | description |",
            "|---|---|---|---|"]
    out += [f"| `{e.name}` | {cell(e.label)} | {'yes' if e.uses_pseudo_count else 'no'} | {cell(e.description)} |"
            for e in ESTIMATORS.values()]
    out += ["", "## Missing cells in structure learning (`--missing-data`)", "", "| name | label | description |",
            "|---|---|---|"]
    out += [f"| `{m.name}` | {cell(m.label)} | {cell(m.description)} |" for m in MISSING_DATA.values()]
    out += ["", "## Imputation methods (`impute-benchmark --methods`)", "",
            "| name | label | peer | needs | description |", "|---|---|---|---|---|"]
    out += [f"| `{m.name}` | {cell(m.label)} | {'yes' if m.peer else 'no'} | {cell(m.needs or '-')} | "
            f"{cell(m.description)} |" for m in IMPUTERS.values()]
    out += ["", "## Clustering algorithms (`cluster --algorithm`)", "", "| name | label | uses a kernel | description |",
            "|---|---|---|---|"]
    out += [f"| `{c.name}` | {cell(c.label)} | {'yes' if c.uses_kernel else 'no'} | {cell(c.description)} |"
            for c in CLUSTERERS.values()]
    out += ["", "## Classifiers (`classify --classifier`)", "", "| name | label | in tables | description |",
            "|---|---|---|---|"]
    out += [f"| `{c.name}` | {cell(c.label)} | {cell(c.table_label)} | {cell(c.description)} |"
            for c in CLASSIFIERS.values()]
    out += ["", "## Prototype criteria (`prototypes --criterion`)", "", "| name | label | description |", "|---|---|---|"]
    out += [f"| `{c.name}` | {cell(c.label)} | {cell(c.description)} |" for c in CRITERIA.values()]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # python -m bnfk_core.registry > docs/OPTIONS.md
    import sys

    import bnfk_core  # noqa: F401 - every module registers its options on import
    import bnfk_core.analyses  # noqa: F401 - the imputation methods
    from bnfk_core import registry   # the package's registries (this file runs as __main__, a second copy)

    sys.stdout.write(registry.options_markdown())
