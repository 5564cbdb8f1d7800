"""A file too big to hold is read in chunks without being asked: ``learn``, ``impute`` and
``prototypes`` decide from the file size and ``--max-memory`` before reading.  A small budget forces the
automatic path here; its result is checked against the in-memory path (and the explicit ``--chunksize``
path)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from bnfk_core.cli.main import main
from bnfk_core.data.limits import memory_limit_set
from bnfk_core.data.stream import HOLD_BYTES_PER_FILE_BYTE, chunked_note, held_bytes, too_big_to_hold

SMALL = "256K"  # below what every command needs to hold the test files whole (a few MiB by the factors)


def _write(path, n=3000, missing=0.0, seed=0):
    """Five dependent categorical columns; ``missing`` of the cells of c and e empty."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 3
    c = (2 * b + rng.integers(0, 2, n)) % 4
    d = rng.integers(0, 2, n)
    e = (c + d + (rng.random(n) < 0.2)) % 3
    cols = {"a": a, "b": b, "c": c, "d": d, "e": e}
    hide = {k: rng.random(n) < (missing if k in "ce" else 0.0) for k in cols}
    with open(path, "w") as fh:
        fh.write("a,b,c,d,e\n")
        for i in range(n):
            fh.write(",".join("" if hide[k][i] else f"s{cols[k][i]}" for k in cols) + "\n")
    return str(path)


def _run(capsys, *args) -> dict:
    capsys.readouterr()
    code = main([str(a) for a in args] + ["--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def _auto(notes) -> bool:
    return any("so it was read in chunks" in n for n in notes)


def test_the_decision_is_the_file_size_times_the_factor_against_the_budget(tmp_path):
    path = _write(tmp_path / "d.csv", n=200)
    size = os.path.getsize(path)
    for command, factor in HOLD_BYTES_PER_FILE_BYTE.items():
        assert held_bytes(path, command) == size * factor
        assert too_big_to_hold(path, command, max_bytes=size * factor - 1)
        assert not too_big_to_hold(path, command, max_bytes=size * factor)
    with memory_limit_set(None):  # no limit: never
        assert not too_big_to_hold(path, "prototypes")
    with memory_limit_set(1024):  # the run's limit (--max-memory) is the budget
        assert too_big_to_hold(path, "learn")
        assert chunked_note(path, "learn").startswith("d.csv would take about ")
    assert held_bytes(tmp_path / "absent.csv") is None and not too_big_to_hold(tmp_path / "absent.csv")


def test_learn_reads_a_file_too_big_to_hold_in_chunks_and_learns_the_same_network(tmp_path, capsys):
    path = _write(tmp_path / "d.csv")
    mem = _run(capsys, "learn", path, "--structure", "hc", "-o", tmp_path / "mem.bif")
    auto = _run(
        capsys, "learn", path, "--structure", "hc", "-o", tmp_path / "auto.bif", "--max-memory", SMALL
    )
    assert not _auto(mem["notes"]) and _auto(auto["notes"])
    assert any(n.startswith("Read in chunks: 3,000 rows") for n in auto["notes"])
    assert auto["arcs"] == mem["arcs"] and auto["score"] == pytest.approx(mem["score"], rel=1e-12)
    assert (tmp_path / "auto.bif").read_bytes() == (tmp_path / "mem.bif").read_bytes()


def test_learn_with_missing_cells_the_automatic_path_is_the_chunked_one(tmp_path, capsys):
    path = _write(tmp_path / "d.csv", missing=0.05)
    given = _run(capsys, "learn", path, "--structure", "hc", "-o", tmp_path / "given.bif", "--chunksize", 700)
    auto = _run(
        capsys, "learn", path, "--structure", "hc", "-o", tmp_path / "auto.bif", "--max-memory", SMALL
    )
    assert _auto(auto["notes"]) and auto["arcs"] == given["arcs"] and auto["score"] == given["score"]
    assert (tmp_path / "auto.bif").read_bytes() == (tmp_path / "given.bif").read_bytes()


def test_impute_a_file_too_big_to_hold_in_blocks_writes_the_in_memory_file(tmp_path, capsys):
    path = _write(tmp_path / "d.csv", missing=0.1)
    _run(capsys, "learn", path, "--structure", "hc", "-o", tmp_path / "m.bif")
    mem = _run(capsys, "impute", path, "--model", tmp_path / "m.bif", "-o", tmp_path / "mem.csv")
    auto = _run(
        capsys,
        "impute",
        path,
        "--model",
        tmp_path / "m.bif",
        "-o",
        tmp_path / "auto.csv",
        "--max-memory",
        SMALL,
    )
    assert "blocks" in auto and "blocks" not in mem and _auto(auto["notes"])
    assert auto["imputed_cells"] == mem["imputed_cells"] > 0
    assert (tmp_path / "auto.csv").read_bytes() == (tmp_path / "mem.csv").read_bytes()


def test_prototypes_of_a_file_too_big_to_hold_are_the_in_memory_ones(tmp_path, capsys):
    path = _write(tmp_path / "d.csv", n=1500)
    _run(capsys, "learn", path, "--structure", "hc", "-o", tmp_path / "m.bif")
    mem = _run(capsys, "prototypes", path, "--model", tmp_path / "m.bif", "--k", 6, "--n-init", 10)
    auto = _run(
        capsys,
        "prototypes",
        path,
        "--model",
        tmp_path / "m.bif",
        "--k",
        6,
        "--n-init",
        10,
        "--max-memory",
        SMALL,
    )
    assert "n_candidates" in auto and "n_candidates" not in mem and _auto(auto["notes"])
    assert auto["indices"] == mem["indices"]
    assert auto["mmd"] == pytest.approx(mem["mmd"], rel=1e-9, abs=1e-12)


def test_prototypes_without_a_model_stay_in_memory(tmp_path, capsys):
    """The chunked prototypes need a model: learning one (--structure) keeps the in-memory path, as before."""
    path = _write(tmp_path / "d.csv", n=400)
    out = _run(
        capsys, "prototypes", path, "--structure", "hc", "--k", 4, "--n-init", 5, "--max-memory", SMALL
    )
    assert "n_candidates" not in out and len(out["indices"]) == 4


def test_loglik_and_mmd_of_files_too_big_to_hold_are_the_in_memory_ones(tmp_path, capsys):
    path = _write(tmp_path / "d.csv", n=1500, missing=0.05)
    other = _write(tmp_path / "o.csv", n=100, missing=0.05, seed=3)
    _run(capsys, "learn", path, "--structure", "hc", "-o", tmp_path / "m.bif")
    mem = _run(capsys, "loglik", path, "--model", tmp_path / "m.bif")
    auto = _run(capsys, "loglik", path, "--model", tmp_path / "m.bif", "--max-memory", SMALL)
    assert _auto(auto["notes"]) and "notes" not in mem and auto["rows"] == mem["rows"] == 1500
    assert auto["total"] == pytest.approx(mem["total"], rel=1e-9)
    mem = _run(capsys, "mmd", path, other, "--model", tmp_path / "m.bif")
    auto = _run(capsys, "mmd", path, other, "--model", tmp_path / "m.bif", "--max-memory", SMALL)
    assert _auto(auto["notes"]) and len(auto["notes"]) == 1  # only the bigger file is too big
    assert auto["mmd"] == pytest.approx(mem["mmd"], rel=1e-9, abs=1e-12)
