"""Reproduce the thesis's and the paper's published numbers, ours side by side with theirs.

Experiments (:data:`EXPERIMENTS`, one module each, registered in
:data:`bnfk_core.reproduce.common.EXPERIMENT_RUNNERS`), each reusing the analysis functions of the core:

``thesis-imputation``      Tables 4.1-4.4, B.1-B.2   :func:`bnfk_core.analyses.impute.benchmark.benchmark`
``thesis-clustering``      Tables 5.1, C.1-C.2        :func:`bnfk_core.analyses.cluster.clustering.compare`
``thesis-segments``        Tables 6.1-6.4             :func:`bnfk_core.analyses.segments.arc_search`,
``collapsed_stats`` ``thesis-classification``  Tables D.1-D.2
:func:`bnfk_core.analyses.cluster.clustering.classify_many`
``paper-summarization``    Figs. 1-3 (as tables)
:func:`bnfk_core.analyses.prototypes.selection.prepare_summarization` / ``run_summarization``
``speed``                  the paper's run times      the same, timed
``kernel-zoo``           :mod:`bnfk_core.reproduce.kernel_zoo`: Boriah et al. measures vs Fisher kernels
``kgv``                    (Bach & Jordan 2002 Fig. 1) :mod:`bnfk_core.reproduce.kgv_alarm`: BIC / BDe / KGV
on ALARM
``kgv-toy``                (Bach & Jordan 2002 Fig. 1 left) :mod:`bnfk_core.reproduce.kgv_toy`: KL against the
size of the toy discrete and linear Gaussian networks
``kgv-hybrid``             (Bach & Jordan 2002 Table 1) :mod:`bnfk_core.reproduce.kgv_hybrid`: held-out
log-likelihood on hybrid data, KGV against BDe on 5 / 10 K-means bins
``landscape``              Yackley et al. Figs. 1, 4  :mod:`bnfk_core.reproduce.landscape`: the metagraph
kernel
``lca``                    (poLCA)         :mod:`bnfk_core.reproduce.latent_classes`: carcinoma maxima, ARI
``imputation-peers``           :mod:`bnfk_core.reproduce.imputation_peers`: bnfk vs kNN, Mode (, LCA)

Every experiment writes, into the output folder, one CSV and one markdown file per published
table (columns ``<col> (ours)``, ``<col> (published)``, ``<col> (diff)`` = ours - published),
plotly figures (``fig_*.html`` and the same figure as ``fig_*.json``), and records its settings,
seeds, structures, versions and wall time in ``manifest.json`` (merged, so experiments may run
in separate processes into one folder).  ``index.md`` collects all markdown tables.

Structures (``structure``):

``default``  each experiment as its source: the thesis's tables with ``thesis``, the paper's with ``paper``;
``thesis``   exact search for the qNML-optimal DAG (hill climbing with qNML above ``exact_max_vars``
             variables, where exact search is too slow), parameters by cNML;
``paper``    hill climbing with BIC (our implementation; the paper used R's bnlearn), parameters
             smoothed with pseudo-count one.

The paper's TAN and KDB figures always use TAN / KDB (K = 3) with pseudo-count one; with
``structure="thesis"`` Fig. 1's network is the exact/qNML one learned on the training half.
Nothing is tuned to the published numbers: the settings are the sources' (or, with ``quick``, fewer).
"""

from __future__ import annotations

import importlib
import json
import shlex
import sys
import time
from pathlib import Path

from .common import (
    EXPERIMENT_RUNNERS,
    EXPERIMENTS,
    NETWORK_CHOICES,
    PAPER_KS,
    QUICK_THESIS,
    TABLE_FILES,
    Progress,
    ReproduceError,
    Settings,
    load_paper_data,
    load_thesis_data,
    say,
    structure_spec,
)
from .output import (
    PLOTLY_JS,
    Writer,
    comparison_frame,
    json_default,
    locked,
    machine,
    markdown_table,
    now,
    read_manifest,
    render_figures,
    stored_results,
    update_manifest,
    versions,
    write_figure_html,
)

