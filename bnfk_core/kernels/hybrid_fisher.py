"""The Fisher kernel of a conditional linear Gaussian network: explicit features and Gram matrix.

The kernel is K(x, y) = s(x)^T I^-1 s(y), s the score (gradient of log p(x)) in every parameter of the network
and I the model's exact Fisher information (the bnfk paper, "Multivariate Fisher kernel", eqs. 8-9).  The
information is block diagonal over (node, parent configuration): a node's score has mean zero given its
parents, and configurations exclude each other.  Features phi(x) = I^-1/2 s(x), so K = phi(x) . phi(y).

* **Discrete node** i, configuration j of its parents, state k: exactly the discrete kernel's block (paper,
  Theorem 1; :mod:`bnfk_core.kernels.features`), columns ``offset_i + j r_i + k``:

      [pi_i(x) = j] ([x_i = k] - theta_ijk) / sqrt(theta_ijk P(pi_i = j)).

* **Numeric node** i, configuration j of its discrete parents D_i, z = (1, numeric parents C_i), residual
  r = x_i - beta_j . z, variance sigma_j^2 (the parameters are beta_j and sigma_j^2 itself; the kernel does
  not depend on the parameterisation, log sigma gives the same K).  The scores are

      d/d beta_j     = [D_i = j] z r / sigma_j^2,
      d/d sigma_j^2  = [D_i = j] (r^2 / (2 sigma_j^4) - 1 / (2 sigma_j^2)),

  and their information blocks P(D_i = j) E[z z^T | D_i = j] / sigma_j^2 and P(D_i = j) / (2 sigma_j^4)
  (the cross term is E[r^3] = 0).  With the Cholesky factor M_j = L_j L_j^T of E[z z^T | D_i = j]
  (:func:`bnfk_core.hybrid.moments.numeric_parent_moments`), the whitened columns
  ``offset_i + j (p_i + 2) + (0 .. p_i)`` and ``offset_i + j (p_i + 2) + p_i + 1`` hold

      [D_i = j] L_j^-1 z r / (sigma_j sqrt(P_j))    and    [D_i = j] (r^2 / sigma_j^2 - 1) / sqrt(2 P_j).

  Whitening by the Cholesky factor instead of the symmetric root rotates the block's features, leaving every
  inner product, hence K, unchanged.

A row with missing cells gets the marginalised score E[s(x) | x_observed] (the paper's conclusion): its
missing discrete cells are completed in every way (at most :data:`~bnfk_core.hybrid.em.MAX_COMPLETIONS`),
each completion d weighted by P(d, x_observed) -- the numeric nodes given every discrete node are jointly
Gaussian (:func:`~bnfk_core.hybrid.moments.numeric_joint`), so the missing numbers given the observed ones are
Gaussian -- and the features, linear in z r and r^2, take the conditional moments
E[z r] = z_hat r_hat + Cov(z, x_i) - Cov(z) beta_j and E[r^2] = r_hat^2 + Var(r).  All of this is exact.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import logsumexp

from ..errors import KernelError, ModelError
from ..hybrid.em import MAX_COMPLETIONS, row_groups
from ..hybrid.model import HybridNet
from ..hybrid.moments import discrete_part, numeric_joint, numeric_parent_moments
from ..hybrid.table import DISCRETE, MixedData

__all__ = [
    "hybrid_fisher_features",
    "hybrid_fisher_gram",
    "hybrid_feature_offsets",
    "hybrid_fisher_information",
]

_LOG_2PI = math.log(2.0 * math.pi)


def hybrid_feature_offsets(model: HybridNet) -> np.ndarray:
    """Column offset of every node's block in :func:`hybrid_fisher_features` (length n_vars + 1): q_i r_i
    columns for a discrete node, q_i (p_i + 2) for a numeric one (intercept, p_i weights, variance).

    Parameters
    ----------
    model : HybridNet

    Returns
    -------
    ndarray of int64, shape (n_vars + 1,)
    """
    sizes = [
        model.cpts[i].size
        if model.kinds[i] == DISCRETE
        else model.n_configs(i) * (len(model.numeric_parents(i)) + 2)
        for i in range(model.n_vars)
    ]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def hybrid_fisher_information(model: HybridNet) -> dict:
    """The blocks of the exact Fisher information (module docstring), cached on the model.

    Parameters
    ----------
    model : HybridNet

    Returns
    -------
    dict
        node index -> P of shape (q_i,): P(pi_i = j) of a discrete node (``bnfk_core.inference``'s exact
        parent marginals of :func:`~bnfk_core.hybrid.moments.discrete_part`); for a numeric node
        ``(P, M, Linv)``: P(D_i = j), M[j] = E[z z^T | D_i = j] and the inverse of its Cholesky factor
        (zero where P(D_i = j) = 0).
    """
    if "fisher_information" in model._cache:
        return model._cache["fisher_information"]
    from ..inference.queries import parent_marginals

    out = {}
    if model.discrete:
        pm = parent_marginals(discrete_part(model))
        for k, i in enumerate(model.discrete):
            out[i] = np.asarray(pm.probs[k], dtype=float)
    for i, (P, M) in numeric_parent_moments(model).items():
        Linv = np.zeros_like(M)
        for j in np.flatnonzero(P > 0):
            try:
                L = np.linalg.cholesky(M[j])
            except np.linalg.LinAlgError:
                raise ModelError(
                    f"The numeric parents of '{model.variables[i]}' are collinear under the model "
                    "(its Fisher information is singular)."
                ) from None
            Linv[j] = np.linalg.inv(L)
        out[i] = (P, M, Linv)
    model._cache["fisher_information"] = out
    return out


def _check_config(model: HybridNet, i: int, P: np.ndarray, j: np.ndarray, theta=None, x=None) -> None:
    """KernelError naming node i when a row's configuration (or state) has probability zero."""
    bad = ~(P[j] > 0)
    if theta is not None:
        bad |= ~(theta[j, x] > 0)
    if bad.any():
        raise KernelError(
            f"Node '{model.variables[i]}' has probability zero for a row's parent configuration or value; "
            "the Fisher kernel is undefined there (fit with a pseudo-count)."
        )


