"""Fibers of the latent class parametrisation (Auvray & Wehenkel, NIPS-AML 2008) and identifiability.

Centred moments (slides "Some notation"):  q(x_i) = 0,  q(x_i, x_j) = p(x_i, x_j) - p(x_i) p(x_j),

    q(x_i, x_j, x_k) = p_ijk - p_i p_jk - p_j p_ik - p_k p_ij + 2 p_i p_j p_k,

and with A^t_x = p(x | t) - p(x):  q(x_1..x_k) = sum_t w_t prod_j A^t_{x_j},  w^T A_x = 0.

* **K = 2 inversion** (:func:`invert_two_classes`).  For values u, v, t of three distinct variables,
  q(t,v) s^2 + q(u,t,v) s - q(u,t) q(u,v) = q(t,v) (s + A^1_u)(s + A^2_u): its roots give A_u up to the order
  of the classes (the label swap); w solves w^T A_u = 0, sum w = 1; every other A_x = q(x, v') / q(u, v') A_u
  (the A_x are collinear when K = 2), v' a value of a third variable.  Then p(x | t) = p(x) + A^t_x.
* **Rank diagnostic** (:func:`rank_diagnostic`).  For two disjoint groups of variables the matrix
  Q[x, y] = q(x, y) (x a value of the first group, y of the second) equals A_1^T diag(w) A_2 and w^T A = 0, so
  its rank is at most K - 1 ("for m' > m the (m'-1)-minors vanish"): 1 + the number of singular values above
  the noise level is the number of classes the data support (capped by the group sizes).
* **Identifiability** (:func:`identifiability`): label swaps give K! parameter sets for every distribution
  with distinct classes.  Kruskal's condition (Allman, Matias & Rhodes 2009, Thm. 1 with the variables grouped
  into three blocks): k_1 + k_2 + k_3 >= 2K + 2, k_j the Kruskal rank of block j's K x prod r matrix of class
  profiles, gives exactly those K!.  The seed's hypothesis (three q determinants of size K - 1 non-zero; here:
  the cross-moment matrices of three disjoint groups have rank K - 1) gives at most (K!)^(K-1).  Two
  variables, more parameters than cells, an empty class or two equal classes: a continuum.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .model import LcaError

__all__ = [
    "Moments",
    "invert_two_classes",
    "rank_diagnostic",
    "identifiability",
    "kruskal_rank",
    "exact_joint",
]


class Moments:
    """Marginals p_i, p_ij, p_ijk and the centred moments q of a distribution over categorical variables:
    from a full joint array (:meth:`from_joint`), a latent class model (:meth:`from_model`, exact) or code
    rows (:meth:`from_codes`, empirical; each table from the rows observing its variables)."""

    def __init__(self, cards, marg, rows=None, classes=None):
        self.cards = [int(r) for r in cards]
        self._marg = marg  # callable(tuple of variable indices) -> array over their values
        self._cache = {}
        self._rows = rows  # (codes, weights) of :meth:`from_codes`
        self._classes = classes  # (w, profiles) of :meth:`from_model`

    @classmethod
    def from_joint(cls, joint: np.ndarray) -> Moments:
        """Moments of a full joint probability array.

        Parameters
        ----------
        joint : ndarray, shape (r_1, ..., r_n)

        Returns
        -------
        Moments
        """
        joint = np.asarray(joint, float)
        n = joint.ndim

        def marg(idx):
            t = joint.sum(axis=tuple(a for a in range(n) if a not in idx))
            return np.transpose(t, np.argsort(np.argsort(idx)))

        return cls(joint.shape, marg)

    @classmethod
    def from_model(cls, model) -> Moments:
        """Exact moments of a latent class model (anything with ``weights`` and ``profiles``).

        Parameters
        ----------
        model : LatentClassModel

        Returns
        -------
        Moments
        """
        w, P = np.asarray(model.weights), model.profiles

        def marg(idx):
            sub = "".join(chr(ord("a") + k) for k in range(len(idx)))
            return np.einsum("t," + ",".join(f"t{c}" for c in sub) + "->" + sub, w, *[P[i] for i in idx])

        return cls(
            [p.shape[1] for p in P], marg, classes=(np.asarray(w, float), [np.asarray(p, float) for p in P])
        )

    @classmethod
    def from_codes(cls, codes: np.ndarray, cards, weights=None) -> Moments:
        """Empirical moments of code rows.

        Parameters
        ----------
        codes : ndarray of int, shape (N, n)
            -1 = missing.
        cards : sequence of int
        weights : ndarray, shape (N,), optional
            Row weights (default 1).

        Returns
        -------
        Moments
        """
        codes = np.asarray(codes)
        wts = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, float)
        cards = [int(r) for r in cards]

        def marg(idx):
            ok = (codes[:, list(idx)] >= 0).all(axis=1)
            flat = np.ravel_multi_index(tuple(codes[ok, i] for i in idx), tuple(cards[i] for i in idx))
            t = np.bincount(flat, weights=wts[ok], minlength=int(np.prod([cards[i] for i in idx])))
            return (t / max(t.sum(), 1e-300)).reshape([cards[i] for i in idx])

        return cls(cards, marg, rows=(codes, wts))

    def p(self, *idx) -> np.ndarray:
        """The marginal p(x_i, x_j, ...) of the variables ``idx`` (cached).

        Parameters
        ----------
        *idx : int

        Returns
        -------
        ndarray, shape (r_i, r_j, ...)
        """
        if idx not in self._cache:
            self._cache[idx] = self._marg(tuple(idx))
        return self._cache[idx]

    def q2(self, i: int, j: int) -> np.ndarray:
        """The centred moment q(x_i, x_j) = p(x_i, x_j) - p(x_i) p(x_j) (slides "Some notation").

        Parameters
        ----------
        i, j : int

        Returns
        -------
        ndarray, shape (r_i, r_j)
        """
        return self.p(i, j) - np.multiply.outer(self.p(i), self.p(j))

    def _one_hot(self, group) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X, O, w): the rows' one-hot codes of ``group`` (N x sum r, a missing cell all zero), which
        variables each row observes (N x len(group)) and the row weights."""
        codes, wts = self._rows
        sub = codes[:, list(group)]
        offsets = np.concatenate([[0], np.cumsum([self.cards[i] for i in group], dtype=np.int64)]).astype(
            np.int64
        )
        X = np.zeros((codes.shape[0], int(offsets[-1])))
        obs = sub >= 0
        r, c = np.nonzero(obs)
        X[r, offsets[c] + sub[r, c]] = 1.0
        return X, obs.astype(float), wts

    def cross(self, g1, g2) -> np.ndarray:
        """The cross-moment matrix Q[x, y] = q(x, y), x a value of a variable of ``g1``, y of ``g2`` (blocks
        in the groups' order): a few matrix products, not one ``q2`` per pair of variables.

        Parameters
        ----------
        g1, g2 : sequence of int
            Disjoint groups of variables.

        Returns
        -------
        ndarray, shape (sum r over g1, sum r over g2)
        """
        g1, g2 = list(g1), list(g2)
        if self._classes is not None:  # p_ij = sum_t w_t P_i[t]^T P_j[t]
            w, P = self._classes
            A = np.concatenate([P[i] for i in g1], axis=1)
            B = np.concatenate([P[j] for j in g2], axis=1)
            return A.T @ ((np.diag(w) - np.outer(w, w)) @ B)
        if self._rows is not None:  # each p_ij from the rows observing both i and j, as in q2
            X1, O1, wts = self._one_hot(g1)
            X2, O2, _ = self._one_hot(g2)
            n1 = np.repeat(wts @ O1, [self.cards[i] for i in g1])  # rows observing i
            n2 = np.repeat(wts @ O2, [self.cards[j] for j in g2])
            n12 = np.repeat(
                np.repeat((O1 * wts[:, None]).T @ O2, [self.cards[i] for i in g1], axis=0),
                [self.cards[j] for j in g2],
                axis=1,
            )  # rows observing both
            p1 = (wts @ X1) / np.maximum(n1, 1e-300)
            p2 = (wts @ X2) / np.maximum(n2, 1e-300)
            return ((X1 * wts[:, None]).T @ X2) / np.maximum(n12, 1e-300) - np.outer(p1, p2)
        return np.block([[self.q2(i, j) for j in g2] for i in g1])

    def cross_singular_values(self, g1, g2) -> tuple[np.ndarray, tuple[int, int]]:
        """The singular values of :meth:`cross` (largest first) and its shape.  Q has rank at most K - 1 for a
        model (Q = A^T (diag w - w w^T) B) and at most N + 1 for complete rows (Q = X1^T W X2 - p1 p2^T):
        then they come from a small factor, exactly, without forming Q.

        Parameters
        ----------
        g1, g2 : sequence of int

        Returns
        -------
        singular_values : ndarray
        shape : (int, int)
        """
        g1, g2 = list(g1), list(g2)
        shape = (sum(self.cards[i] for i in g1), sum(self.cards[j] for j in g2))
        if self._classes is not None:
            w, P = self._classes
            L = np.concatenate([P[i] for i in g1], axis=1).T  # a x K
            R = np.concatenate([P[j] for j in g2], axis=1).T  # b x K
            M = np.diag(w) - np.outer(w, w)
        elif (
            self._rows is not None
            and (self._rows[0][:, g1 + g2] >= 0).all()
            and min(shape) > len(self._rows[1]) + 1
        ):
            X1, _, wts = self._one_hot(g1)
            X2, _, _ = self._one_hot(g2)
            f = wts / max(float(wts.sum()), 1e-300)
            p1, p2 = f @ X1, f @ X2
            L = np.column_stack([X1.T, p1])  # a x (N + 1)
            R = np.column_stack([X2.T, p2])
            M = np.diag(np.append(f, -1.0))
        else:
            return np.linalg.svd(self.cross(g1, g2), compute_uv=False), shape
        _, RL = np.linalg.qr(L)
        _, RR = np.linalg.qr(R)
        sv = np.linalg.svd(RL @ M @ RR.T, compute_uv=False)[: min(shape)]
        return np.concatenate([sv, np.zeros(min(shape) - sv.size)]), shape  # the rest are zero

    def q3(self, i: int, j: int, k: int) -> np.ndarray:
        """The third centred moment q(x_i, x_j, x_k) (slides "Some notation").

        Parameters
        ----------
        i, j, k : int

        Returns
        -------
        ndarray, shape (r_i, r_j, r_k)
        """
        pi, pj, pk = self.p(i), self.p(j), self.p(k)
        return (
            self.p(i, j, k)
            - pi[:, None, None] * self.p(j, k)[None]
            - pj[None, :, None] * self.p(i, k)[:, None, :]
            - pk[None, None, :] * self.p(i, j)[:, :, None]
            + 2 * np.einsum("a,b,c->abc", pi, pj, pk)
        )


