"""Exact inference in a :class:`~bnfk_core.network.model.BayesNet`.

* :func:`marginal` -- P(Q) for a set of variables (variable elimination: one contraction of the CPT factors
  of the ancestral set, ``opt_einsum`` choosing the order; other variables are barren and sum to one);
* :func:`parent_marginals` -- P(pi_i = j) for every variable and parent configuration,
  the quantity Theorem 1 of the paper needs (an *unpropagated* junction tree gets it wrong
  for A-structures and chains; this is exact, with a sampling fallback when the
  contraction is too large: 10^6 samples, pseudo-count one, as the paper);
* :func:`posterior` -- P(X_m | x_observed) of every missing cell;
* :func:`family_posteriors` -- P(family_i | x_observed) of the rows with a missing family member (the
  marginalized Fisher kernel's expected features);
* :func:`log_evidence` -- log P(x_observed) of every row;
* :func:`log_likelihood` -- log P(x) of complete rows and log P(x_observed) of the others.

The last four run one calibrated junction tree on whole batches of rows at once, the evidence as indicator
vectors (:mod:`bnfk_core.inference.junction`): no planning per missingness pattern, and a row gets the same
bits in any batch.  Models whose tree would be too large fall back to one contraction per missingness pattern
over the Markov blankets (:mod:`bnfk_core.inference.elimination`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .elimination import (
    JOINT_POSTERIOR_CELLS,
    contract,
    cpt_factor,
    gather_posteriors,
    joint_posteriors,
    log_evidence_by_pattern,
    missingness_patterns,
    posterior_by_pattern,
)
from .junction import batch_rows, junction_tree

__all__ = [
    "marginal",
    "parent_marginals",
    "ParentMarginals",
    "posterior",
    "family_posteriors",
    "cached_family_posteriors",
    "joint_posteriors",
    "log_evidence",
    "log_likelihood",
    "missingness_patterns",
    "gather_posteriors",
    "JOINT_POSTERIOR_CELLS",
]

MAX_INTERMEDIATE = 5e7  # elements of the largest intermediate factor before falling back to sampling


def marginal(model, variables: Sequence[int], max_intermediate: float | None = None) -> np.ndarray | None:
    """Exact joint marginal P(variables) by variable elimination over their ancestral set.

    Parameters
    ----------
    model : BayesNet
    variables : sequence of int
        Variable indices; the result's axes follow this order.
    max_intermediate : float, optional
        Largest intermediate factor (elements) the contraction may create.

    Returns
    -------
    numpy.ndarray or None
        The dense joint table (shape ``(r_v for v in variables)``, summing to 1); a 0-d ``1.0`` for no
        variables; None when ``max_intermediate`` is given and the contraction would exceed it.

    References
    ----------
    The bnfk paper, "Fisher kernel" (after Theorem 1): the P(pi_i(x)) of Theorem 1 are joint marginals of
    parent sets, computed by exact inference.
    """
    variables = list(variables)
    if not variables:
        return np.ones(())
    anc = model.dag.ancestors(variables)
    cards = model.cardinalities
    ops = [cpt_factor(model, v, cards) for v in sorted(anc)]
    return contract(ops, variables, max_intermediate)


@dataclass(frozen=True)
class ParentMarginals:
    """P(pi_i = j) for every variable i: ``probs[i]`` has length q_i (1.0 for roots)."""

    probs: tuple
    methods: tuple  # "root", "exact" or "sampling" per variable

    @property
    def method(self) -> str:
        return "sampling" if "sampling" in self.methods else "exact"


def parent_marginals(
    model, *, max_intermediate: float = MAX_INTERMEDIATE, n_samples: int = 1_000_000, seed: int = 0
) -> ParentMarginals:
    """The exact marginal distribution P(pi_i = j) of every parent set (cached on the model).

    Variable elimination over the ancestral set of pi_i; when the contraction would
    create a factor larger than ``max_intermediate`` elements, P(pi_i) is estimated from
    ``n_samples`` forward samples with pseudo-count one (the paper's fallback), and
    ``methods[i] == "sampling"`` says so.

    Parameters
    ----------
    model : BayesNet
    max_intermediate : float
        Largest intermediate factor (elements) before falling back to sampling.
    n_samples : int
        Forward samples of the fallback.
    seed : int
        Seed of the fallback's sampling.

    Returns
    -------
    ParentMarginals
        ``probs[i]`` of length q_i in the model's parent-configuration order (``[1.0]`` for a root) and
        ``methods[i]`` in ``{"root", "exact", "sampling"}``.

    References
    ----------
    The bnfk paper, Theorem 1 (eq. 2): the denominators P(pi_i(x); theta) of K_i, "which must be computed"
    by exact inference (junction tree) or, when that is too demanding, approximately.
    """
    key = ("parent_marginals", max_intermediate, n_samples, seed)
    if key in model._cache:
        return model._cache[key]
    probs, methods, sample = [], [], None
    for i in range(model.n_vars):
        ps = list(model.parents[i])
        if not ps:
            probs.append(np.ones(1))
            methods.append("root")
            continue
        m = marginal(model, ps, max_intermediate)
        if m is None:
            if sample is None:
                sample = model.sample(n_samples, seed).codes
            j = model.parent_config(i, sample)
            q = model.n_parent_configs(i)
            cnt = np.bincount(j, minlength=q) + 1.0
            probs.append(cnt / cnt.sum())
            methods.append("sampling")
        else:
            probs.append(np.ascontiguousarray(m).reshape(-1))
            methods.append("exact")
    out = ParentMarginals(tuple(probs), tuple(methods))
    model._cache[key] = out
    return out


# ---------------------------------------------------------------------- evidence (batched junction tree)
def _codes(model, data) -> np.ndarray:
    return model.align(data).codes if hasattr(data, "codes") else np.asarray(data)


def _batches(tree, rows: np.ndarray):
    step = batch_rows(tree)
    for start in range(0, len(rows), step):
        yield rows[start : start + step]


def _zero_evidence(rows: np.ndarray, log_z: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isfinite(log_z))
    if bad.size:
        raise ModelError(
            f"Row {int(rows[bad[0]]) + 1} has observed values that the model gives probability "
            "zero; fit the parameters with a pseudo-count (method 'smoothed')."
        )


def posterior(model, data) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Distribution of every missing cell given its row's observed values.

    A calibrated junction tree runs on whole batches of the incomplete rows (docs/INFERENCE.md); complete
    rows take no part.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData or numpy.ndarray
        The rows, aligned to the model (an array of codes is taken as aligned; -1 is missing).

    Returns
    -------
    dict
        ``{variable index: (row indices, probabilities of shape (rows, r_i))}`` for the variables that have
        missing cells, rows increasing.

    Raises
    ------
    ModelError
        The model gives a row's observed values probability zero.

    References
    ----------
    Thesis §2.1.3 and App. A.3 (exact inference by a junction tree); §3.2 (it gives a distribution for each
    missing value, which the imputation of ch. 4 uses).
    """
    codes = _codes(model, data)
    tree = junction_tree(model)
    if tree is None:
        return posterior_by_pattern(model, codes)
    miss = codes < 0
    incomplete = np.flatnonzero(miss.any(axis=1))
    variables = [int(v) for v in np.flatnonzero(miss.any(axis=0))]
    parts: dict = {v: [] for v in variables}
    homes = {tree.home[v] for v in variables}
    for rows in _batches(tree, incomplete):
        beliefs, log_z = tree.calibrate(codes[rows], homes)
        _zero_evidence(rows, log_z)
        for v in variables:
            sel = np.flatnonzero(miss[rows, v])
            if sel.size:
                c = tree.home[v]
                p = tree.margin(beliefs[c][sel], c, [v])
                parts[v].append((rows[sel], p / p.sum(axis=1, keepdims=True)))
    return {
        v: (np.concatenate([r for r, _ in lst]), np.concatenate([p for _, p in lst]))
        for v, lst in parts.items()
    }


def family_posteriors(model, codes: np.ndarray, families: Sequence[int] | None = None) -> dict:
    """``{i: (rows, F)}``: for the rows of ``codes`` with a missing member in the family of i, F[b, j * r_i +
    k]
    = P(pi_i = j, X_i = k | x_observed) (the CPT's layout), rows increasing.  Raises ModelError for rows of
    probability zero.

    Parameters
    ----------
    model : BayesNet
    codes : numpy.ndarray
        (N, n) codes aligned to the model, -1 = missing.
    families : sequence of int, optional
        The variables whose families to return (default: all with a missing member).

    Returns
    -------
    dict

    References
    ----------
    The bnfk paper, "Conclusion" (the marginalised kernel of incomplete rows, E[phi(x) | x_observed]): these
    are the expected family indicators it needs.
    """
    codes = np.asarray(codes)
    families = range(model.n_vars) if families is None else [int(i) for i in families]
    miss = codes < 0
    fam = {i: list(model.parents[i]) + [i] for i in families}
    rows_of = {i: np.flatnonzero(miss[:, fam[i]].any(axis=1)) for i in families}
    rows_of = {i: r for i, r in rows_of.items() if r.size}
    if not rows_of:
        return {}
    tree = junction_tree(model)
    if tree is None:
        return _family_posteriors_by_pattern(model, codes, rows_of)
    incomplete = np.flatnonzero(miss.any(axis=1))
    parts: dict = {i: [] for i in rows_of}
    homes = {tree.family_home[i] for i in rows_of}
    for rows in _batches(tree, incomplete):
        beliefs, log_z = tree.calibrate(codes[rows], homes)
        _zero_evidence(rows, log_z)
        for i in rows_of:
            sel = np.flatnonzero(miss[rows][:, fam[i]].any(axis=1))
            if not sel.size:
                continue
            c = tree.family_home[i]
            t = tree.margin(beliefs[c][sel], c, fam[i])  # axes: family in sorted order
            srt = sorted(fam[i])
            t = np.transpose(t, [0] + [1 + srt.index(u) for u in fam[i]])
            parts[i].append((rows[sel], t.reshape(len(sel), model.cpts[i].size)))
    return {
        i: (np.concatenate([r for r, _ in lst]), np.concatenate([p for _, p in lst]))
        for i, lst in parts.items()
    }


_FAMILY_CACHE_ENTRIES = 2


def cached_family_posteriors(model, codes: np.ndarray) -> dict:
    """:func:`family_posteriors` of every family, cached on the model for the last few row sets (a caller that
    needs the families one at a time calibrates the tree once).

    Parameters
    ----------
    model : BayesNet
    codes : ndarray of int, shape (n, d)

    Returns
    -------
    dict
        As :func:`family_posteriors`.
    """
    codes = np.ascontiguousarray(codes)
    key = ("family_posteriors", codes.shape, str(codes.dtype), hashlib.sha1(codes.tobytes()).hexdigest())
    cache = model._cache
    if key not in cache:
        old = [k for k in cache if isinstance(k, tuple) and k and k[0] == "family_posteriors"]
        for k in old[: max(0, len(old) - _FAMILY_CACHE_ENTRIES + 1)]:
            del cache[k]
        cache[key] = family_posteriors(model, codes)
    return cache[key]


def _family_posteriors_by_pattern(model, codes: np.ndarray, rows_of: dict) -> dict:
    """:func:`family_posteriors` with one contraction per missingness pattern (models without a tree)."""
    out = {}
    cards = model.cardinalities
    for i, rows_i in rows_of.items():
        fam = list(model.parents[i]) + [i]
        r = int(cards[i])
        F = np.zeros((len(rows_i), model.cpts[i].size))
        for prow, missing in missingness_patterns(codes[rows_i]):
            query = [f for f in fam if f in set(missing.tolist())]
            post = joint_posteriors(model, codes, rows_i[prow], missing, query)  # (B, A)
            combos = np.array(list(np.ndindex(*[int(cards[f]) for f in query])), dtype=np.int64)
            full = np.repeat(codes[rows_i[prow]][:, None, :], len(combos), axis=1).astype(np.int64)
            for k, f in enumerate(query):
                full[:, :, f] = combos[None, :, k]
            flat = full.reshape(-1, codes.shape[1])
            col = model.parent_config(i, flat) * r + flat[:, i]
            np.add.at(F, (np.repeat(prow, len(combos)), col), post.reshape(-1))
        out[i] = (rows_i, F)
    return out


def log_evidence(model, codes: np.ndarray) -> np.ndarray:
    """log P(x_observed) of every row of ``codes`` (aligned to the model); -inf for impossible rows.

    Parameters
    ----------
    model : BayesNet
    codes : numpy.ndarray
        (N, n) codes aligned to the model, -1 = missing.

    Returns
    -------
    numpy.ndarray
        One log-probability per row, missing cells summed out.
    """
    codes = np.asarray(codes)
    tree = junction_tree(model)
    if tree is None:
        return log_evidence_by_pattern(model, codes)
    out = np.empty(codes.shape[0])
    for rows in _batches(tree, np.arange(codes.shape[0])):
        out[rows] = tree.calibrate(codes[rows], ())[1]
    return out


def log_likelihood(model, data) -> np.ndarray:
    """log P(x) of every row of ``data``; rows with missing cells get the marginal log P(x_observed).

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData or numpy.ndarray
        The rows (codes aligned to the model; -1 is missing).

    Returns
    -------
    numpy.ndarray
        One log-probability per row.

    References
    ----------
    The bnfk paper, eq. (1) (the likelihood of a row); "Experiments" (held-out NLL of the data-summarization
    figures).
    """
    codes = model.align(data).codes
    complete = ~(codes < 0).any(axis=1)
    ll = np.zeros(codes.shape[0])
    ll[complete] = model.complete_log_likelihood(codes[complete])
    if (~complete).any():
        ll[~complete] = log_evidence(model, codes[~complete])
    return ll