def _complete_rows(model: HybridNet, info: dict, off, codes, values, Phi, rows) -> None:
    """phi(x) of rows with every cell observed, written into Phi[rows]."""
    c, v = codes[rows], values[rows]
    n = len(rows)
    for i in range(model.n_vars):
        j = model.config(i, c)
        if model.kinds[i] == DISCRETE:
            theta, P = model.cpts[i], info[i]
            r = theta.shape[1]
            x = c[:, i].astype(np.int64)
            _check_config(model, i, P, j, theta, x)
            th = theta[j]
            den = np.sqrt(th * P[j][:, None])
            val = np.divide(np.eye(r)[x] - th, den, out=np.zeros_like(th), where=den > 0)
            cols = off[i] + j[:, None] * r + np.arange(r)
        else:
            P, _, Linv = info[i]
            g = model.gaussians[i]
            _check_config(model, i, P, j)
            cp = list(model.numeric_parents(i))
            z = np.column_stack([np.ones(n)] + [v[:, p] for p in cp])
            sd = np.sqrt(g.variance[j])
            res = v[:, i] - (g.coef[j] * z).sum(axis=1)
            scale = 1.0 / np.sqrt(P[j])
            reg = np.einsum("nab,nb->na", Linv[j], z) * (res * scale / sd)[:, None]
            var = (res * res / (sd * sd) - 1.0) * scale / math.sqrt(2.0)
            val = np.column_stack([reg, var])
            w = len(cp) + 2
            cols = off[i] + j[:, None] * w + np.arange(w)
        Phi[np.repeat(rows, cols.shape[1]), cols.ravel()] = val.ravel()


