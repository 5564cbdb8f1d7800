"""Header names wrapped in single quotes (statsmodels' tab-separated anes96.csv) lose the quotes, in the
loader and in the streamed reader; a lone quote that is part of a name stays."""

from bnfk_core.data.reading import header_names
from bnfk_core.data.stream import read_counts
from bnfk_core.data.table import load_csv


def test_header_names():
    assert header_names([" 'popul'", "'TVnews' ", "'vote'"]) == ["popul", "TVnews", "vote"]
    assert header_names(["'s", "b"]) == ["'s", "b"]  # not every name quoted: kept as written
    assert header_names(["'a'", "b"]) == ["'a'", "b"]


def test_single_quoted_tab_separated_headers(tmp_path):
    p = tmp_path / "anes_like.csv"
    p.write_text("'popul'\t'TVnews'\t'vote'\n0\t7\t1\n190\t1\t0\n5\t7\t1\n", encoding="utf-8")
    d = load_csv(p, class_column="vote")
    assert d.variables == ("popul", "TVnews", "vote") and d.class_column == "vote"
    assert read_counts(str(p)).variables == ("popul", "TVnews", "vote")
