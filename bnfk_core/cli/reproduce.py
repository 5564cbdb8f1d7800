"""Subcommand ``reproduce``: the thesis's and the paper's published numbers, ours side by side.

    python -m bnfk_core reproduce all|thesis-imputation|thesis-clustering|thesis-segments|
                                  thesis-classification|paper-summarization|speed|kernel-zoo|kgv|
                                  kgv-toy|kgv-hybrid|landscape|lca|imputation-peers [--quick] -o results/
    python -m bnfk_core reproduce figures -o results/    # the figures' HTML again from their JSON (no run)

Writes CSV + markdown tables, plotly figures and ``manifest.json`` into the output folder
(:mod:`bnfk_core.reproduce`) and prints a short JSON summary (experiments, wall times, files).
"""

from __future__ import annotations

from ..errors import BnfkError
from .common import (
    add_hidden_alias,
    add_quiet,
    int_at_least,
    progress,
    seed,
    split_list,
)

__all__ = ["register"]


def _cmd_reproduce(args) -> dict:
    from ..reproduce import Settings, render_figures, run

    if args.experiment == "figures":
        return {"output": args.output, "figures": render_figures(args.output)}
    ks = None
    if args.ks:
        try:
            ks = tuple(int(k) for k in split_list(args.ks))
        except ValueError:
            raise BnfkError(f"--ks takes comma-separated integers, got '{args.ks}'.") from None
    settings = Settings(
        quick=args.quick,
        structure=args.networks,
        seed=args.seed,
        repeats=args.repeats,
        datasets=tuple(split_list(args.datasets)) or None,
        exact_max_vars=args.exact_max_vars,
        jobs=args.jobs or 1,
        random_draws=args.random_draws,
        ks=ks,
    )
    man = run(args.experiment, args.output, settings, progress(args))
    exps = man.get("experiments", {})
    names = list(exps) if args.experiment == "all" else [args.experiment]
    return {
        "output": args.output,
        "experiments": {
            n: {
                "wall_seconds": exps[n]["wall_seconds"],
                "tables": list(exps[n]["tables"]),
                "files": exps[n]["files"],
            }
            for n in names
            if n in exps
        },
        "versions": man.get("versions"),
        "all_wall_seconds": man.get("all_wall_seconds"),
    }


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "reproduce": (
        "reproduce the thesis's tables and the paper's figures/run times (ours next to the published numbers)"
    ),
}


def register(sub) -> None:
    from ..reproduce import EXPERIMENTS, NETWORK_CHOICES

    p = sub.add_parser("reproduce", help=SUBCOMMANDS["reproduce"])
    p.add_argument(
        "experiment",
        choices=("all",) + EXPERIMENTS + ("figures",),
        help="an experiment, all of them, or 'figures': write the HTML of every stored figure of the "
        "output folder again from its JSON (plotly.js beside them; no experiment runs)",
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder (created if needed)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="fewer data sets, settings and repeats (minutes, for CI); the full run takes hours",
    )
    p.add_argument(
        "--networks",
        choices=NETWORK_CHOICES,
        default="default",
        help="networks: default = each source's own (thesis: exact qNML + cNML; paper: hc BIC + "
        "smoothed), or force 'thesis' / 'paper' everywhere",
    )
    add_hidden_alias(p, "--structure", "networks", choices=NETWORK_CHOICES)
    p.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    p.add_argument(
        "--repeats",
        type=int_at_least(1),
        help="runs per setting / clustering runs / classification splits "
        "(default: the thesis's 10; 1-2 with --quick)",
    )
    p.add_argument(
        "--datasets",
        default="",
        metavar="A,B",
        help="sample_data names to run (default: all of the experiment's source)",
    )
    p.add_argument(
        "--exact-max-vars",
        type=int_at_least(1),
        metavar="V",
        help="thesis structures: exact search up to V variables, hill climbing above "
        "(default 12 for imputation, 16 for classification, 20 elsewhere)",
    )
    p.add_argument(
        "--jobs", type=int_at_least(1, 64), default=1, help="worker processes, one data set each (default 1)"
    )
    p.add_argument(
        "--random-draws", type=int_at_least(1), metavar="R", help="paper: random subsets per k (default 1000)"
    )
    p.add_argument("--ks", default="", metavar="K1,K2", help="paper: subset sizes (default 200,500,750,1000)")
    add_quiet(p)
    p.set_defaults(func=_cmd_reproduce)
