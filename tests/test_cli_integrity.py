"""CLI integrity: no traceback on a failed stdout, atomic output files, every number checked
with its flag named, messages that name CLI flags rather than Python parameters, ``--max-memory``."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bnfk_core.cli import main

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
CAR = str(ROOT / "sample_data" / "car.csv")
HVC = ["--missing-policy", "category"]


def _err(capsys, argv) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ---------------------------------------------------------------------- a full or closed stdout
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "argv",
    [
        ["segment-suggest", "single-arc", CAR, "--class-column", "class", "--top", "2"],
        ["cluster", CAR, "--label-column", "class", "--kernel", "hamming", "--restarts", "1"],
        ["kernel", CAR, "--kind", "hamming", "-o", "{tmp}/K.npy"],
    ],
)
def test_result_to_a_full_stdout_is_one_error_line(tmp_path, argv):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "bnfk_core", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert proc.stderr.count("\n") == 1


# ---------------------------------------------------------------------- atomic outputs
def _failing_after_partial_write(real):
    def write(path, *args, **kwargs):
        with open(path, "wb") as fh:
            fh.write(b"partial")
        raise OSError(28, "No space left on device")

    return write


@pytest.mark.parametrize("ext, target", [(".npy", "save"), (".csv", "savetxt")])
def test_failed_write_leaves_no_partial_file(capsys, tmp_path, monkeypatch, ext, target):
    out = tmp_path / f"K{ext}"
    monkeypatch.setattr(np, target, _failing_after_partial_write(getattr(np, target)))
    err = _err(capsys, ["kernel", CAR, "--kind", "hamming", "-o", str(out)])
    assert "No space left on device" in err and str(out) in err  # the message names the target file
    assert not out.exists() and list(tmp_path.iterdir()) == []  # no partial file, no temporary left


def test_failed_write_keeps_the_old_file(capsys, tmp_path, monkeypatch):
    out = tmp_path / "K.npy"
    out.write_bytes(b"old content")
    monkeypatch.setattr(np, "save", _failing_after_partial_write(np.save))
    _err(capsys, ["kernel", CAR, "--kind", "hamming", "-o", str(out)])
    assert out.read_bytes() == b"old content"


def test_successful_write_is_complete(capsys, tmp_path):
    out = tmp_path / "K.npy"
    assert main(["kernel", CAR, "--kind", "hamming", "-o", str(out)]) == 0
    capsys.readouterr()
    assert np.load(out).shape == (1728, 1728) and [p.name for p in tmp_path.iterdir()] == ["K.npy"]


# ---------------------------------------------------------------------- numbers checked once, flag named
@pytest.mark.parametrize(
    "argv, flag",
    [
        (["learn", CAR, "--structure", "hc", "--seed", "-1", "-o", "x.bif"], "--seed"),
        (["cluster", CAR, "--label-column", "class", "--seed", "-1"], "--seed"),
        (["impute-benchmark", CAR, "--seed", "4294967296"], "--seed"),
        (["prototypes", CAR, "--structure", "hc", "--k", "5", "--seed", "-1"], "--seed"),
        (["arc-search", CAR, "--label-column", "class", "--seed", "-1"], "--seed"),
        (
            ["learn", CAR, "--structure", "kdb", "--class-column", "class", "--kdb-k", "1000", "-o", "x.bif"],
            "--kdb-k",
        ),
        (
            ["learn", CAR, "--structure", "kdb", "--class-column", "class", "--k", "1000", "-o", "x.bif"],
            "--k",
        ),
        (["prototypes", CAR, "--structure", "hc", "--k", "5", "--n-init", "0"], "--n-init"),
        (["prototypes", CAR, "--structure", "hc", "--k", "5", "--n-init", "-5"], "--n-init"),
        (["learn", CAR, "--structure", "hc", "--pseudo-count", "inf", "-o", "x.bif"], "--pseudo-count"),
        (["learn", CAR, "--structure", "hc", "--pseudo-count", "nan", "-o", "x.bif"], "--pseudo-count"),
        (["classify", CAR, "--label-column", "class", "--test-size", "1"], "--test-size"),
        (["cluster", CAR, "--label-column", "class", "--restarts", "0"], "--restarts"),
        (["kernel", CAR, "--kind", "hamming", "--max-memory", "lots", "-o", "K.npy"], "--max-memory"),
    ],
)
def test_numeric_options_are_validated_with_the_flag_named(capsys, argv, flag):
    err = _err(capsys, argv)
    assert f"argument {flag}" in err or "argument --structure" in err


def test_one_row_csv_is_an_error_not_an_internal_error(capsys, tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("a,b,c\n1,2,x\n")
    for argv in (
        ["learn", str(one), "--structure", "hc", "--quiet", "-o", str(tmp_path / "m.bif")],
        ["prototypes", str(one), "--structure", "hc", "--k", "1", "--quiet"],
    ):
        err = _err(capsys, argv)
        assert "two complete rows" in err and "internal error" not in err


def test_error_starts_its_own_line_after_a_progress_line(capsys, tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("a,b,c\n1,2,x\n")
    assert main(["learn", str(one), "--structure", "hc", "-o", str(tmp_path / "m.bif")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("\r[") and "\nerror: Hill climbing needs at least two complete rows" in err


# ---------------------------------------------------------------------- messages name CLI flags
def test_messages_name_cli_flags_not_python_parameters(capsys, tmp_path):
    path = tmp_path / "ids.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "a", "b"])
        w.writerows([f"u{i}", i % 3, i % 2] for i in range(80))
    err = _err(capsys, ["learn", str(path), "--structure", "tree", "-o", str(tmp_path / "m.bif")])
    assert "--drop-columns id" in err and "--max-levels 50" in err
    assert "drop_columns" not in err and "max_levels" not in err
    err = _err(capsys, ["learn", str(path), "--structure", "tree", "--drop-columns", "nope", "-o", "m.bif"])
    assert "--drop-columns" in err and "drop_columns" not in err


def test_max_memory_limits_every_gram_and_names_the_flag(capsys, tmp_path):
    base = ["--missing-policy", "category", "--kind", "hamming", "-o", str(tmp_path / "K.npy")]
    err = _err(capsys, ["kernel", HV, "--max-memory", "100K", *base])
    assert "435 x 435 Gram matrix" in err and "--max-memory" in err and "memory limit" not in err
    assert main(["kernel", HV, "--max-memory", "2M", *base]) == 0  # 435² × 8 B = 1.5 MB fits
    capsys.readouterr()
    err = _err(
        capsys,
        [
            "cluster",
            HV,
            *HVC,
            "--label-column",
            "class",
            "--kernel",
            "hamming",
            "--algorithm",
            "correlation",
            "--max-memory",
            "1M",
        ],
    )
    assert "Gram matrix" in err and "--max-memory" in err
    # the default algorithm (auto) clusters in feature space instead of refusing, and says so
    assert (
        main(
            [
                "cluster",
                HV,
                *HVC,
                "--label-column",
                "class",
                "--kernel",
                "hamming",
                "--max-memory",
                "1M",
                "--no-labels-out",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm_chosen"] == "kmeans-features" and "exceed" in out["algorithm_reason"]
    code = main(
        [
            "cluster",
            HV,
            *HVC,
            "--label-column",
            "class",
            "--kernel",
            "hamming",
            "--restarts",
            "1",
            "--max-memory",
            "none",
            "--no-labels-out",
        ]
    )
    assert code == 0 and json.loads(capsys.readouterr().out)["kernel"] == "hamming"


# ---------------------------------------------------------------------- an output never overwrites an input
@pytest.mark.parametrize(
    "argv",
    [
        ["impute", "{data}", "--model", "{model}", "-o", "{data}"],
        ["impute", "{data}", "--model", "{model}", "-o", "{tmp}/ok.csv", "--probabilities", "{tmp}/./d.csv"],
        ["impute", "{data}", "--model", "{model}", "-o", "{data}", "--chunksize", "50"],
        ["kernel", "{data}", "--model", "{model}", "-o", "{data}"],
        ["prototypes", "{data}", "--model", "{model}", "--k", "3", "-o", "{data}"],
        ["loglik", "{data}", "--model", "{model}", "-o", "{data}"],
    ],
)
def test_an_output_naming_an_input_file_is_refused_and_the_input_kept(tmp_path, capsys, argv):
    data, model = tmp_path / "d.csv", tmp_path / "m.json"
    data.write_bytes(Path(HV).read_bytes())
    assert main(["learn", str(data), "--structure", "tree", "--quiet", "-o", str(model)]) == 0
    capsys.readouterr()
    argv = [
        a.replace("{data}", str(data)).replace("{model}", str(model)).replace("{tmp}", str(tmp_path))
        for a in argv
    ]
    err = _err(capsys, argv)
    assert "input file" in err and "d.csv" in err
    assert data.read_bytes() == Path(HV).read_bytes()
    assert not (tmp_path / "ok.csv").exists()


def test_impute_file_refuses_to_write_over_its_input(tmp_path):
    from bnfk_core.analyses.impute.core import ImputeError
    from bnfk_core.analyses.impute.stream import impute_file
    from bnfk_core.network.formats import read_model

    data, model = tmp_path / "d.csv", tmp_path / "m.json"
    data.write_bytes(Path(HV).read_bytes())
    assert main(["learn", str(data), "--structure", "tree", "--quiet", "-o", str(model)]) == 0
    with pytest.raises(ImputeError, match="input file"):
        impute_file(read_model(str(model)), str(data), str(tmp_path / "." / "d.csv"))
    assert data.read_bytes() == Path(HV).read_bytes()
