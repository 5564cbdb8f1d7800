"""Held-out evaluation of many re-fits of one structure (paper, "Data summarization"): the seeded split,
the class posterior, and :class:`HeldOut` -- the test half's NLL (and class error / log loss) of the
structure re-fitted with pseudo-count one on a subset, for hundreds of subsets.
"""

from __future__ import annotations

import numpy as np

from ...errors import PrototypeError
from ...inference.fixed_evidence import FixedEvidence
from ...inference.queries import log_likelihood, posterior
from ...network.model import MAX_CPT_CELLS, BayesNet

__all__ = ["split_half", "class_posterior", "HeldOut"]


def split_half(N: int, test_fraction: float = 0.5, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, test rows) of a seeded random split; the test part has round(N * test_fraction) rows.

    Parameters
    ----------
    N : int
    test_fraction : float
    seed : int

    Returns
    -------
    train, test : ndarray of int
        Sorted row indices.

    Raises
    ------
    PrototypeError
        When ``test_fraction`` is outside (0, 1) or leaves one side empty.
    """
    if not 0 < test_fraction < 1:
        raise PrototypeError(f"The test fraction must be between 0 and 1 (exclusive), got {test_fraction}.")
    perm = np.random.default_rng(seed).permutation(N)
    n_test = int(round(N * test_fraction))
    if n_test < 1 or n_test >= N:
        raise PrototypeError(
            f"A test fraction of {test_fraction} leaves no rows on one side of the split of {N} rows."
        )
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def class_posterior(model, data, class_column: str) -> np.ndarray:
    """P(class | the other variables) of every row, shape (N, r_class).

    Complete feature rows: P(c, x) for every class value c, normalised (exact).  Rows with a
    missing feature cell go through :func:`bnfk_core.inference.queries.posterior` with the class hidden.

    Parameters
    ----------
    model : BayesNet
    data : CategoricalData
    class_column : str

    Returns
    -------
    ndarray, shape (N, r_class)
    """
    data = model.align(data)
    ci = data.index(class_column)
    codes = data.codes.astype(np.int64)
    r = int(model.cardinalities[ci])
    out = np.zeros((codes.shape[0], r))
    feats = np.delete(codes, ci, axis=1)
    ok = (feats >= 0).all(axis=1)
    if ok.any():
        X = codes[ok].copy()
        logj = np.zeros((X.shape[0], r))
        for c in range(r):
            X[:, ci] = c
            for i in range(model.n_vars):
                logj[:, c] += np.log(model.cpts[i][model.parent_config(i, X), X[:, i]])
        logj -= logj.max(axis=1, keepdims=True)
        p = np.exp(logj)
        out[ok] = p / p.sum(axis=1, keepdims=True)
    if (~ok).any():
        hid = codes[~ok].copy()
        hid[:, ci] = -1
        rows, probs = posterior(model, hid)[ci]
        out[np.flatnonzero(~ok)[rows]] = probs
    return out


class HeldOut:
    """Fast, exact held-out evaluation of many re-fits of one structure.

    Everything is reduced to counts: the test NLL is -sum_i sum_cells N^test_cell log theta_cell / M,
    and the class posterior is computed once per distinct feature pattern of the test half.  Test rows with
    missing cells add their observed families to the counts and the rest of log P(x_observed) by enumerating
    each group of connected missing cells (:class:`~bnfk_core.inference.fixed_evidence.FixedEvidence`: the
    gathers are planned once, a re-fit only changes the CPTs); rows whose groups are too large go through
    junction-tree inference.  :meth:`evaluate_many` scores many re-fits at once.
    """

    def __init__(self, dag, test, class_column: str | None = None, pseudo_count: float = 1.0):
        self.dag = dag
        self.variables = list(dag.nodes)
        test = test.select(self.variables) if tuple(test.variables) != tuple(self.variables) else test
        self.states = test.states
        self.cards = test.cardinalities.astype(np.int64)
        self.parents = dag.parent_indices()
        self.pseudo = float(pseudo_count)
        all_codes = test.codes.astype(np.int64)
        self.M = all_codes.shape[0]
        if self.M == 0:
            raise PrototypeError("The test part is empty; lower the training share.")
        self.q = [int(np.prod(self.cards[list(ps)])) if ps else 1 for ps in self.parents]
        for i, q in enumerate(self.q):
            if q * self.cards[i] > MAX_CPT_CELLS:
                raise PrototypeError(f"Variable '{self.variables[i]}' has too many parent configurations.")
        complete = ~(all_codes < 0).any(axis=1)
        codes = all_codes[complete]
        # rows with missing cells: log P(x_observed) and the class posterior by inference (slower, exact)
        self.incomplete = test.subset(np.flatnonzero(~complete)) if (~complete).any() else None
        self.test_counts = [self._family_counts(codes, i) for i in range(len(self.variables))]
        sizes = [q * int(r) for q, r in zip(self.q, self.cards)]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.fixed, self.fallback = None, None
        if self.incomplete is not None:
            self.fixed = FixedEvidence(self.incomplete.codes, self.parents, self.cards)
            if self.fixed.fallback.size:
                self.fallback = self.incomplete.subset(self.fixed.fallback)
        self.counts = np.concatenate(
            self.test_counts
        )  # complete rows' and incomplete rows' observed families
        if self.fixed is not None:
            self.counts = self.counts + self.fixed.observed_counts
        # CPT normalisation blocks: one per (variable, parent configuration), r_i cells each
        self.block_starts = np.concatenate(
            [self.offsets[i] + np.arange(self.q[i]) * int(self.cards[i]) for i in range(len(self.q))]
        ).astype(np.int64)
        self.block_of_cell = np.repeat(
            np.arange(len(self.block_starts)), np.repeat([int(r) for r in self.cards], self.q)
        )
        self.cls = None
        if class_column is not None:
            self.cls = self.variables.index(class_column)
            self.M_class = int((all_codes[:, self.cls] >= 0).sum())
            if self.M_class == 0:
                raise PrototypeError(f"No test row has a value in the class column '{class_column}'.")
            feats = np.delete(codes, self.cls, axis=1)
            uniq, inv = np.unique(feats, axis=0, return_inverse=True)
            inv = inv.ravel()
            r = int(self.cards[self.cls])
            self.pattern_counts = np.zeros((len(uniq), r))
            np.add.at(self.pattern_counts, (inv, codes[:, self.cls]), 1.0)
            # flat family-cell index of every pattern with the class set to each value
            U = np.insert(uniq, self.cls, 0, axis=1)
            involved = [i for i in range(len(self.variables)) if i == self.cls or self.cls in self.parents[i]]
            self.class_cells = []
            for i in involved:
                cells = np.empty((len(U), r), dtype=np.int64)
                for c in range(r):
                    U[:, self.cls] = c
                    cells[:, c] = self._flat(U, i)
                self.class_cells.append((i, cells))
            if self.incomplete is not None:
                keep = self.incomplete.codes[:, self.cls] >= 0
                self.incomplete_labelled = (
                    self.incomplete.subset(np.flatnonzero(keep)) if keep.any() else None
                )

    def _flat(self, codes, i):
        ps = self.parents[i]
        j = (
            np.ravel_multi_index(tuple(codes[:, p] for p in ps), tuple(int(self.cards[p]) for p in ps))
            if ps
            else 0
        )
        return j * int(self.cards[i]) + codes[:, i]

    def _family_counts(self, codes, i):
        return np.bincount(self._flat(codes, i), minlength=self.q[i] * int(self.cards[i])).astype(float)

    def fit(self, codes) -> list:
        """Smoothed CPTs (flattened) of the structure fitted on ``codes`` (complete rows, model order).

        Parameters
        ----------
        codes : ndarray of int, shape (k, n)

        Returns
        -------
        list of ndarray
        """
        codes = np.asarray(codes, dtype=np.int64)
        out = []
        for i in range(len(self.variables)):
            cnt = (
                self._family_counts(
                    codes[(codes[:, list(self.parents[i]) + [i]] >= 0).all(axis=1)], i
                ).reshape(self.q[i], -1)
                + self.pseudo
            )
            out.append((cnt / cnt.sum(axis=1, keepdims=True)).ravel())
        return out

    def model(self, cpts):
        """The BayesNet of flattened CPTs from :meth:`fit`.

        Parameters
        ----------
        cpts : list of ndarray

        Returns
        -------
        BayesNet
        """
        return BayesNet(
            self.dag, tuple(self.states), tuple(t.reshape(self.q[i], -1) for i, t in enumerate(cpts))
        )

    def fit_many(self, codes: np.ndarray) -> np.ndarray:
        """:meth:`fit` of each of D code matrices (D, k, n) at once: flat CPTs concatenated, shape (D, cells).

        Parameters
        ----------
        codes : ndarray of int, shape (D, k, n)

        Returns
        -------
        ndarray, shape (D, cells)
        """
        codes = np.asarray(codes, dtype=np.int64)
        D, C = codes.shape[0], int(self.offsets[-1])
        flat = codes.reshape(-1, codes.shape[-1])
        draw = np.repeat(np.arange(D, dtype=np.int64) * C, codes.shape[1])
        cells = []
        for i in range(len(self.variables)):
            ok = (flat[:, list(self.parents[i]) + [i]] >= 0).all(axis=1)
            cells.append(draw[ok] + self.offsets[i] + self._flat(flat[ok], i))
        cnt = np.bincount(np.concatenate(cells), minlength=D * C).reshape(D, C).astype(float) + self.pseudo
        return cnt / np.add.reduceat(cnt, self.block_starts, axis=1)[:, self.block_of_cell]

    def _log_evidence(self, logs_flat: np.ndarray) -> np.ndarray:
        """sum over test rows of log P(x_observed), without the fallback rows, for flat log-CPTs (...,
        cells)."""
        total = logs_flat @ self.counts
        if self.fixed is not None:
            total = total + self.fixed.group_log_sum(logs_flat)
        return total

    def evaluate_cpts(self, cpts) -> dict:
        """Held-out metrics of the network with the flattened CPTs ``cpts``.

        Parameters
        ----------
        cpts : list of ndarray

        Returns
        -------
        dict
            ``nll`` (mean negative log-likelihood per test row) and, with a class, ``error`` and ``log_loss``.
        """
        logs = [np.log(t) for t in cpts]
        total = float(self._log_evidence(np.concatenate(logs)))
        return self._finish(total, logs, cpts)

    def _finish(self, total: float, logs, cpts) -> dict:
        """The metrics from the enumerated log-likelihood ``total``: the fallback rows and the class
        metrics."""
        net = None
        if self.fallback is not None or (self.cls is not None and self.incomplete is not None):
            net = self.model(cpts)
        if self.fallback is not None:
            total += float(log_likelihood(net, self.fallback).sum())
        res = {"nll": -total / self.M}
        if self.cls is not None:
            logj = np.zeros(self.pattern_counts.shape)
            for i, cells in self.class_cells:
                logj += logs[i][cells]
            logj -= logj.max(axis=1, keepdims=True)
            logp = logj - np.log(np.exp(logj).sum(axis=1, keepdims=True))
            wrong = float(
                (
                    self.pattern_counts.sum(axis=1)
                    - self.pattern_counts[np.arange(len(logp)), logp.argmax(axis=1)]
                ).sum()
            )
            loss = float(-(self.pattern_counts * logp).sum())
            if self.incomplete is not None and self.incomplete_labelled is not None:
                inc = self.incomplete_labelled
                post = class_posterior(net, inc, self.variables[self.cls])
                truth = inc.codes[:, self.cls]
                wrong += float((post.argmax(axis=1) != truth).sum())
                loss -= float(np.log(post[np.arange(len(truth)), truth]).sum())
            res["error"] = wrong / self.M_class
            res["log_loss"] = loss / self.M_class
        return res

    def evaluate(self, codes) -> dict:
        """Held-out metrics of the structure re-fitted (pseudo-count) on ``codes``.

        Parameters
        ----------
        codes : ndarray of int, shape (k, n)

        Returns
        -------
        dict
            As :meth:`evaluate_cpts`.
        """
        return self.evaluate_cpts(self.fit(codes))

    def evaluate_many(self, codes: np.ndarray, chunk: int = 64) -> list[dict]:
        """:meth:`evaluate` of each of D code matrices of the same size (D, k, n), re-fitted and scored in
        chunks of ``chunk`` at once (the same numbers to rounding).

        Parameters
        ----------
        codes : ndarray of int, shape (D, k, n)
        chunk : int

        Returns
        -------
        list of dict
        """
        codes = np.asarray(codes, dtype=np.int64)
        out = []
        for a in range(0, codes.shape[0], chunk):
            flat = self.fit_many(codes[a : a + chunk])
            with np.errstate(divide="ignore"):
                L = np.log(flat)
            totals = self._log_evidence(L)
            for d in range(flat.shape[0]):
                cpts = [flat[d, self.offsets[i] : self.offsets[i + 1]] for i in range(len(self.q))]
                logs = [L[d, self.offsets[i] : self.offsets[i + 1]] for i in range(len(self.q))]
                out.append(self._finish(float(totals[d]), logs, cpts))
        return out
