"""The thesis's case tables for structure segments (chapter 6.1) against the kernel.

For two rows (u1, v1, w1) and (u2, v2, w2) the thesis gives the joint contribution of the
segment's variables in every match/mismatch case, in terms of

    alpha = P(u = u1), beta = P(v = v1), gamma = P(w = w1)   (marginals, not CPT rows)

and, per segment,

    single arc u -> v:     phi   = P(v1 | u1)
    V  u -> w <- v:        delta = P(u1, v1),  phi = P(w1 | u1, v1)
    A  u -> v, u -> w:     phi   = P(v1 | u1), theta = P(w1 | u1)
    chain w -> u -> v:     phi   = P(v1 | u1), psi = P(u1 | w1)

All probabilities here are computed by summing the enumerated joint (helpers_bruteforce),
never from bnfk_core's inference.  Cases (thesis 6.1.2):

    a) u= v= w=   b) u= v= w!=   c) u= v!= w=   d) u!= v= w=
    e) u= v!= w!= f) u!= v= w!=  g) u!= v!= w=  h) u!= v!= w!=

Note on the text: in the A-structure and chain tables the extraction put the e)-h) entries
in misaligned columns ("e) & & -1/alpha - 1  f) & & -1 ..."); we read them as
e) -1/alpha - 1, f) g) h) -1, and re-derived every entry of all four tables from
Theorem 1 by hand (K_i = [pi_i(x)=pi_i(y)]/P(pi_i(x)) ([x_i=y_i]/theta - 1)): they agree,
including the chain's c) = 1/(gamma psi) - 1/alpha - 1 (w and u match: K_w = 1/gamma - 1,
K_u = 1/(gamma psi) - 1/gamma, K_v = -1/alpha).
"""

import helpers_bruteforce as bf
import numpy as np
import pytest
from helpers_bruteforce import PATHS, forced_path

from bnfk_core.kernels import fisher as kernels
from bnfk_core.network.dag import DAG, segment_arcs

CASES2 = {"a": (1, 1), "b": (1, 0), "c": (0, 1), "d": (0, 0)}
CASES3 = {
    "a": (1, 1, 1),
    "b": (1, 1, 0),
    "c": (1, 0, 1),
    "d": (0, 1, 1),
    "e": (1, 0, 0),
    "f": (0, 1, 0),
    "g": (0, 0, 1),
    "h": (0, 0, 0),
}


def _pair(cards, flags, rng):
    """Rows x, y: y equals x where flags is 1 and differs where it is 0."""
    x = np.array([rng.integers(0, c) for c in cards])
    y = x.copy()
    for k, f in enumerate(flags):
        if not f:
            y[k] = (x[k] + 1 + rng.integers(0, cards[k] - 1)) % cards[k]
    return x, y


def _probs(model, x):
    """The thesis's Greek letters for the first row x = (u1, v1, w1), by enumeration."""
    table = bf.joint_table(model)
    P = lambda **kw: bf.marginal_prob(model, {"uvw".index(k): int(x["uvw".index(k)]) for k in kw}, table)  # noqa: E731
    out = {"alpha": P(u=1), "beta": P(v=1)}
    if model.n_vars >= 3:
        out["gamma"] = P(w=1)
    out["P_uv"] = P(u=1, v=1)
    if model.n_vars >= 3:
        out["P_uw"] = P(u=1, w=1)
        out["P_uvw"] = P(u=1, v=1, w=1)
    return out


def thesis_single_arc(case, p, arc: bool):
    a, b = p["alpha"], p["beta"]
    if not arc:  # empty network (scaled-Hamming)
        return {"a": 1 / a + 1 / b - 2, "b": 1 / a - 2, "c": 1 / b - 2, "d": -2.0}[case]
    phi = p["P_uv"] / a
    return {"a": 1 / (a * phi) - 1, "b": -1.0, "c": -1.0, "d": -1.0}[case]


def thesis_empty3(case, p):
    a, b, g = p["alpha"], p["beta"], p["gamma"]
    return {
        "a": 1 / a + 1 / b + 1 / g - 3,
        "b": 1 / a + 1 / b - 3,
        "c": 1 / a + 1 / g - 3,
        "d": 1 / b + 1 / g - 3,
        "e": 1 / a - 3,
        "f": 1 / b - 3,
        "g": 1 / g - 3,
        "h": -3.0,
    }[case]


def thesis_v(case, p):
    a, b = p["alpha"], p["beta"]
    delta = p["P_uv"]
    phi = p["P_uvw"] / delta
    return {
        "a": 1 / a + 1 / b - 2 + 1 / (delta * phi) - 1 / delta,
        "b": 1 / a + 1 / b - 2 - 1 / delta,
        "c": 1 / a - 2,
        "d": 1 / b - 2,
        "e": 1 / a - 2,
        "f": 1 / b - 2,
        "g": -2.0,
        "h": -2.0,
    }[case]


def thesis_a(case, p):
    a = p["alpha"]
    phi = p["P_uv"] / a
    theta = p["P_uw"] / a
    return {
        "a": 1 / (a * phi) + 1 / (a * theta) - 1 / a - 1,
        "b": 1 / (a * phi) - 1 / a - 1,
        "c": 1 / (a * theta) - 1 / a - 1,
        "d": -1.0,
        "e": -1 / a - 1,
        "f": -1.0,
        "g": -1.0,
        "h": -1.0,
    }[case]


