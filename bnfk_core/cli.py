"""The command line: ``python -m bnfk_core SUBCOMMAND ...``.

Every subcommand prints one JSON object on stdout (or writes ``-o FILE``); progress and
warnings go to stderr.  Every error is one line ``error: ...`` on stderr with exit code 2,
never a traceback.  All subcommands that read a CSV share the data options built by
:func:`add_data_options` (one parser builder, the same meaning everywhere).

Subcommands live in small ``register(subparsers)`` functions; analyses added later
(clustering, imputation, prototypes, ...) register themselves through ``COMMAND_MODULES``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import warnings

import numpy as np

from .errors import BnfkError

__all__ = ["main", "build_parser", "add_data_options", "read_data", "emit", "COMMAND_MODULES"]

#: modules with a ``register(subparsers)`` function adding more subcommands (optional ones are skipped
#: when absent).
COMMAND_MODULES = ("bnfk_core.cli_cluster", "bnfk_core.cli_impute", "bnfk_core.cli_prototypes",
                   "bnfk_core.cli_segments", "bnfk_core.cli_reproduce")


class _Parser(argparse.ArgumentParser):
    """argparse with the house error format: one line ``error: ...``, exit code 2."""

    def error(self, message):  # noqa: D401
        sys.stderr.write(f"error: {message} (see '{self.prog} --help').\n")
        raise SystemExit(2)


# ---------------------------------------------------------------------- shared options
def add_data_options(p: argparse.ArgumentParser, *, label: bool = False) -> None:
    """The data options every CSV-reading subcommand accepts."""
    g = p.add_argument_group("data options")
    g.add_argument("--class-column", metavar="C", help="column holding class labels")
    if label:
        g.add_argument("--label-column", metavar="C", help="column holding the labels to evaluate against")
    g.add_argument("--drop-columns", metavar="A,B", default="", help="comma-separated columns to ignore")
    g.add_argument("--discretize", metavar="B", type=int, default=4,
                   help="quantile bins for numeric columns with many levels (default 4)")
    g.add_argument("--max-levels", metavar="L", type=int, default=50,
                   help="numeric columns with more distinct values are discretized (default 50)")
    g.add_argument("--missing-policy", choices=("missing", "category"), default="missing",
                   help="treat NA/?/empty as missing (default) or as a category of its own")
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def _split(s: str) -> list[str]:
    return [c.strip() for c in (s or "").split(",") if c.strip()]


def read_data(path: str, args, model=None, class_column: str | None = None):
    """Load ``path`` with the shared data options (aligned to ``model`` when given)."""
    from .data import load_csv
    cls = class_column if class_column is not None else (getattr(args, "label_column", None)
                                                         or getattr(args, "class_column", None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = load_csv(path, class_column=cls, missing_policy=args.missing_policy,
                        discretize_bins=args.discretize, max_levels=args.max_levels,
                        drop_columns=_split(args.drop_columns), model=model)
    for w in caught:
        sys.stderr.write(f"warning: {w.message}\n")
    return data


def emit(obj: dict) -> None:
    """Print one JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, indent=1, default=_jsonable) + "\n")


