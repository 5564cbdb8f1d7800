"""bnfk_core.serving.serve: the operator's folders confine what a visitor reads and writes; refusals of paths
outside are one sentence that is the same whether the path exists or not; FIFOs are refused without being
opened; writes are atomic and never replace a file unless asked; the temporary-file store keeps to its
caps."""

from __future__ import annotations

import os
import threading
import time

import pytest

from bnfk_core.serving.serve import (
    CONFIG_ENV,
    DATA_ENV,
    OUTPUT_ENV,
    OUTSIDE_READ,
    OUTSIDE_WRITE,
    FileStore,
    ServeError,
    ServePolicy,
    echo,
)


@pytest.fixture
def dirs(tmp_path):
    data, out, other = tmp_path / "data", tmp_path / "out", tmp_path / "other"
    for d in (data, out, other):
        d.mkdir()
    (data / "t.csv").write_text("a,b\n1,2\n")
    (data / "sub").mkdir()
    (data / "sub" / "u.csv").write_text("a\nx\n")
    (other / "secret.csv").write_text("user,password\nroot,hunter2\n")
    (data / "link.csv").symlink_to(other / "secret.csv")
    (data / "dirlink").symlink_to(other)
    return data, out, other


def test_off_by_default_and_from_env_or_config(tmp_path, dirs, monkeypatch):
    data, out, _ = dirs
    monkeypatch.chdir(tmp_path)
    off = ServePolicy.from_config({})
    assert not off.reads and not off.writes
    with pytest.raises(ServeError, match="does not read files"):
        off.data_file(str(data / "t.csv"))
    with pytest.raises(ServeError, match="does not write files"):
        off.output_file("x.csv")
    on = ServePolicy.from_config({DATA_ENV: str(data), OUTPUT_ENV: str(out)})
    assert on.data_dir == data.resolve() and on.output_dir == out.resolve()
    conf = tmp_path / "serve.toml"
    conf.write_text(f'[serve]\ndata_dir = "{data}"\noutput_dir = "{out}"\n')
    via_file = ServePolicy.from_config({CONFIG_ENV: str(conf)})
    assert via_file == on
    assert not ServePolicy.from_config(
        {DATA_ENV: str(tmp_path / "missing")}
    ).reads  # a folder that is not there


def test_reads_stay_inside_the_data_folder(dirs):
    data, out, other = dirs
    pol = ServePolicy(data.resolve(), out.resolve())
    assert pol.data_file("t.csv") == str(data.resolve() / "t.csv")
    assert pol.data_file(str(data / "sub" / "u.csv")) == str(data.resolve() / "sub" / "u.csv")
    assert pol.data_file("sub/../t.csv") == str(data.resolve() / "t.csv")
    assert pol.relative(pol.data_file("sub/u.csv")) == os.path.join("sub", "u.csv")
    assert pol.data_files() == ["t.csv"]  # the top level; not the link that points outside
    outside = [
        "/etc/passwd",
        "/etc/shadow",
        "/nonexistent/x.csv",
        "../other/secret.csv",
        "link.csv",
        "dirlink/secret.csv",
        "dirlink/nope.csv",
        str(other / "secret.csv"),
        str(other / "nope.csv"),
        "/proc/self/environ",
        os.path.expanduser("~/.ssh/id_rsa"),
        ".",
        "/",
        "a\x00b",
        "x" * 5000,
    ]
    for p in outside:
        with pytest.raises(ServeError) as exc:
            pol.data_file(p)
        assert str(exc.value) == OUTSIDE_READ, p  # the same sentence, existing or not


def test_special_files_are_refused_without_opening(dirs):
    data, out, _ = dirs
    fifo = data / "pipe.csv"
    os.mkfifo(fifo)
    pol = ServePolicy(data.resolve(), out.resolve())
    t0 = time.monotonic()
    for p in ("pipe.csv", "sub", "missing.csv"):
        with pytest.raises(ServeError) as exc:
            pol.data_file(p)
        assert p in str(exc.value) and str(exc.value).count(". ") == 0
    assert time.monotonic() - t0 < 2  # opening the FIFO would block forever
    assert "pipe.csv" not in pol.data_files()


