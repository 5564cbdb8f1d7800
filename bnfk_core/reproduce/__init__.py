"""Reproduction of the published results: the thesis's tables and the paper's figures and run times.

* :mod:`bnfk_core.reproduce.published` -- the published numbers, transcribed from the papers;
* :mod:`bnfk_core.reproduce.experiments` -- ``run`` / ``run_experiment``: the experiments that recompute them,
  one module each (``thesis_imputation``, ``thesis_clustering``, ..., ``kernel_zoo``), registered by name in
  :data:`bnfk_core.reproduce.common.EXPERIMENT_RUNNERS`;
* :mod:`bnfk_core.reproduce.common` -- settings, data sets and helpers every experiment shares;
* :mod:`bnfk_core.reproduce.output` -- the comparison tables (ours beside published), figures and the
  manifest.
"""

from .experiments import (
    EXPERIMENTS,
    NETWORK_CHOICES,
    ReproduceError,
    Settings,
    comparison_frame,
    markdown_table,
    read_manifest,
    render_figures,
    run,
    run_experiment,
    stored_results,
    versions,
)

__all__ = [
    "EXPERIMENTS",
    "NETWORK_CHOICES",
    "ReproduceError",
    "Settings",
    "comparison_frame",
    "markdown_table",
    "read_manifest",
    "render_figures",
    "run",
    "run_experiment",
    "stored_results",
    "versions",
]
