"""AppTest of pages/compare.py and the core comparison it draws (bnfk_core.analyses.segments.compare): A is
the current network, B is set in one click (chain, V-structure, A-structure); equivalent structures give one
kernel."""

import time

import numpy as np
import pytest
from apptest_helpers import ROOT, assert_clean, page_app

from bnfk_core.analyses.segments.compare import compare_structures
from bnfk_core.data.table import load_csv
from bnfk_core.kernels.fisher import gram
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit


@pytest.fixture(scope="module")
def hayes():
    return load_csv(str(ROOT / "sample_data" / "hayes_roth.csv"), class_column="class")


def test_core_comparison_against_direct_computation(hayes):
    feats = hayes.without_class()
    v = feats.variables
    chain, fork, vee = (
        DAG(v, arcs)
        for arcs in ([(v[0], v[1]), (v[1], v[2])], [(v[1], v[0]), (v[1], v[2])], [(v[0], v[1]), (v[2], v[1])])
    )
    c = compare_structures(hayes, chain, vee, rows=80, seed=1)
    sub = feats.subset(c.rows)
    np.testing.assert_allclose(c.a.K, gram(fit(chain, feats, method="bdeu"), sub), atol=1e-10)
    np.testing.assert_allclose(c.delta_K, gram(fit(vee, feats, method="bdeu"), sub) - c.a.K, atol=1e-10)
    np.testing.assert_allclose(c.baseline.K, gram(fit(DAG(v), feats, method="bdeu"), sub), atol=1e-10)
    assert not c.equivalent and c.max_abs_delta > 1e-3
    assert len(c.a.prototypes) == 10 and set(c.a.prototypes) <= set(c.rows.tolist())
    same = compare_structures(hayes, chain, fork, rows=80, seed=1)
    assert same.equivalent and same.max_abs_delta < 1e-9
    assert same.a.ari == same.b.ari and np.array_equal(same.a.clusters, same.b.clusters)
    assert same.agreement == 1.0 and same.prototype_overlap == 10
    smoothed = compare_structures(hayes, chain, fork, rows=80, seed=1, params="smoothed")
    assert smoothed.max_abs_delta > 1e-3 and smoothed.notes  # the estimator the theorem does not cover


def test_lecture_steps_each_one_click_and_fast():
    """Hayes-Roth: the page opens on A (the learned network) beside B = the empty network, a comparison that
    shows something; Chain, V-structure and A-structure are one click each, every
    step settles within 2 s once warm (on a loaded 2-core machine the first run compiles)."""
    at = page_app("compare.py", 120, dataset="hayes_roth", class_column="class").run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 5  # K_A, K_B, ΔK, outcomes, prototypes
    opened = {m.label: m.value for m in at.metric}
    assert float(opened["max |ΔK|"]) > 0 and opened["Equivalent"] == "no"
    assert any("B: 0 arcs" in c.value for c in at.caption)
    assert at.number_input(key="cmp_rows").value == 160  # the default 200 clamped to Hayes-Roth's rows
    seen = {}
    for key in ("cmp_chain", "cmp_v", "cmp_a", "cmp_chain"):
        t0 = time.perf_counter()
        at.button(key=key).click().run()
        seen.setdefault(key, []).append(time.perf_counter() - t0)
        assert_clean(at)
        b = DAG.from_dict(at.session_state["compare_b"][1])
        assert b.n_arcs == 2
        metrics = {m.label: m.value for m in at.metric}
        assert float(metrics["max |ΔK|"]) > 0
    assert seen["cmp_chain"][1] < 2.0, seen  # cached: a step back is instant
    assert max(t for ts in seen.values() for t in ts) < 10, seen


def test_promote_b_makes_it_the_current_network():
    at = page_app("compare.py", 120, dataset="hayes_roth", class_column="class").run()
    at.button(key="cmp_v").click().run()
    b = at.session_state["compare_b"][1]
    at.button(key="cmp_promote").click().run()
    assert_clean(at)
    assert at.session_state["structure"]["dag"] == b
    assert {m.label: m.value for m in at.metric}["max |ΔK|"] == "0"


