"""Reproduce the thesis's and the paper's published numbers, ours side by side with theirs.

Experiments (:data:`EXPERIMENTS`), each reusing the analysis functions of the core:

``thesis-imputation``      Tables 4.1-4.4, B.1-B.2   :func:`bnfk_core.analyses.impute_benchmark.benchmark`
``thesis-clustering``      Tables 5.1, C.1-C.2        :func:`bnfk_core.analyses.cluster.compare`
``thesis-segments``        Tables 6.1-6.4             :func:`bnfk_core.analyses.segments.arc_search`, ``collapsed_stats``
``thesis-classification``  Tables D.1-D.2             :func:`bnfk_core.analyses.cluster.classify_many`
``paper-summarization``    Figs. 1-3 (as tables)      :func:`bnfk_core.analyses.prototypes.prepare_summarization` / ``run_summarization``
``speed``                  the paper's run times      the same, timed
``kernel-zoo``             (new, issue #16)           :mod:`bnfk_core.reproduce.kernel_zoo`: Boriah et al. measures vs Fisher kernels
``kgv``                    (Bach & Jordan 2002 Fig. 1) :mod:`bnfk_core.reproduce.kgv_alarm`: BIC / BDe / KGV on ALARM
``landscape``              Yackley et al. Figs. 1, 4  :mod:`bnfk_core.reproduce.landscape`: the metagraph kernel (issue #25)
``lca``                    (poLCA, issue #29)         :mod:`bnfk_core.reproduce.latent_classes`: carcinoma maxima, ARI
``imputation-peers``       (new, issue #26)           :mod:`bnfk_core.reproduce.imputation_peers`: bnfk vs kNN, Mode (, LCA)

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

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from sklearn.metrics import adjusted_mutual_info_score

from .. import __version__
from ..analyses.cluster import (
    KernelSetup,
    classify_many,
    clustering_metrics,
    correlation_clustering,
    default_n_clusters,
    kernel_setup,
    run_clustering,
)
from ..analyses.impute_benchmark import benchmark
from ..analyses.prototypes import prepare_summarization, run_summarization, split_half
from ..analyses.segments import arc_search, collapsed_stats
from ..dag import DAG
from ..data import load_csv
from ..errors import BnfkError
from ..inference import ParentMarginals
from ..kernels import FISHER, THESIS_KERNELS, gram
from ..learn import learn_structure
from ..model import fit
from ..registry import kernel_abbr
from ..stats import collapse, cramers_v_corrected
from . import published as pub

__all__ = ["EXPERIMENTS", "NETWORK_CHOICES", "Settings", "ReproduceError", "run", "run_experiment", "structure_spec",
           "comparison_frame", "markdown_table", "versions", "load_thesis_data", "load_paper_data",
           "read_manifest", "stored_results", "TABLE_FILES", "PAPER_KS", "PLOTLY_JS", "write_figure_html",
           "render_figures"]

EXPERIMENTS = ("thesis-imputation", "thesis-clustering", "thesis-segments", "thesis-classification",
               "paper-summarization", "speed", "kernel-zoo", "kgv", "landscape", "lca", "imputation-peers")
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
    repeats: int | None = None          # imputation runs per setting / clustering runs / classification splits
    datasets: tuple | None = None       # sample_data stems; default: the source's data sets
    exact_max_vars: int | None = None   # thesis structure: exact search up to this many variables
    jobs: int = 1                       # worker processes (per data set)
    random_draws: int | None = None     # paper: random subsets per k
    ks: tuple | None = None             # paper: subset sizes

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


def structure_spec(which: str, n_vars: int, exact_max_vars: int = 20) -> dict:
    """``{"method", "score", "params", "label"}`` of a structure choice for a data set with ``n_vars`` columns."""
    if which == "thesis":
        method = "exact" if n_vars <= exact_max_vars else "hc"
        return {"method": method, "score": "qnml", "params": "cnml", "label": f"{method}/qNML + cNML"}
    if which == "paper":
        return {"method": "hc", "score": "bic", "params": "smoothed", "label": "hc/BIC + smoothed (pseudo-count 1)"}
    raise ReproduceError(f"Unknown structure '{which}'; choose one of {', '.join(NETWORK_CHOICES)}.")


def _resolve(settings: Settings, source: str) -> str:
    s = settings.structure
    if s not in NETWORK_CHOICES:
        raise ReproduceError(f"Unknown structure '{s}'; choose one of {', '.join(NETWORK_CHOICES)}.")
    return source if s == "default" else s


# ====================================================================== data
def _root() -> Path:
    return Path(__file__).resolve().parents[2]


def _catalog() -> dict:
    return json.loads((_root() / "sample_data" / "catalog.json").read_text())


def load_thesis_data(stem: str):
    """A thesis data set: catalog class column, original missing values as a category (thesis 3.4)."""
    cat = _catalog()
    if stem not in cat:
        raise ReproduceError(f"Unknown data set '{stem}'; choose from {', '.join(pub.THESIS_DATASETS.values())}.")
    return load_csv(_root() / "sample_data" / cat[stem]["file"], class_column=cat[stem]["class_column"],
                    missing_policy="category", na_values=cat[stem].get("na_values"))


#: letter's 16 integer levels are cut into 4 quantile bins (the paper: "at most 4 bins"), hence max_levels 15
_PAPER_LOAD = {"nursery": dict(max_levels=50), "letter": dict(max_levels=15), "waveform_5000": dict(max_levels=50)}


def load_paper_data(stem: str):
    """A paper data set: numeric columns with many levels cut into 4 quantile bins."""
    if stem not in _PAPER_LOAD:
        raise ReproduceError(f"Unknown paper data set '{stem}'; choose from {', '.join(_PAPER_LOAD)}.")
    cat = _catalog()
    return load_csv(_root() / "sample_data" / cat[stem]["file"], class_column=cat[stem]["class_column"],
                    discretize_bins=4, na_values=cat[stem].get("na_values"), **_PAPER_LOAD[stem])


def _thesis_names(settings: Settings, quick_default=QUICK_THESIS) -> list[tuple[str, str]]:
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    stems = settings.datasets or (quick_default if settings.quick else tuple(pub.THESIS_DATASETS.values()))
    out = []
    for s in stems:
        if s not in inv:
            raise ReproduceError(f"'{s}' is not a thesis data set; choose from {', '.join(inv)}.")
        out.append((inv[s], s))
    return out


def _paper_names(settings: Settings) -> list[tuple[str, str]]:
    inv = {v: k for k, v in pub.PAPER_DATASETS.items()}
    stems = settings.datasets or (QUICK_PAPER if settings.quick else ("waveform_5000", "nursery", "letter"))
    out = []
    for s in stems:
        if s not in inv:
            raise ReproduceError(f"'{s}' is not a paper data set; choose from {', '.join(inv)}.")
        out.append((inv[s], s))
    return out


# ====================================================================== output helpers
def comparison_frame(table_id: str, ours: dict, extra: dict | None = None) -> pd.DataFrame:
    """Ours next to the published table: one row per data set we ran, ``<c> (ours|published|diff)`` columns.

    ``ours``: {thesis row name: {column: value}}; ``extra``: {row name: {column: value}} appended as is.
    """
    t = pub.table(table_id)
    rows = []
    for name in pub.THESIS_DATASETS:
        if name not in ours:
            continue
        rec = {"dataset": name, "data_file": pub.THESIS_DATASETS[name]}
        for j, c in enumerate(t.columns):
            o = ours[name].get(c)
            p = t.rows[name][j]
            o = float("nan") if o is None else float(o)
            p = float("nan") if p is None else float(p)
            rec[f"{c} (ours)"] = o
            rec[f"{c} (published)"] = p
            rec[f"{c} (diff)"] = o - p if math.isfinite(o) and math.isfinite(p) else float("nan")
        rec.update((extra or {}).get(name, {}))
        rows.append(rec)
    return pd.DataFrame(rows)


def _fmt(v, digits: int = 3) -> str:
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return "–"
        return f"{v:.{digits}f}"
    return str(v).replace("|", "\\|")


def markdown_table(df: pd.DataFrame, digits: int = 3) -> str:
    """A GitHub markdown table (no extra dependency)."""
    cols = [str(c).replace("|", "\\|") for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_fmt(v, digits) for v in r.tolist()) + " |")
    return "\n".join(lines) + "\n"


def _compact(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The readable view: per published column one cell 'ours (published)'."""
    out = pd.DataFrame({"dataset": df["dataset"]})
    for c in columns:
        o, p = df[f"{c} (ours)"], df[f"{c} (published)"]
        out[c] = [f"{_fmt(a)} ({_fmt(b)})" for a, b in zip(o, p)]
    return out


