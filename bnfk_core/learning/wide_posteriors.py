"""P(x_S | x_obs) of structural EM's wide rows for any set S of their missing cells, from one small table per
group of cells that share no family.

A row's missing cells M split into groups that share no family (:func:`bnfk_core.learning.estep._components`:
two cells are linked when a family holds both).  Given the row's observed values the groups are independent:
P(x_M | x_obs) = prod_C P(x_C | x_obs), and each factor is the product of the CPT entries of the families
touching C, normalised over C's joint states (Koller & Friedman 2009, sec. 9.3: the factors of the other
groups are constants of x_C).  So P(x_S | x_obs) = prod_C P(x_{S ∩ C} | x_obs), each a margin of its group's
table: exact, and the work per row is the sum of the groups' sizes, not their product.  The tables are made
once per network (one enumeration of every group's states, rows of one group together,
:func:`bnfk_core.learning.estep._enumerated`); every S the search asks for is then a few sums and one outer
product per set of groups.  A row with a group of more than :data:`GROUP_MAX_STATES` joint states, or beyond
:data:`WIDE_TABLES_MAX_CELLS` entries in all, keeps the blanket contraction of its pattern
(:func:`bnfk_core.inference.queries.joint_posteriors`).
"""

from __future__ import annotations

import math
import string

import numpy as np

from ..inference.queries import joint_posteriors, missingness_patterns
from .estep import _components, _enumerated

__all__ = ["GROUP_MAX_STATES", "WIDE_TABLES_MAX_CELLS", "WidePosteriors"]

#: the largest group of cells (joint states) tabulated for a row: 2**22 float64 entries, 32 MiB
GROUP_MAX_STATES = 2**22
#: the entries of all tables together (128 MiB); the rows beyond either bound have their pattern contracted
#: once per S
WIDE_TABLES_MAX_CELLS = 2**24


class WidePosteriors:
    """The posteriors P(x_S | x_obs) of the rows of ``codes`` (module docstring).

    Parameters
    ----------
    model : BayesNet
        The network whose posteriors are asked (the current structural-EM network).
    codes : ndarray of int, shape (m, n)
        The rows, -1 = missing.
    """

    def __init__(self, model, codes: np.ndarray):
        self.model = model
        self.codes = np.asarray(codes)
        self.cards = [int(c) for c in model.cardinalities]
        self.miss = self.codes < 0
        m, n = self.codes.shape
        # group[r, v]: the id of the group holding row r's missing cell v (-1: observed, or a contracted row)
        self.group = np.full((m, n), -1, dtype=np.int64)
        # per group id: (rows, P (len(rows), states) in C order over the group's cells)
        self.tables: list = []
        self.contracted: list = []  # (rows, missing) of the patterns with a group beyond GROUP_MAX_STATES
        self._margins: dict = {}
        by_cells: dict = {}
        pats = []
        for rows, missing in missingness_patterns(self.codes) if m else ():
            comps = _components(model, missing)
            sizes = [math.prod(self.cards[v] for v in c) for c in comps]
            pats.append((max(sizes), sum(sizes) * len(rows), rows, missing, comps))
        used = 0
        # smallest groups first, within GROUP_MAX_STATES a group and WIDE_TABLES_MAX_CELLS in all
        for biggest, cells, rows, missing, comps in sorted(pats, key=lambda p: p[:2]):
            if biggest > GROUP_MAX_STATES or used + cells > WIDE_TABLES_MAX_CELLS:
                self.contracted.append((rows, missing))
                continue
            used += cells
            for c in comps:
                by_cells.setdefault(tuple(int(v) for v in c), []).append(rows)
        for cells, parts in by_cells.items():
            rows = np.sort(np.concatenate(parts))
            P = np.concatenate(
                [p for _, _, p in _enumerated(model, self.codes, rows, list(cells), self.cards)]
            )
            self.group[np.ix_(rows, list(cells))] = len(self.tables)
            self.tables.append((rows, P, cells))

    def posterior(self, S: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(rows missing every cell of S, P(x_S | x_obs) of each, flat in C order over sorted S).

        Parameters
        ----------
        S : tuple of int
            Sorted variable indices.

        Returns
        -------
        rows : ndarray of int
        P : ndarray, shape (len(rows), prod r_S)
        """
        S = tuple(int(v) for v in S)
        rows = np.flatnonzero(self.miss[:, list(S)].all(axis=1))
        P = np.zeros((len(rows), math.prod(self.cards[v] for v in S)))
        if not len(rows):
            return rows, P
        keys = self.group[np.ix_(rows, list(S))]
        tab = np.flatnonzero((keys >= 0).all(axis=1))
        if len(tab):
            uniq, inv = np.unique(keys[tab], axis=0, return_inverse=True)
            inv = inv.reshape(-1)
            order = np.argsort(inv, kind="stable")
            bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
            for g in range(len(uniq)):
                at = tab[order[bounds[g] : bounds[g + 1]]]
                P[at] = self._product(rows[at], S, uniq[g])
        for prow, missing in self.contracted:
            if set(S) <= set(missing.tolist()):
                P[np.searchsorted(rows, prow)] = joint_posteriors(
                    self.model, self.codes, prow, missing, list(S)
                )
        return rows, P

    def _margin(self, k: int, keep: tuple) -> np.ndarray:
        """Group ``k``'s table summed onto its cells ``keep``, for every row of the group: (rows, *r_keep),
        kept (the searches ask the same cells of a group in many subsets S)."""
        got = self._margins.get((k, keep))
        if got is None:
            grows, G, cells = self.tables[k]
            T = G.reshape((len(grows),) + tuple(self.cards[v] for v in cells))
            drop = tuple(1 + j for j, v in enumerate(cells) if v not in keep)
            got = self._margins[(k, keep)] = T.sum(axis=drop) if drop else T
        return got

    def _product(self, rr: np.ndarray, S: tuple, ids: np.ndarray) -> np.ndarray:
        """prod over the groups ``ids`` (one per cell of S) of the margins on S of their tables, for rows
        ``rr`` (which share those groups): (len(rr), prod r_S)."""
        letters = string.ascii_letters
        operands, subs = [], []
        for k in dict.fromkeys(int(i) for i in ids):
            grows, _, cells = self.tables[k]
            keep = tuple(v for v in cells if v in S)
            operands.append(self._margin(k, keep)[np.searchsorted(grows, rr)])
            subs.append("Z" + "".join(letters[S.index(v)] for v in keep))
        if len(operands) == 1:  # one group holds all of S: its margin is already in S's order
            return operands[0].reshape(len(rr), -1)
        out = np.einsum(",".join(subs) + "->Z" + letters[: len(S)], *operands)
        return out.reshape(len(rr), -1)
