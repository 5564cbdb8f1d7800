"""Learning a network: decomposable scores, KGV, structure searches, incomplete data, landscapes, the metagraph kernel.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""
from ..registry import face

_HOMES = {
    "EXACT_MAX_VARIABLES": "members", "EXACT_MAX_CANDIDATES": "exact", "penalty_bounds": "exact",
    "exact_search": "exact", "learn_exact": "exact", "learn_hc": "hill_climb", "reachability": "hill_climb", "start_parents": "hill_climb", "tabu_search": "tabu", "learn_tabu": "tabu",
    "ILS_RESTARTS": "tabu", "ILS_KICKS": "tabu", "GREEDY_CLIMBS": "tabu", "TABU_TENURE": "tabu", "TABU_PATIENCE": "tabu",
    "OBSERVED_SCORE": "incomplete",
    "DEFAULT_MISSING_DATA": "members", "AvailableCaseScorer": "available_case", "MIN_FAMILY_ROWS": "available_case", "ExpectedScorer": "incomplete",
    "MemberTables": "member_tables", "TABLES_MAX_CELLS": "member_tables",
    "expected_table": "estep", "em_parameters": "incomplete", "observed_score": "incomplete",
    "structural_em": "incomplete", "learn_network": "incomplete", "check_missing_data": "incomplete",
    "MAX_COMPLETIONS": "estep", "EM_BLOCK_ROWS": "estep", "TABLE_BLOCK_ROWS": "estep", "EM_MAX_COMPLETIONS": "estep",
    "OFFSETS_MAX_CELLS": "estep", "OFFSETS_TOTAL_CELLS": "estep", "offsets_memo": "estep",
    "expected_family_counts": "estep", "family_counts_part": "estep", "table_part": "estep",
    "loglik_part": "estep", "prepare_jobs_part": "estep", "kept_counts_part": "estep", "kept_loglik_part": "estep",
    "touching_groups": "estep", "observed_counts": "estep", "log_likelihood_total": "estep",
    "KGV_KERNELS": "members", "default_parameters": "kgv", "incomplete_cholesky": "kgv", "KGVStatistics": "kgv",
    "KGVScorer": "kgv", "make_kgv_scorer": "kgv", "kgv_statistics": "kgv", "raw_numbers": "kgv",
    "kgv_mutual_information": "kgv", "MAX_LANDSCAPE_VARIABLES": "members", "DAG_COUNTS": "landscape",
    "Landscape": "landscape", "pairs": "landscape", "enumerate_dags": "landscape", "family_table": "landscape",
    "dag_scores": "landscape", "equivalence_keys": "landscape", "landscape_scorer": "landscape",
    "score_landscape": "landscape", "climb_path": "landscape", "place_dag": "landscape",
    "expected_dag_count": "landscape", "DEFAULT_C": "members", "DEFAULT_M": "metagraph",
    "MetagraphError": "metagraph", "krawtchouk": "metagraph", "kernel_by_distance": "metagraph",
    "paper_regulariser": "metagraph", "hamming": "metagraph", "Surrogate": "metagraph",
    "fit_surrogate": "metagraph", "fit_orders": "metagraph", "predict_orders": "metagraph",
    "walsh_transform": "metagraph", "walsh_energy": "metagraph", "rmse": "metagraph", "observed_split": "metagraph",
    "parse_orders": "metagraph", "complete_codes": "scores", "family_counts": "scores", "total_score": "scores",
    "log_likelihood": "scores", "bic": "scores", "aic": "scores", "k2": "scores", "bdeu": "scores",
    "qnml": "scores", "local_score": "scores", "log_multinomial_normalizer": "scores", "LocalScorer": "scores", "score_from_counts": "scores",
    "score_dag": "scores", "scorer_for": "scores", "parameter_count": "scores", "weighted_bincount": "scores",
    "config_index": "scores", "counts_from_columns": "scores", "guard_width": "structure",
    "LearnResult": "structure", "LearnTask": "structure", "learn_structure": "structure",
    "learn_feature_structure": "structure", "scorer_context": "structure", "scorer_mutual_information": "trees",
    "mutual_information_matrix": "trees",
    "scorer_conditional_mutual_information": "trees", "chow_liu": "trees", "tan": "trees", "kdb": "trees",
    "Recipe": "recipe", "DEFAULT_RECIPE": "recipe", "Learned": "recipe", "learn_recipe": "recipe",
    "recipe_of": "recipe", "fit_recipe": "recipe", "parents_from_arcs": "trees", "learn_tree": "trees", "learn_tan": "trees", "learn_kdb": "trees",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
