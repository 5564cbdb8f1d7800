"""CLI: ``impute-benchmark`` (thesis chapter 4) and ``impute`` (fill a CSV with a model)."""
from __future__ import annotations

import os
import time

from .cli import _out_ext, add_data_options, load_model_arg, progress_to_stderr, read_data
from .errors import BnfkError

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


def _cmd_benchmark(args) -> dict:
    from .impute import benchmark
    data = read_data(args.data, args)
    res = benchmark(data, args.methods, test_ratios=_ratios(args.test_ratio, "test-ratio"),
                    missing_ratios=_ratios(args.missing_ratio, "missing-ratio"), repeats=args.repeats,
                    seed=args.seed, structure=args.structure, score=args.score, params=args.params, k=args.k,
                    include_class=args.include_class, progress=None if args.quiet else progress_to_stderr)
    out = res.to_dict()
    out["data"] = os.path.basename(args.data)
    return out


def _cmd_impute(args) -> dict:
    from .impute import impute_with_model
    t0 = time.perf_counter()
    _out_ext(args.output, (".csv",), "the completed data")
    if args.probabilities:
        _out_ext(args.probabilities, (".csv",), "the probabilities")
    model = load_model_arg(args.model)
    data = read_data(args.data, args, model=model)  # the model's columns and states (numbers -> its bins)
    res = impute_with_model(model, data)
    res.frame.to_csv(args.output, index=False)
    if args.probabilities:
        res.probabilities.to_csv(args.probabilities, index=False)
    return {"output": args.output, "probabilities": args.probabilities, "rows": int(data.n_rows),
            "imputed_cells": int(res.imputed.sum()),
            "imputed_per_column": {v: int(res.imputed[:, i].sum()) for i, v in enumerate(model.variables)
                                   if res.imputed[:, i].any()},
            "seconds": time.perf_counter() - t0}


def register(sub) -> None:
    from .impute import METHODS
    from .scores import SCORES
    p = sub.add_parser("impute-benchmark",
                       help="hide cells at random (thesis 4.2.1) and score imputation methods (JSON)")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--methods", default="bn,mode,wknn", metavar="M,M",
                   help=f"comma-separated, from {','.join(METHODS)} (default bn,mode,wknn)")
    p.add_argument("--test-ratio", default="0.1,0.2,0.3,0.4,0.5", metavar="R[,R...]",
                   help="fractions of rows in the test part (default 0.1..0.5)")
    p.add_argument("--missing-ratio", default="0.1,0.2,0.3,0.4,0.5", metavar="R[,R...]",
                   help="fractions of test cells hidden (default 0.1..0.5)")
    p.add_argument("--repeats", type=int, default=10, help="runs per setting (default 10)")
    p.add_argument("--structure", default="auto", choices=("auto", "exact", "hc", "tree", "empty"),
                   help="structure search (default auto: exact up to 20 variables, else hc)")
    p.add_argument("--score", default="qnml", choices=tuple(SCORES), help="structure score (default qnml)")
    p.add_argument("--params", default="cnml", choices=("cnml", "smoothed", "bdeu"),
                   help="parameter estimator (default cnml, as the thesis)")
    p.add_argument("--k", type=int, default=3, help="neighbours of wknn / fisher-knn (default 3)")
    p.add_argument("--include-class", action="store_true",
                   help="impute the class column too (default: it is dropped, as in the thesis)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_data_options(p)
    p.set_defaults(func=_cmd_benchmark)

    p = sub.add_parser("impute", help="fill the missing cells of a CSV with a model's most probable values "
                                          "(the output has the model's columns)")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--model", required=True, metavar="M.bif|M.json")
    p.add_argument("-o", "--output", required=True, metavar="COMPLETED.csv")
    p.add_argument("--probabilities", metavar="P.csv",
                   help="also write one line per (row, column, state) with its probability")
    add_data_options(p)
    p.set_defaults(func=_cmd_impute)
