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


# ---------------------------------------------------------------------- the other families
def _behaviour(spec):
    """The callable a spec runs (its lazy reference resolved), or None (``auto``, ``random``, a count
    score)."""
    for attribute in ("impute", "gram", "features", "run", "proba", "criterion", "scorer", "learn"):
        fn = getattr(spec, attribute, None)
        if fn is not None:
            return fn.resolve() if isinstance(fn, Lazy) else fn
    return None


def _takes_rest(fn, name: str) -> bool:
    return any(p.kind is p.VAR_KEYWORD and p.name == name for p in inspect.signature(fn).parameters.values())


def _defaults(fn) -> dict:
    return {p.name: p.default for p in inspect.signature(fn).parameters.values() if p.default is not p.empty}


def _families():
    from bnfk_core import registry as r

    return {
        "imputer": r.IMPUTERS,
        "clusterer": r.CLUSTERERS,
        "classifier": r.CLASSIFIERS,
        "criterion": r.CRITERIA,
        "score": r.SCORES,
        "missing": r.MISSING_DATA,
    }


def _members():
    return [(family, name) for family, registry in _families().items() for name in registry]


@pytest.mark.parametrize("family, name", _members())
def test_every_member_declares_exactly_the_keywords_its_behaviour_takes(family, name):
    from bnfk_core.analyses.impute.core import learn_model
    from bnfk_core.learning.kgv import KGVScorer

    spec = _families()[family][name]
    declared = {o.name for o in spec.options}
    fn = _behaviour(spec)
    if fn is None:  # auto, random, the count scores: nothing of their own but BDeu's ess
        assert declared == ({"ess"} if name == "bdeu" else set()), name
        return
    takes = _keywords(fn)
    if family == "score":  # the scorer's own options reach KGVScorer; the data's weights and numbers do not
        takes = (takes | (_keywords(KGVScorer.__init__) if _takes_rest(fn, "options") else set())) - {
            "weights",
            "numbers",
        }
    if family == "imputer" and _takes_rest(fn, "learn"):  # the network's options reach learn_model
        network = _keywords(learn_model) - {"seed"}
        assert takes | (network - {"missing_data"}) <= declared <= takes | network, name
        return
    assert declared == takes, name


@pytest.mark.parametrize("family, name", _members())
def test_every_member_declares_its_behaviours_defaults(family, name):
    from bnfk_core.analyses.impute.core import learn_model

    spec = _families()[family][name]
    fn = _behaviour(spec)
    if fn is None:
        return
    defaults = _defaults(fn) | ({} if family != "imputer" else _defaults(learn_model))
    for o in spec.options:
        if o.name in defaults:
            assert o.default == defaults[o.name], (name, o.name)


def test_the_shared_options_default_as_the_entry_points_do():
    from bnfk_core.analyses.cluster.classification import classify_many
    from bnfk_core.analyses.cluster.clustering import run_clustering
    from bnfk_core.analyses.impute.core import impute, learn_model
    from bnfk_core.analyses.prototypes.search import select_prototypes

    families = _families()
    entry = {
        "imputer": _defaults(impute) | _defaults(learn_model),
        "clusterer": _defaults(run_clustering),
        "classifier": _defaults(classify_many),
        "criterion": _defaults(select_prototypes),
    }
    for family, defaults in entry.items():
        for o in families[family].shared():
            if o.user and o.name in defaults:
                assert o.default == defaults[o.name], (family, o.name)


def _votes():
    from bnfk_core import load_csv

    return load_csv(ROOT / "sample_data" / "house_votes_84.csv", class_column="class").subset(list(range(80)))


def _tumour():
    """Eight columns of the first 120 rows of primary_tumor (80 missing cells)."""
    from bnfk_core import load_csv

    d = load_csv(ROOT / "sample_data" / "primary_tumor.csv").subset(list(range(120)))
    return d.select(list(d.variables)[:8])


def _imputed_mass(imp) -> float:
    return sum(float(P.max(axis=1).sum()) for rows, P in imp.cells.values())


def _run_imputer(options):
    from bnfk_core.analyses.impute.core import impute

    return impute(_tumour(), **options)


