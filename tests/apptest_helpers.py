"""Shared Streamlit AppTest helpers for the page tests."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_app(page: str, timeout: float = 120, **state) -> AppTest:
    """An AppTest of the app opened at ``pages/<page>`` (a deep link: the router runs it), with session state
    preset.  Before a first run AppTest finds a page by its file name; a page whose URL path differs from it
    (``latent_classes.py`` at ``/latent-classes``) is found after one run of the default page."""
    from bnfk_ui.router import PAGES

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for k, v in state.items():
        at.session_state[k] = v
    url = next(url for _, path, _, _, url in PAGES if path == f"pages/{page}")
    if url != Path(page).stem:
        at.run()
    return at.switch_page(f"pages/{page}")


def assert_clean(at: AppTest) -> None:
    """No exception and no st.error on the rendered page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def open_sidebar_box(at: AppTest, box: str) -> AppTest:
    """Open the sidebar's "Share this view" (``box="share"``) or "Settings" (``"settings"``) expander as a
    visitor does (a click sets its state and reruns the page): its contents are built only while it is
    open."""
    at.session_state[f"sidebar_{box}"] = True
    return at.run()
