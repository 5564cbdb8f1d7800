"""Subcommand ``kgv-mi`` (the KGV mutual information of every pair of columns, numbers unbinned) and the
KGV score's options of ``learn`` (``--kappa``, ``--sigma``, ``--kgv-kernel``, ``--kgv-bin-numbers``)."""

from __future__ import annotations

import time

from ..data.files import atomic_path
from .common import add_data_options, check_output, float_in, input_files, read_data

__all__ = ["register", "add_kgv_options", "kgv_options", "binning_report"]


def add_kgv_options(p, *, prefix: str = "--kgv-") -> None:
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


def kgv_options(args) -> dict:
    return {
        "kappa": args.kappa,
        "sigma": args.sigma,
        "kernel": args.kgv_kernel,
        "bin_numbers": args.kgv_bin_numbers,
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


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "kgv-mi": "KGV mutual information of every pair of columns (numbers unbinned)",
}


def register(sub) -> None:
    p = sub.add_parser("kgv-mi", help=SUBCOMMANDS["kgv-mi"])
    p.add_argument("data", metavar="DATA.csv")
    add_kgv_options(p, prefix="--")
    p.add_argument("-o", "--output", default=None, metavar="M.csv", help="write the matrix as CSV")
    add_data_options(p)
    p.set_defaults(func=_cmd_kgv_mi)
