"""Tests of bnfk_core.data.table: load_csv on the sample datasets and on every kind of bad input."""

from __future__ import annotations

import io
import json
import re
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from bnfk_core.data.table import (
    MISSING_CATEGORY,
    CategoricalData,
    from_codes,
    interval_label,
    load_csv,
    parse_interval,
)
from bnfk_core.errors import BnfkError, DataError

# name: (rows, columns incl. class) -- the summary table of sample_data/README.md
SHAPES = {
    "breast_cancer": (286, 10),
    "hayes_roth": (160, 5),
    "house_votes_84": (435, 17),
    "lymphography": (148, 19),
    "primary_tumor": (339, 18),
    "spect": (267, 23),
    "tic_tac_toe": (958, 10),
    "nursery": (12960, 9),
    "letter": (20000, 17),
    "waveform_5000": (5000, 41),
    "mushroom": (8124, 23),
    "car": (1728, 7),
    "kr_vs_kp": (3196, 37),
    "zoo": (101, 17),
    "soybean_small": (47, 36),
    "soybean_large": (683, 36),
    "carcinoma": (118, 7),
}
#: samples without a label column (latent class reference data)
UNLABELLED = {"carcinoma"}
# missing cells under missing_policy="missing" with na_values="default-list" (the catalog's list for these
# samples); with the default na_values (the empty field only) none of the samples has a missing cell
MISSING = {
    "breast_cancer": 9,
    "primary_tumor": 225,
    "mushroom": 2480,
    "soybean_large": 2337,
    "house_votes_84": 392,
}


class Named(io.BytesIO):
    """Like Streamlit's UploadedFile: a BytesIO with a ``.name``."""

    def __init__(self, data: bytes, name: str):
        super().__init__(data)
        self.name = name


def model(variables, states):
    return SimpleNamespace(variables=tuple(variables), states=tuple(tuple(s) for s in states))