def exact_joint(weights, profiles) -> np.ndarray:
    """The full joint table p(x_1..x_n) = sum_t w_t prod_i theta_i[t, x_i] (small models only).

    Parameters
    ----------
    weights : sequence of float, shape (K,)
    profiles : sequence of ndarray, shape (K, r_i)

    Returns
    -------
    ndarray, shape (r_1, ..., r_n)
    """
    out = np.asarray(weights, float)[:, None]
    for P in profiles:
        out = (out[:, :, None] * np.asarray(P)[:, None, :]).reshape(len(weights), -1)
    return out.sum(axis=0).reshape([np.asarray(P).shape[1] for P in profiles])


def _best_triple(mo: Moments):
    """Variables (a, b, c) and values (u, v, t) of a, b, c maximising min |q(u,v)|, |q(t,v)|, |q(t,u)|."""
    n = len(mo.cards)
    best, arg = -1.0, None
    for a, b, c in itertools.permutations(range(min(n, 12)), 3):
        if b < c:  # (b, c) and (c, b) give the same three numbers up to the roles of v and t
            qab, qcb, qca = np.abs(mo.q2(a, b)), np.abs(mo.q2(c, b)), np.abs(mo.q2(c, a))
            score = np.minimum(np.minimum(qab[:, :, None], qcb.T[None, :, :]), qca.T[:, None, :])
            k = np.unravel_index(int(np.argmax(score)), score.shape)
            if score[k] > best:
                best, arg = float(score[k]), (a, b, c, *map(int, k))
    return best, arg


