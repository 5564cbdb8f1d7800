"""AppTest of the Structure page's knowledge controls: forbidden and required arcs typed as text are honoured
by the Learn button, a bad arc or a learner that cannot honour arcs is one error naming it (and the button is
off), and *Bootstrap arc strength* shows its table, its download and the strengths drawn on the graph."""

from apptest_helpers import assert_clean, page_app

REQUIRED = ("crime", "immigration")  # not an arc of the default network: the requirement binds
FORBIDDEN = ("physician-fee-freeze", "el-salvador-aid")


def _learned_arcs(at) -> list:
    return sorted(map(tuple, at.session_state["structure"]["dag"]["arcs"]))


def _errors(at) -> list:
    """The errors as read (the app escapes Markdown in user text: ``->`` is sent as ``-\\>``)."""
    return [e.value.replace("\\", "") for e in at.error]


def _button(at, label):
    return next(b for b in at.button if b.label == label)


def test_the_learn_button_honours_typed_arcs_and_the_bootstrap_shows_strengths():
    at = page_app(
        "structure.py",
        300,
        learn_method="hc-greedy",
        kn_forbid=f"{FORBIDDEN[0]}->{FORBIDDEN[1]}, {FORBIDDEN[1]}->{FORBIDDEN[0]}",
        kn_require=f"{REQUIRED[0]}->{REQUIRED[1]}",
        kn_boot_b=3,
    ).run()
    assert_clean(at)
    assert REQUIRED not in _learned_arcs(at)
    _button(at, "Learn structure").click().run()
    assert_clean(at)
    arcs = _learned_arcs(at)
    assert REQUIRED in arcs and FORBIDDEN not in arcs and FORBIDDEN[::-1] not in arcs
    assert "2 forbidden and 1 required arc(s) honoured" in " ".join(c.value for c in at.caption)

    _button(at, "Bootstrap arc strength").click().run()
    assert_clean(at)
    (table,) = [d.value for d in at.dataframe if "strength" in d.value.columns]
    assert list(table.columns) == ["from", "to", "strength", "direction"]
    assert ((table["strength"] * 3).round(9) % 1 == 0).all()  # shares of the 3 networks
    row = table[(table["from"] == REQUIRED[0]) & (table["to"] == REQUIRED[1])].iloc[0]
    assert row["strength"] == 1.0 and row["direction"] == 1.0
    assert table[(table["from"] == FORBIDDEN[0]) & (table["to"] == FORBIDDEN[1])].empty
    assert any(d.proto.label == "Arc strengths (CSV)" for d in at.get("download_button"))
    assert at.get("plotly_chart")


def test_a_bad_arc_or_a_learner_that_cannot_honour_arcs_is_one_error_and_the_button_is_off():
    at = page_app("structure.py", 300, learn_method="hc", kn_require="crime->immigration, immigration->crime")
    at.run()
    assert _errors(at) == [
        "The required arcs crime->immigration, immigration->crime form a cycle; a network has none."
    ]
    assert _button(at, "Learn structure").disabled and _button(at, "Bootstrap arc strength").disabled
    at.session_state["kn_require"] = "crime->nowhere"
    at.run()
    assert _errors(at) == [
        "The required arc crime->nowhere names 'nowhere', which is not a variable of the data."
    ]
    at.session_state["kn_require"] = "crime->immigration"
    at.session_state["learn_method"] = "empty"
    at.run()
    (err,) = _errors(at)
    assert err.startswith("Empty network cannot honour forbidden or required arcs")
    at.session_state["kn_require"] = ""
    at.run()
    assert_clean(at)
    assert not _button(at, "Learn structure").disabled
