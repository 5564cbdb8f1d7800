"""The normalised Fisher kernel's options, checked (:mod:`bnfk_core.kernels.fisher_normalized`): the power
alpha, the empty network's weight, how blanks are read, and the blocks of intra-normalisation."""

from __future__ import annotations

import numpy as np

from ..errors import KernelError
from .members import ALPHA

__all__ = [
    "BLANKS",
    "INTRA",
    "check_alpha",
    "check_blanks",
    "check_weight",
    "check_intra",
    "intra_blocks",
    "blanks_as_missing",
]

#: how the kernel reads a blank read as its own category (the state ``?`` of ``missing_policy="category"``):
#: "category" as it is, "missing" as a missing cell (marginalised: E[phi | observed])
BLANKS = ("category", "missing")
#: intra-normalisation (Arandjelovic & Zisserman 2013): after the power map each block of psi is L2-normalised
#: on its own, then the row; blocks "none" (the row is one block), "variable" (all of a variable's
#: coordinates), or "class-variable" (per variable and parent configuration: per (class, variable) for the
#: latent class network)
INTRA = ("none", "variable", "class-variable")


def check_blanks(blanks) -> str:
    """``blanks`` if it is one of :data:`BLANKS`, else a KernelError naming it.

    Parameters
    ----------
    blanks : object

    Returns
    -------
    str
    """
    if blanks not in BLANKS:
        raise KernelError(f"blanks must be one of {', '.join(BLANKS)}, not {str(blanks)[:80]!r}.")
    return blanks


def check_weight(weight) -> float:
    """``weight`` as a float in [0, 1), or a KernelError naming it (the empty network's share of the default).

    Parameters
    ----------
    weight : object

    Returns
    -------
    float
    """
    try:
        w = float(weight)
    except (TypeError, ValueError):
        raise KernelError(f"The empty network's weight must be a number in [0, 1), not {weight!r}.") from None
    if not (0.0 <= w < 1.0):
        raise KernelError(f"The empty network's weight must be in [0, 1), not {weight!r}.")
    return w


def blanks_as_missing(data):
    """``data`` with every blank read as a category (the state ``?``,
    :data:`bnfk_core.data.binning.MISSING_CATEGORY`) turned into a missing cell and the state dropped.

    Parameters
    ----------
    data : CategoricalData (other inputs are returned as they are: codes are already the model's)

    Returns
    -------
    CategoricalData
    """
    from ..data.binning import MISSING_CATEGORY
    from ..data.table import from_codes

    if (
        not hasattr(data, "states")
        or not hasattr(data, "codes")
        or getattr(data, "weights", None) is not None
    ):
        return data
    if not any(MISSING_CATEGORY in st for st in data.states):
        return data
    codes = np.array(data.codes, dtype=np.int32, copy=True)
    states = []
    for j, st in enumerate(data.states):
        st = tuple(st)
        if MISSING_CATEGORY in st:
            b = st.index(MISSING_CATEGORY)
            col = codes[:, j]
            col[col == b] = -1
            col[col > b] -= 1
            st = st[:b] + st[b + 1 :]
        states.append(st)
    return from_codes(codes, data.variables, states, class_column=data.class_column, source=data.source)


def check_intra(intra) -> str:
    """``intra`` if it is one of :data:`INTRA`, else a KernelError naming it.

    Parameters
    ----------
    intra : object

    Returns
    -------
    str
    """
    if intra not in INTRA:
        raise KernelError(f"intra must be one of {', '.join(INTRA)}, not {str(intra)[:80]!r}.")
    return intra


def intra_blocks(model, intra: str = "none") -> np.ndarray:
    """The block of every column of phi (columns offset_i + j r_i + v,
    :func:`bnfk_core.kernels.features.features`):
    all 0 for "none", the variable i for "variable", the pair (i, j) -- variable and parent configuration, one
    block for a root -- for "class-variable".

    Parameters
    ----------
    model : BayesNet
    intra : {"none", "variable", "class-variable"}

    Returns
    -------
    numpy.ndarray of int64, shape (sum_i q_i r_i,)
    """
    intra = check_intra(intra)
    qr = [(int(t.shape[0]), int(t.shape[1])) for t in model.cpts]
    if intra == "none":
        return np.zeros(sum(q * r for q, r in qr), dtype=np.int64)
    if intra == "variable":
        return np.repeat(np.arange(len(qr), dtype=np.int64), [q * r for q, r in qr])
    return np.repeat(np.arange(sum(q for q, _ in qr), dtype=np.int64), [r for q, r in qr for _ in range(q)])


def check_alpha(alpha) -> float:
    """``alpha`` as a float in the interval its declaration allows (:data:`.members.ALPHA`: (0, 1]), or a
    KernelError naming it.

    Parameters
    ----------
    alpha : object

    Returns
    -------
    float
    """
    if alpha is None or not ALPHA.allows(alpha):
        raise KernelError(f"The power alpha must be {ALPHA.allowed.describe()}, not {alpha!r}.")
    return float(alpha)
