"""Across to pgmpy and networkx, both ways: a network learned here handed to pgmpy's inference and writers, a
pgmpy model brought in, and DAGs as networkx graphs.

CPT layout.  Our ``cpts[i]`` has shape ``(q_i, r_i)``: row j is P(X_i | pi_i = j), j the C-order ravel of the
parents' state codes with the parents in node order (the first parent varies slowest).  A pgmpy ``TabularCPD``
holds the transpose, ``(r_i, q_i)``, its columns ordered the same way over its ``evidence`` list: so the CPD
of X_i is ``cpts[i].T`` with ``evidence`` = the parents in node order and ``state_names`` = our states (the
parents' state order is what orders the columns).  Bringing a pgmpy model in, the CPD's axes are permuted to
our parent order and each variable's states re-indexed to one order per variable
(:meth:`bnfk_core.network.model.BayesNet.from_pgmpy`).
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from ..errors import ModelError, StructureError
from .dag import DAG
from .model import BayesNet

__all__ = ["to_pgmpy", "from_pgmpy", "to_networkx", "from_networkx"]


def _network(network) -> BayesNet:
    """A BayesNet from a BayesNet, a fitted latent class model (``to_bayesnet``) or a fitted estimator of
    :mod:`bnfk_core.estimators` (its ``network_`` or ``model_``)."""
    if isinstance(network, BayesNet):
        return network
    for attr in ("network_", "model_"):
        inner = getattr(network, attr, None)
        if inner is not None:
            return _network(inner)
    if hasattr(network, "to_bayesnet"):
        return network.to_bayesnet()
    raise ModelError(f"to_pgmpy needs a Bayesian network (BayesNet), not {type(network).__name__}.")


def to_pgmpy(network):
    """The network as a ``pgmpy.models.DiscreteBayesianNetwork`` with the same CPDs.

    Parameters
    ----------
    network : BayesNet, a fitted latent class model, or a fitted estimator of :mod:`bnfk_core.estimators`
        (its network).

    Returns
    -------
    pgmpy.models.DiscreteBayesianNetwork
        Nodes named as our variables, one ``TabularCPD`` per variable holding ``cpts[i].T`` with the parents
        (in node order) as ``evidence`` and our states as ``state_names``; ``check_model()`` passes.
    """
    net = _network(network).to_pgmpy()
    net.check_model()
    return net


def from_pgmpy(model, nodes: Sequence[str] | None = None) -> BayesNet:
    """A pgmpy discrete Bayesian network as a :class:`~bnfk_core.network.model.BayesNet`.

    Parameters
    ----------
    model : pgmpy.models.DiscreteBayesianNetwork
        Every node needs a CPD.  States are taken from the CPDs' ``state_names`` (as text).
    nodes : sequence of str, optional
        The variable order (default pgmpy's node order).

    Returns
    -------
    BayesNet
        The same structure and CPDs (a round trip through :func:`to_pgmpy` keeps every entry to 1e-12).

    Raises
    ------
    ModelError
        A node without a CPD, a CPD whose parents disagree with the graph, or a CPD that does not sum to one.
    """
    try:
        cpds = model.get_cpds()
    except AttributeError:
        raise ModelError(
            f"from_pgmpy needs a pgmpy DiscreteBayesianNetwork, not {type(model).__name__}."
        ) from None
    if not cpds and len(model.nodes()):
        raise ModelError("The pgmpy model has no CPDs; fit it (or add its CPDs) first.")
    out = BayesNet.from_pgmpy(model, nodes=nodes)
    for v, cpt in zip(out.variables, out.cpts):
        if not (abs(cpt.sum(axis=1) - 1.0) < 1e-6).all():
            raise ModelError(f"The CPD of '{v}' does not sum to one over its states.")
    return out


def to_networkx(dag) -> nx.DiGraph:
    """The DAG (or a network's DAG) as a ``networkx.DiGraph`` (nodes in order, one edge per arc).

    Parameters
    ----------
    dag : DAG, BayesNet, fitted latent class model or fitted estimator

    Returns
    -------
    networkx.DiGraph
    """
    return (dag if isinstance(dag, DAG) else _network(dag).dag).to_networkx()


def from_networkx(graph, nodes: Sequence[str] | None = None) -> DAG:
    """A :class:`~bnfk_core.network.dag.DAG` from a directed acyclic networkx graph (or anything with
    ``nodes`` and ``edges``, a pgmpy model included); a cycle is a one-sentence :class:`StructureError`.

    Parameters
    ----------
    graph : networkx.DiGraph or pgmpy model
    nodes : sequence of str, optional
        Node order (the graph's by default).

    Returns
    -------
    DAG

    Raises
    ------
    StructureError
        When the graph has a cycle.
    """
    g = nx.DiGraph()
    g.add_nodes_from(graph.nodes)
    g.add_edges_from(graph.edges)
    if not nx.is_directed_acyclic_graph(g):
        cycle = nx.find_cycle(g)
        raise StructureError(
            f"The graph has a cycle ({' -> '.join(str(u) for u, _ in cycle)} -> "
            f"{cycle[0][0]}); a Bayesian network needs a DAG."
        )
    return DAG(
        [str(v) for v in (nodes if nodes is not None else g.nodes)], [(str(u), str(v)) for u, v in g.edges]
    )
