"""Exact inference by variable elimination: one ``opt_einsum`` tensor contraction per query.

The contraction machinery (:func:`cpt_factor`, :func:`contract` with a batch-size-independent path) and the
per-missingness-pattern posteriors: only the families with a missing member take part (the Markov blankets
of the missing variables), one contraction per distinct pattern.  :mod:`bnfk_core.inference.queries` answers
with a batched junction tree (:mod:`bnfk_core.inference.junction`) instead; the functions here are its
independent reference in the tests and its fallback for models whose junction tree is too large.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import opt_einsum as oe

from ..errors import ModelError

__all__ = [
    "cpt_factor",
    "contract",
    "missingness_patterns",
    "pattern_keys",
    "joint_posteriors",
    "posterior_by_pattern",
    "log_evidence_by_pattern",
    "gather_posteriors",
    "JOINT_POSTERIOR_CELLS",
]


def cpt_factor(model, v: int, cards=None) -> tuple[np.ndarray, list[int]]:
    """CPT of v as a tensor with axes (parents..., v); ``cards``: the model's cardinalities, when the
    caller builds many factors (computing them per factor made a query O(d^2) in the variables).

    Parameters
    ----------
    model : BayesNet
    v : int
        Variable index.
    cards : ndarray of int, optional

    Returns
    -------
    tensor : ndarray
        Shape (r_parent..., r_v).
    axes : list of int
        The variable of each axis: parents in node order, then ``v``.
    """
    ps = list(model.parents[v])
    if cards is None:
        cards = model.cardinalities
    t = model.cpts[v].reshape([int(cards[p]) for p in ps] + [int(cards[v])])
    return t, ps + [v]


_BATCH_PATH_SIZE = 1024
_PATHS: dict = {}


def _batch_path(operands: list, out: list, batch: int):
    """The greedy contraction path for a batch of rows, planned as if the batch axis ``batch`` had
    :data:`_BATCH_PATH_SIZE` rows and cached by the operands' labels and other sizes.

    With the path fixed, every row's result is the same floating-point number however many rows share the
    batch (a path planned on the real batch size changes with it, and so do the last bits), so a file
    imputed in blocks gets exactly the probabilities of the whole file at once."""
    shapes = tuple(
        tuple(_BATCH_PATH_SIZE if a == batch else int(d) for a, d in zip(ax, t.shape)) for t, ax in operands
    )
    key = (tuple(tuple(ax) for _, ax in operands), tuple(out), shapes)
    path = _PATHS.get(key)
    if path is None:
        sym = oe.parser.get_symbol
        expr = (
            ",".join("".join(sym(a) for a in ax) for _, ax in operands) + "->" + "".join(sym(a) for a in out)
        )
        path = oe.contract_path(expr, *shapes, optimize="greedy", shapes=True)[0]
        if len(_PATHS) > 20_000:
            _PATHS.clear()
        _PATHS[key] = path
    return path


def contract(operands: list, out: list, max_intermediate: float | None = None, batch: int | None = None):
    """Contract (tensor, axes) operands to axes ``out``; None if the path is too large.

    ``batch``: the label of an axis of independent rows (:func:`_batch_path`).

    Parameters
    ----------
    operands : list of (ndarray, sequence of int)
        Tensors with the variable label of each axis.
    out : list of int
        Labels of the result's axes.
    max_intermediate : float, optional
        Largest intermediate (cells) allowed on the greedy path.
    batch : int, optional

    Returns
    -------
    ndarray or None
    """
    args = []
    for t, ax in operands:
        args += [t, list(ax)]
    args.append(list(out))
    if max_intermediate is not None:
        _, info = oe.contract_path(*args, optimize="greedy")
        if info.largest_intermediate > max_intermediate:
            return None
    return oe.contract(*args, optimize="greedy" if batch is None else _batch_path(operands, out, batch))


# ---------------------------------------------------------------------- evidence
#: rows per block when :func:`pattern_keys` codes rows' missing cells (a bounded int64 temporary)
PATTERN_KEY_ROWS = 1 << 16


def _pattern_bits(d: int) -> np.ndarray:
    return np.left_shift(np.int64(1), np.arange(d - 1, -1, -1, dtype=np.int64))


def pattern_keys(codes: np.ndarray) -> np.ndarray:
    """Each row's missingness pattern as one integer, the first column its most significant bit: sorting the
    keys orders the patterns as :func:`missingness_patterns` lists them.  A block of
    :data:`PATTERN_KEY_ROWS` rows at a time, by one product with the bits' values.

    Parameters
    ----------
    codes : ndarray of int, shape (n, d)
        -1 = missing; at most 62 columns.

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    codes = np.asarray(codes)
    n, d = codes.shape
    if d > 62:
        raise ValueError(f"pattern keys hold at most 62 columns, got {d}")
    bits = _pattern_bits(d)
    key = np.empty(n, dtype=np.int64)
    for a in range(0, n, PATTERN_KEY_ROWS):
        block = codes[a : a + PATTERN_KEY_ROWS] < 0
        np.matmul(block.astype(np.int64), bits, out=key[a : a + PATTERN_KEY_ROWS])
    return key


