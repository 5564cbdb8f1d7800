"""One CPT as a table (cpt_frame) and edited (with_cpt): labels from pgmpy's own CPDs, rows renormalised, zero
entries allowed and listed, bad rows refused naming the node and the parent configuration, and the edited
network's posteriors equal pgmpy's variable elimination on the same edit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bnfk_core.errors import ModelError
from bnfk_core.inference.evidence import query
from bnfk_core.network.cpt import NO_PARENTS, cpt_frame, frame_to_cpt, parent_labels, with_cpt, zero_entries
from bnfk_core.network.formats import model_from_text, model_to_text
from bnfk_core.network.model import BayesNet


@pytest.fixture(scope="module")
def asia():
    """pgmpy's asia (its CPTs sum to one exactly) and ours from it."""
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = get_example_model("asia")
    return net, BayesNet.from_pgmpy(net)


def test_the_frame_holds_pgmpys_entries_under_readable_labels(asia):
    net, model = asia
    for v in model.variables:
        frame = cpt_frame(model, v)
        cpd = net.get_cpds(v)
        ps = [model.variables[p] for p in model.parents[model.variables.index(v)]]
        assert list(frame.columns) == list(model.states[model.variables.index(v)])
        if not ps:
            assert list(frame.index) == [NO_PARENTS]
        else:
            assert list(frame.index.names) == ps
        for label, row in frame.iterrows():
            cfg = dict(zip(ps, label if isinstance(label, tuple) else (label,))) if ps else {}
            for s, p in row.items():
                assert p == pytest.approx(cpd.get_value(**{v: s}, **cfg), abs=1e-15)
    i = model.variables.index("either")
    ps = [model.variables[p] for p in model.parents[i]]
    st = {w: model.states[model.variables.index(w)] for w in ps}
    want = [f"{ps[0]}={a}, {ps[1]}={b}" for a in st[ps[0]] for b in st[ps[1]]]  # the first parent slowest
    assert sorted(ps) == ["lung", "tub"] and parent_labels(model, "either") == want
    assert (
        frame_to_cpt(model, "either", cpt_frame(model, "either")).tolist()
        == model.cpts[model.variables.index("either")].tolist()
    )


def test_a_reordered_frame_reads_back_to_the_same_table(asia):
    _, model = asia
    frame = cpt_frame(model, "dysp")
    shuffled = frame.iloc[::-1, ::-1]
    assert np.array_equal(frame_to_cpt(model, "dysp", shuffled), model.cpts[model.variables.index("dysp")])


def test_an_edit_is_renormalised_keeps_zeros_and_matches_pgmpy(asia):
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.inference import VariableElimination

    net, model = asia
    i = model.variables.index("dysp")
    frame = cpt_frame(model, "dysp")
    frame.iloc[0] = [3.0, 0.0]  # unnormalised, with a zero
    frame.iloc[2] = [1.0, 3.0]
    edited = model.with_cpt("dysp", frame)
    assert edited is not model and np.array_equal(model.cpts[i], asia[1].cpts[i])  # the original unchanged
    t = edited.cpts[i]
    assert t[0].tolist() == [1.0, 0.0] and t[2].tolist() == [0.25, 0.75]
    assert np.array_equal(t[[1, 3]], model.cpts[i][[1, 3]])
    assert edited.fit_info["edited"] == ["dysp"]
    labels = parent_labels(model, "dysp")
    assert zero_entries(edited, "dysp") == [("dysp", labels[0], model.states[i][1])]
    assert ("dysp", labels[0], model.states[i][1]) in zero_entries(edited)
    # pgmpy, given the same edited table as its own CPD, gives the same posteriors
    ps = [model.variables[p] for p in model.parents[i]]
    cpd = TabularCPD(
        "dysp",
        2,
        t.T,
        evidence=ps,
        evidence_card=[len(model.states[model.variables.index(p)]) for p in ps],
        state_names={w: list(model.states[model.variables.index(w)]) for w in ["dysp", *ps]},
    )
    other = net.copy()
    other.remove_cpds(other.get_cpds("dysp"))
    other.add_cpds(cpd)
    ve = VariableElimination(other)
    ev = {"asia": "yes", "xray": "yes"}
    got = query(edited, ev, ["dysp", "bronc", "lung"]).posterior
    for v in ["dysp", "bronc", "lung"]:
        f = ve.query([v], evidence=ev, show_progress=False)
        for s, p in zip(f.state_names[v], f.values):
            assert abs(got[v][s] - p) <= 1e-12
    # the zero survives every file format
    for fmt in ["bif", "xmlbif", "net", "xdsl", "json"]:
        back = model_from_text(model_to_text(edited, fmt), f"edited.{fmt}")
        assert zero_entries(back) == zero_entries(edited)


@pytest.mark.parametrize(
    "row, problem",
    [
        ([-0.1, 1.1], "a negative entry"),
        ([np.nan, 1.0], "an entry that is not a finite number"),
        ([0.0, 0.0], "only zeros"),
    ],
)
def test_a_bad_row_is_refused_naming_the_node_and_its_parent_configuration(asia, row, problem):
    _, model = asia
    frame = cpt_frame(model, "either")
    frame.iloc[1] = row
    with pytest.raises(ModelError) as err:
        with_cpt(model, "either", frame)
    label = parent_labels(model, "either")[1]
    assert str(err.value) == f"The edited CPT of 'either' has {problem} in row {label}."


def test_a_table_of_the_wrong_shape_or_an_unknown_node_is_one_sentence(asia):
    _, model = asia
    with pytest.raises(ModelError, match=r"'either' has shape \(2, 2\), expected \(4, 2\)"):
        with_cpt(model, "either", [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ModelError, match="'nope' is no variable of the model"):
        cpt_frame(model, "nope")
    with pytest.raises(ModelError, match="not a number"):
        with_cpt(model, "asia", [["a", "b"]])
    root = with_cpt(model, "asia", [[1, 1]])
    assert root.cpts[model.variables.index("asia")].tolist() == [[0.5, 0.5]]
