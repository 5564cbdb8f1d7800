"""Textbook networks in the app: rows sampled from one open from Home and Data, the true network stays beside
the current one (SHD on the Structure page, the truth as A or B on Compare), and links and session files
restore the sample (network, rows, seed).  Every expected table and distance is computed here on its own:
the rows by ``textbook_network(name).sample(N, seed)``, the distances by
``structural_hamming_distance`` and, for the empty structure, by networkx's count of the truth's edges."""

import json
import re

import networkx as nx
import pandas as pd
from apptest_helpers import ROOT, assert_clean, open_sidebar_box, page_app
from streamlit.testing.v1 import AppTest

from bnfk_core.network import DAG, structural_hamming_distance, textbook_network
from bnfk_core.network.textbook import TEXTBOOK_NETWORKS

ASIA = textbook_network("asia")


def _expected(rows: int, seed: int) -> pd.DataFrame:
    return textbook_network("asia").sample(rows, seed).frame.astype("string")


def _preview(at) -> pd.DataFrame:
    """The Data page's preview of the table (its first 500 rows as text)."""
    frames = [d.value for d in at.dataframe if list(d.value.columns) == list(ASIA.variables)]
    assert frames, "no preview of the table"
    return frames[-1].astype("string").reset_index(drop=True)


def _app_table(rows: int, seed: int):
    """The whole table the app holds for asia's sample (shared by the server's sessions)."""
    from bnfk_ui.state import tables

    return next(t for k, t in tables._SAMPLES.items() if k[:3] == ("asia", rows, seed))


def _check_table(at, rows: int, seed: int) -> None:
    at.switch_page("pages/data.py").run()
    assert_clean(at)
    want = _expected(rows, seed)
    assert {m.label: m.value for m in at.metric}["Rows"] == f"{rows:,}"
    pd.testing.assert_frame_equal(_preview(at), want.head(500), check_dtype=False)
    pd.testing.assert_frame_equal(
        _app_table(rows, seed).frame.astype("string"), want, check_dtype=False, check_names=False
    )


def _shd_shown(at) -> int:
    return int(next(m.value for m in at.metric if m.label == "SHD to the truth"))


def _current(at) -> DAG:
    return DAG.from_dict(at.session_state["structure"]["dag"])


def test_home_opens_asia_and_the_truth_stays_beside_the_structure():
    at = page_app("home.py").run()
    pick = at.selectbox(key="w_dataset_pick")
    label = next(o for o in pick.options if o.startswith("Textbook network asia "))
    assert len([o for o in pick.options if o.startswith("Textbook network ")]) == len(TEXTBOOK_NETWORKS)
    pick.set_value(label).run()
    assert_clean(at)
    assert at.session_state["dataset"] == "textbook:asia"
    at.number_input(key="w_textbook_rows").set_value(700).run()
    at.number_input(key="w_textbook_seed").set_value(3).run()
    assert_clean(at)
    _check_table(at, 700, 3)

    at.switch_page("pages/structure.py").run()  # the structure starts as the true network
    assert_clean(at)
    assert _current(at) == ASIA.dag and _shd_shown(at) == 0
    next(b for b in at.button if b.label == "Start empty").click().run()
    truth_edges = nx.Graph(list(ASIA.dag.sorted_arcs())).number_of_edges()  # empty vs truth: every edge
    assert _shd_shown(at) == truth_edges == structural_hamming_distance(_current(at), ASIA.dag) == 8
    next(b for b in at.button if b.label == "Learn structure").click().run()  # the default: Chow–Liu tree
    assert_clean(at)
    learned = _current(at)
    assert learned.n_arcs == 7 and _shd_shown(at) == structural_hamming_distance(learned, ASIA.dag)
    next(b for b in at.button if b.label == "Learn structure").click().run()  # again: the stored network
    assert_clean(at)
    assert _current(at) == learned

    at.switch_page("pages/compare.py").run()  # A: the learned tree; B: the true network
    at.button(key="cmp_truth_b").click().run()
    assert_clean(at)
    line = next(c.value for c in at.caption if "SHD between A and B" in c.value)
    want = structural_hamming_distance(learned, ASIA.dag)
    assert f"SHD between A and B: {want} " in line and "the true network is B" in line
    assert f"SHD to the true network: A {want}, B 0" in line
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Equivalent"] == ("yes" if want == 0 else "no")
    assert (float(metrics["max |ΔK|"]) > 0) == (want > 0)
    at.button(key="cmp_truth_a").click().run()  # A becomes the truth too: the two agree
    assert_clean(at)
    assert _current(at) == ASIA.dag and {m.label: m.value for m in at.metric}["max |ΔK|"] == "0"

    at.switch_page("pages/structure.py").run()
    next(b for b in at.button if b.label == "Start empty").click().run()
    at.button(key="use_truth").click().run()
    assert _current(at) == ASIA.dag and _shd_shown(at) == 0


