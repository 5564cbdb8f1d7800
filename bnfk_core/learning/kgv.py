"""The kernel generalized variance (KGV) structure score for mixed data (Bach & Jordan 2002).

Every variable x_i is mapped into a feature space: a category by the delta kernel (its one-hot
vector), a number -- standardised -- by the Gaussian kernel exp(−(x−y)²/2σ²) or the linear kernel
x·y.  The variables are then treated as jointly Gaussian in feature space (§3):

- K_i is the centred Gram matrix of variable i, K_i ≈ G_i G_iᵀ with G_i from a pivoted incomplete
  Cholesky decomposition (rank chosen by a tolerance on the residual trace, §3.5); a category's
  one-hot matrix is its exact factor.  With the SVD G_i = U_i S_i V_iᵀ the eigenvalues of K_i are
  λ = s².
- Regularisation (§3.4): K_i is replaced by r_i = K_i (K_i + Nκ/2·I)⁻¹, whose eigenvalues are
  ρ = λ / (λ + Nκ/2); in the bases U_i the regularised correlation matrix R has identity diagonal
  blocks and off-diagonal blocks R_ij = diag(ρ_i) U_iᵀ U_j diag(ρ_j).  All blocks are one product
  ZᵀZ with Z = [U_1 diag(ρ_1), …, U_n diag(ρ_n)], computed once: a family's score never touches
  the N rows again.
- KGV mutual information (§3.6): I(x_A) = −½ log det R_A / Π_{i∈A} det R_ii (= −½ log det R_A).
  Between a child and its parents: I(x_i, x_π) = I(x_{i∪π}) − I(x_π)
  = −½ [log det R_{i∪π} − log det R_π].
- Effective dimension (§3.4): d_i = tr r_i = Σ ρ; a parent set's Gaussian vector has dimension
  d_π = Σ_{j∈π} d_j.
- MDL score (§4, eq. 4): J(G) = Σ_i [−N·I(x_i, x_π_i) + (log N / 2)·d_i·d_π_i], minimised.  The
  local score here is −J_i = N·I(x_i, x_π_i) − (log N / 2)·d_i·d_π_i (higher is better, like every
  score of :mod:`bnfk_core.learning.scores`).

Defaults are those of Bach's kernel-ICA code: κ = 2·10⁻², σ = 1 for N < 1000, κ = 2·10⁻³,
σ = ½ otherwise.  Checks (tests): with the linear kernel and κ → 0 the KGV-MI of two numbers is the
Gaussian −½ log(1 − ρ²); of two categories −½ Σ_k log(1 − ρ_k²) over the contingency table's
canonical correlations.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np

from ..data.limits import one_blas_thread
from ..errors import StructureError
from . import scores  # noqa: F401 - the count scores register first (the order of the score tables)
from .kgv_ci import ci_decision, family_is_covered, markov_blanket_graph
from .members import KGV_KERNELS

__all__ = [
    "KGV_KERNELS",
    "default_parameters",
    "incomplete_cholesky",
    "KGVStatistics",
    "KGVScorer",
    "make_kgv_scorer",
    "kgv_statistics",
    "raw_numbers",
    "kgv_mutual_information",
    "kgv_independence_test",
]

#: eigen-directions with a regularised eigenvalue ρ below this are dropped from the blocks
#: (their correlations are scaled by ρ; they still count in the effective dimension d = Σ ρ)
MIN_RHO = 1e-3
#: the incomplete Cholesky stops at this rank whatever the tolerance
MAX_RANK = 200


def default_parameters(n: int) -> tuple[float, float]:
    """(κ, σ) of Bach's kernel-ICA code: (2e-2, 1) for N < 1000, (2e-3, ½) otherwise."""
    return (2e-2, 1.0) if n < 1000 else (2e-3, 0.5)


