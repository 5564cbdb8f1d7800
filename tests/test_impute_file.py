"""`impute` changes nothing but missing cells: observed cells keep their text (padding,
quoting-equivalent content), the file keeps its column order (columns the model does not use too),
row order, blank lines and line ends; a discretized column is filled with the median of its bin or
the bin's label (``--fill-numeric``); the probabilities name the file's lines."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bnfk_core.analyses.impute.completion import complete_file, impute_with_model
from bnfk_core.analyses.impute.core import learn_model
from bnfk_core.cli import main as cli_main
from bnfk_core.data.table import load_csv, parse_interval, read_table
from bnfk_core.errors import DataError
from bnfk_core.network.formats import read_model, write_model

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
MISSING = {"", "NA", "N/A", "?", "nan"}


def main(argv):
    """The CLI with the file's missing tokens (NA, ?, nan, blanks) read as missing: --na-values
    default-list."""
    argv = list(argv)
    if argv and argv[0] in ("learn", "impute") and "--na-values" not in argv:
        argv += ["--na-values", "default-list"]
    return cli_main(argv)


def _records(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return list(csv.reader(fh))


def _file(tmp_path, seed=0, n=90, newline="\r\n") -> Path:
    """id (dropped), a padded numeric column x (discretized), a quoted nominal column, numeric y, class."""
    rng = np.random.default_rng(seed)
    rows = [["id", " x ", "cat, quoted", "y", "class"]]
    for i in range(n):
        c = str(rng.choice(["a, b", ' c "q" ', "d"]))
        x = f"  {rng.normal() + (2 if c == 'd' else 0):.3f} "
        y = f"{rng.normal() * 3 + (c == 'd') * 5:.2f}"
        if i > 5 and rng.random() < 0.15:
            x = rng.choice(["NA", " NA ", "", "?"])
        if i > 5 and rng.random() < 0.1:
            c = ""
        if i > 5 and rng.random() < 0.1:
            y = "nan"
        rows.append([f"r{i:03d}", x, c, y, str(rng.choice(["p", "q"]))])
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator=newline).writerows(rows[:40])
    buf.write(newline)  # a blank line inside the file
    csv.writer(buf, lineterminator=newline).writerows(rows[40:])
    path = tmp_path / "d.csv"
    path.write_bytes(buf.getvalue().encode("utf-8"))
    return path


def _learn(tmp_path, path, *extra) -> Path:
    mpath = tmp_path / "m.bif"
    code = main(
        [
            "learn",
            str(path),
            "--structure",
            "tree",
            "--drop-columns",
            "id",
            "--class-column",
            "class",
            "--max-levels",
            "10",
            "-o",
            str(mpath),
            *extra,
        ]
    )
    assert code == 0
    return mpath


def _impute(tmp_path, capsys, path, mpath, *extra) -> tuple[dict, Path, Path]:
    out, probs = tmp_path / "done.csv", tmp_path / "p.csv"
    code = main(
        [
            "impute",
            str(path),
            "--model",
            str(mpath),
            "--drop-columns",
            "id",
            "--class-column",
            "class",  # learn --class-column left it out of the model: the file keeps it as it is
            "--max-levels",
            "10",
            "-o",
            str(out),
            "--probabilities",
            str(probs),
            *extra,
        ]
    )
    stdout, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(stdout), out, probs


@pytest.mark.parametrize("fill", ["median", "label"])
def test_impute_changes_only_missing_cells(tmp_path, capsys, fill):
    path = _file(tmp_path)
    mpath = _learn(tmp_path, path)
    capsys.readouterr()
    res, out, _ = _impute(tmp_path, capsys, path, mpath, "--fill-numeric", fill)
    before, after = _records(path), _records(out)
    assert len(before) == len(after) and before[0] == after[0]  # header and every record, in order
    assert out.read_bytes().count(b"\r\n") == path.read_bytes().count(b"\r\n")  # line ends kept
    model = read_model(mpath)
    cols = [before[0].index(c) for c in before[0] if c.strip() in model.variables]
    changed = 0
    for a, b in zip(before, after):
        assert len(a) == len(b)
        for j, (u, v) in enumerate(zip(a, b)):
            if j in cols and a is not before[0] and u.strip() in MISSING:
                assert v.strip() not in MISSING
                changed += 1
            else:
                assert u == v, (u, v)  # byte for byte: padding, quotes, ids
    assert changed == res["imputed_cells"] > 0


def test_filled_values_are_the_most_probable_states(tmp_path, capsys):
    path = _file(tmp_path, seed=1)
    mpath = _learn(tmp_path, path)
    model = read_model(mpath)
    data = load_csv(
        path, drop_columns=["id"], class_column="class", model=model, max_levels=10, na_values="default-list"
    )
    truth = impute_with_model(model, data)
    capsys.readouterr()
    for fill in ("median", "label"):
        _, out, _ = _impute(tmp_path, capsys, path, mpath, "--fill-numeric", fill)
        back = load_csv(
            out,
            drop_columns=["id"],
            class_column="class",
            model=model,
            max_levels=10,
            na_values="default-list",
        )
        assert not back.has_missing
        assert (back.codes == truth.data.codes).all()  # every filled cell reads back as the arg-max state


def test_median_fill_is_the_lower_median_of_the_bin(tmp_path, capsys):
    path = _file(tmp_path, seed=2)
    mpath = _learn(tmp_path, path)
    capsys.readouterr()
    _, out, probs = _impute(tmp_path, capsys, path, mpath)
    before, after = _records(path), _records(out)
    model = read_model(mpath)
    j = before[0].index(" x ")
    states = model.states[model.variables.index("x")]
    assert all(parse_interval(s) for s in states)
    observed = [(float(r[j]), r[j].strip()) for r in before[1:] if r and r[j].strip() not in MISSING]
    p = pd.read_csv(probs, dtype={"filled": str, "imputed": str})
    px = p[p.column == "x"].drop_duplicates(["row"])
    assert len(px) > 0
    for line, state, filled in zip(px.line, px.imputed, px.filled):
        lo, hi, _, hi_closed = parse_interval(state)
        inside = sorted((v, t) for v, t in observed if lo <= v and (v < hi or (hi_closed and v == hi)))
        assert filled == inside[(len(inside) - 1) // 2][1]
        assert after[line - 1][j] == filled  # `line` is the row's line in the file (1-based)
        assert before[line - 1][j].strip() in MISSING


def test_probabilities_file_names_rows_lines_and_filled_text(tmp_path, capsys):
    path = _file(tmp_path, seed=3)
    mpath = _learn(tmp_path, path)
    capsys.readouterr()
    res, out, probs = _impute(tmp_path, capsys, path, mpath, "--fill-numeric", "label")
    p = pd.read_csv(probs, dtype={"filled": str, "imputed": str, "state": str}, keep_default_na=False)
    assert list(p.columns) == ["row", "line", "column", "imputed", "filled", "state", "probability"]
    assert (p.filled == p.imputed).all()  # label: the state itself
    np.testing.assert_allclose(p.groupby(["row", "column"]).probability.sum(), 1.0)
    table = read_table(path)
    assert (p.line.to_numpy() == table.lines[p.row.to_numpy()]).all()
    assert res["fill_numeric"] == "label"


def test_sample_file_round_trip_keeps_every_observed_cell(tmp_path, capsys):
    """house_votes_84 with '?' read as missing: only the '?' cells change, the class column is kept."""
    d = load_csv(HV, class_column="class", na_values="default-list")
    mpath = tmp_path / "hv.bif"
    write_model(learn_model(d.without_class(), structure="tree", params="smoothed"), mpath)
    out = tmp_path / "hv_done.csv"
    assert (
        main(
            [
                "impute",
                HV,
                "--model",
                str(mpath),
                "--class-column",
                "class",
                "-o",
                str(out),
                "--na-values",
                "default-list",
            ]
        )
        == 0
    )
    before, after = _records(HV), _records(out)
    assert before[0] == after[0] == list(d.variables)
    diff = [(u, v) for a, b in zip(before, after) for u, v in zip(a, b) if u != v]
    assert len(diff) == int((d.without_class().codes < 0).sum()) and all(u == "?" for u, _ in diff)


def test_complete_file_refuses_another_file(tmp_path):
    path = _file(tmp_path, seed=4)
    model = learn_model(
        load_csv(path, drop_columns=["id"], max_levels=10, na_values="default-list"),
        structure="tree",
        params="smoothed",
    )
    res = impute_with_model(
        model, load_csv(path, drop_columns=["id"], max_levels=10, model=model, na_values="default-list")
    )
    with pytest.raises(DataError, match="rows"):
        complete_file(res, read_table(text="a,b\n1,2\n"))


def test_read_table_keeps_raw_cells_and_bom(tmp_path):
    raw = '\ufeffa; b \r\n x ;"1;2"\r\n\r\n"multi\r\nline";NA\r\n'.encode("utf-8")
    t = read_table(raw)
    assert t.header == ("a", "b") and t.delimiter == ";" and t.newline == "\r\n" and t.bom
    assert t.cells("a") == [" x ", "multi\r\nline"] and list(t.lines) == [2, 4]
    assert t.to_bytes() == raw
    assert t.to_bytes({(1, "b"): "7"}) == raw.replace(b";NA", b";7")


# ---------------------------------------------------------------------- impute-benchmark's default grid
def test_impute_benchmark_default_grid_is_quick_and_names_the_full_grid(capsys):
    """No grid flags: 1 test ratio x 3 missing ratios x 2 repeats, progress on stderr naming --full-grid; the
    flag gives the thesis's 5 x 5 x 10 grid (checked on the parsed options, not run)."""
    import json as _json

    from bnfk_core.cli import main
    from bnfk_core.cli.impute import FULL_GRID, _grid

    hayes = Path(__file__).resolve().parents[1] / "sample_data" / "hayes_roth.csv"
    code = main(["impute-benchmark", str(hayes), "--class-column", "class", "--methods", "mode"])
    out, err = capsys.readouterr()
    assert code == 0, err
    res = _json.loads(out)
    assert len(res["grid"]) == 3 and {g["test_ratio"] for g in res["grid"]} == {0.2}
    assert "--full-grid" in err and "%]" in err and "--full-grid" in res["grid_note"]
    import argparse

    args = argparse.Namespace(
        full_grid=True, test_ratio=None, missing_ratio=None, repeats=None, methods="bn,mode,wknn"
    )
    trs, mrs, repeats, note = _grid(args)
    assert (len(trs), len(mrs), repeats) == (5, 5, 10) and "750 imputations" in note
    args.repeats = 1
    assert _grid(args)[2] == 1 and FULL_GRID["repeats"] == 10