def test_data_page_opens_asia_with_its_rows_and_seed():
    at = page_app("data.py").run()
    assert_clean(at)
    at.selectbox(key="w_textbook_pick").set_value("asia").run()
    at.button(key="textbook_open").click().run()
    assert_clean(at)
    assert at.session_state["dataset"] == "textbook:asia"
    at.number_input(key="w_textbook_rows").set_value(500).run()
    at.number_input(key="w_textbook_seed").set_value(7).run()
    assert_clean(at)
    _check_table(at, 500, 7)
    assert not at.text_input  # no missing-value texts: a sample has no missing cells
    assert any(d.proto.label == "True network with its CPTs (BIF)" for d in at.get("download_button"))


def test_a_link_and_a_session_file_restore_the_textbook_table():
    at = page_app("data.py").run()
    at.selectbox(key="w_textbook_pick").set_value("asia").run()
    at.button(key="textbook_open").click().run()
    at.number_input(key="w_textbook_rows").set_value(600).run()
    at.number_input(key="w_textbook_seed").set_value(5).run()
    at.switch_page("pages/structure.py").run()
    next(b for b in at.button if b.label == "Start empty").click().run()
    assert_clean(at)
    query = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert query["data"] == "textbook:asia" and query["textbook_rows"] == "600" and query["arcs"] == ""

    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for k, v in query.items():
        again.query_params[k] = v
    again.run()
    assert_clean(again)
    assert not again.warning, [w.value for w in again.warning]
    assert (again.session_state["textbook_rows"], again.session_state["textbook_seed"]) == (600, 5)
    assert _current(again).n_arcs == 0  # the link's structure, not the truth the table starts with
    _check_table(again, 600, 5)

    from unittest import mock

    import streamlit as st

    from bnfk_ui import share

    class Proxy(dict):
        __getattr__ = dict.__getitem__

    with mock.patch.object(st, "session_state", Proxy({k: at.session_state[k] for k in at.session_state})):
        blob = share.session_bytes()
    doc = json.loads(blob)
    assert doc["data"]["textbook"] == "asia" and (doc["data"]["rows"], doc["data"]["seed"]) == (600, 5)
    fresh = open_sidebar_box(AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run(), "share")
    fresh.file_uploader(key="w_session_file").upload("asia_session.json", blob, "application/json").run()
    assert_clean(fresh)
    assert fresh.session_state["dataset"] == "textbook:asia"
    assert (fresh.session_state["textbook_rows"], fresh.session_state["textbook_seed"]) == (600, 5)
    assert _current(fresh).n_arcs == 0
    _check_table(fresh, 600, 5)
    bad = json.loads(blob)
    bad["data"]["rows"] = 10**7  # more than the app's widget allows: refused in one sentence
    refused = open_sidebar_box(AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run(), "share")
    refused.file_uploader(key="w_session_file").upload(
        "big.json", json.dumps(bad).encode(), "application/json"
    )
    refused.run()
    assert not refused.exception
    assert any(
        re.search(r"data\.rows must be a whole number from 10 to 20000", e.value) for e in refused.error
    )


def test_a_link_with_rows_out_of_range_keeps_the_network_and_says_so():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for k, v in {"data": "textbook:asia", "textbook_rows": "9" * 40, "textbook_seed": "2"}.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "textbook_rows must be" in warnings[0], warnings
    assert at.session_state["dataset"] == "textbook:asia" and at.session_state["textbook_seed"] == 2
    assert at.session_state["textbook_rows"] == 2000  # the default, within the widget's range
    unknown = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    unknown.query_params["data"] = "textbook:<b>nope</b>"
    unknown.run()
    assert not unknown.exception and unknown.session_state["dataset"] == "house_votes_84"
    assert any("is not a bundled dataset" in w.value for w in unknown.warning)


def test_the_command_line_reads_a_textbook_session_file(tmp_path, capsys):
    from bnfk_core.cli.main import main
    from bnfk_core.network import fit
    from bnfk_core.serving.session_files import DataRef, read_session, session_dict, write_session

    ref = DataRef(textbook="asia", rows=250, seed=9, na_values=None)
    model = fit(ASIA.dag, ref.load())
    path = tmp_path / "asia_session.json"
    write_session(path, session_dict(ref, ASIA.dag, "bdeu", model))
    s = read_session(path)
    assert (s.ref.textbook, s.ref.rows, s.ref.seed) == ("asia", 250, 9)
    pd.testing.assert_frame_equal(s.data.frame.astype("string"), _expected(250, 9), check_dtype=False)
    out = tmp_path / "completed.csv"
    assert main(["impute", str(path), "-o", str(out)]) == 0  # the file as written: the sampled rows' text
    capsys.readouterr()
    pd.testing.assert_frame_equal(
        pd.read_csv(out, dtype=str, keep_default_na=False), _expected(250, 9).astype(str), check_dtype=False
    )
