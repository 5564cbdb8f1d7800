"""Discrete Bayesian networks: CPT arrays, parameter fitting, likelihood, sampling (read and written as
model files by :mod:`bnfk_core.network.formats`).

CPT layout.  ``cpts[i]`` has shape ``(q_i, r_i)``: row j is P(X_i | pi_i = j).  The
parent-configuration index j is the C-order (row-major) ravel of the parents' state
codes, parents taken in DAG node order -- the first parent varies slowest, exactly as
the columns of a pgmpy ``TabularCPD``.  A variable without parents has ``q_i = 1``.

Parameter estimators (thesis eqs. 2.4-2.5; N_ijk are counts over the rows where the
family of X_i is observed):

* ``smoothed`` (default, the paper): theta_ijk = (N_ijk + a) / (N_ij + a r_i), a = pseudo_count = 1;
* ``ml``: theta_ijk = N_ijk / N_ij (uniform row when N_ij = 0);
* ``bdeu``: theta_ijk = (N_ijk + a/(q_i r_i)) / (N_ij + a/q_i), a = equivalent sample size;
* ``cnml``: theta_ijk proportional to e(N_ijk) (N_ijk + 1), e(n) = ((n+1)/n)^n, e(0) = 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.counts import weighted_bincount
from ..data.table import CategoricalData, as_data, from_codes
from ..errors import BnfkError, DataError, ModelError, shorten
from ..registry import ESTIMATORS
from .bif import model_to_bif, parse_bif  # noqa: F401 (importable from here too)
from .dag import DAG

__all__ = ["BayesNet", "fit", "MAX_CPT_CELLS"]

MAX_CPT_CELLS = 20_000_000


@dataclass(frozen=True, eq=False)
class BayesNet:
    """A discrete Bayesian network.

    Attributes
    ----------
    dag : DAG
        Structure; ``dag.nodes`` are the variables in model order.
    states : tuple of tuple of str
        States of every variable, aligned with ``dag.nodes``.
    cpts : tuple of ndarray
        ``cpts[i]`` of shape (q_i, r_i), rows summing to one (layout in the module docstring).
    fit_info : dict
        How the parameters were obtained (method, pseudo_count, rows used).

    References
    ----------
    The bnfk paper, "Fisher kernel for Bayesian networks", eq. (1): P(d; theta) = prod_i theta_{i, pi_i(d),
    d_i}, with theta_ijk = ``cpts[i][j, k]``; thesis Table 2.1 (the notation).
    """

    dag: DAG
    states: tuple
    cpts: tuple
    fit_info: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if len(self.states) != len(self.dag.nodes) or len(self.cpts) != len(self.dag.nodes):
            raise ModelError("A model needs one state list and one CPT per variable.")
        cards = self.cardinalities
        for v, names in zip(self.dag.nodes, self.states):
            if len(set(names)) != len(names):
                twice = next(str(s) for k, s in enumerate(names) if s in names[:k])
                raise ModelError(
                    f"Variable '{v}' has two states that read '{twice}' as text; merge them or rename one."
                )
        for i, v in enumerate(self.dag.nodes):
            q = int(np.prod(cards[list(self.parents[i])])) if self.parents[i] else 1
            shape = (q, int(cards[i]))
            t = self.cpts[i]
            if t.shape != shape:
                raise ModelError(f"The CPT of '{v}' has shape {t.shape}, expected {shape}.")
            # rows sum to one within np.allclose's default tolerance (atol 1e-6 + rtol 1e-5), without its cost
            if not np.all(np.isfinite(t)) or (t < 0).any() or (np.abs(t.sum(axis=1) - 1.0) > 1.1e-5).any():
                raise ModelError(f"The CPT of '{v}' has rows that are not probability distributions.")

    # ------------------------------------------------------------------ shape
    @property
    def variables(self) -> tuple:
        return self.dag.nodes

    @property
    def n_vars(self) -> int:
        return len(self.dag.nodes)

    @property
    def parents(self) -> tuple:
        return self.dag.parent_indices()

    @property
    def cardinalities(self) -> np.ndarray:
        return np.array([len(s) for s in self.states], dtype=np.int64)

    def n_parent_configs(self, i: int) -> int:
        """q_i, the number of parent configurations of variable ``i`` (the rows of its CPT).

        Parameters
        ----------
        i : int
            The variable's position in :attr:`variables`.

        Returns
        -------
        int
        """
        return int(self.cpts[i].shape[0])

    def parameter_count(self) -> int:
        """Free parameters: sum_i q_i (r_i - 1), the dimension BIC's penalty counts.

        Returns
        -------
        int
        """
        return int(sum(t.shape[0] * (t.shape[1] - 1) for t in self.cpts))

    def key(self) -> str:
        """A content hash for caching (structure, states and CPT values), computed once.

        Returns
        -------
        str
            The SHA-1 hex digest: equal for two models with the same DAG, states and CPT bytes.
        """
        if "key" not in self._cache:
            h = hashlib.sha1(repr((self.dag.to_dict(), self.states)).encode())
            for t in self.cpts:
                h.update(np.ascontiguousarray(t).tobytes())
            self._cache["key"] = h.hexdigest()
        return self._cache["key"]

    # ------------------------------------------------------------------ data
    def parent_config(self, i: int, codes: np.ndarray) -> np.ndarray:
        """Parent-configuration index of every row for variable i (-1 where a parent is missing).

        Parameters
        ----------
        i : int
        codes : ndarray of int, shape (n, n_vars)
            -1 = missing.

        Returns
        -------
        ndarray of int64, shape (n,)
        """
        ps = self.parents[i]
        n = codes.shape[0]
        if not ps:
            return np.zeros(n, dtype=np.int64)
        cards = self.cardinalities
        sub = codes[:, list(ps)].astype(np.int64)
        miss = (sub < 0).any(axis=1)
        idx = np.ravel_multi_index(
            tuple(np.where(miss, 0, sub[:, k]) for k in range(len(ps))), tuple(int(cards[p]) for p in ps)
        )
        return np.where(miss, -1, idx)

    def align(self, data: CategoricalData) -> CategoricalData:
        """``data`` re-coded to this model's variable order and state order.

        Extra columns are ignored; a missing variable (but the hidden class node of a latent class network,
        ``fit_info["hidden"]``, which becomes an all-missing column) or a value the model does not know
        is a :class:`DataError` naming it.  A pandas DataFrame is read in the model's states
        (:func:`~bnfk_core.data.table.as_data`).

        Parameters
        ----------
        data : CategoricalData or pandas.DataFrame

        Returns
        -------
        CategoricalData
        """
        data = as_data(data, model=self)
        if tuple(data.variables) == tuple(self.variables) and tuple(data.states) == tuple(self.states):
            return data
        cols = []
        hidden = self.fit_info.get("hidden")  # a latent class network's class node: never observed
        for v, st in zip(self.variables, self.states):
            if v == hidden and v not in data.variables:
                cols.append(np.full(data.n_rows, -1, dtype=np.int32))
                continue
            if v not in data.variables:
                raise DataError(f"Column '{v}' of the model is missing from {data.source}.")
            j = data.variables.index(v)
            own = data.states[j]
            lut = {s: k for k, s in enumerate(st)}
            mapping = np.empty(len(own) + 1, dtype=np.int32)
            for k, s in enumerate(own):
                if s not in lut:
                    if (data.codes[:, j] == k).any():
                        row = int(np.flatnonzero(data.codes[:, j] == k)[0])
                        raise DataError(
                            f"Value '{s}' of column '{v}' (row {row + 1} of {data.source}) "
                            "is not a state of the model "
                            f"({', '.join(st[:8])}{', ...' if len(st) > 8 else ''})."
                        )
                    mapping[k] = -1
                else:
                    mapping[k] = lut[s]
            mapping[-1] = -1
            cols.append(mapping[data.codes[:, j]])
        codes = np.stack(cols, axis=1) if cols else np.zeros((data.n_rows, 0), np.int32)
        cls = data.class_column if data.class_column in self.variables else None
        return from_codes(codes, self.variables, self.states, cls, data.source)

    def log_likelihood(self, data: CategoricalData) -> np.ndarray:
        """log P(x) of every (complete) row: the sum of the log CPT entries of its families.

        Rows with missing cells need inference (the marginal log P(x_observed)):
        :func:`bnfk_core.inference.queries.log_likelihood` handles both.

        Parameters
        ----------
        data : CategoricalData or pandas.DataFrame

        Returns
        -------
        ndarray, shape (n,)
        """
        codes = self.align(data).codes
        if (codes < 0).any():
            raise ModelError(
                "Rows with missing cells need bnfk_core.inference.log_likelihood "
                "(the marginal likelihood of the observed cells)."
            )
        return self.complete_log_likelihood(codes)

    def complete_log_likelihood(self, codes: np.ndarray) -> np.ndarray:
        """log P(x) of complete code rows aligned to the model: the factorisation
        sum_i log theta_{i, pi_i(x), x_i}.

        Parameters
        ----------
        codes : ndarray of int, shape (N, n_vars)
            State codes in the model's variable order, none missing.

        Returns
        -------
        ndarray of float, shape (N,)
            -inf for a row that meets a zero probability.
        """
        ll = np.zeros(codes.shape[0])
        with np.errstate(divide="ignore"):
            for i in range(self.n_vars):
                j = self.parent_config(i, codes)
                ll += np.log(self.cpts[i][j, codes[:, i]])
        return ll

    def sample(self, n: int, seed: int = 0) -> CategoricalData:
        """Forward sampling of ``n`` rows (variables in topological order, each drawn from its CPT row
        given the parents drawn) with ``numpy.random.default_rng(seed)``.

        Parameters
        ----------
        n : int
        seed : int

        Returns
        -------
        CategoricalData
            ``n`` complete rows over :attr:`variables` with the model's states, without a class column.
        """
        rng = np.random.default_rng(seed)
        codes = np.zeros((int(n), self.n_vars), dtype=np.int32)
        for i in self.dag.topological_order():
            probs = self.cpts[i][self.parent_config(i, codes)]
            u = rng.random(int(n))[:, None]
            cum = np.cumsum(probs, axis=1)
            codes[:, i] = np.minimum((u > cum).sum(axis=1), probs.shape[1] - 1)
        return from_codes(codes, self.variables, self.states, None, "sample")

    # ------------------------------------------------------------------ editing and display
    def with_cpt(self, variable: str, table) -> BayesNet:
        """This network with ``variable``'s CPT replaced by ``table``, every row renormalised
        (:func:`bnfk_core.network.cpt.with_cpt`; zero entries allowed, listed by
        :func:`~bnfk_core.network.cpt.zero_entries`).

        Parameters
        ----------
        variable : str
        table : pandas.DataFrame or array-like
            One row per parent configuration, one column per state (:func:`~bnfk_core.network.cpt.cpt_frame`).

        Returns
        -------
        BayesNet
        """
        from .cpt import with_cpt

        return with_cpt(self, variable, table)

    def _repr_svg_(self) -> str:
        """The network's graph as SVG, for a notebook (:func:`bnfk_core.network.svg.dag_svg`)."""
        from .svg import dag_svg

        return dag_svg(self.dag, states=dict(zip(self.variables, self.states)))

    # ------------------------------------------------------------------ pgmpy bridge
    def to_pgmpy(self):
        """The equivalent ``pgmpy.models.DiscreteBayesianNetwork`` (same arcs, states and CPTs).

        Returns
        -------
        pgmpy.models.DiscreteBayesianNetwork
        """
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.models import DiscreteBayesianNetwork

        net = DiscreteBayesianNetwork()
        net.add_nodes_from(self.variables)
        net.add_edges_from(self.dag.sorted_arcs())
        cards = self.cardinalities
        for i, v in enumerate(self.variables):
            ps = [self.variables[p] for p in self.parents[i]]
            names = {v: list(self.states[i])}
            names.update({self.variables[p]: list(self.states[p]) for p in self.parents[i]})
            cpd = TabularCPD(
                v,
                int(cards[i]),
                self.cpts[i].T,
                evidence=ps or None,
                evidence_card=[int(cards[p]) for p in self.parents[i]] or None,
                state_names=names,
            )
            net.add_cpds(cpd)
        return net

    @classmethod
    def from_pgmpy(cls, net, nodes: Sequence[str] | None = None) -> BayesNet:
        """Convert a pgmpy discrete Bayesian network (node order: ``nodes`` or pgmpy's).

        Parameters
        ----------
        net : pgmpy.models.DiscreteBayesianNetwork
        nodes : sequence of str, optional

        Returns
        -------
        BayesNet
        """
        nodes = [str(v) for v in (nodes if nodes is not None else net.nodes())]
        dag = DAG(nodes, [(str(u), str(v)) for u, v in net.edges()])
        states, cpts = [], []
        cpd_of = {str(c.variable): c for c in net.get_cpds()}
        for v in nodes:
            if v not in cpd_of:
                raise ModelError(f"Variable '{v}' has no CPT in the model.")
            states.append(tuple(str(s) for s in cpd_of[v].state_names[cpd_of[v].variable]))
        for i, v in enumerate(nodes):
            cpd = cpd_of[v]
            ev = [str(e) for e in cpd.variables[1:]]
            values = np.asarray(cpd.get_values(), dtype=float)  # (r, q) in pgmpy's evidence order
            ev_cards = [len(cpd.state_names[e]) for e in cpd.variables[1:]]
            if values.shape != (len(states[i]), int(np.prod(ev_cards, dtype=np.int64))):
                raise ModelError(
                    f"The CPT of '{v}' is {values.shape[0]} x {values.shape[1] if values.ndim > 1 else 1} "
                    f"but its {len(states[i])} states and parents' states ({ev_cards}) need "
                    f"{len(states[i])} x {int(np.prod(ev_cards, dtype=np.int64))}."
                )
            t = values.reshape([values.shape[0]] + ev_cards)
            # state order of the child and parents as stored in the cpd -> ours (which we took from cpds)
            want = [nodes[p] for p in dag.parent_indices()[i]]
            if sorted(ev) != sorted(want):
                raise ModelError(f"The CPT of '{v}' names parents {ev}, but the graph gives {want}.")
            for ax, e in enumerate(ev):
                own = [str(s) for s in cpd.state_names[cpd.variables[1 + ax]]]
                target = states[nodes.index(e)]
                if sorted(own) != sorted(target) or len(set(own)) != len(own):
                    raise ModelError(
                        f"The CPT of '{v}' gives its parent '{e}' the states {shorten(str(own))}, but the "
                        f"CPT of '{e}' gives it {shorten(str(list(target)))}; every CPT must name a "
                        "variable's states alike."
                    )
                if own != list(target):
                    order = [own.index(s) for s in target]
                    t = np.take(t, order, axis=ax + 1)
            t = np.transpose(t, [0] + [1 + ev.index(e) for e in want])
            cpts.append(np.ascontiguousarray(t.reshape(values.shape[0], -1).T))
        return cls(dag, tuple(states), tuple(cpts), {"method": "imported"})

    # ------------------------------------------------------------------ JSON
    def to_json_dict(self) -> dict:
        """The documented JSON schema (see README, "Model files"), read back by
        :meth:`from_json_dict`.

        Returns
        -------
        dict
            ``format``, ``version``, one entry per variable (``name``, ``states``, ``parents``, ``cpt`` as
            nested lists) and the scalar entries of :attr:`fit_info` under ``fit``.
        """
        return {
            "format": "bnfk-model",
            "version": 1,
            "variables": [
                {
                    "name": v,
                    "states": list(self.states[i]),
                    "parents": [self.variables[p] for p in self.parents[i]],
                    "cpt": self.cpts[i].tolist(),
                }
                for i, v in enumerate(self.variables)
            ],
            "fit": {
                k: v for k, v in self.fit_info.items() if isinstance(v, (str, int, float, bool, type(None)))
            },
        }

    @classmethod
    def from_json_dict(cls, d: dict, source: str = "model") -> BayesNet:
        """A model from the schema of :meth:`to_json_dict`; a :class:`ModelError` names ``source`` if ``d`` is
        invalid.

        Parameters
        ----------
        d : dict
        source : str

        Returns
        -------
        BayesNet
        """
        try:
            if d.get("format") != "bnfk-model":
                raise ModelError(f'{source} is not a bnfk model file (missing "format": "bnfk-model").')
            vs = d["variables"]
            nodes = [str(v["name"]) for v in vs]
            arcs = [(str(p), str(v["name"])) for v in vs for p in v.get("parents", [])]
            dag = DAG(nodes, arcs)
            states = tuple(tuple(str(s) for s in v["states"]) for v in vs)
            cpts = []
            for i, v in enumerate(vs):
                declared = [str(p) for p in v.get("parents", [])]
                want = [nodes[p] for p in dag.parent_indices()[i]]
                t = np.asarray(v["cpt"], dtype=float)
                if declared != want:  # reorder parent axes to node order
                    cards = [len(states[nodes.index(p)]) for p in declared]
                    t = t.reshape(cards + [len(states[i])])
                    t = np.transpose(t, [declared.index(p) for p in want] + [len(declared)])
                    t = t.reshape(-1, len(states[i]))
                cpts.append(np.ascontiguousarray(t))
            fit_info = dict(d.get("fit", {}))
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"{source} is not a valid bnfk model file ({exc}).") from None
        return _build(source, nodes, arcs, states, cpts, fit_info, cls)


