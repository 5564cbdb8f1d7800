"""Data-driven similarity measures for categorical data as fast Gram matrices.

Reference: S. Boriah, V. Chandola, V. Kumar, "Similarity Measures for Categorical Data: A
Comparative Evaluation", Proc. SIAM Int. Conf. on Data Mining (SDM) 2008, pp. 243-254, Table 2
(followed exactly; R's ``nomclust`` is a second source we do not follow where it differs), plus the
Aitchison-Aitken kernel (J. Aitchison, C. G. G. Aitken, "Multivariate binary discrimination by the
kernel method", Biometrika 63(3):413-420, 1976).

Notation
--------
The measure is *fitted* on rows D (``fit_measure``).  For attribute k: ``f_k(v)`` = number of fit
rows with value v; ``N_k`` = number of fit rows where attribute k is observed (N when complete);
``A_k`` = the values with f_k > 0 and ``n_k = |A_k|``; ``p_k(v) = f_k(v)/N_k``;
``p2_k(v) = f_k(v)(f_k(v)-1) / (N_k(N_k-1))`` (0 when N_k < 2).  Logs are natural unless log2.

S(X, Y) = sum_k w_k S_k(X_k, Y_k), w_k = 1/d unless stated:

==========  ====================================  ============================================
===============
measure     S_k(a, a)  (match)                    S_k(a, b), a != b  (mismatch)                 w_k
==========  ====================================  ============================================
===============
overlap     1                                     0                                             1/d
eskin       1                                     n_k^2 / (n_k^2 + 2)                           1/d
iof         1                                     1 / (1 + log f(a) log f(b))                   1/d
of          1                                     1 / (1 + log(N/f(a)) log(N/f(b)))             1/d
lin         2 log p(a)                            2 log(p(a) + p(b))                            1 / sum_i [log
p_i(X_i) + log p_i(Y_i)]
lin1        sum_{q in Q} log p(q)                 2 log sum_{q in Q} p(q)                       1 / sum_i
sum_{q in Q_i} log p_i(q)
goodall1    1 - sum_{q in Q} p2(q)                0                                             1/d
goodall2    1 - sum_{q in Q} p2(q)                0                                             1/d
goodall3    1 - p2(a)                             0                                             1/d
goodall4    p2(a)                                 0                                             1/d
smirnov     2 + (N-f(a))/f(a) + sum_{q!=a} g(q)   sum_{q not in {a,b}} g(q),  g = f/(N-f)       1 / sum_k n_k
gambaryan   -[p log2 p + (1-p) log2(1-p)], p=p(a) 0                                             1 / sum_k n_k
burnaby     1                                     C / (log[p(a)p(b)/((1-p(a))(1-p(b)))] + C),   1/d
                                                  C = sum_{q in A_k} 2 log(1 - p(q))
==========  ====================================  ============================================
===============

Sets Q: lin1 mismatch Q = {q : min(p(a),p(b)) <= p(q) <= max(p(a),p(b))}, lin1 match Q = {q : p(q) =
p(a)}; goodall1 Q = {q : p(q) <= p(a)}, goodall2 Q = {q : p(q) >= p(a)}.  Sums over q run over
``A_k`` plus the compared values a, b themselves (which only matters for values unseen at fit time).

anderberg (a ratio of two sums, not of the per-attribute form), c_k = 2 / (n_k (n_k + 1)):

    S = sum_{k: X_k=Y_k} c_k / p_k(X_k)^2
        / ( sum_{k: X_k=Y_k} c_k / p_k(X_k)^2 + sum_{k: X_k!=Y_k} c_k / (2 p_k(X_k) p_k(Y_k)) )

aitchison-aitken (a product kernel): K = prod_k k_k(X_k, Y_k), k_k = 1 - lambda_k if equal, else
lambda_k / (c_k - 1), where c_k = the number of states of attribute k in the fit data's state list
(``len(states[k])``, which may include states with no fit row) and lambda_k = min(bandwidth,
(c_k - 1)/c_k) (so each factor table is PSD); default ``bandwidth=0.1``; c_k = 1 gives lambda_k = 0.

Rules for what Table 2 leaves open
----------------------------------
* **Missing cells** (code -1).  They are not counted in f_k (N_k counts the observed cells).  A cell
  missing in X or in Y contributes 0, and the weights are taken over the set O of attributes observed
  in *both* rows: with the default ``missing="renormalize"`` the 1/d measures divide by |O| (overlap =
  fraction of matching attributes among those observed in both rows) and smirnov/gambaryan by
  sum_{k in O} n_k; lin, lin1 and anderberg sum numerator and denominator over O; aitchison-aitken
  leaves a missing attribute out of the product (factor 1, the marginal kernel).  When O is empty the
  similarity is 0 (aitchison-aitken: 1).  ``missing="zero"`` keeps the fixed weights 1/d and
  1/sum_k n_k instead (the missing cell still contributes 0); it changes only those measures.
* **Values unseen at fit time** (a state with f_k = 0, or a value that is not among the fitted
  states at all) are given the *frequency floor* f = 1 (as if seen once) wherever the formula uses
  f(a), p(a) = 1/N_k or p2(a) = 0 of a compared value a; they are not added to A_k (n_k and the
  per-attribute sums C of burnaby and g of smirnov stay those of the fit data) but they do belong to
  the sets Q when their p satisfies the condition.  Two different unseen values are a mismatch.
* **Limits / divisions by zero.**  iof: log 1 = 0 gives 1 for a mismatch involving a value seen once.
  smirnov: g(q) = f(q) / max(N - f(q), 1) (N - f(q) = 0 only when q is the only fitted value and is
  compared with an unseen value).  gambaryan: 0 log 0 = 0 (p = 1 or p = 0 gives entropy 0).
  burnaby: in a column with a single fitted value (p = 1, so C = -inf and the ratio is 0*inf) every
  mismatch is 0, as in overlap; otherwise all p < 1 and the denominator is strictly negative.
  lin, lin1: the denominator is <= 0; it is 0 only when every attribute of O has p = 1 for both values
  (constant columns) or O is empty; then S = 1 if O is non-empty and the numerator is 0 (the rows
  agree on O, the limit of "all attributes match"), else 0.  anderberg: the denominator is > 0 unless
  O is empty.  Ties in frequencies are exact (p is computed as f/N once per value).
* **Normalisation** (``normalize=True``): K(x,y) / sqrt(K(x,x) K(y,y)); pairs where a self-similarity
  is 0 get 0.

Positive semidefiniteness (``MeasureInfo.psd``, stated for complete data)
---------------------------------------------------------------------------
With fixed weights, K = sum_k w_k A_k S_k A_k^T (A_k the one-hot matrix of attribute k), so K is PSD
whenever every table S_k is PSD and w_k >= 0.  overlap: S_k = I.  eskin: (1-c) I + c J with
0 < c < 1.  goodall1-4, gambaryan: diagonal with entries >= 0 (for goodall1/2 sum_q p2(q) <= 1 because
sum f(f-1) <= N(N-1)).  smirnov: S_k = G J - g 1^T - 1 g^T + diag(D) with G = sum_q g(q),
D(a) = 2 + (N-f(a))/f(a) + g(a) (g = 0 for unseen values), so for any v with s = sum v,
v^T S_k v = G s^2 - 2 s (g.v) + sum D v^2 >= s^2 (G - sum g^2/D) >= 0 by Cauchy-Schwarz, since
g(a) <= D(a).  aitchison-aitken: each factor table is (1-lambda-mu) I + mu J, mu = lambda/(c-1),
PSD iff lambda <= (c-1)/c; the elementwise product of PSD Grams is PSD (Schur).
Not PSD (``psd=False``; tests/test_similarity.py exhibits counterexamples): iof (a value seen once has
log f = 0, so it is 1-similar to every other value while those are almost 0-similar to each other: the
3 x 3 table [[1,1,1],[1,1,e],[1,e,1]] has determinant -(1-e)^2), of and burnaby (one frequent value and
several rare ones give a "star" table with a negative eigenvalue), lin1 (frequency-ordered sets Q), and
anderberg (ratio of two sums).  lin (``psd=None``, unknown): K = (sum_k M_k) o 1/(I(x) + I(y)) with
I(x) = -sum_k log p_k(x_k) >= 0 and M_k(a, b) = -2 log(p(a) + p(b)) + 2 log 2 [a = b]; the second
factor is PSD (a Laplace transform), so lin is PSD whenever every M_k is (Schur), and M_k was PSD on every
frequency vector we tried (tests search random ones) -- but we have no proof, so it stays "unknown".

What a non-PSD measure means downstream: it is still a symmetric similarity, and everything that only
needs a similarity works unchanged -- correlation clustering with the adaptive shift (every measure is
registered with ``shift="adaptive"``: double centering J S J, thesis section 5.2, which makes every row
sum to zero whatever the spectrum), spectral clustering on the min-shifted affinity, kNN by largest
similarity.  What needs a kernel is only approximate: the kernel distance K(x,x)+K(y,y)-2K(x,y) can be
negative (clipped at 0, so kNN by distance still runs but the "distance" is no metric), kernel PCA
drops the negative eigen-directions, and an SVM on an indefinite Gram solves a non-convex problem
(libsvm still returns a classifier, without the optimality guarantee).
With missing cells the renormalised Gram can be indefinite for every measure (e.g. overlap on rows
(a, ?), (a, b), (?, b) gives [[1,1,0],[1,1,1],[0,1,1]]); ``missing="zero"`` keeps the PSD of the
fixed-weight measures (a missing cell is a zero row of A_k).

Computation
-----------
:mod:`bnfk_core.kernels.similarity_tables` builds the per-attribute tables,
:mod:`bnfk_core.kernels.similarity_gram` sums them into the Gram matrix in one compiled pass (no loop over
pairs in Python).
"""

