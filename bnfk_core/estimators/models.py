"""Estimators over the core's probabilistic models: :class:`LatentClassModel` (latent class analysis,
:func:`bnfk_core.lca.fit_lca`) and :class:`NetworkClassifier` (naive Bayes, TAN, KDB or any learned structure
with the class as a node; the class posterior by exact inference,
:func:`bnfk_core.inference.queries.posterior`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, DensityMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from ..learning.recipe import DEFAULT_RECIPE
from ..registry import Interval, Option
from ._base import RECIPE_OPTIONS, TableInput, seed_of

__all__ = ["LatentClassModel", "NetworkClassifier"]


class LatentClassModel(TableInput, DensityMixin, BaseEstimator):
    """Latent class analysis (a naive Bayes network with a hidden class) fitted by EM, as scikit-learn's
    ``GaussianMixture`` is for numbers: :func:`bnfk_core.lca.fit_lca` from ``n_init`` seeded random starts,
    the best log-likelihood kept.

    Parameters
    ----------
    n_components : int
        Latent classes.
    n_init : int
        Random starts (poLCA's ``nrep``).
    tol, max_iter : float, int
        EM stops when the log-likelihood gains less than ``tol`` or after ``max_iter`` iterations.
    discretize_bins, max_levels, handle_unknown
        As for :class:`~bnfk_core.estimators.FisherKernel`.
    random_state : int, RandomState or None
        The seed of the starts (an int is :func:`~bnfk_core.lca.fit_lca`'s ``seed``).

    Attributes
    ----------
    model_ : bnfk_core.lca.LatentClassModel
        The fitted model (classes by decreasing weight).
    weights_ : ndarray (n_components,)
    profiles_ : list of ndarray (n_components, r_i)
        P(x_i = state | class).
    loglik_ : float
        The training log-likelihood (missing cells marginalised).
    converged_, n_iter_ : bool, int
        Of the best start.
    """

    _options = (
        Option("n_components", Interval(int, 1, 1000), 2, "latent classes", none=False),
        Option("n_init", Interval(int, 1, 10_000), 20, "seeded random starts", none=False),
        Option(
            "tol", Interval(float, 0, None), 1e-8, "the least log-likelihood gain of an EM step", none=False
        ),
        Option("max_iter", Interval(int, 1, 10_000_000), 1000, "the most EM iterations", none=False),
    )

    def __init__(
        self,
        n_components=2,
        *,
        n_init=20,
        tol=1e-8,
        max_iter=1000,
        discretize_bins=4,
        max_levels=50,
        handle_unknown="missing",
        random_state=0,
    ):
        self.n_components = n_components
        self.n_init = n_init
        self.tol = tol
        self.max_iter = max_iter
        self.discretize_bins = discretize_bins
        self.max_levels = max_levels
        self.handle_unknown = handle_unknown
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the model to ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        from ..lca import fit_lca

        self._check_options()
        data = self._fit_table(X)
        self.model_ = fit_lca(
            data,
            self.n_components,
            starts=self.n_init,
            seed=seed_of(self.random_state),
            tol=self.tol,
            max_iter=self.max_iter,
        )
        self.weights_ = self.model_.weights.copy()
        self.profiles_ = [p.copy() for p in self.model_.profiles]
        self.loglik_ = float(self.model_.loglik)
        self.converged_ = bool(self.model_.converged)
        self.n_iter_ = int(self.model_.iterations)
        return self

    def _codes(self, X):
        return self.model_.codes_of(self._table(X, self.model_.to_bayesnet()))

    def predict(self, X):
        """The most probable class of every row (0-based, classes by decreasing weight).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int, shape (n_samples,)
        """
        check_is_fitted(self)
        return self.model_.modal_classes(self._codes(X))

    def predict_proba(self, X):
        """P(class | x_observed) of every row, shape (n_samples, n_components).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_components)
        """
        check_is_fitted(self)
        return self.model_.posterior(self._codes(X))

    def fit_predict(self, X, y=None):
        """Fit, then the most probable class of every row of ``X``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        ndarray of int, shape (n_samples,)
        """
        return self.fit(X).predict(X)

    def score_samples(self, X):
        """log P(x_observed) of every row.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
        """
        check_is_fitted(self)
        return self.model_.log_likelihood(self._codes(X))

    def score(self, X, y=None):
        """The mean log-likelihood per row (as ``GaussianMixture.score``).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def bic(self, X):
        """-2 log L(X) + p log n (p: free parameters; as ``GaussianMixture.bic``; on the training rows it is
        the fitted model's BIC).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        float
        """
        ll = self.score_samples(X)
        return float(-2.0 * ll.sum() + self.model_.parameters * math.log(len(ll)))

    def aic(self, X):
        """-2 log L(X) + 2 p.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        float
        """
        return float(-2.0 * self.score_samples(X).sum() + 2.0 * self.model_.parameters)


#: the class column's name inside the table (never a feature's: a leading underscore is added until it is new)
CLASS_NAME = "class"


class NetworkClassifier(TableInput, ClassifierMixin, BaseEstimator):
    """A Bayesian-network classifier: naive Bayes, TAN, KDB (or any structure method) with the class as a
    node.

    ``fit(X, y)`` learns the structure over the features and the class
    (:func:`bnfk_core.learning.structure.learn_structure`) and its CPTs (:func:`bnfk_core.network.model.fit`,
    or EM over missing cells, :func:`bnfk_core.learning.incomplete.em_parameters`); ``predict_proba`` is the
    class posterior P(class | x_observed) by exact inference (:func:`bnfk_core.inference.queries.posterior`),
    so a missing feature is marginalised, not guessed.

    Parameters
    ----------
    structure : str
        A method of :data:`bnfk_core.registry.LEARNERS`: ``naive-bayes``, ``tan``, ``kdb`` (``k`` feature
        parents), or any other (the class is then one node among the rest).
    structure_score, params, missing_data, pseudo_count, max_parents, k, forbid, require
        As in the recipe (:class:`bnfk_core.learning.recipe.Recipe`; ``structure_score`` is the recipe's
        ``score``, named apart because a classifier's ``score`` is its accuracy,
        :meth:`sklearn.base.ClassifierMixin.score`);
        ``missing_data="complete-rows"`` fits the CPTs by available-case counts, any other value by EM over
        the missing cells.
    discretize_bins, max_levels, handle_unknown, random_state
        As for :class:`~bnfk_core.estimators.FisherKernel`.

    Attributes
    ----------
    classes_ : ndarray
    network_ : BayesNet
        Over the features and the class (the class states are the indices of ``classes_``).
    class_name_ : str
        The class node's name in ``network_``.
    """

    _options = RECIPE_OPTIONS
    _min_features = 1  # the class is the second column

    def __init__(
        self,
        structure="tan",
        *,
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def fit(self, X, y):
        """Learn the network over the features of ``X`` and the class ``y``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class of every row (no missing value).

        Returns
        -------
        self
        """
        from ..data.table import from_frame
        from ..learning.recipe import Recipe, learn_recipe

        self._check_options()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        frame = self._frame(X, reset=True)
        y = column_or_1d(y, warn=True)
        check_consistent_length(frame, y)
        check_classification_targets(y)
        if pd.isna(y).any():
            raise ValueError("Input y contains NaN; every training row needs its class.")
        self.classes_, y_codes = np.unique(y, return_inverse=True)
        recipe = Recipe(
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
        names = {str(c).strip() for c in frame.columns}
        name = CLASS_NAME
        while name in names:
            name = "_" + name
        self.class_name_ = name
        self._columns = [str(c) for c in frame.columns]
        table = frame.assign(**{name: pd.Categorical(y_codes, categories=range(len(self.classes_)))})
        data = from_frame(
            table, class_column=name, discretize_bins=self.discretize_bins, max_levels=self.max_levels
        )
        self.network_ = learn_recipe(data, recipe, with_class=True).model
        self.recipe_ = recipe
        return self

    def predict_proba(self, X):
        """P(class | x_observed) of every row, columns in the order of ``classes_``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
        """
        from ..inference.queries import posterior

        check_is_fitted(self)
        net = self.network_
        data = self._table(X, _WithoutClass(net, self.class_name_))
        c = net.variables.index(self.class_name_)
        codes = np.full((data.n_rows, net.n_vars), -1, dtype=np.int32)
        for j, v in enumerate(data.variables):
            codes[:, net.variables.index(v)] = data.codes[:, j]
        rows, probs = posterior(net, codes)[c]
        out = np.empty((data.n_rows, len(self.classes_)))
        out[rows] = probs
        return out

    def predict(self, X):
        """The most probable class of every row.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class _WithoutClass:
    """The feature variables and states of a classifier's network (what ``X`` is read in)."""

    def __init__(self, net, class_name: str):
        keep = [i for i, v in enumerate(net.variables) if v != class_name]
        self.variables = tuple(net.variables[i] for i in keep)
        self.states = tuple(net.states[i] for i in keep)
        self.fit_info = {}
