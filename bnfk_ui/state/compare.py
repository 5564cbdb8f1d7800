"""The Compare page's state: structure B (edited beside the current network A) and the cached comparison.

Each network's outcome (its CPTs, kernel, clustering, imputation run and prototypes on the sampled rows) is
kept on its own for the whole server, keyed by its structure, the recipe, the kernel and the sample: when only
B changes, A's and the empty network's outcomes -- and A's row order and kernel-PCA map -- are taken from the
store and only B is computed; and while the page is looked at, the outcomes of the one-click presets are
computed in the background
(:func:`prefetch`), so that a lecture's step only draws."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import numpy as np
import streamlit as st

from bnfk_core.analyses.segments.compare import (
    ComparisonRows,
    NetworkOutcome,
    StructureComparison,
    combine,
    comparison_rows,
    network_outcome,
)
from bnfk_core.data.table import CategoricalData
from bnfk_core.kernels.embed import class_order, cluster_order, kernel_pca
from bnfk_core.kernels.fisher import FISHER
from bnfk_core.learning.recipe import Recipe
from bnfk_core.network.dag import DAG

from .bigfiles import streamed
from .structure import dag, dag_json, recipe
from .tables import data, feature_data
from .truth import truth_dag

__all__ = ["compare_b", "default_b", "set_compare_b", "comparison", "a_view", "prefetch"]


def compare_b() -> DAG:
    """Structure B: the one last set on the Compare page for these features, else one that differs from A:
    the last learned network when A is another one (a preset or an edit), the empty network when A is the
    learned one (a comparison of A with itself would show nothing)."""
    stored = st.session_state.get("compare_b")
    feat = feature_data()
    if stored and stored[0] == feat.fingerprint():
        return DAG.from_dict(stored[1])
    learned = (st.session_state.get("structure") or {}).get("learned")
    return default_b(dag(), learned, feat.variables, truth_dag())


def default_b(a: DAG, learned: dict | None, variables, truth: DAG | None = None) -> DAG:
    """The B a comparison opens on: the true network of rows sampled from a textbook network (``truth``)
    when it is not ``a`` (the lecture compares what it built with the truth); else ``learned`` (a DAG's
    dict) when it is over ``variables`` and is not ``a``; else the empty network over ``variables``."""
    if truth is not None and set(truth.nodes) == set(variables) and truth != a:
        return truth
    if learned:
        lg = DAG.from_dict(learned)
        if set(lg.nodes) == set(variables) and lg != a:
            return lg
    return DAG(variables)


def set_compare_b(d: DAG) -> None:
    st.session_state.compare_b = (feature_data().fingerprint(), d.to_dict())


@st.cache_resource(show_spinner=False, max_entries=8)
def _rows(_data: CategoricalData, fingerprint: str, rows: int, seed: int) -> ComparisonRows:
    return comparison_rows(_data, rows, seed)


#: every network's outcome computed on this server, shared by the sessions (least recently used dropped
#: first):
#: (data fingerprint, structure, recipe, kernel, alpha, rows, seed) -> NetworkOutcome, or an Event while
#: computed
MAX_OUTCOMES = 48
_OUTCOMES: OrderedDict = OrderedDict()
_LOCK = threading.Lock()
#: the Compare page computes the presets' outcomes ahead of the click on tables up to this many rows
PREFETCH_MAX_ROWS = 20_000
#: prefetch threads at once on the server (each session has at most one: :func:`prefetch`)
MAX_PREFETCHES = 2
_PREFETCHES = threading.BoundedSemaphore(MAX_PREFETCHES)


def _outcome(
    _data: CategoricalData,
    fingerprint: str,
    dag_key: str,
    recipe_key: tuple,
    kernel: str,
    alpha,
    rows: int,
    seed: int,
    sample: ComparisonRows | None = None,
) -> NetworkOutcome:
    """One network's outcome, computed once per key for the whole server (a second caller of a key being
    computed waits for it instead of computing it again)."""
    key = (fingerprint, dag_key, recipe_key, kernel, alpha, rows, seed)
    while True:
        with _LOCK:
            hit = _OUTCOMES.get(key)
            if hit is None:
                _OUTCOMES[key] = threading.Event()
                break
            _OUTCOMES.move_to_end(key)
        if isinstance(hit, NetworkOutcome):
            return hit
        hit.wait(timeout=600)
    try:
        out = network_outcome(
            DAG.from_dict(json.loads(dag_key)),
            sample or comparison_rows(_data, rows, seed),
            recipe=Recipe(**dict(recipe_key)),
            kernel=kernel,
            alpha=alpha,
            seed=seed,
        )
    except BaseException:
        with _LOCK:
            _OUTCOMES.pop(key).set()
        raise
    with _LOCK:
        pending = _OUTCOMES.get(key)
        _OUTCOMES[key] = out
        while len(_OUTCOMES) > MAX_OUTCOMES:
            old_key, old = _OUTCOMES.popitem(last=False)
            if not isinstance(old, NetworkOutcome):  # still being computed: keep it
                _OUTCOMES[old_key] = old
                break
    if isinstance(pending, threading.Event):
        pending.set()
    return out


def prefetch(structures, rows: int, seed: int, kernel: str = FISHER, alpha=None) -> None:
    """Compute the outcomes of ``structures`` (the presets B is likely set to next) in a background thread, so
    that the click finds them ready; only on tables up to :data:`PREFETCH_MAX_ROWS` rows held in memory.

    One prefetch per session at a time (a rerun while it works starts none) and at most
    :data:`MAX_PREFETCHES` on the server: quick changes of the options never pile up threads, and a skipped
    prefetch only means the click computes its outcome itself."""
    d, fp, rk, kernel, alpha, rows, seed = _key(rows, seed, kernel, alpha)
    if d.n_rows > PREFETCH_MAX_ROWS or streamed() is not None:
        return
    running = st.session_state.get("_cmp_prefetch")
    if running is not None and running.is_alive():
        return
    keys = [dag_json(g) for g in structures]
    with _LOCK:
        keys = [k for k in keys if (fp, k, rk, kernel, alpha, rows, seed) not in _OUTCOMES]
    if not keys:
        return

    if not _PREFETCHES.acquire(blocking=False):
        return

    def work():
        try:
            sample = comparison_rows(d, rows, seed)
            for k in keys:
                _outcome(d, fp, k, rk, kernel, alpha, rows, seed, sample)
        except Exception:  # noqa: BLE001 - the click computes it again and shows the error
            return
        finally:
            _PREFETCHES.release()

    thread = threading.Thread(target=work, name="bnfk-compare-prefetch", daemon=True)
    st.session_state["_cmp_prefetch"] = thread
    thread.start()


def _key(rows: int, seed: int, kernel: str, alpha) -> tuple:
    d = data()
    return (
        d,
        d.fingerprint(),
        tuple(sorted(recipe().to_dict().items())),
        kernel,
        None if alpha is None else float(alpha),
        int(rows),
        int(seed),
    )


def comparison(a: DAG, b: DAG, rows: int, seed: int, kernel: str = FISHER, alpha=None) -> StructureComparison:
    """:func:`~bnfk_core.analyses.segments.compare.compare_structures` of the current data by the app's
    recipe, each network's outcome cached on its own (module docstring)."""
    d, fp, rk, kernel, alpha, rows, seed = _key(rows, seed, kernel, alpha)
    sample = _rows(d, fp, rows, seed)
    outs = [
        _outcome(d, fp, dag_json(g), rk, kernel, alpha, rows, seed, sample)
        for g in (a, b, DAG(feature_data().variables))
    ]
    return combine(sample, *outs, recipe().params, kernel=kernel, alpha=alpha)


@st.cache_resource(show_spinner=False, max_entries=16)
def _a_view(
    _a: NetworkOutcome,
    _labels,
    fingerprint: str,
    dag_key: str,
    recipe_key: tuple,
    kernel: str,
    alpha,
    rows: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    order = class_order(_labels, _a.K) if _labels is not None else cluster_order(_a.K)
    return order, kernel_pca(_a.K, 2)


def a_view(cmp: StructureComparison, labels, rows: int, seed: int, kernel: str = FISHER, alpha=None):
    """A's row order for the heatmaps (by class, else by A's clusters) and A's kernel-PCA plane, cached with
    A."""
    _, fp, rk, kernel, alpha, rows, seed = _key(rows, seed, kernel, alpha)
    return _a_view(cmp.a, labels, fp, dag_json(cmp.a.dag), rk, kernel, alpha, rows, seed)
