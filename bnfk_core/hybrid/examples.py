"""A small CLG network to sample from: the six-node example of the tests and the mixed benchmarks."""

from __future__ import annotations

import numpy as np

from ..network.dag import DAG
from .model import HybridNet, LinearGaussian
from .table import DISCRETE, NUMERIC

__all__ = ["six_node_clg"]


def six_node_clg() -> HybridNet:
    """3 discrete + 3 Gaussian nodes: A -> B -> C; A -> X; X, C -> Y; Y, B -> Z.

    Returns
    -------
    HybridNet
        A (2 states), B (3), C (2); X | A, Y | X, C and Z | Y, B linear Gaussian.
    """
    dag = DAG(
        ["A", "B", "C", "X", "Y", "Z"],
        [("A", "B"), ("B", "C"), ("A", "X"), ("X", "Y"), ("C", "Y"), ("Y", "Z"), ("B", "Z")],
    )
    cpts = (
        np.array([[0.4, 0.6]]),
        np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]),
        np.array([[0.8, 0.2], [0.5, 0.5], [0.15, 0.85]]),
        None,
        None,
        None,
    )
    gs = (
        None,
        None,
        None,
        LinearGaussian(np.array([[-1.0], [2.0]]), np.array([1.0, 0.5])),
        LinearGaussian(np.array([[0.5, 1.5], [-1.0, -0.8]]), np.array([0.6, 0.9])),
        LinearGaussian(np.array([[0.0, 1.0], [3.0, 0.5], [-2.0, -1.2]]), np.array([0.4, 1.0, 0.7])),
    )
    kinds = (DISCRETE,) * 3 + (NUMERIC,) * 3
    states = (("a0", "a1"), ("b0", "b1", "b2"), ("c0", "c1"), (), (), ())
    return HybridNet(dag, kinds, states, cpts, gs)
