"""Supervised arc search over the network behind the Fisher kernel (thesis §6.2, Tables 6.1/6.4).

:func:`arc_search` starts from the empty network (whose Fisher kernel with ``ml`` parameters *is* the
scaled-Hamming kernel) and adds greedily the arc whose network gives the highest adjusted Rand index of a
seeded clustering of the Fisher Gram matrix.  Adding u → v changes v's term (new CPT and parents) and, through
the parent marginals P(π_w), only the terms of variables with a parent at or below v -- from the
empty network that is v alone.  The search holds a :class:`bnfk_core.kernels.live.LiveKernel`: every
candidate's Gram matrix is ``LiveKernel.preview`` (a copy of K plus the changed terms, added pair
by pair in place), the chosen arc is ``LiveKernel.apply``.  (:func:`variable_term`,
:func:`affected_terms`, :func:`add_arc_gram` compute the same update densely, from one variable's
term matrices.)  With ``ml`` parameters Markov-equivalent networks give the same Gram matrix
(likelihood equivalence), so one candidate per equivalence class is clustered.
:func:`arc_search_tables` lays a result out as the Segments lab and the report show it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...data.limits import memory_limit
from ...data.stats import mutual_information
from ...errors import KernelError
from ...inference.queries import marginal
from ...kernels.features import feature_offsets, features
from ...kernels.live import LiveKernel
from ...kernels.members import FISHER
from ...network.dag import DAG, cpdag
from ...network.model import BayesNet, cpt_counts, estimate_cpt
from ...registry import ESTIMATORS
from ..cluster.clustering import cluster, default_n_clusters
from .members import MAX_CANDIDATES
from .tables import SegmentError

__all__ = [
    "MAX_CANDIDATES",
    "variable_term",
    "affected_terms",
    "add_arc_gram",
    "candidate_arcs",
    "adjusted_rand",
    "ArcStep",
    "ArcSearchResult",
    "arc_search",
    "arc_search_tables",
]

Progress = Callable[[float, str], None]


# ====================================================================== per-variable Gram terms
def variable_term(model, codes: np.ndarray, i: int) -> np.ndarray:
    """K_i(x, y) of Theorem 1 for all pairs of rows (N × N), i.e. variable i's term of the Fisher Gram:

        K_i(x, y) = [π_i(x) = π_i(y)] / P(π_i(x)) · ( [x_i = y_i] / θ_{i,π_i(x),x_i} − 1 ),

    with P(π_i) the model's exact parent marginal.  Rows whose family of i has a missing cell get the
    marginalized kernel through the explicit feature block (slower, exact).

    Parameters
    ----------
    model : BayesNet
    codes : ndarray of int, shape (N, n)
    i : int

    Returns
    -------
    ndarray, shape (N, N)

    References
    ----------
    Paper, Theorem 1.
    """
    codes = np.asarray(codes)
    p = model.parent_config(i, codes)
    x = codes[:, i].astype(np.int64)
    if (p < 0).any() or (x < 0).any():
        off = feature_offsets(model)
        B = features(model, codes)[:, off[i] : off[i + 1]]
        return (B @ B.T).toarray()
    ps = list(model.parents[i])
    P = np.ones(1) if not ps else np.asarray(marginal(model, ps), dtype=float).reshape(-1)
    th = model.cpts[i][p, x]
    Pp = P[p]
    bad = np.flatnonzero(~((th > 0) & (Pp > 0)))
    if bad.size:
        raise KernelError(
            f"Variable '{model.variables[i]}' has probability zero for a value or parent "
            "configuration that a row takes; fit the parameters with a pseudo-count."
        )
    r = model.cpts[i].shape[1]
    f = p * r + x
    same_p = p[:, None] == p[None, :]
    K = np.where(same_p, -1.0 / Pp[:, None], 0.0)
    K += np.where(f[:, None] == f[None, :], (1.0 / (Pp * th))[:, None], 0.0)
    return K


def _with_arc(model, feats_codes, u: str, v: str, params: str, pseudo_count: float):
    """``model`` with u -> v added; only v's CPT is re-estimated (the others do not change)."""
    dag = model.dag.add_arc(u, v)
    iv = dag.index(v)
    cpts = list(model.cpts)
    cpts[iv] = estimate_cpt(cpt_counts(dag, feats_codes, model.cardinalities, iv), params, pseudo_count)
    return BayesNet(dag, model.states, tuple(cpts), dict(model.fit_info))


