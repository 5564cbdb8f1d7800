"""The exact E-step of EM over missing cells: expected family counts and observed-data log-likelihoods, one
pass over blocks of weighted rows on a runner.

For a row with missing cells M, P(x_M | x_obs) is proportional to the product of the CPT entries of the
families
*touching* M (a member in M); every other family is observed and cancels.  So a row's posterior, its share of
every touching family's expected counts and its log P(x_obs) minus its observed families' terms depend only on
the observed members of the touching families ("the row's context"): the rows of one missingness pattern with
the same context are merged into one, weighted by their total weight (:func:`touching_groups`), before their
completions are enumerated.  On a table of millions of mostly distinct rows the contexts of a pattern repeat a
lot (a single missing cell's context is its Markov blanket), which is what makes the E-step of a big table
cheap.

Rows whose missing cells have at most :data:`EM_MAX_COMPLETIONS` joint states are completed in every way
(exact enumeration); wider rows take the batched junction tree
(:func:`bnfk_core.inference.queries.family_posteriors`,
:func:`~bnfk_core.inference.queries.log_evidence`).  Nothing is sampled.  A pass maps blocks of rows
(:data:`EM_BLOCK_ROWS`) on a :mod:`bnfk_core.data.runners` runner (here or on Dask workers) and adds the
blocks' results, so the counts do not depend on how the rows were cut (to rounding).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..data.counts import code_matrix, dense_family_counts, merge_rows
from ..errors import ModelError
from ..inference.elimination import pattern_keys
from ..inference.queries import family_posteriors, log_evidence, missingness_patterns
from ..network.model import BayesNet

if TYPE_CHECKING:
    from .completions import Families

__all__ = [
    "MAX_COMPLETIONS",
    "EM_MAX_COMPLETIONS",
    "OFFSETS_MAX_CELLS",
    "OFFSETS_TOTAL_CELLS",
    "offsets_memo",
    "EM_BLOCK_ROWS",
    "TABLE_BLOCK_ROWS",
    "touching_groups",
    "observed_counts",
    "family_counts_part",
    "jobs_counts_part",
    "expected_family_counts",
    "table_part",
    "expected_table",
    "loglik_part",
    "log_likelihood_total",
    "run_parts",
    "job_blocks",
    "EM_ITEM_COMPLETIONS",
    "PreparedJobs",
    "prepare_jobs_part",
    "kept_counts_part",
    "kept_loglik_part",
    "item_cuts",
    "pattern_shards",
    "keep_jobs",
    "SHARDS_PER_WORKER",
]

#: an incomplete row is completed in all ways in the structural-EM table when its missing cells have at most
#: this many joint states; a row with more ("wide") is counted per family from its exact joint posterior
#: (:class:`bnfk_core.learning.incomplete.ExpectedScorer`).  (A completion costs one table row per family
#: count the search asks for; a wide row one blanket contraction per subset of its missing cells the search
#: touches: on the letter-like benchmark the two break even near a few thousand completions.)
MAX_COMPLETIONS = 4096
#: the CPTs' EM and the log-likelihood enumerate a row's completions up to this many (a few gathers each);
#: beyond, the row goes through the batched junction tree
EM_MAX_COMPLETIONS = 65536
#: rows per block of a pass of the CPTs' EM and of the log-likelihood (the items a runner maps)
EM_BLOCK_ROWS = 200_000
#: completions (rows x joint states of their missing cells) per item of a pass of the CPTs' EM
#: (:func:`job_blocks`):
#: a table below it is one item; the 2,000,000-row letter-like benchmark file's 443,121 merged rows make 16.7
#: million, eight items
EM_ITEM_COMPLETIONS = 1 << 21
#: rows per block of a structural-EM table pass (memory of one block's completions, up to
#: :data:`MAX_COMPLETIONS` a row)
TABLE_BLOCK_ROWS = 20_000
#: the largest table of completion offsets (touching families x joint states) the CPTs' EM lists for a group
#: of cells (:func:`completion_offsets`, 4 bytes each: 4 MiB), and :data:`OFFSETS_TOTAL_CELLS` for all groups
#: of one DAG together; a group beyond is completed by decoding every completion's digits
#: (:func:`complete_cells`, the same floats)
OFFSETS_MAX_CELLS = 1 << 20
#: the cells of completion offsets the CPTs' EM keeps for one DAG (4 bytes each: 256 MiB)
OFFSETS_TOTAL_CELLS = 1 << 26
#: completions (rows x joint states) built at once while enumerating one missingness pattern
_ENUM_CELLS = 400_000

_ZERO = (
    "A row has observed values that the model gives probability zero; fit the parameters with a pseudo-count "
    "(method 'smoothed')."
)


def _blocks(codes: np.ndarray, weights, rows: int | None = None) -> list:
    """The rows (codes, weights) in blocks of at most ``rows`` rows (:data:`EM_BLOCK_ROWS`): the items of a
    pass (:meth:`bnfk_core.data.runners.Runner.map`)."""
    step = int(EM_BLOCK_ROWS if rows is None else rows)
    w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    return [(codes[a : a + step], w[a : a + step]) for a in range(0, codes.shape[0], max(step, 1))]


def run_parts(runner, fn, items: list, args: tuple):
    """``fn(item, *args)`` of every item, on ``runner`` (here when None), in order."""
    if runner is None:
        return [fn(item, *args) for item in items]
    return list(runner.map(fn, items, args))


class _Shape:
    """What the E-step asks of a DAG about a set of missing cells, memoised (:func:`_shape`)."""

    def __init__(self, parents: tuple, cards: tuple):
        self.parents, self.cards = parents, cards
        self.families = [frozenset(ps) | {i} for i, ps in enumerate(parents)]
        self.memo: dict = {}

    def touching(self, cells) -> list:
        key = ("t", tuple(int(c) for c in cells))
        got = self.memo.get(key)
        if got is None:
            miss = set(key[1])
            got = self.memo[key] = [f for f, fam in enumerate(self.families) if miss & fam]
        return got

    def context(self, cells) -> list:
        key = ("c", tuple(int(c) for c in cells))
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = sorted(
                set().union(*(self.families[f] for f in self.touching(cells))) - set(key[1])
            )
        return got

    def components(self, missing) -> list:
        key = ("k", tuple(int(c) for c in missing))
        got = self.memo.get(key)
        if got is None:
            parent = {m: m for m in key[1]}

            def root(v):
                while parent[v] != v:
                    parent[v] = parent[parent[v]]
                    v = parent[v]
                return v

            for fam in self.families:
                ms = sorted(v for v in fam if v in parent)
                for v in ms[1:]:
                    parent[root(v)] = root(ms[0])
            groups: dict = {}
            for m in sorted(parent):
                groups.setdefault(root(m), []).append(m)
            got = self.memo[key] = sorted(groups.values())
        return got


@functools.lru_cache(maxsize=32)
def _shape_of(parents: tuple, cards: tuple) -> _Shape:
    return _Shape(parents, cards)


def _shape(model: BayesNet) -> _Shape:
    return _shape_of(
        tuple(tuple(int(p) for p in ps) for ps in model.parents), tuple(int(c) for c in model.cardinalities)
    )


def _touching(model: BayesNet, missing) -> list:
    """The families with a member in ``missing`` (the only factors of P(x_M | x_obs) that vary with x_M)."""
    return _shape(model).touching(missing)


def _context(model: BayesNet, missing) -> list:
    """The observed members of the families touching ``missing``: what a row's posterior depends on."""
    return _shape(model).context(missing)


