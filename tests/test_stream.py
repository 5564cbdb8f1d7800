"""Streaming counts: weighted distinct rows give the same DAGs, scores and CPTs
as the rows themselves; the chunked reader gives load_csv's states; the Dask engine the same result."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from bnfk_core.data.binning import quantile_bins as _quantile_bins
from bnfk_core.data.binning import weighted_quantile_bins as _weighted_quantile_bins
from bnfk_core.data.stream import WeightedData, distinct_rows, read_counts
from bnfk_core.data.table import from_codes, load_csv
from bnfk_core.errors import DataError
from bnfk_core.learning.scores import LocalScorer, family_counts
from bnfk_core.learning.structure import learn_feature_structure, learn_structure
from bnfk_core.network.formats import read_model
from bnfk_core.network.model import fit


def _random_codes(seed, n=400, cards=(2, 3, 4, 2, 3), missing=0.05):
    """Rows with many duplicates (few columns, few states), some dependence, some missing cells."""
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, cards[0], n)]
    for r in cards[1:]:
        prev = cols[-1]
        noisy = rng.random(n) < 0.4
        cols.append(np.where(noisy, rng.integers(0, r, n), prev % r))
    codes = np.column_stack(cols).astype(np.int32)
    codes[rng.random(codes.shape) < missing] = -1
    return codes


def _pair(seed, **kw):
    codes = _random_codes(seed, **kw)
    names = [f"v{i}" for i in range(codes.shape[1])]
    states = [[f"s{k}" for k in range(int(codes[:, j].max()) + 1)] for j in range(codes.shape[1])]
    plain = from_codes(codes, names, states, "v0", "random")
    u, c = distinct_rows(codes)
    weighted = WeightedData(None, u, tuple(names), plain.states, "v0", "random", (), weights=c)
    return plain, weighted


def test_distinct_rows_expand_to_the_same_multiset():
    plain, weighted = _pair(1)
    assert weighted.n_rows == plain.n_rows and weighted.n_distinct < plain.n_rows
    a = np.unique(plain.codes, axis=0, return_counts=True)
    b = np.unique(weighted.expand().codes, axis=0, return_counts=True)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize("seed", [0, 1])
def test_family_counts_and_local_scores_identical(seed):
    plain, weighted = _pair(seed)
    cards = plain.cardinalities
    for child, parents in [(0, ()), (1, (0,)), (4, (2, 3)), (2, (0, 1, 3, 4))]:
        a = family_counts(plain.codes, cards, child, parents)
        b = family_counts(weighted.codes, cards, child, parents, weights=weighted.weights)
        assert a.dtype == b.dtype and np.array_equal(a, b)
    for score in ("bic", "aic", "k2", "bdeu", "qnml"):
        s1 = LocalScorer(plain.codes, cards, score)
        s2 = LocalScorer(weighted.codes, cards, score, weights=weighted.weights)
        assert s1.n == s2.n and s1.n_rows_total == s2.n_rows_total
        for fam in [(0, ()), (1, (0,)), (4, (0, 2, 3))]:
            assert s1(*fam) == s2(*fam)


@pytest.mark.parametrize("score", ["bic", "aic", "k2", "bdeu", "qnml"])
def test_every_learner_identical_on_weighted_rows(score):
    plain, weighted = _pair(3, n=500)
    for method in ("hc", "tree", "tan", "kdb", "exact", "naive-bayes", "empty"):
        kw = {"k": 2} if method == "kdb" else {}
        r1 = learn_structure(plain, method, score=score, seed=5, restarts=1, **kw)
        r2 = learn_structure(weighted, method, score=score, seed=5, restarts=1, **kw)
        assert r1.dag.sorted_arcs() == r2.dag.sorted_arcs(), (method, score)
        assert r1.score == pytest.approx(r2.score, abs=1e-9, rel=0) and r1.n_rows_used == r2.n_rows_used
    f1 = learn_feature_structure(plain, "tan", score=score)
    f2 = learn_feature_structure(weighted, "tan", score=score)
    assert f1.dag.sorted_arcs() == f2.dag.sorted_arcs() and f1.score == pytest.approx(f2.score, abs=1e-9)


def test_hc_options_and_a_learned_dag_differ_from_empty():
    """The comparison above is not vacuous: hc finds arcs, with max_parents and tabu too."""
    plain, weighted = _pair(4, n=600)
    for opts in ({"max_parents": 1}, {"tabu": 2}):
        r1 = learn_structure(plain, "hc", seed=2, **opts)
        r2 = learn_structure(weighted, "hc", seed=2, **opts)
        assert r1.dag.n_arcs > 0 and r1.dag.sorted_arcs() == r2.dag.sorted_arcs() and r1.score == r2.score


@pytest.mark.parametrize("method", ["smoothed", "ml", "bdeu", "cnml"])
def test_fit_identical_on_weighted_rows(method):
    plain, weighted = _pair(5)
    dag = learn_structure(plain, "hc", seed=0, restarts=0).dag
    m1, m2 = fit(dag, plain, method), fit(dag, weighted, method)
    assert m1.fit_info == m2.fit_info
    for a, b in zip(m1.cpts, m2.cpts):
        assert np.max(np.abs(a - b)) <= 1e-12


def test_weighted_quantiles_equal_numpy_nearest():
    rng = np.random.default_rng(7)
    for n, bins in [(1, 4), (2, 3), (97, 4), (1000, 5), (1001, 10)]:
        vals = np.round(rng.normal(size=n), 1)
        u, c = np.unique(vals, return_counts=True)
        e1, l1 = _quantile_bins(vals, bins)
        e2, l2 = _weighted_quantile_bins(u[::-1], c[::-1], bins)
        assert np.array_equal(e1, e2) and l1 == l2


def _messy_csv(seed=0, n=300):
    """Whitespace, missing tokens, a numeric nominal column, a discretized numeric column, a class."""
    rng = np.random.default_rng(seed)
    lines = ["cls, a ,num,cont,b"]
    for i in range(n):
        cls = rng.choice(["yes", "no", " yes", "maybe"])
        a = rng.choice(["x", "y ", "NA", "?", "", "z"])
        num = rng.choice(["1", "2", "10", "1.0", "nan"])
        cont = "" if rng.random() < 0.05 else f"{rng.normal() * 10:.2f}"
        b = rng.choice(["p", "q", "N/A"])
        lines.append(",".join([cls, a, num, cont, b]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("policy", ["missing", "category"])
def test_read_counts_matches_load_csv(tmp_path, policy):
    path = tmp_path / "messy.csv"
    path.write_text(_messy_csv())
    opts = dict(class_column="cls", missing_policy=policy, discretize_bins=4, max_levels=20)
    plain = load_csv(str(path), **opts)
    for chunk in (7, 1000):
        w = read_counts(str(path), chunksize=chunk, **opts)
        assert w.variables == plain.variables and w.states == plain.states and w.class_column == "cls"
        assert any("Discretized" in n for n in w.notes)
        a = np.unique(plain.codes, axis=0, return_counts=True)
        b = np.unique(w.expand().codes, axis=0, return_counts=True)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    r1, r2 = learn_structure(plain, "hc", seed=1), learn_structure(w, "hc", seed=1)
    assert r1.dag.sorted_arcs() == r2.dag.sorted_arcs() and r1.score == r2.score
    # states given by a model: the same alignment as load_csv(model=...)
    model = fit(r1.dag, plain)
    a1 = load_csv(str(path), model=model, missing_policy=policy)
    a2 = read_counts(str(path), chunksize=50, model=model, missing_policy=policy)
    assert a1.states == a2.states
    assert np.array_equal(np.unique(a1.codes, axis=0), np.unique(a2.codes.astype(np.int32), axis=0))


def test_read_counts_errors(tmp_path):
    from bnfk_core.errors import DataError

    p = tmp_path / "ids.csv"
    p.write_text("id,b\n" + "".join(f"u{i},x\n" for i in range(60)))
    with pytest.raises(DataError, match="identifier"):
        read_counts(str(p), chunksize=10)
    with pytest.raises(DataError, match="not a column"):
        read_counts(str(p), class_column="nope")
    p2 = tmp_path / "model.csv"
    p2.write_text("a,b\nx,y\nx,z\n")
    m = fit(learn_structure(load_csv(str(p2)), "empty").dag, load_csv(str(p2)))
    p3 = tmp_path / "other.csv"
    p3.write_text("a,b\nx,y\nx,w\n")
    with pytest.raises(DataError, match="'w'.*line 3"):
        read_counts(str(p3), model=m)


def test_parquet_equals_csv(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    text = _messy_csv(2, 200)
    csv_path, pq_path = tmp_path / "d.csv", tmp_path / "d.parquet"
    csv_path.write_text(text)
    rows = [ln.split(",") for ln in text.strip().split("\n")]
    table = pa.table({h: [r[j] for r in rows[1:]] for j, h in enumerate(rows[0])})
    pq.write_table(table, pq_path, row_group_size=37)
    a = read_counts(str(csv_path), chunksize=50, class_column="cls", max_levels=20)
    b = read_counts(str(pq_path), chunksize=50, class_column="cls", max_levels=20)
    assert a.states == b.states and np.array_equal(a.codes, b.codes) and np.array_equal(a.weights, b.weights)


def test_cli_learn_chunksize_writes_the_same_model(tmp_path):
    path = tmp_path / "messy.csv"
    path.write_text(_messy_csv(3, 400))
    outs = []
    for extra, name in (([], "mem.json"), (["--chunksize", "33"], "stream.json")):
        out = tmp_path / name
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "bnfk_core",
                "learn",
                str(path),
                "--structure",
                "hc",
                "--class-column",
                "cls",
                "--max-levels",
                "20",
                "--quiet",
                "-o",
                str(out),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        outs.append((json.loads(res.stdout), read_model(str(out))))
    (j1, m1), (j2, m2) = outs
    # learn's default (structural EM) scores by the observed-data log-likelihood summed over rows or over
    # distinct rows times their counts: the same number up to the order of a float sum
    assert j1["arcs"] == j2["arcs"] and j1["rows"] == j2["rows"] == 400
    assert j1["score"] == pytest.approx(j2["score"], rel=1e-12, abs=1e-9)
    for a, b in zip(m1.cpts, m2.cpts):
        assert np.max(np.abs(a - b)) <= 1e-9


def test_dask_local_cluster_equals_single_process(tmp_path, spawn_safe_main):
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    path = tmp_path / "messy.csv"
    path.write_text(_messy_csv(4, 3000))
    opts = dict(class_column="cls", max_levels=20)
    single = read_counts(str(path), chunksize=500, **opts)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        dist = read_counts(str(path), engine="dask", client=client, blocksize=20_000, **opts)
        assert client.run(lambda: 1).__len__() == 2  # two worker processes did the work
    assert dist.states == single.states
    assert np.array_equal(dist.codes, single.codes) and np.array_equal(dist.weights, single.weights)
    r1, r2 = learn_structure(single, "hc", seed=0), learn_structure(dist, "hc", seed=0)
    assert r1.dag.sorted_arcs() == r2.dag.sorted_arcs() and abs(r1.score - r2.score) <= 1e-9
    for a, b in zip(fit(r1.dag, single).cpts, fit(r2.dag, dist).cpts):
        assert np.max(np.abs(a - b)) <= 1e-12


# ---------------------------------------------------------------------- one reader contract
_CONTRACT = {
    "extra field on every row": (
        b"a,b,c\n1,2,3,4\n5,6,7,8\n",
        "Line 2 of {} has 4 fields but the header has 3",
    ),
    "short record after a quoted line break": (
        b'a,b,c\n1,2,3\n"q\nr",2,3\n6,7\n8,9,10\n',
        "Line 5 of {} has 2 fields but the header has 3",
    ),
    "one long record": (b"a,b\nx,1\ny,2,3\n", "Line 3 of {} has 3 fields but the header has 2"),
    "trailing delimiter": (b"a,b,\nx,1,\ny,2,\nx,2,\n", None),
    "carriage returns only": (b"a,b\rx,1\ry,2\rx,2\r", None),
    "quoted CRLF": (b'a,b\r\n"x\r\ny",1\r\nz,2\r\n"x\r\ny",2\r\n', None),
    "backslash before a quote": (b'a,b\nx\\",1\ny,2\nz,3\n', None),
    "a line of only blanks, quoted": (b'a,b\nx,1\n"  "\ny,2\n""\nz,3\n', None),
    "lines of blanks and tabs, CRLF": (b"a;b\r\nx;1\r\n   \r\n\t\r\ny;2\r\n \r\n", None),
    "a quoted blank beside a row of blanks": (b'a,b,c\n"  ",,\n" "\nx,1,2\n', None),
    "fewer fields in one row only, quoted blank before": (
        b'a,b,c\n"  "\n1,2,3\n4,5\n',
        "Line 4 of {} has 2 fields but the header has 3",
    ),
    "extra fields in some rows, mixed line ends": (
        b"a,b\r\nx,1\ny,2,3\rz,4\n",
        "Line 3 of {} has 3 fields but the header has 2",
    ),
}


@pytest.mark.parametrize("case", list(_CONTRACT))
def test_the_chunked_reader_accepts_and_refuses_what_the_whole_file_reader_does(tmp_path, case):
    """The chunked reader gives the whole-file reader's table (line endings included) or its refusal."""
    import pandas as pd

    from bnfk_core.data.reading import file_layout, iter_chunks, parse, read_text

    content, refusal = _CONTRACT[case]
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    if refusal is not None:
        with pytest.raises(DataError) as whole:
            load_csv(str(path))
        with pytest.raises(DataError) as chunked:
            list(iter_chunks(file_layout(str(path)), 2))
        assert refusal.format("t.csv") in str(whole.value)
        assert str(chunked.value) == str(whole.value)  # the same sentence, the file named alike
        return
    header, cells, _, _ = parse(read_text(str(path), "t.csv")[0], "t.csv")
    got = pd.concat(list(iter_chunks(file_layout(str(path)), 2)))
    assert list(got.columns) == list(header)
    assert got.to_numpy().tolist() == cells.tolist()


