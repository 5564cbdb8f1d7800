"""The Bayesian-network segment analyses of thesis chapter 6:

* :mod:`.tables` -- the case tables of Theorem 1 (formulas, pairs of rows, :func:`case_table`,
  :func:`segment_model`, :class:`SegmentError`);
* :mod:`.information` -- mutual-information ranking and collapsed-variable statistics;
* :mod:`.arc_search` -- the supervised arc search and the per-variable Gram terms it updates;
* :mod:`.equivalence` -- structure edits that keep (or change) the Fisher kernel;
* :mod:`.network_checks` -- clustering ARI and imputation accuracy of one network.

Every public name below loads its module on first use (PEP 562), so importing the package is light.
"""
from ...registry import face

_HOMES = {
    "SegmentError": "tables", "SEGMENT_KINDS": "tables", "GREEK": "tables", "MAX_FULL_VARIABLES": "tables",
    "CaseRow": "tables", "CaseTable": "tables", "case_patterns": "tables", "case_labels": "tables",
    "feature_columns": "tables", "segment_model": "tables", "check_segment": "tables", "greek_values": "tables",
    "case_table": "tables", "find_pair": "tables", "pair_pattern": "tables", "mi_ranking": "information",
    "collapsed_stats": "information", "default_segment_variables": "information", "MAX_CANDIDATES": "members",
    "variable_term": "arc_search", "affected_terms": "arc_search", "add_arc_gram": "arc_search", "candidate_arcs":
    "arc_search", "adjusted_rand": "arc_search", "ArcStep": "arc_search", "ArcSearchResult": "arc_search",
    "arc_search_tables": "arc_search", "reverse_covered_arc": "equivalence", "DagEdit":
    "equivalence", "equivalence_edits": "equivalence", "edited_model": "equivalence", "EditEffect": "equivalence",
    "edit_effects": "equivalence", "edit_effects_table": "equivalence", "clustering_aris": "network_checks",
    "imputation_check": "network_checks",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
