"""Every view follows the edited model: a CPT edited on the Model page is the CPT of the Kernel page's Gram
matrix (equal to the Fisher kernel of the edited model, computed here from the rows the page used) and of
the Structure page's model export."""

import io

import numpy as np
import pandas as pd
from apptest_helpers import assert_clean, page_app
from test_page_model import _edit, _model, downloads  # noqa: F401

from bnfk_core.kernels.fisher import gram
from bnfk_core.network.formats import read_model


def _bytes(x):
    x = x() if callable(x) else x
    return x.encode() if isinstance(x, str) else x


def test_an_edited_cpt_is_the_kernel_pages_and_the_exports(downloads):  # noqa: F811
    at = page_app("model.py").run()
    fitted = _model(downloads)
    root = next(v for i, v in enumerate(fitted.variables) if not fitted.parents[i])
    i = fitted.variables.index(root)
    s0, s1 = fitted.states[i][0], fitted.states[i][1]
    at.session_state["model_tab"] = "CPTs"
    at.session_state["model_cpt_node"] = root
    at.run()
    _edit(at, {0: {s0: 3.0, s1: 1.0}})
    assert_clean(at)
    edited = _model(downloads)
    row = fitted.cpts[i][0].copy()
    row[:2] = [3.0, 1.0]  # the two cells typed, the others as fitted: the row renormalised
    np.testing.assert_allclose(edited.cpts[i][0], row / row.sum(), atol=1e-12)
    assert not np.allclose(edited.cpts[i], fitted.cpts[i])
    at.switch_page("pages/structure.py").run()
    at.session_state["structure_tab"] = "Import / export"
    at.run()
    assert_clean(at)
    exported = read_model(io.BytesIO(_bytes(downloads["Model (BIF)"])), "m.bif")
    np.testing.assert_allclose(exported.cpts[i], edited.cpts[i], atol=1e-12)
    at.switch_page("pages/kernel.py").run()
    assert_clean(at)
    K = np.load(io.BytesIO(_bytes(downloads["Gram matrix (NPY)"])))
    rows = pd.read_csv(io.BytesIO(_bytes(downloads["Rows used (CSV)"])), dtype=str, keep_default_na=False)
    want = gram(edited, rows[list(edited.variables)].replace({"": None}))
    np.testing.assert_allclose(K, want, atol=1e-9)
    assert not np.allclose(K, gram(fitted, rows[list(fitted.variables)].replace({"": None})), atol=1e-9)