__all__ = [
    "EXPERIMENTS",
    "NETWORK_CHOICES",
    "Settings",
    "ReproduceError",
    "run",
    "run_experiment",
    "structure_spec",
    "comparison_frame",
    "markdown_table",
    "versions",
    "load_thesis_data",
    "load_paper_data",
    "read_manifest",
    "stored_results",
    "TABLE_FILES",
    "PAPER_KS",
    "PLOTLY_JS",
    "write_figure_html",
    "render_figures",
    "QUICK_THESIS",
    "runner",
]


def runner(name: str):
    """The run function of experiment ``name`` (its module imported on first use).

    Parameters
    ----------
    name : str

    Returns
    -------
    callable(settings, w, progress) -> dict

    Raises
    ------
    ReproduceError
        For an unknown experiment.
    """
    if name not in EXPERIMENT_RUNNERS:
        raise ReproduceError(f"Unknown experiment '{name}'; choose all or one of {', '.join(EXPERIMENTS)}.")
    module, function = EXPERIMENT_RUNNERS[name]
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)


# ====================================================================== entry points
def invocation(argv: list[str] | None = None) -> str:
    """The command line that ran this experiment, without the machine's paths.

    ``python -m bnfk_core ARGS`` (or ``bnfk ARGS``) when the command line ran it, so the
    manifest can be committed and the command rerun from any checkout; ``"(called from
    Python)"`` when a notebook, a test or the app called :func:`run` directly.

    Parameters
    ----------
    argv : list of str, optional
        Default ``sys.argv``.

    Returns
    -------
    str
    """
    argv = list(sys.argv if argv is None else argv)
    head = Path(argv[0]).name if argv else ""
    if head in ("__main__.py", "bnfk", "-m") or (len(argv) > 0 and argv[0].endswith("bnfk_core")):
        return " ".join(["python -m bnfk_core", *(shlex.quote(a) for a in argv[1:])])
    return "(called from Python)"


def run_experiment(
    name: str, out, settings: Settings | None = None, progress: Progress | None = None
) -> dict:
    """Run one experiment into folder ``out``; returns its manifest record.

    Parameters
    ----------
    name : str
    out : str or path-like
    settings : Settings, optional
    progress : callable(fraction, message), optional

    Returns
    -------
    dict

    Raises
    ------
    ReproduceError
        For an unknown experiment or structure, or ``repeats`` < 1.
    """
    settings = settings or Settings()
    run_one = runner(name)
    if settings.structure not in NETWORK_CHOICES:
        raise ReproduceError(
            f"Unknown structure '{settings.structure}'; choose one of {', '.join(NETWORK_CHOICES)}."
        )
    if settings.repeats is not None and int(settings.repeats) < 1:
        raise ReproduceError(f"--repeats must be at least 1, got {settings.repeats}.")
    out = Path(out)
    w = Writer(out, name)
    started = now()
    t0 = time.perf_counter()
    load0 = machine()["load_average"]
    info = run_one(settings, w, progress)
    record = {
        "quick": settings.quick,
        "settings": settings.to_dict(),
        "seed": settings.seed,
        **info,
        "tables": w.tables,
        "files": sorted(set(w.files)),
        "started": started,
        "finished": now(),
        "wall_seconds": time.perf_counter() - t0,
        "load_average_start": load0,
        "load_average_end": machine()["load_average"],
        "command": invocation(),
    }
    update_manifest(out, name, record)
    say(progress, 1.0, f"{name} done in {record['wall_seconds']:.1f} s")
    return record


def run(experiment: str, out, settings: Settings | None = None, progress: Progress | None = None) -> dict:
    """Run ``experiment`` (or ``"all"``, in the order of :data:`EXPERIMENTS`) into ``out``; returns the
    manifest.

    Parameters
    ----------
    experiment : str
    out : str or path-like
    settings : Settings, optional
    progress : callable(fraction, message), optional

    Returns
    -------
    dict
    """
    names = EXPERIMENTS if experiment == "all" else (experiment,)
    t0 = time.perf_counter()
    for i, n in enumerate(names):
        sub = None if progress is None else (lambda f, m, i=i: progress((i + f) / len(names), m))
        run_experiment(n, out, settings, sub)
    man = read_manifest(out)
    if experiment == "all":
        with locked(Path(out)):
            man = read_manifest(out)
            man["all_wall_seconds"] = time.perf_counter() - t0
            (Path(out) / "manifest.json").write_text(json.dumps(man, indent=1, default=json_default))
    return man
