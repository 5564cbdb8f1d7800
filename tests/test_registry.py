"""The option registries: one registration makes a kernel available everywhere a kernel is chosen."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bnfk_core import registry
from bnfk_core.analyses.cluster import clustering as C
from bnfk_core.cli import build_parser, main
from bnfk_core.data.table import load_csv
from bnfk_core.errors import BnfkError, KernelError, ModelError, StructureError
from bnfk_core.kernels.fisher import gram
from bnfk_core.kernels.hamming import HammingKernel

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")
TOY = "toy-double-hamming"


class DoubleHamming(HammingKernel):
    """Twice the Hamming kernel: a kernel nobody wrote into any list."""

    name = TOY

    def gram(self, X, Y=None, **kw):
        return 2.0 * super().gram(X, Y, **kw)

    def contributions(self, x, y):
        return 2.0 * super().contributions(x, y)


@pytest.fixture
def toy_kernel():
    registry.KERNELS.register(
        registry.KernelSpec(
            name=TOY,
            label="Toy double Hamming",
            abbr="2H",
            fit=lambda train, **_: DoubleHamming(train),
            shift="adaptive",
            psd=True,
            family="kernel",
            description="2 x Hamming, for the registry test",
        )
    )
    yield TOY
    registry.KERNELS.unregister(TOY)


def _choices(argv_prefix, dest):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    p = sub.choices[argv_prefix]
    return next(a for a in p._actions if a.dest == dest).choices


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_registered_kernel_reaches_cli_choices(toy_kernel):
    for command, dest in (("cluster", "kernel"), ("classify", "kernel"), ("kernel", "kind")):
        assert toy_kernel in _choices(command, dest), command
    registry.KERNELS.unregister(toy_kernel)
    assert toy_kernel not in _choices("cluster", "kernel")


def test_registered_kernel_runs_cluster_and_classify(capsys, toy_kernel):
    """Correlation clustering with adaptive shift and kNN are invariant to scaling the kernel by 2 (exactly,
    in floating point), so the toy kernel must reproduce the Hamming kernel's labels and accuracies."""
    base = ["--label-column", "class", "--missing-policy", "category", "--seed", "3"]
    toy = _run(capsys, ["cluster", HV, "--kernel", toy_kernel, "--restarts", "3", *base])
    ham = _run(capsys, ["cluster", HV, "--kernel", "hamming", "--restarts", "3", *base])
    assert toy["labels"] == ham["labels"] and toy["ari"] == ham["ari"]
    assert toy["shift"] == "adaptive"  # the spec's shift is what 'auto' resolves to
    opts = ["--classifier", "knn", "--repeats", "2", "--quiet", *base]
    toy_c = _run(capsys, ["classify", HV, "--kernel", toy_kernel, *opts])
    ham_c = _run(capsys, ["classify", HV, "--kernel", "hamming", *opts])
    assert toy_c["accuracy_per_repeat"] == ham_c["accuracy_per_repeat"]


def test_registered_kernel_in_compare_table_and_gram(toy_kernel):
    data = load_csv(HV, class_column="class", missing_policy="category").subset(np.arange(60))
    df = C.compare(data, kernels=(toy_kernel, "hamming"), algorithms=("correlation",), runs=1, restarts=2)
    assert list(df["combination"]) == ["CC-2H", "CC-H"]
    assert df["ari"].iloc[0] == pytest.approx(df["ari"].iloc[1], abs=0)
    feats = data.without_class()
    np.testing.assert_array_equal(gram(None, feats, kind=toy_kernel), 2.0 * gram(None, feats, kind="hamming"))


