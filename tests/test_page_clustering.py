"""AppTest of pages/clustering.py: default render, switches, comparison and classification runs."""

from streamlit.testing.v1 import AppTest

from apptest_helpers import assert_clean, page_app



def _app(**state) -> AppTest:
    return page_app("clustering.py", 120, **state)


_clean = assert_clean


def test_default_page_renders_one_clustering():
    at = _app().run()
    _clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["ARI"]) > 0.4          # house votes, scaled-Hamming, correlation clustering
    assert len(at.get("plotly_chart")) == 3      # heatmap + two kernel-PCA maps
    table = at.dataframe[0].value
    assert int(table.values.sum()) == 435
    assert len(at.get("download_button")) >= 3


def test_switches_comparison_and_classification():
    at = _app(clu_kernels=["hamming", "scaled-hamming"], clu_runs=1, clu_clf_repeats=2, clu_restarts=5).run()
    _clean(at)
    at.radio(key="w_clu_algorithm").set_value("spectral").run()
    at.radio(key="w_clu_kernel").set_value("fisher").run()
    _clean(at)
    at.button(key="clu_cmp_run").click().run()
    _clean(at)
    table = at.session_state["clu_cmp"][1]
    assert list(table["combination"]) == ["CC-H", "SC-H", "CC-SH", "SC-SH"]
    at.button(key="clu_clf_run").click().run()
    _clean(at)
    clf = at.session_state["clu_clf"][1]
    assert len(clf) == 4 and (clf["accuracy"] > 0.8).all()


def test_too_many_clusters_is_one_sentence():
    at = _app(clu_rows=20, clu_k=50).run()
    assert not at.exception
    assert any("Cannot make 50 clusters" in e.value for e in at.error)
