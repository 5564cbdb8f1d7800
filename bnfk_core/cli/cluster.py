"""Subcommands ``cluster`` and ``classify`` (thesis ch. 5 and App. D) on top of
:mod:`bnfk_core.analyses.cluster.clustering`."""

from __future__ import annotations

import sys
import warnings

from ..analyses.cluster.members import SHIFTS, TRANSFORMS
from ..errors import BnfkError
from ..kernels.members import SCALED_HAMMING
from ..registry import CLASSIFIERS, CLUSTERERS, KERNELS
from .common import (
    add_data_options,
    add_fisher_model_options,
    add_hidden_alias,
    add_max_memory,
    add_quiet,
    add_streaming_options,
    float_in,
    int_at_least,
    progress,
    read_data,
    read_model_file,
    split_list,
    warning_line,
)
from .names import choices

__all__ = ["register"]


def _model(args):
    return read_model_file(args.model) if args.model else None


def _read_for_cluster(args, runner=None):
    """(the data, how it was read, the note saying why): in chunks into state codes when ``--chunksize`` is
    given or the file is too big to read whole within ``--max-memory`` (decided from its size before reading,
    :mod:`bnfk_core.analyses.cluster.stream`), on the partitions of ``runner`` (``--engine dask``) when given,
    else whole as every command reads a file."""
    from ..analyses.cluster.stream import read_codes, reading_note, reads_in_chunks
    from ..serving.session_files import is_session_file

    path = args.data
    if is_session_file(path):
        if args.chunksize is not None or runner is not None:
            raise BnfkError(
                f"--chunksize and --engine dask read a CSV or Parquet file, not a session file ({path})."
            )
        return read_data(path, args), "whole", None
    chunked = args.chunksize is not None or runner is not None or reads_in_chunks(path)
    note = (
        "read on the Dask cluster's partitions into state codes (--engine dask)."
        if runner is not None
        else f"read in chunks of {args.chunksize:,} rows into state codes (--chunksize)."
        if args.chunksize is not None
        else reading_note(path, chunked)
    )
    if not chunked:
        return read_data(path, args), "whole", note
    from ..data.stream import DEFAULT_CHUNKSIZE

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = read_codes(
            path,
            chunksize=args.chunksize or DEFAULT_CHUNKSIZE,
            class_column=args.label_column or args.class_column,
            missing_policy=args.missing_policy,
            discretize_bins=args.discretize,
            max_levels=args.max_levels,
            drop_columns=split_list(args.drop_columns),
            na_values=args.na_values,
            runner=runner,
        )
    for w in caught:
        warning_line(w.message)
    for n in data.notes:
        warning_line(n)
    return data, "dask" if runner is not None else "chunks", note


def _cmd_cluster(args) -> dict:
    from ..registry import CLUSTERERS
    from .hybrid_kernel import hybrid_cluster, hybrid_counterpart, numbers_kept

    spec = CLUSTERERS[args.algorithm]
    discrete = {
        f"--kernel {args.kernel}": args.kernel is not None and not hybrid_counterpart(args.kernel),
        f"--algorithm {args.algorithm}": spec.gram is None
        and (spec.features is not None or spec.run is not None),
    }
    if numbers_kept(
        args, discrete, args.label_column or args.class_column
    ):  # numbers stay numbers: the Fisher kernel of a hybrid (CLG) network
        return hybrid_cluster(args)
    args.kernel = args.kernel or SCALED_HAMMING
    model = _model(args)
    if args.engine == "dask":  # reading, the kernel's network and kmeans-features' passes on the workers
        from ..data.runners import runner_for
        from ..serving.session_files import is_session_file

        if is_session_file(args.data):
            raise BnfkError(f"--engine dask reads a CSV or Parquet file, not a session file ({args.data}).")
        with runner_for("dask", scheduler=args.scheduler, error=BnfkError) as runner:
            return _cluster(args, model, runner)
    if args.scheduler:
        raise BnfkError("--scheduler needs --engine dask.")
    return _cluster(args, model, None)


