"""Inference in conditional linear Gaussian networks: posteriors of discrete nodes given discrete and numeric
evidence, the marginal density of rows with missing cells, and the conditional density of a numeric cell.

Given the observed cells of a row, every observed numeric node's density N(x_i; mean_j, variance_j) is a
factor on its discrete parents (its numeric parents observed, so each configuration j gives a number);
unobserved numeric nodes without an observed numeric descendant integrate to one (barren nodes) and drop out.
Unobserved numeric nodes with an observed numeric descendant are integrated out in closed form: with the
observed numeric nodes that have such a parent they form a block H that is jointly Gaussian given its
discrete parents, and the block's factor (the marginal density of its observed nodes) is computed for every
configuration of those discrete parents (at most :data:`MAX_COUPLED_CONFIGS`; Lauritzen's strong
junction tree would avoid the enumeration).  The rest is discrete: the CPTs with the observed discrete cells
fixed times those factors, contracted by the variable elimination of
:func:`bnfk_core.inference.elimination.contract`.  All of this is exact.

Not covered (a ModelError says so): more coupled configurations than the bound, and, for the conditional
density of a numeric cell, an unobserved discrete parent of it or of its numeric children, or a missing
numeric neighbour of it that is not barren (the answer is then a mixture of Gaussians).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ModelError
from ..inference.elimination import contract
from .model import HybridNet
from .table import DISCRETE, NUMERIC, MixedData

__all__ = [
    "discrete_posterior",
    "marginal_log_density",
    "conditional_normal",
    "evidence_table",
    "MAX_COUPLED_CONFIGS",
]

_LOG_2PI = math.log(2.0 * math.pi)

#: most configurations of discrete parents that the missing numeric nodes of one row may couple
MAX_COUPLED_CONFIGS = 4096


def evidence_table(model: HybridNet, evidence: Mapping[str, object]) -> MixedData:
    """One row of evidence (``{node: state or number}``) as a table aligned to ``model``; an unknown node,
    state or a non-number for a numeric node is a ModelError naming it."""
    codes = np.full((1, model.n_vars), -1, dtype=np.int32)
    values = np.full((1, model.n_vars), np.nan)
    for name, value in evidence.items():
        if name not in model.variables:
            raise ModelError(f"Evidence names '{name}', which is not a node of the model.")
        i = model.variables.index(name)
        if model.kinds[i] == DISCRETE:
            if str(value) not in model.states[i]:
                raise ModelError(f"'{value}' is not a state of '{name}' ({', '.join(model.states[i][:8])}).")
            codes[0, i] = model.states[i].index(str(value))
        else:
            try:
                values[0, i] = float(value)
            except (TypeError, ValueError):
                raise ModelError(
                    f"Numeric node '{name}' needs a number as evidence, not {value!r}."
                ) from None
            if not math.isfinite(values[0, i]):
                raise ModelError(f"Numeric node '{name}' needs a finite number as evidence, not {value!r}.")
    return MixedData(model.variables, model.kinds, model.states, codes, values, "evidence")


def _numeric_children(model: HybridNet) -> list:
    parents = model.dag.parent_indices()
    kids = [[] for _ in range(model.n_vars)]
    for v in model.numeric:
        for p in parents[v]:
            kids[p].append(v)
    return kids


def _observed_numeric_below(model: HybridNet, node: int, observed: np.ndarray, kids) -> bool:
    todo, seen = list(kids[node]), set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if observed[v]:
            return True
        todo.extend(kids[v])
    return False


def _patterns(miss: np.ndarray):
    keys, inv = np.unique(miss, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    for k in range(len(keys)):
        yield np.flatnonzero(inv == k), keys[k]


def _operands(model: HybridNet, codes: np.ndarray, values: np.ndarray, miss: np.ndarray, first_row: int):
    """The factors of a batch of rows sharing the missing cells ``miss``: (operands with the batch axis
    labelled n_vars, log scale per row)."""
    n, B = model.n_vars, codes.shape[0]
    batch = n
    kids = _numeric_children(model)
    observed = ~miss
    hidden = [v for v in model.numeric if miss[v] and _observed_numeric_below(model, v, observed, kids)]
    parents = model.dag.parent_indices()
    coupled = set(hidden) | {v for v in model.numeric if observed[v] and set(parents[v]) & set(hidden)}
    ops, log_scale = [], np.zeros(B)
    cards = model.cardinalities

    def add(table: np.ndarray, axes: list):
        """``table`` (B, *cards of axes) with the observed axes indexed by each row's codes."""
        obs = [k for k, a in enumerate(axes) if not miss[a]]
        mis = [k for k, a in enumerate(axes) if miss[a]]
        t = np.transpose(table, [0] + [1 + k for k in obs + mis])
        sub = t[(np.arange(B),) + tuple(codes[:, axes[k]] for k in obs)]
        flat = sub.reshape(B, -1)
        mx = flat.max(axis=1)
        mx = np.where(np.isfinite(mx), mx, 0.0)  # a row of zeros stays zeros (evidence of density zero)
        log_scale[:] += mx
        ops.append((np.exp(sub - mx.reshape((B,) + (1,) * len(mis))), [batch] + [axes[k] for k in mis]))

    for v in model.discrete:
        ps = list(model.discrete_parents(v))
        shape = [int(cards[p]) for p in ps] + [int(cards[v])]
        with np.errstate(divide="ignore"):
            logt = np.log(model.cpts[v].reshape(shape))
        add(np.broadcast_to(logt, (B, *shape)), ps + [v])
    for v in model.numeric:
        if miss[v] or v in coupled:
            continue  # barren (integrates to one), or in the coupled Gaussian block below
        g = model.gaussians[v]
        ps = list(model.discrete_parents(v))
        cps = list(model.numeric_parents(v))
        x = np.column_stack([np.ones(B)] + [values[:, c] for c in cps])
        mean = x @ g.coef.T  # (B, q)
        r = values[:, v][:, None] - mean
        logd = -0.5 * (_LOG_2PI + np.log(g.variance)[None, :] + r * r / g.variance[None, :])
        add(logd.reshape([B] + [int(cards[p]) for p in ps]), ps)
    if coupled:
        block, axes = _coupled_block(
            model, sorted(coupled, key=model.dag.topological_order().index), values, miss
        )
        add(block, axes)
    ops.append((np.ones(B), [batch]))
    return ops, log_scale


