"""The names the parsers offer, without importing what implements them (a subcommand's ``--help``
and its argument errors start at once, before numpy/pandas/pgmpy are loaded).

:class:`RegistryChoices` stands for a registry's names in ``choices=``: argparse checks a value with ``in``
(a built-in name at once; any other against the registry, loaded then, so that a plug-in's member is
accepted) and lists the names for ``--help`` and errors by iterating (the registry's names once it is loaded,
else :data:`BUILTIN`, the members the providers register).  The other constants copy defaults and choice lists of heavy modules.
``tests/test_cli_startup.py`` keeps every name here equal to its source: when you register a new built-in
member or change one of these constants, change it here too.
"""
from __future__ import annotations

from .. import registry

__all__ = ["BUILTIN", "FEATURE_LEARNERS", "RegistryChoices", "choices", "feature_learners", "SOURCES"]

#: registry family -> the members its provider modules register, in registration order
BUILTIN = {
    "kernel": ("fisher", "scaled-hamming", "hamming", "overlap", "eskin", "iof", "of", "lin", "lin1", "goodall1",
               "goodall2", "goodall3", "goodall4", "smirnov", "gambaryan", "burnaby", "anderberg",
               "aitchison-aitken", "lca-fisher"),
    "structure-learning method": ("empty", "naive-bayes", "hc", "hc-greedy", "tree", "tan", "kdb", "exact"),
    "score": ("bic", "aic", "k2", "bdeu", "qnml", "kgv"),
    "parameter method": ("smoothed", "ml", "bdeu", "cnml"),
    "missing-data method": ("complete-rows", "available-case", "em"),
    "imputation method": ("bn", "mode", "wknn", "fisher-knn", "bn-mode", "bn-wknn", "bn-ac", "bn-em", "knn-onehot",
                          "lca", "knn", "bn-lca", "stack"),
    # the kernel-based ones are registered in bnfk_core.registry itself, "lca" by its provider
    "clustering algorithm": tuple(dict.fromkeys((*registry.CLUSTERERS.registered(), "lca"))),
    "classifier": ("knn", "svm"),
    "prototype criterion": ("mmd", "chi2", "random"),
}
#: :func:`bnfk_core.registry.feature_learners` (the methods that do not need the class as a node)
FEATURE_LEARNERS = ("empty", "hc", "hc-greedy", "tree", "exact")

# constants of heavy modules the parsers show (module -> names: :data:`SOURCES`)
FISHER, SCALED_HAMMING = "fisher", "scaled-hamming"
SHIFTS, TRANSFORMS = ("auto", "adaptive", "none"), ("shift-min", "cosine", "rbf")
FILL_NUMERIC = ("median", "label")
DEFAULT_IMPUTER, DEFAULT_STRUCTURE_MISSING, IMPUTE_LEARN = "stack", "em", {"score": "qnml", "params": "cnml"}
DEFAULT_MISSING_DATA = "em"
KGV_KERNELS = ("gaussian", "linear")
MAX_LANDSCAPE_VARIABLES, DEFAULT_C = 5, 1e-9
SUMMARIZATION_STRUCTURES = ("hc", "hc-greedy", "tan", "kdb")
MAX_CANDIDATES = 2000
SEGMENT_KINDS = ("single-arc", "v", "a", "chain", "full")
DEFAULT_TIMEOUT, MAX_TIMEOUT = 30.0, 3600.0

#: the module each constant above is copied from (the test compares them)
SOURCES = {
    "bnfk_core.kernels.fisher": ("FISHER", "SCALED_HAMMING"),
    "bnfk_core.analyses.cluster.clustering": ("SHIFTS", "TRANSFORMS"),
    "bnfk_core.analyses.impute.completion": ("FILL_NUMERIC",),
    "bnfk_core.analyses.impute.methods": ("DEFAULT_IMPUTER", "DEFAULT_STRUCTURE_MISSING", "IMPUTE_LEARN"),
    "bnfk_core.learning.incomplete": ("DEFAULT_MISSING_DATA",),
    "bnfk_core.learning.kgv": ("KGV_KERNELS",),
    "bnfk_core.learning.landscape": ("MAX_LANDSCAPE_VARIABLES",),
    "bnfk_core.learning.metagraph": ("DEFAULT_C",),
    "bnfk_core.analyses.prototypes.selection": ("SUMMARIZATION_STRUCTURES",),
    "bnfk_core.analyses.segments": ("MAX_CANDIDATES",),
    "bnfk_core.network.dag": ("SEGMENT_KINDS",),
    "bnfk_core.data.dask_runner": ("DEFAULT_TIMEOUT", "MAX_TIMEOUT"),
}


class RegistryChoices:
    """``choices=`` for the names of ``reg`` (those of :data:`BUILTIN` until the registry is loaded);
    ``names``: a fixed subset to list instead (``None``: all), still checked against the live registry."""

    def __init__(self, reg: registry.Registry, names: tuple | None = None, *, only=None):
        self.reg, self.names, self.only = reg, names, only

    def _listed(self) -> tuple:
        if self.reg.loaded:
            names = tuple(self.reg) if self.only is None else self.only()
        else:
            names = self.names if self.names is not None else BUILTIN[self.reg.family]
        return names

    def __iter__(self):
        return iter(self._listed())

    def __len__(self) -> int:
        return len(self._listed())

    def __contains__(self, name) -> bool:
        if not self.reg.loaded and name in self._listed():
            return True                   # a built-in name: accepted without importing the providers
        return name in (self.only() if self.only is not None else self.reg)

    def __repr__(self) -> str:
        return repr(self._listed())


def choices(reg: registry.Registry) -> RegistryChoices:
    """All names of ``reg``."""
    return RegistryChoices(reg)


def feature_learners() -> RegistryChoices:
    """The structure-learning methods over the features only (:func:`bnfk_core.registry.feature_learners`)."""
    return RegistryChoices(registry.LEARNERS, FEATURE_LEARNERS, only=registry.feature_learners)
