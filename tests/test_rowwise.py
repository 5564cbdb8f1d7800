"""Row-wise work in chunks: the chunked reader, mean embeddings, greedy-MMD prototypes,
kernels against a fixed set and log-likelihoods, each against the in-memory path on the same file."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from bnfk_core.analyses.prototypes.rowwise import chunked_prototypes
from bnfk_core.analyses.prototypes.selection import MMDCriterion, select_prototypes
from bnfk_core.analyses.rowwise import (
    mean_embedding,
    stream_gram,
    stream_loglik,
    stream_mmd,
)
from bnfk_core.cli.main import main
from bnfk_core.data.stream import CodeChunks, iter_codes
from bnfk_core.data.table import load_csv
from bnfk_core.errors import BnfkError
from bnfk_core.inference.queries import log_likelihood
from bnfk_core.kernels.fisher import features, gram, mean_features, mmd
from bnfk_core.network.dag import DAG
from bnfk_core.network.formats import write_model
from bnfk_core.network.model import BayesNet


def _model(seed=0):
    """A 7-variable network: a 5-state root, 3- and 2-state variables, <= 2 parents, Dirichlet CPTs."""
    rng = np.random.default_rng(seed)
    names = [f"v{i}" for i in range(7)]
    cards = [5, 3, 2, 3, 2, 3, 3]
    arcs = [
        ("v0", "v1"),
        ("v0", "v2"),
        ("v1", "v3"),
        ("v2", "v3"),
        ("v0", "v4"),
        ("v3", "v5"),
        ("v4", "v6"),
        ("v5", "v6"),
    ]
    dag = DAG(names, arcs)
    cpts = []
    for i in range(7):
        ps = dag.parent_indices()[i]
        q = int(np.prod([cards[p] for p in ps])) if ps else 1
        cpts.append(rng.dirichlet(np.full(cards[i], 1.0), size=q))
    states = tuple(tuple(f"s{k}" for k in range(c)) for c in cards)
    return BayesNet(dag, states, tuple(cpts))


def _write(path, model, n, seed, missing=0.08, wide_row=False):
    codes = model.sample(n, seed=seed).codes
    rng = np.random.default_rng(seed + 1)
    codes = np.where(rng.random(codes.shape) < missing, -1, codes)
    if wide_row:  # completions beyond the enumeration limit: the general path
        codes[3, :] = -1
    cols = {
        v: np.array(list(st) + [""], dtype=object)[codes[:, j]]
        for j, (v, st) in enumerate(zip(model.variables, model.states))
    }
    frame = pd.DataFrame(cols)
    frame = frame[list(reversed(model.variables))]  # columns in another order than the model's
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rowwise")
    model = _model()
    return {
        "model": model,
        "a": _write(d / "a.csv", model, 900, 1, wide_row=True),
        "b": _write(d / "b.csv", model, 500, 7),
        "set": _write(d / "set.csv", model, 40, 3),
        "full": _write(d / "full.csv", model, 600, 11, missing=0.0),
        "dir": d,
    }


def test_iter_codes_equal_load_csv(files):
    model = files["model"]
    mem = load_csv(files["a"], model=model).codes
    parts = list(iter_codes(files["a"], model, 128))
    assert [r for r, _ in parts] == list(range(0, 900, 128))
    assert np.array_equal(np.concatenate([c for _, c in parts]).astype(np.int32), mem)
    cc = CodeChunks(files["a"], model, chunksize=1000)
    assert cc.n_rows == 900 and cc.variables == tuple(model.variables)


def test_iter_codes_refuses_bad_input(files, tmp_path):
    with pytest.raises(BnfkError, match="chunksize"):
        CodeChunks(files["a"], files["model"], chunksize=0)
    bad = tmp_path / "bad.csv"
    text = files["a"].read_text().replace("s1", "zz", 1)
    bad.write_text(text)
    with pytest.raises(BnfkError, match="zz"):
        CodeChunks(bad, files["model"], chunksize=100)


def test_mean_embedding_equals_mean_features(files):
    model = files["model"]
    for key in ("a", "b", "full"):
        data = load_csv(files[key], model=model)
        mu, n = mean_embedding(model, files[key], chunksize=97)
        assert n == data.n_rows
        assert np.allclose(mu, mean_features(model, data), rtol=0, atol=1e-12)


def test_wide_row_takes_the_general_path(files, monkeypatch):
    import bnfk_core.analyses.rowwise as rw

    model = files["model"]
    data = load_csv(files["a"], model=model)
    monkeypatch.setattr(rw, "ENUMERATE_LIMIT", 4)  # most rows with missing cells now go the general way
    mu, _ = rw.mean_embedding(model, files["a"], chunksize=300)
    assert np.allclose(mu, mean_features(model, data), rtol=0, atol=1e-12)


def test_stream_mmd_equals_in_memory(files):
    model = files["model"]
    a, b = load_csv(files["a"], model=model), load_csv(files["b"], model=model)
    out = stream_mmd(model, files["a"], files["b"], chunksize=211)
    assert abs(out["mmd"] - mmd(model, a, b)) <= 1e-12
    assert (out["rows_a"], out["rows_b"]) == (900, 500)


def test_dask_mean_embeddings_mmd_and_prototypes_equal_the_single_process_ones(files, spawn_safe_main):
    """Both passes on the partitions of a LocalCluster of two worker processes (blocks of ~4 KB, so many
    partitions, the wide row's general path among them); the client only adds the partitions' counts and
    numbers the rows; the prototypes' greedy swaps then run on the client."""
    distributed = pytest.importorskip("distributed")
    from bnfk_core.analyses.rowwise import mean_embedding_dask

    model = files["model"]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        mu, n = mean_embedding_dask(model, str(files["a"]), client=client, blocksize=4000)
        out = stream_mmd(model, str(files["a"]), str(files["b"]), engine="dask", client=client)
        protos = chunked_prototypes(
            model, str(files["a"]), 12, n_init=20, seed=3, engine="dask", client=client, blocksize=4000
        )
        assert len(client.run(lambda: 1)) == 2
    data = load_csv(files["a"], model=model)
    assert n == 900 and np.allclose(mu, mean_features(model, data), rtol=0, atol=1e-12)
    local = stream_mmd(model, files["a"], files["b"], chunksize=211)
    assert out["engine"] == "dask" and abs(out["mmd"] - local["mmd"]) <= 1e-12
    assert (out["rows_a"], out["rows_b"]) == (900, 500)
    ref = chunked_prototypes(model, files["a"], 12, chunksize=150, n_init=20, seed=3)
    assert np.array_equal(protos.indices, ref.indices) and protos.candidates == ref.candidates
    assert abs(protos.value - ref.value) <= 1e-12 * max(1.0, ref.value)


@pytest.mark.parametrize("seed,k", [(0, 12), (5, 30)])
def test_prototypes_equal_in_memory_with_missing_cells(files, seed, k):
    """Candidates = complete rows, mu from all rows: select_prototypes on the complete rows with that mean."""
    model = files["model"]
    data = load_csv(files["a"], model=model)
    comp = np.flatnonzero((data.codes >= 0).all(axis=1))
    sub = data.subset(comp)
    mc = MMDCriterion(features(model, sub), mean=mean_features(model, data))
    ref = select_prototypes(model, sub, k, n_init=20, seed=seed, mmd_criterion=mc)
    got = chunked_prototypes(model, files["a"], k, chunksize=150, n_init=20, seed=seed)
    assert np.array_equal(got.indices, comp[ref.indices])
    assert got.candidates == comp.size and got.rows == 900
    assert abs(got.value - ref.value) <= 1e-10 * max(1.0, ref.value)
    assert abs(got.start_value - ref.start_value) <= 1e-10 * max(1.0, ref.start_value)
    assert (got.swaps, got.passes, got.converged) == (ref.swaps, ref.passes, ref.converged)
    assert np.array_equal(got.codes, data.codes[got.indices])


def test_prototypes_equal_select_prototypes_on_complete_data(files):
    """No missing cell: every row is a candidate and the result is select_prototypes on the file itself."""
    model = files["model"]
    data = load_csv(files["full"], model=model)
    ref = select_prototypes(model, data, 25, n_init=15, seed=2)
    got = chunked_prototypes(model, files["full"], 25, chunksize=64, n_init=15, seed=2)
    assert np.array_equal(got.indices, ref.indices)
    assert abs(got.mmd - ref.mmd) <= 1e-10 * max(1.0, ref.mmd)
    assert abs(got.chi2 - ref.chi2) <= 1e-9 * max(1.0, abs(ref.chi2))
    rnd = chunked_prototypes(model, files["full"], 25, "random", chunksize=64, seed=2)
    ref_r = select_prototypes(model, data, 25, "random", seed=2)
    assert np.array_equal(rnd.indices, ref_r.indices)


def test_prototypes_refuse_k_beyond_the_candidates(files):
    with pytest.raises(BnfkError, match="complete rows"):
        chunked_prototypes(files["model"], files["a"], 10_000, chunksize=100)
    with pytest.raises(BnfkError, match="chi2"):
        chunked_prototypes(files["model"], files["a"], 5, "chi2", chunksize=100)


@pytest.mark.parametrize("normalize", [False, True])
def test_stream_gram_equals_gram(files, tmp_path, normalize):
    model = files["model"]
    # the all-missing row 3 of "a" has E[phi] = 0 (the expected score): its cosine is 0/0, noise
    key = "b" if normalize else "a"
    data, other = load_csv(files[key], model=model), load_csv(files["set"], model=model)
    ref = gram(model, data, other, normalize=normalize)
    shape = stream_gram(model, files[key], other, str(tmp_path / "K.npy"), chunksize=128, normalize=normalize)
    assert shape == ref.shape
    assert np.allclose(np.load(tmp_path / "K.npy"), ref, rtol=0, atol=1e-10)
    stream_gram(model, files[key], other, str(tmp_path / "K.csv"), chunksize=300, normalize=normalize)
    assert np.allclose(np.loadtxt(tmp_path / "K.csv", delimiter=","), ref, rtol=0, atol=1e-10)


def test_stream_loglik_equals_log_likelihood(files, tmp_path):
    model = files["model"]
    ref = log_likelihood(model, load_csv(files["a"], model=model))
    out = stream_loglik(model, files["a"], chunksize=77, out=str(tmp_path / "ll.csv"))
    got = pd.read_csv(tmp_path / "ll.csv")["loglik"].to_numpy()
    assert np.allclose(got, ref, rtol=0, atol=1e-12)  # log_evidence batches rows by pattern: rounding only
    assert out["rows"] == 900 and abs(out["total"] - ref.sum()) <= 1e-9


class _Run:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


_CAP = {}


@pytest.fixture(autouse=True)
def _capture(capsys):
    _CAP["sys"] = capsys


def _cli(*args):
    """The CLI in this process (main() as ``python -m bnfk_core`` runs it): exit code, stdout, stderr."""
    cap = _CAP["sys"]
    cap.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    got = cap.readouterr()
    return _Run(code, got.out, got.err)


def test_cli_subprocess_smoke(files):
    d = files["dir"]
    write_model(files["model"], d / "m.bif")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "bnfk_core",
            "mmd",
            str(files["a"]),
            str(files["b"]),
            "--model",
            str(d / "m.bif"),
            "--chunksize",
            "100",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["rows_a"] == 900


def test_cli_chunked_commands(files):
    model, d = files["model"], files["dir"]
    write_model(model, d / "m.bif")
    data = load_csv(files["a"], model=model)
    r = _cli(
        "prototypes",
        files["a"],
        "--model",
        d / "m.bif",
        "--k",
        12,
        "--n-init",
        20,
        "--seed",
        0,
        "--chunksize",
        150,
        "--quiet",
        "-o",
        d / "rows.csv",
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    ref = chunked_prototypes(model, files["a"], 12, chunksize=150, n_init=20, seed=0)
    assert out["indices"] == ref.indices.tolist() and out["candidates"] == "complete rows"
    rows = pd.read_csv(d / "rows.csv", dtype=str)
    assert list(rows.columns) == list(model.variables)
    assert rows.to_numpy().tolist() == data.frame.iloc[ref.indices].to_numpy().tolist()
    r = _cli(
        "kernel",
        files["a"],
        "--model",
        d / "m.bif",
        "--other",
        files["set"],
        "--chunksize",
        100,
        "-o",
        d / "K.npy",
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    assert np.allclose(
        np.load(d / "K.npy"), gram(model, data, load_csv(files["set"], model=model)), atol=1e-10
    )
    r = _cli("mmd", files["a"], files["b"], "--model", d / "m.bif", "--chunksize", 100, "--quiet")
    assert r.returncode == 0, r.stderr
    assert abs(json.loads(r.stdout)["mmd"] - mmd(model, data, load_csv(files["b"], model=model))) <= 1e-12
    r = _cli("loglik", files["a"], "--model", d / "m.bif", "--chunksize", 100, "-o", d / "ll.csv", "--quiet")
    assert r.returncode == 0, r.stderr
    r2 = _cli("loglik", files["a"], "--model", d / "m.bif", "-o", d / "ll2.csv")
    assert r2.returncode == 0, r2.stderr
    assert np.allclose(
        pd.read_csv(d / "ll.csv")["loglik"], pd.read_csv(d / "ll2.csv")["loglik"], rtol=0, atol=1e-12
    )
    assert abs(json.loads(r.stdout)["total"] - json.loads(r2.stdout)["total"]) <= 1e-9


@pytest.mark.parametrize(
    "args,culprit",
    [
        (
            ["prototypes", "{a}", "--structure", "hc", "--k", "5", "--chunksize", "100"],
            "--chunksize needs --model",
        ),
        (
            ["prototypes", "{a}", "--model", "{m}", "--k", "5", "--chunksize", "100", "--criterion", "chi2"],
            "chi2",
        ),
        (["prototypes", "{a}", "--model", "{m}", "--k", "100000", "--chunksize", "100"], "complete rows"),
        (["kernel", "{a}", "--model", "{m}", "--chunksize", "100", "-o", "{d}/K.npy"], "--other"),
        (
            [
                "kernel",
                "{a}",
                "--model",
                "{m}",
                "--other",
                "{a}",
                "--kind",
                "hamming",
                "--chunksize",
                "100",
                "-o",
                "{d}/K.npy",
            ],
            "Fisher kernel only",
        ),
        (["loglik", "{a}", "--model", "{m}", "--chunksize", "0"], "--chunksize"),
        (["loglik", "{a}", "--model", "{m}", "-o", "{d}/ll.txt"], "ll.txt"),
    ],
)
def test_cli_errors_name_the_culprit(files, args, culprit):
    d = files["dir"]
    write_model(files["model"], d / "m.bif")
    r = _cli(*[a.format(a=files["a"], m=d / "m.bif", d=d) for a in args])
    assert r.returncode == 2
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error:") and culprit in line


def test_chunk_features_equal_features(files, monkeypatch):
    import bnfk_core.analyses.rowwise as rw

    model = files["model"]
    data = load_csv(files["a"], model=model)
    tables = rw.CellTables(model)
    ref = features(model, data)
    assert abs(rw.chunk_features(tables, data.codes[:450], 0) - ref[:450]).max() <= 1e-12
    monkeypatch.setattr(rw, "ENUMERATE_LIMIT", 4)  # rows past the limit: features() rows in place
    assert abs(rw.chunk_features(tables, data.codes[450:], 450) - ref[450:]).max() <= 1e-12
