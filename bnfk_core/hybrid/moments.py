"""The distribution a CLG network implies: its discrete part as a :class:`~bnfk_core.network.model.BayesNet`,
the joint Gaussian of the numeric nodes given every discrete node, and the mean and covariance of the numeric
nodes (a mixture of those Gaussians over the discrete states).

Given all discrete nodes d, the numeric nodes in topological order are X = c(d) + W(d) X + e with
e ~ N(0, diag(variance(d))), so X ~ N((I - W)^-1 c, (I - W)^-1 diag(variance) (I - W)^-T).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import ModelError
from ..network.model import BayesNet
from .model import HybridNet

__all__ = ["discrete_part", "numeric_joint", "numeric_moments", "numeric_parent_moments", "MAX_MOMENT_STATES"]

#: most joint discrete states :func:`numeric_moments` enumerates
MAX_MOMENT_STATES = 100_000


def discrete_part(model: HybridNet) -> BayesNet:
    """The discrete nodes with their CPTs: a BayesNet (a discrete node has only discrete parents, so it is the
    marginal network of the discrete nodes), for the discrete inference of :mod:`bnfk_core.inference`.

    Parameters
    ----------
    model : HybridNet

    Returns
    -------
    BayesNet
    """
    names = [model.variables[i] for i in model.discrete]
    if not names:
        raise ModelError("The model has no discrete node.")
    return BayesNet(
        model.dag.subgraph(names),
        tuple(model.states[i] for i in model.discrete),
        tuple(model.cpts[i] for i in model.discrete),
        {"method": "discrete part of a hybrid model"},
    )


def numeric_joint(model: HybridNet, states: Mapping[str, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the numeric nodes (in :attr:`HybridNet.numeric` order) given the state codes of
    every discrete node that parents a numeric one.

    Parameters
    ----------
    model : HybridNet
    states : mapping str -> int, optional
        Discrete node name -> state code.

    Returns
    -------
    mean : ndarray, shape (m,)
    cov : ndarray, shape (m, m)
    """
    states = dict(states or {})
    num = list(model.numeric)
    pos = {v: k for k, v in enumerate(num)}
    m = len(num)
    W, c, var = np.zeros((m, m)), np.zeros(m), np.zeros(m)
    for k, v in enumerate(num):
        dps = model.discrete_parents(v)
        try:
            codes = [int(states[model.variables[p]]) for p in dps]
        except KeyError as exc:
            raise ModelError(f"numeric_joint needs the state of discrete node {exc}.") from None
        cfg = int(np.ravel_multi_index(codes, [len(model.states[p]) for p in dps])) if dps else 0
        g = model.gaussians[v]
        c[k], var[k] = g.coef[cfg, 0], g.variance[cfg]
        for j, p in enumerate(model.numeric_parents(v)):
            W[k, pos[p]] = g.coef[cfg, 1 + j]
    A = np.linalg.inv(np.eye(m) - W)
    return A @ c, (A * var[None, :]) @ A.T


def numeric_moments(model: HybridNet) -> tuple[np.ndarray, np.ndarray]:
    """E[X] and Cov[X] of the numeric nodes: the moments of the mixture sum_d P(d) N(mean(d), cov(d)) over
    the joint states d of the discrete nodes (enumerated; at most :data:`MAX_MOMENT_STATES`).

    Parameters
    ----------
    model : HybridNet

    Returns
    -------
    mean : ndarray, shape (m,)
    cov : ndarray, shape (m, m)
    """
    disc = list(model.discrete)
    cards = [len(model.states[i]) for i in disc]
    total = int(np.prod(cards)) if cards else 1
    if total > MAX_MOMENT_STATES:
        raise ModelError(f"The discrete nodes have {total:,} joint states (more than {MAX_MOMENT_STATES:,}).")
    m = len(model.numeric)
    mean, second = np.zeros(m), np.zeros((m, m))
    codes = np.zeros((1, model.n_vars), dtype=np.int64)
    for flat in range(total):
        st = np.unravel_index(flat, cards) if cards else ()
        codes[0, disc] = st
        p = 1.0
        for i in disc:
            p *= model.cpts[i][model.config(i, codes)[0], codes[0, i]]
        if p == 0.0:
            continue
        mu, cov = numeric_joint(model, {model.variables[i]: int(s) for i, s in zip(disc, st)})
        mean += p * mu
        second += p * (cov + np.outer(mu, mu))
    return mean, second - np.outer(mean, mean)


