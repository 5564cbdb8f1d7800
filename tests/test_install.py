"""``pip install`` of the project (not editable), the way a user installs a clone.

The wheel is built from a copy of the sources (so the checkout gets no ``build/`` or ``*.egg-info``),
installed without dependencies into a fresh virtual environment, and every module of ``bnfk_core`` is imported
from that environment by a Python started outside the checkout.  The fresh environment reaches the already
installed dependencies (numpy, pgmpy, ...) through a ``.pth`` line naming this interpreter's site-packages: a
``.pth`` line only adds a folder, so nothing else installed there (an editable install of the checkout, say)
is activated, and the test asserts that ``bnfk_core`` itself comes from the fresh environment.

It also checks the wheel's metadata: every third-party module that ``bnfk_core`` imports at module level is
provided by a distribution listed in ``Requires-Dist`` (not only in an extra), and the ``bnfk`` command runs.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv folder, its python, the wheel) after installing the freshly built wheel into a new venv."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "sample_data", src / "sample_data")
    shutil.copytree(
        ROOT / "bnfk_core", src / "bnfk_core", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    dist = tmp / "dist"
    build = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, src], cwd=tmp)
    if (
        build.returncode != 0
        and "No matching distribution found for setuptools" in build.stdout + build.stderr
    ):
        pytest.skip("the build backend (setuptools) cannot be fetched here: no package index")
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = sorted(dist.glob("bnfk-*.whl"))
    assert len(wheels) == 1, wheels

    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False, symlinks=os.name != "nt")
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp
    ).stdout.strip()
    outer = [p for p in site.getsitepackages() if Path(p).is_dir()]
    Path(purelib, "outer_site_packages.pth").write_text("\n".join(outer) + "\n")
    inst = _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheels[0]], cwd=tmp)
    assert inst.returncode == 0, inst.stdout + inst.stderr
    return env_dir, python, wheels[0], tmp


IMPORT_ALL = r"""
import importlib, json, pkgutil, sys
import bnfk_core
names = ["bnfk_core"] + [m.name for m in pkgutil.walk_packages(bnfk_core.__path__, "bnfk_core.")]
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except Exception as exc:   # reported, so that the test names every module that does not import
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"file": bnfk_core.__file__, "modules": names, "failed": failed,
                  "streamlit": "streamlit" in sys.modules}))
"""


def test_every_module_imports_from_the_installed_wheel(installed):
    env_dir, python, _, tmp = installed
    out = _run([python, "-c", IMPORT_ALL], cwd=tmp)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(got["file"]).resolve().is_relative_to(env_dir.resolve()), got["file"]
    assert not got["failed"], got["failed"]
    # every subpackage of the checkout is in the wheel (a flat ``packages = [...]`` list would lose them)
    subpackages = {
        ".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "bnfk_core").rglob("__init__.py")
    }
    assert subpackages <= set(got["modules"]), sorted(subpackages - set(got["modules"]))
    modules = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "bnfk_core").rglob("*.py")
    }
    assert modules <= set(got["modules"]), sorted(modules - set(got["modules"]))
    assert not got["streamlit"], "bnfk_core imported streamlit"


def test_bnfk_command_is_python_m_bnfk_core(installed):
    env_dir, python, _, tmp = installed
    script = env_dir / ("Scripts/bnfk.exe" if os.name == "nt" else "bin/bnfk")
    assert script.exists()
    command = _run([script, "--help"], cwd=tmp)
    module = _run([python, "-m", "bnfk_core", "--help"], cwd=tmp)
    assert command.returncode == 0, command.stderr
    assert "learn" in command.stdout and "cluster" in command.stdout
    assert command.stdout == module.stdout  # the same parser, the same help
    bad = _run([script, "no-such-command"], cwd=tmp)
    assert bad.returncode == 2


SAMPLES = r"""
import json
from bnfk_core.data import sample_dir
from bnfk_core.reproduce.common import catalog, load_thesis_data
from bnfk_core.reproduce.kgv_hybrid import hybrid_catalog, load_hybrid
from bnfk_core.serving.session_files import SAMPLE_DIR
data = load_thesis_data("zoo")
print(json.dumps({"dir": str(sample_dir()), "session_dir": str(SAMPLE_DIR), "catalog": sorted(catalog()),
                  "zoo": [data.n_rows, data.n_vars], "hybrid": sorted(hybrid_catalog()),
                  "auto": list(load_hybrid("auto")[0].shape)}))
