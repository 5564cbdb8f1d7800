"""What ``kernel``, ``cluster`` and ``prototypes`` do with ``--numbers keep``: the Fisher kernel of a hybrid
(conditional linear Gaussian) network (:mod:`bnfk_core.kernels.hybrid_fisher`) on a mixed table whose
numbers stay numbers, its network read from a hybrid JSON model file or learned on the table."""

from __future__ import annotations

import time

import numpy as np

from ..errors import BnfkError
from .common import input_files, write_gram

__all__ = ["numbers_kept", "hybrid_kernel", "hybrid_cluster", "hybrid_prototypes"]


def numbers_kept(args, discrete_options: dict | None = None, label: str | None = None) -> bool:
    """Whether the hybrid kernel runs: ``--numbers keep`` or a hybrid model file (a contradiction is one
    sentence); ``--numbers auto`` settled by :func:`~bnfk_core.cli.common.resolve_numbers` with the
    subcommand's ``discrete_options`` (and ``--chunksize`` / ``--engine dask``)."""
    from .common import resolve_numbers
    from .hybrid import is_hybrid_model

    streaming = {
        "--chunksize": getattr(args, "chunksize", None) is not None,
        "--engine dask": getattr(args, "engine", "local") == "dask",
    }
    resolve_numbers(args, {**streaming, **(discrete_options or {})}, label)

    model = getattr(args, "model", None)
    hybrid = bool(model) and is_hybrid_model(model)
    if args.numbers == "bin" and hybrid:
        raise BnfkError(
            f"--numbers bin needs a discrete model; {model} is a hybrid one (leave out --numbers)."
        )
    if args.numbers == "keep" and model and not hybrid:
        raise BnfkError(
            "--numbers keep needs a hybrid model (a .json file written by 'learn --numbers keep'), not "
            f"{model}."
        )
    if (args.numbers == "keep" or hybrid) and (
        getattr(args, "chunksize", None) is not None
        or getattr(args, "engine", "local") not in (None, "local")
    ):
        raise BnfkError("--numbers keep reads a table held in memory; leave out --chunksize and --engine.")
    return args.numbers == "keep" or hybrid


def _model_and_data(args, label: str | None = None, structure: str | None = None):
    """(HybridNet, its MixedData, the label column's codes or None, notes): the model of ``--model`` with
    DATA read as its columns, or a network learned on DATA's other columns (hill climbing by BIC, EM for
    missing cells)."""
    from ..hybrid import learn_hybrid_network, read_hybrid
    from .hybrid import HYBRID_LEARNERS, read_mixed

    data = read_mixed(args.data, args, categorical=[label] if label else ())
    labels = None
    if label is not None:
        if label not in data.variables:
            raise BnfkError(f"Label column '{label}' is not a column of {args.data}.")
        labels = data.codes[:, data.variables.index(label)].astype(np.int64)
        data = data.select([v for v in data.variables if v != label])
    notes = list(data.notes)
    if args.model:
        model = read_hybrid(args.model)
        return model, model.align(data), labels, notes, args.model
    structure = structure or "hc"
    if structure not in HYBRID_LEARNERS:
        raise BnfkError(
            f"--numbers keep learns its network with --structure {' or '.join(HYBRID_LEARNERS)}, not "
            f"'{structure}' (or give --model M.json)."
        )
    got = learn_hybrid_network(
        data,
        score=getattr(args, "score", None) or "bic",
        **HYBRID_LEARNERS[structure],
        params=getattr(args, "params", None) or "ml",
    )
    notes += got.notes
    return (
        got.model,
        got.model.align(data),
        labels,
        notes,
        f"{structure}/{got.score_name} learned on {args.data}",
    )


def hybrid_counterpart(kind: str) -> bool:
    """Whether kernel ``kind`` has a hybrid form: the Fisher kernel read straight off the network (its spec's
    ``gram``, Theorem 1), which :func:`bnfk_core.kernels.hybrid_fisher_gram` extends to CLG networks."""
    from ..registry import KERNELS

    spec = KERNELS[kind]
    return spec.gram is not None and not spec.latent_model


