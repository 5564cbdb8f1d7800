"""The command line: JSON on stdout, files written, one-line errors with exit code 2."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from bnfk_core.cli import main
from bnfk_core.data.table import load_csv
from bnfk_core.kernels.fisher import gram, mmd
from bnfk_core.network.formats import read_model

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
HVOPT = ["--missing-policy", "category", "--drop-columns", "class"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def hv_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "hv.bif"
    assert main(["learn", HV, "--method", "tree", "--quiet", "-o", str(path), *HVOPT]) == 0
    return path


def test_learn_writes_model_and_reports_json(tmp_path, capsys):
    out_path = tmp_path / "m.json"
    code, out, _ = run(
        capsys, "learn", HV, "--method", "hc", "--score", "bic", "--quiet", "-o", out_path, *HVOPT
    )
    assert code == 0
    res = json.loads(out)
    m = read_model(out_path)
    assert res["n_arcs"] == m.dag.n_arcs > 0
    assert res["parameters"] == m.parameter_count()
    assert "class" not in m.variables and len(m.variables) == 16


def test_kernel_csv_equals_library_gram_and_ignores_column_order(tmp_path, capsys, hv_model):
    import pandas as pd

    df = pd.read_csv(HV, dtype=str, keep_default_na=False)
    shuffled = tmp_path / "shuffled.csv"
    df[list(df.columns[::-1])].to_csv(shuffled, index=False)
    out = tmp_path / "K.csv"
    code, _, _ = run(capsys, "kernel", shuffled, "--model", hv_model, "-o", out, *HVOPT)
    assert code == 0
    K = np.loadtxt(out, delimiter=",")
    m = read_model(hv_model)
    ref = gram(m, load_csv(HV, missing_policy="category", drop_columns=["class"]))
    assert K.shape == (435, 435) and np.allclose(K, ref, atol=1e-12)


def test_kernel_npy_other_and_normalize(tmp_path, capsys, hv_model):
    out = tmp_path / "K.npy"
    code, _, _ = run(
        capsys, "kernel", HV, "--model", hv_model, "--other", HV, "--normalize", "-o", out, *HVOPT
    )
    assert code == 0
    K = np.load(out)
    assert np.allclose(np.diag(K), 1.0)


def test_mmd_and_features(tmp_path, capsys, hv_model):
    import pandas as pd

    df = pd.read_csv(HV, dtype=str, keep_default_na=False)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    df[df["class"] == "democrat"].to_csv(a, index=False)
    df[df["class"] == "republican"].to_csv(b, index=False)
    code, out, _ = run(capsys, "mmd", a, b, "--model", hv_model, *HVOPT)
    assert code == 0
    m = read_model(hv_model)
    da = load_csv(a, missing_policy="category", drop_columns=["class"], model=m)
    db = load_csv(b, missing_policy="category", drop_columns=["class"], model=m)
    K = gram(m, load_csv(HV, missing_policy="category", drop_columns=["class"], model=m))
    dem = (df["class"] == "democrat").to_numpy()
    eq10 = K[np.ix_(dem, dem)].mean() + K[np.ix_(~dem, ~dem)].mean() - 2 * K[np.ix_(dem, ~dem)].mean()
    assert np.isclose(json.loads(out)["mmd"], eq10) and np.isclose(mmd(m, da, db), eq10)
    phi = tmp_path / "phi.npz"
    code, out, _ = run(capsys, "features", HV, "--model", hv_model, "-o", phi, *HVOPT)
    assert code == 0
    P = sp.load_npz(phi)
    assert np.allclose((P @ P.T).toarray(), K)


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (["kernel", "missing.csv", "--kind", "hamming", "-o", "K.npy"], "missing.csv"),
        (["kernel", HV, "--model", "nomodel.bif", "-o", "K.npy"], "nomodel.bif"),
        (["kernel", HV, "--kind", "fisher", "-o", "K.npy"], "--model"),
        (["kernel", HV, "--kind", "hamming", "-o", "K.txt"], "K.txt"),
        (["learn", HV, "--method", "tan", "-o", "m.bif"], "--class-column"),
        (["learn", HV, "--method", "nope", "-o", "m.bif"], "nope"),
        (["learn", HV, "--method", "hc", "--class-column", "party", "-o", "m.bif"], "party"),
        (["learn", HV, "--method", "hc", "-o", "/no/such/dir/m.bif"], "/no/such/dir"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(capsys, argv, culprit):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error:") and err.count("\n") == 1 and culprit in err
    assert "Traceback" not in err and out == ""


def test_python_dash_m_entry_point_and_argparse_errors():
    res = subprocess.run(
        [sys.executable, "-m", "bnfk_core", "learn", HV, "--method", "nope", "-o", "m.bif"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert res.returncode == 2 and res.stderr.startswith("error:") and "nope" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_half_drawn_progress_line_ends_with_its_own_call(monkeypatch, capsys):
    """A command that leaves its progress bar short of 100 % finishes the line itself: the next call's
    ``error:`` starts at the beginning of stderr, with no stray newline from the call before."""
    import importlib

    from bnfk_core.cli import common, warmup

    cli_main = importlib.import_module("bnfk_core.cli.main")

    def half_done(args):
        common.progress_to_stderr(0.5, "halfway")
        return None

    monkeypatch.setattr(warmup, "_cmd_warmup", half_done)
    assert cli_main.main(["warmup"]) == 0
    first = capsys.readouterr().err
    assert first.startswith("\r[ 50.0%] halfway") and first.endswith("\n")
    assert cli_main.main(["learn", "no_such_file.csv"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