def affected_terms(dag: DAG, v: str) -> list[int]:
    """Indices of the variables whose Fisher term can change when an arc into ``v`` is added: v itself
    (new CPT and parent set) and every variable with a parent at or below v (its parent marginal
    P(π_w) is a marginal of the network above it).  Adding an arc does not change v's descendants.

    Parameters
    ----------
    dag : DAG
    v : str

    Returns
    -------
    list of int
    """
    iv = dag.index(v)
    below = {iv}
    children = [[] for _ in dag.nodes]
    for k, ps in enumerate(dag.parent_indices()):
        for p in ps:
            children[p].append(k)
    stack = [iv]
    while stack:
        for c in children[stack.pop()]:
            if c not in below:
                below.add(c)
                stack.append(c)
    return sorted({iv} | {k for k, ps in enumerate(dag.parent_indices()) if below & set(ps)})


def add_arc_gram(
    model,
    codes: np.ndarray,
    K: np.ndarray,
    u: str,
    v: str,
    *,
    params: str = "ml",
    pseudo_count: float = 1.0,
    K_old: np.ndarray | None = None,
):
    """The model with u -> v added and its Fisher Gram matrix by the cached update

        K_new = K − Σ_{w ∈ A} K_w(old) + Σ_{w ∈ A} K_w(new),   A = :func:`affected_terms` (usually {v}).

    ``K_old`` is Σ_{w ∈ A} K_w(old) if already known (it depends on v only).  Exact for complete data;
    with missing cells every block's expected features may change, so use a full
    :func:`~bnfk_core.kernels.fisher.gram` there.

    Returns (new model, new Gram matrix).

    Parameters
    ----------
    model : BayesNet
    codes : ndarray of int, shape (N, n)
    K : ndarray, shape (N, N)
        ``model``'s Fisher Gram matrix.
    u, v : str
    params : str
    pseudo_count : float
    K_old : ndarray, shape (N, N), optional

    Returns
    -------
    model : BayesNet
    K : ndarray, shape (N, N)

    References
    ----------
    Paper, Theorem 1 (K = sum of per-variable terms).
    """
    aff = affected_terms(model.dag, v)
    new = _with_arc(model, codes, u, v, params, pseudo_count)
    if K_old is None:
        K_old = sum(variable_term(model, codes, w) for w in aff)
    return new, K - K_old + sum(variable_term(new, codes, w) for w in aff)


def candidate_arcs(dag: DAG) -> list[tuple[str, str]]:
    """Arcs u -> v that can be added to ``dag`` (u, v not adjacent, no cycle), in node order.

    Parameters
    ----------
    dag : DAG

    Returns
    -------
    list of (u, v)
    """
    out = []
    for u, v in itertools.permutations(dag.nodes, 2):
        if dag.has_arc(u, v) or dag.has_arc(v, u):
            continue
        if dag.index(v) in dag.ancestors([dag.index(u)]):
            continue  # v is an ancestor of u: u -> v closes a cycle
        out.append((u, v))
    order = {n: k for k, n in enumerate(dag.nodes)}
    return sorted(out, key=lambda a: (order[a[0]], order[a[1]]))


# ====================================================================== supervised arc search
def adjusted_rand(labels_true, labels_pred) -> float:
    """Adjusted Rand index, bit-identical to ``clustering_metrics(...)["ari"]`` (scikit-learn's
    ``adjusted_rand_score`` on the rows with a non-negative label: the same integer pair counts and the
    same final division) without its input validation, which dominated the arc search's scoring.

    Parameters
    ----------
    labels_true, labels_pred : array-like of int

    Returns
    -------
    float
    """
    t = np.asarray(labels_true)
    p = np.asarray(labels_pred)
    if t.dtype.kind in "iu":
        keep = t >= 0
        t, p = t[keep], p[keep]
    _, ti = np.unique(t, return_inverse=True)
    _, pi = np.unique(p, return_inverse=True)
    ti, pi = ti.ravel().astype(np.int64), pi.ravel().astype(np.int64)
    kp = int(pi.max()) + 1 if pi.size else 1
    C = np.bincount(ti * kp + pi, minlength=(int(ti.max()) + 1 if ti.size else 1) * kp).reshape(-1, kp)
    n = np.int64(len(ti))
    n_c, n_k = C.sum(axis=1), C.sum(axis=0)
    ss = (C[C > 0] ** 2).sum()
    fp = int((C @ n_k).sum() - ss)
    fn = int((C.T @ n_c).sum() - ss)
    tp = int(ss - n)
    tn = int(n * n - fp - fn - ss)
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


@dataclass
class ArcStep:
    arc: tuple
    ari: float
    n_candidates: int
    n_evaluated: int  # clusterings run (one per equivalence class with ml parameters)
    seconds: float
    candidates: list = field(default_factory=list)  # (u, v, ari) for every candidate, in search order


