"""Subcommands ``prototypes`` and ``summarize-benchmark`` (paper, Algorithm 1 and the data-summarization
experiment).  See :mod:`bnfk_core.analyses.prototypes.selection`.

    python -m bnfk_core prototypes DATA.csv (--model M.bif | --structure hc|tan|kdb) --k K
        [--criterion mmd|chi2|random] [--n-init R] [--seed S]
    # the rows read in chunks (bnfk_core.analyses.prototypes.rowwise)
    python -m bnfk_core prototypes BIG.csv --model M.bif --k K --chunksize ROWS
    python -m bnfk_core summarize-benchmark DATA.csv --k K --structure hc|tan|kdb [--class-column C]
        [--discretize B] [--test-fraction 0.5] [--random-draws R] [--criteria mmd,chi2,random] --seed S
"""

from __future__ import annotations

import time

from ..data.files import atomic_path
from ..errors import BnfkError
from ..registry import CRITERIA, LEARNERS
from .chunks import in_chunks
from .common import (
    add_data_options,
    add_quiet,
    add_streaming_options,
    check_output,
    input_files,
    int_at_least,
    progress,
    read_data,
    read_model_file,
    split_list,
)

__all__ = ["register"]


def _cmd_prototypes(args) -> dict:
    from ..analyses.prototypes.hybrid import HYBRID_CRITERIA
    from ..analyses.prototypes.selection import PrototypeError, select_prototypes
    from ..learning.recipe import Recipe, learn_recipe
    from .hybrid import HYBRID_LEARNERS
    from .hybrid_kernel import hybrid_prototypes, numbers_kept

    if bool(args.model) == bool(args.structure):
        raise PrototypeError("Give exactly one of --model M.bif or --structure hc|tan|kdb.")
    t0 = time.perf_counter()
    discrete = {
        f"--criterion {args.criterion}": args.criterion not in HYBRID_CRITERIA,
        f"--structure {args.structure}": bool(args.structure) and args.structure not in HYBRID_LEARNERS,
    }
    if numbers_kept(
        args, discrete, getattr(args, "class_column", None)
    ):  # numbers stay numbers: greedy MMD on a hybrid (CLG) network's Fisher features
        return hybrid_prototypes(args, t0)
    if args.output:
        check_output(args.output, (".csv",), "the selected rows", input_files(args))
    if in_chunks(args, "prototypes") and (
        args.chunked_note is None or (args.model and CRITERIA[args.criterion].streams)
    ):
        return _prototypes_chunked(args, t0)  # asked for, or DATA too big to hold (with a model, mmd/random)
    if args.model:
        model = read_model_file(args.model)
        data = read_data(args.data, args, model=model)
        data = model.align(data)
        source = args.model
    else:
        data = read_data(args.data, args)
        needs_class = LEARNERS[args.structure].needs_class
        if needs_class and args.class_column is None:
            raise PrototypeError(f"Structure '{args.structure}' needs --class-column.")
        recipe = Recipe(
            structure=args.structure,
            score="bic",
            params="smoothed",
            missing_data="complete-rows",
            k=args.kdb_k,
            seed=args.seed,
        )
        model = learn_recipe(data, recipe, with_class=True).model
        source = f"{args.structure} learned on {data.source}"
    r = select_prototypes(
        model, data, args.k, args.criterion, n_init=args.n_init, seed=args.seed, progress=progress(args)
    )
    out = r.to_dict()
    out.update(
        {
            "model": source,
            "rows": data.n_rows,
            "seconds": time.perf_counter() - t0,
            "seconds_greedy": r.seconds,
        }
    )
    if args.output:
        with atomic_path(args.output) as tmp:
            data.subset(r.indices).frame.to_csv(tmp, index=False)
        out["output"] = args.output
    return out


