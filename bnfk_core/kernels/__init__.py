"""Kernels between rows: the Fisher kernel and its sparse features, Hamming kernels, the similarity zoo, live terms.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""
from ..registry import face

_HOMES = {
    "sample_rows": "embed", "kernel_distance": "embed", "cluster_order": "embed", "class_order": "embed",
    "kernel_pca": "embed", "pair_values": "embed", "LANCZOS_ROWS": "embed", "row_codes": "features",
    "check_positive": "features", "feature_offsets": "features", "block_matrix": "features",
    "used_blocks": "features", "DENSE_BLOCK_BYTES": "features", "FEATURE_CHUNK_ROWS": "features",
    "iter_features": "features", "gram": "fisher", "contributions": "fisher",
    "set_kernel": "fisher", "mmd": "fisher", "mean_features": "fisher", "normalize_rows": "fisher",
    "normalize_bytes": "fisher", "NORMALIZE_BLOCK_CELLS": "fisher", "pair_tables": "fisher",
    "add_pair_terms": "fisher", "warm_up": "fisher", "THESIS_KERNELS": "members", "FittedKernel": "fisher",
    "NetworkKernel": "fisher", "fit_fisher": "fisher", "scaled_hamming_model": "hamming",
    "HammingKernel": "hamming", "fit_scaled_hamming": "hamming", "fit_hamming": "hamming", "LiveKernel": "live",
    "clear_live_cache": "live_cache", "live_kernel": "live_cache", "rows_key": "live", "OPS": "live_terms", "Edit": "live_terms",
    "changed_terms": "live_terms", "safe_inverse": "live_terms", "TermEntry": "live_terms",
    "PARALLEL_PAIRS": "live_terms", "run_entries": "live_terms", "missing_part": "live_terms",
    "add_missing_part": "live_terms", "BORIAH_MEASURES": "similarity", "MEASURES": "members",
    "CategoricalMeasure": "similarity", "MeasureInfo": "members", "fit_registered": "similarity", "fit_measure": "similarity",
    "measure_names": "similarity", "GROUP_STATES": "similarity_gram", "GramPlan": "similarity_gram",
    "finalize": "similarity_gram", "group_attributes": "similarity_gram", "run_plan": "similarity_gram",
    "SUM_UNIFORM": "similarity_tables", "SUM_CARD": "similarity_tables", "AttributeStats": "similarity_tables",
    "FISHER_NORMALIZED": "members", "DEFAULT_ALPHA": "fisher_normalized", "DEFAULT_NETWORK": "fisher_normalized",
    "power_normalize": "fisher_normalized", "normalized_features": "fisher_normalized",
    "normalized_gram": "fisher_normalized", "NormalizedFisherKernel": "fisher_normalized",
    "fit_fisher_normalized": "fisher_normalized", "check_alpha": "normalized_options", "ABOUT": "fisher_normalized",
    "ZERO_TOL": "fisher_normalized", "DEFAULT_ALGORITHM": "fisher_normalized", "LATENT_CLASSES": "fisher_normalized", "LATENT_AND_EMPTY": "fisher_normalized",
    "BLANKS": "normalized_options", "LATENT_STARTS": "fisher_normalized", "LATENT_KMAX": "fisher_normalized",
    "INTRA": "normalized_options", "check_intra": "normalized_options", "intra_blocks": "normalized_options",
    "LEARNED_PSEUDO_COUNT": "fisher_normalized", "fit_latent_classes": "fisher_normalized",
    "check_blanks": "normalized_options", "check_weight": "normalized_options", "blanks_as_missing": "normalized_options",
    "sum_table": "similarity_tables", "lin1_tables": "similarity_tables", "measure_tables": "similarity_tables",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
