""" "Nothing lost, nothing hidden": every name the data loader accepts survives a model file.

Models are written as BIF (names as safe tokens, originals in ``bnfk_name``/``bnfk_states``
properties) and as bnfk JSON; ``read_model(write_model(m))`` must give back the same variables,
states (same order), DAG and CPTs, bit for bit.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hst

from bnfk_core.data.table import MISSING_TOKENS, from_codes, load_csv
from bnfk_core.errors import ModelError
from bnfk_core.network.bif import bif_name, bif_token, model_to_bif
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import read_model, write_model
from bnfk_core.network.model import BayesNet, fit

# Names from the issue: each broke `learn -o x.bif` followed by kernel/impute/mmd/features.
NASTY = [
    "col A",
    "x,y",
    'say "q"',
    "a{b}",
    "p(q)",
    "u|v",
    "a;b",
    "🐍 α",
    "1st",
    "42",
    "a = b",
    "#tag",
    "a//b",
    "/*c*/",
    "a  b",
    "a\u00a0b",
    "a\tb",
    "a\nb",
    "\u200b",
    "_x20_",
    "_x",
    "x_",
    "_",
    "__",
    "variable",
    "Table",
    "property",
    "probability",
    "NA",
    "?",
    "[0.1, 2.3)",
    "é",
    "E",
    "-1",
    "1e5",
]

# What load_csv accepts (bnfk_core/data/table.py, _parse and _levels): a column name is a trimmed header
# field -- non-empty, unique, any character but "\r" (line ends become "\n" before parsing; a
# quoted name may hold "\n", delimiters and quotes); a state is a trimmed value that is not one of
# the missing tokens.  Files are decoded from UTF-8, so there are no lone surrogates.
_CHARS = hst.characters(exclude_categories=("Cs",), exclude_characters="\r")
# ... and in a file, NUL bytes or more than a couple of other control characters mark it as
# binary, so the CSV round trip keeps to printable characters, tab and newline.
_CSV_CHARS = hst.characters(exclude_categories=("Cs", "Cc"), include_characters="\t\n")


def _trimmed(chars):
    return hst.text(chars, min_size=1, max_size=10).filter(lambda s: s == s.strip())


NAMES = hst.sampled_from(NASTY) | _trimmed(_CHARS)
STATES = (hst.sampled_from(NASTY) | _trimmed(_CHARS)).filter(lambda s: s not in MISSING_TOKENS)
CSV_NAMES = hst.sampled_from([n for n in NASTY if "\u00a0" not in n]) | _trimmed(_CSV_CHARS)
CSV_STATES = CSV_NAMES.filter(lambda s: s not in MISSING_TOKENS)


def _spec(names, states, n_vars):
    """(variables, state lists) with unique names and unique states per variable."""
    return hst.tuples(
        hst.lists(names, min_size=n_vars, max_size=n_vars, unique=True),
        hst.lists(hst.lists(states, min_size=1, max_size=3, unique=True), min_size=n_vars, max_size=n_vars),
    )


SPECS = hst.integers(2, 4).flatmap(lambda n: _spec(NAMES, STATES, n))
CSV_SPECS = hst.integers(2, 3).flatmap(lambda n: _spec(CSV_NAMES, CSV_STATES, n))


def _codes(states, n_rows=24, seed=0):
    """Every state of every variable appears; the rest is random."""
    rng = np.random.default_rng(seed)
    cols = []
    for k, st in enumerate(states):
        col = np.concatenate([np.arange(len(st)), rng.integers(0, len(st), n_rows - len(st))])
        cols.append(rng.permutation(col))
    return np.stack(cols, axis=1).astype(np.int32)


def _arcs(variables):
    """v0 -> v1, and v2 -> v1 when there is a v2 (two parents: the parent order matters)."""
    arcs = [(variables[0], variables[1])]
    if len(variables) > 2:
        arcs.append((variables[2], variables[1]))
    return arcs


def assert_same_model(a: BayesNet, b: BayesNet):
    assert b.variables == a.variables
    assert b.states == a.states
    assert b.dag == a.dag
    for i, v in enumerate(a.variables):
        assert b.cpts[i].shape == a.cpts[i].shape, v
        assert np.array_equal(b.cpts[i], a.cpts[i]), v  # exact: floats are written with repr


def _round_trips(model: BayesNet, folder: Path):
    for ext in (".bif", ".json"):
        path = folder / f"model{ext}"
        write_model(model, path)
        back = read_model(path)
        assert_same_model(model, back)
        yield ext, path, back


# ====================================================================== the token encoding
@given(hst.text())
@example("")
@example("_x_")
@example(" x41_")
@example("a_ b")
@example("🐍 α")
def test_bif_token_is_a_plain_identifier_and_inverts(name):
    token = bif_token(name)
    assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token)
    assert token.lower() not in {
        "network",
        "variable",
        "probability",
        "property",
        "type",
        "discrete",
        "table",
        "default",
    }
    assert bif_name(token) == name  # hence collision-free


def test_bif_token_examples():
    assert bif_token("stalk_root") == "stalk_root" and bif_token("TRUE") == "TRUE"
    assert bif_token("col A") == "col_x20_A"
    assert bif_token('say "q"') == "say_x2022_q_x22_"
    assert bif_token("🐍 α") == "_xF09F908D20CEB1_"
    assert bif_token("1st") == "_x31_st" and bif_token("10") == "_x31_0"
    assert bif_token("table") == "_x74_able"
    assert bif_token("_x20_") == "_x5F_x20_"  # a literal escape look-alike is escaped itself
    assert bif_token("") == "_x_"
    assert len({bif_token(n) for n in NASTY}) == len(NASTY)


def test_plain_model_has_no_bnfk_properties():
    d = from_codes(
        _codes([("a", "b"), ("TRUE", "FALSE")]), ["smoker", "lung_cancer"], [("a", "b"), ("TRUE", "FALSE")]
    )
    text = model_to_bif(fit(DAG(["smoker", "lung_cancer"], [("smoker", "lung_cancer")]), d))
    assert "property" not in text and "variable smoker {" in text


# ====================================================================== round trips
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SPECS, hst.integers(0, 2**16))
def test_any_accepted_names_round_trip_through_bif_and_json(spec, seed):
    variables, states = spec
    data = from_codes(_codes(states, seed=seed), variables, states)
    model = fit(DAG(variables, _arcs(variables)), data)
    with tempfile.TemporaryDirectory() as tmp:
        for ext, path, back in _round_trips(model, Path(tmp)):
            if ext == ".bif":
                text = path.read_text(encoding="utf-8")
                assert text.isascii()
                for v in variables:
                    assert re.search(rf"^variable {bif_token(v)} {{$", text, re.M)
            assert np.array_equal(back.align(data).codes, data.codes)


def test_issue_names_round_trip(tmp_path):
    states = [
        ("1", "2"),
        ("a b", "a  b"),
        ("{", "}"),
        ("(", ")"),
        ("|", ","),
        (";", "="),
        ("🐍", "_x"),
        ("x_", "_"),
        ("variable", "table"),
        ("[0.1, 2.3)", "[2.3, 4]"),
    ]
    names = NASTY[: len(states)]
    data = from_codes(_codes(states, seed=3), names, states)
    model = fit(DAG(names, [(names[0], names[1]), (names[2], names[1]), (names[1], names[5])]), data)
    for _ in _round_trips(model, tmp_path):
        pass
    snippet = model_to_bif(model)
    assert "variable col_x20_A {" in snippet and 'property bnfk_name = "col%20A" ;' in snippet
    assert "probability ( x_x2C_y | col_x20_A, say_x2022_q_x22_ ) {" in snippet


def test_pgmpy_reads_the_escaped_tokens():
    warnings.simplefilter("ignore")
    from pgmpy.readwrite import BIFReader

    states = [("1", "2"), ("a b", "a,b"), ("{", "}"), ("(", ")"), ("variable", "x")]
    names = ["col A", "x,y", 'say "q"', "1st", "🐍 α"]
    data = from_codes(_codes(states, seed=4), names, states)
    model = fit(DAG(names, [(names[0], names[1]), (names[2], names[1]), (names[3], names[4])]), data)
    net = BIFReader(string=model_to_bif(model)).get_model()
    tokens = [bif_token(v) for v in names]
    other = BayesNet.from_pgmpy(net, nodes=tokens)
    assert other.states == tuple(tuple(bif_token(s) for s in st) for st in states)
    assert other.dag == DAG(tokens, [(bif_token(u), bif_token(v)) for u, v in model.dag.arcs])
    assert all(np.array_equal(a, b) for a, b in zip(other.cpts, model.cpts))


def _write_csv(path: Path, variables, states, codes):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(variables)
        for row in codes:
            w.writerow([states[j][c] for j, c in enumerate(row)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CSV_SPECS, hst.integers(0, 2**16))
@example((["col A", 'say "q"', "a{b}"], [["x,y", "p(q)"], ["u|v", "a;b", "🐍 α"], ["1st", "a\nb"]]), 0)
@example((["a\nb;c", "d\te"], [["x;y", "z"], ["1", "01"]]), 1)
def test_csv_names_survive_learn_write_read_and_align(spec, seed):
    """load_csv -> fit -> BIF/JSON -> read_model -> align/load with the model (what kernel and impute do)."""
    variables, states = spec
    codes = _codes(states, seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "data.csv"
        _write_csv(csv_path, variables, states, codes)
        data = load_csv(csv_path)
        assert data.variables == tuple(variables)
        assert [set(s) for s in data.states] == [set(s) for s in states]
        model = fit(DAG(data.variables, _arcs(data.variables)), data)
        for _, path, back in _round_trips(model, Path(tmp)):
            again = load_csv(csv_path, model=back)
            assert again.variables == data.variables and np.array_equal(again.codes, data.codes)
            shuffled = data.select(list(reversed(data.variables)))
            assert np.array_equal(back.align(shuffled).codes, data.codes)


# ====================================================================== other readers' files
def test_foreign_bif_tokens_are_names_as_before():
    """No bnfk properties: the tokens are the names, even when they look like escapes."""
    text = """network other { }
