"""The thesis's baseline kernels: Hamming (the fraction of matching variables, thesis eq. 2.17) and scaled
Hamming (the Fisher kernel of the empty network with marginal frequencies, thesis eq. 3.2), registered in
:data:`bnfk_core.registry.KERNELS` next to the Fisher kernel of :mod:`bnfk_core.kernels.fisher`."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..network.dag import DAG
from ..errors import KernelError
from .fisher import (FISHER_NORMALIZED, HAMMING, NORMALIZE_BLOCK_CELLS, SCALED_HAMMING, FittedKernel, NetworkKernel,
                      normalize_bytes, normalize_rows)
from ..data.limits import DEFAULT_MAX_BYTES, guard_gram
from ..network.model import BayesNet, cpt_counts, estimate_cpt
from ..registry import KERNELS, KernelSpec, lazy

__all__ = ["scaled_hamming_model", "HammingKernel", "fit_scaled_hamming", "fit_hamming"]


def _onehot(codes: np.ndarray, r: int, dense: bool):
    ok = codes >= 0
    A = sp.csr_matrix((np.ones(int(ok.sum())), (np.flatnonzero(ok), codes[ok])), shape=(len(codes), r))
    return A.toarray() if dense else A


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
        A = np.hstack([_onehot(X.codes[:, i], rs[i], True) for i in small])
        B = A if Y is X else np.hstack([_onehot(Y.codes[:, i], rs[i], True) for i in small])
        K = A @ B.T
        del A, B
    else:
        K = np.zeros((N, M))
    for i in range(X.n_vars):
        if rs[i] <= 64:
            continue
        Ax, Ay = _onehot(X.codes[:, i], rs[i], False), _onehot(Y.codes[:, i], rs[i], False)
        step = max(1, NORMALIZE_BLOCK_CELLS // max(M, 1))
        for a in range(0, N, step):
            K[a:a + step] += (Ax[a:a + step] @ Ay.T).toarray()
    K /= d
    if normalize:
        dx = np.asarray((X.codes >= 0).sum(axis=1)) / d
        dy = np.asarray((Y.codes >= 0).sum(axis=1)) / d
        normalize_rows(K, dx, dy)
    return K


def _aligned_like(other, ref):
    """``other`` re-coded to the variables and states of ``ref`` (unknown values are errors)."""
    stub = BayesNet(DAG(ref.variables), ref.states,
                    tuple(np.full((1, len(s)), 1.0 / len(s)) for s in ref.states))
    return stub.align(other)


def scaled_hamming_model(data, variables=None):
    """The empty network whose CPTs are the marginal frequencies of ``data`` (thesis eq. 3.2).

    A variable with a state that ``data`` never shows (possible when ``data`` is a training split
    or aligned to a model) gets add-one frequencies instead, so rows with that state stay defined.
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


def fit_scaled_hamming(train, **_ignored) -> NetworkKernel:
    """The scaled-Hamming kernel fitted on ``train``: marginal frequencies (thesis eq. 3.2)."""
    return NetworkKernel(SCALED_HAMMING, scaled_hamming_model(train))


def fit_hamming(train, **_ignored) -> HammingKernel:
    """The Hamming kernel over the variables of ``train`` (nothing to estimate)."""
    return HammingKernel(train)


KERNELS.register(KernelSpec(
    name=SCALED_HAMMING, label="Scaled Hamming", abbr="SH", fit=fit_scaled_hamming, shift="adaptive", psd=True,
    family="baseline", description="Fisher kernel of the empty network with marginal frequencies, thesis eq. 3.2"))
KERNELS.register(KernelSpec(
    name=HAMMING, label="Hamming", abbr="H", fit=fit_hamming, shift="adaptive", psd=True,
    family="baseline", description="fraction of matching variables, thesis eq. 2.17"))
# the normalised Fisher kernel, registered right after the thesis's three (a fixed place in the order whatever is
# imported first: every kernel provider imports this module before registering); its module loads on the first fit
KERNELS.register(KernelSpec(
    name=FISHER_NORMALIZED, label="Fisher, power- and L2-normalised", abbr="FN",
    fit=lazy("bnfk_core.kernels.fisher_normalized", "fit_fisher_normalized"), shift="adaptive", psd=True,
    uses_network=True, family="fisher",
    description="signed power sign(z)|z|^alpha on every Fisher feature, then each row scaled to unit length "
                "(Perronnin, Sanchez & Mensink 2010); options alpha and the network's recipe (defaults chosen by "
                "measurement: docs/KERNELS.md)"))
