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
        # a whole name: hybrid_fisher_features (a function) is not the old module fisher_features
        named = [o for o in old if re.search(r"(?<!\w)" + re.escape(o), text)]
        assert not named, f"{doc.name} names modules that no longer exist: {named}"


def test_no_doc_names_an_internal_issue_number():
    pattern = re.compile(r"\bissues?[\s_-]*#?\d+\b|(?:^|[\s(])#\d+\b", re.I)
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        hits = pattern.findall(doc.read_text(encoding="utf-8"))
        assert not hits, (
            f"{doc.name} names an internal issue number ({hits[:3]}); say what the thing is instead"
        )


#: the searches of :mod:`bnfk_core.learning` and the imputers' wrappers over the entry point: outside
#: learning (and the published protocols' reproduction) a network is learned by ``learn_recipe`` only
SEARCHES = {
    "learn_structure",
    "learn_feature_structure",
    "learn_network",
    "structural_em",
    "learn_hc",
    "learn_tabu",
    "learn_exact",
    "learn_tree",
    "learn_tan",
    "learn_kdb",
    "tabu_search",
    "exact_search",
}
WRAPPERS = {"learn_model", "learn_for_imputation"}


def _called(path: Path) -> set[str]:
    """The names of the functions a module calls (``f(...)`` and ``module.f(...)``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = (node.func for node in ast.walk(tree) if isinstance(node, ast.Call))
    return {
        f.id if isinstance(f, ast.Name) else f.attr for f in calls if isinstance(f, ast.Name | ast.Attribute)
    }


def test_nothing_outside_learning_calls_a_learner_but_through_the_entry_point():
    """Every face and analysis learns its network by :func:`bnfk_core.learning.recipe.learn_recipe` (a
    table and a Recipe), never by a search function or a wrapper of its own."""
    files = [*(ROOT / "bnfk_core").rglob("*.py"), *(ROOT / "bnfk_ui").rglob("*.py"), *PAGES, ROOT / "app.py"]
    found = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("bnfk_core/learning/", "bnfk_core/reproduce/")):
            continue
        allowed = WRAPPERS if rel.startswith("bnfk_core/analyses/impute/") else set()
        if rel == "bnfk_core/hybrid/search.py":  # the CLG search: the exact programme on the hybrid scorer
            allowed = {"exact_search"}
        found += [f"{rel}: {name}" for name in sorted(_called(path) & (SEARCHES | WRAPPERS) - allowed)]
    assert not found, f"learners called outside bnfk_core.learning: {found}"
    assert "learn_recipe" in _called(ROOT / "bnfk_ui" / "state" / "structure.py")


# --- imports run down the floors: no circle between subpackages, imports inside functions included
# -------------------------------------------------


def _module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``package`` (a package's name is its own)."""
    out = {}
    for f in sorted(package.rglob("*.py")):
        parts = f.relative_to(package.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def imported_modules(name: str, path: Path, known) -> set[str]:
    """The modules of ``known`` that module ``name`` (file ``path``) imports anywhere in its body: at the
    top, inside functions and under ``if``; ``from a import b`` counts ``a.b`` when that is a module, else
    ``a``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            candidates = [f"{module}.{a.name}" for a in node.names]
        else:
            continue
        for target in candidates:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target:
                found.add(target)
    return found


def subpackage(module: str, parent: str, packages) -> str | None:
    """The subpackage of ``parent`` (one of ``packages``, one level below ``parent``) that holds ``module``;
    None for a module outside one (``bnfk_core.errors``)."""
    if not module.startswith(parent + "."):
        return None
    name = f"{parent}.{module.removeprefix(parent + '.').split('.')[0]}"
    return name if name in packages else None


def subpackage_circles(root: Path, parent: str) -> list[tuple[str, str]]:
    """Pairs (a, b) of subpackages of ``parent`` where a imports b and b reaches a back."""
    files = _module_files(root / "bnfk_core")
    packages = {name for name, path in files.items() if path.name == "__init__.py"}
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        here = subpackage(name, parent, packages)
        for target in imported_modules(name, path, files):
            there = subpackage(target, parent, packages)
            if here and there and here != there:
                edges.setdefault(here, set()).add(there)

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    return sorted((a, b) for a in edges for b in edges[a] if a in reach(b))


@pytest.mark.parametrize("parent", ["bnfk_core", "bnfk_core.analyses"])
def test_no_import_circle_between_subpackages(parent):
    circles = subpackage_circles(ROOT, parent)
    assert not circles, f"subpackages that import each other (directly or round a circle): {circles}"


def test_subpackage_circles_sees_imports_inside_functions(tmp_path):
    for path, text in {
        "bnfk_core/__init__.py": "",
        "bnfk_core/low/__init__.py": "",
        "bnfk_core/low/a.py": "def f():\n    from ..high.b import g\n",
        "bnfk_core/high/__init__.py": "",
        "bnfk_core/high/b.py": "from ..low import a\n",
        "bnfk_core/errors.py": "from .low import a\n",
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert subpackage_circles(tmp_path, "bnfk_core") == [
        ("bnfk_core.high", "bnfk_core.low"),
        ("bnfk_core.low", "bnfk_core.high"),
    ]
    (tmp_path / "bnfk_core/low/a.py").write_text("def f():\n    pass\n", encoding="utf-8")
    assert subpackage_circles(tmp_path, "bnfk_core") == []


# --- comments say what the code does; its history is in the commit log and docs/
# -------------------------------------------------

#: a date, or a numbered round of measurements ("the sixth round")
HISTORY = re.compile(
    r"\b20\d\d-\d\d-\d\d\b|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)"
    r"(\s+and\s+\w+)?\s+rounds?\b|\brounds?\s+(one|two|three|four|five|six|seven|\d+)\b",
    re.I,
)


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and every module, class and function docstring of ``source``."""
    import io
    import tokenize

    out = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    out.append((body[0].lineno, body[0].value.value))
    return sorted(out)


def history_in(source: str) -> list[tuple[int, str]]:
    """(line, match) of every date or numbered round in the comments and docstrings of ``source``."""
    return [
        (line, m.group(0)) for line, text in comments_and_docstrings(source) for m in HISTORY.finditer(text)
    ]


def test_no_dated_or_round_numbered_comment():
    files = [
        *sorted((ROOT / "bnfk_core").rglob("*.py")),
        *sorted((ROOT / "bnfk_ui").rglob("*.py")),
        *sorted((ROOT / "pages").glob("*.py")),
    ]
    hits = [
        f"{f.relative_to(ROOT)}:{line}: {found!r}"
        for f in files
        for line, found in history_in(f.read_text(encoding="utf-8"))
    ]
    assert not hits, "comments that narrate history (say what the code does; history goes to docs/):\n" + (
        "\n".join(hits)
    )


def test_history_in_finds_dates_and_rounds_in_comments_and_docstrings():
    source = (
        '"""Module (third and fourth rounds)."""\n'
        "x = 1  # measured 2026-11-27\n"
        "def f():\n"
        '    """The sixth round\'s default."""\n'
        '    return "2026-11-27 in a string is data"\n'
        "# round robin and rounding are words\n"
    )
    assert [line for line, _ in history_in(source)] == [1, 2, 4]


#: member-name comparisons left in the faces: the Clustering page's baseline, which is the scaled-Hamming
#: kernel by design (sections/clustering.py), and three that only look like one -- the report's and the
#: segment figure's base network keyed "empty" (views/report.py, views/figures/segments.py twice)
MEMBER_COMPARISONS_IN_THE_FACES = 5


def _member_comparisons(paths) -> list:
    """``==`` / ``!=`` against a member's name (or a kernel's name constant), or ``in (`` a tuple of them, in
    the Python files under ``paths``."""
    import bnfk_core.registry as r

    families = (r.KERNELS, r.LEARNERS, r.SCORES, r.ESTIMATORS, r.MISSING_DATA, r.IMPUTERS, r.CLUSTERERS)
    families += (r.CLASSIFIERS, r.CRITERIA)
    names = "|".join(sorted({re.escape(n) for f in families for n in f}, key=len, reverse=True))
    consts = "FISHER|FISHER_NORMALIZED|SCALED_HAMMING|HAMMING|LCA_FISHER"
    name = rf'"(?:{names})"|\b(?:kernels\.)?(?:{consts})\b'
    pattern = re.compile(rf"(?:==|!=) *(?:{name})|(?:{name}) *(?:==|!=)|\bin \((?:{name})")
    found = []
    for path in paths:
        where = ROOT / path
        for file in [where] if where.is_file() else sorted(where.rglob("*.py")):
            for i, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{file.relative_to(ROOT)}:{i}: {line.strip()}")
    return found


def test_the_faces_read_spec_attributes_not_member_names():
    """Every face -- the app (app.py, pages, bnfk_ui), the CLI, the views, the serving layer and the
    estimators -- asks a member's spec what it does (``takes``, ``greedy``, ``uses_kernel``,
    ``likelihood_equivalent`` ...) instead of comparing its name: at most five comparisons in all."""
    found = _member_comparisons(
        [
            "app.py",
            "pages",
            "bnfk_ui",
            "bnfk_core/cli",
            "bnfk_core/views",
            "bnfk_core/serving",
            "bnfk_core/estimators",
        ]
    )
    assert len(found) <= MEMBER_COMPARISONS_IN_THE_FACES, "\n".join(found)
    assert _member_comparisons(["bnfk_core/analyses/cluster/clustering.py"])  # the scan finds what it seeks
