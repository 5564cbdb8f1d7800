"""The KGV tab of the Structure page: the KGV score among the choices, the pairwise KGV-MI heatmap, the
columns searched raw with their CPT bins, and the networks learned on raw numbers and on bins with their SHD
equal to the core's."""

import numpy as np
from apptest_helpers import assert_clean, page_app
from conftest import SAMPLE_DIR

from bnfk_core.data.table import load_csv
from bnfk_core.learning.kgv import kgv_mutual_information
from bnfk_core.learning.structure import learn_feature_structure
from bnfk_core.network.dag import structural_hamming_distance
from bnfk_core.registry import SCORES


def _tab_on(**state):
    at = page_app("structure.py", 240, structure_tab="KGV (mixed data)", **state).run()
    assert_clean(at)
    at.toggle(key="w_kgv_on").set_value(True).run()
    assert_clean(at)
    return at


def test_kgv_tab_on_waveform_compares_raw_and_binned_networks():
    at = _tab_on(dataset="waveform_5000", class_column="class", missing_policy="missing")
    data = load_csv(SAMPLE_DIR / "waveform_5000.csv", class_column="class")
    feat = data.without_class()
    raw = learn_feature_structure(
        feat, "hc", score="kgv", score_options={"kernel": "gaussian", "kappa": None}
    )
    binned = learn_feature_structure(
        feat, "hc", score="kgv", score_options={"kernel": "gaussian", "kappa": None, "bin_numbers": True}
    )
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Structural Hamming distance"]) == structural_hamming_distance(raw.dag, binned.dag) > 0
    assert int(metrics["Arcs (raw numbers)"]) == raw.dag.n_arcs
    tables = [d.value for d in at.dataframe]
    bins = next(t for t in tables if "CPT bins" in getattr(t, "columns", []))
    assert len(bins) == 40 and bins["CPT bins"].iloc[0].count("[") == 4
    mi = kgv_mutual_information(data)
    dl = [b for b in at.get("download_button") if "KGV-MI" in b.proto.label]
    assert dl and mi["matrix"].shape == (41, 41)
    # the heatmap the page draws is the core's KGV-MI matrix (same variables, same numbers)
    import json

    def as_array(z):  # plotly writes numpy arrays as {"dtype", "bdata" (base64), "shape"}
        if isinstance(z, dict):
            import base64

            shape = tuple(int(n) for n in str(z.get("shape", "")).split(",") if n.strip())
            return np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"])).reshape(
                shape or (-1,)
            )
        return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)

    heat = [
        as_array(t["z"])
        for c in at.get("plotly_chart")
        for t in json.loads(c.proto.spec)["data"]
        if t.get("type") == "heatmap" and "z" in t
    ]
    heat = [z for z in heat if z.shape == (41, 41)]
    assert len(heat) == 1
    z = heat[0].astype(float)
    shown = ~np.isnan(z)
    assert shown.sum() >= 41 * 40
    np.testing.assert_allclose(z[shown], np.asarray(mi["matrix"], float)[shown], rtol=1e-6, atol=1e-9)
    at.button(key="kgv_use_raw").click().run()
    assert_clean(at)
    assert at.session_state["structure"]["label"] == "Hill climbing (KGV, raw numbers)"
    at.session_state["structure_tab"] = "Learn"  # only the open tab is built
    at.run()
    # the Score box shows the registry's label, which says the numbers are searched raw (it fits the box at
    # 1280 px: tests/test_browser_projector.py)
    label = SCORES["kgv"].label
    assert label in at.selectbox(key="w_learn_score").options and "raw numbers" in label


def test_kgv_tab_without_numeric_columns_says_so_and_learns_with_kgv():
    at = _tab_on(dataset="zoo", class_column="class", missing_policy="missing")
    assert any("No column of these data was binned" in i.value for i in at.info)
    assert [m.label for m in at.metric].count("Structural Hamming distance") == 1


def test_learn_tab_learns_with_the_kgv_score_on_raw_numbers():
    at = page_app(
        "structure.py", 240, dataset="waveform_5000", class_column="class", missing_policy="missing"
    ).run()
    at.selectbox(key="w_learn_method").set_value("hc").run()
    at.selectbox(key="w_learn_score").set_value("kgv").run()
    next(b for b in at.button if b.label == "Learn structure").click().run()
    assert_clean(at)
    s = at.session_state["structure"]
    assert SCORES["kgv"].label in s["learned_label"]
    assert any("searched 40 numeric column(s) as numbers" in n for n in s["notes"])
    raw = learn_feature_structure(
        load_csv(SAMPLE_DIR / "waveform_5000.csv", class_column="class"),
        "hc",
        score="kgv",
        seed=int(at.session_state["learn_seed"]),
        max_parents=at.session_state["learn_max_parents"] or None,
    )
    assert set(map(tuple, s["dag"]["arcs"])) == set(raw.dag.arcs)


def test_kgv_figures_are_built_once_for_every_session(monkeypatch):
    """A rerun with the tab open, and a second session on the same data, draw the tab's figures without
    building them again (one heatmap and two networks per data and options), and send the same charts."""
    from bnfk_core.views import figures
    from bnfk_ui.sections import kgv as kgv_section
    from bnfk_ui.state import shared

    monkeypatch.setattr(kgv_section, "_FIGURES", shared.Kept(16))  # none built by an earlier test
    built = []
    real = figures.dag_figure
    monkeypatch.setattr(
        figures, "dag_figure", lambda *a, **k: (built.append(k.get("title")), real(*a, **k))[1]
    )
    state = dict(dataset="waveform_5000", class_column="class", missing_policy="missing")
    at = _tab_on(**state)
    specs = [c.proto.spec for c in at.get("plotly_chart") if "KGV" in c.proto.spec]
    kgv_built = [t for t in built if t and t.startswith("KGV")]
    assert sorted(kgv_built) == ["KGV on the bins", "KGV, raw numbers"]
    at.run()
    assert_clean(at)
    other = _tab_on(**state)
    assert [t for t in built if t and t.startswith("KGV")] == kgv_built
    assert [c.proto.spec for c in other.get("plotly_chart") if "KGV" in c.proto.spec] == specs