def _missing_rows(model: HybridNet, info: dict, off, data: MixedData, Phi, rows) -> None:
    """E[phi(x) | x_observed] of rows with missing cells (module docstring), added into Phi[rows]."""
    sub = MixedData(data.variables, data.kinds, data.states, data.codes[rows], data.values[rows], data.source)
    disc, num = list(model.discrete), list(model.numeric)
    npos = {v: k for k, v in enumerate(num)}
    joints: dict = {}
    # each node's discrete parents and their cardinalities, for the configuration of one complete row:
    # j = ravel_multi_index(parent codes, cardinalities), as HybridNet.config, in plain Python
    family = [
        tuple((p, len(model.states[p])) for p in model.discrete_parents(i)) for i in range(model.n_vars)
    ]

    def configs(d) -> list:
        out = []
        for fam in family:
            j = 0
            for p, card in fam:
                j = j * card + int(d[p])
            out.append(j)
        return out

    for grp, miss, obs_codes in row_groups(sub):
        mis_d = [i for i in disc if miss[i]]
        cards = [len(model.states[i]) for i in mis_d]
        if int(np.prod(cards)) > MAX_COMPLETIONS:
            raise ModelError(
                f"Row {int(rows[grp[0]]) + 1} leaves {int(np.prod(cards)):,} completions of its missing "
                f"discrete cells (more than {MAX_COMPLETIONS:,}); the marginalised Fisher score is not "
                "computed beyond that."
            )
        O = [npos[v] for v in num if not miss[v]]
        M = [npos[v] for v in num if miss[v]]
        xO = sub.values[np.ix_(grp, [num[k] for k in O])]
        B = len(grp)
        logw, parts = [], []
        for comp in itertools.product(*[range(c) for c in cards]):
            d = obs_codes.astype(np.int64).copy()
            d[mis_d] = comp
            cfg = configs(d)
            lp = 0.0
            for i in disc:
                t = model.cpts[i][cfg[i], d[i]]
                lp += math.log(t) if t > 0 else -math.inf
            xhat = np.zeros((B, len(num)))
            C = np.zeros((len(num), len(num)))
            ll = np.full(B, lp)
            if num and lp > -math.inf:
                key = tuple(int(d[i]) for i in disc)
                if key not in joints:
                    joints[key] = numeric_joint(model, {model.variables[i]: int(d[i]) for i in disc})
                mu, cov = joints[key]
                xhat[:] = mu[None, :]
                C[:] = cov
                if O:
                    Soo = cov[np.ix_(O, O)]
                    L = np.linalg.cholesky(Soo)
                    res = xO - mu[O][None, :]
                    sol = np.linalg.solve(L, res.T)
                    ll += -0.5 * (len(O) * _LOG_2PI + (sol * sol).sum(axis=0)) - np.log(np.diag(L)).sum()
                    xhat[:, O] = xO
                    C[np.ix_(O, O)] = 0.0
                    C[np.ix_(O, M)] = C[np.ix_(M, O)] = 0.0
                    if M:
                        K = np.linalg.solve(Soo, cov[np.ix_(O, M)]).T  # S_MO S_OO^-1
                        xhat[:, M] = mu[M][None, :] + res @ K.T
                        C[np.ix_(M, M)] = cov[np.ix_(M, M)] - K @ cov[np.ix_(O, M)]
            logw.append(ll)
            parts.append((d, xhat, C, cfg))
        logw = np.array(logw)
        norm = logsumexp(logw, axis=0)
        if not np.isfinite(norm).all():
            bad = int(rows[grp[np.flatnonzero(~np.isfinite(norm))[0]]])
            raise KernelError(f"Row {bad + 1} has observed values that the model gives probability zero.")
        w = np.exp(logw - norm[None, :])
        out_rows = rows[grp]
        for (d, xhat, C, cfg), wc in zip(parts, w):
            if not (wc > 0).any():
                continue
            for i in range(model.n_vars):
                j = cfg[i]
                if model.kinds[i] == DISCRETE:
                    theta, P = model.cpts[i][j], info[i][j]
                    r = theta.size
                    val = np.divide(
                        np.eye(r)[d[i]] - theta, np.sqrt(theta * P), out=np.zeros(r), where=theta > 0
                    )
                    Phi[out_rows, off[i] + j * r : off[i] + (j + 1) * r] += wc[:, None] * val[None, :]
                    continue
                P, _, Linv = info[i]
                g = model.gaussians[i]
                cp = [npos[p] for p in model.numeric_parents(i)]
                beta = g.coef[j]
                zhat = np.column_stack([np.ones(B), xhat[:, cp]])
                rhat = xhat[:, npos[i]] - zhat @ beta
                Cz = np.zeros((len(cp) + 1, len(cp) + 1))
                Cz[1:, 1:] = C[np.ix_(cp, cp)]
                Czx = np.concatenate([[0.0], C[cp, npos[i]]])
                Ezr = zhat * rhat[:, None] + (Czx - Cz @ beta)[None, :]
                Er2 = rhat * rhat + (C[npos[i], npos[i]] - 2.0 * beta @ Czx + beta @ Cz @ beta)
                scale = 1.0 / math.sqrt(P[j])
                sd = math.sqrt(g.variance[j])
                reg = (Ezr @ Linv[j].T) * (scale / sd)
                var = (Er2 / (sd * sd) - 1.0) * scale / math.sqrt(2.0)
                width = len(cp) + 2
                a = off[i] + j * width
                Phi[out_rows, a : a + width] += wc[:, None] * np.column_stack([reg, var])