def test_registry_refuses_duplicates_and_names_the_choices():
    spec = registry.KERNELS["hamming"]
    with pytest.raises(BnfkError, match="already registered"):
        registry.KERNELS.register(spec)
    with pytest.raises(
        KernelError, match="Unknown kernel 'gauss'; choose one of fisher, scaled-hamming, hamming"
    ):
        registry.KERNELS["gauss"]
    with pytest.raises(StructureError, match="Unknown structure-learning method"):
        registry.LEARNERS["magic"]
    with pytest.raises(StructureError, match="Unknown score"):
        registry.SCORES["mdl2"]
    with pytest.raises(ModelError, match="Unknown parameter method"):
        registry.ESTIMATORS["mle"]
    assert "gauss" not in registry.KERNELS and "hamming" in registry.KERNELS


def test_registries_hold_the_documented_options():
    assert tuple(registry.SCORES) == ("bic", "aic", "k2", "bdeu", "qnml", "kgv")
    assert tuple(registry.ESTIMATORS) == ("smoothed", "ml", "bdeu", "cnml")
    assert set(registry.LEARNERS) == {
        "empty",
        "naive-bayes",
        "hc",
        "hc-greedy",
        "tree",
        "tan",
        "kdb",
        "exact",
    }
    assert registry.feature_learners() == ("empty", "hc", "hc-greedy", "tree", "exact")
    assert {n: registry.kernel_abbr(n) for n in ("fisher", "scaled-hamming", "hamming")} == {
        "fisher": "F",
        "scaled-hamming": "SH",
        "hamming": "H",
    }
    assert registry.KERNELS["fisher"].uses_network and not registry.KERNELS["hamming"].uses_network


def test_docs_options_table_is_generated_from_the_registries():
    """docs/OPTIONS.md is the registries' own table: a registered option missing from it fails here."""
    from bnfk_core.cli.options import options_markdown

    committed = (Path(__file__).resolve().parents[1] / "docs" / "OPTIONS.md").read_text(encoding="utf-8")
    assert committed == options_markdown(), "run: python -m bnfk_core options > docs/OPTIONS.md"
    for reg in (registry.KERNELS, registry.LEARNERS, registry.SCORES, registry.ESTIMATORS):
        assert all(f"| `{name}` |" in committed for name in reg)


# ====================================================================== clusterers, classifiers, prototype
# criteria
def _toy_gram_clusterer(K, n_clusters, **_):
    """Every row to the most similar of the first ``n_clusters`` rows (a clusterer nobody wrote into any
    list)."""
    from bnfk_core.analyses.cluster.common import ClusterResult, renumber

    labels = renumber(np.argmax(np.asarray(K)[:, :n_clusters], axis=1))
    return ClusterResult(labels, "toy-first-rows", n_clusters, int(labels.max() + 1), "none", 0)


def _toy_nearest(Ktr, Kte, dte, ytr, classes, **_):
    """1-nearest neighbour by the largest kernel value (first on ties), as hard votes."""
    P = np.zeros((Kte.shape[0], len(classes)))
    P[np.arange(len(P)), np.searchsorted(classes, ytr[np.argmax(Kte, axis=1)])] = 1.0
    return P


def _toy_mmd(model, data):
    """The MMD criterion under another name (so its selection must equal ``mmd``'s)."""
    from bnfk_core.analyses.prototypes.criteria import MMDCriterion

    return MMDCriterion.from_model(model, data)


@pytest.fixture
def toy_members():
    registry.CLUSTERERS.register(
        registry.ClustererSpec(
            "toy-first-rows",
            "Toy first rows",
            gram=_toy_gram_clusterer,
            abbr="TF",
            description="for the registry test",
        )
    )
    registry.CLASSIFIERS.register(
        registry.ClassifierSpec("toy-nearest", "Toy nearest", _toy_nearest, "toy 1-NN (k ignored: {k})")
    )
    registry.CRITERIA.register(registry.CriterionSpec("toy-mmd", "Toy MMD", _toy_mmd))
    yield
    registry.CLUSTERERS.unregister("toy-first-rows")
    registry.CLASSIFIERS.unregister("toy-nearest")
    registry.CRITERIA.unregister("toy-mmd")


