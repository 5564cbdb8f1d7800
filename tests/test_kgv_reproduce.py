"""``reproduce kgv`` (Bach & Jordan 2002, Fig. 1 on ALARM): the exact KL divergence between two networks
against the brute-force joint, and a small run writing the table beside the published numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers_bruteforce import joint_table, random_model

from bnfk_core.cli import main
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit
from bnfk_core.reproduce.kgv_alarm import PARAMS, PSEUDO_COUNT, PUBLISHED, alarm_network, kl_to_truth


@pytest.mark.parametrize("seed", [0, 1])
def test_kl_from_family_marginals_equals_the_brute_force_joint(seed):
    nodes = ["a", "b", "c", "d", "e"]
    cards = [2, 3, 2, 3, 2]
    true = random_model(DAG(nodes, [("a", "b"), ("b", "c"), ("a", "d"), ("c", "e"), ("d", "e")]), cards, seed)
    other = random_model(DAG(nodes, [("b", "a"), ("c", "a"), ("d", "b"), ("e", "d")]), cards, seed + 10)
    _, P = joint_table(true)
    _, Q = joint_table(other)
    assert kl_to_truth(true, other) == pytest.approx(float((P * np.log(P / Q)).sum()), abs=1e-10)
    assert kl_to_truth(true, true) == pytest.approx(0.0, abs=1e-12)


def test_alarm_network_is_the_benchmark():
    net = alarm_network()
    assert net.n_vars == 37 and net.dag.n_arcs == 46 and net.parameter_count() == 509


def test_reproduce_kgv_writes_ours_beside_the_published(tmp_path, capsys):
    assert main(["reproduce", "kgv", "--repeats", "1", "--seed", "3", "-o", str(tmp_path), "--quiet"]) == 0
    table = pd.read_csv(tmp_path / "kgv_alarm.csv")
    assert list(table["label"]) == ["BIC", "BDe", "KGV"] * 2
    for _, row in table.iterrows():
        n = int(row["dataset"].split("=")[1])
        assert (
            row["kl (published)"] == PUBLISHED[n][{"BIC": "bic", "BDe": "bdeu", "KGV": "kgv"}[row["label"]]]
        )
        assert 0 < row["kl"] and row["kl (diff)"] == pytest.approx(
            row["kl"] - row["kl (published)"], abs=1e-5
        )
    # independent yardsticks on the same sample (seed 3): every learned network is closer to the truth than
    # the empty network fitted the same way, and no closer than the true DAG fitted the same way
    true = alarm_network()
    for n in (500, 1000):
        sample = true.sample(n, seed=3)
        empty = kl_to_truth(true, fit(DAG(true.variables), sample, method=PARAMS, pseudo_count=PSEUDO_COUNT))
        oracle = kl_to_truth(true, fit(true.dag, sample, method=PARAMS, pseudo_count=PSEUDO_COUNT))
        for kl in table.loc[table["dataset"] == f"ALARM N={n}", "kl"]:
            assert oracle - 0.05 < kl < empty
    runs = pd.read_csv(tmp_path / "kgv_alarm_runs.csv")
    assert set(runs["seed"]) == {3} and len(runs) == 6
    assert "published: BDe < KGV < BIC" in (tmp_path / "kgv_alarm.md").read_text()
