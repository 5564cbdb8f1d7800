"""Learning a Bayesian network from a table with missing cells: every row counts.

Three ways to treat missing cells in structure learning (:data:`bnfk_core.registry.MISSING_DATA`, ``--missing-data``):
``complete-rows`` -- the rows without a missing cell only (the thesis's protocol); ``available-case`` -- every
family counted on the rows where all of its variables are observed (:mod:`.available_case`); ``em`` -- structural
EM (Friedman 1998, "The Bayesian structural EM algorithm", the BIC form): start from the available-case network;
E-step: the expected counts E[N_ijk | x_obs, theta] of every candidate family under the current network, exact --
every incomplete row completed in all ways weighted by its joint posterior (:func:`expected_table`), or, for a row
with very many completions, its family posterior (:class:`ExpectedScorer`); M-step: search the structure on those
expected counts, fit its CPTs by EM; keep the new network only when the observed-data score rises
(:func:`observed_score`), repeat until it stops rising.  Each E-step is one pass over the distinct rows in blocks
on a runner (:mod:`bnfk_core.data.runners`: here or on Dask workers); the blocks' results add up, so the counts
do not depend on how the rows were cut (to rounding, 1e-12).

Parameters (every method): EM over the missing cells (:func:`em_parameters`, Dempster, Laird & Rubin 1977):
theta <- estimator(expected family counts under theta), from the available-case fit, until no CPT entry moves by
more than ``tol``; the network's own families' expected counts come from :func:`expected_family_counts`.  With
``params="ml"`` this climbs the observed-data likelihood; with a pseudo-count the posterior (MAP).  Weighted
tables (distinct rows with multiplicities, :mod:`bnfk_core.data.stream`) count every row ``weights[n]`` times.
"""
from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np

from ..errors import ModelError
from ..inference.queries import family_posteriors, joint_posteriors, log_evidence, missingness_patterns
from .structure import LearnResult, learn_structure
from ..network.model import BayesNet, estimate_cpt, fit
from ..registry import ESTIMATORS, MISSING_DATA, SCORES
from .members import DEFAULT_MISSING_DATA
from ..data.counts import counts_from_columns
from .scores import LocalScorer
from .available_case import AvailableCaseScorer
from ..data.counts import merge_rows

__all__ = ["DEFAULT_MISSING_DATA", "OBSERVED_SCORE", "AvailableCaseScorer", "ExpectedScorer", "expected_table", "expected_family_counts",
           "family_counts_part", "table_part", "loglik_part", "em_parameters", "observed_score", "structural_em",
           "learn_network", "check_missing_data", "merge_rows", "MAX_COMPLETIONS", "EM_BLOCK_ROWS"]

#: the name under which structural EM reports its score (:func:`observed_score`), never that of the searched score
OBSERVED_SCORE = "observed-data bic"
#: an incomplete row is completed in all ways in the E-step table when its missing cells have at most this many
#: joint states; a row with more ("wide") is counted per family from its exact joint posterior
#: (:class:`ExpectedScorer`).  Nothing is sampled.  (A completion costs one table row per family count the search
#: asks for; a wide row one blanket contraction per subset of its missing cells the search touches: on the
#: letter-like benchmark the two break even near a few thousand completions.)
MAX_COMPLETIONS = 4096
#: the CPTs' EM enumerates a row's completions up to this many (a few gathers each); beyond, the row's family
#: posteriors come from the batched junction tree
EM_MAX_COMPLETIONS = 65536
#: distinct rows per block of an E-step pass (the items a runner maps; memory of one block's completions)
EM_BLOCK_ROWS = 20_000

Progress = Callable[[float, str], None]


def _blocks(codes: np.ndarray, weights, rows: int | None = None) -> list:
    """The distinct rows (codes, weights) in blocks of at most ``rows`` rows (:data:`EM_BLOCK_ROWS`): the items of
    a streamed E-step pass (:meth:`bnfk_core.data.runners.Runner.map`)."""
    step = int(EM_BLOCK_ROWS if rows is None else rows)
    w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    return [(codes[a:a + step], w[a:a + step]) for a in range(0, codes.shape[0], max(step, 1))]


