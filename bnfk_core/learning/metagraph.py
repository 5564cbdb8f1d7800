"""The metagraph kernel (Yackley, Corona & Lane): learning a score surface over graphs from a few scored
graphs.

A graph is a bit string of length d (one bit per possible arc) and all bit strings form the hypercube Q_d.
The normalised Laplacian L = I − A/d of Q_d has the Walsh functions χ_l(b) = (−1)^<b,l> as eigenvectors,
with eigenvalue 2|l|/d (|l| = number of ones of l) (paper §2.4).  The order-r kernel keeps the
eigenfunctions of degree 1 ≤ |l| ≤ r, weighted by λ^(−m) (§3.2, m = 2):

    K₁(b_i, b_j) = 2^(−d) Σ_{s=1..r} (d / 2s)^m S_s(h),   h = hamming(b_i, b_j),

where S_s(h) = Σ_{|l|=s} (−1)^<b_i ⊕ b_j, l> is the Krawtchouk polynomial K_s(h; d).  (The paper prints
a prefactor 1/n; with orthonormal eigenvectors H/√2^d it is 2^(−d), which the brute-force
eigendecomposition in the tests confirms.)  Only the Hamming distance matters, so a kernel is a
table of d + 1 numbers.

Numerics: we use the *normalised* Krawtchouk values k_s(h) = K_s(h; d) / C(d, s) ∈ [−1, 1], from the
three-term recurrence (d − s) k_{s+1} = (d − 2h) k_s − s k_{s−1} (k_0 = 1, k_1 = 1 − 2h/d), and weights
w_s = (d/2s)^m C(d, s) in logs, so d = 1,332 (ALARM's 37·36 arcs) works as well as d = 6.

The surrogate (§3.1): f = 1·d₀ + K₁ e minimising (1/n) Σ (f(x_i) − y_i)² + c eᵀK₁e.  With
M = K + n c I: e = M⁻¹(y − 1 d₀), d₀ = 1ᵀM⁻¹y / 1ᵀM⁻¹1 (Wahba 1990).  **Our c** is the regulariser of
the kernel scaled to unit diagonal (K / K(0)); the paper's c on K₁ itself is c · K₁(0)
(:func:`paper_regulariser`).  Scaling makes c comparable across d (2^(−d) underflows for d ≳ 1,000).

Walsh energy: a decomposable score over a fixed node order is a polynomial of the arc bits of degree
≤ the largest in-degree, so its Walsh–Hadamard coefficients vanish above that degree;
:func:`walsh_energy` gives Σ_{|l|=s} β_l² for every degree s (β = H f / 2^d, a fast transform).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import gammaln, logsumexp

from ..data.limits import one_blas_thread
from ..errors import BnfkError
from .members import DEFAULT_C

__all__ = [
    "DEFAULT_C",
    "DEFAULT_M",
    "MetagraphError",
    "krawtchouk",
    "kernel_by_distance",
    "paper_regulariser",
    "hamming",
    "Surrogate",
    "fit_surrogate",
    "fit_orders",
    "predict_orders",
    "walsh_transform",
    "walsh_energy",
    "rmse",
    "observed_split",
    "parse_orders",
]

#: default regulariser (on the unit-diagonal kernel); tiny: a score is a smooth low-degree polynomial
DEFAULT_M = 2


class MetagraphError(BnfkError):
    """A metagraph-kernel request that cannot be carried out as asked."""


def krawtchouk(d: int, r: int, h) -> np.ndarray:
    """Normalised Krawtchouk values k_s(h) = K_s(h; d) / C(d, s) for s = 0..r: array (r + 1, len(h)).

    Parameters
    ----------
    d : int
        Dimension of the hypercube Q_d (the number of possible arcs).
    r : int
        Highest order.
    h : array_like of int
        Hamming distances 0..d.

    Returns
    -------
    numpy.ndarray

    References
    ----------
    Yackley, Corona & Lane, "Bayesian network score approximation using a metagraph kernel", §2.4 (the
    spectrum of the hypercube) and §3.2 (the entries of K_1).
    """
    d, r = int(d), int(r)
    h = np.atleast_1d(np.asarray(h, dtype=float))
    out = np.zeros((r + 1, h.size))
    out[0] = 1.0
    if r >= 1 and d >= 1:
        out[1] = 1.0 - 2.0 * h / d
    for s in range(1, min(r, d - 1) + 1):
        if s + 1 <= r:
            out[s + 1] = ((d - 2.0 * h) * out[s] - s * out[s - 1]) / (d - s)
    return out


def _log_weights(d: int, r: int, m: float) -> np.ndarray:
    """log w_s = m log(d / 2s) + log C(d, s) for s = 1..r."""
    s = np.arange(1, r + 1, dtype=float)
    return m * np.log(d / (2.0 * s)) + gammaln(d + 1) - gammaln(s + 1) - gammaln(d - s + 1)


def _check(d: int, r: int) -> None:
    if d < 1:
        raise MetagraphError(f"The metagraph needs at least one arc bit, got d = {d}.")
    if not 1 <= r <= d:
        raise MetagraphError(f"The kernel order must lie in 1..{d} (the number of arc bits), got {r}.")


def kernel_by_distance(d: int, r: int, m: float = DEFAULT_M, *, normalise: bool = True) -> np.ndarray:
    """K(h) for Hamming distances h = 0..d of the order-``r`` kernel on Q_d (module docstring).

    ``normalise=True`` divides by K(0) (unit diagonal); ``False`` gives K₁ with its 2^(−d) factor (for
    small d; it underflows to 0 for d above about a thousand).

    Parameters
    ----------
    d, r : int
        Dimension of the hypercube and order of the kernel.
    m : float
        The regulariser's exponent.
    normalise : bool

    Returns
    -------
    numpy.ndarray
        Shape (d + 1,).

    References
    ----------
    Yackley, Corona & Lane, §3.1–3.2.
    """
    d, r = int(d), int(r)
    _check(d, r)
    lw = _log_weights(d, r, float(m))
    k = krawtchouk(d, r, np.arange(d + 1))[1:]
    w = np.exp(lw - lw.max())
    vals = w @ k / w.sum()
    if normalise:
        return vals
    return vals * math.exp(logsumexp(lw) - d * math.log(2.0))


def paper_regulariser(c: float, d: int, r: int, m: float = DEFAULT_M) -> float:
    """The paper's regulariser on K₁ equivalent to our ``c`` on the unit-diagonal kernel: c · K₁(0)."""
    return float(c) * math.exp(logsumexp(_log_weights(int(d), int(r), float(m))) - int(d) * math.log(2.0))


