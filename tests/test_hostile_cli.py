"""Safe to serve, the core and CLI side: hostile inputs get one ``error: ...`` line and exit code 2,
quickly, never an ``internal error`` and never a hang.

* only regular files are opened: FIFOs, devices, sockets and folders are refused by a ``stat`` before any
  ``open`` (a FIFO would block the open, ``/dev/zero`` would be read forever) -- by every reader;
* Dask: every malformed scheduler address is one sentence; a socket that accepts and never answers is refused
  after ``--dask-timeout``;
* session files: recognised by parsing (sorted keys, other indentation), hostile JSON refused in one sentence,
  settings bounded like the app's widgets, the session's network used by every subcommand that needs one;
* width: a 50,000-column CSV and a class column of 100,000 levels are refused (or bounded) before counting;
* echoed values are cut to ~80 characters (a 100 MB string never becomes a 100 MB line).

Whatever could hang if the guard broke runs in a subprocess with a timeout, so every test is bounded in time.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bnfk_core.cli import main
from bnfk_core.data.dask_runner import check_address
from bnfk_core.data.files import NOT_FOUND, NOT_REGULAR, open_regular, regular_file_problem
from bnfk_core.data.limits import guard_tables, memory_limit_set
from bnfk_core.errors import DataError, bounded, shorten
from bnfk_core.learning.structure import guard_width
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit
from bnfk_core.serving.session_files import (
    DataRef,
    SessionError,
    is_session_file,
    parse_session,
    read_session,
    session_dict,
)
from bnfk_core.serving.settings import REPORT_SETTINGS, SETTINGS

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
NOT_REGULAR_WORDS = (
    "cannot be read as a regular file; bnfk reads only regular files (no folders, pipes or devices)."
)
CSV = "a,b,c,label\nx,1,p,yes\ny,2,q,no\nx,2,p,yes\ny,1,q,no\nx,2,q,yes\ny,1,p,no\nx,2,q,no\ny,1,p,yes\n"
ERROR_LINE = re.compile(r"error: [^\n]+\n")


def _one_error_line(code: int, err: str) -> str:
    """The message of an ``error:`` line after checking the shape: exit code 2, exactly one line, no
    traceback, no internal error, at most ~1000 characters."""
    assert code == 2, (code, err)
    assert ERROR_LINE.fullmatch(err), err[:500]
    assert "internal error" not in err and "Traceback" not in err, err[:500]
    assert len(err) <= 1100, len(err)
    return err[len("error: ") : -1]


def _err(capsys, argv) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    return _one_error_line(code, err)


_RUNNER = """
import contextlib, io, json, sys, time
from bnfk_core.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    out.append([code, err.getvalue(), time.perf_counter() - t0])
print(json.dumps(out))
"""


def _run_cli(cases: list, timeout: float = 180) -> list:
    """Run ``main(argv)`` for each argv in one fresh interpreter (a hang fails the test after ``timeout``)."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(cases)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ====================================================================== only regular files
