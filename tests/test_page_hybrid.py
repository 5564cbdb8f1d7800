"""Numbers as numbers in the app: an upload of a mixed table keeps its numbers (the Structure and Model pages
work on a conditional linear Gaussian network), the Data page's number / category switch changes a column's
kind in the model, a hand-drawn arc from a number into a category is refused, and numeric evidence moves a
discrete posterior to the value Bayes' rule gives -- each checked against a computation by hand from the
fitted parameters (not through the functions the page calls)."""

import io
import json
import math

import numpy as np
import pytest
from apptest_helpers import assert_clean, page_app

from bnfk_core.hybrid import HybridNet, LinearGaussian, learn_hybrid_network, load_mixed, numeric_marginal
from bnfk_core.network.dag import DAG
from bnfk_ui.state.messages import plain

NAME = "mixed.csv"


def _truth() -> HybridNet:
    """A (2 states) -> X -> Y, B (3 states) alone; K a 1-5 rating that depends on nothing."""
    dag = DAG(["A", "B", "X", "Y"], [("A", "X"), ("X", "Y")])
    return HybridNet(
        dag,
        ("discrete", "discrete", "numeric", "numeric"),
        (("a0", "a1"), ("b0", "b1", "b2"), (), ()),
        (np.array([[0.35, 0.65]]), np.array([[0.2, 0.3, 0.5]]), None, None),
        (
            None,
            None,
            LinearGaussian(np.array([[-2.0], [3.0]]), np.array([1.0, 0.5])),
            LinearGaussian(np.array([[1.0, 0.8]]), np.array([0.3])),
        ),
    )


def _content(n: int = 600, seed: int = 3) -> bytes:
    s = _truth().sample(n, seed)
    k = np.random.default_rng(seed + 1).integers(1, 6, n)
    buf = io.StringIO()
    buf.write("A,B,X,Y,K\n")
    for r in range(n):
        buf.write(
            f"{s.states[0][s.codes[r, 0]]},{s.states[1][s.codes[r, 1]]},"
            f"{s.values[r, 2]:.6f},{s.values[r, 3]:.6f},{k[r]}\n"
        )
    return buf.getvalue().encode()


CONTENT = _content()


def _app(page: str, content: bytes = CONTENT, **state):
    at = page_app(
        page,
        240,
        dataset="upload",
        upload=(NAME, content),
        class_column=None,
        missing_policy="missing",
        **state,
    ).run()
    assert_clean(at)
    return at


def _fitted(at, numbers=("X", "Y")) -> HybridNet:
    """The hybrid network of the session's structure, fitted here from the file (independently of the app's
    caches)."""
    data = load_mixed(io.BytesIO(CONTENT), numeric_columns=list(numbers))
    dag = DAG.from_dict(at.session_state["structure"]["dag"])
    return learn_hybrid_network(data.select(list(dag.nodes)), dag=dag).model


def _traces(at, key_part: str = "") -> list[dict]:
    return [t for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]


def _arr(z) -> np.ndarray:
    """A plotly trace's array (plotly writes numpy arrays as {"dtype", "bdata" (base64), "shape"})."""
    if isinstance(z, dict):
        import base64

        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"])).astype(float)
    return np.asarray(z, float)


def _hybrid_heatmaps(at) -> list[np.ndarray]:
    """The z values of every heatmap of a chart titled by the hybrid network, flattened."""
    return [
        _arr(t["z"]).reshape(-1)
        for c in at.get("plotly_chart")
        for t in json.loads(c.proto.spec)["data"]
        if t.get("type") == "heatmap"
        and "z" in t
        and "hybrid" in json.dumps(json.loads(c.proto.spec)["layout"])
    ]


def _normal(x, mean, var):
    return np.exp(-0.5 * (x - mean) ** 2 / var) / np.sqrt(2 * np.pi * var)


