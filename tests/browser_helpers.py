"""One way for the browser tests to run the app: ``streamlit run app.py`` on a free port, waited for until
healthy, stopped afterwards (its log in ``test-artifacts/``)."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"


@contextlib.contextmanager
def streamlit_server(log_name: str = "streamlit.log", timeout: float = 60, env: dict | None = None):
    """Yield ``(url, process)`` of a running app server (``env``: extra environment variables, e.g. the
    operator's BNFK_DATA_DIR); raises RuntimeError if it does not become healthy."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / log_name, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + timeout
            while True:
                try:
                    with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"streamlit did not start; see test-artifacts/{log_name}")
                time.sleep(0.5)
            yield url, proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