class _Writer:
    """Writes one experiment's files and remembers them for the manifest."""

    def __init__(self, out: Path, experiment: str):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.experiment = experiment
        self.files: list[str] = []
        self.tables: dict = {}

    def _path(self, name: str) -> Path:
        self.files.append(name)
        return self.out / name

    def table(self, stem: str, df: pd.DataFrame, *, title: str, caption: str, measured: str, setup: str,
              compact_columns: Sequence[str] | None = None, notes: Sequence[str] = ()) -> None:
        df.to_csv(self._path(stem + ".csv"), index=False, float_format="%.6g")
        md = [f"## {title}", "", f"*Published caption:* {caption}", "", f"*Measured:* {measured}", "",
              f"*Our setup:* {setup}", ""]
        if compact_columns:
            md += ["Each cell: **ours (published)**.", "", markdown_table(_compact(df, compact_columns)), ""]
        md += ["<details><summary>All columns (ours, published, difference, extras)</summary>", "",
               markdown_table(df), "</details>", ""]
        for n in notes:
            md.append(f"- {n}")
        self._path(stem + ".md").write_text("\n".join(md).rstrip() + "\n")
        self.tables[stem] = {"title": title, "csv": stem + ".csv", "md": stem + ".md", "setup": setup}

    def frame(self, stem: str, df: pd.DataFrame) -> None:
        df.to_csv(self._path(stem + ".csv"), index=False, float_format="%.6g")

    def figure(self, stem: str, fig) -> None:
        write_figure_html(fig, self._path(stem + ".html"))
        self.files.append((Path(stem).parent / PLOTLY_JS).as_posix())    # beside the page (stems may hold a folder)
        self._path(stem + ".json").write_text(fig.to_json())


#: the plotly.js bundle every figure page of a results folder loads from beside it (no CDN: readable offline)
PLOTLY_JS = "plotly.min.js"


def write_figure_html(fig, path) -> None:
    """``fig`` as an HTML page that loads ``plotly.min.js`` from its own folder (written there, or refreshed when
    it is not this plotly's bundle), so the folder's figures open without a network."""
    from plotly.offline import get_plotlyjs
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    js, code = path.parent / PLOTLY_JS, get_plotlyjs()
    if not js.exists() or js.stat().st_size != len(code.encode("utf-8")) or js.read_text(encoding="utf-8") != code:
        js.write_text(code, encoding="utf-8")
    fig.write_html(path, include_plotlyjs="directory", full_html=True)


def render_figures(out) -> list[str]:
    """Write the HTML page of every figure of the results folder ``out`` again from its stored JSON (the
    ``fig_*.json`` files its manifest lists), with the local plotly.js of :func:`write_figure_html`.  No
    experiment runs and no number changes; returns the pages written."""
    import plotly.io as pio
    out = Path(out)
    man = read_manifest(out)
    if not man.get("experiments"):
        raise ReproduceError(f"{out} has no manifest.json listing experiments; run 'reproduce all -o {out}' first.")
    written = []
    for rec in man["experiments"].values():
        for f in rec.get("files", []):
            if Path(f).name.startswith("fig_") and f.endswith(".json") and (out / f).exists():
                page = out / (f[: -len(".json")] + ".html")
                write_figure_html(pio.from_json((out / f).read_text()), page)
                written.append(page.relative_to(out).as_posix())
    return sorted(set(written))


def versions() -> dict:
    """Versions of python, numpy, pandas, scipy, scikit-learn, pgmpy, numba, plotly and bnfk (+ git commit)."""
    out = {"python": platform.python_version()}
    for name in ("numpy", "pandas", "scipy", "scikit-learn", "pgmpy", "numba", "networkx", "plotly"):
        try:
            out[name] = package_version(name)
        except PackageNotFoundError:  # pragma: no cover - not installed
            out[name] = None
    out["bnfk"] = __version__
    try:
        out["bnfk_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=_root(), capture_output=True,
                                            text=True, timeout=10).stdout.strip() or None
    except Exception:  # pragma: no cover - no git
        out["bnfk_commit"] = None
    return out


def _machine() -> dict:
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        load = None
    return {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "load_average": load}


def read_manifest(out) -> dict:
    p = Path(out) / "manifest.json"
    if not p.exists():
        return {}
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return {}


def stored_results(out) -> list[dict]:
    """What a results folder holds, for display: one entry per experiment in :data:`EXPERIMENTS` order with
    ``name, record`` (its manifest record), ``tables`` ([{stem, title, setup, frame, markdown}]) and
    ``figures`` ([(stem, path of the plotly JSON)]).  Empty when there is no manifest."""
    out = Path(out)
    man = read_manifest(out)
    entries = []
    for name in EXPERIMENTS:
        rec = man.get("experiments", {}).get(name)
        if not rec:
            continue
        tables = []
        for stem, meta in rec.get("tables", {}).items():
            csv, md = out / f"{stem}.csv", out / f"{stem}.md"
            if not csv.exists():
                continue
            tables.append({"stem": stem, "title": meta.get("title", stem), "setup": meta.get("setup", ""),
                           "frame": pd.read_csv(csv), "markdown": md.read_text() if md.exists() else ""})
        figs = [(Path(f).stem, out / f) for f in rec.get("files", []) if f.startswith("fig_") and f.endswith(".json")
                and (out / f).exists()]
        entries.append({"name": name, "record": rec, "tables": tables, "figures": figs})
    return entries


