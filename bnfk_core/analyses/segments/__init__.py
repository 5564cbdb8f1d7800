"""Re-exports only (no code of its own): the Bayesian-network segment analyses of thesis chapter 6 live in

* :mod:`.segment_tables` -- the case tables of Theorem 1 (formulas, pairs of rows, :func:`case_table`,
  :func:`segment_model`, :class:`SegmentError`);
* :mod:`.segment_information` -- mutual-information ranking and collapsed-variable statistics;
* :mod:`.arc_search` -- the supervised arc search and the per-variable Gram terms it updates;
* :mod:`.markov_equivalence` -- structure edits that keep (or change) the Fisher kernel;
* :mod:`.network_checks` -- clustering ARI and imputation accuracy of one network;
* :mod:`.compare` -- two structures side by side (kernels, ΔK, clustering, imputation, prototypes).

Import from those modules.  This facade stays only for importers that other work is rewriting at the
same time (``bnfk_core/cli/segments.py``, ``bnfk_core/reproduce/experiments.py``, ``bnfk_core/views/report.py``,
``bnfk_ui/sections/segments.py``); delete it once they import from the modules above.
"""
from __future__ import annotations

from .arc_search import (MAX_CANDIDATES, ArcSearchResult, ArcStep, add_arc_gram, adjusted_rand, affected_terms,
                         arc_search, arc_search_tables, candidate_arcs, variable_term)
from .equivalence import (DagEdit, EditEffect, edit_effects, edit_effects_table, edited_model,
                                 equivalence_edits, reverse_covered_arc)
from .network_checks import clustering_aris, imputation_check
from .compare import NetworkOutcome, StructureComparison, compare_structures, network_outcome
from .information import collapsed_stats, default_segment_variables, mi_ranking
from .tables import (GREEK, MAX_FULL_VARIABLES, SEGMENT_KINDS, CaseRow, CaseTable, SegmentError,
                             case_labels, case_patterns, case_table, check_segment, feature_columns, find_pair,
                             greek_values, pair_pattern, segment_model)

__all__ = [
    "SegmentError", "SEGMENT_KINDS", "GREEK", "MAX_FULL_VARIABLES", "CaseRow", "CaseTable", "case_patterns",
    "case_labels", "feature_columns", "segment_model", "check_segment", "greek_values", "case_table", "find_pair",
    "pair_pattern", "mi_ranking", "collapsed_stats", "default_segment_variables",
    "MAX_CANDIDATES", "variable_term", "affected_terms", "add_arc_gram", "candidate_arcs", "adjusted_rand",
    "ArcStep", "ArcSearchResult", "arc_search", "arc_search_tables",
    "reverse_covered_arc", "DagEdit", "equivalence_edits", "edited_model", "EditEffect", "edit_effects",
    "edit_effects_table", "clustering_aris", "imputation_check",
    "NetworkOutcome", "StructureComparison", "compare_structures", "network_outcome",
]
