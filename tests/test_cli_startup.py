"""The command line starts at once: ``python -m bnfk_core --help`` loads no numerical library beyond numpy
(the subcommand modules' top-level imports are light, and only the module of the subcommand asked for is
registered in full).  Not a timing test: it checks which modules a fresh interpreter imported."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pgmpy", "sklearn", "numba", "scipy", "plotly", "dask", "streamlit")

PROBE = """
import contextlib, io, json, sys
from bnfk_core.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "help": out.getvalue(),
                  "loaded": sorted({m.split('.')[0] for m in sys.modules})}))
"""


def _run(*argv):
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_top_level_help_imports_no_heavy_library():
    got = _run("--help")
    assert got["code"] == 0
    assert not set(HEAVY) & set(got["loaded"]), set(HEAVY) & set(got["loaded"])
    from bnfk_core.cli.main import COMMANDS
    for module in COMMANDS:           # every subcommand is listed, with its help line
        for name in getattr(module, "SUBCOMMANDS", {}):
            assert name in got["help"]


def test_python_m_bnfk_core_help_imports_no_heavy_library():
    code = ("import runpy, sys; sys.argv = ['bnfk_core', '--help']\n"
            "try:\n    runpy.run_module('bnfk_core', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            f"print('LOADED', sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "LOADED []" in r.stdout, r.stdout[-300:] + r.stderr[-300:]


def test_import_bnfk_core_is_light_and_names_still_resolve():
    code = ("import sys, bnfk_core\nheavy = sorted({m.split('.')[0] for m in sys.modules} & set(%r))\n"
            "from bnfk_core import gram, posterior, BayesNet, registry\n"
            "print(heavy, 'fisher' in registry.KERNELS, 'overlap' in registry.KERNELS, 'hc' in registry.LEARNERS)"
            % (HEAVY,))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "[] True True True", r.stdout + r.stderr


def test_every_module_with_subcommands_names_them_all():
    """SUBCOMMANDS (what --help lists without importing) equals what register() adds."""
    import argparse
    from bnfk_core.cli.main import COMMANDS
    for module in COMMANDS:
        if not hasattr(module, "SUBCOMMANDS"):
            continue
        sub = argparse.ArgumentParser().add_subparsers()
        module.register(sub)
        assert list(sub.choices) == list(module.SUBCOMMANDS), module.__name__


@pytest.mark.parametrize("command, option", [("learn", "--pseudo-count"), ("impute", "--probabilities")])
def test_subcommand_help_registers_that_subcommand_in_full(command, option):
    got = _run(command, "--help")
    assert got["code"] == 0
    assert option in got["help"]
