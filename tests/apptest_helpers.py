"""Shared Streamlit AppTest helpers for the page tests."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_app(page: str, timeout: float = 120, **state) -> AppTest:
    """An AppTest of ``pages/<page>`` run on its own (deep link), with session state preset."""
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=timeout)
    for k, v in state.items():
        at.session_state[k] = v
    return at


def assert_clean(at: AppTest) -> None:
    """No exception and no st.error on the rendered page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
