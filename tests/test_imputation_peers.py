"""``reproduce imputation-peers``: one data set's runs, the summary and the lead column against hand
computations."""

from __future__ import annotations

import numpy as np
import pytest

import bnfk_core.analyses  # noqa: F401 - registers the imputation methods
from bnfk_core.reproduce import imputation_peers as ip


@pytest.fixture(scope="module")
def runs():
    return ip.run_dataset("hayes_roth", (0, 1), (0.2,), ("stack", "knn", "mode", "lca"), 80)


def test_every_method_scores_the_same_hidden_cells(runs):
    assert len(runs) == 2 * 4 and (runs["note"] == "").all()
    assert (runs["rows"] == 80).all() and (runs["of_rows"] == 160).all()
    for _, g in runs.groupby("seed"):
        assert g["cells"].nunique() == 1  # the same split for every method
    assert runs["accuracy"].between(0, 1).all()


def test_summary_and_lead_column_equal_hand_computations(runs):
    summ = ip.summary(runs)
    acc = runs.groupby("method")["accuracy"]
    for _, r in summ.iterrows():
        assert r["accuracy"] == pytest.approx(acc.mean()[r["method"]])
        assert r["accuracy_std"] == pytest.approx(np.std(acc.get_group(r["method"]).to_numpy()))
    methods = ["stack", "knn", "mode", "lca"]
    lead = ip.lead_table(summ, methods)
    best_peer = max(acc.mean()[m] for m in ("mode", "lca"))  # the peers of these methods
    assert lead.loc[0, "default - best peer"] == f"{acc.mean()['stack'] - best_peer:+.3f}"
    assert lead.loc[0, "rows"] == "80 of 160"
    notes = ip.lead_notes(lead, runs, methods)
    assert notes[0].startswith("bnfk's default (Stacked")
    assert ip.lead_markdown(lead, "setup", notes).count("| hayes_roth |") == 1