# ---------------------------------------------------------------------- fitting
def cpt_counts(
    dag: DAG, codes: np.ndarray, cards: np.ndarray, i: int, weights: np.ndarray | None = None
) -> np.ndarray:
    """N_ijk of variable i as a (q_i, r_i) array, over rows where the family is observed.

    ``weights`` (optional, one non-negative integer per row) counts row n ``weights[n]`` times: the
    distinct rows of a table with their multiplicities give the same counts as the table.

    Parameters
    ----------
    dag : DAG
    codes : ndarray of int, shape (n, n_vars)
    cards : ndarray of int
    i : int
    weights : ndarray, optional

    Returns
    -------
    ndarray, shape (q_i, r_i)
    """
    ps = dag.parent_indices()[i]
    r = int(cards[i])
    q = int(np.prod(cards[list(ps)])) if ps else 1
    if q * r > MAX_CPT_CELLS:
        raise ModelError(
            f"Variable '{dag.nodes[i]}' has {q:,} parent configurations; "
            f"its CPT would need {q * r:,} cells. Give it fewer parents."
        )
    fam = list(ps) + [i]
    sub = codes[:, fam].astype(np.int64)
    ok = (sub >= 0).all(axis=1)
    flat = np.ravel_multi_index(tuple(sub[ok, k] for k in range(len(fam))), tuple(int(cards[f]) for f in fam))
    w = None if weights is None else np.asarray(weights)[ok]
    return weighted_bincount(flat, w, q * r).reshape(q, r).astype(float)