def error(match: str, *args, **kwargs) -> str:
    with pytest.raises(DataError, match=match) as info:
        load_csv(*args, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


# ====================================================================== sample data
@pytest.mark.parametrize("name", sorted(set(SHAPES) - UNLABELLED))
def test_sample_shapes(sample_path, name):
    rows, cols = SHAPES[name]
    for policy, na in (("missing", "default-list"), ("missing", None), ("category", None)):
        d = load_csv(sample_path(name), class_column="class", missing_policy=policy, na_values=na)
        assert (d.n_rows, d.n_vars) == (rows, cols)
        assert d.codes.shape == (rows, cols)
        assert d.variables[-1] == "class" and d.class_column == "class"
        assert d.source == f"{name}.csv"
        assert len(d.states) == cols and all(len(s) >= 1 for s in d.states)
        assert (d.codes < d.cardinalities).all() and (d.codes >= -1).all()
        expected_missing = (
            MISSING.get(name, 0)
            if na == "default-list"
            else _blank_cells(sample_path(name))
            if policy == "missing"
            else 0
        )
        assert int(d.missing_mask().sum()) == expected_missing
        assert list(d.frame.columns) == list(d.variables) and d.frame.shape == (rows, cols)


def _blank_cells(path) -> int:
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[1:]
    return sum(c.strip() == "" for r in rows if any(x.strip() for x in r) for c in r)


def test_na_values_decide_which_texts_are_missing():
    text = "a,b\n?,x\n,y\nNA,x\n?,y\n"
    d = load_csv(text=text)  # default: the empty field only
    assert d.states[0] == ("?", "NA") and d.codes[:, 0].tolist() == [0, -1, 1, 0]
    d = load_csv(text=text, na_values="default-list")
    assert d.states[0] == () or d.missing_mask()[:, 0].all()
    d = load_csv(text=text, na_values="NA")  # NA and the empty field missing, ? a category
    assert d.states[0] == ("?",) and d.codes[:, 0].tolist() == [0, -1, -1, 0]
    d = load_csv(text=text, na_values=["?"])
    assert d.states[0] == ("NA",) and d.codes[:, 0].tolist() == [-1, -1, 0, -1]
    d = load_csv(text=text, missing_policy="category")  # unchanged: every old token is the state '?'
    assert d.states[0] == ("?",) and d.codes[:, 0].tolist() == [0, 0, 0, 0]


def test_catalog_declares_the_na_values_of_samples_that_need_them(sample_path):
    import json

    cat = json.loads((sample_path("house_votes_84").parent / "catalog.json").read_text())
    for name, n in MISSING.items():
        d = load_csv(sample_path(name), class_column="class", na_values=cat[name].get("na_values"))
        assert int(d.missing_mask().sum()) == n


def test_house_votes_question_mark_is_a_category(sample_path):
    d = load_csv(sample_path("house_votes_84"), class_column="class", missing_policy="category")
    assert not d.has_missing
    for v, st in zip(d.variables[:-1], d.states[:-1]):
        assert st == ("n", "y", "?"), v
    assert int((d.codes[:, :-1] == 2).sum()) == 392
    counts = dict(zip(d.states[-1], np.bincount(d.labels())))
    assert counts == {"democrat": 267, "republican": 168}


def test_mushroom_missing_only_in_stalk_root(sample_path):
    d = load_csv(sample_path("mushroom"), class_column="class")
    per_col = dict(zip(d.variables, d.missing_mask().sum(axis=0)))
    assert per_col["stalk-root"] == 2480
    assert sum(per_col.values()) == 2480
    assert int((~d.complete_rows()).sum()) == 2480


def test_primary_tumor_missing_cells(sample_path):
    d = load_csv(sample_path("primary_tumor"), class_column="class")
    per_col = {v: int(n) for v, n in zip(d.variables, d.missing_mask().sum(axis=0)) if n}
    assert per_col == {"sex": 1, "histologic-type": 67, "degree-of-diffe": 155, "skin": 1, "axillar": 1}
    # numeric class labels in numeric order, class 9 absent
    assert d.states[-1] == tuple(str(k) for k in range(1, 23) if k != 9)
    # category policy: one extra state "?" listed last, only in columns with missing cells
    c = load_csv(sample_path("primary_tumor"), class_column="class", missing_policy="category")
    for v, st, st0 in zip(c.variables, c.states, d.states):
        if v in per_col:
            assert st == st0 + (MISSING_CATEGORY,)
        else:
            assert st == st0


def test_breast_cancer_and_soybean_missing(sample_path):
    d = load_csv(sample_path("breast_cancer"), class_column="class")
    per_col = {v: int(n) for v, n in zip(d.variables, d.missing_mask().sum(axis=0)) if n}
    assert per_col == {"node-caps": 8, "breast-quad": 1}
    s = load_csv(sample_path("soybean_large"), class_column="class")
    assert int((~s.complete_rows()).sum()) == 121
    assert s.missing_mask()[:, s.index("leaves")].sum() == 0


def test_nursery_class_counts(sample_path):
    d = load_csv(sample_path("nursery"), class_column="class")
    counts = dict(zip(d.states[-1], np.bincount(d.labels()).tolist()))
    assert counts == {
        "not_recom": 4320,
        "priority": 4266,
        "recommend": 2,
        "spec_prior": 4044,
        "very_recom": 328,
    }
    assert d.notes == ()


def test_letter_stays_nominal_in_numeric_order_and_is_fast(sample_path):
    path = sample_path("letter")
    load_csv(path, class_column="class")  # warm-up (imports, page cache)
    best = min(_timed(lambda: load_csv(path, class_column="class")) for _ in range(3))
    assert best < 1.0, f"letter.csv took {best:.2f}s"
    d = load_csv(path, class_column="class")
    for st in d.states[:-1]:
        assert st == tuple(str(k) for k in range(16))
    assert len(d.states[-1]) == 26
    assert not any("Discretized" in n for n in d.notes)
    # asking for fewer levels forces quantile bins
    b = load_csv(path, class_column="class", max_levels=8)
    assert all(parse_interval(s) for s in b.states[0])
    assert b.states[-1] == d.states[-1]  # the class column is never binned nor refused
    assert any("Class column 'class' has 26 classes" in n for n in b.notes)


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def test_waveform_discretized_into_four_quantile_bins(sample_path):
    d = load_csv(sample_path("waveform_5000"), class_column="class")
    assert d.states[-1] == ("0", "1", "2")
    for v, st in zip(d.variables[:-1], d.states[:-1]):
        assert len(st) == 4, v
        ivs = [parse_interval(s) for s in st]
        assert all(ivs), st
        assert [iv[3] for iv in ivs] == [False, False, False, True]  # only the last is closed
        assert all(a[1] == b[0] for a, b in zip(ivs, ivs[1:]))  # contiguous, ordered
        counts = np.bincount(d.codes[:, d.index(v)], minlength=4)
        assert counts.min() > 900  # quantile bins: roughly 1250 each
    assert any("Discretized 40 numeric column(s)" in n for n in d.notes)
    # first column: bins match the raw values
    raw = np.loadtxt(sample_path("waveform_5000"), delimiter=",", skiprows=1, usecols=0)
    ivs = [parse_interval(s) for s in d.states[0]]
    for value, code in zip(raw, d.codes[:, 0]):
        lo, hi, _, closed = ivs[code]
        assert lo <= value and (value < hi or (closed and value == hi))


def test_catalog_matches_files(sample_path, sample_dir):
    catalog = json.loads((sample_dir / "catalog.json").read_text())
    assert set(catalog) == {p.stem for p in sample_dir.glob("*.csv")} == set(SHAPES)
    for name, entry in catalog.items():
        assert set(entry) >= {
            "file",
            "title",
            "description",
            "class_column",
            "missing_policy",
            "rows",
            "columns",
        }
        assert "\n" not in entry["description"] and entry["title"]
        assert entry["missing_policy"] in ("missing", "category")
        assert (entry["rows"], entry["columns"]) == SHAPES[name]
        d = load_csv(
            sample_path(entry["file"]),
            class_column=entry["class_column"],
            missing_policy=entry["missing_policy"],
        )
        assert (d.n_rows, d.n_vars) == (entry["rows"], entry["columns"])
    assert catalog["house_votes_84"]["missing_policy"] == "category"
    assert catalog["primary_tumor"]["missing_policy"] == "category"
    assert catalog["breast_cancer"]["missing_policy"] == "category"


def test_sample_readme_keeps_provenance(sample_dir):
    shared_facts = [
        "CC BY 4.0",
        "M. Zwitter and M. Soklic",
        "LucasBoTang/Optimal_Classification_Trees",
        "## Provenance and checks",
        "## Summary table",
    ]
    text = (sample_dir / "README.md").read_text()
    for fact in shared_facts:
        assert fact in text
    assert "missing_policy" in text and "quantile" in text


# ====================================================================== formats
def test_bom_crlf(tmp_csv):
    p = tmp_csv(b"\xef\xbb\xbfa,b\r\nx,1\r\ny,2\r\n")
    d = load_csv(p)
    assert d.variables == ("a", "b")
    assert d.states == (("x", "y"), ("1", "2"))
    assert d.notes == ()


def test_crlf_line_numbers(tmp_csv):
    p = tmp_csv(b"a,b\r\nx,1\r\ny,2,3\r\n")
    error(r"Line 3 of data\.csv has 3 fields but the header has 2", p)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab(tmp_csv, sep):
    text = (
        sep.join(["a", "b", "c"])
        + "\n"
        + sep.join(["1,5", "x", "y"])
        + "\n"
        + sep.join(["2,5", "x", "z"])
        + "\n"
    )
    d = load_csv(tmp_csv(text))
    assert d.variables == ("a", "b", "c")
    assert d.states[0] == ("1,5", "2,5")
    assert d.n_rows == 2


def test_quoted_fields(tmp_csv):
    d = load_csv(tmp_csv('name,kind\n"Smith, J",a\n"Doe, K",b\n'))
    assert d.states[0] == ("Doe, K", "Smith, J")


def test_latin1_fallback_warns(tmp_csv):
    p = tmp_csv("city,size\nMünchen,big\nKöln,big\nBonn,small\n".encode("latin-1"))
    with pytest.warns(UserWarning, match="latin-1"):
        d = load_csv(p)
    assert d.states[0] == ("Bonn", "Köln", "München")
    assert any("latin-1" in n and "data.csv" in n for n in d.notes)


def test_utf8_has_no_warning(tmp_csv):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = load_csv(tmp_csv("city,size\nMünchen,big\nKöln,small\n"))
    assert d.states[0] == ("Köln", "München")


def test_utf16_with_bom(tmp_csv):
    d = load_csv(tmp_csv("a\tb\nx\t1\ny\t2\n".encode("utf-16")))
    assert d.variables == ("a", "b") and d.n_rows == 2


def test_whitespace_trimmed(tmp_csv):
    d = load_csv(tmp_csv(" a , b \n x ,1\nx,  2\n  y  , 1 \n"))
    assert d.variables == ("a", "b")
    assert d.states == (("x", "y"), ("1", "2"))
    assert d.codes.tolist() == [[0, 0], [0, 1], [1, 0]]


def test_trailing_delimiter_everywhere_is_ignored(tmp_csv):
    d = load_csv(tmp_csv("a,b,\nx,1,\ny,2,\n"))
    assert d.variables == ("a", "b")
    assert any("empty last column" in n for n in d.notes)


def test_blank_lines_are_reported_not_silently_dropped(tmp_csv):
    d = load_csv(tmp_csv("a,b\nx,1\n\ny,2\n\n\n"))
    assert d.n_rows == 2
    assert any("blank line" in n and "line 3" in n for n in d.notes)


# ---------------------------------------------------------------- buffers and sources
def test_uploaded_file_like_bytes():
    d = load_csv(Named(b"a,b\nx,1\ny,2\n", "upload.csv"))
    assert d.source == "upload.csv" and d.n_rows == 2


def test_plain_buffers_and_text():
    assert load_csv(io.BytesIO(b"a,b\nx,1\n")).source == "uploaded data"
    assert load_csv(io.StringIO("a,b\nx,1\n")).source == "uploaded data"
    d = load_csv(text="a;b\nx;1\ny;2\n")
    assert d.source == "uploaded data" and d.n_rows == 2
    assert load_csv(text="a,b\nx,1\n", source="pasted").source == "pasted"
    assert load_csv(b"a,b\nx,1\n").n_rows == 1


def test_str_with_line_breaks_is_a_path_not_csv_text(tmp_path):
    """a file name holding a newline used to be parsed as CSV rows."""
    name = str(tmp_path / "a,b\nx,1\ny,2\n.csv")
    msg = error(r"File not found: .*a,b\\nx,1\\ny,2\\n\.csv", name)
    assert "rows" not in msg and "column" not in msg
    error(r"File not found: 'a,b\\nx,1\\n'", "a,b\nx,1\n")  # shown escaped, on one line
    error(r"File not found", Path("a;b\r\nx;1\r\n"))


def test_a_path_with_a_line_break_that_exists_is_read(tmp_path):
    path = tmp_path / "two\nlines.csv"
    path.write_text("a,b\nx,1\n", encoding="utf-8")
    d = load_csv(str(path))
    assert d.source == repr("two\nlines.csv") and d.variables == ("a", "b") and d.n_rows == 1


def test_text_keyword_api():
    error(r"either a path or buffer or text=, not both", "x.csv", text="a,b\nx,1\n")
    error(r"takes a str of CSV text, not a bytes", text=b"a,b\nx,1\n")
    error(r"No data given")
    with pytest.raises(TypeError):
        load_csv("data.csv", "extra positional")  # everything but the input is keyword-only


def test_quoted_header_names_with_delimiters_and_line_breaks():
    """The delimiter is sniffed from parsed records, so quoted names cannot mislead it."""
    d = load_csv(text='"a\nb;c",d\n"x;y",1\n"x;y",2\n')
    assert d.variables == ("a\nb;c", "d") and d.states[0] == ("x;y",)
    t = load_csv(text='"p,q";r\n"1,2";x\n"3";y\n')
    assert t.variables == ("p,q", "r") and t.states[0] == ("1,2", "3")


def test_path_types(tmp_csv):
    p = tmp_csv("a,b\nx,1\n", name="mine.csv")
    assert load_csv(p).source == "mine.csv"
    assert load_csv(str(p)).source == "mine.csv"
    with open(p, "rb") as fh:
        assert load_csv(fh).source == "mine.csv"


def test_uploaded_file_bad_content_names_it():
    error(r"evil\.csv", Named(b"<html><body>nope</body></html>", "evil.csv"))
    error(r"Line 3 of up\.csv has 1 field but", Named(b"a,b\nx,1\ny\n", "up.csv"))


# ====================================================================== missing values
def test_missing_tokens_both_policies(tmp_csv):
    text = "a,b,c\nx,1,k\n,2,k\nNA,N/A,k\n?,nan,l\n y ,1,l\n"
    plain = load_csv(tmp_csv(text), class_column="c")  # default: only the empty field is missing
    assert plain.states[0] == ("?", "NA", "x", "y") and plain.codes[:, 0].tolist() == [2, -1, 1, 0, 3]
    d = load_csv(tmp_csv(text), class_column="c", na_values="default-list")
    assert d.states[:2] == (("x", "y"), ("1", "2"))
    assert d.codes[:, 0].tolist() == [0, -1, -1, -1, 1]
    assert d.codes[:, 1].tolist() == [0, 1, -1, -1, 0]
    assert d.frame["a"].isna().tolist() == [False, True, True, True, False]
    assert int(d.missing_mask().sum()) == 5
    c = load_csv(tmp_csv(text), class_column="c", missing_policy="category")
    assert c.states[:2] == (("x", "y", "?"), ("1", "2", "?"))
    assert c.codes[:, 0].tolist() == [0, 2, 2, 2, 1]
    assert not c.has_missing
    assert c.states[2] == ("k", "l")  # no missing cells -> no extra state


def test_missing_tokens_are_exact():
    d = load_csv(text="a,b\nNaN,n/a\nna,x\n")
    assert not d.has_missing
    assert d.states[0] == ("NaN", "na")


def test_missing_category_with_numbers_keeps_numeric_order():
    d = load_csv(text="a,b\n10,x\n2,y\n,x\n", missing_policy="category")
    assert d.states[0] == ("2", "10", "?")


# ====================================================================== state order
def test_natural_state_order():
    d = load_csv(text="num,word,mixed,neg\n10,b,10,-1.5\n2,a,a,2\n1,C,2,-10\n")
    assert d.states[0] == ("1", "2", "10")
    assert d.states[1] == ("C", "a", "b")
    assert d.states[2] == ("10", "2", "a")  # not all numbers -> lexicographic
    assert d.states[3] == ("-10", "-1.5", "2")
    assert d.codes[:, 0].tolist() == [2, 1, 0]


# ====================================================================== discretization
def test_quantile_bin_labels():
    text = "v,c\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(100))
    d = load_csv(text=text, class_column="c")
    assert d.states[0] == ("[0, 25)", "[25, 50)", "[50, 74)", "[74, 99]")
    assert np.bincount(d.codes[:, 0]).tolist() == [25, 25, 24, 26]
    assert d.codes[:, 0].tolist() == sorted(d.codes[:, 0].tolist())
    assert any("'v'" in n and "4 quantile bins" in n for n in d.notes)


def test_quantile_bins_decimals_missing_and_bin_count():
    rows = [f"{i / 10},{'ab'[i % 2]}" for i in range(60)] + [",a"]
    d = load_csv(text="v,c\n" + "\n".join(rows) + "\n", discretize_bins=3)
    assert d.states[0] == ("[0, 2)", "[2, 3.9)", "[3.9, 5.9]")
    assert d.codes[-1, 0] == -1
    c = load_csv(text="v,c\n" + "\n".join(rows) + "\n", discretize_bins=3, missing_policy="category")
    assert c.states[0] == ("[0, 2)", "[2, 3.9)", "[3.9, 5.9]", "?")
    assert c.codes[-1, 0] == 3


def test_ties_give_fewer_bins():
    values = [0] * 80 + list(range(1, 61))
    d = load_csv(text="v,c\n" + "".join(f"{x},a\n" for x in values))
    assert 2 <= len(d.states[0]) < 4
    assert any("fewer than 4 bins" in n for n in d.notes)


def test_interval_label_roundtrip():
    assert interval_label(0.1, 2.3, False) == "[0.1, 2.3)"
    assert interval_label(-0.0, 3.0, True) == "[0, 3]"
    assert parse_interval("[0.1, 2.3)") == (0.1, 2.3, True, False)
    assert parse_interval("(1e3,2e3]") == (1000.0, 2000.0, False, True)
    assert parse_interval("low") is None and parse_interval("[3, 1)") is None


@pytest.mark.parametrize("bins", [None, 0])
def test_discretization_off_refuses(bins):
    text = "v,c\n" + "".join(f"{i},a\n" for i in range(60))
    msg = error(r"Column 'v'", text=text, discretize_bins=bins)
    assert "discretization is off" in msg and "drop_columns" in msg


def test_identifier_column_refused():
    text = "id,c,d\n" + "".join(f"row{i},a,b\n" for i in range(60))
    msg = error(r"Column 'id' of uploaded data has 60 distinct values", text=text)
    assert "drop_columns=['id']" in msg
    d = load_csv(text=text, drop_columns=["id"])
    assert d.variables == ("c", "d")
    assert load_csv(text=text, drop_columns="id").variables == ("c", "d")
    assert load_csv(text=text, max_levels=60).cardinalities[0] == 60


# ====================================================================== bad input
def test_empty_file(tmp_csv):
    error(r"data\.csv is empty", tmp_csv(b""))
    error(r"data\.csv is empty", tmp_csv("  \n\n \r\n"))


def test_header_only(tmp_csv):
    error(r"data\.csv has a header but no data rows", tmp_csv("a,b,c\n"))
    error(r"has a header but no data rows", tmp_csv("a,b,c\n\n\n"))


def test_single_column(tmp_csv):
    error(r"data\.csv has only one column \('a'\)", tmp_csv("a\nx\ny\n"))
    error(r"only one column \('a b c'\)", tmp_csv("a b c\n1 2 3\n"))


def test_all_or_all_but_one_column_dropped(tmp_csv):
    p = tmp_csv("a,b\nx,1\n")
    error(r"No columns of data\.csv are left after drop_columns", p, drop_columns=["a", "b"])
    error(r"Only column 'b' of data\.csv is left", p, drop_columns=["a"])


def test_duplicate_headers(tmp_csv):
    error(r"Column name 'a' appears more than once in the header of data\.csv", tmp_csv("a,b, a\n1,2,3\n"))


def test_empty_header_name(tmp_csv):
    error(r"Column 2 of data\.csv has an empty name", tmp_csv("a,,c\n1,2,3\n"))


@pytest.mark.parametrize(
    "text,line,fields",
    [
        ("a,b,c\n1,2,3\n4,5\n", 3, 2),
        ("a,b,c\n1,2,3\n4,5,6\n7,8,9,10\n", 4, 4),
        ("\n\na,b,c\n1,2,3\n\n4,5,6,7\n", 6, 4),  # leading and interior blank lines still count
        ('a,b,c\n"x\ny",2,3\n1,2\n', 4, 2),  # a quoted line break spans lines 2-3
    ],
)
def test_ragged_rows_name_the_line(tmp_csv, text, line, fields):
    what = "1 field" if fields == 1 else f"{fields} fields"
    error(rf"Line {line} of data\.csv has {what} but the header has 3", tmp_csv(text))


def test_bad_quotes(tmp_csv):
    error(r"Line 2 of data\.csv cannot be parsed", tmp_csv('a,b\n"x"y,1\n'))
    error(r"data\.csv cannot be parsed", tmp_csv('a,b\n"x,1\ny,2\n'))


@pytest.mark.parametrize(
    "content,what",
    [
        (b"a,b\n\x00\x01\x02,\x00\n", "binary"),
        (b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)), "ZIP"),
        (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "PDF"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "PNG"),
        (bytes(range(1, 32)) * 20, "binary"),
    ],
)
def test_binary_content(tmp_csv, content, what):
    msg = error(r"data\.csv looks like", tmp_csv(content))
    assert what in msg