# ---------------------------------------------------------------------- low-rank Gram factors
def incomplete_cholesky(x: np.ndarray, sigma: float, tol: float, max_rank: int = MAX_RANK) -> np.ndarray:
    """G (N × M) with K ≈ G Gᵀ for the Gaussian Gram K_ab = exp(−(x_a − x_b)² / 2σ²).

    Pivoted incomplete Cholesky (Fine & Scheinberg 2001; Bach & Jordan 2002a, §5.1): at each step the
    row with the largest residual diagonal becomes the pivot; it stops when the residual trace
    tr(K − G Gᵀ) ≤ ``tol`` (or at ``max_rank``).  The residual is positive semidefinite, so every
    entry of it is bounded by that trace.  Cost O(N M²).
    """
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    m_max = min(int(max_rank), n)
    G = np.zeros((n, m_max))
    resid = np.ones(n)
    inv2s2 = 1.0 / (2.0 * float(sigma) ** 2)
    m = 0
    while m < m_max and resid.sum() > tol:
        j = int(np.argmax(resid))
        piv = resid[j]
        if piv <= 1e-12:
            break
        col = np.exp(-((x - x[j]) ** 2) * inv2s2)
        if m:
            col -= G[:, :m] @ G[j, :m]
        col /= math.sqrt(piv)
        G[:, m] = col
        resid -= col * col
        np.maximum(resid, 0.0, out=resid)
        resid[j] = 0.0
        m += 1
    return G[:, :m].copy()  # not a view: the max_rank columns would stay alive with it


#: rows per block when the Gram of all features is accumulated (one-hot blocks are built on the fly)
ROW_BLOCK = 8192


def _centred_gram(factors: list, widths: Sequence[int], w: np.ndarray | None, n: float) -> np.ndarray:
    """C = G_cᵀ W G_c for the stacked features G = [G_1, …, G_n] (one-hot for a category, its factor for a
    number), centred with the (weighted) means: Σ_rows w g gᵀ − n μ μᵀ, accumulated ROW_BLOCK rows at a
    time, so a category's one-hot matrix never exists for all rows at once."""
    offs = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    p = int(offs[-1])
    n_rows = len(factors[0]) if isinstance(factors[0], np.ndarray) else factors[0][0].size
    S, sums = np.zeros((p, p)), np.zeros(p)
    for start in range(0, n_rows, ROW_BLOCK):
        stop = min(start + ROW_BLOCK, n_rows)
        B = np.zeros((stop - start, p))
        for i, f in enumerate(factors):
            if isinstance(f, np.ndarray):
                B[:, offs[i] : offs[i + 1]] = f[start:stop]
            else:
                B[np.arange(stop - start), offs[i] + f[0][start:stop]] = 1.0
        Bw = B if w is None else B * w[start:stop, None]
        S += Bw.T @ B
        sums += Bw.sum(axis=0)
    mu = sums / n
    return S - n * np.outer(mu, mu)


