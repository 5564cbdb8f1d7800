"""AppTest of pages/clustering.py: default render, switches, comparison and classification runs."""

import numpy as np
import pytest
from apptest_helpers import assert_clean, page_app
from streamlit.testing.v1 import AppTest


def _app(**state) -> AppTest:
    return page_app("clustering.py", 120, **state)


_clean = assert_clean


def test_default_page_renders_one_clustering():
    at = _app().run()
    _clean(at)
    metrics = {m.label: m.value for m in at.metric}
    # the default is the Fisher kernel of the current network (the default recipe's Chow-Liu tree, BDeu CPTs),
    # the empty network (scaled Hamming) beside it: both computed here directly on all 435 rows
    from conftest import _sample

    from bnfk_core.analyses.cluster.clustering import run_clustering
    from bnfk_core.data.table import load_csv
    from bnfk_core.network.dag import DAG
    from bnfk_core.network.model import fit

    d = load_csv(_sample("house_votes_84"), class_column="class", missing_policy="category")
    model = fit(DAG.from_dict(at.session_state["structure"]["dag"]), d.without_class(), method="bdeu")
    fisher = run_clustering(d, "fisher", "correlation", model=model, restarts=25, seed=0)["ari"]
    sh = run_clustering(d, "scaled-hamming", "correlation", restarts=25, seed=0)["ari"]
    assert at.session_state["clu_kernel"] == "fisher" and metrics["ARI"] == f"{fisher:.3f}"
    ari = next(m for m in at.metric if m.label == "ARI")
    assert ari.proto.delta == f"{fisher - sh:+.3f} vs empty network" and sh > 0.4
    assert len(at.get("plotly_chart")) == 3  # heatmap + two kernel-PCA maps
    table = at.dataframe[0].value
    assert int(table.values.sum()) == 435
    assert len(at.get("download_button")) >= 3


def test_switches_comparison_and_classification():
    at = _app(clu_kernels=["hamming", "scaled-hamming"], clu_runs=1, clu_clf_repeats=2, clu_restarts=5).run()
    _clean(at)
    at.radio(key="w_clu_algorithm").set_value("spectral").run()
    at.selectbox(key="w_clu_kernel").set_value("fisher").run()
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


def test_page_and_cli_give_the_same_clustering_for_the_same_seed():
    """The command the page prints, run in-process, gives the page's labels (all 435 rows are used)."""
    import contextlib
    import io
    import json
    import re
    import shlex

    from conftest import _sample

    from bnfk_core.cli.main import main

    at = _app(clu_seed=7, clu_restarts=10, clu_kernel="fisher", clu_network="qnml").run()
    _clean(at)
    page_labels = list(at.session_state["clu_result"]["labels"])
    assert len(page_labels) == 435
    caption = next(c.value for c in at.caption if "The same result on the command line" in c.value)
    argv = shlex.split(re.search(r"`(python -m bnfk_core [^`]*)`", caption).group(1))[3:]
    assert "--missing-policy" in argv and argv[argv.index("--missing-policy") + 1] == "category"
    argv[1] = str(_sample("house_votes_84"))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    assert json.loads(buf.getvalue())["labels"] == page_labels


def test_one_missing_value_policy_story():
    """Uploads start as load_csv and the CLI read a file; the default sample opens with its catalog policy."""
    import json

    from conftest import SAMPLE_DIR

    from bnfk_ui.state import choices

    catalog = json.loads((SAMPLE_DIR / "catalog.json").read_text())
    assert choices.DEFAULTS["missing_policy"] == catalog[choices.DEFAULT_DATASET]["missing_policy"]
    assert choices.UPLOAD_MISSING_POLICY == "missing"


def test_the_heatmap_draws_at_most_heatmap_rows_while_every_row_is_clustered():
    """1,000 clustered rows, 400 drawn evenly along the cluster order (the clusters keep their shares)."""
    import json

    import numpy as np

    from bnfk_core.views.figures import DRAW_ROWS as HEATMAP_ROWS

    at = _app(clu_rows=435).run()
    assert not at.exception and not at.error, (at.exception, at.error)
    labels = np.asarray(at.session_state["clu_result"]["labels"])
    assert len(labels) == 435 > HEATMAP_ROWS
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    heat = [
        t
        for t in spec["data"]
        if t.get("type") == "heatmap" and isinstance(t.get("y"), list) and len(t["y"]) > 1
    ]
    assert heat and all(len(t["y"]) == HEATMAP_ROWS for t in heat)
    assert any(f"{HEATMAP_ROWS} of the 435 rows drawn" in c.value for c in at.caption)


def test_latent_class_algorithm_from_the_registry():
    """The Algorithm radio offers CLUSTERERS' ``lca``: the page's labels are the modal classes of fit_lca on
    the same rows (same seed, starts = the restarts box), its ARI is scikit-learn's on them, and its command
    line agrees."""
    import contextlib
    import io
    import json
    import re
    import shlex

    from conftest import _sample
    from sklearn.metrics import adjusted_rand_score

    from bnfk_core.cli.main import main
    from bnfk_core.data.table import load_csv
    from bnfk_core.lca import fit_lca

    at = _app(clu_restarts=5, clu_seed=3).run()
    at.radio(key="w_clu_algorithm").set_value("lca").run()
    _clean(at)
    res = at.session_state["clu_result"]
    assert res["algorithm"] == "lca" and res["kernel"] is None and res["starts"] == 5
    d = load_csv(_sample("house_votes_84"), class_column="class", missing_policy="category")
    rows = res["rows"]
    sub = d.subset(rows)
    expected = fit_lca(sub.without_class(), 2, 5, 3).modal_classes(sub.without_class())
    labels = np.asarray(res["labels"])
    assert np.array_equal(labels, expected)
    ari = adjusted_rand_score(sub.labels(), labels)
    assert float({m.label: m.value for m in at.metric}["ARI"]) == pytest.approx(ari, abs=5e-4)
    assert ari > 0.4  # two parties: the two-class model finds them
    assert any("latent class model clusters the rows itself" in c.value for c in at.caption)
    caption = next(c.value for c in at.caption if "The same result on the command line" in c.value)
    argv = shlex.split(re.search(r"`(python -m bnfk_core [^`]*)`", caption).group(1))[3:]
    argv[1] = str(_sample("house_votes_84"))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    assert json.loads(buf.getvalue())["labels"] == labels.tolist()
