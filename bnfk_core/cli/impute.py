"""CLI: ``impute-benchmark`` (thesis chapter 4) and ``impute`` (fill a CSV with a model)."""

from __future__ import annotations

import json
import os
import time

from ..analyses.impute.members import DEFAULT_IMPUTER, DEFAULT_STRUCTURE_MISSING, FILL_NUMERIC
from ..errors import BnfkError
from .chunks import in_chunks
from .common import (
    add_data_options,
    add_fisher_model_options,
    add_hidden_alias,
    add_missing_data_option,
    add_numbers_option,
    add_quiet,
    add_streaming_options,
    check_output,
    input_files,
    int_at_least,
    need_model,
    progress,
    read_data,
    read_model_file,
    read_session_file,
    resolve_numbers,
    split_list,
)
from .names import choices, feature_learners

__all__ = ["register"]


def _ratios(text: str, what: str) -> list[float]:
    out = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(float(part))
        except ValueError:
            raise BnfkError(f"--{what} must be numbers separated by commas, got '{part}'.") from None
    if not out:
        raise BnfkError(f"--{what} needs at least one ratio.")
    return out


#: the grid ``impute-benchmark`` runs unless told otherwise: one test ratio, three missing ratios, two repeats
#: (6 settings; about 5 s for the three default methods on a 2,000 x 37 table)
QUICK_GRID = {"test_ratio": "0.2", "missing_ratio": "0.1,0.3,0.5", "repeats": 2}
#: the thesis's grid (chapter 4): 5 test ratios x 5 missing ratios x 10 repeats (``--full-grid``)
FULL_GRID = {"test_ratio": "0.1,0.2,0.3,0.4,0.5", "missing_ratio": "0.1,0.2,0.3,0.4,0.5", "repeats": 10}


def _grid(args) -> tuple[list, list, int, str]:
    """(test ratios, missing ratios, repeats, a sentence naming the grid): the flags given, else the quick
    grid, or the thesis's with ``--full-grid``."""
    base = FULL_GRID if args.full_grid else QUICK_GRID
    trs = _ratios(args.test_ratio if args.test_ratio is not None else base["test_ratio"], "test-ratio")
    mrs = _ratios(
        args.missing_ratio if args.missing_ratio is not None else base["missing_ratio"], "missing-ratio"
    )
    repeats = args.repeats if args.repeats is not None else base["repeats"]
    methods = len(split_list(args.methods))
    note = (
        f"grid: {len(trs)} test ratio(s) x {len(mrs)} missing ratio(s) x {repeats} repeat(s) x {methods} "
        f"method(s) = {len(trs) * len(mrs) * repeats * methods} imputations"
    )
    if not args.full_grid:
        note += "; the thesis's grid (5 x 5 x 10) is --full-grid"
    return trs, mrs, repeats, note


def _benchmark_mixed(args) -> dict:
    """``impute-benchmark --numbers keep``: the mixed-table protocol of :mod:`bnfk_core.analyses.impute.mixed`
    (cells of the whole table hidden at each ``--missing-ratio``, NRMSE for numbers, accuracy for categories;
    the CLG network beside scikit-learn's imputers)."""
    from ..analyses.impute.mixed import MIXED_IMPUTERS, mixed_benchmark
    from .hybrid import read_mixed

    if args.test_ratio is not None or args.full_grid:
        raise BnfkError(
            "--numbers keep hides cells anywhere in the table; leave out --test-ratio and --full-grid."
        )
    if args.class_column is not None:
        raise BnfkError("--class-column is not taken with --numbers keep yet; drop it or use --numbers bin.")
    given = split_list(args.methods)
    methods = list(MIXED_IMPUTERS) if args.methods == _DISCRETE_DEFAULT_METHODS else given
    bad = [m for m in methods if m not in MIXED_IMPUTERS]
    if bad:
        raise BnfkError(
            f"With --numbers keep, --methods are from {', '.join(MIXED_IMPUTERS)}; '{bad[0][:40]}' is not."
        )
    ratios = _ratios(args.missing_ratio if args.missing_ratio is not None else "0.2", "missing-ratio")
    data = read_mixed(args.data, args)
    import warnings

    runs = []
    for r in ratios:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's IterativeImputer convergence warnings
            res = mixed_benchmark(data, methods, r, args.repeats or 1, args.seed, progress=progress(args))
        runs.append(res.to_dict())
    return {
        "data": os.path.basename(args.data),
        "numbers": "keep",
        "methods": {m: MIXED_IMPUTERS[m][1] for m in methods},
        "results": runs,
        "notes": list(data.notes),
    }