def _jsonable(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def progress_to_stderr(fraction: float, message: str = "") -> None:
    sys.stderr.write(f"\r[{fraction * 100:5.1f}%] {message[:70]:<70}")
    if fraction >= 1:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _out_ext(path: str, allowed: tuple[str, ...], what: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in allowed:
        raise BnfkError(f"Cannot write {what} to '{path}': use a file name ending in {' or '.join(allowed)}.")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise BnfkError(f"Cannot write '{path}': folder '{folder}' does not exist.")
    return ext


def load_model_arg(path: str):
    from .model import read_model
    return read_model(path)


# ---------------------------------------------------------------------- learn
def _cmd_learn(args) -> dict:
    from .learn import learn_structure
    from .model import fit, write_model
    ext = _out_ext(args.output, (".bif", ".json"), "a model")
    data = read_data(args.data, args)
    if args.class_column is None and args.method in ("naive-bayes", "tan", "kdb"):
        raise BnfkError(f"Method '{args.method}' needs --class-column.")
    opts = dict(score=args.score, class_column=args.class_column, k=args.k, max_parents=args.max_parents,
                ess=args.ess, seed=args.seed)
    if not args.quiet:
        opts["progress"] = progress_to_stderr
    res = learn_structure(data, args.method, **opts)
    model = fit(res.dag, data, method=args.params, pseudo_count=args.pseudo_count)
    write_model(model, args.output)
    return {"output": args.output, "format": ext[1:], "method": res.method, "score_name": res.score_name,
            "score": res.score, "arcs": [list(a) for a in res.dag.sorted_arcs()],
            "n_arcs": res.dag.n_arcs, "parameters": model.parameter_count(), "params": args.params,
            "rows": data.n_rows, "n_rows_used": res.n_rows_used, "notes": list(data.notes) + list(res.notes),
            "seconds": res.seconds}


def _register_learn(sub) -> None:
    from .learn import METHODS
    from .scores import SCORES
    p = sub.add_parser("learn", help="learn a Bayesian network from a CSV and save it as BIF or JSON")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--method", required=True, choices=METHODS)
    p.add_argument("--score", default="bic", choices=tuple(SCORES))
    p.add_argument("--k", type=int, default=3, help="parents per feature for kdb (default 3)")
    p.add_argument("--max-parents", type=int, default=None)
    p.add_argument("--ess", type=float, default=1.0, help="equivalent sample size for bdeu")
    p.add_argument("--params", choices=("smoothed", "ml", "bdeu", "cnml"), default="smoothed")
    p.add_argument("--pseudo-count", type=float, default=1.0)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("-o", "--output", required=True, metavar="MODEL.bif|MODEL.json")
    add_data_options(p)
    p.set_defaults(func=_cmd_learn)


# ---------------------------------------------------------------------- kernels
def _kernel_inputs(args, path):
    """(model or None, data aligned to it) for the kernel subcommands."""
    model = load_model_arg(args.model) if args.model else None
    data = read_data(path, args, model=model)
    if model is None:
        data = data.without_class()
    return model, data


def _cmd_kernel(args) -> dict:
    from .kernels import gram
    ext = _out_ext(args.output, (".npy", ".csv"), "a Gram matrix")
    if args.kind == "fisher" and not args.model:
        raise BnfkError("The Fisher kernel needs --model M.bif (learn one with 'learn').")
    t0 = time.perf_counter()
    model, data = _kernel_inputs(args, args.data)
    other = _kernel_inputs(args, args.other)[1] if args.other else None
    K = gram(model, data, other, kind=args.kind, normalize=args.normalize)
    if ext == ".npy":
        np.save(args.output, K)
    else:
        np.savetxt(args.output, K, delimiter=",", fmt="%.17g")
    return {"output": args.output, "kind": args.kind, "shape": list(K.shape), "normalize": args.normalize,
            "seconds": time.perf_counter() - t0}


def _cmd_mmd(args) -> dict:
    from .kernels import mmd
    model = load_model_arg(args.model)
    a = read_data(args.a, args, model=model)
    b = read_data(args.b, args, model=model)
    return {"mmd": mmd(model, a, b), "rows_a": a.n_rows, "rows_b": b.n_rows}


def _cmd_features(args) -> dict:
    import scipy.sparse as sp
    from .kernels import features, feature_offsets
    _out_ext(args.output, (".npz",), "features")
    model = load_model_arg(args.model)
    data = read_data(args.data, args, model=model)
    Phi = features(model, data)
    sp.save_npz(args.output, Phi)
    off = feature_offsets(model)
    return {"output": args.output, "shape": list(Phi.shape), "nnz": int(Phi.nnz),
            "blocks": [{"variable": v, "offset": int(off[i]), "columns": int(off[i + 1] - off[i])}
                       for i, v in enumerate(model.variables)]}


def _register_kernels(sub) -> None:
    p = sub.add_parser("kernel", help="Gram matrix of a CSV under a model (.npy or plain .csv)")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--model", metavar="M.bif")
    p.add_argument("--kind", choices=("fisher", "scaled-hamming", "hamming"), default="fisher")
    p.add_argument("--other", metavar="DATA2.csv", help="rows of the second argument (default: DATA)")
    p.add_argument("--normalize", action="store_true", help="cosine-normalise: K / sqrt(diag diag)")
    p.add_argument("-o", "--output", required=True, metavar="K.npy|K.csv")
    add_data_options(p)
    p.set_defaults(func=_cmd_kernel)

    p = sub.add_parser("mmd", help="squared MMD between two CSVs under a model's Fisher kernel (paper eq. 10)")
    p.add_argument("a", metavar="A.csv")
    p.add_argument("b", metavar="B.csv")
    p.add_argument("--model", required=True, metavar="M.bif")
    add_data_options(p)
    p.set_defaults(func=_cmd_mmd)

    p = sub.add_parser("features", help="explicit sparse Fisher feature map (scipy .npz)")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--model", required=True, metavar="M.bif")
    p.add_argument("-o", "--output", required=True, metavar="PHI.npz")
    add_data_options(p)
    p.set_defaults(func=_cmd_features)


# ---------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m bnfk_core",
                     description="Categorical data, Bayesian networks and their Fisher kernel.")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=_Parser)
    sub.required = True
    _register_learn(sub)
    _register_kernels(sub)
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        mod.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            result = args.func(args)
    except BnfkError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except MemoryError:
        sys.stderr.write("error: out of memory; sample fewer rows.\n")
        return 2
    except OSError as exc:
        sys.stderr.write(f"error: {exc.strerror or exc} ({getattr(exc, 'filename', '') or ''}).\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted.\n")
        return 2
    except Exception as exc:  # a bug: still one line, never a traceback
        sys.stderr.write(f"error: internal error ({type(exc).__name__}: {exc}); please report it.\n")
        return 2
    if result is not None:
        emit(result)
    return 0