def _run(runner, fn, items: list, args: tuple):
    """``fn(item, *args)`` of every item, on ``runner`` (here when None), in order."""
    if runner is None:
        return [fn(item, *args) for item in items]
    return list(runner.map(fn, items, args))


def _touching(model: BayesNet, missing) -> list:
    """The families with a member in ``missing`` (the only factors of P(x_M | x_obs) that vary with x_M)."""
    miss = {int(m) for m in missing}
    return [f for f in range(model.n_vars) if f in miss or miss.intersection(model.parents[f])]


def _completion_batches(codes: np.ndarray, rows: np.ndarray, missing, cards: list):
    """Every completion of ``rows`` (which share the missing set ``missing``), in sub-batches of at most about
    ``_ENUM_CELLS`` completed rows: yields ``(row indices, completions (len * K, n), K)``."""
    K = math.prod(cards[m] for m in missing)
    grid = np.stack(np.unravel_index(np.arange(K), [cards[m] for m in missing]), axis=1).astype(np.int32)
    step = max(1, _ENUM_CELLS // K)
    for a in range(0, len(rows), step):
        sub = rows[a:a + step]
        table = np.repeat(codes[sub].astype(np.int32), K, axis=0)
        table[:, missing] = np.tile(grid, (len(sub), 1))
        yield sub, table, K


def _enumerated(model: BayesNet, codes: np.ndarray, rows: np.ndarray, missing, cards: list):
    """Every completion of ``rows`` (which share the missing set) with P(x_M | x_obs), in sub-batches:
    yields ``(row indices, completions (len * K, n), posterior (len, K))``.  The posterior is the product of
    the CPT entries of the families touching M, normalised over the row's K completions: exact."""
    touch = _touching(model, missing)
    for sub, table, K in _completion_batches(codes, rows, missing, cards):
        ll = _log_joint_touching(model, table, touch).reshape(len(sub), K)
        top = ll.max(axis=1)
        if not np.isfinite(top).all():
            raise ModelError("A row has observed values that the model gives probability zero; fit the "
                             "parameters with a pseudo-count (method 'smoothed').")
        p = np.exp(ll - top[:, None])
        p /= p.sum(axis=1, keepdims=True)
        yield sub, table, p


class _Prepared:
    """One block of weighted rows made ready for the CPTs' EM under a fixed DAG: the counts of the families a row
    observes whole (constant), and for every enumerable missingness pattern its completions as flat CPT indices of
    the families touching it (constant too).  An iteration under new CPTs is then gathers, a normalisation per row
    and bincounts (:meth:`counts`); the wide rows go through the junction tree each time."""

    def __init__(self, block, model: BayesNet, cap: int):
        codes, w = block
        codes = np.asarray(codes)
        cards = [int(c) for c in model.cardinalities]
        self.sizes = [c.size for c in model.cpts]
        self.shapes = [c.shape for c in model.cpts]
        miss = codes < 0
        self.const = []
        for i in range(model.n_vars):
            fam = list(model.parents[i]) + [i]
            seen = ~miss[:, fam].any(axis=1)
            idx = model.parent_config(i, codes[seen]) * cards[i] + codes[seen, i]
            self.const.append(np.bincount(idx.astype(np.int64), weights=w[seen], minlength=self.sizes[i]).astype(float))
        self.groups, wide = [], []
        for rows, missing in missingness_patterns(codes):
            if math.prod(cards[m] for m in missing) > cap:
                wide.append(rows)
                continue
            touch = _touching(model, missing)
            K = math.prod(cards[m] for m in missing)
            grid = np.stack(np.unravel_index(np.arange(K), [cards[m] for m in missing]), axis=1).astype(np.int32)
            step = max(1, _ENUM_CELLS // K)
            for a in range(0, len(rows), step):
                sub = rows[a:a + step]
                table = np.repeat(codes[sub].astype(np.int32), K, axis=0)
                table[:, missing] = np.tile(grid, (len(sub), 1))
                idx = [(model.parent_config(i, table) * cards[i] + table[:, i]).astype(np.int32) for i in touch]
                self.groups.append((len(sub), K, w[sub], touch, idx))
        rows = np.sort(np.concatenate(wide)) if wide else np.zeros(0, dtype=np.int64)
        self.wide_codes, self.wide_w = codes[rows], w[rows]

    def counts(self, model: BayesNet) -> list:
        flat = [c.copy() for c in self.const]
        logs = [None] * model.n_vars
        with np.errstate(divide="ignore"):
            for n, K, w, touch, idx in self.groups:
                ll = np.zeros(n * K)
                for i, ix in zip(touch, idx):
                    if logs[i] is None:
                        logs[i] = np.log(model.cpts[i].ravel())
                    ll += logs[i][ix]
                ll = ll.reshape(n, K)
                top = ll.max(axis=1)
                if not np.isfinite(top).all():
                    raise ModelError("A row has observed values that the model gives probability zero; fit the "
                                     "parameters with a pseudo-count (method 'smoothed').")
                p = np.exp(ll - top[:, None])
                p /= p.sum(axis=1, keepdims=True)
                mass = (w[:, None] * p).ravel()
                for i, ix in zip(touch, idx):
                    flat[i] += np.bincount(ix, weights=mass, minlength=self.sizes[i])
        if len(self.wide_codes):
            for i, (r, F) in family_posteriors(model, self.wide_codes).items():
                flat[i] += self.wide_w[r] @ F
        return [f.reshape(s) for f, s in zip(flat, self.shapes)]


def family_counts_part(block, model: BayesNet, cap: int | None = None) -> list:
    """E[N_ijk | x_obs, model] of every family of ``model`` over one block of weighted rows, each shaped like its
    CPT.  A family observed in a row is counted; a row with a missing family member adds its posterior: by
    enumerating its completions when its missing cells have at most ``cap`` (:data:`EM_MAX_COMPLETIONS`) joint
    states (their probabilities the product of the CPT entries of the families touching the missing cells,
    normalised per row), else from the batched junction tree's clique beliefs
    (:func:`bnfk_core.inference.queries.family_posteriors`: a family lies in one clique, so a row's calibrated
    tree gives the posterior of every family at once).  Exact: no completion is sampled."""
    return _Prepared(block, model, EM_MAX_COMPLETIONS if cap is None else cap).counts(model)


#: completion cells (completions x touching families) the CPTs' EM keeps between iterations when it runs here
EM_KEEP_CELLS = 40_000_000


def expected_family_counts(model: BayesNet, codes: np.ndarray, weights=None, *, runner=None,
                           block_rows: int | None = None, max_completions: int | None = None) -> list:
    """E[N_ijk | x_obs, model] of every family of ``model`` (one array per variable, shaped like its CPT), summed
    over blocks of the weighted rows on ``runner`` (:func:`family_counts_part`; one pass)."""
    parts = _run(runner, family_counts_part, _blocks(np.asarray(codes), weights, block_rows),
                 (model, max_completions))
    total = [np.zeros(c.shape) for c in model.cpts]
    for part in parts:
        for i, c in enumerate(part):
            total[i] += c
    return total


def _log_joint_touching(model: BayesNet, block: np.ndarray, families: Sequence[int]) -> np.ndarray:
    """sum_i log P(x_i | pa_i) over ``families`` for every (complete) row of ``block``."""
    ll = np.zeros(block.shape[0])
    with np.errstate(divide="ignore"):
        for i in families:
            ll += np.log(model.cpts[i][model.parent_config(i, block), block[:, i]])
    return ll


#: completions (rows x joint states) built at once while enumerating one missingness pattern
_ENUM_CELLS = 400_000


def table_part(block, model: BayesNet, cap: int) -> tuple:
    """One block of a structural-EM E-step: ``(table, weights, wide codes, wide weights)``.

    Complete rows are their own completion; a row whose missing cells have at most ``cap`` joint states is
    replaced by every completion x_M, weighted w_n P(x_M | x_obs,n) -- the product of the CPT entries of the
    families touching M (the others cancel), normalised over the row's completions: exact.  Equal completed rows
    are merged (:func:`merge_rows`).  Rows with more joint states ("wide" rows) are returned as they are: the
    search counts them per family from their exact joint posterior (:class:`ExpectedScorer`)."""
    codes, w = block
    codes = np.asarray(codes)
    cards = [int(c) for c in model.cardinalities]
    complete = ~(codes < 0).any(axis=1)
    tables, weights, wide = [codes[complete].astype(np.int32)], [w[complete]], []
    for rows, missing in missingness_patterns(codes):
        if math.prod(cards[m] for m in missing) > cap:
            wide.append(rows)
            continue
        for sub, table, p in _enumerated(model, codes, rows, missing, cards):
            tables.append(table)
            weights.append((w[sub][:, None] * p).ravel())
    table, weight = merge_rows(np.concatenate(tables), np.concatenate(weights), cards)
    keep = weight > 0
    wide = np.sort(np.concatenate(wide)) if wide else np.zeros(0, dtype=np.int64)
    return table[keep], weight[keep], codes[wide], w[wide]


def expected_table(model: BayesNet, codes: np.ndarray, weights=None, *, max_completions: int | None = None,
                   runner=None, block_rows: int | None = None) -> tuple:
    """The structural-EM E-step: ``(table, weights, wide codes, wide weights)`` (:func:`table_part` on blocks of
    the weighted rows on ``runner``, merged).  ``max_completions`` (default :data:`MAX_COMPLETIONS`) is the
    ``cap``; ``max_completions=math.inf`` enumerates every row (no wide rows: small tables only)."""
    cap = MAX_COMPLETIONS if max_completions is None else max_completions
    parts = _run(runner, table_part, _blocks(np.asarray(codes), weights, block_rows), (model, cap))
    cards = [int(c) for c in model.cardinalities]
    table, weight = merge_rows(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), cards)
    wide_codes = np.concatenate([p[2] for p in parts]) if parts else np.zeros((0, len(cards)), dtype=np.int32)
    wide_w = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0)
    return table, weight, wide_codes, wide_w