def hamming(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Hamming distances between the rows of two 0/1 matrices: popcount(a XOR b) on packed codes for d ≤ 62
    bits, else |a| + |b| − 2 a·b (float32 products, exact below 2^24 bits)."""
    A, B = np.asarray(A), np.asarray(B)
    d = A.shape[1]
    if d <= 62:
        w = np.int64(1) << np.arange(d, dtype=np.int64)
        a, b = A.astype(np.int64) @ w, B.astype(np.int64) @ w
        return np.bitwise_count(a[:, None] ^ b[None, :]).astype(np.intp)
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    out = A32.sum(axis=1)[:, None] + B32.sum(axis=1)[None, :] - 2.0 * (A32 @ B32.T)
    return np.rint(out).astype(np.intp)


@dataclass
class Surrogate:
    """A fitted metagraph-kernel surrogate: f(x) = d0 + Σ_i e_i K(x, x_i)."""

    bits: np.ndarray  # observed graphs (n, d)
    d0: float
    e: np.ndarray
    table: np.ndarray  # K(h), h = 0..d (unit diagonal)
    order: int
    c: float
    m: float

    def predict(self, bits: np.ndarray) -> np.ndarray:
        return predict_orders([self], bits)[0]


def fit_surrogate(
    bits: np.ndarray, y: Sequence[float], order: int, c: float = DEFAULT_C, m: float = DEFAULT_M
) -> Surrogate:
    """Fit f = 1·d0 + K e to the scores ``y`` of the graphs ``bits`` (n, d) (paper §3.1, module docstring).

    Parameters
    ----------
    bits : numpy.ndarray
        (n, d) 0/1 arc indicators of the scored graphs.
    y : sequence of float
        Their scores.
    order : int
        Order r of the kernel.
    c, m : float
        The regularisation weight and exponent.

    Returns
    -------
    Surrogate
        Predicts the score of any graph of Q_d.

    References
    ----------
    Yackley, Corona & Lane, §3.1 (the optimisation framework).
    """
    return fit_orders(bits, y, [order], c, m)[0]


def fit_orders(
    bits: np.ndarray, y: Sequence[float], orders: Sequence[int], c: float = DEFAULT_C, m: float = DEFAULT_M
) -> list[Surrogate]:
    """:func:`fit_surrogate` for several orders on the same observed graphs (their distances computed once).

    Small dense algebra, run on one BLAS thread (threads only contend on a shared machine)."""
    bits = np.asarray(bits)
    y = np.asarray(y, dtype=float)
    n, d = bits.shape
    if n < 1 or y.shape != (n,):
        raise MetagraphError("The surrogate needs one score per observed graph and at least one graph.")
    if not c > 0:
        raise MetagraphError(f"The regulariser c must be positive, got {c}.")
    out = []
    with one_blas_thread():
        H = hamming(bits, bits)
        for order in orders:
            table = kernel_by_distance(d, int(order), m)
            M = table[H]
            M[np.diag_indices(n)] += n * float(c)
            try:
                fac = cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
            except np.linalg.LinAlgError:
                raise MetagraphError(
                    f"The kernel system is singular; raise the regulariser c (now {c})."
                ) from None
            one = cho_solve(fac, np.ones(n), check_finite=False)
            my = cho_solve(fac, y, check_finite=False)
            d0 = float(my.sum() / one.sum())
            out.append(Surrogate(bits, d0, my - d0 * one, table, int(order), float(c), float(m)))
    return out


def predict_orders(surrogates: Sequence[Surrogate], bits: np.ndarray, block: int = 2048) -> list[np.ndarray]:
    """Predictions of surrogates fitted on the same observed graphs (:func:`fit_orders`) at ``bits``; the
    distances are computed once per block of rows."""
    bits = np.asarray(bits)
    outs = [np.empty(bits.shape[0]) for _ in surrogates]
    if not surrogates:
        return outs
    ref = surrogates[0].bits
    with one_blas_thread():
        for a in range(0, bits.shape[0], block):
            H = hamming(bits[a : a + block], ref)
            for s, out in zip(surrogates, outs):
                out[a : a + block] = s.d0 + s.table[H] @ s.e
    return outs


def rmse(pred: np.ndarray, exact: np.ndarray) -> float:
    """Root-mean-squared error (NaN for no graphs)."""
    pred, exact = np.asarray(pred, float), np.asarray(exact, float)
    return float(np.sqrt(np.mean((pred - exact) ** 2))) if pred.size else float("nan")


def observed_split(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``k`` observed graph indices out of ``n`` drawn with ``seed`` and the others (both sorted)."""
    if not 1 <= k <= n:
        raise MetagraphError(f"The number of observed graphs must lie in 1..{n}, got {k}.")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[:k]), np.sort(perm[k:])


