"""Adding an option is one registration: a toy member of each option family, registered here, is offered by
the CLI (``--help`` of the subcommand that takes it) and by the app's widgets (AppTest), with no other edit.

Families the app offers no widget for (missing-data methods; classifiers, which the Clustering page's
classification table runs all of) are checked on the CLI only; the widgets are :data:`PAGE_WIDGETS`."""

from __future__ import annotations

import pytest
from apptest_helpers import page_app

from bnfk_core import registry
from bnfk_core.cli.main import main
from bnfk_core.learning.scores import LocalScorer

pytestmark = pytest.mark.filterwarnings("ignore")


def _no_fit(*args, **kwargs):
    raise AssertionError("the toy is only offered, never run, by these tests")


def _bic_scorer(codes, cards, *, weights=None, numbers=None, ess: float = 1.0, **options):
    """A toy score that is BIC under another name (so its value can be checked against BIC's)."""
    return LocalScorer(codes, cards, "bic", weights=weights)


#: family registry -> (the toy spec, the CLI subcommand whose --help lists it)
TOYS = {
    "KERNELS": (registry.KernelSpec("toy-overlap", "Toy overlap", "TO", fit=_no_fit), "kernel"),
    "LEARNERS": (registry.LearnerSpec("toy-learner", "Toy learner"), "learn"),
    "SCORES": (registry.ScoreSpec("toy-score", "Toy score", scorer=_bic_scorer), "learn"),
    "ESTIMATORS": (registry.EstimatorSpec("toy-estimator", "Toy estimator"), "learn"),
    "MISSING_DATA": (registry.MissingDataSpec("toy-missing", "Toy missing", learn=_no_fit), "learn"),
    "IMPUTERS": (registry.ImputerSpec("toy-imputer", "Toy imputer", impute=_no_fit), "impute-benchmark"),
    "CLUSTERERS": (
        registry.ClustererSpec("toy-clusterer", "Toy clusterer", uses_kernel=False, run=_no_fit),
        "cluster",
    ),
    "CLASSIFIERS": (registry.ClassifierSpec("toy-classifier", "Toy classifier", proba=_no_fit), "classify"),
    "CRITERIA": (registry.CriterionSpec("toy-criterion", "Toy criterion", criterion=_no_fit), "prototypes"),
}


@pytest.fixture
def toys():
    """Every toy registered for the test, withdrawn after it.  A module registers its options when it is
    imported, before any page runs: the app's caches (scores of every registered score, ...) are emptied so
    that no result computed before the registration is reused."""
    import streamlit as st

    st.cache_data.clear()
    added = []
    for family, (spec, _) in TOYS.items():
        getattr(registry, family).register(spec)
        added.append((family, spec.name))
    yield
    for family, name in added:
        getattr(registry, family).unregister(name)
    st.cache_data.clear()


def _help(command: str, capsys) -> str:
    assert main([command, "--help"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("family", list(TOYS))
def test_a_registered_toy_is_a_cli_choice(family, toys, capsys):
    spec, command = TOYS[family]
    assert spec.name in _help(command, capsys)


def test_without_registration_the_cli_does_not_offer_it(capsys):
    """The check above can fail: the toys are not there before they are registered."""
    for family, (spec, command) in TOYS.items():
        assert spec.name not in _help(command, capsys), family


def _options(at, kind: str, key: str) -> list:
    return list(getattr(at, kind)(key=key).options)


#: family -> (page file, widget kind, widget key) where the app offers that family's members
PAGE_WIDGETS = {
    "KERNELS": [("kernel.py", "selectbox", "w_kernel_kind"), ("clustering.py", "selectbox", "w_clu_kernel")],
    "LEARNERS": [("structure.py", "selectbox", "w_learn_method")],
    "SCORES": [("structure.py", "selectbox", "w_learn_score")],
    "ESTIMATORS": [("structure.py", "selectbox", "w_param_method")],
    "IMPUTERS": [("imputation.py", "multiselect", "imp_methods")],
    "CLUSTERERS": [("clustering.py", "radio", "w_clu_algorithm")],
    "CRITERIA": [("prototypes.py", "radio", "w_proto_criterion")],
}


def _page_widgets() -> list:
    by_page: dict = {}
    for family, places in PAGE_WIDGETS.items():
        for page, kind, key in places:
            by_page.setdefault(page, []).append((family, kind, key))
    return sorted(by_page.items())


@pytest.mark.parametrize("page,widgets", _page_widgets(), ids=[p for p, _ in _page_widgets()])
def test_a_registered_toy_is_offered_on_the_page(page, widgets, toys):
    at = page_app(page, 300).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    for family, kind, key in widgets:
        label = TOYS[family][0].label
        assert label in _options(at, kind, key), (family, key)


def test_the_toy_score_is_scored_on_the_structure_page(toys):
    """The Structure page's score table has a row per registered score; the toy (BIC under another name) has
    BIC's value -- the page ran the registered scorer, not a copy of the BIC code."""
    at = page_app("structure.py", 300).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    table = next(df.value for df in at.dataframe if "score" in df.value.columns)
    values = dict(zip(table["score"], table["value"]))
    assert values["Toy score"] == pytest.approx(values["BIC"], rel=1e-12)