#: the discrete benchmark's default --methods (with --numbers keep: every mixed imputer)
_DISCRETE_DEFAULT_METHODS = "bn,mode,wknn"


def _cmd_benchmark(args) -> dict:
    import sys

    from ..analyses.impute.benchmark import benchmark

    resolve_numbers(args, {"--chunksize": bool(getattr(args, "chunksize", None))}, args.class_column)
    if args.numbers == "keep":
        return _benchmark_mixed(args)
    data = read_data(args.data, args)
    trs, mrs, repeats, note = _grid(args)
    if not args.quiet:
        sys.stderr.write(f"impute-benchmark: {note}\n")
    res = benchmark(
        data,
        args.methods,
        test_ratios=trs,
        missing_ratios=mrs,
        repeats=repeats,
        seed=args.seed,
        structure=args.structure,
        score=args.score,
        params=args.params,
        k=args.neighbors,
        include_class=args.include_class,
        progress=progress(args),
    )
    out = res.to_dict()
    out["data"] = os.path.basename(args.data)
    out["grid_note"] = note
    return out


def _table(path: str):
    """The file the data were read from, as written (a session's embedded CSV or sample file, or the rows it
    samples from a textbook network)."""
    from ..data.table import read_table
    from ..serving.session_files import SAMPLE_DIR, is_session_file

    if not is_session_file(path):
        return read_table(path)
    ref = read_session_file(path).ref
    if ref.content is not None:
        return read_table(ref.content, source=ref.name or "embedded.csv")
    if ref.textbook is not None:  # rows sampled from a textbook network: their text as a CSV would hold it
        from ..network.textbook import textbook_sample

        rows = textbook_sample(ref.textbook, ref.rows, ref.seed).frame.to_csv(index=False).encode("utf-8")
        return read_table(rows, source=f"{ref.textbook}.csv")
    with open(SAMPLE_DIR / "catalog.json", encoding="utf-8") as fh:
        return read_table(SAMPLE_DIR / json.load(fh)[ref.sample]["file"])


