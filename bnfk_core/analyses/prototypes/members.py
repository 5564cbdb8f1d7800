"""The prototype family's built-in members, declared light: the selection criteria
(:data:`bnfk_core.registry.CRITERIA` reads them on first use; behaviour in :mod:`.criteria`, imported when
first run) and the structures of the paper's summarization experiment.  Importing this module loads no
numerical library.
"""

from __future__ import annotations

from ...registry import CriterionSpec, lazy

__all__ = ["CRITERIA", "SUMMARIZATION_STRUCTURES"]

#: the structures of the paper's data-summarization figures (Figs 1-3)
SUMMARIZATION_STRUCTURES = ("hc", "hc-greedy", "tan", "kdb")

CRITERIA = (
    CriterionSpec(
        "mmd",
        "Greedy MMD (Fisher kernel)",
        lazy("bnfk_core.analyses.prototypes.criteria", "mmd_criterion"),
        description="Fisher-kernel distance |mean phi(X_S) - mean phi(X)|^2 (paper eq. 10), greedy swaps "
        "(Algorithm 1)",
    ),
    CriterionSpec(
        "chi2",
        "Greedy χ² heuristic",
        lazy("bnfk_core.analyses.prototypes.criteria", "chi2_criterion"),
        description="the paper's heuristic -sum_i log p_i of per-variable chi-square tests, greedy swaps",
        streams=False,
    ),
    CriterionSpec("random", "Random subset", description="a uniformly random subset (the baseline)"),
)
