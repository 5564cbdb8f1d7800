"""A served app in a real browser, as an attacker would try it: the operator named a data and an output
folder; reading a file outside the data folder and writing outside the output folder are refused with one
sentence (the same for an existing and a missing path), an existing file of the output folder is replaced only
when the visitor ticks "Replace", and a good name is written.  Each step is bounded in time."""

from __future__ import annotations

import numpy as np
import pytest
from browser_helpers import act, count_runs, settle, streamlit_server
from test_browser import ARTIFACTS, browser, pytestmark  # noqa: F401 (fixtures, marks)

from bnfk_core.serving.serve import OUTSIDE_READ, OUTSIDE_WRITE

STEP_MS = 90_000


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("served")
    data, out, outside = base / "data", base / "out", base / "outside"
    for d in (data, out, outside):
        d.mkdir()
    rng = np.random.default_rng(5)
    n = 400
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 3
    lines = ["class,a,b,c"]
    for i in range(n):
        cells = [f"a{a[i]}", f"b{b[i]}", f"c{rng.integers(0, 2)}"]
        if rng.random() < 0.1:
            cells[rng.integers(0, 3)] = ""
        lines.append(",".join([f"k{a[i] % 2}", *cells]))
    (data / "survey.csv").write_text("\n".join(lines) + "\n")
    (out / "existing.csv").write_text("keep me\n")
    (outside / "secret.csv").write_text("user,password\nroot,hunter2\n")
    return data, out, outside


@pytest.fixture(scope="module")
def served(folders):
    pytest.importorskip("playwright.sync_api")
    data, out, _ = folders
    try:
        with streamlit_server(
            "streamlit_serve.log", env={"BNFK_DATA_DIR": str(data), "BNFK_OUTPUT_DIR": str(out)}
        ) as (url, _proc):
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc))


def _open(browser, url):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = ctx.new_page()
    page.set_default_timeout(STEP_MS)
    count_runs(page)
    page.goto(url, wait_until="domcontentloaded")
    page.locator("h1").first.wait_for()
    settle(page, timeout=STEP_MS)
    return ctx, page


def test_reading_outside_the_data_folder_is_refused_alike(served, browser, folders):  # noqa: F811
    _, _, outside = folders
    said = []
    for p in (
        "/etc/passwd",
        str(outside / "secret.csv"),
        str(outside / "missing.csv"),
        "../outside/secret.csv",
    ):
        ctx, page = _open(browser, f"{served}/data?path={p}")
        try:
            body = page.inner_text("body")
            assert "hunter2" not in body and "root:x:" not in body
            assert OUTSIDE_READ.rstrip(".") in body, body[:1500]
            said.append([ln for ln in body.splitlines() if "could not be used" in ln])
            # typed on the Data page: the same sentence, the data unchanged
            page.get_by_text("Large files: a file on the server").first.click()
            box = page.get_by_label("Name of a CSV or Parquet file in the server's data folder")
            box.fill(p)  # sent with the click (Enter would re-run and close the box)
            act(page, page.get_by_test_id("stButton").filter(has_text="Load file").first.click, STEP_MS)
            # the error is drawn inside the Large files box (which the re-run folds)
            error = page.get_by_test_id("stAlertContentError").filter(has_text=OUTSIDE_READ).first
            try:
                error.wait_for(state="attached", timeout=20_000)
            except Exception:  # the folded box is not drawn yet: open it, as a visitor would, to read it
                page.get_by_text("Large files: a file on the server").first.click()
                error.wait_for(state="attached")
            assert "hunter2" not in page.content()
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "serve_read_failed.png"), full_page=True)
            raise
        finally:
            ctx.close()
    assert all(s == said[0] for s in said) and said[0], said


def test_writing_outside_the_output_folder_is_refused(served, browser, folders):  # noqa: F811
    data, out, outside = folders
    ctx, page = _open(browser, f"{served}/imputation?path=survey.csv&class=class&missing=missing")
    try:

        def tab():  # a re-run may show the first tab again
            page.get_by_role("tab", name="Impute my data").click()
            page.wait_for_timeout(300)

        def says(text: str):
            page.get_by_text(text).first.wait_for(state="attached")

        tab()
        # opening the page imputes nothing
        act(page, page.get_by_role("button", name="Impute the missing cells").click, STEP_MS)
        tab()
        act(page, page.get_by_role("button", name="Complete all 400 rows").click, STEP_MS)
        tab()
        says("Imputed cells (all rows)")

        def write(name: str):
            tab()
            box = page.get_by_label("Or write the completed file to the server's output folder (file name)")
            box.fill(name)  # sent with the click
            act(page, page.get_by_test_id("stButton").filter(has_text="Write file").first.click, STEP_MS)
            tab()

        for name in (
            "../outside/evil.csv",
            str(outside / "evil.csv"),
            "/etc/passwd",
            str(data / "survey.csv"),
        ):
            write(name)
            says(OUTSIDE_WRITE)
        write("existing.csv")
        says("'existing.csv' already exists in the server's output folder")
        assert (out / "existing.csv").read_text() == "keep me\n"
        assert not (outside / "evil.csv").exists() and "root" in open("/etc/passwd").read()
        write("done.csv")
        says("to 'done.csv' in the output folder")
        assert (out / "done.csv").read_text().startswith("class,a,b,c")
        tab()
        act(page, page.get_by_text("Replace an existing file").first.click, STEP_MS)
        write("existing.csv")
        says("to 'existing.csv' in the output folder")
        assert (out / "existing.csv").read_text().startswith("class,a,b,c")
        assert sorted(p.name for p in out.iterdir()) == ["done.csv", "existing.csv"]  # no temporary file left
        page.screenshot(path=str(ARTIFACTS / "serve_write.png"), full_page=True)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "serve_write_failed.png"), full_page=True)
        raise
    finally:
        ctx.close()
