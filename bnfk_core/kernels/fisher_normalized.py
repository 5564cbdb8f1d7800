"""The power- and L2-normalised Fisher kernel: the Fisher kernel that clusters.

Perronnin, Sanchez & Mensink (2010) improved Fisher vectors for image classification by two maps applied to
every feature vector: a signed power z -> sign(z)|z|^alpha on each coordinate, then L2 normalisation of the
vector.  Here they are applied to the Bayesian-network Fisher features phi(x) of Theorem 1
(:mod:`bnfk_core.kernels.features`):

    psi(x) = u(x) / ||u(x)||,   u(x)_c = sign(phi(x)_c) |phi(x)_c|^alpha,

    K_alpha(x, y) = psi(x) . psi(y).

Which coordinates.  Block (i, j, k) of phi(x) is [pi_i(x) = j] ([x_i = k] - theta_ijk) / sqrt(theta_ijk P_j):
the score of log p(x) in the square-root coordinates eta_ijk = 2 sqrt(theta_ijk) (projected on the tangent
space of the sphere |eta_ij| = 2), where the Fisher information is P_j times the identity on that tangent space;
so phi(x) = I^{+1/2} s_eta(x), one coordinate per CPT entry theta_ijk.  The power map acts on these
coordinates.  The Fisher kernel phi(x) . phi(y) does not depend on the parametrisation; K_alpha does (for
alpha != 1), and this is the one we define it in (tests/test_fisher_normalized.py checks the features against a
brute-force I^{+1/2} s_eta on small networks).

What it keeps.  K_alpha = Psi Psi^T is a Gram matrix of explicit features, so it is symmetric and positive
semidefinite for every alpha > 0; K_alpha(x, x) = 1 for every row with phi(x) != 0; |K_alpha| <= 1.  The power
map sends 0 to 0, so psi(x) has the non-zeros of phi(x): Sigma_i r_i a complete row.  alpha = 1 is the
cosine-normalised Fisher kernel K(x, y) / sqrt(K(x, x) K(y, y)).

What it loses (docs/KERNELS.md has the numbers).

* Invariance under equivalent structures (paper, Theorem 4).  Markov-equivalent networks with
  likelihood-equivalent CPTs (BDeu) give the same Fisher kernel, so their features differ by an isometry of
  the spans -- a rotation the coordinatewise power map does not commute with.  K_1 stays invariant (it is a
  function of K); K_alpha, alpha < 1, is not: a covered-arc reversal changes it.
* It is not a Fisher kernel s^T I^-1 s of any model, and E_model[psi] != 0 (the score's mean is zero,
  psi's is not): the kernel is no longer centred under the model.
* The set kernel and MMD (paper, eq. 10) remain valid for K_alpha (means of psi), but mean psi(X) is not a
  function of the family counts of X (psi is not linear in the one-hot family indicators): the count formula
  and its one-sparse-product swap updates do not carry over; the mean is taken over rows.

Rows with missing cells.  The marginalised Fisher kernel uses E[phi(x) | x_observed]; phi is linear in the
family indicators, so that expectation needs only family posteriors.  The marginalised version of the
normalised kernel would be E[psi(X) | x_observed], an average of a non-linear function of the whole row
over every completion of its missing cells -- exponential in the number of missing cells, and not a function
of family posteriors.  We compute psi on the completed expectation instead: psi(E[phi(x) | x_observed]).
It is the same feature map applied to the marginalised features (so K_alpha stays PSD and equals the cosine
normalised marginalised kernel at alpha = 1), it costs what the marginalised Fisher kernel costs, and a
complete row gets psi(phi(x)) exactly.  It is not E[psi | observed]: the power map and the normalisation do
not commute with the average (tests show the difference on a small network).  A row whose expected features
are all zero (every cell missing: E[phi] = 0 under the model) keeps zero features and K_alpha(x, x) = 0.

References
----------
.. [1] F. Perronnin, J. Sanchez, T. Mensink (2010), "Improving the Fisher kernel for large-scale image
   classification", ECCV 2010, section 3 (L2 normalisation, power normalisation).
.. [2] The bnfk paper (Leppa-aho, Silander, Roos 2020), Theorem 1 (the features), Theorem 4 (equivalence),
   eq. (10) (set kernel and MMD).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..data.limits import DEFAULT_MAX_BYTES, guard_gram
from ..errors import KernelError
from .features import FEATURE_CHUNK_ROWS, feature_offsets, features, row_codes
from .fisher import FISHER_NORMALIZED, NetworkKernel

__all__ = ["DEFAULT_ALPHA", "ZERO_TOL", "ABOUT", "DEFAULT_NETWORK", "DEFAULT_ALGORITHM", "power_normalize", "normalized_features",
           "normalized_gram", "NormalizedFisherKernel", "fit_fisher_normalized", "check_alpha"]

#: the power chosen by measurement on half of the bundled labelled sets (docs/KERNELS.md)
DEFAULT_ALPHA = 0.02
#: one sentence for the app's captions: what the normalisation does, its source, what it gives up
ABOUT = ("Each Fisher feature z becomes sign(z)|z|^α and each row is then scaled to unit length (Perronnin, "
         "Sánchez & Mensink 2010, 'Improving the Fisher kernel for large-scale image classification'), so that no "
         "rare value dominates a row; the kernel stays positive semidefinite with K(x,x) = 1, but for α < 1 it is no "
         "longer the same for Markov-equivalent networks (docs/KERNELS.md).")
#: the recipe fields of the default network: structure, score, CPT estimator and its pseudo-count
#: (docs/KERNELS.md; the empty network won on the selection sets: measured, not assumed -- a learned network is
#: better on a few sets, e.g. spect at alpha 1 and house votes with a tree at alpha 0.25, worse in the mean at every
#: alpha, with k-means and with Ward)
DEFAULT_NETWORK = {"structure": "empty", "score": "bic", "params": "bdeu", "pseudo_count": 5.0}
#: what ``cluster --algorithm auto`` runs with this kernel (chosen with the other defaults, docs/KERNELS.md):
#: Ward on K_alpha, or k-means on psi where Ward's work space exceeds the memory limit
DEFAULT_ALGORITHM = "ward"


def check_alpha(alpha) -> float:
    """``alpha`` as a float in (0, 1], or a KernelError naming it.

    Parameters
    ----------
    alpha : object

    Returns
    -------
    float
    """
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise KernelError(f"The power alpha must be a number in (0, 1], not {alpha!r}.") from None
    if not (0.0 < a <= 1.0):
        raise KernelError(f"The power alpha must be in (0, 1], not {alpha!r}.")
    return a


def power_normalize(Phi, alpha: float = DEFAULT_ALPHA) -> sp.csr_matrix:
    """Each row of ``Phi`` mapped by z -> sign(z)|z|^alpha coordinatewise, then divided by its L2 norm.

    Parameters
    ----------
    Phi : sparse or dense (N, D) matrix
        Feature rows.
    alpha : float
        The power, in (0, 1] (Perronnin et al. 2010, section 3.2; alpha = 1: L2 normalisation only).

    Returns
    -------
    scipy.sparse.csr_matrix
        A new float64 matrix with the non-zeros of ``Phi`` (the power map keeps 0 at 0); a zero row stays zero.
    """
    a = check_alpha(alpha)
    P = sp.csr_matrix(Phi, dtype=np.float64, copy=True)
    P.eliminate_zeros()
    if a != 1.0:
        P.data = np.sign(P.data) * np.abs(P.data) ** a
    sq = np.asarray(P.multiply(P).sum(axis=1)).ravel()
    norm = np.sqrt(sq)
    scale = np.divide(1.0, norm, out=np.zeros_like(norm), where=norm > 0)
    P.data *= np.repeat(scale, np.diff(P.indptr))
    return P


#: an expected feature whose probability difference |F_jk - P(pi=j | x_obs) theta_jk| (phi's numerator) is below
#: this is zero: the power map's slope alpha |z|^(alpha-1) is unbounded at 0, so rounding noise (1e-17 where the
#: exact value is 0, e.g. a block whose family is all missing) would otherwise become visible features
ZERO_TOL = 1e-12


def _column_scale(model, pm) -> np.ndarray:
    """sqrt(theta_ijk P(pi_i = j)) for every column of phi (its denominator)."""
    return np.sqrt(np.concatenate([(t * np.asarray(p)[:, None]).ravel() for t, p in zip(model.cpts, pm.probs)]))


def normalized_features(model, data, alpha: float = DEFAULT_ALPHA, marginals=None,
                        chunk_rows: int = FEATURE_CHUNK_ROWS) -> sp.csr_matrix:
    """psi(x) of every row (module docstring): the Fisher features of ``model``
    (:func:`bnfk_core.kernels.features.features`; E[phi | observed] for rows with missing cells), power-mapped
    with ``alpha`` and L2-normalised.  Sparse (N, sum_i q_i r_i), the non-zeros of phi (entries whose
    probability difference is below :data:`ZERO_TOL` are zero).

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData, pandas.DataFrame or codes
    alpha : float
        In (0, 1].
    marginals : parent marginals of ``model``, optional
    chunk_rows : int

    Returns
    -------
    scipy.sparse.csr_matrix, shape (N, sum_i q_i r_i)
    """
    from ..inference.queries import parent_marginals
    a = check_alpha(alpha)
    pm = parent_marginals(model) if marginals is None else marginals
    Phi = features(model, data, marginals=pm, chunk_rows=chunk_rows)
    scale = _column_scale(model, pm)
    Phi.data[np.abs(Phi.data) * scale[Phi.indices] < ZERO_TOL] = 0.0
    return power_normalize(Phi, a)


def normalized_gram(model, data, other=None, alpha: float = DEFAULT_ALPHA,
                    max_bytes: float | None = DEFAULT_MAX_BYTES, marginals=None) -> np.ndarray:
    """K_alpha between the rows of ``data`` and of ``other`` (default ``data``): Psi_x Psi_y^T, exact.

    Parameters
    ----------
    model : BayesNet
        The network whose Fisher features (paper, Theorem 1) are normalised.
    data, other : CategoricalData or code matrices aligned to the model
    alpha : float
        The power, in (0, 1].
    max_bytes : float or None
        Refuse (KernelError) when the matrix and its work space would exceed this many bytes.
    marginals : ParentMarginals or None
        P(pi_i = j) to use instead of the model's exact ones.

    Returns
    -------
    numpy.ndarray
        The (N, M) Gram matrix; symmetric (exactly) when ``other`` is None.
    """
    a = check_alpha(alpha)
    X = row_codes(model, data)
    Y = None if other is None else row_codes(model, other)
    n, m = X.shape[0], (X if Y is None else Y).shape[0]
    width = int(feature_offsets(model)[-1])
    nnz_row = sum(int(c.shape[1]) for c in model.cpts)
    guard_gram(n, m, 12 * (n + m) * min(width, nnz_row), max_bytes)
    Px = normalized_features(model, X, a, marginals)
    Py = Px if Y is None else normalized_features(model, Y, a, marginals)
    K = (Px @ Py.T).toarray()
    if Y is None:
        K = 0.5 * (K + K.T)          # exactly symmetric (the sparse product's sums may round differently)
    return K


class NormalizedFisherKernel(NetworkKernel):
    """The power- and L2-normalised Fisher kernel of a fitted network (module docstring); ``features`` is its
    explicit feature map, so kernel k-means runs on it in linear memory.

    ``auto_algorithm``: what ``cluster --algorithm auto`` runs with this kernel -- :data:`DEFAULT_ALGORITHM`, chosen
    with the other defaults on the selection sets (docs/KERNELS.md); k-means on psi where its work space does not fit
    the memory limit."""

    auto_algorithm = DEFAULT_ALGORITHM

    def __init__(self, model, alpha: float = DEFAULT_ALPHA, *, structure=None, params=None, notes=()):
        super().__init__(FISHER_NORMALIZED, model, structure=structure, params=params, notes=notes)
        self.alpha = check_alpha(alpha)

    def gram(self, X, Y=None, *, normalize=False, max_bytes=DEFAULT_MAX_BYTES):
        """K_alpha (already unit-diagonal: ``normalize`` changes nothing but all-missing rows, which stay 0)."""
        return normalized_gram(self.model, X, Y, self.alpha, max_bytes=max_bytes)

    def features(self, data) -> sp.csr_matrix:
        """psi of the rows of ``data`` (K_alpha = Psi Psi^T).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes

        Returns
        -------
        scipy.sparse.csr_matrix
        """
        return normalized_features(self.model, data, self.alpha)

    def contributions(self, x, y) -> np.ndarray:
        """Per-variable terms of K_alpha(x, y): block i's part of psi(x) . psi(y); they sum to K_alpha(x, y)."""
        cx, cy = row_codes(self.model, x), row_codes(self.model, y)
        P = normalized_features(self.model, np.vstack([cx, cy]), self.alpha)
        prod = P[0].multiply(P[1]).tocsr()
        off = feature_offsets(self.model)
        out = np.zeros(self.model.n_vars)
        np.add.at(out, np.searchsorted(off, prod.indices, side="right") - 1, prod.data)
        return out