def test_a_mixed_upload_keeps_its_numbers_and_draws_each_density():
    at = _app("structure.py")
    s = at.session_state["structure"]
    assert s["label"].startswith("Hybrid network")
    arcs = {tuple(a) for a in s["dag"]["arcs"]}
    assert ("A", "X") in arcs and {("X", "Y"), ("Y", "X")} & arcs  # the truth's skeleton
    # the DAG draws the two kinds of node and says which is which
    names = {t.get("name") for t in _traces(at)}
    assert {"numeric node (Gaussian)", "discrete node (CPT)"} <= names
    # K (5 distinct values) stays a category; the page that bins names the numbers it reads as categories
    assert any("X, Y as categories" in i.value for i in at.info)
    at = at.switch_page("pages/model.py")
    at.session_state["model_hyb_tab"] = "Densities"
    at.session_state["hyb_den_node"] = "Y"
    at.run()
    assert_clean(at)
    m = _fitted(at)
    traces = _traces(at)
    bars = [t for t in traces if t.get("type") == "bar" and str(t.get("name", "")).startswith("data")]
    curve = next(t for t in traces if str(t.get("name", "")).startswith("fitted density"))
    assert bars
    x, y = _arr(curve["x"]), _arr(curve["y"])
    # by hand: Y = b0 + w X + e, X | A = a ~ N(mu_a, s_a^2)  =>  Y | a ~ N(b0 + w mu_a, s^2 + w^2 s_a^2)
    i_a, i_x, i_y = (m.variables.index(v) for v in "AXY")
    pa = m.cpts[i_a][0]
    gx, gy = m.gaussians[i_x], m.gaussians[i_y]
    if m.dag.parents("Y") == ("X",):
        b0, w = gy.coef[0]
        want = sum(
            pa[a] * _normal(x, b0 + w * gx.coef[a, 0], gy.variance[0] + w * w * gx.variance[a])
            for a in (0, 1)
        )
        np.testing.assert_allclose(y, want, rtol=1e-9, atol=1e-12)
    # and the core's mixture agrees with the histogram's data: weights sum to one
    mix = numeric_marginal(m, "Y")
    assert math.isclose(mix.weights.sum(), 1.0, rel_tol=1e-12)


def test_the_cpt_tab_shows_one_gaussian_per_discrete_parent_configuration():
    at = _app("model.py", model_hyb_tab="CPTs and regressions", hyb_cpt_node="X")
    m = _fitted(at)
    g = m.gaussians[m.variables.index("X")]
    table = next(d.value for d in at.dataframe if "regression" in getattr(d.value, "columns", []))
    assert list(table["given"]) == ["A=a0", "A=a1"]
    assert list(table["regression"]) == [f"μ = {g.coef[0, 0]:.4g}", f"μ = {g.coef[1, 0]:.4g}"]
    np.testing.assert_allclose(table["σ"], np.sqrt(g.variance), rtol=1e-12)
    curves = [t for t in _traces(at) if t.get("name") in ("A=a0", "A=a1")]
    assert len(curves) == 2
    for j, t in enumerate(curves):
        x = _arr(t["x"])
        np.testing.assert_allclose(_arr(t["y"]), _normal(x, g.coef[j, 0], g.variance[j]), rtol=1e-9)


@pytest.mark.parametrize("column, kind", [("K", "numeric"), ("X", "discrete")])
def test_the_number_category_switch_changes_the_models_kind(column, kind):
    at = _app("data.py")
    box = at.multiselect(key="w_numbers")
    assert set(box.value) == {"X", "Y"}  # K (5 distinct values) is a category by default
    keep = set(box.value) | {column} if kind == "numeric" else set(box.value) - {column}
    box.set_value([c for c in ("X", "Y", "K") if c in keep]).run()
    assert_clean(at)
    assert at.session_state["number_kinds"] == {column: "number" if kind == "numeric" else "category"}
    shown = next(d.value for d in at.dataframe if "read as" in getattr(d.value, "columns", []))
    assert dict(zip(shown["column"], shown["read as"]))[column] == (
        "number" if kind == "numeric" else "category"
    )
    at = at.switch_page("pages/model.py")
    at.session_state["model_hyb_tab"] = "CPTs and regressions"
    at.session_state["hyb_cpt_node"] = column
    at.run()
    assert_clean(at)
    caption = next(c.value for c in at.caption if c.value.startswith("This page uses the hybrid network"))
    numbers = caption.split("numeric nodes ", 1)[1].split(" (Gaussian", 1)[0].split(", ")
    assert (column in numbers) == (kind == "numeric")
    has_regressions = any("regression" in getattr(d.value, "columns", []) for d in at.dataframe)
    assert has_regressions == (kind == "numeric")