def _standardise(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    mean = np.average(x, weights=w)
    sd = math.sqrt(np.average((x - mean) ** 2, weights=w))
    return (x - mean) / sd if sd > 0 else np.zeros_like(x)


# ---------------------------------------------------------------------- pairwise statistics
class KGVStatistics:
    """The regularised correlation blocks of all variables, computed once (§3.3–3.5).

    Parameters
    ----------
    columns : one entry per variable: an int array of state codes (a category, its cardinality in
        ``cards``) or a float array (a number).  No missing values.
    cards : cardinality of every categorical column (ignored for numbers).
    weights : optional multiplicity of every row (distinct rows with counts).
    kappa, sigma : regularisation and Gaussian width; None = :func:`default_parameters`.
    kernel : ``gaussian`` or ``linear`` (for the numbers; a category always uses the delta kernel).
    eta : tolerance of the incomplete Cholesky per row, default κ/100 (residual trace ≤ N·eta).

    Attributes: ``n`` (rows, weighted), ``d`` (effective dimension of every variable), ``ranks``
    (Cholesky / one-hot rank), ``dims`` (kept eigen-directions), ``blocks`` (the full correlation
    matrix R with identity diagonal blocks), ``offsets``.
    """

    def __init__(
        self,
        columns: Sequence[np.ndarray],
        cards: Sequence[int] | None = None,
        *,
        weights: np.ndarray | None = None,
        kappa: float | None = None,
        sigma: float | None = None,
        kernel: str = "gaussian",
        eta: float | None = None,
    ):
        if kernel not in KGV_KERNELS:
            raise StructureError(f"Unknown KGV kernel '{str(kernel)[:80]}'; choose gaussian or linear.")
        w = None if weights is None else np.asarray(weights, dtype=float)
        n_rows = len(columns[0]) if columns else 0
        self.n = float(w.sum()) if w is not None else float(n_rows)
        if self.n < 2:
            raise StructureError("The KGV score needs at least two complete rows.")
        k0, s0 = default_parameters(int(self.n))
        self.kappa = float(k0 if kappa is None else kappa)
        self.sigma = float(s0 if sigma is None else sigma)
        if not self.kappa > 0:
            raise StructureError(f"The KGV regularisation kappa must be positive, got {kappa}.")
        if not self.sigma > 0:
            raise StructureError(f"The KGV kernel width sigma must be positive, got {sigma}.")
        self.kernel = kernel
        self.eta = float(self.kappa * 1e-2 if eta is None else eta)
        shift = self.n * self.kappa / 2.0
        factors = []  # per variable: a dense factor G (a number) or (codes, cardinality) (a category)
        for i, col in enumerate(columns):
            col = np.asarray(col)
            if col.dtype.kind == "f":
                z = _standardise(col, w)
                factors.append(
                    z[:, None]
                    if kernel == "linear"
                    else incomplete_cholesky(z / self.sigma, 1.0, n_rows * self.eta)
                )
            else:
                factors.append((col.astype(np.int64), max(int(cards[i]), 1)))
        self.ranks = [f.shape[1] if isinstance(f, np.ndarray) else f[1] for f in factors]
        C = _centred_gram(factors, self.ranks, w, self.n)
        # per variable: C_ii = V diag(λ) Vᵀ; with G_c = U S Vᵀ (s² = λ), U diag(ρ) = G_c V diag(ρ / s) = G_c T
        full = np.concatenate([[0], np.cumsum(self.ranks)]).astype(np.int64)
        self.d, self.dims, Ts = [], [], []
        for i in range(len(factors)):
            a, b = full[i], full[i + 1]
            lam, V = np.linalg.eigh(C[a:b, a:b])
            lam = np.maximum(lam, 0.0)
            rho = lam / (lam + shift)
            self.d.append(float(rho.sum()))
            keep = rho >= MIN_RHO
            Ts.append(V[:, keep] * (rho[keep] / np.sqrt(lam[keep])))
            self.dims.append(int(keep.sum()))
        self.d = np.asarray(self.d)
        self.offsets = np.concatenate([[0], np.cumsum(self.dims)]).astype(np.int64)
        self._ranges = [np.arange(self.offsets[v], self.offsets[v + 1]) for v in range(len(self.dims))]
        T = np.zeros((int(full[-1]), int(self.offsets[-1])))
        for i, Ti in enumerate(Ts):
            T[full[i] : full[i + 1], self.offsets[i] : self.offsets[i + 1]] = Ti
        R = T.T @ C @ T
        for i in range(len(self.dims)):
            a, b = self.offsets[i], self.offsets[i + 1]
            R[a:b, a:b] = np.eye(b - a)
        self.blocks = R
        self._logdet: dict[tuple, float] = {(): 0.0}

    @property
    def n_vars(self) -> int:
        return len(self.dims)

    def index(self, variables: Sequence[int]) -> np.ndarray:
        """The rows of R of the variables, in their order."""
        if not len(variables):
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self._ranges[v] for v in variables])

    def logdet(self, variables: Sequence[int]) -> float:
        """log det R_A of the variables A (cached)."""
        key = tuple(sorted(int(v) for v in variables))
        val = self._logdet.get(key)
        if val is None:
            idx = self.index(key)
            if not idx.size:
                return 0.0
            R = self.blocks[idx[:, None], idx]
            try:
                L = np.linalg.cholesky(R)
                val = 2.0 * float(np.log(np.diag(L)).sum())
            except np.linalg.LinAlgError:
                val = float(np.linalg.slogdet(R + 1e-12 * np.eye(len(idx)))[1])
            self._logdet[key] = val
        return val

    def mutual_information(self, child: int, parents: Sequence[int]) -> float:
        """KGV-MI I(x_child, x_parents) = −½ [log det R_{child∪π} − log det R_π] (nats)."""
        if not len(parents):
            return 0.0
        return max(-0.5 * (self.logdet([child, *parents]) - self.logdet(parents)), 0.0)

    def pairwise(self) -> np.ndarray:
        """The n × n matrix of KGV-MI between every two variables, −½ Σ log(1 − s²) over the singular
        values s of their block R_ij (zero diagonal)."""
        n = self.n_vars
        M = np.zeros((n, n))
        for i in range(n):
            a = slice(self.offsets[i], self.offsets[i + 1])
            for j in range(i + 1, n):
                blk = self.blocks[a, self.offsets[j] : self.offsets[j + 1]]
                s = np.linalg.svd(blk, compute_uv=False) if blk.size else np.zeros(0)
                M[i, j] = M[j, i] = float(-0.5 * np.log1p(-np.minimum(s * s, 1 - 1e-15)).sum())
        return M

    def local_score(self, child: int, parents: Sequence[int]) -> float:
        """−J_i = N·I(x_i, x_π) − (log N / 2)·d_i·d_π with d_π = Σ_{j∈π} d_j (§4, eq. 4)."""
        parents = list(parents)
        if not parents:
            return 0.0
        d_pi = float(self.d[parents].sum())
        return (
            self.n * self.mutual_information(child, parents) - 0.5 * math.log(self.n) * self.d[child] * d_pi
        )


