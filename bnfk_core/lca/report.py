"""The JSON-ready facts of a fitted latent class model (the CLI's entry for one K, the app's tables)."""

from __future__ import annotations

from .fibers import identifiability

__all__ = ["summary"]


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