@pytest.mark.parametrize(
    "content",
    [
        "<!DOCTYPE html>\n<html><head><title>x</title></head><body>a,b</body></html>\n",
        "  <html>\n<body>\n1,2\n</body></html>",
        '<?xml version="1.0"?>\n<root/>\n',
    ],
)
def test_html_content(tmp_csv, content):
    error(r"data\.csv looks like an HTML/XML page", tmp_csv(content))


def test_nonexistent_path_and_directory(tmp_path):
    missing = tmp_path / "nope.csv"
    error(r"File not found: .*nope\.csv", missing)
    error(r"File not found: .*nope\.csv", str(missing))
    error(rf"{re.escape(str(tmp_path))} cannot be read as a regular file", tmp_path)
    error(r"the path is empty", "")


def test_unknown_class_column(tmp_csv):
    msg = error(
        r"Class column 'label' is not a column of data\.csv", tmp_csv("a,b\nx,1\n"), class_column="label"
    )
    assert "'a', 'b'" in msg


def test_unknown_drop_column(tmp_csv):
    error(
        r"drop_columns names 'zz', which is not a column of data\.csv",
        tmp_csv("a,b,c\nx,1,2\n"),
        drop_columns=["a", "zz"],
    )


def test_class_column_dropped(tmp_csv):
    error(
        r"Class column 'c' is also listed in drop_columns",
        tmp_csv("a,b,c\nx,1,2\n"),
        class_column="c",
        drop_columns=["c"],
    )


