"""Decomposable BIC and AIC of conditional linear Gaussian networks from sufficient statistics.

The local score of a discrete family is its multinomial log-likelihood at the maximum (counts N_ijk) minus
the penalty of its q_i (r_i - 1) parameters; of a Gaussian family, the Gaussian log-likelihood of the
least-squares regressions of :func:`bnfk_core.hybrid.stats.regress` minus the penalty of its q_i (|C_i| + 2)
parameters (intercept, weights, variance per discrete configuration).  BIC's penalty is (k / 2) log n, AIC's
k, with n the rows the family is observed on (available-case: every row when the table is complete, so that
the total equals :meth:`bnfk_core.hybrid.model.HybridNet.score` of the maximum-likelihood network).
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
        self._local: dict = {}
        self._blocks: dict = {}
        self.evaluations = 0

    def allowed(self, parent: int, child: int) -> bool:
        """An arc parent -> child keeps to the CLG family (no numeric parent for a discrete child)."""
        return not (self.kinds[child] == DISCRETE and self.kinds[parent] == NUMERIC)

    def _penalty(self, k: int, n: float) -> float:
        if self.score == "bic":
            return 0.5 * k * math.log(n) if n > 0 else 0.0
        return float(k)

    def __call__(self, child: int, parents) -> float:
        key = (child, tuple(sorted(parents)))
        got = self._local.get(key)
        if got is None:
            got = self._local[key] = self._compute(child, key[1])
        return got

    def total(self, parent_sets) -> float:
        """The sum of the local scores of ``parent_sets`` (one tuple of parent indices per column)."""
        return float(sum(self(i, ps) for i, ps in enumerate(parent_sets)))

    def _compute(self, child: int, parents: tuple) -> float:
        self.evaluations += 1
        codes, values, cards = self.data.codes, self.data.values, self.cards
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
            return ll - self._penalty(q * (r - 1), float(ok.sum()))
        if self.complete_numbers:
            dkey = tuple(dps)
            block = self._blocks.get(dkey)
            if block is None:
                block = self._blocks[dkey] = all_numeric_stats(codes, values, cards, dps, self.numeric)
            S = sub_stats(block, self.numeric, child, cps)
        else:
            S = family_stats(codes, values, cards, child, dps, cps)
        _, _, loglik, n = regress(S, self.floors[child])
        q = S.shape[0]
        return float(loglik.sum()) - self._penalty(q * (len(cps) + 2), float(n.sum()))
