"""Imputation of missing categorical cells: the thesis's imputers (chapter 4).

Every imputer returns an :class:`Imputation`: one probability distribution per missing cell,
stored per variable as ``{variable index: (row indices, probabilities (rows, r_i))}`` -- the
layout of :func:`bnfk_core.inference.queries.posterior`.

Methods (:data:`METHODS`)
-------------------------
``bn``
    Exact posterior P(x_i | x_observed) under a Bayesian network whose structure is learned on
    the complete rows and whose parameters are fitted on all rows (available cases per family).
    One batched junction tree for all rows (:func:`bnfk_core.inference.queries.posterior`); no per-cell calls.
``mode``
    The relative frequencies of the column's observed values (thesis 4.1.1).
``wknn``
    Weighted k-nearest neighbours (thesis 4.1.2, 4.2): the k = 3 rows closest in Hamming distance
    that observe the variable vote for their value with weight 1 / (relative frequency of that
    value in the column); the votes are normalised to a distribution.  The distance counts the
    variables observed in the row being imputed on which the neighbour differs (a neighbour's
    missing cell counts as a difference), i.e. neighbours maximise the number of matching
    co-observed cells.  Ties are broken by a seeded random order.
``fisher-knn``
    The same vote with neighbours by the marginalized Fisher kernel's feature-space distance
    d(x, y)^2 = K(x,x) + K(y,y) - 2 K(x,y) under the ``bn`` model.
``bn-mode``, ``bn-wknn``
    Augmented models (thesis 4.2.2): fill every missing cell with the arg-max of the naive
    imputer, learn the network (structure and parameters) on the completed data, then impute
    the original missing cells with the exact posterior given each row's observed values.

The benchmark protocol and its scores are :mod:`bnfk_core.analyses.impute.benchmark`; a user's table or file
completed by a model is :mod:`bnfk_core.analyses.impute.completion`; every registered method (peers included)
is in
:data:`bnfk_core.registry.IMPUTERS` (:mod:`bnfk_core.analyses.impute.methods`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...data.encoding import one_hot
from ...data.table import CategoricalData, as_data
from ...errors import BnfkError, ModelError, shorten
from ...inference.elimination import missingness_patterns
from ...inference.queries import posterior
from ...kernels.fisher import FISHER, gram
from ...learning.exact import EXACT_MAX_VARIABLES
from ...registry import IMPUTERS, LEARNERS

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "Imputation",
    "ImputeError",
    "learn_model",
    "impute",
    "impute_bn",
    "impute_mode",
    "impute_wknn",
    "impute_fisher_knn",
    "impute_augmented",
    "knn_vote",
    "category_weights",
    "top_k",
    "hamming_matches",
    "posterior_cells",
    "cell_frame",
    "check_methods",
]

#: the thesis's methods; every registered method (peers included) is in :data:`bnfk_core.registry.IMPUTERS`
METHODS = ("bn", "mode", "wknn", "fisher-knn", "bn-mode", "bn-wknn")
#: the methods' names in tables and figures (thesis spelling)
METHOD_LABELS = {
    "bn": "BN",
    "mode": "Mode",
    "wknn": "wKNN",
    "fisher-knn": "Fisher-kNN",
    "bn-mode": "BN-Mode",
    "bn-wknn": "BN-wKNN",
}
Cells = dict  # {variable index: (rows, probs)}


class ImputeError(BnfkError):
    """An imputation or benchmark request cannot be carried out as asked."""


# ====================================================================== results
@dataclass(eq=False)
class Imputation:
    """Distributions of the missing cells of one data set.

    Attributes
    ----------
    method : str
    cells : dict
        ``{variable index: (row indices (sorted), probabilities of shape (rows, r_i))}``.
    model : BayesNet or None -- the network behind ``bn``-type methods.
    seconds : float
    notes : list of str
    """

    method: str
    cells: Cells
    model: object = None
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def n_cells(self) -> int:
        return int(sum(len(r) for r, _ in self.cells.values()))

    def argmax_codes(self, codes: np.ndarray) -> np.ndarray:
        """``codes`` with every imputed cell set to its most probable state."""
        out = np.array(codes, copy=True)
        for i, (rows, p) in self.cells.items():
            out[rows, i] = np.argmax(p, axis=1)
        return out

    def completed(self, data: CategoricalData) -> CategoricalData:
        """``data`` with every imputed cell filled by its most probable state."""
        return data.with_codes(self.argmax_codes(data.codes))

    def frame(self, data: CategoricalData) -> pd.DataFrame:
        """Tidy per-cell probabilities: one line per (row, column, state) (:func:`cell_frame`)."""
        return cell_frame(self.cells, data.variables, data.states)


def cell_frame(cells: Cells, variables: Sequence[str], states: Sequence[Sequence[str]], row_offset: int = 0):
    """Tidy per-cell probabilities of ``cells`` (``{variable index: (rows, probabilities)}``).

    One line per (row, column, state), ordered by row, then column, then state; columns ``row``
    (0-based data row, plus ``row_offset``), ``column``, ``imputed`` (the arg-max state), ``state``,
    ``probability``.
    """
    parts = []
    for i in sorted(cells):
        rows, p = cells[i]
        st = np.asarray(states[i], dtype=object)
        r = len(st)
        parts.append(
            pd.DataFrame(
                {
                    "row": np.repeat(np.asarray(rows, dtype=np.int64) + int(row_offset), r),
                    "column": variables[i],
                    "imputed": np.repeat(st[np.argmax(p, axis=1)], r),
                    "state": np.tile(st, len(rows)),
                    "probability": p.reshape(-1),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                "row": pd.Series(dtype=np.int64),
                "column": pd.Series(dtype=object),
                "imputed": pd.Series(dtype=object),
                "state": pd.Series(dtype=object),
                "probability": pd.Series(dtype=float),
            }
        )
    out = pd.concat(parts, ignore_index=True)
    index = {v: k for k, v in enumerate(variables)}
    order = np.lexsort((np.arange(len(out)), [index[c] for c in out["column"]], out["row"]))
    return out.iloc[order].reset_index(drop=True)


# ====================================================================== models
def learn_model(
    data: CategoricalData,
    *,
    structure: str = "auto",
    score: str = "qnml",
    params: str = "cnml",
    pseudo_count: float = 1.0,
    seed: int = 0,
    max_parents: int | None = None,
    missing_data: str | None = None,
    recipe=None,
):
    """The network used for imputation, over every column of ``data``: the imputers' recipe given to
    :func:`~bnfk_core.learning.recipe.learn_recipe` (``with_class=True``).

    ``recipe`` (a :class:`~bnfk_core.learning.recipe.Recipe`) is learned as it is and the other options are
    ignored; without it the options below make the recipe of the thesis's imputation protocol (the published
    benchmark's, kept as it is).

    ``missing_data=None`` is the thesis's protocol (``complete-rows``): structure on the complete rows,
    parameters on all rows (available cases per family).  A name of :data:`bnfk_core.registry.MISSING_DATA`
    (``available-case``, ``em``) learns the structure that way and fits the CPTs by EM over the missing cells.
    ``structure="auto"`` is exact search when there are at most 20 variables, else hill climbing.
    """
    from ...learning.recipe import Recipe, learn_recipe

    if recipe is not None:
        return learn_recipe(data, recipe, with_class=True).model
    method = str(structure).lower()
    if method == "auto":
        method = "exact" if data.n_vars <= EXACT_MAX_VARIABLES else "hc"
    if missing_data is None:
        if not data.complete_rows().any() and getattr(LEARNERS.get(method), "needs_rows", True):
            raise ImputeError(
                f"No row of {data.source} is complete; a structure needs complete rows "
                "(use 'bn-mode' or 'bn-wknn', which complete the data first, or a missing-data "
                "method such as available-case)."
            )
    protocol = Recipe(
        structure=method,
        score=score,
        params=params,
        missing_data=missing_data or "complete-rows",
        pseudo_count=pseudo_count,
        max_parents=max_parents,
        seed=seed,
    )
    model = learn_recipe(data, protocol, with_class=True).model
    model.fit_info["structure"] = method
    model.fit_info["score"] = score
    return model


# ====================================================================== imputers
def _missing_vars(codes: np.ndarray):
    miss = codes < 0
    return [int(i) for i in np.flatnonzero(miss.any(axis=0))], miss


def impute_mode(data: CategoricalData) -> Imputation:
    """Relative frequencies of each column's observed values (uniform for an all-missing column)."""
    t0 = time.perf_counter()
    codes = data.codes
    vars_, miss = _missing_vars(codes)
    cells = {}
    cards = data.cardinalities
    for i in vars_:
        obs = codes[~miss[:, i], i]
        cnt = np.bincount(obs, minlength=cards[i]).astype(float)
        p = cnt / cnt.sum() if cnt.sum() > 0 else np.full(cards[i], 1.0 / cards[i])
        rows = np.flatnonzero(miss[:, i])
        cells[i] = (rows, np.tile(p, (len(rows), 1)))
    return Imputation("mode", cells, seconds=time.perf_counter() - t0)