variable my_x41_var { type discrete [ 2 ] { _x31_, low }; }
variable b { type discrete [ 2 ] { yes, no }; property color = "red" ; }
probability ( my_x41_var ) { table 0.25, 0.75; }
probability ( b | my_x41_var ) { ( _x31_ ) 0.5, 0.5; ( low ) 0.1, 0.9; }
"""
    m = read_model(io.StringIO(text))
    assert m.variables == ("my_x41_var", "b") and m.states == (("_x31_", "low"), ("yes", "no"))
    assert np.array_equal(m.cpts[1], [[0.5, 0.5], [0.1, 0.9]])


def test_bif_written_by_an_older_bnfk_still_reads():
    """Older files: raw variable names, ad-hoc state tokens, originals in bnfk_states."""
    orig = ["[0.1, 2.3)", "[2.3, 5]"]
    quoted = __import__("urllib.parse").parse.quote(json.dumps(orig), safe="")
    text = f"""network bnfk {{
}}
variable v {{
  type discrete [ 2 ] {{ 0.1_2.3, 2.3_5 }};
  property bnfk_states = "{quoted}" ;
}}
probability ( v ) {{
  table 0.5, 0.5 ;
}}
"""
    assert read_model(io.StringIO(text)).states == (tuple(orig),)


# ====================================================================== errors name the file
def _bif(path: Path, body: str) -> Path:
    path.write_text("network n { }\n" + body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "body,match",
    [
        (
            "variable a { type discrete [ 2 ] { x, y }; }\nprobability ( a ) { table 0.5, 0.6; }\n",
            "not probability distributions",
        ),
        (
            "variable a { type discrete [ 2 ] { x, y }; }\nvariable a { type discrete [ 2 ] { x, y }; }\n"
            "probability ( a ) { table 0.5, 0.5; }\n",
            "declares variable 'a' twice",
        ),
        (
            'variable a { type discrete [ 1 ] { x }; property bnfk_name = "b" ; }\n'
            "variable b { type discrete [ 1 ] { x }; }\n"
            "probability ( a ) { table 1.0; }\nprobability ( b ) { table 1.0; }\n",
            "'b' appears twice",
        ),
        (
            "variable a { type discrete [ 1 ] { x }; }\nvariable b { type discrete [ 1 ] { x }; }\n"
            "probability ( a | b ) { ( x ) 1.0; }\nprobability ( b | a ) { ( x ) 1.0; }\n",
            "directed cycle",
        ),
        (
            'variable a { type discrete [ 2 ] { x, y }; property bnfk_states = "%5B1%5D" ; }\n'
            "probability ( a ) { table 0.5, 0.5; }\n",
            "bnfk_states property of variable 'a'",
        ),
    ],
)
def test_bif_errors_name_the_model_file(tmp_path, body, match):
    path = _bif(tmp_path / "broken model.bif", body)
    with pytest.raises(ModelError, match=match) as info:
        read_model(path)
    assert str(path) in str(info.value)
    with pytest.raises(ModelError, match=match) as info:
        read_model(io.BytesIO(path.read_bytes()), source="upload.bif")
    assert "upload.bif" in str(info.value)


@pytest.mark.parametrize(
    "variables,match",
    [
        (
            [{"name": "a", "states": ["x", "y"], "parents": [], "cpt": [[0.5, 0.6]]}],
            "not probability distributions",
        ),
        (
            [
                {"name": "a", "states": ["x"], "parents": ["b"], "cpt": [[1.0]]},
                {"name": "b", "states": ["x"], "parents": ["a"], "cpt": [[1.0]]},
            ],
            "directed cycle",
        ),
        ([{"name": "a", "states": ["x", "y"], "parents": [], "cpt": [[1.0]]}], "has shape"),
    ],
)
def test_json_errors_name_the_model_file(tmp_path, variables, match):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"format": "bnfk-model", "version": 1, "variables": variables}))
    with pytest.raises(ModelError, match=match) as info:
        read_model(path)
    assert str(path) in str(info.value)


def test_directory_is_not_a_model_file(tmp_path):
    with pytest.raises(ModelError, match="cannot be read as a regular file") as info:
        read_model(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_states_that_collide_as_text_are_refused_naming_the_variable(tmp_path):
    """Two states with one text (pgmpy's 1 and '1', a BIF listing a state twice) are one sentence naming the
    variable, before any CPT is used; in a table they are one category (cells are text, trimmed)."""
    import pandas as pd
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    from bnfk_core.cli import main
    from bnfk_core.data.table import CategoricalData
    from bnfk_core.errors import ModelError
    from bnfk_core.network import from_pgmpy

    net = DiscreteBayesianNetwork()
    net.add_node("smoke")
    net.add_cpds(TabularCPD("smoke", 2, [[0.3], [0.7]], state_names={"smoke": [1, "1"]}))
    with pytest.raises(ModelError, match="Variable 'smoke' has two states that read '1'"):
        from_pgmpy(net)
    bif = tmp_path / "dup.bif"
    bif.write_text(
        "network x {}\nvariable a { type discrete [ 2 ] { s, s }; }\nprobability ( a ) { table 0.5, 0.5; }\n"
    )
    assert main(["query", str(bif)]) == 2
    d = CategoricalData.from_frame(pd.DataFrame({"a": ["x", "x ", 1, "1"], "b": ["p", "q", "p", "q"]}))
    assert d.states[0] == ("1", "x") or sorted(d.states[0]) == ["1", "x"]
    assert (d.codes[:2, 0] == d.codes[0, 0]).all() and d.codes[2, 0] == d.codes[3, 0]
