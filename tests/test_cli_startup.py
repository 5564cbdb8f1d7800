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
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_top_level_help_imports_no_heavy_library():
    got = _run("--help")
    assert got["code"] == 0
    assert not set(HEAVY) & set(got["loaded"]), set(HEAVY) & set(got["loaded"])
    from bnfk_core.cli.main import COMMANDS

    for module in COMMANDS:  # every subcommand is listed, with its help line
        for name in getattr(module, "SUBCOMMANDS", {}):
            assert name in got["help"]


def test_python_m_bnfk_core_help_imports_no_heavy_library():
    code = (
        "import runpy, sys; sys.argv = ['bnfk_core', '--help']\n"
        "try:\n    runpy.run_module('bnfk_core', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "LOADED []" in r.stdout, r.stdout[-300:] + r.stderr[-300:]


def test_import_bnfk_core_is_light_and_names_still_resolve():
    code = (
        "import sys, bnfk_core\nheavy = sorted({m.split('.')[0] for m in sys.modules} & set(%r))\n"
        "from bnfk_core import gram, posterior, BayesNet, registry\n"
        "print(heavy, 'fisher' in registry.KERNELS, 'overlap' in registry.KERNELS, 'hc' in registry.LEARNERS)"
        % (HEAVY,)
    )
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


# ---------------------------------------------------------------- every subcommand's --help and argument
# errors
LIGHT_COMMANDS = [
    n
    for m in __import__("bnfk_core.cli.main", fromlist=["COMMANDS"]).COMMANDS
    for n in getattr(m, "SUBCOMMANDS", {})
    if n != "reproduce"
]  # reproduce lists its experiments


def _loaded(*argv):
    """Exit code, stderr and the heavy top-level packages a fresh interpreter imported for ``argv``."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    got = json.loads(r.stdout)
    return got["code"], r.stderr, set(got["loaded"]) & {*HEAVY, "pandas", "networkx"}


def test_learn_help_does_not_import_pandas():
    """The issue's case: ``python -m bnfk_core learn --help`` (its choices come from light name lists)."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bnfk_core", "learn", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "--structure" in r.stdout and "hc" in r.stdout, r.stderr[-300:]
    imported = {
        line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")
    }
    assert "pandas" not in imported and "pgmpy" not in imported and "scipy" not in imported


@pytest.mark.parametrize("command", LIGHT_COMMANDS)
def test_every_subcommand_help_is_light(command):
    code, _, heavy = _loaded(command, "--help")
    assert code == 0 and not heavy, (command, heavy)


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (("learn", "x.csv", "--structure", "hc"), "--output"),  # a required option missing
        (("cluster", "x.csv", "--transform", "log"), "'log'"),  # a fixed choice
        (("kernel", "x.csv", "--seed", "-1"), "--seed"),  # a bad number
    ],
)
def test_argument_errors_are_light_and_one_line(argv, culprit):
    code, err, heavy = _loaded(*argv)
    assert code == 2 and err.startswith("error: ") and culprit in err and err.count("\n") == 1, err
    assert not heavy, heavy


def test_an_unknown_registry_name_is_still_refused_with_every_choice():
    code, err, _ = _loaded("learn", "x.csv", "--structure", "magic", "-o", "m.bif")
    assert code == 2 and "'magic'" in err and "hc" in err and "exact" in err, err


def test_every_registry_reads_its_members_from_light_modules():
    """A fresh interpreter reads every registry (what --help lists) without importing a heavy library: the
    built-in members come from the light ``members`` modules that :data:`bnfk_core.MEMBERS` names, in that
    order."""
    code = (
        "import importlib, json, sys, bnfk_core\nfrom bnfk_core import registry\n"
        "got = {n: list(getattr(registry, n)) for n in bnfk_core.MEMBERS}\n"
        "want = {n: [s.name for src in srcs for s in getattr(importlib.import_module(src.split(':')[0]), "
        "src.split(':')[1])] for n, srcs in bnfk_core.MEMBERS.items()}\n"
        "print(json.dumps({'got': got, 'want': want, "
        "'heavy': sorted({m.split('.')[0] for m in sys.modules} & set(%r))}))"
        % (HEAVY + ("pandas", "networkx"),)
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["heavy"] == [], out["heavy"]
    assert out["got"] == out["want"]
    assert (
        out["got"]["LEARNERS"][:3] == ["empty", "naive-bayes", "hc"] and "lca-fisher" in out["got"]["KERNELS"]
    )


def test_every_lazy_behaviour_names_a_real_function():
    """A member's behaviour is a lazy reference by name: each one resolves to a callable of its module (a
    renamed function fails here, not when a user first picks the member)."""
    import bnfk_core
    from bnfk_core import registry

    seen = 0
    for name in bnfk_core.MEMBERS:
        for spec in getattr(registry, name).values():
            for value in vars(spec).values():
                if isinstance(value, registry.Lazy):
                    assert callable(value.resolve()), (name, spec.name, value)
                    seen += 1
    assert seen >= 40, seen


def test_registry_module_names_no_module_above_it():
    """The bottom floor: bnfk_core/registry.py imports only the errors and spells no analysis module."""
    import ast

    src = (ROOT / "bnfk_core" / "registry.py").read_text(encoding="utf-8")
    imported = {n.module for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom) and n.level}
    assert imported == {"errors"}, imported
    assert "bnfk_core.analyses" not in src and "PROVIDERS" not in src
