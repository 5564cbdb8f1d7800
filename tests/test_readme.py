"""The README is a five-minute front door whose Python example runs: its ``>>>`` blocks are doctests.

The example's printed numbers are checked twice: by doctest against the README's text, and here against an
independent computation of the same Gram entry from the paper's Theorem 1 (brute force over the CPTs).
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def python_blocks(text: str) -> list[str]:
    """The bodies of the README's fenced ```python blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_is_a_five_minute_read():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; keep it at most 150 (move detail to docs/)"


def test_readme_python_example_runs_as_a_doctest(monkeypatch):
    blocks = [b for b in python_blocks(README.read_text(encoding="utf-8")) if ">>>" in b]
    assert blocks, "the README should hold a ```python block written as a doctest (>>> lines)"
    monkeypatch.chdir(ROOT)  # the example reads sample_data/ relative to the clone
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README.md python block {i + 1}", str(README), 0)
        assert len(test.examples) >= 3
        result = runner.run(test, out=lambda s: None)
        assert result.failed == 0, (
            f"README.md python block {i + 1}: {result.failed} example(s) failed "
            f"(run: python -m doctest -v README.md from the project root)"
        )


def test_readme_kernel_entry_matches_theorem_1_by_brute_force(monkeypatch):
    """The -1.301 the README prints, recomputed from the CPTs and the exact parent marginals by
    enumeration."""
    from bnfk_core import load_csv
    from bnfk_core.learning.recipe import learn_recipe

    monkeypatch.chdir(ROOT)
    data = load_csv("sample_data/house_votes_84.csv", class_column="class", missing_policy="category")
    model = learn_recipe(data).model
    x, y = model.align(data.without_class()).codes[:2]
    # the default recipe learns a tree: each node has at most one parent, so P(pi_i = j) is the parent's
    # marginal, exact by the chain rule down the tree (P(child) = P(parent) @ CPT), with no inference code
    marg: dict[int, np.ndarray] = {}

    def node_marginal(i: int) -> np.ndarray:
        if i not in marg:
            ps = list(model.parents[i])
            assert len(ps) <= 1, "the default recipe learns a tree"
            cpt = np.asarray(model.cpts[i])
            marg[i] = cpt[0] if not ps else node_marginal(ps[0]) @ cpt
        return marg[i]

    k = 0.0
    for i in range(model.n_vars):
        ps = list(model.parents[i])
        if ps and x[ps[0]] != y[ps[0]]:
            continue
        p_pa = 1.0 if not ps else node_marginal(ps[0])[x[ps[0]]]
        j = 0 if not ps else x[ps[0]]
        theta = np.asarray(model.cpts[i])[j, x[i]]
        k += ((1.0 / theta if x[i] == y[i] else 0.0) - 1.0) / p_pa
    assert f"{k:.3f}" == "-1.301"
    assert f"{k:.3f}" in README.read_text(encoding="utf-8")


def test_readme_test_command_is_the_one_ci_runs():
    text = README.read_text(encoding="utf-8")
    run_tests = (ROOT / "run-tests.sh").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./run-tests.sh" in text and "bash .ci/run" in text
    assert "run-tests.sh" in ci  # CI calls the script the README shows
    assert "python -m pytest -q" in run_tests and "python -m pytest -q" in text


@pytest.mark.parametrize(
    "author",
    [
        "Leppä-aho",
        "Silander",
        "Roos",
        "Ebberstein",
        "Holmberg",
        "Bach",
        "Jordan",
        "Yackley",
        "Corona",
        "Lane",
        "Auvray",
        "Wehenkel",
    ],
)
def test_readme_names_the_papers_authors(author):
    assert author in README.read_text(encoding="utf-8")


def test_readme_links_resolve():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    missing = [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_readme_links_every_doc_page():
    text = README.read_text(encoding="utf-8")
    unlinked = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"(docs/{p.name})" not in text]
    assert not unlinked, f"README's documentation table does not link {unlinked}"
