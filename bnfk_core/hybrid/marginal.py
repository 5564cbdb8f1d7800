"""The marginal density of one numeric node of a CLG network: a mixture of Gaussians over the states of the
discrete nodes it depends on.

Given every discrete node, the numeric nodes are jointly Gaussian (:func:`bnfk_core.hybrid.moments.
numeric_joint`), and X_t depends only on its numeric ancestors and their discrete parents R_t.  So

    p(x_t) = sum_r P(R_t = r) N(x_t; mean_t(r), var_t(r)),

one component per configuration r of R_t (for a node without numeric parents R_t is its discrete parents and
the components are its own regressions).  P(R_t = r) is the discrete part's marginal, enumerated exactly over
the joint discrete states when there are at most :data:`MAX_EXACT_STATES`, else estimated from a seeded
forward sample (``exact`` says which).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .model import HybridNet
from .moments import numeric_joint
from .table import NUMERIC

__all__ = ["NumericMarginal", "numeric_marginal", "MAX_EXACT_STATES", "MAX_COMPONENTS"]

#: most joint discrete states enumerated for the exact weights
MAX_EXACT_STATES = 200_000
#: most mixture components kept (the heaviest; their weight share is reported)
MAX_COMPONENTS = 4096


@dataclass(frozen=True)
class NumericMarginal:
    """The mixture p(x_t) = sum_k weights[k] N(means[k], variances[k]) (weights summing to ``coverage``, 1
    unless components were dropped), over the configurations ``configs`` of the discrete nodes ``over``."""

    node: str
    over: tuple
    configs: np.ndarray
    weights: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    exact: bool
    coverage: float

    def density(self, x: np.ndarray) -> np.ndarray:
        """p(x) at the points ``x`` (vectorised over points and components)."""
        x = np.asarray(x, dtype=float)[:, None]
        v = self.variances[None, :]
        comp = np.exp(-0.5 * (x - self.means[None, :]) ** 2 / v) / np.sqrt(2.0 * np.pi * v)
        return comp @ self.weights


def _relevant_discrete(model: HybridNet, t: int) -> list[int]:
    """The discrete parents of t and of its numeric ancestors, in node order."""
    parents = model.dag.parent_indices()
    seen, stack, out = {t}, [t], set()
    while stack:
        i = stack.pop()
        for p in parents[i]:
            if model.kinds[p] == NUMERIC:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
            else:
                out.add(p)
    return sorted(out)


def _discrete_weights(model: HybridNet, rel: list[int], seed: int, n_sample: int):
    """(configurations of ``rel`` (K, |rel|), P of each, exact?) from the discrete part."""
    disc = list(model.discrete)
    cards = [len(model.states[i]) for i in disc]
    total = int(np.prod(cards, dtype=np.float64)) if cards else 1
    if total <= MAX_EXACT_STATES:
        grid = np.indices(cards).reshape(len(cards), -1).T if cards else np.zeros((1, 0), np.int64)
        codes = np.full((grid.shape[0], model.n_vars), -1, dtype=np.int64)
        codes[:, disc] = grid
        p = np.ones(grid.shape[0])
        for i in disc:
            p *= model.cpts[i][model.config(i, codes), codes[:, i]]
        exact = True
    else:
        s = model.sample(n_sample, seed)
        codes, p, exact = s.codes.astype(np.int64), np.full(n_sample, 1.0 / n_sample), False
    sub = codes[:, rel] if rel else np.zeros((codes.shape[0], 0), np.int64)
    uniq, inv = np.unique(sub, axis=0, return_inverse=True)
    w = np.bincount(inv.ravel(), weights=p, minlength=uniq.shape[0])
    return uniq, w, exact


def numeric_marginal(
    model: HybridNet, node: str, *, seed: int = 0, n_sample: int = 20_000
) -> NumericMarginal:
    """The marginal density of numeric node ``node`` as a Gaussian mixture (module docstring).

    Parameters
    ----------
    model : HybridNet
    node : str
        A numeric node.
    seed, n_sample : int
        The forward sample that estimates the weights when the discrete nodes have more than
        :data:`MAX_EXACT_STATES` joint states.

    Returns
    -------
    NumericMarginal

    Raises
    ------
    ModelError
        ``node`` is not a numeric node.
    """
    if node not in model.variables or model.kinds[model.variables.index(node)] != NUMERIC:
        raise ModelError(f"'{node}' is not a numeric node of the model.")
    t = model.variables.index(node)
    rel = _relevant_discrete(model, t)
    configs, weights, exact = _discrete_weights(model, rel, seed, n_sample)
    keep = weights > 0
    configs, weights = configs[keep], weights[keep]
    coverage = 1.0
    if len(weights) > MAX_COMPONENTS:
        top = np.argsort(weights)[::-1][:MAX_COMPONENTS]
        coverage = float(weights[top].sum() / weights.sum())
        configs, weights = configs[top], weights[top]
    pos = list(model.numeric).index(t)
    # every other discrete parent of a numeric node does not reach X_t: any state will do
    base = {model.variables[p]: 0 for v in model.numeric for p in model.discrete_parents(v)}
    means, variances = np.empty(len(weights)), np.empty(len(weights))
    for k, cfg in enumerate(configs):
        states = dict(base, **{model.variables[p]: int(c) for p, c in zip(rel, cfg)})
        mu, cov = numeric_joint(model, states)
        means[k], variances[k] = mu[pos], cov[pos, pos]
    return NumericMarginal(
        node, tuple(model.variables[p] for p in rel), configs, weights, means, variances, exact, coverage
    )
