"""Learning a Bayesian network from a table with missing cells: every row counts.

Three ways to treat missing cells in structure learning (:data:`bnfk_core.registry.MISSING_DATA`,
``--missing-data``):

``complete-rows``
    The rows without a missing cell only (the thesis's protocol; every DAG scored on the same rows).
``available-case``
    Every family (child + parents) is counted on the rows where all of *its* variables are observed
    (:class:`AvailableCaseScorer`); the penalty (BIC/AIC/qNML) uses that family's row count n_f,
    and the local score is then scaled by N / n_f to a score per N rows.  Without the scaling a
    parent that is often missing would look attractive (fewer rows, a log-likelihood nearer 0).
    No observed cell is thrown away.
``em``
    Structural EM (Friedman 1998, "The Bayesian structural EM algorithm", the BIC form): start from
    the available-case network; E-step: complete every incomplete row in all ways, weighted by the
    current network's joint posterior of its missing cells (:func:`expected_table`); M-step: search
    the structure on those expected counts, fit its CPTs by EM; keep the new network only when the
    observed-data score rises (:func:`observed_score`), repeat until it stops rising.

Parameters (every method): EM over the missing cells (:func:`em_parameters`, Dempster, Laird &
Rubin 1977): theta <- estimator(expected family counts under theta), started from the available-case
fit, until no CPT entry moves by more than ``tol``.  With ``params="ml"`` this climbs the
observed-data likelihood; with a pseudo-count it climbs the posterior (MAP).

Weighted tables (distinct rows with multiplicities, :mod:`bnfk_core.data.stream`) count every row
``weights[n]`` times throughout; the expected table carries fractional weights.
"""
from __future__ import annotations

import math
import time
from types import SimpleNamespace
from typing import Callable, Sequence

import numpy as np

from ..errors import ModelError
from ..inference.queries import log_evidence, missingness_patterns
from .structure import LearnResult, learn_structure
from .exact import penalty_bounds
from ..network.model import BayesNet, estimate_cpt, fit
from ..registry import ESTIMATORS, MISSING_DATA, SCORES, MissingDataSpec
from .scores import LocalScorer, counts_from_columns

__all__ = ["DEFAULT_MISSING_DATA", "OBSERVED_SCORE", "AvailableCaseScorer", "Completions", "expected_table", "em_parameters", "observed_score",
           "structural_em", "learn_network", "check_missing_data", "merge_rows", "likelihood_weighting", "MAX_COMPLETIONS"]

#: the missing-data method used when none is named (chosen by the measurements in docs/IMPUTATION.md)
DEFAULT_MISSING_DATA = "em"
#: the name under which structural EM reports its score (:func:`observed_score`), never that of the searched score
OBSERVED_SCORE = "observed-data bic"
#: an incomplete row is completed in all ways when its missing cells have at most this many joint
#: states; beyond, :func:`expected_table` draws ``SAMPLED_COMPLETIONS`` completions by likelihood
#: weighting (an importance-sampling estimate of the posterior, said in the notes)
MAX_COMPLETIONS = 256
SAMPLED_COMPLETIONS = 64
#: available case: a family with parents needs this many rows observing it (below, its scaled score
#: would not be bounded by the penalty on all rows: log n_f / n_f only falls from n_f = 3 on)
MIN_FAMILY_ROWS = 3

Progress = Callable[[float, str], None]


