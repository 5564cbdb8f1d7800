#!/usr/bin/env bash
# Set up bnfk on first use (the same venv set-up as run-app.sh), make sure Chromium is
# there for the browser tests, then run the whole test suite on two worker processes:
# `python -m pytest -q -n 2 --dist loadfile -m "slow or not slow"` (pytest-xdist; each test file stays on
# one worker, so its module-scoped fixtures are built once; the tests marked `slow`, which a bare
# `python -m pytest` leaves out, run too).
#
#   ./run-tests.sh                      # the whole suite
#   ./run-tests.sh -x tests/test_data.py   # extra arguments go to pytest
#
# Chromium: when /usr/bin/chromium is missing and apt-get is usable (as root, or with
# passwordless `sudo -n`), installs Debian's `chromium` package (apt-get update first).
# Otherwise it says so and the browser tests skip.
#
# Environment knobs (all optional):
#   PYTHON=python3.12        interpreter that creates the venv (default: python3)
#   BNFK_VENV=/path/to/venv  venv location (default: .venv in the repository)
#   BNFK_CI_NO_APT=1         never call apt-get (browser tests skip without chromium)
#   BNFK_TEST_WORKERS=N      pytest-xdist workers (default: 2, at most the number of cores;
#                            0 runs every test in one process)
#
# The exit code is pytest's, or 2 with a one-line `error: ...` when the set-up fails.
set -euo pipefail

# shellcheck source=run-app.sh
source "$(dirname "${BASH_SOURCE[0]}")/run-app.sh"

bnfk_setup
cd "$BNFK_ROOT"

# -- Chromium for the browser tests (tests/test_browser.py looks for /usr/bin/chromium)
if [[ -x /usr/bin/chromium ]]; then
    bnfk_log "Chromium found: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
elif [[ -n "${BNFK_CI_NO_APT:-}" ]]; then
    bnfk_warn "/usr/bin/chromium is missing and BNFK_CI_NO_APT is set; the browser tests will skip."
elif ! command -v apt-get >/dev/null 2>&1; then
    bnfk_warn "/usr/bin/chromium is missing and apt-get is not available; the browser tests will skip."
else
    sudo=""
    if [[ "$(id -u)" != 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            sudo="none"
        fi
    fi
    if [[ "$sudo" == none ]]; then
        bnfk_warn "/usr/bin/chromium is missing and apt-get needs root (no passwordless sudo); the browser tests will skip. Install it with: sudo apt-get install chromium"
    else
        apt_log="$VIRTUAL_ENV/apt-chromium.log"
        bnfk_log "Installing Debian chromium for the browser tests (apt-get update + install, ~10 s to a few min; log: $apt_log)…"
        if ! { $sudo apt-get update -qq \
               && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium; } \
               >"$apt_log" 2>&1; then
            tail -n 5 "$apt_log" | sed 's/^/    /' >&2
            bnfk_warn "could not install chromium with apt-get (see $apt_log); the browser tests will skip."
        fi
    fi
fi

# -- the README's test command; its exit code is this script's.  Two workers: the suite is mostly
# single-threaded Python, so on 2 cores it takes a little over half the time of one process (measured in
# docs/BENCHMARKS.md); more workers than cores only add memory and collection time.
cores="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)"  # (nproc obeys OMP_NUM_THREADS)
workers="${BNFK_TEST_WORKERS:-2}"
if ! [[ "$workers" =~ ^[0-9]+$ ]]; then
    bnfk_die "BNFK_TEST_WORKERS must be a number of workers (0 for one process), not '$workers'"
fi
((workers > cores)) && workers="$cores"
((workers < 2)) && workers=0
bnfk_log "python -m pytest -q -n $workers --dist loadfile -m \"slow or not slow\" $*"
exec python -m pytest -q -n "$workers" --dist loadfile -m "slow or not slow" "$@"
