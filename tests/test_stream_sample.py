"""A seeded sample of a streamed table's rows (WeightedData.sample_rows), read_counts' progress reports,
the reader's refusals of files that are not CSV, and the weighted column summary."""

import itertools

import numpy as np
import pytest

from bnfk_core.data.stats import column_summary
from bnfk_core.data.stream import WeightedData, distinct_rows, read_counts
from bnfk_core.data.table import load_csv
from bnfk_core.errors import DataError
from bnfk_core.kernels.embed import sample_rows

WEIGHTS = np.array([1, 3, 6, 90], dtype=np.int64)


def _weighted(weights=WEIGHTS) -> WeightedData:
    k = len(weights)
    codes = np.column_stack([np.arange(k), np.arange(k) % 2]).astype(np.int8)
    return WeightedData(
        None,
        codes,
        ("a", "b"),
        (tuple(f"a{i}" for i in range(k)), ("b0", "b1")),
        None,
        "t",
        (),
        weights=np.asarray(weights, dtype=np.int64),
    )


def _which(w: WeightedData, sample) -> np.ndarray:
    """Index of the distinct row of every sampled row (column a numbers them)."""
    return np.asarray(sample.codes[:, 0])


def test_same_seed_same_sample_and_it_is_a_sample_of_the_expanded_rows():
    w = _weighted()
    a, b, c = w.sample_rows(10, seed=3), w.sample_rows(10, seed=3), w.sample_rows(10, seed=4)
    assert a.n_rows == 10 and type(a).__name__ == "CategoricalData"
    assert np.array_equal(a.codes, b.codes)
    assert not np.array_equal(a.codes, c.codes)
    # the same rows as sampling the expanded table with embed.sample_rows (no expansion needed)
    full = w.expand()
    for seed in range(20):
        assert np.array_equal(w.sample_rows(10, seed).codes, full.codes[sample_rows(w.n_rows, 10, seed)])
    assert list(a.frame.columns) == ["a", "b"] and a.frame.iloc[0, 0] == f"a{a.codes[0, 0]}"


def test_sample_frequencies_are_proportional_to_multiplicity():
    """Over many seeds, distinct row i appears n * w_i / N times per sample on average (a uniform sample of
    the file's rows, drawn without replacement: a hypergeometric count); never more often than w_i."""
    w, n, seeds = _weighted(), 10, 3000
    N = int(WEIGHTS.sum())
    counts = np.zeros((seeds, len(WEIGHTS)))
    for s in range(seeds):
        counts[s] = np.bincount(_which(w, w.sample_rows(n, s)), minlength=len(WEIGHTS))
    assert (counts <= WEIGHTS).all() and (counts.sum(axis=1) == n).all()
    p = WEIGHTS / N
    mean = n * p
    sd = np.sqrt(n * p * (1 - p) * (N - n) / (N - 1))
    assert np.all(np.abs(counts.mean(axis=0) - mean) <= 5 * sd / np.sqrt(seeds) + 1e-12), (
        counts.mean(axis=0),
        mean,
    )
    # uniform over *distinct* rows would give 2.5 each: far outside these bounds
    assert counts.mean(axis=0)[0] < 0.3 and counts.mean(axis=0)[3] > 8.5


def test_sample_of_all_rows_is_the_whole_table():
    w = _weighted()
    full = w.sample_rows(10**6, seed=0)
    assert full.n_rows == w.n_rows
    assert np.array_equal(np.bincount(full.codes[:, 0], minlength=4), WEIGHTS)
    assert "A seeded sample of 100 of the 100 rows (seed 0)." in full.notes


def test_sample_of_a_streamed_file_equals_the_in_memory_rows(tmp_path):
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 3, size=(3000, 4))
    path = tmp_path / "d.csv"
    path.write_text("w,x,y,z\n" + "\n".join(",".join(f"v{v}" for v in r) for r in rows) + "\n")
    w = read_counts(str(path), chunksize=700)
    d = load_csv(str(path))
    s = w.sample_rows(200, seed=5)
    assert s.variables == d.variables and s.states == d.states
    # the sample's rows are rows of the file, each distinct row at most as often as in the file
    dk, dc = distinct_rows(d.codes)
    sk, sc = distinct_rows(s.codes)
    pos = {tuple(r): c for r, c in zip(dk.tolist(), dc)}
    assert all(tuple(r) in pos and c <= pos[tuple(r)] for r, c in zip(sk.tolist(), sc))


def test_read_counts_progress_reports_and_leaves_the_result_unchanged(tmp_path):
    rng = np.random.default_rng(2)
    rows = rng.integers(0, 4, size=(5000, 3))
    path = tmp_path / "p.csv"
    path.write_text("x,y,z\n" + "\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    seen = []
    a = read_counts(str(path), chunksize=400, progress=lambda f, m: seen.append((f, m)))
    b = read_counts(str(path), chunksize=400)
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.weights, b.weights) and a.states == b.states
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == pytest.approx(1.0)
    assert all(x <= y + 1e-12 for x, y in itertools.pairwise(fractions))
    assert len(seen) >= 2 * (5000 // 400)  # one report per chunk in each pass
    assert any("pass 1 of 2" in m for _, m in seen) and "5,000 of 5,000 rows" in seen[-1][1]
    assert 0.4 < max(f for f, m in seen if "pass 1" in m) <= 0.5

    class Stop(Exception):
        pass

    def stop(f, m):
        if f > 0.2:
            raise Stop()

    with pytest.raises(Stop):
        read_counts(str(path), chunksize=400, progress=stop)


def test_files_that_are_not_csv_are_refused_naming_the_file_as_the_whole_file_reader(tmp_path):
    """A missing or irregular file is named by its path; what is wrong with a file's content names the file
    as the whole-file reader does (its base name), in the same sentence."""
    zip_like = tmp_path / "book.xlsx"
    zip_like.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    binary = tmp_path / "blob.csv"
    binary.write_bytes(b"a,b\n1,2\n\x00\x01\x02")
    for p, words in (
        (zip_like, "ZIP archive"),
        (binary, "binary"),
        (tmp_path, "cannot be read as a regular file"),
        (tmp_path / "missing.csv", "not found"),
    ):
        with pytest.raises(DataError) as exc:
            read_counts(str(p))
        with pytest.raises(DataError) as whole:
            load_csv(str(p))
        assert words in str(exc.value)
        content = p in (zip_like, binary)
        assert (p.name if content else str(p)) in str(exc.value)
        assert not content or str(whole.value).startswith(p.name)  # (the chunked reader reads Parquet too)


def test_column_summary_counts_rows_by_their_multiplicity():
    w = _weighted()
    s = column_summary(w)
    e = column_summary(w.expand())
    assert s == e
    assert (
        s[0]["counts"].startswith("a0 (1), a1 (3), a2 (6), a3 (90)") and s[0]["most frequent"] == "a3 (90%)"
    )