def missingness_patterns(codes: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (row indices, missing-variable indices) for every distinct missingness pattern.

    Parameters
    ----------
    codes : ndarray of int, shape (n, d)
        -1 = missing.

    Yields
    ------
    rows, missing : ndarray of int
        Nothing when no cell is missing; complete rows are not yielded.
    """
    miss = codes < 0
    if not miss.any():
        return
    rows_with = np.flatnonzero(miss.any(axis=1))
    if (
        miss.shape[1] <= 62
    ):  # each pattern as one integer, the first column the most significant bit: the same order
        bits = _pattern_bits(miss.shape[1])
        key = pattern_keys(codes[rows_with])
        # one stable sort of the keys gives the patterns in key order and each pattern's rows in row order
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        pats = (key[starts][:, None] & bits[None, :]) != 0
        bounds = np.append(starts, len(key))
        del key
    else:
        pats, inv = np.unique(miss[rows_with], axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(pats) + 1))
    del miss
    for p in range(len(pats)):
        yield rows_with[order[bounds[p] : bounds[p + 1]]], np.flatnonzero(pats[p])


def _evidence_operands(model, codes: np.ndarray, missing: np.ndarray, relevant: set[int]):
    """Factors of the relevant variables with observed axes indexed by each row's values.

    Returns (operands with the batch axis labelled ``n_vars``, log-scale per row).
    """
    n = model.n_vars
    batch = n
    miss = set(int(m) for m in missing)
    B = codes.shape[0]
    log_scale = np.zeros(B)
    ops = []
    cards = model.cardinalities
    for v in sorted(relevant):
        t, axes = cpt_factor(model, v, cards)
        obs_ax = [k for k, a in enumerate(axes) if a not in miss]
        mis_ax = [k for k, a in enumerate(axes) if a in miss]
        if not obs_ax:
            ops.append((t, axes))
            continue
        t = np.transpose(t, obs_ax + mis_ax)
        sub = t[tuple(codes[:, axes[k]] for k in obs_ax)]  # (B, *missing axes)
        if not mis_ax:
            with np.errstate(divide="ignore"):
                log_scale += np.log(sub)
            continue
        mx = sub.reshape(B, -1).max(axis=1)
        with np.errstate(divide="ignore"):
            log_scale += np.log(mx)
        safe = np.where(mx > 0, mx, 1.0)
        ops.append((sub / safe.reshape((B,) + (1,) * len(mis_ax)), [batch] + [axes[k] for k in mis_ax]))
    return ops, log_scale


def _joint_with_evidence(model, codes: np.ndarray, missing: np.ndarray, query: Sequence[int]):
    """Unnormalised P(query, x_obs) for a batch sharing the missing set: (B, *r_query), log scale."""
    n = model.n_vars
    observed = [v for v in range(n) if v not in set(missing.tolist())]
    relevant = model.dag.ancestors(list(query) + observed)
    ops, log_scale = _evidence_operands(model, codes, missing, relevant)
    B = codes.shape[0]
    ops.append((np.ones(B), [n]))  # make sure the batch axis exists
    joint = contract(ops, [n] + list(query), batch=n)
    return joint, log_scale


def _blanket_families(model, missing) -> tuple[list[int], list[int]]:
    """(families with a missing member, the fully observed rest) for a missing set.

    P(x_M | x_O) is the product of the first group's factors, normalised over x_M: every factor of the
    second group is a constant of the row (its whole family is observed) and cancels."""
    miss = {int(m) for m in missing}
    touch, rest = [], []
    for f in range(model.n_vars):
        (touch if f in miss or miss.intersection(model.parents[f]) else rest).append(f)
    return touch, rest


def _conditional(model, codes: np.ndarray, rows: np.ndarray, missing: np.ndarray, query: Sequence[int]):
    """Unnormalised P(query | x_obs) of ``rows`` (B, *r_query) from the missing set's families only;
    raises ModelError when a row's observed values have probability zero."""
    sub = codes[rows]
    touch, rest = _blanket_families(model, missing)
    ops, log_scale = _evidence_operands(model, sub, missing, set(touch))
    n, B = model.n_vars, len(rows)
    ops.append((np.ones(B), [n]))
    joint = contract(ops, [n] + list(query), batch=n)
    flat = joint.reshape(B, -1)
    ok = (flat.sum(axis=1) > 0) & np.isfinite(log_scale)
    for f in rest:  # a zero in a fully observed factor makes P(x_obs) zero as well
        ok &= model.cpts[f][model.parent_config(f, sub), sub[:, f]] > 0
    bad = np.flatnonzero(~ok)
    if bad.size:
        raise ModelError(
            f"Row {int(rows[bad[0]]) + 1} has observed values that the model gives probability "
            "zero; fit the parameters with a pseudo-count (method 'smoothed')."
        )
    return flat


def joint_posteriors(
    model, codes: np.ndarray, rows: np.ndarray, missing: np.ndarray, query: Sequence[int]
) -> np.ndarray:
    """P(query | x_obs) for ``rows`` of ``codes`` that share the missing set ``missing``.

    Only the factors of families with a missing member take part (the Markov blankets of the missing
    variables); the others are constants of the row.  Returns an array (len(rows), prod r_query) in C
    order over ``query``.  Raises ModelError when the model gives a row's observed values probability zero.

    Parameters
    ----------
    model : BayesNet
    codes : ndarray of int, shape (n, d)
    rows : ndarray of int
    missing : ndarray of int
    query : sequence of int

    Returns
    -------
    ndarray, shape (len(rows), prod r_query)
    """
    flat = _conditional(model, codes, rows, missing, query)
    return flat / flat.sum(axis=1, keepdims=True)


#: largest joint table (rows x prod of the missing cardinalities) that :func:`posterior_by_pattern` builds to
#: get every missing variable of a pattern from one contraction; bigger patterns get one contraction per
#: variable
JOINT_POSTERIOR_CELLS = 2_000_000


def posterior_by_pattern(model, data) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Distribution of every missing cell given its row's observed values.

    Returns ``{variable index: (row indices, probabilities of shape (rows, r_i))}`` for the
    variables that have missing cells, with ``data`` aligned to the model.  One contraction per
    missingness pattern gives the joint of its missing variables, whose margins are the answers (one
    contraction per missing variable when that joint would exceed :data:`JOINT_POSTERIOR_CELLS`).

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData or numpy.ndarray

    Returns
    -------
    dict

    Raises
    ------
    ModelError
        The model gives a row's observed values probability zero.
    """
    codes = model.align(data).codes if hasattr(data, "codes") else np.asarray(data)
    cards = model.cardinalities
    parts: dict[int, list] = {}
    for rows, missing in missingness_patterns(codes):
        shape = [int(cards[m]) for m in missing]
        if len(missing) > 1 and len(rows) * math.prod(shape) <= JOINT_POSTERIOR_CELLS:
            joint = _conditional(model, codes, rows, missing, [int(m) for m in missing])
            joint = (joint / joint.sum(axis=1, keepdims=True)).reshape([len(rows)] + shape)
            for k, m in enumerate(missing):
                axes = tuple(a + 1 for a in range(len(missing)) if a != k)
                parts.setdefault(int(m), []).append((rows, joint.sum(axis=axes)))
            continue
        for m in missing:
            p = joint_posteriors(model, codes, rows, missing, [int(m)])
            parts.setdefault(int(m), []).append((rows, p))
    return gather_posteriors(parts)


def gather_posteriors(parts: dict) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """``{variable: [(rows, probabilities), ...]}`` per missingness pattern -> ``{variable: (rows, probs)}``
    with the rows of all patterns in increasing order (the form :func:`posterior_by_pattern` returns).

    Parameters
    ----------
    parts : dict
        variable -> list of (rows, probabilities).

    Returns
    -------
    dict
        variable -> (rows, probabilities).
    """
    out = {}
    for m, lst in parts.items():
        rows = np.concatenate([r for r, _ in lst])
        probs = np.concatenate([p for _, p in lst])
        order = np.argsort(rows, kind="stable")
        out[m] = (rows[order], probs[order])
    return out


def log_evidence_by_pattern(model, codes: np.ndarray) -> np.ndarray:
    """log P(x_observed) of every row of ``codes`` (aligned to the model).

    Parameters
    ----------
    model : BayesNet
    codes : ndarray of int, shape (n, d)

    Returns
    -------
    ndarray, shape (n,)
        ``-inf`` where the model gives the observed cells probability zero.
    """
    codes = np.asarray(codes)
    out = np.empty(codes.shape[0])
    miss_any = (codes < 0).any(axis=1)
    if (~miss_any).any():
        full = np.flatnonzero(~miss_any)
        joint, ls = _joint_with_evidence(model, codes[full], np.array([], dtype=int), [])
        with np.errstate(divide="ignore"):
            out[full] = np.log(joint) + ls
    for rows, missing in missingness_patterns(codes):
        joint, ls = _joint_with_evidence(model, codes[rows], missing, [])
        with np.errstate(divide="ignore"):
            out[rows] = np.log(joint) + ls
    return out
