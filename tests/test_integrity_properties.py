"""Property tests of "nothing lost, nothing hidden" on random CSV files: unicode names and
states, delimiters, quotes and line breaks inside quoted cells, padded cells, a discretized numeric
column and missing cells.  ``learn`` -> BIF / JSON -> ``kernel`` gives the same Gram matrix through
either file and as the in-memory model; ``impute`` leaves every observed cell, the header, and the
column and row order as the file has them (both compared as the ``csv`` module parses them)."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst
from test_model_names import CSV_NAMES, CSV_STATES

from bnfk_core.cli import main
from bnfk_core.data.table import MISSING_TOKENS, load_csv
from bnfk_core.kernels.fisher import gram
from bnfk_core.learning.incomplete import learn_network

MISSING_CELLS = ["", "NA", " NA ", "?", " ? ", "nan", "N/A"]
OPTS = ["--max-levels", "5", "--na-values", "default-list"]  # the numeric column (6+ distinct values) is cut
# into quantile bins; every MISSING_CELLS text is missing (not only the empty field, the default)


@hst.composite
def csv_files(draw):
    n_nom = draw(hst.integers(2, 3))
    names = draw(hst.lists(CSV_NAMES, min_size=n_nom + 1, max_size=n_nom + 1, unique=True))
    states = [draw(hst.lists(CSV_STATES, min_size=1, max_size=3, unique=True)) for _ in range(n_nom)]
    n_rows = draw(hst.integers(8, 16))
    pad = hst.sampled_from(["", " ", "  ", "\t"])
    rows = []
    for r in range(n_rows):
        row = [draw(pad) + draw(hst.sampled_from(st)) + draw(pad) for st in states]
        x = draw(hst.integers(-500, 500)) / draw(hst.sampled_from([1, 10, 100]))
        row.append(draw(pad) + draw(hst.sampled_from([f"{x}", f"{x:.3f}", f"{x:g}"])) + draw(pad))
        if r >= 3:  # the first rows stay complete: structure learning needs complete rows
            for j in range(len(row)):
                if draw(hst.integers(0, 5)) == 0:
                    row[j] = draw(hst.sampled_from(MISSING_CELLS))
        rows.append(row)
    # enough distinct numbers that the numeric column is discretized
    for v in ["-3.5", "-1", "0.25", "2", "7.75", "11"]:
        rows.append([draw(hst.sampled_from(st)) for st in states] + [v])
    newline = draw(hst.sampled_from(["\n", "\r\n"]))
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator=newline)
    writer.writerow(names)
    writer.writerows(rows)
    return buf.getvalue()


def _records(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(text=csv_files())
def test_learn_bif_kernel_round_trip_and_impute_keeps_observed_cells(text):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data_csv = tmp / "data.csv"
        data_csv.write_bytes(text.encode("utf-8"))
        for ext in ("bif", "json"):
            assert (
                main(
                    [
                        "learn",
                        str(data_csv),
                        "--structure",
                        "tree",
                        *OPTS,
                        "--quiet",
                        "-o",
                        str(tmp / f"m.{ext}"),
                    ]
                )
                == 0
            )
            assert (
                main(
                    [
                        "kernel",
                        str(data_csv),
                        "--model",
                        str(tmp / f"m.{ext}"),
                        *OPTS,
                        "-o",
                        str(tmp / f"K_{ext}.npy"),
                    ]
                )
                == 0
            )
        k_bif, k_json = np.load(tmp / "K_bif.npy"), np.load(tmp / "K_json.npy")
        data = load_csv(data_csv, max_levels=5, na_values="default-list")
        model = learn_network(data, "tree")[1]  # learn's defaults: structural EM, CPTs by EM
        np.testing.assert_allclose(k_bif, k_json, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(k_bif, gram(model, data), rtol=1e-9, atol=1e-9)

        out = tmp / "done.csv"
        assert main(["impute", str(data_csv), "--model", str(tmp / "m.bif"), *OPTS, "-o", str(out)]) == 0
        before, after = _records(data_csv), _records(out)
        assert len(before) == len(after) and before[0] == after[0]
        filled = 0
        for a, b in zip(before[1:], after[1:]):
            assert len(a) == len(b)
            for u, v in zip(a, b):
                if u.strip() in MISSING_TOKENS:
                    assert v.strip() not in MISSING_TOKENS
                    filled += 1
                else:
                    assert u == v
        assert filled == int((data.codes < 0).sum())
        back = load_csv(out, max_levels=5, model=model, na_values="default-list")
        assert not back.has_missing