# ---------------------------------------------------------------------- cache of statistics
_STATS: OrderedDict[str, KGVStatistics] = OrderedDict()
_STATS_MAX = 4


def _key(codes: np.ndarray, weights, numbers: Mapping[int, np.ndarray], options: dict) -> str:
    h = hashlib.sha1()
    h.update(np.ascontiguousarray(codes).tobytes())
    h.update(repr((codes.shape, sorted(options.items()))).encode())
    if weights is not None:
        h.update(np.ascontiguousarray(weights).tobytes())
    for k in sorted(numbers):
        h.update(str(k).encode())
        h.update(np.ascontiguousarray(numbers[k], dtype=float).tobytes())
    return h.hexdigest()


def kgv_statistics(
    codes: np.ndarray,
    cards: Sequence[int],
    *,
    weights=None,
    numbers=None,
    kappa=None,
    sigma=None,
    kernel: str = "gaussian",
    eta=None,
) -> tuple[KGVStatistics, np.ndarray]:
    """The :class:`KGVStatistics` of the complete rows of a code matrix, the columns in ``numbers``
    (column index -> raw values, NaN = missing) taken as numbers; memoised on the content (the app
    rescores edited DAGs on the same data).  Returns the statistics and the complete-row mask."""
    codes = np.asarray(codes)
    numbers = {int(k): np.asarray(v, dtype=float) for k, v in (numbers or {}).items()}
    complete = ~(codes < 0).any(axis=1)
    for v in numbers.values():
        complete &= ~np.isnan(v)
    options = {"kappa": kappa, "sigma": sigma, "kernel": kernel, "eta": eta}
    key = _key(codes, weights, numbers, options)
    stats = _STATS.get(key)
    if stats is None:
        cols = [
            numbers[i][complete] if i in numbers else codes[complete, i].astype(np.int64)
            for i in range(codes.shape[1])
        ]
        w = None if weights is None else np.asarray(weights)[complete]
        with one_blas_thread():
            stats = KGVStatistics(cols, cards, weights=w, kappa=kappa, sigma=sigma, kernel=kernel, eta=eta)
        _STATS[key] = stats
        while len(_STATS) > _STATS_MAX:
            _STATS.popitem(last=False)
    else:
        _STATS.move_to_end(key)
    return stats, complete


def raw_numbers(data) -> dict:
    """Column index -> raw values of the numeric columns the data keeps behind their bins
    (``data.numbers``)."""
    numbers = getattr(data, "numbers", None) or {}
    return {i: numbers[v] for i, v in enumerate(data.variables) if v in numbers}


def kgv_mutual_information(
    data, *, kernel: str = "gaussian", kappa=None, sigma=None, bin_numbers: bool = False
) -> dict:
    """The KGV mutual information of every pair of variables of ``data`` (complete rows).

    The numeric columns are taken unbinned unless ``bin_numbers``.

    Parameters
    ----------
    data : CategoricalData
    kernel : {"gaussian", "linear"}
        The Mercer kernel of the numeric columns.
    kappa, sigma : float, optional
        The regularisation and the Gaussian width (defaults: :func:`default_parameters`).
    bin_numbers : bool
        Use the numeric columns' bins as categories.

    Returns
    -------
    dict
        ``variables``, ``matrix`` (symmetric, zero diagonal, nats), ``searched_raw``, ``kappa``, ``sigma``,
        ``kernel`` and ``n_rows_used``.

    References
    ----------
    Bach & Jordan (2002), "Learning graphical models with Mercer kernels", §3.6, eq. (3).
    """
    numbers = {} if bin_numbers else raw_numbers(data)
    if data.n_vars < 2:
        raise StructureError("KGV mutual information needs at least two columns.")
    stats, complete = kgv_statistics(
        data.codes,
        data.cardinalities,
        weights=getattr(data, "weights", None),
        numbers=numbers,
        kappa=kappa,
        sigma=sigma,
        kernel=kernel,
    )
    with one_blas_thread():
        matrix = stats.pairwise()
    return {
        "variables": list(data.variables),
        "matrix": matrix,
        "searched_raw": [data.variables[i] for i in sorted(numbers)],
        "kappa": stats.kappa,
        "sigma": stats.sigma,
        "kernel": stats.kernel,
        "n_rows_used": int(round(stats.n)),
    }


