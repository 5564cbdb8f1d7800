"""A class on one machine: N students at once through the lecture, over Streamlit's own websocket protocol.

Every student is one browser session of ``streamlit run app.py``: a websocket to ``/_stcore/stream`` that
sends ``BackMsg`` protobufs (``rerun_script`` with the page and the widget states, as the browser does on a
click)
and reads the ``ForwardMsg`` protobufs back until the run's ``script_finished``.  The students start together
and click without pausing, through the lecture:

    Home → Structure → Kernel → Clustering → Segments lab → add an arc (Structure, then its "Add arc"
    button) → Kernel again

The messages are the ones Chromium sends (checked once against its frames; the browser also sends the
other widgets' current values with a click, which the app does not need: its choices live in the session
state).  A step's time is server time: from the click's message to the end of the run it started (a browser
adds its own drawing on top).  For each class size the bench writes, per step, p50 / p95 / max, the bytes sent
to a
student, the failures (a run that does not finish, an exception or an internal error shown, a step over the
timeout), the server's CPU seconds per page run (user + system time of the server processes over the class,
over the runs: the work itself, which the machine's other load does not inflate as it inflates the times), the
server's memory per student (resident memory of the server while the class is connected, less the server's
before it, over N), with ``--second-class`` the memory after the first class's sessions expired and during a
second class of the same size, and isolation: the even
students add an arc, the odd ones only open the Structure page twice, and on "Kernel again" every even student
must see one arc more than the default structure and every odd one the default number.

    python benchmarks/bench_class.py                         # N = 1, 10, 30 on a fresh server
    python benchmarks/bench_class.py --students 1,10 --timeout 60
    python benchmarks/bench_class.py --url http://127.0.0.1:8501 --students 30   # a server already running
    # the class set-up: 2 server processes, each student kept on one of them (as a sticky proxy does)
    python benchmarks/bench_class.py --processes 2
    # server CPU per page run only: 10 students one after another (no contention), 5 times; the median
    python benchmarks/bench_class.py --sequential 10 --repeats 5 -o cpu.json
    # the same for this checkout and an older one, the students alternating between the two servers
    git worktree add /tmp/before HEAD~3
    python benchmarks/bench_class.py --sequential 6 --repeats 5 --baseline /tmp/before \
        --baseline-name "HEAD~3"

``--sequential K`` measures the work itself, steadier than any time on a shared machine: one server process,
K students one after another (each a new session through the whole lecture, as each student of a class is),
the server's CPU seconds over their page runs and each step's, repeated ``--repeats`` times after a warm-up
round of K (so the shared work every class finds done is done); it reports every repeat and the median.  A
teacher's tab stays connected meanwhile (Streamlit drops its compiled page scripts whenever no session is
connected, which never happens during a class).  With ``--baseline`` the other checkout is served beside this
one and every student runs the lecture on both, one after the other, so that both are measured under the same
load of the machine; the ratio of each round is reported with their median.

Writes ``benchmarks/results/class.json`` (and prints the table) with the load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: the lecture: (step name, url path of the page, whether the step then clicks "Add arc")
LECTURE = (
    ("Home", "home", False),
    ("Structure", "structure", False),
    ("Kernel", "kernel", False),
    ("Clustering", "clustering", False),
    ("Segments lab", "segments", False),
    ("add an arc", "structure", True),
    ("Kernel again", "kernel", False),
)
ARCS = re.compile(r"· (\d+) arcs")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    log: Path, timeout: float = 120, ttl: float = 60, cwd: Path = ROOT
) -> tuple[str, subprocess.Popen]:
    """``streamlit run app.py`` (of the checkout ``cwd``) on a free port as ``run-class.sh`` starts it (a
    closed session freed ``ttl`` seconds later), waited for until healthy."""
    port = _free_port()
    fh = open(log, "w")
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
            "--server.disconnectedSessionTTL",
            str(int(ttl)),
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=cwd,
        stdout=fh,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return url, proc
        except OSError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            raise SystemExit(f"streamlit did not start; see {log}")
        time.sleep(0.5)


def cpu_seconds(pid) -> float:
    """User + system CPU seconds of the server process(es) (a pid or a list of them) and their children."""
    import psutil

    if isinstance(pid, (list, tuple)):
        return sum(cpu_seconds(p) for p in pid)
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system + t.children_user + t.children_system


def machine() -> str:
    """The processor and the number of cores the bench ran on."""
    import platform

    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            name = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), name)
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, {platform.system()}"


def rss_bytes(pid) -> int:
    """Resident memory of the server process(es) (a pid or a list of them) and their children."""
    import psutil

    if isinstance(pid, (list, tuple)):
        return sum(rss_bytes(p) for p in pid)
    p = psutil.Process(pid)
    total = p.memory_info().rss
    for c in p.children(recursive=True):
        try:
            total += c.memory_info().rss
        except psutil.Error:
            pass
    return total


class Student:
    """One browser session speaking Streamlit's protocol."""

    def __init__(self, url, index: int, timeout: float):
        if isinstance(url, (list, tuple)):  # several processes: a student stays on one (sticky sessions)
            url = url[index % len(url)]
        self.ws_url = (
            url.replace("http://", "ws://").replace("https://", "wss://").rstrip("/") + "/_stcore/stream"
        )
        self.index, self.timeout = index, timeout
        self.pages: dict[str, str] = {}  # url path -> page script hash
        self.page_hash = ""
        self.times: dict[str, float] = {}
        self.bytes: dict[str, int] = {}
        self.failures: list[str] = []
        self.arcs_seen: int | None = None
        self.ws = None
        self.pid = None  # set: the server's CPU seconds of each step go to step_cpu
        self.step_cpu: dict[str, float] = {}

    async def __aenter__(self):
        import websockets

        self.ws = await websockets.connect(
            self.ws_url,
            subprotocols=["streamlit"],
            max_size=2**30,
            open_timeout=self.timeout,
            ping_interval=None,
        )
        return self

    async def __aexit__(self, *exc):
        await self.ws.close()

    async def run(self, page: str | None, widgets=()) -> tuple[float, int, list]:
        """One script run: send ``rerun_script`` (page by url path; ``widgets``: WidgetState protos), read
        until the run finishes; (seconds, bytes received, the elements drawn)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = ""
        if page is not None and page in self.pages:
            cs.page_script_hash = self.pages[page]
        elif page is not None:
            cs.page_name = page
        elif self.page_hash:
            cs.page_script_hash = self.page_hash
        for w in widgets:
            cs.widget_states.widgets.append(w)
        cs.context_info.timezone = "UTC"
        cs.context_info.locale = "en-US"
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        received, elements = 0, []
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout=self.timeout)
            received += len(raw)
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                self.pages = {p.url_pathname: p.page_script_hash for p in fm.new_session.app_pages}
                self.page_hash = fm.new_session.page_script_hash
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                elements.append(fm.delta.new_element)
            elif kind == "script_finished":
                status = fm.script_finished
                if status in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR):
                    if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                        self.failures.append("compile error")
                    return time.perf_counter() - t0, received, elements
            elif kind == "page_not_found":
                self.failures.append(f"page not found: {page}")

    def check(self, step: str, elements) -> None:
        for e in elements:
            k = e.WhichOneof("type")
            if k == "exception":
                self.failures.append(f"{step}: exception {e.exception.message[:120]}")
            elif k == "alert" and (
                "Something went wrong" in e.alert.body or "internal error" in e.alert.body
            ):
                self.failures.append(f"{step}: {e.alert.body[:120]}")

    @staticmethod
    def arcs(elements) -> int | None:
        for e in elements:
            if e.WhichOneof("type") == "markdown" and "Structure:" in e.markdown.body:
                m = ARCS.search(e.markdown.body)
                if m:
                    return int(m.group(1))
        return None

    async def lecture(self) -> None:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        for step, page, click in LECTURE:
            c0 = cpu_seconds(self.pid) if self.pid else 0.0
            try:
                if step == "Home":
                    took, got, els = await self.run(None)  # the first visit: the default page
                else:
                    took, got, els = await self.run(page)
                self.check(step, els)
                if click:
                    self.default_arcs = self.arcs(els)
                    button = next(
                        (
                            e.button
                            for e in els
                            if e.WhichOneof("type") == "button" and e.button.label == "Add arc"
                        ),
                        None,
                    )
                    if button is None:
                        self.failures.append(f"{step}: no 'Add arc' button")
                    else:
                        w = WidgetState(id=button.id)
                        if self.index % 2 == 0:  # even students add the arc; odd ones only rerun
                            w.trigger_value = True
                        t2, g2, els = await self.run(page, [w])
                        self.check(step, els)
                        took, got = took + t2, got + g2
                if step == "Kernel again":
                    self.arcs_seen = self.arcs(els)
                self.times[step], self.bytes[step] = took, got
                if self.pid:
                    self.step_cpu[step] = cpu_seconds(self.pid) - c0
            except (TimeoutError, OSError, Exception) as exc:  # noqa: BLE001 - a failure is counted
                self.failures.append(f"{step}: {type(exc).__name__} {str(exc)[:120]}")
                return


def _pct(values, q):
    v = sorted(values)
    if not v:
        return None
    k = (len(v) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


async def one_class(url: str, n: int, timeout: float) -> list[Student]:
    students = [Student(url, i, timeout) for i in range(n)]

    async def go(s):
        try:
            async with s:
                await s.lecture()
                await asyncio.sleep(0)
        except Exception as exc:  # noqa: BLE001 - could not connect
            s.failures.append(f"connect: {type(exc).__name__} {exc}")

    await asyncio.gather(*(go(s) for s in students))
    return students


def sequential_cpu(urls: list, pids: list, students: int, repeats: int, timeout: float) -> dict:
    """Server CPU per page run with ``students`` students one after another (each a new session through the
    lecture; even ones add the arc, odd ones rerun), ``repeats`` rounds after one warm-up round; the median.

    With several servers (another checkout's beside this one's) the students alternate between them, one
    student here, the same student there, so that every server works under the same load of the machine; each
    server's CPU is counted over its own students only."""
    steps = [
        {step: [] for step, _, _ in LECTURE} for _ in urls
    ]  # per server: each step's CPU ms, per student

    async def student(url, pid, i):
        s = Student(url, i, timeout)
        s.pid = pid
        try:
            async with s:
                await s.lecture()
        except Exception as exc:  # noqa: BLE001 - could not connect
            s.failures.append(f"connect: {type(exc).__name__} {exc}")
        return len(s.times) + sum(1 for st, _, c in LECTURE if c and st in s.times), s.failures, s.step_cpu

    async def one_round(counted=True):
        cpu, runs, failures = [0.0] * len(urls), [0] * len(urls), []
        for i in range(students):
            for j, (url, pid) in enumerate(zip(urls, pids)):
                c0 = cpu_seconds(pid)
                n, fail, step_cpu = await student(url, pid, i)
                cpu[j] += cpu_seconds(pid) - c0
                runs[j] += n
                failures += fail
                for step, sec in step_cpu.items():
                    if counted:
                        steps[j][step].append(1000 * sec)
        return [1000 * c / max(r, 1) for c, r in zip(cpu, runs)], runs, failures

    async def rounds():
        # a teacher's tab stays connected on every server throughout: Streamlit drops its compiled page
        # scripts whenever the last session disconnects, which in a class (everyone connected at once) does
        # not happen
        teachers = [Student(url, -1, timeout) for url in urls]
        for t in teachers:
            await t.__aenter__()
            await t.run(None)
        try:
            await one_round(counted=False)  # warm-up: the shared work every later student finds done
            per_run, failures = [], []
            for _ in range(repeats):
                ms, runs, fail = await one_round()
                per_run.append(ms)
                failures += fail
                print(
                    "  "
                    + "; ".join(
                        f"{m:.1f} ms of server CPU per page run ({n} runs)" for m, n in zip(ms, runs)
                    ),
                    flush=True,
                )
        finally:
            for t in teachers:
                await t.__aexit__()
        return per_run, failures

    per_run, failures = asyncio.run(rounds())
    out = {
        "students": students,
        "repeats": repeats,
        "server_cpu_ms_per_run": [r[0] for r in per_run],
        "median_ms_per_run": statistics.median(r[0] for r in per_run),
        "failures": failures,
        "step_cpu_ms_mean": {k: statistics.fmean(v) for k, v in steps[0].items() if v},
    }
    if len(urls) > 1:
        out["baseline_cpu_ms_per_run"] = [r[1] for r in per_run]
        out["baseline_median_ms_per_run"] = statistics.median(r[1] for r in per_run)
        out["baseline_step_cpu_ms_mean"] = {k: statistics.fmean(v) for k, v in steps[1].items() if v}
        out["ratio_per_round"] = [r[0] / r[1] for r in per_run]
        out["median_ratio"] = statistics.median(out["ratio_per_round"])
    return out


