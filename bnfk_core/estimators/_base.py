"""What every estimator of :mod:`bnfk_core.estimators` shares: input validation at the boundary, the table
behind ``X`` (a DataFrame, an array of strings or numbers, missing cells as ``NaN`` / ``None``), the recipe of
the network and the seed.

``X`` is validated once, by scikit-learn's own ``validate_data`` (no complex, sparse or empty input; the
number and names of the features are remembered at ``fit`` and checked afterwards), then read as a categorical
table by
:func:`bnfk_core.data.table.from_frame` -- the path a CSV file takes: every column is nominal, numbers with
more than ``max_levels`` distinct values are cut into ``discretize_bins`` quantile bins, a pandas categorical
keeps its category order.  After ``fit`` the rows are read in the fitted network's states; a value the network
has no state for is a missing cell (``handle_unknown="missing"``, the marginalised treatment of the paper's
conclusion) or an error (``"error"``).
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from ..data.binning import MISSING_CATEGORY, parse_interval
from ..data.table import as_data, cell_texts, from_frame
from ..errors import DataError
from ..learning.members import LEARNING_OPTIONS
from ..network.members import PSEUDO_COUNT
from ..registry import Interval, Option, check_options

__all__ = ["TableInput", "seed_of", "HANDLE_UNKNOWN", "RECIPE_OPTIONS", "READ_OPTIONS", "check_params"]

HANDLE_UNKNOWN = ("missing", "error")
#: the seeds numpy's generators take
_SEED = Interval(int, 0, 2**32 - 1)

#: the recipe hyper-parameters of an estimator that learns a network, as the learners and CPT estimators
#: declare them (the names of methods are checked by their registries, through the recipe)
RECIPE_OPTIONS = (
    LEARNING_OPTIONS["max_parents"],
    LEARNING_OPTIONS["k"],
    PSEUDO_COUNT,
    LEARNING_OPTIONS["forbid"],
    LEARNING_OPTIONS["require"],
)
#: how every estimator reads its table, and what it does with a value the network has no state for
READ_OPTIONS = (
    Option("discretize_bins", Interval(int, 1, 10_000), 4, "quantile bins of a many-valued number column"),
    Option("max_levels", Interval(int, 1, None), 50, "the most distinct numbers a column keeps as states"),
    Option("handle_unknown", HANDLE_UNKNOWN, "missing", "an unknown value after fit", none=False),
)


def check_params(estimator, declared) -> None:
    """The hyper-parameters of ``estimator`` named by ``declared`` (:class:`~bnfk_core.registry.Option` s)
    checked against them, and its ``random_state`` (None, a ``RandomState`` or a seed from 0 to 2**32 - 1):
    a ValueError in one sentence naming the parameter, the estimator and what is allowed.

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator whose attributes are checked (in ``fit``, as scikit-learn's ``_validate_params``).
    declared : sequence of Option
        The hyper-parameters it declares.
    """
    name = type(estimator).__name__
    check_options(declared, {o.name: getattr(estimator, o.name) for o in declared}, name, ValueError)
    rs = getattr(estimator, "random_state", None)
    if isinstance(rs, bool) or (isinstance(rs, numbers.Integral | float | str) and rs not in _SEED):
        raise ValueError(
            f"The {name} option 'random_state' must be None, a numpy RandomState or {_SEED.describe()}, "
            f"not {rs!r}."
        )


def seed_of(random_state) -> int:
    """The integer seed the core takes: an int as given (so ``random_state=s`` is the core's ``seed=s``), else
    one draw from ``check_random_state(random_state)`` (None: numpy's global generator, as scikit-learn does).

    Parameters
    ----------
    random_state : None, int or numpy.random.RandomState

    Returns
    -------
    int
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class TableInput:
    """Mixin: ``_fit_table(X)`` / ``_table(X)`` turn ``X`` into a
    :class:`~bnfk_core.data.table.CategoricalData`."""

    _min_features = 2

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------ validation
    def _frame(self, X, *, reset: bool) -> pd.DataFrame:
        """``X`` validated (scikit-learn's checks; features remembered at fit) and as a DataFrame."""
        if isinstance(X, pd.DataFrame):  # read column by column (pandas' own missing values, categoricals)
            validate_data(self, X, reset=reset, skip_check_array=True)
            if not reset and not hasattr(self, "feature_names_in_") and X.shape[1] == len(self._columns):
                X = X.set_axis(self._columns, axis=1)  # fitted on an array: columns by position
            least = 2 if reset else 1  # a network is learned from two rows or more
            if X.shape[0] < least:
                raise ValueError(
                    f"Found a DataFrame with {X.shape[0]} sample(s) (shape={X.shape}) while a minimum "
                    f"of {least} is required."
                )
            if reset and X.shape[1] < self._min_features:
                raise ValueError(
                    f"Found a DataFrame with {X.shape[1]} feature(s) (shape={X.shape}) while a "
                    f"minimum of {self._min_features} is required."
                )
            return X
        checked = validate_data(
            self,
            X,
            reset=reset,
            dtype=None,
            ensure_all_finite="allow-nan",
            ensure_min_features=self._min_features if reset else 1,
            ensure_min_samples=2 if reset else 1,
        )
        if not reset and getattr(self, "_columns", None) is not None:
            names = self._columns
        else:
            names = [f"x{j}" for j in range(checked.shape[1])]
        return pd.DataFrame(checked, columns=names)

    #: the hyper-parameters ``fit`` checks (:func:`check_params`) besides the table's
    _options: tuple = ()

    def _check_options(self):
        check_params(self, READ_OPTIONS + self._options)

    def _fit_table(self, X, **options):
        """The training table of ``X`` (the network is not known yet: states come from the data)."""
        frame = self._frame(X, reset=True)
        self._columns = [str(c) for c in frame.columns]
        return from_frame(frame, discretize_bins=self.discretize_bins, max_levels=self.max_levels, **options)

    def _table(self, X, model):
        """The rows of ``X`` in ``model``'s variables and states (after ``fit``)."""
        frame = self._frame(X, reset=False)
        if self.handle_unknown == "missing":
            frame = unknown_as_missing(frame, model)
        return as_data(frame, model=model)


def unknown_as_missing(frame: pd.DataFrame, model) -> pd.DataFrame:
    """``frame`` as cell texts with every value that is no state of ``model`` blanked (a missing cell).

    Columns of interval states (discretized numbers) are left as they are: every number falls into one of
    their bins (:func:`bnfk_core.data.binning.column_states`).

    Parameters
    ----------
    frame : pandas.DataFrame
    model : BayesNet

    Returns
    -------
    pandas.DataFrame
        Only the columns that are variables of ``model``.

    Raises
    ------
    DataError
        When no column is a variable of ``model``.
    """
    states = dict(zip((str(v) for v in model.variables), model.states))
    out = {}
    for c in frame.columns:
        name = str(c).strip()
        st = states.get(name)
        if st is None:
            continue
        real = [s for s in st if s != MISSING_CATEGORY]
        if real and all(parse_interval(s) is not None for s in real):
            out[c] = frame[c]
            continue
        texts = np.array([t.strip() for t in cell_texts(frame[c])], dtype=object)
        known = np.isin(texts, np.array(list(st), dtype=object))
        texts[~known] = ""
        out[c] = texts
    if not out:
        raise DataError("None of the columns is a variable of the fitted network.")
    return pd.DataFrame(out, index=frame.index)
