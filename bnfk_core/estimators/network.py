"""Estimators over a learned network: :class:`FisherKernel`, :class:`NetworkImputer`,
:class:`KernelClustering`.

Each one learns "the network" by :func:`bnfk_core.learning.recipe.learn_recipe` from its recipe arguments
(``structure``, ``structure_score``, ``params``, ``missing_data``, ``pseudo_count``, ``max_parents``, ``k``)
and hands it to the core: the Fisher features and Gram matrix (:mod:`bnfk_core.kernels`), the exact-posterior
imputation (:func:`bnfk_core.analyses.impute.impute_with_model`), kernel clustering
(:func:`bnfk_core.analyses.cluster.run_clustering`).  Nothing is computed here that the core does not compute.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..data.binning import MISSING_CATEGORY, parse_interval
from ..data.table import cell_texts
from ..learning.recipe import DEFAULT_RECIPE, Recipe, learn_recipe
from ..registry import Interval, Option
from ._base import READ_OPTIONS, RECIPE_OPTIONS, TableInput, check_params, seed_of

__all__ = ["FisherKernel", "NetworkImputer", "KernelClustering", "OUTPUTS"]

#: what :meth:`FisherKernel.transform` returns
OUTPUTS = ("features", "gram")
#: the hyper-parameters of :class:`FisherKernel` besides the recipe's and the table's
_KERNEL_OPTIONS = (
    Option("normalize", bool, False, "cosine-normalise the Gram matrix", none=False),
    Option("output", OUTPUTS, "features", "what transform returns", none=False),
)


class _RecipeParams:
    """The recipe arguments of an estimator that learns a network, and the network itself."""

    def _recipe(self) -> Recipe:
        return Recipe(
            structure=self.structure,
            score=self.structure_score,
            params=self.params,
            missing_data=self.missing_data,
            pseudo_count=self.pseudo_count,
            max_parents=self.max_parents,
            forbid=() if self.forbid is None else self.forbid,
            require=() if self.require is None else self.require,
            k=self.k,
            seed=seed_of(self.random_state),
        ).check()

    def _learn(self, data):
        learned = learn_recipe(data, self._recipe())
        self.network_ = learned.model
        self.recipe_ = learned.recipe
        return learned


class FisherKernel(TableInput, _RecipeParams, TransformerMixin, BaseEstimator):
    """The Bayesian-network Fisher kernel as a scikit-learn transformer (paper, Theorem 1).

    ``fit(X)`` learns the network by the recipe; ``transform(X)`` gives the sparse Fisher features phi(x)
    (:func:`bnfk_core.kernels.features.features`, phi(x) . phi(y) = K(x, y); rows with missing cells get the
    marginalised features E[phi(x) | x_observed]); :meth:`gram` the Gram matrix
    (:func:`bnfk_core.kernels.fisher.gram`), ready for ``SVC(kernel="precomputed")``.  With ``output="gram"``,
    ``transform(X)`` is ``gram(X, X_fit)``, so that ``make_pipeline(FisherKernel(output="gram"),
    SVC(kernel="precomputed"))`` trains and predicts on the kernel.

    Parameters
    ----------
    structure, structure_score, params, missing_data, pseudo_count, max_parents, k, forbid, require
        The network's recipe (:class:`bnfk_core.learning.recipe.Recipe`; default tree / BIC / BDeu / EM);
        ``structure_score`` is the recipe's ``score`` (the name ``score`` is scikit-learn's for a method).
        ``forbid`` / ``require``: arcs (pairs of column names, or text ``"A->B, C->D"``) the network must not
        hold / must hold, honoured by ``hc``, ``hc-greedy``, ``tree`` and ``exact`` (another structure
        refuses them in ``fit`` with a ValueError naming the learner; an arc naming an unknown column, both
        required and forbidden, or required arcs forming a cycle are refused naming the arc).
    normalize : bool
        Cosine-normalise the Gram matrix (``gram`` and ``output="gram"``).
    output : {"features", "gram"}
        What ``transform`` returns.
    discretize_bins, max_levels
        How columns are read (:func:`bnfk_core.data.table.load_csv`): numbers with more than ``max_levels``
        distinct values are cut into ``discretize_bins`` quantile bins.
    handle_unknown : {"missing", "error"}
        A value the network has no state for, after ``fit``: a missing cell, or an error.
    random_state : int, RandomState or None
        The recipe's seed (tie-breaking, restarts, sampling in structural EM); an int is the core's ``seed``.

    Attributes
    ----------
    network_ : BayesNet
        The learned network.
    recipe_ : Recipe
    n_features_in_, feature_names_in_
    """

    _options = RECIPE_OPTIONS + _KERNEL_OPTIONS

    def __init__(
        self,
        *,
        structure=DEFAULT_RECIPE.structure,
        structure_score=DEFAULT_RECIPE.score,
        params=DEFAULT_RECIPE.params,
        missing_data=DEFAULT_RECIPE.missing_data,
        pseudo_count=DEFAULT_RECIPE.pseudo_count,
        max_parents=None,
        forbid=None,
        require=None,
        k=DEFAULT_RECIPE.k,
        normalize=False,
        output="features",
        discretize_bins=4,
        max_levels=50,
        handle_unknown="missing",
        random_state=0,
    ):
        self.structure = structure
        self.structure_score = structure_score
        self.params = params
        self.missing_data = missing_data
        self.pseudo_count = pseudo_count
        self.max_parents = max_parents
        self.forbid = forbid
        self.require = require
        self.k = k
        self.normalize = normalize
        self.output = output
        self.discretize_bins = discretize_bins
        self.max_levels = max_levels
        self.handle_unknown = handle_unknown
        self.random_state = random_state

    def fit(self, X, y=None):
        """Learn the network on ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self._check_options()
        data = self._fit_table(X)
        self._learn(data)
        self.train_ = data if self.output == "gram" else None
        return self

    def transform(self, X):
        """The sparse Fisher features of ``X`` (CSR, one block of columns per variable), or with
        ``output="gram"`` the kernel between ``X`` and the rows ``fit`` saw.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        scipy.sparse.csr_matrix or ndarray
            Features (n_samples, n_features_out), or the Gram matrix (n_samples, n_fit_rows).

        References
        ----------
        Paper, Theorem 1 (the kernel and its feature map).
        """
        check_is_fitted(self)
        from ..kernels.features import features

        data = self._table(X, self.network_)
        if self.output == "gram":
            from ..kernels.fisher import gram

            return gram(self.network_, data, self.train_, normalize=self.normalize)
        return features(self.network_, data)

    def gram(self, X, Y=None):
        """The (marginalised) Fisher kernel between the rows of ``X`` and of ``Y`` (default ``X``).

        Parameters
        ----------
        X, Y : pandas.DataFrame or array-like

        Returns
        -------
        ndarray, shape (len(X), len(Y))

        References
        ----------
        Paper, Theorem 1.
        """
        check_is_fitted(self)
        from ..kernels.fisher import gram

        data = self._table(X, self.network_)
        other = None if Y is None else self._table(Y, self.network_)
        return gram(self.network_, data, other, normalize=self.normalize)

    def get_feature_names_out(self, input_features=None):
        """``variable=state`` (a root) or ``variable=state|parent=state,...`` names of the feature columns
        (``output="features"``), in the order of :func:`bnfk_core.kernels.features.feature_offsets`.

        Parameters
        ----------
        input_features : ignored

        Returns
        -------
        ndarray of object
        """
        check_is_fitted(self)
        from ..kernels.features import feature_offsets

        model = self.network_
        names = []
        cards = model.cardinalities
        for i, v in enumerate(model.variables):
            ps = model.parents[i]
            for j in range(model.cpts[i].shape[0]):
                combo = np.unravel_index(j, [int(cards[p]) for p in ps]) if ps else ()
                given = ",".join(f"{model.variables[p]}={model.states[p][int(c)]}" for p, c in zip(ps, combo))
                for s in model.states[i]:
                    names.append(f"{v}={s}|{given}" if ps else f"{v}={s}")
        assert len(names) == int(feature_offsets(model)[-1])
        return np.asarray(names, dtype=object)


