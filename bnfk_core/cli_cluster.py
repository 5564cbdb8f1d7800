"""Subcommands ``cluster`` and ``classify`` (thesis ch. 5 and App. D) on top of :mod:`bnfk_core.cluster`."""
from __future__ import annotations

import sys

from .cli import add_data_options, load_model_arg, progress_to_stderr, read_data
from .errors import BnfkError

__all__ = ["register"]

_FISHER_HELP = ("structure of the network behind the Fisher kernel, learned on the feature columns only "
                "(default: hc with --score qnml; 'exact' is the thesis's choice for <= 20 features)")


def _model_options(p) -> None:
    from .learn import METHODS
    from .model import FIT_METHODS
    from .scores import SCORES
    g = p.add_argument_group("Fisher kernel model (ignored by hamming / scaled-hamming)")
    g.add_argument("--structure", default="hc", choices=[m for m in METHODS if m not in ("naive-bayes", "tan", "kdb")],
                   metavar="METHOD", help=_FISHER_HELP)
    g.add_argument("--score", default="qnml", choices=tuple(SCORES), help="structure score (default qnml)")
    g.add_argument("--params", default="cnml", choices=FIT_METHODS,
                   help="CPT estimator (default cnml, as the thesis)")
    g.add_argument("--model", metavar="M.bif", help="use this network instead of learning one "
                   "(it must not contain the label column)")


def _load(args):
    model = load_model_arg(args.model) if getattr(args, "model", None) else None
    if args.label_column is None and args.class_column is not None:
        args.label_column = args.class_column
    data = read_data(args.data, args)
    return model, data


def _check_int(value, name, minimum):
    if value is not None and value < minimum:
        raise BnfkError(f"--{name} must be at least {minimum}, got {value}.")


def _cmd_cluster(args) -> dict:
    from .cluster import run_clustering
    _check_int(args.clusters, "clusters", 1)
    _check_int(args.restarts, "restarts", 1)
    model, data = _load(args)
    if data.class_column is None and args.clusters is None:
        raise BnfkError("Give --clusters N or --label-column C (the number of labels is the default).")
    out = run_clustering(data, args.kernel, args.algorithm, n_clusters=args.clusters, transform=args.transform,
                         shift=args.shift, restarts=args.restarts, seed=args.seed, model=model,
                         structure=args.structure, score=args.score, params=args.params)
    if args.no_labels_out:
        out.pop("labels")
    return {"data": args.data, "rows": data.n_rows, **out}


def _cmd_classify(args) -> dict:
    from .cluster import classify
    _check_int(args.repeats, "repeats", 1)
    _check_int(args.k, "k", 1)
    model, data = _load(args)
    if data.class_column is None:
        raise BnfkError("classify needs --label-column C (the classes to predict).")
    progress = None if args.quiet else progress_to_stderr
    res = classify(data, args.kernel, args.classifier, repeats=args.repeats, seed=args.seed, test_size=args.test_size,
                   k=args.k, C=args.C, neighbours=args.neighbours, structure=args.structure, score=args.score, params=args.params, model=model,
                   progress=progress)
    out = res.to_dict()
    for note in out["notes"]:
        sys.stderr.write(f"warning: {note}\n")
    return {"data": args.data, "rows": data.n_rows, "label_column": data.class_column, **out}


def register(sub) -> None:
    from .cluster import ALGORITHMS, CLASSIFIERS, KERNELS, SHIFTS, TRANSFORMS
    p = sub.add_parser("cluster", help="cluster rows with a kernel (spectral or correlation clustering; thesis ch. 5)",
                       description="Cluster the rows of DATA.csv with a kernel over the feature columns (the label "
                                   "column is never a feature) and score the clusters against the labels "
                                   "(ARI, AMI, V-measure) and by the kernel-distance silhouette.")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--kernel", choices=KERNELS, default="scaled-hamming", help="default scaled-hamming")
    p.add_argument("--algorithm", choices=ALGORITHMS, default="correlation", help="default correlation")
    p.add_argument("--clusters", type=int, metavar="N", help="number of clusters (default: number of labels; an "
                   "upper bound for correlation clustering, whose clusters may empty)")
    p.add_argument("--transform", choices=TRANSFORMS, default="shift-min",
                   help="kernel -> affinity for spectral clustering: shift-min (thesis, default), cosine, rbf")
    p.add_argument("--shift", choices=SHIFTS, default="auto",
                   help="shift for correlation clustering: auto (thesis: adaptive for hamming/scaled-hamming, "
                        "none for fisher), adaptive, none")
    p.add_argument("--restarts", type=int, default=25, help="local-search restarts of correlation clustering (25)")
    p.add_argument("--no-labels-out", action="store_true", help="leave the per-row cluster labels out of the JSON")
    _model_options(p)
    add_data_options(p, label=True)
    p.set_defaults(func=_cmd_cluster)

    p = sub.add_parser("classify", help="kernel kNN / SVM accuracy and log loss over seeded 80/20 splits (thesis App. D)",
                       description="Classify the label column from the other columns with a precomputed kernel; the "
                                   "kernel's model is estimated on each training split only.")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--kernel", choices=KERNELS, default="scaled-hamming", help="default scaled-hamming")
    p.add_argument("--classifier", choices=CLASSIFIERS, default="svm", help="default svm")
    p.add_argument("--repeats", type=int, default=10, help="train/test splits, seeds SEED..SEED+R-1 (default 10)")
    p.add_argument("--test-size", type=float, default=0.2, help="test fraction (default 0.2)")
    p.add_argument("--k", type=int, default=7, help="neighbours for knn (default 7)")
    p.add_argument("--neighbours", choices=("distance", "similarity"), default="distance",
                   help="knn neighbours by kernel distance (default) or by largest kernel value")
    p.add_argument("--C", type=float, default=1.0, help="SVM penalty (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _model_options(p)
    add_data_options(p, label=True)
    p.set_defaults(func=_cmd_classify)
