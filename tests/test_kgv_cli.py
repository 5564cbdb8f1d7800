"""Faces of the KGV score: ``learn --score kgv`` (numbers searched raw, CPTs on the bins, the JSON
says which) and ``kgv-mi`` (JSON and -o CSV equal to the core's matrix)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bnfk_core.cli import main
from bnfk_core.data.table import load_csv
from bnfk_core.learning.kgv import kgv_mutual_information
from bnfk_core.network.formats import read_model


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.strip() else out), err


@pytest.fixture
def mixed_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    grp = rng.choice(["a", "b", "c"], n)
    dose = np.round(rng.normal(size=n) + (grp == "b") * 2.0, 3)
    resp = np.round(np.sin(dose) + 0.3 * rng.normal(size=n), 3)
    path = tmp_path / "mixed.csv"
    pd.DataFrame({"grp": grp, "dose": dose, "resp": resp}).to_csv(path, index=False)
    return path


def test_learn_kgv_searches_numbers_raw_and_fits_cpts_on_bins(tmp_path, capsys, mixed_csv):
    out_path = tmp_path / "m.json"
    code, out, _ = run(
        capsys,
        "learn",
        mixed_csv,
        "--structure",
        "hc",
        "--score",
        "kgv",
        "--numbers",
        "bin",
        "--quiet",
        "-o",
        out_path,
    )
    assert code == 0
    assert out["searched_raw"] == ["dose", "resp"] and len(out["bins"]["dose"]) == 4
    assert {tuple(a) for a in out["arcs"]} & {("grp", "dose"), ("dose", "grp")}
    model = read_model(out_path)
    assert len(model.states[list(model.variables).index("dose")]) == 4  # the CPT is over the bins
    code, binned, _ = run(
        capsys,
        "learn",
        mixed_csv,
        "--structure",
        "exact",
        "--score",
        "kgv",
        "--kgv-bin-numbers",
        "--kappa",
        "0.05",
        "--sigma",
        "2",
        "--kgv-kernel",
        "linear",
        "--quiet",
        "-o",
        out_path,
    )
    assert code == 0 and binned["searched_raw"] == [] and binned["bins"] == {}


def test_kgv_mi_json_and_csv_equal_the_core(tmp_path, capsys, mixed_csv):
    core = kgv_mutual_information(load_csv(mixed_csv), kernel="linear", kappa=0.01)
    code, out, _ = run(capsys, "kgv-mi", mixed_csv, "--kernel", "linear", "--kappa", "0.01")
    assert code == 0 and out["variables"] == ["grp", "dose", "resp"] and out["kernel"] == "linear"
    assert np.allclose(out["matrix"], core["matrix"], atol=1e-12)
    m_path = tmp_path / "M.csv"
    code, out, _ = run(capsys, "kgv-mi", mixed_csv, "-o", m_path)
    assert code == 0 and out["output"] == str(m_path) and "matrix" not in out
    table = pd.read_csv(m_path, index_col=0)
    assert list(table.columns) == ["grp", "dose", "resp"]
    gauss = kgv_mutual_information(load_csv(mixed_csv))["matrix"]
    assert np.allclose(table.to_numpy(), gauss, atol=1e-9) and np.allclose(gauss, gauss.T)
    assert gauss[0, 1] > 0.1 and np.all(np.diag(gauss) == 0)


def test_kgv_errors_are_one_line(tmp_path, capsys, mixed_csv):
    code, _, err = run(capsys, "kgv-mi", mixed_csv, "-o", tmp_path / "M.npy")
    assert code == 2 and err.startswith("error:") and ".csv" in err
    code, _, err = run(capsys, "kgv-mi", mixed_csv, "--sigma", "-1")
    assert code == 2 and err.startswith("error:") and "Traceback" not in err
