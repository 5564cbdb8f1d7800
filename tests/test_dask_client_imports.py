"""A Dask client counts nothing itself: ``learn --engine dask`` imports neither numba (the compiled counting
and E-step kernels, :mod:`bnfk_core.data.compiled_counts`, :mod:`bnfk_core.learning.completions`) nor
networkx in the client's process -- the workers count, complete and score (docs/LARGE_FILES.md, the client's
share)."""

import json
import subprocess
import sys

import numpy as np
import pytest

HEAVY = ("numba", "networkx", "bnfk_core.data.compiled_counts", "bnfk_core.learning.completions")


def test_learn_on_dask_loads_no_compiled_kernel_in_the_client(tmp_path):
    pytest.importorskip("distributed")
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.3)) % 3
    c = (b + (rng.random(n) < 0.3)) % 3
    cells = np.stack([a, b, c, rng.integers(0, 2, n)], axis=1).astype(str).astype(object)
    cells[rng.random(cells.shape) < 0.1] = ""  # blank cells: structural EM's rounds run on the workers
    data = tmp_path / "t.csv"
    data.write_text("a,b,c,d\n" + "".join(",".join(r) + "\n" for r in cells))
    out = tmp_path / "m.json"
    script = (
        "import json, sys\n"
        "from bnfk_core.cli.main import main\n"
        "if __name__ == '__main__':\n"
        f"    rc = main(['learn', {str(data)!r}, '--structure', 'hc', '--engine', 'dask', '--quiet',"
        f" '-o', {str(out)!r}])\n"
        f"    print(json.dumps([rc, [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    rc, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    assert rc == 0 and heavy == []
    # and the search did run: the chain a - b - c is found (in some direction), d stays apart
    model = json.loads(out.read_text())
    edges = {frozenset((v["name"], p)) for v in model["variables"] for p in v["parents"]}
    assert {frozenset("ab"), frozenset("bc")} <= edges and not any("d" in e for e in edges)
