"""log P(x_observed) of a fixed set of incomplete rows under many CPT sets of one structure.

Held-out evaluation re-fits the same graph hundreds of times and scores the same test rows each time, so
everything that depends on the rows only is worked out once here and a re-fit costs a few gathers.

For a row with missing variables M,

    P(x_obs) = prod_{i: family of i observed} theta_i[x_i | x_pi_i]
               * prod_{groups G} sum_{x_G} prod_{i: family of i meets G} theta_i[x_i | x_pi_i],

where the groups are the connected components of M in the graph joining two missing variables that share
a family (a family meets exactly one group, so the sum factorises).  The first product is a count vector
of observed family cells (added to the complete rows' counts by the caller); each group's sum enumerates
its configurations.  Every (row, group, configuration, family) term is one flat index into the CPTs
concatenated, so a CPT set costs ``L[terms]``, a segmented sum, and a segmented log-sum-exp; many CPT sets
at once are the same with a leading axis.  Rows with a group of more than :data:`MAX_GROUP_CONFIGS`
configurations are left to the caller (``fallback``: junction-tree inference).
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["FixedEvidence", "MAX_GROUP_CONFIGS"]

#: largest number of configurations of one group of connected missing cells that is enumerated
MAX_GROUP_CONFIGS = 4096


class FixedEvidence:
    """The enumeration terms of ``codes`` (rows with missing cells, -1) for a graph with ``parents`` and
    ``cards``; CPT cell (i, j, x) has flat index ``offsets[i] + j * cards[i] + x`` (the CPT layout).

    ``observed_counts``: per flat cell, how many rows observe that family completely; ``fallback``: the rows
    (positions in ``codes``) whose groups are too large to enumerate."""

    def __init__(self, codes: np.ndarray, parents, cards, max_configs: int | None = None):
        max_configs = MAX_GROUP_CONFIGS if max_configs is None else int(max_configs)
        codes = np.asarray(codes, dtype=np.int64)
        cards = np.asarray(cards, dtype=np.int64)
        n = len(cards)
        fams = [list(parents[i]) + [i] for i in range(n)]
        q = [int(np.prod(cards[list(parents[i])])) if len(parents[i]) else 1 for i in range(n)]
        sizes = np.array([q[i] * int(cards[i]) for i in range(n)], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.n_cells = int(sizes.sum())
        self.cards, self.fams = cards, fams
        miss = codes < 0
        fam_miss = (
            np.stack([miss[:, f].any(axis=1) for f in fams], axis=1) if n else np.zeros((len(codes), 0), bool)
        )
        groups: dict = {}  # (group variables, families) -> list of row positions
        fallback = []
        for r in range(codes.shape[0]):
            M = [int(v) for v in np.flatnonzero(miss[r])]
            touch = [int(i) for i in np.flatnonzero(fam_miss[r])]
            comps = _components(M, [fams[i] for i in touch])
            if any(int(np.prod(cards[g])) > max_configs for g in comps):
                fallback.append(r)
                continue
            for g in comps:
                gs = set(g)
                key = (tuple(g), tuple(i for i in touch if gs.intersection(fams[i])))
                groups.setdefault(key, []).append(r)
        self.fallback = np.array(fallback, dtype=np.int64)
        enumerated = np.ones(len(codes), bool)
        enumerated[self.fallback] = False
        obs = [self._cell(codes[enumerated & ~fam_miss[:, i]], i) for i in range(n)]
        self.observed_counts = np.bincount(
            np.concatenate(obs) if obs else np.zeros(0, np.int64), minlength=self.n_cells
        ).astype(float)
        terms, cfg_len, grp_len = [], [], []
        for (g, fam_ids), rows in sorted(groups.items()):
            combos = np.array(list(itertools.product(*[range(int(cards[v])) for v in g])), dtype=np.int64)
            A = len(combos)
            X = np.repeat(codes[rows], A, axis=0)  # (rows * A, n), row-major by row
            X[:, list(g)] = np.tile(combos, (len(rows), 1))
            idx = np.stack([self._cell(X, i) for i in fam_ids], axis=1)  # (rows * A, families)
            terms.append(idx.ravel())
            cfg_len.append(np.full(len(rows) * A, len(fam_ids), dtype=np.int64))
            grp_len.append(np.full(len(rows), A, dtype=np.int64))
        self.terms = np.concatenate(terms) if terms else np.zeros(0, np.int64)
        cfg_len = np.concatenate(cfg_len) if cfg_len else np.zeros(0, np.int64)
        grp_len = np.concatenate(grp_len) if grp_len else np.zeros(0, np.int64)
        self.cfg_starts = np.concatenate([[0], np.cumsum(cfg_len)[:-1]]).astype(np.int64)
        self.grp_starts = np.concatenate([[0], np.cumsum(grp_len)[:-1]]).astype(np.int64)
        self.grp_of_cfg = np.repeat(np.arange(len(grp_len)), grp_len)

    def _cell(self, X: np.ndarray, i: int) -> np.ndarray:
        ps = self.fams[i][:-1]
        j = (
            np.ravel_multi_index(tuple(X[:, p] for p in ps), tuple(int(self.cards[p]) for p in ps))
            if ps
            else 0
        )
        return self.offsets[i] + j * int(self.cards[i]) + X[:, i]

    def group_log_sum(self, log_cpts: np.ndarray) -> np.ndarray:
        """sum over groups of log sum_{x_G} prod theta, for flat log-CPTs of shape (n_cells,) or (D, n_cells)
        (D CPT sets at once; returns shape () or (D,)).

        Parameters
        ----------
        log_cpts : ndarray, shape (n_cells,) or (D, n_cells)

        Returns
        -------
        ndarray, shape () or (D,)
        """
        L = np.asarray(log_cpts, dtype=np.float64)
        if not self.terms.size:
            return np.zeros(L.shape[:-1])
        with np.errstate(invalid="ignore"):
            v = np.add.reduceat(L[..., self.terms], self.cfg_starts, axis=-1)  # log of each configuration
            m = np.maximum.reduceat(v, self.grp_starts, axis=-1)
            m = np.where(np.isfinite(m), m, 0.0)
            s = np.add.reduceat(np.exp(v - m[..., self.grp_of_cfg]), self.grp_starts, axis=-1)
        with np.errstate(divide="ignore"):
            return (m + np.log(s)).sum(axis=-1)


def _components(M: list, families: list) -> list[list[int]]:
    """Connected components of the missing variables ``M`` joined by shared ``families``, sorted."""
    parent = {v: v for v in M}

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    Ms = set(M)
    for f in families:
        ms = [v for v in f if v in Ms]
        for a in ms[1:]:
            ra, rb = find(ms[0]), find(a)
            if ra != rb:
                parent[ra] = rb
    out: dict = {}
    for v in M:
        out.setdefault(find(v), []).append(v)
    return sorted(sorted(g) for g in out.values())