from __future__ import annotations

import numba
import numpy as np

from ..data.limits import DEFAULT_MAX_BYTES, guard_gram
from ..data.table import CategoricalData, as_data
from ..errors import KernelError
from ..registry import KERNELS
from .fisher import FittedKernel
from .members import MEASURES, MeasureInfo
from .similarity_gram import (
    MODE_EXP,
    MODE_LIN,
    MODE_RATIO,
    MODE_SUM,
    GramPlan,
    finalize,
    group_attributes,
    run_plan,
)
from .similarity_tables import SUM_CARD, SUM_UNIFORM, measure_tables

__all__ = [
    "BORIAH_MEASURES",
    "MEASURES",
    "CategoricalMeasure",
    "MeasureInfo",
    "fit_measure",
    "fit_registered",
    "measure_names",
]

_OPTIONS = {"variables", "missing", "bandwidth"}
_MISSING_RULES = ("renormalize", "zero")
_DEFAULT_BANDWIDTH = 0.1


def measure_names() -> tuple:
    """The measure names, in the order of :data:`MEASURES`.

    Returns
    -------
    tuple of str
    """
    return tuple(MEASURES)


def _canonical(name) -> str:
    key = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    if key in ("aitchison-aitken", "aitchisonaitken", "aa"):
        key = "aitchison-aitken"
    if key not in MEASURES:
        raise KernelError(f"Unknown similarity measure '{name}'; choose one of {', '.join(MEASURES)}.")
    return key


