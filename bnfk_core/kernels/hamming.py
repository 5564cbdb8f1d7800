"""The thesis's baseline kernels: Hamming (the fraction of matching variables, thesis eq. 2.17) and scaled
Hamming (the Fisher kernel of the empty network with marginal frequencies, thesis eq. 3.2), registered in
:data:`bnfk_core.registry.KERNELS` next to the Fisher kernel of :mod:`bnfk_core.kernels.fisher`."""

from __future__ import annotations

import numpy as np

from ..data.encoding import one_hot
from ..data.limits import DEFAULT_MAX_BYTES, guard_gram
from ..errors import KernelError
from ..network.dag import DAG
from ..network.model import BayesNet, cpt_counts, estimate_cpt
from ..registry import KERNELS
from .fisher import (
    HAMMING,
    NORMALIZE_BLOCK_CELLS,
    SCALED_HAMMING,
    FittedKernel,
    NetworkKernel,
    normalize_bytes,
    normalize_rows,
)

__all__ = ["scaled_hamming_model", "HammingKernel", "fit_scaled_hamming", "fit_hamming"]


def _hamming_gram(X, Y, normalize, max_bytes):
    """Fraction of matching (observed) variables, thesis eq. 2.17 (X, Y share variables and states).

    The variables with at most 64 states go into one product of one-hot matrices (0/1 entries: the counts
    are exact integers, whatever the summation order); the others add their matches a block of rows at a
    time, so no N x M temporary besides the matrix itself."""
    d = max(X.n_vars, 1)
    N, M = X.n_rows, Y.n_rows
    rs = [len(X.states[i]) for i in range(X.n_vars)]
    small = [i for i in range(X.n_vars) if rs[i] <= 64]
    width = sum(rs[i] for i in small)
    guard_gram(N, M, max(8 * (N + M) * width, normalize_bytes(N, M) if normalize else 0), max_bytes)
    if small:
        A = one_hot(X.codes[:, small], [rs[i] for i in small])
        B = A if Y is X else one_hot(Y.codes[:, small], [rs[i] for i in small])
        K = A @ B.T
        del A, B
    else:
        K = np.zeros((N, M))
    for i in range(X.n_vars):
        if rs[i] <= 64:
            continue
        Ax, Ay = (
            one_hot(X.codes[:, [i]], [rs[i]], sparse=True),
            one_hot(Y.codes[:, [i]], [rs[i]], sparse=True),
        )
        step = max(1, NORMALIZE_BLOCK_CELLS // max(M, 1))
        for a in range(0, N, step):
            K[a : a + step] += (Ax[a : a + step] @ Ay.T).toarray()
    K /= d
    if normalize:
        dx = np.asarray((X.codes >= 0).sum(axis=1)) / d
        dy = np.asarray((Y.codes >= 0).sum(axis=1)) / d
        normalize_rows(K, dx, dy)
    return K


def _aligned_like(other, ref):
    """``other`` re-coded to the variables and states of ``ref`` (unknown values are errors)."""
    stub = BayesNet(
        DAG(ref.variables), ref.states, tuple(np.full((1, len(s)), 1.0 / len(s)) for s in ref.states)
    )
    return stub.align(other)


def scaled_hamming_model(data, variables=None):
    """The empty network whose CPTs are the marginal frequencies of ``data`` (thesis eq. 3.2).

    A variable with a state that ``data`` never shows (possible when ``data`` is a training split
    or aligned to a model) gets add-one frequencies instead, so rows with that state stay defined.

    Parameters
    ----------
    data : CategoricalData
    variables : sequence of str, optional
        The columns to use (default: all).

    Returns
    -------
    BayesNet
        Its Fisher kernel is the scaled-Hamming kernel: K_i = [x_i = y_i] / P(x_i) - 1.

    References
    ----------
    Thesis §3.3.2, eq. (3.2); the bnfk paper, Lemma 1 (the univariate Fisher kernel).
    """
    variables = list(variables) if variables is not None else list(data.variables)
    d = data.select(variables)
    dag = DAG(variables)
    cards = d.cardinalities
    cpts = []
    for i in range(len(variables)):
        cnt = cpt_counts(dag, d.codes, cards, i)
        if cnt.sum() <= 0:
            raise KernelError(f"Column '{variables[i]}' has no observed values.")
        cpts.append(estimate_cpt(cnt, "ml" if (cnt > 0).all() else "smoothed"))
    return BayesNet(dag, d.states, tuple(cpts), {"method": "marginal frequencies"})


class HammingKernel(FittedKernel):
    """The Hamming kernel: the fraction of variables on which two rows agree (thesis eq. 2.17)."""

    name = HAMMING

    def __init__(self, data):
        self.variables = tuple(data.variables)

    def _rows(self, X):
        return X.select(list(self.variables))

    def gram(self, X, Y=None, *, normalize=False, max_bytes=DEFAULT_MAX_BYTES):
        X = self._rows(X)
        Y = X if Y is None else _aligned_like(Y, X)
        return _hamming_gram(X, Y, normalize, max_bytes)

    def contributions(self, x, y):
        X = self._rows(x)
        Y = _aligned_like(y, X)
        a, b = X.codes[0], Y.codes[0]
        return ((a == b) & (a >= 0)).astype(float) / max(len(self.variables), 1)


def fit_scaled_hamming(train, **context) -> NetworkKernel:
    """The scaled-Hamming kernel fitted on ``train``: marginal frequencies (thesis eq. 3.2).

    Parameters
    ----------
    train : CategoricalData
    **context
        The network options the faces hand every kernel (:data:`bnfk_core.registry.KERNEL_CONTEXT`), ignored;
        any other option is refused (this kernel takes none).

    Returns
    -------
    NetworkKernel

    References
    ----------
    Thesis eq. 3.2.
    """
    KERNELS.validate(SCALED_HAMMING, context)
    return NetworkKernel(SCALED_HAMMING, scaled_hamming_model(train))


def fit_hamming(train, **context) -> HammingKernel:
    """The Hamming kernel over the variables of ``train`` (nothing to estimate).

    Parameters
    ----------
    train : CategoricalData
    **context
        As for :func:`fit_scaled_hamming`.

    Returns
    -------
    HammingKernel
    """
    KERNELS.validate(HAMMING, context)
    return HammingKernel(train)
