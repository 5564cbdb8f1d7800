"""Every subpackage's public face: each name in ``__all__`` resolves to what its home module defines, no
public name hides a submodule of the same name, and importing a face loads no numerical library."""

import importlib
import pkgutil
import subprocess
import sys

import pytest

import bnfk_core

FACES = sorted(m.name for m in pkgutil.walk_packages(bnfk_core.__path__, "bnfk_core.") if m.ispkg)


@pytest.mark.parametrize("name", FACES)
def test_face_names_resolve_and_hide_no_submodule(name):
    package = importlib.import_module(name)
    assert isinstance(package.__all__, list) and package.__all__
    submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    homes = getattr(package, "_HOMES", {})
    assert not set(homes) & submodules, f"{name}: a public name hides a submodule"
    for public, home in homes.items():
        module = importlib.import_module(f"{name}.{home}")
        assert getattr(package, public) is getattr(module, public)


def test_top_face_names_resolve():
    for public in bnfk_core.__all__:
        assert getattr(bnfk_core, public) is not None
    assert bnfk_core.LiveKernel.__name__ == "LiveKernel" and callable(bnfk_core.covered_arcs)


def test_importing_the_faces_is_light():
    faces = ", ".join(
        n
        for n in FACES
        if n.count(".") == 1
        and n
        not in (
            "bnfk_core.cli",
            "bnfk_core.reproduce",
            "bnfk_core.views",
            "bnfk_core.analyses",
            "bnfk_core.lca",
            "bnfk_core.estimators",
        )
    )
    code = (
        f"import sys, importlib\nfor n in '{faces}'.split(', '): importlib.import_module(n)\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pandas', 'numba', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