class ExpectedScorer(LocalScorer):
    """Local scores on expected counts E[N_ijk | x_obs, model]: the enumerated table of :func:`expected_table`
    plus, per family asked for, the wide rows' exact share.

    A wide row n with missing set M adds w_n P(x_S = s | x_obs,n) to every family configuration whose missing
    members S = family ∩ M take the values s (its observed members are fixed).  P(x_S | x_obs) comes from one
    contraction over the Markov blanket of M per missingness pattern
    (:func:`bnfk_core.inference.queries.joint_posteriors`), computed once per search for each S and kept.  (A
    calibrated junction tree gives the same numbers, but on wide networks its cliques hold tens of thousands of
    cells per row, where the blanket contraction of a few rows is far cheaper.)
    """

    def __init__(self, table, weights, cards, score: str, model: BayesNet, wide_codes=None, wide_weights=None,
                 ess: float = 1.0):
        super().__init__(table, cards, score, ess=ess, weights=np.asarray(weights, dtype=float))
        self.model = model
        self.wide = np.zeros((0, len(cards)), dtype=np.int32) if wide_codes is None else np.asarray(wide_codes)
        self.wide_w = np.zeros(0) if wide_weights is None else np.asarray(wide_weights, dtype=float)
        total = float(np.asarray(weights, dtype=float).sum()) + float(self.wide_w.sum())
        self.n = self.n_rows_total = int(round(total))
        self.miss = self.wide < 0
        self._joint: dict = {}
        self._patterns = list(missingness_patterns(self.wide)) if len(self.wide) else []

    def _posterior(self, S: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(wide rows with S missing, P(x_S | x_obs) flat in C order over sorted S)."""
        got = self._joint.get(S)
        if got is None:
            rows = np.flatnonzero(self.miss[:, list(S)].all(axis=1))
            P = np.zeros((len(rows), math.prod(self.cards[v] for v in S)))
            for prow, missing in self._patterns:
                if set(S) <= set(missing.tolist()):
                    P[np.searchsorted(rows, prow)] = joint_posteriors(self.model, self.wide, prow, missing, list(S))
            got = self._joint[S] = (rows, P)
        return got

    def counts(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        ps = sorted(int(p) for p in parents)
        fam = [int(child)] + ps
        cols = [self.cols[v] for v in fam]
        w = [self.weights]
        if len(self.wide):
            miss = self.miss[:, fam]
            key = miss @ (1 << np.arange(len(fam)))
            for k in np.unique(key):
                rows = np.flatnonzero(key == k)
                S = tuple(sorted(fam[j] for j in range(len(fam)) if (int(k) >> j) & 1))
                block = self.wide[rows][:, fam].astype(np.int64)
                if not S:
                    weight = self.wide_w[rows]
                else:
                    have, P = self._posterior(S)
                    P = P[np.searchsorted(have, rows)]
                    K = P.shape[1]
                    grid = np.stack(np.unravel_index(np.arange(K), [self.cards[v] for v in S]), axis=1)
                    block = np.repeat(block, K, axis=0)
                    for j, v in enumerate(S):
                        block[:, fam.index(v)] = np.tile(grid[:, j], len(rows))
                    weight = (self.wide_w[rows][:, None] * P).ravel()
                for j in range(len(fam)):
                    cols[j] = np.concatenate([cols[j], block[:, j].astype(cols[j].dtype)])
                w.append(weight)
        weights = np.concatenate(w)
        return counts_from_columns(cols[0], self.cards[fam[0]], cols[1:], [self.cards[p] for p in ps],
                                   int(cols[0].shape[0]), weights)


def _weights(data):
    return getattr(data, "weights", None)


def _bare(model: BayesNet) -> BayesNet:
    """The model without its caches (what a runner sends to its workers)."""
    return BayesNet(model.dag, tuple(model.states), tuple(model.cpts), dict(model.fit_info))


def em_parameters(dag, data, method: str = "bdeu", pseudo_count: float = 1.0, *, max_iter: int = 100,
                  tol: float = 1e-4, init: BayesNet | None = None, seed: int = 0, runner=None) -> BayesNet:
    """CPTs of ``dag`` by EM over the missing cells of ``data`` (module docstring).

    Starts from ``init`` or the available-case fit (:func:`bnfk_core.network.model.fit`); each iteration is
    theta <- estimator(E[N_ijk | x_obs, theta]), the expected counts exact (:func:`expected_family_counts`:
    the complete rows counted once, the incomplete ones by the batched junction tree, one pass over them on
    ``runner`` per iteration), until the largest change of a CPT entry is below ``tol`` or after ``max_iter``
    iterations.  A table without missing cells gets the plain fit.  ``fit_info`` records ``em_iterations``.
    ``seed`` is accepted for compatibility; nothing is random.
    """
    model = init if init is not None else fit(dag, data, method=method, pseudo_count=pseudo_count)
    if tuple(data.variables) != tuple(dag.nodes):
        data = data.select(list(dag.nodes))
    codes = np.asarray(data.codes)
    incomplete = (codes < 0).any(axis=1)
    if not incomplete.any():
        model.fit_info["em_iterations"] = 0
        return model
    w = _weights(data)
    w = np.ones(codes.shape[0]) if w is None else np.asarray(w, dtype=float)
    base = family_counts_part((codes[~incomplete], w[~incomplete]), model)
    inc_codes, inc_w = codes[incomplete], w[incomplete]
    kept = None
    if runner is None:  # here: the completions' CPT indices are kept between iterations (the DAG does not change)
        cards = [int(c) for c in model.cardinalities]
        cells = sum(len(rows) * min(math.prod(cards[m] for m in missing), EM_MAX_COMPLETIONS) * (len(missing) + 2)
                    for rows, missing in missingness_patterns(inc_codes))
        if cells <= EM_KEEP_CELLS:
            kept = [_Prepared(b, model, EM_MAX_COMPLETIONS) for b in _blocks(inc_codes, inc_w)]
    it = 0
    for it in range(1, int(max_iter) + 1):
        if kept is not None:
            parts = [k.counts(model) for k in kept]
            counts = [sum(p[i] for p in parts) for i in range(model.n_vars)]
        else:
            counts = expected_family_counts(_bare(model), inc_codes, inc_w, runner=runner)
        cpts = tuple(estimate_cpt(b + c, method, pseudo_count) for b, c in zip(base, counts))
        delta = max(float(np.abs(a - b).max()) for a, b in zip(cpts, model.cpts))
        info = dict(model.fit_info, method=method, pseudo_count=pseudo_count, em_iterations=it)
        model = BayesNet(dag, tuple(data.states), cpts, info)
        if delta < tol:
            break
    return model


def loglik_part(block, model: BayesNet) -> float:
    """sum_n w_n log P(x_obs,n) over one block of weighted rows: complete rows by their CPT entries, a row with at
    most :data:`EM_MAX_COMPLETIONS` joint completions by log-sum-exp over them (every family's CPT entry), a wider
    one marginalised by the junction tree (:func:`bnfk_core.inference.queries.log_evidence`).  All exact."""
    codes, w = block
    codes = np.asarray(codes)
    cards = [int(c) for c in model.cardinalities]
    complete = ~(codes < 0).any(axis=1)
    ll = np.zeros(codes.shape[0])
    if complete.any():
        ll[complete] = model.complete_log_likelihood(codes[complete])
    wide = []
    every = list(range(model.n_vars))
    for rows, missing in missingness_patterns(codes):
        K = math.prod(cards[m] for m in missing)
        if K > EM_MAX_COMPLETIONS:
            wide.append(rows)
            continue
        for sub, table, K in _completion_batches(codes, rows, missing, cards):
            lj = _log_joint_touching(model, table, every).reshape(len(sub), K)
            top = lj.max(axis=1)
            with np.errstate(invalid="ignore"):
                ll[sub] = top + np.log(np.exp(lj - top[:, None]).sum(axis=1))
    if wide:
        rows = np.concatenate(wide)
        ll[rows] = log_evidence(model, codes[rows])
    return float(ll @ w)


def observed_score(model: BayesNet, data, *, runner=None) -> float:
    """The observed-data BIC: sum_n w_n log P(x_obs,n) - (log N / 2) * free parameters.

    The score structural EM climbs (Friedman 1998, BIC form); log P(x_obs) marginalises every row's
    missing cells exactly (:func:`loglik_part`, one pass over blocks of the rows on ``runner``)."""
    codes = model.align(data).codes
    w = _weights(data)
    total = float(sum(_run(runner, loglik_part, _blocks(codes, w), (_bare(model),))))
    n = float(codes.shape[0] if w is None else np.asarray(w).sum())
    return total - 0.5 * math.log(max(n, 1.0)) * model.parameter_count()


# ---------------------------------------------------------------------- structural EM
def structural_em(data, method: str = "hc", *, score: str = "bic", params: str = "smoothed",
                  pseudo_count: float = 1.0, max_rounds: int = 10, seed: int = 0, progress: Progress | None = None,
                  start: LearnResult | None = None, runner=None, **learn) -> tuple[LearnResult, BayesNet, list]:
    """Structural EM (module docstring).  Returns (result, network with EM CPTs, score history).

    Every round's E-step is one pass over the (distinct, weighted) rows on ``runner`` (here when None; a
    :class:`~bnfk_core.data.runners.LocalRunner` or a Dask runner): :func:`expected_table`, exact.  The search
    between passes reads only those expected counts (:class:`ExpectedScorer`).  ``history`` lists the
    observed-data score (:func:`observed_score`) of every accepted network; it never decreases: a round whose
    network does not score higher ends the search and is discarded.  ``learn`` options go to
    :func:`bnfk_core.learning.structure.learn_structure` (``max_parents``, ``ess``, ...).
    The result's score is the searched score of the DAG (``score_name`` = ``score``) when no cell is missing, and
    otherwise the observed-data BIC of the network with its EM CPTs (:func:`observed_score`), under the name
    :data:`OBSERVED_SCORE`.
    """
    t0 = time.perf_counter()
    weights = _weights(data)
    if start is None:
        first = None if progress is None else (lambda f, msg: progress(0.3 * f, f"structural EM, start: {msg}"))
        start = learn_structure(data, method, score=score, seed=seed, scorer=_available_case_scorer(data, score, learn),
                                progress=first, **learn)
    dag = start.dag
    model = em_parameters(dag, data, params, pseudo_count, seed=seed, runner=runner)
    best = observed_score(model, data, runner=runner)
    history, rounds, wide = [best], 0, 0
    complete = not (np.asarray(data.codes) < 0).any()  # no missing cell: the first network is the answer
    too_big = None if complete else _table_too_big(data.codes, data.cardinalities)
    # too big: no rounds -- the available-case network, CPTs by EM, its observed-data score reported
    for rounds in range(1, 0 if complete or too_big else int(max_rounds) + 1):
        if progress is not None:
            progress(min(0.95, 0.3 + 0.7 * rounds / (max_rounds + 1)), f"structural EM: round {rounds}, score {best:.2f}")
        table, w, wide_codes, wide_w = expected_table(_bare(model), data.codes, weights, runner=runner)
        wide = max(wide, int(round(float(wide_w.sum()))))
        scorer = ExpectedScorer(table, w, data.cardinalities, score, model, wide_codes, wide_w,
                                ess=learn.get("ess", 1.0))
        res = learn_structure(data, method, score=score, seed=seed, scorer=scorer, **learn)
        cand_dag = res.dag
        if scorer.total(dag.parent_indices()) >= scorer.total(cand_dag.parent_indices()):
            break  # the expected score does not prefer another DAG: a fixed point
        cand = em_parameters(cand_dag, data, params, pseudo_count, init=None, seed=seed, runner=runner)
        s = observed_score(cand, data, runner=runner)
        if not s > best + 1e-9 * max(1.0, abs(best)):
            break
        dag, model, best = cand_dag, cand, s
        history.append(s)
    n_total = int(round(float(np.asarray(weights).sum()))) if weights is not None else data.n_rows
    notes = [f"structural EM on all {n_total} rows: {len(history) - 1} improving round(s), observed-data BIC "
             f"{history[0]:.2f} -> {history[-1]:.2f}; expected counts exact (no sampled completion)"]
    if too_big:
        notes.append(too_big)
    if wide:
        notes.append(f"{wide} rows with more than {MAX_COMPLETIONS} joint completions were counted per family from "
                     "their exact joint posterior instead of being enumerated")
    if complete:
        # nothing to complete: the network is the search's, and so is its score -- the named score of the DAG on
        # every row (BIC at the maximum-likelihood parameters, BDeu, K2, ... as defined), not a likelihood at the
        # fitted (smoothed) CPTs
        res = LearnResult(dag=dag, method=start.method, score_name=start.score_name, score=float(start.score),
                          n_rows_used=n_total, notes=list(start.notes) + ["no cell is missing: structural EM had "
                          "nothing to complete"], seconds=time.perf_counter() - t0, searched_raw=start.searched_raw)
    else:
        res = LearnResult(dag=dag, method=start.method, score_name=OBSERVED_SCORE, score=float(best),
                          n_rows_used=n_total, notes=notes, seconds=time.perf_counter() - t0)
    model.fit_info["missing_data"] = "em"
    if progress is not None:
        progress(1.0, f"structural EM: done, {dag.n_arcs} arcs")
    return res, model, history


#: the share of the memory limit (``--max-memory``) structural EM's expected table may take
EM_TABLE_SHARE = 0.25


def _table_too_big(codes: np.ndarray, cards) -> str | None:
    """A sentence when structural EM's expected table (the distinct rows' completions, up to
    :data:`MAX_COMPLETIONS` per row, before merging) would take more than :data:`EM_TABLE_SHARE` of the memory
    limit; then no search round runs (the note says so), else None."""
    from ..data.limits import format_bytes, memory_limit
    budget = memory_limit()
    if budget is None or not math.isfinite(budget):
        return None
    cards = [int(c) for c in cards]
    rows = sum(len(r) * min(math.prod(cards[m] for m in missing), MAX_COMPLETIONS)
               for r, missing in missingness_patterns(np.asarray(codes)))
    need = rows * (4 * len(cards) + 16)                 # int32 codes and a float weight (and the merge's key)
    if need <= EM_TABLE_SHARE * budget:
        return None
    return (f"structural EM's expected table would hold {rows:,} completed rows (about {format_bytes(need)}), more "
            f"than a quarter of the memory limit ({format_bytes(budget)}): the search ran once, on every row's "
            "observed families (available case), and the CPTs were fitted by EM; raise --max-memory for the EM rounds")


def _available_case_scorer(data, score: str, learn: dict) -> AvailableCaseScorer:
    return AvailableCaseScorer(data.codes, data.cardinalities, score, ess=learn.get("ess", 1.0),
                               weights=_weights(data))


def _learn_complete_rows(data, method, *, score="bic", **learn) -> LearnResult:
    return learn_structure(data, method, score=score, **learn)


def _learn_available_case(data, method, *, score="bic", **learn) -> LearnResult:
    return learn_structure(data, method, score=score, scorer=_available_case_scorer(data, score, learn), **learn)


def _learn_em(data, method, *, score="bic", params="smoothed", pseudo_count=1.0, runner=None, **learn) -> LearnResult:
    res, model, _ = structural_em(data, method, score=score, params=params, pseudo_count=pseudo_count,
                                  runner=runner, **learn)
    res.model = model  # the EM network (LearnResult.model), reused by learn_network
    return res


def learn_network(data, method: str, *, missing_data: str = DEFAULT_MISSING_DATA, score: str = "bic",
                  params: str = "bdeu", pseudo_count: float = 1.0, em_cpts: bool = True,
                  progress: Progress | None = None, score_options: dict | None = None, runner=None,
                  **learn) -> tuple[LearnResult, BayesNet]:
    """Structure by ``missing_data`` (:data:`MISSING_DATA`) and CPTs by EM over the missing cells.

    ``em_cpts=False`` fits the CPTs by available-case counts only (the thesis's protocol).  ``learn``
    options go to :func:`bnfk_core.learning.structure.learn_structure`; ``runner`` runs the E-step passes
    (structural EM and the CPTs' EM) on a :mod:`bnfk_core.data.runners` runner.  A score with a scorer of its own (``kgv``,
    ``score_options``) is not a count score: its structure uses the complete rows whatever
    ``missing_data`` says (a note says so).  Returns (result, model); the model's ``fit_info`` records
    ``missing_data``.

    Parameters
    ----------
    data : CategoricalData
        The feature columns (missing cells as -1).
    method : str
        A structure-learning method of :data:`bnfk_core.registry.LEARNERS`.
    missing_data : str
        ``complete-rows``, ``available-case`` or ``em`` (:data:`bnfk_core.registry.MISSING_DATA`).
    score, params, pseudo_count
        The search's score and the CPT estimator with its pseudo-count (:func:`bnfk_core.network.model.fit`).

    Returns
    -------
    (LearnResult, BayesNet)

    Raises
    ------
    StructureError
        An unknown method, score or missing-data method.
    ModelError
        An unknown CPT estimator.

    References
    ----------
    Friedman (1998), "The Bayesian structural EM algorithm" (``em``); thesis §3.2 (the thesis learns
    the structure on complete rows and fits parameters on every row, available-case).
    """
    spec = MISSING_DATA[MISSING_DATA.check(str(missing_data).lower())]
    ESTIMATORS.check(params)
    own = SCORES.get(str(score).lower())
    note = None
    if own is not None and getattr(own, "scorer", None) is not None:
        if spec.name != "complete-rows" and (np.asarray(data.codes) < 0).any():
            note = f"the {score} score has its own scorer: its structure uses the complete rows (not {spec.name})"
        spec = MISSING_DATA["complete-rows"]
        learn["score_options"] = score_options
    extra = {"params": params, "pseudo_count": pseudo_count, "runner": runner} if spec.name == "em" else {}
    res = spec.learn(data, method, score=score, progress=progress, **extra, **learn)
    if note:
        res.notes.append(note)
    model = res.model
    if model is None:
        model = (em_parameters(res.dag, data, params, pseudo_count, seed=learn.get("seed", 0), runner=runner) if em_cpts
                 else fit(res.dag, data, method=params, pseudo_count=pseudo_count))
    model.fit_info["missing_data"] = spec.name
    model.fit_info["cpts_by"] = "em" if em_cpts or spec.name == "em" else "available-case"
    return res, model


def check_missing_data(name) -> str:
    """``name`` (lower case) if it is a registered missing-data method, else a StructureError naming every method."""
    return MISSING_DATA.check(str(name).lower())

