"""Subcommands ``kgv-mi`` (the KGV mutual information of every pair of columns, numbers unbinned) and
``kgv-test`` (Bach & Jordan's §5 conditional independence test), and the KGV score's options of ``learn``
(``--kappa``, ``--sigma``, ``--kgv-kernel``, ``--kgv-bin-numbers``, ``--kgv-markov-blanket``)."""

from __future__ import annotations

import time

from ..data.files import atomic_path
from .common import add_data_options, check_output, float_in, input_files, read_data, split_list

__all__ = ["register", "add_kgv_options", "kgv_options", "binning_report"]


def add_kgv_options(p, *, prefix: str = "--kgv-", blanket: bool = False) -> None:
    """The KGV score's options (``prefix`` of the kernel / bin-numbers flags: ``--kgv-`` on ``learn``,
    ``--`` on ``kgv-mi``) (defaults: Bach's κ = 2e-2, σ = 1 for N < 1000; κ = 2e-3, σ = ½ otherwise)."""
    from ..learning.members import KGV_KERNELS

    g = p.add_argument_group("KGV score (--score kgv)")
    g.add_argument(
        "--kappa",
        type=float_in(0, 1e3, low_open=True),
        default=None,
        metavar="K",
        help="regularisation κ (default 2e-2 below 1000 rows, else 2e-3)",
    )
    g.add_argument(
        "--sigma",
        type=float_in(0, 1e3, low_open=True),
        default=None,
        metavar="S",
        help="Gaussian kernel width on standardised numbers (default 1 below 1000 rows, else 0.5)",
    )
    g.add_argument(
        f"{prefix}kernel",
        dest="kgv_kernel",
        choices=KGV_KERNELS,
        default="gaussian",
        help="kernel of the numeric columns (default gaussian; linear = Gaussian mutual information)",
    )
    g.add_argument(
        f"{prefix}bin-numbers",
        dest="kgv_bin_numbers",
        action="store_true",
        help="search the numeric columns' quantile bins instead of their values",
    )
    if blanket:
        g.add_argument(
            f"{prefix}markov-blanket",
            dest="kgv_markov_blanket",
            action="store_true",
            help="prune the search to DAGs whose moral graph the KGV Markov-blanket graph covers (section 5)",
        )


def kgv_options(args) -> dict:
    return {
        "kappa": args.kappa,
        "sigma": args.sigma,
        "kernel": args.kgv_kernel,
        "bin_numbers": args.kgv_bin_numbers,
        "markov_blanket": bool(getattr(args, "kgv_markov_blanket", False)),
    }


def binning_report(data, searched_raw) -> dict:
    """``{column: its quantile bins}`` of the columns a score searched as numbers (the CPTs use the bins)."""
    return {v: list(data.states[data.index(v)]) for v in searched_raw}


def _cmd_kgv_mi(args) -> dict:
    import csv

    from ..learning.kgv import kgv_mutual_information

    ext = check_output(args.output, (".csv",), "a KGV-MI matrix", input_files(args)) if args.output else None
    t0 = time.perf_counter()
    data = read_data(args.data, args)
    res = kgv_mutual_information(
        data, kernel=args.kgv_kernel, kappa=args.kappa, sigma=args.sigma, bin_numbers=args.kgv_bin_numbers
    )
    out = {
        "variables": res["variables"],
        "matrix": res["matrix"].tolist(),
        "kernel": res["kernel"],
        "kappa": res["kappa"],
        "sigma": res["sigma"],
        "searched_raw": res["searched_raw"],
        "bins": binning_report(data, res["searched_raw"]),
        "n_rows_used": res["n_rows_used"],
        "rows": data.n_rows,
        "seconds": time.perf_counter() - t0,
    }
    if ext:
        with atomic_path(args.output) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                w = csv.writer(fh, lineterminator="\n")
                w.writerow(["variable"] + res["variables"])
                w.writerows(
                    [v] + [f"{x:.10g}" for x in row] for v, row in zip(res["variables"], res["matrix"])
                )
        out = {"output": args.output, **{k: v for k, v in out.items() if k != "matrix"}}
    return out


def _cmd_kgv_test(args) -> dict:
    from ..errors import BnfkError
    from ..learning.kgv import kgv_independence_test

    given = split_list(args.given)
    t0 = time.perf_counter()
    data = read_data(args.data, args)
    for v in (args.x, args.y, *given):
        if v not in data.variables:
            raise BnfkError(
                f"Column '{v[:80]}' is not in {args.data}; its columns are {', '.join(data.variables)}."
            )
    res = kgv_independence_test(
        data,
        args.x,
        args.y,
        given,
        kernel=args.kgv_kernel,
        kappa=args.kappa,
        sigma=args.sigma,
        bin_numbers=args.kgv_bin_numbers,
    )
    return {
        **res,
        "bins": binning_report(data, res["searched_raw"]),
        "rows": data.n_rows,
        "seconds": time.perf_counter() - t0,
    }


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "kgv-mi": "KGV mutual information of every pair of columns (numbers unbinned)",
    "kgv-test": "KGV conditional independence test of X and Y given Z (Bach & Jordan section 5)",
}


def register(sub) -> None:
    p = sub.add_parser("kgv-mi", help=SUBCOMMANDS["kgv-mi"])
    p.add_argument("data", metavar="DATA.csv")
    add_kgv_options(p, prefix="--")
    p.add_argument("-o", "--output", default=None, metavar="M.csv", help="write the matrix as CSV")
    add_data_options(p)
    p.set_defaults(func=_cmd_kgv_mi)

    p = sub.add_parser("kgv-test", help=SUBCOMMANDS["kgv-test"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("x", metavar="X", help="the first column")
    p.add_argument("y", metavar="Y", help="the second column")
    p.add_argument("--given", default="", metavar="Z1,Z2", help="the conditioning columns (default none)")
    add_kgv_options(p, prefix="--")
    add_data_options(p)
    p.set_defaults(func=_cmd_kgv_test)
