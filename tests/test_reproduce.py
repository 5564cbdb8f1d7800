"""`reproduce all --quick` in-process into a temporary folder (about a minute on two cores), the
published tables against the thesis text's values, and the committed full-run outputs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bnfk_core.cli import main
from bnfk_core.data.stats import cramers_v_corrected
from bnfk_core.reproduce import experiments as rep
from bnfk_core.reproduce import published as pub

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- published numbers
def test_published_tables_parse_with_decimal_commas_and_dashes():
    assert set(pub.TABLES) == {
        "4.1",
        "4.2",
        "4.3",
        "4.4",
        "B.1",
        "B.2",
        "5.1",
        "C.1",
        "C.2",
        "6.1",
        "6.2",
        "6.3",
        "6.4",
        "D.1",
        "D.2",
    }
    for t in pub.TABLES.values():
        assert set(t.rows) == set(pub.THESIS_DATASETS), t.id
        assert all(len(v) == len(t.columns) for v in t.rows.values())
        assert t.caption and t.measured and t.experiment in rep.EXPERIMENTS
    # spot checks typed from the thesis (commas in 5.1/6.2/6.3/C.x, '-' in D.x, labels in 6.1)
    assert pub.table("5.1").value("Breast Cancer", "CC-F") == pytest.approx(0.122)
    assert pub.table("5.1").value("SPECT", "SC-H") == pytest.approx(-0.061)
    assert pub.table("C.2").value("Primary Tumor", "SC-H") == pytest.approx(0.336)
    assert pub.table("4.4").value("Tic-Tac-Toe", "wKNN") == pytest.approx(5.104)
    assert pub.table("6.2").value("Hayes-Roth", "v_1 ∩ v_2") == pytest.approx(0.431)
    assert pub.table("D.1").value("Lymphography", "SVM-F") is None
    assert pub.table("D.2").value("Tic-Tac-Toe", "SVM-SH") == pytest.approx(0.089)
    assert pub.table("6.1").labels["Hayes-Roth"][1] == "CC-F/SH"
    assert pub.table("6.1").value("Lymphography", "Best score previously") == pytest.approx(0.259)
    # Table 4.3 collects 4.1 and 4.2
    t41, t42, t43 = pub.table("4.1"), pub.table("4.2"), pub.table("4.3")
    for name in pub.THESIS_DATASETS:
        for c in t41.columns:
            assert t43.value(name, c) == t41.value(name, c)
        for c in t42.columns:
            assert t43.value(name, c) == t42.value(name, c)
    assert pub.number("0,5") == 0.5 and pub.number("-") is None
    assert pub.PAPER_RUNTIMES["seconds"]["kernel"] == {"waveform-5000": 17.0, "nursery": 32.0, "letter": 94.0}
    assert pub.PAPER_RUNTIMES["seconds"]["greedy_mmd"]["letter"] == (42.0, 1140.0)


def test_structure_spec_and_bad_requests(tmp_path):
    assert rep.structure_spec("thesis", 9)["method"] == "exact"
    # the published protocols climb greedily (hc-greedy); their labels keep the name they were published with
    assert rep.structure_spec("thesis", 22)["method"] == "hc-greedy"
    assert rep.structure_spec("thesis", 22)["label"] == "hc/qNML + cNML"
    assert rep.structure_spec("paper", 5) == {
        "method": "hc-greedy",
        "score": "bic",
        "params": "smoothed",
        "label": "hc/BIC + smoothed (pseudo-count 1)",
    }
    with pytest.raises(rep.ReproduceError):
        rep.run_experiment("nope", tmp_path)
    with pytest.raises(rep.ReproduceError):
        rep.run_experiment("thesis-segments", tmp_path, rep.Settings(quick=True, datasets=("nursery",)))


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["reproduce", "speed", "-o", str(tmp_path), "--repeats", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument --repeats") and err.count("\n") == 1
    assert (
        main(["reproduce", "thesis-clustering", "-o", str(tmp_path), "--quick", "--datasets", "letter"]) == 2
    )
    assert "not a thesis data set" in capsys.readouterr().err


# ---------------------------------------------------------------------- the quick run
@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce_quick")
    code = main(["reproduce", "all", "--quick", "-o", str(out), "--quiet"])
    assert code == 0
    return out


def _check_table(out: Path, table_id: str, datasets) -> pd.DataFrame:
    t = pub.table(table_id)
    df = pd.read_csv(out / f"{rep.TABLE_FILES[table_id]}.csv")
    assert list(df["data_file"]) == [s for s in pub.THESIS_DATASETS.values() if s in datasets], table_id
    for c in t.columns:
        for suffix in ("(ours)", "(published)", "(diff)"):
            assert f"{c} {suffix}" in df.columns, (table_id, c, suffix)
    for _, row in df.iterrows():
        for j, c in enumerate(t.columns):
            p = t.rows[row["dataset"]][j]
            got = row[f"{c} (published)"]
            assert (p is None and math.isnan(got)) or got == pytest.approx(p, abs=1e-12), (table_id, c)
            assert np.isfinite(row[f"{c} (ours)"]), (table_id, row["dataset"], c)
            if p is not None:
                assert row[f"{c} (diff)"] == pytest.approx(row[f"{c} (ours)"] - p, abs=1e-5)
    md = (out / f"{rep.TABLE_FILES[table_id]}.md").read_text()
    assert f"Thesis Table {table_id}" in md and "ours (published)" in md
    return df


def test_quick_run_writes_every_thesis_table(quick_run):
    for tid in pub.TABLES:
        _check_table(quick_run, tid, rep.QUICK_THESIS)


def test_quick_run_values_are_in_range(quick_run):
    acc = pd.read_csv(quick_run / "thesis_4_3.csv")
    for c in pub.table("4.3").columns:
        assert ((acc[f"{c} (ours)"] >= 0) & (acc[f"{c} (ours)"] <= 1)).all()
    ce = pd.read_csv(quick_run / "thesis_4_4.csv")
    assert (ce["wKNN (ours)"] > ce["BN (ours)"]).all()  # wKNN's zero probabilities hit the cap
    ari = pd.read_csv(quick_run / "thesis_5_1.csv")
    assert ((ari[[f"{c} (ours)" for c in pub.table("5.1").columns]].abs()) <= 1).all().all()
    d1 = pd.read_csv(quick_run / "thesis_D_1.csv")
    assert (d1["kNN-H (ours)"] > 0.3).all()
    t61 = pd.read_csv(quick_run / "thesis_6_1.csv")
    assert t61["arc (ours)"].str.contains("→").all()


def test_quick_run_paper_tables_figures_and_manifest(quick_run):
    for stem, metrics in (
        ("paper_fig_1", ("nll",)),
        ("paper_fig_2", ("error", "log_loss")),
        ("paper_fig_3", ("error", "log_loss")),
    ):
        df = pd.read_csv(quick_run / f"{stem}.csv")
        assert list(df["dataset"]) == ["nursery"] and list(df["k"]) == [200]
        for m in metrics:
            for what in ("full", "mmd", "chi2", "random mean", "random std"):
                assert np.isfinite(df[f"{m} {what}"]).all(), (stem, m, what)
        assert (quick_run / f"fig_{stem}.html").exists() and (quick_run / f"fig_{stem}.json").exists()
    claims = pd.read_csv(quick_run / "paper_claims.csv")
    published = {(f, cid): text for f, fig in pub.PAPER_FIGURES.items() for cid, text in fig.claims}
    assert {(r["figure"], r["claim"]): r["published"] for _, r in claims.iterrows()} == published
    rt = pd.read_csv(quick_run / "paper_runtimes.csv")
    assert np.isfinite(rt["seconds (ours)"]).all() and (rt["seconds (ours)"] >= 0).all()
    kern = rt[(rt["step"] == "kernel")].iloc[0]
    assert kern["seconds (published)"] == pub.PAPER_RUNTIMES["seconds"]["kernel"]["nursery"]
    g = rt[(rt["step"] == "greedy_mmd") & (rt["k"] == 200)].iloc[0]
    assert g["seconds (published)"] == pub.PAPER_RUNTIMES["seconds"]["greedy_mmd"]["nursery"][0]

    man = json.loads((quick_run / "manifest.json").read_text())
    assert set(man["experiments"]) == set(rep.EXPERIMENTS)
    for name, rec in man["experiments"].items():
        assert rec["quick"] is True and rec["wall_seconds"] > 0 and rec["seed"] == 0
        for f in rec["files"]:
            assert (quick_run / f).exists(), f
    for key in ("python", "numpy", "pgmpy", "bnfk"):
        assert man["versions"][key]
    assert man["all_wall_seconds"] > 0
    index = (quick_run / "index.md").read_text()
    assert "Thesis Table 5.1" in index and "Paper Fig. 1" in index


def test_markdown_table_escapes_and_formats():
    md = rep.markdown_table(pd.DataFrame({"a|b": [0.12345, float("nan")], "c": ["x|y", None]}))
    assert md.splitlines()[0] == "| a\\|b | c |"
    assert "| 0.123 | x\\|y |" in md and "| – |" in md


# ---------------------------------------------------------------------- the committed full run
FULL = ROOT / "docs" / "results"


@pytest.mark.skipif(not (FULL / "manifest.json").exists(), reason="no committed full run")
def test_committed_full_run_matches_published_module():
    man = json.loads((FULL / "manifest.json").read_text())
    for name, rec in man["experiments"].items():
        assert rec["quick"] is False, name
        for stem in rec["tables"]:
            assert (FULL / f"{stem}.csv").exists() and (FULL / f"{stem}.md").exists()
    for tid, stem in rep.TABLE_FILES.items():
        p = FULL / f"{stem}.csv"
        if not p.exists():
            continue
        df = pd.read_csv(p)
        t = pub.table(tid)
        for _, row in df.iterrows():
            for j, c in enumerate(t.columns):
                v = t.rows[row["dataset"]][j]
                got = row[f"{c} (published)"]
                assert (v is None and math.isnan(got)) or got == pytest.approx(v, abs=1e-12), (tid, c)


def test_corrected_cramers_v_reproduces_thesis_table_6_3_cells():
    from bnfk_core.data.stats import collapse

    d = rep.load_thesis_data("breast_cancer")
    y = d.codes[:, d.index("class")]
    u, v = d.codes[:, d.index("menopause")], d.codes[:, d.index("deg-malig")]
    both = collapse(d, ["menopause", "deg-malig"])[0]
    t = pub.table("6.3")
    assert cramers_v_corrected(u, y) == pytest.approx(t.value("Breast Cancer", "v_1"), abs=5e-4)
    assert cramers_v_corrected(v, y) == pytest.approx(t.value("Breast Cancer", "v_2"), abs=5e-4)
    assert cramers_v_corrected(both, y) == pytest.approx(t.value("Breast Cancer", "v_1 ∩ v_2"), abs=5e-4)
    assert math.isnan(cramers_v_corrected(np.zeros(5, int), np.arange(5)))


def test_manifest_command_carries_no_machine_path():
    """The manifest's command is rerunnable from any checkout: no absolute path of this machine."""
    from bnfk_core.reproduce.experiments import invocation

    main = "/somewhere/checkout/bnfk_core/__main__.py"
    assert (
        invocation([main, "reproduce", "kgv", "-o", "out dir"])
        == "python -m bnfk_core reproduce kgv -o 'out dir'"
    )
    assert invocation(["/venv/bin/bnfk", "reproduce", "all"]) == "python -m bnfk_core reproduce all"
    assert invocation(["/venv/bin/pytest", "-q"]) == "(called from Python)"


def test_committed_manifest_names_no_machine_path():
    import json
    from pathlib import Path

    man = json.loads((Path(__file__).resolve().parents[1] / "docs" / "results" / "manifest.json").read_text())
    commands = [rec["command"] for rec in man["experiments"].values()]
    assert commands and all(c.startswith("python -m bnfk_core ") for c in commands), commands
