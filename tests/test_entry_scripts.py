"""The two entry points of the README's quick start: ./run-app.sh and ./run-tests.sh (+ .ci/run).

No real package installs here: bad interpreters are fake shell scripts, and the venv set-up
runs in a scratch copy of the scripts whose requirements.txt is empty, with pip cut off from
every index, so the only pip work is "already satisfied" (or a failure we want).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ["run-app.sh", "run-tests.sh", ".ci/run"]
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")


def offline_env(**extra: str) -> dict[str, str]:
    """The environment without pip settings, with pip unable to reach any index."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "BNFK_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", BNFK_CI_NO_APT="1")
    env.update(extra)
    return env


def run(script: Path | str, *args: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BASH, str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def error_lines(res: subprocess.CompletedProcess) -> list[str]:
    return [line for line in res.stderr.splitlines() if line.startswith("error: ")]


def fake_python(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fakepython"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


# ----------------------------------------------------------------- static checks


@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_parse_and_are_executable(script):
    path = ROOT / script
    assert subprocess.run([BASH, "-n", str(path)], capture_output=True, text=True).returncode == 0
    assert os.access(path, os.X_OK), f"{script} is not executable (chmod +x)"
    assert path.read_text().startswith("#!/usr/bin/env bash\n")


def test_ci_runs_run_tests_sh():
    code = [
        line.strip()
        for line in (ROOT / ".ci/run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert any("run-tests.sh" in line for line in code)
    # and the tests run only through run-tests.sh, not a second copy of the command
    assert not any("pytest" in line for line in code)


def test_run_tests_sh_reuses_the_setup_of_run_app_sh():
    text = (ROOT / "run-tests.sh").read_text()
    assert "run-app.sh" in text and "bnfk_setup" in text
    assert "pip install" not in text and "-m venv" not in text  # no duplicated set-up
    assert "python -m pytest -q" in text


def test_readme_quick_start_leads_with_the_two_scripts():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    first_block = quick.split("```", 2)[1]
    assert "./run-app.sh" in first_block and "./run-tests.sh" in first_block


# ----------------------------------------------------------------- interpreter errors


@pytest.mark.parametrize("script", ["run-app.sh", "run-tests.sh", ".ci/run"])
def test_old_python_is_refused(tmp_path, script):
    py = fake_python(tmp_path, "echo 3.9.18")
    res = run(ROOT / script, env=offline_env(PYTHON=str(py), BNFK_VENV=str(tmp_path / "venv")))
    assert res.returncode == 2, res.stderr
    [line] = error_lines(res)
    assert "3.11" in line and "3.9.18" in line
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "venv").exists()


@pytest.mark.parametrize("script", ["run-app.sh", "run-tests.sh"])
def test_missing_python_is_refused(tmp_path, script):
    missing = tmp_path / "no" / "python3.11"
    res = run(ROOT / script, env=offline_env(PYTHON=str(missing), BNFK_VENV=str(tmp_path / "venv")))
    assert res.returncode == 2, res.stderr
    [line] = error_lines(res)
    assert str(missing) in line and "not found" in line and "3.11" in line


def test_python_that_does_not_run_is_refused(tmp_path):
    py = fake_python(tmp_path, 'echo "Segmentation fault" >&2; exit 139')
    res = run(ROOT / "run-app.sh", env=offline_env(PYTHON=str(py), BNFK_VENV=str(tmp_path / "venv")))
    assert res.returncode == 2
    [line] = error_lines(res)
    assert "does not run" in line


def test_missing_venv_module_names_python3_venv(tmp_path):
    # a 3.12 that has no ensurepip, like Debian's python3 without the python3-venv package
    py = fake_python(tmp_path, 'case "$*" in *ensurepip*) exit 1;; esac; echo 3.12.3')
    res = run(ROOT / "run-app.sh", env=offline_env(PYTHON=str(py), BNFK_VENV=str(tmp_path / "venv")))
    assert res.returncode == 2
    [line] = error_lines(res)
    assert "venv" in line and "python3-venv" in line


def test_a_non_venv_directory_is_not_wiped(tmp_path):
    target = tmp_path / "data"
    target.mkdir()
    (target / "precious.txt").write_text("keep me")
    res = run(ROOT / "run-app.sh", env=offline_env(PYTHON=sys.executable, BNFK_VENV=str(target)))
    assert res.returncode == 2
    assert "not a venv" in error_lines(res)[0]
    assert (target / "precious.txt").read_text() == "keep me"


# ----------------------------------------------------------------- the venv set-up, offline


def make_scratch(repo: Path, requirements: str) -> Path:
    """A copy of the scripts with the given requirements.txt and fake `pytest`/`streamlit` modules
    (found first by `python -m` from the repository root) that print their arguments and exit 3."""
    for script in SCRIPTS:
        (repo / script).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / script, repo / script)
    (repo / "requirements.txt").write_text(requirements)
    fake = 'import sys\nprint("FAKE {} ARGS", sys.argv[1:])\nsys.exit(3)\n'
    (repo / "pytest.py").write_text(fake.format("pytest"))
    (repo / "streamlit").mkdir()
    (repo / "streamlit" / "__main__.py").write_text(fake.format("streamlit"))
    return repo


def test_setup_is_idempotent_and_arguments_pass_through(tmp_path):
    scratch = make_scratch(tmp_path / "repo", "# nothing to install\n")
    venv = scratch / "venv"
    env = offline_env(PYTHON=sys.executable, BNFK_VENV=str(venv))

    first = run(scratch / "run-app.sh", "--server.port", "8599", env=env, cwd=scratch.parent)
    assert "==> Creating venv" in first.stdout, first.stdout + first.stderr
    assert "==> Installing requirements" in first.stdout
    assert "FAKE streamlit ARGS ['run', 'app.py', '--server.port', '8599']" in first.stdout
    assert first.returncode == 3  # the app's exit code is the script's
    assert (venv / ".bnfk-requirements.sha256").is_file()

    again = run(scratch / "run-tests.sh", "-x", "tests/test_data.py", env=env)
    assert "Creating venv" not in again.stdout and "Installing requirements" not in again.stdout
    assert "==> Requirements up to date" in again.stdout
    # BNFK_CI_NO_APT=1: no apt-get, whether or not chromium is there
    assert "browser tests will skip" in again.stderr or "==> Chromium found" in again.stdout
    # two pytest-xdist workers (one process on a 1-core machine), each test file on one worker
    workers = "2" if len(os.sched_getaffinity(0)) >= 2 else "0"
    suite = ["-q", "-n", workers, "--dist", "loadfile", "-m", "slow or not slow"]  # `slow` tests too
    assert f"FAKE pytest ARGS {[*suite, '-x', 'tests/test_data.py']}" in again.stdout
    assert again.returncode == 3  # pytest's exit code is the script's

    ci = run(scratch / ".ci/run", env=env)
    assert f"FAKE pytest ARGS {suite}" in ci.stdout and ci.returncode == 3

    one = run(scratch / "run-tests.sh", env={**env, "BNFK_TEST_WORKERS": "0"})
    assert f"FAKE pytest ARGS {['-q', '-n', '0', *suite[3:]]}" in one.stdout
    bad = run(scratch / "run-tests.sh", env={**env, "BNFK_TEST_WORKERS": "two"})
    assert bad.returncode == 2 and error_lines(bad) == [
        "error: BNFK_TEST_WORKERS must be a number of workers (0 for one process), not 'two'"
    ]

    # a changed requirements.txt triggers a reinstall (and only that)
    req = scratch / "requirements.txt"
    req.write_text(req.read_text() + "# changed\n")
    changed = run(scratch / "run-app.sh", env=env)
    assert "Creating venv" not in changed.stdout
    assert "==> Installing requirements" in changed.stdout


def test_unreachable_index_is_one_error_line_with_the_log(tmp_path):
    scratch = make_scratch(tmp_path / "repo", "numpy==2.4.6\n")
    venv = tmp_path / "venv"
    res = run(scratch / "run-app.sh", env=offline_env(PYTHON=sys.executable, BNFK_VENV=str(venv)))
    assert res.returncode == 2
    [line] = error_lines(res)
    log = venv / "pip-install.log"
    assert line == f"error: could not install requirements.txt (see {log}); is the package index reachable?"
    assert "numpy" in log.read_text()
    assert "numpy" in res.stderr  # the tail of the log is shown
    assert "Traceback" not in res.stderr
    assert not (venv / ".bnfk-requirements.sha256").exists()  # the next run tries again
