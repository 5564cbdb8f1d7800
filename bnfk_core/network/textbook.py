"""Textbook networks with their own CPTs: the discrete networks of the bnlearn repository that pgmpy ships
(asia, cancer, earthquake, survey, sachs, child, insurance, alarm), read offline from pgmpy's bundled BIF
files by bnfk's BIF reader (:func:`bnfk_core.network.bif.parse_bif`; pgmpy's own where a file is not found).

Some of those files round their CPTs, so that a row sums to one within 1e-7 only (sachs, alarm); every row is
renormalised here, so that the network is a proper distribution (each entry moves by at most that much).
"""

from __future__ import annotations

import gzip
import importlib.util
import warnings
from dataclasses import replace
from pathlib import Path

from ..errors import ModelError
from .bif import parse_bif
from .dag import DAG
from .model import BayesNet

__all__ = ["TEXTBOOK_NETWORKS", "MAX_TEXTBOOK_ROWS", "textbook_network", "textbook_sample"]

#: the names :func:`textbook_network` opens, smallest first, with their nodes and arcs
TEXTBOOK_NETWORKS = {
    "cancer": "5 nodes, 4 arcs: pollution and smoking, cancer, x-ray and dyspnoea",
    "earthquake": "5 nodes, 4 arcs: burglary or earthquake sets off the alarm, John and Mary call",
    "survey": "6 nodes, 6 arcs: age and sex, education, occupation, residence, travel",
    "asia": "8 nodes, 8 arcs: a visit to Asia, smoking, tuberculosis, lung cancer, bronchitis",
    "sachs": "11 nodes, 17 arcs: protein signalling in human immune cells",
    "child": "20 nodes, 25 arcs: congenital heart disease in newborn babies",
    "insurance": "27 nodes, 52 arcs: car insurance risk",
    "alarm": "37 nodes, 46 arcs: monitoring patients in intensive care",
}


def textbook_network(name: str) -> BayesNet:
    """A repository network with its CPTs, by name (:data:`TEXTBOOK_NETWORKS`).

    Parameters
    ----------
    name : str

    Returns
    -------
    BayesNet
        pgmpy's nodes, arcs, states and CPTs (rows renormalised); ``fit_info`` names the network.

    Raises
    ------
    ModelError
        A name that is not one of :data:`TEXTBOOK_NETWORKS`.

    References
    ----------
    Scutari, bnlearn Bayesian network repository (https://www.bnlearn.com/bnrepository/); Lauritzen &
    Spiegelhalter (1988) (asia); Sachs et al. (2005) (sachs); Beinlich et al. (1989) (alarm).
    """
    if name not in TEXTBOOK_NETWORKS:
        raise ModelError(f"'{name}' is no textbook network (they are {', '.join(TEXTBOOK_NETWORKS)}).")
    info = {"method": "textbook", "network": name}
    path = _bundled_file(name)
    if path is not None:  # pgmpy's file read by bnfk's BIF reader: the same model, a thousand times faster
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            nodes, arcs, states, cpts, _info = parse_bif(fh.read(), f"{name}.bif")
        dag, states = DAG(nodes, arcs), tuple(tuple(s) for s in states)
    else:
        from pgmpy.utils import get_example_model

        with warnings.catch_warnings():  # the function's deprecation; its successor downloads the file
            warnings.simplefilter("ignore")
            imported = BayesNet.from_pgmpy(get_example_model(name))
        dag, states, cpts = imported.dag, imported.states, imported.cpts
    return BayesNet(dag, states, tuple(t / t.sum(axis=1, keepdims=True) for t in cpts), info)


def _bundled_file(name: str) -> Path | None:
    """pgmpy's bundled BIF file of the network ``name`` (found without importing pgmpy, whose BIF reader
    builds its grammar in about a second on every call), else None."""
    spec = importlib.util.find_spec("pgmpy")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "utils" / "example_models" / f"{name}.bif.gz"
    return path if path.is_file() else None


#: rows a textbook sample may hold (as many as the row views of a large file use)
MAX_TEXTBOOK_ROWS = 20_000


def textbook_sample(name: str, rows: int, seed: int = 0, network: BayesNet | None = None):
    """``rows`` rows drawn from the textbook network ``name`` by seeded forward sampling: the table the app
    opens for a textbook network (:meth:`BayesNet.sample` of :func:`textbook_network`).

    Parameters
    ----------
    name : str
        One of :data:`TEXTBOOK_NETWORKS`.
    rows : int
        From 1 to :data:`MAX_TEXTBOOK_ROWS`.
    seed : int
        Seed of ``numpy.random.default_rng``: the same seed draws the same rows.
    network : BayesNet, optional
        The network of ``name`` when the caller holds it already (it is read from pgmpy's files otherwise).

    Returns
    -------
    CategoricalData
        Complete rows over the network's variables and states, no class column, named ``name``.

    Raises
    ------
    ModelError
        An unknown name, or a number of rows out of range (decided before anything is read).
    """
    if name not in TEXTBOOK_NETWORKS:
        raise ModelError(f"'{name}' is no textbook network (they are {', '.join(TEXTBOOK_NETWORKS)}).")
    if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= MAX_TEXTBOOK_ROWS:
        raise ModelError(f"A sample of {name} holds 1 to {MAX_TEXTBOOK_ROWS:,} rows, not {rows!r}.")
    sample = (network or textbook_network(name)).sample(rows, seed)
    return replace(sample, source=name)
