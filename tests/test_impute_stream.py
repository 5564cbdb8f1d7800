"""`impute --chunksize`: a CSV imputed a block of records at a time gives the file and the
probabilities of the in-memory path byte for byte -- quoted fields with delimiters, quotes and line breaks,
padding, blank lines, CRLF and a byte-order mark, latin-1 text, discretized columns (median or label),
medians whose value is written two ways, blocks of any size -- on one process or a Dask LocalCluster."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from bnfk_core import cli
from bnfk_core.analyses.impute import stream as impute_stream
from bnfk_core.analyses.impute.completion import complete_file, impute_with_model
from bnfk_core.data import table as bnfk_data
from bnfk_core.data.reading import block_records, open_text, scan_blocks
from bnfk_core.data.table import read_table
from bnfk_core.errors import DataError
from bnfk_core.network.formats import read_model


# The files below write NA, ?, nan and blanks for missing cells: every reader here takes --na-values
# default-list (the default is the empty field only).
def main(argv):
    argv = list(argv)
    if argv and argv[0] in ("learn", "impute") and "--na-values" not in argv:
        argv += ["--na-values", "default-list"]
    return cli.main(argv)


def load_csv(*args, **kwargs):
    kwargs.setdefault("na_values", "default-list")
    return bnfk_data.load_csv(*args, **kwargs)


def impute_file(*args, **kwargs):
    kwargs.setdefault("na_values", "default-list")
    return impute_stream.impute_file(*args, **kwargs)


def _file(tmp_path, *, seed=0, n=150, newline="\r\n", bom=True, encoding="utf-8", name="d.csv"):
    """A messy file: an unused quoted column with line breaks, a padded numeric column (discretized, its
    values written as '2' and '2.0'), a nominal column with delimiters and quotes, a class; missing tokens; a
    blank line."""
    rng = np.random.default_rng(seed)
    rows = [["note", " x ", "cat, quoted", "y", "class"]]
    for i in range(n):
        c = str(rng.choice(["a, b", ' c "q" ', "d", "é"]))
        x = int(rng.integers(0, 30)) + (10 if c == "d" else 0)
        xs = f"  {x}.0 " if rng.random() < 0.5 else str(x)
        y = f"{rng.normal() * 3 + (c == 'd') * 5:.2f}"
        note = "line one\nline two" if i % 17 == 3 else ('said "hi"' if i % 11 == 0 else f"n{i}")
        if i > 5 and rng.random() < 0.15:
            xs = str(rng.choice(["NA", " NA ", "", "?"]))
        if i > 5 and rng.random() < 0.12:
            c = ""
        if i > 5 and rng.random() < 0.1:
            y = "nan"
        rows.append([note, xs, c, y, str(rng.choice(["p", "q"]))])
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator=newline).writerows(rows[:60])
    buf.write(newline)  # a blank line inside the file
    csv.writer(buf, lineterminator=newline).writerows(rows[60:])
    path = tmp_path / name
    data = buf.getvalue().encode(encoding)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


def _model(tmp_path, path):
    mpath = tmp_path / "m.json"
    assert (
        main(
            [
                "learn",
                str(path),
                "--structure",
                "tree",
                "--drop-columns",
                "note",
                "--class-column",
                "class",
                "--max-levels",
                "10",
                "--quiet",
                "-o",
                str(mpath),
            ]
        )
        == 0
    )
    return mpath


def _in_memory(model, path, fill_numeric="median"):
    data = load_csv(str(path), model=model, class_column="class", drop_columns=["note"], max_levels=10)
    done = complete_file(impute_with_model(model, data), read_table(str(path)), fill_numeric=fill_numeric)
    return done.to_bytes(), done.probabilities_csv(), list(data.notes) + done.notes


@pytest.mark.parametrize("fill", ["median", "label"])
@pytest.mark.parametrize("block_rows", [1, 9, 100_000])
@pytest.mark.parametrize("newline,bom", [("\r\n", True), ("\n", False)])
def test_blocks_give_the_in_memory_file_byte_for_byte(tmp_path, fill, block_rows, newline, bom):
    path = _file(tmp_path, newline=newline, bom=bom)
    model = read_model(str(_model(tmp_path, path)))
    want, want_p, want_notes = _in_memory(model, path, fill)
    out, probs = tmp_path / "out.csv", tmp_path / "p.csv"
    res = impute_file(
        model,
        str(path),
        str(out),
        probabilities=str(probs),
        fill_numeric=fill,
        block_rows=block_rows,
        class_column="class",
        drop_columns=["note"],
        max_levels=10,
    )
    assert out.read_bytes() == want
    assert probs.read_bytes() == want_p
    assert res["notes"] == want_notes
    assert res["imputed_cells"] > 20 and res["rows"] == 150
    if block_rows == 1:
        assert res["blocks"] > 10  # really in blocks (a record spanning lines is never cut)


@pytest.mark.parametrize("seed", [3, 4])
def test_the_median_of_a_value_written_two_ways_follows_the_row_order(tmp_path, seed, monkeypatch):
    """Rows holding the bin's median value write it as '2' and '  2.0 '; which text is the median depends on
    the order of the rows (the in-memory rule: sort by (value, row)), which the counts alone cannot tell."""
    from bnfk_core.analyses.impute import stream as impute_stream

    looked_up = []
    real = impute_stream._resolve_ambiguous
    monkeypatch.setattr(
        impute_stream, "_resolve_ambiguous", lambda *a: (looked_up.append(list(a[5])), real(*a))[1]
    )
    path = _file(tmp_path, seed=seed)
    model = read_model(str(_model(tmp_path, path)))
    want, _, _ = _in_memory(model, path)
    out = tmp_path / "o.csv"
    impute_file(
        model, str(path), str(out), block_rows=5, class_column="class", drop_columns=["note"], max_levels=10
    )
    assert looked_up and looked_up[0]  # the file has such medians (else the test proves nothing)
    assert out.read_bytes() == want


def test_latin1_file_is_read_as_latin1_with_the_same_note(tmp_path):
    path = _file(tmp_path, encoding="latin-1", bom=False, name="l.csv")
    model = read_model(str(_model(tmp_path, path)))
    with pytest.warns(UserWarning, match="latin-1"):
        want, _, want_notes = _in_memory(model, path)
    out = tmp_path / "o.csv"
    with pytest.warns(UserWarning, match="latin-1"):
        res = impute_file(
            model,
            str(path),
            str(out),
            block_rows=10,
            class_column="class",
            drop_columns=["note"],
            max_levels=10,
        )
    assert out.read_bytes() == want
    assert any("latin-1" in n for n in res["notes"]) and sorted(res["notes"]) == sorted(want_notes)


def test_blocks_cut_only_between_records():
    text = 'a,b\n1,"x\ny"\n2,"p\n""q"""\n3,z\n'
    recs, starts, plain = block_records(text, ",", 1, "t")
    assert recs == [["a", "b"], ["1", "x\ny"], ["2", 'p\n"q"'], ["3", "z"]] and starts == [1, 2, 4, 6]
    assert not plain
    assert block_records("a,b\n\n1,2\n", ",", 5, "t") == ([["a", "b"], [], ["1", "2"]], [5, 6, 7], True)