def _whole_and_chunked_tables(path):
    from bnfk_core.data.reading import file_layout, iter_chunks, parse, read_text

    header, cells, _, _ = parse(read_text(str(path), path.name)[0], path.name)
    got = pd.concat(list(iter_chunks(file_layout(str(path)), 2)))
    return (list(header), cells.tolist()), (list(got.columns), got.to_numpy().tolist())


def test_a_quoted_blank_line_is_skipped_by_every_reader_as_the_whole_file_reader_skips_it(tmp_path):
    """``"  "`` alone on a line is a blank line to the whole-file reader; pandas' chunked parser read it as a
    row of missing cells (one more row, and a phantom all-missing pattern).  Local chunks and a Dask cluster
    (threads, in this process) now give the whole-file reader's table."""
    pytest.importorskip("distributed")
    from distributed import Client

    path = tmp_path / "Blank *lines*.csv"
    body = "".join(f"{'xyz'[i % 3]},{i % 2}\n" + ('"  "\n' if i % 7 == 0 else "") for i in range(60))
    path.write_text("a,b\n" + body)
    (h1, c1), (h2, c2) = _whole_and_chunked_tables(path)
    assert h1 == h2 and c1 == c2 and len(c1) == 60
    whole = load_csv(str(path))
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        dist = read_counts(str(path), engine="dask", client=client, blocksize=200)
    local = read_counts(str(path), chunksize=7)
    for got in (local, dist):
        assert got.states == whole.states and int(got.weights.sum()) == 60
        assert (got.codes >= 0).all()  # no all-missing phantom row
        expected = {tuple(r) for r in whole.codes}
        assert {tuple(r) for r in got.codes} == expected