def _coupled_block(model: HybridNet, H: list, values: np.ndarray, miss: np.ndarray):
    """log of the integral over the missing nodes of H of prod_{v in H} p(v | parents), per row and per
    configuration of the discrete parents of H: the nodes of H, given their parents outside H (observed
    numbers, constants of a row), are jointly Gaussian, H = (I - W)^-1 (c + e); the density is that of the
    observed nodes of H under its marginal.  Returns ((B, *cards), discrete axes)."""
    B = values.shape[0]
    pos = {v: k for k, v in enumerate(H)}
    dax = sorted({p for v in H for p in model.discrete_parents(v)})
    cards = [len(model.states[p]) for p in dax]
    q = int(np.prod(cards)) if cards else 1
    if q > MAX_COUPLED_CONFIGS:
        raise ModelError(
            f"The missing numeric nodes couple {q:,} configurations of their discrete parents (more than "
            f"{MAX_COUPLED_CONFIGS:,}); observe more of them."
        )
    obs = [k for k, v in enumerate(H) if not miss[v]]
    x_obs = values[:, [H[k] for k in obs]]
    out = np.empty((B, q))
    for j in range(q):
        state = dict(zip(dax, np.unravel_index(j, cards))) if cards else {}
        W = np.zeros((len(H), len(H)))
        c = np.zeros((B, len(H)))
        var = np.empty(len(H))
        for k, v in enumerate(H):
            dps = model.discrete_parents(v)
            cfg = (
                int(np.ravel_multi_index([state[p] for p in dps], [len(model.states[p]) for p in dps]))
                if dps
                else 0
            )
            coef = model.gaussians[v].coef[cfg]
            var[k] = model.gaussians[v].variance[cfg]
            c[:, k] = coef[0]
            for m, p in enumerate(model.numeric_parents(v)):
                if p in pos:
                    W[k, pos[p]] = coef[1 + m]
                else:
                    c[:, k] += coef[1 + m] * values[:, p]
        A = np.linalg.inv(np.eye(len(H)) - W)
        mean = c @ A.T
        cov = (A * var[None, :]) @ A.T
        S = cov[np.ix_(obs, obs)]
        L = np.linalg.cholesky(S)
        r = np.linalg.solve(L, (x_obs - mean[:, obs]).T)
        out[:, j] = -0.5 * (len(obs) * _LOG_2PI + (r * r).sum(axis=0)) - np.log(np.diag(L)).sum()
    return out.reshape([B] + cards), dax


def _aligned(model: HybridNet, data) -> MixedData:
    if isinstance(data, Mapping):
        return evidence_table(model, data)
    return model.align(data)


def marginal_log_density(model: HybridNet, data) -> np.ndarray:
    """log p(x_observed) of every row: the density of its observed cells, the missing ones summed (discrete)
    or integrated (numeric) out.

    Parameters
    ----------
    model : HybridNet
    data : MixedData or mapping
        Rows, or one row of evidence ``{node: state or number}``.

    Returns
    -------
    ndarray, shape (N,)
    """
    data = _aligned(model, data)
    out = np.empty(data.n_rows)
    for rows, miss in _patterns(data.missing_mask()):
        ops, log_scale = _operands(model, data.codes[rows], data.values[rows], miss, int(rows[0]))
        z = contract(ops, [model.n_vars], batch=model.n_vars)
        with np.errstate(divide="ignore"):
            out[rows] = np.log(z) + log_scale
    return out


