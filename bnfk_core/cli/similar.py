"""Subcommand ``similar``: the k rows of a table most similar to a partial case (evidence on some variables,
the others missing) under a network's Fisher kernel, with every variable's contribution
(:func:`bnfk_core.analyses.similar.similar`)."""

from __future__ import annotations

import time

from ..errors import BnfkError
from .common import (
    MODEL_HELP,
    add_data_options,
    add_fisher_model_options,
    add_quiet,
    int_at_least,
    progress,
    read_data,
    read_network,
)

__all__ = ["register"]


def _cmd_similar(args) -> dict:
    from ..analyses.similar import check_evidence, similar
    from ..learning.recipe import learn_recipe, recipe_of
    from .query import parse_evidence

    t0 = time.perf_counter()
    evidence = parse_evidence(args.evidence)
    if args.model is not None:
        if any(getattr(args, o) is not None for o in ("structure", "score", "params")):
            raise BnfkError("--structure, --score and --params learn a network from DATA: not with --model.")
        model = read_network(args.model)
        check_evidence(model, evidence)  # refused before the table is read
        data = read_data(args.data, args, model=model)
        network = {"model": args.model}
    else:
        data = read_data(args.data, args)
        recipe = recipe_of(structure=args.structure, score=args.score, params=args.params, seed=args.seed)
        learned = learn_recipe(data.without_class(), recipe, progress=progress(args))
        model = learned.model
        network = {
            "learned": {
                "recipe": recipe.to_dict(),
                "arcs": [list(a) for a in learned.result.dag.sorted_arcs()],
                "notes": list(learned.result.notes),
            }
        }
    res = similar(model, data, evidence, args.k, normalize=args.normalize)
    out = res.to_dict()
    out.update(network)
    out["notes"] = list(data.notes) + out["notes"]
    out["seconds"] = time.perf_counter() - t0
    return out


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "similar": "the rows of a CSV most similar to a partial case under the Fisher kernel, with each "
    "variable's contribution",
}


def register(sub) -> None:
    p = sub.add_parser("similar", help=SUBCOMMANDS["similar"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--model",
        metavar="MODEL",
        default=None,
        help=MODEL_HELP + " (default: the default recipe's network learned on DATA)",
    )
    p.add_argument(
        "--evidence",
        required=True,
        metavar="V=s,...",
        help="the partial case: observed states, e.g. 'smoke=yes,xray=no' (the other variables are missing)",
    )
    p.add_argument(
        "--k", type=int_at_least(1), default=10, metavar="K", help="how many similar rows (default 10)"
    )
    p.add_argument(
        "--normalize", action="store_true", help="cosine-normalise: K(x, y) / sqrt(K(x, x) K(y, y))"
    )
    add_fisher_model_options(p, title="the network learned on DATA without --model", with_model=False)
    add_quiet(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_similar)
