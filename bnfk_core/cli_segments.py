"""Subcommands ``segment-table``, ``segment-suggest`` and ``arc-search`` (thesis ch. 6) on top of
:mod:`bnfk_core.segments`."""
from __future__ import annotations

import time

from .cli import _split, add_data_options, load_model_arg, progress_to_stderr, read_data
from .errors import BnfkError

__all__ = ["register"]


def _variables(args, kind: str) -> list[str]:
    vs = _split(args.variables)
    if not vs:
        raise BnfkError(f"The '{kind}' segment needs --variables u,v[,w].")
    return vs


def _cmd_segment_table(args) -> dict:
    from .dag import apply_segment
    from .learn import learn_structure
    from .model import fit
    from .segments import case_table, segment_model
    t0 = time.perf_counter()
    if args.model and args.structure:
        raise BnfkError("Give either --model or --structure, not both.")
    variables = _variables(args, args.kind)
    if args.pseudo_count <= 0:
        raise BnfkError(f"--pseudo-count must be positive, got {args.pseudo_count}.")
    base, refit = "empty", True
    if args.model:
        model = load_model_arg(args.model)
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
            res = learn_structure(feats, args.structure, score=args.score, seed=args.seed, class_column=None)
            base_dag, base = res.dag, f"{args.structure}/{args.score}"
        model = segment_model(data, args.kind, variables, base_dag, pseudo_count=args.pseudo_count)
    table = case_table(model, data, args.kind, variables)
    out = {"data": args.data, "rows": data.n_rows, "base": base, "refit": refit,
           "network_arcs": [list(a) for a in model.dag.sorted_arcs()], **table.to_dict(),
           "seconds": time.perf_counter() - t0}
    return out


def _cmd_segment_suggest(args) -> dict:
    from .segments import mi_ranking
    data = read_data(args.data, args)
    df = mi_ranking(data, args.kind, top=args.top)
    return {"data": args.data, "kind": args.kind, "unit": "nats", "label_column": data.class_column,
            "suggestions": [{"variables": list(r.variables), "score": r.score,
                             **{k: getattr(r, k) for k in ("mi_uv", "mi_uw", "mi_vw") if k in df.columns}}
                            for r in df.itertuples()]}


def _cmd_arc_search(args) -> dict:
    from .segments import arc_search
    if args.label_column is None and args.class_column is not None:
        args.label_column = args.class_column
    if args.label_column is None:
        raise BnfkError("arc-search is supervised: give --label-column C.")
    if args.arcs < 0:
        raise BnfkError(f"--arcs must be at least 0, got {args.arcs}.")
    if args.restarts < 1:
        raise BnfkError(f"--restarts must be at least 1, got {args.restarts}.")
    data = read_data(args.data, args)
    res = arc_search(data, n_arcs=args.arcs, algorithm=args.algorithm, kernel=args.kernel,
                     n_clusters=args.clusters, restarts=args.restarts, seed=args.seed, params=args.params,
                     progress=None if args.quiet else progress_to_stderr)
    return {"data": args.data, "rows": data.n_rows, **res.to_dict(candidates=args.candidates)}


def register(sub) -> None:
    from .dag import SEGMENT_KINDS
    from .learn import METHODS
    from .model import FIT_METHODS
    from .scores import SCORES
    p = sub.add_parser("segment-table", help="a segment's case table: thesis formula, theory and measured "
                                             "kernel contribution per case (thesis 6.1)",
                       description="For each agreement case of the segment's variables between two rows: the "
                                   "thesis's formula, its value under the fitted network, the measured sum of "
                                   "the segment's Fisher-kernel terms for an actual pair of rows, and the pair.")
    p.add_argument("kind", choices=SEGMENT_KINDS)
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--variables", required=True, metavar="U,V[,W]",
                   help="segment variables in role order: single-arc u,v (u->v); v u,v,w (u->w<-v); "
                        "a u,v,w (u->v, u->w); chain u,v,w (w->u->v); full x1,...,xm")
    p.add_argument("--model", metavar="M.bif", help="base network (the segment is applied onto it)")
    p.add_argument("--structure", choices=[m for m in METHODS if m not in ("naive-bayes", "tan", "kdb")],
                   metavar="METHOD", help="learn the base network on the feature columns (default: empty)")
    p.add_argument("--score", default="qnml", choices=tuple(SCORES), help="score for --structure (default qnml)")
    p.add_argument("--pseudo-count", type=float, default=1.0, help="CPT pseudo-count (default 1)")
    add_data_options(p)
    p.set_defaults(func=_cmd_segment_table)

    p = sub.add_parser("segment-suggest", help="pairs / triples of feature columns with the highest mutual "
                                               "information, in the segment's role order")
    p.add_argument("kind", choices=SEGMENT_KINDS)
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--top", type=int, default=10)
    add_data_options(p)
    p.set_defaults(func=_cmd_segment_suggest)

    p = sub.add_parser("arc-search", help="supervised greedy arc search maximising the clustering ARI of the "
                                          "Fisher kernel from the empty network (thesis Tables 6.1, 6.4)")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--arcs", type=int, default=2, help="arcs to add (default 2)")
    p.add_argument("--algorithm", choices=("correlation", "spectral"), default="correlation")
    p.add_argument("--kernel", choices=("fisher",), default="fisher")
    p.add_argument("--clusters", type=int, metavar="N", help="number of clusters (default: number of labels)")
    p.add_argument("--restarts", type=int, default=25, help="correlation-clustering restarts (default 25)")
    p.add_argument("--params", choices=FIT_METHODS, default="ml",
                   help="CPT estimator (default ml: the empty network is then exactly scaled-Hamming)")
    p.add_argument("--candidates", action="store_true", help="list every candidate arc's ARI per step")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_data_options(p, label=True)
    p.set_defaults(func=_cmd_arc_search)