# ====================================================================== fitting
def fit_measure(name: str, data, **options) -> CategoricalMeasure:
    """Fit measure ``name`` (frequencies f_k, p_k, n_k) on the rows of ``data``.

    Parameters
    ----------
    name : str
        One of :data:`MEASURES` (case-insensitive; ``_`` and ``-`` are the same).
    data : CategoricalData, pandas DataFrame or int code matrix (N, d) with -1 = missing
        The fit (training) rows.  The class column of ``CategoricalData`` is left out unless
        ``variables`` names it.
    variables : sequence of str, optional
        The attributes to use, in this order (default: every feature column).
    missing : {"renormalize", "zero"}
        Weights over the attributes observed in both rows (default) or fixed weights (module docstring).
    bandwidth : float or sequence of floats, aitchison-aitken only
        lambda in [0, 1] (per attribute if a sequence); capped at (c_k - 1)/c_k.  Default 0.1.

    Returns
    -------
    CategoricalMeasure
        A fitted kernel: ``gram(X, Y=None)`` is S(X, Y) = sum_k w_k S_k(X_k, Y_k), ``contributions(x, y)``
        its per-attribute terms.

    Raises
    ------
    KernelError
        An unknown measure or option, no rows or variables to fit on, or a column with no observed value.

    References
    ----------
    Boriah, Chandola & Kumar (2008), "Similarity measures for categorical data: a comparative evaluation",
    SDM 2008, Table 2; Aitchison & Aitken (1976), Biometrika 63(3).
    """
    key = _canonical(name)
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise KernelError(
            f"Unknown option(s) {', '.join(unknown)} for measure '{key}'; "
            f"the options are {', '.join(sorted(_OPTIONS))}."
        )
    missing = options.get("missing", "renormalize")
    if missing not in _MISSING_RULES:
        raise KernelError(f"missing must be 'renormalize' or 'zero', not {missing!r}.")
    if "bandwidth" in options and key != "aitchison-aitken":
        raise KernelError(f"Option 'bandwidth' applies to aitchison-aitken only, not to '{key}'.")
    data = as_data(data)  # a pandas DataFrame is read as a file is (from_frame)
    if isinstance(data, CategoricalData):
        variables = options.get("variables")
        if variables is None:
            data = data.without_class()
        else:
            variables = [variables] if isinstance(variables, str) else list(variables)
            for v in variables:
                if v not in data.variables:
                    raise KernelError(f"Variable '{v}' is not a column of {data.source}.")
            data = data.select(variables)
        codes, variables, states = np.asarray(data.codes), tuple(data.variables), tuple(data.states)
        source = data.source
    else:
        codes = np.atleast_2d(np.asarray(data))
        if codes.ndim != 2 or codes.dtype.kind not in "iu":
            raise KernelError("fit_measure needs CategoricalData or a 2-D integer code matrix.")
        variables = options.get("variables")
        variables = (
            tuple(variables) if variables is not None else tuple(f"x{i}" for i in range(codes.shape[1]))
        )
        if len(variables) != codes.shape[1]:
            raise KernelError(f"{len(variables)} variable names for {codes.shape[1]} columns.")
        top = codes.max(axis=0, initial=-1) if codes.size else np.full(codes.shape[1], -1)
        states = tuple(tuple(str(s) for s in range(int(t) + 1)) for t in top)
        source = "the code matrix"
    if len(variables) == 0:
        raise KernelError(f"No variables to compare in {source}.")
    if codes.shape[0] == 0:
        raise KernelError(f"{source} has no rows to fit the measure on.")
    counts = []
    for k, v in enumerate(variables):
        col = codes[:, k].astype(np.int64)
        col = col[col >= 0]
        r = len(states[k])
        if col.size and col.max() >= r:
            raise KernelError(f"Column '{v}' has a code {int(col.max())} outside its {r} states.")
        if col.size == 0:
            raise KernelError(
                f"Column '{v}' has no observed values in {source}; drop it or fit on more rows."
            )
        counts.append(np.bincount(col, minlength=r).astype(np.int64))
    bw = options.get("bandwidth", _DEFAULT_BANDWIDTH)
    if key == "aitchison-aitken":
        bw = (
            np.broadcast_to(np.asarray(bw, dtype=float), (len(variables),)).copy()
            if np.ndim(bw) == 0 or len(bw) == len(variables)
            else None
        )
        if bw is None:
            raise KernelError(f"bandwidth needs one value or {len(variables)} values (one per variable).")
        if not (np.isfinite(bw).all() and (bw >= 0).all() and (bw <= 1).all()):
            raise KernelError("bandwidth values must lie in [0, 1].")
    return CategoricalMeasure(
        key,
        variables,
        states,
        int(codes.shape[0]),
        tuple(counts),
        missing,
        bw if key == "aitchison-aitken" else None,
    )