def test_scan_never_splits_a_quoted_field(tmp_path):
    p = tmp_path / "q.csv"
    body = "a,b\n" + "".join(f'{i},"multi\nline {i}"\n' for i in range(200))
    p.write_text(body)
    tf = open_text(str(p))
    blocks = scan_blocks(tf, 64)
    assert len(blocks) > 50
    got = []
    for b in blocks:
        with open(p, "rb") as fh:
            fh.seek(b.start)
            text = fh.read(b.end - b.start).decode()
        recs, starts, _ = block_records(text, ",", b.first_line, "q")
        got += list(zip(map(tuple, recs), starts))
    want = list(csv.reader(io.StringIO(body, newline="")))
    assert [r for r, _ in got] == [tuple(r) for r in want]
    assert [s for _, s in got][:4] == [1, 2, 4, 6]


def test_bad_rows_and_files_are_refused_like_the_in_memory_reader(tmp_path):
    path = _file(tmp_path, bom=False, newline="\n")
    model = read_model(str(_model(tmp_path, path)))
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[80] += ",extra"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DataError) as mem:
        load_csv(str(bad), model=model, class_column="class", drop_columns=["note"], max_levels=10)
    with pytest.raises(DataError) as st:
        impute_file(
            model,
            str(bad),
            str(tmp_path / "o.csv"),
            block_rows=7,
            class_column="class",
            drop_columns=["note"],
            max_levels=10,
        )
    assert str(st.value) == str(mem.value)
    assert not (tmp_path / "o.csv").exists()  # nothing half-written
    u16 = tmp_path / "u16.csv"
    u16.write_bytes("a,b\n1,2\n".encode("utf-16"))
    with pytest.raises(DataError, match="UTF-16"):
        impute_file(model, str(u16), str(tmp_path / "o.csv"))
    with pytest.raises(DataError, match="File not found"):
        impute_file(model, str(tmp_path / "nope.csv"), str(tmp_path / "o.csv"))