def _discrete_marginal(model: HybridNet, axes: list) -> np.ndarray:
    """P(D_S = s) of the discrete nodes ``axes`` (node indices, in order), as an array over their states:
    the CPTs contracted over the other discrete nodes (variable elimination)."""
    from ..inference.elimination import contract

    if not axes:
        return np.ones(())
    cards = model.cardinalities
    ops = []
    for v in model.discrete:
        ps = list(model.discrete_parents(v))
        ops.append((model.cpts[v].reshape([int(cards[p]) for p in ps] + [int(cards[v])]), ps + [v]))
    return np.asarray(contract(ops, list(axes)))


def numeric_parent_moments(model: HybridNet) -> dict:
    """P(D_i = j) and E[z z^T | D_i = j], z = (1, numeric parents of i), of every numeric node i: the moments
    the Fisher information of its regressions is made of.

    The numeric nodes given the states s of the discrete nodes that parent any numeric node are jointly
    Gaussian (:func:`numeric_joint`, evaluated for all s at once), so E[z z^T | s] = [[1, mu_C^T], [mu_C,
    Sigma_CC + mu_C mu_C^T]]; mixed over s with P(s) (the discrete CPTs contracted) and normalised per
    configuration j of D_i.

    Parameters
    ----------
    model : HybridNet

    Returns
    -------
    dict
        numeric node index -> (P of shape (q_i,), M of shape (q_i, 1 + p_i, 1 + p_i)); M[j] is 0 where
        P(D_i = j) = 0.

    Raises
    ------
    ModelError
        When the discrete parents of the numeric nodes have more than :data:`MAX_MOMENT_STATES` joint states.
    """
    num = list(model.numeric)
    if not num:
        return {}
    S = sorted({p for v in num for p in model.discrete_parents(v)})
    cards = [len(model.states[p]) for p in S]
    total = int(np.prod(cards)) if cards else 1
    if total > MAX_MOMENT_STATES:
        raise ModelError(
            f"The discrete parents of the numeric nodes have {total:,} joint states (more than "
            f"{MAX_MOMENT_STATES:,})."
        )
    prob = _discrete_marginal(model, S).reshape(-1)
    states = np.array(np.unravel_index(np.arange(total), cards)).T if cards else np.zeros((1, 0), np.int64)
    col = {p: k for k, p in enumerate(S)}
    pos = {v: k for k, v in enumerate(num)}
    m = len(num)
    W, c, var = np.zeros((total, m, m)), np.zeros((total, m)), np.zeros((total, m))
    cfgs = {}
    for k, v in enumerate(num):
        dps = model.discrete_parents(v)
        cfg = (
            np.ravel_multi_index(tuple(states[:, col[p]] for p in dps), [len(model.states[p]) for p in dps])
            if dps
            else np.zeros(total, np.int64)
        )
        cfgs[v] = cfg
        g = model.gaussians[v]
        c[:, k], var[:, k] = g.coef[cfg, 0], g.variance[cfg]
        for j, p in enumerate(model.numeric_parents(v)):
            W[:, k, pos[p]] = g.coef[cfg, 1 + j]
    A = np.linalg.inv(np.eye(m)[None] - W)
    mean = np.einsum("tab,tb->ta", A, c)
    cov = np.einsum("tab,tb,tcb->tac", A, var, A)
    out = {}
    for v in num:
        cp = [pos[p] for p in model.numeric_parents(v)]
        mu = mean[:, cp]
        Z = np.empty((total, 1 + len(cp), 1 + len(cp)))
        Z[:, 0, 0] = 1.0
        Z[:, 0, 1:] = Z[:, 1:, 0] = mu
        Z[:, 1:, 1:] = cov[:, cp][:, :, cp] + mu[:, :, None] * mu[:, None, :]
        q = model.n_configs(v)
        P = np.bincount(cfgs[v], weights=prob, minlength=q)
        M = np.zeros((q, 1 + len(cp), 1 + len(cp)))
        np.add.at(M, cfgs[v], prob[:, None, None] * Z)
        M = np.divide(M, P[:, None, None], out=np.zeros_like(M), where=P[:, None, None] > 0)
        out[v] = (P, M)
    return out