def test_an_arc_from_a_number_into_a_category_is_refused():
    at = _app("structure.py")
    before = at.session_state["structure"]["dag"]["arcs"]
    at.selectbox(key="w_add_from").set_value("Y").run()
    at.selectbox(key="w_add_to").set_value("B").run()
    next(b for b in at.button if b.label == "Add arc").click().run()
    assert not at.exception
    assert at.session_state["structure"]["dag"]["arcs"] == before
    errors = [e.value for e in at.error]
    assert errors == [
        plain(
            "Arc Y -> B gives discrete node 'B' the numeric parent 'Y'; in a conditional linear Gaussian "
            "network a discrete node has only discrete parents."
        )
    ]


def test_numeric_evidence_gives_the_discrete_posterior_of_bayes_rule():
    at = _app("model.py", hyb_node="X")
    key = next(n.key for n in at.number_input if n.label == "Value of X")
    at.number_input(key=key).set_value(0.4).run()
    at.button(key="hyb_observe").click().run()
    assert_clean(at)
    assert at.session_state["hybrid_evidence"] == {"X": 0.4}
    table = next(d.value for d in at.dataframe if "probability" in getattr(d.value, "columns", []))
    got = {(v, s): p for v, s, p in table.itertuples(index=False)}
    m = _fitted(at)
    # by hand: P(A = a | X = x) is proportional to P(a) N(x; mu_a, s_a^2); B stays at its prior; Y is barren
    i_a, i_b, i_x = (m.variables.index(v) for v in "ABX")
    g = m.gaussians[i_x]
    w = m.cpts[i_a][0] * _normal(0.4, g.coef[:, 0], g.variance)
    want = w / w.sum()
    np.testing.assert_allclose([got[("A", "a0")], got[("A", "a1")]], want, rtol=1e-9)
    np.testing.assert_allclose([got[("B", b)] for b in ("b0", "b1", "b2")], m.cpts[i_b][0], rtol=1e-9)
    assert abs(want[0] - m.cpts[i_a][0][0]) > 0.05  # the evidence moved it
    # Y given X: its own regression (the case conditional_normal covers), drawn beside its marginal
    cap = next(c.value for c in at.caption if c.value.startswith("Y given the evidence"))
    gy = m.gaussians[m.variables.index("Y")]
    assert m.dag.parents("Y") == ("X",)
    mean = gy.coef[0, 0] + gy.coef[0, 1] * 0.4
    assert cap == f"Y given the evidence: N(mean {mean:.4g}, sd {math.sqrt(gy.variance[0]):.4g})."


def test_a_link_carries_the_number_category_switches():
    """A bundled mixed sample with glu made a category: the link names it (``cat``), and opening the link
    gives the same switch and a hybrid network without glu as a number."""
    at = page_app("data.py", 240, dataset="hybrid_pima", class_column="type", missing_policy="missing").run()
    assert_clean(at)
    box = at.multiselect(key="w_numbers")
    assert "glu" in box.value
    box.set_value([c for c in box.value if c != "glu"]).run()
    assert_clean(at)
    link = dict(at.query_params)  # the address bar follows the view (bnfk_ui.share.sync)
    assert link.get("cat") in (["glu"], "glu")
    fresh = page_app("model.py", 240)  # a new visitor opens the link
    for k, v in link.items():
        fresh.query_params[k] = v
    fresh.run()
    assert_clean(fresh)
    assert fresh.session_state["number_kinds"] == {"glu": "category"}
    caption = next(c.value for c in fresh.caption if c.value.startswith("This page uses the hybrid network"))
    numbers = caption.split("numeric nodes ", 1)[1].split(" (Gaussian", 1)[0].split(", ")
    assert "glu" not in numbers and "bmi" in numbers


def _with_holes(content: bytes) -> bytes:
    """Every 7th row's X blank and every 11th row's B blank."""
    lines = content.decode().splitlines()
    out = [lines[0]]
    for r, line in enumerate(lines[1:]):
        cells = line.split(",")
        if r % 7 == 0:
            cells[2] = ""
        if r % 11 == 0:
            cells[1] = ""
        out.append(",".join(cells))
    return ("\n".join(out) + "\n").encode()


