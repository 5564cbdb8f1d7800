"""The exact optimum: Silander & Myllymäki (2006), A simple approach for finding the globally optimal Bayesian
network structure -- dynamic programming over parent sets and sinks, with a penalty bound that prunes parent
sets.  Registered as the ``exact`` learner by :mod:`bnfk_core.learning.structure`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import StructureError
from .members import EXACT_MAX_VARIABLES
from .scores import LocalScorer, log_multinomial_normalizer

__all__ = ["EXACT_MAX_VARIABLES", "EXACT_MAX_CANDIDATES", "penalty_bounds", "exact_search", "learn_exact"]

#: Without a pruning bound (K2, BDeu) the exact search refuses to score more parent sets than this.
EXACT_MAX_CANDIDATES = 2_000_000


def _popcounts(bits: int) -> np.ndarray:
    pc = np.zeros(1, dtype=np.int8)
    for _ in range(bits):
        pc = np.concatenate([pc, pc + 1])
    return pc


def penalty_bounds(scorer: LocalScorer, child: int, others: Sequence[int]) -> np.ndarray | None:
    """For BIC / AIC / qNML, the penalty of every parent mask over ``others`` (score ≤ −penalty); a scorer
    with its own ``penalty_array`` (KGV) gives it."""
    if hasattr(scorer, "penalty_array"):
        return scorer.penalty_array(child, others)
    if scorer.score not in ("bic", "aic", "qnml"):
        return None
    logq = np.zeros(1)
    for o in others:
        logq = np.concatenate([logq, logq + math.log(scorer.cards[o])])
    r = scorer.cards[child]
    q = np.exp(logq)
    if scorer.score == "bic":
        return 0.5 * math.log(max(scorer.n, 1)) * q * (r - 1)
    if scorer.score == "aic":
        return q * (r - 1)
    qr = np.round(q)
    uniq, inv = np.unique(qr, return_inverse=True)
    vals = np.array(
        [
            log_multinomial_normalizer(scorer.n, int(u) * r if u * r <= 2**62 else u * r)
            - log_multinomial_normalizer(scorer.n, int(u) if u <= 2**62 else u)
            for u in uniq
        ]
    )
    return vals[inv.ravel()]


def exact_search(
    scorer: LocalScorer,
    *,
    max_parents: int | None = None,
    progress: Callable[[float, str], None] | None = None,
    prune: bool = True,
    forbid: Sequence[tuple[int, int]] = (),
    require: Sequence[tuple[int, int]] = (),
) -> tuple[list[tuple[int, ...]], dict]:
    """Globally optimal DAG by dynamic programming (Silander & Myllymäki 2006).

    1. For every variable v and every candidate set C ⊆ V∖{v}: the best parent set within C,
       bps(v, C) = max(s(v, C), max_{u∈C} bps(v, C∖{u})), layer by layer over |C|, as numpy
       arrays indexed by bitmask.  Parent sets larger than ``max_parents`` are never scored; for
       BIC/AIC/qNML (and KGV) a set is not scored either when its penalty alone is worse than the best subset
       (the penalty grows with the set, so this prunes all its supersets too).
    2. Best sinks: score(W) = max_{s∈W} score(W∖{s}) + bps(s, W∖{s}), layer by layer over |W|.
    3. Reconstruct the DAG by peeling off sinks from V.

    Parameters
    ----------
    scorer : LocalScorer
        The decomposable local score ``scorer(i, parents)``.
    max_parents : int, optional
        In-degree bound.
    progress : callable, optional
        ``progress(fraction, message)``.
    prune : bool
        ``False`` switches the penalty bound off (for checking it).
    forbid, require : sequence of (int, int)
        Forbidden and required arcs (parent, child), checked by
        :func:`~bnfk_core.learning.knowledge.check_knowledge` (the required arcs acyclic): a parent set of v
        is a candidate only when it holds every required parent of v and no forbidden one, so the optimum is
        the best DAG that honours them (the penalty bound stays valid: it compares a set with its best
        candidate subset).

    Returns
    -------
    parents : list of tuple of int
        The parent indices of every column of the optimum.
    stats : dict
        ``scored`` parent sets, ``pruned``, ``optimum``.

    References
    ----------
    Silander & Myllymäki (2006), "A simple approach for finding the globally optimal Bayesian network
    structure", UAI; the thesis's structure search (§3.2, with qNML).
    """
    n = scorer.n_vars
    if n > EXACT_MAX_VARIABLES:
        raise StructureError(
            f"Exact search handles at most {EXACT_MAX_VARIABLES} variables; the data has {n}. "
            "Use 'hc' or drop columns."
        )
    maxp = n - 1 if max_parents is None else min(int(max_parents), n - 1)
    m = n - 1
    pc_m = _popcounts(m)
    layers_m = [np.flatnonzero(pc_m == k) for k in range(m + 1)]
    if not prune or (scorer.score not in ("bic", "aic", "qnml") and not hasattr(scorer, "penalty_array")):
        cand = n * sum(len(layers_m[k]) for k in range(maxp + 1))
        if cand > EXACT_MAX_CANDIDATES:
            raise StructureError(
                f"Exact search with the {scorer.score} score would score {cand:,} parent sets; "
                "set max_parents (e.g. 2 or 3) or use fewer variables."
            )
    bps, arg = [], []
    scored = pruned = 0
    for v in range(n):
        others = [u for u in range(n) if u != v]
        pen = penalty_bounds(scorer, v, others) if prune else None
        need = sum(1 << others.index(u) for u, c in require if c == v)
        banned = sum(1 << others.index(u) for u, c in forbid if c == v)
        best = np.full(1 << m, -np.inf)
        barg = np.zeros(1 << m, dtype=np.int64)
        if need == 0:
            best[0] = scorer(v, ())
            scored += 1
        for k in range(1, m + 1):
            masks = layers_m[k]
            sub_best = np.full(masks.size, -np.inf)
            sub_arg = np.zeros(masks.size, dtype=np.int64)
            for b in range(m):
                has = (masks >> b) & 1 == 1
                sub = masks[has] ^ (1 << b)
                cand = best[sub]
                upd = cand > sub_best[has]
                idx = np.flatnonzero(has)[upd]
                sub_best[idx] = cand[upd]
                sub_arg[idx] = barg[sub[upd]]
            if k <= maxp:
                todo = np.ones(masks.size, dtype=bool) if pen is None else (-pen[masks] > sub_best)
                pruned += int(masks.size - todo.sum())
                if need or banned:  # the candidates: every required parent of v, no forbidden one
                    todo &= ((masks & need) == need) & ((masks & banned) == 0)
                for t in np.flatnonzero(todo):
                    mask = int(masks[t])
                    ps = [others[b] for b in range(m) if mask >> b & 1]
                    s = scorer(v, ps)
                    scored += 1
                    if s > sub_best[t]:
                        sub_best[t] = s
                        sub_arg[t] = mask
            best[masks] = sub_best
            barg[masks] = sub_arg
        bps.append(best)
        arg.append(barg)
        if progress is not None:
            progress(0.9 * (v + 1) / n, f"exact search: parent sets of variable {v + 1} of {n}")
    # best sinks over all subsets W of V
    full = (1 << n) - 1
    pc_n = _popcounts(n)
    total = np.full(1 << n, -np.inf)
    sink = np.zeros(1 << n, dtype=np.int8)
    total[0] = 0.0
    for k in range(1, n + 1):
        ws = np.flatnonzero(pc_n == k)
        cur = np.full(ws.size, -np.inf)
        cur_s = np.zeros(ws.size, dtype=np.int8)
        for s in range(n):
            has = (ws >> s) & 1 == 1
            rest = ws[has] ^ (1 << s)
            comp = (rest & ((1 << s) - 1)) | ((rest >> (s + 1)) << s)
            cand = total[rest] + bps[s][comp]
            upd = cand > cur[has]
            idx = np.flatnonzero(has)[upd]
            cur[idx] = cand[upd]
            cur_s[idx] = s
        total[ws] = cur
        sink[ws] = cur_s
    if progress is not None:
        progress(0.98, "exact search: reconstructing the optimal DAG")
    parents: list[tuple[int, ...]] = [()] * n
    w = full
    while w:
        s = int(sink[w])
        rest = w ^ (1 << s)
        comp = (rest & ((1 << s) - 1)) | ((rest >> (s + 1)) << s)
        pm = int(arg[s][comp])
        others = [u for u in range(n) if u != s]
        parents[s] = tuple(sorted(others[b] for b in range(m) if pm >> b & 1))
        w = rest
    return parents, {"scored": scored, "pruned": pruned, "optimum": float(total[full])}


# ---------------------------------------------------------------------- as a learner (LearnerSpec.learn)
def learn_exact(scorer: LocalScorer, task) -> list[tuple[int, ...]]:
    """``exact``: the optimal DAG (at most :data:`EXACT_MAX_VARIABLES` variables), among those that honour
    ``task.forbid`` and ``task.require`` when given."""
    parents, stats = exact_search(
        scorer,
        max_parents=task.max_parents,
        progress=task.progress,
        forbid=task.forbid or (),
        require=task.require or (),
    )
    task.notes.append(
        f"exact search scored {stats['scored']:,} parent sets "
        f"({stats['pruned']:,} pruned by the score bound)"
        + (f", at most {task.max_parents} parents" if task.max_parents is not None else "")
        + (", the optimum within the given arc constraints" if task.forbid or task.require else "")
    )
    return parents