def test_the_chunked_and_dask_readers_name_the_file_as_the_whole_file_reader(tmp_path):
    """The same refusal is the same sentence in every reader: the file named by its base name (a path's
    folders are not part of what is wrong), for a bad record and for a header without rows."""
    pytest.importorskip("distributed")
    from distributed import Client

    folder = tmp_path / "deep" / "er"
    folder.mkdir(parents=True)
    bad = folder / "bad.csv"
    bad.write_bytes(b"a,b\nx,1\ny,2,3\n")
    empty = folder / "norows.csv"
    empty.write_bytes(b"a,b\n\n")
    for path in (bad, empty):
        with pytest.raises(DataError) as whole:
            load_csv(str(path))
        with pytest.raises(DataError) as chunked:
            read_counts(str(path), chunksize=2)
        with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
            with pytest.raises(DataError) as dist:
                read_counts(str(path), engine="dask", client=client)
        assert str(chunked.value) == str(whole.value) == str(dist.value)
        assert str(folder) not in str(whole.value) and path.name in str(whole.value)


@pytest.mark.parametrize("width", [3, 20])
def test_dask_reads_distinct_rows_on_the_workers_as_one_process(tmp_path, width):
    """On Dask, pass 2 and the merges of the distinct rows run where the partitions were read: the same
    states, rows and counts as one process's chunks -- also when a partition's own keys pass 62 bits (20
    columns of up to 20 levels: pass 2 reads the file again)."""
    pytest.importorskip("distributed")
    from distributed import Client

    from bnfk_core.data import stream

    rng = np.random.default_rng(3)
    cells = rng.integers(0, 20, size=(3000, width)).astype(object)
    cells[rng.random(cells.shape) < 0.05] = ""
    text = ",".join(f"c{j}" for j in range(width)) + "\n"
    text += "".join(",".join(str(v) for v in row) + "\n" for row in cells)
    path = tmp_path / "wide.csv"
    path.write_text(text)
    single = read_counts(str(path), chunksize=700)
    calls = []
    real = stream.rows_to_distinct
    with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        stream.rows_to_distinct = lambda *a: calls.append(1) or real(*a)
        try:
            dist = read_counts(str(path), engine="dask", client=client, blocksize=8_000)
        finally:
            stream.rows_to_distinct = real
    assert dist.states == single.states
    assert np.array_equal(dist.codes, single.codes) and np.array_equal(dist.weights, single.weights)
    assert int(dist.weights.sum()) == 3000
    assert (len(calls) > 1) == (width == 3)  # the kept rows' pass 2, one call a partition
