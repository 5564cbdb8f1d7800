"""Subcommand ``report``: one self-contained HTML file of an analysis (data summary, structure and scores,
kernel heatmaps and per-variable contributions, clustering, imputation, prototypes, a segment comparison when
asked for; settings, seeds and versions), readable offline.

    python -m bnfk_core report SESSION.json -o report.html
    python -m bnfk_core report DATA.csv --model M.bif [data options] -o report.html
    python -m bnfk_core report DATA.csv [--structure tree] [data options] -o report.html

The page itself is built by :mod:`bnfk_core.views.report` (streamlit-free, shared with the app's "Report
(HTML)" download; imported inside the command so ``--help`` stays light).  Settings use the app's names
(``--set clu_algorithm=spectral``); a session file brings its own (``--set`` overrides them).
"""

from __future__ import annotations

import os
import shlex
import sys
import time

from ..data.files import atomic_path
from ..errors import BnfkError
from ..registry import ESTIMATORS, LEARNERS, SCORES
from .common import (
    add_data_options,
    add_quiet,
    check_output,
    guard_learning_width,
    input_files,
    int_at_least,
    progress,
    read_data,
    read_model_file,
    read_session_file,
    split_list,
)
from .names import choices, feature_learners

__all__ = ["register"]


def _parse_set(items, check) -> dict:
    """``KEY=VALUE`` pairs as report settings (``check(key, text)`` parses one, ValueError says why not)."""
    out = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise BnfkError(f"--set takes KEY=VALUE, got '{item}'.")
        try:
            out[key] = check(key, raw.strip())
        except ValueError as exc:
            raise BnfkError(f"--set {key}={raw}: {key} {exc}.") from None
    return out


def _segment(text: str | None) -> dict:
    if not text:
        return {}
    kind, sep, variables = text.partition(":")
    if not sep or not split_list(variables):
        raise BnfkError(
            f"--segment takes KIND:u,v[,w], e.g. single-arc:crime,education-spending; got '{text}'."
        )
    return {"seg_kind": kind.strip(), "seg_vars": split_list(variables)}


def _command_line() -> str | None:
    """The command line of this run, when it is ``python -m bnfk_core …`` (not an in-process call)."""
    if sys.argv and sys.argv[0].replace("\\", "/").endswith("bnfk_core/__main__.py"):
        return "python -m bnfk_core " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    return None


def _cmd_report(args) -> dict:
    from bnfk_core.views.report import REPORT_DEFAULTS, build_report, check_setting, segment_of

    from ..learning.recipe import learn_recipe, recipe_of
    from ..serving.session_files import is_session_file

    t0 = time.perf_counter()
    check_output(args.output, (".html", ".htm"), "the report", input_files(args))
    settings: dict = {}
    notes: list = []
    if is_session_file(args.data):
        session = read_session_file(
            args.data
        )  # settings out of their widgets' ranges are left out, with a note
        data, settings, notes = session.data, dict(session.settings), list(session.notes)
        own = args.model and os.path.abspath(args.model) != os.path.abspath(args.data)
        model = read_model_file(args.model) if own else (session.model if args.structure is None else None)
        note = (
            f"given ({os.path.basename(args.model)})"
            if own
            else f"from the session {os.path.basename(args.data)}"
        )
        settings.setdefault("param_method", session.params)
    else:
        model = read_model_file(args.model) if args.model else None
        if model is None:
            guard_learning_width(args.data, args, args.structure or "tree")
        data = read_data(args.data, args)
        note = f"given ({os.path.basename(args.model)})" if model is not None else None
        # every section's seed is --seed (a session keeps its own seeds; --set changes one)
        settings.update(
            {k: args.seed for k in ("kernel_seed", "clu_seed", "imp_seed", "proto_seed", "seg_seed")}
        )
    if model is None:
        recipe = recipe_of(
            structure=args.structure, score=args.score, params=args.params, k=args.kdb_k, seed=args.seed
        )
        model = learn_recipe(data, recipe).model
        note = f"{LEARNERS[recipe.structure].label} learned on {data.source} (recipe: {recipe.describe()})"
        settings["param_method"] = recipe.params
    settings.update(_segment(args.segment))
    settings.update(_parse_set(args.set, check_setting))
    if args.segment and segment_of({**REPORT_DEFAULTS, **settings}, data.without_class()) is None:
        raise BnfkError(
            f"--segment {args.segment}: give a segment kind and that many feature variables of {data.source}."
        )
    html_text = build_report(
        data, model, settings=settings, structure_note=note, command=_command_line(), progress=progress(args)
    )
    with atomic_path(args.output) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(html_text)
    return {
        "output": args.output,
        "bytes": os.path.getsize(args.output),
        "rows": data.n_rows,
        "variables": data.n_vars,
        "arcs": model.dag.n_arcs,
        "structure": note,
        "figures": html_text.count('class="plotly-graph-div"'),
        "notes": notes,
        "seconds": round(time.perf_counter() - t0, 2),
    }


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "report": "write a self-contained HTML report of an analysis (works offline)",
}


def register(sub) -> None:
    from ..learning.recipe import DEFAULT_RECIPE as R

    p = sub.add_parser(
        "report",
        help=SUBCOMMANDS["report"],
        description="Write one HTML file with the data summary, the network and its scores, kernel "
        "heatmaps and per-variable contributions, clustering, imputation, prototypes and "
        "(with --segment) a segment comparison; interactive plotly figures with plotly.js "
        "embedded, and the settings, seeds and versions that produced them.",
    )
    p.add_argument(
        "data",
        metavar="DATA.csv|SESSION.json",
        help="a CSV, or a bnfk session file (data, network, settings)",
    )
    p.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="the HTML file to write")
    g = p.add_argument_group(
        "network (without --model: learned on the feature columns, as the app's default)"
    )
    g.add_argument(
        "--model",
        metavar="M.bif",
        help="a fitted model over the feature columns (.bif, .xmlbif, .net, .xdsl or .json)",
    )
    g.add_argument(
        "--structure",
        default=None,
        choices=feature_learners(),
        metavar="METHOD",
        help=f"structure-learning method: {', '.join(feature_learners())} (default {R.structure}, the "
        "default recipe as the app; with a session file: learn this instead of the session's network)",
    )
    g.add_argument(
        "--score",
        default=None,
        choices=choices(SCORES),
        help=f"structure score (default {R.score}, the default recipe)",
    )
    g.add_argument(
        "--params",
        default=None,
        choices=choices(ESTIMATORS),
        help=f"CPT estimator (default {R.params}, pseudo-count 1, the default recipe as the app)",
    )
    g.add_argument(
        "--kdb-k",
        type=int_at_least(0, 64),
        default=2,
        metavar="K",
        help="feature parents per feature for kdb (default 2, as the app)",
    )
    r = p.add_argument_group("report settings")
    r.add_argument(
        "--segment",
        metavar="KIND:u,v[,w]",
        help="add a segment comparison, e.g. single-arc:crime,education-spending",
    )
    r.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="an app setting, e.g. --set kernel_rows=200 --set clu_algorithm=spectral "
        "--set imp_test=0.1,0.5 (repeatable)",
    )
    add_quiet(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_report)
