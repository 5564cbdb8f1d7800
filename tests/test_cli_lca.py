"""``python -m bnfk_core lca`` and ``cluster --algorithm lca``: one JSON object, errors on one line."""

from __future__ import annotations

import json

import pytest

from bnfk_core.cli.main import main
from bnfk_core.network.formats import read_model


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_lca_range_json_and_model_file(capsys, sample_path, tmp_path):
    path = tmp_path / "m.json"
    code, out, _ = _run(
        capsys,
        "lca",
        str(sample_path("carcinoma")),
        "--classes",
        "2-3",
        "--starts",
        "30",
        "-o",
        str(path),
        "--quiet",
    )
    assert code == 0
    d = json.loads(out)
    assert [f["classes"] for f in d["fits"]] == [2, 3]
    for f, ll in zip(d["fits"], (-317.2568, -293.7050)):
        assert f["loglik"] == pytest.approx(ll, abs=1e-3)
        assert {"bic", "aic", "parameters", "starts_at_best", "class_sizes", "identifiable"} <= set(f)
    assert d["best_bic"] == 3 and d["output_classes"] == 3
    net = read_model(path)
    assert net.variables[0] == "latent_class" and net.cpts[0].shape == (1, 3)


def test_lca_single_k_with_label_scores(capsys, sample_path):
    code, out, _ = _run(
        capsys,
        "lca",
        str(sample_path("soybean_small")),
        "--classes",
        "4",
        "--class-column",
        "class",
        "--starts",
        "10",
        "--quiet",
        "--profiles",
    )
    d = json.loads(out)
    assert code == 0 and d["classes"] == 4 and d["ari"] == pytest.approx(1.0) and "profiles" in d
    assert "class" not in d["variables"] and d["rows"] == 47


@pytest.mark.parametrize(
    "argv,match",
    [
        (["--classes", "x"], "--classes"),
        (["--classes", "2", "-o", "m.txt"], ".bif"),
        (["--classes", "2", "--starts", "0"], "starts"),
    ],
)
def test_lca_errors_are_one_line(capsys, sample_path, argv, match):
    code, out, err = _run(capsys, "lca", str(sample_path("carcinoma")), *argv)
    assert code == 2 and out == "" and err.startswith("error:") and match in err and err.count("\n") == 1


def test_cluster_algorithm_lca(capsys, sample_path):
    """The labels are the brute-force posterior argmax of the same fit (enumerated row by row from the model's
    weights and profiles), and the ARI is scikit-learn's on them."""
    import numpy as np
    from sklearn.metrics import adjusted_rand_score

    from bnfk_core.data.table import load_csv
    from bnfk_core.lca import fit_lca

    code, out, _ = _run(
        capsys,
        "cluster",
        str(sample_path("zoo")),
        "--label-column",
        "class",
        "--algorithm",
        "lca",
        "--restarts",
        "10",
        "--seed",
        "0",
    )
    d = json.loads(out)
    assert code == 0 and d["algorithm"] == "lca" and d["n_clusters"] == 7
    data = load_csv(sample_path("zoo"), class_column="class")
    feats = data.without_class()
    m = fit_lca(feats, 7, 10, 0)
    modal = []
    for row in feats.codes:
        joint = m.weights.copy()
        for i, x in enumerate(row):
            joint = joint * m.profiles[i][:, x]
        modal.append(int(np.argmax(joint)))
    assert d["labels"] == modal
    assert d["ari"] == pytest.approx(adjusted_rand_score(data.labels(), modal), abs=1e-12)


def test_saved_latent_class_network_feeds_kernel_and_prototypes(capsys, sample_path, tmp_path):
    """A JSON model keeps the hidden class: the CSV loads against it (the class is no column) and its Fisher
    kernel is the latent-class Fisher kernel of that network."""
    import numpy as np

    from bnfk_core.data.table import load_csv
    from bnfk_core.kernels.latent_fisher import LatentClassKernel

    model, K = tmp_path / "m.json", tmp_path / "K.npy"
    data = str(sample_path("soybean_small"))
    assert (
        _run(capsys, "lca", data, "--classes", "3", "--class-column", "class", "-o", str(model), "--quiet")[0]
        == 0
    )
    assert (
        _run(capsys, "kernel", data, "--model", str(model), "--class-column", "class", "-o", str(K))[0] == 0
    )
    feats = load_csv(data, class_column="class").without_class()
    want = LatentClassKernel(read_model(model)).gram(feats)
    np.testing.assert_allclose(np.load(K), want, atol=1e-10)
    code, out, _ = _run(
        capsys, "prototypes", data, "--model", str(model), "--k", "4", "--class-column", "class", "--quiet"
    )
    assert code == 0 and len(json.loads(out)["indices"]) == 4


def test_lca_screened_starts_on_the_command_line(capsys, sample_path):
    """--screen/--keep: the same carcinoma maximum as full runs (poLCA's -293.705), starts_at_best among the
    runs completed."""
    code, out, _ = _run(
        capsys,
        "lca",
        str(sample_path("carcinoma")),
        "--classes",
        "3",
        "--starts",
        "30",
        "--screen",
        "10",
        "--keep",
        "6",
    )
    d = json.loads(out)
    assert code == 0 and d["loglik"] == pytest.approx(-293.705, abs=1e-3)
    assert 6 <= d["runs_completed"] <= 30 and 1 <= d["starts_at_best"] <= d["runs_completed"]
