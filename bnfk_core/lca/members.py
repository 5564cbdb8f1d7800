"""The latent-class members of two families, declared light (the registries read them on first use): the
latent-class Fisher kernel (:data:`bnfk_core.registry.KERNELS`) and latent-class clustering
(:data:`bnfk_core.registry.CLUSTERERS`).  Their behaviour is in :mod:`bnfk_core.kernels.latent_fisher` (the
kernel, a floor above) and :mod:`.cluster`, imported when first run."""

from __future__ import annotations

from dataclasses import replace

from ..registry import ClustererSpec, Interval, KernelSpec, Option, lazy

__all__ = ["LCA_FISHER", "LCA_CLUSTERER", "KERNELS", "CLUSTERERS", "CLASSES", "STARTS"]

LCA_FISHER = "lca-fisher"
LCA_CLUSTERER = "lca"

#: the latent classes of a model fitted here (None: the K with the least BIC)
CLASSES = Option(
    "classes", Interval(int, 1, 1000), None, "latent classes (default: the K with the least BIC)"
)
#: seeded EM starts (the best log-likelihood kept)
STARTS = Option("starts", Interval(int, 1, 10_000), 10, "seeded EM starts, the best log-likelihood kept")
_SEED = Option("seed", Interval(int, 0, 2**32 - 1), 0, "the seed of the EM starts", none=False)

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
        options=(
            Option("model", None, None, "a latent class network (a hidden root) used as it is", user=False),
            CLASSES,
            _SEED,
            STARTS,
        ),
        latent_model=True,
    ),
)

CLUSTERERS = (
    ClustererSpec(
        name=LCA_CLUSTERER,
        label="Latent class model",
        uses_kernel=False,
        run=lazy("bnfk_core.lca.cluster", "cluster_lca"),
        description="EM latent class model with K = clusters classes (seeded starts); rows go to their modal "
        "class",
        options=(_SEED, replace(STARTS, default=20, none=False)),
    ),
)
