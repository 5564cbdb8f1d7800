"""AppTest of the Structure page's Learn button on an upload with missing cells: it learns as the session's
recipe says (structural EM on all rows), so with the first network's options it gives the first network, and
the page says how the network was learned."""

import io

import numpy as np
import pandas as pd
from apptest_helpers import ROOT, assert_clean, page_app

from bnfk_core import load_csv
from bnfk_core.learning.recipe import Recipe, learn_recipe


def _holed_csv() -> bytes:
    """Lymphography (148 rows) with 5 % of its feature cells blanked by a seeded mask (52 complete rows)."""
    frame = pd.read_csv(ROOT / "sample_data" / "lymphography.csv", dtype=str)
    feats = [c for c in frame.columns if c != "class"]
    mask = np.random.default_rng(0).random((len(frame), len(feats))) < 0.05
    frame[feats] = frame[feats].mask(mask)
    return frame.to_csv(index=False).encode("utf-8")


def test_the_learn_button_learns_the_recipes_network_on_every_row(tmp_path):
    content = _holed_csv()
    at = page_app(
        "structure.py",
        300,
        dataset="upload",
        upload=("holed.csv", content),
        class_column="class",
        missing_policy="missing",
    ).run()
    assert_clean(at)
    first = at.session_state["structure"]
    assert first["notes"][0].startswith("structural EM on all 148 rows")
    next(b for b in at.button if b.label == "Learn structure").click().run()
    assert_clean(at)
    learned = at.session_state["structure"]
    arcs = sorted(map(tuple, learned["dag"]["arcs"]))
    assert arcs == sorted(map(tuple, first["dag"]["arcs"])) and learned["undo"]
    assert learned["notes"][0].startswith("structural EM on all 148 rows")
    captions = " ".join(c.value for c in at.caption)
    assert "structural EM on all 148 rows" in captions and "complete rows of" not in captions
    # independently: the recipe's network of the same file, and the complete-rows tree it is not
    path = tmp_path / "holed.csv"
    path.write_bytes(content)
    data = load_csv(str(path), class_column="class")
    assert int(data.without_class().complete_rows().sum()) == 52
    em = learn_recipe(data, Recipe(structure="tree", score="bic", missing_data="em"))
    assert arcs == sorted(em.dag.sorted_arcs())
    rows = learn_recipe(data, Recipe(structure="tree", score="bic", missing_data="complete-rows"))
    assert arcs != sorted(rows.dag.sorted_arcs())


def test_the_csv_has_missing_cells():
    frame = pd.read_csv(io.BytesIO(_holed_csv()))
    assert frame.isna().any(axis=1).sum() == 148 - 52