# ---------------------------------------------------------------------- the local scorer
class KGVScorer:
    """Cached KGV local scores ``scorer(child, parents)``, the interface of
    :class:`bnfk_core.learning.scores.LocalScorer` (hill climbing, exact search, ``total``).

    The columns in ``numbers`` are searched as numbers; ``cols``/``cards`` keep the state codes of
    the complete rows for the methods that count (Chow–Liu, TAN, KDB).

    ``markov_blanket``: prune the search to the DAGs whose moral graph the §5 undirected graph
    (:func:`bnfk_core.learning.kgv_ci.markov_blanket_graph`) covers -- a family that is not a clique of it
    scores −inf without being computed.  ``evaluations`` counts the local scores computed, ``pruned`` the
    families refused."""

    score = "kgv"

    def __init__(
        self,
        codes: np.ndarray,
        cards: Sequence[int],
        *,
        weights=None,
        numbers=None,
        kappa=None,
        sigma=None,
        kernel: str = "gaussian",
        eta=None,
        bin_numbers: bool = False,
        markov_blanket: bool = False,
        ess: float = 1.0,
    ):
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(cards):
            raise StructureError(
                f"The code matrix has {codes.shape[-1]} columns but {len(cards)} cardinalities were given."
            )
        numbers = {} if bin_numbers else dict(numbers or {})
        self.cards = [int(r) for r in cards]
        self.raw_columns = sorted(int(k) for k in numbers)
        complete = ~(codes < 0).any(axis=1)
        self.n_rows_total = int(codes.shape[0] if weights is None else np.asarray(weights).sum())
        self.n = int(complete.sum() if weights is None else np.asarray(weights)[complete].sum())
        self.stats = None
        if self.n >= 2:
            self.stats, complete = kgv_statistics(
                codes,
                cards,
                weights=weights,
                numbers=numbers,
                kappa=kappa,
                sigma=sigma,
                kernel=kernel,
                eta=eta,
            )
        data = codes[complete]
        top = max(self.cards, default=1)
        ctype = np.int8 if top <= 127 else np.int16 if top <= 32767 else np.int32
        self.cols = [np.ascontiguousarray(data[:, i], dtype=ctype) for i in range(data.shape[1])]
        self.weights = (
            None if weights is None else np.ascontiguousarray(np.asarray(weights)[complete], dtype=np.int64)
        )
        self.cache: dict[tuple[int, tuple[int, ...]], float] = {}
        #: the addition gains of each family, shared by every climb and walk on this scorer
        #: (:class:`~bnfk_core.learning.hill_climb.GainRows`)
        self.gain_rows: dict = {}
        #: local scores computed from the statistics, and families refused by the Markov-blanket pruning
        self.evaluations = 0
        self.pruned = 0
        self.blanket = None
        if markov_blanket and self.stats is not None:
            self.blanket = markov_blanket_graph(self.stats)

    @property
    def n_vars(self) -> int:
        return len(self.cards)

    def search_context(self):
        """Searches with this scorer run with BLAS pinned to one thread
        (:func:`bnfk_core.data.limits.one_blas_thread`)."""
        return one_blas_thread()

    @property
    def n_distinct(self) -> int:
        return int(self.cols[0].shape[0]) if self.cols else self.n

    def penalty_array(self, child: int, others: Sequence[int]) -> np.ndarray:
        """For the exact search: a bound of every parent mask over ``others`` with score ≤ −bound,
        (log N / 2)·d_i·d_π − N·I(x_i, x_others) -- the KGV-MI of a Gaussian grows with the parent set, so
        I(x_i, x_π) ≤ I(x_i, x_others); the bound grows with the set like the BIC penalty."""
        others = [int(o) for o in others]
        if self.stats is None:
            return np.zeros(1 << len(others))
        d_pi = np.zeros(1)
        for o in others:
            d_pi = np.concatenate([d_pi, d_pi + self.stats.d[o]])
        top = self.stats.n * self.stats.mutual_information(child, others) if others else 0.0
        return 0.5 * math.log(self.stats.n) * self.stats.d[child] * d_pi - top - 1e-9

    def __call__(self, child: int, parents: Sequence[int] = ()) -> float:
        key = (int(child), tuple(sorted(int(p) for p in parents)))
        val = self.cache.get(key)
        if val is None:
            if key[0] in key[1]:
                raise StructureError(f"Column {key[0]} cannot be its own parent.")
            if self.blanket is not None and not _covered(self.blanket, *key):
                val = -math.inf
                self.pruned += 1
            else:
                val = 0.0 if self.stats is None else self.stats.local_score(*key)
                self.evaluations += 1
            self.cache[key] = val
        return val

    def total(self, parent_indices: Sequence[Sequence[int]]) -> float:
        return scores.total_score(self, parent_indices)


