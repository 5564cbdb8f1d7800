"""Subcommands ``kernel``, ``mmd``, ``features`` and ``loglik``: Gram matrices, squared MMD (paper eq. 10),
the explicit sparse Fisher feature map and per-row log-likelihoods.  ``--chunksize ROWS`` reads the data
file a chunk of rows at a time (:mod:`bnfk_core.analyses.rowwise`): memory independent of its row count."""

from __future__ import annotations

import time

import numpy as np

from ..data.files import atomic_path
from ..errors import BnfkError
from ..kernels.members import FISHER
from ..registry import KERNELS
from .chunks import in_chunks
from .common import (
    add_data_options,
    add_max_memory,
    add_quiet,
    add_streaming_options,
    check_output,
    input_files,
    need_model,
    progress,
    read_data,
    read_model_file,
    split_list,
    write_gram,
)
from .names import choices

__all__ = ["register"]


def _kernel_inputs(args, path):
    """(model or None, data aligned to it) for the kernel subcommands."""
    model = read_model_file(args.model) if args.model else None
    data = read_data(path, args, model=model)
    if model is None:
        data = data.without_class()
    return model, data


def _cmd_kernel(args) -> dict:
    from ..kernels.fisher import gram
    from .hybrid_kernel import hybrid_counterpart, hybrid_kernel, numbers_kept

    ext = check_output(args.output, (".npy", ".csv"), "a Gram matrix", input_files(args))
    if numbers_kept(
        args, {f"--kind {args.kind}": not hybrid_counterpart(args.kind)}
    ):  # numbers stay numbers: the Fisher kernel of a hybrid (CLG) network
        return hybrid_kernel(args, ext)
    if KERNELS[args.kind].uses_network and not args.model:
        raise BnfkError(
            f"The {KERNELS[args.kind].label} kernel needs --model M.bif (learn one with 'learn')."
        )
    t0 = time.perf_counter()
    if args.chunksize is not None:
        return _kernel_chunked(args, ext, t0)
    model, data = _kernel_inputs(args, args.data)
    other = _kernel_inputs(args, args.other)[1] if args.other else None
    K = gram(model, data, other, kind=args.kind, normalize=args.normalize)
    write_gram(args.output, K, ext)
    return {
        "output": args.output,
        "kind": args.kind,
        "shape": list(K.shape),
        "normalize": args.normalize,
        "seconds": time.perf_counter() - t0,
    }


def _kernel_chunked(args, ext, t0) -> dict:
    """``--chunksize``: the N x M Fisher kernel against the fixed set ``--other``, a chunk of DATA's rows at a
    time (.npy: header, then the rows in order; .csv: appended), memory independent of N."""
    from ..analyses.rowwise import stream_gram
    from .chunks import read_chunks

    if KERNELS[args.kind].gram is None:  # only a kernel read straight off its network streams
        raise BnfkError(
            f"--chunksize computes the Fisher kernel only (the {KERNELS[args.kind].label} kernel is "
            "fitted on the whole data); leave out --kind or --chunksize."
        )
    if not args.other:
        raise BnfkError(
            "--chunksize needs --other SET.csv: the fixed set each chunk of rows is compared with "
            "(an N x N matrix of a file too big for memory is too big to write)."
        )
    model = read_model_file(args.model)
    other = read_data(args.other, args, model=model)
    chunks = read_chunks(args.data, args, model)
    with atomic_path(args.output) as tmp:
        shape = stream_gram(model, chunks, other, tmp, normalize=args.normalize, progress=progress(args))
    return {
        "output": args.output,
        "kind": args.kind,
        "shape": list(shape),
        "normalize": args.normalize,
        "chunksize": args.chunksize,
        "seconds": time.perf_counter() - t0,
    }


def _cmd_mmd(args) -> dict:
    from ..analyses.rowwise import stream_mmd
    from ..kernels.fisher import mmd
    from ..serving.session_files import is_session_file
    from .chunks import read_chunks

    model = read_model_file(need_model(args))
    if args.engine == "dask":
        for path in (args.a, args.b):
            if is_session_file(path):
                raise BnfkError(f"--engine dask reads a CSV or Parquet file, not a session file ({path}).")
        return stream_mmd(
            model,
            args.a,
            args.b,
            engine="dask",
            scheduler=args.scheduler,
            class_column=args.class_column,
            missing_policy=args.missing_policy,
            na_values=args.na_values,
            discretize_bins=args.discretize,
            max_levels=args.max_levels,
            drop_columns=split_list(args.drop_columns),
        )
    chunked, notes = False, []
    for path in (args.a, args.b):  # asked for, or A or B too big to hold within --max-memory
        chunked |= in_chunks(args, "mmd", path)
        notes += [args.chunked_note] if args.chunked_note else []
    if chunked:
        a, b = read_chunks(args.a, args, model), read_chunks(args.b, args, model)
        out = stream_mmd(model, a, b, progress=progress(args))
        out["chunksize"] = args.chunksize
        if notes:
            out["notes"] = list(out.get("notes", [])) + notes
        return out
    a = read_data(args.a, args, model=model)
    b = read_data(args.b, args, model=model)
    return {"mmd": mmd(model, a, b), "rows_a": a.n_rows, "rows_b": b.n_rows}


