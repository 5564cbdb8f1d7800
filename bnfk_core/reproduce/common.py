"""What every reproduction experiment shares: the run settings, the experiment registry (names -> run
functions), the structure choices, the data sets (thesis and paper, from ``sample_data``) and small helpers
(progress, worker processes).  See :mod:`bnfk_core.reproduce.experiments` for what is reproduced and how."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from ..data.samples import sample_dir
from ..data.table import load_csv
from ..errors import BnfkError
from . import published as pub

__all__ = [
    "EXPERIMENTS",
    "EXPERIMENT_RUNNERS",
    "NETWORK_CHOICES",
    "PAPER_KS",
    "QUICK_THESIS",
    "QUICK_PAPER",
    "TABLE_FILES",
    "Progress",
    "ReproduceError",
    "Settings",
    "structure_spec",
    "resolve_structure",
    "root",
    "catalog",
    "load_thesis_data",
    "PAPER_LOAD",
    "load_paper_data",
    "thesis_names",
    "paper_names",
    "say",
    "replicate",
    "map_jobs",
]

#: experiment name -> (module of :mod:`bnfk_core.reproduce`, its run function ``run(settings, writer,
#: progress) -> dict``), in the order ``reproduce all`` runs them; a module is imported when its experiment
#: first runs (so that the experiments import these helpers, never the reverse).  A new experiment is one
#: entry here and one module.
EXPERIMENT_RUNNERS = {
    "thesis-imputation": ("thesis_imputation", "run_thesis_imputation"),
    "thesis-clustering": ("thesis_clustering", "run_thesis_clustering"),
    "thesis-segments": ("thesis_segments", "run_thesis_segments"),
    "thesis-classification": ("thesis_classification", "run_thesis_classification"),
    "paper-summarization": ("paper_summarization", "run_paper_summarization"),
    "speed": ("speed", "run_speed"),
    "kernel-zoo": ("kernel_zoo", "run_zoo"),
    "kgv": ("kgv_alarm", "run_kgv"),
    "kgv-toy": ("kgv_toy", "run_kgv_toy"),
    "kgv-hybrid": ("kgv_hybrid", "run_kgv_hybrid"),
    "landscape": ("landscape", "run_landscape"),
    "lca": ("latent_classes", "run_lca"),
    "imputation-peers": ("imputation_peers", "run_peers"),
}
EXPERIMENTS = tuple(EXPERIMENT_RUNNERS)
NETWORK_CHOICES = ("default", "thesis", "paper")

#: the paper names only k = 200 and k = 1000 of its four subset sizes; we use four values between them
PAPER_KS = (200, 500, 750, 1000)
QUICK_THESIS = ("hayes_roth", "breast_cancer")
QUICK_PAPER = ("nursery",)

#: file stem of every published table's comparison
TABLE_FILES = {tid: "thesis_" + tid.replace(".", "_") for tid in pub.TABLES}

Progress = Callable[[float, str], None]


class ReproduceError(BnfkError):
    """A reproduction request cannot be carried out as asked."""


# ====================================================================== settings
@dataclass
class Settings:
    """What to run; ``None`` fields take the experiment's full (or ``quick``) defaults."""

    quick: bool = False
    structure: str = "default"
    seed: int = 0
    repeats: int | None = None  # imputation runs per setting / clustering runs / classification splits
    datasets: tuple | None = None  # sample_data stems; default: the source's data sets
    exact_max_vars: int | None = None  # thesis structure: exact search up to this many variables
    jobs: int = 1  # worker processes (per data set)
    random_draws: int | None = None  # paper: random subsets per k
    ks: tuple | None = None  # paper: subset sizes

    def to_dict(self) -> dict:
        """The settings as JSON-ready values (tuples as lists).

        Returns
        -------
        dict
        """
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


def structure_spec(which: str, n_vars: int, exact_max_vars: int = 20) -> dict:
    """``{"method", "score", "params", "label"}`` of a structure choice for a data set with ``n_vars``
    columns.

    The published protocols climb greedily (``hc-greedy``, the best of 5 seeded climbs), the search their
    published numbers come from; ``hc`` is the iterated tabu search, which finds higher scores.

    Parameters
    ----------
    which : str
        ``thesis``, ``paper`` or a structure method.
    n_vars : int
    exact_max_vars : int
        Most columns the thesis protocol searches exactly.

    Returns
    -------
    dict
    """
    if which == "thesis":
        method = "exact" if n_vars <= exact_max_vars else "hc-greedy"
        return {
            "method": method,
            "score": "qnml",
            "params": "cnml",
            "label": f"{'exact' if method == 'exact' else 'hc'}/qNML + cNML",
        }
    if which == "paper":
        return {
            "method": "hc-greedy",
            "score": "bic",
            "params": "smoothed",
            "label": "hc/BIC + smoothed (pseudo-count 1)",
        }
    raise ReproduceError(f"Unknown structure '{which}'; choose one of {', '.join(NETWORK_CHOICES)}.")


def resolve_structure(settings: Settings, source: str) -> str:
    """The structure choice of an experiment whose source is ``source`` (``default``: the source's own).

    Parameters
    ----------
    settings : Settings
    source : str

    Returns
    -------
    str

    Raises
    ------
    ReproduceError
        For an unknown structure choice.
    """
    s = settings.structure
    if s not in NETWORK_CHOICES:
        raise ReproduceError(f"Unknown structure '{s}'; choose one of {', '.join(NETWORK_CHOICES)}.")
    return source if s == "default" else s


