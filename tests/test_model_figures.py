"""The Model page's figures: the network with its observed variables and active trails, and the posterior
panels (every variable, prior behind, names escaped), for any number of variables."""

import pytest

from bnfk_core.views.figures import SEGMENT_COLOR
from bnfk_core.views.figures import evidence as figs


@pytest.mark.parametrize("n", [1, 2, 3, 7, 17, 40])
def test_posterior_grid_has_one_panel_per_variable(n):
    names = [f"variable number {i} with a long name" for i in range(n)]
    states = [("a", "b", "c")] * n
    post = {v: {"a": 0.2, "b": 0.3, "c": 0.5} for v in names}
    fig = figs.posterior_grid(names, states, post, post, [names[0]])
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 2 * n
    assert len(fig.layout.annotations) == n
    assert all(len(a.text) <= figs.TITLE_CHARS for a in fig.layout.annotations)
    assert fig.layout.annotations[0].text.endswith("(obs.)")
    given = [t for t in bars if t.name == "given the evidence"]
    assert given[0].marker.color == figs.OBSERVED_COLOR
    assert all(t.marker.color == figs.POSTERIOR_COLOR for t in given[1:])
    assert [list(t.x) for t in given] == [[0.2, 0.3, 0.5]] * n


def test_model_graph_draws_trails_and_observed_variables_as_text():
    nodes = ["a", "<b>v</b>", "w", "z"]
    arcs = [("a", "<b>v</b>"), ("w", "<b>v</b>"), ("w", "z")]
    fig = figs.model_graph(
        nodes, arcs, observed={"<b>v</b>": "[x](http://e.org)"}, trails=[["a", "<b>v</b>", "w"]]
    )
    assert "arcs" not in [t.name for t in fig.data]  # no arc dots: a click picks a variable
    orange = [a for a in fig.layout.annotations if a.showarrow and a.arrowcolor == SEGMENT_COLOR]
    assert len(orange) == 2  # a -> v and w -> v, not w -> z
    boxes = [a for a in fig.layout.annotations if not a.showarrow]
    observed = [a for a in boxes if a.bordercolor == figs.OBSERVED_COLOR]
    assert len(observed) == 1 and "<b>" not in observed[0].text and "&lt;b&gt;" in observed[0].text
    assert any(a.text.startswith("= ") and "[x]" in a.text for a in boxes)
    assert {"active trail", "observed"} <= {t.name for t in fig.data}
