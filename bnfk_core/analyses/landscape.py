"""A score landscape and its metagraph-kernel surrogate, as the CLI and the app show them.

:func:`graph_space` chooses the graphs and their bit encoding:

``fixed order``  the 2^d graphs, d = C(k, 2), whose arcs respect the variables' order (the paper's
                 hypercube Q_d: every bit string is a DAG);
``all DAGs``     every DAG on the k variables as k(k − 1) directed-arc bits (bit u(k−1) + v − [v > u] is
                 the arc u -> v); the DAGs are a subset of that cube (the paper's ALARM set-up, §4.2,
                 which drops the node order), the kernel is the same function of the Hamming distance.

:func:`surrogate_study` observes ``observe`` graphs drawn with ``seed``, fits the order-r surrogate for
every order and reports the RMSE over the unobserved graphs (and of the mean of the observed scores, the
paper's baseline).  The Walsh energy is always that of the fixed-order cube (the score as a polynomial
of the arc bits, in the variables' order).
"""

from __future__ import annotations

import numpy as np

from ..learning.landscape import Landscape
from ..learning.metagraph import (
    DEFAULT_C,
    MetagraphError,
    fit_orders,
    observed_split,
    paper_regulariser,
    predict_orders,
    rmse,
    walsh_energy,
)

__all__ = [
    "graph_space",
    "surrogate_study",
    "landscape_summary",
    "ENCODINGS",
    "MAX_OBSERVED",
    "default_observed",
]

#: the surrogate solves an n x n system per order: at most this many observed graphs (~1 s a fit on one core)
MAX_OBSERVED = 1500

ENCODINGS = {
    True: "fixed order: one bit per node pair i < j (arc i -> j in the variables' order); all 2^C(k,2) bit "
    "strings are DAGs (the hypercube Q_d)",
    False: "all DAGs: one bit per ordered pair u != v (arc u -> v), d = k(k-1); the DAGs are a subset of the "
    "hypercube Q_d and the kernel is the same function of the Hamming distance",
}


def graph_space(land: Landscape, fixed_order: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(graph indices into the landscape, bits (n, d) uint8)`` of the chosen graph space."""
    if fixed_order:
        return land.fixed_order()
    return np.arange(land.n_dags), land.arc_bits()


def default_observed(n: int) -> int:
    """Half of a space of ``n`` graphs, at most 500 (a fraction of a second for four orders)."""
    return max(1, min(n // 2, 500, n - 1))


def surrogate_study(
    land: Landscape,
    *,
    fixed_order: bool = True,
    observe: int | None = None,
    orders=(1, 2, 3),
    seed: int = 0,
    c: float = DEFAULT_C,
) -> dict:
    """Fit the order-r surrogate on ``observe`` graphs of the space and predict the others.

    Returns ``graphs`` (landscape indices), ``observed`` / ``unobserved`` (positions in ``graphs``),
    ``exact`` (scores), ``predicted`` (order -> scores of the unobserved graphs), ``rmse`` (order -> RMSE),
    ``baseline_rmse`` (predicting the observed mean), ``d`` (bits), ``walsh_energy`` (degree -> energy of
    the fixed-order cube, degree 0 = the squared mean) and ``encoding``."""
    graphs, bits = graph_space(land, fixed_order)
    n, d = bits.shape
    if d == 0:
        raise MetagraphError("A landscape on one variable has no arcs: choose two or more variables.")
    y = land.values[graphs]
    if observe is None:
        observe = default_observed(n)
    top = min(n - 1, MAX_OBSERVED)
    if not 1 <= int(observe) <= top:
        raise MetagraphError(f"Observe between 1 and {top:,} graphs (the space holds {n:,}), got {observe}.")
    obs, rest = observed_split(n, int(observe), seed)
    orders = sorted({int(r) for r in orders if 1 <= int(r) <= d}) or [1]
    fits = fit_orders(bits[obs], y[obs], orders, c)
    predicted = dict(zip(orders, predict_orders(fits, bits[rest])))
    errors = {r: rmse(p, y[rest]) for r, p in predicted.items()}
    fo_graphs, _ = land.fixed_order()
    energy = walsh_energy(land.values[fo_graphs])
    return {
        "graphs": graphs,
        "bits": bits,
        "observed": obs,
        "unobserved": rest,
        "exact": y,
        "predicted": predicted,
        "rmse": errors,
        "baseline_rmse": rmse(np.full(rest.size, y[obs].mean()), y[rest]),
        "d": d,
        "c": float(c),
        "c_paper": {r: paper_regulariser(c, d, r) for r in orders},
        "walsh_energy": energy,
        "fixed_order": bool(fixed_order),
        "encoding": ENCODINGS[bool(fixed_order)],
    }


def _graph(land: Landscape, g: int, ranks: np.ndarray) -> dict:
    return {
        "arcs": [list(a) for a in land.arcs(g)],
        "score": float(land.values[g]),
        "rank": int(ranks[g]),
        "class": int(land.class_id[g]),
        "class_size": int((land.class_id == land.class_id[g]).sum()),
    }


def landscape_summary(
    land: Landscape, study: dict, path: dict | None = None, top: int = 10, learned: dict | None = None
) -> dict:
    """The JSON of ``python -m bnfk_core landscape`` (see ``docs/LANDSCAPE.md``); ``learned`` maps a label to
    the index of a graph placed among the others (e.g. a learned network)."""
    ranks = land.ranks()
    order = land.ranking()
    energy = study["walsh_energy"]
    var = float(energy[1:].sum())
    out = {
        "variables": list(land.variables),
        "score": land.score,
        "rows_used": land.n_rows_used,
        "dags": land.n_dags,
        "classes": land.n_classes,
        "best": _graph(land, int(order[0]), ranks),
        "top": [_graph(land, int(g), ranks) for g in order[:top]],
        "best_by_score": {s: float(v.max()) for s, v in land.scores.items()},
        "encoding": study["encoding"],
        "fixed_order": study["fixed_order"],
        "bits": study["d"],
        "graphs_in_space": int(study["graphs"].size),
        "observed": int(study["observed"].size),
        "regulariser_c": study["c"],
        "regulariser_c_paper": {str(r): v for r, v in study["c_paper"].items()},
        "rmse": {str(r): v for r, v in study["rmse"].items()},
        "baseline_rmse": study["baseline_rmse"],
        "walsh_energy": {str(s): (float(e) / var if var > 0 else 0.0) for s, e in enumerate(energy) if s > 0},
        "walsh_energy_note": "fraction of the score's variance over the fixed-order cube (variables' order) "
        "carried by the Walsh functions of each degree; zero above the largest in-degree",
        "seconds": land.seconds,
    }
    if path is not None:
        out["hill_climb"] = {
            "moves": [list(m) for m in path["moves"]],
            "ranks": [int(ranks[g]) for g in path["graphs"]],
            "scores": [float(land.values[g]) for g in path["graphs"]],
            "end": _graph(land, int(path["graphs"][-1]), ranks),
        }
    for name, g in (learned or {}).items():
        out[name] = _graph(land, int(g), ranks)
    return out
