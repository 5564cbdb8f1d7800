"""The textbook networks: pgmpy's repository networks with their own CPTs, sampled with marginals near the
exact ones, and opened by name on the command line."""

from __future__ import annotations

import csv
import io
import json
import warnings

import numpy as np
import pytest

from bnfk_core.cli.main import main
from bnfk_core.errors import ModelError
from bnfk_core.inference.evidence import query
from bnfk_core.network.textbook import TEXTBOOK_NETWORKS, textbook_network


@pytest.mark.parametrize("name", sorted(TEXTBOOK_NETWORKS))
def test_each_network_is_pgmpys_with_its_cpts(name):
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = get_example_model(name)
    model = textbook_network(name)
    assert set(model.variables) == {str(v) for v in net.nodes()}
    assert model.dag.arcs == {(str(u), str(v)) for u, v in net.edges()}
    assert model.fit_info == {"method": "textbook", "network": name}
    assert f"{model.n_vars} nodes, {model.dag.n_arcs} arcs" in TEXTBOOK_NETWORKS[name]
    for i, v in enumerate(model.variables):
        cpd = net.get_cpds(v)
        assert list(model.states[i]) == [str(s) for s in cpd.state_names[v]]
        assert np.allclose(model.cpts[i].sum(axis=1), 1.0, atol=1e-15, rtol=0)
    # every CPT entry equals pgmpy's (its parents' order restored, the renormalisation within 1e-6)
    back = model.to_pgmpy()
    for cpd in net.get_cpds():
        ours = back.get_cpds(cpd.variable).copy()
        if len(cpd.variables) > 2:
            ours.reorder_parents(cpd.variables[1:])
        assert ours.variables == cpd.variables
        assert np.allclose(ours.get_values(), cpd.get_values(), atol=1e-6)


def test_the_networks_are_read_from_pgmpys_files_by_bnfks_reader():
    """pgmpy's own reader (the test above) builds its grammar in about a second a call; the app reads the
    bundled files with bnfk's BIF reader, and that gives the same networks."""
    from bnfk_core.network.textbook import _bundled_file

    assert all(_bundled_file(name) is not None for name in TEXTBOOK_NETWORKS)


def test_an_unknown_name_is_one_sentence_listing_the_names():
    with pytest.raises(ModelError, match="'asai' is no textbook network .*asia"):
        textbook_network("asai")


def test_sample_marginals_are_within_four_standard_errors_of_the_exact_ones():
    model = textbook_network("asia")
    n = 20_000
    codes = model.sample(n, seed=12).codes
    exact = query(model).posterior
    for i, v in enumerate(model.variables):
        for k, s in enumerate(model.states[i]):
            p = exact[v][s]
            freq = float(np.mean(codes[:, i] == k))
            assert abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12, (v, s, freq, p)


def test_the_command_line_opens_a_network_by_name(tmp_path, capsys):
    assert main(["sample", "asia", "-n", "300", "--seed", "3"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    model = textbook_network("asia")
    drawn = model.sample(300, 3).codes
    assert rows[0] == list(model.variables)
    assert rows[1:] == [[model.states[j][x] for j, x in enumerate(r)] for r in drawn]
    assert main(["query", "asia", "--evidence", "smoke=yes,dysp=yes", "--target", "lung"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["posterior"] == query(model, {"smoke": "yes", "dysp": "yes"}, ["lung"]).posterior
    assert main(["dsep", "alarm", "HR", "CO"]) == 0
    assert json.loads(capsys.readouterr().out)["separated"] is False
    assert main(["sample", "asai", "-n", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 'asai' is neither a model file nor a textbook network") and "asia" in err
