"""The imputation family's built-in members, declared light (:data:`bnfk_core.registry.IMPUTERS` reads them on
first use), with the defaults the faces show.  Each member's ``impute`` is a :func:`~bnfk_core.registry.lazy`
reference to
:mod:`.methods`, imported when the method first runs; importing this module loads no numerical library.
"""

from __future__ import annotations

from ...registry import IMPUTE_OPTIONS, ImputerSpec, Option, lazy

__all__ = [
    "IMPUTERS",
    "DEFAULT_IMPUTER",
    "DEFAULT_STRUCTURE_MISSING",
    "IMPUTE_LEARN",
    "FILL_NUMERIC",
    "STACK_COMPONENTS",
    "AVERAGE_COMPONENTS",
]

#: the imputation ``impute --structure`` and the app's Imputation page use (measured, docs/IMPUTATION.md)
DEFAULT_IMPUTER = "stack"
#: the missing-data method of :data:`DEFAULT_IMPUTER`
DEFAULT_STRUCTURE_MISSING = "em"
#: the score and CPT estimator ``impute --structure`` and the app use (qNML + cNML imputed better than
#: BIC + smoothed on the bundled data sets, docs/IMPUTATION.md)
IMPUTE_LEARN = {"score": "qnml", "params": "cnml"}
#: What a filled cell of a discretized (interval-state) variable holds (:mod:`.completion`): ``median`` -- the
#: median of the file's observed values in the filled bin (the lower of the two middle ones for an even count,
#: so it is always a value of the column, written as the file writes it); ``label`` -- the bin's label
#: such as ``[0.1, 2.3)``.  Other variables are filled with the state's name either way.
FILL_NUMERIC = ("median", "label")
#: the imputers ``stack`` weighs (:mod:`.stack`)
STACK_COMPONENTS = ("bn-em", "lca", "knn")
#: the imputers ``bn-lca`` averages with equal weights
AVERAGE_COMPONENTS = ("bn-em", "lca")

_M = "bnfk_core.analyses.impute.methods"

#: how the network's search treats missing cells, for the imputers that learn it from the table as it is
#: given (None: the thesis's protocol, structure on the complete rows)
MISSING_DATA = Option(
    "missing_data", str, None, "how the network's search treats missing cells (None: the complete rows)"
)
_O = IMPUTE_OPTIONS
#: what every imputer is handed (each declares those it reads)
_RUN = (_O["model"], _O["k"], _O["seed"], _O["cache"])
#: the network an imputer learns (:func:`.core.learn_model`'s options)
_NETWORK = (_O["structure"], _O["score"], _O["params"], _O["pseudo_count"], _O["max_parents"], _O["recipe"])
#: a network learned from the table as given (by its own missing-data method: bn, fisher-knn) or from a
#: completed table (bn-mode, bn-wknn)
_LEARNS = _RUN + _NETWORK + (MISSING_DATA,)
#: a network learned from every row by the imputer's own missing-data method (bn-ac, bn-em, and the
#: averages that hold bn-em)
_LEARNS_OWN_WAY = _RUN + _NETWORK

IMPUTERS = (
    ImputerSpec(
        "bn",
        "BN",
        lazy(_M, "_bn"),
        description="exact posterior; structure on the complete rows (thesis)",
        options=_LEARNS,
    ),
    ImputerSpec(
        "mode",
        "Mode",
        lazy(_M, "_mode"),
        peer=True,
        description="the column's relative frequencies; imputes the most frequent value",
        options=(),
    ),
    ImputerSpec(
        "wknn",
        "wKNN",
        lazy(_M, "_wknn"),
        description="weighted Hamming k-nearest neighbours (thesis 4.1.2)",
        options=_RUN,
    ),
    ImputerSpec(
        "fisher-knn",
        "Fisher-kNN",
        lazy(_M, "_fisher"),
        description="weighted kNN with Fisher-kernel neighbours",
        options=_LEARNS,
    ),
    ImputerSpec(
        "bn-mode",
        "BN-Mode",
        lazy(_M, "_bn_mode"),
        description="network learned on the Mode-filled table (thesis 4.2.2)",
        options=_LEARNS,
    ),
    ImputerSpec(
        "bn-wknn",
        "BN-wKNN",
        lazy(_M, "_bn_wknn"),
        description="network learned on the wKNN-filled table",
        options=_LEARNS,
    ),
    ImputerSpec(
        "bn-ac",
        "BN (all rows)",
        lazy(_M, "_from_every_row", "available-case", "bn-ac"),
        description="available-case structure, CPTs by EM over the missing cells",
        options=_LEARNS_OWN_WAY,
    ),
    ImputerSpec(
        "bn-em",
        "BN (structural EM)",
        lazy(_M, "_from_every_row", "em", "bn-em"),
        description="structural EM (Friedman 1998), CPTs by EM",
        options=_LEARNS_OWN_WAY,
    ),
    ImputerSpec(
        "knn-onehot",
        "kNN (one-hot, k=5)",
        lazy(_M, "_knn_onehot"),
        peer=True,
        needs="scikit-learn",
        description="scikit-learn KNNImputer on one-hot codes, arg-max per variable",
        options=(_O["cache"],),
    ),
    ImputerSpec(
        "lca",
        "Latent class model (K by BIC)",
        lazy(_M, "_lca"),
        peer=True,
        description="bnfk_core.lca: K = 1..6 classes by BIC; class posterior times the class profiles",
        options=(_O["seed"], _O["cache"]),
    ),
    ImputerSpec(
        "knn",
        "kNN (one-hot, k=5, numpy)",
        lazy(_M, "_knn"),
        description="KNNImputer's one-hot vote in numpy; donors tied at the k-th distance share the rest",
        options=(_O["cache"],),
    ),
    ImputerSpec(
        "bn-lca",
        "BN + LCA (posterior average)",
        lazy(_M, "_bn_lca"),
        description="equal-weight average of the structural-EM network's and the latent class model's "
        "cell posteriors",
        options=_LEARNS_OWN_WAY,
    ),
    ImputerSpec(
        "stack",
        "Stacked (BN + LCA + kNN)",
        lazy(_M, "_stack"),
        description="average of the cell posteriors of " + ", ".join(STACK_COMPONENTS) + ", weights by "
        "internal validation on 5 % of the observed cells",
        options=_LEARNS_OWN_WAY,
    ),
)
