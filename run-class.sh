#!/usr/bin/env bash
# Serve a class: several `streamlit run app.py` processes on consecutive ports, to put behind one address with
# sticky sessions (docs/SERVING.md, "Serving a class").  One Python process runs one page at a time per core
# it can use; a class of 30 on a small machine needs one process per core.
#
#   ./run-class.sh                 # one process per core, ports 8501, 8502, ...
#   ./run-class.sh 3 8601          # 3 processes on ports 8601-8603
#
# Every process uses the same set-up as run-app.sh (the venv, requirements) and the same environment
# (BNFK_DATA_DIR / BNFK_OUTPUT_DIR).  Ctrl+C stops them all.
set -euo pipefail
BNFK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=run-app.sh
source "$BNFK_ROOT/run-app.sh"
bnfk_setup
cd "$BNFK_ROOT"
n="${1:-$(python -c 'import os; print(os.cpu_count() or 1)')}"
first="${2:-8501}"
[[ "$n" =~ ^[1-9][0-9]?$ ]] || bnfk_die "the number of processes must be a whole number from 1 to 99, got '$n'"
[[ "$first" =~ ^[0-9]{2,5}$ ]] || bnfk_die "the first port must be a port number, got '$first'"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT INT TERM
for ((k = 0; k < n; k++)); do
    port=$((first + k))
    bnfk_log "Starting process $((k + 1)) of $n on port $port"
    python -m streamlit run app.py --server.headless true --server.port "$port" \
        --server.disconnectedSessionTTL 60 --browser.gatherUsageStats false &
    pids+=("$!")
done
wait