def thesis_chain(case, p):
    a, g = p["alpha"], p["gamma"]
    phi = p["P_uv"] / a
    psi = p["P_uw"] / g
    return {
        "a": 1 / (a * phi) + 1 / (g * psi) - 1 / a - 1,
        "b": 1 / (a * phi) - 1 / a - 1,
        "c": 1 / (g * psi) - 1 / a - 1,
        "d": -1.0,
        "e": -1 / a - 1,
        "f": -1.0,
        "g": -1.0,
        "h": -1.0,
    }[case]


def thesis_full3(case, p):
    Pi = p["P_uvw"]
    return 1 / Pi - 1 if case == "a" else -1.0


SEGMENTS3 = {
    "v": (thesis_v, [("u", "w"), ("v", "w")]),
    "a": (thesis_a, [("u", "v"), ("u", "w")]),
    "chain": (thesis_chain, [("w", "u"), ("u", "v")]),
    "full": (thesis_full3, None),
    "empty": (thesis_empty3, []),
}


def _check(model, seg_idx, x, y, want, path_name):
    contrib = kernels.contributions(model, x, y)
    got = contrib[seg_idx].sum()
    assert np.isfinite(got)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)
    if len(seg_idx) == model.n_vars:  # the segment is the whole model: gram gives the same
        with forced_path(path_name):
            K = kernels.gram(model, np.vstack([x, y]))
            Kc = kernels.gram(model, x[None], other=y[None])
        assert K[0, 1] == pytest.approx(want, rel=1e-9, abs=1e-9)
        assert K[1, 0] == pytest.approx(want, rel=1e-9, abs=1e-9)
        assert Kc[0, 0] == pytest.approx(want, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("path_name", PATHS)
@pytest.mark.parametrize("arc", [False, True], ids=["empty", "arc"])
@pytest.mark.parametrize("case", list(CASES2))
@pytest.mark.parametrize("seed", [0, 1])
def test_single_arc_cases(path_name, arc, case, seed):
    rng = np.random.default_rng(100 + seed)
    cards = list(rng.integers(2, 5, 2))
    arcs = segment_arcs("single-arc", ["u", "v"]) if arc else []
    assert arcs == ([("u", "v")] if arc else [])
    model = bf.random_model(DAG(["u", "v"], arcs), cards, seed=seed)
    x, y = _pair(cards, CASES2[case], rng)
    want = thesis_single_arc(case, _probs(model, x), arc)
    _check(model, [0, 1], x, y, want, path_name)


@pytest.mark.parametrize("path_name", PATHS)
@pytest.mark.parametrize("kind", list(SEGMENTS3))
@pytest.mark.parametrize("case", list(CASES3))
@pytest.mark.parametrize("seed", [0, 1])
def test_two_arc_segment_cases(path_name, kind, case, seed):
    formula, arcs = SEGMENTS3[kind]
    if arcs is None:
        order = ["u", "v", "w"] if seed == 0 else ["w", "u", "v"]
        arcs = segment_arcs("full", order)
    elif kind in ("v", "a", "chain"):
        assert sorted(segment_arcs(kind, ["u", "v", "w"])) == sorted(arcs)  # the preset is the thesis's
    rng = np.random.default_rng(1000 + seed + 17 * len(kind))
    cards = list(rng.integers(2, 5, 3))
    model = bf.random_model(DAG(["u", "v", "w"], arcs), cards, seed=seed + len(kind))
    x, y = _pair(cards, CASES3[case], rng)
    want = formula(case, _probs(model, x))
    _check(model, [0, 1, 2], x, y, want, path_name)


@pytest.mark.parametrize("kind", ["v", "a", "chain"])
@pytest.mark.parametrize("case", list(CASES3))
def test_segment_inside_larger_network(kind, case):
    """Children outside the segment do not change the segment's terms (K_i depends on parents only)."""
    formula, arcs = SEGMENTS3[kind]
    arcs = arcs + [("w", "z"), ("v", "z"), ("u", "t")]
    rng = np.random.default_rng(7 + len(kind))
    cards = [3, 2, 3, 2, 3]
    model = bf.random_model(DAG(["u", "v", "w", "z", "t"], arcs), cards, seed=5)
    x, y = _pair(cards, CASES3[case] + (int(rng.integers(0, 2)), int(rng.integers(0, 2))), rng)
    want = formula(case, _probs(model, x))
    _check(model, [0, 1, 2], x, y, want, "auto")


def test_chain_alpha_is_the_propagated_marginal():
    """In w -> u -> v, K_v divides by P(u = u1), the marginal sum_w P(w) P(u1|w) -- not a CPT row."""
    from bnfk_core.network.model import BayesNet

    dag = DAG(["u", "v", "w"], [("w", "u"), ("u", "v")])
    cpt_w = np.array([[0.9, 0.1]])
    cpt_u = np.array([[0.8, 0.2], [0.1, 0.9]])  # P(u | w)
    cpt_v = np.array([[0.5, 0.5], [0.25, 0.75]])  # P(v | u)
    model = BayesNet(dag, (("0", "1"),) * 3, (cpt_u, cpt_v, cpt_w))
    # alpha = P(u=1) = 0.9*0.2 + 0.1*0.9 = 0.27 (by hand); case b) u, v match, w does not
    x, y = np.array([1, 1, 0]), np.array([1, 1, 1])
    phi = 0.75
    want = 1 / (0.27 * phi) - 1 / 0.27 - 1
    assert kernels.contributions(model, x, y).sum() == pytest.approx(want, rel=1e-12)
    # case e) only u matches: -1/alpha - 1
    x, y = np.array([1, 1, 0]), np.array([1, 0, 1])
    assert kernels.contributions(model, x, y).sum() == pytest.approx(-1 / 0.27 - 1, rel=1e-12)