def _cpt_index(model: BayesNet, i: int, table: np.ndarray) -> np.ndarray:
    """Flat index into ``model.cpts[i]`` (parent configuration * r_i + state) of every row of ``table`` whose
    family members are all observed."""
    cards = model.cardinalities
    idx = np.zeros(table.shape[0], dtype=np.int64)
    for p in model.parents[i]:
        idx *= int(cards[p])
        idx += table[:, p]
    idx *= int(cards[i])
    idx += table[:, i]
    return idx


def _log_joint_touching(model: BayesNet, block: np.ndarray, families: Sequence[int]) -> np.ndarray:
    """sum_i log P(x_i | pa_i) over ``families`` for every row of ``block`` (their members observed)."""
    ll = np.zeros(block.shape[0])
    with np.errstate(divide="ignore"):
        for i in families:
            ll += np.log(model.cpts[i].ravel()[_cpt_index(model, i, block)])
    return ll


def _completion_batches(codes: np.ndarray, rows: np.ndarray, missing, cards: list):
    """Every completion of ``rows`` (which share the missing set ``missing``), in sub-batches of at most about
    ``_ENUM_CELLS`` completed rows: yields ``(row indices, completions (len * K, n), K)``."""
    K = math.prod(cards[m] for m in missing)
    grid = np.stack(np.unravel_index(np.arange(K), [cards[m] for m in missing]), axis=1).astype(np.int32)
    step = max(1, _ENUM_CELLS // K)
    for a in range(0, len(rows), step):
        sub = rows[a : a + step]
        table = np.repeat(codes[sub].astype(np.int32), K, axis=0)
        table[:, missing] = np.tile(grid, (len(sub), 1))
        yield sub, table, K


def _posterior(ll: np.ndarray) -> np.ndarray:
    """Rows of log-weights (n, K) normalised to probabilities; a row of zero probability is a ModelError."""
    top = ll.max(axis=1)
    if not np.isfinite(top).all():
        raise ModelError(_ZERO)
    p = np.exp(ll - top[:, None])
    p /= p.sum(axis=1, keepdims=True)
    return p


def _enumerated(model: BayesNet, codes: np.ndarray, rows: np.ndarray, missing, cards: list):
    """Every completion of ``rows`` (which share the missing set) with P(x_M | x_obs), in sub-batches:
    yields ``(row indices, completions (len * K, n), posterior (len, K))``.  The posterior is the product of
    the CPT entries of the families touching M, normalised over the row's K completions: exact."""
    touch = _touching(model, missing)
    for sub, table, K in _completion_batches(codes, rows, missing, cards):
        yield sub, table, _posterior(_log_joint_touching(model, table, touch).reshape(len(sub), K))


def _merged(model: BayesNet, codes: np.ndarray, rows: np.ndarray, missing) -> tuple:
    """The rows of one missingness pattern grouped by their context (:func:`_context`): ``(first row of every
    group, the group of every row)``, groups in the order of their contexts."""
    ctx = _context(model, missing)
    if not ctx:
        return rows[:1], np.zeros(len(rows), dtype=np.int64)
    sub = codes[np.ix_(rows, ctx)].astype(np.int64)
    shape_cards = _shape(model).cards
    cards = [shape_cards[v] for v in ctx]
    if math.prod(cards) < 2**62:
        key = np.ravel_multi_index(tuple(sub.T), cards)
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(sub, axis=0, return_index=True, return_inverse=True)
    return rows[first], inv.ravel()


def _components(model: BayesNet, missing) -> list:
    """The missing cells in groups that share no family: P(x_M | x_obs) is the product of the groups'
    posteriors, each from the families touching its cells only (two cells are linked when a family holds
    both)."""
    return _shape(model).components(missing)


def _jobs(
    model: BayesNet, codes: np.ndarray, w: np.ndarray, rows: np.ndarray, missing, cap, merge_wide=True
) -> list:
    """The E-step's work for the rows of one missingness pattern: for every group C of the missing cells
    (:func:`_components`) the rows merged by C's context (:func:`_merged`) as ``(codes of one row per context,
    total weights, C)``; when a group has more than ``cap`` joint states, one item ``(codes, weights, None)``
    for the junction tree instead (rows merged by the context of all their missing cells unless ``merge_wide``
    is False)."""
    cards = _shape(model).cards
    comps = _components(model, missing)
    if any(math.prod(cards[m] for m in c) > cap for c in comps):
        if not merge_wide:
            return [(codes[rows], w[rows], None)]
        first, inv = _merged(model, codes, rows, missing)
        return [(codes[first], np.bincount(inv, weights=w[rows], minlength=len(first)), None)]
    out = []
    for c in comps:
        first, inv = _merged(model, codes, rows, c)
        out.append((codes[first], np.bincount(inv, weights=w[rows], minlength=len(first)), np.asarray(c)))
    return out


def touching_groups(model: BayesNet, codes: np.ndarray, weights=None, cap: int | None = None) -> list:
    """The incomplete rows of ``codes`` as E-step work (module docstring): for every missingness pattern and
    every group of its missing cells that share no family, ``(codes of one row per context, the context's
    total weight, the group's cells)`` (:func:`_jobs`; cells None: rows for the junction tree).  The share of
    the touching families' expected counts of a context's rows is that of its row times the total weight; the
    families a row observes whole are not represented (count them with :func:`observed_counts`)."""
    codes = np.asarray(codes)
    w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    cap = EM_MAX_COMPLETIONS if cap is None else cap
    return [
        job
        for rows, missing in missingness_patterns(codes)
        for job in _jobs(model, codes, w, rows, missing, cap)
    ]


def job_blocks(
    jobs: list, rows: int | None = None, cards: Sequence[int] | None = None, work: float | None = None
) -> list:
    """Jobs cut into items of at most ``rows`` rows (:data:`EM_BLOCK_ROWS`; a big job split): a pass's items.

    Given the variables' ``cards``, an item also holds at most ``work`` completions
    (:data:`EM_ITEM_COMPLETIONS`): a row of a job costs its joint completions, the product of its cells'
    cardinalities (a junction-tree row,
    :data:`EM_MAX_COMPLETIONS`).  So a big table's pass has items of about equal work, which a runner with
    several workers spreads evenly, while the items -- and the order their results are added in -- depend on
    the jobs alone: one process and a Dask cluster of any size add the same numbers in the same order.  The
    pieces keep the jobs' order."""
    step = max(int(EM_BLOCK_ROWS if rows is None else rows), 1)
    if cards is None or not jobs:
        return _row_blocks(jobs, step)
    cuts = item_cuts([(codes.shape[0], cells) for codes, _, cells in jobs], cards, step, work)
    return [[(jobs[j][0][a:b], jobs[j][1][a:b], jobs[j][2]) for j, a, b in item] for item in cuts]


def item_cuts(
    shapes: Sequence, cards: Sequence[int], rows: int | None = None, work: float | None = None
) -> list:
    """The items of :func:`job_blocks` from the jobs' shapes alone: ``shapes`` lists every job's ``(rows,
    cells)``; an item is a list of ``(job, first row, end row)``.  So the items of jobs made elsewhere (on the
    workers that grouped them, :func:`keep_jobs`) are cut as one process cuts them."""
    step = max(int(EM_BLOCK_ROWS if rows is None else rows), 1)
    budget = float(EM_ITEM_COMPLETIONS if work is None else work)
    items, cur, size, spent = [], [], 0, 0.0
    for j, (n, cells) in enumerate(shapes):
        cost = float(EM_MAX_COMPLETIONS if cells is None else math.prod(int(cards[m]) for m in cells))
        a, n = 0, int(n)
        while a < n:
            if cur and (size >= step or spent >= budget):
                items.append(cur)
                cur, size, spent = [], 0, 0.0
            take = min(n - a, step - size, max(1, math.ceil((budget - spent) / cost)))
            cur.append((j, a, a + take))
            size, spent, a = size + take, spent + take * cost, a + take
    if cur:
        items.append(cur)
    return items


#: pieces of incomplete rows a worker groups into E-step jobs (:func:`keep_jobs`), per worker
SHARDS_PER_WORKER = 2


def pattern_shards(codes: np.ndarray, weights: np.ndarray, n_shards: int) -> list:
    """The rows of ``codes`` (each with a missing cell) in :func:`missingness_patterns`' order -- the patterns
    in order, a pattern's rows in row order -- cut at pattern boundaries into at most ``n_shards`` pieces of
    about equal rows: ``[(codes, weights), ...]``.  :func:`touching_groups` of the pieces, one after the
    other, lists the very jobs of :func:`touching_groups` of all the rows (the same rows merged, the same
    weights added in the same order).  Tables of more than 62 columns are one piece."""
    codes = np.asarray(codes)
    weights = np.asarray(weights, dtype=float)
    n, d = codes.shape
    if n == 0 or d > 62 or n_shards <= 1:
        return [(codes, weights)]
    key = pattern_keys(codes)
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    bounds = np.append(starts, n)
    cuts, last = [0], 0
    for s in range(1, n_shards):
        at = int(bounds[np.searchsorted(bounds, s * n / n_shards)])
        if last < at < n:
            cuts.append(at)
            last = at
    cuts.append(n)
    # np.take gathers whole rows several times faster than indexing by an array (33 -> 9 ms, 1.16M x 17)
    return [(np.take(codes, order[a:b], axis=0), weights[order[a:b]]) for a, b in zip(cuts[:-1], cuts[1:])]


def shard_jobs_part(shard: tuple, model: BayesNet) -> list:
    """:func:`touching_groups` of one piece of :func:`pattern_shards` (on the worker that keeps it)."""
    codes, weights = shard
    return touching_groups(model, codes, weights)


def job_shapes_part(jobs: list) -> list:
    """Every job's ``(rows, cells)``: what :func:`item_cuts` needs of jobs kept elsewhere."""
    return [
        (int(codes.shape[0]), None if cells is None else tuple(int(c) for c in cells))
        for codes, _, cells in jobs
    ]


def take_jobs_part(jobs: list, cuts: list) -> list:
    """The pieces ``(job, first row, end row)`` of kept jobs (:func:`item_cuts`)."""
    return [(jobs[j][0][a:b], jobs[j][1][a:b], jobs[j][2]) for j, a, b in cuts]


def prepare_joined_part(pieces: list, model: BayesNet) -> PreparedJobs:
    """One item made of the pieces of one or more kept shards' jobs, made ready
    (:func:`prepare_jobs_part`)."""
    return PreparedJobs(model, [job for piece in pieces for job in piece])


def keep_jobs(runner, model: BayesNet, codes: np.ndarray, weights: np.ndarray) -> list:
    """The CPTs' EM's items (:func:`job_blocks` of :func:`touching_groups`), made ready on the workers of
    ``runner`` and kept there -- grouped there too: the incomplete rows go out in pieces of whole missingness
    patterns (:func:`pattern_shards`), each worker groups its pieces into jobs, only the jobs' shapes come
    back, the items are cut here as one process cuts them (:func:`item_cuts`), and each item is made from the
    pieces of the jobs it holds, on the worker holding them.  The items, their order and so every sum are one
    process's; a list of the runner's kept pieces for :func:`kept_counts_part` / :func:`kept_loglik_part`."""
    shards = pattern_shards(codes, weights, SHARDS_PER_WORKER * max(int(runner.n_workers), 1))
    held = runner.keep(shard_jobs_part, runner.send(shards), (model,))
    shapes = runner.map_kept(job_shapes_part, held)
    where = [(s, j) for s, shard in enumerate(shapes) for j in range(len(shard))]
    items = []
    for item in item_cuts([job for shard in shapes for job in shard], model.cardinalities):
        segments: list = []  # (shard, its pieces) in the item's order
        for j, a, b in item:
            s, local = where[j]
            if segments and segments[-1][0] == s:
                segments[-1][1].append((local, a, b))
            else:
                segments.append((s, [(local, a, b)]))
        items.append(segments)
    return runner.keep_joined(take_jobs_part, prepare_joined_part, held, items, (model,))


def _row_blocks(jobs: list, step: int) -> list:
    """:func:`job_blocks` by rows alone: a job cut every ``step`` rows, a piece starting a new item when it
    would pass ``step`` rows."""
    items, cur, size = [], [], 0
    for codes, w, cells in jobs:
        for a in range(0, codes.shape[0], step):
            piece = (codes[a : a + step], w[a : a + step], cells)
            if size + piece[0].shape[0] > step and cur:
                items.append(cur)
                cur, size = [], 0
            cur.append(piece)
            size += piece[0].shape[0]
    if cur:
        items.append(cur)
    return items


def observed_counts(model: BayesNet, codes: np.ndarray, weights=None) -> list:
    """For every family of ``model``, the (weighted) counts over the rows that observe it whole, shaped like
    its CPT (one compiled pass a family, :func:`bnfk_core.data.counts.dense_family_counts`)."""
    cards = [int(c) for c in model.cardinalities]
    cols = code_matrix(codes, cards)
    w = None if weights is None else np.asarray(weights, dtype=float)
    out = []
    for i in range(model.n_vars):
        ps = list(model.parents[i])
        if math.prod(cards[v] for v in ps + [i]) != model.cpts[i].size:
            raise ModelError(f"The CPT of variable {i} does not match its parents' cardinalities.")
        out.append(dense_family_counts(cols, i, ps, cards, w).reshape(model.cpts[i].shape))
    return out


@functools.cache
def _kernels():
    """The E-step's compiled kernels (:mod:`bnfk_core.learning.completions`), imported at their first use:
    numba comes with them, and a process that runs no E-step (a Dask client) never loads it."""
    from . import completions

    return completions


def _job_arrays(model: BayesNet, fams: Families, cells) -> tuple:
    """(cells, their cardinalities, touching families, member positions) as :func:`complete_cells` reads
    them."""
    sh = _shape(model)
    cells = [int(c) for c in cells]
    touch = sh.touching(cells)
    pos = {c: j for j, c in enumerate(cells)}
    mpos = np.full((len(touch), fams.members.shape[1]), -1, dtype=np.int64)
    for t, f in enumerate(touch):
        for q in range(int(fams.length[f])):
            mpos[t, q] = pos.get(int(fams.members[f, q]), -1)
    return (
        np.array(cells, dtype=np.int64),
        np.array([sh.cards[c] for c in cells], dtype=np.int64),
        np.array(touch, dtype=np.int64),
        mpos,
    )


class PreparedJobs:
    """E-step work made ready for EM under a fixed DAG: constant counts (the families a row observes whole)
    and jobs (:func:`_jobs`).  An iteration under new CPTs (:meth:`counts`) is one compiled pass over every
    job's rows that enumerates the completions of its cells (:func:`complete_cells`); the junction tree's rows
    are calibrated each time."""

    def __init__(
        self, model: BayesNet, jobs: list, const: np.ndarray | None = None, memo: dict | None = None
    ):
        cards = [int(c) for c in model.cardinalities]
        self.fams = _kernels().Families(model)
        self.const = np.zeros(int(self.fams.offset[-1])) if const is None else const
        # a group of cells' arrays and completion offsets (:func:`completion_offsets`), made once for every
        # job completing those cells (``memo`` may be shared by the items of one DAG)
        memo = {} if memo is None else memo
        self.jobs, wide, wide_w = [], [], []
        for codes, w, cells in jobs:
            if cells is None:
                wide.append(codes)
                wide_w.append(w)
                continue
            key = tuple(int(c) for c in cells)
            got = memo.get(key)
            if got is None:
                cells_a, ccards, touch, mpos = _job_arrays(model, self.fams, cells)
                size = len(touch) * math.prod(int(c) for c in ccards)
                used = memo.get("_cells", 0)
                chosen = memo.get("_chosen")
                if (
                    (key in chosen)
                    if chosen is not None
                    else (size <= OFFSETS_MAX_CELLS and used + size <= OFFSETS_TOTAL_CELLS)
                ):
                    memo["_cells"] = used + size
                    offsets = _kernels().completion_offsets(self.fams, ccards, touch, mpos)
                    got = (touch, mpos, offsets, None, None)
                else:  # too many completions to list their offsets: the digit loop (the same floats)
                    got = (touch, mpos, None, cells_a, ccards)
                memo[key] = got
            # the codes kept in their own integer type (1 byte a cell for the stream's tables, not 8)
            codes = np.asarray(codes)
            self.jobs.append(
                (
                    np.ascontiguousarray(codes, dtype=codes.dtype if codes.dtype.kind == "i" else np.int64),
                    np.ascontiguousarray(w, dtype=float),
                )
                + got
            )
        self.wide_codes = np.concatenate(wide) if wide else np.zeros((0, len(cards)), dtype=np.int64)
        self.wide_w = np.concatenate(wide_w) if wide else np.zeros(0)

    @classmethod
    def of_block(cls, block, model: BayesNet, cap: int | None = None) -> PreparedJobs:
        """A block of weighted rows: its observed families counted, its incomplete rows as jobs."""
        codes, w = block
        codes = np.asarray(codes)
        w = np.asarray(w, dtype=float)
        const = np.concatenate([c.ravel() for c in observed_counts(model, codes, w)])
        return cls(model, touching_groups(model, codes, w, cap), const)

    def _complete(self, job: tuple, logt: np.ndarray, out: np.ndarray, lse: np.ndarray) -> bool:
        """One job's compiled pass (:func:`complete_offsets` when its group's offsets were made, else
        :func:`complete_cells`): expected counts added to ``out`` (none when empty), each row's log-sum in
        ``lse``; False for a row of probability zero."""
        codes, w, touch, mpos, delta, cells, ccards = job
        f, k = self.fams, _kernels()
        if delta is not None:
            return k.complete_offsets(
                codes, w, touch, mpos, delta, f.members, f.strides, f.length, f.offset, logt, out, lse
            )
        return k.complete_cells(
            codes, w, cells, ccards, touch, mpos, f.members, f.strides, f.length, f.offset, logt, out, lse
        )

    def counts(self, model: BayesNet) -> list:
        f = self.fams
        logt = f.logs(model)
        flat = self.const.copy()
        for job in self.jobs:
            if not self._complete(job, logt, flat, np.empty(job[0].shape[0])):
                raise ModelError(_ZERO)
        out = f.split(flat)
        if len(self.wide_codes):
            for i, (r, F) in family_posteriors(model, self.wide_codes).items():
                out[i] = out[i] + (self.wide_w[r] @ F).reshape(out[i].shape)
        return out

    def loglik(self, model: BayesNet) -> float:
        """The jobs' rows' share of sum_n w_n log P(x_obs,n) beyond the families they observe whole: for each
        job, w log sum over its group's completions of the product of the touching families
        (:func:`complete_cells`, one compiled pass, as :func:`loglik_part`); a junction-tree row, log P(x_obs)
        (:func:`log_evidence`) less its
        observed families.  Add the observed families' counts times their log CPT entries for the whole
        log-likelihood."""
        f = self.fams
        logt = f.logs(model)
        none, total = np.zeros(0), 0.0
        for job in self.jobs:
            lse = np.empty(job[0].shape[0])
            if not self._complete(job, logt, none, lse):
                return -math.inf
            total += float(lse @ job[1])
        if len(self.wide_codes):
            wc = np.ascontiguousarray(self.wide_codes, dtype=np.int64)
            total += float(log_evidence(model, wc) @ self.wide_w) - float(
                _kernels().observed_loglik(
                    wc,
                    np.ascontiguousarray(self.wide_w, dtype=float),
                    f.members,
                    f.strides,
                    f.length,
                    f.offset,
                    logt,
                )
            )
        return total


def offsets_memo(model: BayesNet, items: list) -> dict:
    """A memo for the :class:`PreparedJobs` of ``items`` (:func:`job_blocks` of one DAG's jobs) that lists the
    completion offsets of the groups of cells with the most rows first, within :data:`OFFSETS_MAX_CELLS` for a
    group and :data:`OFFSETS_TOTAL_CELLS` for all (a group's offsets serve every row completing its cells, so
    the groups with many rows save the most per cell kept); the other groups take the digit loop (the same
    floats)."""
    rows: dict = {}
    for item in items:
        for codes, _, cells in item:
            if cells is not None:
                key = tuple(int(c) for c in cells)
                rows[key] = rows.get(key, 0) + int(codes.shape[0])
    sh = _shape(model)
    chosen, used = set(), 0
    for key in sorted(rows, key=lambda k: (-rows[k], k)):
        size = len(sh.touching(key)) * math.prod(sh.cards[c] for c in key)
        if size <= OFFSETS_MAX_CELLS and used + size <= OFFSETS_TOTAL_CELLS:
            chosen.add(key)
            used += size
    return {"_chosen": chosen}


def family_counts_part(block, model: BayesNet, cap: int | None = None) -> list:
    """E[N_ijk | x_obs, model] of every family of ``model`` over one block of weighted rows, each shaped like
    its CPT.  A family observed in a row is counted; a row with a missing family member adds its posterior: by
    enumerating the completions of each group of its missing cells that share no family (:func:`_components`)
    when the group has at most ``cap`` (:data:`EM_MAX_COMPLETIONS`) joint states (their probabilities the
    product of the CPT entries of the families touching the group, normalised per row; rows of one pattern and
    context once), else from the batched junction tree's clique beliefs
    (:func:`bnfk_core.inference.queries.family_posteriors`:
    a family lies in one clique, so a row's calibrated tree gives the posterior of every family at once).
    Exact: no completion is sampled."""
    return PreparedJobs.of_block(block, model, cap).counts(model)


def jobs_counts_part(jobs: list, model: BayesNet) -> list:
    """The touching families' expected counts of one item of :func:`touching_groups` jobs
    (:func:`job_blocks`)."""
    return PreparedJobs(model, jobs).counts(model)


def prepare_jobs_part(jobs: list, model: BayesNet) -> PreparedJobs:
    """One item of :func:`touching_groups` jobs (:func:`job_blocks`) made ready for EM under ``model``'s DAG:
    what a runner keeps on a worker between the iterations (:func:`kept_counts_part`,
    :func:`kept_loglik_part`)."""
    return PreparedJobs(model, jobs)


def kept_counts_part(prepared: PreparedJobs, model: BayesNet) -> list:
    """The touching families' expected counts of kept jobs under ``model``'s CPTs
    (:meth:`PreparedJobs.counts`)."""
    return prepared.counts(model)


def kept_loglik_part(prepared: PreparedJobs, model: BayesNet) -> float:
    """The kept jobs' share of the log-likelihood under ``model``'s CPTs (:meth:`PreparedJobs.loglik`)."""
    return prepared.loglik(model)


def expected_family_counts(
    model: BayesNet,
    codes: np.ndarray,
    weights=None,
    *,
    runner=None,
    block_rows: int | None = None,
    max_completions: int | None = None,
) -> list:
    """E[N_ijk | x_obs, model] of every family of ``model`` (one array per variable, shaped like its CPT),
    summed over blocks of the weighted rows on ``runner`` (:func:`family_counts_part`; one pass)."""
    parts = run_parts(
        runner, family_counts_part, _blocks(np.asarray(codes), weights, block_rows), (model, max_completions)
    )
    total = [np.zeros(c.shape) for c in model.cpts]
    for part in parts:
        for i, c in enumerate(part):
            total[i] += c
    return total


def table_part(block, model: BayesNet, cap: int) -> tuple:
    """One block of a structural-EM E-step: ``(table, weights, wide codes, wide weights)``.

    Complete rows are their own completion; a row whose missing cells have at most ``cap`` joint states is
    replaced by every completion x_M, weighted w_n P(x_M | x_obs,n) -- the product of the CPT entries of the
    families touching M (the others cancel), normalised over the row's completions: exact.  Equal completed
    rows are merged (:func:`merge_rows`).  Rows with more joint states ("wide" rows) are returned as they are:
    the search counts them per family from their exact joint posterior (:class:`ExpectedScorer`)."""
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


def expected_table(
    model: BayesNet,
    codes: np.ndarray,
    weights=None,
    *,
    max_completions: int | None = None,
    runner=None,
    block_rows: int | None = None,
) -> tuple:
    """The structural-EM E-step: ``(table, weights, wide codes, wide weights)`` (:func:`table_part` on blocks
    of the weighted rows on ``runner``, merged).  ``max_completions`` (default :data:`MAX_COMPLETIONS`) is the
    ``cap``; ``max_completions=math.inf`` enumerates every row (no wide rows: small tables only)."""
    cap = MAX_COMPLETIONS if max_completions is None else max_completions
    parts = run_parts(
        runner,
        table_part,
        _blocks(np.asarray(codes), weights, TABLE_BLOCK_ROWS if block_rows is None else block_rows),
        (model, cap),
    )
    cards = [int(c) for c in model.cardinalities]
    table, weight = merge_rows(
        np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), cards
    )
    wide_codes = np.concatenate([p[2] for p in parts]) if parts else np.zeros((0, len(cards)), dtype=np.int32)
    wide_w = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0)
    return table, weight, wide_codes, wide_w


