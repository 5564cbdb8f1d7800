"""Options declared once (:class:`bnfk_core.registry.Option`): every member's declaration covers the keywords
its behaviour takes, a typo or a value outside what is declared is refused in one sentence naming it, and a
valid call gives the numbers it gave before the declarations existed."""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bnfk_core  # noqa: F401  (names the member modules of every registry)
from bnfk_core.errors import KernelError, StructureError
from bnfk_core.registry import (
    KERNEL_CONTEXT,
    KERNELS,
    LEARNERS,
    Interval,
    Lazy,
    Option,
    check_options,
)

ROOT = Path(__file__).resolve().parents[1]
#: what every learner's task carries besides its options (the variables, the score, where the rows come from)
TASK_FRAME = {"variables", "cls", "score", "progress", "rows_used", "source", "notes"}


def _keywords(fn) -> set:
    """The keyword arguments ``fn`` names after its leading positional ones (the data), without ``**``."""
    params = list(inspect.signature(fn).parameters.values())
    return {
        p.name
        for p in params
        if p.kind is p.KEYWORD_ONLY or (p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty)
    }


@pytest.mark.parametrize("name", list(KERNELS))
def test_every_kernel_declares_exactly_what_its_fit_takes(name):
    spec = KERNELS[name]
    fit = spec.fit.resolve() if isinstance(spec.fit, Lazy) else spec.fit
    declared = {o.name for o in spec.options}
    if fit.__name__ == "fit_registered":  # the measures: fit_measure's documented options
        from bnfk_core.kernels.similarity import _OPTIONS

        assert declared <= _OPTIONS
        assert ("bandwidth" in declared) == (name == "aitchison-aitken")
    else:
        assert declared == _keywords(fit), name


@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_learner_declares_exactly_the_task_options_it_reads(name):
    spec = LEARNERS[name]
    source = inspect.getsource(inspect.getmodule(spec.learn.resolve()))
    body = inspect.getsource(spec.learn.resolve())
    read = set(re.findall(r"task\.(\w+)", body)) | set(re.findall(r'getattr\(task, "(\w+)"', body))
    if name in ("hc", "hc-greedy"):  # the climbs read their task in the module's helpers too
        read |= set(re.findall(r"task\.(\w+)", source)) & {"tabu", "max_iter", "epsilon", "start"}
    assert {o.name for o in spec.options} == read - TASK_FRAME, name


def test_every_spec_of_every_registry_has_an_options_tuple_of_options():
    from bnfk_core import registry as r

    for family in (r.KERNELS, r.LEARNERS, r.SCORES, r.ESTIMATORS, r.MISSING_DATA, r.IMPUTERS, r.CLUSTERERS):
        for spec in family.values():
            assert isinstance(spec.options, tuple) and all(isinstance(o, Option) for o in spec.options)
    for family in (r.CLASSIFIERS, r.CRITERIA):
        for spec in family.values():
            assert isinstance(spec.options, tuple)


def test_declared_defaults_are_the_behaviours_defaults():
    from bnfk_core.kernels import fisher_normalized as fn
    from bnfk_core.learning.structure import LearnTask

    alpha = next(o for o in KERNELS["fisher-normalized"].options if o.name == "alpha")
    weight = next(o for o in KERNELS["fisher-normalized"].options if o.name == "empty_weight")
    assert alpha.default == fn.DEFAULT_ALPHA and weight.default == fn.DEFAULT_NETWORK["empty_weight"]
    fields = {f: d.default for f, d in LearnTask.__dataclass_fields__.items()}
    for o in LEARNERS["hc"].options:
        assert o.default == fields[o.name], o.name


def test_interval_bool_is_not_an_int_and_nan_is_never_inside():
    ints, reals = Interval(int, 0, 10), Interval(float, 0, None, closed="neither")
    assert 3 in ints and np.int64(3) in ints and True not in ints and 2.5 not in ints and "3" not in ints
    assert 0.5 in reals and 0 not in reals and math.nan not in reals and math.inf not in reals
    assert Interval(float, 0, 1, closed="right").describe() == "a number in (0, 1]"
    assert Interval(int, 1, 1000).describe() == "an integer from 1 to 1000"


def _sample():
    from bnfk_core import load_csv

    d = load_csv(ROOT / "sample_data" / "house_votes_84.csv", class_column="class")
    return d.without_class().subset(list(range(60)))


@pytest.mark.parametrize(
    "kind, options, named",
    [
        ("fisher-normalized", {"alpah": 0.5}, "'alpah' (did you mean 'alpha'?)"),
        ("fisher-normalized", {"intra": "bogus"}, "'intra'"),
        ("fisher-normalized", {"pseudo_count": -1}, "'pseudo_count'"),
        ("fisher-normalized", {"pseudo_count": math.nan}, "'pseudo_count'"),
        ("fisher-normalized", {"alpha": 1.5}, "'alpha'"),
        ("fisher-normalized", {"classes": 0}, "'classes'"),
        ("lca-fisher", {"classes": 0}, "'classes'"),
        ("hamming", {"alpha": 0.5}, "'alpha'"),
        ("overlap", {"missing": "drop"}, "'missing'"),
    ],
)
def test_a_bad_kernel_option_is_one_sentence_naming_it(kind, options, named):
    with pytest.raises(KernelError) as err:
        KERNELS[kind].fit(_sample(), **options)
    text = str(err.value)
    assert named in text and f"'{kind}'" in text and text.count(". ") == 0


