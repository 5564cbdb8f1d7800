"""The JSON-ready facts of a fitted latent class model (the CLI's entry for one K, the app's tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .fibers import identifiability

__all__ = ["summary", "criteria_table", "posterior_table"]


def summary(model, data=None) -> dict:
    """classes, loglik, bic, aic, parameters, rows, starts, starts_at_best (among runs_completed: the starts
    run to convergence), iterations (E-steps of the best start), converged, seed,
    class_weights, class_sizes (modal classes on ``data``, else weights x rows), identifiable (+ the
    :func:`~bnfk_core.lca.fibers.identifiability` record) and the profiles.

    Parameters
    ----------
    model : LatentClassModel
    data : CategoricalData, optional

    Returns
    -------
    dict
    """
    m = model
    ident = identifiability(m)
    return {
        "classes": m.n_classes,
        "loglik": float(m.loglik),
        "bic": m.bic,
        "aic": m.aic,
        "parameters": m.parameters,
        "rows": int(m.n_rows) if float(m.n_rows).is_integer() else float(m.n_rows),
        "starts": m.starts,
        "starts_at_best": m.starts_at_best,
        "runs_completed": m.runs_completed,
        "iterations": m.iterations,
        "converged": m.converged,
        "seed": m.seed,
        "class_weights": [float(x) for x in m.weights],
        "class_sizes": m.class_sizes(data),
        "identifiable": ident["identifiable"],
        "identifiability": ident,
        "profiles": {
            v: {str(t + 1): dict(zip(m.states[i], map(float, m.profiles[i][t]))) for t in range(m.n_classes)}
            for i, v in enumerate(m.variables)
        },
    }


def criteria_table(models) -> pd.DataFrame:
    """The fitted models side by side, one row each, to choose the number of classes by.

    Parameters
    ----------
    models : sequence of LatentClassModel

    Returns
    -------
    pandas.DataFrame
        Columns ``classes``, ``log-likelihood``, ``parameters``, ``BIC``, ``AIC`` and ``starts at best``
        (``"s/S"``: s of the S EM starts reached the best log-likelihood).
    """
    return pd.DataFrame(
        [
            {
                "classes": m.n_classes,
                "log-likelihood": m.loglik,
                "parameters": m.parameters,
                "BIC": m.bic,
                "AIC": m.aic,
                "starts at best": f"{m.starts_at_best}/{m.starts}",
            }
            for m in models
        ]
    )


def posterior_table(post: np.ndarray) -> pd.DataFrame:
    """Every row's class probabilities with its modal class.

    Parameters
    ----------
    post : ndarray, shape (N, K)
        P(class | row), as :meth:`LatentClassModel.posterior` gives.

    Returns
    -------
    pandas.DataFrame
        Columns ``row`` (data row numbers from 0, as every page and download), ``modal class`` (from 1) and
        ``P(class 1)`` .. ``P(class K)``.
    """
    table = pd.DataFrame(post, columns=[f"P(class {t + 1})" for t in range(post.shape[1])])
    table.insert(0, "modal class", post.argmax(axis=1) + 1)
    table.insert(0, "row", np.arange(len(table)))
    return table
