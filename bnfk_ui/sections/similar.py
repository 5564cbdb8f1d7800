"""Similar cases for a partial case: the rows of the table most similar to the evidence set on the network,
under its Fisher kernel with the partial case's missing cells marginalised, each with every variable's
contribution (:func:`bnfk_core.analyses.similar.similar`), shown as a table and downloadable as CSV."""

from __future__ import annotations

import math

import streamlit as st

from bnfk_core.analyses.similar import Similar, similar, similar_frame
from bnfk_core.data.table import CategoricalData
from bnfk_core.network.model import BayesNet

from .. import common
from ..state import messages
from ..state.shared import front

__all__ = ["render_similar", "MAX_K", "DEFAULT_K"]

#: the most rows the table offers, and how many it shows first
MAX_K, DEFAULT_K = 100, 10


@front
@st.cache_resource(show_spinner=False, max_entries=16)
def _similar(
    _model: BayesNet,
    model_key: str,
    _data: CategoricalData,
    fingerprint: str,
    evidence: tuple,
    k: int,
    normalize: bool,
) -> Similar:
    return similar(_model, _data, dict(evidence), k, normalize=normalize)


def render_similar(model, data, evidence, *, key: str = "similar") -> Similar | None:
    """The ``k`` rows of ``data`` most similar to the partial case ``evidence`` under ``model``'s Fisher
    kernel (a number input, up to :data:`MAX_K`, and a cosine-normalisation toggle), as a table of their row,
    similarity, values and per-variable contributions, with a CSV download; user text stays plain text.

    Parameters
    ----------
    model : BayesNet
        The network whose Fisher kernel compares the rows.
    data : CategoricalData
        The table whose rows are ranked (its class column, if no node of the network, is shown beside them).
    evidence : mapping of str to str
        The partial case, ``{variable: state}``; empty: a caption asks for evidence.
    key : str
        The prefix of the section's widget keys.

    Returns
    -------
    Similar or None
        The answer shown; None without evidence or when it was refused (shown as one ``st.error``).
    """
    st.subheader("Similar cases")
    if not evidence:
        st.caption(
            "Set evidence on at least one variable: the rows most similar to that partial case under the "
            "Fisher kernel (its other variables marginalised) are listed here."
        )
        return None
    n = int(data.n_rows)
    c1, c2 = st.columns(2)
    k = c1.number_input(
        "Rows to show", 1, max(1, min(MAX_K, n)), value=min(DEFAULT_K, max(n, 1)), key=f"{key}_k"
    )
    normalize = c2.toggle(
        "Cosine-normalised",
        key=f"{key}_normalize",
        help="K(x, y) / √(K(x, x) K(y, y)): rows with rare values no longer come first for their large "
        "self-similarity.",
    )
    with common.shown_errors():
        with common.working("Comparing the rows with the partial case…"):
            res = _similar(
                model,
                model.key(),
                data,
                data.fingerprint(),
                tuple((str(a), str(b)) for a, b in evidence.items()),
                int(k),
                bool(normalize),
            )
        shown = ", ".join(f"{a} = {b}" for a, b in res.evidence.items())
        st.caption(
            messages.plain(
                f"The {len(res.rows)} of {res.n_rows} rows most similar to {shown} "
                f"(P(evidence) = {math.exp(res.log_evidence):.4g}; K(x, x) = {res.self_similarity:.4g}), "
                "most similar first. Each variable's contribution is the term of its family (the variable "
                "given its parents); they sum to the similarity."
            )
        )
        for note in res.notes:
            st.caption(messages.plain(note))
        frame = similar_frame(res)
        number = st.column_config.NumberColumn(format="%.4f")
        st.dataframe(
            frame,
            hide_index=True,
            key=f"{key}_table",
            column_config={
                c: number for c in frame.columns if c == "similarity" or c.startswith("contribution")
            },
        )
        common.download(
            "Similar cases (CSV)",
            lambda: frame.to_csv(index=False),
            f"{common.slug(getattr(data, 'source', 'data'))}_similar.csv",
            "text/csv",
            key=f"{key}_download",
        )
        return res
    return None
