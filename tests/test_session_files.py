"""bnfk_core.serving.session_files: session files round-trip exactly, hostile files are refused with a
sentence naming the field, and every CLI subcommand takes a session in place of its CSV."""

import contextlib
import io
import json

import numpy as np
import pytest

from bnfk_core.analyses.cluster.clustering import cluster
from bnfk_core.analyses.impute.core import impute_bn
from bnfk_core.cli.main import main
from bnfk_core.kernels import fisher as kernels
from bnfk_core.learning.structure import learn_structure
from bnfk_core.network.dag import DAG
from bnfk_core.network.model import fit
from bnfk_core.serving.session_files import (
    DataRef,
    SessionError,
    parse_session,
    read_session,
    session_dict,
    write_session,
)

CSV = "a,b,c,label\nx,1,p,yes\ny,2,q,no\nx,?,p,yes\ny,1,,no\nx,2,q,yes\ny,1,p,no\nx,2,q,no\ny,?,p,yes\n"


def _hv_session(tmp_path, *, with_model=True, settings=None):
    ref = DataRef(sample="house_votes_84", class_column="class", missing_policy="category")
    feats = ref.load().without_class()
    dag = learn_structure(feats, "tree").dag
    model = fit(dag, feats, method="smoothed")
    path = tmp_path / "s.json"
    write_session(path, session_dict(ref, dag, "smoothed", model if with_model else None, settings))
    return path, model


def test_round_trip_gives_the_same_gram_clusters_and_imputations(tmp_path):
    path, model = _hv_session(tmp_path, settings={"clu_seed": 7, "clu_kernels": ["fisher", "hamming"]})
    s = read_session(path)
    feats = s.data.without_class()
    assert s.settings == {"clu_seed": 7, "clu_kernels": ["fisher", "hamming"]}
    assert s.data.class_column == "class" and s.data.n_rows == 435
    K0, K1 = kernels.gram(model, feats), kernels.gram(s.model, feats)
    assert np.max(np.abs(K0 - K1)) <= 1e-12
    assert np.array_equal(
        cluster(K0, 2, "correlation", kernel="fisher", restarts=3, seed=1).labels,
        cluster(K1, 2, "correlation", kernel="fisher", restarts=3, seed=1).labels,
    )
    hidden = feats.with_codes(
        np.where(np.random.default_rng(0).random(feats.codes.shape) < 0.1, -1, feats.codes)
    )
    a, b = impute_bn(hidden, model=model), impute_bn(hidden, model=s.model)
    for i in a.cells:
        assert np.array_equal(a.cells[i][0], b.cells[i][0])
        assert np.max(np.abs(a.cells[i][1] - b.cells[i][1])) <= 1e-12
    # without CPTs the session fits its estimator on the data: the same model
    path2, _ = _hv_session(tmp_path, with_model=False)
    assert np.max(np.abs(kernels.gram(read_session(path2).model, feats) - K0)) <= 1e-12


def test_embedded_csv_round_trips_bytes_and_options(tmp_path):
    raw = CSV.encode("utf-8")
    ref = DataRef(name="mine.csv", content=raw, class_column="label", missing_policy="missing", bins=0)
    feats = ref.load().without_class()
    dag = DAG(feats.variables, [("a", "b")])
    doc = session_dict(ref, dag, "ml")
    assert doc["data"]["csv"] == CSV and len(doc["data"]["sha256"]) == 64
    s = parse_session(json.dumps(doc), "x.json")
    assert s.ref.content == raw and s.data.fingerprint() == ref.load().fingerprint()
    assert s.model.dag == dag and s.params == "ml"
    latin = DataRef(name="l.csv", content="a,b\n\xe9,1\nx,2\n".encode("latin-1"))
    doc2 = session_dict(latin, DAG(["a", "b"]), "smoothed")
    assert "csv_base64" in doc2["data"]
    assert parse_session(json.dumps(doc2), "l.json").ref.content == latin.content


def _doc():
    ref = DataRef(name="mine.csv", content=CSV.encode(), class_column="label")
    return session_dict(ref, DAG(["a", "b", "c"], [("a", "b")]), "smoothed")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: d.update(schema="other"), "not a bnfk session file"),
        (lambda d: d.update(version=99), "session version 99"),
        (
            lambda d: d.update(data={"sample": "no_such_set"}),
            "data.sample 'no_such_set' is not a bundled dataset",
        ),
        (lambda d: d["data"].update(csv="a,b\n1,2\n"), "does not match its sha256"),
        (lambda d: d["data"]["options"].update(missing_policy="drop"), "missing_policy must be"),
        (lambda d: d["data"]["options"].update(bins=10**12), "bins must be an integer"),
        (lambda d: d["data"]["options"].update(class_column="nope"), "do not load"),
        (lambda d: d["structure"].update(arcs=[["a", "b"], ["b", "a"]]), "x.json"),
        (
            lambda d: d["structure"].update(nodes=["a", "b", "zz"]),
            "it lacks c; it has unknown variable\\(s\\) zz",
        ),
        (lambda d: d.update(params="magic"), "params 'magic'"),
        (lambda d: d.update(settings={"k": {"nested": 1}}), "settings: 'k' must hold"),
        (lambda d: d.update(settings=[1, 2]), "settings must be an object"),
        (lambda d: d.update(model={"nodes": "x"}), "x.json"),
    ],
)
def test_hostile_sessions_are_refused_naming_the_field(edit, match):
    doc = _doc()
    edit(doc)
    with pytest.raises(SessionError, match=match):
        parse_session(json.dumps(doc), "x.json")


def test_not_json_and_infinite_numbers_are_refused():
    with pytest.raises(SessionError, match="not a JSON file"):
        parse_session(b"\x00\x01", "bin.json")
    doc = _doc()
    text = json.dumps(doc).replace('"settings": {}', '"settings": {"x": Infinity}')
    with pytest.raises(SessionError, match="inf.json holds the number Infinity"):
        parse_session(text, "inf.json")


def test_html_in_names_survives_as_plain_text(tmp_path):
    raw = b'<b>a</b>,"<script>alert(1)</script>",label\n<i>x</i>,1,y\ny,2,n\n'
    ref = DataRef(name="<evil>.csv", content=raw, class_column="label")
    feats = ref.load().without_class()
    s = parse_session(
        json.dumps(session_dict(ref, DAG(feats.variables, [feats.variables]), "smoothed")), "e.json"
    )
    assert s.data.variables[:2] == ("<b>a</b>", "<script>alert(1)</script>")


def _run(argv):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    return code, buf.getvalue()


def test_cli_subcommands_take_a_session_file(tmp_path, capsys):
    path, model = _hv_session(tmp_path)
    code, out = _run(["kernel", str(path), "-o", str(tmp_path / "K.npy")])
    assert code == 0
    feats = read_session(path).data.without_class()
    assert np.max(np.abs(np.load(tmp_path / "K.npy") - kernels.gram(model, feats))) <= 1e-12
    code, out = _run(["cluster", str(path), "--kernel", "fisher", "--seed", "4", "--restarts", "3"])
    assert code == 0
    K = kernels.gram(model, feats)
    ref = cluster(K, 2, "correlation", kernel="fisher", restarts=3, seed=4).labels
    assert json.loads(out)["labels"] == ref.tolist()
    # a different label column than the session's is refused in one line
    code = main(["cluster", str(path), "--label-column", "handicapped_infants"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "class column 'class'" in err


def test_sample_dir_is_the_projects_sample_data():
    from bnfk_core.serving.session_files import SAMPLE_DIR

    assert (SAMPLE_DIR / "catalog.json").is_file()
