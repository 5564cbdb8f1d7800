"""Exact inference: junction trees, variable elimination, parent marginals and posteriors, evidence queries
and the most probable explanation, fixed evidence.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""

from ..registry import face

_HOMES = {
    "cpt_factor": "elimination",
    "contract": "elimination",
    "missingness_patterns": "elimination",
    "joint_posteriors": "elimination",
    "posterior_by_pattern": "elimination",
    "log_evidence_by_pattern": "elimination",
    "gather_posteriors": "elimination",
    "JOINT_POSTERIOR_CELLS": "elimination",
    "Query": "evidence",
    "Explanation": "evidence",
    "query": "evidence",
    "mpe": "evidence",
    "evidence_codes": "evidence",
    "FixedEvidence": "fixed_evidence",
    "MAX_GROUP_CONFIGS": "fixed_evidence",
    "JunctionTree": "junction",
    "TreeShape": "junction",
    "tree_shape": "junction",
    "junction_tree": "junction",
    "batch_rows": "junction",
    "BATCH_BYTES": "junction",
    "MAX_TREE_CELLS": "junction",
    "marginal": "queries",
    "parent_marginals": "queries",
    "ParentMarginals": "queries",
    "posterior": "queries",
    "family_posteriors": "queries",
    "cached_family_posteriors": "queries",
    "log_evidence": "queries",
    "log_likelihood": "queries",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