"""


def test_the_wheel_carries_the_bundled_samples(installed):
    """A user who installed the wheel (no checkout) still reaches the samples: the reproduce runners and
    session files that name a sample read them from the installed copy."""
    env_dir, python, _, tmp = installed
    out = _run([python, "-c", SAMPLES], cwd=tmp)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(got["dir"]).resolve().is_relative_to(env_dir.resolve()), got["dir"]
    assert got["session_dir"] == got["dir"]
    assert got["catalog"] == sorted(json.loads((ROOT / "sample_data" / "catalog.json").read_text()))
    for sub in ("", "hybrid"):
        shipped = sorted(p.name for p in (Path(got["dir"]) / sub).iterdir() if p.is_file())
        assert shipped == sorted(
            p.name for p in (ROOT / "sample_data" / sub).iterdir() if p.suffix in (".csv", ".json", ".md")
        ), sub
    assert got["hybrid"] == sorted(json.loads((ROOT / "sample_data" / "hybrid" / "catalog.json").read_text()))
    assert got["auto"] == [392, 8]
    rows = sum(1 for _ in open(ROOT / "sample_data" / "zoo.csv", encoding="utf-8")) - 1
    assert got["zoo"][0] == rows


#: a notebook's first latent class fit after ``pip install``: numba's cache is empty (a new folder), every
#: compilation is counted by numba's compile events; prints (the fit's seconds, the compilations)
FIRST_FIT = r"""
import json, sys, time
import pandas as pd
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev): pass
    def on_end(self, ev): compiled.append(ev.data["dispatcher"].py_func.__qualname__)
event.register("numba:compile", Count())
from bnfk_core.estimators import LatentClassModel
X = pd.read_csv(sys.argv[1], na_values="?", keep_default_na=False).drop(columns="class")
t = time.perf_counter()
m = LatentClassModel(3).fit(X)
print(json.dumps({"seconds": time.perf_counter() - t, "compiled": compiled, "loglik": m.loglik_}))
"""


def test_the_first_latent_class_fit_after_install_compiles_nothing(installed, tmp_path):
    """The README's first latent class fit, in a fresh process of the fresh install with numba's cache
    empty, compiles nothing (the numpy engine of small tables, :func:`bnfk_core.lca.fit_lca`'s ``auto``)
    and takes well under the 2 s goal (about 0.1 s; the compiled engine took 8 s there); its log-likelihood
    is the compiled engine's to 1e-8."""
    _, python, _, tmp = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    votes = ROOT / "sample_data" / "house_votes_84.csv"
    out = subprocess.run(
        [str(python), "-c", FIRST_FIT, str(votes)],
        cwd=tmp,
        env={**env, "NUMBA_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["compiled"] == [], got["compiled"]
    assert got["seconds"] < 2.0, got
    import pandas as pd

    from bnfk_core.estimators import LatentClassModel
    from bnfk_core.lca import fit_lca

    X = pd.read_csv(votes, na_values="?", keep_default_na=False).drop(columns="class")
    table = LatentClassModel(3)._fit_table(X)
    compiled_engine = fit_lca(table, 3, starts=20, seed=0, engine="numba")
    assert got["loglik"] == pytest.approx(compiled_engine.loglik, abs=1e-8)


def _top_level_imports(path: Path) -> set:
    """Top-level names of the modules ``path`` imports at module level (not inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Try):  # ``try: import x`` at module level counts too
            nodes = node.body
        else:
            nodes = [node]
        for n in nodes:
            if isinstance(n, ast.Import):
                names |= {a.name.split(".")[0] for a in n.names}
            elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
                names.add(n.module.split(".")[0])
    return names


def test_runtime_dependencies_cover_module_level_imports(installed):
    _, python, _, tmp = installed
    code = (
        "import importlib.metadata as m, json; print(json.dumps("
        "{'requires': m.requires('bnfk'), 'dists': m.packages_distributions()}))"
    )
    got = json.loads(_run([python, "-c", code], cwd=tmp).stdout)
    required = set()
    for req in got["requires"]:
        if "extra ==" in req:
            continue
        name = req.split(";")[0]
        for stop in "<>=![ ":
            name = name.split(stop)[0]
        required.add(name.strip().lower().replace("_", "-"))
    third_party = set()
    for path in (ROOT / "bnfk_core").rglob("*.py"):
        third_party |= _top_level_imports(path)
    third_party -= set(sys.stdlib_module_names) | {"bnfk_core", "__future__"}
    assert third_party, "no third-party import found (the scan is broken)"
    missing = {}
    for mod in sorted(third_party):
        dists = {d.lower().replace("_", "-") for d in got["dists"].get(mod, [])}
        if not dists & required:
            missing[mod] = sorted(dists)
    assert not missing, f"imported at module level but not a runtime dependency: {missing}"
