"""bnfk_core: categorical data, Bayesian networks and their Fisher kernel.

The plain-Python core behind the bnfk Streamlit app and the ``python -m bnfk_core`` CLI.
"""
from .errors import BnfkError, DataError, StructureError, ModelError, KernelError
from .data import CategoricalData, load_csv
from .dag import DAG

__version__ = "0.1.0"
from .model import BayesNet, fit, read_model, write_model
from .inference import parent_marginals, posterior, marginal
from .kernels import gram, features, contributions, set_kernel, mmd