def _cluster(args, model, runner) -> dict:
    from ..analyses.cluster.clustering import run_clustering

    data, reading, note = _read_for_cluster(args, runner)
    if data.class_column is None and args.clusters is None:
        raise BnfkError("Give --clusters N or --label-column C (the number of labels is the default).")
    options = _alpha_of(args)
    out = run_clustering(
        data,
        args.kernel,
        args.algorithm,
        n_clusters=args.clusters,
        transform=args.transform,
        shift=args.shift,
        restarts=args.restarts,
        seed=args.seed,
        model=model,
        structure=args.structure,
        score=args.score,
        params=args.params,
        n_init=args.n_init,
        kernel_options=options,
        runner=runner,
    )
    if args.no_labels_out:
        out.pop("labels")
    return {
        "data": args.data,
        "rows": data.n_rows,
        "reading": reading,
        "engine": args.engine,
        **out,
        "notes": list(out.get("notes", [])) + ([note] if note else []),
    }


def _cmd_classify(args) -> dict:
    from ..analyses.cluster.clustering import classify

    model = _model(args)
    data = read_data(args.data, args)
    if data.class_column is None:
        raise BnfkError("classify needs --label-column C (the classes to predict).")
    res = classify(
        data,
        args.kernel,
        args.classifier,
        repeats=args.repeats,
        seed=args.seed,
        test_size=args.test_size,
        k=args.neighbors,
        C=args.C,
        neighbours=args.rank_by,
        structure=args.structure,
        score=args.score,
        params=args.params,
        model=model,
        progress=progress(args),
        kernel_options=_alpha_of(args),
    )
    out = res.to_dict()
    for note in out["notes"]:
        sys.stderr.write(f"warning: {note}\n")
    return {"data": args.data, "rows": data.n_rows, "label_column": data.class_column, **out}


def _kernel_option(p, default: str | None = SCALED_HAMMING) -> None:
    """``--kernel``; ``default`` None where the subcommand resolves it (to tell a kernel asked for from the
    default)."""
    p.add_argument("--kernel", choices=choices(KERNELS), default=default, help=f"default {SCALED_HAMMING}")


def _declared_alpha():
    """The kernels' ``alpha`` option as declared (the first kernel that takes one), and those kernels."""
    takers = [s for s in KERNELS.values() if s.takes("alpha")]
    return next(o for o in takers[0].options if o.name == "alpha"), [s.name for s in takers]


#: the declared alpha's default as the help shows it (tests/test_fisher_normalized.py checks it against
#: fisher_normalized.DEFAULT_ALPHA)
ALPHA_DEFAULT_TEXT = f"{_declared_alpha()[0].default:g}"


def _alpha_option(p, more: str = "") -> None:
    """``--alpha``: the power of the kernels that declare one, in their declared interval and with its
    default and help."""
    option, takers = _declared_alpha()
    a = option.allowed
    p.add_argument(
        "--alpha",
        type=float_in(
            a.low,
            a.high,
            low_open=a.closed in ("right", "neither"),
            high_open=a.closed in ("left", "neither"),
        ),
        default=None,
        help=f"{option.help}, of the {', '.join(takers)} kernel: {a.describe()} "
        f"(default {ALPHA_DEFAULT_TEXT}; other kernels ignore it)" + (f". {more}" if more else ""),
    )


def _alpha_of(args) -> dict:
    """``{"alpha": --alpha}`` for a kernel that takes it, else nothing (other kernels ignore the flag)."""
    return {"alpha": args.alpha} if args.alpha is not None and KERNELS[args.kernel].takes("alpha") else {}


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "cluster": (
        "cluster rows with a kernel (correlation or spectral clustering, thesis ch. 5; kernel k-means in "
        "feature space beyond the Gram limit)"
    ),
    "classify": "kernel kNN / SVM accuracy and log loss over seeded 80/20 splits (thesis App. D)",
}