def _cmd_impute(args) -> dict:
    from ..analyses.impute.completion import complete_file, impute_with_model

    t0 = time.perf_counter()
    check_output(args.output, (".csv",), "the completed data", input_files(args))
    if args.probabilities:
        check_output(args.probabilities, (".csv",), "the probabilities", input_files(args))
    from ..hybrid import HYBRID_SCORES
    from ..serving.session_files import is_session_file
    from .hybrid import HYBRID_LEARNERS, impute_mixed, is_hybrid_model

    resolve_numbers(
        args,
        {
            "a session file": is_session_file(args.data),
            "--chunksize": bool(args.chunksize),
            "--engine dask": args.engine == "dask",
            "--class-column": args.class_column is not None,
            f"--method {args.method}": bool(args.method),
            f"--structure {args.structure}": bool(args.structure) and args.structure not in HYBRID_LEARNERS,
            f"--score {args.score}": bool(args.score) and args.score not in HYBRID_SCORES,
        },
    )
    if args.numbers == "keep" or (args.model is not None and is_hybrid_model(args.model)):
        return impute_mixed(args, t0)
    learned = {}
    if args.model is None and args.structure is None:  # the default recipe's network, as report learns it
        from ..learning.recipe import DEFAULT_RECIPE

        args.structure = DEFAULT_RECIPE.structure
    if args.model is not None:
        if args.method:
            raise BnfkError(
                "--method chooses how to learn from DATA: give it with --structure, not with --model."
            )
        model = read_model_file(need_model(args))
    else:
        _refuse_learning_in_chunks(args)
        from ..analyses.impute.methods import NETWORK_IMPUTERS

        method = _method(args)
        if method not in NETWORK_IMPUTERS:
            return _impute_with_method(args, method, t0)
        args.missing_data = NETWORK_IMPUTERS[method]
        model, learned = _learn_for_imputation(args)
        learned["learned"] = {"method": method, **learned["learned"]}
    if in_chunks(args, "impute"):  # asked for, or DATA too big to hold within --max-memory
        return _impute_in_blocks(args, model)
    data = read_data(args.data, args, model=model)  # the model's columns and states (numbers -> its bins)
    res = impute_with_model(model, data)
    done = complete_file(res, _table(args.data), fill_numeric=args.fill_numeric)
    done.write(args.output, args.probabilities)
    return {
        "output": args.output,
        "probabilities": args.probabilities,
        "rows": int(data.n_rows),
        "imputed_cells": int(res.imputed.sum()),
        "imputed_per_column": {
            v: int(res.imputed[:, i].sum()) for i, v in enumerate(model.variables) if res.imputed[:, i].any()
        },
        "fill_numeric": done.fill_numeric,
        **learned,
        "notes": list(data.notes) + done.notes,
        "seconds": time.perf_counter() - t0,
    }


def _refuse_learning_in_chunks(args) -> None:
    """A network learned from DATA reads the whole file: refused with ``--chunksize`` or ``--engine``."""
    if args.chunksize or args.engine == "dask":
        raise BnfkError(
            "Without --model, impute learns its network from the whole file; with --chunksize or --engine "
            "learn first ('learn --chunksize'), then impute with --model."
        )


def _method(args) -> str:
    """The imputer of ``impute --structure``: ``--method`` or the default; ``--missing-data`` other than
    structural EM picks the single network learned that way (as before ``--method`` existed)."""
    from ..analyses.impute.methods import DEFAULT_IMPUTER, DEFAULT_STRUCTURE_MISSING, NETWORK_IMPUTERS
    from ..registry import IMPUTERS

    if not args.method:
        if args.missing_data == DEFAULT_STRUCTURE_MISSING:
            return DEFAULT_IMPUTER
        return {how: m for m, how in NETWORK_IMPUTERS.items()}[args.missing_data]
    m = args.method.strip().lower()
    if m not in IMPUTERS:
        raise BnfkError(f"Unknown imputation method '{args.method[:80]}'; choose from {', '.join(IMPUTERS)}.")
    if m not in NETWORK_IMPUTERS and args.missing_data != DEFAULT_STRUCTURE_MISSING:
        raise BnfkError(
            f"--missing-data applies to one network (--method {' or '.join(NETWORK_IMPUTERS)}), "
            f"not to --method {m}."
        )
    return m


def _impute_with_method(args, method: str, t0: float) -> dict:
    """``impute --structure S --method M``: a registered imputer that learns from DATA fills it."""
    from ..analyses.impute.completion import complete_file
    from ..analyses.impute.methods import impute_table

    _refuse_learning_in_chunks(args)
    data = read_data(args.data, args).without_class()  # the class column is never a node: kept as it is
    res = impute_table(data, method, args.structure, score=args.score, params=args.params, seed=args.seed)
    done = complete_file(res, _table(args.data), fill_numeric=args.fill_numeric)
    done.write(args.output, args.probabilities)
    model = res.imputation.model
    r = res.imputation.recipe
    learned = {
        "method": method,
        "recipe": r.to_dict(),
        "structure": r.structure,
        "score": r.score,
        "params": r.params,
        "arcs": [list(a) for a in model.dag.sorted_arcs()] if model is not None else [],
        "notes": list(res.imputation.notes),
    }
    return {
        "output": args.output,
        "probabilities": args.probabilities,
        "rows": int(data.n_rows),
        "imputed_cells": int(res.imputed.sum()),
        "imputed_per_column": {
            v: int(res.imputed[:, i].sum()) for i, v in enumerate(data.variables) if res.imputed[:, i].any()
        },
        "fill_numeric": done.fill_numeric,
        "learned": learned,
        "notes": list(data.notes) + done.notes,
        "seconds": time.perf_counter() - t0,
    }