def test_registered_clusterer_classifier_and_criterion_reach_the_cli_and_the_page_settings(toy_members):
    from bnfk_core.serving import settings

    assert "toy-first-rows" in _choices("cluster", "algorithm")
    assert "toy-nearest" in _choices("classify", "classifier")
    assert "toy-mmd" in _choices("prototypes", "criterion")
    # the pages' radios read these label views (Clustering: algorithm, Prototypes: criterion)
    assert settings.ALGORITHMS["toy-first-rows"] == "Toy first rows"
    assert settings.PROTOTYPE_CRITERIA["toy-mmd"] == "Toy MMD"
    parsed, notes = settings.check_settings(
        {"clu_algorithm": "toy-first-rows", "proto_criterion": "toy-mmd"}, settings.SETTINGS
    )
    assert notes == [] and parsed["clu_algorithm"] == "toy-first-rows"
    assert C.classifier_label("toy-nearest", k=3) == "toy 1-NN (k ignored: 3)"


def test_registered_clusterer_and_classifier_run_from_the_cli(capsys, toy_members):
    """The toy clusterer's labels and the toy classifier's accuracies, recomputed here with numpy from the
    Hamming Gram matrix (the Hamming kernel needs no training rows, so each split's blocks are slices of
    it)."""
    from sklearn.model_selection import train_test_split

    from bnfk_core.analyses.cluster.common import renumber

    base = ["--label-column", "class", "--missing-policy", "category", "--seed", "3"]
    out = _run(
        capsys,
        ["cluster", HV, "--kernel", "hamming", "--algorithm", "toy-first-rows", "--clusters", "4", *base],
    )
    data = load_csv(HV, class_column="class", missing_policy="category")
    K = gram(None, data.without_class(), kind="hamming")
    assert (
        out["labels"] == renumber(np.argmax(K[:, :4], axis=1)).tolist()
        and out["algorithm"] == "toy-first-rows"
    )
    res = _run(
        capsys,
        [
            "classify",
            HV,
            "--kernel",
            "hamming",
            "--classifier",
            "toy-nearest",
            "--repeats",
            "2",
            "--quiet",
            *base,
        ],
    )
    y = data.labels()
    want = []
    for s in (3, 4):
        tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=s, shuffle=True)
        want.append(float(np.mean(y[tr][np.argmax(K[np.ix_(te, tr)], axis=1)] == y[te])))
    assert res["accuracy_per_repeat"] == pytest.approx(want, abs=1e-12)


def test_registered_criterion_selects_like_the_criterion_it_wraps(capsys, toy_members):
    args = [
        HV,
        "--structure",
        "hc",
        "--k",
        "6",
        "--n-init",
        "20",
        "--seed",
        "2",
        "--missing-policy",
        "category",
        "--quiet",
    ]
    toy = _run(capsys, ["prototypes", *args, "--criterion", "toy-mmd"])
    mmd = _run(capsys, ["prototypes", *args, "--criterion", "mmd"])
    assert toy["indices"] == mmd["indices"] and toy["mmd"] == mmd["mmd"] and toy["criterion"] == "toy-mmd"
    rnd = _run(capsys, ["prototypes", *args, "--criterion", "random"])
    assert rnd["swaps"] == 0 and rnd["mmd"] >= mmd["mmd"]  # the baseline: no greedy search, never better
    from bnfk_core.analyses.prototypes.selection import prepare_summarization, run_summarization

    data = load_csv(HV, class_column="class", missing_policy="category").subset(np.arange(200))
    exp = prepare_summarization(data, "hc", seed=1)
    both = run_summarization(exp, 8, random_draws=30, criteria=("mmd", "toy-mmd"), return_details=True)
    assert both["details"]["toy-mmd_rows"] == both["details"]["mmd_rows"]
    assert both["toy-mmd"]["nll"] == both["mmd"]["nll"]