def test_imputation_fills_a_number_with_its_conditional_mean():
    holes = _with_holes(CONTENT)
    at = _app("imputation.py", holes)
    assert "Numeric cells filled" not in [m.label for m in at.metric]  # opening the page fills nothing
    at.button(key="imp_mine_run").click().run()
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Numeric cells filled"] == f"{len(range(0, 600, 7)):,}"
    assert metrics["Categorical cells filled"] == f"{len(range(0, 600, 11)):,}"
    frame = next(d.value for d in at.dataframe if "X" in getattr(d.value, "columns", []))
    data = load_mixed(io.BytesIO(holes), numeric_columns=["X", "Y"])
    dag = DAG.from_dict(at.session_state["structure"]["dag"])
    m = learn_hybrid_network(data.select(list(dag.nodes)), dag=dag).model
    gx, gy = m.gaussians[m.variables.index("X")], m.gaussians[m.variables.index("Y")]
    a = data.codes[7, data.index("A")]  # row 7: X blank, A and Y observed
    y = data.values[7, data.index("Y")]
    if m.dag.parents("X") == ("A",):  # A -> X -> Y
        assert m.dag.parents("Y") == ("X",)
        b0, w = gy.coef[0]
        # by hand: p(x | a, y) ∝ N(x; mu_a, s_a^2) N(y; b0 + w x, s_y^2), precision 1/s_a^2 + w^2/s_y^2
        prec = 1 / gx.variance[a] + w * w / gy.variance[0]
        mean = (gx.coef[a, 0] / gx.variance[a] + w * (y - b0) / gy.variance[0]) / prec
    else:  # A -> X <- Y (structural EM's choice on this table): X's own regression on A and Y
        assert m.dag.parents("X") == ("A", "Y") and not m.dag.children("X")
        mean = gx.coef[a, 0] + gx.coef[a, 1] * y
    assert frame.loc[7, "X"] == pytest.approx(mean, rel=1e-6)


def test_kernel_and_clustering_use_the_hybrid_fisher_kernel():
    from bnfk_core.kernels import hybrid_fisher_gram
    from bnfk_core.kernels.embed import sample_rows

    at = _app("kernel.py", kernel_rows=60, kernel_normalize=False, kernel_order="data")
    assert any(c.value.startswith("The Fisher kernel here is the hybrid network's") for c in at.caption)
    m = _fitted(at)
    rows = sample_rows(600, 60, int(at.session_state["kernel_seed"]))
    data = load_mixed(io.BytesIO(CONTENT), numeric_columns=["X", "Y"])
    K = hybrid_fisher_gram(m, data.subset(rows))
    heat = _hybrid_heatmaps(at)
    assert heat, "the main panel is titled by the hybrid network"
    # the main panel draws the hybrid Gram matrix of these rows in data order (as float32: plotly's z)
    np.testing.assert_allclose(heat[0], K.reshape(-1), rtol=1e-6, atol=1e-6)
    at = at.switch_page("pages/clustering.py").run()
    assert_clean(at)
    assert any("Fisher kernel of the hybrid network" in c.value for c in at.caption)


def test_the_mixed_benchmark_scores_numbers_by_rmse_and_categories_by_accuracy():
    from bnfk_core.analyses.impute.mixed import hide_mixed

    at = _app("imputation.py", hyb_imp_methods=["mean-mode", "clg"], hyb_imp_ratio=0.2, hyb_imp_seed=4)
    at.button(key="hyb_imp_run").click().run()
    assert_clean(at)
    summary = next(d.value for d in at.dataframe if "pooled RMSE / sd" in getattr(d.value, "columns", []))
    rmse = next(d.value for d in at.dataframe if getattr(d.value.index, "name", None) == "RMSE of column")
    # mean-mode by hand on the same hidden cells: each number by its column's observed mean, each category
    # by its most frequent observed state
    truth = load_mixed(io.BytesIO(CONTENT), numeric_columns=["X", "Y"]).select(["A", "B", "X", "Y", "K"])
    masked, hidden = hide_mixed(truth, 0.2, 4)
    z2, hits, cats = [], 0, 0
    for i, v in enumerate(truth.variables):
        h = hidden[:, i]
        if truth.kinds[i] == "numeric":
            err = np.nanmean(masked.values[:, i]) - truth.values[h, i]
            assert rmse.loc[v, "mean-mode"] == pytest.approx(np.sqrt(np.mean(err**2)), rel=1e-9)
            z2.append((err / np.nanstd(truth.values[:, i])) ** 2)
        else:
            c = masked.codes[:, i]
            mode = np.argmax(np.bincount(c[c >= 0], minlength=len(truth.states[i])))
            hits += int((truth.codes[h, i] == mode).sum())
            cats += int(h.sum())
    row = summary.set_index("imputer").loc["mean-mode"]
    assert row["pooled RMSE / sd"] == pytest.approx(np.sqrt(np.concatenate(z2).mean()), rel=1e-9)
    assert row["accuracy (categories)"] == pytest.approx(hits / cats, rel=1e-12)
    # the network's conditional means beat the column means on X and Y (they depend on A and on each other)
    assert (rmse.loc[["X", "Y"], "clg"] < rmse.loc[["X", "Y"], "mean-mode"]).all()


