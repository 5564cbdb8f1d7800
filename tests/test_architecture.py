"""docs/ARCHITECTURE.md is drawn from the tree: it names every package and every page, and every page follows
its recipe (a ``page()`` function, run when ``common.start`` lets it, listed in the router's ``PAGES``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCH = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "pages").glob("*.py"))


def router_pages() -> list[str]:
    """The page files listed in ``PAGES`` of bnfk_ui/router.py (read from its source, without Streamlit)."""
    tree = ast.parse((ROOT / "bnfk_ui" / "router.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PAGES" for t in node.targets):
            return [elt.elts[1].value for elt in node.value.elts]
    raise AssertionError("bnfk_ui/router.py has no PAGES")


def test_every_package_has_a_cell():
    packages = sorted(
        p.parent.relative_to(ROOT / "bnfk_core").as_posix()
        for p in (ROOT / "bnfk_core").glob("*/__init__.py")
    )
    packages += sorted(
        p.parent.relative_to(ROOT / "bnfk_core").as_posix()
        for p in (ROOT / "bnfk_core" / "analyses").glob("*/__init__.py")
    )
    assert packages
    missing = [p for p in packages if p != "views/figures" and f"`{p}`" not in ARCH]
    assert not missing, f"docs/ARCHITECTURE.md has no cell for {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_page_follows_the_page_recipe(page):
    text = page.read_text(encoding="utf-8")
    assert re.search(r"^def page\(\):", text, re.M), f"{page.name} defines no page()"
    assert re.search(r"^if common\.start\(.*\):\n    page\(\)\s*$", text, re.M), (
        f"{page.name} should end with `if common.start(...):` and `page()`"
    )
    assert f"pages/{page.name}" in router_pages(), f"{page.name} is not in PAGES of bnfk_ui/router.py"
    assert f"`{page.stem}`" in ARCH, f"docs/ARCHITECTURE.md does not name the page {page.stem}"


def test_no_module_of_the_old_flat_layout_is_named():
    old = [
        "bnfk_core/learn.py",
        "bnfk_core/kernels.py",
        "bnfk_core/missing.py",
        "bnfk_core.learn.",
        "bnfk_core.live.",
        "learn_hc.hill_climb",
        "learn_trees.",
        "hamming_kernels",
        "fisher_features",
        "stream_dask",
        "impute_benchmark",
        "segment_tables",
        "cluster_common",
        "prototype_criteria",
    ]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        named = [o for o in old if o in text]
        assert not named, f"{doc.name} names modules that no longer exist: {named}"


def test_no_doc_names_an_internal_issue_number():
    pattern = re.compile(r"\bissues?[\s_-]*#?\d+\b|(?:^|[\s(])#\d+\b", re.I)
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        hits = pattern.findall(doc.read_text(encoding="utf-8"))
        assert not hits, (
            f"{doc.name} names an internal issue number ({hits[:3]}); say what the thing is instead"
        )
