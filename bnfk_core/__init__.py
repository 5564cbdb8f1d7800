"""bnfk_core: categorical data, Bayesian networks and their Fisher kernel.

The plain-Python core behind the bnfk Streamlit app and the ``python -m bnfk_core`` CLI.
Layers (imports run one way, top to bottom):

* foundation -- ``errors``, ``registry``, ``data``, ``dag``, ``scores``, ``learn``, ``model``,
  ``inference``, ``kernels``, ``similarity``, ``stats``, ``embed``, ``layout``;
* ``analyses`` -- clustering/classification, imputation, prototypes, segments;
* ``cli`` and ``reproduce`` -- the command line and the reproduction of published results.

Importing the package registers every kernel, structure-learning method, score and estimator
(:mod:`bnfk_core.registry`).
"""
from .dag import DAG
from .data import CategoricalData, load_csv
from .errors import BnfkError, DataError, KernelError, ModelError, StructureError
from .inference import marginal, parent_marginals, posterior
from .kernels import contributions, features, gram, mmd, set_kernel
from .model import BayesNet, fit, read_model, write_model
from .similarity import fit_measure  # registers the similarity measures
from .lca import kernel as _lca_kernel  # noqa: F401 - registers the latent-class Fisher kernel and clusterer
from .lca import fit_lca

__version__ = "0.1.0"

__all__ = ["DAG", "CategoricalData", "load_csv", "BnfkError", "DataError", "KernelError", "ModelError",
           "StructureError", "marginal", "parent_marginals", "posterior", "contributions", "features", "gram",
           "mmd", "set_kernel", "BayesNet", "fit", "read_model", "write_model", "fit_measure", "fit_lca", "__version__"]