def _learn_for_imputation(args):
    """``impute --structure S``: the network learned from DATA itself (every row, CPTs by EM) over its feature
    columns (the class column is never a node; the file keeps it as it is)."""
    from ..learning.recipe import learn_recipe, recipe_of

    data = read_data(args.data, args).without_class()
    recipe = recipe_of(
        structure=args.structure,
        missing_data=args.missing_data,
        score=args.score,
        params=args.params,
        seed=args.seed,
    )
    learned = learn_recipe(data, recipe, with_class=True, progress=progress(args))
    res, model = learned.result, learned.model
    r = model.fit_info["recipe"]
    return model, {
        "learned": {
            "recipe": r,
            "structure": args.structure,
            "missing_data": args.missing_data,
            "score": r["score"],
            "params": r["params"],
            "arcs": [list(a) for a in res.dag.sorted_arcs()],
            "n_rows_used": res.n_rows_used,
            "em_iterations": model.fit_info.get("em_iterations", 0),
            "notes": list(res.notes),
        }
    }


def _impute_in_blocks(args, model) -> dict:
    """``impute --chunksize``: the file read and written a block of rows at a time (same output file)."""
    from ..analyses.impute.stream import DEFAULT_BLOCK_ROWS, impute_file
    from ..serving.session_files import is_session_file

    if is_session_file(args.data):
        raise BnfkError("--chunksize and --engine read a CSV file, not a session file.")
    res = impute_file(
        model,
        args.data,
        args.output,
        probabilities=args.probabilities,
        fill_numeric=args.fill_numeric,
        block_rows=args.chunksize or DEFAULT_BLOCK_ROWS,
        class_column=args.class_column,
        missing_policy=args.missing_policy,
        na_values=args.na_values,
        discretize_bins=args.discretize,
        max_levels=args.max_levels,
        drop_columns=split_list(args.drop_columns),
        engine=args.engine,
        scheduler=args.scheduler,
        progress=progress(args),
    )
    if getattr(args, "chunked_note", None):
        res["notes"] = list(res["notes"]) + [args.chunked_note]
    return {"output": args.output, "probabilities": args.probabilities, **res}


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "impute-benchmark": (
        "hide cells at random (thesis 4.2.1) and score imputation methods (JSON; a quick grid, "
        "--full-grid for the thesis's)"
    ),
    "impute": (
        "fill the missing cells of a CSV with a model's most probable values; every other cell, the column "
        "order and the row order stay as in the file"
    ),
}


