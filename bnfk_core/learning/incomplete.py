"""Learning a Bayesian network from a table with missing cells: every row counts.

Three ways to treat missing cells in structure learning (:data:`bnfk_core.registry.MISSING_DATA`,
``--missing-data``):
``complete-rows`` -- the rows without a missing cell only (the thesis's protocol); ``available-case`` -- every
family counted on the rows where all of its variables are observed (:mod:`.available_case`); ``em`` --
structural EM (Friedman 1998, "The Bayesian structural EM algorithm", the BIC form): start from the
available-case network; E-step: the expected counts E[N_ijk | x_obs, theta] of every candidate family under
the current network, exact -- every incomplete row completed in all ways weighted by its joint posterior
(:func:`expected_table`), or, for a row with very many completions, its family posterior
(:class:`ExpectedScorer`); M-step: search the structure on those expected counts, fit its CPTs by EM; keep the
new network only when the observed-data score rises
(:func:`observed_score`), repeat until it stops rising.  Each E-step is one pass over the distinct rows in
blocks on a runner (:mod:`bnfk_core.data.runners`: here or on Dask workers); the blocks' results add up, so
the counts do not depend on how the rows were cut (to rounding, 1e-12).

Parameters (every method): EM over the missing cells (:func:`em_parameters`, Dempster, Laird & Rubin 1977):
theta <- estimator(expected family counts under theta), from the available-case fit, until no CPT entry moves
by more than ``tol``; the network's own families' expected counts come from :func:`expected_family_counts`.
With ``params="ml"`` this climbs the observed-data likelihood; with a pseudo-count the posterior (MAP).
Weighted tables (distinct rows with multiplicities, :mod:`bnfk_core.data.stream`) count every row
``weights[n]`` times.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from ..data.counts import code_matrix, counts_from_columns, dense_family_counts, merge_rows
from ..errors import DataError, ModelError, StructureError
from ..inference.elimination import pattern_keys
from ..network.model import MAX_CPT_CELLS, BayesNet, estimate_cpt, fit
from ..registry import ESTIMATORS, MISSING_DATA, SCORES
from .available_case import AvailableCaseScorer
from .estep import (
    EM_BLOCK_ROWS,
    MAX_COMPLETIONS,
    PreparedJobs,
    expected_family_counts,
    expected_table,
    family_counts_part,
    job_blocks,
    jobs_counts_part,
    keep_jobs,
    kept_counts_part,
    kept_loglik_part,
    log_likelihood_total,
    loglik_part,
    observed_counts,
    offsets_memo,
    run_parts,
    table_part,
    touching_groups,
)
from .members import DEFAULT_MISSING_DATA, ROUND_SEARCHES
from .scores import LocalScorer
from .structure import LearnResult, learn_structure
from .wide_posteriors import WidePosteriors

__all__ = [
    "DEFAULT_MISSING_DATA",
    "OBSERVED_SCORE",
    "AvailableCaseScorer",
    "ExpectedScorer",
    "expected_table",
    "expected_family_counts",
    "family_counts_part",
    "table_part",
    "loglik_part",
    "em_parameters",
    "observed_score",
    "structural_em",
    "learn_network",
    "check_missing_data",
    "merge_rows",
    "MAX_COMPLETIONS",
    "EM_BLOCK_ROWS",
]

#: the name under which structural EM reports its score (:func:`observed_score`), never that of the searched
#: score
OBSERVED_SCORE = "observed-data bic"

Progress = Callable[[float, str], None]


class ExpectedScorer(LocalScorer):
    """Local scores on expected counts E[N_ijk | x_obs, model]: the enumerated table of :func:`expected_table`
    plus, per family asked for, the wide rows' exact share.

    A wide row n with missing set M adds w_n P(x_S = s | x_obs,n) to every family configuration whose missing
    members S = family ∩ M take the values s (its observed members are fixed).  P(x_S | x_obs) is the product
    of the margins on S of the row's groups of cells that share no family, each tabulated once per network
    (:class:`~bnfk_core.learning.wide_posteriors.WidePosteriors`), and kept per S for the search.  (A row's
    joint completions multiply its groups' sizes; the tables add them: 19 missing cells in groups of one to
    three cost tens of entries, where the joint has 2**19.)
    """

    def __init__(
        self,
        table,
        weights,
        cards,
        score: str,
        model: BayesNet,
        wide_codes=None,
        wide_weights=None,
        ess: float = 1.0,
    ):
        super().__init__(table, cards, score, ess=ess, weights=np.asarray(weights, dtype=float))
        self.model = model
        self.wide = (
            np.zeros((0, len(cards)), dtype=np.int32) if wide_codes is None else np.asarray(wide_codes)
        )
        self.wide_w = np.zeros(0) if wide_weights is None else np.asarray(wide_weights, dtype=float)
        total = float(np.asarray(weights, dtype=float).sum()) + float(self.wide_w.sum())
        self.n = self.n_rows_total = int(round(total))
        self.miss = self.wide < 0
        self._joint: dict = {}
        self._groups: WidePosteriors | None = None

    def _posterior(self, S: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(wide rows with S missing, P(x_S | x_obs) flat in C order over sorted S), kept per S."""
        got = self._joint.get(S)
        if got is None:
            if self._groups is None:  # the groups' tables, made once for every S (:mod:`.wide_posteriors`)
                self._groups = WidePosteriors(self.model, self.wide)
            got = self._joint[S] = self._groups.posterior(S)
        return got

    def _wide_blocks(self, fam: list):
        """The wide rows' share of family ``fam`` (child first): ``(block (m, len(fam)) of codes, weights)``
        for each set S of the family's members the rows miss, the rows repeated once per joint state of S."""
        miss = self.miss[:, fam]
        key = miss @ (1 << np.arange(len(fam)))
        for k in np.unique(key):
            rows = np.flatnonzero(key == k)
            S = tuple(sorted(fam[j] for j in range(len(fam)) if (int(k) >> j) & 1))
            block = self.wide[rows][:, fam].astype(np.int64)
            if not S:
                yield block, self.wide_w[rows]
                continue
            have, P = self._posterior(S)
            P = P[np.searchsorted(have, rows)]
            K = P.shape[1]
            grid = np.stack(np.unravel_index(np.arange(K), [self.cards[v] for v in S]), axis=1)
            block = np.repeat(block, K, axis=0)
            for j, v in enumerate(S):
                block[:, fam.index(v)] = np.tile(grid[:, j], len(rows))
            yield block, (self.wide_w[rows][:, None] * P).ravel()

    def _from_dense(self, key: tuple, table: np.ndarray) -> np.ndarray:
        if len(self.wide):  # the wide rows' expected share added to the enumerated table's counts
            child, ps = key
            fam = [child] + list(ps)
            table = table.copy()
            flat = table.reshape(-1)
            # a configuration's flat cell: child + r_child * (parents in mixed radix, the last fastest)
            stride = [1] * len(fam)
            acc = int(self.cards[child])
            for j in range(len(fam) - 1, 0, -1):
                stride[j] = acc
                acc *= int(self.cards[fam[j]])
            key_of = self.miss[:, fam] @ (1 << np.arange(len(fam)))
            for k in np.unique(key_of):
                rows = np.flatnonzero(key_of == k)
                gone = [j for j in range(len(fam)) if (int(k) >> j) & 1]
                base = np.zeros(len(rows), dtype=np.int64)
                for j in range(len(fam)):
                    if j not in gone:
                        base += self.wide[rows, fam[j]].astype(np.int64) * stride[j]
                if not gone:
                    flat += np.bincount(base, weights=self.wide_w[rows], minlength=flat.size)
                    continue
                S = tuple(sorted(fam[j] for j in gone))
                have, P = self._posterior(S)
                P = P[np.searchsorted(have, rows)]
                off = np.zeros(1, dtype=np.int64)  # the cells of S's joint states, C order over sorted S
                for v in S:
                    off = (off[:, None] + np.arange(int(self.cards[v])) * stride[fam.index(v)]).ravel()
                flat += np.bincount(
                    (base[:, None] + off[None, :]).ravel(),
                    weights=(self.wide_w[rows][:, None] * P).ravel(),
                    minlength=flat.size,
                )
        return super()._from_dense(key, table)

    def counts(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        ps = sorted(int(p) for p in parents)
        if self._dense((int(child), tuple(ps))):  # the enumerated table's counts, then the wide rows' share
            return super().counts(child, ps)
        fam = [int(child)] + ps
        cols = [self.cols[v] for v in fam]
        w = [self.weights]
        for block, weight in self._wide_blocks(fam):
            for j in range(len(fam)):
                cols[j] = np.concatenate([cols[j], block[:, j].astype(cols[j].dtype)])
            w.append(weight)
        weights = np.concatenate(w)
        return counts_from_columns(
            cols[0], self.cards[fam[0]], cols[1:], [self.cards[p] for p in ps], int(cols[0].shape[0]), weights
        )


def _weights(data):
    return getattr(data, "weights", None)


def _bare(model: BayesNet) -> BayesNet:
    """The model without its caches (what a runner sends to its workers)."""
    return BayesNet(model.dag, tuple(model.states), tuple(model.cpts), dict(model.fit_info))


def _available_case_fit(
    dag,
    data,
    method: str,
    pseudo_count: float,
    codes: np.ndarray,
    w: np.ndarray,
    counted=None,
    incomplete: np.ndarray | None = None,
) -> tuple:
    """:func:`bnfk_core.network.model.fit` of ``dag`` on ``data`` (columns in the DAG's order; ``codes``,
    ``w`` its rows and weights) and the counts it is made of: every family counted on the rows that observe it
    whole (:func:`~bnfk_core.learning.estep.observed_counts`'s compiled pass over 1-byte codes, where ``fit``
    gathers every family's columns as int64: on 10 million rows, hundreds of MB at once).  The same counts
    (sums of the same weights in row order), so the same CPTs and ``fit_info``.  Returns (model, counts).

    ``counted`` (optional) is the available-case scorer that searched ``dag`` on these rows with whole
    weights (:class:`~bnfk_core.learning.available_case.AvailableCaseScorer`): its kept count tables are these
    counts (integer sums, exact in any order), so no family is counted again.  ``incomplete``: whether each
    row has a missing cell, when the caller knows it."""
    if method not in ESTIMATORS:
        raise ModelError(f"Unknown parameter method '{method}'; choose one of {', '.join(ESTIMATORS)}.")
    if method in ("smoothed", "bdeu") and not pseudo_count > 0:
        raise ModelError(f"The pseudo-count must be positive for '{method}', got {pseudo_count}.")
    cards = data.cardinalities
    if (cards == 0).any():
        v = dag.nodes[int(np.flatnonzero(cards == 0)[0])]
        raise DataError(f"Column '{v}' of {data.source} has no observed values.")
    cols = None  # the rows as the compiled counter reads them, made when a family is not in ``counted``
    counts = []
    for i, ps in enumerate(dag.parent_indices()):
        q = int(np.prod(cards[list(ps)])) if ps else 1
        if q * int(cards[i]) > MAX_CPT_CELLS:
            raise ModelError(
                f"Variable '{dag.nodes[i]}' has {q:,} parent configurations; "
                f"its CPT would need {q * int(cards[i]):,} cells. Give it fewer parents."
            )
        # the scorer's table has the parents sorted: the CPT's layout when the DAG lists them so
        table = None if counted is None or list(ps) != sorted(ps) else counted.dense_counts(i, ps)
        if table is None:
            if cols is None:
                cols = code_matrix(codes, [int(c) for c in cards])
            table = dense_family_counts(cols, i, list(ps), cards, w)
        # C order, as a pass gives it: the estimator's sums then add in the same order (the same floats)
        counts.append(np.ascontiguousarray(table, dtype=float).reshape(q, int(cards[i])))
    del cols
    cpts = tuple(estimate_cpt(c, method, pseudo_count) for c in counts)
    weights = _weights(data)
    complete = ~(_incomplete_rows(codes) if incomplete is None else incomplete)
    info = {
        "method": method,
        "pseudo_count": pseudo_count,
        "n_rows": data.n_rows,
        "complete_rows": int(complete.sum() if weights is None else np.asarray(weights)[complete].sum()),
    }
    return BayesNet(dag, tuple(data.states), cpts, info), counts


def _incomplete_rows(codes: np.ndarray) -> np.ndarray:
    """Whether each row has a missing cell (column by column: no boolean copy of the whole table)."""
    out = np.zeros(codes.shape[0], dtype=bool)
    for j in range(codes.shape[1]):
        out |= codes[:, j] < 0
    return out


def em_parameters(
    dag,
    data,
    method: str = "bdeu",
    pseudo_count: float = 1.0,
    *,
    max_iter: int = 100,
    tol: float = 1e-4,
    init: BayesNet | None = None,
    seed: int = 0,
    runner=None,
    scored: dict | None = None,
    counted=None,
) -> BayesNet:
    """CPTs of ``dag`` by EM over the missing cells of ``data`` (module docstring).

    Starts from ``init`` or the available-case fit (:func:`bnfk_core.network.model.fit`); each iteration is
    theta <- estimator(E[N_ijk | x_obs, theta]), the expected counts exact: every family counted once on the
    rows that observe it whole (:func:`~bnfk_core.learning.estep.observed_counts`), and the incomplete rows,
    merged by missingness pattern and context (:func:`~bnfk_core.learning.estep.touching_groups`), completed
    under theta in one pass on ``runner`` per iteration (:func:`~bnfk_core.learning.estep.jobs_counts_part`),
    until the largest change of a CPT entry is below ``tol`` or after ``max_iter``
    iterations.  A table without missing cells gets the plain fit.  ``fit_info`` records ``em_iterations``.
    ``seed`` is accepted for compatibility; nothing is random.  A dict ``scored`` receives the E-step's
    constant counts and kept jobs (``base``, ``kept``; :func:`_em_scored`).  ``counted``: the available-case
    scorer whose count tables give the first fit (:func:`_available_case_fit`).
    """
    if tuple(data.variables) != tuple(dag.nodes):
        data = data.select(list(dag.nodes))
    codes = np.asarray(data.codes)
    incomplete = _incomplete_rows(codes)
    if init is not None or not incomplete.any():
        model = init if init is not None else fit(dag, data, method=method, pseudo_count=pseudo_count)
    else:
        model = None
    if not incomplete.any():
        model.fit_info["em_iterations"] = 0
        return model
    w = _weights(data)
    w = np.ones(codes.shape[0]) if w is None else np.asarray(w, dtype=float)
    # the families each row observes whole, counted once; the incomplete rows merged by pattern and context
    # (estep.touching_groups: the DAG fixes the contexts), whose touching families each iteration completes
    if model is None:  # the available-case fit from those very counts (fit's CPTs, without its int64 copies)
        model, base = _available_case_fit(dag, data, method, pseudo_count, codes, w, counted, incomplete)
    else:
        base = observed_counts(model, codes, w)
    # the jobs are kept between iterations (the DAG does not change): here, or on the workers of a runner that
    # keeps pieces (Dask: the rows grouped into jobs and each item made ready where it is kept,
    # estep.keep_jobs); on a runner without, they travel each time
    held = kept = items = None
    if runner is not None and getattr(runner, "keep_joined", None) is not None:
        held = keep_jobs(runner, _bare(model), codes[incomplete], w[incomplete])
    else:
        items = job_blocks(
            touching_groups(model, codes[incomplete], w[incomplete]), cards=model.cardinalities
        )
        if runner is None:
            memo = offsets_memo(model, items)
            kept = [PreparedJobs(model, item, memo=memo) for item in items]
    if scored is not None:
        scored.update(base=base, kept=kept, held=held, runner=runner)
    it = 0
    for it in range(1, int(max_iter) + 1):
        parts = (
            [k.counts(model) for k in kept]
            if kept is not None
            else runner.map_kept(kept_counts_part, held, (_bare(model),))
            if held is not None
            else run_parts(runner, jobs_counts_part, items, (_bare(model),))
        )
        counts = [sum(p[i] for p in parts) for i in range(model.n_vars)]
        cpts = tuple(estimate_cpt(b + c, method, pseudo_count) for b, c in zip(base, counts))
        delta = max(float(np.abs(a - b).max()) for a, b in zip(cpts, model.cpts))
        info = dict(model.fit_info, method=method, pseudo_count=pseudo_count, em_iterations=it)
        model = BayesNet(dag, tuple(data.states), cpts, info)
        if delta < tol:
            break
    return model


def _observed_rows(codes: np.ndarray, weights) -> float:
    """N of the observed-data BIC: the (weighted) rows with at least one observed cell.  A row of blanks has
    P(x_obs) = 1 -- it carries no observation -- so it neither adds to the likelihood nor to the penalty."""
    seen = (np.asarray(codes) >= 0).any(axis=1)
    return float(seen.sum() if weights is None else np.asarray(weights)[seen].sum())


def observed_score(model: BayesNet, data, *, runner=None) -> float:
    """The observed-data BIC: sum_n w_n log P(x_obs,n) - (log N / 2) * free parameters, N the rows with at
    least one observed cell (:func:`_observed_rows`).

    The score structural EM climbs (Friedman 1998, BIC form); log P(x_obs) marginalises every row's
    missing cells exactly (:func:`loglik_part`, one pass over blocks of the rows on ``runner``)."""
    codes = model.align(data).codes
    w = _weights(data)
    total = log_likelihood_total(_bare(model), codes, w, runner=runner)
    return total - 0.5 * math.log(max(_observed_rows(codes, w), 1.0)) * model.parameter_count()


def _em_scored(
    dag, data, params, pseudo_count, *, seed: int = 0, runner=None, counted=None
) -> tuple[BayesNet, float]:
    """:func:`em_parameters` and :func:`observed_score` of its network.  In one process the score reuses the
    EM's prepared work: sum_n w_n log P(x_obs,n) = sum over families of the counts of the rows that observe
    them whole times their log CPT entries, plus the merged incomplete rows' completions
    (:meth:`PreparedJobs.loglik`, one compiled pass) -- the same sum as :func:`observed_score`'s pass over the
    rows, in another order (tested to
    1e-12 relative).  On a runner that keeps the jobs on its workers (Dask) the same parts come back from
    there."""
    scored: dict = {}
    model = em_parameters(
        dag, data, params, pseudo_count, seed=seed, runner=runner, scored=scored, counted=counted
    )
    if scored.get("kept") is None and scored.get("held") is None:
        return model, observed_score(model, data, runner=runner)
    total = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        for b, c in zip(scored["base"], model.cpts):
            total += float(np.where(b > 0, b * np.log(c), 0.0).sum())
    if scored.get("kept") is not None:
        total += sum(k.loglik(model) for k in scored["kept"])
    else:  # the jobs kept on the runner's workers: the same parts, added in the same order
        total += sum(scored["runner"].map_kept(kept_loglik_part, scored["held"], (_bare(model),)))
    n = _observed_rows(data.codes, _weights(data))
    return model, total - 0.5 * math.log(max(n, 1.0)) * model.parameter_count()


# ---------------------------------------------------------------------- structural EM
def structural_em(
    data,
    method: str = "hc",
    *,
    score: str = "bic",
    params: str = "smoothed",
    pseudo_count: float = 1.0,
    max_rounds: int = 10,
    round_search: str = "climb",
    seed: int = 0,
    progress: Progress | None = None,
    start: LearnResult | None = None,
    runner=None,
    **learn,
) -> tuple[LearnResult, BayesNet, list]:
    """Structural EM (module docstring).  Returns (result, network with EM CPTs, score history).

    Every round's E-step is one pass over the (distinct, weighted) rows on ``runner`` (here when None; a
    :class:`~bnfk_core.data.runners.LocalRunner` or a Dask runner): :func:`expected_table`, exact.  The search
    between passes reads only those expected counts (:class:`ExpectedScorer`).  ``history`` lists the
    observed-data score (:func:`observed_score`) of every accepted network; it never decreases: a round whose
    network does not score higher ends the search and is discarded.  ``learn`` options go to
    :func:`bnfk_core.learning.structure.learn_structure` (``max_parents``, ``ess``, ...).
    The result's score is the searched score of the DAG (``score_name`` = ``score``) when no cell is missing,
    and otherwise the observed-data BIC of the network with its EM CPTs (:func:`observed_score`), under the
    name
    :data:`OBSERVED_SCORE`.

    ``round_search`` (:data:`ROUND_SEARCHES`) bounds the searches when ``method`` is ``hc`` and a cell is
    missing: ``climb`` (the default) starts from ``hc-greedy`` on the available-case counts (when ``start`` is
    None) and climbs greedily from the current network in every round (one ``hc-greedy`` climb, seed
    ``seed``, on the round's expected counts) while the observed-data score rises; ``climb-full`` does the
    same and, once a climb no longer raises the score, runs one round of the full ``hc`` search from the
    current network (the climbs go on after it while they raise the score); ``full`` runs the full search
    from the empty graph at the start and in every round.  Other methods run in full every round.  Every
    choice is deterministic for a seed.
    """
    if round_search not in ROUND_SEARCHES:
        raise StructureError(
            f"Unknown round search '{round_search}' of structural EM; choose one of "
            f"{', '.join(ROUND_SEARCHES)}."
        )
    t0 = time.perf_counter()
    blank = ~(np.asarray(data.codes) >= 0).any(axis=1)
    weights = _weights(data)
    n_blank = int(round(float(blank.sum() if weights is None else np.asarray(weights)[blank].sum())))
    if blank.any() and not blank.all():  # rows with no observed cell carry nothing: left out
        data = data.subset(~blank)
        weights = _weights(data)
    complete = not (np.asarray(data.codes) < 0).any()  # no missing cell: the first network is the answer
    bounded = round_search != "full" and str(method).lower() == "hc" and not complete
    label = None if start is None else start.method
    # the greedy climbs take no search budget (an option of hc's full search): it bounds each full search
    climb_learn = {k: v for k, v in learn.items() if k != "budget"}
    counted = None  # the start's available-case scorer: its tables give the first EM's first fit
    if start is None:
        counted = _available_case_scorer(data, score, learn, runner)
        first = (
            None if progress is None else (lambda f, msg: progress(0.3 * f, f"structural EM, start: {msg}"))
        )
        start = learn_structure(
            data,
            "hc-greedy" if bounded else method,  # bounded: the full search comes once, after the climbs
            score=score,
            seed=seed,
            scorer=counted,
            progress=first,
            **(climb_learn if bounded else learn),
        )
    label = label or str(method).lower()
    dag = start.dag
    whole = weights is None or np.array_equal(np.asarray(weights), np.round(weights))
    model, best = _em_scored(
        dag, data, params, pseudo_count, seed=seed, runner=runner, counted=counted if whole else None
    )
    del counted
    history, rounds, wide = [best], 0, 0
    too_big = None if complete else _table_too_big(data.codes, data.cardinalities)
    # too big: no rounds -- the available-case network, CPTs by EM, its observed-data score reported
    # climb rounds (round_search "climb", method hc) until a climb stops raising the score, then one full
    # search
    full_done = not bounded or round_search == "climb"  # climb: no full search at all
    full_next, climbs, fulls = not bounded, 0, 0
    # (model, scorer) of the last E-step: a rejected climb's round reuses it for the full search
    e_step = None
    for rounds in range(1, 0 if complete or too_big else int(max_rounds) + 1):
        climbing = not full_next
        kind = "climb" if climbing else ("full search" if bounded else "")
        step = None
        if progress is not None:
            lo = min(0.95, 0.3 + 0.7 * rounds / (max_rounds + 1))
            hi = min(0.95, 0.3 + 0.7 * (rounds + 1) / (max_rounds + 1))
            head = f"structural EM: round {rounds}" + (f" ({kind})" if kind else "") + f", score {best:.2f}"
            progress(lo, head)

            def step(f, msg, lo=lo, hi=hi, head=head):  # the round's search, within the round's share
                progress(lo + (hi - lo) * f, f"{head}: {msg}")

        if e_step is not None and e_step[0] is model:
            scorer = e_step[1]
        else:
            table, w, wide_codes, wide_w = expected_table(_bare(model), data.codes, weights, runner=runner)
            wide = max(wide, int(round(float(wide_w.sum()))))
            scorer = ExpectedScorer(
                table, w, data.cardinalities, score, model, wide_codes, wide_w, ess=learn.get("ess", 1.0)
            )
            e_step = (model, scorer)
        if climbing:
            climbs += 1
            options = dict(climb_learn, restarts=0, start=dag.parent_indices())
            res = learn_structure(
                data, "hc-greedy", score=score, seed=seed, scorer=scorer, progress=step, **options
            )
        else:
            fulls += 1
            options = dict(learn, start=dag.parent_indices()) if bounded else learn
            res = learn_structure(
                data, method, score=score, seed=seed, scorer=scorer, progress=step, **options
            )
            full_done, full_next = True, not bounded
        cand_dag = res.dag
        improved = False
        if scorer.total(dag.parent_indices()) < scorer.total(cand_dag.parent_indices()):
            cand, s = _em_scored(cand_dag, data, params, pseudo_count, seed=seed, runner=runner)
            improved = s > best + 1e-9 * max(1.0, abs(best))
        if not improved:
            if climbing and not full_done:
                full_next = True  # the climbs have stopped: one full search from here
                continue
            break  # the expected score does not prefer another DAG, or the observed score does not rise
        dag, model, best = cand_dag, cand, s
        history.append(s)
    n_total = int(round(float(np.asarray(weights).sum()))) if weights is not None else data.n_rows
    rows = (
        f"{n_total} rows ({n_blank} rows with no observed cell left out)"
        if n_blank
        else f"all {n_total} rows"
    )
    notes = [
        f"structural EM on {rows}: {len(history) - 1} improving round(s), observed-data BIC "
        f"{history[0]:.2f} -> {history[-1]:.2f}; expected counts exact (no sampled completion)"
    ]
    if bounded and climbs + fulls:
        notes.append(
            f"round searches: {climbs} greedy climb(s) from the current network and {fulls} full {method} "
            f"search(es) (round_search {round_search})"
        )
    if too_big:
        notes.append(too_big)
    if wide:
        notes.append(
            f"{wide} rows with more than {MAX_COMPLETIONS} joint completions were counted per family from "
            "their exact joint posterior instead of being enumerated"
        )
    if complete:
        # nothing to complete: the network is the search's, and so is its score -- the named score of the DAG
        # on every row (BIC at the maximum-likelihood parameters, BDeu, K2, ... as defined), not a likelihood
        # at the fitted (smoothed) CPTs
        res = LearnResult(
            dag=dag,
            method=label,
            score_name=start.score_name,
            score=float(start.score),
            n_rows_used=n_total,
            notes=list(start.notes) + ["no cell is missing: structural EM had nothing to complete"],
            seconds=time.perf_counter() - t0,
            searched_raw=start.searched_raw,
        )
    else:
        res = LearnResult(
            dag=dag,
            method=label,
            score_name=OBSERVED_SCORE,
            score=float(best),
            n_rows_used=n_total,
            notes=notes,
            seconds=time.perf_counter() - t0,
        )
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
    rows = _completed_rows(np.asarray(codes), cards)
    need = rows * (4 * len(cards) + 16)  # int32 codes and a float weight (and the merge's key)
    if need <= EM_TABLE_SHARE * budget:
        return None
    return (
        f"structural EM's expected table would hold {rows:,} completed rows (about {format_bytes(need)}), "
        "more "
        f"than a quarter of the memory limit ({format_bytes(budget)}): the search ran once, on every row's "
        "observed families (available case), and the CPTs were fitted by EM; raise --max-memory for the EM "
        "rounds"
    )


#: the widest table whose rows :func:`_completed_rows` counts by missingness pattern (2**20 patterns at most)
PATTERN_COUNT_COLUMNS = 20


def _completed_rows(codes: np.ndarray, cards) -> int:
    """The rows of structural EM's expected table: for every incomplete row, the joint states of its missing
    cells (the product of their cardinalities), capped at :data:`MAX_COMPLETIONS`.  The product depends on
    the row's missingness pattern alone, so a table of at most :data:`PATTERN_COUNT_COLUMNS` columns is
    counted by pattern (the rows of each pattern counted in one pass), a wider one row by row."""
    cards = np.asarray(cards, dtype=np.float64)
    d = codes.shape[1]
    if d <= PATTERN_COUNT_COLUMNS:
        per_pattern = np.bincount(pattern_keys(codes), minlength=1 << d)
        patterns = np.flatnonzero(per_pattern[1:]) + 1  # pattern 0: the complete rows
        # pattern_keys' bits, the first column the most significant
        missing = (patterns[:, None] >> np.arange(d - 1, -1, -1)) & 1
        joint = np.where(missing == 1, cards, 1.0).prod(axis=1)
        return int((np.minimum(joint, MAX_COMPLETIONS) * per_pattern[patterns]).sum())
    joint = np.ones(codes.shape[0])  # each row's joint states of its missing cells, column by column
    for j, c in enumerate(cards):
        joint[codes[:, j] < 0] *= c
    return int(np.minimum(joint[_incomplete_rows(codes)], MAX_COMPLETIONS).sum())


def _available_case_scorer(data, score: str, learn: dict, runner=None) -> AvailableCaseScorer:
    """The available-case scorer of ``data``; its batches of families are counted on ``runner``'s workers when
    the runner has a ``family_counter`` (Dask), else here."""
    return AvailableCaseScorer(
        data.codes,
        data.cardinalities,
        score,
        ess=learn.get("ess", 1.0),
        weights=_weights(data),
        counter=getattr(runner, "family_counter", None),
    )


def _learn_complete_rows(data, method, *, score="bic", **learn) -> LearnResult:
    return learn_structure(data, method, score=score, **learn)


def _learn_available_case(data, method, *, score="bic", **learn) -> LearnResult:
    return learn_structure(
        data, method, score=score, scorer=_available_case_scorer(data, score, learn), **learn
    )


def _learn_em(
    data,
    method,
    *,
    score="bic",
    params="smoothed",
    pseudo_count=1.0,
    max_rounds=10,
    round_search="climb",
    runner=None,
    **learn,
) -> LearnResult:
    res, model, _ = structural_em(
        data,
        method,
        score=score,
        params=params,
        pseudo_count=pseudo_count,
        max_rounds=max_rounds,
        round_search=round_search,
        runner=runner,
        **learn,
    )
    res.model = model  # the EM network (LearnResult.model), reused by learn_network
    return res


def learn_network(
    data,
    method: str,
    *,
    missing_data: str = DEFAULT_MISSING_DATA,
    score: str = "bic",
    params: str = "bdeu",
    pseudo_count: float = 1.0,
    em_cpts: bool = True,
    progress: Progress | None = None,
    score_options: dict | None = None,
    runner=None,
    **learn,
) -> tuple[LearnResult, BayesNet]:
    """Structure by ``missing_data`` (:data:`MISSING_DATA`) and CPTs by EM over the missing cells.

    ``em_cpts=False`` fits the CPTs by available-case counts only (the thesis's protocol).  ``learn``
    options go to :func:`bnfk_core.learning.structure.learn_structure`; ``runner`` runs the E-step passes
    (structural EM and the CPTs' EM) on a :mod:`bnfk_core.data.runners` runner.  A score with a scorer of its
    own (``kgv``, ``score_options``) is not a count score: its structure uses the complete rows whatever
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
            note = (
                f"the {score} score has its own scorer: its structure uses the complete rows "
                f"(not {spec.name})"
            )
        spec = MISSING_DATA["complete-rows"]
        learn["score_options"] = score_options
    extra = {"params": params, "pseudo_count": pseudo_count, "runner": runner} if spec.name == "em" else {}
    options = MISSING_DATA.validate(spec.name, {"score": score, "progress": progress, **extra, **learn})
    res = spec.learn(data, method, **options)
    if note:
        res.notes.append(note)
    model = res.model
    if model is None:
        model = (
            em_parameters(res.dag, data, params, pseudo_count, seed=learn.get("seed", 0), runner=runner)
            if em_cpts
            else fit(res.dag, data, method=params, pseudo_count=pseudo_count)
        )
    model.fit_info["missing_data"] = spec.name
    model.fit_info["cpts_by"] = "em" if em_cpts or spec.name == "em" else "available-case"
    return res, model


def check_missing_data(name) -> str:
    """``name`` (lower case) if it is a registered missing-data method, else a StructureError naming every
    method."""
    return MISSING_DATA.check(str(name).lower())
