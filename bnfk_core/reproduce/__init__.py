"""Reproduction of the published results: the thesis's tables and the paper's figures and run times.

* :mod:`bnfk_core.reproduce.published` -- the published numbers, transcribed from the papers;
* :mod:`bnfk_core.reproduce.experiments` -- the experiments that recompute them (``run``), the
  comparison tables (ours beside published) and the manifest of a run.
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

__all__ = ["EXPERIMENTS", "NETWORK_CHOICES", "ReproduceError", "Settings", "comparison_frame", "markdown_table",
           "read_manifest", "render_figures", "run", "run_experiment", "stored_results", "versions"]