def _run_clusterer(options):
    from bnfk_core.analyses.cluster.clustering import run_clustering

    return run_clustering(_votes(), "hamming", n_clusters=2, **options)


def _run_classifier(options):
    from bnfk_core.analyses.cluster.classification import classify

    return classify(_votes(), "hamming", repeats=2, **options)


def _proto_model():
    from bnfk_core.learning.structure import learn_structure
    from bnfk_core.network.model import fit

    feats = _votes().without_class()
    return fit(learn_structure(feats, "tree", score="bic").dag, feats, method="bdeu"), feats


def _run_criterion(options):
    from bnfk_core.analyses.prototypes.search import select_prototypes

    model, feats = _proto_model()
    return select_prototypes(model, feats, 5, **options)


def _run_score(options):
    from bnfk_core.learning.structure import learn_structure

    return learn_structure(_votes().without_class(), "hc", seed=0, max_parents=2, **options)


def _run_missing(options):
    from bnfk_core.learning.incomplete import learn_network

    return learn_network(_tumour(), "tree", score="bic", params="bdeu", seed=0, **options)


@pytest.mark.parametrize(
    "run, options, named",
    [
        (_run_imputer, {"method": "wknn", "k": 0}, ("'k'", "'wknn'")),
        (_run_imputer, {"method": "mode", "k": 2.5}, ("'k'", "'mode'")),  # ignored by mode, still checked
        (_run_imputer, {"method": "bn", "strucure": "tree"}, ("'strucure'", "did you mean 'structure'")),
        (_run_imputer, {"method": "bn-em", "missing_data": "em"}, ("'missing_data'", "'bn-em'")),
        (_run_imputer, {"method": "bn", "pseudo_count": -1}, ("'pseudo_count'",)),
        (_run_clusterer, {"algorithm": "kmeans-features", "n_init": 10**7}, ("'n_init'", "1 to 1000")),
        (_run_clusterer, {"algorithm": "correlation", "restarts": 10**6}, ("'restarts'",)),
        (_run_clusterer, {"algorithm": "lca", "restarts": 50_000}, ("'starts'", "'lca'")),
        (_run_clusterer, {"algorithm": "correlation", "shift": "bogus"}, ("'shift'",)),
        (_run_clusterer, {"algorithm": "spectral", "seed": -1}, ("'seed'",)),
        (_run_classifier, {"classifier": "knn", "k": 0}, ("'k'", "'knn'")),
        (_run_classifier, {"classifier": "svm", "C": math.nan}, ("'C'", "'svm'")),
        (_run_classifier, {"classifier": "knn", "neighbours": "nearest"}, ("'neighbours'",)),
        (_run_criterion, {"criterion": "mmd", "n_init": 10**7}, ("'n_init'", "'mmd'")),
        (_run_criterion, {"criterion": "chi2", "max_passes": 0}, ("'max_passes'",)),
        (_run_score, {"score": "bdeu", "ess": -1.0}, ("'ess'", "'bdeu'")),
        (_run_score, {"score": "kgv", "score_options": {"kernel": "rbf"}}, ("'kernel'", "'kgv'")),
        (_run_score, {"score": "kgv", "score_options": {"kapa": 0.1}}, ("'kapa'", "did you mean 'kappa'")),
        (_run_missing, {"missing_data": "em", "pseudo_count": math.nan}, ("'pseudo_count'", "'em'")),
        (_run_missing, {"missing_data": "available-case", "tabuu": 3}, ("'tabuu'",)),
    ],
)
def test_a_bad_option_of_every_family_is_one_sentence_naming_it(run, options, named):
    from bnfk_core.errors import BnfkError

    with pytest.raises(BnfkError) as err:
        run(options)
    text = str(err.value)
    assert all(n in text for n in named), text
    assert text.count(". ") == 0 and text.endswith(".")


def test_the_lca_clusterer_checks_its_own_options():
    from bnfk_core.errors import BnfkError
    from bnfk_core.lca.cluster import cluster_lca

    with pytest.raises(BnfkError, match="'starts'"):
        cluster_lca(_votes(), 2, starts=0)
    with pytest.raises(BnfkError, match="no option 'bogus'"):
        cluster_lca(_votes(), 2, bogus=1)