def register(sub) -> None:
    from .common import add_numbers_option

    p = sub.add_parser(
        "cluster",
        help=SUBCOMMANDS["cluster"],
        description="Cluster the rows of DATA.csv with a kernel over the feature columns (the label "
        "column is never a feature) and score the clusters against the labels "
        "(ARI, AMI, V-measure) and by the kernel-distance silhouette.",
    )
    p.add_argument("data", metavar="DATA.csv")
    _kernel_option(p, None)  # None: scaled-hamming, or the hybrid Fisher kernel with --numbers keep
    p.add_argument(
        "--algorithm",
        choices=choices(CLUSTERERS),
        default="auto",
        help="auto (default): correlation clustering when the N x N Gram matrix and its work space fit "
        "--max-memory, else kmeans-features (kernel k-means on the explicit sparse feature map, "
        "linear memory; fisher, scaled-hamming and hamming kernels); with --kernel fisher-normalized "
        "ward (its measured default; kmeans-features beyond --max-memory); the JSON says which and why. "
        "lca: a latent class model with N classes (--restarts seeded EM starts), rows to their modal "
        "class; no kernel",
    )
    p.add_argument(
        "--n-init",
        type=int_at_least(1, 1000),
        default=3,
        help="seeded k-means++ starts of kmeans-features (default 3)",
    )
    p.add_argument(
        "--clusters",
        type=int_at_least(1),
        metavar="N",
        help="number of clusters (default: number of "
        "labels; an upper bound for correlation clustering, whose clusters may empty)",
    )
    p.add_argument(
        "--transform",
        choices=TRANSFORMS,
        default="shift-min",
        help="kernel -> affinity for spectral clustering: shift-min (thesis, default), cosine, rbf",
    )
    p.add_argument(
        "--shift",
        choices=SHIFTS,
        default="auto",
        help="shift for correlation clustering: auto (the kernel's registered default: adaptive for "
        "hamming/scaled-hamming, none for fisher), adaptive, none",
    )
    p.add_argument(
        "--restarts",
        type=int_at_least(1, 100_000),
        default=25,
        help="local-search restarts of correlation clustering (25)",
    )
    p.add_argument(
        "--no-labels-out", action="store_true", help="leave the per-row cluster labels out of the JSON"
    )
    _alpha_option(
        p,
        "--structure/--score/--params left out: each network kernel's own network (fisher: hc, "
        "qnml, cnml; fisher-normalized: a latent class model with N classes, blanks as missing cells, beside "
        "the "
        "empty network's features)",
    )
    add_fisher_model_options(p)
    # None: each network kernel's own default network (fisher: hc/qnml/cnml; fisher-normalized: its measured
    # one)
    p.set_defaults(structure=None, score=None, params=None)
    add_max_memory(p)
    add_streaming_options(
        p,
        "read DATA (CSV or .parquet) ROWS rows at a time into state codes (one byte a cell) "
        "instead of text; the same clusters. Without it, a file too big to read whole within "
        "--max-memory (its size times 160) is read so anyway",
        "where the row-wise passes run: this process (default) or a Dask cluster (reading, the "
        "Fisher kernel's network as learn --engine dask, kmeans-features' passes; the same "
        "clusters)",
    )
    add_numbers_option(p, "the clustering (correlation or spectral on its Gram matrix)")
    add_data_options(p, label=True)
    p.set_defaults(func=_cmd_cluster)

    p = sub.add_parser(
        "classify",
        help=SUBCOMMANDS["classify"],
        description="Classify the label column from the other columns with a precomputed kernel; the "
        "kernel's model is estimated on each training split only.",
    )
    p.add_argument("data", metavar="DATA.csv")
    _kernel_option(p)
    p.add_argument("--classifier", choices=choices(CLASSIFIERS), default="svm", help="default svm")
    p.add_argument(
        "--repeats",
        type=int_at_least(1, 10_000),
        default=10,
        help="train/test splits, seeds SEED..SEED+R-1 (default 10)",
    )
    p.add_argument(
        "--test-size",
        type=float_in(0, 1, low_open=True, high_open=True),
        default=0.2,
        help="test fraction (default 0.2)",
    )
    p.add_argument(
        "--neighbors", type=int_at_least(1), default=7, metavar="K", help="neighbours for knn (default 7)"
    )
    add_hidden_alias(p, "--k", "neighbors", type=int_at_least(1))
    p.add_argument(
        "--rank-by",
        choices=("distance", "similarity"),
        default="distance",
        help="knn neighbours by kernel distance (default) or by largest kernel value",
    )
    add_hidden_alias(p, "--neighbours", "rank_by", choices=("distance", "similarity"))
    p.add_argument("--C", type=float_in(0, 1e12, low_open=True), default=1.0, help="SVM penalty (default 1)")
    _alpha_option(p)
    add_quiet(p)
    add_fisher_model_options(p)
    add_max_memory(p)
    add_data_options(p, label=True)
    p.set_defaults(func=_cmd_classify)
