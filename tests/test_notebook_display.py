"""In a notebook a network shows itself: the SVG of a DAG and of a BayesNet parses as XML, holds every node
and arc, escapes every name and fetches nothing; a Query shows its posteriors as escaped HTML bars."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from bnfk_core.inference.evidence import query
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import BayesNet
from bnfk_core.network.textbook import textbook_network

SVG = "{http://www.w3.org/2000/svg}"
NASTY = ['<b>&"x', "a'b", "</svg>", "plain", "x\x01y", "a very long variable name indeed"]


def _drawn(svg: str):
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg"
    nodes = [g.get("data-name") for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    arcs = {
        (p.get("data-from"), p.get("data-to")) for p in root.iter(f"{SVG}path") if p.get("class") == "arc"
    }
    return root, nodes, arcs


def test_a_dag_with_nasty_names_draws_every_node_and_arc_escaped():
    names = ['<b>&"x', "a'b", "</svg>", "plain", "a very long variable name indeed"]
    arcs = [(names[0], names[1]), (names[1], names[2]), (names[0], names[2]), (names[3], names[0])]
    dag = DAG(names, arcs)
    svg = dag._repr_svg_()
    root, nodes, drawn = _drawn(svg)
    assert nodes == names and drawn == set(arcs)
    assert "&lt;b&gt;&amp;&quot;x" in svg and '<b>&"x' not in svg
    assert "<script" not in svg and "href" not in svg.replace("url(#bnfk-arrow)", "")
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert names[-1] in titles  # a long name is cut on the node but whole in its tooltip


def test_a_name_with_a_control_character_still_gives_xml():
    dag = DAG(["x\x01y", "z"], [("x\x01y", "z")])
    _, nodes, arcs = _drawn(dag._repr_svg_())
    assert nodes == ["x\ufffdy", "z"] and arcs == {("x\ufffdy", "z")}


def test_alarm_draws_its_37_nodes_and_46_arcs_with_their_states_in_tooltips():
    model = textbook_network("alarm")
    root, nodes, arcs = _drawn(model._repr_svg_())
    assert nodes == list(model.variables) and arcs == set(model.dag.arcs)
    tips = {t.text for t in root.iter(f"{SVG}title")}
    i = model.variables.index("HR")
    assert f"HR: {', '.join(model.states[i])}" in tips
    assert len(nodes) == 37 and len(arcs) == 46


def test_an_empty_dag_is_an_svg_too():
    _, nodes, arcs = _drawn(DAG([], [])._repr_svg_())
    assert nodes == [] and arcs == set()


def test_a_query_shows_its_posteriors_as_escaped_bars():
    name = '<b>&"x'
    dag = DAG([name, "y"], [(name, "y")])
    model = BayesNet(
        dag, (("<i>", "b&c"), ("yes", "no")), (np.array([[0.3, 0.7]]), np.array([[0.9, 0.1], [0.2, 0.8]]))
    )
    q = query(model, {"y": "yes"})
    html = q._repr_html_()
    root = ET.fromstring(html)  # well-formed, names escaped
    assert '<b>&"x' not in html and "&lt;b&gt;&amp;&quot;x" in html and "&lt;i&gt;" in html
    cells = [td.text for td in root.iter("td")]
    p = 0.3 * 0.9 / (0.3 * 0.9 + 0.7 * 0.2)  # Bayes' rule by hand
    assert f"{p:.4f}" in cells and f"{1 - p:.4f}" in cells
    assert "P(evidence) = " + f"{0.3 * 0.9 + 0.7 * 0.2:.6g}" in root.find("caption").text
    bars = [d for d in root.iter("div")]
    assert len(bars) == 4  # one per state of each target