def test_check_names_the_family_and_every_choice():
    assert registry.ESTIMATORS.check("cnml") == "cnml"
    with pytest.raises(
        ModelError, match="Unknown parameter method 'mle'; choose one of smoothed, ml, bdeu, cnml"
    ):
        registry.ESTIMATORS.check("mle")
    with pytest.raises(
        StructureError, match="Unknown missing-data method 'magic'; choose one of complete-rows"
    ):
        registry.MISSING_DATA.check("magic")


def test_learn_network_validates_before_learning():
    """An unknown CPT estimator or missing-data method is refused before any structure is learned."""
    from bnfk_core.learning.incomplete import learn_network

    data = load_csv(HV, class_column="class", missing_policy="missing").without_class()
    calls = []
    with pytest.raises(ModelError, match="Unknown parameter method 'mle'"):
        learn_network(data, "tree", params="mle", progress=lambda f, m: calls.append(m))
    with pytest.raises(StructureError, match="Unknown missing-data method 'magic'"):
        learn_network(data, "tree", missing_data="magic", progress=lambda f, m: calls.append(m))
    assert calls == []


def test_structural_em_result_declares_its_network():
    from dataclasses import fields

    from bnfk_core.learning.incomplete import learn_network
    from bnfk_core.learning.structure import LearnResult

    assert "model" in {f.name for f in fields(LearnResult)}
    data = (
        load_csv(HV, class_column="class", missing_policy="missing")
        .without_class()
        .select(["handicapped-infants", "water-project-cost-sharing", "adoption-of-the-budget-resolution"])
    )
    res, model = learn_network(data, "tree", missing_data="em")
    assert res.model is model and model.fit_info["missing_data"] == "em"
    res, model = learn_network(data, "tree", missing_data="complete-rows")
    assert res.model is None and model.fit_info["missing_data"] == "complete-rows"


def test_members_are_read_on_first_use_in_the_order_named():
    """A registry reads its declared member modules when first used, once, in order; a name declared twice or
    a malformed source is refused."""
    import sys as _sys
    import types

    mod = types.ModuleType("toy_members_for_test")
    mod.FIRST = (registry.ScoreSpec("toy-a", "A"), registry.ScoreSpec("toy-b", "B"))
    mod.SECOND = (registry.ScoreSpec("toy-c", "C"),)
    mod.CLASH = (registry.ScoreSpec("toy-a", "A again"),)
    _sys.modules[mod.__name__] = mod
    try:
        reg = registry.Registry("toy family")
        reg.members_from(
            "toy_members_for_test:FIRST", "toy_members_for_test:SECOND", "toy_members_for_test:FIRST"
        )
        assert reg._sources and not reg._registered  # nothing read yet
        reg.register(registry.ScoreSpec("toy-late", "Late"))  # registering reads the declarations first
        assert tuple(reg) == ("toy-a", "toy-b", "toy-c", "toy-late")
        reg.members_from("toy_members_for_test:CLASH")
        with pytest.raises(BnfkError, match="Two toy family members are named 'toy-a'"):
            len(reg)
        with pytest.raises(BnfkError, match="'module:attribute'"):
            reg.members_from("toy_members_for_test")
    finally:
        del _sys.modules[mod.__name__]


def test_lazy_behaviour_pickles_and_calls_the_named_function():
    """A declared member's behaviour crosses process boundaries (pickled specs) and calls what it names."""
    import pickle

    from bnfk_core.kernels.similarity import fit_measure

    spec = pickle.loads(pickle.dumps(registry.KERNELS["overlap"]))
    assert spec == registry.KERNELS["overlap"] and spec.fit.resolve().__name__ == "fit_registered"
    data = load_csv(HV, class_column="class", missing_policy="category").without_class().subset(np.arange(30))
    np.testing.assert_array_equal(spec.fit(data, seed=3).gram(data), fit_measure("overlap", data).gram(data))