@pytest.fixture()
def specials(tmp_path):
    """A FIFO, a listening Unix socket, a folder, a device and a missing path (each also under
    .json/.parquet)."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    fifo_json = tmp_path / "pipe.json"
    os.mkfifo(fifo_json)
    fifo_pq = tmp_path / "pipe.parquet"
    os.mkfifo(fifo_pq)
    sock_path = tmp_path / "s.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(sock_path))
    srv.listen(1)
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    yield {
        "fifo": str(fifo),
        "fifo_json": str(fifo_json),
        "fifo_parquet": str(fifo_pq),
        "socket": str(sock_path),
        "folder": str(folder),
        "zero": "/dev/zero",
        "null": "/dev/null",
    }
    srv.close()


def test_regular_file_problem_and_open_regular(specials, tmp_path):
    ok = tmp_path / "ok.csv"
    ok.write_text(CSV)
    assert regular_file_problem(ok) is None
    assert regular_file_problem(tmp_path / "missing.csv") == NOT_FOUND
    for kind in ("fifo", "socket", "folder", "zero", "null"):
        assert regular_file_problem(specials[kind]) == NOT_REGULAR, kind
    with open_regular(ok) as fh:
        assert fh.read() == CSV.encode()
    t0 = time.perf_counter()
    with pytest.raises(
        OSError, match="not a regular file"
    ):  # opened without blocking, refused on the descriptor
        open_regular(specials["fifo"])
    assert time.perf_counter() - t0 < 5
    with pytest.raises(ValueError):
        open_regular(ok, "w")


_CORE_READERS = """
import json, sys, time
from bnfk_core.data.reading import open_text
from bnfk_core.data.table import load_csv, read_table
from bnfk_core.network.formats import read_model
from bnfk_core.serving.session_files import is_session_file, read_session
from bnfk_core.data.reading import file_layout
from bnfk_core.data.stream import read_counts
paths = json.loads(sys.argv[1])
out = {}
for name, path in paths.items():
    for reader in (load_csv, read_table, file_layout, read_counts, open_text, read_model, read_session):
        t0 = time.perf_counter()
        try:
            reader(path)
            res = "accepted"
        except Exception as exc:
            res = f"{type(exc).__name__}: {exc}"
        out[f"{name} {reader.__name__}"] = [res, time.perf_counter() - t0]
    out[f"{name} is_session_file"] = [is_session_file(path), 0.0]
