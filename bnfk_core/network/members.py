"""The network family's built-in members, declared light: the CPT estimators of
:func:`bnfk_core.network.model.fit`
(:data:`bnfk_core.registry.ESTIMATORS` reads them on first use; :mod:`.model` estimates by their names), and
the structure segments the faces offer.  Importing this module loads no numerical library."""

from __future__ import annotations

from ..registry import PSEUDO_COUNT, EstimatorSpec

__all__ = ["ESTIMATORS", "SEGMENT_KINDS", "PSEUDO_COUNT"]

#: the structure segments of thesis chapter 6 (:func:`bnfk_core.network.dag.segment_arcs`)
SEGMENT_KINDS = ("single-arc", "v", "a", "chain", "full")

ESTIMATORS = (
    EstimatorSpec(
        "smoothed",
        "Smoothed +1 (the paper)",
        uses_pseudo_count=True,
        description="(n_ijk + a) / (n_ij + r_i a)",
        options=(PSEUDO_COUNT,),
    ),
    EstimatorSpec("ml", "Maximum likelihood", description="n_ijk / n_ij", likelihood_equivalent=True),
    EstimatorSpec(
        "bdeu",
        "BDeu (default)",
        uses_pseudo_count=True,
        description="(n_ijk + a/(q_i r_i)) / (n_ij + a/q_i)",
        options=(PSEUDO_COUNT,),
        likelihood_equivalent=True,
    ),
    EstimatorSpec("cnml", "cNML (factorised NML)", description="thesis eq. 2.5"),
)