# ====================================================================== data
def root() -> Path:
    """The project folder (the checkout: ``git`` is asked for its commit there).

    Returns
    -------
    pathlib.Path
    """
    return Path(__file__).resolve().parents[2]


def catalog() -> dict:
    """``sample_data/catalog.json``: file, class column and missing-value markers of every data set.

    Returns
    -------
    dict
    """
    return json.loads((sample_dir() / "catalog.json").read_text())


def load_thesis_data(stem: str):
    """A thesis data set: catalog class column, original missing values as a category (thesis 3.4).

    Parameters
    ----------
    stem : str

    Returns
    -------
    CategoricalData

    Raises
    ------
    ReproduceError
        For an unknown data set.
    """
    cat = catalog()
    if stem not in cat:
        raise ReproduceError(
            f"Unknown data set '{stem}'; choose from {', '.join(pub.THESIS_DATASETS.values())}."
        )
    return load_csv(
        sample_dir() / cat[stem]["file"],
        class_column=cat[stem]["class_column"],
        missing_policy="category",
        na_values=cat[stem].get("na_values"),
    )


#: letter's 16 integer levels are cut into 4 quantile bins (the paper: "at most 4 bins"), hence max_levels 15
PAPER_LOAD = {
    "nursery": dict(max_levels=50),
    "letter": dict(max_levels=15),
    "waveform_5000": dict(max_levels=50),
}


def load_paper_data(stem: str):
    """A paper data set: numeric columns with many levels cut into 4 quantile bins.

    Parameters
    ----------
    stem : str

    Returns
    -------
    CategoricalData

    Raises
    ------
    ReproduceError
        For an unknown data set.
    """
    if stem not in PAPER_LOAD:
        raise ReproduceError(f"Unknown paper data set '{stem}'; choose from {', '.join(PAPER_LOAD)}.")
    cat = catalog()
    return load_csv(
        sample_dir() / cat[stem]["file"],
        class_column=cat[stem]["class_column"],
        discretize_bins=4,
        na_values=cat[stem].get("na_values"),
        **PAPER_LOAD[stem],
    )


def thesis_names(settings: Settings, quick_default=QUICK_THESIS) -> list[tuple[str, str]]:
    """(thesis row name, sample_data stem) of the data sets to run.

    Parameters
    ----------
    settings : Settings
    quick_default : tuple of str
        The stems of a quick run without ``settings.datasets``.

    Returns
    -------
    list of (str, str)

    Raises
    ------
    ReproduceError
        For a stem that is not a thesis data set.
    """
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    stems = settings.datasets or (quick_default if settings.quick else tuple(pub.THESIS_DATASETS.values()))
    out = []
    for s in stems:
        if s not in inv:
            raise ReproduceError(f"'{s}' is not a thesis data set; choose from {', '.join(inv)}.")
        out.append((inv[s], s))
    return out


def paper_names(settings: Settings) -> list[tuple[str, str]]:
    """(paper name, sample_data stem) of the data sets to run.

    Parameters
    ----------
    settings : Settings

    Returns
    -------
    list of (str, str)

    Raises
    ------
    ReproduceError
        For a stem that is not a paper data set.
    """
    inv = {v: k for k, v in pub.PAPER_DATASETS.items()}
    stems = settings.datasets or (QUICK_PAPER if settings.quick else ("waveform_5000", "nursery", "letter"))
    out = []
    for s in stems:
        if s not in inv:
            raise ReproduceError(f"'{s}' is not a paper data set; choose from {', '.join(inv)}.")
        out.append((inv[s], s))
    return out


def say(progress: Progress | None, frac: float, msg: str) -> None:
    """Tell ``progress`` (if any) the fraction done and what is happening.

    Parameters
    ----------
    progress : callable(fraction, message) or None
    frac : float
    msg : str
    """
    if progress is not None:
        progress(frac, msg)


def replicate(jobs: list, run_one, progress: Progress | None, describe) -> list[dict]:
    """Run every replication job in turn, timing each and telling ``progress`` after each.

    Parameters
    ----------
    jobs : list of tuple
        The arguments of one replication each (for example ``(data set, seed)``).
    run_one : callable(*job) -> list of dict
        One replication's result rows.
    progress : callable(fraction, message) or None
    describe : callable(job, rows) -> str
        The progress message after a job.

    Returns
    -------
    list of dict
        Every job's rows in order, each with its job's wall-clock ``seconds``.
    """
    rows = []
    for done, job in enumerate(jobs, start=1):
        t0 = time.perf_counter()
        part = run_one(*job)
        for r in part:
            r["seconds"] = time.perf_counter() - t0
        rows += part
        say(progress, done / len(jobs), describe(job, part))
    return rows


def map_jobs(fn, items: list, jobs: int) -> list:
    """``[fn(*it) for it in items]``, in ``jobs`` worker processes when jobs > 1.

    Parameters
    ----------
    fn : callable
        Picklable when ``jobs`` > 1.
    items : list of tuple
    jobs : int

    Returns
    -------
    list
    """
    if jobs <= 1 or len(items) <= 1:
        return [fn(*it) for it in items]
    with ProcessPoolExecutor(max_workers=int(jobs)) as ex:
        futs = [ex.submit(fn, *it) for it in items]
        return [f.result() for f in futs]