def test_a_session_file_carries_the_number_category_switches():
    """The session file of a mixed sample with glu made a category holds the switch ("numbers"), and
    opening it gives the same switch and a hybrid network without glu as a number; a switch naming a column
    that is not there, or a kind that is not one, is one sentence."""
    from apptest_helpers import open_sidebar_box
    from test_share import _session_from

    from bnfk_core.serving.session_files import SessionError, parse_session

    at = page_app("data.py", 240, dataset="hybrid_pima", class_column="type", missing_policy="missing").run()
    box = at.multiselect(key="w_numbers")
    box.set_value([c for c in box.value if c != "glu"]).run()
    assert_clean(at)
    blob = _session_from(at)
    doc = json.loads(blob)
    assert doc["numbers"] == {"glu": "category"}
    assert parse_session(blob).number_kinds == {"glu": "category"}
    fresh = open_sidebar_box(page_app("model.py", 240).run(), "share")
    fresh.file_uploader(key="w_session_file").upload("pima_session.json", blob, "application/json").run()
    assert_clean(fresh)
    fresh.switch_page("pages/model.py").run()
    assert fresh.session_state["number_kinds"] == {"glu": "category"}
    caption = next(c.value for c in fresh.caption if c.value.startswith("This page uses the hybrid network"))
    numbers = caption.split("numeric nodes ", 1)[1].split(" (Gaussian", 1)[0].split(", ")
    assert "glu" not in numbers and "bmi" in numbers
    for bad in ({"nope": "number"}, {"glu": "text"}):
        with pytest.raises(SessionError, match='"numbers" maps feature columns'):
            parse_session(json.dumps({**doc, "numbers": bad}))


def test_the_kernel_page_reuses_the_network_learned_on_an_incomplete_table(monkeypatch):
    """With missing cells the network Home learned (structural EM) is the Kernel page's: no second EM fit of
    the same DAG, and the heatmap is the hybrid Fisher kernel of that very network."""
    import bnfk_core.hybrid as hybrid_face
    from bnfk_core.kernels import hybrid_fisher_gram
    from bnfk_core.kernels.embed import sample_rows

    content = _with_holes(CONTENT)
    real, fits = hybrid_face.learn_hybrid_network, []

    def counting(data, **kw):
        fits.append(kw.get("dag"))
        return real(data, **kw)

    monkeypatch.setattr(hybrid_face, "learn_hybrid_network", counting)
    at = _app("structure.py", content)
    at.session_state["kernel_rows"] = 60
    at.session_state["kernel_normalize"] = False
    at.session_state["kernel_order"] = "data"
    at = at.switch_page("pages/kernel.py").run()
    assert_clean(at)
    assert fits and fits[0] is None, "Home's structure is searched"
    assert [d for d in fits if d is not None] == [], "the learned network was fitted again"
    data = load_mixed(io.BytesIO(content), numeric_columns=["X", "Y"])
    learned = real(data)  # searched here, outside the app's caches
    assert DAG.from_dict(at.session_state["structure"]["dag"]).sorted_arcs() == learned.dag.sorted_arcs()
    rows = sample_rows(600, 60, int(at.session_state["kernel_seed"]))
    K = hybrid_fisher_gram(learned.model, data.subset(rows))
    heat = _hybrid_heatmaps(at)
    assert heat
    np.testing.assert_allclose(heat[0], K.reshape(-1), rtol=1e-6, atol=1e-6)
