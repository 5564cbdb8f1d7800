"""The Fisher kernel of a latent class model (``lca-fisher`` in :data:`bnfk_core.registry.KERNELS`).

The score of p(x) = sum_t p(x, t) is the posterior-weighted complete-data score,
s(x) = sum_t p(t | x) s(x, t), and with the complete-data information I (block diagonal: Theorem 1 of the
paper applied to the network C -> x_i) the kernel is

    K(x, y) = sum_t sum_u p(t | x) p(u | y) s(x, t)^T I^-1 s(y, u)
            = sum_t sum_u p(t | x) p(u | y) K_c((x, t), (y, u)),

which is the project's marginalised Fisher kernel (expected features E[phi | x_observed],
:mod:`bnfk_core.kernels.fisher`) on the hidden-root network with the class column always missing.  So the
kernel here IS :func:`bnfk_core.kernels.fisher.gram` on :meth:`LatentClassModel.to_bayesnet` (aligning data to
that network adds the class column as missing); tests/test_lca_kernel.py checks it against numerically
differentiated scores.  The network's CPTs are the EM estimates smoothed with one pseudo-count (the Fisher
kernel needs every probability positive; the paper's "smoothed" estimator applied to the expected counts).

The latent class model itself (:mod:`bnfk_core.lca`) is a floor below: it knows nothing of kernels.
"""

from __future__ import annotations

import numpy as np

from ..lca.members import LCA_FISHER
from ..lca.model import best_by_bic, fit_lca
from ..registry import KERNELS
from .fisher import NetworkKernel

__all__ = [
    "LCA_FISHER",
    "LatentClassKernel",
    "fit_lca_fisher",
    "kernel_network",
    "KERNEL_KMAX",
    "KERNEL_STARTS",
]

KERNEL_KMAX = 6  # without ``classes``, the kernel's model has the K in 1..KERNEL_KMAX with the least BIC
KERNEL_STARTS = 10


def kernel_network(model, pseudo_count: float = 1.0):
    """The hidden-root network behind the kernel of a fitted :class:`LatentClassModel`.

    Parameters
    ----------
    model : LatentClassModel
    pseudo_count : float
        Smoothing of :meth:`LatentClassModel.to_bayesnet` (the kernel needs positive probabilities).

    Returns
    -------
    BayesNet
    """
    return model.to_bayesnet(pseudo_count=pseudo_count)


class LatentClassKernel(NetworkKernel):
    """The Fisher kernel of a latent class network (a NetworkKernel: its Gram, feature map and per-variable
    contributions are the marginalised Fisher kernel's; the first contribution is the class node's)."""

    def __init__(self, net, lca=None, notes=()):
        super().__init__(LCA_FISHER, net, structure="latent class", params="EM + 1 pseudo-count", notes=notes)
        self.hidden = net.fit_info.get("hidden")
        self.variables = tuple(v for v in net.variables if v != self.hidden)
        self.lca = lca

    def contributions(self, x, y):
        """Per observed variable: its block's term of Theorem 1 plus an equal share of the class node's term
        (sum_t p(t|x) p(t|y) / w_t - 1), so that the terms sum to K(x, y); :meth:`class_term` gives that term.

        Parameters
        ----------
        x, y : one row each

        Returns
        -------
        ndarray, shape (n_observed_vars,)

        References
        ----------
        Paper, Theorem 1.
        """
        full = super().contributions(x, y)
        h = list(self.model.variables).index(self.hidden)
        rest = np.delete(full, h)
        return rest + full[h] / max(len(rest), 1)

    def class_term(self, x, y) -> float:
        """The class node's term of K(x, y).

        Parameters
        ----------
        x, y : one row each

        Returns
        -------
        float
        """
        return float(super().contributions(x, y)[list(self.model.variables).index(self.hidden)])


def _is_latent_network(model, train) -> bool:
    info = getattr(model, "fit_info", None) or {}
    hidden = info.get("hidden")
    return (
        hidden is not None
        and hidden in model.variables
        and all(v in train.variables for v in model.variables if v != hidden)
    )


def fit_lca_fisher(
    train, *, model=None, classes: int | None = None, seed: int = 0, starts: int = KERNEL_STARTS, **context
) -> LatentClassKernel:
    """The latent-class Fisher kernel for ``train``: a given latent class network (``model`` with a hidden
    root, e.g. the app's session network), else a model with ``classes`` classes (default: least BIC for
    K = 1..KERNEL_KMAX) fitted on ``train`` by EM.

    Parameters
    ----------
    train : CategoricalData
    model : BayesNet, optional
    classes : int, optional
    seed, starts : int
    **context
        The network options the faces hand every kernel (:data:`bnfk_core.registry.KERNEL_CONTEXT`), ignored;
        any other name is refused, as is a value the declared options do not allow
        (:data:`bnfk_core.lca.members.KERNELS`).

    Returns
    -------
    LatentClassKernel
    """
    KERNELS.validate(LCA_FISHER, {"classes": classes, "seed": seed, "starts": starts, **context})
    if model is not None and _is_latent_network(model, train):
        return LatentClassKernel(model, notes=("the given latent class network",))
    lca = (
        fit_lca(train, int(classes), starts, seed)
        if classes
        else best_by_bic(train, KERNEL_KMAX, starts, seed)
    )
    note = f"{lca.n_classes} latent classes" + ("" if classes else f" (least BIC for K = 1..{KERNEL_KMAX})")
    return LatentClassKernel(kernel_network(lca), lca, notes=(note,))
