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
from collections.abc import Callable
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
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
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
            # the server has nothing left to save: a short grace for its log's last lines, then it is killed
            # (a graceful Streamlit stop takes 2-10 s, once per test module)
            proc.terminate()
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


#: a page script (``page.add_init_script``) counting the app's finished script runs: Streamlit writes the run
#: state on its root element (``data-test-script-state``: ``running``, ``rerunRequested``, ``notRunning``),
#: and each change to ``notRunning`` is one run (or fragment run) done; read at every change of the page, so
#: that a root element drawn anew is seen too
RUN_COUNTER = """(() => {
    window.__bnfkRuns = 0;
    let last = null;
    new MutationObserver((records) => {
        window.__bnfkChanged = performance.now();
        // every value the app's script state took since the last call, in order: each change's old value,
        // then the current one -- a run that starts and ends between two calls (a fast rerun) is still
        // counted
        const app = document.querySelector('[data-testid="stApp"]');
        const states = records.filter(r => r.type === 'attributes' && r.target === app
                                           && r.attributeName === 'data-test-script-state')
                              .map(r => r.oldValue);
        states.push(app?.getAttribute('data-test-script-state'));
        for (const now of states) {
            if (!now) continue;
            if (now === 'notRunning' && last !== 'notRunning') {
                window.__bnfkRuns += 1; window.__bnfkRunEnd = performance.now();
            }
            if (now === 'running' && last !== 'running') window.__bnfkRunStart = performance.now();
            last = now;
        }
    }).observe(document, {attributes: true, attributeOldValue: true, childList: true, subtree: true});
})()"""

#: the run is over and its page is whole: no run going, no element left over from the previous run, no element
#: still loading its code (Streamlit's placeholder ``stSkeleton``), every shown chart drawn by plotly
_SETTLED = """([after, since]) =>
    document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]')
    && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].filter(e => e.offsetParent !== null)
        .every(e => e.querySelector('.js-plotly-plot')?._fullLayout)
    && (window.__bnfkRuns > after
        || (since !== null && performance.now() - since > QUIET_AFTER_MS
            && performance.now() - (window.__bnfkChanged || 0) > QUIET_FOR_MS))"""

#: an action whose run was not seen (a rerun so fast that the browser drew its start and end in one frame, so
#: the script state never visibly changed -- seen under load): the page counts as settled once it is idle and
#: whole, at least QUIET_AFTER_MS after the action and with no change for QUIET_FOR_MS
QUIET_AFTER_MS, QUIET_FOR_MS = 3000, 2000
_SETTLED = _SETTLED.replace("QUIET_AFTER_MS", str(QUIET_AFTER_MS)).replace("QUIET_FOR_MS", str(QUIET_FOR_MS))


def count_runs(page) -> None:
    """Count this page's script runs (call before its first ``goto``); :func:`settle` then waits for a run."""
    page.add_init_script(RUN_COUNTER)


def runs(page) -> int:
    """Script runs finished so far on ``page``."""
    return int(page.evaluate("() => window.__bnfkRuns || 0"))


def settle(page, after: int = 0, timeout: float = 120_000, since: float | None = None) -> None:
    """Wait until a script run after the first ``after`` ones is over and the page is whole (default: a page
    just opened -- its first run); :func:`act` takes ``after`` before its action, and ``since``, the page's
    clock at the action, so that an action whose run was not seen settles once the page has been idle and
    unchanged for a while (:data:`QUIET_FOR_MS`).  No fixed sleeps: the browser reports the run's end
    (:data:`RUN_COUNTER`)."""
    while True:
        page.wait_for_function(_SETTLED, arg=[after, since], timeout=timeout)
        seen = runs(page)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        if runs(page) == seen and page.evaluate(_SETTLED, [after, since]):  # no run began in those frames
            return


def act(page, action, timeout: float = 120_000) -> None:
    """Do ``action()`` (a click that re-runs the script) and wait for that run to be over (:func:`settle`)."""
    n, since = runs(page), page.evaluate("() => performance.now()")
    action()
    settle(page, n, timeout, since)


def _descendants_cpu_seconds() -> float:
    """CPU seconds (user + system) spent so far by this process's live descendants: the app server a test
    started and its browser (Playwright's driver and Chromium's processes), read from ``/proc``."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[tuple[int, float]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        # after the name: state, ppid (field 4 of the file), ..., utime and stime (fields 14 and 15)
        cpu = (int(fields[11]) + int(fields[12])) / tick
        children.setdefault(int(fields[1]), []).append((int(entry), cpu))
    total, todo = 0.0, [os.getpid()]
    while todo:
        for pid, cpu in children.get(todo.pop(), ()):
            total += cpu
            todo.append(pid)
    return total


class Steps:
    """A browser test's actions, counted and timed: for each, the wall seconds from the action to the settled
    page (:func:`settle`), the CPU seconds the app server and the browser spent meanwhile (their own work,
    which a queue for the cores does not stretch) and the 1-minute load at its end."""

    def __init__(self, page) -> None:
        self.page, self.count = page, 0
        self.wall: dict[str, float] = {}
        self.work: dict[str, float] = {}
        self.load: dict[str, float] = {}

    def __call__(self, name: str, action: Callable[[], object], reruns: bool = True) -> None:
        """Do ``action()`` (a click; ``reruns``: it re-runs the script, waited for), recorded as ``name``."""
        self.count += 1
        n, since = runs(self.page), self.page.evaluate("() => performance.now()")
        cpu, t0 = _descendants_cpu_seconds(), time.perf_counter()
        action()
        if reruns:
            settle(self.page, n, since=since)
        self.wall[name] = round(time.perf_counter() - t0, 2)
        self.work[name] = round(_descendants_cpu_seconds() - cpu, 2)
        self.load[name] = round(os.getloadavg()[0], 2)

    def slow(self, limit: float, loaded: float, names=None) -> dict[str, dict[str, float]]:
        """The steps (of ``names``, default all) that took longer than ``limit`` seconds.  A step's wall time
        is judged while the 1-minute load is at most ``loaded`` times the cores; on a busier machine it
        measures the neighbours too, so the step is judged by its work spread over the cores it could use
        (CPU seconds / cores) -- what it would take there alone, short of its waits."""
        cores = os.cpu_count() or 1
        out = {}
        for k in self.wall if names is None else names:
            quiet = self.load[k] <= loaded * cores
            if (self.wall[k] if quiet else self.work[k] / cores) > limit:
                out[k] = {"wall": self.wall[k], "cpu": self.work[k], "load": self.load[k]}
        return out

    def record(self) -> dict:
        """The steps' figures for a test's JSON artefact."""
        cores = os.cpu_count()
        return {"seconds": self.wall, "cpu_seconds": self.work, "load_1min": self.load, "cores": cores}