def test_class_column_all_missing(tmp_csv):
    p = tmp_csv("a,b,c\nx,1,\ny,2,?\nz,3,NA\n")
    error(r"Class column 'c' of data\.csv is empty", p, class_column="c", na_values="default-list")
    error(r"Class column 'c' of data\.csv is empty", p, class_column="c", missing_policy="category")
    assert load_csv(p).variables == ("a", "b", "c")  # fine as a plain (all-missing) feature


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"missing_policy": "drop"}, "missing_policy must be"),
        ({"discretize_bins": 1}, "discretize_bins must be"),
        ({"discretize_bins": -3}, "discretize_bins must be"),
        ({"discretize_bins": 2.5}, "discretize_bins must be"),
        ({"max_levels": 1}, "max_levels must be"),
    ],
)
def test_bad_options(kwargs, match):
    error(match, text="a,b\nx,1\n", **kwargs)


def test_unsupported_input_type():
    error(r"Cannot read data from a int", 42)


def test_data_error_is_a_bnfk_error():
    assert issubclass(DataError, BnfkError) and issubclass(DataError, ValueError)


@pytest.mark.filterwarnings("ignore:fuzz.csv is not valid UTF-8")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hst.binary(max_size=300) | hst.text(alphabet=',;\t\n\r"? ab1.-\x00<>é', max_size=300))
def test_never_a_traceback(content):
    try:
        d = load_csv(Named(content.encode() if isinstance(content, str) else content, "fuzz.csv"))
    except DataError as exc:
        assert str(exc)
    else:
        assert isinstance(d, CategoricalData)
        assert d.n_vars >= 2 and d.n_rows >= 1
        assert (d.codes < d.cardinalities).all()