@contextlib.contextmanager
def _locked(out: Path):
    tag = hashlib.sha1(str(Path(out).resolve()).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"bnfk-reproduce-{tag}.lock"      # not among the results
    with open(lock, "a") as fh:
        try:
            import fcntl
            fcntl.flock(fh, fcntl.LOCK_EX)
        except (ImportError, OSError):  # pragma: no cover - non-POSIX
            pass
        yield


def _update_manifest(out: Path, experiment: str, record: dict) -> None:
    with _locked(out):
        man = read_manifest(out)
        man.setdefault("experiments", {})[experiment] = record
        man["versions"] = versions()
        man["machine"] = _machine()
        man["updated"] = _now()
        tmp = Path(out) / "manifest.json.tmp"
        tmp.write_text(json.dumps(man, indent=1, default=_json_default))
        os.replace(tmp, Path(out) / "manifest.json")
        _write_index(Path(out), man)


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)


def _write_index(out: Path, man: dict) -> None:
    parts = ["# Reproduction results", "",
             "Generated by `python -m bnfk_core reproduce`; see `manifest.json` for settings, seeds and versions.", ""]
    for name in EXPERIMENTS:
        rec = man.get("experiments", {}).get(name)
        if not rec:
            continue
        parts += [f"# {name}", "", f"wall time {rec.get('wall_seconds', float('nan')):.1f} s, quick={rec.get('quick')}, "
                  f"structure: {rec.get('structure')}", ""]
        for stem in rec.get("tables", {}):
            p = out / f"{stem}.md"
            if p.exists():
                parts += [p.read_text(), ""]
    (out / "index.md").write_text("\n".join(parts))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _say(progress: Progress | None, frac: float, msg: str) -> None:
    if progress is not None:
        progress(frac, msg)


def _map(fn, items: list, jobs: int) -> list:
    """``[fn(*it) for it in items]``, in ``jobs`` worker processes when jobs > 1."""
    if jobs <= 1 or len(items) <= 1:
        return [fn(*it) for it in items]
    with ProcessPoolExecutor(max_workers=int(jobs)) as ex:
        futs = [ex.submit(fn, *it) for it in items]
        return [f.result() for f in futs]


# ====================================================================== thesis: imputation
_IMP_METHODS = ("bn", "bn-mode", "bn-wknn", "mode", "wknn")
_IMP_COL = {"BN": "bn", "BN-Mode": "bn-mode", "BN-wKNN": "bn-wknn", "Mode": "mode", "wKNN": "wknn"}


def _imputation_one(stem: str, grid: tuple, repeats: int, seed: int, structure: str, exact_max: int) -> dict:
    t0 = time.perf_counter()
    data = load_thesis_data(stem)
    feats = data.without_class()
    spec = structure_spec(structure, feats.n_vars, exact_max)
    res = benchmark(feats, _IMP_METHODS, test_ratios=grid, missing_ratios=grid, repeats=repeats, seed=seed,
                    structure=spec["method"], score=spec["score"], params=spec["params"])
    sys.stderr.write(f"imputation {stem}: {time.perf_counter() - t0:.1f} s\n")
    return {"stem": stem, "summary": res.summary(), "runs": res.runs.assign(dataset=stem), "spec": spec,
            "matrices": {m: res.matrix(m).tolist() for m in _IMP_METHODS}, "seconds": time.perf_counter() - t0}


