"""The imputation family's built-in members, declared light (:data:`bnfk_core.registry.IMPUTERS` reads them on
first
use), with the defaults the faces show.  Each member's ``impute`` is a :func:`~bnfk_core.registry.lazy`
reference to
:mod:`.methods`, imported when the method first runs; importing this module loads no numerical library.
"""

from __future__ import annotations

from ...registry import ImputerSpec, lazy

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

IMPUTERS = (
    ImputerSpec(
        "bn", "BN", lazy(_M, "_bn"), description="exact posterior; structure on the complete rows (thesis)"
    ),
    ImputerSpec(
        "mode",
        "Mode",
        lazy(_M, "_mode"),
        peer=True,
        description="the column's relative frequencies; imputes the most frequent value",
    ),
    ImputerSpec(
        "wknn", "wKNN", lazy(_M, "_wknn"), description="weighted Hamming k-nearest neighbours (thesis 4.1.2)"
    ),
    ImputerSpec(
        "fisher-knn",
        "Fisher-kNN",
        lazy(_M, "_fisher"),
        description="weighted kNN with Fisher-kernel neighbours",
    ),
    ImputerSpec(
        "bn-mode",
        "BN-Mode",
        lazy(_M, "_bn_mode"),
        description="network learned on the Mode-filled table (thesis 4.2.2)",
    ),
    ImputerSpec(
        "bn-wknn", "BN-wKNN", lazy(_M, "_bn_wknn"), description="network learned on the wKNN-filled table"
    ),
    ImputerSpec(
        "bn-ac",
        "BN (all rows)",
        lazy(_M, "_from_every_row", "available-case", "bn-ac"),
        description="available-case structure, CPTs by EM over the missing cells",
    ),
    ImputerSpec(
        "bn-em",
        "BN (structural EM)",
        lazy(_M, "_from_every_row", "em", "bn-em"),
        description="structural EM (Friedman 1998), CPTs by EM",
    ),
    ImputerSpec(
        "knn-onehot",
        "kNN (one-hot, k=5)",
        lazy(_M, "_knn_onehot"),
        peer=True,
        needs="scikit-learn",
        description="scikit-learn KNNImputer on one-hot codes, arg-max per variable",
    ),
    ImputerSpec(
        "lca",
        "Latent class model (K by BIC)",
        lazy(_M, "_lca"),
        peer=True,
        description="bnfk_core.lca: K = 1..6 classes by BIC; class posterior times the class profiles",
    ),
    ImputerSpec(
        "knn",
        "kNN (one-hot, k=5, numpy)",
        lazy(_M, "_knn"),
        description="KNNImputer's one-hot vote in numpy; donors tied at the k-th distance share the rest",
    ),
    ImputerSpec(
        "bn-lca",
        "BN + LCA (posterior average)",
        lazy(_M, "_bn_lca"),
        description="equal-weight average of the structural-EM network's and the latent class model's "
        "cell posteriors",
    ),
    ImputerSpec(
        "stack",
        "Stacked (BN + LCA + kNN)",
        lazy(_M, "_stack"),
        description="average of the cell posteriors of " + ", ".join(STACK_COMPONENTS) + ", weights by "
        "internal validation on 5 % of the observed cells",
    ),
)