# ====================================================================== the measure
class CategoricalMeasure(FittedKernel):
    """A fitted similarity measure (see the module docstring for the definitions and rules).

    Attributes
    ----------
    name : str
    variables : tuple of str
    states : tuple of tuple of str
        The fitted state lists; unseen states and foreign values get the frequency floor.
    n_rows : int
        Rows of the fit data.
    counts : tuple of int arrays
        f_k over ``states[k]`` (observed cells only).
    missing : str
    bandwidth : ndarray or None
        lambda_k actually used (aitchison-aitken only, after the cap).
    """

    def __init__(self, name, variables, states, n_rows, counts, missing="renormalize", bandwidth=None):
        self.name = name
        self.info = MEASURES[name]
        self.variables = tuple(variables)
        self.states = tuple(tuple(s) for s in states)
        self.n_rows = int(n_rows)
        self.counts = tuple(np.asarray(c, dtype=np.int64) for c in counts)
        self.missing = missing
        self.n_k = np.array([int((c > 0).sum()) for c in self.counts])
        if bandwidth is not None:
            c = np.array([len(s) for s in self.states], dtype=float)
            cap = np.where(c > 1, (c - 1) / np.maximum(c, 1), 0.0)
            bandwidth = np.minimum(np.asarray(bandwidth, dtype=float), cap)
        self.bandwidth = bandwidth

    def __repr__(self) -> str:
        return (
            f"CategoricalMeasure({self.name!r}, {len(self.variables)} variables, "
            f"fitted on {self.n_rows} rows)"
        )

    @property
    def n_vars(self) -> int:
        return len(self.variables)

    # ------------------------------------------------------------------ input
    def _encode(self, X, Y):
        """Code matrices of X and Y over the fitted variables, and the extended domain sizes.

        Values that are not fitted states get codes r_k, r_k + 1, ... (shared by X and Y).
        """
        extra = [{} for _ in self.variables]
        cx = self._codes(X, extra, "X")
        cy = None if Y is None else self._codes(Y, extra, "Y")
        sizes = np.array([len(s) + len(e) for s, e in zip(self.states, extra)], dtype=np.int64)
        return cx, cy, sizes

    def _codes(self, X, extra, what) -> np.ndarray:
        d = self.n_vars
        if isinstance(X, CategoricalData):
            out = np.empty((X.n_rows, d), dtype=np.int32)
            for k, v in enumerate(self.variables):
                if v not in X.variables:
                    raise KernelError(f"Variable '{v}' of the measure is missing from {X.source}.")
                j = X.variables.index(v)
                own = X.states[j]
                col = np.asarray(X.codes[:, j])
                if own == self.states[k]:
                    out[:, k] = col
                    continue
                lut = {s: i for i, s in enumerate(self.states[k])}
                used = np.zeros(len(own) + 1, dtype=bool)
                used[col[col >= 0]] = True
                mapping = np.full(len(own) + 1, -1, dtype=np.int32)
                for i, s in enumerate(own):
                    if s in lut:
                        mapping[i] = lut[s]
                    elif used[i]:
                        if s not in extra[k]:
                            extra[k][s] = len(self.states[k]) + len(extra[k])
                        mapping[i] = extra[k][s]
                out[:, k] = mapping[np.where(col >= 0, col, len(own))]
            return out
        codes = np.asarray(X)
        if codes.ndim == 1:
            codes = codes[None, :]
        if codes.ndim != 2 or codes.dtype.kind not in "iu":
            raise KernelError(f"{what} must be CategoricalData or an integer code matrix.")
        if codes.shape[1] != d:
            raise KernelError(f"{what} has {codes.shape[1]} columns but the measure has {d} variables.")
        cards = np.array([len(s) for s in self.states])
        bad = codes >= cards[None, :]
        if bad.any():
            r, k = map(int, np.argwhere(bad)[0])
            raise KernelError(
                f"Code {int(codes[r, k])} in row {r + 1} of {what} is not a state of "
                f"'{self.variables[k]}' ({cards[k]} states); pass CategoricalData for new values."
            )
        return np.where(codes < 0, -1, codes).astype(np.int32)

    # ------------------------------------------------------------------ tables
    def _tables(self, k: int, r_ext: int):
        """(numerator table S_k, denominator table or None) on the extended domain, unweighted."""
        bw = None if self.bandwidth is None else float(self.bandwidth[k])
        return measure_tables(self.name, self.counts[k], r_ext, len(self.states[k]), bw)

    def _weight(self, k) -> float:
        return float(self.n_k[k]) if self.name in SUM_CARD else 1.0

    def _plan(self, sizes, slots) -> GramPlan:
        """Tables as the compiled pass uses them; ``slots[k]``: attribute k has a missing slot (last)."""
        name = self.name
        nums, dens = [], []
        fixed = self.missing == "zero" or not any(slots)
        if name in SUM_UNIFORM or name in SUM_CARD:
            W = sum(self._weight(k) for k in range(self.n_vars))
            mode = MODE_SUM if fixed else MODE_RATIO
        elif name == "aitchison-aitken":
            mode = MODE_EXP
        else:
            mode = MODE_LIN if name in ("lin", "lin1") else MODE_RATIO
        for k in range(self.n_vars):
            num, den = self._tables(k, int(sizes[k]))
            if name in SUM_UNIFORM or name in SUM_CARD:
                if fixed:
                    num, den = num / W, None
                else:
                    den = np.full(num.shape, self._weight(k))
            if slots[k]:
                num = np.pad(num, (0, 1))
                den = None if den is None else np.pad(den, (0, 1))
            nums.append(np.ascontiguousarray(num, dtype=float))
            dens.append(None if den is None else np.ascontiguousarray(den, dtype=float))
        return GramPlan(nums, None if dens[0] is None else dens, mode)

    def attribute_tables(self) -> list:
        """The r_k x r_k table S_k(a, b) of each attribute over its fitted states (unweighted, Table 2).

        lin and lin1: the numerator tables (their weight depends on the pair).  aitchison-aitken: the
        factor tables k_k(a, b) of the product.  anderberg has no such form (KernelError).

        Returns
        -------
        list of ndarray, shape (r_k, r_k)
        """
        if self.name == "anderberg":
            raise KernelError(
                "Anderberg's measure is a ratio of two sums, not a sum of per-attribute "
                "tables S_k; it has no attribute tables."
            )
        out = []
        for k in range(self.n_vars):
            S, _ = self._tables(k, len(self.states[k]))
            out.append(np.exp(S) if self.name == "aitchison-aitken" else S)
        return out

    # ------------------------------------------------------------------ evaluation
    def gram(self, X, Y=None, *, normalize: bool = False, max_bytes=DEFAULT_MAX_BYTES) -> np.ndarray:
        """Similarity matrix between the rows of X and of Y (default: X).

        X, Y : CategoricalData (re-coded by variable name and state label to the fitted ones; a value
            not among the fitted states is an unseen value) or integer code matrices aligned to the
            fitted variables and states (-1 = missing).
        normalize : K(x,y)/sqrt(K(x,x)K(y,y)) (0 where a self-similarity is 0).
        max_bytes : refuse (KernelError) when the matrix and work space would exceed this; None = no limit.
        """
        cx, cy, sizes = self._encode(X, Y)
        sym = cy is None
        cy = cx if sym else cy
        N, M = cx.shape[0], cy.shape[0]
        slots = (cx < 0).any(axis=0) | (cy < 0).any(axis=0)
        plan = self._plan(sizes, slots)
        groups = group_attributes(sizes + slots)
        table_bytes = (
            sum(int(np.prod([sizes[k] + slots[k] for k in g])) ** 2 for g in groups)
            * 8
            * (2 if plan.den is not None else 1)
        )
        work = table_bytes + 4 * (N + M) * (len(groups) + self.n_vars) + 8 * M * numba.get_num_threads()
        guard_gram(N, M, work, max_bytes)
        K = run_plan(plan, groups, cx, cy, sizes, slots)
        if normalize:
            dx = self._paired(cx, cx, sizes)
            dy = dx if sym else self._paired(cy, cy, sizes)
            sx = np.where(dx > 0, 1.0 / np.sqrt(np.where(dx > 0, dx, 1.0)), 0.0)
            sy = sx if sym else np.where(dy > 0, 1.0 / np.sqrt(np.where(dy > 0, dy, 1.0)), 0.0)
            K *= sx[:, None]
            K *= sy[None, :]
        return K

    def _terms(self, cx, cy, sizes):
        """Per-attribute numerator and denominator terms (n, d) of the row pairs (cx[i], cy[i])."""
        slots = (cx < 0).any(axis=0) | (cy < 0).any(axis=0)
        plan = self._plan(sizes, slots)
        n = cx.shape[0]
        num = np.zeros((n, self.n_vars))
        den = None if plan.den is None else np.zeros((n, self.n_vars))
        for k in range(self.n_vars):
            a = np.where(cx[:, k] < 0, sizes[k], cx[:, k])
            b = np.where(cy[:, k] < 0, sizes[k], cy[:, k])
            num[:, k] = plan.num[k][a, b]
            if den is not None:
                den[:, k] = plan.den[k][a, b]
        return plan, num, den

    def _paired(self, cx, cy, sizes) -> np.ndarray:
        """K(cx[i], cy[i]) for every i (same rules as the Gram)."""
        plan, num, den = self._terms(cx, cy, sizes)
        return finalize(plan.mode, num.sum(axis=1), None if den is None else den.sum(axis=1), cx, cy)

    def contributions(self, x, y) -> np.ndarray:
        """Per-attribute terms of K(x, y) for two single rows; they sum to ``gram(x, y)[0, 0]``.

        Fixed weights: w_k S_k(x_k, y_k).  Renormalised sums, lin, lin1, anderberg: numerator term k
        divided by the pair's denominator (0 for an attribute missing in x or y).  When a lin/lin1
        denominator is 0 (module docstring) K is split evenly over the attributes observed in both.
        aitchison-aitken: K split in proportion to the log-factors, K * log k_k / sum_j log k_j
        (evenly over the observed attributes when every factor is 1).
        """
        cx, cy, sizes = self._encode(x, y)
        if cx.shape[0] != 1 or cy.shape[0] != 1:
            raise KernelError("contributions() compares two single rows.")
        plan, num, den = self._terms(cx, cy, sizes)
        num, den = num[0], None if den is None else den[0]
        K = float(
            finalize(
                plan.mode, np.array([num.sum()]), None if den is None else np.array([den.sum()]), cx, cy
            )[0]
        )
        both = (cx[0] >= 0) & (cy[0] >= 0)
        if plan.mode == MODE_SUM:
            return num.copy()
        if plan.mode == MODE_EXP:
            tot = num.sum()
            if K == 0.0:
                return np.zeros(self.n_vars)
            if tot == 0.0:
                share = both if both.any() else np.ones(self.n_vars, dtype=bool)
                return share / share.sum() * K
            return K * num / tot
        D = den.sum()
        if (plan.mode == MODE_RATIO and D > 0) or (plan.mode == MODE_LIN and D < 0):
            return num / D
        return both / max(both.sum(), 1) * K


# ====================================================================== the registry's fit
# (kernels/members.py declares the measures)
#: the Boriah et al. (2008) measures, in Table 2's order (aitchison-aitken is a kernel, not one of them)
BORIAH_MEASURES = tuple(n for n in MEASURES if n != "aitchison-aitken")


def fit_registered(name: str, train, **options) -> CategoricalMeasure:
    """The ``fit`` of the measure ``name`` in :data:`bnfk_core.registry.KERNELS`: :func:`fit_measure` on
    ``train`` (no label column) with the measure's own options; the network options every kernel receives are
    ignored.

    Parameters
    ----------
    name : str
    train : CategoricalData
    **options
        The measure's declared options (:data:`bnfk_core.kernels.members.MEASURE_OPTIONS`) and the network
        options the faces hand every kernel (:data:`bnfk_core.registry.KERNEL_CONTEXT`, dropped, as are
        ``None`` values); any other name is refused.

    Returns
    -------
    CategoricalMeasure
    """
    KERNELS.validate(name, options)
    return fit_measure(name, train, **{k: v for k, v in options.items() if k in _OPTIONS and v is not None})