# ---------------------------------------------------------------------- available case
class AvailableCaseScorer(LocalScorer):
    """Local scores on the rows where the family is observed (available-case analysis).

    ``counts(child, parents)`` are :func:`bnfk_core.learning.scores.family_counts` over those rows and the
    penalty of the score uses their (weighted) number n_f; the local score is multiplied by N / n_f
    (N = all rows) so that families counted on different rows compare (module docstring).  ``n`` stays
    the number of complete rows; the exact search's penalty bound is :meth:`penalty_array`.  A family
    with parents observed on fewer than :data:`MIN_FAMILY_ROWS` rows scores -inf (never chosen).
    Chow-Liu, TAN and KDB read mutual information on the complete rows.
    """

    def __init__(self, codes, cards, score: str = "bic", ess: float = 1.0, weights=None):
        super().__init__(codes, cards, score, ess=ess, weights=weights)
        self.all_codes = np.asarray(codes)
        self.all_weights = None if weights is None else np.asarray(weights, dtype=np.int64)
        self.observed = self.all_codes >= 0
        self._n_cache: dict = {}
        # the columns as int64 (as family_counts reads them) and the last family's rows, shared by family_n and counts
        self._cols64 = [np.ascontiguousarray(self.all_codes[:, j], dtype=np.int64) for j in range(self.all_codes.shape[1])]
        self._last_rows: tuple = (None, None)
        self.rows_used = int(self.n_rows_total if self.observed.any(axis=0).all() else 0)
        self.note = (f"structure learned on all {self.n_rows_total} rows, every family on the rows where it is "
                     f"observed (available case; {self.n} rows are complete)")

    def family_rows(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        cols = [int(child)] + sorted(int(p) for p in parents)
        return self.observed[:, cols].all(axis=1)

    def family_n(self, child: int, parents: Sequence[int] = ()) -> int:
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        n = self._n_cache.get(key)
        if n is None:
            rows = self.family_rows(child, parents)
            self._last_rows = (key, rows)
            n = int(rows.sum()) if self.all_weights is None else int(self.all_weights[rows].sum())
            self._n_cache[key] = n
        return n

    def penalty_array(self, child: int, others: Sequence[int]):
        """The exact search's bound of every parent mask: the scaled score (LL_f - pen(n_f)) N / n_f is at most
        -pen(N) N / N for BIC, AIC and qNML (pen(n) / n falls as n grows), so the bound on all N rows holds."""
        view = SimpleNamespace(score=self.score, cards=self.cards, n=self.n_rows_total)
        return penalty_bounds(view, child, others)

    def counts(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        """:func:`~bnfk_core.learning.scores.family_counts` on the family's rows: the same arrays, but only the family's
        columns are cut to those rows (and the rows' mask of :meth:`family_n` is reused)."""
        ps = sorted(int(p) for p in parents)
        key = (int(child), tuple(ps))
        rows = self._last_rows[1] if self._last_rows[0] == key else self.family_rows(child, ps)
        w = None if self.all_weights is None else self.all_weights[rows]
        return counts_from_columns(self._cols64[key[0]][rows], int(self.cards[key[0]]),
                                   [self._cols64[p][rows] for p in ps], [int(self.cards[p]) for p in ps],
                                   int(rows.sum()), w)

    def __call__(self, child: int, parents: Sequence[int] = ()) -> float:
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        val = self.cache.get(key)
        if val is None:
            n_f = self.family_n(*key)
            if key[1] and n_f < MIN_FAMILY_ROWS:
                val = -math.inf  # a parent set observed together with the child on too few rows to score
            else:
                val = super().__call__(*key) * (self.n_rows_total / n_f) if n_f else 0.0
            self.cache[key] = val
        return val


# ---------------------------------------------------------------------- expected counts
class Completions:
    """Every row's completions, built once; their posterior weights under any network are one pass.

    A row with missing set M is replaced by the joint states x_M of its missing cells (exactly, when
    they are at most ``cap``), or by :data:`SAMPLED_COMPLETIONS` draws of likelihood weighting under
    ``proposal`` (a fixed importance-sampling proposal q, Koller & Friedman §12.2.2).  Complete rows are
    their own single completion.  The codes of the completions never depend on the network, so the
    E-step under a network theta is: log P_theta(completion) (a sum of CPT entries, one gather per
    variable) minus log q for the drawn ones, normalised over each row's completions, times the row's
    weight (:meth:`weights`).  Family counts on these weights are the expected counts
    E[N_ijk | x_obs, theta], exact for the enumerated rows.

    ``cap`` starts at :data:`MAX_COMPLETIONS` and is halved (down to 64) while the completions would
    exceed ``budget`` rows.
    """

    def __init__(self, proposal: BayesNet, codes: np.ndarray, weights=None, *, seed: int = 0,
                 cap: int | None = None, budget: int = 1_500_000):
        cap = MAX_COMPLETIONS if cap is None else int(cap)
        codes = np.asarray(codes)
        w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
        cards = [int(c) for c in proposal.cardinalities]
        self.cards = cards
        pats = list(missingness_patterns(codes))
        sizes = [(len(rows), math.prod(cards[m] for m in missing)) for rows, missing in pats]
        while cap > 64 and sum(b * (k if k <= cap else SAMPLED_COMPLETIONS) for b, k in sizes) > budget:
            cap //= 2
        complete = np.flatnonzero(~(codes < 0).any(axis=1))
        blocks, groups, row_of = [codes[complete]], [np.arange(len(complete))], [complete]
        n_groups, big = len(complete), []
        for (rows, missing), (_, K) in zip(pats, sizes):
            if K > cap:
                big.append(rows)
                continue
            mc = [cards[m] for m in missing]
            grid = np.stack(np.unravel_index(np.arange(K), mc), axis=1)
            block = np.repeat(codes[rows], K, axis=0)
            block[:, missing] = np.tile(grid, (len(rows), 1))
            blocks.append(block)
            groups.append(np.repeat(np.arange(n_groups, n_groups + len(rows)), K))
            row_of.append(rows)
            n_groups += len(rows)
        log_q = [np.zeros(sum(len(b) for b in blocks))]
        self.sampled_rows = 0
        if big:
            rows = np.concatenate(big)
            self.sampled_rows = len(rows)
            block, lq = likelihood_weighting(proposal, codes[rows], SAMPLED_COMPLETIONS, np.random.default_rng(seed))
            blocks.append(block)
            groups.append(np.repeat(np.arange(n_groups, n_groups + len(rows)), SAMPLED_COMPLETIONS))
            row_of.append(rows)
            log_q.append(lq)
        self.codes = np.concatenate(blocks).astype(np.int32, copy=False)
        self.group = np.concatenate(groups)
        order = np.argsort(self.group, kind="stable")
        self.codes, self.group = self.codes[order], self.group[order]
        self.log_q = np.concatenate(log_q)[order]
        self.row_weight = w[np.concatenate(row_of)][self.group]
        self.starts = np.flatnonzero(np.r_[True, self.group[1:] != self.group[:-1]]) if len(self.group) else \
            np.zeros(0, dtype=np.int64)
        self.cap = cap
        self._index: dict = {}

    def family_index(self, model: BayesNet, i: int) -> np.ndarray:
        """Flat CPT index (parent configuration x r_i + state) of variable i in every completion."""
        key = (i, tuple(model.parents[i]))
        idx = self._index.get(key)
        if idx is None:
            idx = model.parent_config(i, self.codes) * int(model.cardinalities[i]) + self.codes[:, i]
            idx = idx.astype(np.int32 if model.cpts[i].size < 2 ** 31 else np.int64)
            self._index[key] = idx
        return idx

    def weights(self, model: BayesNet) -> np.ndarray:
        """w_n P_theta(x_M | x_obs,n) of every completion (self-normalised importance weights for the drawn)."""
        if not len(self.group):
            return np.zeros(0)
        with np.errstate(divide="ignore"):
            ll = sum(np.log(model.cpts[i].ravel())[self.family_index(model, i)] for i in range(model.n_vars))
        ll = ll - self.log_q
        top = np.maximum.reduceat(ll, self.starts)
        if not np.isfinite(top).all():
            raise ModelError("A row has observed values that the model gives probability zero; fit the "
                             "parameters with a pseudo-count (method 'smoothed').")
        p = np.exp(ll - top[self.group])
        p /= np.add.reduceat(p, self.starts)[self.group]
        return self.row_weight * p

    def table(self, model: BayesNet) -> tuple[np.ndarray, np.ndarray]:
        """(distinct completed rows, their expected weights) under ``model`` (:func:`merge_rows`)."""
        w = self.weights(model)
        keep = w > 0
        return merge_rows(self.codes[keep], w[keep], self.cards)


def expected_table(model: BayesNet, codes: np.ndarray, weights=None, *, seed: int = 0,
                   max_completions: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """The E-step table: ``(distinct completed rows, expected weights, rows completed by sampling)``.

    Family counts on it are E[N_ijk | x_obs, model] (:class:`Completions` with ``model`` as its own
    proposal)."""
    comp = Completions(model, codes, weights, seed=seed, cap=max_completions)
    return comp.table(model) + (comp.sampled_rows,)


def likelihood_weighting(model: BayesNet, codes: np.ndarray, samples: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``samples`` completions of every row of ``codes`` and log q, their probability under the proposal.

    Likelihood weighting (Koller & Friedman §12.2.2): variables in topological order, a missing cell
    drawn from its CPT given the (drawn or observed) parents; q is the product of the drawn cells' CPT
    entries, so P(x_obs, x_M) / q is the importance weight.  All rows and samples at once, one gather
    per variable."""
    block = np.repeat(codes, samples, axis=0)
    miss = block < 0
    log_q = np.zeros(block.shape[0])
    for i in model.dag.topological_order():
        m = miss[:, i]
        if not m.any():
            continue
        probs = model.cpts[i][model.parent_config(i, block[m])]
        cum = np.cumsum(probs, axis=1)
        u = rng.random(int(m.sum()))[:, None]
        drawn = np.minimum((u > cum).sum(axis=1), probs.shape[1] - 1)
        block[m, i] = drawn
        log_q[m] += np.log(probs[np.arange(len(drawn)), drawn])
    return block, log_q


def merge_rows(table: np.ndarray, weight: np.ndarray, cards: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Equal rows of ``table`` merged into one with the sum of their weights (rows in sorted order)."""
    if math.prod(int(c) for c in cards) < 2 ** 62:
        key = np.ravel_multi_index(tuple(table[:, j].astype(np.int64) for j in range(table.shape[1])),
                                   tuple(int(c) for c in cards))
        uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
        return table[first], np.bincount(inv.ravel(), weights=weight, minlength=uk.size)
    uniq, inv = np.unique(table, axis=0, return_inverse=True)
    return uniq, np.bincount(inv.ravel(), weights=weight, minlength=uniq.shape[0])


def _weights(data):
    return getattr(data, "weights", None)


def em_parameters(dag, data, method: str = "smoothed", pseudo_count: float = 1.0, *, max_iter: int = 100,
                  tol: float = 1e-4, init: BayesNet | None = None, seed: int = 0) -> BayesNet:
    """CPTs of ``dag`` by EM over the missing cells of ``data`` (module docstring).

    Starts from ``init`` or the available-case fit (:func:`bnfk_core.network.model.fit`); each iteration is
    theta <- estimator(E[N_ijk | x_obs, theta]) with the expected counts from :class:`Completions` (built
    once, with the starting network as the proposal of the rows it samples), until the largest change
    of a CPT entry is below ``tol`` or after ``max_iter`` iterations.  A table without missing cells
    gets the plain fit.  ``fit_info`` records ``em_iterations``.
    """
    model = init if init is not None else fit(dag, data, method=method, pseudo_count=pseudo_count)
    if tuple(data.variables) != tuple(dag.nodes):
        data = data.select(list(dag.nodes))
    codes = data.codes
    if not (codes < 0).any():
        model.fit_info["em_iterations"] = 0
        return model
    comp = Completions(model, codes, _weights(data), seed=seed)
    cards = model.cardinalities
    sizes = [model.cpts[i].size for i in range(model.n_vars)]
    it = 0
    for it in range(1, int(max_iter) + 1):
        w = comp.weights(model)
        cpts = tuple(estimate_cpt(np.bincount(comp.family_index(model, i), weights=w, minlength=sizes[i])
                                  .reshape(model.cpts[i].shape), method, pseudo_count) for i in range(len(cards)))
        delta = max(float(np.abs(a - b).max()) for a, b in zip(cpts, model.cpts))
        info = dict(model.fit_info, method=method, pseudo_count=pseudo_count, em_iterations=it,
                    sampled_rows=comp.sampled_rows)
        model = BayesNet(dag, tuple(data.states), cpts, info)
        if delta < tol:
            break
    return model


def observed_score(model: BayesNet, data) -> float:
    """The observed-data BIC: sum_n w_n log P(x_obs,n) - (log N / 2) * free parameters.

    The score structural EM climbs (Friedman 1998, BIC form); log P(x_obs) marginalises every row's
    missing cells exactly (:func:`bnfk_core.inference.queries.log_evidence`)."""
    codes = model.align(data).codes
    ll = log_evidence(model, codes)
    w = _weights(data)
    total = float(ll.sum() if w is None else (ll * w).sum())
    n = float(codes.shape[0] if w is None else np.asarray(w).sum())
    return total - 0.5 * math.log(max(n, 1.0)) * model.parameter_count()


# ---------------------------------------------------------------------- structural EM
def structural_em(data, method: str = "hc", *, score: str = "bic", params: str = "smoothed",
                  pseudo_count: float = 1.0, max_rounds: int = 10, seed: int = 0, progress: Progress | None = None,
                  start: LearnResult | None = None, **learn) -> tuple[LearnResult, BayesNet, list]:
    """Structural EM (module docstring).  Returns (result, network with EM CPTs, score history).

    The result's score is the searched score of the DAG (``score_name`` = ``score``) when no cell is missing, and
    otherwise the observed-data BIC of the network with its EM CPTs (:func:`observed_score`), under the name
    :data:`OBSERVED_SCORE`.
    ``history`` lists the observed-data score (:func:`observed_score`) of every accepted network; it
    never decreases: a round whose network does not score higher ends the search and is discarded.
    ``learn`` options go to :func:`bnfk_core.learning.structure.learn_structure` (``max_parents``, ``ess``, ...).
    """
    t0 = time.perf_counter()
    weights = _weights(data)
    if start is None:
        first = None if progress is None else (lambda f, msg: progress(0.3 * f, f"structural EM, start: {msg}"))
        start = learn_structure(data, method, score=score, seed=seed, scorer=_available_case_scorer(data, score, learn),
                                progress=first, **learn)
    dag = start.dag
    model = em_parameters(dag, data, params, pseudo_count, seed=seed)
    best = observed_score(model, data)
    history, rounds, approx = [best], 0, 0
    complete = not (np.asarray(data.codes) < 0).any()  # no missing cell: the first network is the answer
    for rounds in range(1, 0 if complete else int(max_rounds) + 1):
        if progress is not None:
            progress(min(0.95, 0.3 + 0.7 * rounds / (max_rounds + 1)), f"structural EM: round {rounds}, score {best:.2f}")
        comp = Completions(model, data.codes, weights, seed=seed)
        table, w = comp.table(model)
        approx = comp.sampled_rows
        scorer = LocalScorer(table, data.cardinalities, score, ess=learn.get("ess", 1.0), weights=w)
        res = learn_structure(data, method, score=score, seed=seed, scorer=scorer, **learn)
        cand_dag = res.dag
        if scorer.total(dag.parent_indices()) >= scorer.total(cand_dag.parent_indices()):
            break  # the expected score does not prefer another DAG: a fixed point
        cand = em_parameters(cand_dag, data, params, pseudo_count, init=None, seed=seed)
        s = observed_score(cand, data)
        if not s > best + 1e-9 * max(1.0, abs(best)):
            break
        dag, model, best = cand_dag, cand, s
        history.append(s)
    n_total = int(round(float(np.asarray(weights).sum()))) if weights is not None else data.n_rows
    notes = [f"structural EM on all {n_total} rows: {len(history) - 1} improving round(s), observed-data BIC "
             f"{history[0]:.2f} -> {history[-1]:.2f}"]
    if approx:
        notes.append(f"{approx} rows with very many joint completions were completed by sampling")
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


def _available_case_scorer(data, score: str, learn: dict) -> AvailableCaseScorer:
    return AvailableCaseScorer(data.codes, data.cardinalities, score, ess=learn.get("ess", 1.0),
                               weights=_weights(data))


def _learn_complete_rows(data, method, *, score="bic", **learn) -> LearnResult:
    return learn_structure(data, method, score=score, **learn)


def _learn_available_case(data, method, *, score="bic", **learn) -> LearnResult:
    return learn_structure(data, method, score=score, scorer=_available_case_scorer(data, score, learn), **learn)


def _learn_em(data, method, *, score="bic", params="smoothed", pseudo_count=1.0, **learn) -> LearnResult:
    res, model, _ = structural_em(data, method, score=score, params=params, pseudo_count=pseudo_count, **learn)
    res.model = model  # the EM network, reused by learn_network
    return res


for _spec in (
        MissingDataSpec("complete-rows", "Complete rows only", _learn_complete_rows,
                        "the rows without a missing cell (the thesis's protocol)"),
        MissingDataSpec("available-case", "Available case", _learn_available_case,
                        "every family on the rows where it is observed; penalty on those rows"),
        MissingDataSpec("em", "Structural EM", _learn_em,
                        "Friedman (1998): expected counts from the current network, search, repeat while the "
                        "observed-data BIC rises")):
    MISSING_DATA.register(_spec)


def learn_network(data, method: str, *, missing_data: str = DEFAULT_MISSING_DATA, score: str = "bic",
                  params: str = "smoothed", pseudo_count: float = 1.0, em_cpts: bool = True,
                  progress: Progress | None = None, score_options: dict | None = None,
                  **learn) -> tuple[LearnResult, BayesNet]:
    """Structure by ``missing_data`` (:data:`MISSING_DATA`) and CPTs by EM over the missing cells.

    ``em_cpts=False`` fits the CPTs by available-case counts only (the thesis's protocol).  ``learn``
    options go to :func:`bnfk_core.learning.structure.learn_structure`.  A score with a scorer of its own (``kgv``,
    ``score_options``) is not a count score: its structure uses the complete rows whatever
    ``missing_data`` says (a note says so).  Returns (result, model); the model's ``fit_info`` records
    ``missing_data``.
    """
    spec = MISSING_DATA[str(missing_data).lower()]
    if params not in ESTIMATORS:
        ESTIMATORS[params]  # raises the friendly error
    own = SCORES.get(str(score).lower())
    note = None
    if own is not None and getattr(own, "scorer", None) is not None:
        if spec.name != "complete-rows" and (np.asarray(data.codes) < 0).any():
            note = f"the {score} score has its own scorer: its structure uses the complete rows (not {spec.name})"
        spec = MISSING_DATA["complete-rows"]
        learn["score_options"] = score_options
    extra = {"params": params, "pseudo_count": pseudo_count} if spec.name == "em" else {}
    res = spec.learn(data, method, score=score, progress=progress, **extra, **learn)
    if note:
        res.notes.append(note)
    model = getattr(res, "model", None)
    if model is None:
        model = (em_parameters(res.dag, data, params, pseudo_count, seed=learn.get("seed", 0)) if em_cpts
                 else fit(res.dag, data, method=params, pseudo_count=pseudo_count))
    model.fit_info["missing_data"] = spec.name
    model.fit_info["cpts_by"] = "em" if em_cpts or spec.name == "em" else "available-case"
    return res, model


def check_missing_data(name) -> str:
    """``name`` if it is a registered missing-data method (else a friendly StructureError)."""
    return MISSING_DATA[str(name).lower()].name

