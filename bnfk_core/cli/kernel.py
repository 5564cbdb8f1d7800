"""Subcommands ``kernel``, ``mmd`` and ``features``: Gram matrices, squared MMD (paper eq. 10) and the
explicit sparse Fisher feature map."""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..errors import BnfkError
from ..files import atomic_path
from ..kernels import FISHER, feature_offsets, features, gram, mmd
from ..registry import KERNELS
from .common import (
    add_data_options,
    add_max_memory,
    check_output,
    read_data,
    read_model_file,
)

__all__ = ["register"]


def _kernel_inputs(args, path):
    """(model or None, data aligned to it) for the kernel subcommands."""
    model = read_model_file(args.model) if args.model else None
    data = read_data(path, args, model=model)
    if model is None:
        data = data.without_class()
    return model, data


def _cmd_kernel(args) -> dict:
    ext = check_output(args.output, (".npy", ".csv"), "a Gram matrix")
    if KERNELS[args.kind].uses_network and not args.model:
        raise BnfkError(f"The {KERNELS[args.kind].label} kernel needs --model M.bif (learn one with 'learn').")
    t0 = time.perf_counter()
    model, data = _kernel_inputs(args, args.data)
    other = _kernel_inputs(args, args.other)[1] if args.other else None
    K = gram(model, data, other, kind=args.kind, normalize=args.normalize)
    with atomic_path(args.output) as tmp:
        if ext == ".npy":
            np.save(tmp, K)
        else:
            np.savetxt(tmp, K, delimiter=",", fmt="%.17g")
    return {"output": args.output, "kind": args.kind, "shape": list(K.shape), "normalize": args.normalize,
            "seconds": time.perf_counter() - t0}


def _cmd_mmd(args) -> dict:
    model = read_model_file(args.model)
    a = read_data(args.a, args, model=model)
    b = read_data(args.b, args, model=model)
    return {"mmd": mmd(model, a, b), "rows_a": a.n_rows, "rows_b": b.n_rows}


def _cmd_features(args) -> dict:
    check_output(args.output, (".npz",), "features")
    model = read_model_file(args.model)
    data = read_data(args.data, args, model=model)
    Phi = features(model, data)
    with atomic_path(args.output) as tmp:
        sp.save_npz(tmp, Phi)
    off = feature_offsets(model)
    return {"output": args.output, "shape": list(Phi.shape), "nnz": int(Phi.nnz),
            "blocks": [{"variable": v, "offset": int(off[i]), "columns": int(off[i + 1] - off[i])}
                       for i, v in enumerate(model.variables)]}


def register(sub) -> None:
    p = sub.add_parser("kernel", help="Gram matrix of a CSV under a model (.npy or plain .csv)")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--model", metavar="M.bif", help="the network (needed by the Fisher kernel; for the others it "
                                                     "selects the variables)")
    p.add_argument("--kind", "--kernel", dest="kind", choices=tuple(KERNELS), default=FISHER, help="the kernel")
    p.add_argument("--other", metavar="DATA2.csv", help="rows of the second argument (default: DATA)")
    p.add_argument("--normalize", action="store_true", help="cosine-normalise: K / sqrt(diag diag)")
    p.add_argument("-o", "--output", required=True, metavar="K.npy|K.csv")
    add_max_memory(p)
    add_data_options(p)
    p.set_defaults(func=_cmd_kernel)

    p = sub.add_parser("mmd", help="squared MMD between two CSVs under a model's Fisher kernel (paper eq. 10)")
    p.add_argument("a", metavar="A.csv")
    p.add_argument("b", metavar="B.csv")
    p.add_argument("--model", required=True, metavar="M.bif")
    add_data_options(p)
    p.set_defaults(func=_cmd_mmd)

    p = sub.add_parser("features", help="explicit sparse Fisher feature map (scipy .npz)")
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--model", required=True, metavar="M.bif")
    p.add_argument("-o", "--output", required=True, metavar="PHI.npz")
    add_data_options(p)
    p.set_defaults(func=_cmd_features)
