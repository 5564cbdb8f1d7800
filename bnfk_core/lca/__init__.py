"""Latent class models (naive Bayes with a hidden class): EM fitting, fibers and identifiability, the Fisher
kernel and latent-class clustering.  :func:`fit_lca` is the public entry point."""
from .model import HIDDEN_NAME, LatentClassModel, LcaError, fit_lca, fit_lca_range, free_parameters, parse_classes

__all__ = ["HIDDEN_NAME", "LatentClassModel", "LcaError", "fit_lca", "fit_lca_range", "free_parameters",
           "parse_classes"]