def invert_two_classes(source, tol: float = 1e-12) -> tuple[np.ndarray, list]:
    """(w (2,), [theta_i (2, r_i)]) mapped to the K = 2 distribution ``source`` (a full joint array, or a
    :class:`Moments`) by the closed-form inversion of the module docstring; the other parameter set of the
    fiber is the label swap.  An LcaError when fewer than three variables or no triple has non-zero q.

    Parameters
    ----------
    source : ndarray or Moments
    tol : float
        Smallest usable triple score.

    Returns
    -------
    w : ndarray, shape (2,)
    profiles : list of ndarray, shape (2, r_i)

    References
    ----------
    Auvray & Wehenkel (2008), the closed-form inversion (fibers) of the naive Bayes parametrisation.
    """
    mo = source if isinstance(source, Moments) else Moments.from_joint(source)
    if len(mo.cards) < 3:
        raise LcaError(
            "The K = 2 inversion needs at least three variables (with two the fiber is a continuum)."
        )
    score, arg = _best_triple(mo)
    if arg is None or score <= tol:
        raise LcaError(
            "No three variables are dependent enough for the inversion: the distribution has one class."
        )
    a, b, c, u, v, t = arg
    quv, qtv, qtu = mo.q2(a, b)[u, v], mo.q2(c, b)[t, v], mo.q2(c, a)[t, u]
    qutv = mo.q3(a, c, b)[u, t, v]
    roots = np.roots([qtv, qutv, -qtu * quv])
    if np.iscomplexobj(roots) and np.abs(roots.imag).max() > 1e-9 * max(1.0, np.abs(roots).max()):
        raise LcaError("The moment polynomial has complex roots: the distribution is not a two-class model.")
    Au = -np.sort(roots.real)  # one class order of the two; the other is the label swap
    w = np.array([Au[1], -Au[0]]) / (Au[1] - Au[0])
    profiles = []
    for i in range(len(mo.cards)):
        ref, rv = (b, v) if i != b else (c, t)
        qx = mo.q2(i, ref)[:, rv] if i != a else mo.q2(a, b)[:, v]
        qu = mo.q2(a, ref)[u, rv] if i != a else quv
        lam = qx / qu  # A_x = lam_x A_u
        profiles.append(mo.p(i)[None, :] + Au[:, None] * lam[None, :])
    return w, profiles


