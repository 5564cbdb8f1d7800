"""Live structure: the Fisher Gram matrix (and what hangs off it) kept up to date under arc edits.

:class:`LiveKernel` fits a network to data, holds its Gram matrix ``K`` and applies arc edits
(``add``, ``remove``, ``reverse``) by recomputing only the per-variable terms of Theorem 1 that
change; ``undo``/``redo`` walk the edit history.  After every edit ``gram()`` equals
``kernels.gram(model.fit(new_dag, data, method=params), data)`` (to rounding, ~1e-12 relative).

Which terms change (Theorem 1, K = Σ_w K_w,
K_w(x, y) = [π_w(x) = π_w(y)] / P(π_w = j) · ([x_w = y_w] / θ_{w,j,x_w} − 1)).
The estimators fit every CPT from the counts of its own family only, so an edit re-estimates the
CPTs of the variables whose parent set changed -- v for ``add``/``remove`` u → v, u and v for
``reverse`` -- and no other θ.  Call these the *rebuilt* variables R.  For w ∉ R the pair-match
indicator and θ_w stay; only P(π_w) can move, and the marginal of π_w depends on the CPTs of
π_w and its ancestors alone.  So K_w changes exactly when a rebuilt variable is a parent of w or
an ancestor of one (before or after the edit): those are the *rescaled* variables S, and for them

    K_w(new) − K_w(old) = [π_w(x) = π_w(y) = j] · (1/P'_j − 1/P_j) · ([x_w = y_w] / θ_{w,j,x_w} − 1),

one pass over the pairs sharing a parent configuration.  A rebuilt term is subtracted with its old
parents, θ and P and added with the new ones.  We recompute P(π_w) for every w in S by exact
variable elimination and skip the ones that came out bit-identical.  Nothing else is touched:
the update costs Σ_{w ∈ R ∪ S} Σ_j N_j² pair operations (N_j = rows in configuration j) and no
N × N scratch matrix (the pairs are added into ``K`` in place).

Rows with missing cells get the marginalized kernel (expected features, see
:mod:`bnfk_core.kernels.fisher`); their expectations are posteriors under the *whole* network, so for
every variable whose family has a missing cell the part of K_w that involves such rows is
subtracted with the old network and added with the new one after every edit.

Also kept up to date: per-row log-likelihood (a sum of per-family log θ vectors, cached per
family), decomposable scores (:class:`bnfk_core.learning.scores.LocalScorer` caches per family), the
explicit features (per-family blocks), posteriors of missing cells (a row is
re-inferred only when one of its missing cells lies in a re-estimated family: otherwise every
changed CPT factor is a constant of that row and cancels from its posterior), and the
structure-independent scaled-Hamming kernel (computed once).  The analyses that reuse a live kernel
(warm-started clustering and prototypes, BN imputation) are in :mod:`bnfk_core.analyses.reuse`.

Memory: ``K`` itself plus O(N) per variable; undo does not keep old matrices (it applies the
reverse update), so it restores the structure and CPTs exactly and ``K`` to rounding.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np
import scipy.sparse as sp

from ..data.limits import DEFAULT_MAX_BYTES, one_blas_thread
from ..errors import KernelError, StructureError
from ..inference.queries import (
    MAX_INTERMEDIATE,
    ParentMarginals,
    gather_posteriors,
    log_evidence,
    marginal,
    parent_marginals,
    posterior,
)
from ..learning.scores import LocalScorer
from ..network.dag import DAG
from ..network.edit import ArcEdit
from ..network.model import BayesNet, cpt_counts, estimate_cpt, fit
from ..registry import ESTIMATORS
from .features import block_matrix, check_positive, features
from .fisher import SCALED_HAMMING, gram
from .live_terms import (
    TermEntry,
    add_missing_part,
    changed_terms,
    missing_part,
    run_entries,
    safe_inverse,
)

__all__ = ["LiveKernel", "rows_key"]

_PM_KEY = ("parent_marginals", MAX_INTERMEDIATE, 1_000_000, 0)  # parent_marginals(model)'s cache key


def rows_key(data) -> str:
    """A content hash of a table's rows (variables, states and codes).

    Parameters
    ----------
    data : CategoricalData

    Returns
    -------
    str
        SHA-1 hex digest; equal tables give equal keys.
    """
    h = hashlib.sha1(repr((tuple(data.variables), tuple(data.states))).encode())
    h.update(np.ascontiguousarray(data.codes).tobytes())
    return h.hexdigest()


class LiveKernel:
    """The Fisher Gram matrix of ``dag`` fitted to ``data``, updated in place under arc edits.

    Parameters
    ----------
    dag : DAG over (a subset of) the columns of ``data``.
    data : CategoricalData; the rows of the Gram matrix (the label column is not dropped for you).
    params : CPT estimator (``smoothed``, ``ml``, ``bdeu``, ``cnml``), as :func:`bnfk_core.network.model.fit`.
    pseudo_count : of ``smoothed``/``bdeu``.
    max_bytes : memory guard of the N × N matrix (as :func:`bnfk_core.kernels.fisher.gram`).

    ``gram()`` returns the live matrix (read-only view; it changes with the next edit -- pass
    ``copy=True`` for a snapshot).

    Raises
    ------
    KernelError
        An unknown estimator, or an N × N matrix over ``max_bytes``.

    References
    ----------
    The bnfk paper, Theorem 1: K = sum_w K_w, so an arc edit changes only the terms of the re-fitted
    variables and of those whose parent marginals P(pi_w) depend on the re-fitted CPTs (module docstring).
    """

    def __init__(
        self,
        dag: DAG,
        data,
        params: str = "smoothed",
        pseudo_count: float = 1.0,
        *,
        max_bytes: float | None = DEFAULT_MAX_BYTES,
    ):
        if params not in ESTIMATORS:
            raise KernelError(f"Unknown parameter method '{params}'; choose one of {', '.join(ESTIMATORS)}.")
        feats = data if tuple(data.variables) == tuple(dag.nodes) else data.select(list(dag.nodes))
        self.data = feats
        self.params, self.pseudo_count = params, float(pseudo_count)
        self.codes = np.ascontiguousarray(feats.codes, dtype=np.int64)
        self.cards = feats.cardinalities
        self.N = feats.n_rows
        self.has_missing = bool((self.codes < 0).any())
        self._cpt_cache: dict = {}
        self._row_cache: dict = {}
        self._ll_cache: dict = {}
        self._block_cache: dict = {}
        self._scorers: dict = {}
        self._sh = None
        self._post = None  # (model, posterior dict)
        self.posterior_stats: dict = {}
        t0 = time.perf_counter()
        model = fit(dag, feats, method=params, pseudo_count=pseudo_count)
        for i, t in enumerate(model.cpts):
            self._cpt_cache[(i, model.parents[i])] = t
        self._model = model
        self._K = gram(model, feats, max_bytes=max_bytes)
        self.seconds_build = time.perf_counter() - t0
        self._undo: list = []
        self._redo: list = []
        self.last_update: dict = {}
        self._data_key = None

    # ------------------------------------------------------------------ state
    @property
    def model(self) -> BayesNet:
        """The current fitted network (its parent marginals are cached on it)."""
        return self._model

    @property
    def dag(self) -> DAG:
        return self._model.dag

    @property
    def history(self) -> list:
        """The edits applied so far (oldest first) that ``undo`` would revert."""
        return [e for e, _ in self._undo]

    def can_undo(self) -> bool:
        """Whether there is an edit to undo.

        Returns
        -------
        bool
        """
        return bool(self._undo)

    def can_redo(self) -> bool:
        """Whether there is an undone edit to redo.

        Returns
        -------
        bool
        """
        return bool(self._redo)

    def gram(self, copy: bool = False) -> np.ndarray:
        """The Fisher Gram matrix of the current structure (N × N).  Without ``copy`` a read-only view
        of the live matrix, which the next ``apply``/``undo``/``redo`` changes in place.

        Parameters
        ----------
        copy : bool

        Returns
        -------
        ndarray, shape (N, N)
        """
        if copy:
            return self._K.copy()
        v = self._K.view()
        v.flags.writeable = False
        return v

    # ------------------------------------------------------------------ model pieces
    def _cpt(self, dag: DAG, i: int) -> np.ndarray:
        key = (i, dag.parent_indices()[i])
        t = self._cpt_cache.get(key)
        if t is None:
            t = estimate_cpt(cpt_counts(dag, self.codes, self.cards, i), self.params, self.pseudo_count)
            self._cpt_cache[key] = t
        return t

    def _rows(self, model, i):
        """(parent configuration per row, state per row, complete-family mask) of variable i."""
        key = (i, model.parents[i])
        v = self._row_cache.get(key)
        if v is None:
            p = model.parent_config(i, self.codes)
            x = self.codes[:, i]
            v = (p, x, (p >= 0) & (x >= 0))
            self._row_cache[key] = v
        return v

    def _model_for(self, dag: DAG, base: BayesNet, rebuilt) -> BayesNet:
        """``base`` with the rebuilt CPTs re-estimated for ``dag`` (the estimators' CPTs are valid by
        construction, so BayesNet's checks are skipped: they cost more than the update on small data)."""
        cpts = list(base.cpts)
        for i in rebuilt:
            cpts[i] = self._cpt(dag, i)
        m = object.__new__(BayesNet)
        for name, val in (
            ("dag", dag),
            ("states", base.states),
            ("cpts", tuple(cpts)),
            ("fit_info", dict(base.fit_info)),
            ("_cache", {}),
        ):
            object.__setattr__(m, name, val)
        return m

    def _marginals_for(self, new: BayesNet, old: BayesNet, rebuilt, rescaled) -> ParentMarginals:
        """P(π_w) of ``new``: recomputed for the rebuilt and rescaled variables, reused otherwise."""
        if _PM_KEY in new._cache:
            return new._cache[_PM_KEY]
        pm_old = parent_marginals(old)
        if pm_old.method == "sampling":
            return parent_marginals(new)  # the sampled marginals depend on every CPT
        probs, methods = list(pm_old.probs), list(pm_old.methods)
        for w in set(rebuilt) | set(rescaled):
            ps = list(new.parents[w])
            if not ps:
                probs[w], methods[w] = np.ones(1), "root"
                continue
            m = marginal(new, ps, MAX_INTERMEDIATE)
            if m is None:
                return parent_marginals(new)
            probs[w], methods[w] = np.ascontiguousarray(m).reshape(-1), "exact"
        pm = ParentMarginals(tuple(probs), tuple(methods))
        new._cache[_PM_KEY] = pm
        return pm

    # ------------------------------------------------------------------ the update
    def _transition(self, new: BayesNet, rebuilt, rescaled) -> dict:
        """Move K from the current model to ``new`` (all checks before K is touched)."""
        t0 = time.perf_counter()
        old = self._model
        pm_o = parent_marginals(old)
        pm_n = self._marginals_for(new, old, rebuilt, rescaled)
        if pm_o.method == "sampling" or pm_n.method == "sampling":
            rescaled = sorted(
                set(rescaled) | {w for w in range(new.n_vars) if w not in rebuilt and new.parents[w]}
            )
        entries, n_rescaled, pairs = [], 0, 0
        for i in rebuilt:
            if new.cpts[i].shape[1] < 2:
                continue
            po, xo, oko = self._rows(old, i)
            pn, xn, okn = self._rows(new, i)
            check_positive(new, pm_n, i, pn[okn], xn[okn])
            entries.append(TermEntry(po, xo, oko, old.cpts[i], -safe_inverse(pm_o.probs[i])))
            entries.append(TermEntry(pn, xn, okn, new.cpts[i], safe_inverse(pm_n.probs[i])))
        for w in rescaled:
            Po, Pn = pm_o.probs[w], pm_n.probs[w]
            if new.cpts[w].shape[1] < 2 or np.array_equal(Po, Pn):
                continue
            p, x, ok = self._rows(new, w)
            check_positive(new, pm_n, w, p[ok], x[ok])
            coef = safe_inverse(Pn) - safe_inverse(Po)
            entries.append(TermEntry(p, x, ok, new.cpts[w], coef))
            n_rescaled += 1
        miss_new, miss_old = [], []
        if self.has_missing:
            with one_blas_thread():  # many small products: threads cost more than they save
                for w in range(new.n_vars):
                    if new.cpts[w].shape[1] < 2:
                        continue
                    miss_new.append(missing_part(new, pm_n, w, self.codes))
                    miss_old.append(missing_part(old, pm_o, w, self.codes))
        for e in entries:
            cnt = np.bincount(e.pc[e.pc >= 0], minlength=e.n_conf)
            pairs += int(np.dot(cnt, cnt))
        run_entries(self._K, entries)
        for ex, M in miss_old:
            add_missing_part(self._K, ex, M, -1.0)
        for ex, M in miss_new:
            add_missing_part(self._K, ex, M, 1.0)
        self._model = new
        info = {
            "rebuilt": [new.variables[i] for i in rebuilt],
            "rescaled": [
                new.variables[w] for w in rescaled if not np.array_equal(pm_o.probs[w], pm_n.probs[w])
            ],
            "pairs": pairs,
            "seconds": time.perf_counter() - t0,
        }
        self.last_update = info
        return info

    def _move(self, new_dag: DAG) -> dict:
        rebuilt, rescaled = changed_terms(self.dag, new_dag)
        new = self._model_for(new_dag, self._model, rebuilt)
        return self._transition(new, rebuilt, rescaled)

    def apply(self, op: str, u: str, v: str) -> dict:
        """Apply the arc edit ``op`` (``add``, ``remove``, ``reverse``) to u → v; a cycle, a missing or
        duplicate arc raises :class:`~bnfk_core.errors.StructureError` and changes nothing.

        Returns what was recomputed: ``rebuilt`` and ``rescaled`` variables, ``pairs`` visited, ``seconds``.

        Parameters
        ----------
        op, u, v : str

        Returns
        -------
        dict
        """
        e = ArcEdit(str(op), str(u), str(v))
        new_dag = e.apply(self.dag)
        old = self._model
        info = self._move(new_dag)
        self._undo.append((e, old))
        self._redo.clear()
        return info

    def undo(self) -> dict:
        """Revert the last edit (structure and CPTs exactly as before; K by the reverse update).

        Returns
        -------
        dict
            As :meth:`apply`; a :class:`StructureError` when there is nothing to undo.
        """
        if not self._undo:
            raise StructureError("There is no edit to undo.")
        e, prev = self._undo[-1]
        cur = self._model
        rebuilt, rescaled = changed_terms(cur.dag, prev.dag)
        info = self._transition(prev, rebuilt, rescaled)
        self._undo.pop()
        self._redo.append((e, cur))
        return info

    def redo(self) -> dict:
        """Re-apply the last undone edit (the network it gave back exactly; K by the same update).

        Returns
        -------
        dict
            As :meth:`apply`.

        Raises
        ------
        StructureError
            When there is nothing to redo.
        """
        if not self._redo:
            raise StructureError("There is no edit to redo.")
        e, nxt = self._redo[-1]
        cur = self._model
        rebuilt, rescaled = changed_terms(cur.dag, nxt.dag)
        info = self._transition(nxt, rebuilt, rescaled)
        self._redo.pop()
        self._undo.append((e, cur))
        return info

    def goto(self, dag: DAG, *, max_edits: int | None = None) -> list:
        """Move to ``dag`` (same nodes) by arc edits: reversals, then removals, then additions (each one an
        undoable step; none closes a cycle).  With ``max_edits`` and more differences than that, the Gram
        matrix is recomputed from scratch instead and the history cleared.  Returns the edits applied.

        Parameters
        ----------
        dag : DAG
        max_edits : int, optional

        Returns
        -------
        list of ArcEdit
        """
        if set(dag.nodes) != set(self.dag.nodes):
            raise StructureError("The target structure has other variables than the live kernel.")
        if tuple(dag.nodes) != tuple(self.dag.nodes):
            dag = DAG(self.dag.nodes, dag.arcs)
        cur = self.dag.arcs
        want = dag.arcs
        rev = [(u, v) for u, v in sorted(cur - want) if (v, u) in want]
        rem = [(u, v) for u, v in sorted(cur - want) if (v, u) not in want]
        add = [(u, v) for u, v in sorted(want - cur) if (v, u) not in cur]
        edits = (
            [ArcEdit("remove", u, v) for u, v in rem]
            + [ArcEdit("reverse", u, v) for u, v in rev]
            + [ArcEdit("add", u, v) for u, v in add]
        )
        if max_edits is not None and len(edits) > max_edits:
            self.reset(dag)
            return edits
        # removals first; reversals and additions in an order that never closes a cycle: the target is a
        # DAG, so after the removals every remaining step only adds arcs of the target (a reversal first
        # removes its arc) -- do reversals as remove + add to keep that invariant.
        steps = (
            [ArcEdit("remove", u, v) for u, v in rem + rev]
            + [ArcEdit("add", v, u) for u, v in rev]
            + [ArcEdit("add", u, v) for u, v in add]
        )
        for e in steps:
            self.apply(e.kind, e.u, e.v)
        return steps

    def copy(self) -> LiveKernel:
        """An independent live kernel in the same state: its own Gram matrix, caches and history, so that
        edits of one never change the other (the data, the fitted CPTs and cached row arrays, which no edit
        changes in place, are shared).  Much cheaper than building one: no fit, no N × N Gram matrix computed.

        Returns
        -------
        LiveKernel
        """
        new = object.__new__(LiveKernel)
        new.__dict__.update(self.__dict__)
        new._K = self._K.copy()
        new._cpt_cache, new._row_cache = dict(self._cpt_cache), dict(self._row_cache)
        new._ll_cache, new._block_cache, new._scorers = dict(self._ll_cache), dict(self._block_cache), {}
        new.posterior_stats, new.last_update = dict(self.posterior_stats), dict(self.last_update)
        new._undo, new._redo = list(self._undo), list(self._redo)
        return new

    def reset(self, dag: DAG) -> None:
        """Recompute everything from scratch for ``dag`` (CPTs fitted, K by
        :func:`~bnfk_core.kernels.fisher.gram`) and clear the history.

        Parameters
        ----------
        dag : DAG
            Over the kernel's variables.
        """
        model = fit(dag, self.data, method=self.params, pseudo_count=self.pseudo_count)
        self._model = model
        self._K = gram(model, self.data)
        self._undo.clear()
        self._redo.clear()

    # ------------------------------------------------------------------ candidates (no state change)
    def preview(self, op: str, u: str, v: str, out: np.ndarray | None = None) -> np.ndarray:
        """The Gram matrix after the edit, as a new matrix (or written into ``out``); the live state is
        unchanged.  Costs one N × N copy plus the changed terms.

        Parameters
        ----------
        op, u, v : str
        out : ndarray, shape (N, N), optional

        Returns
        -------
        ndarray, shape (N, N)
        """
        e = ArcEdit(str(op), str(u), str(v))
        new_dag = e.apply(self.dag)
        rebuilt, rescaled = changed_terms(self.dag, new_dag)
        new = self._model_for(new_dag, self._model, rebuilt)
        saved, model, last = self._K, self._model, self.last_update
        if out is None:
            out = saved.copy()
        else:
            np.copyto(out, saved)
        self._K = out
        try:
            self._transition(new, rebuilt, rescaled)
        finally:
            self._K, self._model, self.last_update = saved, model, last
        return out

    # ------------------------------------------------------------------ derived quantities
    def contributions(self, a: int, b: int) -> np.ndarray:
        """The per-variable terms K_w(x_a, x_b) of rows ``a`` and ``b`` (they sum to gram()[a, b]).

        Parameters
        ----------
        a, b : int

        Returns
        -------
        ndarray, shape (n_vars,)
        """
        model = self._model
        pm = parent_marginals(model)
        out = np.zeros(model.n_vars)
        rows = np.array([int(a), int(b)])
        for w in range(model.n_vars):
            p, x, ok = self._rows(model, w)
            if ok[rows].all():
                if p[a] != p[b]:
                    continue
                j = p[a]
                out[w] = (float(x[a] == x[b]) / model.cpts[w][j, x[a]] - 1.0) / pm.probs[w][j]
            else:
                F = block_matrix(model, pm, w, self.codes[rows])
                out[w] = float(F[0].multiply(F[1]).sum())
        return out

    def features(self) -> sp.csr_matrix:
        """The explicit feature map Φ of :func:`bnfk_core.kernels.features.features` (paper, Theorem
        1: K = Φ Φᵀ), blocks reused per family.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (N, sum_i q_i r_i)
        """
        model = self._model
        pm = parent_marginals(model)
        blocks = []
        for w in range(model.n_vars):
            key = (w, model.parents[w], pm.probs[w].tobytes())  # the CPT is fixed by the family
            B = self._block_cache.get(key)
            if B is None:
                B = block_matrix(model, pm, w, self.codes) if not self.has_missing else None
                if B is None:
                    break
                self._block_cache[key] = B
            blocks.append(B)
        if len(blocks) != model.n_vars:
            return features(model, self.codes)
        return sp.hstack(blocks, format="csr")

    def log_likelihood(self) -> np.ndarray:
        """log P(x) of every row under the current network (rows with missing cells:
        log P(x_observed)); the complete rows' terms cached per family.

        Returns
        -------
        ndarray of float, shape (N,)
        """
        model = self._model
        ll = np.zeros(self.N)
        with np.errstate(divide="ignore"):
            for w in range(model.n_vars):
                key = (w, model.parents[w])
                t = self._ll_cache.get(key)
                if t is None:
                    p, x, ok = self._rows(model, w)
                    t = np.zeros(self.N)
                    t[ok] = np.log(model.cpts[w][p[ok], x[ok]])
                    self._ll_cache[key] = t
                ll += t
        if self.has_missing:
            inc = np.flatnonzero((self.codes < 0).any(axis=1))
            ll[inc] = log_evidence(model, self.codes[inc])
        return ll

    def _scorer(self, score: str, ess: float = 1.0) -> LocalScorer:
        key = (score, float(ess))
        s = self._scorers.get(key)
        if s is None:
            s = LocalScorer(self.codes, self.cards, score, ess=ess)
            self._scorers[key] = s
        return s

    def local_scores(self, score: str = "bic", ess: float = 1.0) -> np.ndarray:
        """Local score of every family of the current structure (cached per family across edits).

        Parameters
        ----------
        score : str
            A score of :mod:`bnfk_core.learning.scores` (``"bic"``, ``"aic"``, ``"k2"``, ``"bdeu"``,
            ``"qnml"``).
        ess : float
            BDeu's equivalent sample size.

        Returns
        -------
        ndarray of float, shape (n_vars,)
            In node order.
        """
        sc = self._scorer(score, ess)
        return np.array([sc(i, ps) for i, ps in enumerate(self.dag.parent_indices())])

    def score(self, score: str = "bic", ess: float = 1.0) -> float:
        """Total decomposable score of the current structure (:mod:`bnfk_core.learning.scores`).

        Parameters
        ----------
        score : str
        ess : float
            As :meth:`local_scores`.

        Returns
        -------
        float
            The sum of :meth:`local_scores`.
        """
        return float(self.local_scores(score, ess).sum())

    def score_delta(self, op: str, u: str, v: str, score: str = "bic", ess: float = 1.0) -> float:
        """Score change of an edit without applying it (only the changed families are scored).

        Parameters
        ----------
        op, u, v : str
            The edit (:class:`~bnfk_core.network.edit.ArcEdit`'s kind and arc).
        score : str
        ess : float
            As :meth:`local_scores`.

        Returns
        -------
        float
            The edited structure's score minus the current one's.

        Raises
        ------
        StructureError
            When the DAG refuses the edit (a cycle, an arc that is there or is not).
        """
        new_dag = ArcEdit(str(op), str(u), str(v)).apply(self.dag)
        sc = self._scorer(score, ess)
        po, pn = self.dag.parent_indices(), new_dag.parent_indices()
        return float(sum(sc(i, pn[i]) - sc(i, po[i]) for i in range(len(po)) if po[i] != pn[i]))

    def scaled_hamming(self) -> np.ndarray:
        """The scaled-Hamming Gram matrix of the rows (thesis eq. 3.2; structure-independent:
        computed once).

        Returns
        -------
        ndarray, shape (N, N)
            Read-only.
        """
        if self._sh is None:
            self._sh = gram(None, self.data, kind=SCALED_HAMMING)
            self._sh.flags.writeable = False
        return self._sh

    def posterior(self) -> dict:
        """:func:`bnfk_core.inference.queries.posterior` of the current network.

        After an edit only the rows with a missing cell in a re-estimated family are re-inferred (one batched
        junction-tree run on them); for the others every changed CPT factor is a constant of the row and
        cancels.  ``posterior_stats``: incomplete ``rows`` and how many were ``reinferred``.

        Returns
        -------
        dict
            ``{variable: (rows, probs)}`` for the rows where that variable is missing.
        """
        model = self._model
        if self._post is not None and self._post[0] is model:
            return self._post[1]
        prev = self._post
        miss = self.codes < 0
        incomplete = np.flatnonzero(miss.any(axis=1))
        redo = incomplete
        if prev is not None and prev[0].variables == model.variables:
            old = prev[0]
            changed = set()
            for i in range(model.n_vars):
                if old.parents[i] != model.parents[i] or old.cpts[i] is not model.cpts[i]:
                    changed |= {i} | set(old.parents[i]) | set(model.parents[i])
            redo = incomplete[miss[incomplete][:, sorted(changed)].any(axis=1)] if changed else incomplete[:0]
        self.posterior_stats = {"rows": int(incomplete.size), "reinferred": int(redo.size)}
        fresh = posterior(model, self.codes[redo]) if redo.size else {}
        if redo.size == incomplete.size:
            out = {m: (redo[r], p) for m, (r, p) in fresh.items()}
        else:
            keep = np.ones(self.N, dtype=bool)
            keep[redo] = False
            parts: dict = {}
            for m, (r0, p0) in prev[1].items():
                k = keep[r0]
                parts.setdefault(m, []).append((r0[k], p0[k]))
            for m, (r, p) in fresh.items():
                parts.setdefault(m, []).append((redo[r], p))
            out = gather_posteriors(parts)
        self._post = (model, out)
        return out

    # ------------------------------------------------------------------ caching hooks
    def data_key(self) -> str:
        """A content hash of the rows (variables, states, codes), computed once.

        Returns
        -------
        str
        """
        if self._data_key is None:
            self._data_key = rows_key(self.data)
        return self._data_key

    def structure_key(self) -> tuple:
        """A hashable key of the current structure.

        Returns
        -------
        tuple of (str, str)
            The sorted arcs.
        """
        return tuple(self.dag.sorted_arcs())

    def cache_key(self) -> tuple:
        """(data, estimator, pseudo-count, structure): equal keys give equal Gram matrices.

        Returns
        -------
        tuple
        """
        return (self.data_key(), self.params, self.pseudo_count, self.structure_key())
