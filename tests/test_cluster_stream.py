"""``cluster`` on a file read in chunks into state codes: the same codes as the in-memory reader, the same
clusters, and the automatic choice from the file size and --max-memory, said in the JSON."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from bnfk_core.analyses.cluster import stream as CS
from bnfk_core.analyses.cluster.clustering import run_clustering
from bnfk_core.cli import main
from bnfk_core.data.limits import memory_limit_set
from bnfk_core.data.table import load_csv

ROOT = Path(__file__).resolve().parents[1]
HV = str(ROOT / "sample_data" / "house_votes_84.csv")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    """Blanks, padding, a numeric column with many values (discretized), a sparse level and a class column."""
    rng = np.random.default_rng(4)
    n = 600
    path = tmp_path_factory.mktemp("messy") / "messy.csv"
    lines = ["a, b ,num,c,label"]
    for i in range(n):
        a = rng.choice(["x", " y", "z ", ""])
        b = rng.choice(["1", "2", "10", ""], p=[0.4, 0.4, 0.15, 0.05])
        num = "" if rng.random() < 0.05 else f"{rng.normal(5, 2):.3f}"
        c = rng.choice(["p", "q", "r", "NA"])
        label = rng.choice(["k1", "k2", "k3"])
        lines.append(",".join([a, b, num, c, label]))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(
    "options", [{}, {"na_values": "default-list"}, {"missing_policy": "category"}, {"drop_columns": ("c",)}]
)
@pytest.mark.parametrize("chunksize", [1, 7, 600, 10_000])
def test_read_codes_equals_load_csv(messy, options, chunksize):
    a = load_csv(messy, class_column="label", **options)
    b = CS.read_codes(messy, chunksize=chunksize, class_column="label", **options)
    assert b.frame is None
    assert np.array_equal(a.codes, b.codes)
    assert (a.variables, a.states, a.class_column, a.notes) == (
        b.variables,
        b.states,
        b.class_column,
        b.notes,
    )
    assert np.array_equal(a.labels(), b.labels())


def test_read_codes_equals_load_csv_on_house_votes():
    a = load_csv(HV, class_column="class", na_values="default-list")
    b = CS.read_codes(HV, chunksize=50, class_column="class", na_values="default-list")
    assert np.array_equal(a.codes, b.codes) and a.states == b.states and a.variables == b.variables


@pytest.mark.parametrize(
    "kernel, algorithm",
    [("fisher", "kmeans-features"), ("fisher", "correlation"), ("scaled-hamming", "kmeans-features")],
)
def test_clusters_of_codes_equal_the_in_memory_clusters(kernel, algorithm):
    a = load_csv(HV, class_column="class", na_values="default-list")
    b = CS.read_codes(HV, chunksize=100, class_column="class", na_values="default-list")
    ra = run_clustering(a, kernel, algorithm, seed=3, restarts=3)
    rb = run_clustering(b, kernel, algorithm, seed=3, restarts=3)
    assert ra["labels"] == rb["labels"]
    assert ra["cost"] == rb["cost"] and ra["ari"] == rb["ari"] and ra.get("structure") == rb.get("structure")


def test_reads_in_chunks_from_the_file_size_and_the_limit():
    need = os.path.getsize(HV) * CS.HOLD_BYTES_PER_FILE_BYTE
    assert CS.held_bytes(HV) == need
    assert CS.reads_in_chunks(HV, max_bytes=need - 1) and not CS.reads_in_chunks(HV, max_bytes=need)
    with memory_limit_set(need - 1):
        assert CS.reads_in_chunks(HV)
    with memory_limit_set(None):
        assert not CS.reads_in_chunks(HV)
    assert CS.held_bytes("/no/such/file.csv") is None and not CS.reads_in_chunks("/no/such/file.csv", 1)


def test_cli_chooses_chunks_by_size_and_says_so(capsys):
    base = [
        "cluster",
        HV,
        "--kernel",
        "fisher",
        "--label-column",
        "class",
        "--na-values",
        "default-list",
        "--algorithm",
        "kmeans-features",
        "--seed",
        "2",
    ]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    whole = json.loads(out)
    assert whole["reading"] == "whole" and "within the memory limit (4.0 GiB)" in whole["notes"][-1]
    need = os.path.getsize(HV) * CS.HOLD_BYTES_PER_FILE_BYTE
    code, out, err = run(capsys, *base, "--max-memory", str(need - 1))
    assert code == 0, err
    small = json.loads(out)
    assert small["reading"] == "chunks" and "so it was read in chunks" in small["notes"][-1]
    code, out, err = run(capsys, *base, "--chunksize", "37")
    assert code == 0, err
    asked = json.loads(out)
    assert asked["reading"] == "chunks" and "--chunksize" in asked["notes"][-1]
    assert asked["labels"] == whole["labels"] and asked["cost"] == whole["cost"] and asked["rows"] == 435
    # the small limit also changes the network's search and the k-means layout: compare with the in-memory
    # path under the same limit
    with memory_limit_set(need - 1):
        ref = run_clustering(
            load_csv(HV, class_column="class", na_values="default-list"), "fisher", "kmeans-features", seed=2
        )
    assert small["labels"] == ref["labels"] and small["cost"] == ref["cost"] and small["rows"] == 435


def test_cli_refuses_chunksize_below_one(capsys):
    code, out, err = run(capsys, "cluster", HV, "--label-column", "class", "--chunksize", "0")
    assert code == 2 and err.startswith("error:") and "--chunksize" in err