def walsh_transform(f: np.ndarray) -> np.ndarray:
    """Walsh–Hadamard coefficients β_l = 2^(−d) Σ_b (−1)^<b,l> f(b) of a function on 2^d bit strings
    (index b = the integer the bits spell, bit p = 2^p), by the fast in-place butterfly.

    Parameters
    ----------
    f : numpy.ndarray
        (2^d,) values, indexed by the integer the bits spell.

    Returns
    -------
    numpy.ndarray
        (2^d,) coefficients β_l.
    """
    a = np.array(f, dtype=float)
    n = a.size
    if n & (n - 1) or n == 0:
        raise MetagraphError(f"A Walsh transform needs 2^d values, got {n}.")
    h = 1
    while h < n:
        a = a.reshape(-1, 2, h)
        a = np.stack([a[:, 0] + a[:, 1], a[:, 0] - a[:, 1]], axis=1).reshape(n)
        h *= 2
    return a / n


def walsh_energy(f: np.ndarray) -> np.ndarray:
    """Energy Σ_{|l|=s} β_l² of ``f`` by degree s = 0..d (:func:`walsh_transform`).

    Parameters
    ----------
    f : numpy.ndarray
        (2^d,) values of a function on the hypercube.

    Returns
    -------
    numpy.ndarray
        (d + 1,) energy by degree.

    References
    ----------
    Yackley, Corona & Lane, §4.2: "the BDe score itself varies quadratically over the metagraph" -- an energy
    concentrated in degrees ≤ 2 says so for a landscape.
    """
    beta = walsh_transform(f)
    deg = np.bitwise_count(np.arange(beta.size, dtype=np.int64))
    return np.bincount(deg, weights=beta**2, minlength=int(round(math.log2(beta.size))) + 1)


def parse_orders(text: str, d: int) -> list[int]:
    """'1-4' or '1,2,3' -> [1, 2, 3, 4], each order clipped to ≤ d (the number of arc bits).  A range is
    clipped before it is listed: '1-100000000' costs what '1-d' costs."""
    out: list[int] = []
    try:
        for part in str(text)[:10_000].split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
                if a < 1:
                    out.append(a)
                    continue
                out.extend(range(min(a, d), min(b, d) + 1) if b >= a else [])
            else:
                out.append(int(part))
    except ValueError:
        raise MetagraphError(
            f"Orders are a range such as 1-4 or a list such as 1,2,3; got '{str(text)[:80]}'."
        ) from None
    if not out or min(out) < 1:
        raise MetagraphError(f"Orders must be 1 or more, got '{str(text)[:80]}'.")
    return sorted({min(o, d) for o in out})
