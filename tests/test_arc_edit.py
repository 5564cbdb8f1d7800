"""ArcEdit (bnfk_core.network.edit): one arc edit applied to a DAG, undone by its inverse, refused in one
sentence."""

from __future__ import annotations

import pytest

from bnfk_core.errors import StructureError
from bnfk_core.network import ARC_EDITS, DAG, ArcEdit

CHAIN = DAG(("A", "B", "C"), [("A", "B"), ("B", "C")])


@pytest.mark.parametrize(
    "edit, arcs",
    [
        (ArcEdit("add", "A", "C"), {("A", "B"), ("B", "C"), ("A", "C")}),
        (ArcEdit("remove", "A", "B"), {("B", "C")}),
        (ArcEdit("reverse", "B", "C"), {("A", "B"), ("C", "B")}),
    ],
    ids=lambda e: e.kind if isinstance(e, ArcEdit) else "",
)
def test_apply_gives_the_edited_arcs_and_leaves_the_dag(edit, arcs):
    new = edit.apply(CHAIN)
    assert set(new.arcs) == arcs and new.nodes == CHAIN.nodes
    assert set(CHAIN.arcs) == {("A", "B"), ("B", "C")}


@pytest.mark.parametrize(
    "edit",
    [ArcEdit("add", "A", "C"), ArcEdit("remove", "A", "B"), ArcEdit("reverse", "A", "B")],
    ids=lambda e: e.kind,
)
def test_inverse_undoes_the_edit(edit):
    assert edit.inverse().apply(edit.apply(CHAIN)) == CHAIN
    assert edit.inverse().inverse() == edit


def test_inverse_of_each_kind():
    assert ArcEdit("add", "A", "C").inverse() == ArcEdit("remove", "A", "C")
    assert ArcEdit("remove", "A", "B").inverse() == ArcEdit("add", "A", "B")
    assert ArcEdit("reverse", "A", "B").inverse() == ArcEdit("reverse", "B", "A")


def test_a_cycle_is_refused_in_one_sentence():
    with pytest.raises(StructureError) as err:
        ArcEdit("add", "C", "A").apply(CHAIN)
    msg = str(err.value)
    assert "cycle" in msg and "A" in msg and "C" in msg
    assert msg.endswith(".") and msg.count(". ") == 0 and "\n" not in msg
    with pytest.raises(StructureError, match="cycle"):
        ArcEdit("reverse", "A", "C").apply(DAG(("A", "B", "C"), [("A", "B"), ("B", "C"), ("A", "C")]))


def test_unknown_kind_and_missing_arc_are_refused():
    with pytest.raises(StructureError, match="Unknown arc edit 'flip'; choose one of add, remove, reverse."):
        ArcEdit("flip", "A", "B")
    with pytest.raises(StructureError, match="not in the DAG"):
        ArcEdit("remove", "A", "C").apply(CHAIN)
    with pytest.raises(StructureError, match="already in the DAG"):
        ArcEdit("add", "B", "A").apply(CHAIN)


def test_arc_after_and_describe():
    assert ARC_EDITS == ("add", "remove", "reverse")
    assert ArcEdit("add", "A", "C").arc_after() == ("A", "C")
    assert ArcEdit("reverse", "A", "B").arc_after() == ("B", "A")
    assert ArcEdit("remove", "A", "B").arc_after() is None
    assert ArcEdit("reverse", "A", "B").describe() == "reversed A → B"


def test_the_live_kernel_edit_is_the_arc_edit():
    from bnfk_core.kernels.live_terms import OPS, Edit

    assert Edit is ArcEdit and OPS == ARC_EDITS