# ====================================================================== model alignment
TEXT = "a,b,c\nx,10,k\ny,2,l\n,1,k\n"


def test_model_alignment_order_and_states():
    m = model(["b", "a", "c"], [["1", "2", "10", "99"], ["y", "x", "z"], ["l", "k"]])
    d = load_csv(text=TEXT, class_column="c", model=m)
    assert d.variables == ("b", "a", "c")
    assert d.states == m.states
    assert d.codes.tolist() == [[2, 1, 1], [1, 0, 0], [0, -1, 1]]
    assert d.class_column == "c"


def test_model_class_column_not_in_model_is_dropped_with_note():
    m = model(["b", "a"], [["1", "2", "10"], ["x", "y"]])
    d = load_csv(text=TEXT, class_column="c", model=m)
    assert d.variables == ("b", "a") and d.class_column is None
    assert any("'c'" in n and "dropped" in n for n in d.notes)


def test_model_extra_column_is_an_error():
    m = model(["a", "c"], [["x", "y"], ["k", "l"]])
    msg = error(
        r"Column\(s\) 'b' of uploaded data are not variables of the model",
        text=TEXT,
        class_column="c",
        model=m,
    )
    assert "drop_columns=['b']" in msg
    assert load_csv(text=TEXT, class_column="c", model=m, drop_columns=["b"]).variables == ("a", "c")


