"""Decomposable BIC and AIC of conditional linear Gaussian networks from sufficient statistics.

The local score of a discrete family is its multinomial log-likelihood at the maximum (counts N_ijk) minus
the penalty of its q_i (r_i - 1) parameters; of a Gaussian family, the Gaussian log-likelihood of the
least-squares regressions of :func:`bnfk_core.hybrid.stats.regress` minus the penalty of its q_i (|C_i| + 2)
parameters (intercept, weights, variance per discrete configuration).  BIC's penalty is (k / 2) log n, AIC's
k, with n the rows the family is observed on.  With missing cells (available-case) a family observed on
n_f of the N rows has its local score scaled by N / n_f, as the discrete available-case scorer does, so that
families counted on different rows compare; on a complete table the total is
:meth:`bnfk_core.hybrid.model.HybridNet.score` of the maximum-likelihood network.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import xlogy

from ..errors import StructureError
from .stats import VARIANCE_FLOOR, all_numeric_stats, family_stats, regress, sub_stats, variance_floor
from .table import DISCRETE, NUMERIC, MixedData

__all__ = ["HybridScorer", "HYBRID_SCORES"]

#: the scores a hybrid search optimises
HYBRID_SCORES = ("bic", "aic")


class HybridScorer:
    """Cached local scores ``scorer(child, parents)`` of a mixed table.

    A search compares two parent sets of one child with :meth:`delta`, on the rows where both are observed.
    When no numeric cell is missing, the Gaussian families with one set of discrete parents D share one
    cross-product matrix per configuration of D over all numeric columns (:func:`~bnfk_core.hybrid.stats.
    all_numeric_stats`), so a move is scored by small solves on its sub-blocks; otherwise each family's
    available cases are counted on their own.

    Parameters
    ----------
    data : MixedData
    score : {"bic", "aic"}
    relative_floor : float
        As :func:`bnfk_core.hybrid.fitting.fit_hybrid`.
    """

    def __init__(self, data: MixedData, score: str = "bic", relative_floor: float = VARIANCE_FLOOR):
        if score not in HYBRID_SCORES:
            raise StructureError(f"Unknown hybrid score '{score}'; choose one of {', '.join(HYBRID_SCORES)}.")
        self.data, self.score = data, score
        self.kinds = data.kinds
        self.cards = data.cardinalities
        self.numeric = data.numeric
        self.complete_numbers = (
            not np.isnan(data.values[:, list(self.numeric)]).any() if self.numeric else True
        )
        self.floors = {i: variance_floor(data.values[:, i], relative_floor) for i in self.numeric}
        self.missing = data.missing_mask()
        self.complete = not self.missing.any()
        self._local: dict = {}
        self._blocks: dict = {}
        self.evaluations = 0

    @property
    def n_vars(self) -> int:
        """The columns (the exact search's variables)."""
        return len(self.kinds)

    def allowed(self, parent: int, child: int) -> bool:
        """An arc parent -> child keeps to the CLG family (no numeric parent for a discrete child)."""
        return not (self.kinds[child] == DISCRETE and self.kinds[parent] == NUMERIC)

    def _penalty(self, k: int, n: float) -> float:
        if self.score == "bic":
            return 0.5 * k * math.log(n) if n > 0 else 0.0
        return float(k)

    def __call__(self, child: int, parents, members=()) -> float:
        """The local score of ``child`` with ``parents``, on the rows where the family and ``members`` (more
        columns) are observed; ``members`` matter only when cells are missing."""
        parents = tuple(sorted(parents))
        extra = () if self.complete else tuple(sorted(set(members) - set(parents) - {child}))
        key = (child, parents, extra)
        got = self._local.get(key)
        if got is None:
            got = self._local[key] = self._compute(child, parents, extra)
        return got

    def delta(self, child: int, old, new) -> float:
        """The score change of replacing the parents ``old`` of ``child`` by ``new``, both families scored on
        the rows where the union of their members is observed (pairwise available cases: two families
        compared on one set of rows)."""
        both = tuple(set(old) | set(new))
        return self(child, new, both) - self(child, old, both)

    def total(self, parent_sets) -> float:
        """The sum of the local scores of ``parent_sets`` (one tuple of parent indices per column)."""
        return float(sum(self(i, ps) for i, ps in enumerate(parent_sets)))

    def _compute(self, child: int, parents: tuple, extra: tuple = ()) -> float:
        self.evaluations += 1
        codes, values, cards = self.data.codes, self.data.values, self.cards
        if extra:
            seen = ~self.missing[:, list(extra)].any(axis=1)
            codes, values = codes[seen], values[seen]
        dps = [p for p in parents if self.kinds[p] == DISCRETE]
        cps = [p for p in parents if self.kinds[p] == NUMERIC]
        if self.kinds[child] == DISCRETE:
            if cps:
                raise StructureError("A discrete node cannot have a numeric parent.")
            fam = dps + [child]
            sub = codes[:, fam].astype(np.int64)
            ok = (sub >= 0).all(axis=1)
            shape = tuple(int(cards[f]) for f in fam)
            flat = np.ravel_multi_index(tuple(sub[ok, k] for k in range(len(fam))), shape)
            r = int(cards[child])
            q = int(np.prod(shape[:-1])) if dps else 1
            counts = np.bincount(flat, minlength=q * r).reshape(q, r).astype(float)
            nj = counts.sum(axis=1)
            ll = float(xlogy(counts, counts).sum() - xlogy(nj, nj).sum())
            return self._scaled(ll - self._penalty(q * (r - 1), float(ok.sum())), float(ok.sum()))
        if self.complete_numbers and not extra:
            dkey = tuple(dps)
            block = self._blocks.get(dkey)
            if block is None:
                block = self._blocks[dkey] = all_numeric_stats(codes, values, cards, dps, self.numeric)
            S = sub_stats(block, self.numeric, child, cps)
        else:
            S = family_stats(codes, values, cards, child, dps, cps)
        _, _, loglik, n = regress(S, self.floors[child])
        q = S.shape[0]
        n_f = float(n.sum())
        return self._scaled(float(loglik.sum()) - self._penalty(q * (len(cps) + 2), n_f), n_f)

    def _scaled(self, local: float, n_f: float) -> float:
        """The local score of a family observed on n_f of the N rows, times N / n_f (as the discrete
        available-case scorer, :mod:`bnfk_core.learning.available_case`): families counted on different rows
        compare.  A family observed on no row is never chosen."""
        N = self.data.n_rows
        if n_f >= N:
            return local
        return local * (N / n_f) if n_f > 0 else -math.inf
