"""Latent class models (naive Bayes with a hidden class): EM fitting, fibers and identifiability, latent-class
clustering (their Fisher kernel is :mod:`bnfk_core.kernels.latent_fisher`, a floor above).  :func:`fit_lca`
is the public entry point; :func:`fit_mixed_lca` fits a mixed table (categorical and Gaussian indicators,
:class:`MixedLatentClassModel`).

Every public name below loads its module on first use (PEP 562), so importing the package is light (the
registries read :mod:`.members` without loading numba or scipy)."""

from ..registry import face

_HOMES = {
    "HIDDEN_NAME": "model",
    "LatentClassModel": "model",
    "LcaError": "model",
    "fit_lca": "model",
    "fit_lca_range": "model",
    "best_by_bic": "model",
    "free_parameters": "model",
    "parse_classes": "model",
    "MixedLatentClassModel": "mixed",
    "fit_mixed_lca": "mixed",
    "mixed_free_parameters": "mixed",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