def test_model_missing_variable():
    m = model(["a", "b", "c", "d"], [["x", "y"], ["1", "2", "10"], ["k", "l"], ["u"]])
    error(r"Model variable 'd' missing from uploaded data", text=TEXT, model=m)


def test_model_unknown_value_names_variable_value_and_line(tmp_csv):
    m = model(["a", "b", "c"], [["x"], ["1", "2", "10"], ["k", "l"]])
    msg = error(
        r"Value 'y' of variable 'a' on line 3 of data\.csv is not a state of the model",
        tmp_csv(TEXT + "y,1,k\n"),
        model=m,
    )
    assert "states: x" in msg


def test_model_numeric_values_match_by_value():
    m = model(["a", "b", "c"], [["x", "y"], ["1", "2", "10"], ["k", "l"]])
    d = load_csv(text="a,b,c\nx,10.0,k\ny,02,l\n", model=m)
    assert d.codes[:, 1].tolist() == [2, 1]


def test_model_and_missing_category():
    m_plain = model(["a", "b", "c"], [["x", "y"], ["1", "2", "10"], ["k", "l"]])
    error(
        r"Missing value \(an empty field\) of variable 'a' on line 4",
        text=TEXT,
        model=m_plain,
        missing_policy="category",
    )
    m_q = model(["a", "b", "c"], [["x", "y", "?"], ["1", "2", "10"], ["k", "l"]])
    d = load_csv(text=TEXT, model=m_q, missing_policy="category")
    assert d.codes[2, 0] == 2 and not d.has_missing


