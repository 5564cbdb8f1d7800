"""The Fisher feature map's own memory budget (nothing unbounded on hostile input): every row of the
map holds one entry per state of every column, so a 20,000-level column gives each row 20,000 entries.  The
map is refused before any entry is computed when it would exceed its budget (``--max-feature-memory``,
default 4 GiB or the operator's ``BNFK_MAX_MEMORY_GIB``), naming the column and the size, while
``--max-memory`` stays the N x N work's; and it is built a bounded block of rows at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from bnfk_core.data.limits import feature_limit, feature_limit_set, memory_limit_set, operator_ceiling_bytes
from bnfk_core.data.table import from_codes
from bnfk_core.errors import KernelError
from bnfk_core.kernels import features as F
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit

ROOT = Path(__file__).resolve().parents[1]


def _wide(n_rows: int, levels: int, name: str = "many"):
    codes = np.stack([np.arange(n_rows) % levels, np.arange(n_rows) % 2], axis=1)
    data = from_codes(codes, [name, "b"], [[f"v{i}" for i in range(levels)], ["x", "y"]])
    return fit(DAG([name, "b"], [(name, "b")]), data), data, codes


def _brute_phi(model, codes):
    """Theorem 1's features of complete rows, one row and one variable at a time (dense)."""
    off = F.feature_offsets(model)
    from bnfk_core.inference.queries import parent_marginals

    pm = parent_marginals(model)
    out = np.zeros((codes.shape[0], int(off[-1])))
    for b, row in enumerate(codes):
        for i in range(model.n_vars):
            j = int(model.parent_config(i, row[None, :])[0])
            theta = model.cpts[i][j]
            r = len(theta)
            for k in range(r):
                out[b, off[i] + j * r + k] = (float(row[i] == k) - theta[k]) / np.sqrt(
                    theta[k] * pm.probs[i][j]
                )
    return out


def test_row_entries_count_what_the_map_stores():
    """Complete rows store exactly r_i entries in block i; a row whose parent is missing stores r_i per
    parent state (the expected features), never more than counted."""
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, size=(40, 3))
    data = from_codes(codes, ["a", "b", "c"], [["0", "1", "2"]] * 3)
    model = fit(DAG(["a", "b", "c"], [("a", "b"), ("b", "c")]), data, method="smoothed")
    holes = codes.copy()
    holes[:10, 0] = -1  # b's parent missing: 3 configurations x 3 states in block b
    holes[10:15, 2] = -1
    stored, temporary = F.row_entries(model, holes)
    Phi = F.features(model, holes).tocsc()
    off = F.feature_offsets(model)
    for i in range(model.n_vars):
        per_row = np.diff(Phi[:, off[i] : off[i + 1]].tocsr().indptr)
        assert (per_row <= stored[i]).all()
        complete = (holes[:, i] >= 0) & ((holes[:, list(model.parents[i])] >= 0).all(axis=1))
        assert (per_row[complete] == 3).all() and (stored[i][complete] == 3).all()
    assert (stored[1][:10] == 9).all() and (stored[0][:10] == 3).all()
    assert (temporary[15:] == 9).all()


def test_blocks_cut_by_width_give_the_same_map(monkeypatch):
    """Cutting the map into blocks of a few rows (wide rows) gives the same matrix as Theorem 1 row by row."""
    model, data, codes = _wide(60, 25)
    whole = F.features(model, data).toarray()
    assert np.allclose(whole, _brute_phi(model, codes), atol=1e-12)
    monkeypatch.setattr(F, "FEATURE_BLOCK_ENTRIES", 100)  # 27 entries a row: 3 rows a block
    assert len(F._block_starts(F.row_entries(model, codes)[1], 10**6)) == 21
    assert np.array_equal(F.features(model, data).toarray(), whole)
    blocks = list(F.iter_features(model, data))
    assert [a for a, _ in blocks] == list(range(0, 60, 3))
    assert np.array_equal(np.vstack([P.toarray() for _, P in blocks]), whole)


