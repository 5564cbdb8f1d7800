"""Hybrid (conditional linear Gaussian) networks over mixed tables: numbers stay numbers.

A mixed table (:class:`MixedData`, read by :func:`load_mixed`) holds discrete columns as state codes and
numeric columns as floats.  A :class:`HybridNet` gives every discrete node a CPT on discrete parents and every
numeric node one linear regression on its numeric parents per configuration of its discrete parents;
:func:`fit_hybrid` fits one given its DAG by maximum likelihood, :class:`HybridScorer` and
:func:`hybrid_hill_climb` learn its structure by BIC or AIC, and :func:`discrete_posterior`,
:func:`marginal_log_density` and :func:`conditional_normal` answer queries; :func:`impute_hybrid` fills
the missing cells of a mixed table (numbers by their conditional mean).

Every public name below loads its module on first use (PEP 562), so importing the package is light.
"""

from ..registry import face

_HOMES = {
    "MixedData": "table",
    "DISCRETE": "table",
    "NUMERIC": "table",
    "NUMBERS_MODES": "table",
    "MIN_NUMERIC_LEVELS": "table",
    "load_mixed": "table",
    "mixed_from_categorical": "table",
    "mixed_from_arrays": "table",
    "HybridNet": "model",
    "LinearGaussian": "model",
    "HYBRID_FORMAT": "model",
    "family_check": "model",
    "read_hybrid": "model",
    "write_hybrid": "model",
    "is_hybrid_json": "model",
    "family_stats": "stats",
    "all_numeric_stats": "stats",
    "sub_stats": "stats",
    "regress": "stats",
    "variance_floor": "stats",
    "VARIANCE_FLOOR": "stats",
    "fit_hybrid": "fitting",
    "em_hybrid": "em",
    "expected_completions": "em",
    "ExpectedScorer": "structural_em",
    "StructuralEM": "structural_em",
    "structural_em_hybrid": "structural_em",
    "MAX_COMPLETIONS": "em",
    "row_groups": "em",
    "HybridLearned": "learn",
    "learn_hybrid_network": "learn",
    "network_score": "learn",
    "HYBRID_MISSING": "learn",
    "HYBRID_SEARCHES": "learn",
    "HYBRID_LEARN_SCORES": "learn",
    "HybridScorer": "scoring",
    "HYBRID_SCORES": "scoring",
    "HybridSearch": "search",
    "hybrid_hill_climb": "search",
    "hybrid_exact": "search",
    "hybrid_kgv_climb": "search",
    "kgv_scorer": "search",
    "discrete_part": "moments",
    "numeric_joint": "moments",
    "numeric_moments": "moments",
    "numeric_parent_moments": "moments",
    "MAX_MOMENT_STATES": "moments",
    "MAX_COUPLED_CONFIGS": "posterior",
    "discrete_posterior": "posterior",
    "marginal_log_density": "posterior",
    "conditional_normal": "posterior",
    "evidence_table": "posterior",
    "NumericMarginal": "marginal",
    "numeric_marginal": "marginal",
    "impute_hybrid": "impute",
    "hybrid_imputation": "impute",
    "HybridImputation": "impute",
    "learn_and_impute": "impute",
    "six_node_clg": "examples",
    "completion_table": "em",
    "EM_TOL": "em",
    "EM_MAX_ITER": "em",
    "EM_COMPLETIONS": "em",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