def category_weights(data: CategoricalData) -> list[np.ndarray]:
    """Per variable: 1 / relative frequency of each state among the observed cells (0 for unseen states)."""
    out = []
    for i, r in enumerate(data.cardinalities):
        col = data.codes[:, i]
        cnt = np.bincount(col[col >= 0], minlength=r).astype(float)
        tot = cnt.sum()
        with np.errstate(divide="ignore"):
            out.append(np.where(cnt > 0, tot / np.where(cnt > 0, cnt, 1.0), 0.0))
    return out


def knn_vote(
    similarity: np.ndarray,
    data: CategoricalData,
    k: int = 3,
    seed: int = 0,
    weights: Sequence[np.ndarray] | None = None,
) -> Cells:
    """Weighted k-nearest-neighbour distributions of every missing cell.

    Parameters
    ----------
    similarity : ndarray (N, N)
        Larger = closer (one matrix for all cells).
    data : CategoricalData
    k : number of neighbours (among the rows observing the variable).
    seed : seeds the random order that breaks ties in ``similarity``.
    weights : per variable, the vote weight of each state (default :func:`category_weights`).

    For a missing cell (a, i) the neighbours are the k rows b with x_{b,i} observed and the
    largest similarity[a, b] (ties in random order); state s gets sum of weights[i][s] over
    the neighbours with value s, normalised.  Uniform when no row observes variable i.
    """
    k = int(k)
    if k < 1:
        raise ImputeError(f"k (neighbours) must be at least 1, got {k}.")
    codes = data.codes
    N = codes.shape[0]
    S = np.asarray(similarity, float)
    if S.shape != (N, N):
        raise ImputeError(f"The similarity matrix has shape {S.shape}, expected ({N}, {N}).")
    if weights is None:
        weights = category_weights(data)
    rng = np.random.default_rng(seed)
    tie = rng.permutation(N)  # one random rank per candidate row
    S = np.round(S, 10)  # equal up to float noise = tie
    cards = data.cardinalities
    vars_, miss = _missing_vars(codes)
    cells = {}
    for i in vars_:
        rows = np.flatnonzero(miss[:, i])
        cand = np.flatnonzero(~miss[:, i])
        r = int(cards[i])
        if cand.size == 0:
            cells[i] = (rows, np.full((len(rows), r), 1.0 / r))
            continue
        kk = min(k, cand.size)
        nb = cand[top_k(S[np.ix_(rows, cand)], tie[cand], kk)]  # (rows, kk)
        vals = codes[nb, i]
        w = weights[i][vals]
        P = np.zeros((len(rows), r))
        np.add.at(P, (np.repeat(np.arange(len(rows)), kk), vals.ravel()), w.ravel())
        tot = P.sum(axis=1, keepdims=True)
        P = np.where(tot > 0, P / np.where(tot > 0, tot, 1.0), 1.0 / r)
        cells[i] = (rows, P)
    return cells