def _covered(adjacency: np.ndarray, child: int, parents: tuple) -> bool:
    return family_is_covered(adjacency, child, parents)


def make_kgv_scorer(codes, cards, *, weights=None, numbers=None, ess: float = 1.0, **options) -> KGVScorer:
    """The ``scorer`` factory registered with the ``kgv`` score."""
    return KGVScorer(codes, cards, weights=weights, numbers=numbers, **options)


def kgv_independence_test(
    data,
    x: str,
    y: str,
    given: Sequence[str] = (),
    *,
    kernel: str = "gaussian",
    kappa: float | None = None,
    sigma: float | None = None,
    bin_numbers: bool = False,
) -> dict:
    """The KGV test of x ⫫ y | given on the rows where x, y and the given columns are observed.

    Parameters
    ----------
    data : CategoricalData
        The table (numeric columns taken unbinned unless ``bin_numbers``).
    x, y : str
        The two columns tested.
    given : sequence of str
        The conditioning columns z.
    kernel : {"gaussian", "linear"}
        The Mercer kernel of the numeric columns (categories: the delta kernel).
    kappa, sigma : float, optional
        Regularisation and Gaussian width (defaults :func:`bnfk_core.learning.kgv.default_parameters`).
    bin_numbers : bool
        Use the numeric columns' bins as categories.

    Returns
    -------
    dict
        ``x``, ``y``, ``given``, ``statistic`` (N·Î(x; y | z), nats), ``threshold`` ((log N / 2)·d_x·d_y),
        ``independent``, ``mutual_information``, ``d_x``, ``d_y``, ``n_rows_used``, ``kernel``, ``kappa``,
        ``sigma`` and ``searched_raw`` (the columns taken as numbers).

    Raises
    ------
    StructureError
        An unknown or repeated column, or fewer than two complete rows.

    References
    ----------
    Bach & Jordan (2002), "Learning graphical models with Mercer kernels", §5 (likelihood ratio criterion,
    the MDL/BIC threshold).
    """
    given = [str(g) for g in given]
    names = [str(x), str(y), *given]
    for v in names:
        if v not in data.variables:
            raise StructureError(
                f"Column '{v[:80]}' is not in the data; the columns are {', '.join(data.variables)}."
            )
    if len(set(names)) < len(names):
        raise StructureError(f"The columns of a test must differ; got {', '.join(names)}.")
    idx = [data.index(v) for v in names]
    numbers = {} if bin_numbers else raw_numbers(data)
    sub_numbers = {k: numbers[i] for k, i in enumerate(idx) if i in numbers}
    codes = np.asarray(data.codes)[:, idx]
    cards = [int(data.cardinalities[i]) for i in idx]
    weights = getattr(data, "weights", None)
    complete = ~(codes < 0).any(axis=1)
    for v in sub_numbers.values():
        complete &= ~np.isnan(np.asarray(v, dtype=float))
    used = int(complete.sum() if weights is None else np.asarray(weights)[complete].sum())
    if used < 2:
        raise StructureError(
            f"The KGV test needs at least two rows where {', '.join(names)} are all observed; "
            f"there are {used}."
        )
    stats, _ = kgv_statistics(
        codes, cards, weights=weights, numbers=sub_numbers, kappa=kappa, sigma=sigma, kernel=kernel
    )
    res = ci_decision(stats, 0, 1, list(range(2, len(idx))))
    return {
        "x": str(x),
        "y": str(y),
        "given": given,
        **{k: v for k, v in res.items() if k != "n"},
        "n_rows_used": int(round(stats.n)),
        "kernel": stats.kernel,
        "kappa": stats.kappa,
        "sigma": stats.sigma,
        "searched_raw": [names[k] for k in sorted(sub_numbers)],
    }