async def class_connected(
    url: str, n: int, timeout: float, pid: int | None
) -> tuple[list[Student], int | None]:
    """Run a class and measure the server's memory while every student is still connected."""
    students = [Student(url, i, timeout) for i in range(n)]
    done = asyncio.Event()
    finished = 0
    rss = None

    async def go(s):
        nonlocal finished
        try:
            async with s:
                await s.lecture()
                finished += 1
                if finished == n:
                    done.set()
                await done.wait()  # stay connected until the whole class is through
                if s.index == 0 and pid:
                    nonlocal rss
                    rss = rss_bytes(pid)
                await asyncio.sleep(0.5)
        except Exception as exc:  # noqa: BLE001 - could not connect
            s.failures.append(f"connect: {type(exc).__name__} {exc}")
            finished += 1
            if finished == n:
                done.set()

    await asyncio.gather(*(go(s) for s in students))
    return students, rss


def summarise(students: list[Student], n: int, wall: float) -> dict:
    steps = {}
    for step, _, _ in LECTURE:
        t = [s.times[step] for s in students if step in s.times]
        b = [s.bytes[step] for s in students if step in s.bytes]
        steps[step] = {
            "p50": _pct(t, 0.5),
            "p95": _pct(t, 0.95),
            "max": max(t) if t else None,
            "runs": len(t),
            "kib_p50": (_pct(b, 0.5) or 0) / 1024,
        }
    base = [s.default_arcs for s in students if getattr(s, "default_arcs", None) is not None]
    seen = {s.index: s.arcs_seen for s in students}
    default = base[0] if base else None
    isolated = default is not None and all(
        v == (default + 1 if i % 2 == 0 else default) for i, v in seen.items()
    )
    return {
        "students": n,
        "wall_seconds": wall,
        "steps": steps,
        "failures": [f for s in students for f in s.failures],
        "isolation": {
            "holds": bool(isolated),
            "default_arcs": default,
            "arcs_seen_even": sorted({v for i, v in seen.items() if i % 2 == 0}, key=str),
            "arcs_seen_odd": sorted({v for i, v in seen.items() if i % 2 == 1}, key=str),
        },
    }