def _cmd_features(args) -> dict:
    import scipy.sparse as sp

    from ..kernels.features import feature_offsets, features

    check_output(args.output, (".npz",), "features", input_files(args))
    model = read_model_file(need_model(args))
    data = read_data(args.data, args, model=model)
    Phi = features(model, data)
    with atomic_path(args.output) as tmp:
        sp.save_npz(tmp, Phi)
    off = feature_offsets(model)
    return {
        "output": args.output,
        "shape": list(Phi.shape),
        "nnz": int(Phi.nnz),
        "blocks": [
            {"variable": v, "offset": int(off[i]), "columns": int(off[i + 1] - off[i])}
            for i, v in enumerate(model.variables)
        ],
    }


def _cmd_loglik(args) -> dict:
    from ..analyses.rowwise import stream_loglik
    from ..inference.queries import log_likelihood
    from .chunks import read_chunks
    from .hybrid import hybrid_loglik, is_hybrid_model

    if args.output:
        check_output(args.output, (".csv",), "log-likelihoods", input_files(args))
    t0 = time.perf_counter()
    path = need_model(args)
    if is_hybrid_model(path):  # a CLG network: log-densities, the numeric cells' densities included
        if args.chunksize:
            raise BnfkError(
                "--chunksize reads a discrete model's rows; a hybrid model's table is read whole."
            )
        ll = hybrid_loglik(args, path)
        if args.output:
            with atomic_path(args.output) as tmp:
                np.savetxt(tmp, ll, fmt="%.17g", header="loglik", comments="")
        out = {"total": float(ll.sum()), "rows": int(ll.shape[0]), "mean": float(ll.mean()), "density": True}
        out.update({"model": args.model, "seconds": time.perf_counter() - t0})
        if args.output:
            out["output"] = args.output
        return out
    model = read_model_file(path)
    if in_chunks(args, "loglik"):  # asked for, or DATA too big to hold within --max-memory
        chunks = read_chunks(args.data, args, model)
        if args.output:
            with atomic_path(args.output) as tmp:
                out = stream_loglik(model, chunks, out=tmp, progress=progress(args))
        else:
            out = stream_loglik(model, chunks, progress=progress(args))
        out["chunksize"] = args.chunksize
        if args.chunked_note:
            out["notes"] = list(out.get("notes", [])) + [args.chunked_note]
    else:
        data = model.align(read_data(args.data, args, model=model))
        ll = log_likelihood(model, data)
        if args.output:
            with atomic_path(args.output) as tmp:
                np.savetxt(tmp, ll, fmt="%.17g", header="loglik", comments="")
        out = {"total": float(ll.sum()), "rows": int(ll.shape[0]), "mean": float(ll.mean())}
    out.update({"model": args.model, "seconds": time.perf_counter() - t0})
    if args.output:
        out["output"] = args.output
    return out


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "kernel": "Gram matrix of a CSV under a model (.npy or plain .csv)",
    "mmd": "squared MMD between two CSVs under a model's Fisher kernel (paper eq. 10)",
    "features": "explicit sparse Fisher feature map (scipy .npz)",
    "loglik": "per-row log-likelihood log P(x_observed) of a CSV under a model",
}


def register(sub) -> None:
    from .chunks import add_chunksize
    from .common import add_numbers_option

    p = sub.add_parser("kernel", help=SUBCOMMANDS["kernel"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--model",
        metavar="M.bif",
        help="the network (needed by the Fisher kernel; for the others it selects the variables)",
    )
    p.add_argument(
        "--kind", "--kernel", dest="kind", choices=choices(KERNELS), default=FISHER, help="the kernel"
    )
    p.add_argument("--other", metavar="DATA2.csv", help="rows of the second argument (default: DATA)")
    p.add_argument("--normalize", action="store_true", help="cosine-normalise: K / sqrt(diag diag)")
    p.add_argument("-o", "--output", required=True, metavar="K.npy|K.csv")
    add_numbers_option(p, "the Gram matrix")
    add_max_memory(p)
    add_chunksize(
        p,
        "the Fisher kernel against --other a chunk of rows at a time, written as it goes "
        "(memory independent of DATA's rows)",
    )
    add_quiet(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_kernel)

    p = sub.add_parser("mmd", help=SUBCOMMANDS["mmd"])
    p.add_argument("a", metavar="A.csv")
    p.add_argument("b", metavar="B.csv")
    p.add_argument(
        "--model",
        metavar="M.bif",
        help="the network (default: the session's, when the data are a session file)",
    )
    add_quiet(p)
    add_data_options(p)
    add_streaming_options(
        p,
        "read DATA (CSV or .parquet) ROWS rows at a time: both files' mean embeddings from "
        "expected family counts, linear time, memory of one chunk",
        "where the mean embeddings are computed: this process (default) or a Dask cluster",
    )
    p.set_defaults(func=_cmd_mmd)

    p = sub.add_parser("features", help=SUBCOMMANDS["features"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--model",
        metavar="M.bif",
        help="the network (default: the session's, when the data are a session file)",
    )
    p.add_argument("-o", "--output", required=True, metavar="PHI.npz")
    add_data_options(p)
    p.set_defaults(func=_cmd_features)

    p = sub.add_parser("loglik", help=SUBCOMMANDS["loglik"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--model",
        metavar="M.bif",
        help="the network (default: the session's, when the data are a session file)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="LL.csv",
        help="write one value per row (column 'loglik', rows in the file's order)",
    )
    add_chunksize(p, "a chunk of rows at a time, memory independent of DATA's rows")
    add_quiet(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_loglik)