def register(sub) -> None:
    from .. import registry
    from ..learning.recipe import DEFAULT_RECIPE as R
    from ..registry import IMPUTERS

    p = sub.add_parser("impute-benchmark", help=SUBCOMMANDS["impute-benchmark"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--methods",
        default=_DISCRETE_DEFAULT_METHODS,
        metavar="M,M",
        help=f"comma-separated, from {','.join(choices(IMPUTERS))} (default bn,mode,wknn); with --numbers "
        "keep from clg,mean-mode,iterative,knn,forest (default all)",
    )
    p.add_argument(
        "--test-ratio",
        default=None,
        metavar="R[,R...]",
        help=f"fractions of rows in the test part (default {QUICK_GRID['test_ratio']}; "
        "0.1..0.5 with --full-grid)",
    )
    p.add_argument(
        "--missing-ratio",
        default=None,
        metavar="R[,R...]",
        help=f"fractions of test cells hidden (default {QUICK_GRID['missing_ratio']}; 0.1..0.5 with "
        "--full-grid)",
    )
    p.add_argument(
        "--repeats",
        type=int_at_least(1, 10_000),
        default=None,
        help=f"runs per setting (default {QUICK_GRID['repeats']}; 10 with --full-grid)",
    )
    p.add_argument(
        "--full-grid",
        action="store_true",
        help="the thesis's grid: test ratios 0.1..0.5 x missing ratios 0.1..0.5 x 10 repeats (250 "
        "settings, minutes; the flags above still override it)",
    )
    add_fisher_model_options(
        p,
        structure_default="auto",
        structures=("auto", *feature_learners()),
        title="the BN imputer's network (auto: exact up to 20 variables, else hc; the thesis's protocol)",
        with_model=False,
        score_default="qnml",
        params_default="cnml",
    )
    p.add_argument(
        "--neighbors",
        type=int_at_least(1),
        default=3,
        metavar="K",
        help="neighbours of wknn / fisher-knn (default 3)",
    )
    add_hidden_alias(p, "--k", "neighbors", type=int_at_least(1))
    p.add_argument(
        "--include-class",
        action="store_true",
        help="impute the class column too (default: it is dropped, as in the thesis)",
    )
    add_numbers_option(
        p,
        "cells hidden anywhere in the mixed table at each --missing-ratio (default 0.2), NRMSE for numbers "
        "and accuracy for categories, the CLG network beside scikit-learn's IterativeImputer, KNNImputer, "
        "a random-forest IterativeImputer and mean/mode",
        default="bin",  # the thesis's benchmark protocol bins, as the published protocols do
    )
    add_quiet(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_benchmark)

    p = sub.add_parser("impute", help=SUBCOMMANDS["impute"])
    p.add_argument("data", metavar="DATA.csv")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--model",
        metavar="M.bif|M.json",
        help="impute with this fitted network (default: the session's, when DATA is a session file)",
    )
    g.add_argument(
        "--structure",
        choices=feature_learners(),
        metavar="METHOD",
        help="learn the network from DATA first (one call): "
        + ", ".join(feature_learners())
        + f" (default {R.structure}, the default recipe, when --model is left out too)",
    )
    p.add_argument(
        "--score",
        default=None,
        choices=choices(registry.SCORES),
        help=f"score of the network learned without --model (default {R.score}, the default recipe)",
    )
    p.add_argument(
        "--params",
        default=None,
        choices=choices(registry.ESTIMATORS),
        help=f"CPT estimator of the network learned without --model (default {R.params}, the default recipe)",
    )
    add_missing_data_option(p, DEFAULT_STRUCTURE_MISSING)
    add_numbers_option(
        p,
        "missing numbers filled with their conditional mean and categories with their most probable state "
        "under a conditional linear Gaussian network (--model M.json, or learned from DATA: hc, BIC, "
        "structural EM)",
    )
    p.add_argument(
        "--method",
        metavar="M",
        help=f"without --model: the imputer, from {', '.join(choices(IMPUTERS))} (default "
        f"{DEFAULT_IMPUTER}; bn-em is one structural-EM network, the fast option)",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="COMPLETED.csv",
        help="the file with only its missing model cells filled (written atomically)",
    )
    p.add_argument(
        "--probabilities",
        metavar="P.csv",
        help="also write one line per (row, file line, column, state) with its probability",
    )
    p.add_argument(
        "--fill-numeric",
        choices=FILL_NUMERIC,
        default="median",
        help="what a filled cell of a discretized numeric column holds: the median of the file's "
        "observed values in the most probable bin (default; always a value of the column) or "
        "the bin's label such as [0.1, 2.3)",
    )
    add_quiet(p)
    add_data_options(p)
    add_streaming_options(
        p,
        "read and write DATA ROWS rows at a time (the same completed file, memory for "
        "one block of rows instead of the whole file)",
        "where the blocks are imputed: this process (default) or a Dask cluster",
    )
    p.set_defaults(func=_cmd_impute)
