"""Subcommand ``learn``: learn a structure from a CSV, fit its CPTs, save the model with its CPTs (BIF,
XMLBIF, Hugin NET, XDSL or bnfk JSON, by the extension of ``-o``); with ``--forbid`` / ``--require`` the
structure honours forbidden and required arcs, with ``--bootstrap B`` the result also reports every arc's
bootstrap strength and direction (:mod:`bnfk_core.learning.bootstrap`)."""

from __future__ import annotations

from ..data.files import atomic_path
from ..errors import BnfkError
from ..registry import ESTIMATORS, LEARNERS, SCORES
from .chunks import in_chunks
from .common import (
    add_data_options,
    add_hidden_alias,
    add_missing_data_option,
    add_numbers_option,
    add_quiet,
    add_streaming_options,
    check_output,
    float_in,
    guard_learning_width,
    input_files,
    int_at_least,
    progress,
    read_data,
    resolve_numbers,
    seed,
    split_list,
)
from .kgv import add_kgv_options, binning_report, kgv_options
from .names import choices

__all__ = ["register"]


def _cmd_learn(args) -> dict:
    from ..learning.knowledge import parse_arcs
    from ..learning.recipe import DEFAULT_RECIPE, Recipe
    from ..network.formats import MODEL_EXTENSIONS, format_of, write_model

    ext = check_output(args.output, MODEL_EXTENSIONS, "a model", input_files(args))
    resolve_numbers(args, _discrete_options(args, ext))
    if args.numbers == "keep":
        return _learn_hybrid(args, ext)
    args.structure = args.structure or DEFAULT_RECIPE.structure
    args.params = args.params or DEFAULT_RECIPE.params
    forbid, require = parse_arcs(args.forbid, "--forbid"), parse_arcs(args.require, "--require")
    guard_learning_width(args.data, args, args.structure)
    if args.structure_file and (args.engine == "dask" or args.chunksize):
        raise BnfkError("--structure-file fits a table held in memory; leave out --chunksize and --engine.")
    if args.class_column is None and LEARNERS[args.structure].needs_class:
        raise BnfkError(f"Method '{args.structure}' needs --class-column.")
    recipe = Recipe(
        structure=args.structure,
        score=args.score,
        params=args.params,
        missing_data=args.missing_data,
        pseudo_count=args.pseudo_count,
        max_parents=args.max_parents,
        k=args.kdb_k,
        seed=args.seed,
        ess=args.ess,
        forbid=tuple(forbid),
        require=tuple(require),
        budget=args.budget,
    ).check()
    if args.engine == "dask":  # the counting pass and every EM E-step on the cluster's workers
        from ..data.runners import runner_for

        with runner_for("dask", scheduler=args.scheduler, error=BnfkError) as runner:
            in_chunks(args, "learn")
            data = _read_streaming(args, runner)
            res, model = _learn(args, data, recipe, runner)
    elif in_chunks(args, "learn"):  # asked for, or DATA too big to hold within --max-memory
        data = _read_streaming(args)
        res, model = _learn(args, data, recipe, None)
    else:
        if args.scheduler:
            raise BnfkError("--scheduler needs --engine dask.")
        data = read_data(args.data, args)
        if args.structure_file:
            return _given_discrete(args, data, recipe)
        res, model = _learn(args, data, recipe, None)
    strength = _bootstrap(args, data, recipe) if args.bootstrap else None
    model.fit_info["recipe"] = recipe.to_dict()
    if data.class_column is not None:  # not a node: the JSON model file's "fit" says which column it was
        model.fit_info["class_column"] = data.class_column
    with atomic_path(args.output) as tmp:
        write_model(model, tmp)
    return {
        "output": args.output,
        "format": format_of(args.output),
        "recipe": recipe.to_dict(),
        "method": res.method,
        "score_name": res.score_name,
        "score": res.score,
        "arcs": [list(a) for a in res.dag.sorted_arcs()],
        "n_arcs": res.dag.n_arcs,
        "parameters": model.parameter_count(),
        "params": args.params,
        "rows": data.n_rows,
        "n_rows_used": res.n_rows_used,
        "class_column": data.class_column,
        "missing_data": model.fit_info.get("missing_data", "complete-rows"),
        "em_iterations": model.fit_info.get("em_iterations", 0),
        "notes": list(data.notes) + list(res.notes) + ([args.chunked_note] if args.chunked_note else []),
        "searched_raw": res.searched_raw,
        "bins": binning_report(data, res.searched_raw),
        "seconds": res.seconds,
        "forbid": [list(a) for a in recipe.forbid],
        "require": [list(a) for a in recipe.require],
        "arc_strength": None if strength is None else strength.to_records(),
        "bootstrap": None
        if strength is None
        else {"replicates": strength.replicates, "seed": strength.seed, "seconds": strength.seconds},
    }