def fit_fisher_normalized(train, *, model=None, dag=None, alpha: float | None = None, structure: str | None = None,
                          score: str | None = None, params: str | None = None, pseudo_count: float | None = None,
                          recipe=None, seed: int = 0, progress=None, **_ignored) -> NormalizedFisherKernel:
    """The normalised Fisher kernel for ``train`` (no label column).

    The network: ``model`` as given; else the CPTs of ``dag`` fitted on ``train`` by ``params``; else the one
    :func:`bnfk_core.learning.recipe.learn_recipe` learns on ``train`` from ``recipe`` (a
    :class:`~bnfk_core.learning.recipe.Recipe`), with ``structure``/``score``/``params``/``pseudo_count`` given
    here replacing its fields.  Without a recipe the fields not given are :data:`DEFAULT_NETWORK`'s (chosen by
    measurement, docs/KERNELS.md), not the Fisher kernel's.  ``alpha`` defaults to :data:`DEFAULT_ALPHA`.

    Parameters
    ----------
    train : CategoricalData
    model : BayesNet, optional
    dag : DAG, optional
    alpha : float, optional
    structure, score, params : str, optional
    pseudo_count : float, optional
    recipe : Recipe, optional
    seed : int
        Used without ``recipe``.
    progress : callable, optional
        Passed to the learner.

    Returns
    -------
    NormalizedFisherKernel
    """
    from ..learning.recipe import Recipe, learn_recipe
    from ..network.model import fit

    a = DEFAULT_ALPHA if alpha is None else check_alpha(alpha)
    if model is not None:
        info = getattr(model, "fit_info", None) or {}
        return NormalizedFisherKernel(model, a, structure="given", params=info.get("method"))
    if dag is not None:
        p = params or DEFAULT_NETWORK["params"]
        if pseudo_count is None and params is None:
            pseudo_count = DEFAULT_NETWORK["pseudo_count"]
        kw = {} if pseudo_count is None else {"pseudo_count": float(pseudo_count)}
        return NormalizedFisherKernel(fit(dag, train, method=p, **kw), a, structure="given structure", params=p)
    base = recipe if recipe is not None else Recipe(**DEFAULT_NETWORK)
    rec = base.replace(structure=structure, score=score, params=params, pseudo_count=pseudo_count,
                       seed=None if recipe is not None else seed)
    learned = learn_recipe(train, rec, progress=progress)
    out = NormalizedFisherKernel(learned.model, a, structure=f"{rec.structure}/{rec.score}", params=rec.params,
                                 notes=tuple(getattr(learned.result, "notes", ()) or ()))
    out.recipe = rec          # the recipe followed (its pseudo-count included): the clustering JSON reports it
    return out


