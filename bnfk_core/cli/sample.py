"""Subcommand ``sample``: N rows drawn from a network by seeded forward sampling
(:meth:`bnfk_core.network.model.BayesNet.sample`, or :meth:`bnfk_core.hybrid.HybridNet.sample` for a hybrid
JSON model), as CSV in ``-o`` or on stdout."""

from __future__ import annotations

import csv
import io

import numpy as np

from ..data.files import atomic_path
from ..data.limits import format_bytes, memory_limit
from ..errors import BnfkError
from .common import MODEL_HELP, check_output, input_files, int_at_least, read_network, seed

__all__ = ["register", "sample_bytes", "MAX_SAMPLE_ROWS"]

#: rows drawn at most
MAX_SAMPLE_ROWS = 10_000_000


def _write(data, fh) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(data.variables)
    columns = [np.asarray(s, dtype=object)[data.codes[:, j]] for j, s in enumerate(data.states)]
    w.writerows(zip(*columns))


def sample_bytes(model, n: int) -> int:
    """Bytes a sample of ``n`` rows holds at its peak: its codes, the table of their texts and the columns
    written (32 bytes a cell, measured), and the CPT rows and their running sums drawn for one variable."""
    widest = max(len(s) for s in model.states)
    return int(n) * (model.n_vars * 32 + widest * 24)


def _cmd_sample(args):
    if args.output:
        check_output(args.output, (".csv",), "the sample", input_files(args))
    from .hybrid import is_hybrid_model

    if is_hybrid_model(args.model):  # a hybrid (CLG) model: states by name, numbers in full precision
        from ..hybrid import read_hybrid
        from .hybrid import write_mixed_csv

        model = read_hybrid(args.model)
        need, write = int(args.n) * model.n_vars * 48, write_mixed_csv
    else:
        model = read_network(args.model)
        need, write = sample_bytes(model, args.n), _write
    limit = memory_limit()
    if limit is not None and need > limit:
        raise BnfkError(
            f"A sample of {args.n:,} rows needs about {format_bytes(need)}, over the memory limit of "
            f"{format_bytes(limit)}; draw fewer rows (-n) or raise --max-memory."
        )
    data = model.sample(args.n, args.seed)
    if not args.output:
        buf = io.StringIO()
        write(data, buf)
        return buf.getvalue()
    with atomic_path(args.output) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        write(data, fh)
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
