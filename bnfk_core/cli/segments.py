"""Subcommands ``segment-table``, ``segment-suggest`` and ``arc-search`` (thesis ch. 6) on top of
:mod:`bnfk_core.analyses.segments`."""

from __future__ import annotations

import time

from ..errors import BnfkError
from ..registry import ESTIMATORS, SCORES
from .common import (
    add_data_options,
    add_quiet,
    float_in,
    int_at_least,
    label_data,
    progress,
    read_data,
    read_model_file,
    split_list,
)
from .names import choices, feature_learners

__all__ = ["register"]


def _variables(args, kind: str) -> list[str]:
    vs = split_list(args.variables)
    if not vs:
        raise BnfkError(f"The '{kind}' segment needs --variables u,v[,w].")
    return vs


def _cmd_segment_table(args) -> dict:
    from ..analyses.segments import case_table, segment_model
    from ..learning.recipe import Recipe, learn_recipe
    from ..network.dag import apply_segment
    from ..network.model import fit

    t0 = time.perf_counter()
    if args.model and args.structure:
        raise BnfkError("Give either --model or --structure, not both.")
    variables = _variables(args, args.kind)
    base, refit = "empty", True
    if args.model:
        model = read_model_file(args.model)
        data = read_data(args.data, args, model=model)
        dag = apply_segment(model.dag, args.kind, variables)
        base = f"model {args.model}"
        if dag != model.dag:
            model = fit(dag, data.select(list(dag.nodes)), method="smoothed", pseudo_count=args.pseudo_count)
        else:
            refit = False
    else:
        data = read_data(args.data, args)
        base_dag = None
        if args.structure:
            feats = data.without_class()
            recipe = Recipe(
                structure=args.structure, score=args.score, missing_data="complete-rows", k=3, seed=args.seed
            )
            res = learn_recipe(feats, recipe)
            base_dag, base = res.dag, f"{args.structure}/{args.score}"
        model = segment_model(data, args.kind, variables, base_dag, pseudo_count=args.pseudo_count)
    table = case_table(model, data, args.kind, variables)
    out = {
        "data": args.data,
        "rows": data.n_rows,
        "base": base,
        "refit": refit,
        "network_arcs": [list(a) for a in model.dag.sorted_arcs()],
        **table.to_dict(),
        "seconds": time.perf_counter() - t0,
    }
    return out


def _cmd_segment_suggest(args) -> dict:
    from ..analyses.segments import mi_ranking

    data = read_data(args.data, args)
    df = mi_ranking(data, args.kind, top=args.top)
    return {
        "data": args.data,
        "kind": args.kind,
        "unit": "nats",
        "label_column": data.class_column,
        "suggestions": [
            {
                "variables": list(r.variables),
                "score": r.score,
                **{k: getattr(r, k) for k in ("mi_uv", "mi_uw", "mi_vw") if k in df.columns},
            }
            for r in df.itertuples()
        ],
    }


def _cmd_arc_search(args) -> dict:
    from ..analyses.segments import arc_search

    data = label_data(args, "arc-search is supervised:")
    res = arc_search(
        data,
        n_arcs=args.arcs,
        algorithm=args.algorithm,
        kernel=args.kernel,
        n_clusters=args.clusters,
        restarts=args.restarts,
        seed=args.seed,
        params=args.params,
        max_candidates=args.max_candidates,
        progress=progress(args),
    )
    return {"data": args.data, "rows": data.n_rows, **res.to_dict(candidates=args.candidates)}


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "segment-table": (
        "a segment's case table: thesis formula, theory and measured kernel contribution per case "
        "(thesis 6.1)"
    ),
    "segment-suggest": (
        "pairs / triples of feature columns with the highest mutual information, in the segment's role order"
    ),
    "arc-search": (
        "supervised greedy arc search maximising the clustering ARI of the Fisher kernel from the empty "
        "network (thesis Tables 6.1, 6.4)"
    ),
}


def register(sub) -> None:
    from ..analyses.segments.members import MAX_CANDIDATES
    from ..kernels.members import FISHER
    from ..network.members import SEGMENT_KINDS

    p = sub.add_parser(
        "segment-table",
        help=SUBCOMMANDS["segment-table"],
        description="For each agreement case of the segment's variables between two rows: the "
        "thesis's formula, its value under the fitted network, the measured sum of "
        "the segment's Fisher-kernel terms for an actual pair of rows, and the pair.",
    )
    p.add_argument("kind", choices=SEGMENT_KINDS)
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--variables",
        required=True,
        metavar="U,V[,W]",
        help="segment variables in role order: single-arc u,v (u->v); v u,v,w (u->w<-v); "
        "a u,v,w (u->v, u->w); chain u,v,w (w->u->v); full x1,...,xm",
    )
    p.add_argument("--model", metavar="M.bif", help="base network (the segment is applied onto it)")
    p.add_argument(
        "--structure",
        choices=feature_learners(),
        metavar="METHOD",
        help="learn the base network on the feature columns (default: empty)",
    )
    p.add_argument(
        "--score", default="qnml", choices=choices(SCORES), help="score for --structure (default qnml)"
    )
    p.add_argument(
        "--pseudo-count",
        type=float_in(0, 1e6, low_open=True),
        default=1.0,
        help="CPT pseudo-count (default 1)",
    )
    add_data_options(p)
    p.set_defaults(func=_cmd_segment_table)

    p = sub.add_parser("segment-suggest", help=SUBCOMMANDS["segment-suggest"])
    p.add_argument("kind", choices=SEGMENT_KINDS)
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--top", type=int_at_least(1), default=10, help="suggestions to list (default 10)")
    add_data_options(p)
    p.set_defaults(func=_cmd_segment_suggest)

    p = sub.add_parser("arc-search", help=SUBCOMMANDS["arc-search"])
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--arcs", type=int_at_least(0, 1000), default=2, help="arcs to add (default 2)")
    p.add_argument("--algorithm", choices=("correlation", "spectral"), default="correlation")
    p.add_argument("--kernel", choices=(FISHER,), default=FISHER)
    p.add_argument(
        "--clusters", type=int_at_least(1), metavar="N", help="number of clusters (default: number of labels)"
    )
    p.add_argument(
        "--restarts",
        type=int_at_least(1, 100_000),
        default=25,
        help="correlation-clustering restarts (default 25)",
    )
    p.add_argument(
        "--params",
        choices=choices(ESTIMATORS),
        default="ml",
        help="CPT estimator (default ml: the empty network is then exactly scaled-Hamming)",
    )
    p.add_argument("--candidates", action="store_true", help="list every candidate arc's ARI per step")
    p.add_argument(
        "--max-candidates",
        type=int_at_least(1, 10**7),
        default=MAX_CANDIDATES,
        metavar="M",
        help=f"cluster at most M candidate arcs per step: on wide data those whose variables have the "
        f"highest mutual information (default {MAX_CANDIDATES:,}; every thesis dataset has fewer)",
    )
    add_quiet(p)
    add_data_options(p, label=True)
    p.set_defaults(func=_cmd_arc_search)
