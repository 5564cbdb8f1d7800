"""bnfk_core.analyses.segments.gallery: every segment's entry equals an independent from-scratch
computation."""

import numpy as np
import pytest

from bnfk_core.analyses.prototypes.selection import HeldOut, select_prototypes, split_half
from bnfk_core.analyses.segments import gallery as G
from bnfk_core.analyses.segments.network_checks import clustering_aris, imputation_check
from bnfk_core.analyses.segments.tables import SegmentError
from bnfk_core.data.table import load_csv
from bnfk_core.kernels import fisher as kernels
from bnfk_core.network.dag import DAG, SEGMENT_KINDS, apply_segment
from bnfk_core.network.model import fit

VARS = ("physician-fee-freeze", "aid-to-nicaraguan-contras", "el-salvador-aid")


@pytest.fixture(scope="module")
def hv():
    from conftest import _sample

    d = load_csv(_sample("house_votes_84"), class_column="class", missing_policy="category")
    return d.subset(np.arange(160))


def test_gallery_entries_equal_from_scratch_computations(hv):
    rows = np.arange(0, 160, 2)
    feats = hv.without_class().subset(rows)  # the gallery works on the sampled rows only
    g = G.segment_gallery(hv, DAG(feats.variables), VARS, rows=rows, restarts=3, seed=2, k_prototypes=8)
    assert [e.kind for e in g.segments] == list(SEGMENT_KINDS)
    train_rows, test_rows = split_half(feats.n_rows, 0.5, 2)
    train, test = feats.subset(train_rows), feats.subset(test_rows)
    for e in [g.base] + g.segments:
        dag = (
            DAG(feats.variables)
            if e.kind == "base"
            else apply_segment(DAG(feats.variables), e.kind, G.segment_variables(e.kind, VARS))
        )
        assert e.dag == dag
        K = kernels.gram(fit(dag, feats, method="smoothed"), feats)
        assert np.max(np.abs(e.K - K)) <= 1e-9 * max(1.0, np.abs(K).max())
        assert e.aris == pytest.approx(
            clustering_aris(K, hv.labels()[rows], 2, restarts=3, seed=2), abs=1e-12
        )
        assert e.imputation == imputation_check(feats, dag, params="smoothed", missing=0.2, seed=2)
        chosen = select_prototypes(
            fit(dag, train, method="smoothed"), train, 8, "mmd", n_init=20, seed=2
        ).indices
        nll = HeldOut(dag, test).evaluate(train.codes[np.sort(chosen)])["nll"]
        assert e.prototype_nll == pytest.approx(nll, rel=1e-12)
        if e.kind != "base":
            assert e.theory_max_difference is not None and e.theory_max_difference < 1e-9
    t = g.table()
    assert list(t["segment"]) == [
        "Single arc",
        "V-structure",
        "A-structure (common parent)",
        "Chain",
        "Fully connected",
    ]
    for (_, r), e in zip(t.iterrows(), g.segments):
        assert r["ΔARI (CC)"] == pytest.approx(e.aris["correlation"] - g.base.aris["correlation"])
        assert r["max |ΔK|"] == pytest.approx(np.abs(e.K - g.base.K).max())


def test_gallery_on_a_non_empty_base_leaves_the_case_table_out_and_refuses_bad_variables(hv):
    feats = hv.without_class()
    base = DAG(feats.variables, [("crime", VARS[0])])
    g = G.segment_gallery(
        hv, base, VARS, rows=np.arange(60), restarts=2, kinds=("single-arc",), k_prototypes=5
    )
    assert g.segments[0].theory_max_difference is None and g.segments[0].theory_note and g.notes
    with pytest.raises(SegmentError, match="three different variables"):
        G.segment_gallery(hv, base, VARS[:2])
    with pytest.raises(SegmentError, match="'class' is not a feature variable"):
        G.segment_gallery(hv, base, (VARS[0], VARS[1], "class"))