def _e(n: np.ndarray) -> np.ndarray:
    """e(n) = ((n+1)/n)^n with e(0) = 1 (thesis eq. 2.5)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.exp(n * np.log1p(1.0 / n))
    return np.where(n > 0, out, 1.0)


def estimate_cpt(counts: np.ndarray, method: str = "smoothed", pseudo_count: float = 1.0) -> np.ndarray:
    """One CPT from its (q, r) counts with the chosen estimator (module docstring).

    Parameters
    ----------
    counts : ndarray, shape (q, r)
    method : {"smoothed", "ml", "bdeu", "cnml"}
    pseudo_count : float

    Returns
    -------
    ndarray, shape (q, r)

    References
    ----------
    Thesis eqs. 2.4-2.5.
    """
    q, r = counts.shape
    if method == "smoothed":
        num = counts + pseudo_count
    elif method == "ml":
        num = counts.copy()
    elif method == "bdeu":
        num = counts + pseudo_count / (q * r)
    elif method == "cnml":
        num = _e(counts) * (counts + 1.0)
    else:
        raise ModelError(f"Unknown parameter method '{method}'; choose one of {', '.join(ESTIMATORS)}.")
    tot = num.sum(axis=1, keepdims=True)
    empty = tot[:, 0] <= 0
    out = np.divide(num, np.where(tot > 0, tot, 1.0))
    out[empty] = 1.0 / r
    return out


def fit(dag: DAG, data: CategoricalData, method: str = "bdeu", pseudo_count: float = 1.0) -> BayesNet:
    """Fit the CPTs of ``dag`` to ``data`` (columns matched by name).

    The default estimator is the default recipe's (:data:`bnfk_core.learning.recipe.DEFAULT_RECIPE`): BDeu,
    likelihood-equivalent, so Markov-equivalent structures fitted to one table give one Fisher kernel (paper,
    Theorem 4).  The paper's smoothed (+1) estimator is ``method="smoothed"``; the published protocols
    (``reproduce``) name theirs.

    Missing values: each family is estimated from the rows where that family is observed
    (available-case analysis).  Unseen parent configurations get the uniform row.  ``data`` may be a
    pandas DataFrame (:func:`~bnfk_core.data.table.from_frame`).

    Parameters
    ----------
    dag : DAG
        The structure; its nodes name columns of ``data``.
    data : CategoricalData or pandas.DataFrame
        The rows (with ``weights``, distinct rows counted with their multiplicities).
    method : str
        A CPT estimator of :data:`bnfk_core.registry.ESTIMATORS`: ``smoothed`` (n_ijk + a) / (n_ij + r_i a),
        ``ml``, ``bdeu`` (n_ijk + a / (q_i r_i)) / (n_ij + a / q_i), ``cnml``.
    pseudo_count : float
        ``a`` of ``smoothed`` and ``bdeu`` (the equivalent sample size of BDeu); must be positive.

    Returns
    -------
    BayesNet
        With ``fit_info`` recording the method, the pseudo-count and the rows used.

    Raises
    ------
    ModelError
        An unknown method or a pseudo-count that is not positive.
    DataError
        A node of ``dag`` missing from ``data``, or a column with no observed value.

    References
    ----------
    Thesis §2.1.2.1: eq. (2.4) (the expected posterior, of which ``smoothed`` and ``bdeu`` are Dirichlet
    priors, and maximum likelihood) and eq. (2.5) (cNML); the bnfk paper fits with pseudo-count one.
    """
    data = as_data(data)
    if method not in ESTIMATORS:
        raise ModelError(f"Unknown parameter method '{method}'; choose one of {', '.join(ESTIMATORS)}.")
    if method in ("smoothed", "bdeu") and not pseudo_count > 0:
        raise ModelError(f"The pseudo-count must be positive for '{method}', got {pseudo_count}.")
    missing = [v for v in dag.nodes if v not in data.variables]
    if missing:
        raise DataError(f"Column '{missing[0]}' of the structure is missing from {data.source}.")
    if tuple(data.variables) != tuple(dag.nodes):
        data = data.select(list(dag.nodes))
    cards = data.cardinalities
    if (cards == 0).any():
        v = dag.nodes[int(np.flatnonzero(cards == 0)[0])]
        raise DataError(f"Column '{v}' of {data.source} has no observed values.")
    weights = getattr(data, "weights", None)  # distinct rows with multiplicities (bnfk_core.data.stream)
    cpts = tuple(
        estimate_cpt(cpt_counts(dag, data.codes, cards, i, weights), method, pseudo_count)
        for i in range(len(dag.nodes))
    )
    complete = data.complete_rows()
    info = {
        "method": method,
        "pseudo_count": pseudo_count,
        "n_rows": data.n_rows,
        "complete_rows": int(complete.sum() if weights is None else weights[complete].sum()),
    }
    return BayesNet(dag, tuple(data.states), cpts, info)


def _build(source: str, nodes, arcs, states, cpts, fit_info, cls=BayesNet) -> BayesNet:
    """The model, with a structure or CPT error turned into a ModelError naming ``source``."""
    try:
        return cls(DAG(nodes, arcs), tuple(states), tuple(cpts), fit_info)
    except BnfkError as exc:
        raise ModelError(f"{source}: {exc}") from None