def test_valid_calls_of_every_family_give_the_numbers_they_gave_before():
    """As the code before these declarations computed them on the same rows."""
    imputed = {
        "wknn": ({"k": 4, "seed": 1}, 58.30611543951934),
        "mode": ({}, 49.385451110061396),
        "bn": ({"structure": "tree", "score": "bic", "params": "bdeu"}, 46.865835307499864),
        "bn-em": ({"structure": "tree", "score": "bic"}, 53.23817871714776),
    }
    for method, (options, mass) in imputed.items():
        assert _imputed_mass(_run_imputer({"method": method, **options})) == pytest.approx(mass, rel=1e-12)
    clustered = {
        "correlation": ({"restarts": 5}, 41, 0.5571676184626669),
        "kmeans-features": ({"n_init": 2}, 41, 0.5571676184626669),
        "lca": ({"restarts": 3}, 39, 0.5571676184626669),
        "ward": ({}, 43, 0.48368308310016017),
    }
    for algorithm, (options, ones, ari) in clustered.items():
        out = _run_clusterer({"algorithm": algorithm, "seed": 1, **options})
        assert sum(out["labels"]) == ones and out["ari"] == pytest.approx(ari, rel=1e-12), algorithm
    for classifier, (accuracy, log_loss) in {
        "knn": (0.9375, 1.1525682338257819),
        "svm": (0.9375, 0.13729387493955653),
    }.items():
        res = _run_classifier({"classifier": classifier, "k": 5, "C": 2.0}).to_dict()
        assert res["accuracy"] == accuracy and res["log_loss"] == pytest.approx(log_loss, rel=1e-9)
    for criterion, (rows, mmd) in {
        "mmd": ([25, 30, 31, 57, 63], 1.677980307626979),
        "chi2": ([24, 32, 35, 56, 63], 2.135087329441431),
        "random": ([2, 35, 39, 58, 75], 10.737695735508582),
    }.items():
        p = _run_criterion({"criterion": criterion, "n_init": 10, "seed": 1, "max_passes": 20})
        assert sorted(int(i) for i in p.indices) == rows and p.mmd == pytest.approx(mmd, rel=1e-12)
    for score, (options, arcs, total) in {
        "bdeu": ({"ess": 2.0}, 20, -709.9409939334607),
        "kgv": ({"score_options": {"kappa": 0.05, "kernel": "linear"}}, 19, 352.63171497070533),
    }.items():
        res = _run_score({"score": score, **options})
        assert res.dag.n_arcs == arcs and res.score == pytest.approx(total, rel=1e-12), score
    for method, second in {
        "complete-rows": ("histologic-type", "bone"),
        "available-case": ("histologic-type", "bone"),
        "em": ("bone-marrow", "bone"),
    }.items():
        res, _ = _run_missing({"missing_data": method, "pseudo_count": 2.0})
        assert res.dag.n_arcs == 7 and sorted(res.dag.arcs)[1] == second, method


def test_the_power_alpha_is_declared_once_and_every_face_reads_it():
    """The normalised kernel's alpha, from its registration to the widgets: the app's settings, the Kernel
    page's slider and the Compare page's default are that one Option's."""
    from apptest_helpers import assert_clean, page_app

    from bnfk_core.kernels import fisher_normalized as fn
    from bnfk_core.registry import KERNELS
    from bnfk_core.serving.settings import SETTINGS
    from bnfk_ui.state.choices import DEFAULTS

    alpha = KERNELS["fisher-normalized"].option("alpha")
    assert SETTINGS["kernel_alpha"].option is alpha and SETTINGS["clu_alpha"].option is alpha
    assert (SETTINGS["kernel_alpha"].lo, SETTINGS["kernel_alpha"].hi) == alpha.ui_range[:2]
    assert fn.DEFAULT_ALPHA == alpha.default == DEFAULTS["cmp_alpha"]
    assert all(v in alpha.allowed for v in alpha.ui_range[:2])
    at = page_app("kernel.py", kernel_rows=120, kernel_kind="fisher-normalized").run()
    assert_clean(at)
    slider = at.slider(key="w_kernel_alpha")
    assert (slider.min, slider.max, slider.step) == pytest.approx(alpha.ui_range)
    assert slider.value == pytest.approx(alpha.default)