def table(results: list[dict]) -> str:
    head = "| step | " + " | ".join(f"N = {r['students']}: p50 / p95 / max (s)" for r in results) + " |"
    rows = [head, "|---|" + "---|" * len(results)]
    for step, _, _ in LECTURE:
        cells = []
        for r in results:
            s = r["steps"][step]
            cells.append("–" if s["p50"] is None else f"{s['p50']:.2f} / {s['p95']:.2f} / {s['max']:.2f}")
        rows.append(f"| {step} | " + " | ".join(cells) + " |")
    rows.append("| failures | " + " | ".join(str(len(r["failures"])) for r in results) + " |")
    rows.append(
        "| isolation | "
        + " | ".join("holds" if r["isolation"]["holds"] else "BROKEN" for r in results)
        + " |"
    )
    rows.append(
        "| MiB per student | "
        + " | ".join(
            "–" if r.get("mib_per_student") is None else f"{r['mib_per_student']:.1f}" for r in results
        )
        + " |"
    )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", default="1,10,30", help="class sizes, comma separated (default 1,10,30)")
    ap.add_argument(
        "--url",
        help="a server already running, or several comma-separated (default: start `streamlit run app.py`)",
    )
    ap.add_argument(
        "--processes",
        type=int,
        default=1,
        help="server processes to start; students are spread over them, each kept on one",
    )
    ap.add_argument("--timeout", type=float, default=120, help="seconds a step may take before it fails")
    ap.add_argument(
        "--second-class",
        action="store_true",
        help="run each class size twice, the second after the first one's sessions expired, and "
        "report the server's memory during both",
    )
    ap.add_argument(
        "--classes",
        type=int,
        default=2,
        help="with --second-class: classes in a row, each after the previous one's sessions expired "
        "(memory that keeps growing class after class is a leak; memory that stops growing, a warm cache)",
    )
    ap.add_argument(
        "--ttl",
        type=float,
        default=60,
        help="seconds a closed session is kept (server.disconnectedSessionTTL, as run-class.sh sets it)",
    )
    ap.add_argument(
        "--sequential",
        type=int,
        default=0,
        metavar="K",
        help="measure only the server's CPU per page run: K students one after another, one process",
    )
    ap.add_argument("--repeats", type=int, default=5, help="with --sequential: rounds of K students (median)")
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        help="with --sequential: another checkout of the app (e.g. `git worktree add /tmp/before "
        "COMMIT`) served beside this one, the students alternating between the two",
    )
    ap.add_argument(
        "--baseline-name",
        metavar="TEXT",
        help="what the baseline is, written to the results (default: its folder's name)",
    )
    ap.add_argument("-o", "--output", default=str(RESULTS / "class.json"))
    args = ap.parse_args()
    if args.sequential:
        if args.url or args.processes != 1:
            raise SystemExit(
                "error: --sequential starts its own single server process (no --url, no --processes)"
            )
        return main_sequential(args)
    sizes = [int(x) for x in args.students.split(",") if x]
    load_before = os.getloadavg()
    procs = []
    if args.url:
        urls, pid = args.url.split(","), None
    else:
        RESULTS.mkdir(parents=True, exist_ok=True)
        urls = []
        for k in range(args.processes):
            u, p = start_server(RESULTS / f"class_server{k}.log", ttl=args.ttl)
            urls.append(u)
            procs.append(p)
        pid = [p.pid for p in procs]
    url = urls if len(urls) > 1 else urls[0]
    try:
        asyncio.run(one_class(urls, len(urls), args.timeout))  # warm-up: each process's first run, not timed
        results = []
        for n in sizes:
            before = rss_bytes(pid) if pid else None
            cpu0 = cpu_seconds(pid) if pid else None
            t0 = time.perf_counter()
            students, during = asyncio.run(class_connected(url, n, args.timeout, pid))
            r = summarise(students, n, time.perf_counter() - t0)
            if pid:  # server CPU per page run: the work itself, whatever the load around it
                runs = sum(
                    len(s.times) + sum(1 for st, _, c in LECTURE if c and st in s.times) for s in students
                )
                r["server_cpu_seconds"] = cpu_seconds(pid) - cpu0
                r["page_runs"] = runs
                r["server_cpu_ms_per_run"] = 1000 * r["server_cpu_seconds"] / max(runs, 1)
            if pid:
                r["rss_mib_before"] = before / 2**20
                r["rss_mib_during"] = during / 2**20 if during else None
                r["mib_per_student"] = (during - before) / 2**20 / n if during else None
            if args.second_class:  # each later class after the previous one's sessions expired
                r["later_classes"] = []
                for _ in range(max(1, args.classes - 1)):
                    time.sleep(args.ttl + 20)  # the sessions expire (checked every few seconds)
                    expired = rss_bytes(pid) if pid else None
                    students2, during2 = asyncio.run(class_connected(url, n, args.timeout, pid))
                    r2 = summarise(students2, n, 0)
                    r["later_classes"].append(
                        {
                            "failures": len(r2["failures"]),
                            "isolation": r2["isolation"]["holds"],
                            "rss_mib_after_previous_expired": expired / 2**20 if expired else None,
                            "rss_mib_during": during2 / 2**20 if during2 else None,
                            "worst_p95": max(s["p95"] or 0 for s in r2["steps"].values()),
                        }
                    )
                sc = r["later_classes"][0]
                r["second_class"] = {
                    "failures": sc["failures"],
                    "isolation": sc["isolation"],
                    "rss_mib_after_first_expired": sc["rss_mib_after_previous_expired"],
                    "rss_mib_during": sc["rss_mib_during"],
                    "worst_p95": sc["worst_p95"],
                }
            results.append(r)
            print(
                f"N = {n}: worst p95 {max(s['p95'] or 0 for s in r['steps'].values()):.2f} s, "
                f"server CPU {r.get('server_cpu_ms_per_run', float('nan')):.0f} ms per page run, "
                f"{len(r['failures'])} failures, isolation "
                f"{'holds' if r['isolation']['holds'] else 'BROKEN'}",
                flush=True,
            )
            if args.second_class and pid:
                sc = r["second_class"]
                print(
                    f"  memory: {r['rss_mib_before']:.0f} MiB before, {r['rss_mib_during']:.0f} MiB during "
                    "the "
                    f"first class, {sc['rss_mib_after_first_expired']:.0f} MiB after its sessions expired, "
                    f"{sc['rss_mib_during']:.0f} MiB during the second ({sc['failures']} failures)",
                    flush=True,
                )
                for k, later in enumerate(r["later_classes"][1:], start=3):
                    print(
                        f"  class {k}: {later['rss_mib_after_previous_expired']:.0f} MiB after the previous "
                        f"one expired, {later['rss_mib_during']:.0f} MiB during it",
                        flush=True,
                    )
    finally:
        stop_servers(procs)
    out = {
        "lecture": [s for s, _, _ in LECTURE],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "processes": len(urls),
        "url": args.url or f"streamlit run app.py ({len(urls)} process(es))",
        "classes": results,
    }
    Path(args.output).write_text(json.dumps(out, indent=1))
    print(table(results))
    print(f"load average before {load_before}, after {out['load_after']}; written to {args.output}")


