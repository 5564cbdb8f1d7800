"""bnfk_core: categorical data, Bayesian networks and their Fisher kernel.

The plain-Python core behind the bnfk Streamlit app and the ``python -m bnfk_core`` CLI.
Layers (imports run one way, top to bottom):

* foundation -- ``errors``, ``registry``, ``data``, ``dag``, ``scores``, ``learn``, ``model``, ``missing``,
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
from .missing import learn_network  # registers the missing-data methods
from .model import BayesNet, fit, read_model, write_model
from .similarity import fit_measure  # registers the similarity measures

__version__ = "0.1.0"

__all__ = ["DAG", "CategoricalData", "load_csv", "BnfkError", "DataError", "KernelError", "ModelError",
           "StructureError", "marginal", "parent_marginals", "posterior", "contributions", "features", "gram",
           "mmd", "set_kernel", "BayesNet", "fit", "read_model", "write_model", "fit_measure", "learn_network", "__version__"]