def test_writes_only_into_the_output_folder_atomically(dirs):
    data, out, other = dirs
    pol = ServePolicy(data.resolve(), out.resolve())
    src = data / "t.csv"
    written = pol.write_copy(str(src), "done.csv")
    assert written == str(out.resolve() / "done.csv") and (out / "done.csv").read_bytes() == src.read_bytes()
    with pytest.raises(ServeError, match="already exists"):  # no silent replace
        pol.write_copy(str(data / "sub" / "u.csv"), "done.csv")
    assert (out / "done.csv").read_bytes() == src.read_bytes()
    pol.write_copy(str(data / "sub" / "u.csv"), "done.csv", replace=True)  # the user confirmed
    assert (out / "done.csv").read_text() == "a\nx\n"
    (out / "link_out.csv").symlink_to(other / "secret.csv")
    for p in (
        "/tmp/evil.csv",
        "../other/secret.csv",
        str(other / "new.csv"),
        "link_out.csv",
        ".",
        "/etc/passwd",
    ):
        with pytest.raises(ServeError) as exc:
            pol.write_copy(str(src), p, replace=True)
        assert str(exc.value) == OUTSIDE_WRITE, p
    assert (other / "secret.csv").read_text().startswith("user,password") and not (other / "new.csv").exists()
    with pytest.raises(ServeError, match="does not exist"):
        pol.write_copy(str(src), "nope/x.csv")
    same = ServePolicy(data.resolve(), data.resolve())
    with pytest.raises(ServeError, match="input file itself"):
        same.write_copy(str(src), "t.csv", replace=True, not_same_as=str(src))
    assert sorted(os.listdir(out)) == ["done.csv", "link_out.csv"]  # no temporary file left


def test_echo_cuts_and_cleans():
    assert echo("x" * 10_000) == "x" * 79 + "…" and echo("a\nb\x00") == "a?b?" and echo("short") == "short"


def test_file_store_caps_by_count_and_bytes_lru_and_cleans_up(tmp_path):
    store = FileStore(tmp_path / "s", max_files=3, max_bytes=250)
    paths = []
    for i in range(3):
        paths.append(store.put(f"f{i}.csv", bytes([65 + i]) * 60))
        os.utime(paths[-1], (1000 + i, 1000 + i))
    store.touch(paths[0])  # f0 used again: f1 is now the oldest
    store.put("f3.csv", b"D" * 60)
    names = sorted(p.name for p in (tmp_path / "s").iterdir())
    assert names == ["f0.csv", "f2.csv", "f3.csv"]
    store.put("big.csv", b"E" * 200)  # bytes cap: the older ones go, the new one stays
    assert sum(p.stat().st_size for p in (tmp_path / "s").iterdir()) <= 250
    assert (tmp_path / "s" / "big.csv").exists()
    store.remove_all()
    assert list((tmp_path / "s").iterdir()) == []


def test_file_store_is_safe_under_threads(tmp_path):
    store = FileStore(tmp_path / "s", max_files=5, max_bytes=10**6)
    threads = [threading.Thread(target=store.put, args=(f"t{i}.csv", b"x" * 100)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(list((tmp_path / "s").iterdir())) <= 5


def test_file_store_files_are_removed_when_the_process_exits_cleanly(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from bnfk_core.serving.serve import FileStore; s = FileStore(sys.argv[1], 5, 10**6); "
        "s.put('a.csv', b'x'); s.put('b.csv', b'y'); print(sorted(p.name for p in s.folder.iterdir()))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "s")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "['a.csv', 'b.csv']" in out.stdout, out.stderr
    assert list((tmp_path / "s").iterdir()) == []  # atexit removed them
    (tmp_path / "s" / "other.csv").write_text("not ours")  # a file this process did not write stays
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "s")], cwd=root, capture_output=True, timeout=60
    )
    assert [p.name for p in (tmp_path / "s").iterdir()] == ["other.csv"]


def test_no_replace_write_works_without_hard_links_and_still_never_replaces(dirs, monkeypatch):
    """A file system without hard links (os.link -> EPERM): the copy lands by an exclusive create, and a
    file that appears at the target between the check and the write is still not replaced."""
    import errno

    import bnfk_core.serving.serve as serve

    data, out, other = dirs
    pol = ServePolicy(data.resolve(), out.resolve())

    def no_links(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(serve.os, "link", no_links)
    src = data / "t.csv"
    pol.write_copy(str(src), "done.csv")
    assert (out / "done.csv").read_bytes() == src.read_bytes()

    real_output_file = ServePolicy.output_file

    def racing(self, text, **kw):  # the check passes, then someone else writes the file
        target = real_output_file(self, text, **kw)
        (out / "raced.csv").write_text("theirs\n")
        return target

    monkeypatch.setattr(ServePolicy, "output_file", racing)
    with pytest.raises(ServeError, match="already exists"):
        pol.write_copy(str(src), "raced.csv")
    assert (out / "raced.csv").read_text() == "theirs\n"
    assert sorted(os.listdir(out)) == ["done.csv", "raced.csv"]  # no temporary file left