print(json.dumps(out))
"""


def test_every_core_reader_refuses_special_files_at_once(specials):
    """load_csv, read_table, the streaming reader (CSV and Parquet), imputation in blocks, models and session
    files: a FIFO, a socket, a folder, /dev/zero and /dev/null are refused in one sentence without being
    opened (a subprocess: a reader that opened the FIFO would block until the timeout)."""
    proc = subprocess.run(
        [sys.executable, "-c", _CORE_READERS, json.dumps(specials)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(res) == 7 * 8
    for key, (msg, seconds) in res.items():
        assert seconds < 5, (key, seconds)
        if key.endswith("is_session_file"):
            assert msg is False, key
            continue
        assert msg.split(":")[0] in ("DataError", "ModelError", "SessionError"), (key, msg)
        assert NOT_REGULAR_WORDS.split(";")[0] in msg, (key, msg)
        # the same words for every kind: nothing says which kind of special file it is
        assert not re.search(
            r"directory|fifo|socket|device", msg.split(":", 1)[1].replace("devices", ""), re.I
        ), (key, msg)


def test_cli_refuses_fifos_devices_sockets_and_folders(specials, tmp_path):
    out = str(tmp_path / "m.json")
    model = str(tmp_path / "hv.json")
    assert (
        main(
            [
                "learn",
                HV,
                "--structure",
                "tree",
                "--missing-policy",
                "category",
                "--class-column",
                "class",
                "-o",
                model,
                "--quiet",
            ]
        )
        == 0
    )
    cases = []
    for kind in ("fifo", "fifo_json", "fifo_parquet", "socket", "folder", "zero", "null"):
        p = specials[kind]
        cases += [
            ["learn", p, "--structure", "tree", "-o", out],
            ["learn", p, "--structure", "tree", "--chunksize", "10", "-o", out],
            ["loglik", HV, "--model", p, "--missing-policy", "category"],
            ["impute", p, "--model", model, "--chunksize", "5", "-o", str(tmp_path / "c.csv")],
            ["report", p, "-o", str(tmp_path / "r.html")],
        ]
    res = _run_cli(cases)
    for argv, (code, err, seconds) in zip(cases, res):
        msg = _one_error_line(code, err)
        assert "cannot be read as a regular file" in msg and seconds < 10, (argv, msg, seconds)


# ====================================================================== Dask
MALFORMED = [
    "garbage",
    "http://127.0.0.1:8786",
    "tcp://[::1",
    "tcp://host:99999",
    "",
    "   ",
    "tcp://",
    "tcp://:8786",
    "tcp://127.0.0.1:",
    "tcp://127.0.0.1:abc",
    "tcp://127.0.0.1:0",
    "tcp://a b:8786",
    "tcp://127.0.0.1:8786/path?q=1",
    "udp://127.0.0.1:8786",
    "tcp://user@127.0.0.1:8786",
    "\x00\x01",
    "tcp://" + "x" * 10**6 + ":8786",
]


@pytest.mark.parametrize("address", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_scheduler_addresses_are_one_sentence(capsys, tmp_path, address):
    t0 = time.perf_counter()
    msg = _err(
        capsys,
        [
            "learn",
            HV,
            "--structure",
            "tree",
            "--engine",
            "dask",
            "--scheduler",
            address,
            "-o",
            str(tmp_path / "m.json"),
        ],
    )
    assert time.perf_counter() - t0 < 10  # refused before the file is read
    assert msg.startswith("The Dask scheduler address") and "tcp://10.0.0.5:8786" in msg, msg
    assert len(msg) < 400
    with pytest.raises(DataError):
        check_address(address)


def test_well_formed_addresses_parse():
    assert check_address("tcp://127.0.0.1:8786") == ("tcp", "127.0.0.1", 8786)
    assert check_address("10.0.0.5:8786") == ("tcp", "10.0.0.5", 8786)
    assert check_address("tls://[::1]:8786") == ("tls", "::1", 8786)
    assert check_address(" TCP://sched.example.org:1 ") == ("tcp", "sched.example.org", 1)


class _Server:
    """A TCP server on loopback that accepts connections and then does ``behaviour`` with each: ``silent``
    (never answers), ``close`` (closes at once), ``partial`` (sends one byte, then nothing)."""

    def __init__(self, behaviour: str):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.behaviour, self.conns = behaviour, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self.behaviour == "close":
                c.close()
                continue
            if self.behaviour == "partial":
                c.sendall(b"\x01")
            self.conns.append(c)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def test_a_scheduler_that_never_answers_is_refused_after_the_timeout(tmp_path):
    out = str(tmp_path / "m.json")
    model = str(tmp_path / "hv.json")
    assert (
        main(["learn", HV, "--structure", "tree", "--missing-policy", "category", "-o", model, "--quiet"])
        == 0
    )
    servers = {b: _Server(b) for b in ("silent", "close", "partial")}
    try:
        cases = [
            [
                "learn",
                HV,
                "--structure",
                "tree",
                "--engine",
                "dask",
                "--scheduler",
                f"tcp://127.0.0.1:{servers[b].port}",
                "--dask-timeout",
                "1",
                "-o",
                out,
            ]
            for b in servers
        ]
        cases.append(
            [
                "mmd",
                HV,
                HV,
                "--model",
                model,
                "--missing-policy",
                "category",
                "--engine",
                "dask",
                "--scheduler",
                f"127.0.0.1:{servers['silent'].port}",
                "--dask-timeout",
                "1.5",
            ]
        )
        t0 = time.perf_counter()
        res = _run_cli(cases, timeout=150)
        assert time.perf_counter() - t0 < 150
    finally:
        for s in servers.values():
            s.close()
    msgs = [_one_error_line(code, err) for code, err, _ in res]
    assert "accepted the connection but did not answer within 1 s" in msgs[0], msgs[0]
    assert "closed the connection without answering" in msgs[1], msgs[1]
    assert "did not finish connecting within 7 s" in msgs[2], msgs[2]
    assert res[0][2] < 20 and res[1][2] < 20 and res[2][2] < 30  # 1 s (+ imports), 2 x 1 s + 5 s
    assert "did not answer within 1.5 s" in msgs[3], msgs[3]


def test_dask_timeout_flag_is_bounded(capsys):
    msg = _err(
        capsys,
        ["learn", HV, "--structure", "tree", "--engine", "dask", "--dask-timeout", "0", "-o", "x.json"],
    )
    assert "--dask-timeout" in msg
    msg = _err(
        capsys,
        ["learn", HV, "--structure", "tree", "--engine", "dask", "--dask-timeout", "nan", "-o", "x.json"],
    )
    assert "--dask-timeout" in msg


# ====================================================================== session files
def _session_doc(settings=None) -> dict:
    ref = DataRef(name="mine.csv", content=CSV.encode(), class_column="label")
    feats = ref.load().without_class()
    dag = DAG(["a", "b", "c"], [("a", "b")])
    return session_dict(ref, dag, "smoothed", fit(dag, feats), settings)


def _write(path: Path, doc, **dump) -> str:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, **dump), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "dump",
    [dict(sort_keys=True), dict(sort_keys=True, indent=8), dict(separators=(",", ":"))],
    ids=["sorted", "sorted-indented", "compact"],
)
def test_a_session_is_recognised_by_parsing(capsys, tmp_path, dump):
    doc = _session_doc()
    doc["data"]["csv"] = doc["data"]["csv"] + "\n" * 5000  # the schema key lies beyond the first 4 KB
    doc["data"]["sha256"] = DataRef(name="x", content=doc["data"]["csv"].encode()).sha256
    path = _write(tmp_path / "saved.session", doc, **dump)  # any file name
    assert is_session_file(path)
    # every subcommand that needs a model takes the session's network (no --model)
    for argv in (
        ["loglik", path],
        ["features", path, "-o", str(tmp_path / "phi.npz")],
        ["mmd", path, path],
        ["impute", path, "-o", str(tmp_path / "done.csv")],
        ["kernel", path, "-o", str(tmp_path / "K.npy")],
    ):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, (argv, err)
        assert "error" not in err
    assert json.loads(out)["output"].endswith("K.npy")


def test_a_model_subcommand_without_model_or_session_says_so(capsys, tmp_path):
    for cmd in ("loglik", "features"):  # impute learns the default network instead (test_cli_contract.py)
        argv = [cmd, HV] + (
            ["-o", str(tmp_path / ("x.npz" if cmd == "features" else "x.csv"))] if cmd != "loglik" else []
        )
        msg = _err(capsys, argv)
        assert msg.startswith(f"'{cmd}' needs a network: give --model M.bif"), msg
    assert _err(capsys, ["mmd", HV, HV]).startswith("'mmd' needs a network")


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE_SESSIONS = {
    "deep nesting": lambda d: json.dumps(d)[:-1] + ', "x": ' + _nested(2000) + "}",
    "deep nesting (100,000)": lambda d: json.dumps(d)[:-1] + ', "x": ' + _nested(100_000) + "}",
    "params is a list": lambda d: json.dumps({**d, "params": []}),
    "params is an object": lambda d: json.dumps({**d, "params": {"a": 1}}),
    "version is text": lambda d: json.dumps({**d, "version": "1"}),
    "version is true": lambda d: json.dumps({**d, "version": True}),
    "data is a list": lambda d: json.dumps({**d, "data": []}),
    "structure is text": lambda d: json.dumps({**d, "structure": "a->b"}),
    "model is a list": lambda d: json.dumps({**d, "model": []}),
    "cpt of text": lambda d: json.dumps(
        {**d, "model": {**d["model"], "variables": [{**v, "cpt": "x"} for v in d["model"]["variables"]]}}
    ),
    "settings is a list": lambda d: json.dumps({**d, "settings": [1]}),
    "4,000-digit setting": lambda d: (
        json.dumps(d)[:-1] + ', "settings": {"imp_repeats": ' + "9" * 4000 + "}}"
    ),
    "4,000-digit cpt": lambda d: json.dumps(d).replace("0.5", "9" * 4000, 1),
    "long float": lambda d: json.dumps(d)[:-1] + ', "z": 1' + "0" * 400 + ".5}",
    "1e999": lambda d: json.dumps(d)[:-1] + ', "z": 1e999}',
    "NaN": lambda d: json.dumps(d)[:-1] + ', "z": NaN}',
    "-Infinity": lambda d: json.dumps(d)[:-1] + ', "z": -Infinity}',
    "huge string name": lambda d: json.dumps({**d, "data": {**d["data"], "name": "n" * 10**7}}).replace(
        '"sha256"', '"ignored"'
    ),
    "huge params": lambda d: json.dumps({**d, "params": "p" * 10**7}),
    "huge key": lambda d: json.dumps({**d, "settings": {"k" * 10**6: {"a": 1}}}),
    "not json": lambda d: "{" + "x" * 10**6,
    "bad utf-8": lambda d: b"{\xff\xfe",
    "top level list": lambda d: "[" + json.dumps(d) + "]",
}


@pytest.mark.parametrize("name", list(HOSTILE_SESSIONS))
def test_hostile_session_files_are_one_sentence(capsys, tmp_path, name):
    text = HOSTILE_SESSIONS[name](_session_doc())
    path = tmp_path / "s.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    t0 = time.perf_counter()
    if name in ("not json", "bad utf-8", "top level list"):  # not a session: read as a CSV, refused as one
        msg = _err(capsys, ["loglik", str(path), "--model", HV])
    else:
        with pytest.raises(SessionError):
            read_session(path)
        with pytest.raises(SessionError):
            parse_session(path.read_bytes(), "s.json")
        msg = (
            _err(capsys, ["report", str(path), "-o", str(tmp_path / "r.html")])
            if is_session_file(path)
            else _err(capsys, ["loglik", str(path), "--model", HV])
        )
    assert time.perf_counter() - t0 < 60
    assert len(msg) < 1000, len(msg)


def test_hostile_session_messages_name_the_field(tmp_path):
    d = _session_doc()
    cases = {
        "params is a list": "params [] is not one of",
        "version is text": "session version '1'",
        "4,000-digit setting": "a number of 4,000 digits",
        "NaN": "holds the number NaN",
        "deep nesting": "nested too deeply",
        "1e999": "a number too large",
        "huge params": "params 'ppppp",
    }
    for name, words in cases.items():
        with pytest.raises(SessionError) as info:
            parse_session(HOSTILE_SESSIONS[name](d), "s.json")
        assert words in str(info.value), (name, str(info.value))
        assert len(str(info.value)) < 400


def test_session_settings_are_bounded_like_their_widgets(capsys, tmp_path):
    settings = {
        "imp_repeats": 1_000_000_000,
        "kernel_rows": 10**9,
        "clu_restarts": 0,
        "imp_test": [0.3] * 1000,
        "imp_seed": -1,
        "clu_seed": 7,
        "proto_k": 2.5,
        "seg_rows": True,
        "memory_gib": 1e300,
    }
    s = parse_session(json.dumps(_session_doc(settings)), "s.json")
    assert s.settings == {"clu_seed": 7}
    assert len(s.notes) == len(settings) - 1
    note = next(n for n in s.notes if "imp_repeats" in n)
    assert "must be from 1 to 20" in note and note.startswith("s.json: Setting imp_repeats = 1000000000")
    assert any("kernel_rows" in n and "from 2 to 2000" in n for n in s.notes)
    # the CLI says so on stderr, and `report --set` refuses out-of-range values before any work
    path = _write(tmp_path / "s.json", _session_doc(settings))
    assert main(["loglik", path]) == 0
    err = capsys.readouterr().err
    assert "warning: s.json: Setting imp_repeats = 1000000000 must be from 1 to 20; left out." in err
    t0 = time.perf_counter()
    msg = _err(capsys, ["report", path, "--set", "imp_repeats=1000000000", "-o", str(tmp_path / "r.html")])
    assert msg == "--set imp_repeats=1000000000: imp_repeats must be from 1 to 20."
    msg = _err(capsys, ["report", path, "--set", "kernel_rows=" + "9" * 5000, "-o", str(tmp_path / "r.html")])
    assert "kernel_rows must be a number from 2 to 2000" in msg and len(msg) < 300
    assert time.perf_counter() - t0 < 30


def test_every_numeric_setting_has_bounds_and_refuses_hostile_values():
    for key, s in REPORT_SETTINGS.items():
        if isinstance(s.default, bool) or not isinstance(s.default, (int, float)):
            continue
        assert s.lo is not None and s.hi is not None, key
        assert s.parse(s.default) == s.default
        for bad in (
            s.hi * 10 + 1,
            s.lo - 1,
            float("nan"),
            float("inf"),
            int("9" * 4000),
            "9" * 4000,
            [],
            {},
            None,
        ):
            with pytest.raises(ValueError, match="from"):
                s.parse(bad)
    assert SETTINGS["kernel_rows"].parse("2000") == 2000
    from bnfk_core.serving import settings

    assert settings.SETTINGS is SETTINGS and settings.Setting is type(SETTINGS["kernel_rows"])


# ====================================================================== width
def test_guards_compute_the_bytes_they_refuse():
    with memory_limit_set(2**30):
        guard_width("tree", 11_000)  # 8 * 11,000^2 = 0.9 GiB: fits 1 GiB
        with pytest.raises(Exception, match=r"Chow–Liu tree on 12,000 variables .* 1\.1 GiB"):
            guard_width("tree", 12_000)  # 8 * 12,000^2 = 1.07 GiB
        guard_width("kdb", 10**6)  # no n x n table
        with pytest.raises(Exception, match="variable-by-variable"):
            guard_width("hc", 6_000)  # 32 * 6,000^2 = 1.07 GiB
        guard_tables(5, 1000, 1000)  # 8 * 5 * 1000 * 1001 = 38 MiB
        with pytest.raises(
            Exception,
            match=r"need 1\.1 GiB \(3 variables x up to 10,000 parent configurations x up "
            r"to 4,999 states\)",
        ):
            guard_tables(3, 10_000, 4_999)  # 8 * 3 * 10,000 * 5,000 = 1.12 GiB


def test_a_50000_column_csv_is_refused_before_counting(capsys, tmp_path):
    path = tmp_path / "wide.csv"
    n = 50_000
    with open(path, "w") as fh:
        fh.write(",".join(f"c{j}" for j in range(n)) + "\n")
        for r in range(3):
            fh.write(",".join("ab"[(j + r) % 2] for j in range(n)) + "\n")
    t0 = time.perf_counter()
    msg = _err(capsys, ["learn", str(path), "--structure", "tree", "-o", str(tmp_path / "m.json")])
    assert msg == (
        "Chow–Liu tree on 50,000 variables of wide.csv needs about 18.6 GiB for its variable-by-variable "
        "tables, more than the memory limit of 4.0 GiB; drop columns, or raise --max-memory."
    )
    msg = _err(
        capsys,
        ["learn", str(path), "--structure", "hc", "--max-memory", "8G", "-o", str(tmp_path / "m.json")],
    )
    assert "74.5 GiB" in msg and "8.0 GiB" in msg
    msg = _err(capsys, ["report", str(path), "-o", str(tmp_path / "r.html")])
    assert msg.startswith("Chow–Liu tree on 50,000 variables")
    assert time.perf_counter() - t0 < 30  # the file is never loaded (that alone takes ~40 s)


def test_a_class_column_of_100000_levels_does_not_hang_the_cli(capsys, tmp_path):
    path = tmp_path / "ids.csv"
    with open(path, "w") as fh:
        fh.write("id,a,b\n")
        fh.writelines(f"k{i},{'xyz'[i % 3]},{'uv'[(i // 3) % 2]}\n" for i in range(100_000))
    t0 = time.perf_counter()
    # the class as a parent of every feature: padded kernel tables of 100,000 x 100,000 are refused, not
    # allocated
    msg = _err(
        capsys,
        [
            "prototypes",
            str(path),
            "--class-column",
            "id",
            "--structure",
            "tan",
            "--k",
            "3",
            "--max-memory",
            "1G",
        ],
    )
    assert (
        msg.startswith("The kernel's tables need ") and "100,000 states" in msg and "--max-memory" in msg
    ), msg
    # learning and fitting with it stay linear
    assert (
        main(
            [
                "learn",
                str(path),
                "--structure",
                "tan",
                "--class-column",
                "id",
                "--quiet",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert time.perf_counter() - t0 < 120
    from bnfk_core.analyses.cluster.clustering import MAX_DEFAULT_CLUSTERS, default_n_clusters
    from bnfk_core.data.table import load_csv

    assert default_n_clusters(load_csv(path, class_column="id")) == MAX_DEFAULT_CLUSTERS


# ====================================================================== echoes cut
def test_echoed_values_are_cut(capsys, tmp_path):
    huge = "x" * 10**8
    t0 = time.perf_counter()
    msg = _err(capsys, ["learn", huge, "--structure", "tree", "-o", str(tmp_path / "m.json")])
    assert len(msg) < 300 and "…" in msg
    msg = _err(
        capsys, ["learn", HV, "--structure", huge, "-o", str(tmp_path / "m.json")]
    )  # argparse's message
    assert len(msg) < 1100
    msg = _err(capsys, ["report", HV, "--set", "clu_algorithm=" + huge, "-o", str(tmp_path / "r.html")])
    assert len(msg) < 1100
    assert time.perf_counter() - t0 < 60
    assert len(str(DataError("File not found: " + huge))) <= 1000
    assert shorten("a" * 200) == "a" * 59 + "…" + "a" * 20
    assert bounded("short message") == "short message"


@pytest.mark.parametrize(
    "text, words",
    [
        ("{" + '"a":' + "[" * 5000 + "]" * 5000 + "}", "nesting too deep"),
        (
            '{"format": "bnfk-model", "version": 1, "variables": [{"name": "x", "states": ["a"], "cpt": [['
            + "9" * 5000
            + "]]}]}",
            "a number too long",
        ),
        (
            '{"format": "bnfk-model", "version": 1, "variables": [{"name": "x", "states": ["a"], "cpt": [['
            + "9" * 4000
            + "]]}]}",
            "is not a valid bnfk model file",
        ),
    ],
    ids=["deep", "5000 digits", "4000 digits"],
)
def test_hostile_model_files_are_one_sentence(capsys, tmp_path, text, words):
    path = tmp_path / "m.json"
    path.write_text(text)
    for argv in (
        ["loglik", HV, "--model", str(path)],
        ["kernel", HV, "--model", str(path), "-o", str(tmp_path / "K.npy")],
    ):
        msg = _err(capsys, argv)
        assert words in msg and "m.json" in msg, msg


def test_a_tls_scheduler_without_certificates_is_one_sentence_naming_them(tmp_path, capsys):
    """A tls:// address with no certificates in Dask's configuration is refused before any connection, in
    terms of what to set -- not Dask's internals ("TLS expects a `ssl_context` argument ...")."""
    import dask

    # distributed adds its defaults to dask's configuration when first imported: imported inside the
    # ``config.set`` below, they would go with the keys ``set`` removes on exit, and every later Dask
    # cluster of this process would fail (KeyError 'distributed')
    pytest.importorskip("distributed")

    data = tmp_path / "t.csv"
    data.write_text("a,b\nx,1\ny,2\nx,2\n")
    with dask.config.set({"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None}):
        code = main(
            [
                "learn",
                str(data),
                "-o",
                str(tmp_path / "m.json"),
                "--engine",
                "dask",
                "--scheduler",
                "tls://127.0.0.1:9",
            ]
        )
    err = capsys.readouterr().err
    assert code == 2
    assert "names no certificates for it (distributed.comm.tls.ca-file" in err and "ssl_context" not in err