def _discrete_options(args, ext: str) -> dict:
    """The options of ``learn`` that need a discrete table (``--numbers auto`` then bins), each in force or
    not."""
    from ..hybrid import HYBRID_LEARN_SCORES
    from .hybrid import HYBRID_LEARNERS

    return {
        f"a {ext} model file": ext != ".json",
        "--chunksize": bool(args.chunksize),
        "--engine dask": args.engine == "dask",
        "--class-column": args.class_column is not None,
        f"--structure {args.structure}": bool(args.structure)
        and not args.structure_file
        and args.structure not in HYBRID_LEARNERS,
        f"--score {args.score}": args.score not in HYBRID_LEARN_SCORES,
        **_discrete_search_options(args),
    }


def _discrete_search_options(args) -> dict:
    """The options only the discrete searches take (``--numbers keep`` refuses them), each given or not."""
    return {
        "--forbid": bool(args.forbid),
        "--require": bool(args.require),
        "--budget": args.budget is not None,
        "--bootstrap": bool(args.bootstrap),
        "the KGV's own options (--kappa, --sigma, --kgv-kernel, --kgv-bin-numbers, --kgv-markov-blanket)": (
            args.kappa is not None
            or args.sigma is not None
            or args.kgv_kernel != "gaussian"
            or bool(args.kgv_bin_numbers)
            or bool(getattr(args, "kgv_markov_blanket", False))
        ),
    }


def _learn_hybrid(args, ext: str) -> dict:
    """``learn --numbers keep``: the CLG network of the mixed table, written as a hybrid JSON model."""
    from ..hybrid import write_hybrid
    from .hybrid import learn_hybrid

    if ext != ".json":
        raise BnfkError(
            "A hybrid network (--numbers keep) is written as a .json model file "
            "(BIF, XMLBIF, NET and XDSL hold discrete networks)."
        )
    if args.engine == "dask" or args.chunksize:
        raise BnfkError("--numbers keep reads a table held in memory; leave out --chunksize and --engine.")
    given = [name for name, on in _discrete_search_options(args).items() if on]
    if given:
        raise BnfkError(
            f"--numbers keep learns a hybrid network, which does not take {given[0]}; use --numbers bin."
        )
    args.structure = args.structure or "hc"
    args.params = args.params or "ml"
    out, model = learn_hybrid(args, progress(args))
    with atomic_path(args.output) as tmp:
        write_hybrid(model, tmp)
    return {"output": args.output, "format": "json", **out}


def _given_discrete(args, data, recipe) -> dict:
    """``learn --structure-file`` on a categorical table: the given DAG's CPTs by the recipe."""
    from ..network.formats import write_model
    from .hybrid import given_discrete

    out, model = given_discrete(args, data, recipe)
    model.fit_info["recipe"] = recipe.to_dict()
    with atomic_path(args.output) as tmp:
        write_model(model, tmp)
    from ..network.formats import format_of

    return {"output": args.output, "format": format_of(args.output), "recipe": recipe.to_dict(), **out}


def _bootstrap(args, data, recipe):
    """The bootstrap arc strength of ``recipe`` on ``data`` (``--bootstrap`` replicates, ``--bootstrap-seed``,
    default ``--seed``)."""
    from ..learning.bootstrap import arc_strength

    at = args.seed if args.bootstrap_seed is None else args.bootstrap_seed
    return arc_strength(data, recipe, replicates=args.bootstrap, seed=at, progress=progress(args))


def _learn(args, data, recipe, runner):
    """(result, model) of the network over the feature columns: the class column is never a node.  The
    methods that need the class (naive Bayes, TAN, KDB) learn with it, then the class and its arcs are dropped
    and the CPTs fitted on the features, as :func:`bnfk_core.learning.recipe.learn_recipe` does for every
    face; the others learn on the feature columns only."""
    from ..learning.recipe import learn_recipe

    learned = learn_recipe(
        data,
        recipe,
        progress=progress(args),
        runner=runner,
        score_options={k: v for k, v in kgv_options(args).items() if SCORES[args.score].takes(k)} or None,
    )
    return learned.result, learned.model


