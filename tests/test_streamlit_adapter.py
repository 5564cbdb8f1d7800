"""Streamlit's internals behind one adapter (bnfk_ui.streamlit_adapter): used on the tested Streamlit only; on
any other version the app falls back to the public API and every page still renders."""

from __future__ import annotations

import re

import pytest
from apptest_helpers import ROOT, assert_clean, page_app

from bnfk_ui import jobs, session_reaper, streamlit_adapter


def test_the_tested_range_is_the_pinned_streamlit_and_the_extras_range():
    pinned = re.search(r"^streamlit==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert streamlit_adapter.tested(pinned)
    assert streamlit_adapter.tested()  # this checkout runs the pinned Streamlit
    extra = next(ln for ln in (ROOT / "pyproject.toml").read_text().splitlines() if ln.startswith("app = "))
    assert f'"streamlit{streamlit_adapter.TESTED_RANGE}"' in extra  # pip install ".[app]" takes this range
    for version, inside in (
        ("1.66.9", False),
        ("1.67.0", True),
        ("1.67.12", True),
        ("1.68.0", False),
        ("2.67.0", False),
        ("1.67.0rc1", True),
    ):
        assert streamlit_adapter.tested(version) is inside, version


def test_only_the_adapter_imports_streamlits_internals():
    internal = re.compile(r"^\s*(from streamlit\.|import streamlit\.)", re.M)
    users = sorted(
        str(p.relative_to(ROOT))
        for p in [*ROOT.glob("bnfk_ui/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
        if internal.search(p.read_text(encoding="utf-8"))
    )
    assert users == ["bnfk_ui/streamlit_adapter.py"]


@pytest.fixture
def untested_streamlit(monkeypatch):
    """The app as it runs on a Streamlit outside the tested range."""
    monkeypatch.setattr(streamlit_adapter, "INSTALLED", "1.99.0")
    assert not streamlit_adapter.tested()


def test_untested_streamlit_turns_every_internal_off(untested_streamlit):
    assert not streamlit_adapter.install_message_hashes()
    assert streamlit_adapter.closed_session_cache() == (None, None)
    assert session_reaper.reap() == 0
    assert not jobs.session_gone()
    streamlit_adapter.warm_up()


@pytest.mark.parametrize("page", ["kernel.py", "structure.py"])
def test_pages_render_with_the_public_plotly_chart_on_an_untested_streamlit(
    untested_streamlit, monkeypatch, page
):
    def internal(*args, **kwargs):
        raise AssertionError("Streamlit's internals used on an untested Streamlit")

    monkeypatch.setattr(streamlit_adapter, "_element_id", internal)
    at = page_app(page, 240).run()
    assert_clean(at)
    assert at.get("plotly_chart")  # the figures were drawn, by Streamlit's own st.plotly_chart