def test_cli_chunksize_writes_the_same_file_and_refuses_unknown_values(tmp_path, capsys):
    path = _file(tmp_path, bom=False, newline="\n")
    mpath = _model(tmp_path, path)
    common = [
        "--model",
        str(mpath),
        "--class-column",
        "class",
        "--drop-columns",
        "note",
        "--max-levels",
        "10",
    ]
    capsys.readouterr()
    assert main(["impute", str(path), *common, "-o", str(tmp_path / "a.csv")]) == 0
    mem = json.loads(capsys.readouterr().out)
    assert (
        main(["impute", str(path), *common, "-o", str(tmp_path / "b.csv"), "--chunksize", "10", "--quiet"])
        == 0
    )
    st = json.loads(capsys.readouterr().out)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    for key in ("rows", "imputed_cells", "imputed_per_column", "fill_numeric", "notes"):
        assert st[key] == mem[key], key
    text = path.read_text(encoding="utf-8").replace(",d,", ",zzz,", 1)  # a state the model's 'cat' lacks
    bad = tmp_path / "unknown.csv"
    bad.write_text(text, encoding="utf-8")
    assert main(["impute", str(bad), *common, "-o", str(tmp_path / "c.csv"), "--chunksize", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error:") and "zzz" in err


def test_dask_local_cluster_gives_the_same_file(tmp_path, spawn_safe_main):
    distributed = pytest.importorskip("distributed")
    path = _file(tmp_path, n=400)
    model = read_model(str(_model(tmp_path, path)))
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    p1, p2 = tmp_path / "p1.csv", tmp_path / "p2.csv"
    opts = dict(class_column="class", drop_columns=["note"], max_levels=10, block_rows=40)
    a = impute_file(model, str(path), str(one), probabilities=str(p1), **opts)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        b = impute_file(
            model, str(path), str(two), probabilities=str(p2), engine="dask", client=client, **opts
        )
    assert one.read_bytes() == two.read_bytes() and p1.read_bytes() == p2.read_bytes()
    assert b["engine"] == "dask" and b["blocks"] == a["blocks"] > 5
    assert {k: v for k, v in a.items() if k not in ("seconds", "engine")} == {
        k: v for k, v in b.items() if k not in ("seconds", "engine")
    }


@pytest.mark.parametrize(
    "text",
    [
        "a,b\r1,x\r2,\r,y\r1,\r",  # old Mac line ends
        "a,b\n1,x\n2,\n,y",  # no line end at the end
        "a,b\r\n1,x\n2,\r\n,y\n",  # mixed line ends
        "a , b\n 1 , x\n2,  \n , y\n",  # padding
        "a;b\n1;x\n2;\n;y\n",  # semicolons
        "a,b\n1,x\n2,\n,y\n\n\n",  # blank lines at the end
        'a,b\n"1","x"\n"2",""\n,"y"\n',  # quoted cells
    ],
    ids=["cr", "no-last-newline", "mixed", "padding", "semicolon", "blank-end", "quoted"],
)
def test_small_odd_files_match_the_in_memory_file(tmp_path, text):
    base = tmp_path / "base.csv"
    base.write_text("a,b\n1,x\n2,y\n1,y\n2,x\n1,x\n", encoding="utf-8")
    mpath = tmp_path / "m.json"
    assert main(["learn", str(base), "--structure", "tree", "--quiet", "-o", str(mpath)]) == 0
    model = read_model(str(mpath))
    path = tmp_path / "odd.csv"
    path.write_bytes(text.encode("utf-8"))
    want = complete_file(
        impute_with_model(model, load_csv(str(path), model=model)), read_table(str(path))
    ).to_bytes()
    for rows in (1, 1000):
        impute_file(model, str(path), str(tmp_path / "o.csv"), block_rows=rows)
        assert (tmp_path / "o.csv").read_bytes() == want