@dataclass
class ArcSearchResult:
    base_ari: float
    steps: list
    dag: DAG
    base_dag: DAG
    label_column: str
    algorithm: str
    kernel: str
    params: str
    n_clusters: int
    restarts: int
    seed: int
    cached: bool
    seconds: float
    notes: list = field(default_factory=list)

    def to_dict(self, candidates: bool = False) -> dict:
        """The result as JSON-ready values.

        Parameters
        ----------
        candidates : bool
            Also every step's candidates with their ARI.

        Returns
        -------
        dict
        """
        steps = []
        for s in self.steps:
            d = {
                "arc": list(s.arc),
                "ari": s.ari,
                "n_candidates": s.n_candidates,
                "n_evaluated": s.n_evaluated,
                "seconds": s.seconds,
            }
            if candidates:
                d["candidates"] = [{"arc": [u, v], "ari": a} for u, v, a in s.candidates]
            steps.append(d)
        return {
            "base_ari": self.base_ari,
            "steps": steps,
            "arcs": [list(a) for a in self.dag.sorted_arcs()],
            "label_column": self.label_column,
            "algorithm": self.algorithm,
            "kernel": self.kernel,
            "params": self.params,
            "n_clusters": self.n_clusters,
            "restarts": self.restarts,
            "seed": self.seed,
            "cached": self.cached,
            "seconds": self.seconds,
            "notes": list(self.notes),
        }


def arc_search(
    data,
    *,
    label_column: str | None = None,
    n_arcs: int = 2,
    algorithm: str = "correlation",
    kernel: str = FISHER,
    n_clusters: int | None = None,
    restarts: int = 25,
    seed: int = 0,
    params: str = "ml",
    pseudo_count: float = 1.0,
    base: DAG | None = None,
    transform: str = "shift-min",
    dedupe: bool = True,
    max_candidates: int | None = MAX_CANDIDATES,
    progress: Progress | None = None,
) -> ArcSearchResult:
    """Supervised greedy arc search (thesis §6.2): add, ``n_arcs`` times, the arc whose network's Fisher
    kernel gives the clustering with the highest adjusted Rand index against the label.

    Parameters
    ----------
    data : CategoricalData with the label column (``label_column`` or ``data.class_column``); the label
        is never a feature.
    n_arcs : arcs to add (each step adds the best candidate even if the ARI drops, as the thesis).
    algorithm : "correlation" (thesis; shift as the thesis: none for the Fisher kernel) or "spectral".
    kernel : only "fisher" (the search is over the network behind it).
    n_clusters : default the number of labels.
    restarts, seed : of the correlation clustering (same seed for every candidate).
    label_column : the label (default ``data.class_column``).
    params : CPT estimator; ``ml`` (default) makes the empty network's kernel exactly scaled-Hamming and
        Markov-equivalent networks give the same Gram matrix.
    base : starting DAG over the feature columns (default: empty).
    pseudo_count : of the ``smoothed`` and ``bdeu`` estimators.
    transform : how spectral clustering turns the Gram matrix into an affinity (one of ``TRANSFORMS``).
    dedupe : with ``ml`` and complete data, cluster once per equivalence class of the candidate network.
    max_candidates : at most this many candidate arcs are clustered per step (None: all).  Wide data have
        d (d − 1) candidates, each a clustering of an N × N matrix; beyond the bound the candidates whose
        variables have the highest empirical mutual information I(u; v) are kept (ties in node order)
        and a note says how many were scored.  The default leaves every thesis dataset's search whole.
    progress : optional ``progress(fraction, message)``.

    Ties between candidates keep the first in node order.

    Returns
    -------
    ArcSearchResult
    """
    t0 = time.perf_counter()
    if kernel != FISHER:
        raise SegmentError(
            f"The arc search changes the network behind the Fisher kernel; kernel '{kernel}' "
            "has no network (use 'fisher')."
        )
    if algorithm not in ("correlation", "spectral"):
        raise SegmentError(f"Unknown clustering algorithm '{algorithm}'; choose correlation or spectral.")
    if params not in ESTIMATORS:
        raise SegmentError(f"Unknown parameter method '{params}'; choose one of {', '.join(ESTIMATORS)}.")
    if int(n_arcs) < 0:
        raise SegmentError(f"The number of arcs must be at least 0, got {n_arcs}.")
    if label_column is not None:
        data = data.with_class(label_column)
    if data.class_column is None:
        raise SegmentError("The arc search is supervised: give the label column.")
    feats = data.without_class()
    if feats.n_vars < 2:
        raise SegmentError(f"{data.source} needs at least two feature columns for an arc.")
    y = data.labels()
    k = int(n_clusters) if n_clusters is not None else default_n_clusters(data)
    N = feats.n_rows
    need = 3 * N * N * 8
    if memory_limit() is not None and need > memory_limit():
        raise KernelError(
            f"The arc search keeps about three {N:,} x {N:,} matrices ({need / 2**30:.1f} GiB); "
            "sample fewer rows."
        )
    complete = not feats.has_missing
    dedupe = bool(dedupe and complete and params == "ml")
    dag = base if base is not None else DAG(feats.variables)
    if set(dag.nodes) != set(feats.variables):
        raise SegmentError("The base structure's variables differ from the feature columns.")
    feats = feats.select(list(dag.nodes))
    lk = LiveKernel(dag, feats, params, pseudo_count)
    notes = []
    if not complete:
        notes.append(
            "The data have missing cells: rows with a missing cell get the marginalized kernel, whose "
            "expected features depend on the whole network, so their part of every term is recomputed "
            "for each candidate (the complete rows' terms are updated term by term)."
        )

    def score(Km) -> float:
        res = cluster(Km, k, algorithm, kernel=FISHER, transform=transform, restarts=restarts, seed=seed)
        return adjusted_rand(y, res.labels)

    base_ari = score(lk.gram())
    base_dag = dag
    steps = []
    total = max(int(n_arcs), 1)
    work = np.empty((N, N))
    pair_mi: dict = {}
    for step in range(int(n_arcs)):
        ts = time.perf_counter()
        dag = lk.dag
        cands = candidate_arcs(dag)
        if not cands:
            notes.append(f"No arc can be added after {step} step(s).")
            break
        if max_candidates is not None and len(cands) > int(max_candidates):
            n_all = len(cands)
            cands = _top_mi_candidates(cands, feats, int(max_candidates), pair_mi)
            notes.append(
                f"Step {step + 1}: {len(cands):,} of {n_all:,} candidate arcs clustered (those whose "
                "variables have the highest mutual information; max_candidates)."
            )
        results, seen, n_eval = [], {}, 0
        heads = {}
        for u, v in cands:
            heads.setdefault(v, []).append(u)
        done = 0
        for v in dag.nodes:
            if v not in heads:
                continue
            for u in heads[v]:
                key = cpdag(dag.add_arc(u, v)) if dedupe else None
                if key is not None and key in seen:
                    ari = seen[key]
                else:
                    ari = score(lk.preview("add", u, v, out=work))
                    n_eval += 1
                    if key is not None:
                        seen[key] = ari
                results.append((u, v, ari))
                done += 1
                if progress is not None:
                    progress(
                        (step + done / len(cands)) / total,
                        f"arc {step + 1}/{n_arcs}: {u} -> {v} ARI {ari:.3f}",
                    )
        order = {a: n for n, a in enumerate(cands)}
        results.sort(key=lambda t: order[(t[0], t[1])])
        best = max(results, key=lambda t: (t[2], -order[(t[0], t[1])]))
        u, v = best[0], best[1]
        lk.apply("add", u, v)
        steps.append(ArcStep((u, v), best[2], len(cands), n_eval, time.perf_counter() - ts, results))
    dag = lk.dag
    if progress is not None:
        progress(1.0, "arc search done")
    return ArcSearchResult(
        base_ari,
        steps,
        dag,
        base_dag,
        data.class_column,
        algorithm,
        kernel,
        params,
        k,
        int(restarts),
        int(seed),
        complete,
        time.perf_counter() - t0,
        notes,
    )


