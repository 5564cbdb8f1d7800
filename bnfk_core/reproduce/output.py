"""The files of a reproduction run: comparison tables (ours beside published, CSV + markdown), figures (plotly
HTML with a local plotly.js, and JSON), the manifest (settings, versions, machine, wall time) and
``index.md``."""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import subprocess
import tempfile
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .. import __version__
from . import published as pub
from .common import EXPERIMENTS, TABLE_FILES, ReproduceError, root

__all__ = [
    "comparison_frame",
    "fmt",
    "markdown_table",
    "compact",
    "Writer",
    "PLOTLY_JS",
    "write_figure_html",
    "render_figures",
    "versions",
    "machine",
    "read_manifest",
    "stored_results",
    "locked",
    "update_manifest",
    "json_default",
    "write_index",
    "now",
    "bar_figure",
]


def comparison_frame(table_id: str, ours: dict, extra: dict | None = None) -> pd.DataFrame:
    """Ours next to the published table: one row per data set we ran, ``<c> (ours|published|diff)`` columns.

    ``ours``: {thesis row name: {column: value}}; ``extra``: {row name: {column: value}} appended as is.

    Parameters
    ----------
    table_id : str
        A published table (:mod:`bnfk_core.reproduce.published`).
    ours : dict
    extra : dict, optional

    Returns
    -------
    pandas.DataFrame
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


def fmt(v, digits: int = 3) -> str:
    """One table cell: floats to ``digits`` places, non-finite as an en dash, ``|`` escaped.

    Parameters
    ----------
    v : object
    digits : int

    Returns
    -------
    str
    """
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return "–"
        return f"{v:.{digits}f}"
    return str(v).replace("|", "\\|")


def markdown_table(df: pd.DataFrame, digits: int = 3) -> str:
    """A GitHub markdown table (no extra dependency).

    Parameters
    ----------
    df : pandas.DataFrame
    digits : int

    Returns
    -------
    str
    """
    cols = [str(c).replace("|", "\\|") for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(fmt(v, digits) for v in r.tolist()) + " |")
    return "\n".join(lines) + "\n"


def compact(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The readable view: per published column one cell 'ours (published)'.

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`comparison_frame`.
    columns : sequence of str

    Returns
    -------
    pandas.DataFrame
    """
    out = pd.DataFrame({"dataset": df["dataset"]})
    for c in columns:
        o, p = df[f"{c} (ours)"], df[f"{c} (published)"]
        out[c] = [f"{fmt(a)} ({fmt(b)})" for a, b in zip(o, p)]
    return out


