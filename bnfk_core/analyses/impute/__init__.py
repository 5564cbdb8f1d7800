"""Imputation: network, kNN and stacked imputers, the benchmark, streamed imputation of big files.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""
from ...registry import face

_HOMES = {
    "CE_FLOOR": "benchmark", "CE_CAP": "benchmark", "DEFAULT_RATIOS": "benchmark", "MCARSplit": "benchmark",
    "induce_mcar": "benchmark", "capped_cross_entropy": "benchmark", "evaluate": "benchmark",
    "macro_average": "benchmark", "BenchmarkResult": "benchmark",
    "ImputedData": "completion", "impute_with_model": "completion", "FILL_NUMERIC": "members",
    "CompletedFile": "completion", "number": "completion", "filled_column": "completion",
    "complete_file": "completion", "METHODS": "core", "METHOD_LABELS": "core", "Imputation": "core",
    "ImputeError": "core", "learn_model": "core", "impute": "core", "impute_bn": "core", "impute_mode": "core",
    "impute_wknn": "core", "impute_fisher_knn": "core", "impute_augmented": "core", "knn_vote": "core",
    "category_weights": "core", "top_k": "core", "hamming_matches": "core", "posterior_cells": "core", "merged_posterior": "core", "ENUMERATE_MAX_COMPLETIONS": "core",
    "cell_frame": "core", "check_methods": "core", "knn_onehot_cells": "knn_onehot",
    "impute_knn_numpy": "knn_onehot", "impute_lca": "methods", "impute_table": "methods",
    "NETWORK_IMPUTERS": "methods", "DEFAULT_IMPUTER": "members", "DEFAULT_STRUCTURE_MISSING": "members",
    "IMPUTE_LEARN": "members", "learn_for_imputation": "methods", "impute_knn_onehot": "methods",
    "one_hot": "methods", "STACK_COMPONENTS": "members", "AVERAGE_COMPONENTS": "members", "VALIDATION_SHARE": "stack",
    "average_cells": "stack", "true_state_probs": "stack", "stacking_weights": "stack",
    "validation_weights": "stack", "impute_average": "stack", "impute_stacked": "stack", "impute_file": "stream",
    "DEFAULT_BLOCK_ROWS": "stream",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
