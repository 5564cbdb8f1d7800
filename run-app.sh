#!/usr/bin/env bash
# Set up bnfk on first use, then start the Streamlit app (http://localhost:8501).
#
#   ./run-app.sh                        # the app on the bundled house_votes_84 data
#   ./run-app.sh --server.port 8599     # extra arguments go to `streamlit run app.py`
#
# Needs only python3 (3.11 or newer).  The set-up is idempotent: it creates the venv
# (.venv/) if it is missing and runs `pip install -r requirements.txt` only when
# requirements.txt or the Python version changed since the last successful install
# (a sha256 of both is kept in <venv>/.bnfk-requirements.sha256).
#
# run-tests.sh sources this file for the same set-up (bnfk_setup); sourced, it only
# defines functions and variables and does not start the app.
#
# Environment knobs (all optional):
#   PYTHON=python3.12        interpreter that creates the venv (default: python3)
#   BNFK_VENV=/path/to/venv  venv location (default: .venv in the repository)
#
# Exit code 2 with a one-line `error: ...` when Python is missing or too old, the
# venv module is missing, or requirements.txt cannot be installed.
set -euo pipefail

BNFK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PIP_DISABLE_PIP_VERSION_CHECK=1

bnfk_log()  { printf '==> %s\n' "$*"; }
bnfk_warn() { printf 'WARNING: %s\n' "$*" >&2; }
bnfk_die()  { printf 'error: %s\n' "$*" >&2; exit 2; }

# Check the interpreter, create or refresh the venv, install requirements.txt when it
# changed; then put the venv first on PATH (python, streamlit and pytest are the venv's).
bnfk_setup() {
    local py="${PYTHON:-python3}" venv="${BNFK_VENV:-$BNFK_ROOT/.venv}"
    local version want have log

    # -- the interpreter: exists, runs, is >= 3.11, has venv + ensurepip
    command -v "$py" >/dev/null 2>&1 \
        || bnfk_die "$py not found; bnfk needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)"
    version="$("$py" -c 'import sys; sys.stdout.write("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)" \
        || bnfk_die "$py does not run; bnfk needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)"
    [[ "$version" =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] \
        || bnfk_die "$py did not report a Python version; bnfk needs Python 3.11 or newer"
    if (( BASH_REMATCH[1] < 3 || (BASH_REMATCH[1] == 3 && BASH_REMATCH[2] < 11) )); then
        bnfk_die "bnfk needs Python 3.11 or newer, $py is $version (set PYTHON=/path/to/python3.11)"
    fi
    "$py" -c 'import venv, ensurepip' >/dev/null 2>&1 \
        || bnfk_die "the venv module of $py ($version) is missing; on Debian/Ubuntu: sudo apt-get install python3-venv"

    # -- the venv: create it, or recreate it when its Python differs or its pip is broken
    have=""
    if [[ -x "$venv/bin/python" ]]; then
        have="$("$venv/bin/python" -c 'import sys; sys.stdout.write("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true)"
    fi
    if [[ "$have" != "$version" ]] || ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
        if [[ -e "$venv" && ! -f "$venv/pyvenv.cfg" && -n "$(ls -A "$venv")" ]]; then
            bnfk_die "$venv exists and is not a venv; remove it or set BNFK_VENV to another directory"
        fi
        bnfk_log "Creating venv in $venv with Python $version…"
        "$py" -m venv --clear "$venv" \
            || bnfk_die "could not create a venv in $venv with $py; on Debian/Ubuntu: sudo apt-get install python3-venv"
    fi

    # -- requirements: install only when requirements.txt or the Python version changed
    want="$("$venv/bin/python" - "$BNFK_ROOT/requirements.txt" <<'PY'
import hashlib, sys
h = hashlib.sha256(open(sys.argv[1], "rb").read())
h.update(("\npython " + sys.version).encode())
print(h.hexdigest())
PY
)"
    if [[ "$(cat "$venv/.bnfk-requirements.sha256" 2>/dev/null || true)" != "$want" ]]; then
        log="$venv/pip-install.log"
        bnfk_log "Installing requirements (first run: ~320 MB to download, 1.3 GB on disk, ~30 s on a fast connection; log: $log)…"
        if ! { "$venv/bin/python" -m pip install --upgrade pip \
               && "$venv/bin/python" -m pip install -r "$BNFK_ROOT/requirements.txt"; } >"$log" 2>&1; then
            printf 'error: could not install requirements.txt (see %s); is the package index reachable?\n' "$log" >&2
            tail -n 5 "$log" | sed 's/^/    /' >&2
            exit 2
        fi
        printf '%s\n' "$want" >"$venv/.bnfk-requirements.sha256"
        bnfk_log "Requirements installed in $venv"
    else
        bnfk_log "Requirements up to date in $venv"
    fi

    export VIRTUAL_ENV="$venv"
    export PATH="$venv/bin:$PATH"
    bnfk_warmup "$venv" "$want"
}

# Compile bnfk's numba kernels into numba's on-disk cache (`python -m bnfk_core warmup`, two processes, ~30 s once) when the
# requirements or bnfk_core's sources changed since the last warm-up (a sha256 of both is kept in
# <venv>/.bnfk-warmup.sha256), so that the app's first pages and the tests load them instead of compiling.
# A failed warm-up only warns: every kernel still compiles on its first call.
bnfk_warmup() {
    local venv="$1" requirements="$2" want
    [[ -f "$BNFK_ROOT/bnfk_core/__main__.py" ]] || return 0
    want="$("$venv/bin/python" - "$BNFK_ROOT" "$requirements" <<'PY'
import hashlib, pathlib, sys
h = hashlib.sha256(sys.argv[2].encode())
for f in sorted(pathlib.Path(sys.argv[1], "bnfk_core").rglob("*.py")):
    h.update(f.read_bytes())
print(h.hexdigest())
PY
)"
    [[ "$(cat "$venv/.bnfk-warmup.sha256" 2>/dev/null || true)" == "$want" ]] && return 0
    bnfk_log "Compiling bnfk's numba kernels once (python -m bnfk_core warmup in two processes, ~30 s; result: $venv/warmup-*.json)…"
    # the groups split in two of about equal compile time (learn + correlation + files + similarity against
    # lca + kmeans + fisher + prototypes: 26 and 23 s of 49), one process each, so the two cores share it
    local ok=0 pid_a pid_b
    (cd "$BNFK_ROOT" && "$venv/bin/python" -m bnfk_core warmup --only learn,correlation,files,similarity \
        -o "$venv/warmup-a.json") >/dev/null 2>&1 &
    pid_a=$!
    (cd "$BNFK_ROOT" && "$venv/bin/python" -m bnfk_core warmup --only lca,kmeans,fisher,prototypes \
        -o "$venv/warmup-b.json") >/dev/null 2>&1 &
    pid_b=$!
    wait "$pid_a" || ok=1
    wait "$pid_b" || ok=1
    if [[ "$ok" == 0 ]]; then
        printf '%s\n' "$want" >"$venv/.bnfk-warmup.sha256"
    else
        bnfk_warn "the numba warm-up failed (python -m bnfk_core warmup); each kernel compiles on its first call instead."
    fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    bnfk_setup
    cd "$BNFK_ROOT"
    bnfk_log "Starting the app: streamlit run app.py $* (Ctrl+C stops it)"
    exec python -m streamlit run app.py "$@"
fi