class NetworkImputer(TableInput, _RecipeParams, TransformerMixin, BaseEstimator):
    """Fill missing cells with their most probable value under the learned network's exact posterior.

    ``fit(X)`` learns the network by the recipe (missing cells handled by ``missing_data``, EM by default);
    ``transform(X)`` fills every missing cell (``NaN``, ``None``, ``pd.NA``, an empty string) of the network's
    columns with the arg-max of P(x_i | x_observed) (:func:`bnfk_core.analyses.impute.impute_with_model`) and
    changes nothing else.  A DataFrame comes back as a DataFrame (same index, columns and, where the filled
    values allow, dtypes); an array as an array.  A filled value is the value ``fit`` saw for that state (so
    numbers stay numbers and categories categories); in a discretized column it is the median of the values
    ``fit`` saw in the filled bin.

    Parameters
    ----------
    structure, structure_score, params, missing_data, pseudo_count, max_parents, k, forbid, require,
    discretize_bins, max_levels, handle_unknown, random_state
        As for :class:`FisherKernel`.

    Attributes
    ----------
    network_ : BayesNet
    recipe_ : Recipe
    fill_values_ : dict
        ``{column: {state: the value a filled cell gets}}``.
    """

    _options = RECIPE_OPTIONS

    def __init__(
        self,
        *,
        structure=DEFAULT_RECIPE.structure,
        structure_score=DEFAULT_RECIPE.score,
        params=DEFAULT_RECIPE.params,
        missing_data=DEFAULT_RECIPE.missing_data,
        pseudo_count=DEFAULT_RECIPE.pseudo_count,
        max_parents=None,
        forbid=None,
        require=None,
        k=DEFAULT_RECIPE.k,
        discretize_bins=4,
        max_levels=50,
        handle_unknown="missing",
        random_state=0,
    ):
        self.structure = structure
        self.structure_score = structure_score
        self.params = params
        self.missing_data = missing_data
        self.pseudo_count = pseudo_count
        self.max_parents = max_parents
        self.forbid = forbid
        self.require = require
        self.k = k
        self.discretize_bins = discretize_bins
        self.max_levels = max_levels
        self.handle_unknown = handle_unknown
        self.random_state = random_state

    def fit(self, X, y=None):
        """Learn the network on ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self._check_options()
        frame = self._frame(X, reset=True)
        self._columns = [str(c) for c in frame.columns]
        from ..data.table import from_frame

        data = from_frame(frame, discretize_bins=self.discretize_bins, max_levels=self.max_levels)
        self._learn(data)
        self.fill_values_ = _fill_values(frame, data)
        return self

    def transform(self, X):
        """``X`` with its missing cells filled.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        pandas.DataFrame or ndarray
            As ``X`` came: a DataFrame for a DataFrame, else an array.
        """
        check_is_fitted(self)
        from ..analyses.impute.completion import impute_with_model

        frame = self._frame(X, reset=False)
        data = self._table(frame, self.network_)
        result = impute_with_model(self.network_, data)
        out = frame.copy()
        names = {str(c).strip(): c for c in frame.columns}
        filled = result.data
        for i, v in enumerate(self.network_.variables):
            c = names.get(v)
            if c is None:
                continue
            blank = np.array([t.strip() == "" for t in cell_texts(frame[c])], dtype=bool)
            rows = np.flatnonzero(blank & (data.codes[:, i] < 0))
            if not rows.size:
                continue
            lookup = self.fill_values_.get(v, {})
            states = self.network_.states[i]
            values = [lookup.get(states[k], states[k]) for k in filled.codes[rows, i]]
            out[c] = _filled(out[c], rows, values)
        if isinstance(X, pd.DataFrame):
            return out
        return out.to_numpy()


def _filled(column: pd.Series, rows: np.ndarray, values: list) -> pd.Series:
    """``column`` with ``values`` put at the positions ``rows``: in the column's own dtype when it holds them
    (floats, nullable integers, strings, the categories of a categorical), else as objects."""
    vals = np.empty(len(values), dtype=object)
    vals[:] = values
    out = column.copy()
    try:
        if pd.api.types.is_float_dtype(column.dtype):
            out.iloc[rows] = np.asarray(values, dtype=float)
        else:
            out.iloc[rows] = vals
        return out
    except (TypeError, ValueError):  # e.g. a filled text in a numeric column: the column becomes objects
        out = column.astype(object)
        out.iloc[rows] = vals
        return out


def _fill_values(frame: pd.DataFrame, data) -> dict:
    """``{column: {state: value}}``: the first value of ``frame`` read as that state; for a discretized column
    the median (the lower middle one) of the values in the bin, as a completed file gets it."""
    out = {}
    names = {str(c).strip(): c for c in frame.columns}
    for i, v in enumerate(data.variables):
        column = frame[names[v]]
        codes = data.codes[:, i]
        states = data.states[i]
        lookup = {}
        real = [s for s in states if s != MISSING_CATEGORY]
        if v in data.numbers and real and all(parse_interval(s) is not None for s in real):
            nums = np.asarray(data.numbers[v], dtype=float)
            for k, s in enumerate(states):
                inside = np.sort(nums[(codes == k) & np.isfinite(nums)])
                if inside.size:
                    lookup[s] = inside[(inside.size - 1) // 2].item()
        else:
            values = (
                column.astype(object).to_numpy()
                if isinstance(column.dtype, pd.CategoricalDtype)
                else column.to_numpy()
            )
            first = {}
            for r, k in enumerate(codes):
                if k >= 0 and k not in first:
                    first[int(k)] = values[r]
            lookup = {states[k]: (x.item() if isinstance(x, np.generic) else x) for k, x in first.items()}
            if isinstance(column.dtype, pd.CategoricalDtype):  # unused categories: the category itself
                for cat, text in zip(column.cat.categories, cell_texts(pd.Series(column.cat.categories))):
                    lookup.setdefault(str(text).strip(), cat)
        out[v] = lookup
    return out


class KernelClustering(TableInput, _RecipeParams, ClusterMixin, BaseEstimator):
    """Cluster rows with any registered kernel and clustering algorithm (thesis ch. 5).

    ``fit(X)`` reads the table, learns the network by the recipe when the kernel is built from one
    (``KERNELS[kernel].uses_network``), and runs :func:`bnfk_core.analyses.cluster.run_clustering` (the Gram
    matrix of the kernel, then the algorithm; ``auto`` picks correlation clustering or, beyond the memory
    limit, kernel k-means in the explicit feature space).

    Parameters
    ----------
    n_clusters : int
        Clusters asked for (correlation clustering may use fewer: see ``n_used_``).
    kernel : str
        A name of :data:`bnfk_core.registry.KERNELS` (``fisher``, ``scaled-hamming``, ``hamming``, ...).
    algorithm : str
        A name of :data:`bnfk_core.registry.CLUSTERERS` (``correlation``, ``spectral``, ``kmeans-features``,
        ``auto``, ...).
    n_init : int
        Restarts of the algorithm (correlation clustering's ``restarts``, k-means' ``n_init``).
    structure, structure_score, params, missing_data, pseudo_count, max_parents, k, forbid, require,
    discretize_bins, max_levels, random_state
        As for :class:`FisherKernel`.

    Attributes
    ----------
    labels_ : ndarray of int (n_samples,)
    network_ : BayesNet or None
        The network behind a network kernel.
    result_ : dict
        :func:`~bnfk_core.analyses.cluster.run_clustering`'s JSON-ready result (metrics, timings, notes).
    """

    _options = (
        *RECIPE_OPTIONS,
        *READ_OPTIONS[:2],
        Option("n_init", Interval(int, 1, 100_000), 25, "restarts of the clustering algorithm", none=False),
    )

    def __init__(
        self,
        n_clusters=2,
        *,
        kernel="fisher",
        algorithm="correlation",
        n_init=25,
        structure=DEFAULT_RECIPE.structure,
        structure_score=DEFAULT_RECIPE.score,
        params=DEFAULT_RECIPE.params,
        missing_data=DEFAULT_RECIPE.missing_data,
        pseudo_count=DEFAULT_RECIPE.pseudo_count,
        max_parents=None,
        forbid=None,
        require=None,
        k=DEFAULT_RECIPE.k,
        discretize_bins=4,
        max_levels=50,
        random_state=0,
    ):
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.algorithm = algorithm
        self.n_init = n_init
        self.structure = structure
        self.structure_score = structure_score
        self.params = params
        self.missing_data = missing_data
        self.pseudo_count = pseudo_count
        self.max_parents = max_parents
        self.forbid = forbid
        self.require = require
        self.k = k
        self.discretize_bins = discretize_bins
        self.max_levels = max_levels
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster the rows of ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        from ..analyses.cluster.clustering import run_clustering
        from ..registry import CLUSTERERS, KERNELS

        kernel, algorithm = KERNELS[self.kernel], CLUSTERERS[self.algorithm]  # unknown names: one sentence
        check_params(self, self._options)
        if (
            not isinstance(self.n_clusters, (int, np.integer))
            or isinstance(self.n_clusters, bool)
            or self.n_clusters < 1
        ):
            raise ValueError(f"n_clusters must be a positive integer, not {self.n_clusters!r}.")
        data = self._fit_table(X)
        seed = seed_of(self.random_state)
        model = None
        if kernel.uses_network and algorithm.uses_kernel:
            model = self._learn(data).model
        else:
            self.network_, self.recipe_ = None, None
        out = run_clustering(
            data,
            kernel.name,
            algorithm.name,
            n_clusters=int(self.n_clusters),
            model=model,
            seed=seed,
            restarts=int(self.n_init),
            n_init=int(self.n_init),
        )
        self.labels_ = np.asarray(out["labels"], dtype=np.int64)
        self.n_used_ = int(out.get("n_used", len(np.unique(self.labels_))))
        self.result_ = {k: v for k, v in out.items() if k != "labels"}
        return self
