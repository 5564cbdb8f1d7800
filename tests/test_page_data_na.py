"""AppTest of the Data page's missing-value texts: a sample keeps its catalog list, a file of your own
chooses (the empty field only by default, so '?' is an ordinary value)."""

from apptest_helpers import ROOT, assert_clean, page_app


def test_sample_shows_its_catalog_list():
    at = page_app("data.py", dataset="house_votes_84", class_column="class", missing_policy="missing").run()
    assert_clean(at)
    assert any("empty, NA, N/A, ?, nan" in c.value for c in at.caption)
    assert {m.label: m.value for m in at.metric}["Missing cells"] == "392"


def test_upload_chooses_which_texts_are_missing():
    content = (ROOT / "sample_data" / "house_votes_84.csv").read_bytes()
    at = page_app(
        "data.py",
        dataset="upload",
        upload=("hv.csv", content),
        class_column="class",
        missing_policy="missing",
    ).run()
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["Missing cells"] == "0"  # '?' is a value by default
    at.text_input(key="w_na_values").set_value("?").run()
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["Missing cells"] == "392"
    assert at.session_state["na_values"] == "?"