def _read_streaming(args, runner=None):
    """The file's distinct rows with multiplicities, read in chunks (``bnfk_core.data.stream``), on ``runner``
    when given (else on the runner of ``--engine``)."""
    from ..data.stream import DEFAULT_CHUNKSIZE, read_counts
    from ..serving.session_files import is_session_file

    if is_session_file(args.data):
        raise BnfkError("--chunksize and --engine read a CSV or Parquet file, not a session file.")
    return read_counts(
        args.data,
        chunksize=args.chunksize or DEFAULT_CHUNKSIZE,
        class_column=args.class_column,
        missing_policy=args.missing_policy,
        na_values=args.na_values,
        discretize_bins=args.discretize,
        max_levels=args.max_levels,
        drop_columns=split_list(args.drop_columns),
        engine=args.engine,
        scheduler=args.scheduler,
        runner=runner,
    )


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "learn": "learn a Bayesian network from a CSV and save it (.bif, .xmlbif, .net, .xdsl or .json)",
}


def register(sub) -> None:
    from ..learning.members import MAX_BOOTSTRAP
    from ..learning.recipe import DEFAULT_RECIPE as R

    p = sub.add_parser("learn", help=SUBCOMMANDS["learn"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--structure",
        "--method",
        dest="structure",
        default=None,
        choices=choices(LEARNERS),
        help=f"structure-learning method (default {R.structure}, the default recipe; hc with --numbers keep, "
        "which learns with hc or hc-greedy)",
    )
    p.add_argument(
        "--structure-file",
        metavar="S.json",
        default=None,
        help='fit this DAG instead of learning one: {"nodes": [...], "arcs": [[u, v], ...]} or a model file',
    )
    add_numbers_option(p, "a conditional linear Gaussian network written as hybrid JSON")
    p.add_argument(
        "--score",
        default=R.score,
        choices=choices(SCORES),
        help=f"score optimised by the search (default {R.score})",
    )
    p.add_argument(
        "--kdb-k",
        type=int_at_least(0, 64),
        default=R.k,
        metavar="K",
        help=f"feature parents per feature for kdb (default {R.k}, the default recipe)",
    )
    add_hidden_alias(p, "--k", "kdb_k", type=int_at_least(0, 64))
    readers = ", ".join(n for n, s in LEARNERS.items() if s.applies("max_parents"))
    p.add_argument("--max-parents", type=int_at_least(0), default=None, help=f"in-degree bound for {readers}")
    budgeted = ", ".join(n for n, s in LEARNERS.items() if s.applies("budget"))
    p.add_argument(
        "--budget",
        type=int_at_least(1, 10**12),
        default=None,
        metavar="SCORES",
        help=f"the most family scores the search of {budgeted} computes before it stops exploring (default: "
        "no bound; deterministic: one seed and budget give one network)",
    )
    p.add_argument(
        "--ess",
        type=float_in(0, 1e6, low_open=True),
        default=1.0,
        help="equivalent sample size for bdeu (default 1)",
    )
    p.add_argument(
        "--params",
        choices=choices(ESTIMATORS),
        default=None,
        help=f"CPT estimator (default {R.params}: likelihood-equivalent, so equivalent structures give "
        "one Fisher kernel; ml with --numbers keep, so the printed BIC is the returned network's)",
    )
    p.add_argument(
        "--pseudo-count",
        type=float_in(0, 1e6, low_open=True),
        default=1.0,
        help="pseudo-count of smoothed/bdeu (default 1)",
    )
    add_kgv_options(p, blanket=True)
    takers = ", ".join(n for n, s in LEARNERS.items() if s.applies("forbid"))
    p.add_argument(
        "--forbid",
        default=None,
        metavar="'A->B,...'",
        help=f"arcs the network must not hold (a direction: B->A stays allowed); honoured by {takers}",
    )
    p.add_argument(
        "--require",
        default=None,
        metavar="'C->D,...'",
        help=f"arcs the network must hold (acyclic); honoured by {takers}",
    )
    p.add_argument(
        "--bootstrap",
        type=int_at_least(1, MAX_BOOTSTRAP),
        default=None,
        metavar="B",
        help="also learn B networks on tables resampled with replacement and report every arc's strength "
        "(share of the networks holding it) and direction in the JSON's arc_strength",
    )
    p.add_argument(
        "--bootstrap-seed",
        type=seed,
        default=None,
        metavar="S",
        help="seed of the bootstrap's resampling (default --seed)",
    )
    add_missing_data_option(p, R.missing_data)
    add_quiet(p)
    p.add_argument("-o", "--output", required=True, metavar="MODEL.bif|.xmlbif|.net|.xdsl|.json")
    add_data_options(p)
    add_streaming_options(
        p,
        "read DATA (CSV or .parquet) ROWS rows at a time into its distinct rows with counts: "
        "the same model, memory bounded by the distinct rows instead of the file",
        "where the chunks are counted: this process (default) or a Dask cluster",
    )
    p.set_defaults(func=_cmd_learn)
