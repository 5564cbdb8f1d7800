"""Bayesian-network structure segments (thesis chapter 6): the face over

* :mod:`.tables` -- the case tables of Theorem 1 (formulas, pairs of rows, :func:`case_table`,
  :func:`segment_model`);
* :mod:`.information` -- mutual-information ranking and collapsed-variable statistics;
* :mod:`.search` -- the supervised arc search and the per-variable Gram terms it updates;
* :mod:`.equivalence` -- structure edits that keep (or change) the Fisher kernel;
* :mod:`.network_checks` -- clustering ARI and imputation accuracy of one network;
* :mod:`.gallery` -- all five segments side by side;
* :mod:`.compare` -- two structures side by side (kernels, ΔK, clustering, imputation, prototypes).

Every public name loads its module on first use (PEP 562).
"""

from ...registry import face

_HOMES = {
    "MAX_CANDIDATES": "members",
    "ArcSearchResult": "search",
    "ArcStep": "search",
    "add_arc_gram": "search",
    "adjusted_rand": "search",
    "affected_terms": "search",
    "arc_search": "search",
    "arc_search_tables": "search",
    "candidate_arcs": "search",
    "variable_term": "search",
    "DagEdit": "equivalence",
    "EditEffect": "equivalence",
    "edit_effects": "equivalence",
    "edit_effects_table": "equivalence",
    "edited_model": "equivalence",
    "equivalence_edits": "equivalence",
    "reverse_covered_arc": "equivalence",
    "clustering_aris": "network_checks",
    "imputation_check": "network_checks",
    "collapsed_stats": "information",
    "default_segment_variables": "information",
    "mi_ranking": "information",
    "segment_variables_after": "information",
    "GREEK": "tables",
    "MAX_FULL_VARIABLES": "tables",
    "SEGMENT_KINDS": "tables",
    "CaseRow": "tables",
    "CaseTable": "tables",
    "SegmentError": "tables",
    "case_labels": "tables",
    "case_patterns": "tables",
    "case_table": "tables",
    "check_segment": "tables",
    "feature_columns": "tables",
    "find_pair": "tables",
    "greek_values": "tables",
    "pair_pattern": "tables",
    "segment_model": "tables",
    "NetworkOutcome": "compare",
    "StructureComparison": "compare",
    "compare_structures": "compare",
    "network_outcome": "compare",
    "ComparisonRows": "compare",
    "comparison_rows": "compare",
    "combine": "compare",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
