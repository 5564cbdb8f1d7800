"""AppTest of pages/latent_classes.py: the default run (BIC/AIC, profiles, sizes, identifiability, posteriors,
ARI) and the hand-over of the model to the Kernel page."""

import numpy as np
from apptest_helpers import assert_clean, page_app
from streamlit.testing.v1 import AppTest


def _app(**state) -> AppTest:
    return page_app("latent_classes.py", 180, **state)


def _fitted(at: AppTest) -> AppTest:
    at.button(key="lca_run").click().run()
    return at


def test_opening_the_page_runs_no_em():
    """EM for K = 1..4 waits for a click (it took seconds before anything showed)."""
    at = _app().run()
    assert_clean(at)
    assert not at.dataframe and not at.get("plotly_chart") and at.button(key="lca_run")


def test_default_page_fits_a_range_and_draws_everything():
    at = _fitted(_app().run())
    assert_clean(at)
    table = at.dataframe[0].value
    assert table["classes"].tolist() == [1, 2, 3, 4]
    assert np.all(np.diff(table["log-likelihood"]) > -1e-6)  # more classes never fit worse at the best
    assert len(at.get("plotly_chart")) == 4  # criteria, profiles, sizes, singular values
    post = at.dataframe[1].value
    probs = post[[c for c in post.columns if c.startswith("P(")]].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    assert post["row"].iloc[0] == 0  # data rows from 0, as the other pages
    import json

    config = json.loads(at.dataframe[1].proto.columns)  # 3 decimals: no 60-digit cells on a projector
    assert all(config[c]["type_config"]["format"] == "%.3f" for c in post.columns if c.startswith("P("))
    labels = {m.label for m in at.metric}
    assert {"ARI", "AMI", "V-measure", "Parameter sets with this distribution"} <= labels
    assert len(at.get("download_button")) >= 3


def test_pick_a_model_and_hand_it_to_the_kernel_page():
    at = _fitted(_app().run())
    at.selectbox(key="w_lca_pick").set_value(2).run()
    assert_clean(at)
    at.button(key="lca_use").click().run()
    assert_clean(at)
    fp, net = at.session_state["lca_network"]
    assert net.fit_info["hidden"] == "latent_class" and net.cpts[0].shape == (1, 2)
    assert at.success


def test_reversed_range_is_one_error():
    at = _app().run()
    at.number_input(key="w_lca_kmin").set_value(5).run()
    at.number_input(key="w_lca_kmax").set_value(2).run()
    assert at.error and not at.exception


def test_kernel_page_offers_the_latent_class_fisher_kernel():
    at = page_app("kernel.py", 180).run()
    at.selectbox(key="w_kernel_kind").set_value("lca-fisher").run()
    assert_clean(at)
    assert at.session_state["kernel_kind"] == "lca-fisher"
    m = {x.label: x.value for x in at.metric}
    assert m["K(A, B)"] == m["Σ K_i (unnormalised)"]


def test_clustering_page_with_the_latent_class_fisher_kernel():
    at = page_app("clustering.py", 300).run()
    at.selectbox(key="w_clu_kernel").set_value("lca-fisher").run()
    assert_clean(at)
    assert at.session_state["clu_kernel"] == "lca-fisher"


def test_profile_figure_shows_hostile_names_as_text():
    from bnfk_core.views.figures import latent_classes as figs

    fig = figs.profile_figure(
        ["<b>bold</b>"], [("$x^2$", "b")], [np.array([[0.2, 0.8], [0.5, 0.5]])], np.array([0.6, 0.4])
    )
    text = str(fig.to_plotly_json())
    assert "<b>bold</b>" not in text and "$x^2$" not in text