def test_normalised_kernel_comparison_and_its_invariance(hayes):
    """The Compare view with the normalised Fisher kernel: A's Gram matrix is the core's normalized_gram of
    A's network; Markov-equivalent A and B (chain, fork) keep one kernel at α = 1 (a function of the Fisher
    kernel) but not at α < 1, and the comparison says so."""
    from bnfk_core.kernels.fisher_normalized import normalized_gram
    from bnfk_core.learning.recipe import fit_recipe

    feats = hayes.without_class()
    v = feats.variables
    chain, fork = DAG(v, [(v[0], v[1]), (v[1], v[2])]), DAG(v, [(v[1], v[0]), (v[1], v[2])])
    c = compare_structures(hayes, chain, fork, rows=80, seed=1, kernel="fisher-normalized", alpha=0.5)
    sub = feats.subset(c.rows)
    np.testing.assert_allclose(c.a.K, normalized_gram(fit_recipe(chain, feats), sub, alpha=0.5), atol=1e-10)
    np.testing.assert_allclose(np.diag(c.b.K), 1.0, atol=1e-12)
    assert c.equivalent and c.max_abs_delta > 1e-3
    assert any("not invariant" in n for n in c.notes)
    one = compare_structures(hayes, chain, fork, rows=80, seed=1, kernel="fisher-normalized", alpha=1.0)
    assert one.max_abs_delta < 1e-9 and not one.notes


def test_the_page_offers_the_normalised_kernel_with_its_caption():
    at = page_app("compare.py", 120, dataset="hayes_roth", class_column="class").run()
    assert at.selectbox(key="cmp_kernel").value == "fisher"
    at.selectbox(key="cmp_kernel").set_value("fisher-normalized").run()
    assert_clean(at)
    text = " ".join(c.value for c in at.caption)
    assert "Perronnin, Sánchez & Mensink 2010" in text and "not invariant under equivalent structures" in text
    from bnfk_core.kernels.fisher_normalized import DEFAULT_ALPHA

    assert at.number_input(key="cmp_alpha").value == DEFAULT_ALPHA  # the kernel's own default power
    at.button(key="cmp_chain").click().run()
    assert_clean(at)
    assert float({m.label: m.value for m in at.metric}["max |ΔK|"]) <= 2.0  # |K_alpha| <= 1


def test_the_presets_are_computed_before_their_click(monkeypatch):
    """While the page is looked at, the chain, V- and A-structure outcomes are computed in the background: the
    clicks then compute no network (only B changes: A's and the empty network's outcomes are kept too)."""
    import threading

    from bnfk_ui.state import compare as cmp_state

    at = page_app("compare.py", 120, dataset="hayes_roth", class_column="class", cmp_seed=7).run()
    assert_clean(at)
    for t in threading.enumerate():
        if t.name == "bnfk-compare-prefetch":
            t.join(timeout=120)
    calls = []
    real = cmp_state.network_outcome
    monkeypatch.setattr(cmp_state, "network_outcome", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    for key in ("cmp_chain", "cmp_v", "cmp_a"):
        at.button(key=key).click().run()
        assert_clean(at)
        assert float({m.label: m.value for m in at.metric}["max |ΔK|"]) > 0
    assert calls == []


def test_quick_changes_never_pile_up_prefetch_threads(monkeypatch):
    """One prefetch per session at a time: reruns while it works (25 quick changes of the seed) start none."""
    import threading
    import time

    from bnfk_ui.state import compare as cmp_state

    started = []
    real = cmp_state._outcome

    def slow(*a, **k):
        time.sleep(0.2)
        return real(*a, **k)

    monkeypatch.setattr(cmp_state, "_outcome", slow)
    real_start = threading.Thread.start
    monkeypatch.setattr(
        threading.Thread,
        "start",
        lambda self: (
            (started.append(self.name) if self.name == "bnfk-compare-prefetch" else None) or real_start(self)
        ),
    )
    at = page_app("compare.py", 120, dataset="hayes_roth", class_column="class").run()
    for seed in range(1, 26):
        at.number_input(key="cmp_seed").set_value(seed).run()
        alive = [t for t in threading.enumerate() if t.name == "bnfk-compare-prefetch"]
        assert len(alive) <= 1
    assert_clean(at)
    assert 1 <= len(started) < 25
    for t in threading.enumerate():
        if t.name == "bnfk-compare-prefetch":
            t.join(timeout=120)


def test_default_b_differs_from_a():
    from bnfk_ui.state.compare import default_b

    learned = DAG(["a", "b", "c"], [("a", "b")])
    assert default_b(learned, learned.to_dict(), ["a", "b", "c"]).n_arcs == 0  # A learned: B empty
    edited = DAG(["a", "b", "c"], [("b", "c")])
    assert default_b(edited, learned.to_dict(), ["a", "b", "c"]) == learned  # A edited: B the learned one
    assert default_b(edited, None, ["a", "b", "c"]).n_arcs == 0
