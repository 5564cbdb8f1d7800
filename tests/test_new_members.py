"""A new learner, kernel and imputer, registered here and nowhere else, reach every face: the CLI's
``--help``, the generated options table (``python -m bnfk_core options``) and the app's pages, with the
widgets their facts call for enabled -- the learner declares which options it reads and how many variables it
handles, and the Structure page reads exactly that."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import page_app

from bnfk_core import registry
from bnfk_core.cli.main import main
from bnfk_core.cli.options import options_markdown

pytestmark = pytest.mark.filterwarnings("ignore")

LEARNER, KERNEL, IMPUTER = "toy-chain-k", "toy-twice-hamming", "toy-mode"


def _chain(scorer, task):
    """Every column's parent is the column before it."""
    return [()] + [(i - 1,) for i in range(1, len(task.variables))]


def _twice_hamming(train, **_):
    from bnfk_core.kernels.hamming import HammingKernel

    class Twice(HammingKernel):
        name = KERNEL

        def gram(self, X, Y=None, **kw):
            return 2.0 * super().gram(X, Y, **kw)

        def contributions(self, x, y):
            return 2.0 * super().contributions(x, y)

    return Twice(train)


def _mode_again(data, **options):
    """The Mode imputer under another name (so its scores can be checked against Mode's)."""
    return registry.IMPUTERS["mode"].impute(data, **options)


SPECS = {
    "LEARNERS": registry.LearnerSpec(
        LEARNER,
        "Toy chain (reads k and max parents)",
        learn=_chain,
        options=("max_parents", "k"),
        max_variables=2,
        description="for the faces test",
    ),
    "KERNELS": registry.KernelSpec(
        KERNEL,
        "Toy twice Hamming",
        "2H",
        fit=_twice_hamming,
        shift="adaptive",
        psd=True,
        description="2 x Hamming, for the faces test",
    ),
    "IMPUTERS": registry.ImputerSpec(
        IMPUTER, "Toy mode", _mode_again, description="Mode again, for the faces test"
    ),
}


@pytest.fixture
def members():
    import streamlit as st

    st.cache_data.clear()
    for family, spec in SPECS.items():
        getattr(registry, family).register(spec)
    yield
    for family, spec in SPECS.items():
        getattr(registry, family).unregister(spec.name)
    st.cache_data.clear()


def test_a_learner_names_only_options_that_exist():
    with pytest.raises(registry.StructureError, match="unknown options \\['tabu_length'\\]"):
        registry.LearnerSpec("bad", "Bad", options=("tabu_length",))


def test_the_built_in_learners_carry_their_facts():
    from bnfk_core.learning.exact import EXACT_MAX_VARIABLES

    L = registry.LEARNERS
    assert L["exact"].max_variables == EXACT_MAX_VARIABLES == 20
    assert [m for m in L if L[m].applies("max_parents")] == ["hc", "hc-greedy", "exact"]
    assert [m for m in L if L[m].applies("k")] == ["kdb"]
    assert L["exact"].too_wide(20) is None and "at most 20 variables" in L["exact"].too_wide(21)


def test_cli_help_and_options_table_list_them(members, capsys):
    for command, name in (("learn", LEARNER), ("kernel", KERNEL), ("impute-benchmark", IMPUTER)):
        assert main([command, "--help"]) == 0
        assert name in capsys.readouterr().out, command
    table = options_markdown()
    assert (
        f"| `{LEARNER}` | Toy chain (reads k and max parents) | no | no | `max_parents`, `k` | 2 |" in table
    )
    assert f"| `{KERNEL}` | Toy twice Hamming | 2H |" in table and f"| `{IMPUTER}` | Toy mode |" in table


def test_without_registration_they_are_nowhere(capsys):
    table = options_markdown()
    for command, name in (("learn", LEARNER), ("kernel", KERNEL), ("impute-benchmark", IMPUTER)):
        assert main([command, "--help"]) == 0
        assert name not in capsys.readouterr().out and name not in table


def _disabled(at, key: str) -> bool:
    return at.number_input(key=key).disabled


def test_structure_page_enables_what_the_learner_reads(members):
    at = page_app("structure.py", 300, dataset="house_votes_84", class_column="class").run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    at.selectbox(key="w_learn_method").set_value("hc").run()  # a built-in: max parents, not k
    assert not _disabled(at, "w_learn_max_parents") and _disabled(at, "w_learn_k")
    assert not any("at most" in w.value for w in at.warning)
    at.selectbox(key="w_learn_method").set_value(LEARNER).run()  # the toy reads both
    assert not _disabled(at, "w_learn_max_parents") and not _disabled(at, "w_learn_k")
    warned = [w.value for w in at.warning if "at most 2 variables" in w.value]
    assert warned == ["Toy chain handles at most 2 variables; these data have 16."], [
        w.value for w in at.warning
    ]
    next(b for b in at.button if b.label == "Learn structure").click().run()
    assert any("Toy chain handles at most 2 variables" in e.value for e in at.error)  # refused before it runs


def test_kernel_page_draws_the_new_kernel(members):
    at = page_app("kernel.py", 300, dataset="house_votes_84", class_column="class").run()
    at.selectbox(key="w_kernel_kind").set_value(KERNEL).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert at.session_state["kernel_kind"] == KERNEL and len(at.get("plotly_chart")) >= 3
    assert any("toy twice hamming kernel does not depend on the structure" in i.value for i in at.info)


def test_imputation_page_runs_the_new_imputer(members):
    at = page_app(
        "imputation.py", 300, dataset="hayes_roth", class_column="class", missing_policy="missing"
    ).run()
    assert "Toy mode" in at.multiselect(key="imp_methods").options
    at.multiselect(key="imp_methods").set_value(["mode", IMPUTER])
    at.multiselect(key="imp_test").set_value([0.2])
    at.multiselect(key="imp_missing").set_value([0.3])
    at.run()
    at.button(key="imp_run").click().run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    table = at.dataframe[0].value.set_index("method")
    assert list(table.index) == ["Mode", "Toy mode"]
    np.testing.assert_array_equal(
        table.loc["Toy mode", ["accuracy", "cross-entropy"]].to_numpy(float),
        table.loc["Mode", ["accuracy", "cross-entropy"]].to_numpy(float),
    )
