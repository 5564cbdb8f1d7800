"""docs/notebook_example.py runs, and what it prints is what an independent computation gives."""

import runpy
import warnings
from pathlib import Path

import numpy as np
import pytest

from bnfk_core.inference import posterior

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "notebook_example.py"


def test_notebook_example_runs_and_agrees(capsys):
    pytest.importorskip("pgmpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = runpy.run_path(str(EXAMPLE))["main"]()
    printed = capsys.readouterr().out
    assert "SVM on the Fisher kernel: accuracy" in printed and "latent class" in printed
    table, net = out["table"], out["network"]
    assert table.n_rows == 435 and table.class_column == "class" and table.has_missing
    y = table.frame["class"].to_numpy()
    majority = max(np.mean(y == c) for c in set(y))
    assert out["cv_scores"].mean() > majority + 0.2
    K = out["gram"]
    np.testing.assert_allclose(K, K.T, atol=1e-9)
    assert np.linalg.eigvalsh(K).min() > -1e-6 * np.abs(K).max()  # a kernel: positive semidefinite
    # pgmpy's variable elimination on the exported network = bnfk's exact posterior of the same query
    codes = np.full((1, net.n_vars), -1, dtype=np.int32)
    for v, s in out["evidence"].items():
        i = net.variables.index(v)
        codes[0, i] = net.states[i].index(s)
    c = net.variables.index("crime")
    rows, probs = posterior(net, codes)[c]
    q = out["pgmpy_query"]
    want = [q.values[q.state_names["crime"].index(s)] for s in net.states[c]]
    np.testing.assert_allclose(probs[0], want, atol=1e-9)
    assert out["ari"] > 0.4
