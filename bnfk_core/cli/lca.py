"""Subcommand ``lca``: fit latent class models (EM, seeded starts) for one K or a range; optionally save the
model as a network with a hidden root (any model format:
.bif, .xmlbif, .net, .xdsl or .json)."""

from __future__ import annotations

from ..errors import BnfkError
from .common import (
    add_data_options,
    add_numbers_option,
    add_quiet,
    check_output,
    float_in,
    input_files,
    int_at_least,
    progress,
    read_data,
    resolve_numbers,
)

__all__ = ["register", "SUBCOMMANDS"]

#: the subcommand and its help line (registered by name without importing what it runs)
SUBCOMMANDS = {"lca": "latent class models: EM with seeded starts, BIC/AIC for K or a range of K"}


def _cmd_lca(args) -> dict:
    from ..analyses.cluster.clustering import clustering_metrics
    from ..data.files import atomic_path
    from ..lca import fit_lca_range, parse_classes
    from ..lca.fibers import Moments, rank_diagnostic
    from ..lca.report import summary
    from ..network.formats import MODEL_EXTENSIONS, write_model

    ks = parse_classes(args.classes)
    resolve_numbers(args, {"-o": bool(args.output), "--screen": bool(args.screen)}, label=args.class_column)
    if args.numbers == "keep":
        return _lca_mixed(args, ks)
    if args.output:
        check_output(args.output, MODEL_EXTENSIONS, "a model", input_files(args))
    data = read_data(args.data, args)
    feats = data.without_class() if data.class_column else data
    fits = fit_lca_range(
        feats,
        ks,
        starts=args.starts,
        seed=args.seed,
        tol=args.tol,
        max_iter=args.max_iter,
        screen=args.screen,
        keep=args.keep,
        progress=progress(args),
    )
    entries = []
    for m in fits:
        e = summary(m, feats)
        if data.class_column:
            e.update(
                {
                    k: v
                    for k, v in clustering_metrics(data.labels(), m.modal_classes(feats)).items()
                    if k in ("ari", "ami", "v_measure")
                }
            )
        if not args.profiles:
            e.pop("profiles")
        entries.append(e)
    best = min(fits, key=lambda m: m.bic)
    out = {
        "data": args.data,
        "rows": data.n_rows,
        "variables": list(feats.variables),
        "label_column": data.class_column,
        "rank_diagnostic": rank_diagnostic(
            Moments.from_codes(feats.codes, feats.cardinalities), n_rows=feats.n_rows
        ),
    }
    if len(fits) == 1:
        out.update(entries[0])
    else:
        out.update(fits=entries, best_bic=best.n_classes, best_aic=min(fits, key=lambda m: m.aic).n_classes)
    if args.output:
        with atomic_path(args.output) as tmp:
            write_model(best.to_bayesnet(), tmp)
        out.update(output=args.output, output_classes=best.n_classes)
    return out


def _lca_mixed(args, ks) -> dict:
    """``lca --numbers keep``: latent classes with Gaussian indicators for the numeric columns
    (:func:`bnfk_core.lca.mixed.fit_mixed_lca`)."""
    import numpy as np

    from ..analyses.cluster.clustering import clustering_metrics
    from ..lca.mixed import fit_mixed_lca
    from .hybrid import read_mixed

    if args.output:
        raise BnfkError(
            "-o writes a discrete network; a latent class model with numeric indicators has none yet "
            "(leave out -o or use --numbers bin)."
        )
    if args.screen:
        raise BnfkError("--screen applies to --numbers bin; with --numbers keep every start runs to the end.")
    data = read_mixed(args.data, args)
    labels = None
    feats = data
    if args.class_column:
        j = data.index(args.class_column)
        if data.kinds[j] != "discrete":
            raise BnfkError(f"--class-column '{args.class_column}' is numeric; name a categorical column.")
        labels = data.codes[:, j]
        feats = data.select([v for v in data.variables if v != args.class_column])
    entries, fits = [], []
    for k in ks:
        m = fit_mixed_lca(feats, k, starts=args.starts, seed=args.seed, tol=args.tol, max_iter=args.max_iter)
        e = m.summary()
        if labels is not None:
            ok = labels >= 0
            got = clustering_metrics(labels[ok], m.modal_classes(feats)[ok])
            e.update({key: v for key, v in got.items() if key in ("ari", "ami", "v_measure")})
        if not args.profiles:
            e.pop("profiles")
        fits.append(m)
        entries.append(e)
    out = {
        "data": args.data,
        "rows": data.n_rows,
        "model_kind": "mixed",
        "variables": list(feats.variables),
        "numeric_columns": [feats.variables[i] for i in feats.numeric],
        "label_column": args.class_column,
        "notes": list(data.notes),
    }
    if len(fits) == 1:
        out.update(entries[0])
    else:
        out.update(
            fits=entries,
            best_bic=fits[int(np.argmin([m.bic for m in fits]))].n_classes,
            best_aic=fits[int(np.argmin([m.aic for m in fits]))].n_classes,
        )
    return out


def register(sub) -> None:
    p = sub.add_parser(
        "lca",
        help=SUBCOMMANDS["lca"],
        description="Fit latent class models (a naive Bayes network with a hidden class) to the "
        "columns of DATA.csv (the --class-column is left out and scored against with "
        "ARI/AMI/V). Missing cells are marginalised.",
    )
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument(
        "--classes", required=True, metavar="K|A-B", help="number of classes, or a range such as 1-5"
    )
    p.add_argument(
        "--starts", type=int_at_least(1, 10_000), default=20, help="seeded random EM starts (default 20)"
    )
    p.add_argument(
        "--tol",
        type=float_in(0.0, 1.0, low_open=True),
        default=1e-8,
        help="stop a start when the mean log-likelihood per row gains less (in (0, 1]; default 1e-8)",
    )
    p.add_argument(
        "--max-iter", type=int_at_least(1, 1_000_000), default=1000, help="E-steps per start (default 1000)"
    )
    p.add_argument(
        "--screen",
        type=int_at_least(0, 1_000_000),
        default=0,
        metavar="E",
        help="short-run screening: every start runs E EM steps, only the --keep best continue (0: off)",
    )
    p.add_argument(
        "--keep",
        type=int_at_least(1, 10_000),
        default=None,
        help="starts continued after --screen (default max(5, starts / 5))",
    )
    p.add_argument(
        "--profiles", action="store_true", help="include the class profiles P(x_i | class) in the JSON"
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="MODEL.bif|.xmlbif|.net|.xdsl|.json",
        help="save the model (the least-BIC one for a range) with a hidden root node 'latent_class'",
    )
    add_numbers_option(
        p,
        "each numeric column a Gaussian indicator with a class-specific mean and variance (a mixed "
        "measurement model, as StepMix's categorical + gaussian_diag)",
    )
    add_quiet(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_lca)