def stop_servers(procs) -> None:
    """Terminate the server processes this run started (killed when one does not stop within 10 s)."""
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main_sequential(args) -> None:
    """``--sequential K``: the server's CPU per page run, K students one after another, ``--repeats`` rounds
    (and the same for ``--baseline``'s checkout, alternating)."""
    load_before = os.getloadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    dirs = [ROOT] + ([Path(args.baseline).resolve()] if args.baseline else [])
    servers = []
    try:
        for k, d in enumerate(dirs):
            servers.append(start_server(RESULTS / f"class_server{k}.log", ttl=args.ttl, cwd=d))
        urls, pids = [u for u, _ in servers], [p.pid for _, p in servers]
        asyncio.run(one_class(urls, len(urls), args.timeout))  # each process's first run, not counted
        r = sequential_cpu(urls, pids, args.sequential, args.repeats, args.timeout)
    finally:
        stop_servers([proc for _, proc in servers])
    out = {
        "lecture": [s for s, _, _ in LECTURE],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "processes": 1,
        "baseline": (args.baseline_name or Path(args.baseline).name) if args.baseline else None,
        "sequential": r,
    }
    Path(args.output).write_text(json.dumps(out, indent=1))
    for step in r["step_cpu_ms_mean"]:  # a step's CPU (add an arc: its two runs), mean over students
        print(
            f"  {step:14s} {r['step_cpu_ms_mean'][step]:6.1f} ms"
            + (f"   baseline {r['baseline_step_cpu_ms_mean'][step]:6.1f} ms" if args.baseline else "")
        )
    print(
        f"median {r['median_ms_per_run']:.1f} ms of server CPU per page run over {args.repeats} rounds of "
        f"{args.sequential} students one after another"
        + (
            f"; the baseline {r['baseline_median_ms_per_run']:.1f} ms, ratio {r['median_ratio']:.3f} (median "
            "of the "
            "rounds' ratios)"
            if args.baseline
            else ""
        )
        + f"; {len(r['failures'])} failures; load average before {load_before}, after {out['load_after']}; "
        f"written to {args.output}"
    )


if __name__ == "__main__":
    main()