def hybrid_fisher_features(model: HybridNet, data: MixedData) -> np.ndarray:
    """The explicit Fisher features phi(x) = I^-1/2 s(x) of a CLG network (module docstring).

    Parameters
    ----------
    model : HybridNet
    data : MixedData
        Aligned to the model by :meth:`HybridNet.align` (columns by name, states re-coded).

    Returns
    -------
    ndarray, shape (N, P)
        P = :func:`hybrid_feature_offsets` ``[-1]``; a row with missing cells holds E[phi(x) | x_observed],
        a row without any observed cell zeros.

    Raises
    ------
    KernelError
        A row the model gives probability zero.
    ModelError
        Data the model cannot align, or a case the marginalisation does not cover (more than
        :data:`~bnfk_core.hybrid.em.MAX_COMPLETIONS` completions of a row's missing discrete cells, more than
        :data:`~bnfk_core.hybrid.moments.MAX_MOMENT_STATES` joint states of the numeric nodes' discrete
        parents).

    References
    ----------
    The bnfk paper, Theorem 1 (the discrete blocks) and eqs. 8-9 (the Fisher kernel s^T I^-1 s).
    """
    data = model.align(data)
    info = hybrid_fisher_information(model)
    off = hybrid_feature_offsets(model)
    Phi = np.zeros((data.n_rows, int(off[-1])))
    complete = data.complete_rows()
    if complete.any():
        _complete_rows(model, info, off, data.codes, data.values, Phi, np.flatnonzero(complete))
    if not complete.all():
        _missing_rows(model, info, off, data, Phi, np.flatnonzero(~complete))
    return Phi


def hybrid_fisher_gram(
    model: HybridNet, data: MixedData, other: MixedData | None = None, normalize: bool = False
) -> np.ndarray:
    """The Fisher kernel matrix K(x, y) = phi(x) . phi(y) of a CLG network between the rows of ``data`` and of
    ``other`` (default ``data``).

    Parameters
    ----------
    model : HybridNet
    data, other : MixedData
    normalize : bool
        Cosine-normalise, K(x, y) / sqrt(K(x, x) K(y, y)); a row without any observed cell (features zero)
        gets 0, as :func:`bnfk_core.kernels.fisher.normalize_rows` gives the discrete kernel's.

    Returns
    -------
    ndarray, shape (N, M)

    References
    ----------
    The bnfk paper, eqs. 8-9; on an all-discrete network this is Theorem 1's kernel.
    """
    from ..data.limits import DEFAULT_MAX_BYTES, guard_gram, one_blas_thread
    from .fisher import normalize_bytes, normalize_rows

    X = hybrid_fisher_features(model, data)
    Y = X if other is None else hybrid_fisher_features(model, other)
    guard_gram(
        X.shape[0], Y.shape[0], normalize_bytes(X.shape[0], Y.shape[0]) if normalize else 0, DEFAULT_MAX_BYTES
    )
    used = np.flatnonzero((X != 0).any(axis=0) | (Y != 0).any(axis=0))  # columns no row touches add nothing
    Xu = X[:, used]
    # A @ A.T runs as one symmetric rank-k update; one BLAS thread: measured on the shared two-core machine at
    # N = 5,000, as fast with 419 columns and 2-4 times faster with 34 as two threads
    with one_blas_thread():
        K = Xu @ Xu.T if other is None else Xu @ Y[:, used].T
    if normalize:
        dx = np.einsum("ij,ij->i", X, X)
        dy = dx if other is None else np.einsum("ij,ij->i", Y, Y)
        ex = model.align(data).missing_mask().all(axis=1)
        ey = ex if other is None else model.align(other).missing_mask().all(axis=1)
        normalize_rows(K, dx, dy, ex, ey)
    return K
