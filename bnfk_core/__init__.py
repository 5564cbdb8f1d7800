"""bnfk_core: categorical data, Bayesian networks and their Fisher kernel.

The plain-Python core behind the bnfk Streamlit app and the ``python -m bnfk_core`` CLI.
Layers (imports run one way, top to bottom):

* foundation -- ``errors``, ``registry``, ``data``, ``dag``, ``scores``, ``learn``, ``model``, ``missing``,
  ``inference``, ``kernels``, ``similarity``, ``stats``, ``embed``, ``layout``;
* ``analyses`` -- clustering/classification, imputation, prototypes, segments;
* ``cli`` and ``reproduce`` -- the command line and the reproduction of published results.

Importing the package is light: the public names below load their module on first use, and each registry
(:mod:`bnfk_core.registry`) imports the modules that register its members when it is first read.
"""
import importlib

__version__ = "0.1.0"

#: public name -> the module that defines it; imported on first use (PEP 562), so that ``import bnfk_core``
#: (and every ``python -m bnfk_core`` call) loads no numerical library it does not need
_HOMES = {
    "DAG": "dag", "CategoricalData": "data", "load_csv": "data", "BnfkError": "errors", "DataError": "errors",
    "KernelError": "errors", "ModelError": "errors", "StructureError": "errors", "marginal": "inference",
    "parent_marginals": "inference", "posterior": "inference", "contributions": "kernels", "features": "fisher_features",
    "gram": "kernels", "mmd": "kernels", "set_kernel": "kernels", "BayesNet": "model", "fit": "model",
    "read_model": "model", "write_model": "model", "fit_measure": "similarity", "fit_lca": "lca",
    "learn_network": "missing",
}

__all__ = [*_HOMES, "__version__"]


def __getattr__(name: str):
    if name in _HOMES:
        value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    else:
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            raise AttributeError(f"module 'bnfk_core' has no attribute '{name}'") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