def test_the_feature_budget_is_its_own_and_names_the_widest_column():
    """Refused over its own limit naming the column, its states and the size; a tiny ``--max-memory`` (the
    N x N work) does not touch it; the default is 4 GiB or the operator's ceiling."""
    model, data, _ = _wide(3000, 2000, name="Wide ![i](http://x/i.png)")
    need = F.feature_bytes(model, data)
    assert need == 3000 * 2002 * F.FEATURE_ENTRY_BYTES + F.FEATURE_BLOCK_ENTRIES * F.FEATURE_TEMP_BYTES
    with feature_limit_set(need - 1), pytest.raises(KernelError) as err:
        F.features(model, data)
    msg = str(err.value)
    assert "'Wide ![i](http://x/i.png)' (2,000 states)" in msg and "3,000 rows" in msg
    assert "feature-map memory limit" in msg and msg.count(".") >= 1
    with memory_limit_set(1024), feature_limit_set(need):  # --max-memory 1K: the map is built
        assert F.features(model, data).nnz == 3000 * 2002
    with pytest.raises(KernelError, match="2,000 states"):
        F.features(model, data, max_bytes=need // 2)
    assert F.features(model, data, max_bytes=None).shape == (3000, 2000 + 4000)
    assert feature_limit() == min(4 * 2**30, operator_ceiling_bytes())
    assert operator_ceiling_bytes({"BNFK_MAX_MEMORY_GIB": "0.5"}) == 0.5 * 2**30
    assert operator_ceiling_bytes({"BNFK_MAX_MEMORY_GIB": "lots"}) == operator_ceiling_bytes({})
    with pytest.raises(KernelError, match="positive"):
        with feature_limit_set(float("nan")):
            pass


_PROBE = textwrap.dedent(
    """
    import json, resource, sys, time
    import numpy as np
    from bnfk_core.data.table import from_codes
    from bnfk_core.errors import KernelError
    from bnfk_core.network.dag import DAG
    from bnfk_core.network.model import fit
    n, levels, face = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    codes = np.stack([np.arange(n) % levels, np.arange(n) % 2], axis=1)
    data = from_codes(codes, ["many", "b"], [[f"v{i}" for i in range(levels)], ["x", "y"]])
    model = fit(DAG(["many", "b"], [("many", "b")]), data)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    try:
        if face == "estimator":
            import pandas as pd
            from bnfk_core.estimators import FisherKernel
            frame = pd.DataFrame({"many": [f"v{c}" for c in codes[:, 0]],
                                  "b": list(np.array(["x", "y"])[codes[:, 1]])})
            est = FisherKernel(structure="tree", max_levels=100000).fit(frame.iloc[:levels + 10])
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            t0 = time.perf_counter()
            est.transform(frame)
        else:
            from bnfk_core.kernels.features import features
            features(model, data)
        out = {"refused": False}
    except KernelError as exc:
        out = {"refused": True, "message": str(exc)}
    out["seconds"] = time.perf_counter() - t0
    out["before_kb"] = before
    out["after_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out))
    """
)


def _probe(n, levels, face="library", env=None):
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, str(n), str(levels), face],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_20000_level_column_on_20000_rows_is_refused_before_any_work_in_a_bounded_process():
    """20,000 rows x a 20,000-level column (23 GB before, killed): refused under the default budget in one
    sentence, quickly, with the process's peak memory grown by under 100 MB."""
    out = _probe(20_000, 20_000)
    assert out["refused"], out
    assert "'many' (20,000 states)" in out["message"] and "20,000 rows" in out["message"]
    assert out["seconds"] < 5 and (out["after_kb"] - out["before_kb"]) < 100_000, out


def test_the_operator_ceiling_lowers_the_feature_budget_for_the_estimator():
    """The scikit-learn face: ``FisherKernel.transform`` on 6,000 rows x a 5,000-level column (1.1 GiB) is
    refused under ``BNFK_MAX_MEMORY_GIB=0.5`` in a bounded process."""
    out = _probe(6000, 5000, face="estimator", env={"BNFK_MAX_MEMORY_GIB": "0.5"})
    assert out["refused"] and "'many' (5,000 states)" in out["message"], out
    assert (out["after_kb"] - out["before_kb"]) < 100_000, out


def test_cli_features_obeys_its_own_budget_not_max_memory(tmp_path, capsys):
    """The CLI: ``--max-memory 50M`` (the N x N work) still builds the map; ``--max-feature-memory 100M``
    refuses it naming the column and the flag; the map built equals Theorem 1's features."""
    import scipy.sparse as sp

    from bnfk_core.cli import main

    csv = tmp_path / "many.csv"
    csv.write_text("many,b\n" + "".join(f"v{i % 300},{'xy'[i % 2]}\n" for i in range(900)))
    model_path = tmp_path / "m.json"
    assert main(["learn", str(csv), "--max-levels", "1000", "-o", str(model_path), "--quiet"]) == 0
    capsys.readouterr()
    base = [
        "features",
        str(csv),
        "--model",
        str(model_path),
        "--max-levels",
        "1000",
        "-o",
        str(tmp_path / "p.npz"),
    ]
    assert main([*base, "--max-memory", "50K"]) == 0
    capsys.readouterr()
    Phi = sp.load_npz(tmp_path / "p.npz")
    assert Phi.nnz == 900 * 302
    code = main([*base, "--max-feature-memory", "1M"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: The Fisher feature map of 900 rows")
    assert "'many' (300 states)" in err and "raise --max-feature-memory" in err and len(err.splitlines()) == 1
    assert main([*base, "--max-feature-memory", "-3"]) == 2
    assert "--max-feature-memory" in capsys.readouterr().err