def _split(cards) -> tuple[list, list]:
    """Two disjoint groups with balanced sum (r_i - 1): variables by decreasing cardinality, alternately."""
    order = sorted(range(len(cards)), key=lambda i: -cards[i])
    g1, g2, s1, s2 = [], [], 0, 0
    for i in order:
        if s1 <= s2:
            g1.append(i)
            s1 += cards[i] - 1
        else:
            g2.append(i)
            s2 += cards[i] - 1
    return sorted(g1), sorted(g2)


def rank_diagnostic(source, n_rows: float | None = None, tol: float | None = None, groups=None) -> dict:
    """Singular values of the cross-moment matrix Q between two disjoint groups of variables (module
    docstring).

    ``source``: a :class:`Moments`, a latent class model (exact moments) or a full joint array.  ``tol``: the
    noise level; default (sqrt(a) + sqrt(b)) / (2 sqrt(N)) for data (a x b the size of Q, a heuristic bound on
    the spectral norm of sampling noise with entry standard deviation <= 1 / (2 sqrt N)), 1e-9 times the
    largest singular value (at least 1e-12) for an exact distribution (``n_rows`` None).

    Parameters
    ----------
    source : Moments, LatentClassModel or ndarray
    n_rows : float, optional
        Rows behind empirical moments (None: exact).
    tol : float, optional
    groups : (sequence of int, sequence of int), optional
        Default: two halves of the variables.

    Returns
    -------
    dict
        ``singular_values``, ``tol``, ``groups``, ``classes_supported`` (1 + the singular values above
        ``tol``) and ``max_detectable``.

    Raises
    ------
    LcaError
        With fewer than two variables.

    References
    ----------
    Auvray & Wehenkel (2008), the rank (implicit-equation) condition on the number of classes.
    """
    if isinstance(source, Moments):
        mo = source
    elif hasattr(source, "profiles"):
        mo = Moments.from_model(source)
    else:
        mo = Moments.from_joint(source)
    cards = mo.cards
    if len(cards) < 2:
        raise LcaError("The rank diagnostic needs at least two variables.")
    g1, g2 = groups or _split(cards)
    sv, shape = mo.cross_singular_values(g1, g2)
    if tol is None:
        tol = (
            (math.sqrt(shape[0]) + math.sqrt(shape[1])) / (2 * math.sqrt(n_rows))
            if n_rows
            else max(1e-9 * (float(sv[0]) if sv.size else 0.0), 1e-12)
        )
    cap = 1 + min(sum(cards[i] - 1 for i in g1), sum(cards[i] - 1 for i in g2))
    return {
        "singular_values": [float(s) for s in sv],
        "tol": float(tol),
        "groups": [list(g1), list(g2)],
        "classes_supported": int(1 + np.sum(sv > tol)),
        "max_detectable": int(cap),
    }


