"""The current network drives every view: opened from a link with a structure on Hayes-Roth, the Clustering
page's default (the Fisher kernel of that network, BDeu CPTs) changes between a chain and a V-structure and
stays the same between a chain and a fork (Markov equivalent: paper Theorem 4 under a likelihood-equivalent
estimator)."""

import numpy as np
import pytest
from apptest_helpers import ROOT
from streamlit.testing.v1 import AppTest

from bnfk_core import gram, load_csv
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit

APP = str(ROOT / "app.py")
# Hayes-Roth's features in file order: hobby (0), age (1), educational-level (2), marital-status (3)
CHAIN, FORK, V = "0-1.1-2", "1-0.1-2", "0-1.2-1"


def _clustering(arcs: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in {"data": "hayes_roth", "class": "class", "arcs": arcs}.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/clustering.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.fixture(scope="module")
def opened():
    return {name: _clustering(arcs) for name, arcs in (("chain", CHAIN), ("fork", FORK), ("v", V))}


def test_the_default_kernel_is_the_current_networks_fisher_kernel(opened):
    at = opened["chain"]
    assert at.session_state["clu_kernel"] == "fisher" and at.session_state["clu_network"] == "current"
    assert (
        at.session_state["structure"]["dag"] == DAG.from_dict(at.session_state["structure"]["dag"]).to_dict()
    )
    captions = " ".join(c.value for c in at.caption)
    assert "current network of the Structure page" in captions and "2 arcs" in captions
    assert "empty network (scaled-Hamming kernel" in captions  # the baseline beside it


def test_chain_and_v_structure_differ_chain_and_fork_agree(opened):
    labels = {n: opened[n].session_state["clu_result"]["labels"] for n in opened}
    ari = {n: opened[n].session_state["clu_result"]["ari"] for n in opened}
    assert labels["chain"] == labels["fork"] and ari["chain"] == ari["fork"]
    assert labels["chain"] != labels["v"]
    # independently: the Gram matrices themselves (BDeu CPTs, all rows)
    feats = load_csv(str(ROOT / "sample_data" / "hayes_roth.csv"), class_column="class").without_class()
    v = feats.variables
    K = {
        n: gram(fit(DAG(v, arcs), feats), feats)
        for n, arcs in (
            ("chain", [(v[0], v[1]), (v[1], v[2])]),
            ("fork", [(v[1], v[0]), (v[1], v[2])]),
            ("v", [(v[0], v[1]), (v[2], v[1])]),
        )
    }
    assert np.abs(K["chain"] - K["fork"]).max() < 1e-9
    assert np.abs(K["chain"] - K["v"]).max() > 1e-3
