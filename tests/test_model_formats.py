"""Model files with their CPTs in every format (BIF, XMLBIF, Hugin NET, XDSL, bnfk JSON), checked against
pgmpy: files pgmpy writes give pgmpy's posteriors, files we write are read by pgmpy's readers with every CPT
entry, names of any kind survive, every malformed file is one sentence naming it, and the command line reads
and writes every format."""

from __future__ import annotations

import functools
import io
import json
import logging
import re

import numpy as np
import pytest

from bnfk_core.cli.main import main
from bnfk_core.errors import ModelError
from bnfk_core.inference.evidence import query
from bnfk_core.network.bif import bif_token
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import (
    MODEL_FORMATS,
    format_of,
    model_from_text,
    model_to_text,
    read_model,
    sniff_format,
    write_model,
)
from bnfk_core.network.model import BayesNet
from bnfk_core.network.textbook import textbook_network as _textbook

FORMATS = ["xmlbif", "net", "xdsl"]
textbook_network = functools.cache(_textbook)  # each network read once (pgmpy parses its BIF file)
EXT = {"bif": ".bif", "xmlbif": ".xmlbif", "net": ".net", "xdsl": ".xdsl", "json": ".json"}


@pytest.fixture(autouse=True)
def _quiet_pgmpy():
    """pgmpy logs a warning for every state name its writers change; the tests judge the files instead."""
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def _pgmpy(fmt):
    from pgmpy.readwrite import NETReader, NETWriter, XDSLReader, XDSLWriter, XMLBIFReader, XMLBIFWriter

    return {
        "xmlbif": (XMLBIFWriter, XMLBIFReader),
        "net": (NETWriter, NETReader),
        "xdsl": (XDSLWriter, XDSLReader),
    }[fmt]


def _entries(net) -> dict:
    """Every CPT entry of a pgmpy network keyed by names: {(child, state, ((parent, state), ...)): p}."""
    out = {}
    for cpd in net.get_cpds():
        v, ps = cpd.variable, cpd.variables[1:]
        vals = cpd.get_values()  # (r, q), the first evidence variable slowest
        cfgs = list(np.ndindex(*[len(cpd.state_names[p]) for p in ps])) if ps else [()]
        for j, cfg in enumerate(cfgs):
            key = tuple(sorted((p, cpd.state_names[p][c]) for p, c in zip(ps, cfg)))
            for k, s in enumerate(cpd.state_names[v]):
                out[(v, s, key)] = float(vals[k, j])
    return out


def _random_evidence(model, rng, k=3):
    """k observed variables at the states of a row drawn from the model (so P(evidence) > 0)."""
    row = model.sample(1, seed=int(rng.integers(1 << 30))).codes[0]
    picked = rng.choice(model.n_vars, size=k, replace=False)
    return {model.variables[i]: model.states[i][row[i]] for i in picked}


#: networks pgmpy's writers keep (its XMLBIF writer turns child's states "<7.5" and ">=7.5" both into "_7_5"),
#: few enough to stay fast (its NET writer takes a second on asia, its NET reader a second on alarm)
PGMPY_WRITES = [
    ("asia", "xmlbif"),
    ("alarm", "xmlbif"),
    ("asia", "net"),
    ("child", "xdsl"),
    ("alarm", "xdsl"),
]


@pytest.mark.parametrize("name, fmt", PGMPY_WRITES)
def test_a_network_pgmpy_writes_gives_pgmpys_posteriors(name, fmt, tmp_path):
    from pgmpy.inference import VariableElimination

    writer, reader = _pgmpy(fmt)
    path = tmp_path / f"{name}{EXT[fmt]}"
    writer(textbook_network(name).to_pgmpy()).write(str(path))
    ours = read_model(path)
    theirs = reader(path=str(path)).get_model()
    assert set(ours.variables) == set(theirs.nodes())
    assert ours.dag.arcs == {(str(u), str(v)) for u, v in theirs.edges()}
    ve = VariableElimination(theirs)
    rng = np.random.default_rng(7)
    for _ in range(2):
        ev = _random_evidence(ours, rng)
        targets = [
            str(t) for t in rng.choice([v for v in ours.variables if v not in ev], size=4, replace=False)
        ]
        got = query(ours, ev, targets)
        for t in targets:
            f = ve.query([t], evidence=ev, show_progress=False)
            want = dict(zip(f.state_names[t], f.values))
            assert got.posterior[t].keys() == want.keys()
            for s, p in want.items():
                assert abs(got.posterior[t][s] - p) <= 1e-9, (name, fmt, t, s)
        joint = ve.query(list(ev), joint=True, show_progress=False)
        assert abs(got.log_evidence - np.log(joint.get_value(**ev))) <= 1e-9