def _top_mi_candidates(cands, feats, m: int, cache: dict) -> list:
    """The ``m`` candidate arcs with the highest I(u; v) (computed once per pair into ``cache``), in the
    candidates' own order."""
    for u, v in cands:
        key = frozenset((u, v))
        if key not in cache:
            cache[key] = mutual_information(feats.codes[:, feats.index(u)], feats.codes[:, feats.index(v)])
    rank = sorted(range(len(cands)), key=lambda t: (-cache[frozenset(cands[t])], t))[:m]
    return [cands[t] for t in sorted(rank)]


def arc_search_tables(result: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The steps of an :meth:`ArcSearchResult.to_dict` (with candidates) -- step 0 the empty network, then one
    row per added arc with its ARI, candidates, clusterings run and seconds -- and every candidate of the
    last step with its ARI, best first.

    Parameters
    ----------
    result : dict

    Returns
    -------
    steps, candidates : pandas.DataFrame
    """
    steps = pd.DataFrame(
        [{"step": 0, "arc": "(empty network)", "ARI": result["base_ari"]}]
        + [
            {
                "step": i + 1,
                "arc": f"{s['arc'][0]} → {s['arc'][1]}",
                "ARI": s["ari"],
                "candidates": s["n_candidates"],
                "clustered": s["n_evaluated"],
                "seconds": s["seconds"],
            }
            for i, s in enumerate(result["steps"])
        ]
    )
    last = result["steps"][-1]["candidates"] if result["steps"] else []
    cands = pd.DataFrame(
        [{"arc": f"{c['arc'][0]} → {c['arc'][1]}", "ARI": c["ari"]} for c in last], columns=["arc", "ARI"]
    ).sort_values("ARI", ascending=False)
    return steps, cands
