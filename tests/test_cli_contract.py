"""The command line's contract, checked on every subcommand of the real parser: ``-o FILE`` everywhere (the
JSON result goes to the file, stdout only names it), the class column never a node of a learned network, the
default network learned wherever a command needs one, and errors as one ``error: ...`` line with exit 2."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bnfk_core.cli.main import build_parser, main
from bnfk_core.learning.recipe import DEFAULT_RECIPE
from bnfk_core.network.formats import read_model

ROOT = Path(__file__).resolve().parents[1]
HAYES = str(ROOT / "sample_data" / "hayes_roth.csv")  # 160 rows, 4 features and the class
HV = ROOT / "sample_data" / "house_votes_84.csv"  # '?' cells: missing with --na-values '?'


def _subcommands() -> dict:
    """``{name: parser}`` of every subcommand, each registered in full."""
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _without_timings(obj):
    """``obj`` without its wall-clock fields (``seconds``, ``kernel_seconds``, ...: the only ones two runs may
    differ in)."""
    if isinstance(obj, dict):
        return {k: _without_timings(v) for k, v in obj.items() if "seconds" not in k}
    if isinstance(obj, list):
        return [_without_timings(v) for v in obj]
    return obj


def test_every_subcommand_has_dash_o():
    subs = _subcommands()
    assert len(subs) >= 20  # the parser really was walked
    missing = [name for name, p in subs.items() if not {"-o", "--output"} <= set(p._option_string_actions)]
    assert missing == []


@pytest.fixture(scope="module")
def hayes_model(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("model") / "hayes.json"
    assert main(["learn", HAYES, "--class-column", "class", "--quiet", "-o", str(path)]) == 0
    return str(path)


#: the subcommands whose result is their JSON, each on the small sample (labels: --class-column class)
JSON_COMMANDS = {
    "cluster": ["cluster", HAYES, "--label-column", "class", "--restarts", "2", "--no-labels-out"],
    "classify": ["classify", HAYES, "--label-column", "class", "--repeats", "1", "--quiet"],
    "mmd": ["mmd", HAYES, HAYES, "--class-column", "class", "--model", "{model}"],
    "impute-benchmark": [
        "impute-benchmark",
        HAYES,
        "--class-column",
        "class",
        "--methods",
        "mode,bn",
        "--repeats",
        "1",
        "--missing-ratio",
        "0.2",
        "--quiet",
    ],
    "summarize-benchmark": [
        "summarize-benchmark",
        HAYES,
        "--class-column",
        "class",
        "--k",
        "5",
        "--structure",
        "tan",
        "--random-draws",
        "5",
        "--quiet",
    ],
    "segment-table": [
        "segment-table",
        "single-arc",
        HAYES,
        "--class-column",
        "class",
        "--variables",
        "age,hobby",
    ],
    "segment-suggest": ["segment-suggest", "single-arc", HAYES, "--class-column", "class"],
    "similar": [
        "similar",
        HAYES,
        "--class-column",
        "class",
        "--model",
        "{model}",
        "--evidence",
        "age=1,hobby=2",
        "--k",
        "3",
    ],
    "kgv-test": ["kgv-test", HAYES, "hobby", "age", "--given", "class"],
    "arc-search": [
        "arc-search",
        HAYES,
        "--label-column",
        "class",
        "--arcs",
        "1",
        "--restarts",
        "2",
        "--quiet",
    ],
}


@pytest.mark.parametrize("name", sorted(JSON_COMMANDS))
def test_dash_o_writes_the_json_and_stdout_only_names_the_file(name, hayes_model, tmp_path, capsys):
    argv = [a.replace("{model}", hayes_model) for a in JSON_COMMANDS[name]]
    code, printed, err = _run(capsys, *argv)
    assert code == 0, err
    out = tmp_path / "result.json"
    code, stdout, err = _run(capsys, *argv, "-o", out)
    assert code == 0, err
    assert json.loads(stdout) == {"output": str(out)} and stdout.count("\n") == 1
    assert _without_timings(json.loads(out.read_text(encoding="utf-8"))) == _without_timings(
        json.loads(printed)
    )


def test_options_dash_o_writes_the_markdown(tmp_path, capsys):
    code, printed, _ = _run(capsys, "options")
    out = tmp_path / "OPTIONS.md"
    code, stdout, err = _run(capsys, "options", "-o", out)
    assert code == 0, err
    assert out.read_text(encoding="utf-8") == printed and json.loads(stdout) == {"output": str(out)}


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (["segment-suggest", "single-arc", HAYES, "-o", "{tmp}/s.txt"], ".json"),
        (["segment-suggest", "single-arc", HAYES, "-o", "{tmp}/no/such/folder/s.json"], "does not exist"),
        (["mmd", HAYES, "{tmp}/b.json", "--model", "{model}", "-o", "{tmp}/b.json"], "input file"),
        (["options", "-o", "{tmp}/o.json"], ".md"),
    ],
)
def test_a_bad_dash_o_is_one_error_line_before_any_work(argv, culprit, hayes_model, tmp_path, capsys):
    (tmp_path / "b.json").write_text("keep me", encoding="utf-8")
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{model}", hayes_model) for a in argv]
    code, stdout, err = _run(capsys, *argv)
    assert code == 2 and stdout == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and culprit in err, err
    assert (tmp_path / "b.json").read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]


@pytest.mark.parametrize("structure", ["hc", "tree", "tan"])
def test_learn_with_a_class_column_leaves_the_class_out(structure, tmp_path, capsys):
    model = tmp_path / "m.json"
    code, stdout, err = _run(
        capsys, "learn", HAYES, "--structure", structure, "--class-column", "class", "--quiet", "-o", model
    )
    assert code == 0, err
    learned = read_model(str(model))
    assert learned.variables == ("hobby", "age", "educational-level", "marital-status")
    assert all("class" not in arc for arc in json.loads(stdout)["arcs"])
    assert json.loads(model.read_text(encoding="utf-8"))["fit"]["class_column"] == "class"
    # the next command takes the model with the class as its labels
    code, stdout, err = _run(
        capsys,
        "cluster",
        HAYES,
        "--label-column",
        "class",
        "--kernel",
        "fisher",
        "--model",
        model,
        "--restarts",
        "2",
        "--no-labels-out",
    )
    assert code == 0, err
    assert json.loads(stdout)["rows"] == 160


@pytest.fixture(scope="module")
def votes(tmp_path_factory) -> Path:
    """The first 80 rows of house-votes-84 (its '?' cells are missing with --na-values '?')."""
    path = tmp_path_factory.mktemp("votes") / "votes80.csv"
    path.write_text("".join(HV.read_text(encoding="utf-8").splitlines(keepends=True)[:81]), encoding="utf-8")
    return path


def test_impute_without_a_network_learns_the_default_one(votes, tmp_path, capsys):
    common = ["--na-values", "?", "--class-column", "class", "--quiet"]
    code, out_default, err = _run(capsys, "impute", votes, *common, "-o", tmp_path / "a.csv")
    assert code == 0, err
    explicit = ["--structure", DEFAULT_RECIPE.structure]
    code, out_explicit, err = _run(capsys, "impute", votes, *explicit, *common, "-o", tmp_path / "b.csv")
    assert code == 0, err
    a, b = json.loads(out_default), json.loads(out_explicit)
    assert a["imputed_cells"] == votes.read_text(encoding="utf-8").count("?") > 0
    assert a["learned"]["recipe"]["structure"] == DEFAULT_RECIPE.structure
    assert _without_timings({**a, "output": None}) == _without_timings({**b, "output": None})
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    # the class column is no node of the network: the file keeps it as it was
    assert all("class" not in arc for arc in a["learned"]["arcs"])
    column = [
        line.rsplit(",", 1)[1] for line in (tmp_path / "a.csv").read_text(encoding="utf-8").splitlines()
    ]
    assert column == [line.rsplit(",", 1)[1] for line in votes.read_text(encoding="utf-8").splitlines()]