def test_the_normalised_kernel_now_reads_intra():
    d = _sample()
    none = KERNELS["fisher-normalized"].fit(d, structure="tree").gram(d)
    per_variable = KERNELS["fisher-normalized"].fit(d, structure="tree", intra="variable").gram(d)
    assert not np.allclose(none, per_variable)


@pytest.mark.parametrize(
    "options, named",
    [
        ({"max_parents": 2.5}, "'max_parents'"),
        ({"epsilon": math.nan}, "'epsilon'"),
        ({"epsilon": -1.0}, "'epsilon'"),
        ({"epsilon": math.inf}, "'epsilon'"),
        ({"tabu": -1}, "'tabu'"),
        ({"seed": -1}, "'seed'"),
        ({"restarts": 10**6}, "'restarts'"),
        ({"max_parents": True}, "'max_parents'"),
    ],
)
def test_a_bad_learning_option_is_refused_before_any_search(options, named):
    from bnfk_core.learning.structure import learn_structure

    with pytest.raises(StructureError) as err:
        learn_structure(_sample(), "hc", **options)
    assert named in str(err.value) and "'hc'" in str(err.value)


@pytest.mark.parametrize(
    "make, named",
    [
        (lambda e: e.FisherKernel(max_parents=2.5), "'max_parents'"),
        (lambda e: e.FisherKernel(k="3"), "'k'"),
        (lambda e: e.FisherKernel(normalize="yes"), "'normalize'"),
        (lambda e: e.FisherKernel(random_state=2**40), "'random_state'"),
        (lambda e: e.LatentClassModel(max_iter=-1), "'max_iter'"),
        (lambda e: e.LatentClassModel(n_components=0), "'n_components'"),
        (lambda e: e.NetworkClassifier(pseudo_count=-1), "'pseudo_count'"),
        (lambda e: e.KernelClustering(n_init=0), "'n_init'"),
    ],
)
def test_estimators_refuse_a_bad_hyper_parameter_in_one_sentence(make, named):
    from bnfk_core import estimators

    X = pd.DataFrame({"a": list("xyxyxyxy"), "b": list("ppqqppqq")})
    est = make(estimators)
    with pytest.raises(ValueError) as err:
        est.fit(X, [0, 1] * 4) if type(est).__name__ == "NetworkClassifier" else est.fit(X)
    assert named in str(err.value) and type(est).__name__ in str(err.value)


def test_check_options_lets_the_context_through_and_refuses_the_rest():
    declared = (Option("alpha", Interval(float, 0, 1, closed="right"), 0.25),)
    assert check_options(declared, {"alpha": 1, "seed": 3}, "kernel 'x'", KernelError, ("seed",))
    with pytest.raises(KernelError, match="no option 'beta'"):
        check_options(declared, {"beta": 1}, "kernel 'x'", KernelError, KERNEL_CONTEXT)


def test_valid_calls_give_the_numbers_they_gave_before():
    """Sums and one entry of each Gram matrix, and the arcs hc learns, as the code before the declarations
    computed them on the same rows."""
    from bnfk_core import kernels
    from bnfk_core.learning.structure import learn_structure
    from bnfk_core.network.model import fit

    d = _sample()
    res = learn_structure(d, "hc", seed=1, max_parents=2)
    assert res.dag.n_arcs == 12
    assert ("physician-fee-freeze", "adoption-of-the-budget-resolution") in set(res.dag.arcs)
    m = fit(res.dag, d, method="bdeu")
    before = {
        "fisher": ({}, 257.90167407766194, -0.4856557760155401),
        "fisher-normalized": ({"alpha": 0.5}, 467.0924658354134, 0.3189952449787733),
        "hamming": ({}, 1765.25, 0.8125),
        "scaled-hamming": ({}, 117.48014214046796, 11.84420142104626),
        "overlap": ({}, 1765.25, 0.8125),
        "lca-fisher": ({"classes": 2}, 1658.6182012465179, 0.46883434487032405),
    }
    for kind, (options, total, first) in before.items():
        K = kernels.gram(None if kind == "lca-fisher" else m, d, kind=kind, options=options)
        assert float(K.sum()) == pytest.approx(total, rel=1e-12), kind
        assert float(K[0, 1]) == pytest.approx(first, rel=1e-12, abs=1e-15), kind


def test_docs_options_md_is_the_generated_text():
    from bnfk_core.cli.options import options_markdown

    text = options_markdown()
    assert (ROOT / "docs" / "OPTIONS.md").read_text(encoding="utf-8") == text
    assert "| kernel | `fisher-normalized` | `alpha` | a number in (0, 1]" in text
