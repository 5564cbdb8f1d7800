"""The imputation methods as a registry (:data:`bnfk_core.registry.IMPUTERS`), peers included.

Every method is one :class:`~bnfk_core.registry.ImputerSpec` whose ``impute(data, *, model=None,
k=3, seed=0, cache=None, **learn)`` returns an :class:`~bnfk_core.analyses.impute.core.Imputation`.
``cache`` is shared by the methods of one benchmark run (one network for ``bn`` and ``fisher-knn``,
one wKNN imputation for ``wknn`` and ``bn-wknn``); ``learn`` holds ``structure``, ``score``,
``params``.

Methods
-------
Thesis (chapter 4): ``bn``, ``mode``, ``wknn``, ``fisher-knn``, ``bn-mode``, ``bn-wknn``
(:mod:`bnfk_core.analyses.impute.core`).

Networks learned from every row (:mod:`bnfk_core.learning.incomplete`): ``bn-ac`` (available-case structure,
CPTs by EM) and ``bn-em`` (structural EM, the default: the best of the variants measured).
:data:`DEFAULT_IMPUTER` is the one ``impute
--structure`` and the app use.

Peers an analyst would pick instead (``peer=True``): ``mode`` (the most frequent value; its
distribution is the column's relative frequencies) and ``knn-onehot`` (scikit-learn's
``KNNImputer`` with k = 5 on one-hot codes, the arg-max of each variable's block).  Another module
adds a peer with one call, e.g. a latent class model::

    IMPUTERS.register(ImputerSpec("lca", "Latent class model", my_impute, peer=True, needs="..."))
"""

from __future__ import annotations

import time

import numpy as np

from ...data.encoding import one_hot as one_hot_codes
from ...data.encoding import state_offsets
from ...registry import IMPUTERS
from .core import (
    Imputation,
    impute_augmented,
    impute_bn,
    impute_fisher_knn,
    impute_mode,
    impute_wknn,
    learn_model,
)
from .knn_onehot import impute_knn_numpy
from .members import DEFAULT_IMPUTER, DEFAULT_STRUCTURE_MISSING, IMPUTE_LEARN
from .stack import impute_average, impute_stacked

__all__ = [
    "impute_lca",
    "impute_table",
    "NETWORK_IMPUTERS",
    "DEFAULT_IMPUTER",
    "DEFAULT_STRUCTURE_MISSING",
    "IMPUTE_LEARN",
    "learn_for_imputation",
    "impute_knn_onehot",
    "one_hot",
]


def learn_for_imputation(
    data,
    structure: str | None = None,
    *,
    recipe=None,
    missing_data: str | None = None,
    score: str | None = None,
    params: str | None = None,
    seed: int | None = None,
    progress=None,
):
    """The network ``impute DATA --structure S`` learns from the table to complete it: the network of
    ``recipe`` (default :data:`bnfk_core.learning.recipe.DEFAULT_RECIPE`, whose fields the options given by
    name replace) over every column of ``data``, learned by
    :func:`~bnfk_core.learning.recipe.learn_recipe` (``with_class=True``).
    Returns (LearnResult, BayesNet); the model's ``fit_info["recipe"]`` records the recipe."""
    from ...learning.recipe import learn_recipe, recipe_of

    r = recipe_of(
        recipe, structure=structure, missing_data=missing_data, score=score, params=params, seed=seed
    )
    learned = learn_recipe(data, r, with_class=True, progress=progress)
    return learned.result, learned.model


#: the imputers that are one network learned from the table, by their ``--missing-data`` (``impute
#: --structure`` learns that network and imputes with its exact posteriors, as ``impute --model`` would)
NETWORK_IMPUTERS = {"bn-em": "em", "bn-ac": "available-case", "bn": "complete-rows"}


def impute_table(
    data,
    method: str = DEFAULT_IMPUTER,
    structure: str | None = None,
    *,
    score: str | None = None,
    params: str | None = None,
    seed: int = 0,
    recipe=None,
):
    """Fill every missing cell of ``data`` with the registered imputer ``method`` (``impute DATA --structure S
    --method M``): it learns from ``data`` itself (networks with ``structure``, ``score``, ``params``).

    Returns an :class:`~bnfk_core.analyses.impute.core.ImputedData` (the completed table, which cells were
    filled, the per-cell probabilities) like :func:`~bnfk_core.analyses.impute.core.impute_with_model`."""
    from ...data.table import as_data
    from ...learning.recipe import recipe_of
    from .completion import ImputedData
    from .core import check_methods

    r = recipe_of(recipe, structure=structure, score=score, params=params, seed=seed)
    spec = IMPUTERS[check_methods(method)[0]]
    options = {"seed": seed, "structure": r.structure, "score": r.score, "params": r.params}
    IMPUTERS.validate(spec.name, options)  # one sentence before the table is read or a network learned
    data = as_data(data)  # a pandas DataFrame is read as a file is (from_frame)
    imp = spec.impute(data, cache={}, **options)
    imp.recipe = r
    completed = imp.completed(data)
    frame = data.frame.copy()
    for v in data.variables:
        frame[v] = completed.frame[v].to_numpy()
    return ImputedData(frame, completed, data.codes < 0, imp.frame(data), imp)


def _model(data, cache, seed, learn, missing_data=None):
    key = ("model", missing_data)
    if cache is None:
        cache = {}
    if key not in cache:
        cache[key] = learn_model(data, seed=seed, missing_data=missing_data, **learn)
    return cache[key]