def kruskal_rank(gram: np.ndarray, tol: float = 1e-8) -> int:
    """The Kruskal rank of a matrix given the Gram matrix of its rows: the largest k such that EVERY k rows
    are linearly independent (rows scaled to unit length; independent = smallest eigenvalue above ``tol``).

    Parameters
    ----------
    gram : ndarray, shape (K, K)
    tol : float

    Returns
    -------
    int
    """
    d = np.sqrt(np.maximum(np.diag(gram), 1e-300))
    G = gram / np.outer(d, d)
    K = G.shape[0]
    kr = 0
    for k in range(1, K + 1):
        if all(np.linalg.eigvalsh(G[np.ix_(s, s)])[0] > tol for s in itertools.combinations(range(K), k)):
            kr = k
        else:
            break
    return kr


def _group_gram(profiles, group) -> np.ndarray:
    """Gram of the rows of the K x prod r matrix whose row t is the Kronecker product of the group's
    profiles."""
    G = np.ones((profiles[0].shape[0],) * 2)
    for i in group:
        G = G * (profiles[i] @ profiles[i].T)
    return G


def _partitions(n: int, K: int, cards, tries: int = 60):
    """Candidate partitions of the variables into three non-empty blocks: round robin by decreasing
    cardinality, contiguous thirds, then seeded random ones."""
    order = sorted(range(n), key=lambda i: -cards[i])
    yield [sorted(order[j::3]) for j in range(3)]
    yield [list(range(n))[j * n // 3 : (j + 1) * n // 3] for j in range(3)]
    rng = np.random.default_rng(0)
    for _ in range(tries):
        lab = rng.integers(0, 3, n)
        if len(set(lab.tolist())) == 3:
            yield [sorted(np.flatnonzero(lab == j).tolist()) for j in range(3)]


def identifiability(model, tol: float = 1e-8) -> dict:
    """Whether the fitted latent class ``model``'s parameters are determined by its distribution (module
    docstring): ``identifiable`` True (Kruskal holds: exactly K! label swaps), False (a continuum), or None
    (neither shown), with ``parameter_sets``, ``reason`` and the checks.

    Parameters
    ----------
    model : LatentClassModel
    tol : float
        As :func:`kruskal_rank`.

    Returns
    -------
    dict

    References
    ----------
    Allman, Matias & Rhodes (2009), Thm. 1 (Kruskal's condition); Auvray & Wehenkel (2008) (fibers).
    """
    K = model.n_classes
    cards = [int(r) for r in model.cardinalities]
    n = len(cards)
    profiles = [np.asarray(p) for p in model.profiles]
    cells = int(np.prod([float(r) for r in cards])) - 1 if n < 60 else None
    out = {
        "classes": K,
        "label_swaps": math.factorial(K),
        "parameters": model.parameters,
        "cells_minus_one": cells,
        "kruskal": None,
        "seed_condition": None,
    }
    if K == 1:
        return {
            **out,
            "identifiable": True,
            "parameter_sets": 1,
            "reason": "one class: the profiles are the margins",
        }
    if n < 3:
        return {
            **out,
            "identifiable": False,
            "parameter_sets": "continuum",
            "reason": f"{n} variable(s): every p(x) with K >= 2 classes has a continuum of parameters "
            "(a nonnegative matrix factorisation)",
        }
    if cells is not None and model.parameters > cells:
        return {
            **out,
            "identifiable": False,
            "parameter_sets": "continuum",
            "reason": f"{model.parameters} parameters for {cells} free cell probabilities",
        }
    w = np.asarray(model.weights)
    if (w < tol).any():
        return {
            **out,
            "identifiable": False,
            "parameter_sets": "continuum",
            "reason": "a class has weight zero: its profiles are free",
        }
    stacked = np.concatenate(profiles, axis=1)
    for s, t in itertools.combinations(range(K), 2):
        if np.abs(stacked[s] - stacked[t]).max() < 1e-6:
            return {
                **out,
                "identifiable": False,
                "parameter_sets": "continuum",
                "reason": f"classes {s + 1} and {t + 1} have the same profiles: their weights can be traded",
            }
    best = None
    if K <= 10:
        for part in _partitions(n, K, cards):
            ranks = [kruskal_rank(_group_gram(profiles, g), tol) for g in part]
            if best is None or sum(ranks) > sum(best[1]):
                best = (part, ranks)
            if sum(ranks) >= 2 * K + 2:
                break
    mo = Moments.from_model(model)
    names = list(model.variables)
    if best is not None:
        part, ranks = best
        out["kruskal"] = {
            "groups": [[names[i] for i in g] for g in part],
            "ranks": ranks,
            "sum": int(sum(ranks)),
            "needed": 2 * K + 2,
            "holds": bool(sum(ranks) >= 2 * K + 2),
        }
        qr = [
            int(np.sum(mo.cross_singular_values(a, b)[0] > 1e-9))
            for a, b in ((part[0], part[1]), (part[0], part[2]), (part[1], part[2]))
        ]
        holds = all(r >= K - 1 for r in qr)
        out["seed_condition"] = {
            "cross_ranks": [int(r) for r in qr],
            "needed": K - 1,
            "holds": bool(holds),
            "at_most": math.factorial(K) ** (K - 1),
        }
    if out["kruskal"] and out["kruskal"]["holds"]:
        return {
            **out,
            "identifiable": True,
            "parameter_sets": math.factorial(K),
            "reason": f"Kruskal's condition holds: exactly the {math.factorial(K)} label swaps",
        }
    if K == 2 and out["seed_condition"] and out["seed_condition"]["holds"]:
        return {
            **out,
            "identifiable": True,
            "parameter_sets": 2,
            "reason": "the K = 2 inversion applies (three dependent variables): exactly the 2 label swaps",
        }
    if out["seed_condition"] and out["seed_condition"]["holds"]:
        return {
            **out,
            "identifiable": None,
            "parameter_sets": f"at most {math.factorial(K) ** (K - 1)}",
            "reason": "the seed's hypothesis holds (finitely many parameter sets) but Kruskal's does not",
        }
    return {
        **out,
        "identifiable": None,
        "parameter_sets": "unknown",
        "reason": "neither Kruskal's condition nor the seed's hypothesis could be shown",
    }
