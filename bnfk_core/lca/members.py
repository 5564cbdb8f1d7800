"""The latent-class members of two families, declared light (the registries read them on first use): the
latent-class Fisher kernel (:data:`bnfk_core.registry.KERNELS`) and latent-class clustering
(:data:`bnfk_core.registry.CLUSTERERS`).  Their behaviour is in :mod:`bnfk_core.kernels.latent_fisher` (the
kernel, a floor above) and :mod:`.cluster`, imported when first run."""

from __future__ import annotations

from ..registry import ClustererSpec, KernelSpec, lazy

__all__ = ["LCA_FISHER", "KERNELS", "CLUSTERERS"]

LCA_FISHER = "lca-fisher"

KERNELS = (
    KernelSpec(
        name=LCA_FISHER,
        label="Latent-class Fisher",
        abbr="LCF",
        fit=lazy("bnfk_core.kernels.latent_fisher", "fit_lca_fisher"),
        shift="none",
        psd=True,
        uses_network=True,
        family="fisher",
        description="Fisher kernel of a latent class model (hidden root C -> every x_i; the class always "
        "missing)",
    ),
)

CLUSTERERS = (
    ClustererSpec(
        name="lca",
        label="Latent class model",
        uses_kernel=False,
        run=lazy("bnfk_core.lca.cluster", "cluster_lca"),
        description="EM latent class model with K = clusters classes (seeded starts); rows go to their modal "
        "class",
    ),
)