def top_k(sub: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``sub``, the column indices of its k largest values, ties by the smaller ``keys`` (distinct
    integers per column), in that order: ``np.lexsort((keys, -sub))[:, :k]`` without sorting whole rows
    (a partition finds the k-th largest value, the ties at it are settled by their keys)."""
    n_rows, n = sub.shape
    if k >= n or n_rows == 0:
        return np.lexsort((np.broadcast_to(keys, sub.shape), -sub), axis=-1)[:, :k]
    kth = np.partition(sub, n - k, axis=1)[:, n - k][:, None]
    above = sub > kth
    at = sub == kth
    need = k - above.sum(axis=1)  # >= 1 ties taken per row
    tie_keys = np.where(at, keys[None, :].astype(float), np.inf)
    smallest = np.sort(np.partition(tie_keys, k - 1, axis=1)[:, :k], axis=1)
    cut = smallest[np.arange(n_rows), need - 1][:, None]
    chosen = above | (at & (tie_keys <= cut))
    cols = np.nonzero(chosen)[1].reshape(n_rows, k)
    vals = np.take_along_axis(sub, cols, axis=1)
    order = np.lexsort((keys[cols], -vals), axis=-1)
    return np.take_along_axis(cols, order, axis=1)


def hamming_matches(data: CategoricalData) -> np.ndarray:
    """Number of variables on which two rows are both observed and equal (one matrix product)."""
    X = one_hot(data.codes, data.cardinalities, dtype=np.float32)
    return (X @ X.T).astype(np.float64)


def impute_wknn(data: CategoricalData, k: int = 3, seed: int = 0) -> Imputation:
    """Weighted kNN with Hamming neighbours (thesis 4.1.2; see the module docstring)."""
    t0 = time.perf_counter()
    cells = knn_vote(hamming_matches(data), data, k=k, seed=seed)
    return Imputation("wknn", cells, seconds=time.perf_counter() - t0)


def impute_fisher_knn(data: CategoricalData, model=None, k: int = 3, seed: int = 0, **learn) -> Imputation:
    """Weighted kNN with neighbours by the marginalized Fisher kernel's distance under ``model``."""
    t0 = time.perf_counter()
    if model is None:
        model = learn_model(data, seed=seed, **learn)
    K = gram(model, data, kind=FISHER)
    d = np.diag(K)
    D2 = d[:, None] + d[None, :] - 2.0 * K
    cells = knn_vote(-D2, data, k=k, seed=seed)
    return Imputation("fisher-knn", cells, model=model, seconds=time.perf_counter() - t0)


def _groups(model, missing) -> list:
    """The missing cells split into groups that share no family (a row's posterior is the product of the
    groups'), each with the variables of its context: the members of the families that touch it, less the
    group."""
    fams = [set(model.parents[i]) | {i} for i in range(model.n_vars)]
    parent = {int(m): int(m) for m in missing}

    def root(v):
        while parent[v] != v:
            v = parent[v]
        return v

    for fam in fams:
        ms = sorted(v for v in fam if v in parent)
        for v in ms[1:]:
            parent[root(v)] = root(ms[0])
    groups: dict = {}
    for m in parent:
        groups.setdefault(root(m), []).append(m)
    out = []
    for g in groups.values():
        ctx = set().union(*(f for f in fams if f & set(g))) - set(g)
        out.append((sorted(g), sorted(ctx)))
    return out


def _context_keys(model, codes: np.ndarray) -> tuple[np.ndarray, list]:
    """One key per (incomplete row, group of its missing cells, :func:`_groups`): the row's codes on the
    group's context, -1 on the group, -2 elsewhere -- two keys alike have the same posterior over the group.
    Returns the keys and, per pattern and group, ``(rows, group, slice of the keys)``."""
    keys, where, at = [], [], 0
    for rows, missing in missingness_patterns(codes):
        for group, ctx in _groups(model, missing):
            k = np.full((rows.size, codes.shape[1]), -2, dtype=codes.dtype)
            k[:, ctx] = codes[np.ix_(rows, ctx)]
            k[:, group] = -1
            keys.append(k)
            where.append((rows, group, slice(at, at + rows.size)))
            at += rows.size
    return (np.concatenate(keys) if keys else np.zeros((0, codes.shape[1]), dtype=codes.dtype)), where


def _outside_zero(model, codes: np.ndarray) -> bool:
    """Whether a row has probability zero through a family whose members it observes whole (such a family is
    outside the context when it touches no missing cell)."""
    if not any((np.asarray(c) == 0).any() for c in model.cpts):
        return False
    cards = model.cardinalities
    for i in range(model.n_vars):
        fam = list(model.parents[i]) + [i]
        rows = np.flatnonzero((codes[:, fam] >= 0).all(axis=1))
        if not rows.size:
            continue
        idx = np.zeros(rows.size, dtype=np.int64)
        for v in fam:
            idx = idx * int(cards[v]) + codes[rows, v]
        if (np.asarray(model.cpts[i]).ravel()[idx] == 0).any():
            return True
    return False


ENUMERATE_MAX_COMPLETIONS = 4096


def _rep_posteriors(model, reps: np.ndarray) -> dict:
    """:func:`bnfk_core.inference.queries.posterior` of representatives whose missing cells form one group
    each:
    a group of at most :data:`ENUMERATE_MAX_COMPLETIONS` joint states by enumerating its completions (the
    product of the CPT entries of the families touching it, normalised; the other families cancel), a wider
    one by the junction tree.  Raises ModelError for a representative of probability zero."""
    cards = [int(c) for c in model.cardinalities]
    fams = [list(model.parents[i]) + [i] for i in range(model.n_vars)]
    with np.errstate(divide="ignore"):
        logs = [np.log(np.asarray(c, dtype=float).ravel()) for c in model.cpts]
    parts: dict = {}
    wide = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for rows, missing in missingness_patterns(reps):
            g = [int(m) for m in missing]
            shape = [cards[m] for m in g]
            K = math.prod(shape)
            if K > ENUMERATE_MAX_COMPLETIONS:
                wide.append(rows)
                continue
            grid = np.indices(shape).reshape(len(g), K).T  # completions, the last cell fastest
            table = np.repeat(reps[rows], K, axis=0)
            table[:, g] = np.tile(grid, (rows.size, 1))
            ll = np.zeros(table.shape[0])
            for i, fam in enumerate(fams):
                if set(fam) & set(g):
                    idx = np.zeros(table.shape[0], dtype=np.int64)
                    for v in fam:
                        idx = idx * cards[v] + table[:, v]
                    ll += logs[i][idx]
            ll = ll.reshape(rows.size, K)
            top = ll.max(axis=1, keepdims=True)
            if not np.isfinite(top).all():
                raise ModelError("a representative has probability zero")
            p = np.exp(ll - top)
            p = (p / p.sum(axis=1, keepdims=True)).reshape([rows.size] + shape)
            for k, m in enumerate(g):
                axes = tuple(a + 1 for a in range(len(g)) if a != k)
                parts.setdefault(m, []).append((rows, p.sum(axis=axes) if axes else p))
    if wide:
        rows = np.sort(np.concatenate(wide))
        for m, (rr, P) in posterior(model, reps[rows]).items():
            parts.setdefault(m, []).append((rows[rr], P))
    out = {}
    for m, lst in parts.items():
        rr = np.concatenate([r for r, _ in lst])
        order = np.argsort(rr, kind="stable")
        out[m] = (rr[order], np.concatenate([P for _, P in lst])[order])
    return out


def merged_posterior(model, data) -> dict:
    """:func:`bnfk_core.inference.queries.posterior`, with the incomplete rows that share a context calibrated
    once.

    A row's distribution over its missing cells M is proportional to the product of the CPT factors of the
    families that touch M; every other factor is a constant of the row and cancels. So it depends only on the
    observed members of those families (for one missing cell, its Markov blanket) and on M; and M splits into
    groups that share no family, whose posteriors are independent and depend each on its own context. So every
    (row, group) is reduced to one representative per (group, context) — its other cells set to their first
    state, so that the representative's posterior is a function of the key alone (the same in any block of the
    file) — and each representative's posterior, by enumerating its group's completions over the touching
    families (the junction tree for a group of more than :data:`ENUMERATE_MAX_COMPLETIONS` joint states), is
    given to all its rows. Equal to the row-by-row junction tree up to rounding (tested to 1e-12). A row of
    probability zero, or a representative of probability zero (a model with zero CPT entries), goes to the
    row-by-row path, which names the row as before.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData or numpy.ndarray
        The rows, aligned to the model (an array of codes is taken as aligned; -1 is missing).

    Returns
    -------
    dict
        As :func:`bnfk_core.inference.queries.posterior`.

    References
    ----------
    Thesis §2.1.3 (the factorisation and the Markov blanket) and App. A.3 (exact inference by a junction
    tree).
    """
    codes = model.align(data).codes if hasattr(data, "codes") else np.asarray(data)
    inc = np.flatnonzero((codes < 0).any(axis=1))
    if not inc.size:
        return {}
    sub = codes[inc]
    if _outside_zero(model, sub):
        return posterior(model, codes)
    keys, where = _context_keys(model, sub)
    small = keys.astype(np.int16) if int(keys.max()) < 32767 else keys
    view = (
        np.ascontiguousarray(small).view(np.dtype((np.void, small.dtype.itemsize * small.shape[1]))).ravel()
    )
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    reps = np.where(keys[first] == -2, 0, keys[first])
    try:
        post = _rep_posteriors(model, reps)
    except ModelError:
        return posterior(model, codes)  # names the row of probability zero, as before
    at = {v: np.full(reps.shape[0], -1, dtype=np.int64) for v in post}
    for v, (rr, _) in post.items():
        at[v][rr] = np.arange(rr.size)
    parts: dict = {}
    for rows, group, sl in where:
        for v in group:
            parts.setdefault(v, []).append((rows, inverse[sl]))
    out = {}
    for v in sorted(parts):
        rows = np.concatenate([r for r, _ in parts[v]])
        key = np.concatenate([k for _, k in parts[v]])
        order = np.argsort(rows, kind="stable")
        out[int(v)] = (inc[rows[order]], post[v][1][at[v][key[order]]])
    return out


def posterior_cells(model, data: CategoricalData, merge: bool = True) -> Cells:
    """Every missing cell's posterior, keyed by the data's column index (:func:`merged_posterior`, or the
    row-by-row :func:`bnfk_core.inference.queries.posterior` with ``merge=False``)."""
    post = (merged_posterior if merge else posterior)(model, data)
    aligned_vars = list(model.variables)
    out = {}
    for m, (rows, p) in post.items():
        out[data.variables.index(aligned_vars[m])] = (rows, p)
    return out


def impute_bn(data: CategoricalData, model=None, seed: int = 0, **learn) -> Imputation:
    """Exact posterior of every missing cell given its row's observed values (see module docstring)."""
    t0 = time.perf_counter()
    if model is None:
        model = learn_model(data, seed=seed, **learn)
    cells = posterior_cells(model, data)
    return Imputation("bn", cells, model=model, seconds=time.perf_counter() - t0)


def impute_augmented(
    data: CategoricalData,
    naive: str = "mode",
    k: int = 3,
    seed: int = 0,
    naive_imputation: Imputation | None = None,
    **learn,
) -> Imputation:
    """BN-Mode / BN-wKNN (thesis 4.2.2): naive fill, learn the network on the completed data, then BN."""
    t0 = time.perf_counter()
    if naive not in ("mode", "wknn"):
        raise ImputeError(f"Unknown naive imputer '{naive}' for an augmented model; choose mode or wknn.")
    if naive_imputation is None:
        naive_imputation = impute_mode(data) if naive == "mode" else impute_wknn(data, k=k, seed=seed)
    filled = naive_imputation.completed(data)
    model = learn_model(filled, seed=seed, **learn)
    cells = posterior_cells(model, data)
    return Imputation(f"bn-{naive}", cells, model=model, seconds=time.perf_counter() - t0)


def impute(
    data: CategoricalData, method: str = "bn", *, model=None, k: int = 3, seed: int = 0, **learn
) -> Imputation:
    """Impute every missing cell of ``data`` with a method of :data:`bnfk_core.registry.IMPUTERS`.

    ``model`` (a BayesNet over ``data``'s variables) is used by ``bn`` and ``fisher-knn`` instead of
    learning one; ``learn`` options (``structure``, ``score``, ``params``, ``max_parents``) go to
    :func:`learn_model`.  ``data`` may be a pandas DataFrame (:func:`bnfk_core.data.table.as_data`).
    """
    spec = IMPUTERS[check_methods(method)[0]]
    options = IMPUTERS.validate(spec.name, {"model": model, "k": k, "seed": seed, **learn})
    data = as_data(data)
    return spec.impute(data, cache={}, **options)


def check_methods(methods) -> tuple:
    """Registered imputation methods (:data:`bnfk_core.registry.IMPUTERS`) from a list or a comma string."""
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    methods = tuple(str(m).lower() for m in methods)
    if not methods:
        raise ImputeError("Choose at least one imputation method.")
    for m in methods:
        if m not in IMPUTERS:
            raise ImputeError(f"Unknown imputation method '{shorten(m)}'; choose from {', '.join(IMPUTERS)}.")
    return tuple(dict.fromkeys(methods))
