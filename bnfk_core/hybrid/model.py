"""The conditional linear Gaussian (CLG) network: discrete nodes with CPTs, numeric nodes linear in their
numeric parents with one regression per configuration of their discrete parents.

Layout.  For node i, its discrete parents D_i and numeric parents C_i are taken in DAG node order.  A discrete
node has ``cpts[i]`` of shape (q_i, r_i) exactly as :class:`bnfk_core.network.model.BayesNet` (the C-order
ravel of the discrete parents' codes, the first parent varying slowest) and no numeric parent.  A numeric
node has ``gaussians[i] = LinearGaussian(coef, variance)``: ``coef`` of shape (q_i, 1 + |C_i|) holds the
intercept and the weights of C_i per configuration j of D_i, ``variance`` of shape (q_i,):

    X_i | D_i = j, C_i = c  ~  N(coef[j, 0] + coef[j, 1:] . c, variance[j]).

The density of a complete row is prod_discrete theta_{i, pi_i, x_i} * prod_numeric N(x_i; mean, variance)
(Lauritzen 1992; bnlearn's and pyAgrum's CLG networks).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..data.files import NOT_FOUND, not_regular_message, open_regular, regular_file_problem
from ..errors import ModelError, StructureError
from ..network.dag import DAG
from .table import DISCRETE, NUMERIC, MixedData

__all__ = [
    "HybridNet",
    "LinearGaussian",
    "HYBRID_FORMAT",
    "family_check",
    "read_hybrid",
    "write_hybrid",
    "is_hybrid_json",
]

#: the ``format`` of a hybrid model's JSON file
HYBRID_FORMAT = "bnfk-hybrid-model"

_LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class LinearGaussian:
    """The regressions of one numeric node: ``coef`` (q, 1 + p) = intercept and weights per discrete
    configuration, ``variance`` (q,) > 0."""

    coef: np.ndarray
    variance: np.ndarray


def family_check(dag: DAG, kinds) -> None:
    """A StructureError naming the first arc from a numeric node into a discrete one (outside the CLG family).

    Parameters
    ----------
    dag : DAG
    kinds : sequence of str

    Raises
    ------
    StructureError
    """
    for u, v in dag.sorted_arcs():
        if kinds[dag.index(u)] == NUMERIC and kinds[dag.index(v)] == DISCRETE:
            raise StructureError(
                f"Arc {u} -> {v} gives discrete node '{v}' the numeric parent '{u}'; in a conditional linear "
                "Gaussian network a discrete node has only discrete parents."
            )


@dataclass(frozen=True, eq=False)
class HybridNet:
    """A conditional linear Gaussian network (layout in the module docstring).

    Attributes
    ----------
    dag : DAG
    kinds : tuple of str
        ``"discrete"`` or ``"numeric"`` per node of ``dag.nodes``.
    states : tuple of tuple of str
        States of each discrete node, ``()`` for a numeric one.
    cpts : tuple
        (q_i, r_i) arrays for discrete nodes, ``None`` for numeric ones.
    gaussians : tuple
        :class:`LinearGaussian` for numeric nodes, ``None`` for discrete ones.
    fit_info : dict
    """

    dag: DAG
    kinds: tuple
    states: tuple
    cpts: tuple
    gaussians: tuple
    fit_info: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        n = len(self.dag.nodes)
        if not (len(self.kinds) == len(self.states) == len(self.cpts) == len(self.gaussians) == n):
            raise ModelError("A hybrid model needs one kind, state list and parameter set per node.")
        family_check(self.dag, self.kinds)
        for i, v in enumerate(self.dag.nodes):
            q = self.n_configs(i)
            if self.kinds[i] == DISCRETE:
                t = self.cpts[i]
                if t is None or t.shape != (q, len(self.states[i])):
                    raise ModelError(
                        f"The CPT of '{v}' has the wrong shape (expected {(q, len(self.states[i]))})."
                    )
                if (
                    not np.all(np.isfinite(t))
                    or (t < 0).any()
                    or (np.abs(t.sum(axis=1) - 1.0) > 1.1e-5).any()
                ):
                    raise ModelError(f"The CPT of '{v}' has rows that are not probability distributions.")
            else:
                g = self.gaussians[i]
                p = len(self.numeric_parents(i))
                if g is None or g.coef.shape != (q, 1 + p) or g.variance.shape != (q,):
                    raise ModelError(
                        f"The regressions of '{v}' have the wrong shape (expected coef {(q, 1 + p)}, "
                        f"variance {(q,)})."
                    )
                if not (
                    np.all(np.isfinite(g.coef)) and np.all(np.isfinite(g.variance)) and (g.variance > 0).all()
                ):
                    raise ModelError(f"The regressions of '{v}' need finite weights and positive variances.")

    # ------------------------------------------------------------------ shape
    @property
    def variables(self) -> tuple:
        return self.dag.nodes

    @property
    def n_vars(self) -> int:
        return len(self.dag.nodes)

    @property
    def discrete(self) -> tuple:
        return tuple(i for i, k in enumerate(self.kinds) if k == DISCRETE)

    @property
    def numeric(self) -> tuple:
        return tuple(i for i, k in enumerate(self.kinds) if k == NUMERIC)

    @property
    def cardinalities(self) -> np.ndarray:
        return np.array([len(s) for s in self.states], dtype=np.int64)

    def discrete_parents(self, i: int) -> tuple:
        """D_i: the discrete parents of node i, in node order."""
        return tuple(p for p in self.dag.parent_indices()[i] if self.kinds[p] == DISCRETE)

    def numeric_parents(self, i: int) -> tuple:
        """C_i: the numeric parents of node i, in node order."""
        return tuple(p for p in self.dag.parent_indices()[i] if self.kinds[p] == NUMERIC)

    def n_configs(self, i: int) -> int:
        """q_i, the configurations of the discrete parents of node i."""
        cards = [len(self.states[p]) for p in self.discrete_parents(i)]
        return int(np.prod(cards)) if cards else 1

    def parameter_count(self) -> int:
        """Free parameters: q_i (r_i - 1) per discrete node and q_i (|C_i| + 2) per numeric node (intercept,
        weights, variance): the dimension BIC's and AIC's penalties count.

        Returns
        -------
        int
        """
        k = 0
        for i in range(self.n_vars):
            q = self.n_configs(i)
            if self.kinds[i] == DISCRETE:
                k += q * (len(self.states[i]) - 1)
            else:
                k += q * (len(self.numeric_parents(i)) + 2)
        return int(k)

    def key(self) -> str:
        """A content hash (structure, kinds, states, parameters)."""
        if "key" not in self._cache:
            h = hashlib.sha1(repr((self.dag.to_dict(), self.kinds, self.states)).encode())
            for t, g in zip(self.cpts, self.gaussians):
                for a in (t,) if g is None else (g.coef, g.variance):
                    h.update(np.ascontiguousarray(a).tobytes())
            self._cache["key"] = h.hexdigest()
        return self._cache["key"]

    # ------------------------------------------------------------------ rows
    def config(self, i: int, codes: np.ndarray) -> np.ndarray:
        """The discrete-parent configuration j of node i for every row (-1 where a discrete parent is
        missing).

        Parameters
        ----------
        i : int
        codes : ndarray of int, shape (N, n_vars)

        Returns
        -------
        ndarray of int64, shape (N,)
        """
        ps = self.discrete_parents(i)
        if not ps:
            return np.zeros(codes.shape[0], dtype=np.int64)
        sub = codes[:, list(ps)].astype(np.int64)
        miss = (sub < 0).any(axis=1)
        idx = np.ravel_multi_index(
            tuple(np.where(miss, 0, sub[:, k]) for k in range(len(ps))),
            tuple(len(self.states[p]) for p in ps),
        )
        return np.where(miss, -1, idx)

    def node_mean(self, i: int, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """E[X_i | parents] of numeric node i for every row (NaN where a parent is missing)."""
        g = self.gaussians[i]
        j = self.config(i, codes)
        coef = g.coef[np.maximum(j, 0)]
        mean = coef[:, 0].copy()
        for k, p in enumerate(self.numeric_parents(i)):
            mean += coef[:, 1 + k] * values[:, p]
        return np.where(j >= 0, mean, np.nan)

    def node_log_density(self, i: int, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """log p(x_i | parents) of node i for every row (its CPT entry, or its Gaussian density).

        Parameters
        ----------
        i : int
        codes, values : ndarray, shape (N, n_vars)
            As :class:`~bnfk_core.hybrid.table.MixedData` holds them, in the model's node order.

        Returns
        -------
        ndarray, shape (N,)
            NaN where the family is not observed.
        """
        j = self.config(i, codes)
        if self.kinds[i] == DISCRETE:
            x = codes[:, i]
            ok = (j >= 0) & (x >= 0)
            with np.errstate(divide="ignore"):
                out = np.log(self.cpts[i][np.maximum(j, 0), np.maximum(x, 0)])
            return np.where(ok, out, np.nan)
        var = self.gaussians[i].variance[np.maximum(j, 0)]
        r = values[:, i] - self.node_mean(i, codes, values)
        return -0.5 * (_LOG_2PI + np.log(var) + r * r / var)

    def align(self, data: MixedData) -> MixedData:
        """``data`` in this model's node order, its discrete columns re-coded to the model's states.

        A missing column, a column of the other kind or a state the model does not know is a ModelError
        naming it; extra columns are ignored.

        Parameters
        ----------
        data : MixedData

        Returns
        -------
        MixedData
        """
        if (
            tuple(data.variables) == self.variables
            and tuple(data.states) == self.states
            and tuple(data.kinds) == self.kinds
        ):
            return data
        codes = np.full((data.n_rows, self.n_vars), -1, dtype=np.int32)
        values = np.full((data.n_rows, self.n_vars), np.nan)
        for i, v in enumerate(self.variables):
            if v not in data.variables:
                raise ModelError(f"Column '{v}' of the model is missing from {data.source}.")
            j = data.variables.index(v)
            if data.kinds[j] != self.kinds[i]:
                raise ModelError(
                    f"Column '{v}' of {data.source} is {data.kinds[j]}, but the model's is {self.kinds[i]}."
                )
            if self.kinds[i] == NUMERIC:
                values[:, i] = data.values[:, j]
                continue
            lut = {s: k for k, s in enumerate(self.states[i])}
            own = data.states[j]
            mapping = np.full(len(own) + 1, -1, dtype=np.int32)
            for k, s in enumerate(own):
                if s in lut:
                    mapping[k] = lut[s]
                elif (data.codes[:, j] == k).any():
                    raise ModelError(f"Value '{s}' of column '{v}' is not a state of the model.")
            codes[:, i] = mapping[data.codes[:, j]]
        return MixedData(self.variables, self.kinds, self.states, codes, values, data.source, data.notes)

    def log_density(self, data: MixedData) -> np.ndarray:
        """log p(x) of every complete row: the sum of the log CPT entries and log Gaussian densities.

        Rows with missing cells need the marginal density (:func:`bnfk_core.hybrid.marginal_log_density`).

        Parameters
        ----------
        data : MixedData

        Returns
        -------
        ndarray, shape (N,)
        """
        data = self.align(data)
        if not data.complete_rows().all():
            raise ModelError("Rows with missing cells need bnfk_core.hybrid.marginal_log_density.")
        return sum(self.node_log_density(i, data.codes, data.values) for i in range(self.n_vars))

    def log_likelihood(self, data: MixedData) -> float:
        """Sum of :meth:`log_density` over the rows."""
        return float(self.log_density(data).sum())

    def score(self, data: MixedData, score: str = "bic") -> float:
        """BIC = log L - (k / 2) log N or AIC = log L - k of the complete rows of ``data`` (k =
        :meth:`parameter_count`, natural logs, higher is better).

        Parameters
        ----------
        data : MixedData
        score : {"bic", "aic", "loglik"}

        Returns
        -------
        float
        """
        ll = self.log_likelihood(data)
        k = self.parameter_count()
        if score == "bic":
            return ll - 0.5 * k * math.log(data.n_rows)
        if score == "aic":
            return ll - k
        if score == "loglik":
            return ll
        raise ModelError(f"Unknown hybrid score '{score}'; choose bic, aic or loglik.")

    def sample(self, n: int, seed: int = 0) -> MixedData:
        """Forward sampling of ``n`` rows with ``numpy.random.default_rng(seed)`` (nodes in topological order:
        a discrete node from its CPT row, a numeric node from its regression given the parents drawn).

        Parameters
        ----------
        n : int
        seed : int

        Returns
        -------
        MixedData
        """
        rng = np.random.default_rng(seed)
        n = int(n)
        codes = np.full((n, self.n_vars), -1, dtype=np.int32)
        values = np.full((n, self.n_vars), np.nan)
        for i in self.dag.topological_order():
            j = self.config(i, codes)
            if self.kinds[i] == DISCRETE:
                probs = self.cpts[i][j]
                cum = np.cumsum(probs, axis=1)
                codes[:, i] = np.minimum((rng.random(n)[:, None] > cum).sum(axis=1), probs.shape[1] - 1)
            else:
                sd = np.sqrt(self.gaussians[i].variance[j])
                values[:, i] = self.node_mean(i, codes, values) + sd * rng.standard_normal(n)
        return MixedData(self.variables, self.kinds, self.states, codes, values, "sample")

    # ------------------------------------------------------------------ JSON
    def to_json_dict(self) -> dict:
        """The hybrid model file: ``format`` :data:`HYBRID_FORMAT`, ``version`` 1, one entry per node
        (``name``, ``kind``, ``parents``; ``states`` and ``cpt`` for a discrete node; ``discrete_parents``,
        ``numeric_parents``, ``coef`` (intercept then weights, one row per discrete configuration) and
        ``variance`` for a numeric one) and the scalar entries of :attr:`fit_info` under ``fit``."""
        nodes = []
        for i, v in enumerate(self.variables):
            d = {
                "name": v,
                "kind": self.kinds[i],
                "parents": [self.variables[p] for p in self.dag.parent_indices()[i]],
            }
            if self.kinds[i] == DISCRETE:
                d.update(states=list(self.states[i]), cpt=self.cpts[i].tolist())
            else:
                g = self.gaussians[i]
                d.update(
                    discrete_parents=[self.variables[p] for p in self.discrete_parents(i)],
                    numeric_parents=[self.variables[p] for p in self.numeric_parents(i)],
                    coef=g.coef.tolist(),
                    variance=g.variance.tolist(),
                )
            nodes.append(d)
        fit = {k: v for k, v in self.fit_info.items() if isinstance(v, (str, int, float, bool, type(None)))}
        return {"format": HYBRID_FORMAT, "version": 1, "variables": nodes, "fit": fit}

    @classmethod
    def from_json_dict(cls, d: dict, source: str = "model") -> HybridNet:
        """A model from the schema of :meth:`to_json_dict` (parents listed in node order); a ModelError names
        ``source`` when ``d`` is not one.

        Parameters
        ----------
        d : dict
        source : str

        Returns
        -------
        HybridNet
        """
        if not isinstance(d, dict) or d.get("format") != HYBRID_FORMAT:
            raise ModelError(
                f'{source} is not a bnfk hybrid model file (missing "format": "{HYBRID_FORMAT}").'
            )
        try:
            vs = d["variables"]
            nodes = [str(v["name"]) for v in vs]
            dag = DAG(nodes, [(str(p), str(v["name"])) for v in vs for p in v.get("parents", [])])
            kinds = tuple(str(v["kind"]) for v in vs)
            states, cpts, gaussians = [], [], []
            for i, v in enumerate(vs):
                want = [nodes[p] for p in dag.parent_indices()[i]]
                if [str(p) for p in v.get("parents", [])] != want:
                    raise ModelError(f"{source}: list the parents of '{nodes[i]}' in node order ({want}).")
                if kinds[i] == DISCRETE:
                    states.append(tuple(str(s) for s in v["states"]))
                    cpts.append(np.asarray(v["cpt"], dtype=float))
                    gaussians.append(None)
                elif kinds[i] == NUMERIC:
                    states.append(())
                    cpts.append(None)
                    gaussians.append(
                        LinearGaussian(
                            np.asarray(v["coef"], dtype=float), np.asarray(v["variance"], dtype=float)
                        )
                    )
                else:
                    raise ModelError(
                        f"{source}: node '{nodes[i]}' has kind '{kinds[i]}' (discrete or numeric)."
                    )
            return cls(dag, kinds, tuple(states), tuple(cpts), tuple(gaussians), dict(d.get("fit", {})))
        except ModelError:
            raise
        except (StructureError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelError(f"{source} is not a valid bnfk hybrid model file ({exc}).") from None


def is_hybrid_json(path) -> bool:
    """True when ``path`` is a JSON file whose ``format`` is :data:`HYBRID_FORMAT` (read from its first
    4 kB)."""
    if regular_file_problem(os.fspath(path)) is not None:  # a FIFO, device or folder is never opened
        return False
    try:
        with open_regular(os.fspath(path), "r", encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.lstrip("\ufeff \t\r\n").startswith("{") and HYBRID_FORMAT in head


def write_hybrid(model: HybridNet, path) -> None:
    """Write ``model`` as a hybrid JSON model file (:meth:`HybridNet.to_json_dict`).

    Parameters
    ----------
    model : HybridNet
    path : str or os.PathLike
    """
    with open(os.fspath(path), "w", encoding="utf-8") as fh:
        json.dump(model.to_json_dict(), fh, indent=1)


def read_hybrid(path, source: str | None = None) -> HybridNet:
    """Read a hybrid JSON model file.

    Parameters
    ----------
    path : str or os.PathLike
    source : str, optional
        The name used in messages (default: the path).

    Returns
    -------
    HybridNet
    """
    source = source or os.fspath(path)
    problem = regular_file_problem(os.fspath(path))
    if problem == NOT_FOUND:
        raise ModelError(f"Model file '{source}' does not exist.")
    if problem is not None:
        raise ModelError("Model file " + not_regular_message(f"'{source}'"))
    try:
        with open_regular(os.fspath(path), "r", encoding="utf-8") as fh:
            d = json.load(fh)
    except (OSError, ValueError, RecursionError) as exc:
        raise ModelError(f"Cannot read hybrid model {source} ({type(exc).__name__}).") from None
    return HybridNet.from_json_dict(d, source)