class Writer:
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

    def table(
        self,
        stem: str,
        df: pd.DataFrame,
        *,
        title: str,
        caption: str,
        measured: str,
        setup: str,
        compact_columns: Sequence[str] | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        """Write ``stem.csv`` and ``stem.md`` (title, published caption, what was measured, our setup, the
        table and ``notes``) and record the table for the manifest.

        Parameters
        ----------
        stem : str
        df : pandas.DataFrame
        title, caption, measured, setup : str
        compact_columns : sequence of str, optional
            Published columns shown as "ours (published)" cells.
        notes : sequence of str
        """
        df.to_csv(self._path(stem + ".csv"), index=False, float_format="%.6g")
        md = [
            f"## {title}",
            "",
            f"*Published caption:* {caption}",
            "",
            f"*Measured:* {measured}",
            "",
            f"*Our setup:* {setup}",
            "",
        ]
        if compact_columns:
            md += ["Each cell: **ours (published)**.", "", markdown_table(compact(df, compact_columns)), ""]
        md += [
            "<details><summary>All columns (ours, published, difference, extras)</summary>",
            "",
            markdown_table(df),
            "</details>",
            "",
        ]
        for n in notes:
            md.append(f"- {n}")
        self._path(stem + ".md").write_text("\n".join(md).rstrip() + "\n")
        self.tables[stem] = {"title": title, "csv": stem + ".csv", "md": stem + ".md", "setup": setup}

    def frame(self, stem: str, df: pd.DataFrame) -> None:
        """Write ``df`` as ``stem.csv``.

        Parameters
        ----------
        stem : str
        df : pandas.DataFrame
        """
        df.to_csv(self._path(stem + ".csv"), index=False, float_format="%.6g")

    def figure(self, stem: str, fig) -> None:
        """Write ``fig`` as ``stem.html`` (:func:`write_figure_html`) and ``stem.json``.

        Parameters
        ----------
        stem : str
        fig : plotly.graph_objects.Figure
        """
        write_figure_html(fig, self._path(stem + ".html"))
        self.files.append(
            (Path(stem).parent / PLOTLY_JS).as_posix()
        )  # beside the page (stems may hold a folder)
        self._path(stem + ".json").write_text(fig.to_json())


#: the plotly.js bundle every figure page of a results folder loads from beside it (no CDN: readable offline)
PLOTLY_JS = "plotly.min.js"


def write_figure_html(fig, path) -> None:
    """``fig`` as an HTML page that loads ``plotly.min.js`` from its own folder (written there, or refreshed
    when it is not this plotly's bundle), so the folder's figures open without a network.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    path : str or path-like
    """
    from plotly.offline import get_plotlyjs

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    js, code = path.parent / PLOTLY_JS, get_plotlyjs()
    if (
        not js.exists()
        or js.stat().st_size != len(code.encode("utf-8"))
        or js.read_text(encoding="utf-8") != code
    ):
        js.write_text(code, encoding="utf-8")
    fig.write_html(path, include_plotlyjs="directory", full_html=True)


def render_figures(out) -> list[str]:
    """Write the HTML page of every figure of the results folder ``out`` again from its stored JSON (the
    ``fig_*.json`` files its manifest lists), with the local plotly.js of :func:`write_figure_html`.  No
    experiment runs and no number changes; returns the pages written.

    Parameters
    ----------
    out : str or path-like

    Returns
    -------
    list of str

    Raises
    ------
    ReproduceError
        When ``out`` has no manifest listing experiments.
    """
    import plotly.io as pio

    out = Path(out)
    man = read_manifest(out)
    if not man.get("experiments"):
        raise ReproduceError(
            f"{out} has no manifest.json listing experiments; run 'reproduce all -o {out}' first."
        )
    written = []
    for rec in man["experiments"].values():
        for f in rec.get("files", []):
            if Path(f).name.startswith("fig_") and f.endswith(".json") and (out / f).exists():
                page = out / (f[: -len(".json")] + ".html")
                write_figure_html(pio.from_json((out / f).read_text()), page)
                written.append(page.relative_to(out).as_posix())
    return sorted(set(written))


def versions() -> dict:
    """Versions of python, numpy, pandas, scipy, scikit-learn, pgmpy, numba, plotly and bnfk (+ git commit).

    Returns
    -------
    dict
    """
    out = {"python": platform.python_version()}
    for name in ("numpy", "pandas", "scipy", "scikit-learn", "pgmpy", "numba", "networkx", "plotly"):
        try:
            out[name] = package_version(name)
        except PackageNotFoundError:  # pragma: no cover - not installed
            out[name] = None
    out["bnfk"] = __version__
    try:
        out["bnfk_commit"] = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                cwd=root(),
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
            or None
        )
    except Exception:  # pragma: no cover - no git
        out["bnfk_commit"] = None
    return out


def machine() -> dict:
    """Platform, CPU count and load average (for the manifest).

    Returns
    -------
    dict
    """
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        load = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": load,
    }


