"""Shared pytest fixtures for bnfk.

``sample_path(name)`` gives the path of a bundled sample CSV (``"nursery"`` or
``"nursery.csv"``); ``tmp_csv(content, name="data.csv")`` writes text or bytes to
a fresh temporary file and returns its path.

Each pytest process (the whole run, or each pytest-xdist worker of ``./run-tests.sh``) gets a temporary
folder of its own as ``TMPDIR`` before any test module is imported, so the app's server folders under
``tempfile.gettempdir()`` (the capped upload store ``bnfk_uploads``, ``bnfk_imputed``) and every file a test
or a subprocess writes there are never shared with another worker or another run: one worker's least
recently used clean-up or clean exit cannot remove a file another is reading.  Removed at the end.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_data"


def _own_tmpdir() -> str:
    """A new folder under the system's temporary folder, set as this process's ``TMPDIR`` (inherited by the
    subprocesses tests start) and removed when the process exits."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    # pytest's own tmp_path folders stay where they were (kept after the run for a look at a failure)
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix=f"bnfk-tests-{worker}-")
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # after the app's own clean-ups (LIFO)
    return folder


TEST_TMPDIR = _own_tmpdir()

if str(ROOT) not in sys.path:  # `python -m pytest` from the repo root already has it
    sys.path.insert(0, str(ROOT))


def _sample(name: str) -> Path:
    path = SAMPLE_DIR / (name if name.endswith(".csv") else f"{name}.csv")
    if not path.is_file():
        raise FileNotFoundError(f"no sample dataset {name!r} in {SAMPLE_DIR}")
    return path


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    """The ``sample_data/`` folder of the repository."""
    return SAMPLE_DIR


@pytest.fixture(scope="session")
def sample_path():
    """``sample_path("car")`` -> Path of ``sample_data/car.csv``."""
    return _sample


@pytest.fixture
def tmp_csv(tmp_path):
    """``tmp_csv(content, name="data.csv")`` writes str (UTF-8, no newline translation) or bytes."""
    counter = {"n": 0}

    def write(content, name: str = "data.csv") -> Path:
        counter["n"] += 1
        folder = tmp_path / f"csv{counter['n']}"
        folder.mkdir()
        path = folder / name
        if isinstance(content, str):
            path.write_bytes(content.encode("utf-8"))
        else:
            path.write_bytes(bytes(content))
        return path

    return write


@pytest.fixture
def spawn_safe_main(monkeypatch):
    """A ``__main__`` module without a file for the test: processes started with ``spawn`` (a Dask
    LocalCluster's workers) re-run the parent's main script, and after a Streamlit ``AppTest`` that is the
    app test's temporary script, which cannot run on its own."""
    import types

    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