ODD = ["col A", "x,y", 'say "q"', '<b>&"x', "p(q)", "1st", "🐍 α", "a;b", "node x", "potential", "_x20_", "é"]


def _odd_model(seed=0) -> BayesNet:
    """Variables and states with spaces, commas, quotes, markup, leading digits and non-ASCII, random CPTs."""
    rng = np.random.default_rng(seed)
    names = ["a b", "x,y", '<b>&"x', "1st", "🐍 α", "data"]
    arcs = [("a b", '<b>&"x'), ("x,y", '<b>&"x'), ('<b>&"x', "1st"), ("1st", "🐍 α"), ("a b", "🐍 α")]
    dag = DAG(names, arcs)
    states = tuple(tuple(ODD[(i + k) % len(ODD)] for k in range(2 + i % 3)) for i in range(len(names)))
    cards = [len(s) for s in states]
    cpts = []
    for i in range(len(names)):
        q = int(np.prod([cards[p] for p in dag.parent_indices()[i]])) if dag.parent_indices()[i] else 1
        t = rng.dirichlet(np.ones(cards[i]), size=q)
        t[0, 0], t[0, 1:] = 0.0, 1.0 / (cards[i] - 1)  # a zero entry survives too
        cpts.append(t)
    return BayesNet(dag, states, tuple(cpts))


@pytest.mark.parametrize("fmt", FORMATS)
def test_our_files_read_by_pgmpy_keep_every_cpt_entry(fmt, tmp_path):
    _, reader = _pgmpy(fmt)
    for model in (_odd_model(), textbook_network("alarm")):
        path = tmp_path / f"m{EXT[fmt]}"
        write_model(model, path)
        theirs = _entries(reader(path=str(path)).get_model())
        token = {v: bif_token(v) for v in model.variables}
        want = {}
        for i, v in enumerate(model.variables):
            ps = model.parents[i]
            cfgs = list(np.ndindex(*[len(model.states[p]) for p in ps])) if ps else [()]
            for j, cfg in enumerate(cfgs):
                key = tuple(
                    sorted(
                        (token[model.variables[p]], bif_token(model.states[p][c])) for p, c in zip(ps, cfg)
                    )
                )
                for k, s in enumerate(model.states[i]):
                    want[(token[v], bif_token(s), key)] = float(model.cpts[i][j, k])
        assert theirs.keys() == want.keys()
        assert max(abs(theirs[key] - p) for key, p in want.items()) <= 1e-12


@pytest.mark.parametrize("fmt", list(MODEL_FORMATS))
def test_every_format_reads_back_names_states_and_cpts_exactly(fmt, tmp_path):
    model = _odd_model(1)
    path = tmp_path / f"odd{EXT[fmt]}"
    write_model(model, path)
    back = read_model(path)
    order = (
        list(model.variables)
        if fmt != "xdsl"
        else [model.variables[i] for i in model.dag.topological_order()]
    )
    assert list(back.variables) == order  # XDSL lists parents first, as GeNIe needs
    assert back.dag.arcs == model.dag.arcs
    for i, v in enumerate(model.variables):
        j = back.variables.index(v)
        assert back.states[j] == model.states[i]
    same = BayesNet.from_pgmpy(back.to_pgmpy(), nodes=list(model.variables))
    assert all(np.array_equal(a, b) for a, b in zip(same.cpts, model.cpts))
    assert format_of(str(path)) == fmt and sniff_format(path.read_text(encoding="utf-8")) == fmt
    # a buffer without a name is read by its content
    again = read_model(io.BytesIO(path.read_bytes()))
    assert again.variables == back.variables and again.states == back.states


