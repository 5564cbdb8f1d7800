"""Analyses built on the foundation (data, dag, scores/learn, model, inference, kernels).

* :mod:`~bnfk_core.analyses.cluster.clustering` -- clustering with a kernel (thesis ch. 5):
  ``cluster_correlation``, ``cluster_spectral``,
  ``cluster_features``, ``cluster_metrics``; :mod:`~bnfk_core.analyses.cluster.classification` -- kernel kNN /
  SVM (App. D);
* :mod:`~bnfk_core.analyses.impute.core` -- BN, Mode and weighted-kNN imputation, the MCAR protocol (thesis
  ch. 4);
* :mod:`~bnfk_core.analyses.prototypes.selection` -- greedy-MMD prototypes and data summarisation (paper
  Algorithm 1, Figs 1-3):
  ``prototype_criteria``, ``prototype_search``;
* :mod:`~bnfk_core.analyses.segments` -- structure segments, case tables, supervised arc search (thesis ch.
  6).

Every analysis takes a model and/or data and returns plain results (dataclasses, frames, dicts).
Importing the package is light: each topic declares its registry members in a light ``members`` module.
"""

__all__ = ["cluster", "impute", "prototypes", "segments"]