def _prototypes_chunked(args, t0) -> dict:
    """``--chunksize``: greedy MMD over the complete rows of a file read in chunks, mu from all rows."""
    import pandas as pd

    from ..analyses.prototypes.rowwise import chunked_prototypes
    from ..analyses.prototypes.selection import PrototypeError
    from ..serving.session_files import is_session_file
    from .chunks import read_chunks

    if not args.model:
        raise PrototypeError(
            "--chunksize needs --model M.bif (a structure is learned on data held in memory)."
        )
    if not CRITERIA[args.criterion].streams:
        raise PrototypeError(
            f"--criterion {args.criterion} is not available with --chunksize; use "
            f"{' or '.join(CRITERIA.names(streams=True))}."
        )
    model = read_model_file(args.model)
    if args.engine == "dask":
        if is_session_file(args.data):
            raise PrototypeError(
                f"--engine dask reads a CSV or Parquet file, not a session file ({args.data})."
            )
        r = chunked_prototypes(
            model,
            args.data,
            args.k,
            args.criterion,
            n_init=args.n_init,
            seed=args.seed,
            progress=progress(args),
            engine="dask",
            scheduler=args.scheduler,
            class_column=args.class_column,
            missing_policy=args.missing_policy,
            na_values=args.na_values,
            discretize_bins=args.discretize,
            max_levels=args.max_levels,
            drop_columns=split_list(args.drop_columns),
        )
        notes = []
    else:
        chunks = read_chunks(args.data, args, model)
        r = chunked_prototypes(
            model, chunks, args.k, args.criterion, n_init=args.n_init, seed=args.seed, progress=progress(args)
        )
        notes = list(chunks.plan.notes)
    out = r.to_dict()
    out.update(
        {
            "model": args.model,
            "chunksize": args.chunksize,
            "engine": args.engine,
            "seconds": time.perf_counter() - t0,
            "seconds_greedy": r.seconds,
            "notes": notes + ([args.chunked_note] if args.chunked_note else []),
        }
    )
    if args.output:
        frame = pd.DataFrame(
            {v: [model.states[j][c] for c in r.codes[:, j]] for j, v in enumerate(model.variables)}
        )
        with atomic_path(args.output) as tmp:
            frame.to_csv(tmp, index=False)
        out["output"] = args.output
    return out


def _cmd_summarize(args) -> dict:
    from ..analyses.prototypes.selection import summarize_benchmark

    criteria = split_list(args.criteria)
    if not criteria:
        raise BnfkError("--criteria lists no criterion; use e.g. mmd,chi2,random.")
    data = read_data(args.data, args)
    return summarize_benchmark(
        data,
        args.k,
        args.structure,
        class_column=args.class_column,
        test_fraction=args.test_fraction,
        random_draws=args.random_draws,
        criteria=criteria,
        seed=args.seed,
        kdb_k=args.kdb_k,
        progress=progress(args),
    )


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "prototypes": "choose k representative rows (greedy MMD / chi-square / random)",
    "summarize-benchmark": "paper's data-summarization experiment for one k (held-out NLL, error, log loss)",
}


def register(sub) -> None:
    from ..analyses.prototypes.members import SUMMARIZATION_STRUCTURES
    from ..registry import CRITERIA
    from .common import add_numbers_option

    p = sub.add_parser("prototypes", help=SUBCOMMANDS["prototypes"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--model", metavar="M.bif", help="a fitted model (.bif, .xmlbif, .net, .xdsl or .json)")
    p.add_argument(
        "--structure",
        choices=SUMMARIZATION_STRUCTURES,
        help="learn this structure on DATA (BIC, pseudo-count 1)",
    )
    p.add_argument("--k", type=int, required=True, help="subset size")
    p.add_argument("--criterion", choices=tuple(CRITERIA), default="mmd")
    p.add_argument(
        "--n-init",
        type=int_at_least(1, 1_000_000),
        default=100,
        metavar="R",
        help="start from the best of R random subsets (default 100)",
    )
    p.add_argument(
        "--kdb-k",
        type=int_at_least(0, 64),
        default=3,
        metavar="K",
        help="feature parents per feature for kdb (default 3)",
    )
    add_quiet(p)
    p.add_argument("-o", "--output", metavar="ROWS.csv", help="also write the selected rows as CSV")
    add_numbers_option(p, "greedy MMD (--criterion mmd or random; --structure hc)")
    add_data_options(p)
    add_streaming_options(
        p,
        "read DATA (CSV or .parquet) ROWS rows at a time: greedy MMD (or random) over the "
        "complete rows, the mean embedding from all rows, without holding the file or its "
        "features (needs --model)",
        "where the pass over the file runs: this process (default) or a Dask cluster (the greedy "
        "swaps stay here)",
    )
    p.set_defaults(func=_cmd_prototypes)

    p = sub.add_parser("summarize-benchmark", help=SUBCOMMANDS["summarize-benchmark"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--k", type=int, required=True, help="subset size")
    p.add_argument("--structure", choices=SUMMARIZATION_STRUCTURES, required=True)
    p.add_argument("--test-fraction", type=float, default=0.5)
    p.add_argument(
        "--random-draws",
        type=int_at_least(1, 10_000_000),
        default=1000,
        metavar="R",
        help="random subsets for the baseline and the greedy starting points (default 1000)",
    )
    p.add_argument("--criteria", default="mmd,chi2,random", metavar="LIST")
    p.add_argument(
        "--kdb-k",
        type=int_at_least(0, 64),
        default=3,
        metavar="K",
        help="feature parents per feature for kdb (default 3)",
    )
    add_quiet(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_summarize)
