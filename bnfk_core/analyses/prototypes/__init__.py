"""Prototypes: greedy MMD and chi-square selection, held-out checks, prototypes of big files.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""

from ...registry import face

_HOMES = {
    "MMDCriterion": "criteria",
    "Chi2Criterion": "criteria",
    "KernelColumns": "criteria",
    "log_chi2_sf": "criteria",
    "mmd_criterion": "criteria",
    "chi2_criterion": "criteria",
    "split_half": "heldout",
    "class_posterior": "heldout",
    "HeldOut": "heldout",
    "ChunkedMMDCriterion": "rowwise",
    "ChunkedPrototypes": "rowwise",
    "chunked_prototypes": "rowwise",
    "GreedyResult": "search",
    "greedy_swap": "search",
    "random_subsets": "search",
    "PrototypeResult": "search",
    "check_subset_size": "search",
    "select_prototypes": "search",
    "feature_embedding": "search",
    "HYBRID_CRITERIA": "hybrid",
    "select_hybrid_prototypes": "hybrid",
    "SUMMARIZATION_STRUCTURES": "members",
    "SummarizationExperiment": "selection",
    "prepare_summarization": "selection",
    "run_summarization": "selection",
    "summarize_benchmark": "selection",
    "selected_rows": "selection",
    "criterion_value": "selection",
    "share_below": "selection",
    "result_summary": "selection",
    "selected_table": "selection",
    "default_subset_sizes": "selection",
    "parse_subset_sizes": "selection",
    "curve_table": "selection",
    "map_sample": "selection",
    "compare_prototypes": "selection",
    "row_labels": "selection",
    "summarization_curve": "selection",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
