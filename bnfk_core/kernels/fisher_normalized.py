"""The power- and L2-normalised Fisher kernel: the Fisher kernel that clusters.

Perronnin, Sanchez & Mensink (2010) improved Fisher vectors for image classification by two maps applied to
every feature vector: a signed power z -> sign(z)|z|^alpha on each coordinate, then L2 normalisation of the
vector.  Here they are applied to the Bayesian-network Fisher features phi(x) of Theorem 1
(:mod:`bnfk_core.kernels.features`):

    psi(x) = u(x) / ||u(x)||,   u(x)_c = sign(phi(x)_c) |phi(x)_c|^alpha,

    K_alpha(x, y) = psi(x) . psi(y).

Which coordinates.  Block (i, j, k) of phi(x) is [pi_i(x) = j] ([x_i = k] - theta_ijk) / sqrt(theta_ijk P_j):
the score of log p(x) in the square-root coordinates eta_ijk = 2 sqrt(theta_ijk) (projected on the tangent
space of the sphere |eta_ij| = 2), where the Fisher information is P_j times the identity on that tangent
space; so phi(x) = I^{+1/2} s_eta(x), one coordinate per CPT entry theta_ijk.  The power map acts on these
coordinates.  The Fisher kernel phi(x) . phi(y) does not depend on the parametrisation; K_alpha does (for
alpha != 1), and this is the one we define it in (tests/test_fisher_normalized.py checks the features against
a brute-force I^{+1/2} s_eta on small networks).

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
  psi's is not): the kernel is not centred under the model.
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

The default network: latent classes beside the empty network.  Jaakkola & Haussler (1999) defined the Fisher
kernel for a generative model with a hidden variable; for the latent class model (a hidden root C with K
states, every observed variable its only child; :func:`fit_latent_classes`) the score of
log p(x) = log sum_c pi_c prod_i theta_{x_i|c} is the posterior-weighted complete-data score, and whitened by
the complete-data information it is exactly the marginalised Fisher features of that network with C always
missing
(block (i, c, v): P(c | x) ([x_i = v] - theta_{v|c}) / sqrt(pi_c theta_{v|c}); C's block:
(P(c | x) - pi_c) / sqrt(pi_c)).  So psi is the same map on those features.  The measured default
(docs/KERNELS.md, "Defaults chosen by measurement") puts the empty network's psi (alpha 0.02, BDeu
pseudo-count 5) beside it: features (sqrt(1 - w) psi_latent, sqrt(w) psi_empty),
K = (1 - w) K_latent + w K_empty, w = 0.25 -- still a Gram matrix of explicit features (PSD, unit diagonal).
K is the number of clusters when ``cluster`` fits it, else the least BIC for K = 1..:data:`LATENT_KMAX`.  For
the latent class network blanks are read as missing cells (:func:`blanks_as_missing`): its expected features
then give a blank's block exactly 0 (given c, E[[x_i = v]] = theta_{v|c}), so marginalising a blank and
dropping its block are the same thing here, and a blank does not move P(c | x).  The empty network's part
reads blanks as a category (as measured) and is intra-normalised per variable (below).

Intra-normalisation (Arandjelovic & Zisserman 2013, section 3, for VLAD and Fisher vectors; ``intra=``): after
the power map each block of u(x) is divided by its own L2 norm, then the row by its norm -- blocks per
variable (all of a variable's coordinates) or per variable and parent configuration (per (class, variable) for
the latent class network).  A block that is exactly zero (a blank read as missing in the latent class network)
stays zero and adds nothing to the norm; nothing is divided by zero.  It is still an explicit feature map:
PSD, unit diagonal.  On the empty network per variable, every variable's block has unit length whatever its
number of states.

References
----------
.. [1] F. Perronnin, J. Sanchez, T. Mensink (2010), "Improving the Fisher kernel for large-scale image
   classification", ECCV 2010, section 3 (L2 normalisation, power normalisation).
.. [2] The bnfk paper (Leppa-aho, Silander, Roos 2020), Theorem 1 (the features), Theorem 4 (equivalence),
   eq. (10) (set kernel and MMD).
.. [3] T. Jaakkola, D. Haussler (1999), "Exploiting generative models in discriminative classifiers", NIPS 11
   (the Fisher kernel of a model with hidden variables: posterior-weighted scores).
.. [4] R. Arandjelovic, A. Zisserman (2013), "All about VLAD", CVPR 2013, section 3 (intra-normalisation).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..data.limits import DEFAULT_MAX_BYTES, guard_gram
from ..errors import KernelError
from ..registry import KERNELS
from .features import FEATURE_CHUNK_ROWS, feature_offsets, features, row_codes
from .fisher import FISHER_NORMALIZED, NetworkKernel
from .members import ALPHA
from .normalized_options import (
    blanks_as_missing,
    check_alpha,
    check_blanks,
    check_intra,
    check_weight,
    intra_blocks,
)

__all__ = [
    "DEFAULT_ALPHA",
    "ZERO_TOL",
    "ABOUT",
    "DEFAULT_NETWORK",
    "DEFAULT_ALGORITHM",
    "LATENT_CLASSES",
    "LATENT_AND_EMPTY",
    "LATENT_STARTS",
    "LATENT_KMAX",
    "LEARNED_PSEUDO_COUNT",
    "power_normalize",
    "normalized_features",
    "normalized_gram",
    "NormalizedFisherKernel",
    "fit_fisher_normalized",
    "fit_latent_classes",
]

#: the declared power (:data:`.members.ALPHA`); in the default kernel, the latent class network's power (the
#: empty network's beside it has DEFAULT_NETWORK["empty_alpha"])
DEFAULT_ALPHA = ALPHA.default
#: one sentence for the app's captions: what the normalisation does, its source, what it gives up
ABOUT = (
    "Each Fisher feature z becomes sign(z)|z|^α and each row is then scaled to unit length (Perronnin, "
    "Sánchez & Mensink 2010, 'Improving the Fisher kernel for large-scale image classification'), so that no "
    "rare value dominates a row; the kernel stays positive semidefinite with K(x,x) = 1, but for α < 1 it is "
    "no "
    "longer the same for Markov-equivalent networks (docs/KERNELS.md)."
)
#: the network of a latent class model: a hidden root C with K states, every observed variable its only child,
#: fitted by the project's EM (:func:`bnfk_core.lca.model.fit_lca`) -- Jaakkola & Haussler's Fisher kernel of
#: a generative model with a hidden variable
LATENT_CLASSES = "latent-classes"
#: seeded EM starts of the latent class network (chosen by measurement: docs/KERNELS.md)
LATENT_STARTS = 50
#: without a number of classes (nor of clusters), the latent class network has the K in 1..LATENT_KMAX with
#: the least BIC
LATENT_KMAX = 6
#: the default's structure name: the latent class network's psi beside the empty network's,
#: K = (1 - w) K_alpha(latent classes) + w K_a(empty network), w and a DEFAULT_NETWORK's "empty_weight" and
#: "empty_alpha" (docs/KERNELS.md)
LATENT_AND_EMPTY = "latent-classes+empty"
#: the default network (chosen by measurement: docs/KERNELS.md): the latent class model with K = the number
#: of clusters (least BIC for K = 1..LATENT_KMAX without one), its EM estimates smoothed with
#: ``pseudo_count``, blanks read as missing cells, beside the empty network with BDeu CPTs
#: (``empty_pseudo_count``) and blanks as read, weighted ``empty_weight``, at the power ``empty_alpha``,
#: intra-normalised per variable (``empty_intra``).  ``score``/``params`` are the fields a learned structure
#: given by name (``structure="tree"``) completes its recipe with: BIC and BDeu with pseudo-count
#: :data:`LEARNED_PSEUDO_COUNT`
DEFAULT_NETWORK = {
    "structure": LATENT_AND_EMPTY,
    "score": "bic",
    "params": "bdeu",
    "pseudo_count": 1.0,
    "blanks": "missing",
    "empty_weight": 0.25,
    "empty_alpha": 0.02,
    "empty_pseudo_count": 5.0,
    "empty_intra": "variable",
}
#: BDeu's pseudo-count for a learned structure given by name without a recipe (chosen by measurement:
#: docs/KERNELS.md)
LEARNED_PSEUDO_COUNT = 5.0
#: what ``cluster --algorithm auto`` runs with this kernel (chosen with the other defaults, docs/KERNELS.md):
#: Ward on K_alpha, or k-means on psi where Ward's work space exceeds the memory limit
DEFAULT_ALGORITHM = "ward"


def power_normalize(Phi, alpha: float = DEFAULT_ALPHA, blocks=None) -> sp.csr_matrix:
    """Each row of ``Phi`` mapped by z -> sign(z)|z|^alpha coordinatewise, (with ``blocks``) each block of the
    row divided by its own L2 norm (intra-normalisation), then the row divided by its L2 norm.

    Parameters
    ----------
    Phi : sparse or dense (N, D) matrix
        Feature rows.
    alpha : float
        The power, in (0, 1] (Perronnin et al. 2010, section 3.2; alpha = 1: L2 normalisation only).
    blocks : array of D ints, optional
        The block of every column (:func:`intra_blocks`; Arandjelovic & Zisserman 2013, section 3).  A block
        whose entries are all zero stays zero: only non-zero entries are scaled, and the norm of a block with
        a non-zero entry is positive, so nothing is divided by zero; such a block adds nothing to the row's
        norm.

    Returns
    -------
    scipy.sparse.csr_matrix
        A new float64 matrix with the non-zeros of ``Phi`` (the power map keeps 0 at 0); a zero row stays
        zero.
    """
    a = check_alpha(alpha)
    P = sp.csr_matrix(Phi, dtype=np.float64, copy=True)
    P.eliminate_zeros()
    if a != 1.0:
        P.data = np.sign(P.data) * np.abs(P.data) ** a
    if blocks is not None and P.nnz:
        b = np.asarray(blocks, dtype=np.int64)
        if b.shape != (P.shape[1],):
            raise KernelError(f"blocks must give one block per column ({P.shape[1]}), not {b.shape}.")
        rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
        key = rows * (int(b.max()) + 1) + b[P.indices]  # (row, block) of every non-zero
        uniq, inv = np.unique(key, return_inverse=True)
        sq = np.bincount(inv, weights=P.data * P.data, minlength=len(uniq))
        P.data /= np.sqrt(sq)[inv]
    sq = np.asarray(P.multiply(P).sum(axis=1)).ravel()
    norm = np.sqrt(sq)
    scale = np.divide(1.0, norm, out=np.zeros_like(norm), where=norm > 0)
    P.data *= np.repeat(scale, np.diff(P.indptr))
    return P


#: an expected feature whose probability difference |F_jk - P(pi=j | x_obs) theta_jk| (phi's numerator) is
#: below this is zero: the power map's slope alpha |z|^(alpha-1) is unbounded at 0, so rounding noise (1e-17
#: where the exact value is 0, e.g. a block whose family is all missing) would otherwise become visible
#: features
ZERO_TOL = 1e-12


def _column_scale(model, pm) -> np.ndarray:
    """sqrt(theta_ijk P(pi_i = j)) for every column of phi (its denominator)."""
    return np.sqrt(
        np.concatenate([(t * np.asarray(p)[:, None]).ravel() for t, p in zip(model.cpts, pm.probs)])
    )


def normalized_features(
    model,
    data,
    alpha: float = DEFAULT_ALPHA,
    marginals=None,
    chunk_rows: int = FEATURE_CHUNK_ROWS,
    intra: str = "none",
) -> sp.csr_matrix:
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
    intra : {"none", "variable", "class-variable"}
        Intra-normalisation's blocks (:func:`intra_blocks`, :func:`power_normalize`).

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
    return power_normalize(Phi, a, None if check_intra(intra) == "none" else intra_blocks(model, intra))


def normalized_gram(
    model,
    data,
    other=None,
    alpha: float = DEFAULT_ALPHA,
    max_bytes: float | None = DEFAULT_MAX_BYTES,
    marginals=None,
    intra: str = "none",
) -> np.ndarray:
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
    intra : {"none", "variable", "class-variable"}
        Intra-normalisation's blocks (:func:`normalized_features`).

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
    Px = normalized_features(model, X, a, marginals, intra=intra)
    Py = Px if Y is None else normalized_features(model, Y, a, marginals, intra=intra)
    K = (Px @ Py.T).toarray()
    if Y is None:
        K = 0.5 * (K + K.T)  # exactly symmetric (the sparse product's sums may round differently)
    return K


class NormalizedFisherKernel(NetworkKernel):
    """The power- and L2-normalised Fisher kernel of a fitted network (module docstring); ``features`` is its
    explicit feature map, so kernel k-means runs on it in linear memory.

    ``blanks="missing"``: rows are read with every blank category (``?``) as a missing cell first
    (:func:`blanks_as_missing`; the network was fitted on rows read so).  ``intra``
    (:data:`.normalized_options.INTRA`): the blocks of intra-normalisation (:func:`power_normalize`); "none"
    is the plain power and L2 normalisation.

    ``auto_algorithm``: what ``cluster --algorithm auto`` runs with this kernel -- :data:`DEFAULT_ALGORITHM`,
    chosen with the other defaults on the selection sets (docs/KERNELS.md); k-means on psi where its work
    space does not fit the memory limit."""

    auto_algorithm = DEFAULT_ALGORITHM

    def __init__(
        self,
        model,
        alpha: float = DEFAULT_ALPHA,
        *,
        structure=None,
        params=None,
        notes=(),
        blanks: str = "category",
        beside=None,
        weight: float = 0.0,
        intra: str = "none",
    ):
        super().__init__(FISHER_NORMALIZED, model, structure=structure, params=params, notes=notes)
        self.alpha = check_alpha(alpha)
        self.intra = check_intra(intra)
        self.blanks = check_blanks(blanks)
        hidden = (getattr(model, "fit_info", None) or {}).get("hidden")
        if hidden is not None:  # a latent class network: the kernel sees the observed variables only
            self.variables = tuple(v for v in model.variables if v != hidden)
        #: another NormalizedFisherKernel over the same variables whose psi stands beside this one's,
        #: weighted:
        #: K = (1 - weight) K_self + weight K_beside (features (sqrt(1 - w) psi, sqrt(w) psi_beside))
        self.beside, self.weight = beside, (check_weight(weight) if beside is not None else 0.0)
        if beside is not None and set(beside.variables) != set(self.variables):
            raise KernelError("The kernel beside the normalised Fisher kernel must see the same variables.")

    def _rows(self, data):
        return blanks_as_missing(data) if self.blanks == "missing" else data

    def _own_features(self, data) -> sp.csr_matrix:
        return normalized_features(self.model, self._rows(data), self.alpha, intra=self.intra)

    def gram(self, X, Y=None, *, normalize=False, max_bytes=DEFAULT_MAX_BYTES):
        """K_alpha (already unit-diagonal: ``normalize`` changes nothing but all-missing rows, which stay 0);
        with a kernel beside it, (1 - w) K_alpha + w K_beside."""
        K = normalized_gram(
            self.model,
            self._rows(X),
            None if Y is None else self._rows(Y),
            self.alpha,
            max_bytes=max_bytes,
            intra=self.intra,
        )
        if self.beside is not None:
            K = (1.0 - self.weight) * K + self.weight * self.beside.gram(X, Y, max_bytes=max_bytes)
        return K

    def features(self, data) -> sp.csr_matrix:
        """psi of the rows of ``data`` (K_alpha = Psi Psi^T); with a kernel beside it, (sqrt(1 - w) psi,
        sqrt(w) psi_beside).

        Parameters
        ----------
        data : CategoricalData, pandas.DataFrame or codes

        Returns
        -------
        scipy.sparse.csr_matrix
        """
        own = self._own_features(data)
        if self.beside is None:
            return own
        return sp.hstack(
            [np.sqrt(1.0 - self.weight) * own, np.sqrt(self.weight) * self.beside.features(data)]
        ).tocsr()

    def contributions(self, x, y) -> np.ndarray:
        """Per-variable terms of K(x, y) (of :attr:`variables`): block i's part of psi(x) . psi(y); they sum
        to K(x, y).  A latent class network's class node term is shared equally among the variables; a kernel
        beside adds its own terms, weighted."""
        out = self._own_contributions(x, y)
        if self.beside is None:
            return out
        other = dict(zip(self.beside.variables, self.beside.contributions(x, y)))
        return (1.0 - self.weight) * out + self.weight * np.array([other[v] for v in self.variables])

    def _own_contributions(self, x, y) -> np.ndarray:
        cx, cy = row_codes(self.model, self._rows(x)), row_codes(self.model, self._rows(y))
        P = normalized_features(self.model, np.vstack([cx, cy]), self.alpha, intra=self.intra)
        prod = P[0].multiply(P[1]).tocsr()
        off = feature_offsets(self.model)
        out = np.zeros(self.model.n_vars)
        np.add.at(out, np.searchsorted(off, prod.indices, side="right") - 1, prod.data)
        hidden = (getattr(self.model, "fit_info", None) or {}).get("hidden")
        if (
            hidden is not None
        ):  # per observed variable, the class node's term shared equally (they still sum to K)
            h = list(self.model.variables).index(hidden)
            rest = np.delete(out, h)
            return rest + out[h] / max(len(rest), 1)
        return out


def fit_latent_classes(
    train,
    classes: int | None = None,
    *,
    pseudo_count: float = 1.0,
    seed: int = 0,
    starts: int = LATENT_STARTS,
):
    """The latent class network of ``train`` (feature columns only; read blanks as the kernel will first):
    a hidden root C with ``classes`` states (default: the K in 1..:data:`LATENT_KMAX` with the least BIC),
    every variable its child, fitted by EM from ``starts`` seeded starts (:func:`bnfk_core.lca.model.fit_lca`)
    and smoothed with ``pseudo_count`` (the Fisher features divide by every probability).

    Its Fisher features are the marginalised ones of the network with C always missing: block (i, c, v) of
    E[phi(x) | x] is P(c | x) ([x_i = v] - theta_{v|c}) / sqrt(pi_c theta_{v|c}) and C's block
    (P(c | x) - pi_c) / sqrt(pi_c) -- the score of log p(x) = log sum_c pi_c prod_i theta_{x_i|c} (the
    posterior weighted complete-data scores) whitened by the complete-data Fisher information (Jaakkola &
    Haussler 1999; tests/test_fisher_normalized_latent.py checks it against finite differences of log p(x)).

    Parameters
    ----------
    train : CategoricalData
    classes : int, optional
    pseudo_count : float
    seed, starts : int

    Returns
    -------
    (BayesNet, str)
        The network (``fit_info["hidden"]`` names C) and a note saying how K was chosen.
    """
    from ..lca.model import best_by_bic, fit_lca  # the latent class floor below (loaded on first use)

    if classes:
        m = fit_lca(train, int(classes), int(starts), int(seed))
        note = f"{m.n_classes} latent classes (the number of clusters)"
    else:
        m = best_by_bic(train, LATENT_KMAX, int(starts), int(seed))
        note = f"{m.n_classes} latent classes (least BIC for K = 1..{LATENT_KMAX})"
    return m.to_bayesnet(pseudo_count=float(pseudo_count)), note


def fit_fisher_normalized(
    train,
    *,
    model=None,
    dag=None,
    alpha: float | None = None,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    pseudo_count: float | None = None,
    recipe=None,
    seed: int = 0,
    progress=None,
    classes: int | None = None,
    n_clusters: int | None = None,
    blanks: str | None = None,
    empty_weight: float | None = None,
    intra: str = "none",
    **context,
) -> NormalizedFisherKernel:
    """The normalised Fisher kernel for ``train`` (no label column).

    The network: ``model`` as given; else the CPTs of ``dag`` fitted on ``train`` by ``params``; else, with
    ``structure="latent-classes"``, the latent class network (:func:`fit_latent_classes`) with ``classes``
    classes (default ``n_clusters``, which ``cluster`` passes; without either, least BIC), its EM estimates
    smoothed with ``pseudo_count`` (default :data:`DEFAULT_NETWORK`'s); without a recipe and a structure (or
    with ``structure="latent-classes+empty"``), the default: that kernel with the empty network's normalised
    features beside it, K = (1 - w) K_alpha(latent classes) + w K_0.02(empty network, BDeu pseudo-count 5,
    blanks as read, intra-normalised per variable),
    w = ``empty_weight`` (default :data:`DEFAULT_NETWORK`'s; 0: the latent class network alone); else
    the network :func:`bnfk_core.learning.recipe.learn_recipe` learns on ``train`` from ``recipe`` (a
    :class:`~bnfk_core.learning.recipe.Recipe`), with ``structure``/``score``/``params``/``pseudo_count``
    given here replacing its fields (without a recipe: BIC, BDeu with pseudo-count
    :data:`LEARNED_PSEUDO_COUNT`).
    ``alpha`` defaults to :data:`DEFAULT_ALPHA`.  ``blanks`` (:data:`.normalized_options.BLANKS`) defaults to
    "missing" for the latent class network (the measured default) and "category" (the rows as read) for every
    other network.

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
    classes, n_clusters : int, optional
        The latent class network's number of classes.
    blanks : {"category", "missing"}, optional
    empty_weight : float, optional
        The empty network's share w in [0, 1) of the default kernel.
    intra : {"none", "variable", "class-variable"}
        The blocks of intra-normalisation of the kernel's own features (:func:`intra_blocks`; the empty
        network's features beside the default keep theirs).
    **context
        The other options the faces hand every kernel (:data:`bnfk_core.registry.KERNEL_CONTEXT`); any other
        name is refused, as is a value the kernel's declared options do not allow
        (:data:`bnfk_core.kernels.members.FISHER_NORMALIZED_OPTIONS`).

    Returns
    -------
    NormalizedFisherKernel

    References
    ----------
    .. [1] T. Jaakkola, D. Haussler (1999), "Exploiting generative models in discriminative classifiers", NIPS
    11.
    .. [2] F. Perronnin, J. Sanchez, T. Mensink (2010), "Improving the Fisher kernel for large-scale image
       classification", ECCV 2010, section 3.
    """
    from ..learning.recipe import Recipe, learn_recipe
    from ..network.model import fit

    declared = {
        "alpha": alpha,
        "structure": structure,
        "score": score,
        "params": params,
        "pseudo_count": pseudo_count,
        "seed": seed,
        "classes": classes,
        "n_clusters": n_clusters,
        "blanks": blanks,
        "empty_weight": empty_weight,
        "intra": intra,
    }
    KERNELS.validate(FISHER_NORMALIZED, {**declared, **context})
    seed = 0 if seed is None else seed  # the declared option allows None: the default seed
    a = DEFAULT_ALPHA if alpha is None else check_alpha(alpha)
    default = (
        model is None
        and dag is None
        and (structure == LATENT_AND_EMPTY or (structure is None and recipe is None))
    )
    latent = default or (model is None and dag is None and structure == LATENT_CLASSES)
    w = (
        check_weight(DEFAULT_NETWORK["empty_weight"] if empty_weight is None else empty_weight)
        if default
        else 0.0
    )
    b = check_blanks(blanks if blanks is not None else (DEFAULT_NETWORK["blanks"] if latent else "category"))
    rows = blanks_as_missing(train) if b == "missing" else train
    if model is not None:
        info = getattr(model, "fit_info", None) or {}
        return NormalizedFisherKernel(
            model, a, structure="given", params=info.get("method"), blanks=b, intra=intra
        )
    if dag is not None:
        p = params or DEFAULT_NETWORK["params"]
        if pseudo_count is None and params is None:
            pseudo_count = LEARNED_PSEUDO_COUNT
        kw = {} if pseudo_count is None else {"pseudo_count": float(pseudo_count)}
        return NormalizedFisherKernel(
            fit(dag, rows, method=p, **kw), a, structure="given structure", params=p, blanks=b, intra=intra
        )
    if latent:
        pc = DEFAULT_NETWORK["pseudo_count"] if pseudo_count is None else float(pseudo_count)
        k = classes if classes else n_clusters
        net, note = fit_latent_classes(rows, k, pseudo_count=pc, seed=seed)
        beside = None
        if w > 0:
            from ..network.dag import DAG

            epc = DEFAULT_NETWORK["empty_pseudo_count"]
            empty = fit(DAG(tuple(train.variables), []), train, method="bdeu", pseudo_count=epc)
            beside = NormalizedFisherKernel(
                empty,
                DEFAULT_NETWORK["empty_alpha"],
                structure="empty",
                params="bdeu",
                intra=DEFAULT_NETWORK["empty_intra"],
            )
            note += (
                f"; beside the empty network's features (BDeu {epc:g}, alpha "
                f"{DEFAULT_NETWORK['empty_alpha']:g}, "
                f"intra-normalised per variable, blanks as read), weight {w:g}"
            )
        return NormalizedFisherKernel(
            net,
            a,
            structure="latent classes" + (" + empty" if beside else ""),
            params=f"EM + {pc:g} pseudo-count",
            notes=(note,),
            blanks=b,
            beside=beside,
            weight=w,
            intra=intra,
        )
    base = (
        recipe
        if recipe is not None
        else Recipe(
            structure=structure,
            score=DEFAULT_NETWORK["score"],
            params=DEFAULT_NETWORK["params"],
            pseudo_count=LEARNED_PSEUDO_COUNT,
        )
    )
    rec = base.replace(
        structure=structure,
        score=score,
        params=params,
        pseudo_count=pseudo_count,
        seed=None if recipe is not None else seed,
    )
    learned = learn_recipe(rows, rec, progress=progress)
    out = NormalizedFisherKernel(
        learned.model,
        a,
        structure=f"{rec.structure}/{rec.score}",
        params=rec.params,
        notes=tuple(getattr(learned.result, "notes", ()) or ()),
        blanks=b,
        intra=intra,
    )
    out.recipe = rec  # the recipe followed (its pseudo-count included): the clustering JSON reports it
    return out