def test_plain_names_are_written_plain_and_the_extension_is_checked(tmp_path):
    model = textbook_network("asia")
    for fmt in FORMATS:
        text = model_to_text(model, fmt)
        assert "bnfk_name" not in text and "bnfk_states" not in text
        assert all(v in text for v in model.variables)
    with pytest.raises(
        ModelError, match=r"Cannot write a model to '.*m\.txt': use a file name ending in \.bif"
    ):
        write_model(model, tmp_path / "m.txt")
    write_model(model, tmp_path / "m.xml")  # .xml is XMLBIF
    assert sniff_format((tmp_path / "m.xml").read_text(encoding="utf-8")) == "xmlbif"
    # the content decides over a misleading extension
    (tmp_path / "really_net.bif").write_text(model_to_text(model, "net"), encoding="utf-8")
    assert read_model(tmp_path / "really_net.bif").states == model.states


HUGIN = """% a file as Hugin writes it: comments, a net block with attributes, labels with spaces
net
{
    node_size = (80 40);
    name = "Two coins";
}
node coin
{
    label = "a node with a label";
    position = (100 100);
    states = ("heads up" "tails");
}
discrete node bell
{
    states = ("ring" "silent");
}
potential (coin)
{
    data = ( 0.5 0.5 );
}
potential (bell | coin)
{
    data = (( 0.9 0.1 )   % heads up
            ( 0.2 0.8 ));
}
"""


def test_a_hugin_file_with_labels_comments_and_quoted_states_reads():
    m = model_from_text(HUGIN, "two.net")
    assert m.variables == ("coin", "bell") and m.states == (("heads up", "tails"), ("ring", "silent"))
    assert np.array_equal(m.cpts[1], [[0.9, 0.1], [0.2, 0.8]])


XDSL_DET = """<?xml version="1.0" encoding="ISO-8859-1"?>
<smile version="1.0" id="Net" numsamples="1000" discsamples="10000">
 <nodes>
  <cpt id="a"><state id="x"/><state id="y"/><probabilities>0.3 0.7</probabilities></cpt>
  <deterministic id="b"><state id="on"/><state id="off"/><parents>a</parents>
   <resultingstates>off on</resultingstates></deterministic>
 </nodes>
</smile>
"""


def test_an_xdsl_deterministic_node_is_a_zero_one_table():
    m = model_from_text(XDSL_DET, "det.xdsl")
    assert np.array_equal(m.cpts[1], [[0.0, 1.0], [1.0, 0.0]])