def _bn(data, *, model=None, k=3, seed=0, cache=None, **learn):
    return impute_bn(data, model=model if model is not None else _model(data, cache, seed, learn))


def _fisher(data, *, model=None, k=3, seed=0, cache=None, **learn):
    model = model if model is not None else _model(data, cache, seed, learn)
    return impute_fisher_knn(data, model=model, k=k, seed=seed)


def _wknn(data, *, model=None, k=3, seed=0, cache=None, **_):
    cache = {} if cache is None else cache
    if "wknn" not in cache:
        cache["wknn"] = impute_wknn(data, k=k, seed=seed)
    return cache["wknn"]


def _bn_wknn(data, *, model=None, k=3, seed=0, cache=None, **learn):
    naive = _wknn(data, k=k, seed=seed, cache=cache)
    return impute_augmented(data, "wknn", seed=seed, naive_imputation=naive, **learn)


def _bn_mode(data, *, model=None, k=3, seed=0, cache=None, **learn):
    return impute_augmented(data, "mode", seed=seed, **learn)


def _mode(data, **_):
    return impute_mode(data)


def _from_every_row(missing_data: str, name: str, data, *, model=None, k=3, seed=0, cache=None, **learn):
    """``bn-ac`` / ``bn-em``: the network learned from every row by ``missing_data``, then BN imputation."""
    t0 = time.perf_counter()
    m = model if model is not None else _model(data, cache, seed, learn, missing_data)
    imp = impute_bn(data, model=m)
    return Imputation(name, imp.cells, model=m, seconds=time.perf_counter() - t0, notes=imp.notes)


# ---------------------------------------------------------------------- peers
def one_hot(data) -> tuple[np.ndarray, np.ndarray]:
    """(X, offsets): one 0/1 column per (variable, state) (:func:`bnfk_core.data.encoding.one_hot`), NaN over
    the whole block of a missing cell."""
    return one_hot_codes(data.codes, data.cardinalities, missing="nan"), state_offsets(data.cardinalities)


def impute_knn_onehot(data, k: int = 5) -> Imputation:
    """scikit-learn ``KNNImputer`` (``k`` neighbours, NaN-Euclidean distance) on one-hot codes.

    A missing cell's block becomes the mean of its k neighbours' one-hot blocks (neighbours among the
    rows observing the variable), i.e. their vote shares; the arg-max is the imputed state (first
    state on a tie), and the shares are the cell's distribution."""
    from sklearn.impute import KNNImputer

    t0 = time.perf_counter()
    X, offs = one_hot(data)
    filled = KNNImputer(n_neighbors=int(k), keep_empty_features=True).fit_transform(X)
    cells = {}
    for i in range(data.n_vars):
        rows = np.flatnonzero(data.codes[:, i] < 0)
        if not rows.size:
            continue
        P = np.clip(filled[rows, offs[i] : offs[i + 1]], 0.0, None)
        tot = P.sum(axis=1, keepdims=True)
        r = P.shape[1]
        cells[i] = (rows, np.where(tot > 0, P / np.where(tot > 0, tot, 1.0), 1.0 / r))
    return Imputation("knn-onehot", cells, seconds=time.perf_counter() - t0)


def _cached(cache, key, run):
    """``run()`` once per benchmark run's ``cache`` (the stacked imputers reuse their components' results)."""
    if cache is None:
        return run()
    if key not in cache:
        cache[key] = run()
    return cache[key]


def _knn_onehot(data, *, cache=None, **_):
    return _cached(cache, "knn-onehot", lambda: impute_knn_onehot(data, k=5))


#: the latent class peer: K = 1..LCA_MAX_CLASSES classes, the lowest BIC kept, LCA_STARTS seeded EM starts
#: each
LCA_MAX_CLASSES, LCA_STARTS = 6, 5


def impute_lca(data, seed: int = 0) -> Imputation:
    """The latent class model (:mod:`bnfk_core.lca`, K by BIC): a missing cell's distribution is
    sum_t P(t | x_obs) theta_i[t, .] -- the class posterior of the row times the class profiles."""
    from ...lca import best_by_bic

    t0 = time.perf_counter()
    best = best_by_bic(
        data, LCA_MAX_CLASSES, LCA_STARTS, seed, engine="auto"
    )  # small tables: no numba start-up
    post = best.posterior(data.codes)
    cells = {}
    for i, prof in enumerate(best.profiles):
        rows = np.flatnonzero(data.codes[:, i] < 0)
        if rows.size:
            P = post[rows] @ prof
            cells[i] = (rows, P / P.sum(axis=1, keepdims=True))
    return Imputation(
        "lca",
        cells,
        seconds=time.perf_counter() - t0,
        notes=[f"latent class model with {best.n_classes} classes (lowest BIC of K = 1..{LCA_MAX_CLASSES})"],
    )


def _knn(data, *, cache=None, **_):
    return _cached(cache, "knn", lambda: impute_knn_numpy(data, k=5))


def _lca(data, *, seed=0, cache=None, **_):
    return _cached(cache, ("lca", seed), lambda: impute_lca(data, seed=seed))


def _stack(data, *, model=None, k=3, seed=0, cache=None, **learn):
    return impute_stacked(data, seed=seed, cache=cache, **learn)


def _bn_lca(data, *, model=None, k=3, seed=0, cache=None, **learn):
    return impute_average(data, seed=seed, cache=cache, **learn)