def hybrid_kernel(args, ext: str) -> dict:
    """``kernel DATA --numbers keep --model M.json``: the hybrid Fisher Gram matrix, written to
    ``args.output``."""
    from ..hybrid import read_hybrid
    from ..kernels import hybrid_fisher_gram
    from .hybrid import read_mixed

    if not hybrid_counterpart(args.kind):
        raise BnfkError(
            f"--numbers keep computes the hybrid network's Fisher kernel; --kind {args.kind} works on binned "
            "tables (--numbers bin)."
        )
    if not args.model:
        raise BnfkError("--numbers keep needs --model M.json (learn one with 'learn DATA --numbers keep').")
    t0 = time.perf_counter()
    model = read_hybrid(args.model)
    data = model.align(read_mixed(args.data, args, model))
    other = model.align(read_mixed(args.other, args, model)) if args.other else None
    K = hybrid_fisher_gram(model, data, other, normalize=args.normalize)
    write_gram(args.output, K, ext)
    return {
        "output": args.output,
        "kind": args.kind,
        "numbers": "keep",
        "model_kind": "hybrid",
        "shape": list(K.shape),
        "normalize": args.normalize,
        "seconds": time.perf_counter() - t0,
    }


def hybrid_cluster(args) -> dict:
    """``cluster DATA --numbers keep``: a Gram-based clustering of the hybrid Fisher kernel's matrix, scored
    against ``--label-column`` when given."""
    from ..analyses.cluster.clustering import choose_algorithm, cluster, clustering_metrics
    from ..kernels import hybrid_fisher_gram
    from ..kernels.members import FISHER
    from ..registry import CLUSTERERS

    kernel = FISHER if args.kernel is None else args.kernel
    if not hybrid_counterpart(kernel):
        raise BnfkError(
            "--numbers keep clusters with the hybrid network's Fisher kernel; --kernel "
            f"{args.kernel} works on binned tables (--numbers bin)."
        )
    spec = CLUSTERERS[args.algorithm]
    if spec.gram is None and (spec.features is not None or spec.run is not None):
        gram_based = ", ".join(c.name for c in CLUSTERERS.values() if c.gram is not None)
        raise BnfkError(
            f"--numbers keep clusters the Gram matrix (--algorithm {gram_based} or auto), "
            f"not {args.algorithm}."
        )
    t0 = time.perf_counter()
    label = args.label_column or args.class_column
    model, data, true, notes, source = _model_and_data(args, label, args.structure)
    if true is None and args.clusters is None:
        raise BnfkError("Give --clusters N or --label-column C (the number of labels is the default).")
    n_clusters = args.clusters or int(len(np.unique(true[true >= 0])))
    algorithm, reason = choose_algorithm(data.n_rows, args.algorithm, feature_map=False)
    t1 = time.perf_counter()
    K = hybrid_fisher_gram(model, data)
    kernel_seconds = time.perf_counter() - t1
    res = cluster(
        K,
        n_clusters,
        algorithm,
        kernel=kernel,
        transform=args.transform,
        shift=args.shift,
        restarts=args.restarts,
        seed=args.seed,
    )
    truth = None if true is None else np.where(true >= 0, true, -1)
    out = {
        "data": args.data,
        "rows": data.n_rows,
        "numbers": "keep",
        "model": source,
        **clustering_metrics(truth, res.labels, K),
        "kernel": kernel,
        "algorithm": algorithm,
        "n_clusters": res.n_clusters,
        "n_used": res.n_used,
        "transform": res.transform,
        "cost": res.cost,
        "restarts": args.restarts if res.restart_costs else None,
        "seed": args.seed,
        "features": list(data.variables),
        "numeric_columns": [model.variables[i] for i in model.numeric],
        "label_column": label,
        "kernel_seconds": kernel_seconds,
        "cluster_seconds": res.seconds,
        "seconds": time.perf_counter() - t0,
        "notes": notes,
    }
    if algorithm != args.algorithm:
        out.update(algorithm_requested=args.algorithm, algorithm_chosen=algorithm, algorithm_reason=reason)
    if not args.no_labels_out:
        out["labels"] = res.labels.tolist()
    return out


def hybrid_prototypes(args, t0: float) -> dict:
    """``prototypes DATA --numbers keep``: greedy MMD (Algorithm 1) on the hybrid Fisher features."""
    from ..analyses.prototypes.hybrid import select_hybrid_prototypes
    from ..data.files import atomic_path
    from .common import check_output, progress
    from .hybrid import write_mixed_csv

    if args.output:
        check_output(args.output, (".csv",), "the selected rows", input_files(args))
    model, data, _, notes, source = _model_and_data(args, None, args.structure)
    r = select_hybrid_prototypes(
        model, data, args.k, args.criterion, n_init=args.n_init, seed=args.seed, progress=progress(args)
    )
    out = r.to_dict()
    out.update(
        {
            "model": source,
            "numbers": "keep",
            "rows": data.n_rows,
            "seconds": time.perf_counter() - t0,
            "seconds_greedy": r.seconds,
            "notes": notes,
        }
    )
    if args.output:
        with atomic_path(args.output) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
            write_mixed_csv(data.subset(r.indices), fh)
        out["output"] = args.output
    return out