def discrete_posterior(model: HybridNet, data, targets: Sequence[str] | None = None) -> dict:
    """P(X_t | observed cells) of discrete nodes t, exactly (module docstring).

    Parameters
    ----------
    model : HybridNet
    data : MixedData or mapping
        Rows, or one row of evidence ``{node: state or number}``.
    targets : sequence of str, optional
        Discrete nodes (default: every discrete node).

    Returns
    -------
    dict
        node name -> ndarray (N, r_t) of posterior probabilities (an observed node: its one-hot row).

    Raises
    ------
    ModelError
        A target that is not a discrete node, evidence of probability zero, or a case not covered.
    """
    data = _aligned(model, data)
    if targets is None:
        targets = [model.variables[i] for i in model.discrete]
    idx = []
    for t in targets:
        if t not in model.variables or model.kinds[model.variables.index(t)] != DISCRETE:
            raise ModelError(f"'{t}' is not a discrete node of the model.")
        idx.append(model.variables.index(t))
    out = {model.variables[i]: np.zeros((data.n_rows, len(model.states[i]))) for i in idx}
    n = model.n_vars
    for rows, miss in _patterns(data.missing_mask()):
        ops, _ = _operands(model, data.codes[rows], data.values[rows], miss, int(rows[0]))
        for i in idx:
            name = model.variables[i]
            if not miss[i]:
                out[name][rows, data.codes[rows, i]] = 1.0
                continue
            joint = contract(ops, [n, i], batch=n)
            tot = joint.sum(axis=1, keepdims=True)
            if not (tot > 0).all():
                bad = int(rows[np.flatnonzero(~(tot[:, 0] > 0))[0]])
                raise ModelError(f"Row {bad + 1} has observed values that the model gives density zero.")
            out[name][rows] = joint / tot
    return out


def conditional_normal(model: HybridNet, data, target: str) -> tuple[np.ndarray, np.ndarray]:
    """The conditional law N(mean, variance) of numeric node ``target`` given every other observed cell of
    each row (its own cell ignored): p(x_t | rest) is proportional to its regression's density times those
    of its numeric children, a Gaussian in x_t of precision 1/s_t^2 + sum_c w_ct^2 / s_c^2.  The mean is the
    conditional mean an imputer fills in.

    Parameters
    ----------
    model : HybridNet
    data : MixedData or mapping
    target : str
        A numeric node.

    Returns
    -------
    mean, variance : ndarray, shape (N,)

    Raises
    ------
    ModelError
        ``target`` not numeric, or a row where a discrete parent of it or of a numeric child, a numeric
        parent of it, or a parent of an observed child is missing (the law is then a mixture or needs a
        strong junction tree), or a missing child with an observed numeric node below it.
    """
    data = _aligned(model, data)
    if target not in model.variables or model.kinds[model.variables.index(target)] != NUMERIC:
        raise ModelError(f"'{target}' is not a numeric node of the model.")
    t = model.variables.index(target)
    codes, values = data.codes, data.values.copy()
    values[:, t] = np.nan
    miss = data.missing_mask()
    miss[:, t] = True
    kids = _numeric_children(model)
    need = list(model.discrete_parents(t)) + list(model.numeric_parents(t))
    bad = miss[:, need].any(axis=1) if need else np.zeros(data.n_rows, bool)
    own_mean = model.node_mean(t, codes, values)
    own_var = model.gaussians[t].variance[np.maximum(model.config(t, codes), 0)]
    prec = 1.0 / own_var
    lin = own_mean / own_var
    for c in kids[t]:
        present = ~miss[:, c]
        for r in np.flatnonzero(~present):
            if _observed_numeric_below(model, c, ~miss[r], kids):
                bad[r] = True
        others = [p for p in model.dag.parent_indices()[c] if p != t]
        if others:
            bad |= present & miss[:, others].any(axis=1)
        g = model.gaussians[c]
        j = np.maximum(model.config(c, codes), 0)
        cps = list(model.numeric_parents(c))
        w = g.coef[j, 1 + cps.index(t)]
        filled = values.copy()
        filled[:, t] = 0.0
        rest = model.node_mean(c, codes, np.nan_to_num(filled))
        var_c = g.variance[j]
        add = present & ~bad
        prec = prec + np.where(add, w * w / var_c, 0.0)
        lin = lin + np.where(add, w * (np.nan_to_num(values[:, c]) - rest) / var_c, 0.0)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise ModelError(
            f"Row {r + 1}: the conditional law of '{target}' needs its parents, its numeric children's "
            "parents and their discrete parents observed (else it is a mixture, not covered yet)."
        )
    return lin / prec, 1.0 / prec
