"""The segments gallery (thesis ch. 6): all five structure segments on the same variables against the same
base network, side by side -- what each does to the Fisher kernel (ΔK), to clustering against the label (ΔARI
of correlation and spectral clustering), to BN imputation (Δ accuracy of one seeded MCAR run, as
:func:`~bnfk_core.analyses.segments.network_checks.imputation_check`), to greedy-MMD
prototypes (Δ held-out negative log-likelihood of the network re-fitted on them, paper Fig. 1) and whether the
thesis's case table predicts the measured kernel terms.

The Gram matrices come from one :class:`bnfk_core.kernels.live.LiveKernel` moved from the base to each segment
and back: only the kernel terms a segment changes are recomputed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...errors import BnfkError
from ...kernels.fisher import FISHER
from ...kernels.live import LiveKernel
from ...network.dag import DAG, SEGMENT_KINDS, SEGMENT_LABELS, SEGMENT_SIZES, apply_segment
from ...network.model import fit
from ..cluster.clustering import cluster, clustering_metrics, default_n_clusters
from ..prototypes.selection import HeldOut, select_prototypes, split_half
from .network_checks import imputation_check
from .tables import SegmentError, case_table

__all__ = ["GalleryEntry", "Gallery", "segment_gallery", "segment_variables"]

Progress = Callable[[float, str], None]


@dataclass
class GalleryEntry:
    """One network of the gallery (the base, or the base with one segment)."""

    kind: str  # "base" or a segment kind
    dag: DAG
    K: np.ndarray  # the Fisher Gram matrix on the gallery's rows
    aris: dict | None  # {"correlation": ARI, "spectral": ARI}; None without a label
    imputation: dict  # imputation_check(): accuracy, cross_entropy, cells
    prototype_nll: float  # held-out NLL of the network re-fitted on the greedy-MMD prototypes
    theory_max_difference: float | None = None  # case table: max |theory − measured|; None if not applicable
    theory_note: str = ""


@dataclass
class Gallery:
    """The base and every segment; :meth:`table` is the one-screen comparison."""

    variables: tuple
    rows: np.ndarray
    base: GalleryEntry
    segments: list
    seconds: float
    notes: list = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        """One row per segment: arcs added, max |ΔK|, ΔARI (CC, SC), Δ imputation accuracy, Δ held-out NLL of
        the prototypes (negative: the segment's prototypes summarise the data better), case-table check.

        Returns
        -------
        pandas.DataFrame
        """
        b = self.base
        out = []
        for e in self.segments:
            out.append(
                {
                    "segment": SEGMENT_LABELS[e.kind],
                    "arcs added": ", ".join(f"{u} → {v}" for u, v in sorted(e.dag.arcs - b.dag.arcs)) or "—",
                    "max |ΔK|": float(np.abs(e.K - b.K).max()),
                    "ΔARI (CC)": None if b.aris is None else e.aris["correlation"] - b.aris["correlation"],
                    "ΔARI (SC)": None if b.aris is None else e.aris["spectral"] - b.aris["spectral"],
                    "Δ imputation accuracy": e.imputation["accuracy"] - b.imputation["accuracy"],
                    "Δ prototype NLL": e.prototype_nll - b.prototype_nll,
                    "theory − measured (max)": e.theory_max_difference,
                }
            )
        return pd.DataFrame(out)


def segment_variables(kind: str, variables: Sequence[str]) -> list[str]:
    """The first variables of ``variables`` that ``kind`` takes (the full segment takes all of them).

    Parameters
    ----------
    kind : str
    variables : sequence of str

    Returns
    -------
    list of str
    """
    need = SEGMENT_SIZES.get(kind, len(variables))
    return list(variables[:need])


def _prototype_nll(dag: DAG, train, test, k: int, seed: int) -> float:
    model = fit(dag, train, method="smoothed")
    chosen = select_prototypes(model, train, k, "mmd", n_init=20, seed=seed).indices
    return float(HeldOut(dag, test).evaluate(train.codes[np.sort(chosen)])["nll"])


def segment_gallery(
    data,
    base: DAG,
    variables: Sequence[str],
    *,
    rows=None,
    params: str = "smoothed",
    kinds: Sequence[str] = SEGMENT_KINDS,
    restarts: int = 25,
    seed: int = 0,
    missing: float = 0.2,
    k_prototypes: int = 20,
    progress: Progress | None = None,
) -> Gallery:
    """Every segment of ``kinds`` on ``variables`` (three, in role order u, v, w) added to ``base``.

    Parameters
    ----------
    data : CategoricalData with the label as its class column (optional: without one there are no ARIs).
    base : DAG over the feature variables (the empty network is the thesis's setting; the case table
        applies only there).
    variables : the segment's feature columns (:func:`segment_variables` takes each kind's share).
    kinds : the segment kinds drawn.
    rows : the data rows everything is computed on (default all): the networks are fitted on them, and
        the Gram matrices, clusterings, imputation run and prototypes use them -- so the gallery's cost is
        bounded by the sample, whatever the size of the data.
    params : CPT estimator of every network; ``restarts``, ``seed``: the clusterings (thesis protocol:
        correlation clustering without a shift, spectral on K − min K); ``missing``: the share of cells
        hidden in the imputation run; ``k_prototypes``: prototypes chosen on a seeded half, scored on the
        other.
    progress : optional ``progress(fraction, message)``.

    Returns
    -------
    Gallery
    """
    t0 = time.perf_counter()
    variables = tuple(variables)
    if len(variables) != 3 or len(set(variables)) != 3:
        raise SegmentError("The gallery needs three different variables (u, v, w).")
    feats = data.without_class() if data.class_column else data
    missing_vars = [v for v in variables if v not in feats.variables]
    if missing_vars:
        raise SegmentError(f"'{missing_vars[0]}' is not a feature variable of the data.")
    rows = np.arange(data.n_rows) if rows is None else np.asarray(rows, dtype=np.int64)
    labels = data.labels()[rows] if data.class_column else None
    feats = feats.subset(rows)
    k = default_n_clusters(data) if labels is not None else None
    train_rows, test_rows = split_half(feats.n_rows, 0.5, seed)
    train, test = feats.subset(train_rows), feats.subset(test_rows)
    k_protos = int(min(max(k_prototypes, 1), train.n_rows - 1))
    dags = [("base", base)] + [
        (kind, apply_segment(base, kind, segment_variables(kind, variables))) for kind in kinds
    ]
    lk = LiveKernel(base, feats, params)
    entries, notes = [], []
    for j, (kind, dag) in enumerate(dags):
        if progress:
            progress(j / len(dags), f"{'base network' if kind == 'base' else SEGMENT_LABELS[kind]}…")
        lk.goto(dag)
        K = lk.gram(copy=True)
        aris = None
        if labels is not None:
            aris = {
                algo: clustering_metrics(
                    labels, cluster(K, k, algo, kernel=FISHER, restarts=restarts, seed=seed).labels
                )["ari"]
                for algo in ("correlation", "spectral")
            }
        imputation = imputation_check(feats, dag, params=params, missing=missing, seed=seed)
        entry = GalleryEntry(kind, dag, K, aris, imputation, _prototype_nll(dag, train, test, k_protos, seed))
        if kind != "base":
            try:
                table = case_table(lk.model, feats, kind, segment_variables(kind, variables))
                entry.theory_max_difference = table.max_difference
            except BnfkError as exc:
                entry.theory_note = str(exc)
        entries.append(entry)
    lk.goto(base)
    if any(e.theory_note for e in entries):
        notes.append(
            "The case table applies to a segment on the empty network; with this base it is left out."
        )
    if progress:
        progress(1.0, "gallery done")
    return Gallery(variables, rows, entries[0], entries[1:], time.perf_counter() - t0, notes)
