"""AppTest of pages/kernel_zoo.py (a quick kernel-zoo run written here) and of the quick run's files:
the stored ranks are the average over data sets of per-data-set ranks recomputed from the runs."""

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import page_app

from bnfk_core.reproduce import experiments as rep
from bnfk_core.reproduce.kernel_zoo import METRICS, ZOO_DIR, zoo_kernels

PAGE = "kernel_zoo.py"


@pytest.fixture(scope="module")
def zoo_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("kernel_zoo_page")
    rep.run_experiment("kernel-zoo", out, rep.Settings(quick=True, datasets=("hayes_roth", "soybean_small")))
    return out


def _clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_quick_run_files_and_ranks(zoo_dir):
    z = zoo_dir / ZOO_DIR
    for f in (
        "kernel_zoo.csv",
        "kernel_zoo.md",
        "kernel_zoo_ranks.csv",
        "kernel_zoo_runs.csv",
        "fig_kernel_zoo_ranks.svg",
        "fig_kernel_zoo_ranks.json",
        "fig_kernel_zoo_knn_by_dataset.svg",
    ):
        assert (z / f).exists(), f
    assert (z / "fig_kernel_zoo_ranks.svg").read_text().startswith("<svg")
    runs = pd.read_csv(z / "kernel_zoo_runs.csv")
    assert set(runs["kernel"]) == {k for k, _, _ in zoo_kernels()}
    vals = runs[list(METRICS)]
    assert (vals.abs().le(1) | vals.isna()).all().all()
    assert vals[runs["kernel"] != "lca-clustering"].notna().all().all()  # only the LCA row has no kNN
    lca = runs[runs["kernel"] == "lca-clustering"]
    assert (lca["ari_cc"] == lca["ari_sc"]).all() and lca["knn"].isna().all()
    ranks = pd.read_csv(z / "kernel_zoo_ranks.csv").set_index("kernel")
    for m in METRICS:  # independent recomputation: rank per data set (1 = best), averaged
        mean = runs.groupby(["dataset", "kernel"])[m].mean().unstack()
        want = mean.rank(axis=1, ascending=False).mean(axis=0)
        np.testing.assert_allclose(ranks.loc[want.index, m], want.to_numpy())
    soy = runs[(runs["dataset"] == "soybean_small") & (runs["kernel"] == "fisher-exact-qnml")]
    assert (soy["network"] == "hc/qnml").all()  # 35 features > 16: hill climbing, recorded


def test_page_shows_the_run(zoo_dir, monkeypatch):
    monkeypatch.setenv("BNFK_RESULTS_DIR", str(zoo_dir))
    at = page_app(PAGE, 120).run()
    _clean(at)
    assert len(at.get("plotly_chart")) == 2
    assert len([b for b in at.get("download_button") if b.key.startswith("dl_zoo")]) == 4
    assert "eskin" in list(at.dataframe[0].value["name"])
    at.selectbox(key="w_zoo_metric").set_value("knn").run()
    _clean(at)


def test_page_without_results_says_how_to_make_them(tmp_path, monkeypatch):
    monkeypatch.setenv("BNFK_RESULTS_DIR", str(tmp_path))
    at = page_app(PAGE, 120).run()
    _clean(at)
    assert any("reproduce kernel-zoo" in i.value for i in at.info)
