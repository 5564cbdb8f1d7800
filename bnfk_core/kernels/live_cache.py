"""A small cache of live kernels for an app that edits one arc at a time (:func:`live_kernel`).

The kernel itself, and why an arc edit costs so little, are in :mod:`bnfk_core.kernels.live`.
"""

from __future__ import annotations

from collections import OrderedDict

from ..network.dag import DAG
from .live import LiveKernel, rows_key

__all__ = ["live_kernel", "clear_live_cache"]


# ---------------------------------------------------------------------- a small cache for the app
_LIVE: OrderedDict[tuple, LiveKernel] = OrderedDict()


def live_kernel(
    dag: DAG,
    data,
    params: str = "smoothed",
    pseudo_count: float = 1.0,
    *,
    cache_size: int = 1,
    max_edits: int = 8,
) -> LiveKernel:
    """A :class:`LiveKernel` for (data, params) moved to ``dag``: kept between calls (at most
    ``cache_size`` data sets, one N × N matrix each), so a page that edits one arc at a time pays only
    the incremental update.  More than ``max_edits`` differences recompute from scratch.

    Parameters
    ----------
    dag : DAG
    data : CategoricalData
    params, pseudo_count : the CPT estimator (:func:`~bnfk_core.network.model.fit`)
    cache_size, max_edits : int

    Returns
    -------
    LiveKernel
    """
    feats = data if tuple(data.variables) == tuple(dag.nodes) else data.select(list(dag.nodes))
    key = (rows_key(feats), params, float(pseudo_count))
    lk = _LIVE.get(key)
    if lk is None:
        lk = LiveKernel(dag, feats, params, pseudo_count)
        _LIVE[key] = lk
    else:
        _LIVE.move_to_end(key)
        if lk.dag != dag:
            lk.goto(dag, max_edits=max_edits)
    while len(_LIVE) > max(int(cache_size), 0):
        _LIVE.popitem(last=False)
    return lk


def clear_live_cache() -> None:
    """Drop every cached live kernel."""
    _LIVE.clear()
