"""Subcommand ``landscape``: every DAG on 1-5 chosen variables, scored and grouped, and the metagraph-kernel
surrogate of the score (:mod:`bnfk_core.learning.landscape`, :mod:`bnfk_core.learning.metagraph`,
docs/LANDSCAPE.md)."""

from __future__ import annotations

import json

from ..data.files import atomic_path
from ..errors import BnfkError
from ..registry import SCORES
from .common import (
    add_data_options,
    add_quiet,
    check_output,
    float_in,
    input_files,
    int_at_least,
    read_data,
    split_list,
)
from .names import choices

__all__ = ["register"]


def _cmd_landscape(args) -> dict:
    from ..analyses.landscape import landscape_summary, surrogate_study
    from ..learning.landscape import climb_path, place_dag, score_landscape
    from ..learning.metagraph import parse_orders
    from ..learning.recipe import Recipe, learn_recipe

    if args.output:
        check_output(args.output, (".json",), "the landscape", input_files(args))
    variables = split_list(args.variables)
    if not variables:
        raise BnfkError("Give the landscape's variables with --variables a,b,c (1 to 5 of them).")
    data = read_data(args.data, args)
    land = score_landscape(data, variables, args.score, ess=args.ess)
    if land.k < 2:
        raise BnfkError("A landscape on one variable has a single graph; choose two to five variables.")
    bits = land.k * (land.k - 1) // (2 if args.fixed_order else 1)
    study = surrogate_study(
        land,
        fixed_order=args.fixed_order,
        observe=args.observe,
        orders=parse_orders(args.orders, bits),
        seed=args.seed,
        c=args.c,
    )
    path = climb_path(land, data, seed=args.seed, ess=args.ess)
    recipe = Recipe(
        structure="hc", score=args.score, missing_data="complete-rows", seed=args.seed, ess=args.ess
    )
    learned = learn_recipe(data.select(list(land.variables)), recipe, with_class=True)
    out = {
        "data": args.data,
        **landscape_summary(land, study, path, learned={"learned": place_dag(land, learned.dag)}),
    }
    out["learned"]["method"] = (
        f"learn --structure hc --score {args.score} --seed {args.seed} (best of 5 climbs)"
    )
    if args.output:
        with atomic_path(args.output) as tmp:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(out, fh, indent=1)
        return {
            "output": args.output,
            "dags": out["dags"],
            "classes": out["classes"],
            "best": out["best"],
            "rmse": out["rmse"],
            "walsh_energy": out["walsh_energy"],
        }
    return out


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "landscape": (
        "score every DAG on 1-5 variables, group the equivalence classes, place hill climbing, and fit the"
        " metagraph-kernel surrogate of the score"
    ),
}


def register(sub) -> None:
    from ..learning.members import DEFAULT_C, MAX_LANDSCAPE_VARIABLES

    p = sub.add_parser("landscape", help=SUBCOMMANDS["landscape"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--variables",
        required=True,
        metavar="A,B,C",
        help=f"the 1 to {MAX_LANDSCAPE_VARIABLES} variables whose DAGs are enumerated (node order)",
    )
    p.add_argument(
        "--score",
        default="bdeu",
        choices=choices(SCORES),
        help="the score the graphs are ranked by (default bdeu; every score is computed)",
    )
    p.add_argument(
        "--ess",
        type=float_in(0, 1e6, low_open=True),
        default=1.0,
        help="equivalent sample size for bdeu (default 1)",
    )
    p.add_argument(
        "--fixed-order",
        action="store_true",
        help="surrogate over the 2^C(k,2) graphs respecting the variables' order (the paper's "
        "hypercube); default: all DAGs as k(k-1) directed-arc bits",
    )
    p.add_argument(
        "--observe",
        type=int_at_least(1),
        default=None,
        metavar="K",
        help="graphs observed by the surrogate (default: half of the space, at most 500; at most 1,500)",
    )
    p.add_argument(
        "--orders",
        default="1-4",
        metavar="1-4",
        help="kernel orders, a range or a list (default 1-4; clipped to the number of arc bits)",
    )
    p.add_argument(
        "--c",
        type=float_in(0, 1e6, low_open=True),
        default=DEFAULT_C,
        help=f"regulariser of the unit-diagonal kernel (default {DEFAULT_C:g})",
    )
    add_quiet(p)
    p.add_argument("-o", "--output", metavar="OUT.json", help="write the full JSON here")
    add_data_options(p)
    p.set_defaults(func=_cmd_landscape)