def read_manifest(out) -> dict:
    """``manifest.json`` of the results folder ``out`` ({} when there is none or it is unreadable).

    Parameters
    ----------
    out : str or path-like

    Returns
    -------
    dict
    """
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
    ``figures`` ([(stem, path of the plotly JSON)]).  Empty when there is no manifest.

    Parameters
    ----------
    out : str or path-like

    Returns
    -------
    list of dict
    """
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
            tables.append(
                {
                    "stem": stem,
                    "title": meta.get("title", stem),
                    "setup": meta.get("setup", ""),
                    "frame": pd.read_csv(csv),
                    "markdown": md.read_text() if md.exists() else "",
                }
            )
        figs = [
            (Path(f).stem, out / f)
            for f in rec.get("files", [])
            if f.startswith("fig_") and f.endswith(".json") and (out / f).exists()
        ]
        entries.append({"name": name, "record": rec, "tables": tables, "figures": figs})
    return entries


@contextlib.contextmanager
def locked(out: Path):
    """An exclusive lock on the results folder ``out`` (experiments may run in parallel processes).

    Parameters
    ----------
    out : path-like

    Yields
    ------
    None
    """
    tag = hashlib.sha1(str(Path(out).resolve()).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"bnfk-reproduce-{tag}.lock"  # not among the results
    with open(lock, "a") as fh:
        try:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX)
        except (ImportError, OSError):  # pragma: no cover - non-POSIX
            pass
        yield


def update_manifest(out: Path, experiment: str, record: dict) -> None:
    """Merge ``experiment``'s record into the manifest of ``out`` and rewrite ``index.md``.

    Parameters
    ----------
    out : path-like
    experiment : str
    record : dict
    """
    with locked(out):
        man = read_manifest(out)
        man.setdefault("experiments", {})[experiment] = record
        man["versions"] = versions()
        man["machine"] = machine()
        man["updated"] = now()
        tmp = Path(out) / "manifest.json.tmp"
        tmp.write_text(json.dumps(man, indent=1, default=json_default))
        os.replace(tmp, Path(out) / "manifest.json")
        write_index(Path(out), man)


def json_default(x):
    """JSON for numpy scalars and arrays, sets and tuples (else the text).

    Parameters
    ----------
    x : object

    Returns
    -------
    int, float, list or str
    """
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)


def write_index(out: Path, man: dict) -> None:
    """``index.md``: every experiment's markdown tables, in :data:`EXPERIMENTS` order.

    Parameters
    ----------
    out : path-like
    man : dict
        The manifest.
    """
    parts = [
        "# Reproduction results",
        "",
        "Generated by `python -m bnfk_core reproduce`; see `manifest.json` for settings, seeds and versions.",
        "",
    ]
    for name in EXPERIMENTS:
        rec = man.get("experiments", {}).get(name)
        if not rec:
            continue
        parts += [
            f"# {name}",
            "",
            f"wall time {rec.get('wall_seconds', float('nan')):.1f} s, quick={rec.get('quick')}, "
            f"structure: {rec.get('structure')}",
            "",
        ]
        for stem in rec.get("tables", {}):
            p = out / f"{stem}.md"
            if p.exists():
                parts += [p.read_text(), ""]
    (out / "index.md").write_text("\n".join(parts))


def now() -> str:
    """The UTC time in ISO format (seconds).

    Returns
    -------
    str
    """
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def bar_figure(w: Writer, stem: str, tid: str, title: str) -> None:
    """Grouped bars of a written comparison table: ours solid beside published hatched, per data set.

    Parameters
    ----------
    w : Writer
    stem : str
    tid : str
        Published table id.
    title : str
    """
    df = pd.read_csv(w.out / f"{TABLE_FILES[tid]}.csv")
    t = pub.table(tid)
    fig = go.Figure()
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    for j, c in enumerate(t.columns):
        fig.add_trace(
            go.Bar(
                x=df["dataset"],
                y=df[f"{c} (ours)"],
                name=f"{c} ours",
                marker_color=palette[j % 6],
                offsetgroup=str(j),
                legendgroup=c,
            )
        )
        fig.add_trace(
            go.Bar(
                x=df["dataset"],
                y=df[f"{c} (published)"],
                name=f"{c} published",
                marker={"color": palette[j % 6], "opacity": 0.45, "pattern": {"shape": "/"}},
                offsetgroup=str(j) + "p",
                legendgroup=c,
            )
        )
    fig.update_layout(title=title, barmode="group", height=480, yaxis_title=t.measured.split(";")[0][:60])
    w.figure(stem, fig)
