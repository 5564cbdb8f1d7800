"""Decomposable local scores of Bayesian-network families from a code matrix.

Every score is a log-score (natural logarithm, higher is better) that decomposes over families
(a child and its parents):

- ``bic``  : log-likelihood − ½ log N · q (r − 1)
- ``aic``  : log-likelihood − q (r − 1)
- ``k2``   : Cooper & Herskovits (1992), all Dirichlet pseudo-counts 1
- ``bdeu`` : Heckerman et al. (1995), equivalent sample size ``ess`` spread uniformly
- ``qnml`` : quotient NML (Silander et al. 2018; thesis eq. 2.9)

where r is the child's cardinality, q the number of parent configurations ∏ r_p and N the number
of rows.  The code matrix holds state indices with ``-1`` for a missing cell; structure scores use
the rows without any missing cell (:func:`complete_codes`), so all local scores of one DAG are
computed on the same rows and add up to a comparable total.

Counting is vectorised (:mod:`bnfk_core.data.counts`, re-exported here): parent configurations are mixed-radix
codes (re-compressed with ``np.unique`` before they could overflow) and family counts one ``np.bincount``;
only observed parent configurations are materialised, so a family with 20 parents costs O(N), not ∏ r_p.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import gammaln, xlogy

from ..data.counts import (
    code_matrix,
    complete_codes,
    config_index,
    counts_from_columns,
    dense_cells,
    dense_family_counts,
    family_counts,
    weighted_bincount,
)
from ..errors import StructureError
from ..registry import SCORES
from .member_tables import MemberTables

__all__ = [
    "SCORES",
    "complete_codes",
    "family_counts",
    "total_score",
    "log_likelihood",
    "bic",
    "aic",
    "k2",
    "bdeu",
    "qnml",
    "local_score",
    "log_multinomial_normalizer",
    "LocalScorer",
    "score_dag",
    "scorer_for",
    "parameter_count",
    "weighted_bincount",
    "config_index",
    "counts_from_columns",
    "score_from_counts",
]

#: Up to this alphabet size K the multinomial normaliser is computed exactly by the
#: Kontkanen–Myllymäki recurrence; above it by the Szpankowski–Weinberger asymptotic formula
#: (absolute error below 2e-5 in log C there; checked in the tests).
EXACT_NORMALIZER_MAX_K = 16384


# ---------------------------------------------------------------------- normaliser
_NORMALIZER_TABLES: dict[int, np.ndarray] = {}


def _log_c2(n: int) -> float:
    """log C(n, 2) = log Σ_h binom(n,h) (h/n)^h ((n−h)/n)^(n−h)."""
    h = np.arange(n + 1, dtype=float)
    terms = gammaln(n + 1) - gammaln(h + 1) - gammaln(n - h + 1) + xlogy(h, h / n) + xlogy(n - h, (n - h) / n)
    return _logsumexp(terms)


def _logsumexp(a: np.ndarray) -> float:
    """log sum exp(a) of a finite 1-D array, as scipy.special.logsumexp (1.17) computes it, step for step (the
    maxima separated out: log1p(sum of the others' exp(a - max) / m) + log m + max, m = how many maxima) --
    the same float without scipy's array-API dispatch, which cost more than the sum here."""
    a_max = a.max()
    mask = a == a_max
    m = float(np.count_nonzero(mask))
    s = np.sum(np.exp(np.where(mask, -np.inf, a) - a_max))
    if s != 0:
        s = s / m
    return float(np.log1p(s) + np.log(m) + a_max)


def _exact_table(n: int, k_max: int) -> np.ndarray:
    """log C(n, K) for K = 0..k_max (index 0 unused), extended and cached per n."""
    table = _NORMALIZER_TABLES.get(n)
    if table is not None and table.size > k_max:
        return table
    size = max(k_max + 1, 64, 0 if table is None else 2 * table.size)
    size = min(size, EXACT_NORMALIZER_MAX_K + 1) if k_max <= EXACT_NORMALIZER_MAX_K else k_max + 1
    new = np.zeros(size)
    start = 1
    if table is not None:
        new[: table.size] = table
        start = table.size
    if start <= 1:
        new[1] = 0.0
        start = 2
    if start <= 2 and size > 2:
        new[2] = _log_c2(n)
        start = 3
    log_n = math.log(n)
    prev2, prev1 = new[start - 2], new[start - 1]
    for k in range(start, size):
        # C(n, k) = C(n, k-1) + n/(k-2) C(n, k-2)
        cur = np.logaddexp(prev1, log_n - math.log(k - 2) + prev2)
        new[k] = cur
        prev2, prev1 = prev1, cur
    _NORMALIZER_TABLES[n] = new
    return new


def _log_normalizer_asymptotic(n: int, k: float) -> float:
    """Szpankowski & Weinberger (2012) for alphabet size k = α n:
    log C ≈ n (log α + (α+2) log C_α − 1/C_α) − ½ log(C_α + 2/α), C_α = ½ + ½ √(1 + 4/α)."""
    a = k / n
    ca = 0.5 + 0.5 * math.sqrt(1.0 + 4.0 / a)
    return n * (math.log(a) + (a + 2.0) * math.log(ca) - 1.0 / ca) - 0.5 * math.log(ca + 2.0 / a)


def log_multinomial_normalizer(n: int, k) -> float:
    """log C(n, k): the NML normaliser (parametric complexity) of a k-valued multinomial on n rows.

    C(n, k) = Σ over count vectors (h_1..h_k) summing to n of n!/∏h_j! ∏(h_j/n)^{h_j}.
    Computed exactly for k ≤ :data:`EXACT_NORMALIZER_MAX_K` with the linear-time recurrence of
    Kontkanen & Myllymäki (2007): C(n,1) = 1, C(n,2) by direct summation,
    C(n,k+2) = C(n,k+1) + n/k · C(n,k) (in logs, cached per n); for larger k (huge collapsed
    parent sets) with the Szpankowski–Weinberger asymptotic approximation, whose error there is
    below 2e-5 nats.  C(0, k) = 1.
    """
    n = int(n)
    if k < 1:
        raise ValueError(f"Alphabet size must be at least 1, got {k}.")
    if n <= 0 or k == 1:
        return 0.0
    if k > EXACT_NORMALIZER_MAX_K:
        return _log_normalizer_asymptotic(n, float(k))
    return float(_exact_table(n, int(k))[int(k)])


# ---------------------------------------------------------------------- scores from counts
def _ll(counts: np.ndarray) -> float:
    nij = counts.sum(axis=1)
    return float(xlogy(counts, counts).sum() - xlogy(nij, nij).sum())


def score_from_counts(counts: np.ndarray, r: int, q: int, n: int, score: str, ess: float) -> float:
    """The local score of one family from its (q, r) count table: ``bic``, ``aic``, ``k2``, ``bdeu`` or
    ``qnml`` (natural log, higher is better; thesis §2.1.2), ``n`` the family's row count and ``ess`` BDeu's
    sample size."""
    if score == "bic":
        return _ll(counts) - 0.5 * math.log(n) * float(q) * (r - 1) if n > 0 else 0.0
    if score == "aic":
        return _ll(counts) - float(q) * (r - 1)
    if score == "k2":
        nij = counts.sum(axis=1)
        return float(counts.shape[0] * gammaln(r) - gammaln(nij + r).sum() + gammaln(counts + 1).sum())
    if score == "bdeu":
        a_j = ess / float(q)
        a_jk = a_j / r
        nij = counts.sum(axis=1)
        return float(
            counts.shape[0] * (gammaln(a_j) - r * gammaln(a_jk))
            - gammaln(nij + a_j).sum()
            + gammaln(counts + a_jk).sum()
        )
    if score == "qnml":
        return _ll(counts) - log_multinomial_normalizer(n, q * r) + log_multinomial_normalizer(n, q)
    if score == "loglik":
        return _ll(counts)
    raise StructureError(f"Unknown score '{score}'; choose one of {', '.join(SCORES)}.")


def _check_score(score: str) -> str:
    s = str(score).lower()
    if s not in SCORES and s != "loglik":
        raise StructureError(f"Unknown score '{score}'; choose one of {', '.join(SCORES)}.")
    return s


# ---------------------------------------------------------------------- cached scorer
class LocalScorer:
    """Cached local scores ``scorer(child, parents)`` on the complete rows of a code matrix.

    Parameters
    ----------
    codes : int array (N, n), ``-1`` = missing; rows with a missing cell are dropped.
    cards : cardinality of every column.
    score : one of :data:`SCORES`.
    ess : equivalent sample size of ``bdeu``.
    weights : optional int array (N,): row ``n`` stands for ``weights[n]`` identical rows (the
        distinct rows of a table with their multiplicities, :mod:`bnfk_core.data.stream`).  Every count,
        and so every score, is the same as on the expanded rows; ``n`` is the weighted row count.
        Float weights (expected counts of completed rows, :mod:`bnfk_core.learning.incomplete`) give
        fractional counts; ``n`` is then their sum rounded to an integer.

    Subclasses may count differently (:class:`bnfk_core.learning.incomplete.AvailableCaseScorer`): a local
    score reads :meth:`counts` and :meth:`family_n` only.
    """

    def __init__(
        self,
        codes: np.ndarray,
        cards: Sequence[int],
        score: str = "bic",
        ess: float = 1.0,
        weights: np.ndarray | None = None,
    ):
        self.score = _check_score(score)
        if self.score in SCORES and SCORES[self.score].scorer is not None:
            raise StructureError(
                f"Score '{self.score}' is not computed from counts; build it with scorer_for."
            )
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(cards):
            raise StructureError(
                f"The code matrix has {codes.shape[-1]} columns but {len(cards)} cardinalities were given."
            )
        self.ess = float(ess)
        if self.score == "bdeu" and not self.ess > 0:
            raise StructureError(f"The BDeu equivalent sample size must be positive, got {ess}.")
        complete = ~(codes < 0).any(axis=1)
        data = codes[complete]
        if weights is None:
            self.weights = None
            self.n_rows_total = int(codes.shape[0])
            self.n = int(data.shape[0])
        else:
            weights = np.asarray(weights)
            if weights.shape != (codes.shape[0],) or weights.dtype.kind not in "iuf" or (weights < 0).any():
                raise StructureError(
                    "Row weights must be one non-negative number per row of the code matrix."
                )
            wtype = np.float64 if weights.dtype.kind == "f" else np.int64
            self.weights = np.ascontiguousarray(weights[complete], dtype=wtype)
            self.n_rows_total = int(round(float(weights.sum())))
            self.n = int(round(float(self.weights.sum())))
        self.cards = [int(r) for r in cards]
        if data.size and (data.max(axis=0) >= np.asarray(self.cards)).any():
            bad = int(np.flatnonzero(data.max(axis=0) >= np.asarray(self.cards))[0])
            raise StructureError(f"Column {bad} holds a code beyond its cardinality {self.cards[bad]}.")
        # one row per column in the narrowest integer type holding every code (counting widens to int64): 1
        # byte a cell, not 8; the compiled counters read the matrix, the rest its rows
        self._colmat = code_matrix(data, self.cards)
        self.cols = list(self._colmat)
        # the weights as the compiled counters add them (float64), and whether counts are integers
        self._wf = None if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        self._int = self.weights is None or self.weights.dtype.kind != "f"
        self.cache: dict[tuple[int, tuple[int, ...]], float] = {}
        # the searches' gains of adding one parent, per family (hill_climb.GainRows)
        self.gain_rows: dict = {}
        self._members = None  # the members' tables, once a search asks for a batch (:meth:`prefetch`)

    @property
    def n_vars(self) -> int:
        return len(self.cards)

    @property
    def passes(self) -> int:
        """Member sets a batch has counted so far (one pass over the rows each; :meth:`prefetch`)."""
        return 0 if self._members is None else self._members.passes

    def _dense(self, key: tuple) -> bool:
        """Whether family ``key`` ((child, sorted parents)) is counted as a dense table
        (:func:`~bnfk_core.data.counts.dense_cells` on the rows held)."""
        return dense_cells([self.cards[p] for p in key[1]] + [self.cards[key[0]]], self.n_distinct)

    def prefetch(self, keys) -> None:
        """Count, in one batch on numba's threads, the members' tables of the dense families among ``keys``
        ((child, sorted parents) pairs) not scored yet
        (:class:`~bnfk_core.learning.member_tables.MemberTables`:
        the families with the same members share one pass; a search calls this with every family one move
        reads). The tables hold the floats one family's pass gives, so the scores do not change."""
        if self._members is None:
            self._members = MemberTables(self._colmat, self.cards, self._wf)
        self._members.prefetch(
            [
                tuple(sorted((key[0], *key[1])))
                for key in keys
                if key not in self.cache and self._dense(key) and self._members.fits((key[0], *key[1]))
            ]
        )

    def counts(self, child: int, parents: Sequence[int] = ()) -> np.ndarray:
        """The (J, r) counts of a family: one row per observed parent configuration (increasing mixed-radix
        order, the first parent most significant), as :func:`~bnfk_core.data.counts.counts_from_columns` gives
        them -- by one compiled pass when the family's table is dense
        (:func:`~bnfk_core.data.counts.dense_family_counts`, or the members' table a batch counted:
        :meth:`prefetch`)."""
        parents = sorted(int(p) for p in parents)
        key = (int(child), tuple(parents))
        if self._dense(key):
            if self._members is not None and self._members.fits((key[0], *key[1])):
                return self._from_dense(key, self._members.family(child, parents))
            return self._from_dense(
                key, dense_family_counts(self._colmat, child, parents, self.cards, self._wf)
            )
        return counts_from_columns(
            self.cols[child],
            self.cards[child],
            [self.cols[p] for p in parents],
            [self.cards[p] for p in parents],
            self.n_distinct,
            self.weights,
        )

    def _from_dense(self, key: tuple, table: np.ndarray) -> np.ndarray:
        """A family's dense (q, r) float table as :meth:`counts` returns it: the observed configurations'
        rows, integers when the weights are (the same arrays as ``np.bincount``'s)."""
        table = table[table.sum(axis=1) > 0]
        return np.rint(table).astype(np.int64) if self._int else table

    def _value(self, key: tuple, counts: np.ndarray) -> float:
        """The local score of family ``key`` from its counts."""
        child, ps = key
        return score_from_counts(
            counts, self.cards[child], self.n_configs(ps), self.family_n(child, ps), self.score, self.ess
        )

    @property
    def n_distinct(self) -> int:
        """Rows held (complete ones): ``n`` without weights, the distinct rows with them."""
        return int(self.cols[0].shape[0]) if self.cols else self.n

    def n_configs(self, parents: Sequence[int]) -> int:
        return math.prod(self.cards[p] for p in parents)

    def family_n(self, child: int, parents: Sequence[int] = ()) -> int:
        """The rows a family's score is computed on (here the same ``n`` for every family)."""
        return self.n

    def penalty(self, child: int, parents: Sequence[int]) -> float:
        """An upper bound of −score for BIC, AIC and qNML (score = LL − penalty with LL ≤ 0);
        it grows with the parent set, which :mod:`learn` uses to prune the exact search."""
        q, r = self.n_configs(parents), self.cards[child]
        if self.score == "bic":
            return 0.5 * math.log(self.n) * q * (r - 1) if self.n > 0 else 0.0
        if self.score == "aic":
            return float(q * (r - 1))
        if self.score == "qnml":
            return log_multinomial_normalizer(self.n, q * r) - log_multinomial_normalizer(self.n, q)
        raise StructureError(f"Score '{self.score}' has no penalty bound.")

    def __call__(self, child: int, parents: Sequence[int] = ()) -> float:
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        val = self.cache.get(key)
        if val is None:
            child, ps = key
            if child in ps:
                raise StructureError(f"Column {child} cannot be its own parent.")
            val = self._value(key, self.counts(child, ps))
            self.cache[key] = val
        return val

    def total(self, parent_indices: Sequence[Sequence[int]]) -> float:
        """Total score of a DAG given as the parent indices of every column."""
        return total_score(self, parent_indices)


def total_score(scorer, parent_indices: Sequence[Sequence[int]]) -> float:
    """Σ_i scorer(i, π_i): the decomposable score of a DAG given as every column's parent indices (any scorer
    with ``n_vars`` and ``scorer(child, parents)``)."""
    if len(parent_indices) != scorer.n_vars:
        raise StructureError(f"The DAG has {len(parent_indices)} nodes but the data {scorer.n_vars} columns.")
    return float(sum(scorer(i, ps) for i, ps in enumerate(parent_indices)))


# ---------------------------------------------------------------------- function API
def scorer_for(
    codes,
    cards,
    score: str = "bic",
    *,
    ess: float = 1.0,
    weights=None,
    numbers=None,
    options: dict | None = None,
):
    """The cached local scorer of ``score``: a :class:`LocalScorer` for the count scores, the
    registered ``scorer`` factory otherwise (``numbers``: column index -> raw values of the columns
    such a score may search as numbers; ``options``: its own options, e.g. KGV's ``kappa``)."""
    s = _check_score(score)
    if s in SCORES:  # a typo or a bad value: one sentence, before counting
        SCORES.validate(s, {"ess": ess, **(options or {})})
    spec = SCORES.get(s)
    if spec is not None and spec.scorer is not None:
        return spec.scorer(codes, cards, weights=weights, numbers=numbers, ess=ess, **(options or {}))
    return LocalScorer(codes, cards, s, ess=ess, weights=weights)


def local_score(
    codes, cards, child: int, parents: Sequence[int] = (), score: str = "bic", *, ess: float = 1.0
) -> float:
    """Local score of one family on the complete rows of ``codes`` (see the module docstring).

    Parameters
    ----------
    codes : numpy.ndarray
        (N, n) int codes, -1 = missing; the rows with a missing cell are left out.
    cards : sequence of int
        r_s of every column.
    child : int
    parents : sequence of int
    score : str
        ``bic``, ``aic``, ``k2``, ``bdeu`` or ``qnml``.
    ess : float
        BDeu's equivalent sample size α.

    Returns
    -------
    float
        The local score (log scale, higher is better).

    Raises
    ------
    StructureError
        An unknown score.
    """
    return scorer_for(codes, cards, score, ess=ess)(child, parents)


def log_likelihood(codes, cards, child, parents=()) -> float:
    """Maximum log-likelihood Σ N_ijk log(N_ijk / N_ij) of a family on the complete rows."""
    return local_score(codes, cards, child, parents, "loglik")


def bic(codes, cards, child, parents=()) -> float:
    """Local BIC: LL − ½ log N · q (r − 1); arguments as :func:`local_score`.

    References
    ----------
    Thesis App. A.2.2, eqs. (A.12) and (A.14).
    """
    return local_score(codes, cards, child, parents, "bic")


def aic(codes, cards, child, parents=()) -> float:
    """Local AIC: LL − q (r − 1); arguments as :func:`local_score`.

    References
    ----------
    Thesis App. A.2.2, eqs. (A.12) and (A.13).
    """
    return local_score(codes, cards, child, parents, "aic")


def k2(codes, cards, child, parents=()) -> float:
    """Local K2: Σ_j [log Γ(r) − log Γ(N_ij + r) + Σ_k log Γ(N_ijk + 1)]; arguments as :func:`local_score`.

    References
    ----------
    Thesis App. A.2.1, eq. (A.7) with every α_ijk = 1 (Cooper & Herskovits 1992).
    """
    return local_score(codes, cards, child, parents, "k2")


def bdeu(codes, cards, child, parents=(), ess: float = 1.0) -> float:
    """Local BDeu with α_ij = ess/q, α_ijk = ess/(q r); arguments as :func:`local_score`.

    References
    ----------
    Thesis App. A.2.1, eqs. (A.7)–(A.10).
    """
    return local_score(codes, cards, child, parents, "bdeu", ess=ess)


def qnml(codes, cards, child, parents=()) -> float:
    """Local qNML (thesis eq. 2.9): log P¹_NML(D_{i∪π_i}) − log P¹_NML(D_{π_i}).

    P¹_NML(D_S) = P_ML(D_S) / C(N, ∏_{s∈S} r_s) treats S as one collapsed variable, so the local
    score is LL(i | π_i) − log C(N, q r) + log C(N, q) (see :func:`log_multinomial_normalizer`).
    Arguments as :func:`local_score`.

    References
    ----------
    Thesis §2.1.2.2, eqs. (2.6)–(2.9).
    """
    return local_score(codes, cards, child, parents, "qnml")


def score_dag(codes, cards, dag_parent_indices, score: str = "bic", **opts) -> float:
    """Total score of a DAG (``DAG`` or the parent indices of every column) on the complete rows.

    Parameters
    ----------
    codes, cards
        As :func:`local_score`.
    dag_parent_indices : DAG or sequence of sequences of int
    score : str
        A name of :data:`bnfk_core.registry.SCORES`.
    **opts
        ``ess`` (BDeu), ``weights`` (row multiplicities), ``numbers`` and ``options`` (KGV).

    Returns
    -------
    float
        The sum of the local scores (the scores are decomposable).

    Raises
    ------
    StructureError
        An unknown score or option.
    """
    if hasattr(dag_parent_indices, "parent_indices"):
        dag_parent_indices = dag_parent_indices.parent_indices()
    ess, weights = opts.pop("ess", 1.0), opts.pop("weights", None)
    numbers, options = opts.pop("numbers", None), opts.pop("options", None)
    if opts:
        raise StructureError(f"Unknown option(s) of score_dag: {', '.join(opts)}.")
    return scorer_for(codes, cards, score, ess=ess, weights=weights, numbers=numbers, options=options).total(
        dag_parent_indices
    )


def parameter_count(cards: Sequence[int], parent_indices: Sequence[Sequence[int]]) -> int:
    """Number of free parameters Σ_i q_i (r_i − 1) of a discrete Bayesian network."""
    if hasattr(parent_indices, "parent_indices"):
        parent_indices = parent_indices.parent_indices()
    return int(
        sum(math.prod(int(cards[p]) for p in ps) * (int(cards[i]) - 1) for i, ps in enumerate(parent_indices))
    )
