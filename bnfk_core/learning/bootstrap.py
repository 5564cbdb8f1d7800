"""Bootstrap arc strength: how often each arc appears in networks learned from resampled tables.

:func:`arc_strength` draws ``B`` tables of N rows with replacement from the N rows of the data (seeded),
learns each with the same :class:`~bnfk_core.learning.recipe.Recipe` through
:func:`~bnfk_core.learning.recipe.learn_recipe`, and reports, for every pair of variables joined in at least
one of the networks, its **strength** (the share of the B networks holding an arc between them, either
direction) and, for each direction, its **direction** (the share of those networks in which the arc points
that way) -- bnlearn's ``boot.strength`` (Friedman, Goldszmidt & Wyner 1999; Scutari & Nagarajan 2013).

A resampled table is held as the data's distinct rows with multinomial multiplicities (a weighted
:class:`~bnfk_core.data.table.CategoricalData`), so every replicate's counting pass reads the distinct rows
once instead of N copied rows.

References
----------
.. [1] Friedman, Goldszmidt & Wyner (1999), "Data analysis with Bayesian networks: a bootstrap approach",
   UAI.
.. [2] Scutari & Nagarajan (2013), "Identifying significant edges in graphical models of molecular
   networks", Artificial Intelligence in Medicine 57(3) -- ``boot.strength`` and its threshold.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import StructureError
from .members import MAX_BOOTSTRAP

__all__ = ["ArcStrength", "arc_strength", "MAX_BOOTSTRAP", "resample"]


@dataclass
class ArcStrength:
    """The outcome of :func:`arc_strength`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per direction ``from -> to`` of every pair joined in at least one network: ``from``, ``to``,
        ``strength`` (share of the networks with an arc between the two, either direction) and ``direction``
        (share of those with ``from -> to``), strongest first.
    replicates : int
        B, the resampled tables learned.
    seed : int
        The seed of the resampling.
    recipe : dict
        The recipe every replicate was learned with (:meth:`Recipe.to_dict`).
    counts : numpy.ndarray
        ``counts[i, j]``: networks holding the arc ``variables[i] -> variables[j]``.
    variables : list of str
        The nodes.
    seconds : float
        Wall-clock time.
    """

    table: pd.DataFrame
    replicates: int
    seed: int
    recipe: dict
    counts: np.ndarray
    variables: list
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    def strength(self, u: str, v: str) -> float:
        """The share of the networks with an arc between ``u`` and ``v`` (either direction)."""
        i, j = self.variables.index(u), self.variables.index(v)
        return float(self.counts[i, j] + self.counts[j, i]) / self.replicates

    def direction(self, u: str, v: str) -> float:
        """The share of the networks joining ``u`` and ``v`` in which the arc is ``u -> v`` (0 when none
        joins them)."""
        i, j = self.variables.index(u), self.variables.index(v)
        both = self.counts[i, j] + self.counts[j, i]
        return float(self.counts[i, j]) / both if both else 0.0

    def averaged(self, threshold: float = 0.5) -> list[tuple[str, str]]:
        """The arcs ``u -> v`` whose strength reaches ``threshold`` and whose direction exceeds one half
        (bnlearn's ``averaged.network``, without its acyclicity repair: the arcs are listed, not fitted)."""
        t = self.table
        keep = t[(t["strength"] >= threshold) & (t["direction"] > 0.5)]
        return [(str(a), str(b)) for a, b in zip(keep["from"], keep["to"], strict=True)]

    def to_records(self) -> list[dict]:
        """``[{"from", "to", "strength", "direction"}, ...]`` (the CLI's ``arc_strength``)."""
        return [
            {
                "from": str(r["from"]),
                "to": str(r["to"]),
                "strength": float(r["strength"]),
                "direction": float(r["direction"]),
            }
            for r in self.table.to_dict("records")
        ]


def resample(
    codes: np.ndarray, counts: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One bootstrap table of ``counts.sum()`` rows drawn with replacement from the rows ``codes`` holds with
    multiplicities ``counts``: the distinct rows drawn at least once and their multinomial multiplicities."""
    n = int(counts.sum())
    w = rng.multinomial(n, counts / n)
    keep = w > 0
    return codes[keep], w[keep].astype(np.int64)


def arc_strength(
    data,
    recipe=None,
    *,
    replicates: int = 200,
    seed: int = 0,
    with_class: bool = False,
    progress=None,
) -> ArcStrength:
    """Bootstrap arc strength of ``recipe``'s network on ``data`` (bnlearn's ``boot.strength``).

    Parameters
    ----------
    data : CategoricalData
        The table (missing cells as -1; a weighted table is resampled by its multiplicities).
    recipe : Recipe, optional
        How every replicate is learned (default :data:`~bnfk_core.learning.recipe.DEFAULT_RECIPE`), its
        forbidden and required arcs included.
    replicates : int
        B, the resampled tables (1 to :data:`MAX_BOOTSTRAP`).
    seed : int
        Seeds the resampling; the same seed gives the same strengths.
    with_class : bool
        As :func:`~bnfk_core.learning.recipe.learn_recipe`: False learns over the feature columns.
    progress : callable, optional
        ``progress(fraction, message)`` after every replicate.

    Returns
    -------
    ArcStrength

    Raises
    ------
    StructureError
        A bad number of replicates or seed, or what :func:`learn_recipe` refuses (checked on the data
        before the first replicate is drawn).
    """
    from ..data.stream import distinct_rows
    from .recipe import DEFAULT_RECIPE, learn_recipe
    from .structure import knowledge_for

    t0 = time.perf_counter()
    if isinstance(replicates, bool) or not isinstance(replicates, int | np.integer):
        raise StructureError(f"The number of bootstrap replicates must be an integer, not {replicates!r}.")
    if not 1 <= int(replicates) <= MAX_BOOTSTRAP:
        raise StructureError(
            f"The number of bootstrap replicates must be from 1 to {MAX_BOOTSTRAP:,}, not {replicates}."
        )
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= int(seed) < 2**32:
        raise StructureError(f"The bootstrap seed must be an integer from 0 to 2**32 - 1, not {seed!r}.")
    recipe = (recipe or DEFAULT_RECIPE).check()
    table = data if with_class else data.without_class()
    knowledge_for(recipe.structure, table.variables, recipe.forbid, recipe.require, recipe.max_parents)
    if table.n_rows < 2:
        raise StructureError(f"A bootstrap needs at least two rows; {table.source} has {table.n_rows}.")
    variables = list(table.variables)
    pos = {v: i for i, v in enumerate(variables)}
    rng = np.random.default_rng(int(seed))
    # the raw numbers of a KGV score are per row: then the rows themselves are drawn, else the distinct rows
    by_rows = bool(getattr(data, "numbers", None)) and data.weights is None
    if not by_rows:
        if data.weights is None:
            codes, counts = distinct_rows(data.codes)
        else:
            codes, counts = np.asarray(data.codes), np.asarray(data.weights, dtype=np.int64)
    hits = np.zeros((len(variables), len(variables)), dtype=np.int64)
    B = int(replicates)
    for b in range(B):
        if by_rows:
            sample = data.subset(rng.integers(0, data.n_rows, size=data.n_rows))
        else:
            rows, w = resample(codes, counts, rng)
            sample = replace(data, frame=None, codes=rows, weights=w, numbers={})
        learned = learn_recipe(sample, recipe, with_class=with_class)
        for u, v in learned.dag.sorted_arcs():
            hits[pos[u], pos[v]] += 1
        if progress is not None:
            progress((b + 1) / B, f"bootstrap: network {b + 1} of {B}, {learned.dag.n_arcs} arcs")
    both = hits + hits.T
    i, j = np.nonzero(both)
    frame = pd.DataFrame(
        {
            "from": [variables[a] for a in i],
            "to": [variables[c] for c in j],
            "strength": both[i, j] / B,
            "direction": hits[i, j] / np.maximum(both[i, j], 1),
        }
    )
    frame = frame.sort_values(["strength", "direction", "from", "to"], ascending=[False, False, True, True])
    return ArcStrength(
        table=frame.reset_index(drop=True),
        replicates=B,
        seed=int(seed),
        recipe=recipe.to_dict(),
        counts=hits,
        variables=variables,
        seconds=time.perf_counter() - t0,
        notes=[
            f"{B} networks learned ({recipe.describe()}) on tables of {table.n_rows} rows resampled "
            f"with seed {seed}"
        ],
    )