BAD = {
    "xmlbif-cycle": (
        "xmlbif",
        "<BIF><NETWORK><NAME>n</NAME>"
        "<VARIABLE><NAME>a</NAME><OUTCOME>0</OUTCOME><OUTCOME>1</OUTCOME></VARIABLE>"
        "<VARIABLE><NAME>b</NAME><OUTCOME>0</OUTCOME><OUTCOME>1</OUTCOME></VARIABLE>"
        "<DEFINITION><FOR>a</FOR><GIVEN>b</GIVEN><TABLE>.5 .5 .5 .5</TABLE></DEFINITION>"
        "<DEFINITION><FOR>b</FOR><GIVEN>a</GIVEN><TABLE>.5 .5 .5 .5</TABLE></DEFINITION>"
        "</NETWORK></BIF>",
        "cycle",
    ),
    "xmlbif-unknown-parent": (
        "xmlbif",
        "<BIF><NETWORK><VARIABLE><NAME>a</NAME><OUTCOME>0</OUTCOME></VARIABLE>"
        "<DEFINITION><FOR>a</FOR><GIVEN>zz</GIVEN><TABLE>1</TABLE></DEFINITION></NETWORK></BIF>",
        "unknown parent 'zz'",
    ),
    "xmlbif-not-xml": ("xmlbif", "<BIF><NETWORK><VARIABLE></BIF>", "not a well-formed XMLBIF"),
    "xmlbif-not-a-number": (
        "xmlbif",
        "<BIF><NETWORK><VARIABLE><NAME>a</NAME><OUTCOME>0</OUTCOME><OUTCOME>1</OUTCOME></VARIABLE>"
        "<DEFINITION><FOR>a</FOR><TABLE>0.5 half</TABLE></DEFINITION></NETWORK></BIF>",
        "not a number",
    ),
    "xmlbif-decision": (
        "xmlbif",
        '<BIF><NETWORK><VARIABLE TYPE="decision"><NAME>d</NAME><OUTCOME>0</OUTCOME></VARIABLE>'
        "</NETWORK></BIF>",
        "'d' is a decision node",
    ),
    "xdsl-noisymax": (
        "xdsl",
        '<smile id="n"><nodes><noisymax id="m"><state id="a"/></noisymax></nodes></smile>',
        "'m' is a noisymax node",
    ),
    "xdsl-not-a-distribution": (
        "xdsl",
        '<smile id="n"><nodes><cpt id="a"><state id="x"/><state id="y"/>'
        "<probabilities>0.5 0.6</probabilities></cpt></nodes></smile>",
        "not probability distributions",
    ),
    "net-wrong-size": (
        "net",
        'net { } node a { states = ("x" "y"); } potential (a) { data = (0.2 0.3 0.5); }',
        "has 3 values, expected 2",
    ),
    "net-decision": ("net", 'net { } decision node d { states = ("x"); }', "'d' is a decision node"),
    "net-no-table": ("net", 'net { } node a { states = ("x" "y"); }', "'a' has no probability table"),
    "net-unclosed": ("net", 'net { } node a { states = ("x" "y");', "the end of the file"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_malformed_file_is_one_sentence_naming_it(case, tmp_path):
    fmt, text, culprit = BAD[case]
    path = tmp_path / f"bad{EXT[fmt]}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelError) as err:
        read_model(path)
    msg = str(err.value)
    assert str(path) in msg and culprit in msg and "\n" not in msg, msg


@pytest.mark.parametrize("fmt", list(MODEL_FORMATS))
def test_fuzzed_files_read_or_fail_in_one_sentence(fmt):
    """Cut, spliced and garbled copies of a written file: each is a model or a ModelError naming the file."""
    good = model_to_text(textbook_network("asia"), fmt)
    rng = np.random.default_rng(11)
    junk = [
        '"',
        "<",
        ">",
        "{",
        "}",
        "(",
        ")",
        ";",
        "|",
        "=",
        "-1",
        "nan",
        "1e999",
        "&",
        "]]>",
        "%",
        "\x00",
        " ",
    ]
    for k in range(40):
        a, b = sorted(int(x) for x in rng.integers(0, len(good), size=2))
        text = [
            good[:a],
            good[:a] + good[b:],
            good[:a] + junk[k % len(junk)] + good[a:],
            good[b:] + good[:a],
        ][k % 4]
        try:
            model = model_from_text(text, "fuzzed.file", fmt)
        except ModelError as exc:
            assert "fuzzed.file" in str(exc) and "\n" not in str(exc), (k, str(exc))
        else:
            assert isinstance(model, BayesNet)


def test_read_model_keeps_its_path_checks(tmp_path):
    with pytest.raises(ModelError, match="'.*nope.xdsl' does not exist"):
        read_model(tmp_path / "nope.xdsl")
    (tmp_path / "dir.net").mkdir()
    with pytest.raises(ModelError, match="Model file '.*dir.net'"):
        read_model(tmp_path / "dir.net")
    (tmp_path / "x.net").write_text("hello", encoding="utf-8")
    with pytest.raises(ModelError, match=r"x\.net"):
        read_model(tmp_path / "x.net")


def test_the_command_line_learns_into_and_queries_every_format(tmp_path, capsys):
    data = tmp_path / "asia.csv"
    assert main(["sample", "asia", "-n", "400", "--seed", "5", "-o", str(data)]) == 0
    capsys.readouterr()
    answers = {}
    for fmt, ext in EXT.items():
        out = tmp_path / f"learned{ext}"
        assert main(["learn", str(data), "--structure", "tree", "--quiet", "-o", str(out)]) == 0
        assert json.loads(capsys.readouterr().out)["format"] == fmt
        assert main(["query", str(out), "--evidence", "smoke=yes", "--target", "lung"]) == 0
        answers[fmt] = json.loads(capsys.readouterr().out)["posterior"]
        assert main(["dsep", str(out), "asia", "smoke"]) == 0
        assert "separated" in json.loads(capsys.readouterr().out)
        assert main(["sample", str(out), "-n", "5", "--seed", "1"]) == 0
        assert capsys.readouterr().out.count("\n") == 6
        assert main(["loglik", str(data), "--model", str(out)]) == 0  # an analysis's --model
        answers[fmt + " loglik"] = json.loads(capsys.readouterr().out)["total"]
    assert all(answers[f] == answers["bif"] for f in EXT)
    assert all(answers[f + " loglik"] == answers["bif loglik"] for f in EXT)
    assert main(["learn", str(data), "--structure", "tree", "--quiet", "-o", str(tmp_path / "m.txt")]) == 2
    assert re.search(r"\.xmlbif.*\.xdsl", capsys.readouterr().err)