def test_model_interval_states():
    m = model(["v", "c"], [["[0, 25)", "[25, 50)", "[50, 99]"], ["a", "b"]])
    d = load_csv(text="v,c\n0,a\n24.9,a\n25,b\n99,b\n120,b\n-3,a\n,a\n", model=m)
    assert d.codes[:, 0].tolist() == [0, 0, 1, 2, 2, 0, -1]
    assert any("1 value(s) below and 1 above" in n for n in d.notes)
    error(r"Value 'big' of variable 'v' on line 2", text="v,c\nbig,a\n", model=m)


def test_model_roundtrip_on_waveform(sample_path):
    d = load_csv(sample_path("waveform_5000"), class_column="class")
    m = model(d.variables, d.states)
    again = load_csv(sample_path("waveform_5000"), class_column="class", model=m)
    assert again.variables == d.variables and again.states == d.states
    assert np.array_equal(again.codes, d.codes)
    # a subset of the rows still maps into the same intervals
    head = "\n".join(Path(sample_path("waveform_5000")).read_text().splitlines()[:50]) + "\n"
    part = load_csv(text=head, class_column="class", model=m)
    assert np.array_equal(part.codes, d.codes[:49])


def test_bad_model_object():
    error(r"no usable \.variables and \.states", text=TEXT, model=object())
    error(r"3 variables but 2 state lists", text=TEXT, model=model(["a", "b", "c"], [["x"], ["1"]]))


