"""The option registries: one registration makes a kernel available everywhere a kernel is chosen."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bnfk_core import registry
from bnfk_core.analyses import cluster as C
from bnfk_core.cli import build_parser, main
from bnfk_core.data import load_csv
from bnfk_core.errors import BnfkError, KernelError, ModelError, StructureError
from bnfk_core.hamming_kernels import HammingKernel
from bnfk_core.kernels import gram

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
    registry.KERNELS.register(registry.KernelSpec(
        name=TOY, label="Toy double Hamming", abbr="2H", fit=lambda train, **_: DoubleHamming(train),
        shift="adaptive", psd=True, family="kernel", description="2 x Hamming, for the registry test"))
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
    """Correlation clustering with adaptive shift and kNN are invariant to scaling the kernel by 2 (exactly, in
    floating point), so the toy kernel must reproduce the Hamming kernel's labels and accuracies."""
    base = ["--label-column", "class", "--missing-policy", "category", "--seed", "3"]
    toy = _run(capsys, ["cluster", HV, "--kernel", toy_kernel, "--restarts", "3", *base])
    ham = _run(capsys, ["cluster", HV, "--kernel", "hamming", "--restarts", "3", *base])
    assert toy["labels"] == ham["labels"] and toy["ari"] == ham["ari"]
    assert toy["shift"] == "adaptive"          # the spec's shift is what 'auto' resolves to
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
    with pytest.raises(KernelError, match="Unknown kernel 'gauss'; choose one of fisher, scaled-hamming, hamming"):
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
    assert set(registry.LEARNERS) == {"empty", "naive-bayes", "hc", "tree", "tan", "kdb", "exact"}
    assert registry.feature_learners() == ("empty", "hc", "tree", "exact")
    assert {n: registry.kernel_abbr(n) for n in ("fisher", "scaled-hamming", "hamming")} == \
        {"fisher": "F", "scaled-hamming": "SH", "hamming": "H"}
    assert registry.KERNELS["fisher"].uses_network and not registry.KERNELS["hamming"].uses_network


def test_docs_options_table_is_generated_from_the_registries():
    """docs/OPTIONS.md is the registries' own table: a registered option missing from it fails here."""
    from pathlib import Path

    import bnfk_core  # noqa: F401 - every module registers on import
    import bnfk_core.analyses  # noqa: F401 - the imputation methods
    from bnfk_core import registry
    committed = (Path(__file__).resolve().parents[1] / "docs" / "OPTIONS.md").read_text(encoding="utf-8")
    assert committed == registry.options_markdown(), "run: python -m bnfk_core.registry > docs/OPTIONS.md"
    for reg in (registry.KERNELS, registry.LEARNERS, registry.SCORES, registry.ESTIMATORS):
        assert all(f"| `{name}` |" in committed for name in reg)