def _thesis_imputation(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    structure = _resolve(settings, "thesis")
    grid = (0.2, 0.4) if settings.quick else (0.1, 0.2, 0.3, 0.4, 0.5)
    repeats = settings.repeats or (1 if settings.quick else 10)
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else 12
    names = _thesis_names(settings)
    _say(progress, 0.0, f"imputation on {len(names)} data sets")
    results = _map(_imputation_one, [(s, grid, repeats, settings.seed, structure, exact_max) for _, s in names],
                   settings.jobs)
    by = {r["stem"]: r for r in results}
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    structs = {inv[s]: {"structure": by[s]["spec"]["label"]} for _, s in names}
    setup = (f"{len(grid)}x{len(grid)} settings (test ratio x missing ratio {', '.join(map(str, grid))}), "
             f"{repeats} run(s) each, seed {settings.seed}; BN structures: thesis = exact qNML up to {exact_max} "
             f"variables, hc/qNML above; cNML parameters" if structure == "thesis" else
             f"{len(grid)}x{len(grid)} settings, {repeats} run(s) each, seed {settings.seed}; BN: hc/BIC, smoothed")
    for tid, key in (("4.1", "accuracy"), ("4.2", "accuracy"), ("4.3", "accuracy"), ("4.4", "cross_entropy"),
                     ("B.1", "accuracy_std"), ("B.2", "cross_entropy_std")):
        t = pub.table(tid)
        ours = {inv[s]: {c: by[s]["summary"][_IMP_COL[c]][key] for c in t.columns} for _, s in names}
        df = comparison_frame(tid, ours, structs)
        w.table(TABLE_FILES[tid], df, title=f"Thesis Table {tid}", caption=t.caption, measured=t.measured,
                setup=setup, compact_columns=t.columns)
    runs = pd.concat([r["runs"] for r in results], ignore_index=True)
    w.frame("thesis_imputation_runs", runs)
    _imputation_figures(w, by, names, grid)
    return {"structure": structure, "grid": list(grid), "repeats": repeats, "exact_max_vars": exact_max,
            "methods": list(_IMP_METHODS), "structures": {s: by[s]["spec"]["label"] for _, s in names},
            "seconds_per_dataset": {s: by[s]["seconds"] for _, s in names}}


def _imputation_figures(w: _Writer, by: dict, names, grid) -> None:
    stem = "spect" if "spect" in by else names[0][1]
    labels = [f"{g:g}" for g in grid]
    fig = make_subplots(rows=1, cols=5, subplot_titles=[m for m in _IMP_COL])
    for j, (name, m) in enumerate(_IMP_COL.items()):
        M = np.asarray(by[stem]["matrices"][m], float)
        fig.add_trace(go.Heatmap(z=M, x=labels, y=labels, zmin=0, zmax=1, coloraxis="coloraxis",
                                 text=np.round(M, 3), texttemplate="%{text}",
                                 hovertemplate="test %{y}, missing %{x}: %{z:.3f}<extra>" + name + "</extra>"),
                      row=1, col=j + 1)
    fig.update_layout(title=f"Imputation accuracy per setting, {stem} (thesis Figs. 4.1-4.2 analogue): "
                            "rows test ratio, columns ratio of missingness", coloraxis={"colorscale": "Viridis"},
                      height=380)
    w.figure("fig_thesis_imputation_heatmaps", fig)
    t = pub.table("4.3")
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    fig = go.Figure()
    for c in t.columns:
        xs = [inv[s] for _, s in names]
        fig.add_trace(go.Scatter(x=[t.value(x, c) for x in xs], y=[by[s]["summary"][_IMP_COL[c]]["accuracy"]
                                                                    for _, s in names],
                                 mode="markers", name=c, text=xs,
                                 hovertemplate="%{text}: published %{x:.3f}, ours %{y:.3f}"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dot", "color": "grey"},
                             name="ours = published"))
    fig.update_layout(title="Table 4.3: imputation accuracy, ours vs published", xaxis_title="published (thesis)",
                      yaxis_title="ours", height=450)
    w.figure("fig_thesis_4_3", fig)


# ====================================================================== thesis: clustering


def _uniform_parent_marginals(model):
    """Parent marginals P(pi_i = j) uniform over the parent configurations (an ablation: what an unpropagated
    junction tree gives for chains and A-structures), for ``gram(..., marginals=...)``."""
    probs = tuple(np.full(model.n_parent_configs(i), 1.0 / model.n_parent_configs(i)) for i in range(model.n_vars))
    return ParentMarginals(probs, tuple("uniform" for _ in probs))


def _clustering_one(stem: str, runs: int, restarts: int, seed: int, structure: str, exact_max: int) -> dict:
    """:func:`bnfk_core.analyses.cluster.compare`'s loop (same kernels, seeds and defaults), keeping the labels so the
    adjusted mutual information can also be taken with the thesis's normalisation max{H(U), H(V)} (eq. C.4;
    scikit-learn's default since 0.22 is the arithmetic mean, which gives larger values)."""
    t0 = time.perf_counter()
    data = load_thesis_data(stem)
    spec = structure_spec(structure, data.without_class().n_vars, exact_max)
    y = data.labels()
    ok = y >= 0
    k = default_n_clusters(data)
    rows = []
    for kern in THESIS_KERNELS:
        setup = kernel_setup(data, kern, structure=spec["method"], score=spec["score"], params=spec["params"],
                             seed=seed)
        for alg in ("correlation", "spectral"):
            vals = []
            for r in range(int(runs)):
                o = run_clustering(data, kern, alg, n_clusters=k, setup=setup, restarts=restarts, seed=seed + r)
                lab = np.asarray(o["labels"])
                ami_max = adjusted_mutual_info_score(y[ok], lab[ok], average_method="max")
                ami_ari = adjusted_mutual_info_score(y[ok], lab[ok], average_method="arithmetic")
                vals.append((o["ari"], ami_max, o["v_measure"], ami_ari, o["cluster_seconds"]))
            v = np.array(vals, float)
            rows.append({"combination": {"correlation": "CC", "spectral": "SC"}[alg] + "-" + kernel_abbr(kern),
                         "algorithm": alg, "kernel": kern, "ari": v[:, 0].mean(), "ari_std": v[:, 0].std(),
                         "ami": v[:, 1].mean(), "ami_std": v[:, 1].std(), "v_measure": v[:, 2].mean(),
                         "v_measure_std": v[:, 2].std(), "ami_arithmetic": v[:, 3].mean(),
                         "ami_arithmetic_std": v[:, 3].std(), "seconds": v[:, 4].mean(),
                         "structure": setup.structure, "n_arcs": setup.n_arcs})
        if kern == FISHER:
            fisher_model = setup.model
    # ablation (not the thesis's method): the same network with uniform parent-configuration marginals, what an
    # unpropagated junction tree gives for chains and A-structures (see docs/RESULTS.md)
    um = fisher_model
    feats = data.without_class().select(list(um.variables))
    usetup = KernelSetup(gram(um, feats, marginals=_uniform_parent_marginals(um)), FISHER, um, feats.variables)
    for alg in ("correlation", "spectral"):
        a = [run_clustering(data, FISHER, alg, n_clusters=k, setup=usetup, restarts=restarts, seed=seed + r)["ari"]
             for r in range(int(runs))]
        rows.append({"combination": {"correlation": "CC", "spectral": "SC"}[alg] + "-F uniform marginals",
                     "algorithm": alg, "kernel": "fisher (uniform parent marginals)", "ari": float(np.mean(a)),
                     "ari_std": float(np.std(a)), "n_arcs": fisher_model.dag.n_arcs})
    df = pd.DataFrame(rows)
    sys.stderr.write(f"clustering {stem}: {time.perf_counter() - t0:.1f} s\n")
    return {"stem": stem, "frame": df.assign(dataset=stem), "spec": spec, "seconds": time.perf_counter() - t0}


def _thesis_clustering(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    structure = _resolve(settings, "thesis")
    runs = settings.repeats or (2 if settings.quick else 10)
    restarts = 5 if settings.quick else 25
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else 20
    names = _thesis_names(settings)
    _say(progress, 0.0, f"clustering on {len(names)} data sets")
    results = _map(_clustering_one, [(s, runs, restarts, settings.seed, structure, exact_max) for _, s in names],
                   settings.jobs)
    by = {r["stem"]: r for r in results}
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    setup = (f"{runs} runs (clustering seeds {settings.seed}..{settings.seed + runs - 1}), correlation clustering "
             f"with {restarts} restarts (adaptive shift for H/SH, none for F), spectral clustering on the min-shifted "
             f"kernel; Fisher network: {'exact' if structure == 'thesis' else 'hc'} ("
             + ("qNML, exact up to %d variables, cNML parameters)" % exact_max if structure == "thesis"
                else "BIC, smoothed parameters)"))
    for tid, key in (("5.1", "ari"), ("C.1", "ami"), ("C.2", "v_measure")):
        t = pub.table(tid)
        ours, extra = {}, {}
        for _, s in names:
            f = by[s]["frame"].set_index("combination")
            ours[inv[s]] = {c: f.loc[c, key] for c in t.columns}
            extra[inv[s]] = {f"{c} std (ours)": f.loc[c, f"{key}_std"] for c in t.columns}
            if key == "ami":
                extra[inv[s]].update({f"{c} AMI arithmetic-mean normalisation (ours)": f.loc[c, "ami_arithmetic"]
                                      for c in t.columns})
            if key == "ari":
                for c in ("CC-F", "SC-F"):
                    extra[inv[s]][f"{c} uniform parent marginals, ablation (ours)"] = \
                        f.loc[f"{c} uniform marginals", "ari"]
            extra[inv[s]]["Fisher structure"] = by[s]["spec"]["label"]
            extra[inv[s]]["Fisher arcs"] = int(f.loc["CC-F", "n_arcs"])
        df = comparison_frame(tid, ours, extra)
        w.table(TABLE_FILES[tid], df, title=f"Thesis Table {tid}", caption=t.caption, measured=t.measured,
                setup=setup, compact_columns=t.columns,
                notes=["AMI (ours) uses the thesis's normalisation max{H(U), H(V)} (eq. C.4); scikit-learn's "
                       "default arithmetic-mean normalisation is in the extra columns."] if key == "ami" else ())
    allf = pd.concat([r["frame"] for r in results], ignore_index=True)
    w.frame("thesis_clustering_runs", allf)
    _bar_figure(w, "fig_thesis_5_1", "5.1", "Table 5.1: adjusted Rand index, ours (solid) vs published (hatched)")
    return {"structure": structure, "runs": runs, "restarts": restarts, "exact_max_vars": exact_max,
            "structures": {s: by[s]["spec"]["label"] for _, s in names},
            "seconds_per_dataset": {s: by[s]["seconds"] for _, s in names}}


def _bar_figure(w: _Writer, stem: str, tid: str, title: str) -> None:
    df = pd.read_csv(w.out / f"{TABLE_FILES[tid]}.csv")
    t = pub.table(tid)
    fig = go.Figure()
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    for j, c in enumerate(t.columns):
        fig.add_trace(go.Bar(x=df["dataset"], y=df[f"{c} (ours)"], name=f"{c} ours", marker_color=palette[j % 6],
                             offsetgroup=str(j), legendgroup=c))
        fig.add_trace(go.Bar(x=df["dataset"], y=df[f"{c} (published)"], name=f"{c} published",
                             marker={"color": palette[j % 6], "opacity": 0.45, "pattern": {"shape": "/"}},
                             offsetgroup=str(j) + "p", legendgroup=c))
    fig.update_layout(title=title, barmode="group", height=480, yaxis_title=t.measured.split(";")[0][:60])
    w.figure(stem, fig)


# ====================================================================== thesis: segments
def _segments_one(stem: str, restarts: int, seed: int, runs: int) -> dict:
    t0 = time.perf_counter()
    data = load_thesis_data(stem)
    res = arc_search(data, n_arcs=2, algorithm="correlation", restarts=restarts, seed=seed, params="ml")
    feats = data.without_class()
    y = data.labels()
    k = res.n_clusters
    arcs = [s.arc for s in res.steps]
    # the search ARI is the maximum over candidates of one seeded clustering; re-run the chosen networks over
    # `runs` seeds (as Section 5.2's 10 runs) for an estimate without that selection bias
    rerun = []
    dag = DAG(feats.variables)
    for u, v in arcs:
        dag = dag.add_arc(u, v)
        K = gram(fit(dag, feats, method="ml"), feats)
        vals = [clustering_metrics(y, correlation_clustering(K, k, restarts=restarts, seed=seed + r,
                                                             kernel=FISHER).labels)["ari"] for r in range(runs)]
        rerun.append(float(np.mean(vals)))
    stats = collapsed_stats(data, list(arcs[0])) if arcs else None
    if stats is not None:
        lab = data.codes[:, data.index(data.class_column)]
        xs = [data.codes[:, data.index(v)] for v in arcs[0]] + [collapse(data, list(arcs[0]))[0]]
        stats["cramers_v_corrected"] = [cramers_v_corrected(x, lab) for x in xs]
    sys.stderr.write(f"segments {stem}: {time.perf_counter() - t0:.1f} s\n")
    return {"stem": stem, "base_ari": res.base_ari, "aris": [s.ari for s in res.steps], "arcs": arcs,
            "rerun": rerun, "stats": None if stats is None else stats.to_dict("records"),
            "seconds": time.perf_counter() - t0, "evaluated": [s.n_evaluated for s in res.steps]}


def _thesis_segments(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    restarts = 5 if settings.quick else 25
    runs = settings.repeats or (2 if settings.quick else 10)
    names = _thesis_names(settings)
    _say(progress, 0.0, f"arc search on {len(names)} data sets")
    results = _map(_segments_one, [(s, restarts, settings.seed, runs) for _, s in names], settings.jobs)
    by = {r["stem"]: r for r in results}
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    # "best score previously": the best entry of our own Table 5.1 in the same output folder, if there
    prev = {}
    p51 = w.out / f"{TABLE_FILES['5.1']}.csv"
    if p51.exists():
        d51 = pd.read_csv(p51).set_index("dataset")
        cols = pub.table("5.1").columns
        for name in d51.index:
            vals = {c: d51.loc[name, f"{c} (ours)"] for c in cols}
            best = max(vals.values())
            prev[name] = (best, "/".join(c for c, v in vals.items() if abs(v - best) < 5e-4))
    setup = (f"supervised greedy arc search from the empty network (Fisher kernel with ML parameters = "
             f"scaled-Hamming), correlation clustering ({restarts} restarts, seed {settings.seed}), ARI against the "
             f"class; 'search' = the ARI that selected the arc (maximum over candidates), 'mean of {runs} runs' = the "
             f"chosen network re-clustered with seeds {settings.seed}..{settings.seed + runs - 1}")

    def arcname(a):
        return f"{a[0]} → {a[1]}"

    t = pub.table("6.1")
    ours, extra = {}, {}
    for _, s in names:
        r, n = by[s], inv[s]
        ours[n] = {"One arc": r["aris"][0] if r["aris"] else None,
                   "Best score previously": prev.get(n, (None, ""))[0]}
        extra[n] = {"Best score previously by (ours)": prev.get(n, (None, ""))[1],
                    "Best score previously by (published)": t.labels[n][1],
                    "One arc, mean of runs (ours)": r["rerun"][0] if r["rerun"] else float("nan"),
                    "empty network ARI (ours)": r["base_ari"],
                    "arc (ours)": arcname(r["arcs"][0]) if r["arcs"] else ""}
    df = comparison_frame("6.1", ours, extra)
    notes = [] if p51.exists() else ["Our 'best score previously' needs thesis-clustering's Table 5.1 in the same "
                                     "output folder (run `reproduce all`)."]
    w.table(TABLE_FILES["6.1"], df, title="Thesis Table 6.1", caption=t.caption, measured=t.measured, setup=setup,
            compact_columns=t.columns, notes=notes)
    for tid, key in (("6.2", "theils_u"), ("6.3", "cramers_v_corrected")):
        t = pub.table(tid)
        ours, extra = {}, {}
        for _, s in names:
            st = by[s]["stats"] or []
            vals = [row[key] for row in st]
            ours[inv[s]] = dict(zip(t.columns, vals + [None] * (3 - len(vals))))
            extra[inv[s]] = {"v_1, v_2 (ours)": ", ".join(by[s]["arcs"][0]) if by[s]["arcs"] else "",
                             "levels of v_1 ∩ v_2 (ours)": st[-1]["levels"] if st else None}
            if tid == "6.3":
                extra[inv[s]].update({f"{c} plain Cramér's V (ours)": row["cramers_v"] for c, row in zip(t.columns, st)})
        df = comparison_frame(tid, ours, extra)
        notes = ["Ours is the bias-corrected Cramér's V (Bergsma 2013; chi-square with scipy's default Yates "
                 "correction for 2 x 2 tables), which reproduces the thesis wherever our arc is the thesis's; the "
                 "plain V of bnfk_core.stats.cramers_v is in the extra columns."] if tid == "6.3" else []
        w.table(TABLE_FILES[tid], df, title=f"Thesis Table {tid}", caption=t.caption, measured=t.measured,
                setup=setup + "; v_1, v_2 = tail and head of our best single arc (the thesis does not name its arcs)",
                compact_columns=t.columns, notes=notes)
    t = pub.table("6.4")
    ours, extra = {}, {}
    for _, s in names:
        r = by[s]
        ours[inv[s]] = {"Two arcs": r["aris"][1] if len(r["aris"]) > 1 else None,
                        "One arc": r["aris"][0] if r["aris"] else None}
        extra[inv[s]] = {"Two arcs, mean of runs (ours)": r["rerun"][1] if len(r["rerun"]) > 1 else float("nan"),
                         "One arc, mean of runs (ours)": r["rerun"][0] if r["rerun"] else float("nan"),
                         "arcs (ours)": "; ".join(arcname(a) for a in r["arcs"])}
    df = comparison_frame("6.4", ours, extra)
    w.table(TABLE_FILES["6.4"], df, title="Thesis Table 6.4", caption=t.caption, measured=t.measured, setup=setup,
            compact_columns=t.columns)
    _bar_figure(w, "fig_thesis_6_4", "6.4", "Table 6.4: ARI with one and two arcs, ours (solid) vs published (hatched)")
    return {"structure": "empty network + supervised arcs (ML parameters)", "restarts": restarts, "runs": runs,
            "arcs": {s: [list(a) for a in by[s]["arcs"]] for _, s in names},
            "clusterings_evaluated": {s: by[s]["evaluated"] for _, s in names},
            "seconds_per_dataset": {s: by[s]["seconds"] for _, s in names}}


# ====================================================================== thesis: classification
def _classification_one(stem: str, repeats: int, seed: int, structure: str, exact_max: int) -> dict:
    t0 = time.perf_counter()
    data = load_thesis_data(stem)
    spec = structure_spec(structure, data.without_class().n_vars, exact_max)
    out = {}
    for kern in THESIS_KERNELS:
        res = classify_many(data, kern, ("knn", "svm"), repeats=repeats, seed=seed, test_size=0.2, k=7, C=1.0,
                            structure=spec["method"], score=spec["score"], params=spec["params"])
        for clf, r in res.items():
            out[f"{'kNN' if clf == 'knn' else 'SVM'}-{kernel_abbr(kern)}"] = r.to_dict()
        # variant: the 7 neighbours with the largest kernel value instead of the smallest kernel distance
        sim = classify_many(data, kern, ("knn",), repeats=repeats, seed=seed, test_size=0.2, k=7,
                            structure=spec["method"], score=spec["score"], params=spec["params"],
                            neighbours="similarity")["knn"]
        out[f"kNN-{kernel_abbr(kern)} by similarity"] = sim.to_dict()
    sys.stderr.write(f"classification {stem}: {time.perf_counter() - t0:.1f} s\n")
    return {"stem": stem, "results": out, "spec": spec, "seconds": time.perf_counter() - t0}


def _thesis_classification(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    structure = _resolve(settings, "thesis")
    repeats = settings.repeats or (2 if settings.quick else 10)
    # one structure per split: exact search over 17-18 variables takes about a minute each, so hc above 16
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else 16
    names = _thesis_names(settings)
    _say(progress, 0.0, f"classification on {len(names)} data sets")
    results = _map(_classification_one, [(s, repeats, settings.seed, structure, exact_max) for _, s in names],
                   settings.jobs)
    by = {r["stem"]: r for r in results}
    inv = {v: k for k, v in pub.THESIS_DATASETS.items()}
    setup = (f"{repeats} random 80/20 splits (seeds {settings.seed}..{settings.seed + repeats - 1}, not stratified), "
             "kNN k = 7 uniform on the kernel distance, SVC(C = 1) on the precomputed kernel with sigmoid-calibrated "
             "probabilities; kernel models estimated on the training split; Fisher network "
             + ("exact/qNML (hc above %d variables) + cNML" % exact_max if structure == "thesis"
                else "hc/BIC + smoothed"))
    for tid, key in (("D.1", "accuracy"), ("D.2", "log_loss")):
        t = pub.table(tid)
        ours = {inv[s]: {c: by[s]["results"][c][key] for c in t.columns} for _, s in names}
        extra = {inv[s]: {**{f"{c} std (ours)": by[s]["results"][c][f"{key}_std"] for c in t.columns},
                          **{f"{c}, neighbours by largest kernel value (ours)": by[s]["results"][f"{c} by similarity"][key]
                             for c in t.columns if c.startswith("kNN")},
                          "Fisher structure": by[s]["spec"]["label"]} for _, s in names}
        df = comparison_frame(tid, ours, extra)
        w.table(TABLE_FILES[tid], df, title=f"Thesis Table {tid}", caption=t.caption, measured=t.measured,
                setup=setup, compact_columns=t.columns,
                notes=["The thesis did not evaluate Lymphography and Primary Tumor (rare classes); we report ours "
                       "for them with the published cells empty.",
                       "kNN (ours) ranks neighbours by kernel distance; the extra columns rank them by the largest "
                       "kernel value (bnfk_core.analyses.cluster.classify_many(neighbours='similarity'))."])
    _bar_figure(w, "fig_thesis_D_1", "D.1", "Table D.1: classification accuracy, ours (solid) vs published (hatched)")
    return {"structure": structure, "repeats": repeats, "exact_max_vars": exact_max,
            "structures": {s: by[s]["spec"]["label"] for _, s in names},
            "seconds_per_dataset": {s: by[s]["seconds"] for _, s in names}}


# ====================================================================== paper: data summarization
def _fig1_dag(data, structure: str, seed: int, exact_max: int):
    """Fig. 1's network for ``structure="thesis"``: exact/qNML on the training half (as prepare_summarization splits)."""
    tr, _ = split_half(data.n_rows, 0.5, seed)
    train = data.subset(tr)
    spec = structure_spec("thesis", train.n_vars, exact_max)
    return learn_structure(train, spec["method"], score="qnml", class_column=None, seed=seed).dag, spec["label"]


def _summarization_one(stem: str, structures: tuple, ks: tuple, draws: int, seed: int, which: str,
                       exact_max: int) -> list:
    data = load_paper_data(stem)
    out = []
    for st in structures:
        t0 = time.perf_counter()
        dag, label = None, {"hc": "hc/BIC (ours) + smoothed", "tan": "TAN + smoothed", "kdb": "KDB K=3 + smoothed"}[st]
        if st == "hc" and which == "thesis":
            dag, label = _fig1_dag(data, "thesis", seed, exact_max)
            label += " (smoothed parameters)"
        exp = prepare_summarization(data, st, dag=dag, class_column=None if st == "hc" else data.class_column,
                                 seed=seed)
        for k in ks:
            r = run_summarization(exp, k, random_draws=draws, seed=seed)
            rec = {"dataset": stem, "structure": st, "network": label, "k": k, "arcs": r["arcs"],
                   "train_rows": r["train_rows"], "test_rows": r["test_rows"]}
            for metric in ("nll", "error", "log_loss"):
                if metric not in r["full"]:
                    continue
                rec[f"{metric} full"] = r["full"][metric]
                rec[f"{metric} mmd"] = r["mmd"][metric]
                rec[f"{metric} chi2"] = r["chi2"][metric]
                rec[f"{metric} random mean"] = r["random"][f"{metric}_mean"]
                rec[f"{metric} random std"] = r["random"][f"{metric}_std"]
            rec["mmd of mmd subset"] = r["mmd"]["mmd"]
            rec["mmd random mean"] = r["random"]["mmd_mean"]
            for key, v in r["seconds"].items():
                rec[f"seconds {key}"] = v
            out.append(rec)
        sys.stderr.write(f"summarization {stem}/{st}: {time.perf_counter() - t0:.1f} s\n")
    return out


def _claims(df: pd.DataFrame, fig_id: str) -> list[dict]:
    f = pub.PAPER_FIGURES[fig_id]
    rows = []
    for cid, text in f.claims:
        if cid == "mmd_beats_chi2_and_random":
            cells = [(r, m) for _, r in df.iterrows() for m in f.metrics]
            ok = [r[f"{m} mmd"] < r[f"{m} chi2"] and r[f"{m} mmd"] < r[f"{m} random mean"] for r, m in cells]
            ours = f"MMD best of the three in {sum(ok)}/{len(ok)} (data set, k, metric) cells"
            holds = sum(ok) >= 0.5 * len(ok)
        elif cid == "tan_smallest_k_close_to_full":
            sub = df[df["dataset"].isin(["nursery", "waveform_5000"])]
            sub = sub[sub["k"] == sub["k"].min()] if len(sub) else sub
            gaps = [(r["dataset"], r["error mmd"] - r["error full"]) for _, r in sub.iterrows()]
            ours = "; ".join(f"{d}: error(MMD, smallest k) - error(full) = {g:+.3f}" for d, g in gaps) or "not run"
            holds = bool(gaps) and all(g < 0.02 for _, g in gaps)
        elif cid == "kdb_nursery_small_k_near_random":
            sub = df[df["dataset"] == "nursery"]
            sub = sub[sub["k"] == sub["k"].min()] if len(sub) else sub
            gaps = [r["error mmd"] - r["error random mean"] for _, r in sub.iterrows()]
            ours = "; ".join(f"nursery smallest k: error(MMD) - error(random mean) = {g:+.3f}" for g in gaps) \
                or "not run"
            holds = bool(gaps) and all(g > -0.01 for g in gaps)
        else:  # pragma: no cover
            continue
        rows.append({"figure": fig_id, "claim": cid, "published": text, "ours": ours, "holds (ours)": bool(holds)})
    return rows


def _paper_summarization(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    which = _resolve(settings, "paper")
    ks = tuple(settings.ks) if settings.ks else ((200,) if settings.quick else PAPER_KS)
    draws = settings.random_draws or (50 if settings.quick else 1000)
    exact_max = settings.exact_max_vars if settings.exact_max_vars is not None else 20
    names = _paper_names(settings)
    _say(progress, 0.0, f"data summarization on {len(names)} data sets")
    results = _map(_summarization_one, [(s, ("hc", "tan", "kdb"), ks, draws, settings.seed, which, exact_max)
                                        for _, s in names], settings.jobs)
    df = pd.DataFrame([r for res in results for r in res])
    claims = []
    for fig_id, st in (("Fig. 1", "hc"), ("Fig. 2", "tan"), ("Fig. 3", "kdb")):
        f = pub.PAPER_FIGURES[fig_id]
        sub = df[df["structure"] == st].reset_index(drop=True)
        stem = "paper_" + fig_id.lower().replace(". ", "_")
        keep = ["dataset", "network", "k", "arcs"] + [c for c in sub.columns
                                                      if c.split(" ")[0] in f.metrics] + \
            ["mmd of mmd subset", "mmd random mean"] + [c for c in sub.columns if c.startswith("seconds")]
        cl = _claims(sub, fig_id)
        claims += cl
        setup = (f"50/50 split (seed {settings.seed}), network {sub['network'].iloc[0]}, k in {list(ks)}, "
                 f"{draws} random subsets per k (baseline and greedy starting points), greedy swaps (Algorithm 1)")
        w.table(stem, sub[keep], title=f"Paper {fig_id} (as a table)", caption=f.caption,
                measured=", ".join(f.metrics) + " per test sample on the held-out half",
                setup=setup, notes=[f"Published (text): \"{c['published']}\" -- ours: {c['ours']} "
                                    f"({'holds' if c['holds (ours)'] else 'does not hold'})." for c in cl]
                + ["The paper's figures are images without printed numbers; only the claims the text makes about "
                   "them can be compared."])
        _summary_figure(w, sub, fig_id, stem)
    cdf = pd.DataFrame(claims)
    w.table("paper_claims", cdf, title="Paper Figs. 1-3: the text's claims vs ours", caption="(claims in the text)",
            measured="qualitative orderings", setup=f"k in {list(ks)}, {draws} random subsets")
    return {"structure": which, "ks": list(ks), "random_draws": draws, "datasets": [s for _, s in names],
            "fig1_network": sorted(set(df.loc[df["structure"] == "hc", "network"]))}


def _summary_figure(w: _Writer, sub: pd.DataFrame, fig_id: str, stem: str) -> None:
    f = pub.PAPER_FIGURES[fig_id]
    dsets = list(dict.fromkeys(sub["dataset"]))
    fig = make_subplots(rows=len(f.metrics), cols=len(dsets), subplot_titles=[
        f"{d}: {m}" for m in f.metrics for d in dsets], shared_xaxes=True)
    colors = {"mmd": "#d62728", "chi2": "#1f77b4", "random mean": "#7f7f7f", "full": "#2ca02c"}
    for i, m in enumerate(f.metrics):
        for j, d in enumerate(dsets):
            s = sub[sub["dataset"] == d].sort_values("k")
            for key, name in (("mmd", "greedy MMD"), ("chi2", "greedy χ²"), ("random mean", "random mean ± sd"),
                              ("full", "full set")):
                kw = {}
                if key == "random mean":
                    kw["error_y"] = {"type": "data", "array": s[f"{m} random std"]}
                fig.add_trace(go.Scatter(x=s["k"], y=s[f"{m} {key}"], name=name, mode="lines+markers",
                                         line={"color": colors[key], "dash": "dash" if key == "full" else None},
                                         legendgroup=key, showlegend=(i == 0 and j == 0), **kw),
                              row=i + 1, col=j + 1)
    fig.update_layout(title=f"{fig_id} (ours): {f.caption[:90]}...", height=360 * len(f.metrics))
    fig.update_xaxes(title_text="subset size k")
    w.figure("fig_" + stem, fig)


# ====================================================================== speed
def _speed_one(stem: str, ks: tuple, draws: int, seed: int) -> list:
    data = load_paper_data(stem)
    exp = prepare_summarization(data, "hc", seed=seed)
    t0 = time.perf_counter()
    gram(exp.model, exp.train)
    gram_s = time.perf_counter() - t0
    rows = [{"dataset": stem, "step": "kernel", "k": None, "ours": exp.seconds["kernel"],
             "detail": "parent marginals + sparse Fisher features of the training half"},
            {"dataset": stem, "step": "gram", "k": None, "ours": gram_s,
             "detail": f"full {exp.train.n_rows} x {exp.train.n_rows} Fisher Gram matrix of the training half"},
            {"dataset": stem, "step": "learn", "k": None, "ours": exp.seconds["learn"],
             "detail": "hill climbing with BIC on the training half (the paper used bnlearn; not timed there)"}]
    for k in ks:
        r = run_summarization(exp, k, random_draws=draws, criteria=("mmd", "chi2"), seed=seed)
        for step in ("greedy_mmd", "greedy_chi2", "random_draws"):
            rows.append({"dataset": stem, "step": step, "k": k, "ours": r["seconds"][step],
                         "detail": {"greedy_mmd": "Algorithm 1 with MMD from the best random subset",
                                    "greedy_chi2": "Algorithm 1 with the chi-square heuristic",
                                    "random_draws": f"{draws} random subsets, MMD and chi-square of each"}[step]})
    sys.stderr.write(f"speed {stem} done\n")
    return rows


def _speed(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    ks = (200,) if settings.quick else (200, 1000)
    draws = settings.random_draws or (200 if settings.quick else 1000)
    names = _paper_names(settings)
    _say(progress, 0.0, f"timing on {len(names)} data sets")
    rows = [r for res in _map(_speed_one, [(s, ks, draws, settings.seed) for _, s in names], 1) for r in res]
    inv = {v: k for k, v in pub.PAPER_DATASETS.items()}
    ps = pub.PAPER_RUNTIMES["seconds"]
    for r in rows:
        paper = ps.get(r["step"], {}).get(inv[r["dataset"]])
        if isinstance(paper, tuple):
            paper = paper[0] if r["k"] == 200 else paper[1] if r["k"] == 1000 else None
        r["published"] = float(paper) if paper is not None else float("nan")
        r["published / ours"] = r["published"] / r["ours"] if paper is not None and r["ours"] > 0 else float("nan")
    df = pd.DataFrame(rows, columns=["dataset", "step", "k", "ours", "published", "published / ours", "detail"])
    df = df.rename(columns={"ours": "seconds (ours)", "published": "seconds (published)"})
    load = _machine()["load_average"]
    w.table("paper_runtimes", df, title="Paper run times vs ours", caption=pub.PAPER_RUNTIMES["text"],
            measured="wall-clock seconds of each step (ours single process, this machine)",
            setup=f"{os.cpu_count()} CPUs, load average {load} at the end; hc/BIC network, seed {settings.seed}, "
                  f"{draws} random subsets, k in {list(ks)}; the paper: {pub.PAPER_RUNTIMES['machine']}",
            notes=["The paper's 'kernel' step is parent probabilities plus kernel evaluations for the training "
                   "points; ours 'kernel' is parent marginals plus the explicit sparse features (all the greedy "
                   "search needs), 'gram' the full N x N matrix for comparison."])
    return {"ks": list(ks), "random_draws": draws, "datasets": [s for _, s in names], "structure": "hc/BIC (ours)"}


def _kernel_zoo(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    from .kernel_zoo import run_zoo  # imports this module: loaded on first use
    return run_zoo(settings, w, progress)


def _lca(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    from .latent_classes import run_lca  # imports this module: loaded on first use
    return run_lca(settings, w, progress)


def _kgv(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    from .kgv_alarm import run_kgv  # imports the core's learners: loaded on first use
    return run_kgv(settings, w, progress)


def _landscape(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    from .landscape import run_landscape  # loaded on first use
    return run_landscape(settings, w, progress)


def _imputation_peers(settings: Settings, w: _Writer, progress: Progress | None) -> dict:
    from .imputation_peers import run_peers  # imports this module: loaded on first use
    return run_peers(settings, w, progress)


_RUNNERS = {"lca": _lca, "kgv": _kgv, "kernel-zoo": _kernel_zoo, "landscape": _landscape, "imputation-peers": _imputation_peers, "thesis-imputation": _thesis_imputation,
            "thesis-clustering": _thesis_clustering,
            "thesis-segments": _thesis_segments, "thesis-classification": _thesis_classification,
            "paper-summarization": _paper_summarization, "speed": _speed}


# ====================================================================== entry points
def run_experiment(name: str, out, settings: Settings | None = None, progress: Progress | None = None) -> dict:
    """Run one experiment into folder ``out``; returns its manifest record."""
    settings = settings or Settings()
    if name not in _RUNNERS:
        raise ReproduceError(f"Unknown experiment '{name}'; choose all or one of {', '.join(EXPERIMENTS)}.")
    if settings.structure not in NETWORK_CHOICES:
        raise ReproduceError(f"Unknown structure '{settings.structure}'; choose one of {', '.join(NETWORK_CHOICES)}.")
    if settings.repeats is not None and int(settings.repeats) < 1:
        raise ReproduceError(f"--repeats must be at least 1, got {settings.repeats}.")
    out = Path(out)
    w = _Writer(out, name)
    started = _now()
    t0 = time.perf_counter()
    load0 = _machine()["load_average"]
    info = _RUNNERS[name](settings, w, progress)
    record = {"quick": settings.quick, "settings": settings.to_dict(), "seed": settings.seed, **info,
              "tables": w.tables, "files": sorted(set(w.files)), "started": started, "finished": _now(),
              "wall_seconds": time.perf_counter() - t0, "load_average_start": load0,
              "load_average_end": _machine()["load_average"], "command": " ".join(sys.argv)}
    _update_manifest(out, name, record)
    _say(progress, 1.0, f"{name} done in {record['wall_seconds']:.1f} s")
    return record


def run(experiment: str, out, settings: Settings | None = None, progress: Progress | None = None) -> dict:
    """Run ``experiment`` (or ``"all"``, in the order of :data:`EXPERIMENTS`) into ``out``; returns the manifest."""
    names = EXPERIMENTS if experiment == "all" else (experiment,)
    t0 = time.perf_counter()
    for i, n in enumerate(names):
        sub = None if progress is None else (lambda f, m, i=i: progress((i + f) / len(names), m))
        run_experiment(n, out, settings, sub)
    man = read_manifest(out)
    if experiment == "all":
        with _locked(Path(out)):
            man = read_manifest(out)
            man["all_wall_seconds"] = time.perf_counter() - t0
            (Path(out) / "manifest.json").write_text(json.dumps(man, indent=1, default=_json_default))
    return man
