"""The Fisher kernel of a latent class model and latent-class clustering (registered options).

Fisher kernel.  The score of p(x) = sum_t p(x, t) is the posterior-weighted complete-data score,
s(x) = sum_t p(t | x) s(x, t), and with the complete-data information I (block diagonal: Theorem 1 of the
paper applied to the network C -> x_i) the kernel is

    K(x, y) = sum_t sum_u p(t | x) p(u | y) s(x, t)^T I^-1 s(y, u) = sum_t sum_u p(t|x) p(u|y) K_c((x,t),
    (y,u)),

which is the project's marginalised Fisher kernel (expected features E[phi | x_observed],
bnfk_core.kernels.fisher)
on the hidden-root network with the class column always missing.  So the kernel here IS
:func:`bnfk_core.kernels.fisher.gram` on :meth:`LatentClassModel.to_bayesnet` (aligning data to that network
adds the
class column as missing); tests/test_lca_kernel.py checks it against numerically differentiated scores.  The
network's CPTs are the EM estimates smoothed with one pseudo-count (the Fisher kernel needs every
probability positive; the paper's "smoothed" estimator applied to the expected counts).

Clustering.  ``lca`` in :data:`bnfk_core.registry.CLUSTERERS`: fit K = the number of clusters classes and
assign every row to its modal class; no Gram matrix.
"""

from __future__ import annotations

import time

import numpy as np

from ..kernels.fisher import NetworkKernel
from ..registry import CLUSTERERS, KERNELS
from .members import LCA_CLUSTERER, LCA_FISHER
from .model import fit_lca

__all__ = [
    "LCA_FISHER",
    "LatentClassKernel",
    "fit_lca_fisher",
    "kernel_network",
    "cluster_lca",
    "best_by_bic",
    "KERNEL_KMAX",
    "KERNEL_STARTS",
]

KERNEL_KMAX = 6  # without ``classes``, the kernel's model has the K in 1..KERNEL_KMAX with the least BIC
KERNEL_STARTS = 10


def best_by_bic(
    data, kmax: int = KERNEL_KMAX, starts: int = KERNEL_STARTS, seed: int = 0, engine: str = "numba"
):
    """The fitted model with the least BIC among K = 1..kmax (each from ``starts`` seeded starts; ``engine``
    of
    :func:`~bnfk_core.lca.model.fit_lca`).

    Parameters
    ----------
    data : CategoricalData
    kmax, starts, seed : int
    engine : str

    Returns
    -------
    LatentClassModel
    """
    best = None
    for k in range(1, int(kmax) + 1):
        m = fit_lca(data, k, starts, seed, engine=engine)
        if best is None or m.bic < best.bic:
            best = m
    return best


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
        else best_by_bic(train, seed=seed, starts=starts)
    )
    note = f"{lca.n_classes} latent classes" + ("" if classes else f" (least BIC for K = 1..{KERNEL_KMAX})")
    return LatentClassKernel(kernel_network(lca), lca, notes=(note,))


def cluster_lca(data, n_clusters: int, *, seed: int = 0, starts: int = 20, **context) -> dict:
    """Latent-class clustering: the modal class of every row under a K = ``n_clusters`` model (feature
    columns only).  Returns labels, the model's facts and seconds.

    Parameters
    ----------
    data : CategoricalData
    n_clusters : int
    seed, starts : int
    **context
        The options the clustering analysis hands every clusterer
        (:data:`bnfk_core.registry.CLUSTER_OPTIONS`), checked and ignored; any other name is refused, as is
        a value the declared options do not allow (:data:`bnfk_core.lca.members.CLUSTERERS`).

    Returns
    -------
    dict
    """
    CLUSTERERS.validate(LCA_CLUSTERER, {"seed": seed, "starts": starts, **context})
    t0 = time.perf_counter()
    feats = data.without_class() if getattr(data, "class_column", None) else data
    m = fit_lca(feats, int(n_clusters), int(starts), int(seed))
    labels = m.modal_classes(feats)
    return {
        "labels": labels,
        "n_clusters": int(n_clusters),
        "n_used": int(len(np.unique(labels))),
        "loglik": m.loglik,
        "bic": m.bic,
        "aic": m.aic,
        "parameters": m.parameters,
        "starts": m.starts,
        "starts_at_best": m.starts_at_best,
        "features": list(feats.variables),
        "model": m,
        "cluster_seconds": time.perf_counter() - t0,
        "kernel_seconds": 0.0,
        "cost": None,
    }