def loglik_part(block, model: BayesNet) -> float:
    """sum_n w_n log P(x_obs,n) over one block of weighted rows, exact: every row's observed families by their
    CPT entries, plus, for a row with missing cells, for each group of them that shares no family
    (:func:`_jobs`), log sum over the group's completions of the product of the families touching it (rows of
    one pattern and context once, :func:`complete_cells`); a row with a group of more than
    :data:`EM_MAX_COMPLETIONS` joint states is marginalised by the junction tree instead
    (:func:`bnfk_core.inference.queries.log_evidence`)."""
    codes, w = block
    codes = np.asarray(codes)
    w = np.asarray(w, dtype=float)
    k = _kernels()
    f = k.Families(model)
    logt = f.logs(model)
    obs_w = w.copy()
    total, none = 0.0, np.zeros(0)
    for rows, missing in missingness_patterns(codes):
        for jc, jw, cells in _jobs(model, codes, w, rows, missing, EM_MAX_COMPLETIONS, merge_wide=False):
            if cells is None:
                obs_w[rows] = 0.0
                total += float(log_evidence(model, jc) @ jw)
                continue
            lse = np.empty(jc.shape[0])
            if not k.complete_cells(
                np.ascontiguousarray(jc, dtype=np.int64),
                jw,
                *_job_arrays(model, f, cells),
                f.members,
                f.strides,
                f.length,
                f.offset,
                logt,
                none,
                lse,
            ):
                return -math.inf
            total += float(lse @ jw)
    return float(
        total
        + k.observed_loglik(
            np.ascontiguousarray(codes, dtype=np.int64), obs_w, f.members, f.strides, f.length, f.offset, logt
        )
    )


def log_likelihood_total(model: BayesNet, codes: np.ndarray, weights=None, *, runner=None) -> float:
    """sum_n w_n log P(x_obs,n) over every row (:func:`loglik_part` on blocks of the rows on ``runner``)."""
    return float(sum(run_parts(runner, loglik_part, _blocks(np.asarray(codes), weights), (model,))))