# ====================================================================== CategoricalData
def test_subset_and_drop_keep_states(sample_path):
    d = load_csv(sample_path("car"), class_column="class")
    sub = d.subset(np.arange(5))
    assert sub.states == d.states and sub.n_rows == 5
    assert np.array_equal(sub.codes, d.codes[:5])
    mask = d.labels() == d.states[-1].index("vgood")
    vg = d.subset(mask)
    assert vg.n_rows == 65 and vg.states == d.states
    assert set(vg.frame["class"]) == {"vgood"}
    dropped = d.drop(["doors"])
    assert dropped.variables == tuple(v for v in d.variables if v != "doors")
    assert dropped.states == tuple(s for v, s in zip(d.variables, d.states) if v != "doors")
    assert dropped.class_column == "class"
    assert d.without_class().class_column is None and "class" not in d.without_class().variables
    with pytest.raises(DataError, match="'nope' is not in car.csv"):
        d.drop(["nope"])


def test_from_codes_roundtrip():
    d = load_csv(text="a,b\nx,1\ny,\n")
    e = from_codes(d.codes, d.variables, d.states)
    assert np.array_equal(e.codes, d.codes) and e.states == d.states
    assert d.fingerprint() == d.with_codes(d.codes).fingerprint()


def test_a_numeric_identifier_is_refused_like_a_text_one():
    """A column named as an identifier holding a different whole number in every row (the trial's ``id``)
    is refused in one sentence, as a text identifier is, instead of being binned into a feature; a
    measurement whose whole numbers happen to differ keeps its bins."""
    rows = "".join(f"{1000 + 7 * i},s{i % 4},{20 + i}\n" for i in range(80))
    for name in ("id", "patient_id", "EmployeeNumber"):
        msg = error(
            rf"Column '{name}' of uploaded data holds a different whole number",
            text=f"{name},site,age\n" + rows,
        )
        assert "identifier" in msg and f"drop_columns=['{name}']" in msg
    d = load_csv(text="id,site,age\n" + rows, drop_columns=["id"])
    assert d.variables == ("site", "age") and len(d.states[1]) == 4  # age: 80 different values, binned
    assert load_csv(text="income,site,age\n" + rows).variables == ("income", "site", "age")


def test_the_app_drops_a_numeric_identifier_and_says_so(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    f = tmp_path / "trial.csv"
    f.write_text("id,site,arm\n" + "".join(f"{i + 1},s{i % 4},{'ab'[i % 2]}\n" for i in range(120)))
    monkeypatch.setenv("BNFK_TEST_UPLOAD", str(f))
    script = """
import os
import streamlit as st
from bnfk_ui import state
from bnfk_ui.state import messages, uploads
state.init()
if not st.session_state.get("tried"):
    st.session_state.tried = True
    with open(os.environ["BNFK_TEST_UPLOAD"], "rb") as fh:
        uploads.use_upload("trial.csv", fh.read())
messages.show_flash()
"""
    at = AppTest.from_string(script, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["dataset"] == "upload" and at.session_state["drop_columns"] == ["id"]
    assert any("identifier" in e.value and "It was dropped" in e.value for e in at.error)
