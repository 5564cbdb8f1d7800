"""Subcommand ``sample``: N rows drawn from a network by seeded forward sampling
(:meth:`bnfk_core.network.model.BayesNet.sample`), as CSV in ``-o`` or on stdout."""

from __future__ import annotations

import csv
import io

from ..data.files import atomic_path
from .common import MODEL_HELP, check_output, input_files, int_at_least, read_network, seed

__all__ = ["register", "MAX_SAMPLE_ROWS"]

#: rows drawn at most
MAX_SAMPLE_ROWS = 10_000_000


def _write(data, fh) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(data.variables)
    states = [list(s) for s in data.states]
    for row in data.codes:
        w.writerow([states[j][c] for j, c in enumerate(row)])


def _cmd_sample(args):
    if args.output:
        check_output(args.output, (".csv",), "the sample", input_files(args))
    data = read_network(args.model).sample(args.n, args.seed)
    if not args.output:
        buf = io.StringIO()
        _write(data, buf)
        return buf.getvalue()
    with atomic_path(args.output) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        _write(data, fh)
    return {"output": args.output, "rows": data.n_rows, "seed": args.seed}


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {"sample": "rows drawn from a network (seeded forward sampling), as CSV"}


def register(sub) -> None:
    p = sub.add_parser("sample", help=SUBCOMMANDS["sample"])
    p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument(
        "-n",
        "--rows",
        dest="n",
        type=int_at_least(1, MAX_SAMPLE_ROWS),
        default=1000,
        help="rows (default 1000)",
    )
    p.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    p.add_argument(
        "-o", "--output", default=None, metavar="OUT.csv", help="write the rows to OUT.csv (default: stdout)"
    )
    p.set_defaults(func=_cmd_sample)
