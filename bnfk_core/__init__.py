"""bnfk_core: categorical data, Bayesian networks and their Fisher kernel.

The plain-Python core behind the bnfk Streamlit app and the ``python -m bnfk_core`` CLI.
Subpackages by role, imports running down the list (each has a small public face, ``__all__``):

* ``data`` -- tables, reading, binning, streaming, runners, counts;
* ``network`` -- the DAG, the model (CPTs, viewed and edited), its file formats, d-separation, the textbook
  networks, layout;
* ``inference`` -- junction tree, variable elimination, marginals and posteriors, evidence and the MPE;
* ``learning`` -- scores, KGV, structure searches, incomplete data, landscapes, the metagraph kernel;
* ``hybrid`` -- conditional linear Gaussian networks over mixed tables (numbers kept as numbers);
* ``kernels`` -- the Fisher kernel and its features, Hamming kernels, the similarity zoo, live terms;
* ``lca`` -- latent class models;
* ``analyses`` -- ``cluster``, ``impute``, ``prototypes``, ``segments``;
* ``serving``, ``views``, ``cli``, ``reproduce``, ``estimators`` (scikit-learn) -- the faces.

Only ``errors`` and ``registry`` stay at the top.
Importing the package is light: the public names below load their module on first use, and each registry
(:mod:`bnfk_core.registry`) reads its built-in members from the light ``members`` modules named in
:data:`MEMBERS` when it is first used (a member's numerical module is imported when the member first runs).
"""

import importlib

from . import registry as _registry

__version__ = "0.1.0"

#: public name -> the module that defines it; imported on first use (PEP 562), so that ``import bnfk_core``
#: (and every ``python -m bnfk_core`` call) loads no numerical library it does not need
_HOMES = {
    "DAG": "network.dag",
    "CategoricalData": "data.table",
    "load_csv": "data.table",
    "from_frame": "data.table",
    "BnfkError": "errors",
    "DataError": "errors",
    "KernelError": "errors",
    "ModelError": "errors",
    "StructureError": "errors",
    "marginal": "inference.queries",
    "parent_marginals": "inference.queries",
    "posterior": "inference.queries",
    "query": "inference.evidence",
    "mpe": "inference.evidence",
    "contributions": "kernels.fisher",
    "features": "kernels.features",
    "gram": "kernels.fisher",
    "mmd": "kernels.fisher",
    "set_kernel": "kernels.fisher",
    "BayesNet": "network.model",
    "fit": "network.model",
    "read_model": "network.formats",
    "write_model": "network.formats",
    "fit_measure": "kernels.similarity",
    "fit_lca": "lca",
    "learn_network": "learning.incomplete",
    "Recipe": "learning.recipe",
    "learn_recipe": "learning.recipe",
    "arc_strength": "learning.bootstrap",
    "LiveKernel": "kernels.live",
    "covered_arcs": "network.dag",
    "to_pgmpy": "network.pgmpy_io",
    "from_pgmpy": "network.pgmpy_io",
    "d_separated": "network.dsep",
    "textbook_network": "network.textbook",
    "cpt_frame": "network.cpt",
    "with_cpt": "network.cpt",
    "zero_entries": "network.cpt",
    "similar": "analyses.similar",
    "MixedData": "hybrid.table",
    "load_mixed": "hybrid.table",
    "HybridNet": "hybrid.model",
    "fit_hybrid": "hybrid.fitting",
}

__all__ = [*_HOMES, "MEMBERS", "__version__"]

#: registry -> the light modules that declare its built-in members beside their family (``module:attribute``,
#: in the order the faces offer them).  The package face is the one place that knows every family, so that the
#: registry module (the bottom floor) names none of them.
MEMBERS = {
    "KERNELS": ("bnfk_core.kernels.members:KERNELS", "bnfk_core.lca.members:KERNELS"),
    "LEARNERS": ("bnfk_core.learning.members:LEARNERS",),
    "SCORES": ("bnfk_core.learning.members:SCORES",),
    "ESTIMATORS": ("bnfk_core.network.members:ESTIMATORS",),
    "MISSING_DATA": ("bnfk_core.learning.members:MISSING_DATA",),
    "IMPUTERS": ("bnfk_core.analyses.impute.members:IMPUTERS",),
    "CLUSTERERS": ("bnfk_core.analyses.cluster.members:CLUSTERERS", "bnfk_core.lca.members:CLUSTERERS"),
    "CLASSIFIERS": ("bnfk_core.analyses.cluster.members:CLASSIFIERS",),
    "CRITERIA": ("bnfk_core.analyses.prototypes.members:CRITERIA",),
}
for _name, _sources in MEMBERS.items():
    getattr(_registry, _name).members_from(*_sources)
del _name, _sources


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
