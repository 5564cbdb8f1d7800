"""A self-contained HTML report of one analysis: data, structure, scores, kernels, clustering, imputation,
prototypes and (when chosen) a segment comparison, with the settings, seeds and versions that produced it.

Streamlit-free: plain functions from core objects (``CategoricalData``, ``BayesNet``, a settings dict) to an
HTML string, shared by the app's "Report (HTML)" download and ``python -m bnfk_core report``.  The figures
come from the same builders as the pages (:mod:`bnfk_core.views.figures`); plotly.js is embedded once, so the
file opens offline.  Every name from the data (variables, states, file names, settings) is escaped with
:func:`html.escape`; inside the figures plotly's JSON escapes ``<``, ``>`` and ``/``.

Settings use the app's ``st.session_state`` keys (``kernel_rows``, ``clu_seed``, ``proto_k``, …); missing
keys take the app's defaults (:data:`REPORT_DEFAULTS`).  N × N views use at most :data:`VIEW_ROWS` sampled
rows (seeded; the sample size is stated in the report).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bnfk_core.analyses import segments as S
from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.analyses.impute import benchmark as impute_benchmark
from bnfk_core.analyses.impute import core as imp
from bnfk_core.analyses.prototypes import selection as pt
from bnfk_core.data.stats import column_summary
from bnfk_core.errors import BnfkError
from bnfk_core.kernels import fisher as kernels
from bnfk_core.kernels.embed import class_order, cluster_order, kernel_pca, pair_values, sample_rows
from bnfk_core.learning.kgv import raw_numbers
from bnfk_core.learning.scores import score_dag
from bnfk_core.network.dag import DAG, SEGMENT_KINDS, SEGMENT_SIZES
from bnfk_core.network.model import fit
from bnfk_core.registry import CLUSTERERS, CRITERIA, ESTIMATORS, KERNELS, LEARNERS, SCORES
from bnfk_core.serving import settings as app_settings

from . import figures
from . import kernel as kernel_view
from . import segments as seg_view
from .figures import clustering as fig_clu
from .figures import imputation as fig_imp
from .figures import kernel as fig_kernel
from .figures import prototypes as fig_proto
from .figures import segments as fig_seg

__all__ = [
    "REPORT_DEFAULTS",
    "VIEW_ROWS",
    "Report",
    "build_report",
    "check_setting",
    "segment_of",
]

#: at most this many rows in every N x N view (Gram heatmaps), sampled with the section's seed
VIEW_ROWS = 300

#: the page settings the report reads, with the app's defaults (bnfk_core.serving.settings, the one
#: registry of them)
_APP_KEYS = (
    "param_method",
    "kernel_kind",
    "kernel_rows",
    "kernel_seed",
    "kernel_order",
    "kernel_normalize",
    "kernel_compare",
    "clu_kernel",
    "clu_algorithm",
    "clu_network",
    "clu_transform",
    "clu_restarts",
    "clu_seed",
    "clu_rows",
    "clu_k",
    "clu_kernels",
    "proto_source",
    "proto_criterion",
    "proto_k",
    "proto_draws",
    "proto_seed",
    "seg_kind",
    "seg_base",
    "seg_rows",
    "seg_seed",
    "seg_restarts",
)
#: settings of the Imputation page's widgets (bounded in bnfk_core.serving.settings.REPORT_SETTINGS) and the
#: Segments lab's variables
_OWN = {
    **{
        k: app_settings.REPORT_SETTINGS[k].default
        for k in (
            "imp_methods",
            "imp_structure",
            "imp_test",
            "imp_missing",
            "imp_repeats",
            "imp_seed",
            "imp_rows",
        )
    },
    "seg_vars": None,
}
REPORT_DEFAULTS = {**{k: app_settings.SETTINGS[k].default for k in _APP_KEYS}, **_OWN}
#: the seeds the report uses, per section
SEED_KEYS = {
    "kernel": "kernel_seed",
    "clustering": "clu_seed",
    "imputation": "imp_seed",
    "prototypes": "proto_seed",
    "segments": "seg_seed",
}
_CLUSTER_MAX_ROWS = app_settings.SETTINGS["clu_rows"].hi  # as the Clustering page's widget
_CONFIG = {"displaylogo": False, "responsive": True}


def check_setting(key: str, value):
    """``value`` of the report setting ``key`` as the report uses it (parsed by
    :meth:`bnfk_core.serving.settings.Setting.parse`, bounded like the app's widgets, so text from a command
    line works too); ValueError says why not.

    Parameters
    ----------
    key : str
    value : object

    Returns
    -------
    object

    Raises
    ------
    ValueError
        When ``key`` is no report setting or ``value`` is not valid for it.
    """
    if key in app_settings.REPORT_SETTINGS:
        return app_settings.REPORT_SETTINGS[key].parse(value)
    if key != "seg_vars":
        raise ValueError("is not a setting of the report")
    value = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
    if not isinstance(value, (list, tuple)) or len(value) > app_settings.MAX_LIST:
        raise ValueError(f"must be a list of at most {app_settings.MAX_LIST} names")
    if not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of names")
    return [str(v) for v in value]


def _checked(settings: dict | None) -> tuple[dict, list[str]]:
    """:data:`REPORT_DEFAULTS` updated with the known keys of ``settings`` (:func:`check_setting`); a value
    that does not parse keeps the default, with a note.  Unknown keys are ignored."""
    out = {k: (list(v) if isinstance(v, list) else v) for k, v in REPORT_DEFAULTS.items()}
    notes = []
    for k, v in (settings or {}).items():
        if k not in out or v is None:
            continue
        try:
            out[k] = check_setting(k, v)
        except ValueError as exc:
            notes.append(
                f"Setting {k} = {app_settings.shown_value(v)} {exc}; the report used the default {out[k]!r}."
            )
    return out, notes


# ---------------------------------------------------------------------- HTML pieces
def esc(x) -> str:
    """``x`` as escaped HTML text (quotes too).

    Parameters
    ----------
    x : object

    Returns
    -------
    str
    """
    return html.escape(str(x), quote=True)


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    return str(v)


def table_html(df: pd.DataFrame | list, *, index: bool = False, cls: str = "") -> str:
    """A table whose every header and cell is escaped.

    Parameters
    ----------
    df : pandas.DataFrame or list of dict
    index : bool
    cls : str
        CSS class of the table.

    Returns
    -------
    str
    """
    if not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(df)
    head = ([esc(df.index.name or "")] if index else []) + [esc(c) for c in df.columns]
    rows = []
    for idx, r in zip(df.index, df.itertuples(index=False)):
        cells = ([f"<th>{esc(idx)}</th>"] if index else []) + [f"<td>{esc(_fmt(v))}</td>" for v in r]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="tbl"><table class="{esc(cls)}"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def _dl(items: dict) -> str:
    return (
        '<dl class="kv">'
        + "".join(f"<dt>{esc(k)}</dt><dd>{esc(_fmt(v))}</dd>" for k, v in items.items())
        + "</dl>"
    )


@dataclass
class Report:
    """The sections of a report as they are built; :meth:`html` is the page."""

    title: str
    sections: list = field(default_factory=list)  # (id, title, body html, seconds)
    n_figures: int = 0
    notes: list = field(default_factory=list)

    def figure(self, fig, caption: str = "") -> str:
        """A figure as a div + its script (no plotly.js; the page embeds it once), numbered ids.

        Parameters
        ----------
        fig : plotly.graph_objects.Figure
        caption : str

        Returns
        -------
        str
        """
        self.n_figures += 1
        body = fig.to_html(
            full_html=False,
            include_plotlyjs=False,
            div_id=f"fig-{self.n_figures}",
            config=_CONFIG,
            default_width="100%",
        )
        cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
        return f'<figure class="plot">{body}{cap}</figure>'

    def section(self, sid: str, title: str, build: Callable[[], str]) -> None:
        """Add a section; a :class:`BnfkError` from ``build`` becomes a one-sentence note in it.

        Parameters
        ----------
        sid, title : str
            Its anchor id and heading.
        build : callable() -> str
            Returns the section's HTML.
        """
        t0 = time.perf_counter()
        try:
            body = build()
        except BnfkError as exc:  # one sentence in the report; the other sections go on
            body = f'<p class="error">This section could not be computed: {esc(exc)}</p>'
        self.sections.append((sid, title, body, time.perf_counter() - t0))

    def html(self, head_note: str, footer: str) -> str:
        """The whole page: table of contents, sections with their times, plotly.js embedded once.

        Parameters
        ----------
        head_note, footer : str
            HTML.

        Returns
        -------
        str
        """
        import plotly
        from plotly.offline import get_plotlyjs

        toc = "".join(f'<li><a href="#{esc(s)}">{esc(t)}</a></li>' for s, t, _, _ in self.sections)
        body = "".join(
            f'<section id="{esc(s)}"><h2>{esc(t)}</h2>{b}'
            f'<p class="time">computed in {sec:.2f} s</p></section>'
            for s, t, b, sec in self.sections
        )
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="bnfk report">\n<title>{esc(self.title)}</title>\n'
            f"<style>{_CSS}</style>\n"
            "<script type=\"text/javascript\">window.PlotlyConfig = {MathJaxConfig: 'local'};</script>\n"
            f"<!-- plotly.js {esc(plotly.__version__)} (plotly.py), embedded so the report works offline "
            "-->\n"
            f'<script type="text/javascript">{get_plotlyjs()}</script>\n</head>\n'
            f'<body data-figures="{self.n_figures}">\n'
            f"<header><h1>{esc(self.title)}</h1>{head_note}</header>\n"
            f"<nav><ol>{toc}</ol></nav>\n<main>{body}</main>\n<footer>{footer}</footer>\n</body>\n</html>\n"
        )


_CSS = """
body{font-family:"Source Sans Pro",system-ui,sans-serif;margin:0 auto;
max-width:1200px;padding:0 24px 40px;color:#222}
h1{font-size:1.7em;margin:.6em 0 .2em}h2{border-bottom:2px solid #5b7db1;padding-bottom:4px;margin-top:1.6em}
h3{margin:1.1em 0 .4em}nav ol{columns:3;font-size:.95em}figure.plot{margin:8px 0 18px}
figcaption,.caption{color:#555;font-size:.9em}.time{color:#888;font-size:.8em;text-align:right}
.tbl{overflow-x:auto;margin:6px 0 12px}table{border-collapse:collapse;font-size:.88em}
th,td{border:1px solid #d6dbe4;padding:3px 8px;text-align:left;vertical-align:top}thead th{background:#f0f4fa}
dl.kv{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:.92em}
dl.kv dt{font-weight:600}
dl.kv dd{margin:0}.error{color:#b00020}.grid2{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.grid3{display:grid;grid-template-columns:1fr 1fr 1fr;gap:8px}code{background:#f4f4f4;padding:0 3px}
@media print{nav{display:none}}
"""


# ---------------------------------------------------------------------- the sections
def _class_states(d) -> tuple:
    return tuple(d.states[d.index(d.class_column)]) if d.class_column else ()


def _data_section(r: Report, d, feats) -> str:
    n_missing = int((d.codes < 0).sum())
    out = [
        _dl(
            {
                "source": d.source,
                "rows": d.n_rows,
                "variables": d.n_vars,
                "class column": d.class_column or "none",
                "feature variables (kernel)": feats.n_vars,
                "missing cells": n_missing,
            }
        )
    ]
    out.append(table_html(column_summary(d)))
    if d.class_column:
        ci = d.index(d.class_column)
        col = d.codes[:, ci]
        counts = np.bincount(col[col >= 0], minlength=len(d.states[ci]))
        out.append(
            r.figure(
                figures.levels_figure(
                    d.states[ci],
                    counts.tolist(),
                    int((col < 0).sum()),
                    class_column=True,
                    title=f"Class column {d.class_column}",
                )
            )
        )
    return "".join(out)


def _structure_section(r: Report, feats, model, s: dict, structure_note: str) -> str:
    dag = model.dag
    raw = raw_numbers(feats)  # the KGV score searches numbers unbinned
    sc = {name: float(score_dag(feats.codes, feats.cardinalities, dag, name, numbers=raw)) for name in SCORES}
    out = [
        _dl(
            {
                "structure": structure_note,
                "arcs": dag.n_arcs,
                "nodes": len(dag.nodes),
                "free parameters": model.parameter_count(),
                "parameters (CPTs)": ESTIMATORS[s["param_method"]].label
                if s["param_method"] in ESTIMATORS
                else s["param_method"],
            }
        )
    ]
    out.append(
        "<h3>Scores</h3>"
        + table_html([{"score": SCORES[k].label, "name": k, "value": v} for k, v in sc.items()])
    )
    out.append(
        '<p class="caption">Decomposable scores of the structure on the feature columns (log scale, higher '
        "is better).</p>"
    )
    out.append(
        r.figure(figures.dag_figure(dag.nodes, dag.sorted_arcs(), title=f"Structure ({dag.n_arcs} arcs)"))
    )
    if dag.n_arcs:
        out.append(
            "<details><summary>Arcs</summary>"
            + table_html([{"from": u, "to": v} for u, v in dag.sorted_arcs()])
            + "</details>"
        )
    return "".join(out)


def _comparison(model, feats, sub, s: dict):
    """The comparison Gram matrix of ``kernel_compare``: a registry kernel that needs no network, else the
    Fisher kernel of the empty network (the app's other choices -- learned networks -- are not rebuilt
    here)."""
    choice = s["kernel_compare"]
    if choice in KERNELS and not KERNELS[choice].uses_network:
        return (
            kernels.gram(model, sub, kind=choice, normalize=bool(s["kernel_normalize"])),
            f"{KERNELS[choice].label} kernel",
            None,
        )
    note = (
        None
        if choice == "empty"
        else (f"The comparison '{choice}' of the app is replaced by the empty network in the report.")
    )
    empty = fit(DAG(feats.variables), feats, method=s["param_method"])
    return (
        kernels.gram(empty, sub, kind=kernels.FISHER, normalize=bool(s["kernel_normalize"])),
        f"{KERNELS[kernels.FISHER].label}: empty network (0 arcs)",
        note,
    )


def _kernel_section(r: Report, d, feats, model, s: dict) -> str:
    kind = s["kernel_kind"] if s["kernel_kind"] in KERNELS else kernels.FISHER
    spec, seed = KERNELS[kind], int(s["kernel_seed"])
    n = min(int(s["kernel_rows"]), VIEW_ROWS, d.n_rows)
    rows = sample_rows(d.n_rows, n, seed)
    sub = feats.subset(rows)
    labels = d.labels()[rows] if d.class_column else np.full(len(rows), -1)
    cls = _class_states(d)
    K = kernels.gram(model, sub, kind=kind, normalize=bool(s["kernel_normalize"]))
    K2, title2, note = _comparison(model, feats, sub, s)
    order_kind = s["kernel_order"]
    order = (
        class_order(labels, K)
        if order_kind == "class" and d.class_column
        else np.arange(len(rows))
        if order_kind == "data"
        else cluster_order(K)
    )
    title1 = kernel_view.main_title(spec, model.dag.n_arcs)
    panels, zmax = fig_kernel.gram_panels(K, K2, order, rows, labels, cls, titles=(title1, title2))
    out = [
        f"<p>{len(rows):,} of {d.n_rows:,} rows, sampled with seed {seed}"
        + (
            " (all rows)"
            if len(rows) == d.n_rows
            else f" (the report shows at most {VIEW_ROWS} rows in an N × N view)"
        )
        + f"; {'normalised (cosine)' if s['kernel_normalize'] else 'unnormalised'}; colours centred at 0 and "
        f"clipped at ±{zmax:.3g} (99th percentile of |K| over both kernels).</p>"
    ]
    if note:
        out.append(f'<p class="caption">{esc(note)}</p>')
    out.append('<div class="grid3">' + "".join(r.figure(f) for f in panels) + "</div>")
    pairs = pair_values(K, labels if d.class_column else None)
    out.append(
        '<div class="grid2">'
        + r.figure(figures.histogram_figure(pairs, cls, title=kernel_view.histogram_title(spec)))
        + r.figure(figures.embedding_figure(kernel_pca(K, 2), rows, labels, cls, title="Kernel PCA map"))
        + "</div>"
    )
    # the pair the Kernel page starts with: the first sampled row and the row most similar to it (cosine)
    ia, ib = kernel_view.first_pair(K)
    a, b = int(rows[ia]), int(rows[ib])
    fk = spec.fit(sub, model=model)
    variables = tuple(fk.variables)
    contrib = np.asarray(fk.contributions(feats.subset([a]), feats.subset([b]))).ravel()
    xa, xb = kernel_view.shown_values(d, a, variables), kernel_view.shown_values(d, b, variables)
    out.append("<h3>Per-variable contributions</h3>")
    out.append(
        f"<p>Row A = #{a} (the first sampled row), row B = #{b} (the sampled row most similar to it, "
        "cosine). "
        f"K(A, B) = {K[ia, ib]:.4g}; the unnormalised per-variable terms sum to {contrib.sum():.4g}.</p>"
    )
    out.append(r.figure(fig_kernel.pair_figure(variables, contrib, xa, xb, a, b, spec.label)))
    out.append(
        table_html(
            kernel_view.contributions_table(variables, xa, xb, contrib).sort_values("K_i", ascending=False)
        )
    )
    return "".join(out)


def _clustering_section(r: Report, d, feats, model, s: dict, progress=None) -> str:
    seed = int(s["clu_seed"])
    n = min(int(s["clu_rows"]), _CLUSTER_MAX_ROWS, d.n_rows)
    rows = sample_rows(d.n_rows, n, seed)
    sub = d.subset(rows)
    has_class = d.class_column is not None
    k = int(s["clu_k"]) or (C.default_n_clusters(sub) if has_class else 2)
    algo, transform, restarts = s["clu_algorithm"], s["clu_transform"], int(s["clu_restarts"])
    chosen = s["clu_kernel"] if s["clu_kernel"] in KERNELS else kernels.SCALED_HAMMING
    names = list(dict.fromkeys([chosen] + [n for n in s["clu_kernels"] if n in KERNELS]))
    thesis_net = s["clu_network"] == app_settings.THESIS_NETWORK
    if thesis_net:  # as the Clustering page: the thesis's recipe on all rows
        model = C.feature_network(d, **app_settings.THESIS_RECIPE, seed=seed)
    metrics, detail = [], None
    for i, name in enumerate(names):
        spec = KERNELS[name]
        if progress is not None:
            progress(i / len(names), f"Clustering: {spec.label} kernel ({i + 1} of {len(names)})")
        setup = C.kernel_setup(sub, name, model=model if spec.uses_network else None)
        res = C.run_clustering(
            sub, name, algo, n_clusters=k, setup=setup, transform=transform, restarts=restarts, seed=seed
        )
        metrics.append(
            {
                "kernel": spec.label,
                "ARI": res["ari"],
                "AMI": res["ami"],
                "V-measure": res["v_measure"],
                "silhouette": res["silhouette"],
                "clusters used": f"{res['n_used']} of {res['n_clusters']}",
                "seconds": res["seconds"],
            }
        )
        if name == chosen:
            detail = (setup, res)
    setup, res = detail
    labels = np.asarray(res["labels"])
    out = [
        f"<p>{CLUSTERERS[algo].label if algo in CLUSTERERS else algo} into {k} clusters on {len(rows):,} of "
        f"{d.n_rows:,} rows (seed {seed}"
        + (
            f", {restarts} restarts"
            if algo in CLUSTERERS and CLUSTERERS[algo].takes("restarts")
            else f", affinity {esc(transform)}"
        )
        + "); network kernels use "
        + (
            "a hill-climbing qNML network with cNML parameters (the thesis's "
            f"choice, {model.dag.n_arcs} arcs)"
            if thesis_net
            else "the current structure"
        )
        + "; the class column is never a feature"
        + (" and scores the clusters." if has_class else ".")
        + "</p>"
    ]
    out.append(table_html(metrics))
    spec = KERNELS[chosen]
    out.append(f"<h3>{esc(spec.label)} kernel in detail</h3>")
    view = np.sort(sample_rows(len(rows), min(VIEW_ROWS, len(rows)), seed))
    Kv, lv = setup.K[np.ix_(view, view)], labels[view]
    order = C.cluster_ordering(lv, Kv)
    out.append(
        r.figure(
            fig_clu.cluster_heatmap(Kv, order, rows[view], lv, res["n_used"], spec.label),
            f"{len(view):,} of the {len(rows):,} clustered rows shown (seed {seed})."
            if len(view) < len(rows)
            else "",
        )
    )
    true = sub.labels() if has_class else np.full(len(rows), -1)
    maps = fig_clu.cluster_maps(C.embedding(setup.K, 2), rows, labels, res["n_used"], true, _class_states(d))
    out.append('<div class="grid2">' + "".join(r.figure(f) for f in maps) + "</div>")
    if has_class:
        out.append(
            "<h3>Clusters × labels</h3>"
            + table_html(C.contingency(true, labels, _class_states(d)), index=True)
        )
    return "".join(out)


def _imputation_section(r: Report, d, feats, s: dict, progress=None) -> str:
    methods = [m for m in s["imp_methods"] if m in imp.METHODS] or ["bn", "mode", "wknn"]
    n_rows = min(int(s["imp_rows"]), feats.n_rows)  # as the Imputation page: a seeded sample of the rows
    bench = (
        feats
        if n_rows >= feats.n_rows
        else feats.subset(sample_rows(feats.n_rows, n_rows, int(s["imp_seed"])))
    )
    res = impute_benchmark.benchmark(
        bench,
        methods,
        test_ratios=sorted(s["imp_test"]),
        missing_ratios=sorted(s["imp_missing"]),
        repeats=int(s["imp_repeats"]),
        seed=int(s["imp_seed"]),
        structure=s["imp_structure"],
        score="qnml",
        params="cnml",
        progress=None if progress is None else (lambda f, msg: progress(f, f"Imputation: {msg}")),
    )
    n_runs = len(res.test_ratios) * len(res.missing_ratios) * res.repeats
    out = [
        (
            f"<p>The thesis's protocol (ch. 4) on the feature columns of {bench.n_rows:,} of the "
            f"{feats.n_rows:,} rows (sampled with the seed, as the Imputation page's <i>Rows</i>): for each "
            "(test ratio, missing ratio) "
            "a random "
            f"test part of the rows gets that fraction of its cells hidden completely at random (seed "
            f"{int(s['imp_seed'])}); {n_runs} runs per method; BN structures {esc(res.info['structure'])} on "
            "qNML, "
            "cNML parameters. Accuracy of the most probable value and cross-entropy (capped), "
            "macro-averaged.</p>"
        )
    ]
    out.append(table_html(res.table()))
    out.append(
        r.figure(fig_imp.benchmark_heatmaps(res, "accuracy"), "Accuracy per setting (mean over repeats).")
    )
    return "".join(out)


def _prototypes_section(r: Report, d, model, s: dict) -> str:
    source = (
        s["proto_source"] if s["proto_source"] in ("current", *pt.SUMMARIZATION_STRUCTURES) else "current"
    )
    if source in LEARNERS and LEARNERS[source].needs_class and not d.class_column:
        source = "current"
    seed, crit = int(s["proto_seed"]), s["proto_criterion"] if s["proto_criterion"] in pt.CRITERIA else "mmd"
    exp = pt.prepare_summarization(
        d, source if source != "current" else "hc", dag=model.dag if source == "current" else None, seed=seed
    )
    n_train = exp.train.n_rows
    k = int(min(max(int(s["proto_k"]), 1), n_train - 1))
    res = pt.run_summarization(exp, k, random_draws=int(s["proto_draws"]), return_details=True)
    rnd = res["random"]
    out = [
        (
            f"<p>Paper, Algorithm 1: k = {k} rows of the training half ({n_train:,} rows, seeded 50/50 "
            "split, seed "
            f"{seed}) chosen by <b>{esc(_lower_first(CRITERIA[crit].label))}</b>; the structure "
            f"({esc(source)}, "
            f"{exp.model.dag.n_arcs} arcs) is re-fitted (pseudo-count one) on the chosen rows and scored on "
            "the "
            f"held-out half against {int(s['proto_draws'])} random subsets of the same size.</p>"
        )
    ]
    rows = [
        {"subset": fig_proto.MARKS[c], "MMD": res[c]["mmd"], "held-out NLL": res[c]["nll"]}
        for c in CRITERIA.names(greedy=True)
        if c in res
    ]
    rows += [
        {
            "subset": f"random (mean ± sd of {int(s['proto_draws'])})",
            "MMD": f"{rnd['mmd_mean']:.4g} ± {rnd['mmd_std']:.3g}",
            "held-out NLL": f"{rnd['nll_mean']:.4f} ± {rnd['nll_std']:.4f}",
        },
        {"subset": fig_proto.MARKS["full"], "MMD": 0.0, "held-out NLL": res["full"]["nll"]},
    ]
    out.append("<h3>MMD vs random subsets</h3>" + table_html(rows))
    out.append(
        f'<p class="caption">{pt.share_below(res, crit, "nll"):.0%} of the random subsets have a lower '
        f"held-out NLL than the chosen subset.</p>"
    )
    out.append(r.figure(fig_proto.distribution_figure(res, crit)))
    out.append("<h3>The selected rows</h3>" + table_html(pt.selected_table(d, pt.selected_rows(res, crit))))
    Y = pt.feature_embedding(exp.mmd.Phi, 2)
    labels, cls = pt.row_labels(d, exp.train_rows)
    js, others = pt.map_sample(exp.train_rows, pt.selected_rows(res, crit), fig_proto.MAP_ROWS)
    out.append(
        r.figure(
            fig_proto.map_figure(
                Y, exp.train_rows, labels, cls, js, others, fig_proto.map_title("prototypes")
            )
        )
    )
    return "".join(out)


def _lower_first(label: str) -> str:
    """A registry label inside a sentence: "Greedy MMD (Fisher kernel)" -> "greedy MMD (Fisher kernel)"."""
    return label[:1].lower() + label[1:]


def segment_of(s: dict, feats) -> tuple[str, list] | None:
    """``(kind, variables)`` when the settings name a complete segment over feature variables, else None.

    Parameters
    ----------
    s : dict
        Report settings.
    feats : CategoricalData

    Returns
    -------
    (str, list of str) or None
    """
    kind, variables = s.get("seg_kind"), s.get("seg_vars")
    if kind not in SEGMENT_KINDS or not variables:
        return None
    variables = [str(v) for v in variables]
    need = SEGMENT_SIZES.get(kind)
    if (need is not None and len(variables) != need) or any(v not in feats.variables for v in variables):
        return None
    return kind, variables


def _segments_section(r: Report, d, feats, model, s: dict, seg) -> str:
    kind, variables = seg
    base, seg_dag = seg_view.segment_networks(s["seg_base"], feats.variables, model.dag, kind, variables)
    m1, m2 = (fit(g, feats, method=s["param_method"]) for g in (base, seg_dag))
    seed = int(s["seg_seed"])
    rows = sample_rows(d.n_rows, min(int(s["seg_rows"]), VIEW_ROWS, d.n_rows), seed)
    labels = d.labels()[rows] if d.class_column else np.full(len(rows), -1)
    K1, K2 = (kernels.gram(m, feats.subset(rows)) for m in (m1, m2))
    out = [
        (
            f"<p>Segment <b>{esc(kind)}</b> on {esc(', '.join(variables))} added to the "
            f"{'empty network' if s['seg_base'] != 'current' else 'current structure'} ({base.n_arcs} arcs; "
            "added "
            f"{esc(seg_view.added_arcs(base, seg_dag))}); Fisher kernels "
            f"on {len(rows):,} rows (seed {seed}).</p>"
        )
    ]
    if d.class_column:
        k = C.default_n_clusters(d)
        a1, a2 = (
            S.clustering_aris(K, labels, k, restarts=int(s["seg_restarts"]), seed=seed) for K in (K1, K2)
        )
        out.append(
            table_html(
                [
                    {
                        "clustering (ARI vs label)": CLUSTERERS[a].label,
                        "base": a1[a],
                        "base + segment": a2[a],
                        "change": a2[a] - a1[a],
                    }
                    for a in a1
                ]
            )
        )
    order = class_order(labels, K1) if d.class_column else cluster_order(K1)
    panels, _ = fig_seg.segment_panels(K1, K2, order, rows, labels, _class_states(d))
    out.append('<div class="grid3">' + "".join(r.figure(f) for f in panels) + "</div>")
    try:
        table = S.case_table(m2, d, kind, variables)
        out.append("<h3>Case table (theory vs measured)</h3>" + table_html(table.to_frame()))
    except BnfkError as exc:
        out.append(f'<p class="caption">No case table: {esc(exc)}</p>')
    return "".join(out)


# ---------------------------------------------------------------------- the page
def _versions() -> dict:
    from bnfk_core.reproduce import versions

    v = versions()
    keep = ("bnfk", "bnfk_commit", "python", "numpy", "pandas", "scipy", "scikit-learn", "pgmpy", "plotly")
    return {k: v.get(k) for k in keep}


def build_report(
    data,
    model,
    *,
    settings: dict | None = None,
    title: str | None = None,
    structure_note: str | None = None,
    command: str | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> str:
    """The HTML report of ``model`` (a BayesNet over the feature columns of ``data``) on ``data``.

    ``settings`` are app setting keys (:data:`REPORT_DEFAULTS`); ``structure_note`` says where the structure
    came from; ``command`` (the CLI line) is listed with the settings.  Sections whose computation fails with
    a
    :class:`BnfkError` show its sentence; the others are unaffected.

    Parameters
    ----------
    data : CategoricalData
    model : BayesNet
    settings : dict, optional
    title : str, optional
    structure_note : str, optional
    command : str, optional
    progress : callable(fraction, message), optional

    Returns
    -------
    str
        A self-contained HTML page.
    """
    t_start = time.perf_counter()
    s, setting_notes = _checked(settings)
    feats = data.without_class()
    missing = [v for v in model.variables if v not in feats.variables]
    if missing or len(model.variables) != feats.n_vars:
        what = missing[0] if missing else next(v for v in feats.variables if v not in model.variables)
        raise BnfkError(
            f"The model's variables are not the feature columns of {data.source} (variable '{what}')."
        )
    feats = model.align(feats)
    rep = Report(title or f"bnfk report: {data.source}")
    rep.notes.extend(setting_notes)
    seg = segment_of(s, feats)
    steps = [
        ("data", "Data", lambda: _data_section(rep, data, feats)),
        (
            "structure",
            "Structure and scores",
            lambda: _structure_section(rep, feats, model, s, structure_note or "given"),
        ),
        ("kernel", "Kernel", lambda: _kernel_section(rep, data, feats, model, s)),
        ("clustering", "Clustering", lambda: _clustering_section(rep, data, feats, model, s, within)),
        ("imputation", "Imputation", lambda: _imputation_section(rep, data, feats, s, within)),
        ("prototypes", "Prototypes", lambda: _prototypes_section(rep, data, model, s)),
    ]
    if seg:
        steps.append(
            ("segments", "Segment comparison", lambda: _segments_section(rep, data, feats, model, s, seg))
        )
    at = [0]  # the section being built: ``within`` maps its own fraction onto the whole report's

    def within(fraction: float, message: str) -> None:
        if progress is not None:
            progress((at[0] + min(max(float(fraction), 0.0), 1.0)) / (len(steps) + 1), message)

    for i, (sid, name, fn) in enumerate(steps):
        at[0] = i
        if progress is not None:
            progress(i / (len(steps) + 1), name)
        rep.section(sid, name, fn)
    if not seg:
        rep.notes.append(
            "No segment comparison: the settings name no segment (Segments lab, or the CLI's --segment)."
        )
    if progress is not None:
        progress(len(steps) / (len(steps) + 1), "Settings and versions")
    seeds = {sec: int(s[key]) for sec, key in SEED_KEYS.items() if sec != "segments" or seg}
    shown = {k: v for k, v in s.items() if not k.startswith("seg_") or seg}
    t_build = time.perf_counter() - t_start
    settings_html = (
        "<h3>Seeds</h3>"
        + _dl(seeds)
        + "<h3>Versions</h3>"
        + _dl(_versions())
        + "<h3>Settings</h3>"
        + table_html([{"setting": k, "value": json.dumps(v, ensure_ascii=False)} for k, v in shown.items()])
        + (f"<h3>Command</h3><p><code>{esc(command)}</code></p>" if command else "")
        + "".join(f'<p class="caption">{esc(n)}</p>' for n in rep.notes)
    )
    rep.sections.append(("settings", "Settings, seeds and versions", settings_html, 0.0))
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
    head = (
        f'<p class="caption">{esc(data.source)} · {data.n_rows:,} rows × {data.n_vars} variables · structure '
        f"{esc(structure_note or 'given')} ({model.dag.n_arcs} arcs) · generated {esc(now)} · "
        f"{rep.n_figures} interactive figures (plotly.js embedded; works offline).</p>"
    )
    footer = (
        f'<p class="caption">Built by bnfk in {t_build:.1f} s. Every random step is seeded (see '
        f'"Settings, seeds and versions"); the same data, model and settings give the same numbers.</p>'
    )
    if progress is not None:
        progress(1.0, "done")
    return rep.html(head, footer)
